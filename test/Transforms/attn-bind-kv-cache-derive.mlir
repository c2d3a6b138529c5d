// RUN: attn-opt %s --split-input-file --attn-bind-kv-cache=cache-length=16 --verify-diagnostics | FileCheck %s

// A stateless causal decoder: no past inputs; the attention's bias is the
// causal mask computed from the sequence length (as exporters write it,
// and-ed with the padding of the mask input), rotary positions start at 0.
// Each attention's keys and values get a cache written at `positions`; the
// bias and the mask input go; rotary positions start at `positions`.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[IDS:.*]]: tensor<2x?xi64> {attn.dim_symbols = ["", "s"], attn.name = "input_ids"}
// CHECK-SAME: %[[POS:.*]]: tensor<2xi64> {attn.name = "positions"}
// CHECK-NOT: attention_mask
// CHECK-SAME: %{{.*}}: tensor<32x8xf32>,
// CHECK-SAME: %[[K:.*]]: tensor<2x1x16x8xf32> {attn.name = "past_key_values.0.key"}
// CHECK-SAME: %[[V:.*]]: tensor<2x1x16x8xf32> {attn.name = "past_key_values.0.value"}
// CHECK-SAME: -> (tensor<2x1x?x8xf32> {attn.name = "y"}, tensor<2x1x16x8xf32> {attn.state_arg = 3 : i64}, tensor<2x1x16x8xf32> {attn.state_arg = 4 : i64})
// CHECK: %[[Q:.*]] = attn.rotary %{{.*}} positions(%[[POS]] : tensor<2xi64>)
// CHECK: %[[KW:.*]] = attn.cache_write %[[Q]] into %[[K]] at %[[POS]]
// CHECK: %[[VW:.*]] = attn.cache_write %{{.*}} into %[[V]] at %[[POS]]
// CHECK: %[[LEN:.*]] = linalg.add ins(%[[POS]], %{{.*}}
// CHECK: attn.sdpa %[[Q]], %[[KW]], %[[VW]] kv_lengths(%[[LEN]] : tensor<2xi64>) query_positions(%[[POS]] : tensor<2xi64>) score = dot causal :
// CHECK-NOT: linalg.index
// CHECK: return %{{.*}}, %[[KW]], %[[VW]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pad = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
func.func @main(%ids: tensor<2x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %mask: tensor<2x?xi64> {attn.name = "attention_mask", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>)
    -> (tensor<2x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<2x?xi64>
  %x = attn.embedding %ids, %table : (tensor<2x?xi64>, tensor<32x8xf32>) -> tensor<2x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 1, %t, 8] : tensor<2x?x8xf32> into tensor<2x1x?x8xf32>
  %q = attn.rotary %x4 : tensor<2x1x?x8xf32>
  %e = tensor.empty(%t, %t) : tensor<2x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#pad, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask : tensor<2x?xi64>) outs(%e : tensor<2x1x?x?xf32>) {
  ^bb0(%m: i64, %out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %c0 = arith.constant 0 : i64
    %causal = arith.cmpi sle, %ki, %qi : index
    %valid = arith.cmpi ne, %m, %c0 : i64
    %both = arith.andi %causal, %valid : i1
    %zero = arith.constant 0.0 : f32
    %min = arith.constant -3.40282347E+38 : f32
    %b = arith.select %both, %zero, %min : f32
    linalg.yield %b : f32
  } -> tensor<2x1x?x?xf32>
  %o = attn.sdpa %q, %q, %x4 bias(%bias : tensor<2x1x?x?xf32>) score = dot : tensor<2x1x?x8xf32>, tensor<2x1x?x8xf32>, tensor<2x1x?x8xf32> -> tensor<2x1x?x8xf32>
  return %o : tensor<2x1x?x8xf32>
}

// -----

// A sliding window in the mask (key k visible from query q when
// q - 3 < k <= q) becomes the attention's window.
// CHECK-LABEL: func.func @main
// CHECK: attn.sdpa {{.*}} score = dot causal window = 3 :
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %e = tensor.empty(%t, %t) : tensor<1x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %c3 = arith.constant 3 : index
    %causal = arith.cmpi sle, %ki, %qi : index
    %start = arith.subi %qi, %c3 : index
    %inwin = arith.cmpi sgt, %ki, %start : index
    %both = arith.andi %causal, %inwin : i1
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %b = arith.select %both, %zero, %ninf : f32
    linalg.yield %b : f32
  } -> tensor<1x1x?x?xf32>
  %o = attn.sdpa %x4, %x4, %x4 bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// -----

// ALiBi as BLOOM's exports compute it: the causal mask plus slope_h * k,
// slopes [0.5, 0.25] per head (the key's position from the mask input's
// cumulative sum: with a mask of ones, k itself). The bias becomes a
// constant slope_h * row over the cache's 16 rows.
// CHECK-LABEL: func.func @main
// CHECK: %[[ALIBI:.*]] = arith.constant dense<{{\[\[\[\[}}0.000000e+00, 5.000000e-01, 1.000000e+00, {{.*}}]], {{\[\[}}0.000000e+00, 2.500000e-01, 5.000000e-01, {{.*}}> : tensor<1x2x1x16xf32>
// CHECK: attn.sdpa {{.*}} bias(%[[ALIBI]] : tensor<1x2x1x16xf32>) kv_lengths({{.*}}) query_positions({{.*}}) score = dot causal :
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#slope = affine_map<(d0, d1, d2, d3) -> (d1)>
#key = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
#cum = affine_map<(d0, d1, d2) -> (d0, d2)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %mask: tensor<1x?xi64> {attn.name = "attention_mask", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x2x?x4xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [1, %t, 2, 4] : tensor<1x?x8xf32> into tensor<1x?x2x4xf32>
  %et = tensor.empty(%t) : tensor<1x2x?x4xf32>
  %h = linalg.transpose ins(%x4 : tensor<1x?x2x4xf32>) outs(%et : tensor<1x2x?x4xf32>) permutation = [0, 2, 1, 3]
  // Cumulative sum of the mask, minus one: the keys' positions.
  %zero64 = arith.constant 0 : i64
  %ec = tensor.empty(%t) : tensor<1x?xi64>
  %zc = linalg.fill ins(%zero64 : i64) outs(%ec : tensor<1x?xi64>) -> tensor<1x?xi64>
  %cum = linalg.generic {indexing_maps = [#cum, #acc], iterator_types = ["parallel", "parallel", "reduction"]} ins(%mask : tensor<1x?xi64>) outs(%zc : tensor<1x?xi64>) {
  ^bb0(%m: i64, %acc: i64):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %before = arith.cmpi sle, %j, %i : index
    %z = arith.constant 0 : i64
    %add = arith.select %before, %m, %z : i64
    %sum = arith.addi %acc, %add : i64
    linalg.yield %sum : i64
  } -> tensor<1x?xi64>
  %slopes = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %e = tensor.empty(%t, %t) : tensor<1x2x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#slope, #key, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%slopes, %cum : tensor<2xf32>, tensor<1x?xi64>) outs(%e : tensor<1x2x?x?xf32>) {
  ^bb0(%s: f32, %c: i64, %out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %one = arith.constant 1 : i64
    %pos = arith.subi %c, %one : i64
    %posf = arith.sitofp %pos : i64 to f32
    %alibi = arith.mulf %s, %posf : f32
    %causal = arith.cmpi sle, %ki, %qi : index
    %min = arith.constant -3.40282347E+38 : f32
    %b = arith.select %causal, %alibi, %min : f32
    linalg.yield %b : f32
  } -> tensor<1x2x?x?xf32>
  %o = attn.sdpa %h, %h, %h bias(%bias : tensor<1x2x?x?xf32>) score = dot : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  return %o : tensor<1x2x?x4xf32>
}

// -----

// A visible part that is not linear in the key (here k * k) is no ALiBi.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %e = tensor.empty(%t, %t) : tensor<1x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %k64 = arith.index_cast %ki : index to i64
    %kf = arith.sitofp %k64 : i64 to f32
    %sq = arith.mulf %kf, %kf : f32
    %causal = arith.cmpi sle, %ki, %qi : index
    %min = arith.constant -1.0e+09 : f32
    %b = arith.select %causal, %sq, %min : f32
    linalg.yield %b : f32
  } -> tensor<1x1x?x?xf32>
  // expected-error @+1 {{has an attention mask attn-bind-kv-cache cannot bind to a KV cache: the mask differs from a causal mask at query 2, key 2 (past 0, length 11): not a bias linear in the key}}
  %o = attn.sdpa %x4, %x4, %x4 bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// -----

// A real model's window (4096) is too large to probe at: the mask is probed
// with small stand-ins for the constant (a window of each), and the
// attention gets window = 4096.
// CHECK-LABEL: func.func @main
// CHECK: attn.sdpa {{.*}} score = dot causal window = 4096 :
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %e = tensor.empty(%t, %t) : tensor<1x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %w = arith.constant 4096 : index
    %causal = arith.cmpi sle, %ki, %qi : index
    %start = arith.subi %qi, %w : index
    %inwin = arith.cmpi sgt, %ki, %start : index
    %both = arith.andi %causal, %inwin : i1
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %b = arith.select %both, %zero, %ninf : f32
    linalg.yield %b : f32
  } -> tensor<1x1x?x?xf32>
  %o = attn.sdpa %x4, %x4, %x4 bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// -----

// A large constant that is not the window (here it only bounds the
// queries, so the mask stays plain causal with a stand-in) is refused.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %e = tensor.empty(%t, %t) : tensor<1x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %big = arith.constant 5000 : index
    %causal = arith.cmpi sle, %ki, %qi : index
    %small = arith.cmpi slt, %qi, %big : index
    %both = arith.andi %causal, %small : i1
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %b = arith.select %both, %zero, %ninf : f32
    linalg.yield %b : f32
  } -> tensor<1x1x?x?xf32>
  // expected-error @+1 {{has an attention mask attn-bind-kv-cache cannot bind to a KV cache: the mask computation holds the constant 5000, too large to probe at, and with 5 in its place the mask is not causal: the mask differs from a causal mask at query 5, key 0 (past 0, length 11)}}
  %o = attn.sdpa %x4, %x4, %x4 bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// -----

// A bias that is not the causal mask (here: every key but the query's own)
// cannot be dropped for a cache.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %e = tensor.empty(%t, %t) : tensor<1x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %other = arith.cmpi ne, %ki, %qi : index
    %zero = arith.constant 0.0 : f32
    %min = arith.constant -1.0e+09 : f32
    %b = arith.select %other, %zero, %min : f32
    linalg.yield %b : f32
  } -> tensor<1x1x?x?xf32>
  // expected-error @+1 {{has an attention mask attn-bind-kv-cache cannot bind to a KV cache: the mask does not hide later keys (not causal)}}
  %o = attn.sdpa %x4, %x4, %x4 bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// -----

// A bias that reads the token ids' values is not a mask of sizes.
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %table: tensor<32x8xf32>, %bias: tensor<1x1x?x?xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  // expected-error @+1 {{has an attention mask attn-bind-kv-cache cannot bind to a KV cache: cannot size the inputs: input 2 dimension 2 has no size to probe with}}
  %o = attn.sdpa %x4, %x4, %x4 bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// -----

// Keys of a run-time batch cannot have a cache.
func.func @main(%ids: tensor<?x?xi64> {attn.name = "input_ids"},
                %table: tensor<32x8xf32>)
    -> (tensor<?x1x?x8xf32> {attn.name = "y"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %t = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %x = attn.embedding %ids, %table : (tensor<?x?xi64>, tensor<32x8xf32>) -> tensor<?x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [%b, 1, %t, 8] : tensor<?x?x8xf32> into tensor<?x1x?x8xf32>
  // expected-error @+1 {{has keys or values of type 'tensor<?x1x?x8xf32>'; a KV cache needs static batch, heads and head width (fix the batch with --input-shape, e.g. input_ids=1x?)}}
  %o = attn.sdpa %x4, %x4, %x4 score = dot causal : tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32> -> tensor<?x1x?x8xf32>
  return %o : tensor<?x1x?x8xf32>
}

// -----

// Learned positions past the table cannot be looked up for every cached
// token.
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids"},
                %table: tensor<32x8xf32>, %wpe: tensor<8x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  // expected-error @+1 {{adds learned positions from a table of 8 rows: the cache length is at most 8}}
  %h = attn.learned_pos %x, %wpe : tensor<1x?x8xf32>, tensor<8x8xf32>
  %x4 = tensor.expand_shape %h [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %o = attn.sdpa %x4, %x4, %x4 score = dot causal : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}

// -----

// Positions computed from the token index that were not raised would give
// every step positions 0..T-1: refused.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids"},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %e = tensor.empty(%t) : tensor<1x?x8xf32>
  // expected-error @+1 {{computes values from the token index (positions not raised to attn.rotary or attn.learned_pos); a KV-cache step has them per sequence, so attn-bind-kv-cache cannot derive it}}
  %p = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<1x?x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x?x8xf32>
  %h = linalg.add ins(%x, %p : tensor<1x?x8xf32>, tensor<1x?x8xf32>) outs(%e : tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %h [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %o = attn.sdpa %x4, %x4, %x4 score = dot causal : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o : tensor<1x1x?x8xf32>
}
