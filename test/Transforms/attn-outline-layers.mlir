// RUN: attn-opt %s --split-input-file --attn-outline-layers | FileCheck %s --implicit-check-not=attn.layer
// RUN: attn-opt %s --split-input-file --attn-outline-layers=min-group-size=3 | FileCheck %s --check-prefix=MIN3 --implicit-check-not=attn.layer --implicit-check-not=call
// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg=inline-layers=false --attn-outline-layers | FileCheck %s --check-prefix=LINALG --implicit-check-not=attn.layer
// RUN: attn-opt %s --split-input-file --attn-outline-layers=dynamic-shapes=false | FileCheck %s --check-prefix=STATIC --implicit-check-not=attn.layer
// RUN: attn-opt %s --split-input-file --attn-outline-layers=cache-writes=false | FileCheck %s --check-prefix=NOCACHE --implicit-check-not=attn.layer

// Two layers that compute the same thing on their own weights: one private
// function whose arguments are the layer's input, then its weights in body
// order; each layer becomes its weights (in the caller, so that they are
// bound per layer) and a call. A weight that nothing reads is not bound.
// CHECK-LABEL: func.func @two_same(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x3x8xf32>)
// CHECK-NEXT:    %[[W0:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// CHECK-NEXT:    %[[B0:.*]] = attn.weight "layer.0.b" : tensor<8xf32>
// CHECK-NEXT:    %[[L0:.*]] = call @attn_layer_body_0(%[[X]], %[[W0]], %[[B0]])
// CHECK-NEXT:    %[[W1:.*]] = attn.weight "layer.1.w" : tensor<8x8xf32>
// CHECK-NEXT:    %[[B1:.*]] = attn.weight "layer.1.b" : tensor<8xf32>
// CHECK-NEXT:    %[[L1:.*]] = call @attn_layer_body_0(%[[L0]], %[[W1]], %[[B1]])
// CHECK-NEXT:    return %[[L1]]
// CHECK-LABEL: func.func private @attn_layer_body_0(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<1x3x8xf32>, %[[W:[^:]+]]: tensor<8x8xf32>, %[[B:[^:]+]]: tensor<8xf32>) -> tensor<1x3x8xf32>
// CHECK-NEXT:    %[[P:.*]] = attn.linear %[[H]], %[[W]], %[[B]]
// CHECK-NEXT:    %[[A:.*]] = attn.add %[[H]], %[[P]]
// CHECK-NEXT:    return %[[A]]
// CHECK-NOT:     attn.weight
// Below the group size, layers are inlined in place.
// MIN3-LABEL: func.func @two_same(
// MIN3-NEXT:    attn.weight "layer.0.w"
// MIN3-NEXT:    attn.weight "layer.0.b"
// MIN3-NEXT:    attn.linear
// MIN3-NEXT:    attn.add
// MIN3-NEXT:    attn.weight "layer.1.w"
// MIN3-NEXT:    attn.weight "layer.1.b"
// MIN3-NEXT:    attn.linear
// MIN3-NEXT:    attn.add
// MIN3-NEXT:    return
// MIN3-NOT:   func.func private
// The same on lowered bodies (the pipelines outline after attn-lower-to-linalg).
// LINALG-LABEL: func.func @two_same(
// LINALG-NEXT:    attn.weight "layer.0.w" : tensor<8x8xf32>
// LINALG-NEXT:    attn.weight "layer.0.b" : tensor<8xf32>
// LINALG-NEXT:    call @attn_layer_body_0(
// LINALG-NEXT:    attn.weight "layer.1.w" : tensor<8x8xf32>
// LINALG-NEXT:    attn.weight "layer.1.b" : tensor<8xf32>
// LINALG-NEXT:    call @attn_layer_body_0(
// LINALG-LABEL: func.func private @attn_layer_body_0(
// LINALG:         linalg.generic
// LINALG-NOT:     attn.
// LINALG:         return
func.func @two_same(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  ^bb0(%h: tensor<1x3x8xf32>):
    %w = attn.weight "layer.0.w" : tensor<8x8xf32>
    %unused = attn.weight "layer.0.unused" : tensor<8xf32>
    %b = attn.weight "layer.0.b" : tensor<8xf32>
    %p = attn.linear %h, %w, %b : (tensor<1x3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x3x8xf32>
    %a = attn.add %h, %p : tensor<1x3x8xf32>
    attn.yield %a : tensor<1x3x8xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  ^bb0(%h: tensor<1x3x8xf32>):
    %w = attn.weight "layer.1.w" : tensor<8x8xf32>
    %b = attn.weight "layer.1.b" : tensor<8xf32>
    %p = attn.linear %h, %w, %b : (tensor<1x3x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x3x8xf32>
    %a = attn.add %h, %p : tensor<1x3x8xf32>
    attn.yield %a : tensor<1x3x8xf32>
  }
  return %1 : tensor<1x3x8xf32>
}

// -----

// Layers that differ in an attribute (the GELU formula), an op or a weight's
// type compute different things: three layers, two groups. Layer 2 repeats
// layer 0 and shares its function; layer 1 is alone and inlined. Weights that
// are gathered or concatenated keep their attributes in the caller.
// MIN3-LABEL: func.func @differ(
// MIN3-COUNT-3: attn.gelu
// MIN3:         return
// CHECK-LABEL: func.func @differ(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[G0:.*]] = attn.weight "w" {gather_axis = 1 : i64, gather_extent = 8 : i64, gather_ranges = array<i64: 0, 4>} : tensor<2x4xf32>
// CHECK-NEXT:    %[[L0:.*]] = call @attn_layer_body_0(%[[X]], %[[G0]])
// CHECK-NEXT:    %[[G1:.*]] = attn.weight "u" : tensor<2x4xf32>
// CHECK-NEXT:    %[[A1:.*]] = attn.add %[[L0]], %[[G1]]
// CHECK-NEXT:    %[[T1:.*]] = attn.gelu %[[A1]] approximate = tanh
// CHECK-NEXT:    %[[G2:.*]] = attn.weight "w" {gather_axis = 1 : i64, gather_extent = 8 : i64, gather_ranges = array<i64: 4, 4>} : tensor<2x4xf32>
// CHECK-NEXT:    %[[L2:.*]] = call @attn_layer_body_0(%[[T1]], %[[G2]])
// CHECK-NEXT:    return %[[L2]]
// CHECK-LABEL: func.func private @attn_layer_body_0(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<2x4xf32>, %[[G:[^:]+]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[A:.*]] = attn.add %[[H]], %[[G]]
// CHECK-NEXT:    %[[T:.*]] = attn.gelu %[[A]] :
// CHECK-NEXT:    return %[[T]]
func.func @differ(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%h: tensor<2x4xf32>):
    %g = attn.weight "w" {gather_axis = 1 : i64, gather_extent = 8 : i64, gather_ranges = array<i64: 0, 4>} : tensor<2x4xf32>
    %a = attn.add %h, %g : tensor<2x4xf32>
    %t = attn.gelu %a : tensor<2x4xf32>
    attn.yield %t : tensor<2x4xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%h: tensor<2x4xf32>):
    %g = attn.weight "u" : tensor<2x4xf32>
    %a = attn.add %h, %g : tensor<2x4xf32>
    %t = attn.gelu %a approximate = tanh : tensor<2x4xf32>
    attn.yield %t : tensor<2x4xf32>
  }
  %2 = attn.layer index = 2 (%1) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%h: tensor<2x4xf32>):
    %g = attn.weight "w" {gather_axis = 1 : i64, gather_extent = 8 : i64, gather_ranges = array<i64: 4, 4>} : tensor<2x4xf32>
    %a = attn.add %h, %g : tensor<2x4xf32>
    %t = attn.gelu %a : tensor<2x4xf32>
    attn.yield %t : tensor<2x4xf32>
  }
  return %2 : tensor<2x4xf32>
}

// -----

// Layers gated by a run-time condition (attn-compile's LayerDrop search wraps
// each in an scf.if) become calls where they are, outlined with the others.
// (A layer inside another is a verifier error.)
// CHECK-LABEL: func.func @gated(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4xf32>, %[[C:[^:]+]]: i1)
// CHECK:         %[[IF:.*]] = scf.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[W0:.*]] = attn.weight "l0" : tensor<4xf32>
// CHECK-NEXT:      %[[L0:.*]] = func.call @attn_layer_body_0(%[[X]], %[[W0]])
// CHECK-NEXT:      scf.yield %[[L0]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[X]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[W1:.*]] = attn.weight "l1" : tensor<4xf32>
// CHECK-NEXT:    %[[L1:.*]] = call @attn_layer_body_0(%[[IF]], %[[W1]])
// CHECK-NEXT:    return %[[L1]]
// CHECK-LABEL: func.func private @attn_layer_body_0(
// CHECK-NEXT:    attn.add
// CHECK-NEXT:    return
func.func @gated(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %0 = scf.if %c -> (tensor<4xf32>) {
    %l = attn.layer index = 0 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%h: tensor<4xf32>):
      %w = attn.weight "l0" : tensor<4xf32>
      %a = attn.add %h, %w : tensor<4xf32>
      attn.yield %a : tensor<4xf32>
    }
    scf.yield %l : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%g: tensor<4xf32>):
    %v = attn.weight "l1" : tensor<4xf32>
    %a = attn.add %g, %v : tensor<4xf32>
    attn.yield %a : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

// -----

// Layers with a dynamic (run-time) sequence are outlined too: the body
// function takes and returns the dynamic type (after bufferization it
// returns the buffer it allocates). With dynamic-shapes=false (the CUDA
// pipeline) they stay inline.
// CHECK-LABEL: func.func @dynamic_seq(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x?x8xf32>)
// CHECK-NEXT:    %[[W0:.*]] = attn.weight "layer.0.w"
// CHECK-NEXT:    %[[L0:.*]] = call @attn_layer_body_0(%[[X]], %[[W0]]) : (tensor<1x?x8xf32>, tensor<8x8xf32>) -> tensor<1x?x8xf32>
// CHECK-NEXT:    %[[W1:.*]] = attn.weight "layer.1.w"
// CHECK-NEXT:    %[[L1:.*]] = call @attn_layer_body_0(%[[L0]], %[[W1]])
// CHECK-NEXT:    return %[[L1]]
// CHECK-LABEL: func.func private @attn_layer_body_0(
// CHECK-SAME:    %{{[^:]+}}: tensor<1x?x8xf32>, %{{[^:]+}}: tensor<8x8xf32>) -> tensor<1x?x8xf32>
// CHECK-NEXT:    attn.linear
// CHECK-NEXT:    return
// STATIC-LABEL: func.func @dynamic_seq(
// STATIC-NEXT:    attn.weight "layer.0.w"
// STATIC-NEXT:    attn.linear
// STATIC-NEXT:    attn.weight "layer.1.w"
// STATIC-NEXT:    attn.linear
// STATIC-NEXT:    return
// STATIC-NOT:   func.func private
// MIN3-LABEL: func.func @dynamic_seq(
// LINALG-LABEL: func.func @dynamic_seq(
// LINALG:         call @attn_layer_body_0(
// LINALG:         call @attn_layer_body_0(
// LINALG-LABEL: func.func private @attn_layer_body_0(
// LINALG-SAME:    -> tensor<1x?x8xf32>
func.func @dynamic_seq(%x: tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
  ^bb0(%h: tensor<1x?x8xf32>):
    %w = attn.weight "layer.0.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x?x8xf32>, tensor<8x8xf32>) -> tensor<1x?x8xf32>
    attn.yield %p : tensor<1x?x8xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
  ^bb0(%h: tensor<1x?x8xf32>):
    %w = attn.weight "layer.1.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x?x8xf32>, tensor<8x8xf32>) -> tensor<1x?x8xf32>
    attn.yield %p : tensor<1x?x8xf32>
  }
  return %1 : tensor<1x?x8xf32>
}

// -----

// A KV-cache step of a run-time number of tokens: each layer writes its new
// keys into its own cache (an input) and returns the updated cache with its
// dynamic hidden state. Both layers share one body; each call passes its own
// cache and returns it updated.
// CHECK-LABEL: func.func @dynamic_cache(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x?x4xf32>, %[[P:[^:]+]]: tensor<1xi64>, %[[C0:[^:]+]]: tensor<1x2x8x4xf32>, %[[C1:[^:]+]]: tensor<1x2x8x4xf32>)
// CHECK-NEXT:    %[[W0:.*]] = attn.weight "layer.0.w"
// CHECK-NEXT:    %[[L0:.*]]:2 = call @attn_layer_body_0(%[[X]], %[[C0]], %[[P]], %[[W0]]) : (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<4x4xf32>) -> (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>)
// CHECK-NEXT:    %[[W1:.*]] = attn.weight "layer.1.w"
// CHECK-NEXT:    %[[L1:.*]]:2 = call @attn_layer_body_0(%[[L0]]#0, %[[C1]], %[[P]], %[[W1]])
// CHECK-NEXT:    return %[[L1]]#0, %[[L0]]#1, %[[L1]]#1
// CHECK-LABEL: func.func private @attn_layer_body_0(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<1x2x?x4xf32>, %[[C:[^:]+]]: tensor<1x2x8x4xf32>, %[[Q:[^:]+]]: tensor<1xi64>, %[[W:[^:]+]]: tensor<4x4xf32>) -> (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>)
// CHECK-NEXT:    %[[K:.*]] = attn.linear %[[H]], %[[W]]
// CHECK-NEXT:    %[[U:.*]] = attn.cache_write %[[K]] into %[[C]] at %[[Q]]
// CHECK-NEXT:    %[[O:.*]] = attn.sdpa %[[K]], %[[U]], %[[U]] :
// CHECK-NEXT:    return %[[O]], %[[U]]
// STATIC-LABEL: func.func @dynamic_cache(
// STATIC-COUNT-2: attn.cache_write
// STATIC-NOT:   func.func private
// MIN3-LABEL: func.func @dynamic_cache(
// LINALG-LABEL: func.func @dynamic_cache(
func.func @dynamic_cache(%x: tensor<1x2x?x4xf32>, %pos: tensor<1xi64>, %kc0: tensor<1x2x8x4xf32>, %kc1: tensor<1x2x8x4xf32>) -> (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0:2 = attn.layer index = 0 (%x, %kc0, %pos) : (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>) -> (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>) {
  ^bb0(%h: tensor<1x2x?x4xf32>, %c: tensor<1x2x8x4xf32>, %p: tensor<1xi64>):
    %w = attn.weight "layer.0.w" : tensor<4x4xf32>
    %k = attn.linear %h, %w : (tensor<1x2x?x4xf32>, tensor<4x4xf32>) -> tensor<1x2x?x4xf32>
    %u = attn.cache_write %k into %c at %p : tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>
    %o = attn.sdpa %k, %u, %u : tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x?x4xf32>
    attn.yield %o, %u : tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>
  }
  %1:2 = attn.layer index = 1 (%0#0, %kc1, %pos) : (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>) -> (tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>) {
  ^bb0(%h: tensor<1x2x?x4xf32>, %c: tensor<1x2x8x4xf32>, %p: tensor<1xi64>):
    %w = attn.weight "layer.1.w" : tensor<4x4xf32>
    %k = attn.linear %h, %w : (tensor<1x2x?x4xf32>, tensor<4x4xf32>) -> tensor<1x2x?x4xf32>
    %u = attn.cache_write %k into %c at %p : tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>
    %o = attn.sdpa %k, %u, %u : tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x?x4xf32>
    attn.yield %o, %u : tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>
  }
  return %1#0, %0#1, %1#1 : tensor<1x2x?x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// A one-token step (static shapes) that updates its caches: outlined, unless
// cache-writes=false (the CUDA pipeline), which inlines the layers.
// CHECK-LABEL: func.func @static_cache(
// CHECK:         call @attn_layer_body_0(
// CHECK:         call @attn_layer_body_0(
// CHECK-LABEL: func.func private @attn_layer_body_0(
// CHECK:         attn.cache_write
// NOCACHE-LABEL: func.func @static_cache(
// NOCACHE-NOT:   call
// NOCACHE-COUNT-2: attn.cache_write
// NOCACHE-NOT:   func.func private
// STATIC-LABEL: func.func @static_cache(
// STATIC-COUNT-2: call @attn_layer_body_0(
// MIN3-LABEL: func.func @static_cache(
// LINALG-LABEL: func.func @static_cache(
func.func @static_cache(%x: tensor<1x2x1x4xf32>, %pos: tensor<1xi64>, %kc0: tensor<1x2x8x4xf32>, %kc1: tensor<1x2x8x4xf32>) -> (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0:2 = attn.layer index = 0 (%x, %kc0, %pos) : (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>) {
  ^bb0(%h: tensor<1x2x1x4xf32>, %c: tensor<1x2x8x4xf32>, %p: tensor<1xi64>):
    %u = attn.cache_write %h into %c at %p : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>
    %o = attn.sdpa %h, %u, %u : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x1x4xf32>
    attn.yield %o, %u : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>
  }
  %1:2 = attn.layer index = 1 (%0#0, %kc1, %pos) : (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>) {
  ^bb0(%h: tensor<1x2x1x4xf32>, %c: tensor<1x2x8x4xf32>, %p: tensor<1xi64>):
    %u = attn.cache_write %h into %c at %p : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>
    %o = attn.sdpa %h, %u, %u : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x1x4xf32>
    attn.yield %o, %u : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>
  }
  return %1#0, %0#1, %1#1 : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
