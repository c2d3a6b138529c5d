// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-transpose-weights))" | FileCheck %s

// Weights that are already `transpose` views of tensors stored [in, out]
// (GPT-2's Conv1D, imported by attn-import --hf) are bound as stored: the
// K-major contraction reads the checkpoint tensor itself, no transpose.

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @conv1d
// CHECK:         %[[W:.*]] = attn.weight "h.0.mlp.c_fc.weight" : tensor<8x16xf32>
// CHECK-NOT:     transpose}
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[W]] : tensor<4x8xf32>, tensor<8x16xf32>)
func.func @conv1d(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = attn.weight "h.0.mlp.c_fc.weight" {transpose} : tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A gathered column block of the fused c_attn [8, 24]: the gather stays (its
// axis refers to the stored tensor), the transpose goes.
// CHECK-LABEL: func.func @c_attn_query
// CHECK:         %[[W:.*]] = attn.weight "h.0.attn.c_attn.weight" {gather_axis = 1 : i64, gather_extent = 24 : i64, gather_ranges = array<i64: 0, 8>} : tensor<8x8xf32>
// CHECK:         ins(%{{.*}}, %[[W]] : tensor<4x8xf32>, tensor<8x8xf32>)
func.func @c_attn_query(%x: tensor<4x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = attn.weight "h.0.attn.c_attn.weight" {gather_axis = 1 : i64, gather_extent = 24 : i64, gather_ranges = array<i64: 0, 8>, transpose} : tensor<8x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
