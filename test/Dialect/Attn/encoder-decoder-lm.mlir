// RUN: attn-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// An encoder-decoder marked attn.causal_lm: the argument tagged
// attn.encoder_input is the encoder's, every other one the decoder
// stream. Attention without a causal mask is allowed where no later decoder
// position can leak: to keys and values of the encoder alone, from the
// encoder (its self-attention) or from the decoder stream (cross-attention,
// also inside an attn.layer that takes the encoder output as an extra). The
// decoder's self-attention must be causal.

// CHECK-LABEL: func.func @encoder_decoder
module attributes {attn.causal_lm} {
  func.func @encoder_decoder(%enc: tensor<1x2x6x4xf32> {attn.encoder_input}, %dec: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
    // CHECK: attn.sdpa
    %e = attn.sdpa %enc, %enc, %enc : tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x6x4xf32>
    // CHECK: attn.sdpa {{.*}} causal
    %s = attn.sdpa %dec, %dec, %dec causal : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
    // CHECK: attn.sdpa
    %c = attn.sdpa %s, %e, %e : tensor<1x2x3x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x3x4xf32>
    // CHECK: attn.layer
    %l = attn.layer index = 0 (%c, %e) : (tensor<1x2x3x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x2x3x4xf32> {
    ^bb0(%h: tensor<1x2x3x4xf32>, %memory: tensor<1x2x6x4xf32>):
      %x = attn.sdpa %h, %memory, %memory : tensor<1x2x3x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x3x4xf32>
      attn.yield %x : tensor<1x2x3x4xf32>
    }
    return %l : tensor<1x2x3x4xf32>
  }
}

// -----

// The same with attn.mha: the encoder's self-attention (no key_value) and
// cross-attention (key_value from the encoder) need no mask.
// CHECK-LABEL: func.func @encoder_decoder_mha
module attributes {attn.causal_lm} {
  func.func @encoder_decoder_mha(%enc: tensor<1x6x8xf32> {attn.encoder_input}, %dec: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
    %w = attn.weight "w" : tensor<8x8xf32>
    // CHECK: attn.mha
    %e = attn.mha %enc weights(%w, %w, %w, %w) heads = 2 : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x6x8xf32>
    // CHECK: attn.mha
    %c = attn.mha %dec, %e weights(%w, %w, %w, %w) heads = 2 : (tensor<1x3x8xf32>, tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
    return %c : tensor<1x3x8xf32>
  }
}

// -----

// An attn.mha self-attention on the decoder stream must be causal.
module attributes {attn.causal_lm} {
  func.func @stream_mha(%enc: tensor<1x6x8xf32> {attn.encoder_input}, %dec: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
    %w = attn.weight "w" : tensor<8x8xf32>
    // expected-error @+1 {{'attn.mha' op is not causal, but the module is marked 'attn.causal_lm' (a causal language model)}}
    %s = attn.mha %dec weights(%w, %w, %w, %w) heads = 2 : (tensor<1x3x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
    return %s : tensor<1x3x8xf32>
  }
}

// -----

// Keys that mix in the decoder stream make an unmasked attention see later
// decoder positions.
module attributes {attn.causal_lm} {
  func.func @stream_keys(%enc: tensor<1x2x3x4xf32> {attn.encoder_input}, %dec: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
    %k = arith.addf %enc, %dec : tensor<1x2x3x4xf32>
    // expected-error @+1 {{'attn.sdpa' op is not causal, but the module is marked 'attn.causal_lm' (a causal language model)}}
    %c = attn.sdpa %dec, %k, %enc : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
    return %c : tensor<1x2x3x4xf32>
  }
}

// -----

// The same through an attn.layer (its stream argument carries the decoder
// stream into its body), with the encoder's queries: each of them would see
// every decoder position, and the result reaches the decoder stream.
module attributes {attn.causal_lm} {
  func.func @stream_keys_in_layer(%enc: tensor<1x2x3x4xf32> {attn.encoder_input}, %dec: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
    %l = attn.layer index = 0 (%dec, %enc) : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
    ^bb0(%h: tensor<1x2x3x4xf32>, %memory: tensor<1x2x3x4xf32>):
      // expected-error @+1 {{'attn.sdpa' op is not causal, but the module is marked 'attn.causal_lm' (a causal language model)}}
      %x = attn.sdpa %memory, %h, %memory : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
      attn.yield %x : tensor<1x2x3x4xf32>
    }
    return %l : tensor<1x2x3x4xf32>
  }
}

// -----

// A decoder-only module: without an encoder input every argument is the
// stream, so the cross-attention shape does not help.
module attributes {attn.causal_lm} {
  func.func @no_encoder(%enc: tensor<1x2x6x4xf32>, %dec: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
    // expected-error @+1 {{'attn.sdpa' op is not causal, but the module is marked 'attn.causal_lm' (a causal language model)}}
    %c = attn.sdpa %dec, %enc, %enc : tensor<1x2x3x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x3x4xf32>
    return %c : tensor<1x2x3x4xf32>
  }
}
