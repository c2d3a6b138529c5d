// RUN: attn-opt %s --split-input-file --attn-raise-linear | FileCheck %s

// MatMul of a [B, S, K] activation by a [K, N] initializer, as imported:
// leading dims collapsed, linalg.matmul, expanded back; the bias added first
// (PyTorch writes Add(bias, MatMul)). The [K, N] tensor is bound transposed.

// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-DAG: %[[W:.*]] = attn.weight "onnx::MatMul_7" {transpose} : tensor<5x4xf32>
// CHECK-DAG: %[[B:.*]] = attn.weight "fc.bias" : tensor<5xf32>
// CHECK: %[[Y:.*]] = attn.linear %[[X]], %[[W]], %[[B]] : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[Y]]
func.func @matmul_bias(%x: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %w = attn.weight "onnx::MatMul_7" : tensor<4x5xf32>
  %b = attn.weight "fc.bias" : tensor<5xf32>
  %xc = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %e = tensor.empty() : tensor<6x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %m = linalg.matmul ins(%xc, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%z : tensor<6x5xf32>) -> tensor<6x5xf32>
  %me = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
  %e3 = tensor.empty() : tensor<2x3x5xf32>
  %bb = linalg.broadcast ins(%b : tensor<5xf32>) outs(%e3 : tensor<2x3x5xf32>) dimensions = [0, 1]
  %y = linalg.add ins(%bb, %me : tensor<2x3x5xf32>, tensor<2x3x5xf32>) outs(%e3 : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Gemm with transB = 1 on a rank-2 input: the [N, K] weight is used as is;
// C added after.

// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-SAME: (%[[X:.*]]: tensor<6x4xf32>)
// CHECK-DAG: %[[W:.*]] = attn.weight "fc.weight" : tensor<5x4xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<{{.*}}> : tensor<5xf32>
// CHECK: %[[Y:.*]] = attn.linear %[[X]], %[[W]], %[[B]] : (tensor<6x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<6x5xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[Y]]
func.func @gemm_trans_b(%x: tensor<6x4xf32>) -> tensor<6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %w = attn.weight "fc.weight" : tensor<5x4xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %et = tensor.empty() : tensor<4x5xf32>
  %wt = linalg.transpose ins(%w : tensor<5x4xf32>) outs(%et : tensor<4x5xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<6x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %m = linalg.matmul ins(%x, %wt : tensor<6x4xf32>, tensor<4x5xf32>) outs(%z : tensor<6x5xf32>) -> tensor<6x5xf32>
  %bb = linalg.broadcast ins(%b : tensor<5xf32>) outs(%e : tensor<6x5xf32>) dimensions = [0]
  %y = linalg.add ins(%m, %bb : tensor<6x5xf32>, tensor<6x5xf32>) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  return %y : tensor<6x5xf32>
}

// -----

// A weight used by two projections: each binds the transposed view; the
// original view stays for its other use.

// CHECK-LABEL: func.func @shared_weight
// CHECK: attn.linear %{{.*}}, %{{.*}} : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK: return
func.func @shared_weight(%x: tensor<6x4xf32>) -> (tensor<6x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = attn.weight "w" : tensor<4x5xf32>
  %e = tensor.empty() : tensor<6x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %m = linalg.matmul ins(%x, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%z : tensor<6x5xf32>) -> tensor<6x5xf32>
  return %m, %w : tensor<6x5xf32>, tensor<4x5xf32>
}

// -----

// Near misses: a matmul of two activations (attention-like), a matmul
// accumulating into a non-zero tensor, and a bias that is not a [N] vector
// broadcast (a full [M, N] tensor) stay as they are.

// CHECK-LABEL: func.func @near_misses
// CHECK: linalg.matmul ins(%arg0, %arg1
// CHECK: %[[L:.*]] = attn.linear %arg0, %{{.*}} : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK: linalg.add ins(%[[L]], %arg2
// CHECK: linalg.matmul ins(%arg0, %{{.*}} : tensor<6x4xf32>, tensor<4x5xf32>) outs(%arg2
func.func @near_misses(%x: tensor<6x4xf32>, %y: tensor<4x5xf32>, %c: tensor<6x5xf32>) -> (tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = attn.weight "w" : tensor<4x5xf32>
  %e = tensor.empty() : tensor<6x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %a = linalg.matmul ins(%x, %y : tensor<6x4xf32>, tensor<4x5xf32>) outs(%z : tensor<6x5xf32>) -> tensor<6x5xf32>
  %m = linalg.matmul ins(%x, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%z : tensor<6x5xf32>) -> tensor<6x5xf32>
  %s = linalg.add ins(%m, %c : tensor<6x5xf32>, tensor<6x5xf32>) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %acc = linalg.matmul ins(%x, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%c : tensor<6x5xf32>) -> tensor<6x5xf32>
  return %a, %s, %acc : tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>
}

// -----

// Gemm on a flattened activation (GPT-2's Conv1D addmm): the projection and
// its bias on [M, K], reshaped back after the bias; it applies to the
// [B, S, K] tensor itself.

// CHECK-LABEL: func.func @flattened_gemm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[Y:.*]] = attn.linear %[[X]], %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
// CHECK-NOT: tensor.
// CHECK: return %[[Y]]
func.func @flattened_gemm(%x: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %w = attn.weight "c_attn.weight" : tensor<4x5xf32>
  %b = attn.weight "c_attn.bias" : tensor<5xf32>
  %xc = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %e = tensor.empty() : tensor<6x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %m = linalg.matmul ins(%xc, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%z : tensor<6x5xf32>) -> tensor<6x5xf32>
  %bb = linalg.broadcast ins(%b : tensor<5xf32>) outs(%e : tensor<6x5xf32>) dimensions = [0]
  %y2 = linalg.add ins(%m, %bb : tensor<6x5xf32>, tensor<6x5xf32>) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}
