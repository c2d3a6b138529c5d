// RUN: attn-opt %s --split-input-file --attn-last-token-logits --verify-diagnostics | FileCheck %s

// A KV-cache step of a run-time token count: the final norm stays over
// every token (the caches need no more of it), the LM head takes the
// hidden state at the run's last position T - 1 and the logits become
// [B, 1, vocab]; the cache result is untouched.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<2x1x99xf32> {attn.name = "logits"}, tensor<2x4x40x8xf32> {attn.state_arg = 2 : i64})
// CHECK: %[[H:.*]] = attn.layer_norm
// CHECK: %[[T:.*]] = tensor.dim %[[H]], %{{.*}} : tensor<2x?x32xf32>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[T]], %[[ONE]] : index
// CHECK: %[[X:.*]] = tensor.extract_slice %[[H]][0, %[[LAST]], 0] [2, 1, 32] [1, 1, 1] : tensor<2x?x32xf32> to tensor<2x1x32xf32>
// CHECK: %[[Y:.*]] = attn.linear %[[X]], %{{.*}} : (tensor<2x1x32xf32>, tensor<99x32xf32>) -> tensor<2x1x99xf32>
// CHECK-NOT: attn.linear
// CHECK: return %[[Y]], %{{.*}} : tensor<2x1x99xf32>, tensor<2x4x40x8xf32>
module attributes {attn.causal_lm} {
  func.func @main(%x: tensor<2x?x32xf32> {attn.name = "hidden"},
                  %pos: tensor<2xi64> {attn.name = "positions"},
                  %cache: tensor<2x4x40x8xf32> {attn.name = "past_key_values.0.key"})
      -> (tensor<2x?x99xf32> {attn.name = "logits"},
          tensor<2x4x40x8xf32> {attn.state_arg = 2 : i64}) {
    %g = attn.weight "ln_f.weight" : tensor<32xf32>
    %b = attn.weight "ln_f.bias" : tensor<32xf32>
    %w = attn.weight "wte.weight" : tensor<99x32xf32>
    %h = attn.layer_norm %x, %g, %b : tensor<2x?x32xf32>, tensor<32xf32>, tensor<32xf32>
    %y = attn.linear %h, %w : (tensor<2x?x32xf32>, tensor<99x32xf32>) -> tensor<2x?x99xf32>
    return %y, %cache : tensor<2x?x99xf32>, tensor<2x4x40x8xf32>
  }
}

// -----

// A static token count: the last position is a constant offset; the bias
// goes with the LM head.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<1x1x50xf32> {attn.name = "logits"})
// CHECK: %[[X:.*]] = tensor.extract_slice %{{.*}}[0, 7, 0] [1, 1, 16] [1, 1, 1] : tensor<1x8x16xf32> to tensor<1x1x16xf32>
// CHECK: attn.linear %[[X]], %{{.*}}, %{{.*}} : (tensor<1x1x16xf32>, tensor<50x16xf32>, tensor<50xf32>) -> tensor<1x1x50xf32>
module attributes {attn.causal_lm} {
  func.func @main(%x: tensor<1x8x16xf32> {attn.name = "hidden"})
      -> (tensor<1x8x50xf32> {attn.name = "logits"}) {
    %w = attn.weight "lm_head.weight" : tensor<50x16xf32>
    %bias = attn.weight "lm_head.bias" : tensor<50xf32>
    %y = attn.linear %x, %w, %bias : (tensor<1x8x16xf32>, tensor<50x16xf32>, tensor<50xf32>) -> tensor<1x8x50xf32>
    return %y : tensor<1x8x50xf32>
  }
}

// -----

// Logits of one token already (a one-token step): unchanged.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<3x1x50xf32> {attn.name = "logits"})
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[Y:.*]] = attn.linear %arg0
// CHECK: return %[[Y]]
module attributes {attn.causal_lm} {
  func.func @main(%x: tensor<3x1x16xf32> {attn.name = "hidden"})
      -> (tensor<3x1x50xf32> {attn.name = "logits"}) {
    %w = attn.weight "lm_head.weight" : tensor<50x16xf32>
    %y = attn.linear %x, %w : (tensor<3x1x16xf32>, tensor<50x16xf32>) -> tensor<3x1x50xf32>
    return %y : tensor<3x1x50xf32>
  }
}

// -----

// The logits are not an LM head the pass can slice.
module attributes {attn.causal_lm} {
  // expected-error @+1 {{result #0 (logits): attn-last-token-logits slices the hidden state before the LM head, but these logits are not an attn.linear of a [batch, tokens, hidden] tensor}}
  func.func @main(%x: tensor<1x8x50xf32> {attn.name = "hidden"})
      -> (tensor<1x8x50xf32> {attn.name = "logits"}) {
    %y = math.tanh %x : tensor<1x8x50xf32>
    return %y : tensor<1x8x50xf32>
  }
}

// -----

// Not a causal language model.
// expected-error @+1 {{attn-last-token-logits: the module is not a causal language model (no attn.causal_lm)}}
module {
  func.func @main(%x: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
    return %x : tensor<1x8x16xf32>
  }
}
