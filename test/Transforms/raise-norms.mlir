// RUN: attn-opt %s --split-input-file --attn-raise-norms | FileCheck %s

// LayerNorm as PyTorch exports it below opset 17 (ReduceMean keepdims, Sub,
// Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta), in the
// imported form: reductions to [B, S], expanded to [B, S, 1], collapsed and
// broadcast back for the elementwise ops.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x32xf32>)
// CHECK-DAG: %[[G:.*]] = attn.weight "ln.weight" : tensor<32xf32>
// CHECK-DAG: %[[B:.*]] = attn.weight "ln.bias" : tensor<32xf32>
// CHECK: %[[Y:.*]] = attn.layer_norm %[[X]], %[[G]], %[[B]] epsilon = 9.9999997473787516E-6 : tensor<2x3x32xf32>, tensor<32xf32>, tensor<32xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x3x32xf32>) -> tensor<2x3x32xf32> {
  %zero = arith.constant 0.0 : f32
  %count = arith.constant dense<32.0> : tensor<2x3xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %g = attn.weight "ln.weight" : tensor<32xf32>
  %b = attn.weight "ln.bias" : tensor<32xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e3 = tensor.empty() : tensor<2x3x32xf32>
  %e31 = tensor.empty() : tensor<2x3x1xf32>
  %s = linalg.reduce ins(%x : tensor<2x3x32xf32>) outs(%z2 : tensor<2x3xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %mean2 = linalg.div ins(%s, %count : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %mean = tensor.expand_shape %mean2 [[0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xf32> into tensor<2x3x1xf32>
  %meanc = tensor.collapse_shape %mean [[0], [1, 2]] : tensor<2x3x1xf32> into tensor<2x3xf32>
  %meanb = linalg.broadcast ins(%meanc : tensor<2x3xf32>) outs(%e3 : tensor<2x3x32xf32>) dimensions = [2]
  %d = linalg.sub ins(%x, %meanb : tensor<2x3x32xf32>, tensor<2x3x32xf32>) outs(%e3 : tensor<2x3x32xf32>) -> tensor<2x3x32xf32>
  %twob = linalg.broadcast ins(%two : tensor<f32>) outs(%e3 : tensor<2x3x32xf32>) dimensions = [0, 1, 2]
  %sq = linalg.powf ins(%d, %twob : tensor<2x3x32xf32>, tensor<2x3x32xf32>) outs(%e3 : tensor<2x3x32xf32>) -> tensor<2x3x32xf32>
  %s2 = linalg.reduce ins(%sq : tensor<2x3x32xf32>) outs(%z2 : tensor<2x3xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %var2 = linalg.div ins(%s2, %count : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %var = tensor.expand_shape %var2 [[0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xf32> into tensor<2x3x1xf32>
  %epsb = linalg.broadcast ins(%eps : tensor<f32>) outs(%e31 : tensor<2x3x1xf32>) dimensions = [0, 1, 2]
  %ve = linalg.add ins(%var, %epsb : tensor<2x3x1xf32>, tensor<2x3x1xf32>) outs(%e31 : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %std = linalg.sqrt ins(%ve : tensor<2x3x1xf32>) outs(%e31 : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %stdc = tensor.collapse_shape %std [[0], [1, 2]] : tensor<2x3x1xf32> into tensor<2x3xf32>
  %stdb = linalg.broadcast ins(%stdc : tensor<2x3xf32>) outs(%e3 : tensor<2x3x32xf32>) dimensions = [2]
  %n = linalg.div ins(%d, %stdb : tensor<2x3x32xf32>, tensor<2x3x32xf32>) outs(%e3 : tensor<2x3x32xf32>) -> tensor<2x3x32xf32>
  %gb = linalg.broadcast ins(%g : tensor<32xf32>) outs(%e3 : tensor<2x3x32xf32>) dimensions = [0, 1]
  %ng = linalg.mul ins(%n, %gb : tensor<2x3x32xf32>, tensor<2x3x32xf32>) outs(%e3 : tensor<2x3x32xf32>) -> tensor<2x3x32xf32>
  %bb = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e3 : tensor<2x3x32xf32>) dimensions = [0, 1]
  %y = linalg.add ins(%ng, %bb : tensor<2x3x32xf32>, tensor<2x3x32xf32>) outs(%e3 : tensor<2x3x32xf32>) -> tensor<2x3x32xf32>
  return %y : tensor<2x3x32xf32>
}

// -----

// Without the affine part (elementwise_affine=False): constant ones and
// zeros as gamma and beta; the square as d * d.

// CHECK-LABEL: func.func @layer_norm_no_affine
// CHECK-DAG: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: attn.layer_norm %arg0, %[[ONES]], %[[ZEROS]] epsilon = 0.0010000000474974513 : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK-NOT: linalg.
func.func @layer_norm_no_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %count = arith.constant dense<8.0> : tensor<4xf32>
  %eps = arith.constant dense<1.0e-3> : tensor<4x1xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %e21 = tensor.empty() : tensor<4x1xf32>
  %s = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%z1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %mean = linalg.div ins(%s, %count : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %meanb = linalg.broadcast ins(%mean : tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%x, %meanb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%z1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %var = linalg.div ins(%s2, %count : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %var1 = tensor.expand_shape %var [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %ve = linalg.add ins(%eps, %var1 : tensor<4x1xf32>, tensor<4x1xf32>) outs(%e21 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %std = linalg.sqrt ins(%ve : tensor<4x1xf32>) outs(%e21 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %stdc = tensor.collapse_shape %std [[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
  %stdb = linalg.broadcast ins(%stdc : tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) dimensions = [1]
  %n = linalg.div ins(%d, %stdb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// RMSNorm as LLaMA writes it: x * rsqrt(mean(x^2) + eps) * weight, rsqrt as
// Reciprocal(Sqrt); the weight multiplies from the left.

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>)
// CHECK: %[[Y:.*]] = attn.rms_norm %[[X]], %[[G]] epsilon = 9.9999999747524271E-7 : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[Y]]
func.func @rms_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %count = arith.constant dense<8.0> : tensor<4xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %e21 = tensor.empty() : tensor<4x1xf32>
  %twob = linalg.broadcast ins(%two : tensor<f32>) outs(%e2 : tensor<4x8xf32>) dimensions = [0, 1]
  %sq = linalg.powf ins(%x, %twob : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%z1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %ms = linalg.div ins(%s, %count : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %ms1 = tensor.expand_shape %ms [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %epsb = linalg.broadcast ins(%eps : tensor<f32>) outs(%e21 : tensor<4x1xf32>) dimensions = [0, 1]
  %ve = linalg.add ins(%ms1, %epsb : tensor<4x1xf32>, tensor<4x1xf32>) outs(%e21 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %r = linalg.sqrt ins(%ve : tensor<4x1xf32>) outs(%e21 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %rr = linalg.reciprocal ins(%r : tensor<4x1xf32>) outs(%e21 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %rrc = tensor.collapse_shape %rr [[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
  %rrb = linalg.broadcast ins(%rrc : tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) dimensions = [1]
  %n = linalg.mul ins(%x, %rrb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %gb = linalg.broadcast ins(%g : tensor<8xf32>) outs(%e2 : tensor<4x8xf32>) dimensions = [0]
  %y = linalg.mul ins(%gb, %n : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Near misses: the mean subtracted is of another tensor (not a layer norm of
// x, but exactly an RMS norm of d = x - mean(w)); the power is 3; the mean is
// over the first axis (reduction dimension 0), then broadcast along the last.

// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: attn.layer_norm
// CHECK: %[[D:.*]] = linalg.sub
// CHECK-NOT: attn.layer_norm
// CHECK: attn.rms_norm %[[D]], %{{.*}} epsilon = 9.9999997473787516E-6
// CHECK-NOT: attn.layer_norm
// CHECK-NOT: attn.rms_norm
// CHECK: return
func.func @near_misses(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %count = arith.constant dense<8.0> : tensor<4xf32>
  %count0 = arith.constant dense<4.0> : tensor<8xf32>
  %three = arith.constant dense<3.0> : tensor<4x8xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  // (x - mean(w)) / sqrt(mean((x - mean(w))^2) + eps)
  %s = linalg.reduce ins(%w : tensor<4x8xf32>) outs(%z1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %mean = linalg.div ins(%s, %count : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %meanb = linalg.broadcast ins(%mean : tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%x, %meanb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%z1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %var = linalg.div ins(%s2, %count : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %ve = linalg.add ins(%var, %eps : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %std = linalg.sqrt ins(%ve : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %stdb = linalg.broadcast ins(%std : tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) dimensions = [1]
  %n = linalg.div ins(%d, %stdb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  // x / sqrt(mean(x^3) + eps)
  %cube = linalg.powf ins(%x, %three : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s3 = linalg.reduce ins(%cube : tensor<4x8xf32>) outs(%z1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %m3 = linalg.div ins(%s3, %count : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %m3e = linalg.add ins(%m3, %eps : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %r3 = linalg.sqrt ins(%m3e : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %r3b = linalg.broadcast ins(%r3 : tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) dimensions = [1]
  %n3 = linalg.div ins(%x, %r3b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  // x^T / sqrt(mean over axis 0 of x^2 + eps), as [8, 4]
  %et = tensor.empty() : tensor<8x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) permutation = [1, 0]
  %sqx = linalg.mul ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s0 = linalg.reduce ins(%sqx : tensor<4x8xf32>) outs(%z8 : tensor<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %m0 = linalg.div ins(%s0, %count0 : tensor<8xf32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %eps8 = arith.constant dense<1.0e-5> : tensor<8xf32>
  %m0e = linalg.add ins(%m0, %eps8 : tensor<8xf32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %r0 = linalg.sqrt ins(%m0e : tensor<8xf32>) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %r0b = linalg.broadcast ins(%r0 : tensor<8xf32>) outs(%et : tensor<8x4xf32>) dimensions = [1]
  %n0 = linalg.div ins(%xt, %r0b : tensor<8x4xf32>, tensor<8x4xf32>) outs(%et : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %n, %n3, %n0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>
}
