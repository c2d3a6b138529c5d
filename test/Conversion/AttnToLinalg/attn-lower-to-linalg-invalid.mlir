// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg --verify-diagnostics

// Batch and sequence dimensions may be dynamic (attn-lower-to-linalg-dynamic.mlir);
// a dynamic feature dimension sizes nothing the lowering could build: it is
// diagnosed, not lowered to invalid tensor.empty ops.
func.func @dynamic_feature_relu(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'attn.relu' op has a dynamic feature (last) dimension in tensor<2x?xf32> (only batch and sequence dimensions may be dynamic), which attn-lower-to-linalg does not support}}
  %0 = attn.relu %x : tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

func.func @dynamic_feature_layer_norm(%x: tensor<?x?xf32>, %g: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'attn.layer_norm' op has a dynamic feature (last) dimension}}
  %0 = attn.layer_norm %x, %g, %b : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @dynamic_heads(%q: tensor<1x?x8x16xf32>, %k: tensor<1x?x8x16xf32>, %v: tensor<1x?x8x16xf32>) -> tensor<1x?x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op has a dynamic number of heads (only batch and sequence dimensions may be dynamic)}}
  %0 = attn.sdpa %q, %k, %v : tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32> -> tensor<1x?x8x16xf32>
  return %0 : tensor<1x?x8x16xf32>
}

// -----

func.func @dynamic_cache_write(%cache: tensor<1x2x?x8xf32>, %new: tensor<1x2x1x8xf32>, %pos: tensor<1xi64>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{'attn.cache_write' op has dynamic shapes (KV-cache writes need a static cache; only the number of rows written may be dynamic)}}
  %0 = attn.cache_write %new into %cache at %pos : tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1xi64>
  return %0 : tensor<1x2x?x8xf32>
}
