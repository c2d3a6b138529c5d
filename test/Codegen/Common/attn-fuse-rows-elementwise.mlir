// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(attn-lower-to-linalg,func.func(attn-fuse-rows{fuse-elementwise=true}),canonicalize,cse)" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(attn-lower-to-linalg,func.func(attn-fuse-rows),canonicalize,cse)" | FileCheck %s --check-prefix=PLAIN

// f16 residual add + layer norm with fuse-elementwise (the CUDA pipeline):
// the conversions and the add are recomputed inside the two reductions and
// the normalization, which writes f16 straight into the output row; no row
// temporary is left in the loop and no conversion loop after it.
// CHECK-LABEL: func.func @add_layer_norm_f16(
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[I:.*]], %[[J:.*]]) in (2, 8) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<2x8x32xf16>)
// CHECK-NOT:       tensor.empty() : tensor<1x1x32
// CHECK:           %[[MEAN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X:.*]], %[[R:.*]] : tensor<1x1x32xf16>, tensor<1x1x32xf16>)
// CHECK:             arith.extf
// CHECK:             arith.extf
// CHECK:             arith.addf
// CHECK:             arith.truncf
// CHECK:           %[[VAR:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[R]], %[[MEAN]] :
// CHECK:           %[[ROW:.*]] = tensor.extract_slice %[[OUT]][%[[I]], %[[J]], 0] [1, 1, 32]
// CHECK:           %[[NORM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[R]], %[[VAR]], {{.*}}) outs(%[[ROW]] : tensor<1x1x32xf16>)
// CHECK:             math.rsqrt
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %[[NORM]] into %[[OUT]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
// Without it (the CPU pipeline): the f32 result is converted by a loop of
// its own after the row loop.
// PLAIN-LABEL: func.func @add_layer_norm_f16(
// PLAIN:         scf.forall
// PLAIN:         scf.forall.in_parallel
// PLAIN:         linalg.generic
// PLAIN:           arith.truncf %{{.*}} : f32 to f16
// PLAIN:         return
func.func @add_layer_norm_f16(%x: tensor<2x8x32xf16>, %r: tensor<2x8x32xf16>, %g: tensor<32xf16>, %b: tensor<32xf16>) -> tensor<2x8x32xf16> {
  %s = attn.add %x, %r : tensor<2x8x32xf16>
  %y = attn.layer_norm %s, %g, %b : tensor<2x8x32xf16>, tensor<32xf16>, tensor<32xf16>
  return %y : tensor<2x8x32xf16>
}

// -----

// f32: the residual sum feeds three generics and is recomputed in each;
// the normalization keeps the output slice as its init (a fresh init would
// be bufferized as a row temporary and a copy).
// CHECK-LABEL: func.func @add_layer_norm_f32(
// CHECK:         scf.forall (%[[I:.*]], %[[J:.*]]) in (2, 8) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK-NOT:       tensor.empty() : tensor<1x1x32
// CHECK-COUNT-2:   iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x32xf32>, tensor<1x1x32xf32>
// CHECK:           %[[ROW:.*]] = tensor.extract_slice %[[OUT]][%[[I]], %[[J]], 0] [1, 1, 32]
// CHECK:           %[[NORM:.*]] = linalg.generic {{.*}} outs(%[[ROW]] : tensor<1x1x32xf32>)
// CHECK:             arith.addf
// CHECK:             math.rsqrt
// CHECK:           tensor.parallel_insert_slice %[[NORM]] into %[[OUT]]
// PLAIN-LABEL: func.func @add_layer_norm_f32(
// PLAIN:         scf.forall
// PLAIN:           %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// PLAIN:           linalg.generic {{.*}}ins(%[[SUM]] :
func.func @add_layer_norm_f32(%x: tensor<2x8x32xf32>, %r: tensor<2x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %s = attn.add %x, %r : tensor<2x8x32xf32>
  %y = attn.layer_norm %s, %g, %b : tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// Elementwise ops outside the row loops are left alone.
// CHECK-LABEL: func.func @outside_rows(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK:           arith.extf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK:           math.exp
func.func @outside_rows(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf16>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %c = arith.extf %in : f16 to f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.exp %in : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A run-time row count: the conversion's output is sized by a tensor.dim of
// the norm's f32 result, which is not a second reader. The conversion still
// moves into the row loop (one kernel on CUDA, as with static rows).
// CHECK-LABEL: func.func @add_layer_norm_f16_dynamic(
// CHECK-NOT:     linalg.generic
// CHECK:         %[[DIM:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<1x?x32xf16>
// CHECK:         scf.forall (%[[I:.*]]) in (%[[DIM]]) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x?x32xf16>)
// CHECK:           %[[ROW:.*]] = tensor.extract_slice %[[OUT]][0, %[[I]], 0] [1, 1, 32]
// CHECK:           %[[NORM:.*]] = linalg.generic {{.*}} outs(%[[ROW]] : tensor<1x1x32xf16>)
// CHECK:             math.rsqrt
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:           tensor.parallel_insert_slice %[[NORM]] into %[[OUT]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @add_layer_norm_f16_dynamic(%x: tensor<1x?x32xf16>, %r: tensor<1x?x32xf16>, %g: tensor<32xf16>, %b: tensor<32xf16>) -> tensor<1x?x32xf16> {
  %s = attn.add %x, %r : tensor<1x?x32xf16>
  %y = attn.layer_norm %s, %g, %b : tensor<1x?x32xf16>, tensor<32xf16>, tensor<32xf16>
  return %y : tensor<1x?x32xf16>
}
