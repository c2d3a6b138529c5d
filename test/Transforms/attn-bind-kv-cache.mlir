// RUN: attn-opt %s --split-input-file --attn-bind-kv-cache=cache-length=16 --verify-diagnostics | FileCheck %s

// A past of run-time length P concatenated with the step's keys/values,
// a mask input over the P + T keys and learned positions from P: the
// pasts become caches written at `positions`, attention reads them up to
// positions + T per sequence, the mask input and its bias go.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[IDS:.*]]: tensor<2x?x8xf32> {attn.name = "x"}
// CHECK-SAME: %[[POS:.*]]: tensor<2xi64> {attn.name = "positions"}
// CHECK-SAME: %[[K:.*]]: tensor<2x2x16x4xf32> {attn.name = "past.key"}
// CHECK-SAME: %[[V:.*]]: tensor<2x2x16x4xf32> {attn.name = "past.value"}
// CHECK-NOT: attn.name = "mask"
// CHECK-SAME: -> (tensor<2x?x8xf32> {attn.name = "h"}, tensor<2x2x?x4xf32> {attn.name = "out"}, tensor<2x2x16x4xf32> {attn.state_arg = 2 : i64}, tensor<2x2x16x4xf32> {attn.state_arg = 3 : i64})
// CHECK: attn.learned_pos %[[IDS]], %{{.*}} positions(%[[POS]] : tensor<2xi64>)
// CHECK: %[[KW:.*]] = attn.cache_write %{{.*}} into %[[K]] at %[[POS]]
// CHECK: %[[VW:.*]] = attn.cache_write %{{.*}} into %[[V]] at %[[POS]]
// CHECK: %[[T:.*]] = tensor.dim %{{.*}}, %c2
// CHECK: %[[T64:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[T64]] : i64)
// CHECK: %[[LEN:.*]] = linalg.add ins(%[[POS]], %[[FILL]]
// CHECK: attn.sdpa %{{.*}}, %[[KW]], %[[VW]] kv_lengths(%[[LEN]] : tensor<2xi64>) query_positions(%[[POS]] : tensor<2xi64>) score = dot causal
// CHECK-NOT: cf.assert
// CHECK: return %{{.*}}, %{{.*}}, %[[KW]], %[[VW]]
func.func @main(%x: tensor<2x?x8xf32> {attn.name = "x"},
                %mask: tensor<2x?xf32> {attn.name = "mask"},
                %pk: tensor<2x2x?x4xf32> {attn.name = "past.key", attn.dim_symbols = ["", "", "past", ""]},
                %pv: tensor<2x2x?x4xf32> {attn.name = "past.value", attn.dim_symbols = ["", "", "past", ""]},
                %q: tensor<2x2x?x4xf32>, %k: tensor<2x2x?x4xf32>, %v: tensor<2x2x?x4xf32>,
                %table: tensor<32x8xf32>)
    -> (tensor<2x?x8xf32> {attn.name = "h"}, tensor<2x2x?x4xf32> {attn.name = "out"}, tensor<2x2x?x4xf32> {attn.name = "present.key"}, tensor<2x2x?x4xf32> {attn.name = "present.value"}) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p = tensor.dim %pk, %c2 : tensor<2x2x?x4xf32>
  %t = tensor.dim %x, %c1 : tensor<2x?x8xf32>
  %l = tensor.dim %mask, %c1 : tensor<2x?xf32>
  %sum = arith.addi %t, %p : index
  %ok = arith.cmpi eq, %l, %sum : index
  cf.assert %ok, "mask length"
  %p64 = arith.index_cast %p : index to i64
  %e = tensor.empty() : tensor<2xi64>
  %start = linalg.fill ins(%p64 : i64) outs(%e : tensor<2xi64>) -> tensor<2xi64>
  %h = attn.learned_pos %x, %table positions(%start : tensor<2xi64>) : tensor<2x?x8xf32>, tensor<32x8xf32>
  %kc = tensor.concat dim(2) %pk, %k : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  %vc = tensor.concat dim(2) %pv, %v : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  %bias = tensor.expand_shape %mask [[0], [1, 2, 3]] output_shape [2, 1, 1, %sum] : tensor<2x?xf32> into tensor<2x1x1x?xf32>
  %o = attn.sdpa %q, %kc, %vc bias(%bias : tensor<2x1x1x?xf32>) score = dot causal : tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32> -> tensor<2x2x?x4xf32>
  return %h, %o, %kc, %vc : tensor<2x?x8xf32>, tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>
}

// -----

// The positions input comes right after the token ids (what an
// attn.embedding looks up), whatever comes before them: the mask input here,
// which goes.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%{{.*}}: tensor<1x?xi64> {attn.name = "ids"}, %{{.*}}: tensor<1xi64> {attn.name = "positions"}, %{{.*}}: tensor<1x2x16x4xf32> {attn.name = "past.key"}
func.func @main(%mask: tensor<1x?xf32> {attn.name = "mask"},
                %ids: tensor<1x?xi64> {attn.name = "ids"},
                %pk: tensor<1x2x?x4xf32> {attn.name = "past.key"},
                %pv: tensor<1x2x?x4xf32> {attn.name = "past.value"},
                %q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>,
                %table: tensor<10x8xf32>)
    -> (tensor<1x?x8xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) {
  %c1 = arith.constant 1 : index
  %e = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<10x8xf32>) -> tensor<1x?x8xf32>
  %kc = tensor.concat dim(2) %pk, %k : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %vc = tensor.concat dim(2) %pv, %v : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %l = tensor.dim %mask, %c1 : tensor<1x?xf32>
  %bias = tensor.expand_shape %mask [[0], [1, 2, 3]] output_shape [1, 1, 1, %l] : tensor<1x?xf32> into tensor<1x1x1x?xf32>
  %o = attn.sdpa %q, %kc, %vc bias(%bias : tensor<1x1x1x?xf32>) score = dot causal : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  return %e, %o, %kc, %vc : tensor<1x?x8xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>
}

// -----

// The past read other than through its concatenation.
func.func @main(%pk: tensor<1x2x?x4xf32> {attn.name = "past.key"}, %k: tensor<1x2x?x4xf32>)
    -> (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  // expected-error @+1 {{uses the past key/value input 'past.key'; attn-bind-kv-cache binds a past only through its concatenation}}
  %s = tensor.extract_slice %pk[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> to tensor<1x2x4x4xf32>
  return %kc, %k : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>
}

// -----

// A dynamic batch cannot be model state.
// expected-error @+1 {{past key/value input 'past.key' has type 'tensor<?x2x?x4xf32>'; a KV cache needs static batch}}
func.func @main(%pk: tensor<?x2x?x4xf32> {attn.name = "past.key"}, %k: tensor<?x2x?x4xf32>)
    -> tensor<?x2x?x4xf32> {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  return %kc : tensor<?x2x?x4xf32>
}

// -----

// No past inputs at all.
// expected-error @+1 {{attn-bind-kv-cache: the model has neither past key/value inputs (an input concatenated with the new keys or values on axis 2 whose concatenation is returned) nor raised attention to derive a cache from}}
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  return %x : tensor<1x4xf32>
}

// -----

// The keys after the past used by something other than attention.
func.func @main(%pk: tensor<1x2x?x4xf32> {attn.name = "past.key"}, %k: tensor<1x2x?x4xf32>)
    -> (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  // expected-error @+1 {{uses the keys or values after the past of 'past.key'; attn-bind-kv-cache binds them only as the keys or values of attn.sdpa}}
  %n = math.exp %kc : tensor<1x2x?x4xf32>
  return %kc, %n : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>
}

// -----

// position_ids [B, T] (LLaMA as optimum exports it) becomes positions[b] + t,
// T the length of the input sharing its dimension symbol; a captured past
// length in a dead Range body goes too. The caches keep their 2 kv heads
// under 4 query heads.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<2x?xi64> {attn.dim_symbols = ["", "sequence"], attn.name = "input_ids"}
// CHECK-SAME: %[[POS:[^:]*]]: tensor<2xi64> {attn.name = "positions"}
// CHECK-NOT: position_ids
// CHECK-SAME: tensor<2x2x16x4xf32> {attn.name = "past.key"}
// CHECK: %[[T:.*]] = tensor.dim %[[IDS]], %c1
// CHECK: %[[E:.*]] = tensor.empty(%[[T]]) : tensor<2x?xi64>
// CHECK: %[[PIDS:.*]] = linalg.generic {{.*}} ins(%[[POS]] : tensor<2xi64>) outs(%[[E]] : tensor<2x?xi64>)
// CHECK: %[[I:.*]] = linalg.index 1
// CHECK: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[ID:.*]] = arith.addi %{{.*}}, %[[I64]] : i64
// CHECK: linalg.yield %[[ID]]
// CHECK: %[[USE:.*]] = linalg.generic {{.*}} ins(%[[PIDS]] : tensor<2x?xi64>)
// CHECK: arith.sitofp
// CHECK-NOT: linalg.index 0
// CHECK: attn.sdpa {{.*}} : tensor<2x4x?x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x4xf32> -> tensor<2x4x?x4xf32>
// CHECK: return %[[USE]]
func.func @main(%ids: tensor<2x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "sequence"]},
                %pids: tensor<2x?xi64> {attn.name = "position_ids", attn.dim_symbols = ["", "sequence"]},
                %pk: tensor<2x2x?x4xf32> {attn.name = "past.key", attn.dim_symbols = ["", "", "past", ""]},
                %pv: tensor<2x2x?x4xf32> {attn.name = "past.value", attn.dim_symbols = ["", "", "past", ""]},
                %q: tensor<2x4x?x4xf32>, %k: tensor<2x2x?x4xf32>, %v: tensor<2x2x?x4xf32>)
    -> (tensor<2x?xf32>, tensor<2x4x?x4xf32>, tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p = tensor.dim %pk, %c2 : tensor<2x2x?x4xf32>
  %t = tensor.dim %ids, %c1 : tensor<2x?xi64>
  %p64 = arith.index_cast %p : index to i64
  %re = tensor.empty(%t) : tensor<?xi64>
  // A Range(P, P + T) no longer used once the attention is bound.
  %range = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%re : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %s = arith.addi %p64, %i64 : i64
    linalg.yield %s : i64
  } -> tensor<?xi64>
  %fe = tensor.empty(%t) : tensor<2x?xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pids : tensor<2x?xi64>) outs(%fe : tensor<2x?xf32>) {
  ^bb0(%in: i64, %out: f32):
    %x = arith.sitofp %in : i64 to f32
    linalg.yield %x : f32
  } -> tensor<2x?xf32>
  %kc = tensor.concat dim(2) %pk, %k : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  %vc = tensor.concat dim(2) %pv, %v : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  %o = attn.sdpa %q, %kc, %vc score = dot causal : tensor<2x4x?x4xf32>, tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32> -> tensor<2x4x?x4xf32>
  return %f, %o, %kc, %vc : tensor<2x?xf32>, tensor<2x4x?x4xf32>, tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>
}

// -----

// position_ids whose run-time length no other input shares.
// expected-error @+2 {{input 'position_ids' has a run-time length that no other input shares (dimension symbols)}}
func.func @main(%ids: tensor<2x?xi64> {attn.name = "input_ids"},
                %pids: tensor<2x?xi64> {attn.name = "position_ids"},
                %pk: tensor<2x2x?x4xf32> {attn.name = "past.key"},
                %q: tensor<2x2x?x4xf32>, %k: tensor<2x2x?x4xf32>)
    -> (tensor<2x?xi64>, tensor<2x2x?x4xf32>) {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  return %pids, %kc : tensor<2x?xi64>, tensor<2x2x?x4xf32>
}

// -----

// position_ids of another batch than the caches'.
// expected-error @+2 {{input 'position_ids' has type 'tensor<1x?xi64>'; attn-bind-kv-cache replaces position ids [2, T] (integers, the batch of the caches) by positions[b] + t}}
func.func @main(%ids: tensor<2x?xi64> {attn.name = "input_ids"},
                %pids: tensor<1x?xi64> {attn.name = "position_ids"},
                %pk: tensor<2x2x?x4xf32> {attn.name = "past.key"},
                %q: tensor<2x2x?x4xf32>, %k: tensor<2x2x?x4xf32>)
    -> (tensor<1x?xi64>, tensor<2x2x?x4xf32>) {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  return %pids, %kc : tensor<1x?xi64>, tensor<2x2x?x4xf32>
}

// -----

// Today's exporters compute the causal mask after a past at run time from
// the sizes (key k visible from query q when k <= P + q) and give attention
// that bias: probing it on the host with past and sequence lengths shows
// the causal mask, so the attention becomes causal over the cache.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %{{.*}}: tensor<1xi64> {attn.name = "positions"}
// CHECK: %[[KW:.*]] = attn.cache_write
// CHECK: attn.sdpa %{{.*}}, %[[KW]], %{{.*}} kv_lengths(%{{.*}} : tensor<1xi64>) query_positions(%{{.*}} : tensor<1xi64>) score = dot causal :
// CHECK-NOT: linalg.generic
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %pk: tensor<1x1x?x8xf32> {attn.name = "past.key", attn.dim_symbols = ["", "", "p", ""]},
                %pv: tensor<1x1x?x8xf32> {attn.name = "past.value", attn.dim_symbols = ["", "", "p", ""]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}, tensor<1x1x?x8xf32> {attn.name = "present.key"}, tensor<1x1x?x8xf32> {attn.name = "present.value"}) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %p = tensor.dim %pk, %c2 : tensor<1x1x?x8xf32>
  %l = arith.addi %p, %t : index
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %kc = tensor.concat dim(2) %pk, %x4 : (tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x1x?x8xf32>
  %vc = tensor.concat dim(2) %pv, %x4 : (tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x1x?x8xf32>
  %e = tensor.empty(%t, %l) : tensor<1x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %pos = arith.addi %qi, %p : index
    %visible = arith.cmpi sle, %ki, %pos : index
    %zero = arith.constant 0.0 : f32
    %min = arith.constant -3.40282347E+38 : f32
    %b = arith.select %visible, %zero, %min : f32
    linalg.yield %b : f32
  } -> tensor<1x1x?x?xf32>
  %o = attn.sdpa %x4, %kc, %vc bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o, %kc, %vc : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>
}

// -----

// The same bias shifted by one (query q sees key P + q + 1, a future
// token): not the causal mask after the past.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%ids: tensor<1x?xi64> {attn.name = "input_ids", attn.dim_symbols = ["", "s"]},
                %pk: tensor<1x1x?x8xf32> {attn.name = "past.key", attn.dim_symbols = ["", "", "p", ""]},
                %pv: tensor<1x1x?x8xf32> {attn.name = "past.value", attn.dim_symbols = ["", "", "p", ""]},
                %table: tensor<32x8xf32>)
    -> (tensor<1x1x?x8xf32> {attn.name = "y"}, tensor<1x1x?x8xf32> {attn.name = "present.key"}, tensor<1x1x?x8xf32> {attn.name = "present.value"}) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = tensor.dim %ids, %c1 : tensor<1x?xi64>
  %p = tensor.dim %pk, %c2 : tensor<1x1x?x8xf32>
  %l = arith.addi %p, %t : index
  %x = attn.embedding %ids, %table : (tensor<1x?xi64>, tensor<32x8xf32>) -> tensor<1x?x8xf32>
  %x4 = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, %t, 8] : tensor<1x?x8xf32> into tensor<1x1x?x8xf32>
  %kc = tensor.concat dim(2) %pk, %x4 : (tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x1x?x8xf32>
  %vc = tensor.concat dim(2) %pv, %x4 : (tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<1x1x?x8xf32>
  %e = tensor.empty(%t, %l) : tensor<1x1x?x?xf32>
  %bias = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%out: f32):
    %qi = linalg.index 2 : index
    %ki = linalg.index 3 : index
    %one = arith.constant 1 : index
    %pos0 = arith.addi %qi, %p : index
    %pos = arith.addi %pos0, %one : index
    %visible = arith.cmpi sle, %ki, %pos : index
    %zero = arith.constant 0.0 : f32
    %min = arith.constant -3.40282347E+38 : f32
    %b = arith.select %visible, %zero, %min : f32
    linalg.yield %b : f32
  } -> tensor<1x1x?x?xf32>
  // expected-error @+1 {{has an attention mask attn-bind-kv-cache cannot bind to a KV cache: the mask differs from a causal mask}}
  %o = attn.sdpa %x4, %kc, %vc bias(%bias : tensor<1x1x?x?xf32>) score = dot : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %o, %kc, %vc : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>
}
