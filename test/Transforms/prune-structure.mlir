// attn-prune-structure: kept heads / FFN groups become attn.weight gathers
// and smaller ops; full-size weights disappear.
// RUN: attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/prune-heads.json" | FileCheck %s --check-prefix=LIST
// RUN: attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/prune-scores.json" | FileCheck %s --check-prefix=SCORES
// RUN: not attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/prune-bad-head.json" 2>&1 | FileCheck %s --check-prefix=BADHEAD
// RUN: not attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/prune-bad-group.json" 2>&1 | FileCheck %s --check-prefix=BADGROUP
// RUN: not attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/prune-no-layer.json" 2>&1 | FileCheck %s --check-prefix=NOLAYER
// RUN: not attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/prune-empty.json" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING

// Heads 1 and 3 (width 4) of 4; FFN groups 0 and 2 (of 8 units) of 4.
// LIST-LABEL: func.func @layer
// LIST-DAG: %[[WQ:.*]] = attn.weight "wq" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>} : tensor<8x16xf32>
// LIST-DAG: %[[WO:.*]] = attn.weight "wo" {gather_axis = 1 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>} : tensor<16x8xf32>
// LIST-DAG: %[[BQ:.*]] = attn.weight "bq" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>} : tensor<8xf32>
// LIST-DAG: %[[BO:.*]] = attn.weight "bo" : tensor<16xf32>
// LIST: attn.mha %{{.*}} weights(%[[WQ]], %{{.*}}, %{{.*}}, %[[WO]]) biases(%[[BQ]], %{{.*}}, %{{.*}}, %[[BO]]) heads = 2 head_dim = 4 : {{.*}} -> tensor<1x3x16xf32>
// LIST-DAG: %[[UP:.*]] = attn.weight "w1" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 16, 8>} : tensor<16x16xf32>
// LIST-DAG: %[[DOWN:.*]] = attn.weight "w2" {gather_axis = 1 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 16, 8>} : tensor<16x16xf32>
// LIST-DAG: %[[UB:.*]] = attn.weight "b1" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 16, 8>} : tensor<16xf32>
// LIST: attn.ffn %{{.*}} up(%[[UP]], %[[UB]]) down(%[[DOWN]], %{{.*}})
// LIST-NOT: attn.weight "wq" : tensor<16x16xf32>
// LIST-NOT: attn.weight "w1" : tensor<32x16xf32>

// By score: heads 1 and 3 (0.9, ties to the lower index), FFN group 1.
// SCORES-LABEL: func.func @layer
// SCORES: attn.weight "wq" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>}
// SCORES: heads = 2 head_dim = 4
// SCORES: attn.weight "w1" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 16, 16>} : tensor<16x16xf32>

// BADHEAD: error: 'attn.mha' op has 4 heads; cannot keep head 4
// BADGROUP: error: 'attn.ffn' op d_ff 32 is not a multiple of ffn_group_size 5
// NOLAYER: error: attn-prune-structure: spec-file '{{.*}}prune-no-layer.json': no attn.layer has depth 7
// EMPTY: error: attn-prune-structure: spec-file '{{.*}}prune-empty.json': layer 0: 'heads' would remove everything
// MISSING: error: attn-prune-structure: spec-file '{{.*}}missing.json': No such file or directory
func.func @layer(%x: tensor<1x3x16xf32>) -> tensor<1x3x16xf32> {
  %y = attn.layer index = 0 (%x) : (tensor<1x3x16xf32>) -> tensor<1x3x16xf32> {
  ^bb0(%h: tensor<1x3x16xf32>):
    %wq = attn.weight "wq" : tensor<16x16xf32>
    %wk = attn.weight "wk" : tensor<16x16xf32>
    %wv = attn.weight "wv" : tensor<16x16xf32>
    %wo = attn.weight "wo" : tensor<16x16xf32>
    %bq = attn.weight "bq" : tensor<16xf32>
    %bk = attn.weight "bk" : tensor<16xf32>
    %bv = attn.weight "bv" : tensor<16xf32>
    %bo = attn.weight "bo" : tensor<16xf32>
    %a = attn.mha %h weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 4 : (tensor<1x3x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x3x16xf32>
    %w1 = attn.weight "w1" : tensor<32x16xf32>
    %b1 = attn.weight "b1" : tensor<32xf32>
    %w2 = attn.weight "w2" : tensor<16x32xf32>
    %b2 = attn.weight "b2" : tensor<16xf32>
    %f = attn.ffn %a up(%w1, %b1) down(%w2, %b2) : (tensor<1x3x16xf32>, tensor<32x16xf32>, tensor<32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<1x3x16xf32>
    attn.yield %f : tensor<1x3x16xf32>
  }
  return %y : tensor<1x3x16xf32>
}
