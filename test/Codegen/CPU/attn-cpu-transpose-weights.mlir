// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-transpose-weights))" | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// x W^T reads W^T [k, n], bound transposed; the untransposed weight goes.
// CHECK-LABEL: func.func @projection
// CHECK:         %[[WT:.*]] = attn.weight "w" {transpose} : tensor<8x16xf32>
// CHECK-NOT:     attn.weight
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[BN:.*]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[WT]] : tensor<4x8xf32>, tensor<8x16xf32>)
func.func @projection(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = attn.weight "w" : tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
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

// Gather and concat attributes are kept (their axes refer to the
// untransposed tensor); a weight with another user (a tied LM head's
// embedding table) is not transposed for its projection either, so that it
// is bound once.
// CHECK-LABEL: func.func @gather_concat_shared
// CHECK-DAG:     %[[G:.*]] = attn.weight "g" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 24, 8>, transpose} : tensor<8x16xf32>
// CHECK-DAG:     %[[Q:.*]] = attn.weight "qkv" {concat_axis = 0 : i64, concat_names = ["q", "k"], transpose} : tensor<8x16xf32>
// CHECK-DAG:     %[[S:.*]] = attn.weight "s" : tensor<16x8xf32>
// CHECK:         ins(%{{.*}}, %[[G]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK:         ins(%{{.*}}, %[[Q]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK:         ins(%{{.*}}, %[[S]] : tensor<4x8xf32>, tensor<16x8xf32>)
// CHECK-NOT:     attn.weight "s" {transpose}
// CHECK:         return {{.*}}, %[[S]]
func.func @gather_concat_shared(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x8xf32>) {
  %g = attn.weight "g" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 8, 24, 8>} : tensor<16x8xf32>
  %q = attn.weight "qkv" {concat_axis = 0 : i64, concat_names = ["q", "k"]} : tensor<16x8xf32>
  %s = attn.weight "s" : tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %g : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %q : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %s : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %0, %1, %2, %s : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x8xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Near misses: W not a weight, an f16 weight, a weight already read K-major.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     transpose
// CHECK:         return
func.func @near_misses(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %xh: tensor<4x8xf16>, %init: tensor<4x16xf32>, %inith: tensor<4x16xf16>) -> (tensor<4x16xf32>, tensor<4x16xf16>, tensor<4x16xf32>) {
  %h = attn.weight "h" : tensor<16x8xf16>
  %v = attn.weight "v" : tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xh, %h : tensor<4x8xf16>, tensor<16x8xf16>) outs(%inith : tensor<4x16xf16>) {
  ^bb0(%in: f16, %in_0: f16, %acc: f16):
    %m = arith.mulf %in, %in_0 : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<4x16xf16>
  %2 = linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %v : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xf16>, tensor<4x16xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A bf16 model's projection reads its weight through an arith.extf generic
// (attn-convert-precision): the bf16 weight is bound transposed and the
// widening follows it, [k, n] f32 read (k, n) by the contraction.
// CHECK-LABEL: func.func @widened_bf16
// CHECK:         %[[WT:.*]] = attn.weight "w" {convert, transpose} : tensor<8x16xbf16>
// CHECK-NOT:     attn.weight
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[WT]] : tensor<8x16xbf16>) outs(%[[E]] : tensor<8x16xf32>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[BN:.*]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[WIDE]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NOT:     tensor<16x8xf32>
func.func @widened_bf16(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
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

// A widened weight whose f32 copy something else also reads is left alone.
// CHECK-LABEL: func.func @widened_shared
// CHECK:         attn.weight "w" {convert} : tensor<16x8xbf16>
// CHECK-NOT:     transpose
func.func @widened_shared(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16x8xf32>) {
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
  return %0, %wide : tensor<4x16xf32>, tensor<16x8xf32>
}
