
// attn.original_index with the intermediate index, so the layer that was
// checkpoint depth 3 ends up claiming depth 2 (its weight names still say

// attn.original_index.

// RUN: attn-opt %s --attn-layer-drop="strategy=keep-list layers=0,2,3" --attn-layer-drop="strategy=keep-list layers=0,2" | FileCheck %s

// CHECK-LABEL: func.func @stack(
// CHECK:         attn.layer index = 0 (%{{.*}}) {attn.original_index = 0 : i64}
// CHECK:           attn.weight "layer.0.w"
// CHECK:         attn.layer index = 1 (%{{.*}}) {attn.original_index = 3 : i64}
// CHECK:           attn.weight "layer.3.w"
// CHECK-NOT:     attn.layer
func.func @stack(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.0.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.1.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p : tensor<1x4x8xf32>
  }
  %2 = attn.layer index = 2 (%1) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.2.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p : tensor<1x4x8xf32>
  }
  %3 = attn.layer index = 3 (%2) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.3.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p : tensor<1x4x8xf32>
  }
  return %3 : tensor<1x4x8xf32>
}
