// RUN: attn-opt %s --mlir-print-local-scope \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-tile-parallel-loops))" \
// RUN:   | FileCheck %s
// RUN: attn-opt %s --mlir-print-local-scope \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-tile-parallel-loops,gpu-map-parallel-loops,convert-parallel-loops-to-gpu))" \
// RUN:   | FileCheck %s --check-prefix=GPU

// An outermost parallel loop of 200 iterations is split into blocks of 128
// threads (the last block partial). The parallel loops nested in it (the
// per-iteration code of a forall, as attn-flash-attention produces) run
// serially in the thread: they become scf.for loops, so that
// convert-parallel-loops-to-gpu accepts them after the stack buffer. The
// thread loop's bound keeps its constant in the affine.min map, which sizes
// the block.

// CHECK-LABEL: func.func @nested(
// CHECK:         %[[C128:.*]] = arith.constant 128 : index
// CHECK:         scf.parallel (%[[I0:.*]]) = (%{{.*}}) to (%{{.*}}) step (%[[C128]]) {
// CHECK-NEXT:      %[[UB:.*]] = affine.min affine_map<(d0) -> (-d0 + 200, 128)>(%[[I0]])
// CHECK-NEXT:      scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[UB]]) step (%{{.*}}) {
// CHECK:             memref.alloca() : memref<8xf32>
// CHECK-NEXT:        scf.for
// CHECK-NOT:         scf.parallel
// CHECK:             scf.for
// CHECK-NOT:         scf.parallel
// CHECK:             scf.reduce
// CHECK:           scf.reduce

// GPU:         gpu.launch
// GPU-NOT:     scf.parallel
func.func @nested(%out: memref<200x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c200 = arith.constant 200 : index
  %cst = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c200) step (%c1) {
    %tmp = memref.alloca() : memref<8xf32>
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      memref.store %cst, %tmp[%j] : memref<8xf32>
    }
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %tmp[%j] : memref<8xf32>
      memref.store %v, %out[%i, %j] : memref<200x8xf32>
    }
  }
  return
}

// The function's #attn.tile (attn-tile's choice) wins over the option:
// blocks of 64 threads.
// CHECK-LABEL: func.func @threads_from_tile(
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[STEP:.*]] = arith.muli %{{.*}}, %[[C64]] : index
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[STEP]]) {
// CHECK-NEXT:      scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[STEP]]) step
// GPU-LABEL:   func.func @threads_from_tile(
// GPU:           gpu.launch
func.func @threads_from_tile(%out: memref<256xf32>) attributes {attn.tile = #attn.tile<threads = 64>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    memref.store %cst, %out[%i] : memref<256xf32>
  }
  return
}

// A [B, S, H, D] -> [B, H, S, D] head transpose: four parallel dimensions.
// The leading three are collapsed into one (the grid has three dimensions,
// and with three the threads would go to z, 64 at most), then D is split
// into threads: 1 x 4 x 16 = 64 blocks of 16 threads (before, the fourth
// dimension ran sequentially and the blocks had one thread each).
// CHECK-LABEL: func.func @head_transpose(
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%[[C64]], %{{.*}}) step (%{{.*}}, %[[STEP:.*]]) {
// CHECK-NEXT:      scf.parallel (%[[TI:.*]], %[[TJ:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[STEP]]) step
// CHECK-DAG:         %[[ROW:.*]] = arith.addi %[[TI]], %[[I]]
// CHECK-DAG:         %[[D:.*]] = arith.addi %[[TJ]], %[[J]]
// CHECK:             %[[S:.*]] = arith.remsi %[[ROW]], %{{.*}}
// CHECK:             memref.load %arg0[%{{.*}}, %[[S]], %{{.*}}, %[[D]]]
// CHECK:             memref.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}, %[[S]], %[[D]]]
// CHECK-NOT:       scf.for
// CHECK:           scf.reduce
// The mapped kernel: no sequential loop left in it.
// GPU-LABEL:   func.func @head_transpose(
// GPU:           gpu.launch blocks
// GPU-NOT:       scf.for
// GPU:           memref.store
// GPU-NEXT:      gpu.terminator
func.func @head_transpose(%in: memref<1x16x4x16xf32>, %out: memref<1x4x16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%b, %h, %s, %d) = (%c0, %c0, %c0, %c0) to (%c1, %c4, %c16, %c16) step (%c1, %c1, %c1, %c1) {
    %v = memref.load %in[%b, %s, %h, %d] : memref<1x16x4x16xf32>
    memref.store %v, %out[%b, %h, %s, %d] : memref<1x4x16x16xf32>
  }
  return
}

// A run-time innermost extent (rows of a dynamic sequence, e.g. the generic
// flash kernel's query rows): blocks of `threads` (128) threads, the last
// one partial (its tile bounded by min(128, n - i)); before, the loop stayed
// untiled and each block had one thread. The mapped kernel guards the
// partial block and sizes the block by the constant of the min.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME:    %[[OUT:[^:]+]]: memref<4x?xf32>, %[[N:[^:]+]]: index)
// CHECK:         %[[C128:.*]] = arith.constant 128 : index
// CHECK:         scf.parallel (%[[H:.*]], %[[I:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[N]]) step (%{{.*}}, %[[C128]]) {
// CHECK:           %[[TILE:.*]] = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 128)>(%[[I]])[%[[N]]]
// CHECK:           scf.parallel (%{{.*}}, %[[TI:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[TILE]])
// CHECK:             %[[ROW:.*]] = arith.addi %[[TI]], %[[I]]
// CHECK:             memref.store %{{.*}}, %[[OUT]][%{{.*}}, %[[ROW]]]
// GPU-LABEL:   func.func @dynamic_rows(
// GPU-SAME:      %{{[^:]+}}: memref<4x?xf32>, %[[N:[^:]+]]: index)
// GPU:           %[[BLOCKS:.*]] = affine.apply affine_map<(d0)[s0, s1] -> ((d0 - s0) ceildiv s1)>(%[[N]])[%{{.*}}, %c128]
// GPU:           %[[C128:.*]] = arith.constant 128 : index
// GPU-NEXT:      %[[THREADS:.*]] = affine.apply affine_map<(d0)[s0, s1] -> ((d0 - s0) ceildiv s1)>(%[[C128]])
// GPU-NEXT:      gpu.launch blocks({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[BLOCKS]], %{{.*}} = %{{.*}}) threads({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[THREADS]], %{{.*}} = %{{.*}})
// GPU:             scf.if
// GPU:               memref.store
func.func @dynamic_rows(%out: memref<4x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 0.0 : f32
  scf.parallel (%h, %i) = (%c0, %c0) to (%c4, %n) step (%c1, %c1) {
    memref.store %cst, %out[%h, %i] : memref<4x?xf32>
  }
  return
}
