// RUN: attn-opt %s --split-input-file --attn-narrow-score-bias | FileCheck %s

// A padding bias built as exporters build it: the key row [B, Sk] expanded
// to [B, 1, 1, Sk], broadcast along the queries, and combined elementwise
// with a splat broadcast the same way. Every query row is the same, so the
// attention gets the first one.
// CHECK-LABEL: func.func @padding_mask
// CHECK:         %[[FULL:.*]] = linalg.add
// CHECK:         %[[ROW:.*]] = tensor.extract_slice %[[FULL]][0, 0, 0, 0] [2, 1, 1, 8] [1, 1, 1, 1] : tensor<2x1x4x8xf32> to tensor<2x1x1x8xf32>
// CHECK:         attn.sdpa {{.*}} bias(%[[ROW]] : tensor<2x1x1x8xf32>)
func.func @padding_mask(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x8x16xf32>, %keys: tensor<2x8xf32>) -> tensor<2x1x4x16xf32> {
  %e = tensor.expand_shape %keys [[0, 1, 2], [3]] output_shape [2, 1, 1, 8] : tensor<2x8xf32> into tensor<2x1x1x8xf32>
  %c = tensor.collapse_shape %e [[0], [1, 2], [3]] : tensor<2x1x1x8xf32> into tensor<2x1x8xf32>
  %init = tensor.empty() : tensor<2x1x4x8xf32>
  %b = linalg.broadcast ins(%c : tensor<2x1x8xf32>) outs(%init : tensor<2x1x4x8xf32>) dimensions = [2]
  %zero = arith.constant dense<0.0> : tensor<f32>
  %z = linalg.broadcast ins(%zero : tensor<f32>) outs(%init : tensor<2x1x4x8xf32>) dimensions = [0, 1, 2, 3]
  %bias = linalg.add ins(%b, %z : tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>) outs(%init : tensor<2x1x4x8xf32>) -> tensor<2x1x4x8xf32>
  %o = attn.sdpa %q, %k, %k bias(%bias : tensor<2x1x4x8xf32>) score = scaled_dot : tensor<2x1x4x16xf32>, tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x1x4x16xf32>
  return %o : tensor<2x1x4x16xf32>
}

// -----

// The same through a linalg.generic select between splats, on attn.mha.
// CHECK-LABEL: func.func @mha_select
// CHECK:         %[[FULL:.*]] = linalg.generic
// CHECK:         %[[ROW:.*]] = tensor.extract_slice %[[FULL]][0, 0, 0, 0] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<1x1x8x8xf32> to tensor<1x1x1x8xf32>
// CHECK:         attn.mha %arg0 weights({{.*}}) score_bias(%[[ROW]])
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
func.func @mha_select(%x: tensor<1x8x64xf32>, %w: tensor<64x64xf32>, %ids: tensor<1x8xi64>) -> tensor<1x8x64xf32> {
  %init = tensor.empty() : tensor<1x1x8x8xf32>
  %bias = linalg.generic {indexing_maps = [#row, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ids : tensor<1x8xi64>) outs(%init : tensor<1x1x8x8xf32>) {
  ^bb0(%id: i64, %out: f32):
    %c0 = arith.constant 0 : i64
    %keep = arith.cmpi ne, %id, %c0 : i64
    %a = arith.constant 0.0 : f32
    %b = arith.constant -3.40282347E+38 : f32
    %r = arith.select %keep, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x1x8x8xf32>
  %0 = attn.mha %x weights(%w, %w, %w, %w) score_bias(%bias) heads = 4 : (tensor<1x8x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<1x1x8x8xf32>) -> tensor<1x8x64xf32>
  return %0 : tensor<1x8x64xf32>
}

// -----

// Not provably the same per query: a bias argument, a causal mask that
// reads linalg.index, a broadcast along the keys of a per-query column,
// and a bias of run-time size keep their full shape.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     tensor.extract_slice
// CHECK:         attn.sdpa {{.*}} bias(%arg3 : tensor<1x1x8x8xf32>)
// CHECK:         attn.sdpa {{.*}} bias(%{{.*}} : tensor<1x1x8x8xf32>)
// CHECK:         attn.sdpa {{.*}} bias(%{{.*}} : tensor<1x1x8x8xf32>)
// CHECK:         attn.sdpa {{.*}} bias(%arg4 : tensor<1x1x?x8xf32>)
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @kept(%q: tensor<1x1x8x16xf32>, %qd: tensor<1x1x?x16xf32>, %k: tensor<1x1x8x16xf32>, %arg: tensor<1x1x8x8xf32>, %dyn: tensor<1x1x?x8xf32>, %col: tensor<1x1x8xf32>) -> (tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x?x16xf32>) {
  %o0 = attn.sdpa %q, %k, %k bias(%arg : tensor<1x1x8x8xf32>) score = scaled_dot : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  %init = tensor.empty() : tensor<1x1x8x8xf32>
  %causal = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%init : tensor<1x1x8x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %later = arith.cmpi ugt, %j, %i : index
    %a = arith.constant 0.0 : f32
    %b = arith.constant -3.40282347E+38 : f32
    %r = arith.select %later, %b, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x1x8x8xf32>
  %o1 = attn.sdpa %q, %k, %k bias(%causal : tensor<1x1x8x8xf32>) score = scaled_dot : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  %percol = linalg.broadcast ins(%col : tensor<1x1x8xf32>) outs(%init : tensor<1x1x8x8xf32>) dimensions = [3]
  %o2 = attn.sdpa %q, %k, %k bias(%percol : tensor<1x1x8x8xf32>) score = scaled_dot : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  %o3 = attn.sdpa %qd, %k, %k bias(%dyn : tensor<1x1x?x8xf32>) score = scaled_dot : tensor<1x1x?x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x?x16xf32>
  return %o0, %o1, %o2, %o3 : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x?x16xf32>
}

// -----

// A chain whose every op reads the previous value twice (24 adds): each
// (value, dimension) is checked once, so the walk stays linear and the
// bias is narrowed.
// CHECK-LABEL: func.func @shared_chain
// CHECK:         %[[ROW:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<1x1x8x8xf32> to tensor<1x1x1x8xf32>
// CHECK:         attn.sdpa {{.*}} bias(%[[ROW]] : tensor<1x1x1x8xf32>)
func.func @shared_chain(%q: tensor<1x1x8x16xf32>, %keys: tensor<1x1x8xf32>) -> tensor<1x1x8x16xf32> {
  %init = tensor.empty() : tensor<1x1x8x8xf32>
  %b0 = linalg.broadcast ins(%keys : tensor<1x1x8xf32>) outs(%init : tensor<1x1x8x8xf32>) dimensions = [2]
  %b1 = linalg.add ins(%b0, %b0 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b2 = linalg.add ins(%b1, %b1 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b3 = linalg.add ins(%b2, %b2 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b4 = linalg.add ins(%b3, %b3 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b5 = linalg.add ins(%b4, %b4 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b6 = linalg.add ins(%b5, %b5 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b7 = linalg.add ins(%b6, %b6 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b8 = linalg.add ins(%b7, %b7 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b9 = linalg.add ins(%b8, %b8 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b10 = linalg.add ins(%b9, %b9 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b11 = linalg.add ins(%b10, %b10 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b12 = linalg.add ins(%b11, %b11 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b13 = linalg.add ins(%b12, %b12 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b14 = linalg.add ins(%b13, %b13 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b15 = linalg.add ins(%b14, %b14 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b16 = linalg.add ins(%b15, %b15 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b17 = linalg.add ins(%b16, %b16 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b18 = linalg.add ins(%b17, %b17 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b19 = linalg.add ins(%b18, %b18 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b20 = linalg.add ins(%b19, %b19 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b21 = linalg.add ins(%b20, %b20 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b22 = linalg.add ins(%b21, %b21 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b23 = linalg.add ins(%b22, %b22 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b24 = linalg.add ins(%b23, %b23 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) outs(%init : tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %o = attn.sdpa %q, %q, %q bias(%b24 : tensor<1x1x8x8xf32>) score = scaled_dot : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}
