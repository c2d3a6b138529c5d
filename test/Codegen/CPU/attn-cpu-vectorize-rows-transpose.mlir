// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-vectorize-rows,cse))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-vectorize-rows{parallel-min-elements=4096},cse))" | FileCheck %s --check-prefix=PAR

// Attention's head split: a transpose that keeps the innermost dimension
// innermost becomes vector copies of rows, read at the permuted indices.
// One that moves it (keys transposed for Q K^T) goes by 16 x 16 blocks: 16
// rows of 16 contiguous values loaded, transposed in registers, stored as
// 16 contiguous rows. A transpose whose swapped extents are not multiples
// of 16 stays as it is.
// CHECK-LABEL: func.func @head_split
// CHECK:         scf.for %[[B:.*]] = %c0 to %c1
// CHECK:           scf.for %[[H:.*]] = %c0 to %c4
// CHECK:             scf.for %[[S:.*]] = %c0 to %c32
// CHECK:               scf.for %[[D:.*]] = %c0 to %c64 step %c16
// CHECK:                 %[[V:.*]] = vector.load %arg0[%[[B]], %[[S]], %[[H]], %[[D]]] : memref<1x32x4x64xf32>, vector<16xf32>
// CHECK:                 vector.store %[[V]], %arg1[%[[B]], %[[H]], %[[S]], %[[D]]] : memref<1x4x32x64xf32>, vector<16xf32>
// CHECK:         scf.for %[[B2:.*]] = %c0 to %c1
// CHECK:           scf.for %[[H2:.*]] = %c0 to %c4
// CHECK:             scf.for %[[D2:.*]] = %c0 to %c64 step %c16
// CHECK:               scf.for %[[S2:.*]] = %c0 to %c32 step %c16
// CHECK:                 %[[R0:.*]] = vector.load %arg0[%[[B2]], %[[S2]], %[[H2]], %[[D2]]] : memref<1x32x4x64xf32>, vector<16xf32>
// CHECK:                 vector.insert %[[R0]], %{{.*}} [0] : vector<16xf32> into vector<16x16xf32>
// CHECK:                 %[[S15:.*]] = arith.addi %[[S2]], %c15
// CHECK:                 vector.load %arg0[%[[B2]], %[[S15]], %[[H2]], %[[D2]]]
// CHECK:                 %[[T:.*]] = vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK:                 %[[C0:.*]] = vector.extract %[[T]][0] : vector<16xf32> from vector<16x16xf32>
// CHECK:                 vector.store %[[C0]], %arg2[%[[B2]], %[[H2]], %[[D2]], %[[S2]]] : memref<1x4x64x32xf32>, vector<16xf32>
// CHECK:                 %[[D15:.*]] = arith.addi %[[D2]], %c15
// CHECK:                 %[[C15:.*]] = vector.extract %[[T]][15]
// CHECK:                 vector.store %[[C15]], %arg2[%[[B2]], %[[H2]], %[[D15]], %[[S2]]]
// CHECK:         linalg.transpose ins(%arg3 : memref<24x8xf32>) outs(%arg4 : memref<8x24xf32>) permutation = [1, 0]
// Large enough (8192 elements) and outside any parallel loop: the heads
// (the first dimension of more than one iteration) go to scf.parallel.
// PAR-LABEL: func.func @head_split
// PAR:         scf.for %{{.*}} = %c0 to %c1
// PAR:           scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1)
// PAR:             scf.for %{{.*}} = %c0 to %c32
// PAR:               vector.load
// PAR:         scf.for %{{.*}} = %c0 to %c1
// PAR:           scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1)
// PAR:             vector.transpose
// PAR:         linalg.transpose
func.func @head_split(%x: memref<1x32x4x64xf32>, %q: memref<1x4x32x64xf32>, %kt: memref<1x4x64x32xf32>, %odd: memref<24x8xf32>, %oddt: memref<8x24xf32>) {
  linalg.transpose ins(%x : memref<1x32x4x64xf32>) outs(%q : memref<1x4x32x64xf32>) permutation = [0, 2, 1, 3]
  linalg.transpose ins(%x : memref<1x32x4x64xf32>) outs(%kt : memref<1x4x64x32xf32>) permutation = [0, 2, 3, 1]
  linalg.transpose ins(%odd : memref<24x8xf32>) outs(%oddt : memref<8x24xf32>) permutation = [1, 0]
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Threads are not forked for an op inside a parallel loop, one under the
// threshold, or one with run-time sizes.
// PAR-LABEL: func.func @not_shared
// PAR:         scf.forall
// PAR-NOT:       scf.parallel
// PAR:         }
// PAR-NOT:     scf.parallel
// PAR:         return
func.func @not_shared(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %small: memref<8x64xf32>, %dyn: memref<?x256xf32>) {
  scf.forall (%i) in (2) {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<64x64xf32>) outs(%b : memref<64x64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %o : f32
      linalg.yield %r : f32
    }
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%small : memref<8x64xf32>) {
  ^bb0(%o: f32):
    %r = arith.addf %o, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%dyn : memref<?x256xf32>) {
  ^bb0(%o: f32):
    %r = arith.addf %o, %o : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Elementwise ops may convert: a quantization of f32 rows to i8 (the row's
// scale and zero point loaded once per row) stores vector<16xi8>. An i1
// buffer is left alone: vectors of i1 are stored as bits.
// CHECK-LABEL: func.func @quantize_rows
// CHECK:         scf.for %[[M:.*]] = %c0 to %c4
// CHECK:           %[[S:.*]] = memref.load %arg1[%[[M]]] : memref<4xf32>
// CHECK:           scf.for %[[J:.*]] = %c0 to %c64 step %c16
// CHECK:             %[[X:.*]] = vector.load %arg0[%[[M]], %[[J]]] : memref<4x64xf32>, vector<16xf32>
// CHECK:             %[[B:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK:             arith.divf %[[X]], %[[B]] : vector<16xf32>
// CHECK:             math.roundeven %{{.*}} : vector<16xf32>
// CHECK:             arith.fptoui %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:             %[[Q:.*]] = arith.trunci %{{.*}} : vector<16xi32> to vector<16xi8>
// CHECK:             vector.store %[[Q]], %arg2[%[[M]], %[[J]]] : memref<4x64xi8>, vector<16xi8>
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%arg4 : memref<4x64xi1>)
func.func @quantize_rows(%x: memref<4x64xf32>, %scale: memref<4xf32>, %q: memref<4x64xi8>, %ids: memref<4x64xi64>, %mask: memref<4x64xi1>) {
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : memref<4x64xf32>, memref<4xf32>) outs(%q : memref<4x64xi8>) {
  ^bb0(%v: f32, %s: f32, %o: i8):
    %d = arith.divf %v, %s : f32
    %r = math.roundeven %d : f32
    %c = arith.maxnumf %r, %lo : f32
    %c2 = arith.minnumf %c, %hi : f32
    %u = arith.fptoui %c2 : f32 to i32
    %t = arith.trunci %u : i32 to i8
    linalg.yield %t : i8
  }
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4x64xi64>) outs(%mask : memref<4x64xi1>) {
  ^bb0(%v: i64, %o: i1):
    %zero = arith.constant 0 : i64
    %ne = arith.cmpi ne, %v, %zero : i64
    linalg.yield %ne : i1
  }
  return
}

// -----

#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d2)>

// A running minimum and maximum over 16 lanes of each row (a reduction
// loop before the innermost, parallel one): the two outputs are loaded
// into vectors, carried through the reduction loop, and stored once; the
// compare-and-select body is kept as it is, lane by lane, in its order.
// CHECK-LABEL: func.func @lane_min_max
// CHECK:         scf.for %[[M:.*]] = %c0 to %c8
// CHECK:           scf.for %[[J:.*]] = %c0 to %c16 step %c16
// CHECK:             %[[LO0:.*]] = vector.load %arg1[%[[M]], %[[J]]] : memref<8x16xf32>, vector<16xf32>
// CHECK:             %[[HI0:.*]] = vector.load %arg2[%[[M]], %[[J]]] : memref<8x16xf32>, vector<16xf32>
// CHECK:             %[[R:.*]]:2 = scf.for %[[K:.*]] = %c0 to %c48 step %c1 iter_args(%[[LO:.*]] = %[[LO0]], %[[HI:.*]] = %[[HI0]]) -> (vector<16xf32>, vector<16xf32>)
// CHECK:               %[[X:.*]] = vector.load %arg0[%[[M]], %[[K]], %[[J]]] : memref<8x48x16xf32>, vector<16xf32>
// CHECK:               %[[LT:.*]] = arith.cmpf olt, %[[X]], %[[LO]] : vector<16xf32>
// CHECK:               %[[NLO:.*]] = arith.select %[[LT]], %[[X]], %[[LO]] : vector<16xi1>, vector<16xf32>
// CHECK:               %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[HI]] : vector<16xf32>
// CHECK:               %[[NHI:.*]] = arith.select %[[GT]], %[[X]], %[[HI]] : vector<16xi1>, vector<16xf32>
// CHECK:               scf.yield %[[NLO]], %[[NHI]] : vector<16xf32>, vector<16xf32>
// CHECK:             vector.store %[[R]]#0, %arg1[%[[M]], %[[J]]]
// CHECK:             vector.store %[[R]]#1, %arg2[%[[M]], %[[J]]]
// CHECK-NOT:     linalg.generic
// With parallel-min-elements, the rows (before the reduction loop) are
// split among the threads.
// PAR-LABEL: func.func @lane_min_max
// PAR:         scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1)
// PAR:           scf.for %{{.*}} = %c0 to %c48 step %c1 iter_args
func.func @lane_min_max(%x: memref<8x48x16xf32>, %lo: memref<8x16xf32>, %hi: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#in3, #out3, #out3], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : memref<8x48x16xf32>) outs(%lo, %hi : memref<8x16xf32>, memref<8x16xf32>) {
  ^bb0(%v: f32, %a: f32, %b: f32):
    %lt = arith.cmpf olt, %v, %a : f32
    %mn = arith.select %lt, %v, %a : f32
    %gt = arith.cmpf ogt, %v, %b : f32
    %mx = arith.select %gt, %v, %b : f32
    linalg.yield %mn, %mx : f32, f32
  }
  return
}

// -----

#rows = affine_map<(d0, d1) -> (d0, d1)>

// bf16 buffers when the body only converts them: an f32 result narrowed to
// bf16 (as a bf16 model stores a GEMM's output) gets a vector loop; bf16
// arithmetic is left alone.
// CHECK-LABEL: func.func @narrow_rows
// CHECK:         scf.for %[[M:.*]] = %c0 to %c4
// CHECK:           scf.for %[[J:.*]] = %c0 to %c64 step %c16
// CHECK:             %[[X:.*]] = vector.load %arg0[%[[M]], %[[J]]] : memref<4x64xf32>, vector<16xf32>
// CHECK:             %[[T:.*]] = arith.truncf %[[X]] : vector<16xf32> to vector<16xbf16>
// CHECK:             vector.store %[[T]], %arg1[%[[M]], %[[J]]] : memref<4x64xbf16>, vector<16xbf16>
// CHECK:         linalg.generic
// CHECK:           arith.addf %{{.*}} : bf16
func.func @narrow_rows(%x: memref<4x64xf32>, %y: memref<4x64xbf16>, %z: memref<4x64xbf16>) {
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x64xf32>) outs(%y : memref<4x64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%y : memref<4x64xbf16>) outs(%z : memref<4x64xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %s = arith.addf %v, %v : bf16
    linalg.yield %s : bf16
  }
  return
}
