// RUN: attn-opt %s --split-input-file --attn-hoist-weights | FileCheck %s --implicit-check-not='attn.weight "'

// attn.weight ops of the model entry become its leading arguments, tagged
// {attn.weight = "name"}; the module records the model interface in
// attn.manifest and the entry in attn.entry. The implicit check makes sure
// that no attn.weight op is left (the argument attribute reads
// `attn.weight = "..."`, the op `attn.weight "..."`).

// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.entry = @main
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "w", type = tensor<4x8xf32>}, {kind = "input", name = "input0", type = tensor<2x8xf32>}, {kind = "output", name = "output0", type = tensor<2x4xf32>}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[W:[^:]+]]: tensor<4x8xf32> {attn.weight = "w"},
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = attn.linear %[[X]], %[[W]] : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = attn.weight "w" : tensor<4x8xf32>
  %0 = attn.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Weights are numbered in the order they first appear (not by name); a name
// used twice becomes one argument that replaces both ops. Inputs and
// outputs are listed after the weights, with their own numbering.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.entry = @main
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "z.second", type = tensor<4xf32>}, {kind = "weight", name = "a.first", type = tensor<4x8xf32>}, {kind = "input", name = "input0", type = tensor<2x8xf32>}, {kind = "input", name = "input1", type = tensor<2xi64>}, {kind = "output", name = "output0", type = tensor<2x4xf32>}, {kind = "output", name = "output1", type = tensor<2x8xf32>}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[B:[^:]+]]: tensor<4xf32> {attn.weight = "z.second"},
// CHECK-SAME:    %[[W:[^:]+]]: tensor<4x8xf32> {attn.weight = "a.first"},
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8xf32>,
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x8xf32>)
// CHECK-NEXT:    %[[P0:.*]] = attn.linear %[[X]], %[[W]], %[[B]]
// CHECK-NEXT:    %[[P1:.*]] = attn.linear %[[X]], %[[W]], %[[B]]
// CHECK-NEXT:    %[[S:.*]] = attn.add %[[P0]], %[[P1]]
// CHECK-NEXT:    return %[[S]], %[[X]]
func.func @main(%x: tensor<2x8xf32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x8xf32>) {
  %b = attn.weight "z.second" : tensor<4xf32>
  %w = attn.weight "a.first" : tensor<4x8xf32>
  %0 = attn.linear %x, %w, %b : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %w2 = attn.weight "a.first" : tensor<4x8xf32>
  %b2 = attn.weight "z.second" : tensor<4xf32>
  %1 = attn.linear %x, %w2, %b2 : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = attn.add %0, %1 : tensor<2x4xf32>
  return %2, %x : tensor<2x4xf32>, tensor<2x8xf32>
}

// -----

// Without @main the only public function is the entry; private helpers are
// left alone.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.entry = @model
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "emb", type = tensor<10x4xf16>}, {kind = "input", name = "input0", type = tensor<3xi32>}, {kind = "output", name = "output0", type = tensor<3x4xf16>}]
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME:    %{{[^:]+}}: tensor<3x4xf16>) -> tensor<3x4xf16>
// CHECK-LABEL: func.func @model(
// CHECK-SAME:    %[[T:[^:]+]]: tensor<10x4xf16> {attn.weight = "emb"},
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<3xi32>) -> tensor<3x4xf16>
// CHECK-NEXT:    %[[E:.*]] = attn.embedding %[[IDS]], %[[T]]
// CHECK-NEXT:    %[[R:.*]] = call @helper(%[[E]])
// CHECK-NEXT:    return %[[R]]
module {
  func.func private @helper(%x: tensor<3x4xf16>) -> tensor<3x4xf16> {
    return %x : tensor<3x4xf16>
  }
  func.func @model(%ids: tensor<3xi32>) -> tensor<3x4xf16> {
    %t = attn.weight "emb" : tensor<10x4xf16>
    %0 = attn.embedding %ids, %t : (tensor<3xi32>, tensor<10x4xf16>) -> tensor<3x4xf16>
    %1 = func.call @helper(%0) : (tensor<3x4xf16>) -> tensor<3x4xf16>
    return %1 : tensor<3x4xf16>
  }
}

// -----

// @main wins over other public functions, which keep their signatures.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.entry = @main
// CHECK-SAME:    attn.manifest = [{kind = "input", name = "input0", type = tensor<2xbf16>}, {kind = "output", name = "output0", type = tensor<2xbf16>}]
// CHECK-LABEL: func.func @other(
// CHECK-SAME:    %{{[^:]+}}: tensor<2xbf16>) -> tensor<2xbf16>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{[^:]+}}: tensor<2xbf16>) -> tensor<2xbf16>
module {
  func.func @other(%x: tensor<2xbf16>) -> tensor<2xbf16> {
    return %x : tensor<2xbf16>
  }
  func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> {
    return %x : tensor<2xbf16>
  }
}

// -----

// Rank-0 tensors are spelled `scalar`; an unused weight is still bound (it
// is part of the model interface).
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "unused", type = tensor<8xbf16>}, {kind = "input", name = "input0", type = tensor<f32>}, {kind = "input", name = "input1", type = tensor<3xi32>}, {kind = "output", name = "output0", type = tensor<f32>}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{[^:]+}}: tensor<8xbf16> {attn.weight = "unused"},
// CHECK-SAME:    %[[X:[^:]+]]: tensor<f32>,
// CHECK-SAME:    %{{[^:]+}}: tensor<3xi32>) -> tensor<f32>
// CHECK-NEXT:    return %[[X]] : tensor<f32>
func.func @main(%x: tensor<f32>, %y: tensor<3xi32>) -> tensor<f32> {
  %w = attn.weight "unused" : tensor<8xbf16>
  return %x : tensor<f32>
}

// -----

// Weights after attn-lower-to-linalg: used by linalg ops, in nested regions
// of the entry too.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "outer", type = tensor<4xf32>}, {kind = "weight", name = "inner", type = tensor<4xf32>}, {kind = "input", name = "input0", type = tensor<4xf32>}, {kind = "output", name = "output0", type = tensor<4xf32>}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[OUTER:[^:]+]]: tensor<4xf32> {attn.weight = "outer"},
// CHECK-SAME:    %[[INNER:[^:]+]]: tensor<4xf32> {attn.weight = "inner"},
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[OUTER]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:           tensor.extract %[[INNER]]
// CHECK:         return
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = attn.weight "outer" : tensor<4xf32>
  %init = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %i = linalg.index 0 : index
    %v = attn.weight "inner" : tensor<4xf32>
    %e = tensor.extract %v[%i] : tensor<4xf32>
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %e : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A transposed weight (attn-cpu-transpose-weights) is its own argument,
// recorded with its buffer's shape and a trailing `transpose` (after any
// gather or concat, which describe the untransposed tensor).
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "w", transpose, type = tensor<8x4xf32>}, {kind = "weight", name = "w", type = tensor<4x8xf32>}, {gather_axis = 0 : i64, gather_extent = 6 : i64, gather_ranges = array<i64: 0, 2, 4, 2>, kind = "weight", name = "g", transpose, type = tensor<8x4xf32>}, {kind = "input", name = "input0", type = tensor<2x8xf32>}, {kind = "output", name = "output0", type = tensor<8x4xf32>}, {kind = "output", name = "output1", type = tensor<4x8xf32>}, {kind = "output", name = "output2", type = tensor<8x4xf32>}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{[^:]+}}: tensor<8x4xf32> {attn.weight = "w"},
// CHECK-SAME:    %{{[^:]+}}: tensor<4x8xf32> {attn.weight = "w"},
// CHECK-SAME:    %{{[^:]+}}: tensor<8x4xf32> {attn.weight = "g"},
func.func @main(%x: tensor<2x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %wt = attn.weight "w" {transpose} : tensor<8x4xf32>
  %w = attn.weight "w" : tensor<4x8xf32>
  %g = attn.weight "g" {gather_axis = 0 : i64, gather_extent = 6 : i64, gather_ranges = array<i64: 0, 2, 4, 2>, transpose} : tensor<8x4xf32>
  return %wt, %w, %g : tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x4xf32>
}

// -----

// An input marked by attn-mark-token-id-inputs carries its bound into the
// manifest (the runtime checks the ids on the host); the argument keeps it.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "t", type = tensor<16x8xf32>}, {id_bound = 16 : i64, kind = "input", name = "input0", type = tensor<1x4xi64>}, {kind = "output", name = "output0", type = tensor<1x4x8xf32>}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{[^:]+}}: tensor<16x8xf32> {attn.weight = "t"},
// CHECK-SAME:    %{{[^:]+}}: tensor<1x4xi64> {attn.id_bound = 16 : i64})
func.func @main(%ids: tensor<1x4xi64> {attn.id_bound = 16 : i64}) -> tensor<1x4x8xf32> {
  %t = attn.weight "t" : tensor<16x8xf32>
  %e = attn.embedding %ids, %t : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  return %e : tensor<1x4x8xf32>
}

// -----

// A causal language model (attn.causal_lm): its float [batch, seq, vocab]
// outputs are marked causal; other outputs are not.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "input", name = "input0", type = tensor<1x4xi64>}, {kind = "input", name = "input1", type = tensor<1x4x8xf32>}, {causal, kind = "output", name = "output0", type = tensor<1x4x8xf32>}, {kind = "output", name = "output1", type = tensor<1x4xf32>}]
module attributes {attn.causal_lm} {
  func.func @main(%ids: tensor<1x4xi64>, %h: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4xf32>) {
    %c = arith.constant dense<0.0> : tensor<1x4xf32>
    return %h, %c : tensor<1x4x8xf32>, tensor<1x4xf32>
  }
}

// -----

// A causal language model whose generation recomputes the sequence past 12
// tokens (attn.recompute_past, Phi-3's LongRoPE): the causal logits carry
// the length; other outputs do not.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "input", name = "input0", type = tensor<1x4xi64>}, {kind = "input", name = "input1", type = tensor<1x4x8xf32>}, {causal, kind = "output", name = "output0", recompute_past = 12 : i64, type = tensor<1x4x8xf32>}, {kind = "output", name = "output1", type = tensor<1x4xf32>}]
module attributes {attn.causal_lm, attn.recompute_past = 12 : i64} {
  func.func @main(%ids: tensor<1x4xi64>, %h: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4xf32>) {
    %c = arith.constant dense<0.0> : tensor<1x4xf32>
    return %h, %c : tensor<1x4x8xf32>, tensor<1x4xf32>
  }
}

// -----

// An encoder-decoder: the argument tagged attn.encoder_input (token ids) is
// marked `encoder`, the logits `causal`.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{encoder, id_bound = 50 : i64, kind = "input", name = "input_ids", type = tensor<1x6xi64>}, {id_bound = 50 : i64, kind = "input", name = "decoder_input_ids", type = tensor<1x4xi64>}, {kind = "input", name = "input2", type = tensor<1x4x8xf32>}, {causal, kind = "output", name = "logits", type = tensor<1x4x8xf32>}]
module attributes {attn.causal_lm} {
  func.func @main(%enc: tensor<1x6xi64> {attn.encoder_input, attn.id_bound = 50 : i64, attn.name = "input_ids"}, %dec: tensor<1x4xi64> {attn.id_bound = 50 : i64, attn.name = "decoder_input_ids"}, %h: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32> {attn.name = "logits"}) {
    return %h : tensor<1x4x8xf32>
  }
}

// -----

// Model state: a result tagged attn.state_arg = i is the new value of
// argument i (a KV cache): the argument is a `state` record, the result no
// output record, and the tag is renumbered past the hoisted weights.
// CHECK-LABEL: module attributes
// CHECK-SAME:    attn.manifest = [{kind = "weight", name = "w", type = tensor<4xf32>}, {kind = "input", name = "pos", type = tensor<1xi64>}, {kind = "state", name = "cache", type = tensor<1x1x8x4xf32>}, {kind = "input", name = "input2", type = tensor<1x1x1x4xf32>}, {kind = "output", name = "output0", type = tensor<4xf32>}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    -> (tensor<1x1x8x4xf32> {attn.state_arg = 2 : i64}, tensor<4xf32>)
func.func @main(%pos: tensor<1xi64> {attn.name = "pos"}, %c: tensor<1x1x8x4xf32> {attn.name = "cache"}, %n: tensor<1x1x1x4xf32>) -> (tensor<1x1x8x4xf32> {attn.state_arg = 1 : i64}, tensor<4xf32>) {
  %w = attn.weight "w" : tensor<4xf32>
  %0 = attn.cache_write %n into %c at %pos : tensor<1x1x1x4xf32>, tensor<1x1x8x4xf32>, tensor<1xi64>
  return %0, %w : tensor<1x1x8x4xf32>, tensor<4xf32>
}
