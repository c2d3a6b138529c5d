// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One case per verifier diagnostic of the attn ops (and a few parse-level
// errors from the ODS constraints and enum keywords).

// attn.weight
func.func @weight_empty_name() -> tensor<4x4xf32> {
  // expected-error @+1 {{'attn.weight' op weight name must not be empty}}
  %0 = attn.weight "" : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @weight_dynamic_shape() -> tensor<?x4xf32> {
  // expected-error @+1 {{'attn.weight' op weight 'enc.w' must have a static shape, got 'tensor<?x4xf32>'}}
  %0 = attn.weight "enc.w" : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @weight_integer() -> tensor<4xi64> {
  // expected-error @+1 {{'attn.weight' op result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer values, but got 'tensor<4xi64>'}}
  %0 = attn.weight "ids" : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// i32 weights (attn-cpu-quantize-int8's packed s8) are bound as stored.
func.func @weight_integer_convert() -> tensor<4xi32> {
  // expected-error @+1 {{'attn.weight' op weight 'w.int8' has type 'tensor<4xi32>'; only float weights convert}}
  %0 = attn.weight "w.int8" {convert} : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// attn.sdpa: ranks
func.func @sdpa_query_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op query must have rank 4 ([batch, heads, seq, head_dim]), got 'tensor<2x8x16xf32>'}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_key_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{key must have rank 4 ([batch, heads, seq, head_dim]), got 'tensor<2x10x16xf32>'}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_value_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{value must have rank 4 ([batch, heads, seq, head_dim]), got 'tensor<4x10x16xf32>'}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_result_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x128xf32> {
  // expected-error @+1 {{result must have rank 4 ([batch, heads, seq, head_dim]), got 'tensor<2x4x128xf32>'}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x128xf32>
  return %0 : tensor<2x4x128xf32>
}

// -----

// attn.sdpa: element types
func.func @sdpa_mixed_element_types(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf16>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op operand #1 has element type 'f16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf16>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_mixed_result_element_type(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xbf16> {
  // expected-error @+1 {{'attn.sdpa' op result #0 has element type 'bf16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xbf16>
  return %0 : tensor<2x4x8x16xbf16>
}

// -----

// ODS type constraint: an integer query.
func.func @sdpa_integer_query(%q: tensor<2x4x8x16xi32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x4x8x16xi32>'}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xi32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attn.sdpa: mismatched dimensions
func.func @sdpa_key_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<3x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op key dimension 0 is 3 but must be 2 (query dimension 0, batch)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<3x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_value_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<1x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op value dimension 0 is 1 but must be 2 (query dimension 0, batch)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<1x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_value_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x2x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op value dimension 1 is 2 but must be 4 (key dimension 1, kv heads)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x2x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_value_seq(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x12x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op value dimension 2 is 12 but must be 10 (key dimension 2, key sequence)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x12x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_heads_not_multiple(%q: tensor<2x4x8x16xf32>, %k: tensor<2x3x10x16xf32>, %v: tensor<2x3x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op query heads (4) must be a multiple of key/value heads (3)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x3x10x16xf32>, tensor<2x3x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_zero_kv_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x0x10x16xf32>, %v: tensor<2x0x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op key dimension 1 (key/value heads) is 0; it must be at least 1}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x0x10x16xf32>, tensor<2x0x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_head_dim_scaled_dot(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x32xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op key dimension 3 is 32 but must be 16 (query dimension 3: score 'scaled_dot' needs equal query and key head sizes)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x32xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_head_dim_dot(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x8xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{key dimension 3 is 8 but must be 16 (query dimension 3: score 'dot' needs equal query and key head sizes)}}
  %0 = attn.sdpa %q, %k, %v score = dot : tensor<2x4x8x16xf32>, tensor<2x4x10x8xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_head_dim_cosine(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x8xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{key dimension 3 is 8 but must be 16 (query dimension 3: score 'cosine' needs equal query and key head sizes)}}
  %0 = attn.sdpa %q, %k, %v score = cosine : tensor<2x4x8x16xf32>, tensor<2x4x10x8xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_head_dim_gaussian(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x8xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{key dimension 3 is 8 but must be 16 (query dimension 3: score 'gaussian' needs equal query and key head sizes)}}
  %0 = attn.sdpa %q, %k, %v score = gaussian : tensor<2x4x8x16xf32>, tensor<2x4x10x8xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_result_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op result dimension 0 is 1 but must be 2 (query dimension 0, batch)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @sdpa_result_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op result dimension 1 is 2 but must be 4 (query dimension 1, heads)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x2x8x16xf32>
  return %0 : tensor<2x2x8x16xf32>
}

// -----

func.func @sdpa_result_seq(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x10x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op result dimension 2 is 10 but must be 8 (query dimension 2, query sequence)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x10x16xf32>
  return %0 : tensor<2x4x10x16xf32>
}

// -----

func.func @sdpa_result_head_dim(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x32xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op result dimension 3 is 16 but must be 32 (value dimension 3, value head size)}}
  %0 = attn.sdpa %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attn.sdpa: bias
func.func @sdpa_bias_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %b: tensor<8x10xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op bias must have rank 4 (broadcastable to [batch, heads, q_seq, k_seq]), got 'tensor<8x10xf32>'}}
  %0 = attn.sdpa %q, %k, %v bias(%b : tensor<8x10xf32>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_bias_broadcast(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %b: tensor<1x1x8x8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op bias dimension 3 is 8 but must be 1 or 10}}
  %0 = attn.sdpa %q, %k, %v bias(%b : tensor<1x1x8x8xf32>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_bias_broadcast_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %b: tensor<2x2x8x10xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op bias dimension 1 is 2 but must be 1 or 4}}
  %0 = attn.sdpa %q, %k, %v bias(%b : tensor<2x2x8x10xf32>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attn.sdpa: kv_lengths
func.func @sdpa_kv_lengths_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %l: tensor<2x1xi32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op kv_lengths must have rank 1 ([batch]), got 'tensor<2x1xi32>'}}
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2x1xi32>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_kv_lengths_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %l: tensor<3xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op kv_lengths dimension 0 is 3 but must be 2 (query dimension 0, batch)}}
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<3xi64>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_kv_lengths_float(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %l: tensor<2xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op operand #3 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xf32>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attn.sdpa: score weights
func.func @sdpa_dot_with_weight(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op score 'dot' takes 0 score weight(s), got 1}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<16x16xf32>) score = dot : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_scaled_dot_with_weight(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op score 'scaled_dot' takes 0 score weight(s), got 1}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<16x16xf32>) : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_general_no_weight(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op score 'general' takes 1 score weight(s), got 0}}
  %0 = attn.sdpa %q, %k, %v score = general : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_general_two_weights(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op score 'general' takes 1 score weight(s), got 2}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %w : tensor<16x16xf32>, tensor<16x16xf32>) score = general : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_additive_one_weight(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<8x32xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op score 'additive' takes 2 score weight(s), got 1}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<8x32xf32>) score = additive : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_cosine_with_weights(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<8x32xf32>, %a: tensor<8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op score 'cosine' takes 0 score weight(s), got 2}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %a : tensor<8x32xf32>, tensor<8xf32>) score = cosine : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_gaussian_with_weight(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op score 'gaussian' takes 0 score weight(s), got 1}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<16x16xf32>) score = gaussian : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attn.sdpa: general and additive weight shapes
func.func @sdpa_general_weight_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op general score weight must have rank 2 ([query head_dim, key head_dim]), got 'tensor<16xf32>'}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<16xf32>) score = general : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_general_weight_dim0(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x24xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<32x24xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op general score weight dimension 0 is 32 but must be 16 (query dimension 3)}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<32x24xf32>) score = general : tensor<2x4x8x16xf32>, tensor<2x4x10x24xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_general_weight_dim1(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x24xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op general score weight dimension 1 is 16 but must be 24 (key dimension 3)}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<16x16xf32>) score = general : tensor<2x4x8x16xf32>, tensor<2x4x10x24xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_additive_w_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<32xf32>, %a: tensor<8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op additive score weight W must have rank 2 ([A, q head_dim + k head_dim]), got 'tensor<32xf32>'}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %a : tensor<32xf32>, tensor<8xf32>) score = additive : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_additive_w_width(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x24xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<8x16xf32>, %a: tensor<8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op additive score weight W dimension 1 is 16 but must be 40 (query head size + key head size)}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %a : tensor<8x16xf32>, tensor<8xf32>) score = additive : tensor<2x4x8x16xf32>, tensor<2x4x10x24xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_additive_v_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<8x32xf32>, %a: tensor<8x1xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op additive score vector v must have rank 1 ([A]), got 'tensor<8x1xf32>'}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %a : tensor<8x32xf32>, tensor<8x1xf32>) score = additive : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_additive_v_size(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %w: tensor<8x32xf32>, %a: tensor<4xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op additive score vector v dimension 0 is 4 but must be 8 (additive score weight W dimension 0)}}
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %a : tensor<8x32xf32>, tensor<4xf32>) score = additive : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attn.sdpa: scale and window
func.func @sdpa_scale_zero(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op scale must be a positive finite number, got 0.000000e+00}}
  %0 = attn.sdpa %q, %k, %v scale = 0.0 : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_scale_negative(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op scale must be a positive finite number, got -5.000000e-01}}
  %0 = attn.sdpa %q, %k, %v scale = -0.5 : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_scale_inf(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op scale must be a positive finite number, got INF}}
  %0 = attn.sdpa %q, %k, %v scale = 0x7FF0000000000000 : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_window_negative(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op window must be >= 0 (0 disables the sliding window), got -1}}
  %0 = attn.sdpa %q, %k, %v window = -1 : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// Parse error: an unknown score function.
func.func @sdpa_unknown_score(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{custom op 'attn.sdpa' expected string or keyword containing one of the following enum values for attribute 'score' [dot, scaled_dot, general, additive, cosine, gaussian]}}
  %0 = attn.sdpa %q, %k, %v score = softmax : tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// attn.mha
func.func @mha_query_rank(%x: tensor<6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<6x64xf32> {
  // expected-error @+1 {{'attn.mha' op query must have rank 3 ([batch, seq, d_model]), got 'tensor<6x64xf32>'}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<6x64xf32>
  return %0 : tensor<6x64xf32>
}

// -----

func.func @mha_mixed_element_types(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xbf16>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op operand #4 has element type 'bf16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xbf16>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_result_type(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x32xf32> {
  // expected-error @+1 {{'attn.mha' op result type 'tensor<2x6x32xf32>' must equal the query input type 'tensor<2x6x64xf32>'}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x32xf32>
  return %0 : tensor<2x6x32xf32>
}

// -----

func.func @mha_key_value_rank(%x: tensor<2x6x64xf32>, %kv: tensor<10x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op key_value must have rank 3 ([batch, seq, d_kv]), got 'tensor<10x64xf32>'}}
  %0 = attn.mha %x, %kv weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_key_value_batch(%x: tensor<2x6x64xf32>, %kv: tensor<1x10x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op key_value dimension 0 is 1 but must be 2 (query dimension 0, batch)}}
  %0 = attn.mha %x, %kv weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<1x10x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_kv_heads_not_dividing(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op heads (4) must be a positive multiple of kv_heads (3)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 kv_heads = 3 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_kv_heads_zero(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op heads (4) must be a positive multiple of kv_heads (0)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 kv_heads = 0 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_heads_zero(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 0 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_d_model_not_divisible(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op d_model (query dimension 2) is 64, which is not divisible by heads = 6; narrow heads split d_model evenly (use `wide` for full-width heads)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 6 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_weight_rank(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<4096xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op k_weight must have rank 2 ([out_features, in_features]), got 'tensor<4096xf32>'}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<4096xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_q_weight_rows(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<256x64xf32>, %wv: tensor<256x64xf32>, %wo: tensor<64x256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op q_weight dimension 0 is 64 but must be 256 (heads * head_dim)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 wide : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_q_weight_cols(%x: tensor<2x6x64xf32>, %wq: tensor<64x32xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op q_weight dimension 1 is 32 but must be 64 (d_model)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<64x32xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_k_weight_rows(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op k_weight dimension 0 is 64 but must be 32 (kv_heads * head_dim)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 kv_heads = 2 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_k_weight_cols(%x: tensor<2x6x64xf32>, %kv: tensor<2x10x48xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op k_weight dimension 1 is 64 but must be 48 (key/value input width)}}
  %0 = attn.mha %x, %kv weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<2x10x48xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_v_weight_rows(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op v_weight dimension 0 is 64 but must be 16 (kv_heads * head_dim)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 kv_heads = 1 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_v_weight_cols(%x: tensor<2x6x64xf32>, %kv: tensor<2x10x48xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x48xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op v_weight dimension 1 is 64 but must be 48 (key/value input width)}}
  %0 = attn.mha %x, %kv weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<2x10x48xf32>, tensor<64x64xf32>, tensor<64x48xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_o_weight_rows(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<32x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op o_weight dimension 0 is 32 but must be 64 (d_model)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_o_weight_cols(%x: tensor<2x6x64xf32>, %wq: tensor<256x64xf32>, %wk: tensor<256x64xf32>, %wv: tensor<256x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op o_weight dimension 1 is 64 but must be 256 (heads * head_dim)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 wide : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_one_bias(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>, %b0: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op takes all four biases (q, k, v, o) or none, got 1}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%b0) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_two_biases(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>, %b0: tensor<64xf32>, %b1: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op takes all four biases (q, k, v, o) or none, got 2}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%b0, %b1) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_three_biases(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>, %b0: tensor<64xf32>, %b1: tensor<64xf32>, %b2: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op takes all four biases (q, k, v, o) or none, got 3}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%b0, %b1, %b2) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_bias_rank(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>, %b0: tensor<64xf32>, %b1: tensor<64xf32>, %b2: tensor<1x64xf32>, %b3: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op v bias must have rank 1 ([out_features]), got 'tensor<1x64xf32>'}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%b0, %b1, %b2, %b3) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1x64xf32>, tensor<64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_bias_size(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>, %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %b0: tensor<64xf32>, %b1: tensor<64xf32>, %b2: tensor<16xf32>, %b3: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op k bias dimension 0 is 64 but must be 16 (the projection's out_features)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%b0, %b1, %b2, %b3) heads = 4 kv_heads = 1 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<16xf32>, tensor<64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_o_bias_size(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>, %b0: tensor<64xf32>, %b1: tensor<64xf32>, %b2: tensor<64xf32>, %b3: tensor<32xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op o bias dimension 0 is 32 but must be 64 (the projection's out_features)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%b0, %b1, %b2, %b3) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_kv_lengths_rank(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>, %l: tensor<2x6xi32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op kv_lengths must have rank 1 ([batch]), got 'tensor<2x6xi32>'}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) kv_lengths(%l) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<2x6xi32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_kv_lengths_batch(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>, %l: tensor<4xi64>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op kv_lengths dimension 0 is 4 but must be 2 (query dimension 0, batch)}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) kv_lengths(%l) heads = 4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<4xi64>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_scale(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op scale must be a positive finite number, got -1.000000e+00}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 scale = -1.0 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_scale_inf(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op scale must be a positive finite number, got INF}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 scale = 0x7FF0000000000000 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @mha_window(%x: tensor<2x6x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.mha' op window must be >= 0 (0 disables the sliding window), got -4}}
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 causal window = -4 : (tensor<2x6x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// attn.layer_norm
func.func @layer_norm_input_rank(%x: tensor<f32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<f32> {
  // expected-error @+1 {{'attn.layer_norm' op input must have rank >= 1}}
  %0 = attn.layer_norm %x, %g, %b : tensor<f32>, tensor<64xf32>, tensor<64xf32>
  return %0 : tensor<f32>
}

// -----

func.func @layer_norm_gamma_rank(%x: tensor<2x6x64xf32>, %g: tensor<1x64xf32>, %b: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.layer_norm' op gamma must have rank 1 ([D]), got 'tensor<1x64xf32>'}}
  %0 = attn.layer_norm %x, %g, %b : tensor<2x6x64xf32>, tensor<1x64xf32>, tensor<64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @layer_norm_gamma_size(%x: tensor<2x6x64xf32>, %g: tensor<32xf32>, %b: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.layer_norm' op gamma dimension 0 is 32 but must be 64 (input's last dimension)}}
  %0 = attn.layer_norm %x, %g, %b : tensor<2x6x64xf32>, tensor<32xf32>, tensor<64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @layer_norm_beta_size(%x: tensor<2x6x64xf32>, %g: tensor<64xf32>, %b: tensor<128xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.layer_norm' op beta dimension 0 is 128 but must be 64 (input's last dimension)}}
  %0 = attn.layer_norm %x, %g, %b : tensor<2x6x64xf32>, tensor<64xf32>, tensor<128xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @layer_norm_mixed_element_types(%x: tensor<2x6x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf16>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.layer_norm' op operand #2 has element type 'f16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.layer_norm %x, %g, %b : tensor<2x6x64xf32>, tensor<64xf32>, tensor<64xf16>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @layer_norm_epsilon_zero(%x: tensor<2x6x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.layer_norm' op epsilon must be a positive finite number, got 0.000000e+00}}
  %0 = attn.layer_norm %x, %g, %b epsilon = 0.0 : tensor<2x6x64xf32>, tensor<64xf32>, tensor<64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @layer_norm_epsilon_negative(%x: tensor<2x6x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.layer_norm' op epsilon must be a positive finite number, got -1.000000e-05}}
  %0 = attn.layer_norm %x, %g, %b epsilon = -1.0e-5 : tensor<2x6x64xf32>, tensor<64xf32>, tensor<64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// AllTypesMatch: the result type is the input type (generic form).
func.func @layer_norm_result_type(%x: tensor<2x6x64xf32>, %g: tensor<64xf32>) -> tensor<2x6x32xf32> {
  // expected-error @+1 {{'attn.layer_norm' op failed to verify that all of {input, result} have same type}}
  %0 = "attn.layer_norm"(%x, %g, %g) <{epsilon = 1.0e-5 : f64}> : (tensor<2x6x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x6x32xf32>
  return %0 : tensor<2x6x32xf32>
}

// -----

// attn.rms_norm
func.func @rms_norm_input_rank(%x: tensor<f32>, %g: tensor<64xf32>) -> tensor<f32> {
  // expected-error @+1 {{'attn.rms_norm' op input must have rank >= 1}}
  %0 = attn.rms_norm %x, %g : tensor<f32>, tensor<64xf32>
  return %0 : tensor<f32>
}

// -----

func.func @rms_norm_gamma_rank(%x: tensor<2x6x64xf32>, %g: tensor<64x1xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.rms_norm' op gamma must have rank 1 ([D]), got 'tensor<64x1xf32>'}}
  %0 = attn.rms_norm %x, %g : tensor<2x6x64xf32>, tensor<64x1xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @rms_norm_gamma_size(%x: tensor<2x6x64xf32>, %g: tensor<63xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.rms_norm' op gamma dimension 0 is 63 but must be 64 (input's last dimension)}}
  %0 = attn.rms_norm %x, %g : tensor<2x6x64xf32>, tensor<63xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @rms_norm_mixed_element_types(%x: tensor<2x6x64xf32>, %g: tensor<64xbf16>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.rms_norm' op operand #1 has element type 'bf16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.rms_norm %x, %g : tensor<2x6x64xf32>, tensor<64xbf16>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @rms_norm_epsilon_zero(%x: tensor<2x6x64xf32>, %g: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.rms_norm' op epsilon must be a positive finite number, got 0.000000e+00}}
  %0 = attn.rms_norm %x, %g epsilon = 0.0 : tensor<2x6x64xf32>, tensor<64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @rms_norm_epsilon_inf(%x: tensor<2x6x64xf32>, %g: tensor<64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.rms_norm' op epsilon must be a positive finite number, got INF}}
  %0 = attn.rms_norm %x, %g epsilon = 0x7FF0000000000000 : tensor<2x6x64xf32>, tensor<64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// attn.linear
func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<128x64xf32>) -> tensor<128xf32> {
  // expected-error @+1 {{'attn.linear' op input must have rank >= 1}}
  %0 = attn.linear %x, %w : (tensor<f32>, tensor<128x64xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x6x64xf32>, %w: tensor<128xf32>) -> tensor<2x6x128xf32> {
  // expected-error @+1 {{'attn.linear' op weight must have rank 2 ([out_features, in_features]), got 'tensor<128xf32>'}}
  %0 = attn.linear %x, %w : (tensor<2x6x64xf32>, tensor<128xf32>) -> tensor<2x6x128xf32>
  return %0 : tensor<2x6x128xf32>
}

// -----

func.func @linear_weight_in_features(%x: tensor<2x6x64xf32>, %w: tensor<128x32xf32>) -> tensor<2x6x128xf32> {
  // expected-error @+1 {{'attn.linear' op weight dimension 1 is 32 but must be 64 (input's last dimension)}}
  %0 = attn.linear %x, %w : (tensor<2x6x64xf32>, tensor<128x32xf32>) -> tensor<2x6x128xf32>
  return %0 : tensor<2x6x128xf32>
}

// -----

func.func @linear_bias_rank(%x: tensor<2x6x64xf32>, %w: tensor<128x64xf32>, %b: tensor<1x128xf32>) -> tensor<2x6x128xf32> {
  // expected-error @+1 {{'attn.linear' op bias must have rank 1 ([out_features]), got 'tensor<1x128xf32>'}}
  %0 = attn.linear %x, %w, %b : (tensor<2x6x64xf32>, tensor<128x64xf32>, tensor<1x128xf32>) -> tensor<2x6x128xf32>
  return %0 : tensor<2x6x128xf32>
}

// -----

func.func @linear_bias_size(%x: tensor<2x6x64xf32>, %w: tensor<128x64xf32>, %b: tensor<64xf32>) -> tensor<2x6x128xf32> {
  // expected-error @+1 {{'attn.linear' op bias dimension 0 is 64 but must be 128 (weight dimension 0)}}
  %0 = attn.linear %x, %w, %b : (tensor<2x6x64xf32>, tensor<128x64xf32>, tensor<64xf32>) -> tensor<2x6x128xf32>
  return %0 : tensor<2x6x128xf32>
}

// -----

func.func @linear_result_rank(%x: tensor<2x6x64xf32>, %w: tensor<128x64xf32>) -> tensor<12x128xf32> {
  // expected-error @+1 {{'attn.linear' op result must have the input's rank 3, got 'tensor<12x128xf32>'}}
  %0 = attn.linear %x, %w : (tensor<2x6x64xf32>, tensor<128x64xf32>) -> tensor<12x128xf32>
  return %0 : tensor<12x128xf32>
}

// -----

func.func @linear_result_batch(%x: tensor<2x6x64xf32>, %w: tensor<128x64xf32>) -> tensor<2x7x128xf32> {
  // expected-error @+1 {{'attn.linear' op result dimension 1 is 7 but must be 6 (the input's dimension)}}
  %0 = attn.linear %x, %w : (tensor<2x6x64xf32>, tensor<128x64xf32>) -> tensor<2x7x128xf32>
  return %0 : tensor<2x7x128xf32>
}

// -----

func.func @linear_result_out_features(%x: tensor<2x6x64xf32>, %w: tensor<128x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.linear' op result dimension 2 is 64 but must be 128 (weight dimension 0, out_features)}}
  %0 = attn.linear %x, %w : (tensor<2x6x64xf32>, tensor<128x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @linear_mixed_element_types(%x: tensor<2x6x64xf32>, %w: tensor<128x64xf32>) -> tensor<2x6x128xf16> {
  // expected-error @+1 {{'attn.linear' op result #0 has element type 'f16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.linear %x, %w : (tensor<2x6x64xf32>, tensor<128x64xf32>) -> tensor<2x6x128xf16>
  return %0 : tensor<2x6x128xf16>
}

// -----

// attn.ffn
func.func @ffn_input_rank(%x: tensor<f32>, %up: tensor<256x64xf32>, %down: tensor<64x256xf32>) -> tensor<f32> {
  // expected-error @+1 {{'attn.ffn' op input must have rank >= 1}}
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<f32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @ffn_up_weight_rank(%x: tensor<2x6x64xf32>, %up: tensor<256xf32>, %down: tensor<64x256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op up_weight must have rank 2 ([out_features, in_features]), got 'tensor<256xf32>'}}
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<2x6x64xf32>, tensor<256xf32>, tensor<64x256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_up_weight_in_features(%x: tensor<2x6x64xf32>, %up: tensor<256x32xf32>, %down: tensor<64x256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op up_weight dimension 1 is 32 but must be 64 (input's last dimension)}}
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<2x6x64xf32>, tensor<256x32xf32>, tensor<64x256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_up_bias_size(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %ub: tensor<64xf32>, %down: tensor<64x256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op up_bias dimension 0 is 64 but must be 256 (up_weight dimension 0)}}
  %0 = attn.ffn %x up(%up, %ub) down(%down) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64x256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_up_bias_rank(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %ub: tensor<1x256xf32>, %down: tensor<64x256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op up_bias must have rank 1 ([out_features]), got 'tensor<1x256xf32>'}}
  %0 = attn.ffn %x up(%up, %ub) down(%down) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<1x256xf32>, tensor<64x256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_down_weight_rank(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %down: tensor<64x256x1xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op down_weight must have rank 2 ([d_model, d_ff]), got 'tensor<64x256x1xf32>'}}
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<64x256x1xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_down_weight_d_ff(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %down: tensor<64x128xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op down_weight dimension 1 is 128 but must be 256 (up_weight dimension 0, d_ff)}}
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_down_weight_d_model(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %down: tensor<32x256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op down_weight dimension 0 is 32 but must be 64 (input's last dimension, d_model)}}
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<32x256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_down_bias_rank(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %down: tensor<64x256xf32>, %db: tensor<2x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op down_bias must have rank 1 ([d_model]), got 'tensor<2x64xf32>'}}
  %0 = attn.ffn %x up(%up) down(%down, %db) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<2x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_down_bias_size(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %down: tensor<64x256xf32>, %db: tensor<256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op down_bias dimension 0 is 256 but must be 64 (d_model)}}
  %0 = attn.ffn %x up(%up) down(%down, %db) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @ffn_mixed_element_types(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %down: tensor<64x256xbf16>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.ffn' op operand #2 has element type 'bf16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<64x256xbf16>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// Parse error: an unknown activation.
func.func @ffn_unknown_activation(%x: tensor<2x6x64xf32>, %up: tensor<256x64xf32>, %down: tensor<64x256xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{custom op 'attn.ffn' expected string or keyword containing one of the following enum values for attribute 'activation' [relu, gelu, gelu_tanh, silu]}}
  %0 = attn.ffn %x up(%up) down(%down) activation = tanh : (tensor<2x6x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// attn.softmax
func.func @softmax_dim_too_large(%x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'attn.softmax' op dim 3 is out of range for rank 3 (expected -3 <= dim < 3)}}
  %0 = attn.softmax %x dim = 3 : tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

func.func @softmax_dim_too_small(%x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'attn.softmax' op dim -4 is out of range for rank 3 (expected -3 <= dim < 3)}}
  %0 = attn.softmax %x dim = -4 : tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

// SameOperandsAndResultType on the pointwise ops (generic form).
func.func @add_type_mismatch(%x: tensor<2x8xf32>, %y: tensor<2x8xf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'attn.add' op requires the same type for all operands and results}}
  %0 = "attn.add"(%x, %y) : (tensor<2x8xf32>, tensor<2x8xf16>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Parse error: the custom form of a pointwise op needs a ranked tensor type.
func.func @relu_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{custom op 'attn.relu' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = attn.relu %x : tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// ODS type constraint: an unranked operand (generic form).
func.func @silu_unranked_generic(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'attn.silu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<*xf32>'}}
  %0 = "attn.silu"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Parse error: an unknown GELU approximation.
func.func @gelu_unknown_approximation(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{custom op 'attn.gelu' expected string or keyword containing one of the following enum values for attribute 'approximate' [none, tanh]}}
  %0 = attn.gelu %x approximate = erf : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// attn.embedding
func.func @embedding_table_rank(%ids: tensor<2x6xi32>, %t: tensor<100x64x1xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.embedding' op table must have rank 2 ([vocab, dim]), got 'tensor<100x64x1xf32>'}}
  %0 = attn.embedding %ids, %t : (tensor<2x6xi32>, tensor<100x64x1xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @embedding_result_rank(%ids: tensor<2x6xi32>, %t: tensor<100x64xf32>) -> tensor<12x64xf32> {
  // expected-error @+1 {{'attn.embedding' op result must have rank 3 (ids rank + 1), got 'tensor<12x64xf32>'}}
  %0 = attn.embedding %ids, %t : (tensor<2x6xi32>, tensor<100x64xf32>) -> tensor<12x64xf32>
  return %0 : tensor<12x64xf32>
}

// -----

func.func @embedding_result_ids_dim(%ids: tensor<2x6xi32>, %t: tensor<100x64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{'attn.embedding' op result dimension 1 is 7 but must be 6 (ids dimension)}}
  %0 = attn.embedding %ids, %t : (tensor<2x6xi32>, tensor<100x64xf32>) -> tensor<2x7x64xf32>
  return %0 : tensor<2x7x64xf32>
}

// -----

func.func @embedding_result_width(%ids: tensor<2x6xi32>, %t: tensor<100x64xf32>) -> tensor<2x6x32xf32> {
  // expected-error @+1 {{'attn.embedding' op result dimension 2 is 32 but must be 64 (table dimension 1)}}
  %0 = attn.embedding %ids, %t : (tensor<2x6xi32>, tensor<100x64xf32>) -> tensor<2x6x32xf32>
  return %0 : tensor<2x6x32xf32>
}

// -----

func.func @embedding_mixed_element_types(%ids: tensor<2x6xi32>, %t: tensor<100x64xf32>) -> tensor<2x6x64xf16> {
  // expected-error @+1 {{'attn.embedding' op result #0 has element type 'f16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.embedding %ids, %t : (tensor<2x6xi32>, tensor<100x64xf32>) -> tensor<2x6x64xf16>
  return %0 : tensor<2x6x64xf16>
}

// -----

func.func @embedding_float_ids(%ids: tensor<2x6xf32>, %t: tensor<100x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.embedding' op operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2x6xf32>'}}
  %0 = attn.embedding %ids, %t : (tensor<2x6xf32>, tensor<100x64xf32>) -> tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// attn.sinusoidal_pos
func.func @sinusoidal_pos_rank(%x: tensor<6x64xf32>) -> tensor<6x64xf32> {
  // expected-error @+1 {{'attn.sinusoidal_pos' op input must have rank 3 ([batch, seq, d_model]), got 'tensor<6x64xf32>'}}
  %0 = attn.sinusoidal_pos %x : tensor<6x64xf32>
  return %0 : tensor<6x64xf32>
}

// -----

func.func @sinusoidal_pos_odd_d_model(%x: tensor<2x6x63xf32>) -> tensor<2x6x63xf32> {
  // expected-error @+1 {{'attn.sinusoidal_pos' op d_model (input dimension 2) must be even for sin/cos pairs, got 63}}
  %0 = attn.sinusoidal_pos %x : tensor<2x6x63xf32>
  return %0 : tensor<2x6x63xf32>
}

// -----

func.func @sinusoidal_pos_negative_offset(%x: tensor<2x6x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.sinusoidal_pos' op offset must be >= 0, got -1}}
  %0 = attn.sinusoidal_pos %x offset = -1 : tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @sinusoidal_pos_positions_batch(%x: tensor<2x6x64xf32>, %p: tensor<3xi64>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.sinusoidal_pos' op positions dimension 0 is 3 but must be 2 (input dimension 0, batch)}}
  %0 = attn.sinusoidal_pos %x positions(%p : tensor<3xi64>) : tensor<2x6x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// attn.learned_pos
func.func @learned_pos_input_rank(%x: tensor<6x64xf32>, %t: tensor<16x64xf32>) -> tensor<6x64xf32> {
  // expected-error @+1 {{'attn.learned_pos' op input must have rank 3 ([batch, seq, d_model]), got 'tensor<6x64xf32>'}}
  %0 = attn.learned_pos %x, %t : tensor<6x64xf32>, tensor<16x64xf32>
  return %0 : tensor<6x64xf32>
}

// -----

func.func @learned_pos_table_rank(%x: tensor<2x6x64xf32>, %t: tensor<1024xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.learned_pos' op table must have rank 2 ([max_positions, d_model]), got 'tensor<1024xf32>'}}
  %0 = attn.learned_pos %x, %t : tensor<2x6x64xf32>, tensor<1024xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @learned_pos_table_width(%x: tensor<2x6x64xf32>, %t: tensor<16x32xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.learned_pos' op table dimension 1 is 32 but must be 64 (input dimension 2, d_model)}}
  %0 = attn.learned_pos %x, %t : tensor<2x6x64xf32>, tensor<16x32xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @learned_pos_mixed_element_types(%x: tensor<2x6x64xf32>, %t: tensor<16x64xbf16>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.learned_pos' op operand #1 has element type 'bf16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.learned_pos %x, %t : tensor<2x6x64xf32>, tensor<16x64xbf16>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @learned_pos_negative_offset(%x: tensor<2x6x64xf32>, %t: tensor<16x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.learned_pos' op offset must be >= 0, got -2}}
  %0 = attn.learned_pos %x, %t offset = -2 : tensor<2x6x64xf32>, tensor<16x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @learned_pos_table_too_short(%x: tensor<2x6x64xf32>, %t: tensor<4x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.learned_pos' op positions [0, 6) exceed the table's 4 rows}}
  %0 = attn.learned_pos %x, %t : tensor<2x6x64xf32>, tensor<4x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

func.func @learned_pos_offset_past_table(%x: tensor<2x6x64xf32>, %t: tensor<16x64xf32>) -> tensor<2x6x64xf32> {
  // expected-error @+1 {{'attn.learned_pos' op positions [11, 17) exceed the table's 16 rows}}
  %0 = attn.learned_pos %x, %t offset = 11 : tensor<2x6x64xf32>, tensor<16x64xf32>
  return %0 : tensor<2x6x64xf32>
}

// -----

// attn.rotary
func.func @rotary_rank(%x: tensor<4x6x16xf32>) -> tensor<4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op input must have rank 4 ([batch, heads, seq, head_dim]), got 'tensor<4x6x16xf32>'}}
  %0 = attn.rotary %x : tensor<4x6x16xf32>
  return %0 : tensor<4x6x16xf32>
}

// -----

func.func @rotary_inv_freq_count(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op inv_freq has 3 values; rotary_dim 16 needs 8}}
  %0 = attn.rotary %x inv_freq = [1.0, 0.5, 0.25] : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_inv_freq_zero(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op inv_freq values must be positive and finite, got 0}}
  %0 = attn.rotary %x rotary_dim = 4 inv_freq = [1.0, 0.0] : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_threshold_without_table(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op length_threshold needs exactly one of long_inv_freq and ntk_factor}}
  %0 = attn.rotary %x length_threshold = 12 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_threshold_with_both(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op length_threshold needs exactly one of long_inv_freq and ntk_factor}}
  %0 = attn.rotary %x length_threshold = 12 long_inv_freq = [1.0, 0.5, 0.25, 0.125, 0.1, 0.1, 0.1, 0.1] ntk_factor = 2.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_long_without_threshold(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op long_inv_freq needs length_threshold, the length past which it applies}}
  %0 = attn.rotary %x long_inv_freq = [1.0, 0.5, 0.25, 0.125, 0.1, 0.1, 0.1, 0.1] : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_ntk_without_threshold(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op ntk_factor needs length_threshold, the length past which it applies}}
  %0 = attn.rotary %x ntk_factor = 2.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_threshold_zero(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op length_threshold must be positive, got 0}}
  %0 = attn.rotary %x length_threshold = 0 ntk_factor = 2.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_long_count(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op long_inv_freq has 2 values; rotary_dim 16 needs 8}}
  %0 = attn.rotary %x length_threshold = 12 long_inv_freq = [1.0, 0.5] : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_long_negative(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op long_inv_freq values must be positive and finite, got -5.000000e-01}}
  %0 = attn.rotary %x rotary_dim = 4 length_threshold = 12 long_inv_freq = [1.0, -0.5] : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_ntk_factor_zero(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op ntk_factor must be a positive finite number, got 0.000000e+00}}
  %0 = attn.rotary %x length_threshold = 12 ntk_factor = 0.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_ntk_narrow(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op ntk_factor needs a rotary width above 2, got 2}}
  %0 = attn.rotary %x rotary_dim = 2 length_threshold = 12 ntk_factor = 2.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_scale(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op scale must be a positive finite number, got -1.000000e+00}}
  %0 = attn.rotary %x scale = -1.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_odd_head_dim(%x: tensor<1x4x6x15xf32>) -> tensor<1x4x6x15xf32> {
  // expected-error @+1 {{'attn.rotary' op head_dim (input dimension 3) must be even for rotary pairs, got 15}}
  %0 = attn.rotary %x : tensor<1x4x6x15xf32>
  return %0 : tensor<1x4x6x15xf32>
}

// -----

func.func @rotary_odd_rotary_dim(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op rotary_dim must be even and in (0, head_dim = 16], got 7}}
  %0 = attn.rotary %x rotary_dim = 7 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_rotary_dim_too_large(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op rotary_dim must be even and in (0, head_dim = 16], got 32}}
  %0 = attn.rotary %x rotary_dim = 32 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_rotary_dim_zero(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op rotary_dim must be even and in (0, head_dim = 16], got 0}}
  %0 = attn.rotary %x rotary_dim = 0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_rotary_dim_negative(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op rotary_dim must be even and in (0, head_dim = 16], got -8}}
  %0 = attn.rotary %x rotary_dim = -8 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_base_zero(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op base must be a positive finite number, got 0.000000e+00}}
  %0 = attn.rotary %x base = 0.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_base_negative(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op base must be a positive finite number, got -1.000000e+04}}
  %0 = attn.rotary %x base = -10000.0 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

func.func @rotary_negative_offset(%x: tensor<1x4x6x16xf32>) -> tensor<1x4x6x16xf32> {
  // expected-error @+1 {{'attn.rotary' op offset must be >= 0, got -3}}
  %0 = attn.rotary %x offset = -3 : tensor<1x4x6x16xf32>
  return %0 : tensor<1x4x6x16xf32>
}

// -----

// attn.layer
func.func @layer_result_type(%x: tensor<1x4x8xf32>) -> tensor<1x4x16xf32> {
  // expected-error @+1 {{'attn.layer' op first result type 'tensor<1x4x16xf32>' must equal the residual stream (first operand) type 'tensor<1x4x8xf32>' so that the layer can be dropped}}
  %0 = attn.layer index = 0 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x16xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "w" : tensor<16x8xf32>
    %y = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<16x8xf32>) -> tensor<1x4x16xf32>
    attn.yield %y : tensor<1x4x16xf32>
  }
  return %0 : tensor<1x4x16xf32>
}

// -----

func.func @layer_no_operands() {
  // expected-error @+1 {{'attn.layer' op needs the residual stream as its first operand and first result}}
  attn.layer index = 0 () : () -> () {
  }
  return
}

// -----

func.func @layer_no_results(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.layer' op needs the residual stream as its first operand and first result}}
  attn.layer index = 0 (%x) : (tensor<1x4x8xf32>) -> () {
  ^bb0(%h: tensor<1x4x8xf32>):
  }
  return
}

// -----

func.func @layer_score_not_finite(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.layer' op score must be finite}}
  %0 = attn.layer index = 0 score = 0x7FF8000000000000 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    attn.yield %h : tensor<1x4x8xf32>
  }
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @layer_negative_index(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.layer' op attribute 'index' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = attn.layer index = -1 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    attn.yield %h : tensor<1x4x8xf32>
  }
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @layer_body_argument_count(%x: tensor<1x4x8xf32>, %l: tensor<1xi32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.layer' op body has 1 arguments but the layer has 2 operands}}
  %0 = attn.layer index = 0 (%x, %l) : (tensor<1x4x8xf32>, tensor<1xi32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    attn.yield %h : tensor<1x4x8xf32>
  }
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @layer_body_argument_type(%x: tensor<1x4x8xf32>, %l: tensor<1xi32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.layer' op body argument #1 has type 'tensor<1xi64>' but operand #1 has type 'tensor<1xi32>'}}
  %0 = attn.layer index = 0 (%x, %l) : (tensor<1x4x8xf32>, tensor<1xi32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>, %n: tensor<1xi64>):
    attn.yield %h : tensor<1x4x8xf32>
  }
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @layer_yield_type(%x: tensor<1x4x8xf32>, %l: tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi32>) {
  %0:2 = attn.layer index = 0 (%x, %l) : (tensor<1x4x8xf32>, tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi32>) {
  ^bb0(%h: tensor<1x4x8xf32>, %n: tensor<1xi32>):
    // expected-error @+1 {{'attn.yield' op yields ('tensor<1x4x8xf32>') but the enclosing attn.layer returns ('tensor<1x4x8xf32>', 'tensor<1xi32>')}}
    attn.yield %h : tensor<1x4x8xf32>
  }
  return %0#0, %0#1 : tensor<1x4x8xf32>, tensor<1xi32>
}

// -----

func.func @layer_uses_value_from_above(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = attn.layer index = 0 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %a = attn.add %h, %x : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  return %0 : tensor<1x4x8xf32>
}

// -----

// attn.yield
func.func @yield_outside_layer(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.yield' op expects parent op 'attn.layer'}}
  attn.yield %x : tensor<1x4x8xf32>
}

// -----

func.func @weight_gather_partial() -> tensor<8x16xf32> {
  // expected-error @+1 {{'attn.weight' op takes gather_axis, gather_extent and gather_ranges together}}
  %0 = attn.weight "w" {gather_axis = 0 : i64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @weight_gather_axis() -> tensor<8x16xf32> {
  // expected-error @+1 {{'attn.weight' op gather_axis 2 is out of range for 'tensor<8x16xf32>'}}
  %0 = attn.weight "w" {gather_axis = 2 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 0, 8>} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @weight_gather_out_of_range() -> tensor<8x16xf32> {
  // expected-error @+1 {{'attn.weight' op gather range [12, 20) is not within [0, 16)}}
  %0 = attn.weight "w" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 12, 8>} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @weight_gather_count() -> tensor<8x16xf32> {
  // expected-error @+1 {{'attn.weight' op gather ranges select 4 entries but the result has 8 along axis 0}}
  %0 = attn.weight "w" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 0, 4>} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @weight_gather_odd_ranges() -> tensor<8x16xf32> {
  // expected-error @+1 {{'attn.weight' op gather_ranges must be non-empty (start, length) pairs}}
  %0 = attn.weight "w" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 0, 4, 8>} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @mha_head_dim_and_wide(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.mha' op takes `wide` or `head_dim`, not both}}
  %0 = attn.mha %x weights(%w, %w, %w, %w) heads = 1 head_dim = 8 wide : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @mha_head_dim_weights(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %wo: tensor<8x6xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'attn.mha' op q_weight dimension 0 is 8 but must be 6 (heads * head_dim)}}
  %0 = attn.mha %x weights(%w, %w, %w, %wo) heads = 2 head_dim = 3 : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x6xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @weight_transpose_rank() -> tensor<8xf32> {
  // expected-error @+1 {{'attn.weight' op weight 'w' is transposed but has type 'tensor<8xf32>'; only 2-D weights can be transposed}}
  %0 = attn.weight "w" {transpose} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @weight_panels_rank() -> tensor<8x4xf32> {
  // expected-error @+1 {{'attn.weight' op weight 'w' is bound in panels but has type 'tensor<8x4xf32>'; panels are [N / W, K, W] views of a 2-D tensor}}
  %0 = attn.weight "w" {panels} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Gather ranges refer to the [K, N] = [4, 16] tensor the panels lay out:
// 8 of its 4 rows.
func.func @weight_panels_gather() -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'attn.weight' op gather ranges select 8 entries but the result has 4 along axis 0}}
  %0 = attn.weight "w" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 0, 8>, panels} : tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @weight_pairs_without_panels() -> tensor<8x4xbf16> {
  // expected-error @+1 {{'attn.weight' op weight 'w' has pairs without panels; pairs lay out panels}}
  %0 = attn.weight "w" {pairs} : tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// -----

func.func @weight_pairs_odd_width() -> tensor<2x4x7xbf16> {
  // expected-error @+1 {{'attn.weight' op weight 'w' is bound in pair panels but has type 'tensor<2x4x7xbf16>'; pair panels are [N / W, K / 2, 2 * W]}}
  %0 = attn.weight "w" {panels, pairs} : tensor<2x4x7xbf16>
  return %0 : tensor<2x4x7xbf16>
}

// -----

// Pair panels [2, 4, 8] lay out a [K, N] = [8, 8] tensor: a gather of 4
// rows does not fill its 8.
func.func @weight_pairs_gather() -> tensor<2x4x8xbf16> {
  // expected-error @+1 {{'attn.weight' op gather ranges select 4 entries but the result has 8 along axis 0}}
  %0 = attn.weight "w" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 0, 4>, panels, pairs} : tensor<2x4x8xbf16>
  return %0 : tensor<2x4x8xbf16>
}

// -----

func.func @weight_panels_overflow() -> tensor<4611686018427387904x1x4xf32> {
  // expected-error @+1 {{'attn.weight' op weight 'w' has type 'tensor<4611686018427387904x1x4xf32>', whose panels hold too many columns}}
  %0 = attn.weight "w" {panels} : tensor<4611686018427387904x1x4xf32>
  return %0 : tensor<4611686018427387904x1x4xf32>
}

// -----

// The gather axis refers to the untransposed [16, 8] tensor.
func.func @weight_transpose_gather_count() -> tensor<8x16xf32> {
  // expected-error @+1 {{'attn.weight' op gather ranges select 8 entries but the result has 16 along axis 0}}
  %0 = attn.weight "w" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8>, transpose} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// attn.mha: score_bias must broadcast to [batch, heads, q_seq, k_seq].
func.func @mha_score_bias_shape(%x: tensor<2x16x64xf32>, %w: tensor<64x64xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'attn.mha' op score_bias dimension 3 is 8 but must be 1 or 16}}
  %0 = attn.mha %x weights(%w, %w, %w, %w) score_bias(%m) heads = 4 : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<2x1x1x8xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

// attn.causal_lm claims every output position sees only earlier ones:
// generation depends on it, so a non-causal attention is an error.
module attributes {attn.causal_lm} {
  func.func @causal_lm_attention(%x: tensor<1x4x8xf32>, %w: tensor<8x8xf32>, %q: tensor<1x2x4x4xf32>) -> (tensor<1x4x8xf32>, tensor<1x2x4x4xf32>) {
    %0 = attn.mha %x weights(%w, %w, %w, %w) heads = 2 causal : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    // expected-error @+1 {{'attn.sdpa' op is not causal, but the module is marked 'attn.causal_lm' (a causal language model)}}
    %1 = attn.sdpa %q, %q, %q : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
    return %0, %1 : tensor<1x4x8xf32>, tensor<1x2x4x4xf32>
  }
}

// -----

// expected-error @+1 {{'attn.causal_lm' must be a unit attribute on a module}}
func.func @causal_lm_on_func() attributes {attn.causal_lm} {
  return
}

// -----

// expected-error @+1 {{'attn.recompute_past' must be a positive integer on a module}}
module attributes {attn.causal_lm, attn.recompute_past = 0 : i64} {
}

// -----

// expected-error @+1 {{'attn.recompute_past' must be a positive integer on a module}}
func.func @recompute_past_on_func() attributes {attn.recompute_past = 12 : i64} {
  return
}

// -----

func.func @learned_pos_positions_batch(%x: tensor<2x1x8xf32>, %t: tensor<16x8xf32>, %p: tensor<3xi64>) -> tensor<2x1x8xf32> {
  // expected-error @+1 {{'attn.learned_pos' op positions dimension 0 is 3 but must be 2 (input dimension 0, batch)}}
  %0 = attn.learned_pos %x, %t positions(%p : tensor<3xi64>) : tensor<2x1x8xf32>, tensor<16x8xf32>
  return %0 : tensor<2x1x8xf32>
}

// -----

func.func @rotary_positions_rank(%x: tensor<2x4x1x8xf32>, %p: tensor<2x1xi32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+1 {{'attn.rotary' op positions must have rank 1 ([batch]), got 'tensor<2x1xi32>'}}
  %0 = attn.rotary %x positions(%p : tensor<2x1xi32>) : tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @cache_write_too_many_rows(%n: tensor<1x2x9x4xf32>, %c: tensor<1x2x8x4xf32>, %p: tensor<1xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'attn.cache_write' op writes 9 rows into a cache of length 8}}
  %0 = attn.cache_write %n into %c at %p : tensor<1x2x9x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

func.func @cache_write_heads(%n: tensor<1x3x1x4xf32>, %c: tensor<1x2x8x4xf32>, %p: tensor<1xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'attn.cache_write' op new dimension 1 is 3 but must be 2 (cache dimension 1, heads)}}
  %0 = attn.cache_write %n into %c at %p : tensor<1x3x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

func.func @cache_write_types(%n: tensor<1x2x1x4xf16>, %c: tensor<1x2x8x4xf32>, %p: tensor<1xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'attn.cache_write' op operand #1 has element type 'f16' but expected 'f32' (all float tensors must share one type)}}
  %0 = attn.cache_write %n into %c at %p : tensor<1x2x1x4xf16>, tensor<1x2x8x4xf32>, tensor<1xi64>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

// A layer is one block of a flat stack: LayerDrop, pruning and outlining take
// each as a unit.
func.func @layer_in_layer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{enclosing attn.layer}}
  %0 = attn.layer index = 0 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%h: tensor<4xf32>):
    // expected-error @+1 {{'attn.layer' op is nested in another attn.layer; layers form one flat stack in a function}}
    %1 = attn.layer index = 1 (%h) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%g: tensor<4xf32>):
      attn.yield %g : tensor<4xf32>
    }
    attn.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @weight_name_newline() -> tensor<4xf32> {
  // expected-error @+1 {{'attn.weight' op weight name contains the control character 0x0a at byte 6; checkpoint names are printable text}}
  %w = attn.weight "layer.\0Aw" : tensor<4xf32>
  return %w : tensor<4xf32>
}
