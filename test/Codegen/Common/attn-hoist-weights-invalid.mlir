// RUN: attn-opt %s --split-input-file --attn-hoist-weights --verify-diagnostics

// One name, two types: the runtime could not bind both.
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = attn.weight "w" : tensor<4x8xf32>
  // expected-error @+1 {{'attn.weight' op weight 'w' is used with type 'tensor<4x8xf16>' here but 'tensor<4x8xf32>' elsewhere}}
  %w2 = attn.weight "w" : tensor<4x8xf16>
  %0 = attn.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Same name, same element type, different shape.
func.func @main(%x: tensor<2x8xf32>) -> tensor<4x8xf32> {
  %w = attn.weight "w" : tensor<4x8xf32>
  // expected-error @+1 {{weight 'w' is used with type 'tensor<8x4xf32>' here but 'tensor<4x8xf32>' elsewhere}}
  %w2 = attn.weight "w" : tensor<8x4xf32>
  return %w : tensor<4x8xf32>
}

// -----

// Only the entry's weights become arguments; one in another function would
// never be bound.
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  return %x : tensor<2x8xf32>
}
func.func private @helper() -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.weight' op is outside the model entry @main; only the entry's weights can be bound}}
  %w = attn.weight "w" : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----
// An encoder-decoder's --kv-cache import: the message says how it compiles.
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  return %x : tensor<2x8xf32>
}
func.func @encoder(%x: tensor<2x8xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'attn.weight' op is outside the model entry @main; only the entry's weights can be bound (@encoder and the decoder step @main are two models: attn-compile lowers each and links both)}}
  %w = attn.weight "w" : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// No @main and two public functions: the entry is ambiguous.
// expected-error @+1 {{cannot tell the model entry: no @main and several public functions (@a, @b)}}
module {
  func.func @a(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    return %x : tensor<2x8xf32>
  }
  func.func @b(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    return %x : tensor<2x8xf32>
  }
}

// -----

// No public function at all.
// expected-error @+1 {{no model entry: expected a public func.func @main}}
module {
  func.func private @helper(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    return %x : tensor<2x8xf32>
  }
}

// -----

// A dynamic output size must follow from the inputs' sizes (the runtime
// sizes outputs before the run); a cast hides where this one comes from.
// expected-error @+1 {{'func.func' op result 0 has a dynamic dimension 0 ('tensor<?x8xf32>') whose size does not follow from the inputs' sizes; the runtime could not size it}}
func.func @main(%x: tensor<2x8xf32>) -> tensor<?x8xf32> {
  %0 = tensor.cast %x : tensor<2x8xf32> to tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Model state is allocated once, when the model opens: its shape is static.
// expected-error @+1 {{'func.func' op argument 0 is model state of type 'tensor<?x8xf32>'; model state must have a static shape}}
func.func @main(%s: tensor<?x8xf32>) -> (tensor<?x8xf32> {attn.state_arg = 0 : i64}) {
  return %s : tensor<?x8xf32>
}

// -----

// Unsupported element type of an input (i8)...
// expected-error @+1 {{model input 'input1' has type 'tensor<2x8xi8>'; the runtime takes tensors of f32, f16, bf16, i32 or i64 (with static shapes, except the batch and sequence dimensions of inputs and outputs)}}
func.func @main(%x: tensor<2x8xf32>, %y: tensor<2x8xi8>) -> tensor<2x8xf32> {
  return %x : tensor<2x8xf32>
}

// -----

// ... of an output (f64) ...
// expected-error @+1 {{model output 'output0' has type 'tensor<2x8xf64>'}}
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf64> {
  %0 = arith.extf %x : tensor<2x8xf32> to tensor<2x8xf64>
  return %0 : tensor<2x8xf64>
}

// -----

// ... and a non-tensor input.
// expected-error @+1 {{model input 'input0' has type 'f32'}}
func.func @main(%x: f32) -> tensor<2xf32> {
  %0 = tensor.splat %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Layers are isolated from above: hoisting needs them inlined first.
func.func @main(%x: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{'attn.layer' op must be inlined before attn-hoist-weights (run attn-lower-to-linalg first)}}
  %0 = attn.layer index = 0 (%x) : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  ^bb0(%h: tensor<1x2x4xf32>):
    %w = attn.weight "layer.0.w" : tensor<4x4xf32>
    %p = attn.linear %h, %w : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32>
    attn.yield %p : tensor<1x2x4xf32>
  }
  return %0 : tensor<1x2x4xf32>
}

// -----

// expected-error @+1 {{'func.func' op is the model entry and must be a public function with a body}}
func.func private @main(tensor<2xf32>) -> tensor<2xf32>
func.func @other(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0 ('tensor<1x1x8x4xf32>') is the state of argument 0 ('tensor<1xi64>'): the types must match}}
func.func @main(%pos: tensor<1xi64>, %c: tensor<1x1x8x4xf32>) -> (tensor<1x1x8x4xf32> {attn.state_arg = 0 : i64}) {
  return %c : tensor<1x1x8x4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0: attn.state_arg must be the index of an argument, got 2 : i64}}
func.func @main(%pos: tensor<1xi64>, %c: tensor<1x1x8x4xf32>) -> (tensor<1x1x8x4xf32> {attn.state_arg = 2 : i64}) {
  return %c : tensor<1x1x8x4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument 1 is the state of two results}}
func.func @main(%pos: tensor<1xi64>, %c: tensor<1x1x8x4xf32>) -> (tensor<1x1x8x4xf32> {attn.state_arg = 1 : i64}, tensor<1x1x8x4xf32> {attn.state_arg = 1 : i64}) {
  return %c, %c : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
}
