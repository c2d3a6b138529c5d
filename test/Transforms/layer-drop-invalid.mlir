// RUN: attn-opt %s --split-input-file --attn-layer-drop="strategy=top-k keep=1" --verify-diagnostics

// Errors that depend on the IR rather than on the pass options (those are in
// layer-drop-invalid-options.mlir).

// top-k needs a score on every layer.
func.func @missing_score(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 score = 0.5 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  // expected-error @+1 {{'attn.layer' op has no score; top-k needs a LayerDrop score on every layer}}
  %1 = attn.layer index = 1 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  return %1 : tensor<1x4x8xf32>
}

// -----

// Two layers claim depth 0: the layer verifier rejects it before the pass.
func.func @duplicate_index(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-note @+1 {{first layer with index 0}}
  %0 = attn.layer index = 0 score = 0.5 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  // expected-error @+1 {{'attn.layer' op index 0 is already used by another layer of this block; layer indices must be unique}}
  %1 = attn.layer index = 0 score = 0.5 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  %2 = attn.layer index = 1 score = 0.5 (%1) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  return %2 : tensor<1x4x8xf32>
}

// -----

// Depths must be contiguous from 0: here depth 1 is missing.
func.func @index_gap(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 score = 0.5 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  // expected-error @+1 {{'attn.layer' op has index 2 but the stack's depths must be 0..1, each once}}
  %1 = attn.layer index = 2 score = 0.5 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  return %1 : tensor<1x4x8xf32>
}

// -----

// A module without any attn.layer is diagnosed once, on its first function.
// expected-error @+1 {{attn-layer-drop: no attn.layer ops to prune}}
func.func @no_layers(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.relu %x : tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
func.func @no_layers_either(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  return %x : tensor<1x4x8xf32>
}

// -----

// Layer 1 is dropped (layer 0 has the better score) but its second result
// has no operand to forward.
func.func @cannot_be_dropped(%x: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %0 = attn.layer index = 0 score = 0.9 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  // expected-error @+1 {{'attn.layer' op cannot be dropped: result #1 has no operand of the same type to forward}}
  %1:2 = attn.layer index = 1 score = 0.1 (%0) : (tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %h, %r : tensor<1x4x8xf32>, tensor<1x4x8xf32>
  }
  return %1#0, %1#1 : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// The second result's operand exists but has another type.
func.func @cannot_be_dropped_type(%x: tensor<1x4x8xf32>, %l: tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi64>) {
  %0 = attn.layer index = 0 score = 0.9 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    attn.yield %h : tensor<1x4x8xf32>
  }
  // expected-error @+1 {{'attn.layer' op cannot be dropped: result #1 has no operand of the same type to forward}}
  %1:2 = attn.layer index = 1 score = 0.1 (%0, %l) : (tensor<1x4x8xf32>, tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi64>) {
  ^bb0(%h: tensor<1x4x8xf32>, %n: tensor<1xi32>):
    %c = arith.extsi %n : tensor<1xi32> to tensor<1xi64>
    attn.yield %h, %c : tensor<1x4x8xf32>, tensor<1xi64>
  }
  return %1#0, %1#1 : tensor<1x4x8xf32>, tensor<1xi64>
}
