// RUN: attn-opt %s --split-input-file --attn-raise-attention | FileCheck %s

// Unfused attention as exported from PyTorch: Q @ K^T through a transpose,
// a division by sqrt(d) as a filled tensor, linalg.softmax, and the product
// with V. N = 2, Sq = 4, Sk = 6, D = 8, Dv = 5.

// CHECK-LABEL: func.func @pytorch_export
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>, %[[V:.*]]: tensor<2x6x5xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32>
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 6, 8] : tensor<2x6x8xf32> into tensor<1x2x6x8xf32>
// CHECK: %[[V4:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 6, 5] : tensor<2x6x5xf32> into tensor<1x2x6x5xf32>
// CHECK: %[[O4:.*]] = attn.sdpa %[[Q4]], %[[K4]], %[[V4]] score = dot scale = 2.500000e-01 : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x5xf32> -> tensor<1x2x4x5xf32>
// CHECK: %[[O:.*]] = tensor.collapse_shape %[[O4]] {{\[}}[0, 1], [2], [3]] : tensor<1x2x4x5xf32> into tensor<2x4x5xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[O]] : tensor<2x4x5xf32>
func.func @pytorch_export(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%four : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%s, %c : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// Scale by a multiplication in a single-input linalg.generic.

// CHECK-LABEL: func.func @generic_mul_scale
// CHECK-NOT: linalg.
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} score = dot scale = 1.250000e-01 : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x5xf32> -> tensor<1x2x4x5xf32>
// CHECK-NOT: linalg.
// CHECK: return
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @generic_mul_scale(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// Division in a generic, by a constant written as `divf %in, %cst`.

// CHECK-LABEL: func.func @generic_div_scale
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} score = dot scale = 2.500000e-01 :
// CHECK-NOT: linalg.
// CHECK: return
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @generic_div_scale(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %four : f32
    linalg.yield %m : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// An additive mask through linalg.add (mask first) becomes the bias; the
// scale is a linalg.mul by a splat constant (constant first).

// CHECK-LABEL: func.func @linalg_add_mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x4x6xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[M4:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 4, 6] : tensor<2x4x6xf32> into tensor<1x2x4x6xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} bias(%[[M4]] : tensor<1x2x4x6xf32>) score = dot scale = 5.000000e-01 : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x5xf32> -> tensor<1x2x4x5xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @linalg_add_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %mask: tensor<2x4x6xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant dense<0.5> : tensor<2x4x6xf32>
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.mul ins(%half, %s : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %masked = linalg.add ins(%mask, %scaled : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// attn.softmax (dim -1) and attn.add (scores first); the scale is
// arith.divf on tensors by a splat constant.

// CHECK-LABEL: func.func @attn_softmax_add
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x4x6xf32>)
// CHECK-NOT: attn.softmax
// CHECK: %[[M4:.*]] = tensor.expand_shape %[[M]]
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} bias(%[[M4]] : tensor<1x2x4x6xf32>) score = dot scale = 2.500000e-01 :
// CHECK-NOT: attn.add
// CHECK-NOT: attn.softmax
// CHECK-NOT: arith.divf
// CHECK-NOT: linalg.
// CHECK: return
func.func @attn_softmax_add(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %mask: tensor<2x4x6xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant dense<4.0> : tensor<2x4x6xf32>
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = arith.divf %s, %four : tensor<2x4x6xf32>
  %masked = attn.add %scaled, %mask : tensor<2x4x6xf32>
  %p = attn.softmax %masked dim = -1 : tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// Rank 2: linalg.matmul with a [1, 0] transpose, inputs become [1, 1, S, D];
// the scale is arith.mulf by a splat constant, attn.softmax has dim 1 (the
// last).

// CHECK-LABEL: func.func @matmul_rank2
// CHECK-SAME: (%[[Q:.*]]: tensor<4x8xf32>, %[[K:.*]]: tensor<6x8xf32>, %[[V:.*]]: tensor<6x5xf32>)
// CHECK: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 8] : tensor<4x8xf32> into tensor<1x1x4x8xf32>
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<6x8xf32> into tensor<1x1x6x8xf32>
// CHECK: %[[V4:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 6, 5] : tensor<6x5xf32> into tensor<1x1x6x5xf32>
// CHECK: %[[O4:.*]] = attn.sdpa %[[Q4]], %[[K4]], %[[V4]] score = dot scale = 1.250000e-01 : tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x5xf32> -> tensor<1x1x4x5xf32>
// CHECK: %[[O:.*]] = tensor.collapse_shape %[[O4]] {{\[}}[0, 1, 2], [3]] : tensor<1x1x4x5xf32> into tensor<4x5xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[O]] : tensor<4x5xf32>
func.func @matmul_rank2(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %eighth = arith.constant dense<0.125> : tensor<4x6xf32>
  %kt0 = tensor.empty() : tensor<8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<6x8xf32>) outs(%kt0 : tensor<8x6xf32>) permutation = [1, 0]
  %s0 = tensor.empty() : tensor<4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<4x8xf32>, tensor<8x6xf32>) outs(%sz : tensor<4x6xf32>) -> tensor<4x6xf32>
  %scaled = arith.mulf %s, %eighth : tensor<4x6xf32>
  %p = attn.softmax %scaled dim = 1 : tensor<4x6xf32>
  %o0 = tensor.empty() : tensor<4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x5xf32>) outs(%oz : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %o : tensor<4x5xf32>
}

// -----

// No scale at all: scale = 1 is still set explicitly; f16 throughout.

// CHECK-LABEL: func.func @no_scale
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} score = dot scale = 1.000000e+00 : tensor<1x2x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x5xf16> -> tensor<1x2x4x5xf16>
// CHECK-NOT: linalg.
// CHECK: return
func.func @no_scale(%q: tensor<2x4x8xf16>, %k: tensor<2x6x8xf16>, %v: tensor<2x6x5xf16>) -> tensor<2x4x5xf16> {
  %zero = arith.constant 0.0 : f16
  %kt0 = tensor.empty() : tensor<2x8x6xf16>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf16>) outs(%kt0 : tensor<2x8x6xf16>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf16>
  %sz = linalg.fill ins(%zero : f16) outs(%s0 : tensor<2x4x6xf16>) -> tensor<2x4x6xf16>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf16>, tensor<2x8x6xf16>) outs(%sz : tensor<2x4x6xf16>) -> tensor<2x4x6xf16>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x6xf16>) outs(%s0 : tensor<2x4x6xf16>) -> tensor<2x4x6xf16>
  %o0 = tensor.empty() : tensor<2x4x5xf16>
  %oz = linalg.fill ins(%zero : f16) outs(%o0 : tensor<2x4x5xf16>) -> tensor<2x4x5xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf16>, tensor<2x6x5xf16>) outs(%oz : tensor<2x4x5xf16>) -> tensor<2x4x5xf16>
  return %o : tensor<2x4x5xf16>
}

// -----

// K^T through the indexing maps of linalg.batch_matmul (no transpose op);
// the accumulator is a zero splat constant.

// CHECK-LABEL: func.func @batch_matmul_transposed_b_maps
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>, %[[V:.*]]: tensor<2x6x5xf32>)
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 6, 8]
// CHECK: attn.sdpa %{{.*}}, %[[K4]], %{{.*}} score = dot scale = 2.500000e-01 :
// CHECK-NOT: linalg.
// CHECK: return
func.func @batch_matmul_transposed_b_maps(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %sz = arith.constant dense<0.0> : tensor<2x4x6xf32>
  %four = arith.constant 4.0 : f32
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<2x4x8xf32>, tensor<2x6x8xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%four : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%s, %c : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// K^T through the indexing maps of a rank-2 linalg.matmul, with a mask.

// CHECK-LABEL: func.func @matmul_transposed_b_maps
// CHECK-SAME: (%[[Q:.*]]: tensor<4x8xf32>, %[[K:.*]]: tensor<6x8xf32>, %[[V:.*]]: tensor<6x5xf32>, %[[M:.*]]: tensor<4x6xf32>)
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 6, 8]
// CHECK: %[[M4:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 6]
// CHECK: attn.sdpa %{{.*}}, %[[K4]], %{{.*}} bias(%[[M4]] : tensor<1x1x4x6xf32>) score = dot scale = 1.000000e+00 :
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_transposed_b_maps(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %mask: tensor<4x6xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
      ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%sz : tensor<4x6xf32>) -> tensor<4x6xf32>
  %masked = linalg.add ins(%s, %mask : tensor<4x6xf32>, tensor<4x6xf32>) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%masked : tensor<4x6xf32>) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o0 = tensor.empty() : tensor<4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x5xf32>) outs(%oz : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %o : tensor<4x5xf32>
}

// -----

// Two attentions in one function are both raised.

// CHECK-LABEL: func.func @two_attentions
// CHECK: %[[A:.*]] = attn.sdpa
// CHECK: %[[A3:.*]] = tensor.collapse_shape %[[A]]
// CHECK: attn.sdpa
// CHECK-NOT: linalg.
// CHECK: return
func.func @two_attentions(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<6x8xf32>) outs(%kt0 : tensor<8x6xf32>) permutation = [1, 0]
  %s0 = tensor.empty() : tensor<4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<4x8xf32>, tensor<8x6xf32>) outs(%sz : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o0 = tensor.empty() : tensor<4x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%oz : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = linalg.matmul ins(%o, %kt : tensor<4x8xf32>, tensor<8x6xf32>) outs(%sz : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p2 = linalg.softmax dimension(1) ins(%s2 : tensor<4x6xf32>) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o2 = linalg.matmul ins(%p2, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%oz : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o2 : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Near misses: left untouched.
//===----------------------------------------------------------------------===//

// Softmax over dimension 1 (the query axis), not the last.

// CHECK-LABEL: func.func @softmax_not_last_dim
// CHECK-NOT: attn.sdpa
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul
// CHECK: linalg.div
// CHECK: linalg.softmax dimension(1)
// CHECK: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @softmax_not_last_dim(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%four : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%s, %c : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(1) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// attn.softmax over dim 0 of a rank-2 score matrix.

// CHECK-LABEL: func.func @attn_softmax_dim0
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax %{{.*}} dim = 0
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @attn_softmax_dim0(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<6x8xf32>) outs(%kt0 : tensor<8x6xf32>) permutation = [1, 0]
  %s0 = tensor.empty() : tensor<4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<4x8xf32>, tensor<8x6xf32>) outs(%sz : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = attn.softmax %s dim = 0 : tensor<4x6xf32>
  %o0 = tensor.empty() : tensor<4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x5xf32>) outs(%oz : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %o : tensor<4x5xf32>
}

// -----

// The divisor is a function argument, not a constant.

// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT: attn.sdpa
// CHECK: linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.div
// CHECK: linalg.softmax dimension(2)
// CHECK: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @scale_not_constant(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %d: f32) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%d : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%s, %c : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// The generic multiplies by a function argument, not a constant.

// CHECK-LABEL: func.func @generic_scale_not_constant
// CHECK-NOT: attn.sdpa
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.softmax dimension(2)
// CHECK-NOT: attn.sdpa
// CHECK: return
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @generic_scale_not_constant(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %scale: f32) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// A constant divided by the scores is not a scale.

// CHECK-LABEL: func.func @constant_over_scores
// CHECK-NOT: attn.sdpa
// CHECK: linalg.div ins(%{{.*}}, %{{.*}} : tensor<2x4x6xf32>, tensor<2x4x6xf32>)
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @constant_over_scores(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%four : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%c, %s : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// The raw scores are also returned: two uses.

// CHECK-LABEL: func.func @scores_used_twice
// CHECK-NOT: attn.sdpa
// CHECK: %[[S:.*]] = linalg.batch_matmul
// CHECK: linalg.div ins(%[[S]],
// CHECK: linalg.softmax dimension(2)
// CHECK: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
// CHECK: return %{{.*}}, %[[S]]
func.func @scores_used_twice(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%four : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%s, %c : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o, %s : tensor<2x4x5xf32>, tensor<2x4x6xf32>
}

// -----

// The attention probabilities are also returned: two uses of the softmax.

// CHECK-LABEL: func.func @probs_used_twice
// CHECK-NOT: attn.sdpa
// CHECK: %[[P:.*]] = linalg.softmax dimension(2)
// CHECK: linalg.batch_matmul ins(%[[P]],
// CHECK-NOT: attn.sdpa
// CHECK: return %{{.*}}, %[[P]]
func.func @probs_used_twice(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o, %p : tensor<2x4x5xf32>, tensor<2x4x6xf32>
}

// -----

// The transpose permutes [1, 2, 0]: the scores are Q @ K^T for K = the key
// transposed [1, 0, 2] (its [Sk, N, D] read as [N, Sk, D]), which the raise
// materializes instead of reading the key as K.

// CHECK-LABEL: func.func @transpose_other_permutation
// CHECK-SAME: (%{{.*}}: tensor<6x4x8xf32>, %[[K:.*]]: tensor<6x6x8xf32>,
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<6x6x8xf32>) outs(%{{.*}} : tensor<6x6x8xf32>) permutation = [1, 0, 2]
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[KT]]
// CHECK: attn.sdpa %{{.*}}, %[[K4]], %{{.*}} score = dot scale = 1.000000e+00
// CHECK-NOT: linalg.softmax
// CHECK: return
func.func @transpose_other_permutation(%q: tensor<6x4x8xf32>, %k: tensor<6x6x8xf32>, %v: tensor<6x6x5xf32>) -> tensor<6x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<6x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<6x6x8xf32>) outs(%kt0 : tensor<6x8x6xf32>) permutation = [1, 2, 0]
  %s0 = tensor.empty() : tensor<6x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<6x4x8xf32>, tensor<6x8x6xf32>) outs(%sz : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<6x4x6xf32>) outs(%s0 : tensor<6x4x6xf32>) -> tensor<6x4x6xf32>
  %o0 = tensor.empty() : tensor<6x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<6x4x5xf32>) -> tensor<6x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<6x4x6xf32>, tensor<6x6x5xf32>) outs(%oz : tensor<6x4x5xf32>) -> tensor<6x4x5xf32>
  return %o : tensor<6x4x5xf32>
}

// -----

// No transpose at all: Q @ K with K already [D, Sk] is not Q @ K^T.

// CHECK-LABEL: func.func @no_transpose
// CHECK-NOT: attn.sdpa
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x6xf32>)
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @no_transpose(%q: tensor<4x8xf32>, %kt: tensor<8x6xf32>, %v: tensor<6x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<4x8xf32>, tensor<8x6xf32>) outs(%sz : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o0 = tensor.empty() : tensor<4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x5xf32>) outs(%oz : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %o : tensor<4x5xf32>
}

// -----

// The mask is added after the softmax, to the probabilities.

// CHECK-LABEL: func.func @mask_after_softmax
// CHECK-NOT: attn.sdpa
// CHECK: %[[P:.*]] = linalg.softmax dimension(2)
// CHECK: %[[PM:.*]] = linalg.add ins(%[[P]], %{{.*}} :
// CHECK: linalg.batch_matmul ins(%[[PM]],
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @mask_after_softmax(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %mask: tensor<2x4x6xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%four : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%s, %c : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %pm = linalg.add ins(%p, %mask : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%pm, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// The mask is added before the scale: (Q @ K^T + M) / c scales the mask too,
// so the scaled sum is not scores + bias.

// CHECK-LABEL: func.func @mask_before_scale
// CHECK-NOT: attn.sdpa
// CHECK: linalg.add
// CHECK: linalg.div
// CHECK: linalg.softmax dimension(2)
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @mask_before_scale(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>, %mask: tensor<2x4x6xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %masked = linalg.add ins(%s, %mask : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %c = linalg.fill ins(%four : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %scaled = linalg.div ins(%masked, %c : tensor<2x4x6xf32>, tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// The scores accumulate into a tensor of ones, not zeros: O != softmax(QK^T)V.

// CHECK-LABEL: func.func @accumulator_not_zero
// CHECK-NOT: attn.sdpa
// CHECK: linalg.softmax dimension(2)
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @accumulator_not_zero(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %s1 = linalg.fill ins(%one : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%s1 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x6xf32>) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

// -----

// Dynamic shapes are not raised.

// CHECK-LABEL: func.func @dynamic_shapes
// CHECK-NOT: attn.sdpa
// CHECK: linalg.softmax dimension(1)
// CHECK-NOT: attn.sdpa
// CHECK: return
func.func @dynamic_shapes(%q: tensor<?x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x5xf32>, %n: index) -> tensor<?x5xf32> {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<6x8xf32>) outs(%kt0 : tensor<8x6xf32>) permutation = [1, 0]
  %s0 = tensor.empty(%n) : tensor<?x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<?x6xf32>) -> tensor<?x6xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<?x8xf32>, tensor<8x6xf32>) outs(%sz : tensor<?x6xf32>) -> tensor<?x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<?x6xf32>) outs(%s0 : tensor<?x6xf32>) -> tensor<?x6xf32>
  %o0 = tensor.empty(%n) : tensor<?x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<?x5xf32>) -> tensor<?x5xf32>
  %o = linalg.matmul ins(%p, %v : tensor<?x6xf32>, tensor<6x5xf32>) outs(%oz : tensor<?x5xf32>) -> tensor<?x5xf32>
  return %o : tensor<?x5xf32>
}

// -----

// PyTorch nn.MultiheadAttention as exported and imported: q divided by
// sqrt(d) before the product, K^T by one transpose [1, 2, 0] of the
// [S, N, D] head-split key, a softmax over the last dimension.

// CHECK-LABEL: func.func @torch_mha
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<6x2x8xf32>, %[[V:.*]]: tensor<2x6x5xf32>)
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<6x2x8xf32>) outs(%{{.*}} : tensor<2x6x8xf32>) permutation = [1, 0, 2]
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[KT]]
// CHECK: attn.sdpa %{{.*}}, %[[K4]], %{{.*}} score = dot scale = 0.35355339
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: linalg.div
func.func @torch_mha(%q: tensor<2x4x8xf32>, %k: tensor<6x2x8xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense<2.82842708> : tensor<f32>
  %eq = tensor.empty() : tensor<2x4x8xf32>
  %cb = linalg.broadcast ins(%c : tensor<f32>) outs(%eq : tensor<2x4x8xf32>) dimensions = [0, 1, 2]
  %qs = linalg.div ins(%q, %cb : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%eq : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %kt0 = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<6x2x8xf32>) outs(%kt0 : tensor<2x8x6xf32>) permutation = [1, 2, 0]
  %s0 = tensor.empty() : tensor<2x4x6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%qs, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%sz : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %p = attn.softmax %s dim = 2 : tensor<2x4x6xf32>
  %o0 = tensor.empty() : tensor<2x4x5xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%oz : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}
