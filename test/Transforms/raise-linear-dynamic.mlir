// RUN: attn-opt %s --split-input-file --attn-raise-linear | FileCheck %s

// Dynamic batch and sequence (an ONNX import without --input-shape): the
// collapse / matmul / expand folds into attn.linear on x when the expand's
// output sizes are x's own (tensor.dim of x, in order).

// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4xf32>)
// CHECK: %[[Y:.*]] = attn.linear %[[X]], %{{.*}} : (tensor<?x?x4xf32>, tensor<5x4xf32>) -> tensor<?x?x5xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return %[[Y]]
func.func @dynamic_rows(%x: tensor<?x?x4xf32>) -> tensor<?x?x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x?x4xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x4xf32>
  %w = attn.weight "onnx::MatMul_7" : tensor<4x5xf32>
  %xc = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  %rows = arith.muli %b, %s : index
  %e = tensor.empty(%rows) : tensor<?x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %m = linalg.matmul ins(%xc, %w : tensor<?x4xf32>, tensor<4x5xf32>) outs(%z : tensor<?x5xf32>) -> tensor<?x5xf32>
  %me = tensor.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 5] : tensor<?x5xf32> into tensor<?x?x5xf32>
  return %me : tensor<?x?x5xf32>
}

// -----

// The same types, but the rows expand as [S, B]: a reshape, not the
// inverse of the collapse. The linear stays on the flattened rows.

// CHECK-LABEL: func.func @dynamic_rows_swapped
// CHECK: %[[L:.*]] = attn.linear %{{.*}} : (tensor<?x4xf32>, tensor<5x4xf32>) -> tensor<?x5xf32>
// CHECK: tensor.expand_shape %[[L]]
func.func @dynamic_rows_swapped(%x: tensor<?x?x4xf32>) -> tensor<?x?x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x?x4xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x4xf32>
  %w = attn.weight "onnx::MatMul_7" : tensor<4x5xf32>
  %xc = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  %rows = arith.muli %b, %s : index
  %e = tensor.empty(%rows) : tensor<?x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %m = linalg.matmul ins(%xc, %w : tensor<?x4xf32>, tensor<4x5xf32>) outs(%z : tensor<?x5xf32>) -> tensor<?x5xf32>
  %me = tensor.expand_shape %m [[0, 1], [2]] output_shape [%s, %b, 5] : tensor<?x5xf32> into tensor<?x?x5xf32>
  return %me : tensor<?x?x5xf32>
}
