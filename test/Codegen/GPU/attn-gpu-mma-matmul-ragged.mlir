// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="staging=plain ldmatrix=0" | FileCheck %s

// attn-gpu-mma-matmul on ragged shapes (M % 16, N % 8 or K % 16 nonzero):
// the grid covers M and N rounded up to the block and the k loop K rounded
// up to the k step; edge tiles stage zeros past M, N and K (loads at clamped
// indices, selected away) and mask C's loads and stores. Numerics:
// test/Integration/GPU/mma-fragment-layout.test.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// The test GPT-2's LM head: N = 99 (odd, not a multiple of 8). Blocks of
// 1 x 2 warps of 1 x 4 mma tiles (16 x 64), grid ceil(99 / 64) = 2; B rows
// past 99 are staged as zeros (loads at rows clamped to 98, selected away);
// with N odd each C element is stored on its own, under its mask. The zero
// fill and the f32 copy of the weight are gone.
// CHECK-LABEL: func.func @lm_head_n99(
// CHECK-SAME:    %[[X:[^:]+]]: memref<16x32xf16>, %[[W:[^:]+]]: memref<99x32xf16>, %[[C:[^:]+]]: memref<16x99xf32>)
// CHECK-NOT:     linalg
// CHECK-NOT:     memref.alloc()
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[T64:.*]] = arith.constant 64 : index
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[TWO]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[T64]],
// CHECK:           scf.for
// CHECK-NOT:         arith.minsi %{{.*}}, %c15
// CHECK:             vector.load %[[X]]
// CHECK:             %[[R:.*]] = arith.minsi %{{.*}}, %c98{{.*}} : index
// CHECK:             %[[CH:.*]] = vector.load %[[W]][%[[R]], %{{.*}}] {alignment = 16 : i64} : memref<99x32xf16>, vector<8xf16>
// CHECK:             arith.select %{{.*}}, %[[CH]], %{{.*}} : vector<8xf16>
// CHECK-COUNT-4:     nvgpu.mma.sync
// CHECK:             scf.yield
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c99{{.*}} : index
// CHECK:           scf.if %[[IN]] {
// CHECK:             memref.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] : memref<16x99xf32>
// CHECK-COUNT-15:  memref.store %{{.*}}, %[[C]]
// CHECK-NOT:       vector.store %{{.*}}, %[[C]]
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg
func.func @lm_head_n99(%x: memref<16x32xf16>, %w: memref<99x32xf16>, %c: memref<16x99xf32>) {
  %xf = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf16>) outs(%xf : memref<16x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<99x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<99x32xf16>) outs(%wf : memref<99x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x99xf32>)
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

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// N = 50 (even): C's pairs lie inside or outside as a whole, so they are
// loaded at columns clamped to 48 and selected, and stored as pairs under
// one mask.
// CHECK-LABEL: func.func @n50_accumulate(
// CHECK-SAME:    %[[C:[^:]+]]: memref<16x50xf32>)
// CHECK:         gpu.launch
// CHECK:           %[[COL:.*]] = arith.minsi %{{.*}}, %c48{{.*}} : index
// CHECK:           %[[P:.*]] = vector.load %[[C]][%{{.*}}, %[[COL]]] {alignment = 8 : i64} : memref<16x50xf32>, vector<2xf32>
// CHECK:           arith.select %{{.*}}, %[[P]], %{{.*}} : vector<2xf32>
// CHECK:           scf.for
// CHECK:           scf.if
// CHECK-NEXT:        vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<16x50xf32>, vector<2xf32>
// CHECK:           gpu.terminator
func.func @n50_accumulate(%x: memref<16x32xf16>, %w: memref<50x32xf16>, %c: memref<16x50xf32>) {
  %xf = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf16>) outs(%xf : memref<16x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<50x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<50x32xf16>) outs(%wf : memref<50x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x32xf32>, memref<50x32xf32>) outs(%c : memref<16x50xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<16x32xf32>
  memref.dealloc %wf : memref<50x32xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// K = 40: k steps of 32 up to 64; staged columns past 40 are zeros in both
// operands (whole chunks: loads at columns clamped to 32). M and N divide:
// C is stored unmasked.
// CHECK-LABEL: func.func @k40(
// CHECK-SAME:    %[[X:[^:]+]]: memref<16x40xf16>, %[[W:[^:]+]]: memref<8x40xf16>, %[[C:[^:]+]]: memref<16x8xf32>)
// CHECK:         gpu.launch
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c64 step %c32
// CHECK:             arith.minsi %{{.*}}, %c32{{.*}} : index
// CHECK:             vector.load %[[X]]
// CHECK:             arith.select
// CHECK:             arith.minsi %{{.*}}, %c32{{.*}} : index
// CHECK:             vector.load %[[W]]
// CHECK:             arith.select
// CHECK-COUNT-2:     nvgpu.mma.sync
// CHECK:           }
// CHECK-NOT:       scf.if
// CHECK:           vector.store %{{.*}}, %[[C]]
// CHECK:           gpu.terminator
func.func @k40(%x: memref<16x40xf16>, %w: memref<8x40xf16>, %c: memref<16x8xf32>) {
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
  memref.dealloc %xf : memref<16x40xf32>
  memref.dealloc %wf : memref<8x40xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// K = 20 (K % 8 = 4): a 16-byte chunk can straddle K, and rows are not
// 16-byte aligned, so the staging loads are element by element, each at a
// column clamped to 19 and selected. bf16: nvvm.mma.sync.
// CHECK-LABEL: func.func @k20_elementwise(
// CHECK-SAME:    %[[X:[^:]+]]: memref<16x20xbf16>
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK-COUNT-8:     memref.load %[[X]][%{{.*}}, %{{.*}}] : memref<16x20xbf16>
// CHECK:             vector.from_elements
// CHECK:             nvvm.mma.sync
// CHECK:           gpu.terminator
func.func @k20_elementwise(%x: memref<16x20xbf16>, %w: memref<8x20xbf16>, %c: memref<16x8xf32>) {
  %xf = memref.alloc() : memref<16x20xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x20xbf16>) outs(%xf : memref<16x20xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<8x20xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<8x20xbf16>) outs(%wf : memref<8x20xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x8xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<16x20xf32>, memref<8x20xf32>) outs(%c : memref<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %xf : memref<16x20xf32>
  memref.dealloc %wf : memref<8x20xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// M = 8: one 16-row block; A rows past 8 are staged as zeros and C's rows
// past 8 are neither loaded nor stored.
// CHECK-LABEL: func.func @m8(
// CHECK-SAME:    %[[X:[^:]+]]: memref<8x16xf16>, %[[W:[^:]+]]: memref<8x16xf16>, %[[C:[^:]+]]: memref<8x8xf32>)
// CHECK:         gpu.launch
// CHECK:           arith.minsi %{{.*}}, %c7{{.*}} : index
// CHECK:           vector.load %[[C]]
// CHECK:           scf.for
// CHECK:             arith.minsi %{{.*}}, %c7{{.*}} : index
// CHECK:             vector.load %[[X]]
// CHECK:             nvgpu.mma.sync
// CHECK:           arith.cmpi ult, %{{.*}}, %c8{{.*}} : index
// CHECK:           scf.if
// CHECK-NEXT:        vector.store %{{.*}}, %[[C]]
// CHECK:           gpu.terminator
func.func @m8(%x: memref<8x16xf16>, %w: memref<8x16xf16>, %c: memref<8x8xf32>) {
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
  memref.dealloc %xf : memref<8x16xf32>
  memref.dealloc %wf : memref<8x16xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// Shapes the blocks divide keep the fast path: no clamps, selects or
// masks.
// CHECK-LABEL: func.func @divisible(
// CHECK:         gpu.launch
// CHECK-NOT:       arith.minsi
// CHECK-NOT:       arith.select
// CHECK-NOT:       scf.if
// CHECK:           gpu.terminator
func.func @divisible(%x: memref<32x64xf16>, %w: memref<64x64xf16>, %c: memref<32x64xf32>) {
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
