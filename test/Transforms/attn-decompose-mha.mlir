// RUN: attn-opt %s --attn-decompose-mha | FileCheck %s

// CHECK-LABEL: func.func @self_attention
// CHECK: %[[Q:.*]] = attn.linear %arg0, %arg1, %arg5
// CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [1, 4, 2, 8]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x4x2x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: attn.linear %arg0, %arg2, %arg6
// CHECK: attn.linear %arg0, %arg3, %arg7
// CHECK: %[[A:.*]] = attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK: linalg.transpose ins(%[[A]] : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x4x2x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<1x4x2x8xf32> into tensor<1x4x16xf32>
// CHECK: attn.linear %{{.*}}, %arg4, %arg8
// CHECK-NOT: attn.mha
func.func @self_attention(%x: tensor<1x4x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>, %bq: tensor<16xf32>, %bk: tensor<16xf32>, %bv: tensor<16xf32>, %bo: tensor<16xf32>) -> tensor<1x4x16xf32> {
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 2 causal : (tensor<1x4x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}
