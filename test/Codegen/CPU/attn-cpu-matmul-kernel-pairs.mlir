// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{bf16-dot=1}))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s --check-prefix=NODOT

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#pairs = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3 * 2 + d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A bf16 weight bound in pair panels (attn-cpu-transpose-weights{pair-panels})
// as bufferization leaves it: W^T [64, 128] is a copy of the panels
// [2, 32, 128] (64 columns, k pairs side by side), widened to f32. With
// bf16-dot the tiles read their panel in place with vdpbf16ps: nothing is
// packed per run, and the copy, the widening and their buffers go.
// CHECK-LABEL: func.func @bound_pair_panels
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc() {alignment = 64 : i64}
// CHECK-NOT:     vector.interleave
// CHECK:         scf.parallel (%[[BLK:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK:           %[[N0:.*]] = arith.muli %[[BLK]], %c64{{[_0-9]*}}
// CHECK:               %[[COL:.*]] = arith.addi %[[N0]], %{{.*}}
// CHECK:               %[[PI:.*]] = arith.divui %[[COL]], %c64{{[_0-9]*}}
// CHECK:               %[[PANEL:.*]] = memref.subview %arg1[%[[PI]], 0, 0] [1, 32, 128] [1, 1, 1] : memref<2x32x128xbf16> to memref<32x128xbf16, strided<[128, 1], offset: ?>>
// CHECK:               scf.for {{.*}} -> (vector<16xf32>
// CHECK:                 vector.load %[[PANEL]]{{.*}} : memref<32x128xbf16, strided<[128, 1], offset: ?>>, vector<32xbf16>
// CHECK-COUNT-4:         x86vector.avx512.dot
// CHECK:         scf.reduce
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref<32x2x2x64xbf16>
// CHECK-NOT:     memref<64x128xf32>
// CHECK:         return
// Without bf16 dot products the FMA tiles read W^T narrow from the copy,
// which stays; the widening goes.
// NODOT-LABEL: func.func @bound_pair_panels
// NODOT:         %[[COPY:.*]] = memref.alloc() : memref<32x2x2x64xbf16>
// NODOT:         linalg.generic {{.*}} ins(%arg1 : memref<2x32x128xbf16>) outs(%[[COPY]] : memref<32x2x2x64xbf16>)
// NODOT:         %[[WT:.*]] = memref.collapse_shape %[[COPY]]
// NODOT-NOT:     linalg.generic
// NODOT:         vector.load %[[WT]]{{.*}} : memref<64x128xbf16>, vector<16xbf16>
// NODOT:         vector.fma
// NODOT-NOT:     x86vector
// NODOT-NOT:     memref<64x128xf32>
// NODOT:         return
func.func @bound_pair_panels(%xn: memref<8x64xbf16>, %panels: memref<2x32x128xbf16>, %bias: memref<128xf32>, %out: memref<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<8x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xn : memref<8x64xbf16>) outs(%x : memref<8x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  }
  %copy = memref.alloc() : memref<32x2x2x64xbf16>
  linalg.generic {indexing_maps = [#pairs, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%panels : memref<2x32x128xbf16>) outs(%copy : memref<32x2x2x64xbf16>) {
  ^bb0(%in: bf16, %o: bf16):
    linalg.yield %in : bf16
  }
  %wn = memref.collapse_shape %copy [[0, 1], [2, 3]] : memref<32x2x2x64xbf16> into memref<64x128xbf16>
  %w = memref.alloc() : memref<64x128xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wn : memref<64x128xbf16>) outs(%w : memref<64x128xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  }
  %c = memref.alloc() : memref<8x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x128xf32>)
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x64xf32>, memref<64x128xf32>) outs(%c : memref<8x128xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, column_block = 64>} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<8x128xf32>, memref<128xf32>) outs(%out : memref<8x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<8x128xf32>
  memref.dealloc %w : memref<64x128xf32>
  memref.dealloc %copy : memref<32x2x2x64xbf16>
  memref.dealloc %x : memref<8x64xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#pairs = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3 * 2 + d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// The copy written again before the widening is not the pair panels: the
// kernel packs its own pairs from what the widening read, and the copy
// stays.
// CHECK-LABEL: func.func @pair_copy_overwritten
// CHECK:         linalg.generic {{.*}} ins(%arg1 : memref<2x32x128xbf16>)
// CHECK:         linalg.fill
// CHECK:         vector.interleave
// CHECK:         x86vector.avx512.dot
// CHECK:         return
func.func @pair_copy_overwritten(%xn: memref<8x64xbf16>, %panels: memref<2x32x128xbf16>, %out: memref<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %zb = arith.constant 0.0 : bf16
  %x = memref.alloc() : memref<8x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xn : memref<8x64xbf16>) outs(%x : memref<8x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  }
  %copy = memref.alloc() : memref<32x2x2x64xbf16>
  linalg.generic {indexing_maps = [#pairs, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%panels : memref<2x32x128xbf16>) outs(%copy : memref<32x2x2x64xbf16>) {
  ^bb0(%in: bf16, %o: bf16):
    linalg.yield %in : bf16
  }
  linalg.fill ins(%zb : bf16) outs(%copy : memref<32x2x2x64xbf16>)
  %wn = memref.collapse_shape %copy [[0, 1], [2, 3]] : memref<32x2x2x64xbf16> into memref<64x128xbf16>
  %w = memref.alloc() : memref<64x128xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wn : memref<64x128xbf16>) outs(%w : memref<64x128xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<8x128xf32>)
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x64xf32>, memref<64x128xf32>) outs(%out : memref<8x128xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, column_block = 64>} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %w : memref<64x128xf32>
  memref.dealloc %copy : memref<32x2x2x64xbf16>
  memref.dealloc %x : memref<8x64xf32>
  return
}
