// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --mlir-print-op-generic | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --canonicalize | FileCheck %s --check-prefix=CANON

// attn.sdpa query_positions: round trip (custom and generic form), and the
// canonicalizations that must not treat a positioned query row as
// bottom-right aligned.

// A KV-cache step of a run-time number of tokens: kv_lengths and
// query_positions together.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x4x?x16xf32>, %[[K:[^:]+]]: tensor<2x2x32x16xf32>, %[[V:[^:]+]]: tensor<2x2x32x16xf32>, %[[L:[^:]+]]: tensor<2xi64>, %[[P:[^:]+]]: tensor<2xi64>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] kv_lengths(%[[L]] : tensor<2xi64>) query_positions(%[[P]] : tensor<2xi64>) causal : tensor<2x4x?x16xf32>, tensor<2x2x32x16xf32>, tensor<2x2x32x16xf32> -> tensor<2x4x?x16xf32>
// CANON-LABEL: func.func @step(
// CANON:         query_positions({{.*}}) causal
func.func @step(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x32x16xf32>, %v: tensor<2x2x32x16xf32>, %l: tensor<2xi64>, %p: tensor<2xi64>) -> tensor<2x4x?x16xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xi64>) query_positions(%p : tensor<2xi64>) causal : tensor<2x4x?x16xf32>, tensor<2x2x32x16xf32>, tensor<2x2x32x16xf32> -> tensor<2x4x?x16xf32>
  return %0 : tensor<2x4x?x16xf32>
}

// -----

// One query row at a run-time position still masks the keys after it:
// causal stays (without query_positions it is dropped).
// CHECK-LABEL: func.func @single_query_positioned(
// CANON-LABEL: func.func @single_query_positioned(
// CANON:         attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} query_positions(%{{.*}} : tensor<1xi32>) causal :
func.func @single_query_positioned(%q: tensor<1x8x1x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>, %p: tensor<1xi32>) -> tensor<1x8x1x64xf32> {
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<1xi32>) causal : tensor<1x8x1x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x1x64xf32>
  return %0 : tensor<1x8x1x64xf32>
}

// -----

// A window as wide as both sequences still masks: the positions are
// run-time values, so no distance bound is known.
// CHECK-LABEL: func.func @wide_window_positioned(
// CANON-LABEL: func.func @wide_window_positioned(
// CANON:         attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} query_positions(%{{.*}} : tensor<1xi32>) window = 200 :
func.func @wide_window_positioned(%q: tensor<1x8x4x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>, %p: tensor<1xi32>) -> tensor<1x8x4x64xf32> {
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<1xi32>) window = 200 : tensor<1x8x4x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x4x64xf32>
  return %0 : tensor<1x8x4x64xf32>
}

// -----

// `window = 0` (no window) goes; causal and the positions stay.
// CHECK-LABEL: func.func @window_zero_positioned(
// CHECK:         query_positions({{.*}}) causal window = 0
// CANON-LABEL: func.func @window_zero_positioned(
// CANON:         attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} query_positions(%{{.*}} : tensor<1xi32>) causal : tensor<1x8x4x64xf32>
func.func @window_zero_positioned(%q: tensor<1x8x4x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>, %p: tensor<1xi32>) -> tensor<1x8x4x64xf32> {
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<1xi32>) causal window = 0 : tensor<1x8x4x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x4x64xf32>
  return %0 : tensor<1x8x4x64xf32>
}
