// RUN: attn-opt %s --attn-gpu-mma-matmul="staging=plain ldmatrix=0" | FileCheck %s
// RUN: attn-opt %s --attn-gpu-mma-matmul="staging=plain ldmatrix=0 warp-n-tiles=1" | FileCheck %s --check-prefix=NT1
// RUN: attn-opt %s --attn-gpu-mma-matmul="staging=plain ldmatrix=0 fuse-epilogues=0" | FileCheck %s --check-prefix=NOEPI

// f32 contractions C[m, n] += A[m, k] * B[n, k] whose operands were widened
// from f16/bf16 by extf generics become one gpu.launch of 2 x 2 warps (fewer
// for small M, N) multiplying the narrow buffers with mma.sync m16n8k16, A and
// B rows staged in shared memory per k step (ragged shapes: edge blocks,
// attn-gpu-mma-matmul-ragged.mlir). Near misses stay. Numerics:
// test/Integration/GPU/mma-fragment-layout.test (IR-level emulation).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>

// M = 32, N = 64, K = 64: 2 x 2 warps of 1 x 4 mma tiles make one 32 x 64
// block (grid 1 x 1, 128 threads); k steps of 32 stage A [32][32 + 8] and
// B [64][32 + 8]; per step each warp loads 2 A and 8 B fragments from shared
// memory for 8 mma.sync. The widened buffers and their generics are gone.
// CHECK-LABEL: func.func @f16(
// CHECK-SAME:    %[[X:[^:]+]]: memref<32x64xf16>, %[[W:[^:]+]]: memref<64x64xf16>, %[[C:[^:]+]]: memref<32x64xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[THREADS:.*]] = arith.constant 128 : index
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[ONE]]) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK:           %[[AS:.*]] = memref.alloca() : memref<32x40xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[BS:.*]] = memref.alloca() : memref<64x40xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-8:   vector.load %[[C]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<32x64xf32>, vector<2xf32>
// CHECK:           scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK-NEXT:        gpu.barrier
// CHECK:             vector.load %[[X]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x64xf16>, vector<8xf16>
// CHECK:             vector.store %{{.*}}, %[[AS]][%{{.*}}, %{{.*}}] {alignment = 16 : i64}
// CHECK-COUNT-2:     vector.load %[[W]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x64xf16>, vector<8xf16>
// CHECK:             gpu.barrier
// CHECK-COUNT-4:     vector.load %[[AS]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<32x40xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-COUNT-8:     vector.load %[[BS]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<64x40xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-COUNT-4:     nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK-NOT:         nvgpu.mma.sync
// CHECK:             scf.yield
// CHECK-COUNT-8:   vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<32x64xf32>, vector<2xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// CHECK:         return
// With one n8 tile per warp the block is 32 x 16: 1 mma per warp and k16.
// NT1-LABEL:   func.func @f16(
// NT1:           gpu.launch
// NT1:             memref.alloca() : memref<16x40xf16, #gpu.address_space<workgroup>>
// NT1:             scf.for
// NT1-COUNT-2:       nvgpu.mma.sync
// NT1-NOT:           nvgpu.mma.sync
// NT1:           gpu.terminator
func.func @f16(%x: memref<32x64xf16>, %w: memref<64x64xf16>, %c: memref<32x64xf32>) {
  %xf = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x64xf16>) outs(%xf : memref<32x64xf32>) {
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
      ins(%xf, %wf : memref<32x64xf32>, memref<64x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<32x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  return
}

// As attn.linear lowers a rank-3 input: the contraction reads a collapsed
// view of the widened input, so the kernel reads the same view of the f16
// input. N = 24 is not a multiple of 16: one warp of one n8 tile per block,
// grid 3 x 1.
// The widened input is also read after the contraction, so it stays.
// CHECK-LABEL: func.func @f16_collapsed(
// CHECK-SAME:    %[[X:[^:]+]]: memref<1x16x32xf16>, %[[W:[^:]+]]: memref<24x32xf16>, %[[C:[^:]+]]: memref<16x24xf32>, %[[R:[^:]+]]: memref<1x16x32xf32>)
// CHECK:         %[[XF:.*]] = memref.alloc() : memref<1x16x32xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<1x16x32xf16>) outs(%[[XF]] : memref<1x16x32xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[XV:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<1x16x32xf16> into memref<16x32xf16>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[GX:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[WARP:.*]] = arith.constant 32 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GX]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads({{.*}}) in (%{{.*}} = %[[WARP]],
// CHECK:           vector.load %[[XV]]
// CHECK:           vector.load %[[W]]
// CHECK-COUNT-2:   nvgpu.mma.sync
// CHECK-NOT:       nvgpu.mma.sync
// CHECK:           gpu.terminator
// CHECK:         memref.copy %[[XF]], %[[R]]
func.func @f16_collapsed(%x: memref<1x16x32xf16>, %w: memref<24x32xf16>, %c: memref<16x24xf32>, %r: memref<1x16x32xf32>) {
  %xf = memref.alloc() : memref<1x16x32xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<1x16x32xf16>) outs(%xf : memref<1x16x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %xv = memref.collapse_shape %xf [[0, 1], [2]] : memref<1x16x32xf32> into memref<16x32xf32>
  %wf = memref.alloc() : memref<24x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<24x32xf16>) outs(%wf : memref<24x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xv, %wf : memref<16x32xf32>, memref<24x32xf32>) outs(%c : memref<16x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.copy %xf, %r : memref<1x16x32xf32> to memref<1x16x32xf32>
  return
}

// bf16: the same fragments, packed into i32 registers for nvvm.mma.sync.
// CHECK-LABEL: func.func @bf16(
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             vector.load %{{.*}} : memref<16x16xbf16>, vector<8xbf16>
// CHECK:             vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:             nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-SAME:          layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME:          multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME:          shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME:          (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @bf16(%x: memref<16x16xbf16>, %w: memref<8x16xbf16>, %c: memref<16x8xf32>) {
  %xf = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x16xbf16>) outs(%xf : memref<16x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<8x16xbf16>) outs(%wf : memref<8x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x16xf32>, memref<8x16xf32>) outs(%c : memref<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// A and B are the same widened buffer (x * x^T), read through one view.
// CHECK-LABEL: func.func @same_operand(
// CHECK-SAME:    %[[X:[^:]+]]: memref<1x16x16xf16>
// CHECK-NOT:     linalg.generic
// CHECK:         %[[XV:.*]] = memref.collapse_shape %[[X]]
// CHECK-NOT:     memref.collapse_shape
// CHECK:         gpu.launch
// CHECK-COUNT-2:   vector.load %[[XV]][
// CHECK:           nvgpu.mma.sync
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc
// CHECK:         return
func.func @same_operand(%x: memref<1x16x16xf16>, %c: memref<16x16xf32>) {
  %xf = memref.alloc() : memref<1x16x16xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<1x16x16xf16>) outs(%xf : memref<1x16x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %xv = memref.collapse_shape %xf [[0, 1], [2]] : memref<1x16x16xf32> into memref<16x16xf32>
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xv, %xv : memref<16x16xf32>, memref<16x16xf32>) outs(%c : memref<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<1x16x16xf32>
  return
}

// K = 40 is not a multiple of 16: a ragged kernel (bounds-checked k steps,
// see attn-gpu-mma-matmul-ragged.mlir).
// CHECK-LABEL: func.func @k_not_multiple_of_16(
// CHECK-NOT:     linalg.generic
// CHECK:         gpu.launch
// CHECK:           nvgpu.mma.sync
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @k_not_multiple_of_16(%x: memref<16x40xf16>, %w: memref<8x40xf16>, %c: memref<16x8xf32>) {
  %xf = memref.alloc() : memref<16x40xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x40xf16>) outs(%xf : memref<16x40xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<8x40xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<8x40xf16>) outs(%wf : memref<8x40xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x40xf32>, memref<8x40xf32>) outs(%c : memref<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// M = 8 is not a multiple of 16: a ragged kernel (masked rows, see
// attn-gpu-mma-matmul-ragged.mlir).
// CHECK-LABEL: func.func @m_not_multiple_of_16(
// CHECK-NOT:     linalg.generic
// CHECK:         gpu.launch
// CHECK:           nvgpu.mma.sync
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @m_not_multiple_of_16(%x: memref<8x16xf16>, %w: memref<8x16xf16>, %c: memref<8x8xf32>) {
  %xf = memref.alloc() : memref<8x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x16xf16>) outs(%xf : memref<8x16xf32>) {
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
      ins(%xf, %wf : memref<8x16xf32>, memref<8x16xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// Near miss: f32 inputs (no extf from a narrow type).
// CHECK-LABEL: func.func @f32_inputs(
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic
// CHECK:         return
func.func @f32_inputs(%x: memref<16x16xf32>, %w: memref<8x16xf32>, %c: memref<16x8xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x16xf32>, memref<8x16xf32>) outs(%c : memref<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// Near miss: B indexed [k, n] (not the NT contraction).
// CHECK-LABEL: func.func @not_nt(
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-3: linalg.generic
// CHECK:         return
func.func @not_nt(%x: memref<16x16xf16>, %w: memref<16x8xf16>, %c: memref<16x8xf32>) {
  %xf = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x16xf16>) outs(%xf : memref<16x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<16x8xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<16x8xf16>) outs(%wf : memref<16x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x16xf32>, memref<16x8xf32>) outs(%c : memref<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// Near miss: the f16 source is overwritten between the extf and the
// contraction, so the contraction must see the old widened values.
// CHECK-LABEL: func.func @source_written_between(
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-3: linalg.generic
// CHECK:         return
func.func @source_written_between(%x: memref<16x16xf16>, %w: memref<8x16xf16>, %c: memref<16x8xf32>, %v: f16) {
  %xf = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x16xf16>) outs(%xf : memref<16x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%v : f16) outs(%x : memref<16x16xf16>)
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
  return
}

// Near miss: a contraction inside a loop body (its kernel would be nested
// in the code the loop becomes).
// CHECK-LABEL: func.func @in_loop(
// CHECK-NOT:     gpu.launch
// CHECK:         scf.forall
// CHECK-COUNT-3:   linalg.generic
// CHECK:         return
func.func @in_loop(%x: memref<16x16xf16>, %w: memref<8x16xf16>, %c: memref<16x8xf32>) {
  scf.forall (%i) in (2) {
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
  }
  return
}

// An elementwise consumer of the product (bias add + relu, in place on C)
// is computed in the kernel's stores: bias loaded at (n), body cloned per
// element; the generic is gone. With fuse-epilogues=0 it stays.
// CHECK-LABEL: func.func @bias_relu(
// CHECK-SAME:    %[[C:[^:]+]]: memref<32x64xf32>, %[[BIAS:[^:]+]]: memref<64xf32>)
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             scf.yield
// CHECK:           %[[B0:.*]] = memref.load %[[BIAS]][%{{.*}}] : memref<64xf32>
// CHECK:           %[[S:.*]] = arith.addf %{{.*}}, %[[B0]] : f32
// CHECK:           arith.maximumf %[[S]], %{{.*}} : f32
// CHECK:           vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<32x64xf32>, vector<2xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
// CHECK:         return
// NOEPI-LABEL: func.func @bias_relu(
// NOEPI:         gpu.launch
// NOEPI-NOT:       memref.load
// NOEPI:           gpu.terminator
// NOEPI:         linalg.generic
// NOEPI:           arith.maximumf
func.func @bias_relu(%x: memref<32x64xf16>, %w: memref<64x64xf16>, %c: memref<32x64xf32>, %bias: memref<64xf32>) {
  %xf = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x64xf16>) outs(%xf : memref<32x64xf32>) {
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
      ins(%xf, %wf : memref<32x64xf32>, memref<64x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d1)>, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<32x64xf32>, memref<64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %0 = arith.addf %v, %bv : f32
    %1 = arith.maximumf %0, %zero : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<32x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  return
}
