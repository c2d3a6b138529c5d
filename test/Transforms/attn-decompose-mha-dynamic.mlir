// RUN: attn-opt %s --split-input-file --attn-decompose-mha | FileCheck %s

// attn.mha with a dynamic batch and sequence: the head split and merge take
// their sizes from the input (tensor.dim), the model width stays static.
// CHECK-LABEL: func.func @mha_dynamic(
func.func @mha_dynamic(%x: tensor<?x?x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>, %wo: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 2 : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}
