// RUN: attn-opt %s --split-input-file --attn-raise-ffn | FileCheck %s

// CHECK-LABEL: func.func @ffn_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK-DAG: %[[W1:.*]] = attn.weight "up" {transpose} : tensor<16x8xf32>
// CHECK-DAG: %[[B1:.*]] = attn.weight "up.bias" : tensor<16xf32>
// CHECK-DAG: %[[W2:.*]] = attn.weight "down" {transpose} : tensor<8x16xf32>
// CHECK: %[[Y:.*]] = attn.ffn %[[X]] up(%[[W1]], %[[B1]]) down(%[[W2]]) activation = gelu_tanh : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
// CHECK-NOT: attn.linear
// CHECK: return %[[Y]]
func.func @ffn_gelu(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = attn.weight "up" {transpose} : tensor<16x8xf32>
  %b1 = attn.weight "up.bias" : tensor<16xf32>
  %w2 = attn.weight "down" {transpose} : tensor<8x16xf32>
  %h = attn.linear %x, %w1, %b1 : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %a = attn.gelu %h approximate = tanh : tensor<2x4x16xf32>
  %y = attn.linear %a, %w2 : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @ffn_relu
// CHECK: attn.ffn %arg0 up(%arg1, %arg2) down(%arg3, %arg4) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @ffn_relu(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %b1: tensor<16xf32>, %w2: tensor<8x16xf32>, %b2: tensor<8xf32>) -> tensor<4x8xf32> {
  %h = attn.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %a = attn.relu %h : tensor<4x16xf32>
  %y = attn.linear %a, %w2, %b2 : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Near misses: the hidden activation is also returned; the output width
// differs from the input width; no activation between the projections.

// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: attn.ffn
// CHECK: return
func.func @near_misses(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x16xf32>, %w3: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>, tensor<4x4xf32>, tensor<4x8xf32>) {
  %h = attn.linear %x, %w1 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %a = attn.relu %h : tensor<4x16xf32>
  %y = attn.linear %a, %w2 : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %h2 = attn.linear %x, %w1 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %a2 = attn.relu %h2 : tensor<4x16xf32>
  %y2 = attn.linear %a2, %w3 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x4xf32>
  %h3 = attn.linear %x, %w1 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %y3 = attn.linear %h3, %w2 : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  return %y, %a, %y2, %y3 : tensor<4x8xf32>, tensor<4x16xf32>, tensor<4x4xf32>, tensor<4x8xf32>
}
