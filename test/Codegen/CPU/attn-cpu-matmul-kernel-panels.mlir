// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#perm = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A weight bound in panels (attn-cpu-transpose-weights{panel-vectors=4}),
// as bufferization leaves it: W^T [32, 128] is a copy of the two 64-wide
// panels [2, 32, 64]. The tiles (4 vectors = 64 columns) read their panel
// in place at panel (block start + tile column) / 64, and the copy, its
// buffer and its view go.
// CHECK-LABEL: func.func @bound_panels
// CHECK-NOT:     memref<32x2x64xf32>
// CHECK-NOT:     memref.collapse_shape
// CHECK:         scf.parallel (%[[BLK:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK:           %[[N0:.*]] = arith.muli %[[BLK]], %c64{{[_0-9]*}}
// CHECK:           scf.for %[[M:.*]] = %{{.*}} to %c8{{[_0-9]*}} step %c4{{[_0-9]*}}
// CHECK:             scf.for %[[NT:.*]] = %{{.*}} to %{{.*}} step
// CHECK:               %[[COL:.*]] = arith.addi %[[N0]], %[[NT]]
// CHECK:               %[[PI:.*]] = arith.divui %[[COL]], %c64{{[_0-9]*}}
// CHECK:               %[[PANEL:.*]] = memref.subview %arg1[%[[PI]], 0, 0] [1, 32, 64] [1, 1, 1] : memref<2x32x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
// CHECK:               scf.for %[[K:.*]] = %{{.*}} to %c32{{[_0-9]*}} step
// CHECK-COUNT-4:         vector.load %[[PANEL]][%[[K]], %{{.*}}] : memref<32x64xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
// CHECK-COUNT-4:         vector.fma
// CHECK:               math.tanh
// CHECK:         scf.reduce
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref<32x2x64xf32>
// CHECK:         return
func.func @bound_panels(%x: memref<10x32xf32>, %panels: memref<2x32x64xf32>, %bias: memref<128xf32>, %out: memref<10x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %copy = memref.alloc() : memref<32x2x64xf32>
  linalg.generic {indexing_maps = [#perm, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%panels : memref<2x32x64xf32>) outs(%copy : memref<32x2x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %wt = memref.collapse_shape %copy [[0], [1, 2]] : memref<32x2x64xf32> into memref<32x128xf32>
  %c = memref.alloc() : memref<10x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<10x128xf32>)
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<10x32xf32>, memref<32x128xf32>) outs(%c : memref<10x128xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, column_block = 64>} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<10x128xf32>, memref<128xf32>) outs(%out : memref<10x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  }
  memref.dealloc %c : memref<10x128xf32>
  memref.dealloc %copy : memref<32x2x64xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#perm = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Panels 32 wide do not match the 64-wide tiles, and a copy of panels that
// is written again before the contraction is not what it reads: both keep
// the copy, which the tiles read as W^T.
// CHECK-LABEL: func.func @panel_near_misses
// CHECK:         %[[C1:.*]] = memref.alloc() : memref<32x4x32xf32>
// CHECK:         linalg.generic {{.*}} ins(%arg1 : memref<4x32x32xf32>) outs(%[[C1]] : memref<32x4x32xf32>)
// CHECK:         %[[W1:.*]] = memref.collapse_shape %[[C1]]
// CHECK:         vector.load %[[W1]][
// CHECK:         %[[C2:.*]] = memref.alloc() : memref<32x2x64xf32>
// CHECK:         linalg.generic {{.*}} ins(%arg2 : memref<2x32x64xf32>) outs(%[[C2]] : memref<32x2x64xf32>)
// CHECK:         memref.store
// CHECK:         %[[W2:.*]] = memref.collapse_shape %[[C2]]
// CHECK:         vector.load %[[W2]][
// CHECK:         return
func.func @panel_near_misses(%x: memref<8x32xf32>, %p32: memref<4x32x32xf32>, %p64: memref<2x32x64xf32>, %out: memref<8x128xf32>, %out2: memref<8x128xf32>) {
  %copy = memref.alloc() : memref<32x4x32xf32>
  linalg.generic {indexing_maps = [#perm, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p32 : memref<4x32x32xf32>) outs(%copy : memref<32x4x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %wt = memref.collapse_shape %copy [[0], [1, 2]] : memref<32x4x32xf32> into memref<32x128xf32>
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x32xf32>, memref<32x128xf32>) outs(%out : memref<8x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %copy2 = memref.alloc() : memref<32x2x64xf32>
  linalg.generic {indexing_maps = [#perm, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p64 : memref<2x32x64xf32>) outs(%copy2 : memref<32x2x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %zero = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : index
  memref.store %zero, %copy2[%i0, %i0, %i0] : memref<32x2x64xf32>
  %wt2 = memref.collapse_shape %copy2 [[0], [1, 2]] : memref<32x2x64xf32> into memref<32x128xf32>
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt2 : memref<8x32xf32>, memref<32x128xf32>) outs(%out2 : memref<8x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
