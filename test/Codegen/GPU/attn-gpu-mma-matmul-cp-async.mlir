// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="stages=2" | FileCheck %s --check-prefix=TWO
// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="staging=plain ldmatrix=0" | FileCheck %s --check-prefix=PLAIN
// RUN: not attn-opt %s --split-input-file --attn-gpu-mma-matmul="staging=tma" 2>&1 | FileCheck %s --check-prefix=BADSTAGING
// RUN: not attn-opt %s --split-input-file --attn-gpu-mma-matmul="stages=1" 2>&1 | FileCheck %s --check-prefix=BADSTAGES

// attn-gpu-mma-matmul's sm_80 data movement (the default, staging=cp-async
// ldmatrix=1): A and B tiles staged by nvgpu.device_async_copy in a
// multi-stage pipeline, fragments loaded with nvgpu.ldmatrix. The plain path
// (staging=plain ldmatrix=0) is attn-gpu-mma-matmul.mlir and
// attn-gpu-mma-matmul-ragged.mlir. Numerics, synchronization and the
// zero fill: test/Integration/GPU/mma-fragment-layout.test (IR-level
// emulation with ldmatrix and cp.async modelled from the PTX ISA).

// TWO-LABEL: func.func @three_stages(
// TWO:         memref.alloca() : memref<2x32x40xf16, #gpu.address_space<workgroup>>
// TWO:         nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// PLAIN-LABEL: func.func @three_stages(
// PLAIN-NOT:   nvgpu.device_async
// PLAIN-NOT:   nvgpu.ldmatrix
// PLAIN:       memref.alloca() : memref<32x40xf16, #gpu.address_space<workgroup>>
// PLAIN-NOT:   nvgpu.device_async
// PLAIN-NOT:   nvgpu.ldmatrix
// PLAIN-LABEL: func.func @k20(
// BADSTAGING: error: attn-gpu-mma-matmul: staging must be cp-async or plain, not 'tma'
// BADSTAGES: error: attn-gpu-mma-matmul: stages must be >= 2

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// M = 32, N = 64, K = 128: 4 k steps of 32, so a 3-stage pipeline (A
// [3][32][32 + 8], B [3][64][32 + 8]). The prologue commits the groups of k
// steps 0 and 1 (16-byte cp.async.cg copies, 1 of A and 2 of B per
// thread); each step waits for its own group (the next step's may stay
// pending, except in the last step, after which nothing was committed), one
// barrier, prefetches step + 2 into buffer (step + 2) % 3 when there is one
// (else passes on a token no wait uses: no empty commit), and loads its
// fragments with ldmatrix x4 (A; B two n8 tiles at a time) from buffer
// step % 3. The second RUN line parses the printed kernel again.
// CHECK-LABEL: func.func @three_stages(
// CHECK-SAME:    %[[X:[^:]+]]: memref<32x128xf16>, %[[W:[^:]+]]: memref<64x128xf16>, %[[C:[^:]+]]: memref<32x64xf32>)
// CHECK:         gpu.launch
// CHECK:           %[[AS:.*]] = memref.alloca() : memref<3x32x40xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[BS:.*]] = memref.alloca() : memref<3x64x40xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[A0:.*]] = nvgpu.device_async_copy %[[X]][%{{.*}}, %{{.*}}], %[[AS]][%[[S0:.*]], %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<32x128xf16> to memref<3x32x40xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[B0:.*]] = nvgpu.device_async_copy %[[W]][%{{.*}}, %{{.*}}], %[[BS]][%[[S0]], %{{.*}}, %{{.*}}], 8 {bypassL1}
// CHECK:           %[[B1:.*]] = nvgpu.device_async_copy %[[W]]
// CHECK:           %[[G0:.*]] = nvgpu.device_async_create_group %[[A0]], %[[B0]], %[[B1]]
// CHECK-COUNT-3:   nvgpu.device_async_copy
// CHECK:           %[[G1:.*]] = nvgpu.device_async_create_group
// CHECK:           scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[P0:.*]] = %[[G0]], %[[P1:.*]] = %[[G1]]) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, !nvgpu.device.async.token, !nvgpu.device.async.token)
// CHECK:             %[[STEP:.*]] = arith.divui %[[K0]], %{{.*}} : index
// CHECK:             %[[REM:.*]] = arith.subi %c3{{.*}}, %[[STEP]] : index
// CHECK:             %[[LAST:.*]] = arith.cmpi eq, %[[REM]], %c0{{.*}} : index
// CHECK-NEXT:        scf.if %[[LAST]] {
// CHECK-NEXT:          nvgpu.device_async_wait %[[P0]] {numGroups = 0 : i32}
// CHECK-NEXT:        } else {
// CHECK-NEXT:          nvgpu.device_async_wait %[[P0]] {numGroups = 1 : i32}
// CHECK-NEXT:        }
// CHECK-NEXT:        gpu.barrier
// CHECK:             %[[NEXT:.*]] = scf.if %{{.*}} -> (!nvgpu.device.async.token) {
// CHECK-COUNT-3:       nvgpu.device_async_copy {{.*}} {bypassL1}
// CHECK:               %[[G:.*]] = nvgpu.device_async_create_group
// CHECK:               scf.yield %[[G]] : !nvgpu.device.async.token
// CHECK:             } else {
// CHECK-NEXT:          scf.yield %[[P0]] : !nvgpu.device.async.token
// CHECK:             %[[STAGE:.*]] = arith.remui %[[STEP]], %c3{{.*}} : index
// CHECK:             nvgpu.ldmatrix %[[AS]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<3x32x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-COUNT-2:     nvgpu.ldmatrix %[[BS]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<3x64x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK-COUNT-3:     nvgpu.ldmatrix
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK-NOT:         nvgpu.mma.sync
// CHECK-NOT:         gpu.barrier
// CHECK:             scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P1]], %[[NEXT]] :
// CHECK-NOT:       vector.load %[[X]]
// CHECK-NOT:       vector.load %[[W]]
// CHECK:           gpu.terminator
func.func @three_stages(%x: memref<32x128xf16>, %w: memref<64x128xf16>, %c: memref<32x64xf32>) {
  %xf = memref.alloc() : memref<32x128xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x128xf16>) outs(%xf : memref<32x128xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<64x128xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x128xf16>) outs(%wf : memref<64x128xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<32x128xf32>, memref<64x128xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<32x128xf32>
  memref.dealloc %wf : memref<64x128xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// K = 20 (one ragged k step; K % 8 = 4): 8-byte copies (cp.async.ca: 4
// elements, no bypassL1), zero-filled past K (source size 4 or 0, the
// column clamped to K - 4); a pipeline of 2 stages (the minimum), the
// single B n8 tile loaded with ldmatrix x2.
// CHECK-LABEL: func.func @k20(
// CHECK-SAME:    %[[X:[^:]+]]: memref<16x20xf16>
// CHECK:           %[[AS:.*]] = memref.alloca() : memref<2x16x40xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[COL:.*]], %c20{{.*}} : index
// CHECK:           %[[CL:.*]] = arith.minsi %[[COL]], %c16{{.*}} : index
// CHECK:           %[[N:.*]] = arith.select %[[IN]], %c4{{.*}}, %c0{{.*}} : index
// CHECK:           nvgpu.device_async_copy %[[X]][%{{.*}}, %[[CL]]], %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}], 4, %[[N]] : memref<16x20xf16> to memref<2x16x40xf16, #gpu.address_space<workgroup>>
// CHECK:           scf.for
// CHECK:             nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK-NEXT:        gpu.barrier
// CHECK:             nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = false} : memref<2x8x40xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
func.func @k20(%x: memref<16x20xf16>, %w: memref<24x20xf16>, %c: memref<16x24xf32>) {
  %xf = memref.alloc() : memref<16x20xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x20xf16>) outs(%xf : memref<16x20xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<24x20xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<24x20xf16>) outs(%wf : memref<24x20xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x20xf32>, memref<24x20xf32>) outs(%c : memref<16x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<16x20xf32>
  memref.dealloc %wf : memref<24x20xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// K = 17 (odd): rows start 2 bytes apart, too little for any cp.async, so
// the kernel keeps plain staging (one buffer between two barriers per
// step), its fragments still from ldmatrix.
// CHECK-LABEL: func.func @k_odd(
// CHECK-NOT:       nvgpu.device_async
// CHECK:           memref.alloca() : memref<16x40xbf16, #gpu.address_space<workgroup>>
// CHECK:           scf.for
// CHECK-NEXT:        gpu.barrier
// CHECK:             vector.store %{{.*}} : memref<16x40xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK:             gpu.barrier
// CHECK:             nvgpu.ldmatrix {{.*}} : memref<16x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK:             nvvm.mma.sync
// CHECK-NOT:       nvgpu.device_async
func.func @k_odd(%x: memref<16x17xbf16>, %w: memref<16x17xbf16>, %c: memref<16x16xf32>) {
  %xf = memref.alloc() : memref<16x17xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x17xbf16>) outs(%xf : memref<16x17xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<16x17xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<16x17xbf16>) outs(%wf : memref<16x17xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x17xf32>, memref<16x17xf32>) outs(%c : memref<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<16x17xf32>
  memref.dealloc %wf : memref<16x17xf32>
  return
}
