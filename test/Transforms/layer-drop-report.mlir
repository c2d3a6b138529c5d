// RUN: attn-opt %s --split-input-file --attn-layer-drop="report=true" --verify-diagnostics | FileCheck %s

// report=true emits one remark per pruned function, on the function, listing
// the kept and dropped depths (with their scores where the layers have one).

// expected-remark @+1 {{attn-layer-drop (every-other): kept [0, 2], dropped [1, 3]}}
func.func @no_scores(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.silu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  %2 = attn.layer index = 2 (%1) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.gelu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  %3 = attn.layer index = 3 (%2) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.gelu %h approximate = tanh : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  return %3 : tensor<1x4x8xf32>
}
// CHECK-LABEL: func.func @no_scores(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// CHECK:         %[[L0:.*]] = attn.layer index = 0 (%[[X]]) {attn.original_index = 0 : i64}
// CHECK:           attn.relu
// CHECK-NOT:       attn.silu
// CHECK:         %[[L1:.*]] = attn.layer index = 1 (%[[L0]]) {attn.original_index = 2 : i64}
// CHECK:           attn.gelu %{{.*}} : tensor<1x4x8xf32>
// CHECK-NOT:     attn.layer
// CHECK:         return %[[L1]]

// -----

// Scores are listed for the layers that have one. The layers appear in the
// IR out of depth order; the pass orders them by `index`.
// expected-remark @+1 {{attn-layer-drop (every-other): kept [0 (score 2.500000e-01)], dropped [1]}}
func.func @some_scores(%x: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %0 = attn.layer index = 1 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.relu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 0 score = 0.25 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %r = attn.silu %h : tensor<1x4x8xf32>
    attn.yield %r : tensor<1x4x8xf32>
  }
  return %0, %1 : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}
// CHECK-LABEL: func.func @some_scores(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// CHECK-NOT:     attn.relu
// CHECK:         %[[L:.*]] = attn.layer index = 0 score = 2.500000e-01 (%[[X]]) {attn.original_index = 0 : i64}
// CHECK:           attn.silu
// CHECK:         return %[[X]], %[[L]]
