// RUN: attn-opt %s --split-input-file --attn-split-shared-fills | FileCheck %s

// One zero accumulator shared by two contractions (what CSE makes of two
// attn.linear lowerings): each contraction gets its own fill of its own
// empty tensor, right before it.
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @two_consumers(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK:         %[[P0:.*]] = linalg.generic {{.*}} outs(%[[F0]] : tensor<4x8xf32>)
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT:    %[[P1:.*]] = linalg.generic {{.*}} outs(%[[F1]] : tensor<4x8xf32>)
// CHECK:         return %[[P0]], %[[P1]]
func.func @two_consumers(%a: tensor<4x16xf32>, %w0: tensor<8x16xf32>, %w1: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p0 = linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w0 : tensor<4x16xf32>, tensor<8x16xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %p1 = linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w1 : tensor<4x16xf32>, tensor<8x16xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  return %p0, %p1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// One consumer (even through two operands): nothing to split.
// CHECK-LABEL: func.func @one_consumer(
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @one_consumer(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.add ins(%f, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A consumer inside a loop keeps the original fill (a clone there would
// run per iteration); the two consumers of the function's block are split.
// CHECK-LABEL: func.func @nested_consumer(
// CHECK:         %[[F0:.*]] = linalg.fill
// CHECK:         scf.forall
// CHECK:           linalg.add ins(%[[F0]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:         linalg.add ins(%[[F0]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:         %[[F1:.*]] = linalg.fill
// CHECK-NEXT:    linalg.add ins(%[[F1]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @nested_consumer(%a: tensor<4x8xf32>, %out: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %cst = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<2x4x8xf32>) {
    %t = tensor.empty() : tensor<4x8xf32>
    %s = linalg.add ins(%f, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%t : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
    }
  }
  %r0 = linalg.add ins(%f, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = linalg.add ins(%f, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %l, %r0, %r1 : tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
