// RUN: attn-opt %s --split-input-file --attn-raise-residual | FileCheck %s

// CHECK-LABEL: func.func @residual
// CHECK: %[[R:.*]] = attn.add %arg0, %arg1 : tensor<2x4x8xf32>
// CHECK: %[[B:.*]] = linalg.broadcast
// CHECK: linalg.add ins(%[[R]], %[[B]]
// CHECK: %[[C:.*]] = arith.constant
// CHECK: linalg.add ins(%[[R]], %[[C]]
// CHECK: linalg.add ins(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
func.func @residual(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %b: tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %r = linalg.add ins(%x, %y : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<2x4x8xf32>) dimensions = [0, 1]
  %s = linalg.add ins(%r, %bb : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %c = arith.constant dense<1.0> : tensor<2x4x8xf32>
  %t = linalg.add ins(%r, %c : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %v = linalg.add ins(%b, %b : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  return %s, %t, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>
}
