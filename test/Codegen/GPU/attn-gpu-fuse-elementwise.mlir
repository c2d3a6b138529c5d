// RUN: attn-opt %s --split-input-file --attn-gpu-fuse-elementwise | FileCheck %s

// An f16 residual add as lowered (widen, widen, add, narrow) becomes one
// generic: one kernel instead of four on CUDA. Every rounding stays.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @residual_f16(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<4x8xf16>, %[[B:[^:]+]]: tensor<4x8xf16>)
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<4x8xf16>, tensor<4x8xf16>)
// CHECK:           arith.extf
// CHECK:           arith.extf
// CHECK:           arith.addf
// CHECK:           arith.truncf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
func.func @residual_f16(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %e32 = tensor.empty() : tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x8xf16>
  %aw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf16>) outs(%e32 : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %bw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x8xf16>) outs(%e32 : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%aw, %bw : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e32 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x8xf32>) outs(%e16 : tensor<4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  } -> tensor<4x8xf16>
  return %n : tensor<4x8xf16>
}

// -----

// Around a contraction nothing fuses: the bias widening and the epilogue
// that reads the product (folded into the matmul kernel, bias read narrow),
// the narrowing after it (stored narrow by the kernel) and the widening of
// the next matmul's operand (traced to the narrow buffer) stay apart.
#id = affine_map<(d0, d1) -> (d0, d1)>
#n = affine_map<(d0, d1) -> (d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @around_matmul(
// CHECK-COUNT-7: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @around_matmul(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<8xf16>, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e32 = tensor.empty() : tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x8xf16>
  %b32 = tensor.empty() : tensor<8xf32>
  %bw = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%bias : tensor<8xf16>) outs(%b32 : tensor<8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e32 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #n, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bw : tensor<4x8xf32>, tensor<8xf32>) outs(%e32 : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %0 = arith.addf %v, %bv : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<4x8xf32>) outs(%e16 : tensor<4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  } -> tensor<4x8xf16>
  %tw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x8xf16>) outs(%e32 : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e32 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p2 = linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%tw, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p2 : tensor<4x8xf32>) outs(%e32 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %zero : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Generics inside loops (the flash kernels' blocks) are left alone.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @in_loop(
// CHECK:         scf.forall
// CHECK-COUNT-2:   linalg.generic
// CHECK:         return
func.func @in_loop(%a: tensor<4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %r = scf.forall (%i) in (2) shared_outs(%s = %o) -> (tensor<2x4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.negf %in : f32
      linalg.yield %0 : f32
    } -> tensor<4x8xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.negf %in : f32
      linalg.yield %0 : f32
    } -> tensor<4x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %s[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<2x4x8xf32>
    }
  }
  return %r : tensor<2x4x8xf32>
}
