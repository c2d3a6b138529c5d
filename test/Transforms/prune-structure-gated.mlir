// attn-prune-structure on a gated (SwiGLU) FFN: the gate keeps the same rows
// (and bias elements) as the up projection, the down projection the same
// columns.
// RUN: attn-opt %s --attn-prune-structure="spec-file=%S/Inputs/prune-gated.json" | FileCheck %s

// CHECK-LABEL: func.func @gated
// CHECK-DAG: %[[GATE:.*]] = attn.weight "wg" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 16, 8>} : tensor<16x16xf32>
// CHECK-DAG: %[[GB:.*]] = attn.weight "bg" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 16, 8>} : tensor<16xf32>
// CHECK-DAG: %[[UP:.*]] = attn.weight "wu" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 16, 8>} : tensor<16x16xf32>
// CHECK-DAG: %[[DOWN:.*]] = attn.weight "wd" {gather_axis = 1 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 16, 8>} : tensor<16x16xf32>
// CHECK: attn.ffn %{{.*}} gate(%[[GATE]]) gate_bias(%[[GB]]) up(%[[UP]]) down(%[[DOWN]]) activation = silu
// CHECK-NOT: tensor<32x16xf32>
func.func @gated(%x: tensor<1x3x16xf32>) -> tensor<1x3x16xf32> {
  %y = attn.layer index = 0 (%x) : (tensor<1x3x16xf32>) -> tensor<1x3x16xf32> {
  ^bb0(%h: tensor<1x3x16xf32>):
    %wg = attn.weight "wg" : tensor<32x16xf32>
    %bg = attn.weight "bg" : tensor<32xf32>
    %wu = attn.weight "wu" : tensor<32x16xf32>
    %wd = attn.weight "wd" : tensor<16x32xf32>
    %f = attn.ffn %h gate(%wg) gate_bias(%bg) up(%wu) down(%wd) activation = silu : (tensor<1x3x16xf32>, tensor<32x16xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<1x3x16xf32>
    attn.yield %f : tensor<1x3x16xf32>
  }
  return %y : tensor<1x3x16xf32>
}
