// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg | FileCheck %s

// Batch and sequence dimensions may be dynamic: results are sized from the
// operands at run time (tensor.dim), feature dimensions stay static.

// CHECK-LABEL: func.func @relu_dynamic(
func.func @relu_dynamic(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.relu %x : tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @linear_dynamic_rows(
func.func @linear_dynamic_rows(%x: tensor<1x?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<1x?x4xf32> {
  %0 = attn.linear %x, %w, %b : (tensor<1x?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<1x?x4xf32>
  return %0 : tensor<1x?x4xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_dynamic(
func.func @layer_norm_dynamic(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.layer_norm %x, %g, %b epsilon = 1.0e-05 : tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @embedding_dynamic(
func.func @embedding_dynamic(%ids: tensor<?x?xi32>, %table: tensor<100x8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.embedding %ids, %table : (tensor<?x?xi32>, tensor<100x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @learned_pos_dynamic(
func.func @learned_pos_dynamic(%x: tensor<1x?x8xf32>, %table: tensor<32x8xf32>) -> tensor<1x?x8xf32> {
  %0 = attn.learned_pos %x, %table offset = 2 : tensor<1x?x8xf32>, tensor<32x8xf32>
  return %0 : tensor<1x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_causal_dynamic(
func.func @sdpa_causal_dynamic(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  return %0 : tensor<1x2x?x4xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_dynamic(
func.func @softmax_dynamic(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %0 = attn.softmax %x dim = 0 : tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}
