// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(attn-lower-to-linalg,func.func(attn-fuse-rows{parallel-min-rows=32}),canonicalize,cse)" | FileCheck %s

// With parallel-min-rows, 32 static rows or more share an scf.forall; 16
// rows, or a row count known only at run time, stay in a sequential loop.
// CHECK-LABEL: func.func @rows_32
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (4, 8)
// CHECK-NOT:     scf.for {{.*}} iter_args
// CHECK:         return
func.func @rows_32(%a: tensor<4x8x32xf32>, %b: tensor<4x8x32xf32>, %g: tensor<32xf32>, %be: tensor<32xf32>) -> tensor<4x8x32xf32> {
  %s = attn.add %a, %b : tensor<4x8x32xf32>
  %n = attn.layer_norm %s, %g, %be : tensor<4x8x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %n : tensor<4x8x32xf32>
}

// CHECK-LABEL: func.func @rows_16
// CHECK-NOT:     scf.forall
// CHECK:         scf.for %{{.*}} = %c0 to %c2
// CHECK:           scf.for %{{.*}} = %c0 to %c8
// CHECK:             math.rsqrt
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @rows_16(%a: tensor<2x8x32xf32>, %b: tensor<2x8x32xf32>, %g: tensor<32xf32>, %be: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %s = attn.add %a, %b : tensor<2x8x32xf32>
  %n = attn.layer_norm %s, %g, %be : tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %n : tensor<2x8x32xf32>
}

// CHECK-LABEL: func.func @rows_dynamic
// CHECK-NOT:     scf.forall
// CHECK:         scf.for
// CHECK:           math.rsqrt
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @rows_dynamic(%a: tensor<1x?x32xf32>, %g: tensor<32xf32>) -> tensor<1x?x32xf32> {
  %n = attn.rms_norm %a, %g : tensor<1x?x32xf32>, tensor<32xf32>
  return %n : tensor<1x?x32xf32>
}
