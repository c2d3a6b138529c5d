// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg --verify-diagnostics

// Dynamic shapes are diagnosed, not lowered to invalid tensor.empty ops.
func.func @dynamic_relu(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'attn.relu' op has dynamic shapes, which attn-lower-to-linalg does not support yet}}
  %0 = attn.relu %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @dynamic_layer_norm(%x: tensor<?x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'attn.layer_norm' op has dynamic shapes}}
  %0 = attn.layer_norm %x, %g, %b : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
  return %0 : tensor<?x4xf32>
}
