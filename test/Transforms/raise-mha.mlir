// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-raise-mha))" | FileCheck %s

// Batch-first head split of three projections (Hugging Face's view +
// transpose), causal attention, merge back into the output projection.
// CHECK-LABEL: func.func @batch_first
// CHECK: %[[O:.*]] = attn.mha %arg0 weights(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) heads = 4 causal scale = 0.35355339059327379 : (tensor<2x8x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
// CHECK-NOT: attn.sdpa
// CHECK: return %[[O]]
func.func @batch_first(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %wq = attn.weight "wq" : tensor<32x32xf32>
  %q = attn.linear %x, %wq : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %wk = attn.weight "wk" : tensor<32x32xf32>
  %k = attn.linear %x, %wk : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %wv = attn.weight "wv" : tensor<32x32xf32>
  %v = attn.linear %x, %wv : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %qe = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %qi = tensor.empty() : tensor<2x4x8x8xf32>
  %qt = linalg.transpose ins(%qe : tensor<2x8x4x8xf32>) outs(%qi : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %ke = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %ki = tensor.empty() : tensor<2x4x8x8xf32>
  %kt = linalg.transpose ins(%ke : tensor<2x8x4x8xf32>) outs(%ki : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %ve = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %vi = tensor.empty() : tensor<2x4x8x8xf32>
  %vt = linalg.transpose ins(%ve : tensor<2x8x4x8xf32>) outs(%vi : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %a = attn.sdpa %qt, %kt, %vt score = dot causal scale = 0.35355339059327379 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %mi = tensor.empty() : tensor<2x8x4x8xf32>
  %mt = linalg.transpose ins(%a : tensor<2x4x8x8xf32>) outs(%mi : tensor<2x8x4x8xf32>) permutation = [0, 2, 1, 3]
  %m = tensor.collapse_shape %mt [[0], [1], [2, 3]] : tensor<2x8x4x8xf32> into tensor<2x8x32xf32>
  %wo = attn.weight "wo" : tensor<32x32xf32>
  %o = attn.linear %m, %wo : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  return %o : tensor<2x8x32xf32>
}

// -----

// Heads interleaved with channels (column = channel * H + head): not a head
// split, stays attn.sdpa.
// CHECK-LABEL: func.func @interleaved
// CHECK-NOT: attn.mha
// CHECK: attn.sdpa
func.func @interleaved(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %wq = attn.weight "wq" : tensor<32x32xf32>
  %q = attn.linear %x, %wq : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %wk = attn.weight "wk" : tensor<32x32xf32>
  %k = attn.linear %x, %wk : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %wv = attn.weight "wv" : tensor<32x32xf32>
  %v = attn.linear %x, %wv : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %qe = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [2, 8, 8, 4] : tensor<2x8x32xf32> into tensor<2x8x8x4xf32>
  %qi = tensor.empty() : tensor<2x4x8x8xf32>
  %qt = linalg.transpose ins(%qe : tensor<2x8x8x4xf32>) outs(%qi : tensor<2x4x8x8xf32>) permutation = [0, 3, 1, 2]
  %ke = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %ki = tensor.empty() : tensor<2x4x8x8xf32>
  %kt = linalg.transpose ins(%ke : tensor<2x8x4x8xf32>) outs(%ki : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %ve = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %vi = tensor.empty() : tensor<2x4x8x8xf32>
  %vt = linalg.transpose ins(%ve : tensor<2x8x4x8xf32>) outs(%vi : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %a = attn.sdpa %qt, %kt, %vt score = dot causal scale = 0.35355339059327379 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %mi = tensor.empty() : tensor<2x8x4x8xf32>
  %mt = linalg.transpose ins(%a : tensor<2x4x8x8xf32>) outs(%mi : tensor<2x8x4x8xf32>) permutation = [0, 2, 1, 3]
  %m = tensor.collapse_shape %mt [[0], [1], [2, 3]] : tensor<2x8x4x8xf32> into tensor<2x8x32xf32>
  %wo = attn.weight "wo" : tensor<32x32xf32>
  %o = attn.linear %m, %wo : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  return %o : tensor<2x8x32xf32>
}

// -----

// An additive bias tensor (a padding mask) carries over as score_bias.
// CHECK-LABEL: func.func @bias
// CHECK: attn.mha %arg0 weights({{.*}}) score_bias(%arg1) heads = 4 causal
// CHECK-NOT: attn.sdpa
func.func @bias(%x: tensor<2x8x32xf32>, %bias: tensor<2x1x1x8xf32>) -> tensor<2x8x32xf32> {
  %wq = attn.weight "wq" : tensor<32x32xf32>
  %q = attn.linear %x, %wq : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %wk = attn.weight "wk" : tensor<32x32xf32>
  %k = attn.linear %x, %wk : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %wv = attn.weight "wv" : tensor<32x32xf32>
  %v = attn.linear %x, %wv : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %qe = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %qi = tensor.empty() : tensor<2x4x8x8xf32>
  %qt = linalg.transpose ins(%qe : tensor<2x8x4x8xf32>) outs(%qi : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %ke = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %ki = tensor.empty() : tensor<2x4x8x8xf32>
  %kt = linalg.transpose ins(%ke : tensor<2x8x4x8xf32>) outs(%ki : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %ve = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
  %vi = tensor.empty() : tensor<2x4x8x8xf32>
  %vt = linalg.transpose ins(%ve : tensor<2x8x4x8xf32>) outs(%vi : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %a = attn.sdpa %qt, %kt, %vt bias(%bias : tensor<2x1x1x8xf32>) score = dot causal scale = 0.35355339059327379 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %mi = tensor.empty() : tensor<2x8x4x8xf32>
  %mt = linalg.transpose ins(%a : tensor<2x4x8x8xf32>) outs(%mi : tensor<2x8x4x8xf32>) permutation = [0, 2, 1, 3]
  %m = tensor.collapse_shape %mt [[0], [1], [2, 3]] : tensor<2x8x4x8xf32> into tensor<2x8x32xf32>
  %wo = attn.weight "wo" : tensor<32x32xf32>
  %o = attn.linear %m, %wo : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  return %o : tensor<2x8x32xf32>
}

// -----

// PyTorch's sequence-first nn.MultiheadAttention at batch 2: one packed
// in_proj projection of the [S, B, D] input sliced three ways, batches folded
// into the head dimension (B * H = 8 "heads" of batch 1). The query is the
// [B, S, D] input, the packed weight is bound as three gathers (which
// attn-pack-qkv packs back), and the result is transposed to [S, B, D].
// CHECK-LABEL: func.func @sequence_first
// CHECK-DAG: %[[WQ:.*]] = attn.weight "in_proj" {gather_axis = 0 : i64, gather_extent = 96 : i64, gather_ranges = array<i64: 0, 32>} : tensor<32x32xf32>
// CHECK-DAG: %[[WV:.*]] = attn.weight "in_proj" {gather_axis = 0 : i64, gather_extent = 96 : i64, gather_ranges = array<i64: 64, 32>} : tensor<32x32xf32>
// CHECK-DAG: %[[BQ:.*]] = attn.weight "in_bias" {gather_axis = 0 : i64, gather_extent = 96 : i64, gather_ranges = array<i64: 0, 32>} : tensor<32xf32>
// CHECK: %[[Q:.*]] = linalg.transpose ins(%{{.*}} : tensor<8x2x32xf32>) outs(%{{.*}} : tensor<2x8x32xf32>) permutation = [1, 0, 2]
// CHECK: %[[M:.*]] = attn.mha %[[Q]] weights(%[[WQ]], %{{.*}}, %[[WV]], %{{.*}}) biases(%[[BQ]], %{{.*}}, %{{.*}}, %{{.*}}) heads = 4 scale = 0.35355339059327379
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[M]] : tensor<2x8x32xf32>) outs(%{{.*}} : tensor<8x2x32xf32>) permutation = [1, 0, 2]
// CHECK: return %[[T]] : tensor<8x2x32xf32>
func.func @sequence_first(%x: tensor<8x2x32xf32>) -> tensor<8x2x32xf32> {
  %w = attn.weight "in_proj" : tensor<96x32xf32>
  %b = attn.weight "in_bias" : tensor<96xf32>
  %p = attn.linear %x, %w, %b : (tensor<8x2x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<8x2x96xf32>
  %q = tensor.extract_slice %p[0, 0, 0] [8, 2, 32] [1, 1, 1] : tensor<8x2x96xf32> to tensor<8x2x32xf32>
  %k = tensor.extract_slice %p[0, 0, 32] [8, 2, 32] [1, 1, 1] : tensor<8x2x96xf32> to tensor<8x2x32xf32>
  %v = tensor.extract_slice %p[0, 0, 64] [8, 2, 32] [1, 1, 1] : tensor<8x2x96xf32> to tensor<8x2x32xf32>
  %e = tensor.empty() : tensor<8x8x8xf32>
  %qc = tensor.collapse_shape %q [[0, 1, 2]] : tensor<8x2x32xf32> into tensor<512xf32>
  %qe = tensor.expand_shape %qc [[0, 1, 2]] output_shape [8, 8, 8] : tensor<512xf32> into tensor<8x8x8xf32>
  %qt = linalg.transpose ins(%qe : tensor<8x8x8xf32>) outs(%e : tensor<8x8x8xf32>) permutation = [1, 0, 2]
  %q4 = tensor.expand_shape %qt [[0, 1], [2], [3]] output_shape [1, 8, 8, 8] : tensor<8x8x8xf32> into tensor<1x8x8x8xf32>
  %kc = tensor.collapse_shape %k [[0, 1, 2]] : tensor<8x2x32xf32> into tensor<512xf32>
  %ke = tensor.expand_shape %kc [[0, 1, 2]] output_shape [8, 8, 8] : tensor<512xf32> into tensor<8x8x8xf32>
  %kt = linalg.transpose ins(%ke : tensor<8x8x8xf32>) outs(%e : tensor<8x8x8xf32>) permutation = [1, 0, 2]
  %k4 = tensor.expand_shape %kt [[0, 1], [2], [3]] output_shape [1, 8, 8, 8] : tensor<8x8x8xf32> into tensor<1x8x8x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1, 2]] : tensor<8x2x32xf32> into tensor<512xf32>
  %ve = tensor.expand_shape %vc [[0, 1, 2]] output_shape [8, 8, 8] : tensor<512xf32> into tensor<8x8x8xf32>
  %vt = linalg.transpose ins(%ve : tensor<8x8x8xf32>) outs(%e : tensor<8x8x8xf32>) permutation = [1, 0, 2]
  %v4 = tensor.expand_shape %vt [[0, 1], [2], [3]] output_shape [1, 8, 8, 8] : tensor<8x8x8xf32> into tensor<1x8x8x8xf32>
  %a = attn.sdpa %q4, %k4, %v4 score = dot scale = 0.35355339059327379 : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32>
  %a3 = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<1x8x8x8xf32> into tensor<8x8x8xf32>
  %at = linalg.transpose ins(%a3 : tensor<8x8x8xf32>) outs(%e : tensor<8x8x8xf32>) permutation = [1, 0, 2]
  %m = tensor.collapse_shape %at [[0, 1, 2]] : tensor<8x8x8xf32> into tensor<512xf32>
  %m2 = tensor.expand_shape %m [[0, 1, 2]] output_shape [8, 2, 32] : tensor<512xf32> into tensor<8x2x32xf32>
  %wo = attn.weight "out_proj" : tensor<32x32xf32>
  %bo = attn.weight "out_bias" : tensor<32xf32>
  %o = attn.linear %m2, %wo, %bo : (tensor<8x2x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<8x2x32xf32>
  return %o : tensor<8x2x32xf32>
}
