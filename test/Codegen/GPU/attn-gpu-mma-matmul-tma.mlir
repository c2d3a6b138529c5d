// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="wgmma=1 tma=1" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="wgmma=1 tma=1" | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="wgmma=1" | FileCheck %s --check-prefix=NOTMA
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="tma=1" | FileCheck %s --check-prefix=NOTMA

// attn-gpu-mma-matmul{wgmma tma} (what attn-to-cuda picks for
// --chip=sm_90a): operands that are plain row-major matrices (identity
// layout at the start of an allocation, K % 8 == 0) are loaded by the
// Tensor Memory Accelerator. On the host, before the launch, each gets a
// tensor map: [R, K] viewed as [K / 8][R][8] (expand_shape + transpose,
// strides [8, K, 1]), cast to an unranked memref (what the encode call
// reads), box [BK / 8, rows, 8]: a box lands in shared memory in the
// no-swizzle core-matrix layout the wgmma descriptors already describe.
// In the kernel: 128-byte aligned tiles, one mbarrier per stage initialized
// by thread 0 for one arrival, a barrier; thread 0 issues each step's
// arrive.expect_tx (the bytes of both boxes: 2 x 4 x 64 x 8 x 2 = 8192) and
// the two nvgpu.tma.async.load at coordinates (0, first row, k0 / 8),
// innermost first; step i waits for parity (i / stages) % 2 on mbarrier
// i % stages. No cp.async, no cp.async waits and no fence.proxy.async (TMA
// writes through the async proxy wgmma reads through). Without `tma`, or
// without `wgmma` (mma.sync kernels), nothing changes (NOTMA).
// Numerics and synchronization: test/Integration/GPU/mma-fragment-layout.test.

// CHECK-LABEL: func.func @f16_64x64x64(
// CHECK-SAME:    %[[X:[^:]+]]: memref<64x64xf16>, %[[W:[^:]+]]: memref<64x64xf16>, %[[C:[^:]+]]: memref<64x64xf32>)
// CHECK:         %[[XE:.*]] = memref.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [64, 8, 8] : memref<64x64xf16> into memref<64x8x8xf16>
// CHECK-NEXT:    %[[XT:.*]] = memref.transpose %[[XE]] (d0, d1, d2) -> (d1, d0, d2) : memref<64x8x8xf16> to memref<8x64x8xf16, strided<[8, 64, 1]>>
// CHECK-NEXT:    %[[XU:.*]] = memref.cast %[[XT]] : memref<8x64x8xf16, strided<[8, 64, 1]>> to memref<*xf16>
// CHECK:         %[[MAPA:.*]] = nvgpu.tma.create.descriptor %[[XU]] box[%{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<4x64x8xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = none, oob = zero, interleave = none>
// CHECK:         %[[WE:.*]] = memref.expand_shape %[[W]]
// CHECK:         %[[MAPB:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf16> -> <tensor = memref<4x64x8xf16, #gpu.address_space<workgroup>>
// CHECK:         gpu.launch
// CHECK:           %[[AS:.*]] = memref.alloca() {alignment = 128 : i64} : memref<2x4x64x8xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[BS:.*]] = memref.alloca() {alignment = 128 : i64} : memref<2x4x64x8xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[LEADER:.*]] = arith.cmpi eq, %{{.*}}, %c0{{.*}} : index
// CHECK:           %[[MBAR:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK:           scf.if %[[LEADER]] {
// CHECK:             nvgpu.mbarrier.init %[[MBAR]][%{{.*}}], %{{.*}} : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK:             nvgpu.mbarrier.init %[[MBAR]][%{{.*}}], %{{.*}} : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.barrier
// CHECK-NOT:       nvgpu.device_async_copy
// CHECK:           scf.if %[[LEADER]] {
// CHECK:             nvgpu.mbarrier.arrive.expect_tx %[[MBAR]][%[[S0:.*]]], %c8192
// CHECK:             %[[DA:.*]] = memref.subview %[[AS]][%[[S0]], 0, 0, 0] [1, 4, 64, 8] [1, 1, 1, 1]
// CHECK:             nvgpu.tma.async.load %[[MAPA]][%{{.*}}, %{{.*}}, %{{.*}}], %[[MBAR]][%[[S0]]] to %[[DA]]
// CHECK:             %[[DB:.*]] = memref.subview %[[BS]][%[[S0]], 0, 0, 0] [1, 4, 64, 8] [1, 1, 1, 1]
// CHECK:             nvgpu.tma.async.load %[[MAPB]][%{{.*}}, %{{.*}}, %{{.*}}], %[[MBAR]][%[[S0]]] to %[[DB]]
// CHECK-NEXT:      }
// CHECK:           scf.for %[[K0:.*]] = {{.*}} iter_args(
// CHECK-NOT:         nvgpu.device_async_wait
// CHECK:             %[[STEP:.*]] = arith.divui %[[K0]], %c32{{.*}} : index
// CHECK:             %[[USE:.*]] = arith.divui %[[STEP]], %c2{{.*}} : index
// CHECK:             %[[ODD:.*]] = arith.remui %[[USE]], %c2{{.*}} : index
// CHECK:             %[[PARITY:.*]] = arith.cmpi ne, %[[ODD]], %c0{{.*}} : index
// CHECK:             %[[WS:.*]] = arith.remui %[[STEP]], %c2{{.*}} : index
// CHECK:             nvgpu.mbarrier.try_wait.parity %[[MBAR]][%[[WS]]], %[[PARITY]], %c10000000
// CHECK-NEXT:        gpu.barrier
// CHECK:             scf.if
// CHECK:               scf.if %[[LEADER]] {
// CHECK:                 nvgpu.mbarrier.arrive.expect_tx %[[MBAR]][%[[NS:.*]]], %c8192
// CHECK:                 nvgpu.tma.async.load %[[MAPA]]{{.*}}, %[[MBAR]][%[[NS]]]
// CHECK:                 nvgpu.tma.async.load %[[MAPB]]{{.*}}, %[[MBAR]][%[[NS]]]
// CHECK-NOT:         nvvm.fence.proxy
// CHECK:             nvvm.wgmma.fence.aligned
// CHECK:             nvvm.wgmma.mma_async
// CHECK:             nvvm.wgmma.mma_async
// CHECK:             nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:         return
// NOTMA-LABEL: func.func @f16_64x64x64(
// NOTMA-NOT:     nvgpu.tma
// NOTMA-NOT:     nvgpu.mbarrier
// NOTMA:         nvgpu.device_async_copy
// NOTMA-NOT:     nvgpu.tma
// NOTMA:         return

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @f16_64x64x64(%x: memref<64x64xf16>, %w: memref<64x64xf16>, %c: memref<64x64xf32>) {
  %xf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf16>) outs(%xf : memref<64x64xf32>) {
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
      ins(%xf, %wf : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<64x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  return
}

// -----

// bf16, M = 16, N = 99, K = 32 (ragged M and N): the boxes of 64 rows reach
// past both tensors' rows (and would past K); the TMA unit zero-fills what
// lies outside the tensor (oob = zero), so the tiles need no clamped,
// zero-selecting copies; C keeps its masks.
// CHECK-LABEL: func.func @bf16_ragged(
// CHECK:         memref.transpose %{{.*}} (d0, d1, d2) -> (d1, d0, d2) : memref<16x4x8xbf16> to memref<4x16x8xbf16, strided<[8, 32, 1]>>
// CHECK:         nvgpu.tma.create.descriptor %{{.*}} : memref<*xbf16> -> <tensor = memref<4x64x8xbf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = none, oob = zero, interleave = none>
// CHECK:         memref.transpose %{{.*}} (d0, d1, d2) -> (d1, d0, d2) : memref<99x4x8xbf16> to memref<4x99x8xbf16, strided<[8, 32, 1]>>
// CHECK:         nvgpu.tma.create.descriptor %{{.*}} : memref<*xbf16> -> <tensor = memref<4x64x8xbf16, #gpu.address_space<workgroup>>
// CHECK:         gpu.launch
// CHECK-NOT:       nvgpu.device_async_copy
// CHECK:           nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%{{.*}}], %c8192
// CHECK:           nvgpu.tma.async.load
// CHECK:           nvgpu.tma.async.load
// CHECK:           scf.for
// CHECK:             nvgpu.mbarrier.try_wait.parity
// CHECK:             nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:         return
// NOTMA-LABEL: func.func @bf16_ragged(
// NOTMA-NOT:     nvgpu.tma
// NOTMA:         return

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @bf16_ragged(%x: memref<16x32xbf16>, %w: memref<99x32xbf16>, %c: memref<16x99xf32>) {
  %xf = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xbf16>) outs(%xf : memref<16x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<99x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<99x32xbf16>) outs(%wf : memref<99x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x32xf32>, memref<99x32xf32>) outs(%c : memref<16x99xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<16x32xf32>
  memref.dealloc %wf : memref<99x32xf32>
  return
}

// -----

// K = 20: rows of 40 bytes are not a multiple of 16, which a tensor map's
// strides must be. The wgmma kernel keeps the cp.async staging (4-byte
// copies) with its wait and fence.proxy.async; no tensor maps.
// CHECK-LABEL: func.func @f16_k20(
// CHECK-NOT:     nvgpu.tma.create.descriptor
// CHECK:         gpu.launch
// CHECK-NOT:       nvgpu.mbarrier
// CHECK:           nvgpu.device_async_copy
// CHECK:           scf.for
// CHECK:             nvgpu.device_async_wait
// CHECK-NEXT:        nvvm.fence.proxy
// CHECK:             nvvm.wgmma.mma_async
// CHECK-NOT:     nvgpu.tma
// CHECK:         return

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @f16_k20(%x: memref<64x20xf16>, %w: memref<64x20xf16>, %c: memref<64x64xf32>) {
  %xf = memref.alloc() : memref<64x20xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x20xf16>) outs(%xf : memref<64x20xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<64x20xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x20xf16>) outs(%wf : memref<64x20xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<64x20xf32>, memref<64x20xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<64x20xf32>
  memref.dealloc %wf : memref<64x20xf32>
  return
}
