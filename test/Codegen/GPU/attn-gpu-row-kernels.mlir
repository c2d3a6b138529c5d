// RUN: attn-opt %s --split-input-file --attn-gpu-row-kernels | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-row-kernels=max-threads=32 | FileCheck %s --check-prefix=T32
// RUN: not attn-opt %s --split-input-file --attn-gpu-row-kernels=max-threads=48 2>&1 | FileCheck %s --check-prefix=BADOPT

// A fused residual + layer norm row loop (as attn-fuse-rows leaves it) gets
// one block per row: 4 rows, N = 96 -> 96 threads (3 warps). The two
// reductions run strided over the threads, then shuffle within warps and
// combine the warps' slots; the normalized row is written strided. Numerics:
// the whole models of Integration/GPU/model-emulation.test.
#row = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#scalar = affine_map<(d0, d1, d2) -> (d0, d1)>
#gamma = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:    %[[X:[^:]+]]: memref<1x4x96xf32>, %[[R:[^:]+]]: memref<1x4x96xf32>, %[[G:[^:]+]]: memref<96xf32>, %[[Y:[^:]+]]: memref<1x4x96xf32>)
// CHECK-NOT:     scf.forall
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C96:.*]] = arith.constant 96 : index
// CHECK:         gpu.launch blocks(%[[BX:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) in (%{{[^=]+}}= %[[C4]], %{{.*}}) threads(%[[TX:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) in (%{{[^=]+}}= %[[C96]],
// CHECK:           %[[SLOTS:.*]] = memref.alloca() : memref<3xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[XR:.*]] = memref.subview %[[X]][0, %[[BX]], 0] [1, 1, 96]
// CHECK:           %[[SUM:.*]] = memref.alloca() {{.*}} : memref<1x1xf32>
// CHECK:           memref.store %{{.*}}, %[[SUM]]
// CHECK:           %[[P:.*]] = scf.for %[[J:.*]] = %[[TX]] to %{{.*}} step %{{.*}} iter_args
// CHECK:             memref.load %[[XR]][%{{.*}}, %{{.*}}, %[[J]]]
// CHECK:             scf.yield
// CHECK:           gpu.shuffle  xor %[[P]], %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4:   gpu.shuffle  xor
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %[[SLOTS]]
// CHECK:           gpu.barrier
// CHECK-COUNT-3:   memref.load %[[SLOTS]]
// CHECK:           gpu.barrier
// CHECK:           memref.load %[[SUM]]
// CHECK:           memref.store %{{.*}}, %[[SUM]]
// CHECK:           scf.for
// CHECK:           gpu.barrier
// CHECK:           gpu.barrier
// CHECK:           %[[YR:.*]] = memref.subview %[[Y]][0, %[[BX]], 0] [1, 1, 96]
// CHECK:           scf.for %[[K:.*]] = %[[TX]] to
// CHECK:             memref.load %[[G]][%[[K]]]
// CHECK:             math.rsqrt
// CHECK:             memref.store %{{.*}}, %[[YR]][%{{.*}}, %{{.*}}, %[[K]]]
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
// CHECK:         return
// T32-LABEL: func.func @layer_norm(
// T32:         gpu.launch
// T32-SAME:      threads({{.*}}) in (%{{[^=]+}}= %c32{{.*}},
// T32-NOT:       memref.alloca() : memref<{{.*}}workgroup
// T32-NOT:       gpu.barrier
// T32:           gpu.terminator
func.func @layer_norm(%x: memref<1x4x96xf32>, %r: memref<1x4x96xf32>, %g: memref<96xf32>, %y: memref<1x4x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 96.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  scf.forall (%i) in (4) {
    %xr = memref.subview %x[0, %i, 0] [1, 1, 96] [1, 1, 1] : memref<1x4x96xf32> to memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>
    %rr = memref.subview %r[0, %i, 0] [1, 1, 96] [1, 1, 1] : memref<1x4x96xf32> to memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>
    %sum = memref.alloca() {alignment = 64 : i64} : memref<1x1xf32>
    linalg.fill ins(%zero : f32) outs(%sum : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#row, #row, #scalar], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xr, %rr : memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>, memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>) outs(%sum : memref<1x1xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %0 = arith.addf %a, %b : f32
      %1 = arith.addf %out, %0 fastmath<reassoc,contract> : f32
      linalg.yield %1 : f32
    }
    %var = memref.alloca() {alignment = 64 : i64} : memref<1x1xf32>
    linalg.fill ins(%zero : f32) outs(%var : memref<1x1xf32>)
    linalg.generic {indexing_maps = [#row, #row, #scalar, #scalar], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xr, %rr, %sum : memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>, memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>, memref<1x1xf32>) outs(%var : memref<1x1xf32>) {
    ^bb0(%a: f32, %b: f32, %s: f32, %out: f32):
      %m = arith.divf %s, %n : f32
      %0 = arith.addf %a, %b : f32
      %1 = arith.subf %0, %m : f32
      %2 = arith.mulf %1, %1 : f32
      %3 = arith.addf %out, %2 fastmath<reassoc,contract> : f32
      linalg.yield %3 : f32
    }
    %yr = memref.subview %y[0, %i, 0] [1, 1, 96] [1, 1, 1] : memref<1x4x96xf32> to memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>
    linalg.generic {indexing_maps = [#row, #row, #scalar, #scalar, #gamma, #row], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%xr, %rr, %sum, %var, %g : memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>, memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>, memref<1x1xf32>, memref<1x1xf32>, memref<96xf32>) outs(%yr : memref<1x1x96xf32, strided<[384, 96, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %s: f32, %v: f32, %gv: f32, %out: f32):
      %m = arith.divf %s, %n : f32
      %0 = arith.addf %a, %b : f32
      %1 = arith.subf %0, %m : f32
      %2 = arith.divf %v, %n : f32
      %3 = arith.addf %2, %eps : f32
      %4 = math.rsqrt %3 : f32
      %5 = arith.mulf %1, %4 : f32
      %6 = arith.mulf %5, %gv : f32
      linalg.yield %6 : f32
    }
  }
  return
}

// -----

// A running max over the row, and a scalar generic on the stack scalars
// (every thread computes it): the max combines with maximumf from -inf. The
// row's result is copied to a global scalar by thread 0 only.
#row = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_max(
// CHECK:         gpu.launch
// CHECK:           %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[NEGINF]])
// CHECK:             arith.maximumf
// CHECK:           gpu.shuffle  xor
// CHECK:           arith.maximumf
// CHECK:           memref.load %[[M:.*]][%{{.*}}] : memref<1xf32>
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.*}}, %[[M]]
// CHECK:           %[[S:.*]] = memref.load %[[M]][%{{.*}}] : memref<1xf32>
// CHECK:           arith.mulf %[[S]], %[[S]]
// CHECK:           memref.store
// CHECK:           %[[OUT:.*]] = memref.subview
// CHECK:           %[[V:.*]] = memref.load
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK:           scf.if %[[FIRST]] {
// CHECK:             memref.store %[[V]], %[[OUT]]
// CHECK:           gpu.terminator
func.func @row_max(%x: memref<8x40xf32>, %out: memref<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  scf.forall (%i) in (8) {
    %xr = memref.subview %x[%i, 0] [1, 40] [1, 1] : memref<8x40xf32> to memref<1x40xf32, strided<[40, 1], offset: ?>>
    %m = memref.alloca() : memref<1xf32>
    linalg.fill ins(%ninf : f32) outs(%m : memref<1xf32>)
    linalg.generic {indexing_maps = [#row, #scalar], iterator_types = ["parallel", "reduction"]}
        ins(%xr : memref<1x40xf32, strided<[40, 1], offset: ?>>) outs(%m : memref<1xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %0 = arith.maximumf %acc, %a : f32
      linalg.yield %0 : f32
    }
    %sq = memref.alloca() : memref<1xf32>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%m : memref<1xf32>) outs(%sq : memref<1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %0 = arith.mulf %a, %a : f32
      linalg.yield %0 : f32
    }
    %o = memref.subview %out[%i] [1] [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: ?>>
    memref.copy %sq, %o : memref<1xf32> to memref<1xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// Not taken: the stack scalar is written to a global row (memref.copy into a
// subview of %out: other threads would race on it); a row temporary (an
// alloca of the row's size); a loop in the body.
// CHECK-LABEL: func.func @not_taken(
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-2: scf.forall
// CHECK-NOT:     gpu.launch
// CHECK:         return
#row = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_taken(%x: memref<8x40xf32>, %out: memref<8x40xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (8) {
    %xr = memref.subview %x[%i, 0] [1, 40] [1, 1] : memref<8x40xf32> to memref<1x40xf32, strided<[40, 1], offset: ?>>
    %t = memref.alloca() : memref<1x40xf32>
    linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
        ins(%xr : memref<1x40xf32, strided<[40, 1], offset: ?>>) outs(%t : memref<1x40xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
  }
  scf.forall (%i) in (8) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x40xf32>
      memref.store %v, %out[%i, %j] : memref<8x40xf32>
    }
  }
  return
}

// BADOPT: attn-gpu-row-kernels: max-threads must be a multiple of 32 in [32, 1024]

// -----

// Rows at run time (batch %nb and sequence %ns of a dynamic model): one
// block per row, the grid nb * ns computed on the host, and the row indices
// split from the block index by the run-time sequence length.
#row3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME:    %{{.*}}: memref<?x?x40xf32>, %{{.*}}: memref<?x?x40xf32>, %[[NB:.*]]: index, %[[NS:.*]]: index)
// CHECK:         %[[ROWS:.*]] = arith.muli %[[NB]], %[[NS]] : index
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]],
// CHECK:           %[[S:.*]] = arith.remui %[[BX]], %[[NS]] : index
// CHECK:           %[[B:.*]] = arith.divui %[[BX]], %[[NS]] : index
// CHECK:           memref.subview %{{.*}}[%[[B]], %[[S]], 0] [1, 1, 40]
// CHECK:           scf.for
// CHECK-NOT:     scf.forall
func.func @dynamic_rows(%x: memref<?x?x40xf32>, %out: memref<?x?x40xf32>, %nb: index, %ns: index) {
  scf.forall (%b, %s) in (%nb, %ns) {
    %xr = memref.subview %x[%b, %s, 0] [1, 1, 40] [1, 1, 1] : memref<?x?x40xf32> to memref<1x1x40xf32, strided<[?, 40, 1], offset: ?>>
    %or = memref.subview %out[%b, %s, 0] [1, 1, 40] [1, 1, 1] : memref<?x?x40xf32> to memref<1x1x40xf32, strided<[?, 40, 1], offset: ?>>
    linalg.generic {indexing_maps = [#row3, #row3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%xr : memref<1x1x40xf32, strided<[?, 40, 1], offset: ?>>) outs(%or : memref<1x1x40xf32, strided<[?, 40, 1], offset: ?>>) {
    ^bb0(%a: f32, %o: f32):
      %0 = arith.mulf %a, %a : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// linalg.index in a row body (a position-dependent row, such as a learned
// position added before an embedding norm) is the row loop's index where the
// loop is the row loop, 0 elsewhere.
#row = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @row_index(
// CHECK:         gpu.launch
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to
// CHECK:             %[[I:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK:             arith.sitofp %[[I]]
// CHECK-NOT:     linalg.index
// CHECK:         return
func.func @row_index(%out: memref<8x40xf32>) {
  scf.forall (%i) in (8) {
    %or = memref.subview %out[%i, 0] [1, 40] [1, 1] : memref<8x40xf32> to memref<1x40xf32, strided<[40, 1], offset: ?>>
    linalg.generic {indexing_maps = [#row], iterator_types = ["parallel", "parallel"]}
        outs(%or : memref<1x40xf32, strided<[40, 1], offset: ?>>) {
    ^bb0(%o: f32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %jf = arith.sitofp %ji : i64 to f32
      linalg.yield %jf : f32
    }
  }
  return
}
