// RUN: attn-opt %s --pass-pipeline="builtin.module(attn-lower-to-linalg,func.func(attn-fuse-rows),canonicalize,cse)" | FileCheck %s

// Residual add + layer norm: one loop over rows holding the add, both
// reductions and the normalization; nothing left outside it.
// CHECK-LABEL: func.func @add_layer_norm
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 8)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x32xf32>, tensor<1x1x32xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SUM]] : tensor<1x1x32xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SUM]],
// CHECK: math.rsqrt
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @add_layer_norm(%a: tensor<2x8x32xf32>, %b: tensor<2x8x32xf32>, %g: tensor<32xf32>, %be: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %s = attn.add %a, %b : tensor<2x8x32xf32>
  %n = attn.layer_norm %s, %g, %be : tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %n : tensor<2x8x32xf32>
}

// A matmul feeding the norm is not pulled into the row loop.
// CHECK-LABEL: func.func @linear_then_norm
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<32x16xf32>)
// CHECK: scf.forall
func.func @linear_then_norm(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %g: tensor<32xf32>) -> tensor<8x32xf32> {
  %p = attn.linear %x, %w : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
  %n = attn.rms_norm %p, %g : tensor<8x32xf32>, tensor<32xf32>
  return %n : tensor<8x32xf32>
}
