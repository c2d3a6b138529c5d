// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-lower-strided-copies))" | FileCheck %s

// A KV cache's new rows into a strided view of the cache ([1, 12, T, 64]
// of [1, 12, 256, 64]): loops over the outer dimensions, 16 f32 (64 bytes)
// a vector load and store along the contiguous innermost one.
// CHECK-LABEL: func.func @kv_rows(
// CHECK-SAME:      %[[SRC:[^:]+]]: memref<1x12x?x64xf32>, %[[CACHE:[^:]+]]: memref<1x12x256x64xf32>, %[[AT:[^:]+]]: index, %[[T:[^:]+]]: index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[VIEW:.*]] = memref.subview %[[CACHE]]
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %{{.*}} step %[[C1]]
// CHECK:           scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %[[C1]]
// CHECK:             scf.for %[[K:.*]] = %[[C0]] to %{{.*}} step %[[C1]]
// CHECK:               scf.for %[[L:.*]] = %[[C0]] to %{{.*}} step %[[C16]]
// CHECK:                 %[[V:.*]] = vector.load %[[SRC]][%[[I]], %[[J]], %[[K]], %[[L]]] : memref<1x12x?x64xf32>, vector<16xf32>
// CHECK:                 vector.store %[[V]], %[[VIEW]][%[[I]], %[[J]], %[[K]], %[[L]]] : memref<1x12x?x64xf32, strided<[196608, 16384, 64, 1], offset: ?>>, vector<16xf32>
// CHECK-NOT:     memref.copy
func.func @kv_rows(%src: memref<1x12x?x64xf32>, %cache: memref<1x12x256x64xf32>, %at: index, %t: index) {
  %view = memref.subview %cache[0, 0, %at, 0] [1, 12, %t, 64] [1, 1, 1, 1] : memref<1x12x256x64xf32> to memref<1x12x?x64xf32, strided<[196608, 16384, 64, 1], offset: ?>>
  memref.copy %src, %view : memref<1x12x?x64xf32> to memref<1x12x?x64xf32, strided<[196608, 16384, 64, 1], offset: ?>>
  return
}

// -----

// bf16 rows of 40: vectors of 8 (the most lanes up to 32 dividing 40).
// CHECK-LABEL: func.func @bf16_rows(
// CHECK:         scf.for
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK:             vector.load %{{.*}} : memref<4x40xbf16, strided<[80, 1], offset: ?>>, vector<8xbf16>
// CHECK:             vector.store %{{.*}} : memref<4x40xbf16>, vector<8xbf16>
func.func @bf16_rows(%src: memref<4x40xbf16, strided<[80, 1], offset: ?>>, %dst: memref<4x40xbf16>) {
  memref.copy %src, %dst : memref<4x40xbf16, strided<[80, 1], offset: ?>> to memref<4x40xbf16>
  return
}

// -----

// A transposing copy (innermost stride not 1), a dynamic innermost size,
// index elements and i1: linalg.copy, for convert-linalg-to-loops.
// CHECK-LABEL: func.func @no_vectors(
// CHECK-SAME:      %[[A:[^:]+]]: memref<8x4xf32, strided<[1, 8]>>, %[[B:[^:]+]]: memref<8x4xf32>, %[[C:[^:]+]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[D:[^:]+]]: memref<?x?xf32>, %[[E:[^:]+]]: memref<4x8xindex, strided<[16, 1]>>, %[[F:[^:]+]]: memref<4x8xindex>, %[[G:[^:]+]]: memref<4x8xi1, strided<[16, 1]>>, %[[H:[^:]+]]: memref<4x8xi1>
// CHECK:         linalg.copy ins(%[[A]] : memref<8x4xf32, strided<[1, 8]>>) outs(%[[B]] : memref<8x4xf32>)
// CHECK:         linalg.copy ins(%[[C]] : memref<?x?xf32, strided<[?, 1], offset: ?>>) outs(%[[D]] : memref<?x?xf32>)
// CHECK:         linalg.copy ins(%[[E]] : memref<4x8xindex, strided<[16, 1]>>) outs(%[[F]] : memref<4x8xindex>)
// CHECK:         linalg.copy ins(%[[G]] : memref<4x8xi1, strided<[16, 1]>>) outs(%[[H]] : memref<4x8xi1>)
// CHECK-NOT:     memref.copy
func.func @no_vectors(%a: memref<8x4xf32, strided<[1, 8]>>, %b: memref<8x4xf32>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>, %d: memref<?x?xf32>, %e: memref<4x8xindex, strided<[16, 1]>>, %f: memref<4x8xindex>, %g: memref<4x8xi1, strided<[16, 1]>>, %h: memref<4x8xi1>) {
  memref.copy %a, %b : memref<8x4xf32, strided<[1, 8]>> to memref<8x4xf32>
  memref.copy %c, %d : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32>
  memref.copy %e, %f : memref<4x8xindex, strided<[16, 1]>> to memref<4x8xindex>
  memref.copy %g, %h : memref<4x8xi1, strided<[16, 1]>> to memref<4x8xi1>
  return
}

// -----

// One block on both sides (identity layouts, dynamic or not; a static
// contiguous view at an offset): llvm.memcpy later, left alone.
// CHECK-LABEL: func.func @one_block(
// CHECK-COUNT-3: memref.copy
// CHECK-NOT:     vector.load
// CHECK-NOT:     linalg.copy
func.func @one_block(%a: memref<?x64xf32>, %b: memref<?x64xf32>, %c: memref<4x64xf32, strided<[64, 1], offset: 128>>, %d: memref<4x64xf32>, %e: memref<2x3xf32>, %f: memref<2x3xf32>) {
  memref.copy %a, %b : memref<?x64xf32> to memref<?x64xf32>
  memref.copy %c, %d : memref<4x64xf32, strided<[64, 1], offset: 128>> to memref<4x64xf32>
  memref.copy %e, %f : memref<2x3xf32> to memref<2x3xf32>
  return
}
