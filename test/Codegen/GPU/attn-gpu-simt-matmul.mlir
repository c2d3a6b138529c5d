// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-gpu-simt-matmul))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-gpu-simt-matmul{fuse-epilogues=0}))" | FileCheck %s --check-prefix=NOFUSE

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Zero fill, f32 contraction and bias + relu consumer: one parallel loop
// over (m, n); the k loop keeps the sum in a register from zero (the fill
// is gone), its body is the contraction's (fastmath kept), and the store
// goes through the consumer's body into the consumer's output.
// CHECK-LABEL: func.func @fill_matmul_bias_relu
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     memref.alloc
// CHECK:         scf.parallel (%[[M:.*]], %[[N:.*]]) = (%{{.*}}, %{{.*}}) to (%c4{{[_0-9]*}}, %c32{{[_0-9]*}}) step
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c64{{[_0-9]*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK:             %[[X:.*]] = memref.load %arg0[%[[M]], %[[K]]] : memref<4x64xf32>
// CHECK:             %[[W:.*]] = memref.load %arg1[%[[N]], %[[K]]] : memref<32x64xf32>
// CHECK:             %[[P:.*]] = arith.mulf %[[X]], %[[W]] fastmath<contract> : f32
// CHECK:             %[[S:.*]] = arith.addf %[[ACC]], %[[P]] fastmath<contract> : f32
// CHECK:             scf.yield %[[S]] : f32
// CHECK:           %[[B:.*]] = memref.load %arg2[%[[N]]] : memref<32xf32>
// CHECK:           %[[Y:.*]] = arith.addf %[[SUM]], %[[B]] : f32
// CHECK:           %[[R:.*]] = arith.maximumf %[[Y]], %{{.*}} : f32
// CHECK:           memref.store %[[R]], %arg3[%[[M]], %[[N]]] : memref<4x32xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// Without epilogue fusion the consumer stays a generic and the loop stores C.
// NOFUSE-LABEL: func.func @fill_matmul_bias_relu
// NOFUSE-NOT:     linalg.fill
// NOFUSE:         scf.parallel
// NOFUSE:           scf.for
// NOFUSE:           memref.store %{{.*}}, %[[C:.*]][%{{.*}}, %{{.*}}] : memref<4x32xf32>
// NOFUSE:         linalg.generic {{.*}} ins(%[[C]], %arg2
func.func @fill_matmul_bias_relu(%x: memref<4x64xf32>, %w: memref<32x64xf32>, %bias: memref<32xf32>, %out: memref<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x32xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<4x64xf32>, memref<32x64xf32>) outs(%acc : memref<4x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %p = arith.mulf %in, %in_0 fastmath<contract> : f32
    %s = arith.addf %o, %p fastmath<contract> : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<4x32xf32>, memref<32xf32>) outs(%out : memref<4x32xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %y = arith.addf %v, %bv : f32
    %r = arith.maximumf %y, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<4x32xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Accumulating into C (a residual the projection adds to): the k loop
// starts from C's value.
// CHECK-LABEL: func.func @accumulate
// CHECK:         scf.parallel (%[[M:.*]], %[[N:.*]]) =
// CHECK:           %[[INIT:.*]] = memref.load %arg2[%[[M]], %[[N]]] : memref<4x32xf32>
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32)
// CHECK:           memref.store %[[SUM]], %arg2[%[[M]], %[[N]]] : memref<4x32xf32>
// CHECK-NOT:     linalg.generic
func.func @accumulate(%x: memref<4x64xf32>, %w: memref<32x64xf32>, %c: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<4x64xf32>, memref<32x64xf32>) outs(%c : memref<4x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A contraction inside a loop (an attention block's) runs in another op's
// threads: left alone, as is a K-major one and an f16 one.
// CHECK-LABEL: func.func @left_alone
// CHECK:         scf.for
// CHECK:           linalg.generic
// CHECK:         linalg.generic {{.*}} ins(%arg0, %arg3 : memref<4x64xf32>, memref<64x32xf32>)
// CHECK:         linalg.generic {{.*}} ins(%arg4, %arg5 : memref<4x64xf16>, memref<32x64xf16>)
// CHECK-NOT:     scf.parallel
func.func @left_alone(%x: memref<4x64xf32>, %w: memref<32x64xf32>, %c: memref<4x32xf32>, %wt: memref<64x32xf32>, %xh: memref<4x64xf16>, %wh: memref<32x64xf16>, %ch: memref<4x32xf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<4x64xf32>, memref<32x64xf32>) outs(%c : memref<4x32xf32>) {
    ^bb0(%in: f32, %in_0: f32, %o: f32):
      %p = arith.mulf %in, %in_0 : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
  }
  linalg.generic {indexing_maps = [#a, affine_map<(d0, d1, d2) -> (d2, d1)>, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %wt : memref<4x64xf32>, memref<64x32xf32>) outs(%c : memref<4x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xh, %wh : memref<4x64xf16>, memref<32x64xf16>) outs(%ch : memref<4x32xf16>) {
  ^bb0(%in: f16, %in_0: f16, %o: f16):
    %p = arith.mulf %in, %in_0 : f16
    %s = arith.addf %o, %p : f16
    linalg.yield %s : f16
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Rows at run time (batch * sequence of a dynamic model): the loop runs over
// A's run-time rows; the epilogue's output, allocated with that size after
// the contraction, is allocated above the fill and takes the store.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME:    (%[[X:.*]]: memref<?x64xf32>, %{{.*}}: memref<32x64xf32>, %{{.*}}: memref<32xf32>)
// CHECK:         %[[ROWS:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[OUT:.*]] = memref.alloc(%[[ROWS]]) : memref<?x32xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[R:.*]] = memref.dim %[[X]], %c0
// CHECK:         scf.parallel (%[[M:.*]], %[[N:.*]]) = (%{{.*}}, %{{.*}}) to (%[[R]], %c32{{[_0-9]*}}) step
// CHECK:           scf.for
// CHECK:           memref.store %{{.*}}, %[[OUT]][%[[M]], %[[N]]] : memref<?x32xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[OUT]]
func.func @dynamic_rows(%x: memref<?x64xf32>, %w: memref<32x64xf32>, %bias: memref<32xf32>) -> memref<?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x64xf32>
  %acc = memref.alloc(%rows) : memref<?x32xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<?x64xf32>, memref<32x64xf32>) outs(%acc : memref<?x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %p = arith.mulf %in, %in_0 fastmath<contract> : f32
    %s = arith.addf %o, %p fastmath<contract> : f32
    linalg.yield %s : f32
  }
  %out = memref.alloc(%rows) : memref<?x32xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<?x32xf32>, memref<32xf32>) outs(%out : memref<?x32xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %y = arith.addf %v, %bv : f32
    linalg.yield %y : f32
  }
  memref.dealloc %acc : memref<?x32xf32>
  return %out : memref<?x32xf32>
}
