// attn-lower-to-linalg=inline-layers=false inline-state-layers=true (the
// CUDA pipeline): a layer that returns more than its stream (a KV-cache
// step's layer with its updated cache) is inlined, a plain layer is kept
// for attn-outline-layers.
// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg="inline-layers=false inline-state-layers=true" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg="inline-layers=false" | FileCheck %s --check-prefix=KEEP

// CHECK-LABEL: func.func @state_layer(
// CHECK-NOT:     attn.layer
// CHECK:         linalg.generic
// CHECK:         return
// KEEP-LABEL:  func.func @state_layer(
// KEEP:          attn.layer
// KEEP:          attn.yield {{.*}}, {{.*}} :
func.func @state_layer(%x: tensor<1x4xf32>, %c: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %r:2 = attn.layer index = 0 (%x, %c) : (tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  ^bb0(%h: tensor<1x4xf32>, %cache: tensor<1x4xf32>):
    %s = attn.add %h, %cache : tensor<1x4xf32>
    attn.yield %s, %s : tensor<1x4xf32>, tensor<1x4xf32>
  }
  return %r#0, %r#1 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// CHECK-LABEL: func.func @stream_layer(
// CHECK:         attn.layer
// CHECK:         linalg.generic
// CHECK:         attn.yield
// KEEP-LABEL:  func.func @stream_layer(
// KEEP:          attn.layer
func.func @stream_layer(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = attn.layer index = 0 (%x) : (tensor<1x4xf32>) -> tensor<1x4xf32> {
  ^bb0(%h: tensor<1x4xf32>):
    %s = attn.add %h, %h : tensor<1x4xf32>
    attn.yield %s : tensor<1x4xf32>
  }
  return %r : tensor<1x4xf32>
}
