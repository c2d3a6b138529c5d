// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-transpose-weights{panel-vectors=2 vector-width=4}))" | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// x W^T with N = 16, W = 2 * 4: W^T [8, 16] is bound as two panels
// [2, 8, 8] and read back as [8, 16] through a permuting copy and a
// collapse.
// CHECK-DAG:   #[[PERM:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @projection
// CHECK:         %[[P:.*]] = attn.weight "w" {panels, transpose} : tensor<2x8x8xf32>
// CHECK-NOT:     attn.weight
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x2x8xf32>
// CHECK:         %[[U:.*]] = linalg.generic {indexing_maps = [#[[PERM]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<2x8x8xf32>) outs(%[[E]] : tensor<8x2x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK:         %[[B:.*]] = tensor.collapse_shape %[[U]] {{\[\[}}0], [1, 2]] : tensor<8x2x8xf32> into tensor<8x16xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>)
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
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A weight the contraction already reads K-major (an ONNX MatMul's [in, out]
// initializer) keeps its binding's orientation and gets the panels; the
// tile's vector width (2 here) sets W = 2 * 2.
// CHECK-LABEL: func.func @k_major
// CHECK:         %[[P:.*]] = attn.weight "w" {panels} : tensor<4x8x4xf32>
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x8x4xf32>) outs(%{{.*}} : tensor<8x4x4xf32>)
// CHECK:         %[[B:.*]] = tensor.collapse_shape %[[U]] {{\[\[}}0], [1, 2]] : tensor<8x4x4xf32> into tensor<8x16xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>)
func.func @k_major(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = attn.weight "w" : tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #kn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) attrs = {attn.tile = #attn.tile<vector_width = 2>} {
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

// No panels where N is not a multiple of W (12), where N is W itself (8:
// W^T is one contiguous panel already) and for a bf16 weight widened for
// its contraction; those stay plain transposed bindings.
// CHECK-LABEL: func.func @no_panels
// CHECK-NOT:     panels
// CHECK-DAG:     attn.weight "n12" {transpose} : tensor<8x12xf32>
// CHECK-DAG:     attn.weight "n8" {transpose} : tensor<8x8xf32>
// CHECK-DAG:     attn.weight "h" {transpose} : tensor<8x16xbf16>
// CHECK-NOT:     panels
// CHECK:         return
func.func @no_panels(%x: tensor<4x8xf32>, %i12: tensor<4x12xf32>, %i8: tensor<4x8xf32>, %i16: tensor<4x16xf32>) -> (tensor<4x12xf32>, tensor<4x8xf32>, tensor<4x16xf32>) {
  %w12 = attn.weight "n12" : tensor<12x8xf32>
  %w8 = attn.weight "n8" : tensor<8x8xf32>
  %h = attn.weight "h" : tensor<16x8xbf16>
  %e = tensor.empty() : tensor<16x8xf32>
  %hw = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<16x8xbf16>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w12 : tensor<4x8xf32>, tensor<12x8xf32>) outs(%i12 : tensor<4x12xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w8 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%i8 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %hw : tensor<4x8xf32>, tensor<16x8xf32>) outs(%i16 : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0, %1, %2 : tensor<4x12xf32>, tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>

// The s8 words of attn-cpu-quantize-int8 ([K/4, N] = [8, 16] i32, K-major
// already) go in panels of W = 2 * 4 words too; words with N = W do not.
// CHECK-LABEL: func.func @int8_words
// CHECK:         %[[P:.*]] = attn.weight "w.int8" {panels} : tensor<2x8x8xi32>
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<2x8x8xi32>) outs(%{{.*}} : tensor<8x2x8xi32>)
// CHECK:         %[[B:.*]] = tensor.collapse_shape %[[U]] {{\[\[}}0], [1, 2]] : tensor<8x2x8xi32> into tensor<8x16xi32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[B]] : tensor<4x8x4xi8>, tensor<8x16xi32>) {{.*}} attrs =  {attn.int8_matmul}
// CHECK:         attn.weight "n8.int8" : tensor<8x8xi32>
func.func @int8_words(%x: tensor<4x8x4xi8>, %init: tensor<4x16xi32>, %init8: tensor<4x8xi32>) -> (tensor<4x16xi32>, tensor<4x8xi32>) {
  %w = attn.weight "w.int8" : tensor<8x16xi32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<4x8x4xi8>, tensor<8x16xi32>) outs(%init : tensor<4x16xi32>) attrs = {attn.int8_matmul} {
  ^bb0(%in: i8, %word: i32, %acc: i32):
    %au = arith.extui %in : i8 to i32
    %p = arith.muli %au, %word : i32
    %r = arith.addi %acc, %p : i32
    linalg.yield %r : i32
  } -> tensor<4x16xi32>
  %w8 = attn.weight "n8.int8" : tensor<8x8xi32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %w8 : tensor<4x8x4xi8>, tensor<8x8xi32>) outs(%init8 : tensor<4x8xi32>) attrs = {attn.int8_matmul} {
  ^bb0(%in: i8, %word: i32, %acc: i32):
    %au = arith.extui %in : i8 to i32
    %p = arith.muli %au, %word : i32
    %r = arith.addi %acc, %p : i32
    linalg.yield %r : i32
  } -> tensor<4x8xi32>
  return %0, %1 : tensor<4x16xi32>, tensor<4x8xi32>
}
