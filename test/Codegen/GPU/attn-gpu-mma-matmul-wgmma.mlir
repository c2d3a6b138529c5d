// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="wgmma=1" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="wgmma=1" | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul | FileCheck %s --check-prefix=SYNC
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="wgmma=1 staging=plain" | FileCheck %s --check-prefix=PLAIN

// attn-gpu-mma-matmul{wgmma} (what attn-to-cuda picks for --chip=sm_90a):
// one warpgroup (128 threads) per 64 x 8nt block of C; A and B tiles staged
// by the cp.async pipeline in wgmma's no-swizzle K-major core-matrix layout
// [stage][BK / 8][rows][8] (core matrices of 8 rows x 16 bytes, contiguous);
// per k step: the cp.async wait, fence.proxy.async (wgmma reads through the
// async proxy), the barrier, the prefetch, then wgmma.fence, BK / 16
// wgmma.mma_async m64nNk16 chained on one accumulator struct, commit and
// wait 0. Descriptors: (address >> 4) & 0x3FFF | (LBO >> 4) << 16 |
// (SBO >> 4) << 32 with LBO = rows * 16 bytes (the next 8 columns of K) and
// SBO = 128 bytes (the next 8 rows): 64 rows give 64 << 16 | 8 << 32 =
// 34363932672. Without the option (SYNC) the same functions keep mma.sync
// with ldmatrix, unchanged; plain staging (PLAIN) cannot feed wgmma.
// Numerics and synchronization: test/Integration/GPU/mma-fragment-layout.test.

// CHECK-LABEL: func.func @f16_64x64x64(
// CHECK-SAME:    %[[X:[^:]+]]: memref<64x64xf16>, %[[W:[^:]+]]: memref<64x64xf16>, %[[C:[^:]+]]: memref<64x64xf32>)
// CHECK:         %[[C128:.*]] = arith.constant 128 : index
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %[[C128]],
// CHECK:           %[[AS:.*]] = memref.alloca() : memref<2x4x64x8xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[BS:.*]] = memref.alloca() : memref<2x4x64x8xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[APTR:.*]] = memref.extract_aligned_pointer_as_index %[[AS]]
// CHECK:           %[[ABASE:.*]] = arith.index_cast %[[APTR]] : index to i64
// CHECK:           %[[BPTR:.*]] = memref.extract_aligned_pointer_as_index %[[BS]]
// CHECK:           %[[BBASE:.*]] = arith.index_cast %[[BPTR]] : index to i64
// CHECK:           %[[COL:.*]] = arith.muli %{{.*}}, %c8{{.*}} : index
// CHECK:           %[[KC:.*]] = arith.divui %[[COL]], %c8{{.*}} : index
// CHECK:           %[[KE:.*]] = arith.remui %[[COL]], %c8{{.*}} : index
// CHECK:           nvgpu.device_async_copy %[[X]][%{{.*}}, %{{.*}}], %[[AS]][%c0{{.*}}, %[[KC]], %{{.*}}, %[[KE]]], 8 {bypassL1}
// CHECK:           nvgpu.device_async_create_group
// CHECK:           scf.for
// CHECK:             nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:        gpu.barrier
// CHECK:             scf.if
// CHECK:               nvgpu.device_async_copy
// CHECK:             %[[STAGE:.*]] = arith.remui %{{.*}}, %c2{{.*}} : index
// CHECK:             llvm.mlir.poison : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK:             %[[ACC:.*]] = llvm.insertvalue %{{.*}}[31]
// CHECK-NEXT:        nvvm.wgmma.fence.aligned
// CHECK:             %[[S64:.*]] = arith.index_cast %[[STAGE]] : index to i64
// CHECK:             %[[SOFF:.*]] = arith.muli %[[S64]], %c4096_i64{{.*}} : i64
// CHECK:             %[[AADDR:.*]] = arith.addi %[[ABASE]], %[[SOFF]] : i64
// CHECK:             %[[ASH:.*]] = arith.shrui %[[AADDR]], %c4_i64{{.*}} : i64
// CHECK:             %[[AMASK:.*]] = arith.andi %[[ASH]], %c16383_i64{{.*}} : i64
// CHECK:             %[[DESCA:.*]] = arith.ori %[[AMASK]], %c34363932672_i64{{.*}} : i64
// CHECK:             %[[BADDR:.*]] = arith.addi %[[BBASE]], %{{.*}} : i64
// CHECK:             %[[DESCB:.*]] = arith.ori %{{.*}}, %c34363932672_i64{{.*}} : i64
// CHECK-NEXT:        %[[D0:.*]] = nvvm.wgmma.mma_async %[[DESCA]], %[[DESCB]], %[[ACC]], <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// The second k16 slice starts 2 x 1024 bytes further in both tiles.
// CHECK:             arith.addi %{{.*}}, %c2048_i64{{.*}} : i64
// CHECK:             arith.addi %{{.*}}, %c2048_i64{{.*}} : i64
// CHECK:             %[[D1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D0]], <m = 64, n = 64, k = 16>
// CHECK-NEXT:        nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:        nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:        llvm.extractvalue %[[D1]][0]
// CHECK-NOT:         nvgpu.mma.sync
// CHECK-NOT:         nvgpu.ldmatrix
// CHECK:             scf.yield
// SYNC-LABEL:  func.func @f16_64x64x64(
// SYNC-NOT:      nvvm.wgmma
// SYNC:          memref.alloca() : memref<2x64x40xf16, #gpu.address_space<workgroup>>
// SYNC-NOT:      nvvm.wgmma
// SYNC-NOT:      nvvm.fence.proxy
// SYNC:          nvgpu.ldmatrix
// SYNC:          nvgpu.mma.sync
// SYNC-NOT:      nvvm.wgmma
// SYNC-NOT:      nvvm.fence.proxy
// SYNC:          return
// PLAIN-LABEL: func.func @f16_64x64x64(
// PLAIN-NOT:     nvvm.wgmma
// PLAIN:         nvgpu.mma.sync
// PLAIN-NOT:     nvvm.wgmma
// PLAIN:         return

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

// bf16, M = 16, N = 99, K = 32 (ragged M and N: blocks of 64 x 64, a grid
// of 2 x 1, rows past 16 and columns past 99 staged as zeros and masked in
// C; one k step, 2 stages as the pass never goes below): both tiles have
// 64 rows, so both descriptors carry A's offsets.
// CHECK-LABEL: func.func @bf16_ragged_n(
// CHECK:         %[[GX:.*]] = arith.constant 2 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GX]],
// CHECK:         memref.alloca() : memref<2x4x64x8xbf16, #gpu.address_space<workgroup>>
// CHECK:         memref.alloca() : memref<2x4x64x8xbf16, #gpu.address_space<workgroup>>
// CHECK:         nvgpu.device_async_copy {{.*}} : memref<99x32xbf16> to memref<2x4x64x8xbf16, #gpu.address_space<workgroup>>
// CHECK:         scf.for
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK:           arith.ori %{{.*}}, %c34363932672_i64{{.*}} : i64
// CHECK:           arith.ori %{{.*}}, %c34363932672_i64{{.*}} : i64
// CHECK-NEXT:      nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:           nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>
// CHECK-NEXT:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 0
// SYNC-LABEL:  func.func @bf16_ragged_n(
// SYNC-NOT:      nvvm.wgmma
// SYNC:          nvvm.mma.sync
// SYNC-NOT:      nvvm.wgmma
// SYNC:          return

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @bf16_ragged_n(%x: memref<16x32xbf16>, %w: memref<99x32xbf16>, %c: memref<16x99xf32>) {
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

// M = 16, N = 8, K = 16: a B tile of 8 x 16 elements is 16 chunks of 16
// bytes (32 of 8, 64 of 4), too few for the warpgroup's 128 threads to take
// the same number each: no cp.async staging of B, so the kernel keeps
// mma.sync (one warp of 16 x 8) with the wgmma option too.
// CHECK-LABEL: func.func @fallback_tiny(
// CHECK-NOT:     nvvm.wgmma
// CHECK-NOT:     nvvm.fence.proxy
// CHECK:         memref.alloca() : memref<2x16x24xf16, #gpu.address_space<workgroup>>
// CHECK:         nvgpu.ldmatrix
// CHECK:         nvgpu.mma.sync
// CHECK-NOT:     nvvm.wgmma
// CHECK:         return

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @fallback_tiny(%x: memref<16x16xf16>, %w: memref<8x16xf16>, %c: memref<16x8xf32>) {
  %xf = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x16xf16>) outs(%xf : memref<16x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<8x16xf16>) outs(%wf : memref<8x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x16xf32>, memref<8x16xf32>) outs(%c : memref<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<16x16xf32>
  memref.dealloc %wf : memref<8x16xf32>
  return
}
