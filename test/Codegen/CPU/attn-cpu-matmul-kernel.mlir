// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{k-block=16}))" | FileCheck %s --check-prefix=KBLOCK
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{row-tile=2 col-vectors=2}))" | FileCheck %s --check-prefix=SMALL
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{pack-min-rows=8 k-block=16}))" | FileCheck %s --check-prefix=PACK
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{bf16-dot=1}))" | FileCheck %s --check-prefix=BF16DOT
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{fma-row-tile=6 bf16-dot=1}))" | FileCheck %s --check-prefix=FMA6
// RUN: not attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{col-vectors=0}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{fma-row-tile=-1}))" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: attn-cpu-matmul-kernel: row-tile and col-vectors must be >= 1, fma-row-tile >= 0

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// x W^T with a bias + relu epilogue: vector<16xf32> accumulators over k,
// column blocks in parallel. The tiles store the reduced sums in C; the
// epilogue then runs on vector<16xf32> over the finished column block
// (per row, 64 columns in steps of 16), writing the output.
// CHECK-LABEL: func.func @nt_matmul_epilogue
// CHECK: %[[C:.*]] = memref.alloc() : memref<8x128xf32>
// CHECK: scf.parallel (%[[BLK:.*]]) =
// CHECK: %[[N0:.*]] = arith.muli %[[BLK]], %c64
// CHECK: %[[ACC:.*]]:16 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] : memref<8x64xf32>, vector<16xf32>
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}] : memref<128x64xf32>, vector<16xf32>
// CHECK: vector.fma
// The four accumulators of a row's outputs are summed together: each level
// pairs neighbouring vectors and adds the halves of every output's partial
// sums, then the one vector halves them in place down to one sum per
// output, which updates C as a vector<4xf32>.
// CHECK-NOT: vector.reduction
// CHECK: %[[L01:.*]] = vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK: %[[H01:.*]] = vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK: %[[S01:.*]] = arith.addf %[[L01]], %[[H01]] : vector<16xf32>
// CHECK: %[[S23:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[L:.*]] = vector.shuffle %[[S01]], %[[S23]] [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]
// CHECK: %[[H:.*]] = vector.shuffle %[[S01]], %[[S23]] [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]
// CHECK: %[[S4:.*]] = arith.addf %[[L]], %[[H]] : vector<16xf32>
// CHECK: vector.shuffle %[[S4]], %[[S4]] [0, 1, 4, 5, 8, 9, 12, 13] : vector<16xf32>, vector<16xf32>
// CHECK: %[[S2:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: %[[L1:.*]] = vector.shuffle %[[S2]], %[[S2]] [0, 2, 4, 6] : vector<8xf32>, vector<8xf32>
// CHECK: %[[H1:.*]] = vector.shuffle %[[S2]], %[[S2]] [1, 3, 5, 7] : vector<8xf32>, vector<8xf32>
// CHECK: %[[SUMS:.*]] = arith.addf %[[L1]], %[[H1]] : vector<4xf32>
// CHECK-NOT: arith.maximumf
// CHECK: %[[OLD:.*]] = vector.load %[[C]][%[[ROW:.*]], %[[COL0:.*]]] : memref<8x128xf32>, vector<4xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUMS]] : vector<4xf32>
// CHECK: vector.store %[[NEW]], %[[C]][%[[ROW]], %[[COL0]]] : memref<8x128xf32>, vector<4xf32>
// CHECK: scf.for %[[M:.*]] = %{{.*}} to %c8{{.*}} step %c1
// CHECK:   scf.for %[[N:.*]] = %c0{{.*}} to %c64{{.*}} step %c16
// CHECK:     %[[COL:.*]] = arith.addi %[[N0]], %[[N]]
// CHECK:     %[[V:.*]] = vector.load %[[C]][%[[M]], %[[COL]]] : memref<8x128xf32>, vector<16xf32>
// CHECK:     %[[B:.*]] = vector.load %arg2[%[[COL]]] : memref<128xf32>, vector<16xf32>
// CHECK:     %[[S:.*]] = arith.addf %[[V]], %[[B]] : vector<16xf32>
// CHECK:     %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : vector<16xf32>
// CHECK:     vector.store %[[R]], %arg3[%[[M]], %[[COL]]] : memref<8x128xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @nt_matmul_epilogue(%x: memref<8x64xf32>, %w: memref<128x64xf32>, %bias: memref<128xf32>, %out: memref<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x64xf32>, memref<128x64xf32>) outs(%c : memref<8x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<8x128xf32>, memref<128xf32>) outs(%out : memref<8x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<8x128xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>

// K not a multiple of the vector width, and the K-major form with N not a
// multiple of it (attn-cpu-outer-product-matmul's masked tiles take that):
// left alone.
// CHECK-LABEL: func.func @near_misses
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: vector.fma
func.func @near_misses(%x: memref<8x20xf32>, %w: memref<16x20xf32>, %c: memref<8x16xf32>, %y: memref<8x64xf32>, %v: memref<64x16xf32>, %c2: memref<8x20xf32>, %v2: memref<64x20xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x20xf32>, memref<16x20xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y, %v2 : memref<8x64xf32>, memref<64x20xf32>) outs(%c2 : memref<8x20xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// x W^T with W bound K-major (W^T [k, n], attn-cpu-transpose-weights):
// outer-product tiles of 4 rows x 4 vectors (the zero fill becomes zero
// accumulators), per k step 4 row loads of W^T and 4 broadcasts of x, column
// blocks of 64 in parallel; the bias + tanh + row-scale epilogue runs on
// vectors before the store. 10 rows: two 4-row tiles and a 2-row edge tile.
// CHECK-LABEL: func.func @k_major_epilogue
// CHECK-NOT:     linalg.fill
// CHECK:         scf.parallel (%[[BLK:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK:           %[[N0:.*]] = arith.muli %[[BLK]], %c64{{[_0-9]*}}
// CHECK:           scf.for %[[M:.*]] = %{{.*}} to %c8{{[_0-9]*}} step %c4{{[_0-9]*}}
// CHECK:             scf.for %[[NT:.*]] = %{{.*}} to %{{.*}} step
// CHECK:               %[[N:.*]] = arith.addi %[[N0]], %[[NT]]
// CHECK:               scf.for %[[K:.*]] = %{{.*}} to %c32{{[_0-9]*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-4:         vector.load %arg1[%[[K]], %{{.*}}] : memref<32x128xf32>, vector<16xf32>
// CHECK:                 memref.load %arg0[%[[M]], %[[K]]] : memref<10x32xf32>
// CHECK-NEXT:            vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-COUNT-4:         vector.fma
// CHECK:               vector.load %arg2[%[[N]]] : memref<128xf32>, vector<16xf32>
// CHECK-NEXT:          memref.load %arg3[%[[M]]] : memref<10xf32>
// CHECK-NEXT:          vector.broadcast
// CHECK-NEXT:          arith.addf %{{.*}} : vector<16xf32>
// CHECK-NEXT:          math.tanh %{{.*}} : vector<16xf32>
// CHECK-NEXT:          arith.mulf %{{.*}} : vector<16xf32>
// CHECK-NEXT:          vector.store %{{.*}}, %arg4[%[[M]], %[[N]]] : memref<10x128xf32>, vector<16xf32>
// The 2-row edge tile.
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c32{{[_0-9]*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:         scf.reduce
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.store
// With k blocks of 16 (of 32): the first block starts from zero and stores
// its partial sums to C, the second loads them, finishes k and applies the
// epilogue.
// KBLOCK-LABEL: func.func @k_major_epilogue
// KBLOCK:         %[[C:.*]] = memref.alloc() : memref<10x128xf32>
// KBLOCK:         scf.parallel
// KBLOCK:           scf.for %{{.*}} = %{{.*}} to %c16{{[_0-9]*}} step %{{.*}} iter_args(%{{[^ ]*}} = %cst
// KBLOCK-COUNT-16:  vector.store %{{.*}}, %[[C]][
// KBLOCK:           vector.load %[[C]][
// KBLOCK:           scf.for %{{.*}} = %c16{{[_0-9]*}} to %c32{{[_0-9]*}} step
// KBLOCK:           math.tanh
// KBLOCK:           vector.store %{{.*}}, %arg4[
// row-tile and col-vectors size the outer-product tiles too: 2 rows x 2
// vectors, so 32-column tiles in the column blocks of 64.
// SMALL-LABEL: func.func @k_major_epilogue
// SMALL:         scf.parallel
// SMALL:           scf.for %{{.*}} = %{{.*}} to %c10{{[_0-9]*}} step %c2{{[_0-9]*}}
// SMALL:             scf.for %{{.*}} = %{{.*}} to %c64{{[_0-9]*}} step %c32{{[_0-9]*}}
// SMALL:               scf.for %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// SMALL-COUNT-2:         vector.load %arg1[
// SMALL-COUNT-2:         vector.fma
// With pack-min-rows <= 10, each column block copies its k block of W^T
// into one 64-wide panel per tile column before the row tiles, which read
// the panel (row stride 64) instead of W^T (row stride 128).
// PACK-LABEL: func.func @k_major_epilogue
// PACK:         scf.parallel (%[[BLK:.*]]) = (%{{.*}}) to (%{{.*}}) step
// PACK:           %[[N0:.*]] = arith.muli %[[BLK]], %c64{{[_0-9]*}}
// PACK:           %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x32x64xf32>
// PACK:           scf.for %[[PI:.*]] = %{{.*}} to %c1{{[_0-9]*}} step
// PACK:             scf.for %[[PK:.*]] = %{{.*}} to %c16{{[_0-9]*}} step
// PACK-COUNT-4:       vector.store %{{.*}}, %[[P]][%[[PI]], %[[PK]], %{{.*}}] : memref<1x32x64xf32>, vector<16xf32>
// PACK:           scf.for %[[M:.*]] = %{{.*}} to %c8{{[_0-9]*}} step %c4{{[_0-9]*}}
// PACK:             %[[PANEL:.*]] = memref.subview %[[P]][%{{.*}}, 0, 0] [1, 32, 64] [1, 1, 1] : memref<1x32x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
// PACK:             scf.for %[[K:.*]] = %{{.*}} to %c16{{[_0-9]*}} step
// PACK-COUNT-4:       vector.load %[[PANEL]][%[[K]], %{{.*}}] : memref<32x64xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
// PACK-NOT:         vector.load %arg1
// The second k block packs rows 16..32.
// PACK:           scf.for %{{.*}} = %{{.*}} to %c1{{[_0-9]*}} step
// PACK:             scf.for %{{.*}} = %c16{{[_0-9]*}} to %c32{{[_0-9]*}} step
// PACK:               vector.load %arg1[
// PACK:           math.tanh
// PACK:           memref.dealloc %[[P]] : memref<1x32x64xf32>
// PACK:         scf.reduce
func.func @k_major_epilogue(%x: memref<10x32xf32>, %wt: memref<32x128xf32>, %bias: memref<128xf32>, %scale: memref<10xf32>, %out: memref<10x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<10x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<10x128xf32>)
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<10x32xf32>, memref<32x128xf32>) outs(%c : memref<10x128xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, column_block = 64>} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias, %scale : memref<10x128xf32>, memref<128xf32>, memref<10xf32>) outs(%out : memref<10x128xf32>) {
  ^bb0(%v: f32, %b: f32, %r: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %t = math.tanh %s : f32
    %y = arith.mulf %t, %r : f32
    linalg.yield %y : f32
  }
  memref.dealloc %c : memref<10x128xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// K-major without a zero fill or epilogue: the accumulators start from C,
// the tiles store C. 80 columns with vector width 16 and one column block
// (column-block 64 rounds to one 64-wide tile, so a 16-wide remainder block
// runs after the parallel loop with one-vector tiles).
// CHECK-LABEL: func.func @k_major_accumulate
// CHECK:         scf.parallel
// CHECK:           vector.load %arg2[%{{.*}}, %{{.*}}] : memref<4x80xf32>, vector<16xf32>
// CHECK:           vector.fma
// CHECK:           vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<4x80xf32>, vector<16xf32>
// CHECK:         scf.reduce
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c16{{[_0-9]*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT:     linalg.generic
// Four rows (< pack-min-rows) do not repay a copy: no panels.
// PACK-LABEL: func.func @k_major_accumulate
// PACK-NOT:     memref.alloc
// PACK:         vector.load %arg1[
// PACK-NOT:     memref.alloc
// PACK:         return
func.func @k_major_accumulate(%x: memref<4x16xf32>, %wt: memref<16x80xf32>, %c: memref<4x80xf32>) {
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<4x16xf32>, memref<16x80xf32>) outs(%c : memref<4x80xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A bf16 projection as attn-convert-precision leaves it: both operands
// widened to f32 copies (the weight's on every run) before an f32
// contraction. The kernel reads the bf16 buffers and the copies go away.
// With bf16-dot, pairs of k go through vdpbf16ps: 32 bf16 per operand load
// into 16 f32 lanes, k in steps of 32.
// BF16DOT-LABEL: func.func @bf16_projection
// BF16DOT-NOT:     arith.extf
// BF16DOT-NOT:     memref<32x64xf32>
// BF16DOT:         scf.for %[[K:.*]] = %{{.*}} to %c64{{[_0-9]*}} step %c32{{[_0-9]*}} iter_args
// BF16DOT:           vector.load %arg1[%{{.*}}, %[[K]]] : memref<4x64xbf16>, vector<32xbf16>
// BF16DOT:           vector.load %arg0[%{{.*}}, %[[K]]] : memref<32x64xbf16>, vector<32xbf16>
// BF16DOT-COUNT-16:  x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// BF16DOT-NOT:       vector.fma
// BF16DOT:         vector.shuffle
// BF16DOT-NOT:     memref<32x64xf32>
// BF16DOT:         return
// Without it (no avx512bf16), 16 bf16 per load, widened in registers.
// CHECK-LABEL: func.func @bf16_projection
// CHECK-NOT:     memref<32x64xf32>
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %c64{{[_0-9]*}} step %c16{{[_0-9]*}} iter_args
// CHECK:           %[[AV:.*]] = vector.load %arg1[%{{.*}}, %[[K]]] : memref<4x64xbf16>, vector<16xbf16>
// CHECK-NEXT:      arith.extf %[[AV]] : vector<16xbf16> to vector<16xf32>
// CHECK:           %[[BV:.*]] = vector.load %arg0[%{{.*}}, %[[K]]] : memref<32x64xbf16>, vector<16xbf16>
// CHECK-NEXT:      arith.extf %[[BV]] : vector<16xbf16> to vector<16xf32>
// CHECK-COUNT-16:  vector.fma
// CHECK-NOT:     linalg.generic {{.*}} ins(%arg0
// CHECK-NOT:     memref<32x64xf32>
// CHECK:         return
func.func @bf16_projection(%w: memref<32x64xbf16>, %x: memref<4x64xbf16>, %out: memref<4x32xbf16>) {
  %cst = arith.constant 0.000000e+00 : f32
  %wide_w = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : memref<32x64xbf16>) outs(%wide_w : memref<32x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wide_x = memref.alloc() {alignment = 64 : i64} : memref<4x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x64xbf16>) outs(%wide_x : memref<4x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %acc = memref.alloc() {alignment = 64 : i64} : memref<4x32xf32>
  linalg.fill ins(%cst : f32) outs(%acc : memref<4x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%wide_x, %wide_w : memref<4x64xf32>, memref<32x64xf32>) outs(%acc : memref<4x32xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 4, column_block = 16>} {
  ^bb0(%in: f32, %in_2: f32, %o: f32):
    %0 = arith.mulf %in, %in_2 : f32
    %1 = arith.addf %o, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<4x32xf32>) outs(%out : memref<4x32xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  }
  memref.dealloc %wide_w : memref<32x64xf32>
  memref.dealloc %wide_x : memref<4x64xf32>
  memref.dealloc %acc : memref<4x32xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// The same with run-time rows (a KV-cache step's activations): the widened
// copy of the activations has a dynamic size, and the kernel reads the bf16
// buffer all the same.
// BF16DOT-LABEL: func.func @bf16_projection_dynamic_rows
// BF16DOT-NOT:     arith.extf
// BF16DOT-NOT:     memref<?x64xf32>
// BF16DOT:         vector.load %arg1[%{{.*}}, %{{.*}}] : memref<?x64xbf16>, vector<32xbf16>
// BF16DOT:         vector.load %arg0[%{{.*}}, %{{.*}}] : memref<32x64xbf16>, vector<32xbf16>
// BF16DOT:         x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// BF16DOT-NOT:     vector.fma
// BF16DOT-NOT:     memref<?x64xf32>
// BF16DOT:         return
// CHECK-LABEL: func.func @bf16_projection_dynamic_rows
// CHECK-NOT:     memref<?x64xf32>
// CHECK:         %[[AV:.*]] = vector.load %arg1[%{{.*}}, %{{.*}}] : memref<?x64xbf16>, vector<16xbf16>
// CHECK-NEXT:    arith.extf %[[AV]] : vector<16xbf16> to vector<16xf32>
// CHECK-NOT:     memref<?x64xf32>
// CHECK:         return
func.func @bf16_projection_dynamic_rows(%w: memref<32x64xbf16>, %x: memref<?x64xbf16>, %out: memref<?x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %wide_w = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : memref<32x64xbf16>) outs(%wide_w : memref<32x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  %wide_x = memref.alloc(%m) {alignment = 64 : i64} : memref<?x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x64xbf16>) outs(%wide_x : memref<?x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%cst : f32) outs(%out : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%wide_x, %wide_w : memref<?x64xf32>, memref<32x64xf32>) outs(%out : memref<?x32xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 4, column_block = 16>} {
  ^bb0(%in: f32, %in_2: f32, %o: f32):
    %0 = arith.mulf %in, %in_2 : f32
    %1 = arith.addf %o, %0 : f32
    linalg.yield %1 : f32
  }
  memref.dealloc %wide_w : memref<32x64xf32>
  memref.dealloc %wide_x : memref<?x64xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// f16 has no dot products here (bf16-dot or not): the f16 weight is
// widened in registers; the f32 activation is read as it is. The widened
// copy is still read after the contraction (the return), so it stays.
// BF16DOT-LABEL: func.func @f16_weight_copy_kept
// BF16DOT:         linalg.generic {{.*}} ins(%arg0 : memref<32x64xf16>) outs(%[[COPY:.*]] : memref<32x64xf32>)
// BF16DOT:         scf.for %[[K:.*]] = %{{.*}} to %c64{{[_0-9]*}} step %c16{{[_0-9]*}} iter_args
// BF16DOT:           vector.load %arg1[%{{.*}}, %[[K]]] : memref<4x64xf32>, vector<16xf32>
// BF16DOT:           %[[BV:.*]] = vector.load %arg0[%{{.*}}, %[[K]]] : memref<32x64xf16>, vector<16xf16>
// BF16DOT-NEXT:      arith.extf %[[BV]] : vector<16xf16> to vector<16xf32>
// BF16DOT-NOT:       x86vector
// BF16DOT:         return %[[COPY]]
func.func @f16_weight_copy_kept(%w: memref<32x64xf16>, %x: memref<4x64xf32>, %out: memref<4x32xf32>) -> memref<32x64xf32> {
  %wide_w = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : memref<32x64xf16>) outs(%wide_w : memref<32x64xf32>) {
  ^bb0(%in: f16, %o: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wide_w : memref<4x64xf32>, memref<32x64xf32>) outs(%out : memref<4x32xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 4, column_block = 16>} {
  ^bb0(%in: f32, %in_2: f32, %o: f32):
    %0 = arith.mulf %in, %in_2 : f32
    %1 = arith.addf %o, %0 : f32
    linalg.yield %1 : f32
  }
  return %wide_w : memref<32x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// The widened weight of a function that also receives a buffer from a call
// (an entry calling outlined layer bodies): the ownership-based deallocation
// compares the copy's address with the call result's and frees it under an
// scf.if. Neither reads the copy, so it is dead after the contraction and
// not written on every run (only its unused allocation stays).
// CHECK-LABEL: func.func @bf16_copy_freed_by_ownership
// CHECK-NOT:     arith.extf {{.*}} : bf16 to f32
// CHECK:         vector.load %arg0[%{{.*}}, %{{.*}}] : memref<32x64xbf16>, vector<16xbf16>
// CHECK:         %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<32x64xf32>
// CHECK:         call @owned(%[[PTR]]
// CHECK:         scf.if
// CHECK-NEXT:      memref.dealloc %{{.*}} : memref<32x64xf32>
func.func private @body(memref<4x64xf32>) -> memref<4x64xf32>
func.func private @owned(index, index) -> i1
func.func @bf16_copy_freed_by_ownership(%w: memref<32x64xbf16>, %h: memref<4x64xf32>, %out: memref<4x32xf32>) -> memref<4x64xf32> {
  %x = call @body(%h) : (memref<4x64xf32>) -> memref<4x64xf32>
  %wide_w = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : memref<32x64xbf16>) outs(%wide_w : memref<32x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wide_w : memref<4x64xf32>, memref<32x64xf32>) outs(%out : memref<4x32xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 4, column_block = 16>} {
  ^bb0(%in: f32, %in_2: f32, %o: f32):
    %0 = arith.mulf %in, %in_2 : f32
    %1 = arith.addf %o, %0 : f32
    linalg.yield %1 : f32
  }
  %p = memref.extract_aligned_pointer_as_index %wide_w : memref<32x64xf32> -> index
  %q = memref.extract_aligned_pointer_as_index %x : memref<4x64xf32> -> index
  %free = call @owned(%p, %q) : (index, index) -> i1
  scf.if %free {
    memref.dealloc %wide_w : memref<32x64xf32>
  }
  return %x : memref<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Taking the copy's address does not make it dead: a later op that reads
// it (here a call receiving the buffer) keeps it written.
// CHECK-LABEL: func.func @bf16_copy_read_after_address
// CHECK:         linalg.generic {{.*}} ins(%arg0 : memref<32x64xbf16>) outs(%[[COPY:.*]] : memref<32x64xf32>)
// CHECK:         memref.extract_aligned_pointer_as_index %[[COPY]]
// CHECK:         call @reads(%[[COPY]])
func.func private @reads(memref<32x64xf32>)
func.func @bf16_copy_read_after_address(%w: memref<32x64xbf16>, %x: memref<4x64xf32>, %out: memref<4x32xf32>) -> index {
  %wide_w = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : memref<32x64xbf16>) outs(%wide_w : memref<32x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wide_w : memref<4x64xf32>, memref<32x64xf32>) outs(%out : memref<4x32xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 4, column_block = 16>} {
  ^bb0(%in: f32, %in_2: f32, %o: f32):
    %0 = arith.mulf %in, %in_2 : f32
    %1 = arith.addf %o, %0 : f32
    linalg.yield %1 : f32
  }
  %p = memref.extract_aligned_pointer_as_index %wide_w : memref<32x64xf32> -> index
  call @reads(%wide_w) : (memref<32x64xf32>) -> ()
  memref.dealloc %wide_w : memref<32x64xf32>
  return %p : index
}

// -----

// A bf16 model's projection with a K-major weight (attn-cpu-transpose-weights
// on the bf16 binding): both operands are f32 copies widened from bf16.
// Without bf16-dot, the tiles read the bf16 buffers and widen in registers
// (B's vectors, A's scalars), and the copies go. With bf16-dot, each
// column block packs W^T's k pairs interleaved per column into a panel,
// and the tiles multiply it with vdpbf16ps against A's pairs broadcast as
// 32-bit lanes; the bias epilogue is applied to the f32 vectors.
// CHECK-LABEL: func.func @kmajor_bf16
// CHECK-NOT:     linalg.generic
// CHECK:         %[[B:.*]] = vector.load %arg1{{.*}} : memref<64x128xbf16>, vector<16xbf16>
// CHECK:         arith.extf %[[B]] : vector<16xbf16> to vector<16xf32>
// CHECK:         %[[A:.*]] = memref.load %arg0{{.*}} : memref<8x64xbf16>
// CHECK:         arith.extf %[[A]] : bf16 to f32
// CHECK:         vector.fma
// CHECK-NOT:     x86vector
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref<64x128xf32>
// BF16DOT-LABEL: func.func @kmajor_bf16
// BF16DOT-NOT:   linalg.generic
// BF16DOT:       scf.parallel
// BF16DOT:         %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x32x128xbf16>
// BF16DOT:         scf.for %[[PANEL:.*]] = %{{.*}} to %{{.*}} step
// BF16DOT:           scf.for %[[J:.*]] = %{{.*}} to %c32 step
// BF16DOT:           %[[K:.*]] = arith.muli %[[J]], %{{.*}}
// BF16DOT:           %[[K1:.*]] = arith.addi %[[K]], %{{.*}}
// BF16DOT:           %[[E:.*]] = vector.load %arg1[%[[K]], %{{.*}}] : memref<64x128xbf16>, vector<16xbf16>
// BF16DOT:           %[[O:.*]] = vector.load %arg1[%[[K1]], %{{.*}}] : memref<64x128xbf16>, vector<16xbf16>
// BF16DOT:           %[[I:.*]] = vector.interleave %[[E]], %[[O]] : vector<16xbf16> -> vector<32xbf16>
// BF16DOT:           vector.store %[[I]], %[[P]][%[[PANEL]], %[[J]], %{{.*}}] : memref<1x32x128xbf16>, vector<32xbf16>
// BF16DOT:         memref.subview %[[P]]
// BF16DOT:         scf.for {{.*}} -> (vector<16xf32>
// BF16DOT:           vector.load %{{.*}} : memref<32x128xbf16, strided<[128, 1], offset: ?>>, vector<32xbf16>
// BF16DOT:           %[[PAIR:.*]] = vector.load %arg0{{.*}} : memref<8x64xbf16>, vector<2xbf16>
// BF16DOT:           %[[BITS:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// BF16DOT:           %[[LANE:.*]] = vector.extract %[[BITS]][0] : i32 from vector<1xi32>
// BF16DOT:           %[[SPLAT:.*]] = vector.broadcast %[[LANE]] : i32 to vector<16xi32>
// BF16DOT:           %[[AV:.*]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<32xbf16>
// BF16DOT-COUNT-4:   x86vector.avx512.dot %{{.*}}, %[[AV]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// BF16DOT:         vector.load %arg2
// BF16DOT:         arith.addf {{.*}} : vector<16xf32>
// BF16DOT:         vector.store %{{.*}}, %arg3
// BF16DOT:         memref.dealloc %[[P]]
// BF16DOT-NOT:   linalg.generic
// BF16DOT-NOT:   memref<64x128xf32>
// fma-row-tile leaves the dot-product tiles at row-tile's 4 rows.
// FMA6-LABEL: func.func @kmajor_bf16
// FMA6:         scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// FMA6:           x86vector.avx512.dot
// FMA6:         scf.reduce
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @kmajor_bf16(%xn: memref<8x64xbf16>, %wn: memref<64x128xbf16>, %bias: memref<128xf32>, %out: memref<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<8x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xn : memref<8x64xbf16>) outs(%x : memref<8x64xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  }
  %w = memref.alloc() : memref<64x128xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%wn : memref<64x128xbf16>) outs(%w : memref<64x128xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  }
  %c = memref.alloc() : memref<8x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x128xf32>)
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x64xf32>, memref<64x128xf32>) outs(%c : memref<8x128xf32>) {
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
  memref.dealloc %x : memref<8x64xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// fma-row-tile: the f32 FMA tiles of a K-major weight take 6 rows (6 x 4
// vector accumulators, AVX-512's 32 registers); the 2 rows left over form
// one 2-row tile. The bf16 dot-product tiles (@kmajor_bf16 above) keep
// row-tile's 4 rows.
// FMA6-LABEL: func.func @k_major_six_rows
// FMA6:         scf.for %{{.*}} = %c0{{[_0-9]*}} to %c6{{[_0-9]*}} step %c6
// FMA6:           scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// FMA6-COUNT-24:    vector.fma
// FMA6:         scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// FMA6-COUNT-8:     vector.fma
// FMA6-NOT:     linalg.generic
// FMA6:         return
func.func @k_major_six_rows(%x: memref<8x16xf32>, %wt: memref<16x64xf32>, %c: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<8x16xf32>, memref<16x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// Three outputs per tile row: the lane sums of the first two are taken
// together (a vector<2xf32>), the third alone (a vector.reduction). An epilogue in f64 is not
// vectorizable, so it stays in the store: each sum is extracted and added
// to C's initial value, and the epilogue writes it.
// CHECK-LABEL: func.func @three_columns_scalar_epilogue
// CHECK:         %[[C:.*]] = memref.alloc() : memref<2x12xf32>
// CHECK:         %[[ACC:.*]]:3 = scf.for
// CHECK:         %[[L:.*]] = vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK:         %[[H:.*]] = vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK:         arith.addf %[[L]], %[[H]] : vector<16xf32>
// CHECK:         %[[TWO:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK:         %[[S0:.*]] = vector.extract %[[TWO]][0] : f32 from vector<2xf32>
// CHECK:         %[[C0:.*]] = memref.load %[[C]][%{{.*}}, %{{.*}}] : memref<2x12xf32>
// CHECK:         arith.addf %[[C0]], %[[S0]] : f32
// CHECK:         arith.extf %{{.*}} : f32 to f64
// CHECK:         memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<2x12xf32>
// CHECK:         vector.extract %[[TWO]][1] : f32 from vector<2xf32>
// CHECK:         memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<2x12xf32>
// CHECK:         vector.reduction <add>, %[[ACC]]#2 fastmath<reassoc> : vector<16xf32> into f32
// CHECK:         memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<2x12xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @three_columns_scalar_epilogue(%x: memref<2x16xf32>, %w: memref<12x16xf32>, %out: memref<2x12xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<2x12xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x12xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<2x16xf32>, memref<12x16xf32>) outs(%c : memref<2x12xf32>) attrs = {attn.tile = #attn.tile<vector_width = 16, row_tile = 1, col_tile = 3, column_block = 12>} {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<2x12xf32>) outs(%out : memref<2x12xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.extf %in : f32 to f64
    %e = arith.mulf %d, %d : f64
    %r = arith.truncf %e : f64 to f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<2x12xf32>
  return
}
