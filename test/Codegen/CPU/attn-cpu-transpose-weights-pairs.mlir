// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-transpose-weights{panel-vectors=2 vector-width=4 pair-panels=true}))" | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 weight widened for its contraction, N = 16, W = 2 * 4, K = 8: W^T
// [8, 16] is bound in pair panels [16 / 8, 8 / 2, 2 * 8], read back to
// [K / 2, 2, N / W, W] = [4, 2, 2, 8] (element (j, t, p, c) from
// panels[p, j, 2 c + t]) and collapsed to [8, 16], which the widening reads.
// CHECK-DAG:   #[[PAIRS:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3 * 2 + d1)>
// CHECK-DAG:   #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @pair_panels
// CHECK:         %[[P:.*]] = attn.weight "w" {convert, pairs, panels, transpose} : tensor<2x4x16xbf16>
// CHECK-NOT:     attn.weight
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x2x2x8xbf16>
// CHECK:         %[[U:.*]] = linalg.generic {indexing_maps = [#[[PAIRS]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<2x4x16xbf16>) outs(%[[E]] : tensor<4x2x2x8xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      linalg.yield %[[IN]] : bf16
// CHECK:         %[[KN:.*]] = tensor.collapse_shape %[[U]] {{\[\[}}0, 1], [2, 3]] : tensor<4x2x2x8xbf16> into tensor<8x16xbf16>
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[KN]] : tensor<8x16xbf16>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[WIDE]] : tensor<4x8xf32>, tensor<8x16xf32>)
func.func @pair_panels(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = attn.weight "w" {convert} : tensor<16x8xbf16>
  %e = tensor.empty() : tensor<16x8xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<16x8xbf16>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wide : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// No pair panels for an f16 weight (no f16 dot products), an odd K (7) or
// an N that is not a multiple of W (12): plain transposed bindings.
// CHECK-LABEL: func.func @no_pairs
// CHECK-NOT:     pairs
// CHECK-DAG:     attn.weight "h" {transpose} : tensor<8x16xf16>
// CHECK-DAG:     attn.weight "k7" {transpose} : tensor<7x16xbf16>
// CHECK-DAG:     attn.weight "n12" {transpose} : tensor<8x12xbf16>
// CHECK-NOT:     pairs
// CHECK:         return
func.func @no_pairs(%x: tensor<4x8xf32>, %x7: tensor<4x7xf32>, %i16: tensor<4x16xf32>, %i12: tensor<4x12xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x12xf32>) {
  %h = attn.weight "h" : tensor<16x8xf16>
  %eh = tensor.empty() : tensor<16x8xf32>
  %hw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<16x8xf16>) outs(%eh : tensor<16x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %f = arith.extf %in : f16 to f32
    linalg.yield %f : f32
  } -> tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %hw : tensor<4x8xf32>, tensor<16x8xf32>) outs(%i16 : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %k7 = attn.weight "k7" : tensor<16x7xbf16>
  %e7 = tensor.empty() : tensor<16x7xf32>
  %k7w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%k7 : tensor<16x7xbf16>) outs(%e7 : tensor<16x7xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<16x7xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x7, %k7w : tensor<4x7xf32>, tensor<16x7xf32>) outs(%i16 : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %n12 = attn.weight "n12" : tensor<12x8xbf16>
  %e12 = tensor.empty() : tensor<12x8xf32>
  %n12w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%n12 : tensor<12x8xbf16>) outs(%e12 : tensor<12x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<12x8xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %n12w : tensor<4x8xf32>, tensor<12x8xf32>) outs(%i12 : tensor<4x12xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x12xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 weight the contraction already reads K-major (an ONNX MatMul's
// [in, out] initializer), widened: bound in pair panels as it is, and the
// widening reads their copy back.
// CHECK-LABEL: func.func @k_major_pairs
// CHECK:         %[[P:.*]] = attn.weight "w" {convert, pairs, panels} : tensor<2x4x16xbf16>
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<2x4x16xbf16>) outs(%{{.*}} : tensor<4x2x2x8xbf16>)
// CHECK:         %[[KN:.*]] = tensor.collapse_shape %[[U]] {{\[\[}}0, 1], [2, 3]] : tensor<4x2x2x8xbf16> into tensor<8x16xbf16>
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[KN]] : tensor<8x16xbf16>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[WIDE]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NOT:     attn.weight
func.func @k_major_pairs(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = attn.weight "w" {convert} : tensor<8x16xbf16>
  %e = tensor.empty() : tensor<8x16xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<8x16xbf16>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #kn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wide : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
