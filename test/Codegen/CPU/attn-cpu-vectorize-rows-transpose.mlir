// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-vectorize-rows,cse))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-vectorize-rows{parallel-min-elements=4096},cse))" | FileCheck %s --check-prefix=PAR

// Attention's head split: a transpose that keeps the innermost dimension
// innermost becomes vector copies of rows, read at the permuted indices.
// A transpose that moves the innermost dimension (keys transposed for
// Q K^T) stays as it is.
// CHECK-LABEL: func.func @head_split
// CHECK:         scf.for %[[B:.*]] = %c0 to %c1
// CHECK:           scf.for %[[H:.*]] = %c0 to %c4
// CHECK:             scf.for %[[S:.*]] = %c0 to %c32
// CHECK:               scf.for %[[D:.*]] = %c0 to %c64 step %c16
// CHECK:                 %[[V:.*]] = vector.load %arg0[%[[B]], %[[S]], %[[H]], %[[D]]] : memref<1x32x4x64xf32>, vector<16xf32>
// CHECK:                 vector.store %[[V]], %arg1[%[[B]], %[[H]], %[[S]], %[[D]]] : memref<1x4x32x64xf32>, vector<16xf32>
// CHECK:         linalg.transpose ins(%arg0 : memref<1x32x4x64xf32>) outs(%arg2 : memref<1x4x64x32xf32>) permutation = [0, 2, 3, 1]
// CHECK-NOT:     scf.parallel
// Large enough (8192 elements) and outside any parallel loop: the heads
// (the first dimension of more than one iteration) go to scf.parallel.
// PAR-LABEL: func.func @head_split
// PAR:         scf.for %{{.*}} = %c0 to %c1
// PAR:           scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1)
// PAR:             scf.for %{{.*}} = %c0 to %c32
// PAR:               vector.load
// PAR:         linalg.transpose
func.func @head_split(%x: memref<1x32x4x64xf32>, %q: memref<1x4x32x64xf32>, %kt: memref<1x4x64x32xf32>) {
  linalg.transpose ins(%x : memref<1x32x4x64xf32>) outs(%q : memref<1x4x32x64xf32>) permutation = [0, 2, 1, 3]
  linalg.transpose ins(%x : memref<1x32x4x64xf32>) outs(%kt : memref<1x4x64x32xf32>) permutation = [0, 2, 3, 1]
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
