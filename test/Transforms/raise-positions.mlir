// RUN: attn-opt %s --split-input-file --attn-raise-positions | FileCheck %s

#map = affine_map<(d0) -> (d0)>

// x + wpe[arange(P, P + S)] broadcast over the batch (after a past of P
// positions): learned positions starting at P for every sequence.
// CHECK-LABEL: func.func @after_past
// CHECK: %[[P:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?xi64>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[P]] : i64) outs(%[[E]] : tensor<?xi64>)
// CHECK: %[[R:.*]] = attn.learned_pos %arg0, %arg1 positions(%[[F]] : tensor<?xi64>) : tensor<?x?x8xf32>, tensor<16x8xf32>
// CHECK: return %[[R]]
func.func @after_past(%x: tensor<?x?x8xf32>, %wpe: tensor<16x8xf32>, %past: tensor<?x2x?x4xf32>) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %p = tensor.dim %past, %c2 : tensor<?x2x?x4xf32>
  %p64 = arith.index_cast %p : index to i64
  %e = tensor.empty(%s) : tensor<?xi64>
  %range = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%e : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %one = arith.constant 1 : i64
    %m = arith.muli %i64, %one : i64
    %v = arith.addi %p64, %m : i64
    linalg.yield %v : i64
  } -> tensor<?xi64>
  %ids = tensor.expand_shape %range [[0, 1]] output_shape [1, %s] : tensor<?xi64> into tensor<1x?xi64>
  %rows = attn.embedding %ids, %wpe : (tensor<1x?xi64>, tensor<16x8xf32>) -> tensor<1x?x8xf32>
  %flat = tensor.collapse_shape %rows [[0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
  %eb = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %bc = linalg.broadcast ins(%flat : tensor<?x8xf32>) outs(%eb : tensor<?x?x8xf32>) dimensions = [0]
  %sum = linalg.add ins(%x, %bc : tensor<?x?x8xf32>, tensor<?x?x8xf32>) outs(%eb : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %sum : tensor<?x?x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// From position 0: no positions operand.
// CHECK-LABEL: func.func @from_zero
// CHECK: %[[R:.*]] = attn.learned_pos %arg0, %arg1 : tensor<2x4x8xf32>, tensor<16x8xf32>
// CHECK: return %[[R]]
func.func @from_zero(%x: tensor<2x4x8xf32>, %wpe: tensor<16x8xf32>) -> tensor<2x4x8xf32> {
  %e = tensor.empty() : tensor<4xi64>
  %range = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%e : tensor<4xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %zero = arith.constant 0 : i64
    %v = arith.addi %zero, %i64 : i64
    linalg.yield %v : i64
  } -> tensor<4xi64>
  %ids = tensor.expand_shape %range [[0, 1]] output_shape [1, 4] : tensor<4xi64> into tensor<1x4xi64>
  %rows = attn.embedding %ids, %wpe : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %flat = tensor.collapse_shape %rows [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %eb = tensor.empty() : tensor<2x4x8xf32>
  %bc = linalg.broadcast ins(%flat : tensor<4x8xf32>) outs(%eb : tensor<2x4x8xf32>) dimensions = [0]
  %sum = linalg.add ins(%bc, %x : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%eb : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %sum : tensor<2x4x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// Ids that are not a range stay a lookup.
// CHECK-LABEL: func.func @not_a_range
// CHECK-NOT: attn.learned_pos
// CHECK: attn.embedding
func.func @not_a_range(%x: tensor<2x4x8xf32>, %wpe: tensor<16x8xf32>, %pos: tensor<4xi64>) -> tensor<2x4x8xf32> {
  %ids = tensor.expand_shape %pos [[0, 1]] output_shape [1, 4] : tensor<4xi64> into tensor<1x4xi64>
  %rows = attn.embedding %ids, %wpe : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %flat = tensor.collapse_shape %rows [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %eb = tensor.empty() : tensor<2x4x8xf32>
  %bc = linalg.broadcast ins(%flat : tensor<4x8xf32>) outs(%eb : tensor<2x4x8xf32>) dimensions = [0]
  %sum = linalg.add ins(%x, %bc : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%eb : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %sum : tensor<2x4x8xf32>
}
