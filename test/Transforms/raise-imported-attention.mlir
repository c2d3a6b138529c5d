// RUN: attn-opt %s --split-input-file --attn-raise-attention | FileCheck %s

// Attention on [B, H, S, D] as the ONNX importer writes it: each MatMul a
// linalg.batch_matmul between collapse_shape / expand_shape of the leading
// dims, K^T a linalg.transpose, the scale a division by a broadcast scalar.

// CHECK-LABEL: func.func @imported
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x4xf32>, %[[K:.*]]: tensor<1x2x4x4xf32>, %[[V:.*]]: tensor<1x2x4x4xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] score = dot scale = 5.000000e-01 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[O]]
func.func @imported(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : tensor<f32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %twob = linalg.broadcast ins(%two : tensor<f32>) outs(%e4 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3]
  %sd = linalg.div ins(%s4, %twob : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = attn.softmax %sd dim = 3 : tensor<1x2x4x4xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  return %o4 : tensor<1x2x4x4xf32>
}

// -----

// K^T straight from the [B, S, H, D] key (one Transpose [0, 2, 3, 1]): K is
// that key transposed [0, 2, 1, 3]. The scale split between Q and K^T
// (sqrt of 1/sqrt(d) on each, as torch exports SDPA); a constant
// lower-triangular 0 / -inf mask becomes `causal`.

// CHECK-LABEL: func.func @causal_split_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x4xf32>, %[[K:.*]]: tensor<1x4x2x4xf32>, %[[V:.*]]: tensor<1x2x4x4xf32>)
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<1x4x2x4xf32>) outs(%{{.*}} : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[KT]], %[[V]] score = dot causal scale = 0.49999998288572911 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: attn.softmax
// CHECK: return %[[O]]
func.func @causal_split_scale(%q: tensor<1x2x4x4xf32>, %k: tensor<1x4x2x4xf32>, %v: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %r = arith.constant dense<0.707106769> : tensor<f32>
  %mask = arith.constant dense<[[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %rb = linalg.broadcast ins(%r : tensor<f32>) outs(%e4 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3]
  %qs = linalg.mul ins(%q, %rb : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x2x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) permutation = [0, 2, 3, 1]
  %kts = linalg.mul ins(%kt, %rb : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %qc = tensor.collapse_shape %qs [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %ktc = tensor.collapse_shape %kts [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %mc = tensor.collapse_shape %mask [[0, 1, 2], [3]] : tensor<1x1x4x4xf32> into tensor<4x4xf32>
  %mb = linalg.broadcast ins(%mc : tensor<4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) dimensions = [0, 1]
  %sm = linalg.add ins(%s4, %mb : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = attn.softmax %sm dim = 3 : tensor<1x2x4x4xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  return %o4 : tensor<1x2x4x4xf32>
}

// -----

// A padding mask [B, 1, 1, Sk] built from an input, broadcast over heads and
// queries, becomes a [B, 1, 1, Sk] bias (attn.sdpa broadcasts it). A
// constant mask that is not causal (upper-triangular) is a bias as well.

// CHECK-LABEL: func.func @masks
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x4x4xf32>, %[[K:.*]]: tensor<2x2x4x4xf32>, %[[V:.*]]: tensor<2x2x4x4xf32>, %[[M:.*]]: tensor<2x4xf32>)
// CHECK: %[[B:.*]] = tensor.expand_shape %[[M]] {{\[}}[0], [1, 2, 3]] output_shape [2, 1, 1, 4] : tensor<2x4xf32> into tensor<2x1x1x4xf32>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%[[B]] : tensor<2x1x1x4xf32>) score = dot scale = 1.000000e+00 :
// CHECK: %[[U:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 4] : tensor<4x4xf32> into tensor<1x1x4x4xf32>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%[[U]] : tensor<1x1x4x4xf32>) score = dot scale = 1.000000e+00 :
// CHECK-NOT: attn.softmax
// CHECK: return
func.func @masks(%q: tensor<2x2x4x4xf32>, %k: tensor<2x2x4x4xf32>, %v: tensor<2x2x4x4xf32>, %m: tensor<2x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %upper = arith.constant dense<[[0.0, 0.0, 0.0, 0.0], [0xFF800000, 0.0, 0.0, 0.0], [0xFF800000, 0xFF800000, 0.0, 0.0], [0xFF800000, 0xFF800000, 0xFF800000, 0.0]]> : tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<2x2x4x4xf32>
  %e3 = tensor.empty() : tensor<4x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x2x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %mb = linalg.broadcast ins(%m : tensor<2x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) dimensions = [1, 2]
  %ub = linalg.broadcast ins(%upper : tensor<4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) dimensions = [0, 1]

  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%z3 : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 2, 4, 4] : tensor<4x4x4xf32> into tensor<2x2x4x4xf32>
  %sm = linalg.add ins(%mb, %s4 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %sm dim = 3 : tensor<2x2x4x4xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%z3 : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 2, 4, 4] : tensor<4x4x4xf32> into tensor<2x2x4x4xf32>

  %s2 = linalg.batch_matmul ins(%qc, %ktc : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%z3 : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %s24 = tensor.expand_shape %s2 [[0, 1], [2], [3]] output_shape [2, 2, 4, 4] : tensor<4x4x4xf32> into tensor<2x2x4x4xf32>
  %sm2 = linalg.add ins(%s24, %ub : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p2 = attn.softmax %sm2 dim = 3 : tensor<2x2x4x4xf32>
  %pc2 = tensor.collapse_shape %p2 [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %o2 = linalg.batch_matmul ins(%pc2, %vc : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%z3 : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %o24 = tensor.expand_shape %o2 [[0, 1], [2], [3]] output_shape [2, 2, 4, 4] : tensor<4x4x4xf32> into tensor<2x2x4x4xf32>
  return %o4, %o24 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
}

// -----

// Near misses: softmax over the query dimension; a scale by a tensor that
// is not constant; the scores also returned.

// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @near_misses(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %t: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>

  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %p = attn.softmax %s4 dim = 2 : tensor<1x2x4x4xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>

  %s2 = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s24 = tensor.expand_shape %s2 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %st = linalg.mul ins(%s24, %t : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = attn.softmax %st dim = 3 : tensor<1x2x4x4xf32>
  %pc2 = tensor.collapse_shape %p2 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o2 = linalg.batch_matmul ins(%pc2, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o24 = tensor.expand_shape %o2 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>

  %s3 = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s34 = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %p3 = attn.softmax %s34 dim = 3 : tensor<1x2x4x4xf32>
  %pc3 = tensor.collapse_shape %p3 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o3 = linalg.batch_matmul ins(%pc3, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o34 = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  return %o4, %o24, %o34, %s34 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// GPT-2's causal mask: Where(tril buffer, scores / sqrt(d), finfo.min), the
// buffer folded at import to a constant i1 lower-triangular pattern, then an
// additive padding mask. The Where becomes `causal`, the mask the bias. With
// an upper-triangular buffer (not causal) nothing is raised.

// CHECK-LABEL: func.func @where_causal
// CHECK: %[[B:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 1, 1, 4]
// CHECK: attn.sdpa %arg0, %arg1, %arg2 bias(%[[B]] : tensor<1x1x1x4xf32>) score = dot causal scale = 5.000000e-01 :
// CHECK: attn.softmax
// CHECK: return
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @where_causal(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %m: tensor<1x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : tensor<f32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %tril = arith.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %triu = arith.constant dense<[[[[true, true, true, true], [false, true, true, true], [false, false, true, true], [false, false, false, true]]]]> : tensor<1x1x4x4xi1>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %e4b = tensor.empty() : tensor<1x2x4x4xi1>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %twob = linalg.broadcast ins(%two : tensor<f32>) outs(%e4 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3]
  %minb = linalg.broadcast ins(%min : tensor<f32>) outs(%e4 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3]
  %trilc = tensor.collapse_shape %tril [[0, 1, 2], [3]] : tensor<1x1x4x4xi1> into tensor<4x4xi1>
  %trilb = linalg.broadcast ins(%trilc : tensor<4x4xi1>) outs(%e4b : tensor<1x2x4x4xi1>) dimensions = [0, 1]
  %triuc = tensor.collapse_shape %triu [[0, 1, 2], [3]] : tensor<1x1x4x4xi1> into tensor<4x4xi1>
  %triub = linalg.broadcast ins(%triuc : tensor<4x4xi1>) outs(%e4b : tensor<1x2x4x4xi1>) dimensions = [0, 1]
  %mc = tensor.collapse_shape %m [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
  %mb = linalg.broadcast ins(%mc : tensor<4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2]

  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %sd = linalg.div ins(%s4, %twob : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %w = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%trilb, %sd, %minb : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %out: f32):
    %r = arith.select %c, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %wm = linalg.add ins(%w, %mb : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = attn.softmax %wm dim = 3 : tensor<1x2x4x4xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>

  %s2 = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s24 = tensor.expand_shape %s2 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %w2 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%triub, %s24, %minb : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %out: f32):
    %r = arith.select %c, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %p2 = attn.softmax %w2 dim = 3 : tensor<1x2x4x4xf32>
  %pc2 = tensor.collapse_shape %p2 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o2 = linalg.batch_matmul ins(%pc2, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o24 = tensor.expand_shape %o2 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  return %o4, %o24 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// torch's decomposition of scaled_dot_product_attention as the dynamo
// exporter writes it: K^T as a 3-D transpose of the collapsed keys,
// expanded back; the scale split between Q and K^T; after the softmax,
// Where(IsNaN(p), 0, p) (zeros for a row whose keys are all masked, which
// attn.sdpa gives too), so the guard folds into the attention.

// CHECK-LABEL: func.func @torch_sdpa_decomposition
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>, %[[M:.*]]: tensor<1x1x4x4xf32>)
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%{{.*}} : tensor<1x1x4x4xf32>) score = dot scale = 0.353553{{[0-9]*}} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NOT: attn.softmax
// CHECK-NOT: arith.cmpf
// CHECK: return %[[O]]
func.func @torch_sdpa_decomposition(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %r = arith.constant dense<0.594603539> : tensor<f32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %eq = tensor.empty() : tensor<1x2x4x8xf32>
  %ekt = tensor.empty() : tensor<1x2x8x4xf32>
  %es = tensor.empty() : tensor<1x2x4x4xf32>
  %kc = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %e3t = tensor.empty() : tensor<2x8x4xf32>
  %kct = linalg.transpose ins(%kc : tensor<2x4x8xf32>) outs(%e3t : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %kt = tensor.expand_shape %kct [[0, 1], [2], [3]] output_shape [1, 2, 8, 4] : tensor<2x8x4xf32> into tensor<1x2x8x4xf32>
  %rq = linalg.broadcast ins(%r : tensor<f32>) outs(%eq : tensor<1x2x4x8xf32>) dimensions = [0, 1, 2, 3]
  %qs = linalg.mul ins(%q, %rq : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%eq : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %rk = linalg.broadcast ins(%r : tensor<f32>) outs(%ekt : tensor<1x2x8x4xf32>) dimensions = [0, 1, 2, 3]
  %kts = linalg.mul ins(%kt, %rk : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) outs(%ekt : tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %qc = tensor.collapse_shape %qs [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %ktc = tensor.collapse_shape %kts [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %mc = tensor.collapse_shape %m [[0], [1, 2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
  %mb = linalg.broadcast ins(%mc : tensor<1x4x4xf32>) outs(%es : tensor<1x2x4x4xf32>) dimensions = [1]
  %sm = linalg.add ins(%s4, %mb : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%es : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = attn.softmax %sm dim = 3 : tensor<1x2x4x4xf32>
  %eb = tensor.empty() : tensor<1x2x4x4xi1>
  %nan = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x2x4x4xf32>) outs(%eb : tensor<1x2x4x4xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf uno, %in, %in : f32
    linalg.yield %c : i1
  } -> tensor<1x2x4x4xi1>
  %zb = linalg.broadcast ins(%z : tensor<f32>) outs(%es : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3]
  %pg = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nan, %zb, %p : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%es : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %out: f32):
    %sel = arith.select %c, %a, %b : f32
    linalg.yield %sel : f32
  } -> tensor<1x2x4x4xf32>
  %pc = tensor.collapse_shape %pg [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %e38 = tensor.empty() : tensor<2x4x8xf32>
  %z38 = linalg.fill ins(%zero : f32) outs(%e38 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%z38 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32>
  return %o4 : tensor<1x2x4x8xf32>
}

// -----

// The guard replaces NaNs by something other than 0: not attn.sdpa's rows
// of zeros, so nothing is raised.

// CHECK-LABEL: func.func @nan_guard_not_zero
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @nan_guard_not_zero(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant dense<1.0> : tensor<f32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %p = attn.softmax %s4 dim = 3 : tensor<1x2x4x4xf32>
  %eb = tensor.empty() : tensor<1x2x4x4xi1>
  %nan = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x2x4x4xf32>) outs(%eb : tensor<1x2x4x4xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf uno, %in, %in : f32
    linalg.yield %c : i1
  } -> tensor<1x2x4x4xi1>
  %ob = linalg.broadcast ins(%one : tensor<f32>) outs(%e4 : tensor<1x2x4x4xf32>) dimensions = [0, 1, 2, 3]
  %pg = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nan, %ob, %p : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e4 : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %out: f32):
    %sel = arith.select %c, %a, %b : f32
    linalg.yield %sel : f32
  } -> tensor<1x2x4x4xf32>
  %pc = tensor.collapse_shape %pg [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z3 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  return %o4 : tensor<1x2x4x4xf32>
}

// -----

// BLOOM's baddbmm: the score product, scaled, plus an ALiBi bias [B*H, 1,
// Sk] broadcast over the queries, all in the [B*H, Sq, Sk] domain of the
// batch matmul (K^T a 3-D transpose of the collapsed keys), then expanded to
// [B, H, Sq, Sk] and given the [B, 1, Sq, Sk] mask. The ALiBi bias becomes
// [B, H, 1, Sk]; the two biases are summed into one [B, H, Sq, Sk] bias.

// CHECK-LABEL: func.func @bloom_baddbmm
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x3x4xf32>, %[[K:.*]]: tensor<2x2x3x4xf32>, %[[V:.*]]: tensor<2x2x3x4xf32>, %[[ALIBI:.*]]: tensor<4x3xf32>, %[[MASK:.*]]: tensor<2x3x3xf32>)
// CHECK-DAG: %[[A4:.*]] = tensor.expand_shape %[[ALIBI]] {{\[\[}}0, 1, 2], [3]] output_shape [2, 2, 1, 3] : tensor<4x3xf32> into tensor<2x2x1x3xf32>
// CHECK-DAG: %[[M4:.*]] = tensor.expand_shape %[[MASK]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 1, 3, 3] : tensor<2x3x3xf32> into tensor<2x1x3x3xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[M4]], %[[A4]] : tensor<2x1x3x3xf32>, tensor<2x2x1x3xf32>)
// CHECK: arith.addf
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%[[SUM]] : tensor<2x2x3x3xf32>) score = dot scale = 5.000000e-01
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %[[O]]
func.func @bloom_baddbmm(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x3x4xf32>, %v: tensor<2x2x3x4xf32>, %alibi: tensor<4x3xf32>, %mask: tensor<2x3x3xf32>) -> tensor<2x2x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant dense<0.5> : tensor<f32>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
  %kc = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
  %ekt = tensor.empty() : tensor<4x4x3xf32>
  %kt = linalg.transpose ins(%kc : tensor<4x3x4xf32>) outs(%ekt : tensor<4x4x3xf32>) permutation = [0, 2, 1]
  %e3 = tensor.empty() : tensor<4x3x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %sc = linalg.batch_matmul ins(%qc, %kt : tensor<4x3x4xf32>, tensor<4x4x3xf32>) outs(%z3 : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %hb = linalg.broadcast ins(%half : tensor<f32>) outs(%e3 : tensor<4x3x3xf32>) dimensions = [0, 1, 2]
  %scaled = linalg.mul ins(%sc, %hb : tensor<4x3x3xf32>, tensor<4x3x3xf32>) outs(%e3 : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %ab = linalg.broadcast ins(%alibi : tensor<4x3xf32>) outs(%e3 : tensor<4x3x3xf32>) dimensions = [1]
  %biased = linalg.add ins(%scaled, %ab : tensor<4x3x3xf32>, tensor<4x3x3xf32>) outs(%e3 : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %s4 = tensor.expand_shape %biased [[0, 1], [2], [3]] output_shape [2, 2, 3, 3] : tensor<4x3x3xf32> into tensor<2x2x3x3xf32>
  %e4 = tensor.empty() : tensor<2x2x3x3xf32>
  %mb = linalg.broadcast ins(%mask : tensor<2x3x3xf32>) outs(%e4 : tensor<2x2x3x3xf32>) dimensions = [1]
  %sm = linalg.add ins(%s4, %mb : tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>) outs(%e4 : tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %p = attn.softmax %sm dim = 3 : tensor<2x2x3x3xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x2x3x3xf32> into tensor<4x3x3xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
  %eo = tensor.empty() : tensor<4x3x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x3x3xf32>, tensor<4x3x4xf32>) outs(%zo : tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 2, 3, 4] : tensor<4x3x4xf32> into tensor<2x2x3x4xf32>
  return %o4 : tensor<2x2x3x4xf32>
}

// -----

// A scale after the bias add would scale the bias too: not raised.

// CHECK-LABEL: func.func @bloom_scaled_bias
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @bloom_scaled_bias(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x3x4xf32>, %v: tensor<2x2x3x4xf32>, %alibi: tensor<4x3xf32>) -> tensor<2x2x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant dense<0.5> : tensor<f32>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
  %kc = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
  %ekt = tensor.empty() : tensor<4x4x3xf32>
  %kt = linalg.transpose ins(%kc : tensor<4x3x4xf32>) outs(%ekt : tensor<4x4x3xf32>) permutation = [0, 2, 1]
  %e3 = tensor.empty() : tensor<4x3x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %sc = linalg.batch_matmul ins(%qc, %kt : tensor<4x3x4xf32>, tensor<4x4x3xf32>) outs(%z3 : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %ab = linalg.broadcast ins(%alibi : tensor<4x3xf32>) outs(%e3 : tensor<4x3x3xf32>) dimensions = [1]
  %biased = linalg.add ins(%sc, %ab : tensor<4x3x3xf32>, tensor<4x3x3xf32>) outs(%e3 : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %s4 = tensor.expand_shape %biased [[0, 1], [2], [3]] output_shape [2, 2, 3, 3] : tensor<4x3x3xf32> into tensor<2x2x3x3xf32>
  %e4 = tensor.empty() : tensor<2x2x3x3xf32>
  %hb = linalg.broadcast ins(%half : tensor<f32>) outs(%e4 : tensor<2x2x3x3xf32>) dimensions = [0, 1, 2, 3]
  %sm = linalg.mul ins(%s4, %hb : tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>) outs(%e4 : tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %p = attn.softmax %sm dim = 3 : tensor<2x2x3x3xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x2x3x3xf32> into tensor<4x3x3xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
  %eo = tensor.empty() : tensor<4x3x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x3x3xf32>, tensor<4x3x4xf32>) outs(%zo : tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 2, 3, 4] : tensor<4x3x4xf32> into tensor<2x2x3x4xf32>
  return %o4 : tensor<2x2x3x4xf32>
}
