// RUN: attn-opt %s --split-input-file --attn-decompose-mha | FileCheck %s

// attn.mha with a dynamic batch and sequence: the head split and merge take
// their sizes from the input (tensor.dim), the model width stays static.
// CHECK-LABEL: func.func @mha_dynamic(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<?x?x8xf32>, %[[WQ:[^:]+]]: tensor<8x8xf32>
// CHECK:         %[[Q:.*]] = attn.linear %[[X]], %[[WQ]] : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x8xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x8xf32>
// CHECK:         %[[QS:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1], [2, 3]] output_shape [%[[B]], %[[S]], 2, 4] : tensor<?x?x8xf32> into tensor<?x?x2x4xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x2x?x4xf32>
// CHECK:         %[[QT:.*]] = linalg.transpose ins(%[[QS]] : tensor<?x?x2x4xf32>) outs(%[[E]] : tensor<?x2x?x4xf32>) permutation = [0, 2, 1, 3]
// CHECK:         %[[A:.*]] = attn.sdpa %[[QT]], %{{.*}}, %{{.*}} : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
// CHECK:         %[[M:.*]] = linalg.transpose ins(%[[A]] : tensor<?x2x?x4xf32>) outs(%{{.*}} : tensor<?x?x2x4xf32>) permutation = [0, 2, 1, 3]
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[M]] {{\[\[}}0], [1], [2, 3]] : tensor<?x?x2x4xf32> into tensor<?x?x8xf32>
// CHECK:         %[[R:.*]] = attn.linear %[[C]], %{{.*}} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
// CHECK:         return %[[R]]
func.func @mha_dynamic(%x: tensor<?x?x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>, %wo: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 2 : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}
