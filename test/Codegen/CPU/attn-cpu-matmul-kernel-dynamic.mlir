// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s

// Dynamic M (rows = batch x sequence given at run time): the kernels read
// the row count once (memref.dim) and run MR-row tiles up to its last
// multiple of MR, then single rows; N and K are the weight's (static).

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// The reduction form with its bias epilogue: 4-row tiles up to (M / 4) * 4,
// then one row at a time up to M, then the epilogue on vectors over the
// column block's M rows.
// CHECK-LABEL: func.func @nt_matmul_dynamic_rows(
// CHECK-SAME:    %[[X:[^:]+]]: memref<?x64xf32>, %[[W:[^:]+]]: memref<128x64xf32>, %[[BIAS:[^:]+]]: memref<128xf32>, %[[OUT:[^:]+]]: memref<?x128xf32>)
// CHECK:         %[[M:.*]] = memref.dim %[[OUT]], %{{.*}} : memref<?x128xf32>
// CHECK:         scf.parallel
// CHECK:           %[[Q:.*]] = arith.divui %[[M]], %[[C4:.*]] : index
// CHECK:           %[[MAIN:.*]] = arith.muli %[[Q]], %[[C4]] : index
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[MAIN]] step %{{.*}} {
// CHECK:             scf.for
// CHECK:               vector.load %[[X]]{{.*}} : memref<?x64xf32>, vector<16xf32>
// CHECK:               vector.load %[[W]]{{.*}} : memref<128x64xf32>, vector<16xf32>
// CHECK:               vector.fma
// CHECK:             vector.shuffle
// CHECK:             vector.store %{{.*}}, %[[OUT]][{{.*}}] : memref<?x128xf32>, vector<4xf32>
// CHECK:           scf.for %{{.*}} = %[[MAIN]] to %[[M]] step %{{.*}} {
// CHECK:             vector.fma
// CHECK:           scf.for %[[ROW:.*]] = %{{.*}} to %[[M]] step
// CHECK:             scf.for
// CHECK:               vector.load %[[OUT]][%[[ROW]], %{{.*}}] : memref<?x128xf32>, vector<16xf32>
// CHECK:               vector.load %[[BIAS]]
// CHECK:               vector.store %{{.*}}, %[[OUT]][%[[ROW]], %{{.*}}] : memref<?x128xf32>, vector<16xf32>
// CHECK-NOT:     linalg.generic
func.func @nt_matmul_dynamic_rows(%x: memref<?x64xf32>, %w: memref<128x64xf32>, %bias: memref<128xf32>, %out: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<?x64xf32>, memref<128x64xf32>) outs(%out : memref<?x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%out, %bias : memref<?x128xf32>, memref<128xf32>) outs(%out : memref<?x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// The K-major (outer-product) form.
// CHECK-LABEL: func.func @kmajor_dynamic_rows(
// CHECK-SAME:    %[[X:[^:]+]]: memref<?x64xf32>, %[[WT:[^:]+]]: memref<64x128xf32>, %[[OUT:[^:]+]]: memref<?x128xf32>)
// CHECK:         %[[M:.*]] = memref.dim %[[OUT]], %{{.*}} : memref<?x128xf32>
// CHECK:         scf.parallel
// CHECK:           %[[Q:.*]] = arith.divui %[[M]], %[[C4:.*]] : index
// CHECK:           %[[MAIN:.*]] = arith.muli %[[Q]], %[[C4]] : index
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[MAIN]] step %{{.*}} {
// CHECK:             vector.fma
// CHECK:             vector.store %{{.*}}, %[[OUT]][{{.*}}] : memref<?x128xf32>, vector<16xf32>
// CHECK:           scf.for %{{.*}} = %[[MAIN]] to %[[M]] step %{{.*}} {
// CHECK:             vector.fma
// CHECK-NOT:     linalg.generic
func.func @kmajor_dynamic_rows(%x: memref<?x64xf32>, %wt: memref<64x128xf32>, %out: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<?x64xf32>, memref<64x128xf32>) outs(%out : memref<?x128xf32>) {
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

// A dynamic K or N is not the weight's: left to the loops.
// CHECK-LABEL: func.func @dynamic_k_left_alone(
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
func.func @dynamic_k_left_alone(%x: memref<?x?xf32>, %w: memref<128x?xf32>, %out: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<?x?xf32>, memref<128x?xf32>) outs(%out : memref<?x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
