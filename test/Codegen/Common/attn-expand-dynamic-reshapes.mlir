// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-expand-dynamic-reshapes))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-expand-dynamic-reshapes),expand-strided-metadata)" | FileCheck %s --check-prefix=ESM

// [B * S, N] -> [B, S, N] with B and S dynamic: a reinterpret_cast of the
// contiguous buffer with the output sizes and row-major strides [S * N, N,
// 1], which expand-strided-metadata then takes (it crashes on the
// expand_shape itself).
// CHECK-LABEL: func.func @two_dynamic_in_group(
// CHECK-SAME:    %[[M:[^:]+]]: memref<?x192xf32>, %[[B:[^:]+]]: index, %[[S:[^:]+]]: index)
// CHECK:         %[[C192:.*]] = arith.constant 192 : index
// CHECK:         %[[ROW:.*]] = arith.muli %[[C192]], %[[S]] : index
// CHECK:         %[[R:.*]] = memref.reinterpret_cast %[[M]] to offset: [0], sizes: [%[[B]], %[[S]], 192], strides: [%[[ROW]], 192, 1] : memref<?x192xf32> to memref<?x?x192xf32>
// CHECK:         return %[[R]]
// ESM-LABEL: func.func @two_dynamic_in_group(
// ESM:         memref.reinterpret_cast
// ESM-NOT:     memref.expand_shape
func.func @two_dynamic_in_group(%m: memref<?x192xf32>, %b: index, %s: index) -> memref<?x?x192xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 192] : memref<?x192xf32> into memref<?x?x192xf32>
  return %e : memref<?x?x192xf32>
}

// -----

// One dynamic size per group (all that static shapes and a dynamic
// sequence alone produce): left to expand-strided-metadata.
// CHECK-LABEL: func.func @one_dynamic_per_group(
// CHECK:         memref.expand_shape
// CHECK-NOT:     memref.reinterpret_cast
func.func @one_dynamic_per_group(%m: memref<?x192xf32>, %s: index) -> memref<1x?x192xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [1, %s, 192] : memref<?x192xf32> into memref<1x?x192xf32>
  return %e : memref<1x?x192xf32>
}
