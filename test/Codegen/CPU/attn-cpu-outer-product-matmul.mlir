// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-outer-product-matmul,cse))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-outer-product-matmul{row-tile=2 col-vectors=1},cse))" | FileCheck %s --check-prefix=SMALL
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-outer-product-matmul{bf16-dot=1},cse))" | FileCheck %s --check-prefix=DOT
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-outer-product-matmul{bf16-dot=1 bf16-dot-rounds-f32=1},cse))" | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-outer-product-matmul{dot-columns=8},cse))" | FileCheck %s --check-prefix=WIDE
// RUN: not attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-outer-product-matmul{row-tile=0}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-outer-product-matmul{dot-columns=3}))" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-cpu-outer-product-matmul: vector-width, row-tile and col-vectors must be >= 1, dot-columns a power of two

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// The flash score tile S[g, i, j] = sum_d Q[g, i, d] * K^T[d, j] on strided
// subviews, after a zero fill: 4 x 4-vector tiles whose accumulators start
// at zero (the fill is gone), B rows loaded as vectors, A broadcast.
// CHECK-LABEL: func.func @scores
// CHECK-NOT:     linalg.fill
// CHECK:         scf.for %[[G:.*]] = %c0 to %c1 step %c1
// CHECK:           scf.for %[[I:.*]] = %c0 to %c64 step %c4
// CHECK:             scf.for %[[N:.*]] = %c0 to %c64 step %c64
// CHECK:               %[[R:.*]]:16 = scf.for %[[K:.*]] = %c0 to %c64 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>
// CHECK-COUNT-4:         vector.load %{{.*}}[%[[K]], %{{.*}}] : memref<64x64xf32, strided<[256, 1], offset: ?>>, vector<16xf32>
// CHECK:                 memref.load %{{.*}}[%[[G]], %[[I]], %[[K]]] : memref<1x64x64xf32, strided<[16384, 64, 1], offset: ?>>
// CHECK:                 vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-COUNT-16:        vector.fma
// CHECK:                 scf.yield
// CHECK-COUNT-16:      vector.store %{{.*}}, %{{.*}} : memref<1x64x64xf32>, vector<16xf32>
// CHECK-NOT:     linalg.generic
func.func @scores(%q: memref<1x64x64xf32, strided<[16384, 64, 1], offset: ?>>, %kt: memref<64x64xf32, strided<[256, 1], offset: ?>>, %s: memref<1x64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<1x64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : memref<1x64x64xf32, strided<[16384, 64, 1], offset: ?>>, memref<64x64xf32, strided<[256, 1], offset: ?>>) outs(%s : memref<1x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// O += P V for a partial block: rows (qs) and the reduction (ks) dynamic,
// 24 value columns: one full vector, then a masked vector for the last 8.
// The accumulators start from O (no fill before).
// CHECK-LABEL: func.func @pv_partial
// CHECK-DAG:     %[[QS:.*]] = memref.dim %{{.*}}, %c1 : memref<2x?x24xf32
// CHECK-DAG:     %[[KS:.*]] = memref.dim %{{.*}}, %c0 : memref<?x24xf32
// CHECK:         scf.for
// CHECK:           %[[REM:.*]] = arith.remui %[[QS]], %c4
// CHECK:           %[[MAIN:.*]] = arith.subi %[[QS]], %[[REM]]
// CHECK:           scf.for %{{.*}} = %c0 to %[[MAIN]] step %c4
// CHECK:             scf.for %{{.*}} = %c0 to %c16 step %c16
// CHECK-COUNT-4:       vector.load %{{.*}} : memref<2x?x24xf32, strided<[?, 24, 1]>>, vector<16xf32>
// CHECK:               scf.for %{{.*}} = %c0 to %[[KS]] step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-4:       vector.store
// CHECK:             scf.for %[[N0:.*]] = %c16 to %c24 step %c16
// CHECK:               %[[LEFT:.*]] = arith.subi %c24, %[[N0]]
// CHECK:               %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<16xi1>
// CHECK:               vector.maskedload %{{.*}}, %[[MASK]]
// CHECK:               scf.for %{{.*}} = %c0 to %[[KS]] step %c1
// CHECK:                 vector.maskedload %{{.*}}, %[[MASK]]
// CHECK:               vector.maskedstore %{{.*}}, %[[MASK]]
// Remainder rows, one at a time.
// CHECK:           scf.for %{{.*}} = %[[MAIN]] to %[[QS]] step %c1
// CHECK-NOT:     linalg.generic
// SMALL-LABEL: func.func @pv_partial
// SMALL:         scf.for %{{.*}} = %c0 to %{{.*}} step %c2
// SMALL:           scf.for %{{.*}} = %c0 to %c16 step %c16
// SMALL:             scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
func.func @pv_partial(%p: memref<2x?x?xf32, strided<[4096, 64, 1]>>, %v: memref<?x24xf32, strided<[24, 1], offset: ?>>, %o: memref<2x?x24xf32, strided<[?, 24, 1]>>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<2x?x?xf32, strided<[4096, 64, 1]>>, memref<?x24xf32, strided<[24, 1], offset: ?>>) outs(%o : memref<2x?x24xf32, strided<[?, 24, 1]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>

// A 2-D C += A B with 6 rows (one 4-row tile, two single rows) and 32
// columns (two vectors per tile).
// CHECK-LABEL: func.func @plain_2d
// CHECK:         scf.for %{{.*}} = %c0 to %c4 step %c4
// CHECK:           scf.for %{{.*}} = %c0 to %c32 step %c32
// CHECK:             scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:         scf.for %{{.*}} = %c4 to %c6 step %c1
// Near misses stay: x * W^T (B contiguous along k: attn-cpu-matmul-kernel's
// form), a column-strided B, f16 operands.
// CHECK-COUNT-3: linalg.generic
func.func @plain_2d(%x: memref<6x8xf32>, %w: memref<8x32xf32>, %y: memref<6x32xf32>, %wt: memref<32x8xf32>, %ws: memref<8x32xf32, strided<[1, 8]>>, %h: memref<6x8xf16>, %wh: memref<8x32xf16>, %yh: memref<6x32xf16>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<6x8xf32>, memref<8x32xf32>) outs(%y : memref<6x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<6x8xf32>, memref<32x8xf32>) outs(%y : memref<6x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %ws : memref<6x8xf32>, memref<8x32xf32, strided<[1, 8]>>) outs(%y : memref<6x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %wh : memref<6x8xf16>, memref<8x32xf16>) outs(%yh : memref<6x32xf16>) {
  ^bb0(%in: f16, %in_0: f16, %acc: f16):
    %m = arith.mulf %in, %in_0 : f16
    %s = arith.addf %acc, %m : f16
    linalg.yield %s : f16
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A bf16 model's score tile: Q and K^T are bf16 and the body widens both.
// B's rows are loaded as bf16 vectors and widened in registers, A's
// scalars widened before the broadcast; the FMAs and C stay f32.
// CHECK-LABEL: func.func @scores_bf16
// CHECK-NOT:     linalg.fill
// CHECK:         scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{.*}}) -> (vector<16xf32>
// CHECK:           %[[B:.*]] = vector.load %{{.*}} : memref<64x64xbf16, strided<[128, 1], offset: ?>>, vector<16xbf16>
// CHECK:           arith.extf %[[B]] : vector<16xbf16> to vector<16xf32>
// CHECK:           %[[A:.*]] = memref.load %{{.*}} : memref<1x64x64xbf16, strided<[98304, 64, 1], offset: ?>>
// CHECK:           %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK:           vector.broadcast %[[AW]] : f32 to vector<16xf32>
// CHECK-COUNT-16:  vector.fma {{.*}} : vector<16xf32>
// CHECK-COUNT-16: vector.store %{{.*}}, %{{.*}} : memref<1x64x64xf32>, vector<16xf32>
// CHECK-NOT:     linalg.generic
func.func @scores_bf16(%q: memref<1x64x64xbf16, strided<[98304, 64, 1], offset: ?>>, %kt: memref<64x64xbf16, strided<[128, 1], offset: ?>>, %s: memref<1x64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<1x64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : memref<1x64x64xbf16, strided<[98304, 64, 1], offset: ?>>, memref<64x64xbf16, strided<[128, 1], offset: ?>>) outs(%s : memref<1x64x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %yw = arith.extf %y fastmath<reassoc,contract> : bf16 to f32
    %xw = arith.extf %x fastmath<reassoc,contract> : bf16 to f32
    %m = arith.mulf %xw, %yw fastmath<reassoc,contract> : f32
    %r = arith.addf %acc, %m fastmath<reassoc,contract> : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// O += P V with f32 P and a bf16 V whose 24 columns end in a masked
// vector: the masked load is bf16 (zero pass-through), then widened.
// CHECK-LABEL: func.func @pv_bf16_masked
// CHECK:         vector.load %{{.*}} : memref<64x24xbf16>, vector<16xbf16>
// CHECK:         vector.create_mask
// CHECK:         %[[M:.*]] = vector.maskedload %{{.*}} : memref<64x24xbf16>, vector<16xi1>, vector<16xbf16> into vector<16xbf16>
// CHECK:         arith.extf %[[M]] : vector<16xbf16> to vector<16xf32>
// CHECK-NOT:     linalg.generic
func.func @pv_bf16_masked(%p: memref<1x64x64xf32>, %v: memref<64x24xbf16>, %o: memref<1x64x24xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x64x64xf32>, memref<64x24xbf16>) outs(%o : memref<1x64x24xf32>) {
  ^bb0(%x: f32, %y: bf16, %acc: f32):
    %yw = arith.extf %y : bf16 to f32
    %m = arith.mulf %x, %yw : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A body that does more than widen, multiply and add is left alone.
// CHECK-LABEL: func.func @not_widening_body
// CHECK:         linalg.generic
// CHECK-NOT:     vector.fma
func.func @not_widening_body(%p: memref<1x64x64xbf16>, %v: memref<64x32xbf16>, %o: memref<1x64x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x64x64xbf16>, memref<64x32xbf16>) outs(%o : memref<1x64x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xw = arith.extf %x : bf16 to f32
    %yw = arith.extf %y : bf16 to f32
    %e = math.exp %xw : f32
    %m = arith.mulf %e, %yw : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// O += P V inside a flash query block's key loop, with bf16-dot: V's pairs
// of rows are interleaved into a panel allocated at the start of the
// scf.forall body (not in the key loop, which would keep one per key
// block), padded with zeros beyond V's 24 columns; the tiles load 32 bf16
// of the panel per vector, round P's f32 pairs to bf16 and broadcast them
// as 32-bit lanes, and accumulate with vdpbf16ps; the ragged last vector
// of O is loaded and stored masked. Without bf16-dot: f32 FMAs on widened
// V.
// CHECK-LABEL: func.func @pv_bf16_in_key_loop
// CHECK-NOT:     x86vector
// CHECK:         vector.fma
// DOT-LABEL: func.func @pv_bf16_in_key_loop
// DOT:         scf.forall
// DOT-NEXT:      %[[PANEL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xbf16>
// DOT:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// DOT:             scf.for %[[J:.*]] = %{{.*}} to %c32 step
// DOT:               %[[K:.*]] = arith.muli %[[J]], %c2
// DOT:               %[[K1:.*]] = arith.addi %[[K]], %c1
// DOT:               scf.for %[[COL:.*]] = %{{.*}} to %c16 step %c16
// DOT:                 %[[ODD:.*]] = vector.load %{{.*}}[%[[K1]], %[[COL]]] : memref<64x24xbf16>, vector<16xbf16>
// DOT:                 %[[EVEN:.*]] = vector.load %{{.*}}[%[[K]], %[[COL]]] : memref<64x24xbf16>, vector<16xbf16>
// DOT:                 %[[PAIRS:.*]] = vector.interleave %[[EVEN]], %[[ODD]] : vector<16xbf16> -> vector<32xbf16>
// DOT:                 %[[AT:.*]] = arith.muli %[[COL]], %c2
// DOT:                 vector.store %[[PAIRS]], %[[PANEL]][%[[J]], %[[AT]]] : memref<32x64xbf16>, vector<32xbf16>
// DOT:               %[[TAIL:.*]] = vector.create_mask %c8 : vector<16xi1>
// DOT:               vector.maskedload %{{.*}}[%[[K1]], %c16], %[[TAIL]], %{{.*}} : memref<64x24xbf16>, vector<16xi1>, vector<16xbf16> into vector<16xbf16>
// DOT:             scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// DOT:               vector.load %[[PANEL]][%{{.*}}, %{{.*}}] : memref<32x64xbf16>, vector<32xbf16>
// DOT:               %[[P:.*]] = vector.load %{{.*}} : memref<1x64x64xf32>, vector<2xf32>
// DOT:               %[[PB:.*]] = arith.truncf %[[P]] : vector<2xf32> to vector<2xbf16>
// DOT:               vector.bitcast %[[PB]] : vector<2xbf16> to vector<1xi32>
// DOT:               vector.broadcast %{{.*}} : i32 to vector<16xi32>
// DOT:               x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// DOT:             vector.create_mask
// DOT:             vector.maskedload %{{.*}} : memref<1x64x24xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// DOT:             x86vector.avx512.dot
// DOT:             vector.maskedstore %{{.*}} : memref<1x64x24xf32>, vector<16xi1>, vector<16xf32>
// DOT-NOT:     linalg.generic
func.func @pv_bf16_in_key_loop(%p: memref<1x64x64xf32>, %v: memref<64x24xbf16>, %o: memref<1x64x24xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.forall (%q) in (2) {
    scf.for %kb = %c0 to %c2 step %c1 {
      linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x64x64xf32>, memref<64x24xbf16>) outs(%o : memref<1x64x24xf32>) {
      ^bb0(%x: f32, %y: bf16, %acc: f32):
        %yw = arith.extf %y : bf16 to f32
        %m = arith.mulf %x, %yw : f32
        %r = arith.addf %acc, %m : f32
        linalg.yield %r : f32
      }
    }
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A dynamic reduction extent (a partial key block) keeps the FMA tiles even
// with bf16-dot: the panel needs static pairs.
// DOT-LABEL: func.func @dynamic_k_no_dot
// DOT-NOT:     x86vector
// DOT:         vector.fma
func.func @dynamic_k_no_dot(%q: memref<1x8x?xbf16>, %kt: memref<?x16xbf16>, %s: memref<1x8x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : memref<1x8x?xbf16>, memref<?x16xbf16>) outs(%s : memref<1x8x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xw = arith.extf %x : bf16 to f32
    %yw = arith.extf %y : bf16 to f32
    %m = arith.mulf %xw, %yw : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (0, d1, d2)>

// The scores' scale and bias, an in-place update of S right after Q K^T,
// run on the accumulators before the store: the bias (broadcast along g,
// strided) is loaded as a vector at the tile's row and columns, and the
// update goes away.
// CHECK-LABEL: func.func @scores_scale_bias
// CHECK:         %[[C:.*]] = arith.constant 1.250000e-01 : f32
// CHECK:         scf.for %[[G:.*]] = %c0 to %c1 step %c1
// CHECK:           scf.for %[[I:.*]] = %c0 to %c64 step %c4
// CHECK:             scf.for %[[N:.*]] = %c0 to %c64 step %c64
// CHECK:               %[[R:.*]]:16 = scf.for
// CHECK:               %[[B:.*]] = vector.load %{{.*}}[%c0, %[[I]], %[[N]]] : memref<1x64x64xf32, strided<[16384, 128, 1], offset: ?>>, vector<16xf32>
// CHECK:               %[[SCALE:.*]] = vector.broadcast %[[C]] : f32 to vector<16xf32>
// CHECK:               %[[S:.*]] = arith.mulf %[[R]]#0, %[[SCALE]] : vector<16xf32>
// CHECK:               %[[Y:.*]] = arith.addf %[[S]], %[[B]] : vector<16xf32>
// CHECK:               vector.store %[[Y]], %{{.*}}[%[[G]], %[[I]], %[[N]]] : memref<1x64x64xf32>, vector<16xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @scores_scale_bias(%q: memref<1x64x64xf32, strided<[16384, 64, 1], offset: ?>>, %kt: memref<64x64xf32, strided<[256, 1], offset: ?>>, %bias: memref<1x64x64xf32, strided<[16384, 128, 1], offset: ?>>, %s: memref<1x64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<1x64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : memref<1x64x64xf32, strided<[16384, 64, 1], offset: ?>>, memref<64x64xf32, strided<[256, 1], offset: ?>>) outs(%s : memref<1x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : memref<1x64x64xf32, strided<[16384, 128, 1], offset: ?>>) outs(%s : memref<1x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %out, %scale : f32
    %1 = arith.addf %0, %in : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keys = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// A partial key block (24 columns: one vector, then 8 masked): a bias per
// key (broadcast over rows) is loaded with the tile's mask, one per row
// (broadcast along the columns) as a scalar.
// CHECK-LABEL: func.func @ragged_broadcasts
// CHECK:         vector.load %{{.*}}[%c0, %c0, %{{.*}}] : memref<1x1x24xf32>, vector<16xf32>
// CHECK:         memref.load %{{.*}}[%{{.*}}, %{{.*}}, %c0] : memref<1x8x1xf32>
// CHECK:         vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:         vector.store
// CHECK:         %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK:         vector.maskedload %{{.*}}[%c0, %c0, %{{.*}}], %[[MASK]], %{{.*}} : memref<1x1x24xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:         vector.maskedstore %{{.*}}, %[[MASK]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @ragged_broadcasts(%p: memref<1x8x32xf32>, %v: memref<32x24xf32>, %kb: memref<1x1x24xf32>, %rb: memref<1x8x1xf32>, %o: memref<1x8x24xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x8x32xf32>, memref<32x24xf32>) outs(%o : memref<1x8x24xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#keys, #rows, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kb, %rb : memref<1x1x24xf32>, memref<1x8x1xf32>) outs(%o : memref<1x8x24xf32>) {
  ^bb0(%k: f32, %r: f32, %out: f32):
    %0 = arith.addf %out, %k : f32
    %1 = arith.mulf %0, %r : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Left alone (each stays a generic after the tiles): an update that reads
// the key index (a causal mask, linalg.index), one that writes another
// buffer, one whose input is transposed, and one whose input views C's own
// buffer (other tiles of it are written or updated meanwhile).
// CHECK-LABEL: func.func @epilogue_near_misses
// CHECK:         vector.store
// CHECK:         linalg.generic
// CHECK:           linalg.index 2
// CHECK:         vector.store
// CHECK:         linalg.generic {{.*}} outs(%arg4 : memref<1x8x16xf32>)
// CHECK:         vector.store
// CHECK:         linalg.generic {{.*}} ins(%arg5 : memref<1x16x8xf32>)
// CHECK:         vector.store
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : memref<1x8x16xf32, strided<[256, 16, 1], offset: 128>>)
// CHECK:         return
func.func @epilogue_near_misses(%p: memref<1x8x32xf32>, %v: memref<32x16xf32>, %o: memref<1x8x16xf32>, %o2: memref<1x8x16xf32>, %other: memref<1x8x16xf32>, %t: memref<1x16x8xf32>) {
  %neg = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x8x32xf32>, memref<32x16xf32>) outs(%o : memref<1x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel"]} outs(%o : memref<1x8x16xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 2 : index
    %i = linalg.index 1 : index
    %vis = arith.cmpi sle, %j, %i : index
    %0 = arith.select %vis, %out, %neg : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x8x32xf32>, memref<32x16xf32>) outs(%o2 : memref<1x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o2 : memref<1x8x16xf32>) outs(%other : memref<1x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x8x32xf32>, memref<32x16xf32>) outs(%other : memref<1x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t : memref<1x16x8xf32>) outs(%other : memref<1x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  %whole = memref.alloca() : memref<1x16x16xf32>
  %top = memref.subview %whole[0, 0, 0] [1, 8, 16] [1, 1, 1] : memref<1x16x16xf32> to memref<1x8x16xf32, strided<[256, 16, 1]>>
  %bottom = memref.subview %whole[0, 8, 0] [1, 8, 16] [1, 1, 1] : memref<1x16x16xf32> to memref<1x8x16xf32, strided<[256, 16, 1], offset: 128>>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x8x32xf32>, memref<32x16xf32>) outs(%top : memref<1x8x16xf32, strided<[256, 16, 1]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bottom : memref<1x8x16xf32, strided<[256, 16, 1], offset: 128>>) outs(%top : memref<1x8x16xf32, strided<[256, 16, 1]>>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// An f32 Q K^T (an int8 build's attention) with bf16-dot-rounds-f32: K^T's
// f32 rows are rounded to bf16 (arith.truncf, vcvtneps2bf16) as they are
// packed in pairs, Q's f32 pairs in registers, and the tiles accumulate
// with vdpbf16ps in f32. With bf16-dot alone an f32 B keeps the f32 FMAs.
// DOT-LABEL: func.func @scores_f32_rounded
// DOT-NOT:     x86vector
// DOT:         vector.fma
// ROUND-LABEL: func.func @scores_f32_rounded
// ROUND:         %[[PANEL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x128xbf16>
// ROUND:         scf.for %[[J:.*]] = %{{.*}} to %c32 step
// ROUND:           %[[K:.*]] = arith.muli %[[J]], %c2
// ROUND:           %[[K1:.*]] = arith.addi %[[K]], %c1
// ROUND:           scf.for %[[COL:.*]] = %{{.*}} to %c64 step %c16
// ROUND:             %[[ODD:.*]] = vector.load %{{.*}}[%[[K1]], %[[COL]]] : memref<64x64xf32>, vector<16xf32>
// ROUND:             %[[ODDB:.*]] = arith.truncf %[[ODD]] : vector<16xf32> to vector<16xbf16>
// ROUND:             %[[EVEN:.*]] = vector.load %{{.*}}[%[[K]], %[[COL]]] : memref<64x64xf32>, vector<16xf32>
// ROUND:             %[[EVENB:.*]] = arith.truncf %[[EVEN]] : vector<16xf32> to vector<16xbf16>
// ROUND:             %[[PAIRS:.*]] = vector.interleave %[[EVENB]], %[[ODDB]] : vector<16xbf16> -> vector<32xbf16>
// ROUND:             vector.store %[[PAIRS]], %[[PANEL]][%[[J]], %{{.*}}] : memref<32x128xbf16>, vector<32xbf16>
// ROUND:         scf.for {{.*}} -> (vector<16xf32>,
// ROUND:           vector.load %[[PANEL]][%{{.*}}, %{{.*}}] : memref<32x128xbf16>, vector<32xbf16>
// ROUND:           %[[QP:.*]] = vector.load %{{.*}} : memref<1x64x64xf32>, vector<2xf32>
// ROUND:           arith.truncf %[[QP]] : vector<2xf32> to vector<2xbf16>
// ROUND:           x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// ROUND-NOT:     vector.fma
// ROUND-NOT:     linalg.generic
func.func @scores_f32_rounded(%q: memref<1x64x64xf32>, %kt: memref<64x64xf32>, %s: memref<1x64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<1x64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : memref<1x64x64xf32>, memref<64x64xf32>) outs(%s : memref<1x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#k = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// Q K^T over a KV cache, whose keys are not transposed (B is [keys, d]),
// after a zero fill, with dynamic query rows and keys: dot-product tiles of
// 4 rows x 4 keys (16 accumulators of partial sums along d, 2 vector steps
// of d), then one-row tiles for the rows left over. Each tile row's 4
// accumulators are summed by one shuffle tree (3 pair levels, no
// vector.reduction) into a vector<4xf32> stored into S; the last keys get
// a masked tile that reads the last key again for the missing ones. The
// rows left over take one key at a time (their key rows read in address
// order), with no ragged tile.
// CHECK-LABEL: func.func @cache_scores
// CHECK-NOT:     linalg.fill
// CHECK:         scf.for %[[G:.*]] = %c0 to %c2 step %c1
// CHECK:           scf.for %[[I:.*]] = %c0 to %{{.*}} step %c4
// CHECK:             scf.for %[[N:.*]] = %c0 to %{{.*}} step %c4
// CHECK:               %[[R:.*]]:16 = scf.for %[[D:.*]] = %c0 to %c32 step %c16 iter_args({{.*}}) -> (vector<16xf32>
// CHECK-COUNT-4:         vector.load %{{.*}}[%{{.*}}, %[[D]]] : memref<?x32xf32, strided<[32, 1], offset: ?>>, vector<16xf32>
// CHECK:                 vector.load %{{.*}}[%[[G]], %[[I]], %[[D]]] : memref<2x?x32xf32, strided<[?, 32, 1], offset: ?>>, vector<16xf32>
// CHECK-COUNT-16:        vector.fma
// CHECK:                 scf.yield
// CHECK-NOT:           vector.reduction
// CHECK:               vector.shuffle %[[R]]#0, %[[R]]#1 [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK:               vector.shuffle %[[R]]#0, %[[R]]#1 [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK:               %[[SUMS:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:               vector.store %[[SUMS]], %{{.*}}[%[[G]], %[[I]], %[[N]]] : memref<2x?x?xf32, strided<[4096, 64, 1]>>, vector<4xf32>
// CHECK-COUNT-3:       vector.store %{{.*}} : memref<2x?x?xf32, strided<[4096, 64, 1]>>, vector<4xf32>
// CHECK:             %[[RAGGED:.*]] = arith.cmpi ult
// CHECK:             scf.if %[[RAGGED]] {
// CHECK:               %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<4xi1>
// CHECK:               %[[LAST:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-COUNT-4:       arith.minui %{{.*}}, %[[LAST]] : index
// CHECK:               scf.for
// CHECK-COUNT-4:       vector.maskedstore %{{.*}}, %[[MASK]], %{{.*}} : memref<2x?x?xf32, strided<[4096, 64, 1]>>, vector<4xi1>, vector<4xf32>
// CHECK:           scf.for %[[I1:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:             scf.for %[[N1:.*]] = %c0 to %{{.*}} step %c1
// CHECK:               scf.for %{{.*}} = %c0 to %c32 step %c16 iter_args({{.*}}) -> (vector<16xf32>) {
// CHECK:               %[[ONE:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK:               vector.store %[[ONE]], %{{.*}}[%[[G]], %[[I1]], %[[N1]]] : memref<2x?x?xf32, strided<[4096, 64, 1]>>, vector<1xf32>
// CHECK-NOT:           scf.if
// CHECK-NOT:     linalg.generic
// SMALL-LABEL: func.func @cache_scores
// DOT-LABEL: func.func @cache_scores
// ROUND-LABEL: func.func @cache_scores
// WIDE-LABEL: func.func @cache_scores
// WIDE:         scf.for %{{.*}} = %c0 to %{{.*}} step %c8
// WIDE:           scf.for %{{.*}} = %c0 to %c32 step %c16 iter_args({{.*}}) -> (vector<16xf32>
// WIDE:         vector.store %{{.*}} : memref<2x?x?xf32, strided<[4096, 64, 1]>>, vector<8xf32>
func.func @cache_scores(%q: memref<2x?x32xf32, strided<[?, 32, 1], offset: ?>>, %k: memref<?x32xf32, strided<[32, 1], offset: ?>>, %s: memref<2x?x?xf32, strided<[4096, 64, 1]>>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<2x?x?xf32, strided<[4096, 64, 1]>>)
  linalg.generic {indexing_maps = [#a, #k, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<2x?x32xf32, strided<[?, 32, 1], offset: ?>>, memref<?x32xf32, strided<[32, 1], offset: ?>>) outs(%s : memref<2x?x?xf32, strided<[4096, 64, 1]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1) -> (d0, d1)>
#k = affine_map<(d0, d1, d2) -> (d1, d2)>
#a3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Unbatched, bf16 keys and queries widened in registers (narrow loads,
// arith.extf), static extents that are whole tiles, and no fill: S is
// loaded, the sums added and stored; the scale after it stays a loop of its
// own (epilogues are not fused into dot-product tiles).
// CHECK-LABEL: func.func @cache_scores_bf16_accumulate
// CHECK:         scf.for %{{.*}} = %c0 to %c8 step %c4
// CHECK:           scf.for %{{.*}} = %c0 to %c16 step %c4
// CHECK:             scf.for %{{.*}} = %c0 to %c64 step %c16 iter_args
// CHECK:               %[[KB:.*]] = vector.load %{{.*}} : memref<16x64xbf16>, vector<16xbf16>
// CHECK:               arith.extf %[[KB]] : vector<16xbf16> to vector<16xf32>
// CHECK:             %[[OLD:.*]] = vector.load %{{.*}} : memref<8x16xf32>, vector<4xf32>
// CHECK:             %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : vector<4xf32>
// CHECK:             vector.store %[[NEW]], %{{.*}} : memref<8x16xf32>, vector<4xf32>
// CHECK-NOT:     scf.if
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}} : memref<8x16xf32>)
func.func @cache_scores_bf16_accumulate(%q: memref<8x64xbf16>, %k: memref<16x64xbf16>, %s: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#a3, #k, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : memref<8x64xbf16>, memref<16x64xbf16>) outs(%s : memref<8x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xw = arith.extf %x : bf16 to f32
    %yw = arith.extf %y : bf16 to f32
    %m = arith.mulf %xw, %yw : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  %half = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [#a, #a], iterator_types = ["parallel", "parallel"]} ins(%s : memref<8x16xf32>) outs(%s : memref<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %half : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#k = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A head dimension that is not a multiple of the vector width (d = 24), a
// dynamic one, and a query not contiguous along d are left to the generic
// loops.
// CHECK-LABEL: func.func @cache_scores_not_taken
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     vector.fma
func.func @cache_scores_not_taken(%q: memref<1x4x24xf32>, %k: memref<?x24xf32>, %s: memref<1x4x?xf32>,
                                  %qd: memref<1x4x?xf32>, %kd: memref<?x?xf32>,
                                  %qs: memref<1x4x32xf32, strided<[256, 64, 2]>>, %k32: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [#a, #k, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x4x24xf32>, memref<?x24xf32>) outs(%s : memref<1x4x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a, #k, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qd, %kd : memref<1x4x?xf32>, memref<?x?xf32>) outs(%s : memref<1x4x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a, #k, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qs, %k32 : memref<1x4x32xf32, strided<[256, 64, 2]>>, memref<?x32xf32>) outs(%s : memref<1x4x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#k = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// Four query heads sharing one KV head (GQA) and a run-time number of
// query rows (one in a decode step): the tiles take their rows from the
// heads, per query row i, on rank-reduced views Q[:, i, :] and S[:, i, :],
// so that each key's vectors are loaded once for the four heads.
// CHECK-LABEL: func.func @cache_scores_heads
// CHECK:         %[[ROWS:.*]] = memref.dim %{{.*}}, %c1 : memref<4x?x?xf32, strided<[4096, 64, 1]>>
// CHECK:         scf.for %[[I:.*]] = %c0 to %[[ROWS]] step %c1
// CHECK:           %[[QI:.*]] = memref.subview %{{.*}}[0, %[[I]], 0] [4, 1, 64] [1, 1, 1] : memref<4x?x64xf32, strided<[?, 64, 1], offset: ?>> to memref<4x64xf32, strided<[?, 1], offset: ?>>
// CHECK:           %[[SI:.*]] = memref.subview %{{.*}}[0, %[[I]], 0] [4, 1, %{{.*}}] [1, 1, 1] : memref<4x?x?xf32, strided<[4096, 64, 1]>> to memref<4x?xf32, strided<[4096, 1], offset: ?>>
// CHECK:           scf.for %[[G:.*]] = %c0 to %c4 step %c4
// CHECK:             scf.for %[[N:.*]] = %c0 to %{{.*}} step %c4
// CHECK:               scf.for %{{.*}} = %c0 to %c64 step %c16 iter_args({{.*}}) -> (vector<16xf32>
// CHECK-COUNT-4:         vector.load %{{.*}} : memref<?x64xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
// CHECK:                 vector.load %[[QI]][%[[G]], %{{.*}}] : memref<4x64xf32, strided<[?, 1], offset: ?>>, vector<16xf32>
// CHECK-COUNT-16:        vector.fma
// CHECK:               vector.store %{{.*}}, %[[SI]][%[[G]], %[[N]]] : memref<4x?xf32, strided<[4096, 1], offset: ?>>, vector<4xf32>
// CHECK-NOT:     linalg.generic
func.func @cache_scores_heads(%q: memref<4x?x64xf32, strided<[?, 64, 1], offset: ?>>, %k: memref<?x64xf32, strided<[64, 1], offset: ?>>, %s: memref<4x?x?xf32, strided<[4096, 64, 1]>>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<4x?x?xf32, strided<[4096, 64, 1]>>)
  linalg.generic {indexing_maps = [#a, #k, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<4x?x64xf32, strided<[?, 64, 1], offset: ?>>, memref<?x64xf32, strided<[64, 1], offset: ?>>) outs(%s : memref<4x?x?xf32, strided<[4096, 64, 1]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// O += P V for eight heads over one KV head: outer-product tiles of 4 heads
// x 2 vectors per query row (V's vectors loaded once for 4 heads). With a
// fused epilogue (its inputs are indexed like the batched C) the tiles
// stay over the query rows.
// CHECK-LABEL: func.func @pv_heads
// CHECK:         scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1
// CHECK:           %[[PI:.*]] = memref.subview %{{.*}}[0, %[[I]], 0] [8, 1, %{{.*}}] [1, 1, 1] : memref<8x?x?xf32> to memref<8x?xf32, strided<[?, 1], offset: ?>>
// CHECK:           scf.for %[[G:.*]] = %c0 to %c8 step %c4
// CHECK:             scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:               memref.load %[[PI]][%[[G]], %{{.*}}] : memref<8x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func @pv_heads_epilogue
// CHECK-NOT:     memref.subview
// CHECK:         scf.for %{{.*}} = %c0 to %c8 step %c1
// CHECK-NOT:     linalg.generic
func.func @pv_heads(%p: memref<8x?x?xf32>, %v: memref<?x32xf32>, %o: memref<8x?x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<8x?x?xf32>, memref<?x32xf32>) outs(%o : memref<8x?x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}
func.func @pv_heads_epilogue(%p: memref<8x?x?xf32>, %v: memref<?x32xf32>, %o: memref<8x?x32xf32>, %bias: memref<8x?x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<8x?x?xf32>, memref<?x32xf32>) outs(%o : memref<8x?x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : memref<8x?x32xf32>) outs(%o : memref<8x?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}
