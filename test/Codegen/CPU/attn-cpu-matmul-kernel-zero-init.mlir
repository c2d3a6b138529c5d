// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s

// The zero fill of C is found past the ops between it and the contraction
// that leave C alone (here B's permuting copy out of its panels, as the
// pipeline leaves it): the accumulators start from zero, C is never loaded,
// and the fill goes.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#perm = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @fill_before_weight_copy
// CHECK-NOT:     linalg.fill
// CHECK:         scf.parallel
// CHECK:           scf.for %{{.*}} iter_args(%{{[^ ]*}} = %cst
// CHECK-NOT:       vector.load %arg2
// CHECK:           vector.store %{{.*}}, %arg2[
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @fill_before_weight_copy(%x: memref<8x32xf32>, %panels: memref<2x32x64xf32>, %c: memref<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x128xf32>)
  %copy = memref.alloc() : memref<32x2x64xf32>
  linalg.generic {indexing_maps = [#perm, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%panels : memref<2x32x64xf32>) outs(%copy : memref<32x2x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %wt = memref.collapse_shape %copy [[0], [1, 2]] : memref<32x2x64xf32> into memref<32x128xf32>
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x32xf32>, memref<32x128xf32>) outs(%c : memref<8x128xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, column_block = 64>} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %copy : memref<32x2x64xf32>
  return
}

// -----

// Ops between the fill and the contraction that touch C, through C or a
// view of it, or a buffer of unknown origin that may be C: the fill stays and
// the tiles start from C's values.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#mm = #attn.tile<vector_width = 16, column_block = 64>

// CHECK-LABEL: func.func @c_read_in_between
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<8x64xf32>)
// CHECK:         memref.copy %arg2, %arg3
// CHECK:         scf.parallel
// CHECK:           vector.load %arg2[
// CHECK:         return
func.func @c_read_in_between(%x: memref<8x32xf32>, %wt: memref<32x64xf32>, %c: memref<8x64xf32>, %saved: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  memref.copy %c, %saved : memref<8x64xf32> to memref<8x64xf32>
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x32xf32>, memref<32x64xf32>) outs(%c : memref<8x64xf32>) attrs = {attn.tile = #mm} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @view_of_c_written_in_between
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<8x64xf32>)
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[ROW:.*]][
// CHECK:         scf.parallel
// CHECK:           vector.load %arg2[
// CHECK:         return
func.func @view_of_c_written_in_between(%x: memref<8x32xf32>, %wt: memref<32x64xf32>, %c: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  %row = memref.subview %c[2, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<64xf32, strided<[1], offset: 128>>
  scf.for %i = %c0 to %c64 step %c1 {
    memref.store %one, %row[%i] : memref<64xf32, strided<[1], offset: 128>>
  }
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x32xf32>, memref<32x64xf32>) outs(%c : memref<8x64xf32>) attrs = {attn.tile = #mm} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

func.func private @opaque() -> memref<8x64xf32>

// CHECK-LABEL: func.func @unknown_buffer_in_between
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<8x64xf32>)
// CHECK:         call @opaque
// CHECK:         linalg.fill
// CHECK:         scf.parallel
// CHECK:           vector.load %arg2[
// CHECK:         return
func.func @unknown_buffer_in_between(%x: memref<8x32xf32>, %wt: memref<32x64xf32>, %c: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64xf32>)
  %other = func.call @opaque() : () -> memref<8x64xf32>
  linalg.fill ins(%one : f32) outs(%other : memref<8x64xf32>)
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x32xf32>, memref<32x64xf32>) outs(%c : memref<8x64xf32>) attrs = {attn.tile = #mm} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// One zero buffer shared by two contractions, as bufferization leaves it:
// the first copies it into its C, the second accumulates into it in place.
// Once the first tiles replace the copy, the second finds the fill past
// them: both start from zero, and neither the copy nor the fill is left.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mm = #attn.tile<vector_width = 16, column_block = 64>

// CHECK-LABEL: func.func @shared_zero_buffer
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     memref.copy
// CHECK:         scf.parallel
// CHECK:           scf.for %{{.*}} iter_args(%{{[^ ]*}} = %cst
// CHECK:         scf.parallel
// CHECK:           scf.for %{{.*}} iter_args(%{{[^ ]*}} = %cst
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @shared_zero_buffer(%x: memref<8x32xf32>, %wt: memref<32x64xf32>, %y: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeros = memref.alloc() : memref<8x64xf32>
  linalg.fill ins(%zero : f32) outs(%zeros : memref<8x64xf32>)
  %c1 = memref.alloc() : memref<8x64xf32>
  memref.copy %zeros, %c1 : memref<8x64xf32> to memref<8x64xf32>
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x32xf32>, memref<32x64xf32>) outs(%c1 : memref<8x64xf32>) attrs = {attn.tile = #mm} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x32xf32>, memref<32x64xf32>) outs(%zeros : memref<8x64xf32>) attrs = {attn.tile = #mm} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%c1, %zeros : memref<8x64xf32>, memref<8x64xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c1 : memref<8x64xf32>
  memref.dealloc %zeros : memref<8x64xf32>
  return
}
