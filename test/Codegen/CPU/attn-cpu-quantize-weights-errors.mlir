// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=4 group-size=32" -verify-diagnostics

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// K = 48 is not a multiple of the group size: an error on the weight.
func.func @group(%x: tensor<4x48xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{attn-cpu-quantize-weights: the input size K = 48 of the projection by 'w' is not a multiple of group-size 32}}
  %w = attn.weight "w" : tensor<8x48xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x48xf32>, tensor<8x48xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
