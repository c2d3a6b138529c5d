// RUN: attn-opt %s --split-input-file --verify-diagnostics

// Zero-size dimensions where an op would be meaningless (a reduction over
// nothing, a table without rows), and sizes whose products overflow. One
// case per diagnostic.

func.func @weight_no_elements() -> tensor<0x4xf32> {
  // expected-error @+1 {{'attn.weight' op weight 'w' has type 'tensor<0x4xf32>' with no elements; every dimension must be at least 1}}
  %0 = attn.weight "w" : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

func.func @embedding_zero_rows(%ids: tensor<1x4xi32>, %t: tensor<0x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.embedding' op table dimension 0 (vocab) is 0; it must be at least 1}}
  %0 = attn.embedding %ids, %t : (tensor<1x4xi32>, tensor<0x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @embedding_zero_width(%ids: tensor<1x4xi32>, %t: tensor<10x0xf32>) -> tensor<1x4x0xf32> {
  // expected-error @+1 {{'attn.embedding' op table dimension 1 (embedding width) is 0; it must be at least 1}}
  %0 = attn.embedding %ids, %t : (tensor<1x4xi32>, tensor<10x0xf32>) -> tensor<1x4x0xf32>
  return %0 : tensor<1x4x0xf32>
}

// -----

func.func @layer_norm_empty_row(%x: tensor<2x0xf32>, %g: tensor<0xf32>) -> tensor<2x0xf32> {
  // expected-error @+1 {{'attn.layer_norm' op input dimension 1 (the normalized last dimension) is 0; it must be at least 1}}
  %0 = attn.layer_norm %x, %g, %g : tensor<2x0xf32>, tensor<0xf32>, tensor<0xf32>
  return %0 : tensor<2x0xf32>
}

// -----

func.func @rms_norm_empty_row(%x: tensor<2x3x0xf32>, %g: tensor<0xf32>) -> tensor<2x3x0xf32> {
  // expected-error @+1 {{'attn.rms_norm' op input dimension 2 (the normalized last dimension) is 0; it must be at least 1}}
  %0 = attn.rms_norm %x, %g : tensor<2x3x0xf32>, tensor<0xf32>
  return %0 : tensor<2x3x0xf32>
}

// -----

func.func @linear_no_in_features(%x: tensor<4x0xf32>, %w: tensor<8x0xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.linear' op input dimension 1 (in_features) is 0; it must be at least 1}}
  %0 = attn.linear %x, %w : (tensor<4x0xf32>, tensor<8x0xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @linear_no_out_features(%x: tensor<4x8xf32>, %w: tensor<0x8xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{'attn.linear' op weight dimension 0 (out_features) is 0; it must be at least 1}}
  %0 = attn.linear %x, %w : (tensor<4x8xf32>, tensor<0x8xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}

// -----

func.func @ffn_no_hidden(%x: tensor<4x8xf32>, %up: tensor<0x8xf32>, %down: tensor<8x0xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.ffn' op up_weight dimension 0 (out_features) is 0; it must be at least 1}}
  %0 = attn.ffn %x up(%up) down(%down) activation = relu : (tensor<4x8xf32>, tensor<0x8xf32>, tensor<8x0xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softmax_empty(%x: tensor<4x0xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{'attn.softmax' op input dimension 1 (the softmax dimension) is 0; it must be at least 1}}
  %0 = attn.softmax %x : tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}

// -----

func.func @sdpa_no_keys(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x0x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op key dimension 2 (key sequence) is 0; it must be at least 1}}
  %0 = attn.sdpa %q, %k, %k : tensor<1x2x4x8xf32>, tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

func.func @sdpa_no_heads(%q: tensor<1x0x4x8xf32>, %k: tensor<1x0x4x8xf32>) -> tensor<1x0x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op query dimension 1 (query heads) is 0; it must be at least 1}}
  %0 = attn.sdpa %q, %k, %k : tensor<1x0x4x8xf32>, tensor<1x0x4x8xf32>, tensor<1x0x4x8xf32> -> tensor<1x0x4x8xf32>
  return %0 : tensor<1x0x4x8xf32>
}

// -----

func.func @sdpa_empty_head(%q: tensor<1x2x4x0xf32>) -> tensor<1x2x4x0xf32> {
  // expected-error @+1 {{'attn.sdpa' op query dimension 3 (query head size) is 0; it must be at least 1}}
  %0 = attn.sdpa %q, %q, %q : tensor<1x2x4x0xf32>, tensor<1x2x4x0xf32>, tensor<1x2x4x0xf32> -> tensor<1x2x4x0xf32>
  return %0 : tensor<1x2x4x0xf32>
}

// -----

func.func @sdpa_empty_value_head(%q: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x0xf32>) -> tensor<1x2x4x0xf32> {
  // expected-error @+1 {{'attn.sdpa' op value dimension 3 (value head size) is 0; it must be at least 1}}
  %0 = attn.sdpa %q, %q, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x0xf32> -> tensor<1x2x4x0xf32>
  return %0 : tensor<1x2x4x0xf32>
}

// -----

func.func @mha_zero_width(%x: tensor<1x4x0xf32>, %w: tensor<0x0xf32>) -> tensor<1x4x0xf32> {
  // expected-error @+1 {{'attn.mha' op query dimension 2 (d_model) is 0; it must be at least 1}}
  %0 = attn.mha %x weights(%w, %w, %w, %w) heads = 2 : (tensor<1x4x0xf32>, tensor<0x0xf32>, tensor<0x0xf32>, tensor<0x0xf32>, tensor<0x0xf32>) -> tensor<1x4x0xf32>
  return %0 : tensor<1x4x0xf32>
}

// -----

func.func @mha_no_keys(%x: tensor<1x4x8xf32>, %kv: tensor<1x0x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.mha' op key_value dimension 1 (key sequence) is 0; it must be at least 1}}
  %0 = attn.mha %x, %kv weights(%w, %w, %w, %w) heads = 2 : (tensor<1x4x8xf32>, tensor<1x0x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @mha_width_overflow(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.mha' op heads * head_dim (2 * 9223372036854775807) overflows a 64-bit size}}
  %0 = attn.mha %x weights(%w, %w, %w, %w) heads = 2 head_dim = 9223372036854775807 : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @sinusoidal_zero_width(%x: tensor<1x4x0xf32>) -> tensor<1x4x0xf32> {
  // expected-error @+1 {{'attn.sinusoidal_pos' op input dimension 2 (d_model) is 0; it must be at least 1}}
  %0 = attn.sinusoidal_pos %x : tensor<1x4x0xf32>
  return %0 : tensor<1x4x0xf32>
}

// -----

func.func @learned_pos_empty_table(%x: tensor<1x0x8xf32>, %t: tensor<0x8xf32>) -> tensor<1x0x8xf32> {
  // expected-error @+1 {{'attn.learned_pos' op table dimension 0 (max_positions) is 0; it must be at least 1}}
  %0 = attn.learned_pos %x, %t : tensor<1x0x8xf32>, tensor<0x8xf32>
  return %0 : tensor<1x0x8xf32>
}

// -----

func.func @learned_pos_offset_overflow(%x: tensor<1x4x8xf32>, %t: tensor<16x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.learned_pos' op positions from 9223372036854775807 for 4 rows exceed the table's 16 rows}}
  %0 = attn.learned_pos %x, %t offset = 9223372036854775807 : tensor<1x4x8xf32>, tensor<16x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @rotary_empty_head(%x: tensor<1x2x4x0xf32>) -> tensor<1x2x4x0xf32> {
  // expected-error @+1 {{'attn.rotary' op input dimension 3 (head_dim) is 0; it must be at least 1}}
  %0 = attn.rotary %x : tensor<1x2x4x0xf32>
  return %0 : tensor<1x2x4x0xf32>
}

// -----

// Float attributes: NaN and infinities are not positive finite numbers.

func.func @layer_norm_epsilon_nan(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.layer_norm' op epsilon must be a positive finite number, got nan}}
  %0 = attn.layer_norm %x, %g, %g epsilon = 0x7FF8000000000000 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @rms_norm_epsilon_inf(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.rms_norm' op epsilon must be a positive finite number, got INF}}
  %0 = attn.rms_norm %x, %g epsilon = 0x7FF0000000000000 : tensor<2x8xf32>, tensor<8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @rotary_base_nan(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'attn.rotary' op base must be a positive finite number, got nan}}
  %0 = attn.rotary %x base = 0x7FF8000000000000 : tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

func.func @sdpa_scale_nan(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op scale must be a positive finite number, got nan}}
  %0 = attn.sdpa %q, %q, %q scale = 0x7FF8000000000000 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

func.func @layer_score_nan(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.layer' op score must be finite}}
  %0 = attn.layer index = 0 score = 0x7FF8000000000000 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    attn.yield %h : tensor<1x4x8xf32>
  }
  return %0 : tensor<1x4x8xf32>
}

// -----

// Layers are named by index (keep-lists, scores files): two layers of one
// block may not share one.

func.func @duplicate_layer_index(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-note @+1 {{first layer with index 1}}
  %0 = attn.layer index = 1 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 0 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  // expected-error @+1 {{'attn.layer' op index 1 is already used by another layer of this block; layer indices must be unique}}
  %2 = attn.layer index = 1 (%1) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  return %2 : tensor<1x4x8xf32>
}
