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
