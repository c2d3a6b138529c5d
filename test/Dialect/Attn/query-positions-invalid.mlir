// RUN: attn-opt %s --split-input-file --verify-diagnostics

// attn.sdpa query_positions: [batch] integers that place the causal and
// window masks per batch row.

func.func @query_positions_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %p: tensor<2x1xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op query_positions must have rank 1 ([batch]), got 'tensor<2x1xi64>'}}
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<2x1xi64>) causal : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @query_positions_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %p: tensor<3xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op query_positions dimension 0 is 3 but must be 2 (query dimension 0, batch)}}
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<3xi64>) causal : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @query_positions_float(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %p: tensor<2xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op operand #3 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<2xf32>) causal : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// Without a causal or window mask the positions would place nothing.
func.func @query_positions_without_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %p: tensor<2xi32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op has query_positions but neither a causal nor a window mask (query_positions only place those masks)}}
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<2xi32>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @query_positions_window_zero(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %p: tensor<2xi32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op has query_positions but neither a causal nor a window mask}}
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<2xi32>) window = 0 : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}
