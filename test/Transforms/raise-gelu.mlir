// RUN: attn-opt %s --split-input-file --attn-raise-gelu | FileCheck %s

// GELU (erf) as PyTorch exports it: Div(x, 1.4142135), Erf, Add 1, Mul x,
// Mul 0.5, with scalar constants broadcast.

// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = attn.gelu %[[X]] : tensor<2x8xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[Y]]
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %e = tensor.empty() : tensor<2x8xf32>
  %sqrt2b = linalg.broadcast ins(%sqrt2 : tensor<f32>) outs(%e : tensor<2x8xf32>) dimensions = [0, 1]
  %onex = linalg.broadcast ins(%one : tensor<f32>) outs(%e : tensor<2x8xf32>) dimensions = [0, 1]
  %halfb = linalg.broadcast ins(%half : tensor<f32>) outs(%e : tensor<2x8xf32>) dimensions = [0, 1]
  %u = linalg.div ins(%x, %sqrt2b : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %erf = linalg.erf ins(%u : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = linalg.add ins(%erf, %onex : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %xp = linalg.mul ins(%x, %p : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = linalg.mul ins(%xp, %halfb : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// GELU (tanh) as GPT-2 writes it: 0.5 * x * (1 + tanh(sqrt(2/pi) *
// (x + 0.044715 * pow(x, 3)))), the 0.5 first.

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = attn.gelu %[[X]] approximate = tanh : tensor<2x8xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[Y]]
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<2x8xf32>
  %three = arith.constant dense<3.0> : tensor<2x8xf32>
  %c = arith.constant dense<0.044715> : tensor<2x8xf32>
  %k = arith.constant dense<0.797884583> : tensor<2x8xf32>
  %one = arith.constant dense<1.0> : tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %hx = linalg.mul ins(%half, %x : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %x3 = linalg.powf ins(%x, %three : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %cx3 = linalg.mul ins(%c, %x3 : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = linalg.add ins(%x, %cx3 : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %ks = linalg.mul ins(%k, %s : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = linalg.tanh ins(%ks : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = linalg.add ins(%one, %t : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = linalg.mul ins(%hx, %p : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// x * 0.70710678 inside erf and x * x * x for the cube also match.

// CHECK-LABEL: func.func @gelu_variants
// CHECK: attn.gelu %arg0 : tensor<8xf32>
// CHECK: attn.gelu %arg0 approximate = tanh : tensor<8xf32>
// CHECK-NOT: linalg.
func.func @gelu_variants(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r = arith.constant dense<0.707106769> : tensor<8xf32>
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %c = arith.constant dense<0.044715> : tensor<8xf32>
  %k = arith.constant dense<0.797884583> : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %u = linalg.mul ins(%x, %r : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %erf = linalg.erf ins(%u : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p = linalg.add ins(%one, %erf : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %hp = linalg.mul ins(%half, %p : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y = linalg.mul ins(%hp, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %xx = linalg.mul ins(%x, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %xxx = linalg.mul ins(%xx, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %cx3 = linalg.mul ins(%xxx, %c : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.add ins(%cx3, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %ks = linalg.mul ins(%s, %k : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %t = linalg.tanh ins(%ks : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p2 = linalg.add ins(%t, %one : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %xp2 = linalg.mul ins(%x, %p2 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y2 = linalg.mul ins(%xp2, %half : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %y, %y2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Near misses: 0.6 instead of 0.5; erf of x / 2; the tanh coefficient 0.05;
// erf of another tensor.

// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: attn.gelu
// CHECK: return
func.func @near_misses(%x: tensor<8xf32>, %w: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<8xf32>
  %two = arith.constant dense<2.0> : tensor<8xf32>
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %six = arith.constant dense<0.6> : tensor<8xf32>
  %c = arith.constant dense<0.05> : tensor<8xf32>
  %k = arith.constant dense<0.797884583> : tensor<8xf32>
  %three = arith.constant dense<3.0> : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %u = linalg.div ins(%x, %sqrt2 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %erf = linalg.erf ins(%u : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p = linalg.add ins(%erf, %one : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %xp = linalg.mul ins(%x, %p : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y1 = linalg.mul ins(%xp, %six : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %u2 = linalg.div ins(%x, %two : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %erf2 = linalg.erf ins(%u2 : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p2 = linalg.add ins(%erf2, %one : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %xp2 = linalg.mul ins(%x, %p2 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y2 = linalg.mul ins(%xp2, %half : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %x3 = linalg.powf ins(%x, %three : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %cx3 = linalg.mul ins(%c, %x3 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.add ins(%x, %cx3 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %ks = linalg.mul ins(%k, %s : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %t = linalg.tanh ins(%ks : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p3 = linalg.add ins(%one, %t : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %xp3 = linalg.mul ins(%x, %p3 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y3 = linalg.mul ins(%xp3, %half : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %u4 = linalg.div ins(%w, %sqrt2 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %erf4 = linalg.erf ins(%u4 : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p4 = linalg.add ins(%erf4, %one : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %xp4 = linalg.mul ins(%x, %p4 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y4 = linalg.mul ins(%xp4, %half : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %y1, %y2, %y3, %y4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
