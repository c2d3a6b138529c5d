// RUN: attn-opt %s --attn-layer-drop="strategy=keep-list layers=1" | FileCheck %s --implicit-check-not=attn.weight

// Each function's stack is pruned on its own; a function without layers is
// left alone when another function of the module has some. A dropped
// layer forwards each operand to the result in the same position, extra
// pass-through values included.

// CHECK-LABEL: func.func @helper(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = attn.relu %[[X]] : tensor<1x4x8xf32>
// CHECK-NEXT:    return %[[R]]
func.func @helper(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.relu %x : tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// Layer 0 is dropped: layer 1 (now index 0) reads the function's arguments.
// CHECK-LABEL: func.func @encoder(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>, %[[LEN:[^:]+]]: tensor<1xi32>
// CHECK:         %[[L:.*]]:2 = attn.layer index = 0 (%[[X]], %[[LEN]]) {attn.original_index = 1 : i64} : (tensor<1x4x8xf32>, tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi32>) {
// CHECK:           attn.weight "enc.1.w"
// CHECK:         }
// CHECK-NEXT:    return %[[L]]#0, %[[L]]#1, %[[LEN]]
func.func @encoder(%x: tensor<1x4x8xf32>, %len: tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi32>, tensor<1xi32>) {
  %0:2 = attn.layer index = 0 (%x, %len) : (tensor<1x4x8xf32>, tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi32>) {
  ^bb0(%h: tensor<1x4x8xf32>, %n: tensor<1xi32>):
    %w = attn.weight "enc.0.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p, %n : tensor<1x4x8xf32>, tensor<1xi32>
  }
  %1:2 = attn.layer index = 1 (%0#0, %0#1) : (tensor<1x4x8xf32>, tensor<1xi32>) -> (tensor<1x4x8xf32>, tensor<1xi32>) {
  ^bb0(%h: tensor<1x4x8xf32>, %n: tensor<1xi32>):
    %w = attn.weight "enc.1.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p, %n : tensor<1x4x8xf32>, tensor<1xi32>
  }
  return %1#0, %1#1, %0#1 : tensor<1x4x8xf32>, tensor<1xi32>, tensor<1xi32>
}

// Layers 0 and 2 are dropped; every use of a dropped layer now reads the
// value it would have forwarded.
// CHECK-LABEL: func.func @decoder(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>, %[[ENC:[^:]+]]: tensor<1x6x8xf32>
// CHECK:         %[[L:.*]] = attn.layer index = 0 (%[[X]], %[[ENC]]) {attn.original_index = 1 : i64} : (tensor<1x4x8xf32>, tensor<1x6x8xf32>) -> tensor<1x4x8xf32> {
// CHECK:           attn.weight "dec.1.w"
// CHECK:         }
// CHECK-NEXT:    %[[S:.*]] = attn.add %[[X]], %[[L]] : tensor<1x4x8xf32>
// CHECK-NEXT:    return %[[L]], %[[S]]
func.func @decoder(%x: tensor<1x4x8xf32>, %enc: tensor<1x6x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %0 = attn.layer index = 0 (%x, %enc) : (tensor<1x4x8xf32>, tensor<1x6x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>, %e: tensor<1x6x8xf32>):
    %w = attn.weight "dec.0.w" : tensor<64x8xf32>
    %wo = attn.weight "dec.0.wo" : tensor<8x64xf32>
    %c = attn.mha %h, %e weights(%w, %w, %w, %wo) heads = 8 wide : (tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<64x8xf32>, tensor<64x8xf32>, tensor<64x8xf32>, tensor<8x64xf32>) -> tensor<1x4x8xf32>
    attn.yield %c : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 1 (%0, %enc) : (tensor<1x4x8xf32>, tensor<1x6x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>, %e: tensor<1x6x8xf32>):
    %w = attn.weight "dec.1.w" : tensor<8x8xf32>
    %c = attn.mha %h, %e weights(%w, %w, %w, %w) heads = 2 : (tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %c : tensor<1x4x8xf32>
  }
  %2 = attn.layer index = 2 (%1, %enc) : (tensor<1x4x8xf32>, tensor<1x6x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>, %e: tensor<1x6x8xf32>):
    %w = attn.weight "dec.2.w" : tensor<8x8xf32>
    %c = attn.mha %h, %e weights(%w, %w, %w, %w) heads = 2 : (tensor<1x4x8xf32>, tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %c : tensor<1x4x8xf32>
  }
  %s = attn.add %0, %2 : tensor<1x4x8xf32>
  return %2, %s : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}
