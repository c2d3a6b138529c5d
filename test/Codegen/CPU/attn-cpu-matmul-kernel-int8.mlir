// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{int8-dot=true}))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s --check-prefix=NOVNNI

#a = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#mn = affine_map<(d0, d1) -> (d0, d1)>
#m = affine_map<(d0, d1) -> (d0)>

// The u8 x s8 contraction of attn-cpu-quantize-int8 (dynamic rows, K = 128,
// the weight K-major as [K/4, N] i32 words) becomes outer-product tiles of
// vpdpbusd: per word k, 4 bytes of each row of A broadcast against a row of
// B's words; C starts at zero (its fill is dropped) and the dequantizing
// epilogue runs on whole vectors at the store.
// CHECK-LABEL: func.func @int8
// CHECK-NOT:     linalg.fill
// CHECK:         scf.parallel
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:             vector.load %{{.*}}[%[[K]], %{{.*}}] : memref<32x32xi32>, vector<16xi32>
// CHECK:             %[[K4:.*]] = arith.muli %[[K]], %c4
// CHECK:             %[[A:.*]] = vector.load %{{.*}}[%{{.*}}, %[[K4]]] : memref<?x128xi8>, vector<4xi8>
// CHECK:             vector.bitcast %[[A]] : vector<4xi8> to vector<1xi32>
// CHECK:             vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK:             llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK:           arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK:           vector.store %{{.*}} : memref<?x32xf32>, vector<16xf32>
// CHECK-NOT:     linalg.generic
// NOVNNI-LABEL: func.func @int8
// NOVNNI:         linalg.generic {{.*}} attrs =  {attn.int8_matmul}
// NOVNNI-NOT:     vpdpbusd
func.func @int8(%x: memref<?x128xi8>, %w: memref<32x32xi32>, %s: memref<?xf32>, %out: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  %rows = memref.dim %x, %c0 : memref<?x128xi8>
  %g = memref.expand_shape %x [[0], [1, 2]] output_shape [%rows, 32, 4] : memref<?x128xi8> into memref<?x32x4xi8>
  %c = memref.alloc(%rows) : memref<?x32xi32>
  linalg.fill ins(%zero : i32) outs(%c : memref<?x32xi32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g, %w : memref<?x32x4xi8>, memref<32x32xi32>) outs(%c : memref<?x32xi32>) attrs = {attn.int8_matmul} {
  ^bb0(%in: i8, %word: i32, %acc: i32):
    %j = linalg.index 3 : index
    %c8 = arith.constant 8 : i32
    %ji = arith.index_cast %j : index to i32
    %sh = arith.muli %ji, %c8 : i32
    %hi = arith.shrsi %word, %sh : i32
    %b = arith.trunci %hi : i32 to i8
    %bs = arith.extsi %b : i8 to i32
    %au = arith.extui %in : i8 to i32
    %p = arith.muli %au, %bs : i32
    %r = arith.addi %acc, %p : i32
    linalg.yield %r : i32
  }
  linalg.generic {indexing_maps = [#mn, #m, #mn], iterator_types = ["parallel", "parallel"]} ins(%c, %s : memref<?x32xi32>, memref<?xf32>) outs(%out : memref<?x32xf32>) {
  ^bb0(%p: i32, %scale: f32, %o: f32):
    %f = arith.sitofp %p : i32 to f32
    %y = arith.mulf %f, %scale : f32
    linalg.yield %y : f32
  }
  memref.dealloc %c : memref<?x32xi32>
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>

// N = 8 is no whole number of 16-lane vectors: the loops stay generic.
// CHECK-LABEL: func.func @narrow_n
// CHECK:         linalg.generic {{.*}} attrs =  {attn.int8_matmul}
// CHECK-NOT:     vpdpbusd
func.func @narrow_n(%x: memref<4x32xi8>, %w: memref<8x8xi32>, %c: memref<4x8xi32>) {
  %g = memref.expand_shape %x [[0], [1, 2]] output_shape [4, 8, 4] : memref<4x32xi8> into memref<4x8x4xi8>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g, %w : memref<4x8x4xi8>, memref<8x8xi32>) outs(%c : memref<4x8xi32>) attrs = {attn.int8_matmul} {
  ^bb0(%in: i8, %word: i32, %acc: i32):
    %au = arith.extui %in : i8 to i32
    %r = arith.addi %acc, %au : i32
    linalg.yield %r : i32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#mn = affine_map<(d0, d1) -> (d0, d1)>
#perm = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The words bound in column panels (attn-cpu-transpose-weights), as
// bufferization leaves them: W [32, 128] i32 is a copy of the panels
// [2, 32, 64]. The VNNI tiles read their panel in place, and the copy, its
// buffer and its view go.
// CHECK-LABEL: func.func @int8_bound_panels
// CHECK-NOT:     memref<32x2x64xi32>
// CHECK:         scf.parallel
// CHECK:               %[[PI:.*]] = arith.divui %{{.*}}, %c64{{[_0-9]*}}
// CHECK:               %[[PANEL:.*]] = memref.subview %arg1[%[[PI]], 0, 0] [1, 32, 64] [1, 1, 1] : memref<2x32x64xi32> to memref<32x64xi32, strided<[64, 1], offset: ?>>
// CHECK:               scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:                 vector.load %[[PANEL]][%[[K]], %{{.*}}] : memref<32x64xi32, strided<[64, 1], offset: ?>>, vector<16xi32>
// CHECK:                 llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref<32x2x64xi32>
// CHECK:         return
// NOVNNI-LABEL: func.func @int8_bound_panels
// NOVNNI:         linalg.generic {{.*}} ins(%arg1 : memref<2x32x64xi32>)
// NOVNNI:         linalg.generic {{.*}} attrs = {attn.int8_matmul, attn.tile
func.func @int8_bound_panels(%x: memref<8x128xi8>, %panels: memref<2x32x64xi32>, %out: memref<8x128xf32>) {
  %zero = arith.constant 0 : i32
  %copy = memref.alloc() : memref<32x2x64xi32>
  linalg.generic {indexing_maps = [#perm, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%panels : memref<2x32x64xi32>) outs(%copy : memref<32x2x64xi32>) {
  ^bb0(%in: i32, %o: i32):
    linalg.yield %in : i32
  }
  %w = memref.collapse_shape %copy [[0], [1, 2]] : memref<32x2x64xi32> into memref<32x128xi32>
  %g = memref.expand_shape %x [[0], [1, 2]] output_shape [8, 32, 4] : memref<8x128xi8> into memref<8x32x4xi8>
  %c = memref.alloc() : memref<8x128xi32>
  linalg.fill ins(%zero : i32) outs(%c : memref<8x128xi32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g, %w : memref<8x32x4xi8>, memref<32x128xi32>) outs(%c : memref<8x128xi32>) attrs = {attn.int8_matmul, attn.tile = #attn.tile<vector_width = 16, column_block = 64>} {
  ^bb0(%in: i8, %word: i32, %acc: i32):
    %j = linalg.index 3 : index
    %c8 = arith.constant 8 : i32
    %ji = arith.index_cast %j : index to i32
    %sh = arith.muli %ji, %c8 : i32
    %hi = arith.shrsi %word, %sh : i32
    %b = arith.trunci %hi : i32 to i8
    %bs = arith.extsi %b : i8 to i32
    %au = arith.extui %in : i8 to i32
    %p = arith.muli %au, %bs : i32
    %r = arith.addi %acc, %p : i32
    linalg.yield %r : i32
  }
  linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x128xi32>) outs(%out : memref<8x128xf32>) {
  ^bb0(%p: i32, %o: f32):
    %f = arith.sitofp %p : i32 to f32
    linalg.yield %f : f32
  }
  memref.dealloc %c : memref<8x128xi32>
  memref.dealloc %copy : memref<32x2x64xi32>
  return
}
