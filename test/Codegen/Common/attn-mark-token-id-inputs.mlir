// RUN: attn-opt %s --split-input-file --attn-mark-token-id-inputs | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-mark-token-id-inputs="warn-computed-ids=true" --verify-diagnostics -o /dev/null

// A function argument used as embedding ids records the table's row count;
// other arguments get nothing.
// CHECK-LABEL: func.func @direct(
// CHECK-SAME:    %{{[^:]+}}: tensor<2x5xi32> {attn.id_bound = 100 : i64},
// CHECK-SAME:    %{{[^:]+}}: tensor<100x8xf32>) -> tensor<2x5x8xf32>
func.func @direct(%ids: tensor<2x5xi32>, %table: tensor<100x8xf32>) -> tensor<2x5x8xf32> {
  %0 = attn.embedding %ids, %table : (tensor<2x5xi32>, tensor<100x8xf32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

// Shape-only views are looked through; an argument feeding two tables gets
// the smaller bound, whichever order they come in.
// CHECK-LABEL: func.func @views_and_two_tables(
// CHECK-SAME:    %{{[^:]+}}: tensor<10xi64> {attn.id_bound = 2 : i64})
func.func @views_and_two_tables(%ids: tensor<10xi64>) -> (tensor<2x5x4xf32>, tensor<10x4xf32>) {
  %word = attn.weight "word" : tensor<30x4xf32>
  %type = attn.weight "type" : tensor<2x4xf32>
  %e = tensor.expand_shape %ids [[0, 1]] output_shape [2, 5] : tensor<10xi64> into tensor<2x5xi64>
  %c = tensor.cast %e : tensor<2x5xi64> to tensor<?x5xi64>
  %s = tensor.cast %c : tensor<?x5xi64> to tensor<2x5xi64>
  %0 = attn.embedding %s, %word : (tensor<2x5xi64>, tensor<30x4xf32>) -> tensor<2x5x4xf32>
  %1 = attn.embedding %ids, %type : (tensor<10xi64>, tensor<2x4xf32>) -> tensor<10x4xf32>
  return %0, %1 : tensor<2x5x4xf32>, tensor<10x4xf32>
}

// -----

// Ids reach an embedding inside a layer through the layer's block argument.
// CHECK-LABEL: func.func @through_layer(
// CHECK-SAME:    %{{[^:]+}}: tensor<1x4x8xf32>,
// CHECK-SAME:    %{{[^:]+}}: tensor<1x4xi64> {attn.id_bound = 16 : i64})
func.func @through_layer(%x: tensor<1x4x8xf32>, %ids: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 (%x, %ids) : (tensor<1x4x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>, %i: tensor<1x4xi64>):
    %t = attn.weight "t" : tensor<16x8xf32>
    %e = attn.embedding %i, %t : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
    %s = attn.add %h, %e : tensor<1x4x8xf32>
    attn.yield %s : tensor<1x4x8xf32>
  }
  return %0 : tensor<1x4x8xf32>
}

// -----

// Ids computed inside the model cannot be checked on the host: no argument
// is marked, and with warn-computed-ids the embedding says so.
// CHECK-LABEL: func.func @computed(
// CHECK-SAME:    %{{[^:]+}}: tensor<1x6xi64>) -> tensor<1x4x8xf32>
func.func @computed(%ids: tensor<1x6xi64>) -> tensor<1x4x8xf32> {
  %t = attn.weight "t" : tensor<16x8xf32>
  %s = tensor.extract_slice %ids[0, 2] [1, 4] [1, 1] : tensor<1x6xi64> to tensor<1x4xi64>
  // expected-warning @+1 {{ids computed inside the model are not range-checked on this target}}
  %e = attn.embedding %s, %t : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  return %e : tensor<1x4x8xf32>
}

// -----

// Ids computed from constants alone (learned positions: an iota over the
// static sequence) are in range by construction: no warning.
// CHECK-LABEL: func.func @constant_positions(
// CHECK-SAME:    %{{[^:]+}}: tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
func.func @constant_positions(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %t = attn.weight "wpe" : tensor<16x8xf32>
  %pos = arith.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %e = attn.embedding %pos, %t : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %s = attn.add %x, %e : tensor<1x4x8xf32>
  return %s : tensor<1x4x8xf32>
}

// -----

// Run-time positions are bounded like ids: a cache of 32 rows written 1 row
// at a time takes positions in [0, 32); a table of 20 rows read at
// offset 2 + positions + s for 1 row takes [0, 18); the smaller bound wins.
// CHECK-LABEL: func.func @decode_positions(
// CHECK-SAME:    %{{[^:]+}}: tensor<2x1x16xf32>, %{{[^:]+}}: tensor<2xi64> {attn.position_bound = 18 : i64}, %{{[^:]+}}: tensor<2xi64> {attn.position_bound = 32 : i64}, %{{[^:]+}}: tensor<2x4x1x4xf32>, %{{[^:]+}}: tensor<2x4x32x4xf32>)
func.func @decode_positions(%x: tensor<2x1x16xf32>, %p: tensor<2xi64>, %q: tensor<2xi64>, %n: tensor<2x4x1x4xf32>, %c: tensor<2x4x32x4xf32>) -> (tensor<2x1x16xf32>, tensor<2x4x32x4xf32>) {
  %t = attn.weight "wpe" : tensor<20x16xf32>
  %0 = attn.learned_pos %x, %t positions(%p : tensor<2xi64>) offset = 2 : tensor<2x1x16xf32>, tensor<20x16xf32>
  %1 = attn.cache_write %n into %c at %p : tensor<2x4x1x4xf32>, tensor<2x4x32x4xf32>, tensor<2xi64>
  %2 = attn.cache_write %n into %1 at %q : tensor<2x4x1x4xf32>, tensor<2x4x32x4xf32>, tensor<2xi64>
  return %0, %2 : tensor<2x1x16xf32>, tensor<2x4x32x4xf32>
}

// -----

// A run-time number of tokens T (a step that prefills and decodes) is
// bounded as T = 1: a 32-row cache takes positions in [0, 32), the 20-row
// table at offset 2 [0, 18); a static T = 4 write bounds [0, 29).
// CHECK-LABEL: func.func @step_positions(
// CHECK-SAME:    %{{[^:]+}}: tensor<2x?x16xf32>, %{{[^:]+}}: tensor<2xi64> {attn.position_bound = 18 : i64}, %{{[^:]+}}: tensor<2xi64> {attn.position_bound = 32 : i64}, %{{[^:]+}}: tensor<2xi64> {attn.position_bound = 29 : i64}, %{{[^:]+}}: tensor<2x4x?x4xf32>, %{{[^:]+}}: tensor<2x4x4x4xf32>, %{{[^:]+}}: tensor<2x4x32x4xf32>)
func.func @step_positions(%x: tensor<2x?x16xf32>, %p: tensor<2xi64>, %q: tensor<2xi64>, %r: tensor<2xi64>, %n: tensor<2x4x?x4xf32>, %n4: tensor<2x4x4x4xf32>, %c: tensor<2x4x32x4xf32>) -> (tensor<2x?x16xf32>, tensor<2x4x32x4xf32>) {
  %t = attn.weight "wpe" : tensor<20x16xf32>
  %0 = attn.learned_pos %x, %t positions(%p : tensor<2xi64>) offset = 2 : tensor<2x?x16xf32>, tensor<20x16xf32>
  %1 = attn.cache_write %n into %c at %q : tensor<2x4x?x4xf32>, tensor<2x4x32x4xf32>, tensor<2xi64>
  %2 = attn.cache_write %n4 into %1 at %r : tensor<2x4x4x4xf32>, tensor<2x4x32x4xf32>, tensor<2xi64>
  return %0, %2 : tensor<2x?x16xf32>, tensor<2x4x32x4xf32>
}
