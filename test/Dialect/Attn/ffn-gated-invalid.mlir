// RUN: attn-opt %s --split-input-file --verify-diagnostics

// Verifier diagnostics of the gated attn.ffn.

func.func @gate_rows(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %u: tensor<24x8xf32>, %d: tensor<8x24xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.ffn' op gate_weight has 16 rows but up_weight has 24; a gated FFN needs both [d_ff, d_model]}}
  %0 = attn.ffn %x gate(%g) up(%u) down(%d) activation = silu : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<24x8xf32>, tensor<8x24xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @gate_in_features(%x: tensor<2x8xf32>, %g: tensor<24x4xf32>, %u: tensor<24x8xf32>, %d: tensor<8x24xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.ffn' op gate_weight dimension 1 is 4 but must be 8 (input's last dimension)}}
  %0 = attn.ffn %x gate(%g) up(%u) down(%d) activation = silu : (tensor<2x8xf32>, tensor<24x4xf32>, tensor<24x8xf32>, tensor<8x24xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @gate_rank(%x: tensor<2x8xf32>, %g: tensor<24xf32>, %u: tensor<24x8xf32>, %d: tensor<8x24xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.ffn' op gate_weight must have rank 2 ([out_features, in_features]), got 'tensor<24xf32>'}}
  %0 = attn.ffn %x gate(%g) up(%u) down(%d) activation = silu : (tensor<2x8xf32>, tensor<24xf32>, tensor<24x8xf32>, tensor<8x24xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @gate_bias_size(%x: tensor<2x8xf32>, %g: tensor<24x8xf32>, %gb: tensor<8xf32>, %u: tensor<24x8xf32>, %d: tensor<8x24xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.ffn' op gate_bias dimension 0 is 8 but must be 24 (gate_weight dimension 0)}}
  %0 = attn.ffn %x gate(%g) gate_bias(%gb) up(%u) down(%d) activation = silu : (tensor<2x8xf32>, tensor<24x8xf32>, tensor<8xf32>, tensor<24x8xf32>, tensor<8x24xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @gate_bias_without_gate(%x: tensor<2x8xf32>, %gb: tensor<24xf32>, %u: tensor<24x8xf32>, %d: tensor<8x24xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.ffn' op gate_bias requires gate_weight}}
  %0 = attn.ffn %x gate_bias(%gb) up(%u) down(%d) activation = silu : (tensor<2x8xf32>, tensor<24xf32>, tensor<24x8xf32>, tensor<8x24xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @gate_dtype(%x: tensor<2x8xf32>, %g: tensor<24x8xf16>, %u: tensor<24x8xf32>, %d: tensor<8x24xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.ffn' op}}
  %0 = attn.ffn %x gate(%g) up(%u) down(%d) activation = silu : (tensor<2x8xf32>, tensor<24x8xf16>, tensor<24x8xf32>, tensor<8x24xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
