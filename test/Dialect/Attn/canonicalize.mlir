// RUN: attn-opt %s --split-input-file --canonicalize | FileCheck %s

// Masks are bottom-right aligned, so a single query row sits at the last key
// position and a causal mask hides nothing there: `causal` is dropped.
// CHECK-LABEL: func.func @causal_single_query_dropped(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x8x1x64xf32>, %[[K:[^:]+]]: tensor<1x8x128x64xf32>, %[[V:[^:]+]]: tensor<1x8x128x64xf32>
// CHECK:         %[[R:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] : tensor<1x8x1x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x1x64xf32>
// CHECK-NOT:     causal
// CHECK:         return %[[R]]
func.func @causal_single_query_dropped(%q: tensor<1x8x1x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x1x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x8x1x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x1x64xf32>
  return %0 : tensor<1x8x1x64xf32>
}

// -----

// Only `causal` goes; the other clauses stay.
// CHECK-LABEL: func.func @causal_single_query_keeps_other_clauses(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x1x64xf32>, %[[K:[^:]+]]: tensor<2x8x128x64xf32>, %[[V:[^:]+]]: tensor<2x8x128x64xf32>, %[[L:[^:]+]]: tensor<2xi32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] kv_lengths(%[[L]] : tensor<2xi32>) score = dot window = 16 scale = 5.000000e-01 : tensor<2x8x1x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x1x64xf32>
// CHECK-NOT:     causal
func.func @causal_single_query_keeps_other_clauses(%q: tensor<2x8x1x64xf32>, %k: tensor<2x8x128x64xf32>, %v: tensor<2x8x128x64xf32>, %l: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xi32>) score = dot causal window = 16 scale = 0.5 : tensor<2x8x1x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x1x64xf32>
  return %0 : tensor<2x8x1x64xf32>
}

// -----

// With more than one query row the causal mask hides keys: it stays.
// CHECK-LABEL: func.func @causal_multi_query_kept(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x8x2x64xf32>, %[[K:[^:]+]]: tensor<1x8x128x64xf32>, %[[V:[^:]+]]: tensor<1x8x128x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] causal : tensor<1x8x2x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x2x64xf32>
func.func @causal_multi_query_kept(%q: tensor<1x8x2x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x2x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x8x2x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x2x64xf32>
  return %0 : tensor<1x8x2x64xf32>
}

// -----

// A dynamic query length may be greater than one: causal stays.
// CHECK-LABEL: func.func @causal_dynamic_query_kept(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[K:[^:]+]]: tensor<1x8x128x64xf32>, %[[V:[^:]+]]: tensor<1x8x128x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] causal : tensor<1x8x?x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x?x64xf32>
func.func @causal_dynamic_query_kept(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x?x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x8x?x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// -----

// `window = 0` means no window: the attribute is dropped.
// CHECK-LABEL: func.func @window_zero_dropped(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x8x16x64xf32>, %[[K:[^:]+]]: tensor<1x8x16x64xf32>, %[[V:[^:]+]]: tensor<1x8x16x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] causal : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
// CHECK-NOT:     window
func.func @window_zero_dropped(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal window = 0 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

// Sq = 16, Sk = 32: no query/key distance reaches 48, so the window hides
// nothing and is dropped.
// CHECK-LABEL: func.func @window_covering_all_dropped(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x8x16x64xf32>, %[[K:[^:]+]]: tensor<1x8x32x64xf32>, %[[V:[^:]+]]: tensor<1x8x32x64xf32>
// CHECK:         %[[R0:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
// CHECK:         %[[R1:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
// CHECK-NOT:     window
// CHECK:         return %[[R0]], %[[R1]]
func.func @window_covering_all_dropped(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x32x64xf32>, %v: tensor<1x8x32x64xf32>) -> (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) {
  %0 = attn.sdpa %q, %k, %v window = 48 : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
  %1 = attn.sdpa %q, %k, %v window = 1000000 : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
  return %0, %1 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>
}

// -----

// A window narrower than the key sequence masks keys and stays; so does any
// window when the sequence lengths are not known.
// CHECK-LABEL: func.func @window_masking_kept(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x8x16x64xf32>, %[[K:[^:]+]]: tensor<1x8x32x64xf32>, %[[V:[^:]+]]: tensor<1x8x32x64xf32>, %[[KD:[^:]+]]: tensor<1x8x?x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] window = 4 : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] causal window = 8 : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[KD]], %[[KD]] window = 1000000 : tensor<1x8x16x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x16x64xf32>
func.func @window_masking_kept(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x32x64xf32>, %v: tensor<1x8x32x64xf32>, %kd: tensor<1x8x?x64xf32>) -> (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) {
  %0 = attn.sdpa %q, %k, %v window = 4 : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
  %1 = attn.sdpa %q, %k, %v causal window = 8 : tensor<1x8x16x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x16x64xf32>
  %2 = attn.sdpa %q, %kd, %kd window = 1000000 : tensor<1x8x16x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x16x64xf32>
  return %0, %1, %2 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>
}

// -----

// A single-query decode step with an inert window loses both clauses.
// CHECK-LABEL: func.func @decode_step_both_dropped(
// CHECK:         attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x8x1x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x1x64xf32>
// CHECK-NOT:     causal
// CHECK-NOT:     window
func.func @decode_step_both_dropped(%q: tensor<1x8x1x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x1x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal window = 0 : tensor<1x8x1x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x1x64xf32>
  return %0 : tensor<1x8x1x64xf32>
}

// -----

// A layer that only forwards its arguments (what a dropped layer looks like)
// is folded away, and the weights in its body go with it.
// CHECK-LABEL: func.func @forwarding_layer_folded(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x64xf32>
// CHECK-NOT:     attn.layer
// CHECK-NOT:     attn.weight
// CHECK:         return %[[X]] : tensor<1x8x64xf32>
func.func @forwarding_layer_folded(%x: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %0 = attn.layer index = 0 score = 0.5 (%x) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  ^bb0(%h: tensor<1x8x64xf32>):
    %w = attn.weight "layer.0.unused" : tensor<64x64xf32>
    attn.yield %h : tensor<1x8x64xf32>
  }
  return %0 : tensor<1x8x64xf32>
}

// -----

// Each result forwards the operand it yields, which need not be the operand
// in the same position.
// CHECK-LABEL: func.func @forwarding_layer_multiple_results(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x64xf32>, %[[Y:[^:]+]]: tensor<1x8x64xf32>, %[[L:[^:]+]]: tensor<1xi32>
// CHECK-NOT:     attn.layer
// CHECK:         return %[[Y]], %[[L]] : tensor<1x8x64xf32>, tensor<1xi32>
func.func @forwarding_layer_multiple_results(%x: tensor<1x8x64xf32>, %y: tensor<1x8x64xf32>, %l: tensor<1xi32>) -> (tensor<1x8x64xf32>, tensor<1xi32>) {
  %0:2 = attn.layer index = 0 (%x, %y, %l) : (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1xi32>) -> (tensor<1x8x64xf32>, tensor<1xi32>) {
  ^bb0(%h: tensor<1x8x64xf32>, %e: tensor<1x8x64xf32>, %n: tensor<1xi32>):
    attn.yield %e, %n : tensor<1x8x64xf32>, tensor<1xi32>
  }
  return %0#0, %0#1 : tensor<1x8x64xf32>, tensor<1xi32>
}

// -----

// A layer that computes something stays, with its body intact; the
// forwarding layer after it is folded into a use of the first layer.
// CHECK-LABEL: func.func @computing_layer_kept(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x64xf32>
// CHECK:         %[[R:.*]] = attn.layer index = 0 score = 7.500000e-01 (%[[X]]) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
// CHECK-NEXT:    ^bb0(%[[H:[^:]+]]: tensor<1x8x64xf32>):
// CHECK-NEXT:      %[[W:.*]] = attn.weight "layer.0.fc.weight" : tensor<64x64xf32>
// CHECK-NEXT:      %[[P:.*]] = attn.linear %[[H]], %[[W]] : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
// CHECK-NEXT:      %[[A:.*]] = attn.add %[[H]], %[[P]] : tensor<1x8x64xf32>
// CHECK-NEXT:      attn.yield %[[A]] : tensor<1x8x64xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     attn.layer
// CHECK:         return %[[R]] : tensor<1x8x64xf32>
func.func @computing_layer_kept(%x: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %0 = attn.layer index = 0 score = 0.75 (%x) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  ^bb0(%h: tensor<1x8x64xf32>):
    %w = attn.weight "layer.0.fc.weight" : tensor<64x64xf32>
    %p = attn.linear %h, %w : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
    %a = attn.add %h, %p : tensor<1x8x64xf32>
    attn.yield %a : tensor<1x8x64xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  ^bb0(%h: tensor<1x8x64xf32>):
    attn.yield %h : tensor<1x8x64xf32>
  }
  return %1 : tensor<1x8x64xf32>
}

// -----

// A layer that computes its residual output but forwards a second value is
// not a pure forwarder: it stays.
// CHECK-LABEL: func.func @partially_forwarding_layer_kept(
// CHECK:         %[[R:.*]]:2 = attn.layer index = 0
// CHECK:           %[[S:.*]] = attn.silu
// CHECK:           attn.yield %[[S]], %{{.*}} : tensor<1x8x64xf32>, tensor<1xi32>
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @partially_forwarding_layer_kept(%x: tensor<1x8x64xf32>, %l: tensor<1xi32>) -> (tensor<1x8x64xf32>, tensor<1xi32>) {
  %0:2 = attn.layer index = 0 (%x, %l) : (tensor<1x8x64xf32>, tensor<1xi32>) -> (tensor<1x8x64xf32>, tensor<1xi32>) {
  ^bb0(%h: tensor<1x8x64xf32>, %n: tensor<1xi32>):
    %s = attn.silu %h : tensor<1x8x64xf32>
    attn.yield %s, %n : tensor<1x8x64xf32>, tensor<1xi32>
  }
  return %0#0, %0#1 : tensor<1x8x64xf32>, tensor<1xi32>
}
