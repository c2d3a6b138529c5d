// RUN: attn-opt %s --split-input-file --attn-hoist-weights | FileCheck %s

// Inputs and outputs may have dynamic (batch, sequence) sizes. The manifest
// records, per dynamic dimension, the (input, axis) whose size it has, or
// (-1, -1) for a size the caller chooses: the runtime checks inputs against
// each other and sizes the outputs from them. The equalities come from the
// IR on tensors: operands of one linalg loop, tensor.empty sized by
// tensor.dim, destination results, calls.

// The two inputs are added elementwise (one loop over their rows): the
// second one's rows must be the first one's, and so are the output's.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "b", type = tensor<8xf32>}, {dims_from = array<i64: -1, -1>, kind = "input", name = "input0", type = tensor<?x8xf32>}, {dims_from = array<i64: 0, 0>, kind = "input", name = "input1", type = tensor<?x8xf32>}, {dims_from = array<i64: 0, 0>, kind = "output", name = "output0", type = tensor<?x8xf32>}]
// CHECK-LABEL: func.func @main(
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %b = attn.weight "b" : tensor<8xf32>
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%rows) : tensor<?x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #bias, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y, %b : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) outs(%init : tensor<?x8xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.addf %s, %d : f32
    linalg.yield %t : f32
  } -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Unrelated sizes are each chosen by the caller; an output may take its
// size from any input (here through a called function and a reshape).
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{dims_from = array<i64: -1, -1>, kind = "input", name = "input0", type = tensor<1x?x8xf32>}, {dims_from = array<i64: -1, -1>, kind = "input", name = "input1", type = tensor<4x?xf32>}, {dims_from = array<i64: 1, 1>, kind = "output", name = "output0", type = tensor<4x?xf32>}, {dims_from = array<i64: 0, 1>, kind = "output", name = "output1", type = tensor<?x8xf32>}]
// CHECK-LABEL: func.func @main(
func.func @main(%x: tensor<1x?x8xf32>, %z: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<?x8xf32>) {
  %0 = call @layer(%x) : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  %1 = tensor.collapse_shape %0 [[0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
  return %z, %1 : tensor<4x?xf32>, tensor<?x8xf32>
}
func.func private @layer(%x: tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
  return %x : tensor<1x?x8xf32>
}
