// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-int8 | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#mn = affine_map<(d0, d1) -> (d0, d1)>
#n = affine_map<(d0, d1) -> (d1)>

// x W^T + b: per-row u8 quantization of x, the u8 x s8 contraction on the
// i32-packed weight, and the dequantization merged into the bias add; the
// f32 weight is no longer bound, and the module records how to quantize it.
// CHECK-LABEL: module attributes {attn.int8_weights = {w.int8 = {shape = array<i64: 16, 8>, weight = {name = "w", transpose}}}}
// CHECK-LABEL: func.func @projection
// CHECK-NOT:     attn.weight "w" {
// CHECK-DAG:     %[[QW:.*]] = attn.weight "w.int8" : tensor<2x16xi32>
// CHECK-DAG:     %[[WS:.*]] = attn.weight "w.int8_scale" : tensor<16xf32>
// CHECK-DAG:     %[[CS:.*]] = attn.weight "w.int8_colsum" : tensor<16xf32>
// Row ranges (0 included), then scale and zero point per row.
// CHECK:         %[[RANGE:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X:.*]] : tensor<4x8xf32>)
// CHECK:           arith.cmpf olt
// CHECK:           arith.cmpf ogt
// CHECK:         %[[P:.*]]:2 = linalg.generic {{.*}} ins(%[[RANGE]]#0, %[[RANGE]]#1 : tensor<4xf32>, tensor<4xf32>)
// CHECK:           arith.subf
// CHECK:           arith.divf
// CHECK:           arith.select
// CHECK:           math.roundeven
// CHECK:         %[[Q:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[P]]#0, %[[P]]#1 : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4x8xi8>)
// CHECK:           math.roundeven
// CHECK:           arith.fptoui
// CHECK:           arith.trunci
// CHECK:         %[[G:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xi8> into tensor<4x2x4xi8>
// CHECK:         %[[ACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[G]], %[[QW]] : tensor<4x2x4xi8>, tensor<2x16xi32>) outs(%{{.*}} : tensor<4x16xi32>) attrs =  {attn.int8_matmul}
// CHECK:           linalg.index 3
// CHECK:           arith.shrsi
// CHECK:           arith.extsi
// CHECK:           arith.extui
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %[[P]]#0, %[[P]]#1, %[[WS]], %[[CS]], %{{.*}} : tensor<4x16xi32>, tensor<4xf32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:           arith.sitofp
// CHECK:           arith.addf
// CHECK:         return %[[Y]]
func.func @projection(%x: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = attn.weight "w" {transpose} : tensor<16x8xf32>
  %bias = attn.weight "b" : tensor<16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %1 = linalg.generic {indexing_maps = [#mn, #n, #mn], iterator_types = ["parallel", "parallel"]} ins(%0, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%p: f32, %bb: f32, %o: f32):
    %s = arith.addf %p, %bb : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Dynamic rows; no consumer: a dequantization of its own. Two projections
// of one binding share its quantized form; the same tensor bound another
// way (concatenated) gets a name of its own.
// CHECK-LABEL: module attributes {attn.int8_weights = {w.int8 = {shape = array<i64: 16, 8>, weight = {name = "w"}}, w.int82 = {shape = array<i64: 32, 8>, weight = {concat_axis = 0 : i64, concat_names = ["w", "v"], name = "w"}}}}
// CHECK-LABEL: func.func @shared
// CHECK:         attn.weight "w.int8" : tensor<2x16xi32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [%{{.*}}, 2, 4] : tensor<?x8xi8> into tensor<?x2x4xi8>
// CHECK:         attn.int8_matmul
// CHECK:         %[[D0:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x16xf32>)
// CHECK:         attn.weight "w.int8" : tensor<2x16xi32>
// CHECK:         attn.int8_matmul
// CHECK:         attn.weight "w.int82" : tensor<2x32xi32>
// CHECK:         attn.int8_matmul
// CHECK-NOT:     attn.weight "w" :
func.func @shared(%x: tensor<?x8xf32>, %init: tensor<?x16xf32>, %init2: tensor<?x32xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x32xf32>) {
  %w = attn.weight "w" : tensor<16x8xf32>
  %wv = attn.weight "w" {concat_axis = 0 : i64, concat_names = ["w", "v"]} : tensor<32x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x8xf32>, tensor<16x8xf32>) outs(%init : tensor<?x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x16xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x8xf32>, tensor<16x8xf32>) outs(%init : tensor<?x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x16xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wv : tensor<?x8xf32>, tensor<32x8xf32>) outs(%init2 : tensor<?x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x32xf32>
  return %0, %1, %2 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x32xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Left in f32: K not a multiple of 4 (no whole i32 words), a gathered
// (pruned) weight, and a product of two activations.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     attn.int8_matmul
// CHECK-NOT:     int8
func.func @kept(%x: tensor<4x6xf32>, %y: tensor<16x6xf32>, %x8: tensor<4x8xf32>, %init: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %w = attn.weight "w" : tensor<16x6xf32>
  %g = attn.weight "g" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 16>} : tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x6xf32>, tensor<16x6xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x8, %g : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %y : tensor<4x6xf32>, tensor<16x6xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// K a multiple of 16: the row ranges run as 16 lanes of running minima and
// maxima over [M, K/16, 16], folded per row afterwards.
// CHECK-LABEL: module attributes {attn.int8_weights = {w.int8 = {shape = array<i64: 16, 32>, weight = {name = "w"}}}}
// CHECK-LABEL: func.func @lanes
// CHECK:         %[[L:.*]] = tensor.expand_shape %[[X:.*]] {{\[}}[0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
// CHECK:         %[[P:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[L]] : tensor<4x2x16xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK:         %[[LO:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]]#0 : tensor<4x16xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:           arith.cmpf olt
// CHECK:         %[[HI:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]]#1 : tensor<4x16xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:           arith.cmpf ogt
// CHECK:         linalg.generic {{.*}} ins(%[[LO]], %[[HI]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:         attn.int8_matmul
func.func @lanes(%x: tensor<4x32xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = attn.weight "w" : tensor<16x32xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x32xf32>, tensor<16x32xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
