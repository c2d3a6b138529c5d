// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="wgmma=1 tma=1" | FileCheck %s --check-prefix=TMA
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="staging=plain ldmatrix=0" | FileCheck %s --check-prefix=PLAIN

// A run-time M (batch * sequence rows, `?` in A and C) with N and K static:
// the same tensor-core kernels with A's rows bounded by memref.dim of A. The
// grid's row tiles are a ceil-div on the host, the A staging copies clamp
// their rows to M - 1 and zero-fill rows at or past M (cp.async source size
// 0), and C's loads and stores are guarded by row < M. Numerics at run-time
// lengths: test/Integration/GPU/dynamic-emulation.test.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// M = ?, N = K = 64: the full 64 x 64 block (2 x 2 warps of 2 x 4 tiles),
// grid (1, ceil(M / 64)).
// CHECK-LABEL: func.func @dyn_f16(
// CHECK-SAME:    %[[X:[^:]+]]: memref<?x64xf16>, %[[W:[^:]+]]: memref<64x64xf16>, %[[C:[^:]+]]: memref<?x64xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         memref.dim %[[X]], %{{.*}} : memref<?x64xf16>
// CHECK:         %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xf16>
// CHECK-NEXT:    %[[C63:.*]] = arith.constant 63 : index
// CHECK-NEXT:    %[[M63:.*]] = arith.addi %[[M]], %[[C63]] : index
// CHECK-NEXT:    %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[TILES:.*]] = arith.divui %[[M63]], %[[C64]] : index
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[TILES]], %{{.*}} = %{{.*}}) threads
// CHECK:           %[[LAST:.*]] = arith.subi %[[M]], %{{.*}} : index
// CHECK:           %[[CLAMPED:.*]] = arith.minsi %[[ROW:.*]], %[[LAST]] : index
// CHECK:           %[[CPAIR:.*]] = vector.load %[[C]][%[[CLAMPED]], %{{.*}}] {alignment = 8 : i64} : memref<?x64xf32>, vector<2xf32>
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[M]] : index
// CHECK:           arith.select %[[IN]], %[[CPAIR]], %{{.*}} : vector<2xf32>
// CHECK-COUNT-15:  vector.load %[[C]]
// CHECK:           arith.select %{{.*}} : vector<2xf32>
// CHECK:           %[[AIN:.*]] = arith.cmpi ult, %[[AROW:.*]], %[[M]] : index
// CHECK:           %[[ALAST:.*]] = arith.subi %[[M]], %{{.*}} : index
// CHECK:           %[[ACLAMP:.*]] = arith.minsi %[[AROW]], %[[ALAST]] : index
// CHECK:           %[[ASIZE:.*]] = arith.select %[[AIN]], %{{.*}}, %{{.*}} : index
// CHECK:           nvgpu.device_async_copy %[[X]][%[[ACLAMP]], %{{.*}}], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}], 8, %[[ASIZE]] {bypassL1} : memref<?x64xf16>
// The weight rows need no bounds (N divides): no source size.
// CHECK:           nvgpu.device_async_copy %[[W]][%{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<64x64xf16>
// CHECK:           scf.for
// CHECK-COUNT-16:    nvgpu.mma.sync
// CHECK:           %[[SIN:.*]] = arith.cmpi ult, %[[SROW:.*]], %[[M]] : index
// CHECK:           scf.if %[[SIN]] {
// CHECK-NEXT:        vector.store %{{.*}}, %[[C]][%[[SROW]], %{{.*}}] {alignment = 8 : i64} : memref<?x64xf32>, vector<2xf32>
// CHECK:           gpu.terminator
// CHECK:         return
// At sm_90a the A tile comes by TMA from a tensor map over A's run-time
// rows (expand_shape with the run-time size; the runtime encodes the map
// from the descriptor's sizes and zero-fills rows past M).
// TMA-LABEL:   func.func @dyn_f16(
// TMA-SAME:      %[[X:[^:]+]]: memref<?x64xf16>
// TMA:           memref.dim %[[X]]
// TMA:           %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xf16>
// TMA-NEXT:      %[[EXP:.*]] = memref.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [%[[M]], 8, 8] : memref<?x64xf16> into memref<?x8x8xf16>
// TMA:           %[[T:.*]] = memref.transpose %[[EXP]] (d0, d1, d2) -> (d1, d0, d2) : memref<?x8x8xf16> to memref<8x?x8xf16, strided<[8, 64, 1]>>
// TMA:           %[[U:.*]] = memref.cast %[[T]]
// TMA:           %[[MAPA:.*]] = nvgpu.tma.create.descriptor %[[U]] box[%{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<4x64x8xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = none, oob = zero, interleave = none>
// TMA:           nvgpu.tma.create.descriptor
// TMA:           gpu.launch
// TMA:             nvgpu.tma.async.load %[[MAPA]]
// TMA:             nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// TMA:             scf.if
// TMA:               vector.store
// TMA:           gpu.terminator
// Plain staging: A's chunks loaded at clamped rows, zeros selected past M.
// PLAIN-LABEL: func.func @dyn_f16(
// PLAIN-SAME:    %[[X:[^:]+]]: memref<?x64xf16>
// PLAIN:         memref.dim %[[X]]
// PLAIN:         %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xf16>
// PLAIN-NEXT:    arith.constant 63 : index
// PLAIN:         gpu.launch
// PLAIN:           scf.for
// PLAIN:             %[[IN:.*]] = arith.cmpi ult, %[[R:.*]], %[[M]] : index
// PLAIN:             %[[LAST:.*]] = arith.subi %[[M]], %{{.*}} : index
// PLAIN:             %[[CL:.*]] = arith.minsi %[[R]], %[[LAST]] : index
// PLAIN:             %[[CHUNK:.*]] = vector.load %[[X]][%[[CL]], %{{.*}}] {alignment = 16 : i64} : memref<?x64xf16>, vector<8xf16>
// PLAIN:             arith.select %[[IN]], %[[CHUNK]], %{{.*}} : vector<8xf16>
// PLAIN:             nvgpu.mma.sync
func.func @dyn_f16(%x: memref<?x64xf16>, %w: memref<64x64xf16>, %c: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xf16>
  %xf = memref.alloc(%m) : memref<?x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf16>) outs(%xf : memref<?x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x64xf16>) outs(%wf : memref<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<?x64xf32>, memref<64x64xf32>) outs(%c : memref<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<?x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// bf16, C zero-filled with run-time rows and a bias epilogue writing
// elsewhere: the fill goes, the bias is added in the guarded stores.
// CHECK-LABEL: func.func @dyn_bf16_bias(
// CHECK-SAME:    %[[X:[^:]+]]: memref<?x64xbf16>, %{{[^:]+}}: memref<96x64xbf16>, %[[BIAS:[^:]+]]: memref<96xf32>, %[[Y:[^:]+]]: memref<?x96xf32>)
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     linalg.generic
// CHECK:         memref.dim %[[X]], %{{.*}} : memref<?x64xbf16>
// CHECK:         %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xbf16>
// CHECK-NEXT:    arith.constant 63 : index
// CHECK:         gpu.launch
// CHECK:           nvvm.mma.sync
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[ROW:.*]], %[[M]] : index
// CHECK:           scf.if %[[IN]] {
// CHECK:             memref.load %[[BIAS]]
// CHECK:             arith.addf
// CHECK:             vector.store %{{.*}}, %[[Y]][%[[ROW]], %{{.*}}] {alignment = 8 : i64} : memref<?x96xf32>, vector<2xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @dyn_bf16_bias(%x: memref<?x64xbf16>, %w: memref<96x64xbf16>, %bias: memref<96xf32>, %y: memref<?x96xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %xf = memref.alloc(%m) : memref<?x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xbf16>) outs(%xf : memref<?x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<96x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<96x64xbf16>) outs(%wf : memref<96x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %c = memref.alloc(%m) : memref<?x96xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x96xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<?x64xf32>, memref<96x64xf32>) outs(%c : memref<?x96xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<?x96xf32>, memref<96xf32>) outs(%y : memref<?x96xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %xf : memref<?x64xf32>
  memref.dealloc %wf : memref<96x64xf32>
  memref.dealloc %c : memref<?x96xf32>
  return
}

// -----

// As bufferization leaves a dynamic projection: C is sized by a memref.dim
// of A's widened 2-D view and the narrowed result by one of C's
// expand_shape. Those dims resolve to the sizes they were built from
// (%s), so the widened copy of A has no other reader and goes, and the
// narrow buffer, now sized before the kernel, takes the stores: no extf or
// truncf generic (kernel) is left, as for static shapes.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @dyn_reshape_dims(
// CHECK-SAME:    %[[X:[^:]+]]: memref<1x?x64xf16>, %[[W:[^:]+]]: memref<64x64xf16>, %[[OUT:[^:]+]]: memref<1x?x64xf16>)
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     xf32>
// CHECK:         %[[S:.*]] = memref.dim %[[X]], %{{.*}} : memref<1x?x64xf16>
// CHECK-NEXT:    %[[N:.*]] = memref.alloc(%[[S]]) : memref<1x?x64xf16>
// CHECK-NEXT:    %[[A:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<1x?x64xf16> into memref<?x64xf16>
// CHECK-NEXT:    %[[NC:.*]] = memref.collapse_shape %[[N]] {{\[\[}}0, 1], [2]] : memref<1x?x64xf16> into memref<?x64xf16>
// CHECK:         gpu.launch
// CHECK:           nvgpu.device_async_copy %[[A]]
// CHECK:           nvgpu.device_async_copy %[[W]]
// CHECK:           nvgpu.mma.sync
// CHECK:           vector.store %{{.*}}, %[[NC]][%{{.*}}, %{{.*}}] {{.*}} : memref<?x64xf16>, vector<2xf16>
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
// CHECK:         memref.copy %[[N]], %[[OUT]]
// CHECK-NEXT:    memref.dealloc %[[N]]
// CHECK-NEXT:    return
func.func @dyn_reshape_dims(%x: memref<1x?x64xf16>, %w: memref<64x64xf16>, %out: memref<1x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %s = memref.dim %x, %c1 : memref<1x?x64xf16>
  %xf = memref.alloc(%s) : memref<1x?x64xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<1x?x64xf16>) outs(%xf : memref<1x?x64xf32>) {
  ^bb0(%in: f16, %o: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %xc = memref.collapse_shape %xf [[0, 1], [2]] : memref<1x?x64xf32> into memref<?x64xf32>
  %m = memref.dim %xc, %c0 : memref<?x64xf32>
  %wf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x64xf16>) outs(%wf : memref<64x64xf32>) {
  ^bb0(%in: f16, %o: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %c = memref.alloc(%m) : memref<?x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x64xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xc, %wf : memref<?x64xf32>, memref<64x64xf32>) outs(%c : memref<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %ce = memref.expand_shape %c [[0, 1], [2]] output_shape [1, %s, 64] : memref<?x64xf32> into memref<1x?x64xf32>
  %s2 = memref.dim %ce, %c1 : memref<1x?x64xf32>
  %n = memref.alloc(%s2) : memref<1x?x64xf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ce : memref<1x?x64xf32>) outs(%n : memref<1x?x64xf16>) {
  ^bb0(%in: f32, %o: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  memref.copy %n, %out : memref<1x?x64xf16> to memref<1x?x64xf16>
  memref.dealloc %xf : memref<1x?x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  memref.dealloc %c : memref<?x64xf32>
  memref.dealloc %n : memref<1x?x64xf16>
  return
}
