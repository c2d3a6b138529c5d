// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --mlir-print-op-generic | attn-opt --split-input-file | FileCheck %s

// Round-trip tests of every attn op: parse, print, re-parse and re-print the
// custom assembly form (first RUN line) and the generic form (second RUN
// line). Default-valued attributes must be elided when printed.

//===----------------------------------------------------------------------===//
// attn.weight
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @weight(
// CHECK:         %[[W0:.*]] = attn.weight "encoder.layer.0.attention.self.query.weight" : tensor<768x768xf32>
// CHECK:         %[[W1:.*]] = attn.weight "decoder.final_layer_norm.bias" : tensor<3072xf16>
// CHECK:         %[[W2:.*]] = attn.weight "lm_head.weight" {tied} : tensor<32000x64xbf16>
// CHECK:         return %[[W0]], %[[W1]], %[[W2]]
func.func @weight() -> (tensor<768x768xf32>, tensor<3072xf16>, tensor<32000x64xbf16>) {
  %0 = attn.weight "encoder.layer.0.attention.self.query.weight" : tensor<768x768xf32>
  %1 = attn.weight "decoder.final_layer_norm.bias" : tensor<3072xf16>
  %2 = attn.weight "lm_head.weight" {tied} : tensor<32000x64xbf16>
  return %0, %1, %2 : tensor<768x768xf32>, tensor<3072xf16>, tensor<32000x64xbf16>
}

//===----------------------------------------------------------------------===//
// attn.sdpa
//===----------------------------------------------------------------------===//

// -----

// The default score function (scaled_dot) is not printed.
// CHECK-LABEL: func.func @sdpa_default(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         %[[R:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
// CHECK:         return %[[R]]
func.func @sdpa_default(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// An explicit `score = scaled_dot` is the default and is elided.
// CHECK-LABEL: func.func @sdpa_scaled_dot(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
// CHECK-NOT:     score
func.func @sdpa_scaled_dot(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v score = scaled_dot : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_dot(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] score = dot : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_dot(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v score = dot : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// Bilinear (Luong) scores take one [Dq, Dk] weight; Dq and Dk may differ.
// CHECK-LABEL: func.func @sdpa_general(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x32xf32>, %[[V:[^:]+]]: tensor<2x8x32x48xf32>, %[[W:[^:]+]]: tensor<64x32xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] score_weights(%[[W]] : tensor<64x32xf32>) score = general : tensor<2x8x16x64xf32>, tensor<2x8x32x32xf32>, tensor<2x8x32x48xf32> -> tensor<2x8x16x48xf32>
func.func @sdpa_general(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x32xf32>, %v: tensor<2x8x32x48xf32>, %w: tensor<64x32xf32>) -> tensor<2x8x16x48xf32> {
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<64x32xf32>) score = general : tensor<2x8x16x64xf32>, tensor<2x8x32x32xf32>, tensor<2x8x32x48xf32> -> tensor<2x8x16x48xf32>
  return %0 : tensor<2x8x16x48xf32>
}

// -----

// Additive (Bahdanau) scores take W : [A, Dq + Dk] and v : [A].
// CHECK-LABEL: func.func @sdpa_additive(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x32xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>, %[[W:[^:]+]]: tensor<128x96xf32>, %[[VA:[^:]+]]: tensor<128xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] score_weights(%[[W]], %[[VA]] : tensor<128x96xf32>, tensor<128xf32>) score = additive : tensor<2x8x16x64xf32>, tensor<2x8x32x32xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_additive(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x32xf32>, %v: tensor<2x8x32x64xf32>, %w: tensor<128x96xf32>, %va: tensor<128xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %va : tensor<128x96xf32>, tensor<128xf32>) score = additive : tensor<2x8x16x64xf32>, tensor<2x8x32x32xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_cosine(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] score = cosine scale = 1.000000e+01 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_cosine(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v score = cosine scale = 10.0 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_gaussian(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] score = gaussian : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_gaussian(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v score = gaussian : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// A full-size bias and one broadcast over batch and query rows.
// CHECK-LABEL: func.func @sdpa_bias(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>, %[[B:[^:]+]]: tensor<2x8x16x32xf32>, %[[BB:[^:]+]]: tensor<1x8x1x32xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%[[B]] : tensor<2x8x16x32xf32>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%[[BB]] : tensor<1x8x1x32xf32>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_bias(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>, %b: tensor<2x8x16x32xf32>, %bb: tensor<1x8x1x32xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) {
  %0 = attn.sdpa %q, %k, %v bias(%b : tensor<2x8x16x32xf32>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  %1 = attn.sdpa %q, %k, %v bias(%bb : tensor<1x8x1x32xf32>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0, %1 : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_kv_lengths_i32(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>, %[[L:[^:]+]]: tensor<2xi32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] kv_lengths(%[[L]] : tensor<2xi32>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_kv_lengths_i32(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>, %l: tensor<2xi32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xi32>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_kv_lengths_i64(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>, %[[L:[^:]+]]: tensor<2xi64>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] kv_lengths(%[[L]] : tensor<2xi64>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_kv_lengths_i64(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>, %l: tensor<2xi64>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xi64>) : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_causal(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] causal : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_causal(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_window(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] window = 4 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] causal window = 8 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_window(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) {
  %0 = attn.sdpa %q, %k, %v window = 4 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  %1 = attn.sdpa %q, %k, %v causal window = 8 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0, %1 : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_scale(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] scale = 1.250000e-01 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_scale(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v scale = 0.125 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// Every optional clause at once, printed in the canonical order whatever
// order the attributes were given in.
// CHECK-LABEL: func.func @sdpa_all_options(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x8x32x64xf32>, %[[V:[^:]+]]: tensor<2x8x32x64xf32>, %[[B:[^:]+]]: tensor<2x1x16x32xf32>, %[[L:[^:]+]]: tensor<2xi32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%[[B]] : tensor<2x1x16x32xf32>) kv_lengths(%[[L]] : tensor<2xi32>) score = dot causal window = 16 scale = 2.500000e-01 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_all_options(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x64xf32>, %b: tensor<2x1x16x32xf32>, %l: tensor<2xi32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v bias(%b : tensor<2x1x16x32xf32>) kv_lengths(%l : tensor<2xi32>) score = dot causal window = 16 scale = 0.25 : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// Grouped-query attention: 8 query heads share 2 key/value heads.
// CHECK-LABEL: func.func @sdpa_gqa(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x2x32x64xf32>, %[[V:[^:]+]]: tensor<2x2x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] causal : tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32> -> tensor<2x8x16x64xf32>
func.func @sdpa_gqa(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// Multi-query attention: a single key/value head.
// CHECK-LABEL: func.func @sdpa_mqa(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x1x64xf32>, %[[K:[^:]+]]: tensor<2x1x32x64xf32>, %[[V:[^:]+]]: tensor<2x1x32x64xf32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] : tensor<2x8x1x64xf32>, tensor<2x1x32x64xf32>, tensor<2x1x32x64xf32> -> tensor<2x8x1x64xf32>
func.func @sdpa_mqa(%q: tensor<2x8x1x64xf32>, %k: tensor<2x1x32x64xf32>, %v: tensor<2x1x32x64xf32>) -> tensor<2x8x1x64xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<2x8x1x64xf32>, tensor<2x1x32x64xf32>, tensor<2x1x32x64xf32> -> tensor<2x8x1x64xf32>
  return %0 : tensor<2x8x1x64xf32>
}

// -----

// CHECK-LABEL: func.func @sdpa_f16(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x4x8x32xf16>, %[[K:[^:]+]]: tensor<1x4x8x32xf16>, %[[V:[^:]+]]: tensor<1x4x8x32xf16>, %[[B:[^:]+]]: tensor<1x1x8x8xf16>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] bias(%[[B]] : tensor<1x1x8x8xf16>) causal : tensor<1x4x8x32xf16>, tensor<1x4x8x32xf16>, tensor<1x4x8x32xf16> -> tensor<1x4x8x32xf16>
func.func @sdpa_f16(%q: tensor<1x4x8x32xf16>, %k: tensor<1x4x8x32xf16>, %v: tensor<1x4x8x32xf16>, %b: tensor<1x1x8x8xf16>) -> tensor<1x4x8x32xf16> {
  %0 = attn.sdpa %q, %k, %v bias(%b : tensor<1x1x8x8xf16>) causal : tensor<1x4x8x32xf16>, tensor<1x4x8x32xf16>, tensor<1x4x8x32xf16> -> tensor<1x4x8x32xf16>
  return %0 : tensor<1x4x8x32xf16>
}

// -----

// CHECK-LABEL: func.func @sdpa_bf16(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x4x8x32xbf16>, %[[K:[^:]+]]: tensor<1x4x8x32xbf16>, %[[V:[^:]+]]: tensor<1x4x8x32xbf16>, %[[W:[^:]+]]: tensor<32x32xbf16>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] score_weights(%[[W]] : tensor<32x32xbf16>) score = general : tensor<1x4x8x32xbf16>, tensor<1x4x8x32xbf16>, tensor<1x4x8x32xbf16> -> tensor<1x4x8x32xbf16>
func.func @sdpa_bf16(%q: tensor<1x4x8x32xbf16>, %k: tensor<1x4x8x32xbf16>, %v: tensor<1x4x8x32xbf16>, %w: tensor<32x32xbf16>) -> tensor<1x4x8x32xbf16> {
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<32x32xbf16>) score = general : tensor<1x4x8x32xbf16>, tensor<1x4x8x32xbf16>, tensor<1x4x8x32xbf16> -> tensor<1x4x8x32xbf16>
  return %0 : tensor<1x4x8x32xbf16>
}

// -----

// Dynamic batch and sequence lengths are accepted.
// CHECK-LABEL: func.func @sdpa_dynamic(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<?x8x?x64xf32>, %[[K:[^:]+]]: tensor<?x8x?x64xf32>, %[[V:[^:]+]]: tensor<?x8x?x64xf32>, %[[L:[^:]+]]: tensor<?xi32>
// CHECK:         attn.sdpa %[[Q]], %[[K]], %[[V]] kv_lengths(%[[L]] : tensor<?xi32>) causal : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
func.func @sdpa_dynamic(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>, %l: tensor<?xi32>) -> tensor<?x8x?x64xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<?xi32>) causal : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

//===----------------------------------------------------------------------===//
// attn.mha
//===----------------------------------------------------------------------===//

// -----

// Self-attention, narrow heads: dh = 512 / 8 = 64.
// CHECK-LABEL: func.func @mha_self(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x512xf32>, %[[WQ:[^:]+]]: tensor<512x512xf32>, %[[WK:[^:]+]]: tensor<512x512xf32>, %[[WV:[^:]+]]: tensor<512x512xf32>, %[[WO:[^:]+]]: tensor<512x512xf32>
// CHECK:         %[[R:.*]] = attn.mha %[[X]] weights(%[[WQ]], %[[WK]], %[[WV]], %[[WO]]) heads = 8 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
// CHECK:         return %[[R]]
func.func @mha_self(%x: tensor<2x16x512xf32>, %wq: tensor<512x512xf32>, %wk: tensor<512x512xf32>, %wv: tensor<512x512xf32>, %wo: tensor<512x512xf32>) -> tensor<2x16x512xf32> {
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 8 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
  return %0 : tensor<2x16x512xf32>
}

// -----

// An additive score bias (a [B, 1, 1, Sk] padding mask).
// CHECK-LABEL: func.func @mha_score_bias(
// CHECK:         attn.mha %{{.*}} weights(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) score_bias(%{{.*}}) heads = 8 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<2x1x1x16xf32>) -> tensor<2x16x512xf32>
func.func @mha_score_bias(%x: tensor<2x16x512xf32>, %wq: tensor<512x512xf32>, %wk: tensor<512x512xf32>, %wv: tensor<512x512xf32>, %wo: tensor<512x512xf32>, %m: tensor<2x1x1x16xf32>) -> tensor<2x16x512xf32> {
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) score_bias(%m) heads = 8 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<2x1x1x16xf32>) -> tensor<2x16x512xf32>
  return %0 : tensor<2x16x512xf32>
}

// -----

// Cross-attention: keys and values come from a 256-wide encoder output.
// CHECK-LABEL: func.func @mha_cross(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x512xf32>, %[[KV:[^:]+]]: tensor<2x40x256xf32>, %[[WQ:[^:]+]]: tensor<512x512xf32>, %[[WK:[^:]+]]: tensor<512x256xf32>, %[[WV:[^:]+]]: tensor<512x256xf32>, %[[WO:[^:]+]]: tensor<512x512xf32>
// CHECK:         attn.mha %[[X]], %[[KV]] weights(%[[WQ]], %[[WK]], %[[WV]], %[[WO]]) heads = 8 : (tensor<2x16x512xf32>, tensor<2x40x256xf32>, tensor<512x512xf32>, tensor<512x256xf32>, tensor<512x256xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
func.func @mha_cross(%x: tensor<2x16x512xf32>, %kv: tensor<2x40x256xf32>, %wq: tensor<512x512xf32>, %wk: tensor<512x256xf32>, %wv: tensor<512x256xf32>, %wo: tensor<512x512xf32>) -> tensor<2x16x512xf32> {
  %0 = attn.mha %x, %kv weights(%wq, %wk, %wv, %wo) heads = 8 : (tensor<2x16x512xf32>, tensor<2x40x256xf32>, tensor<512x512xf32>, tensor<512x256xf32>, tensor<512x256xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
  return %0 : tensor<2x16x512xf32>
}

// -----

// Wide heads: every one of the 4 heads is d_model = 64 wide, so the
// projections are [4 * 64, 64] and [64, 4 * 64].
// CHECK-LABEL: func.func @mha_wide(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x10x64xf32>, %[[WQ:[^:]+]]: tensor<256x64xf32>, %[[WO:[^:]+]]: tensor<64x256xf32>
// CHECK:         attn.mha %[[X]] weights(%[[WQ]], %[[WQ]], %[[WQ]], %[[WO]]) heads = 4 wide : (tensor<1x10x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<1x10x64xf32>
func.func @mha_wide(%x: tensor<1x10x64xf32>, %wq: tensor<256x64xf32>, %wo: tensor<64x256xf32>) -> tensor<1x10x64xf32> {
  %0 = attn.mha %x weights(%wq, %wq, %wq, %wo) heads = 4 wide : (tensor<1x10x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<1x10x64xf32>
  return %0 : tensor<1x10x64xf32>
}

// -----

// Grouped-query attention: 8 query heads of width 64 and 2 kv heads.
// CHECK-LABEL: func.func @mha_kv_heads(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x512xf32>, %[[WQ:[^:]+]]: tensor<512x512xf32>, %[[WK:[^:]+]]: tensor<128x512xf32>, %[[WV:[^:]+]]: tensor<128x512xf32>, %[[WO:[^:]+]]: tensor<512x512xf32>, %[[WK1:[^:]+]]: tensor<64x512xf32>
// CHECK:         attn.mha %[[X]] weights(%[[WQ]], %[[WK]], %[[WV]], %[[WO]]) heads = 8 kv_heads = 2 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
// CHECK:         attn.mha %[[X]] weights(%[[WQ]], %[[WK1]], %[[WK1]], %[[WO]]) heads = 8 kv_heads = 1 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<64x512xf32>, tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
func.func @mha_kv_heads(%x: tensor<2x16x512xf32>, %wq: tensor<512x512xf32>, %wk: tensor<128x512xf32>, %wv: tensor<128x512xf32>, %wo: tensor<512x512xf32>, %wk1: tensor<64x512xf32>) -> (tensor<2x16x512xf32>, tensor<2x16x512xf32>) {
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 8 kv_heads = 2 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
  %1 = attn.mha %x weights(%wq, %wk1, %wk1, %wo) heads = 8 kv_heads = 1 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<64x512xf32>, tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<2x16x512xf32>
  return %0, %1 : tensor<2x16x512xf32>, tensor<2x16x512xf32>
}

// -----

// CHECK-LABEL: func.func @mha_biases(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x512xf32>, %[[W:[^:]+]]: tensor<512x512xf32>, %[[BQ:[^:]+]]: tensor<512xf32>, %[[BK:[^:]+]]: tensor<512xf32>, %[[BV:[^:]+]]: tensor<512xf32>, %[[BO:[^:]+]]: tensor<512xf32>
// CHECK:         attn.mha %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) biases(%[[BQ]], %[[BK]], %[[BV]], %[[BO]]) heads = 8 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<2x16x512xf32>
func.func @mha_biases(%x: tensor<2x16x512xf32>, %w: tensor<512x512xf32>, %bq: tensor<512xf32>, %bk: tensor<512xf32>, %bv: tensor<512xf32>, %bo: tensor<512xf32>) -> tensor<2x16x512xf32> {
  %0 = attn.mha %x weights(%w, %w, %w, %w) biases(%bq, %bk, %bv, %bo) heads = 8 : (tensor<2x16x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<2x16x512xf32>
  return %0 : tensor<2x16x512xf32>
}

// -----

// CHECK-LABEL: func.func @mha_kv_lengths(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x512xf32>, %[[KV:[^:]+]]: tensor<2x40x512xf32>, %[[W:[^:]+]]: tensor<512x512xf32>, %[[L:[^:]+]]: tensor<2xi64>
// CHECK:         attn.mha %[[X]], %[[KV]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) kv_lengths(%[[L]]) heads = 8 : (tensor<2x16x512xf32>, tensor<2x40x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<2xi64>) -> tensor<2x16x512xf32>
func.func @mha_kv_lengths(%x: tensor<2x16x512xf32>, %kv: tensor<2x40x512xf32>, %w: tensor<512x512xf32>, %l: tensor<2xi64>) -> tensor<2x16x512xf32> {
  %0 = attn.mha %x, %kv weights(%w, %w, %w, %w) kv_lengths(%l) heads = 8 : (tensor<2x16x512xf32>, tensor<2x40x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<2xi64>) -> tensor<2x16x512xf32>
  return %0 : tensor<2x16x512xf32>
}

// -----

// CHECK-LABEL: func.func @mha_masks_and_scale(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x512xbf16>, %[[W:[^:]+]]: tensor<512x512xbf16>, %[[WKV:[^:]+]]: tensor<256x512xbf16>
// CHECK:         %[[R0:.*]] = attn.mha %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads = 8 causal : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
// CHECK:         %[[R1:.*]] = attn.mha %[[R0]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads = 8 window = 4 : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
// CHECK:         %[[R2:.*]] = attn.mha %[[R1]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads = 8 scale = 5.000000e-01 : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
// CHECK:         %[[R3:.*]] = attn.mha %[[R2]] weights(%[[W]], %[[WKV]], %[[WKV]], %[[W]]) heads = 8 kv_heads = 4 causal window = 8 scale = 1.250000e-01 : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<256x512xbf16>, tensor<256x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
// CHECK:         return %[[R3]]
func.func @mha_masks_and_scale(%x: tensor<2x16x512xbf16>, %w: tensor<512x512xbf16>, %wkv: tensor<256x512xbf16>) -> tensor<2x16x512xbf16> {
  %0 = attn.mha %x weights(%w, %w, %w, %w) heads = 8 causal : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
  %1 = attn.mha %0 weights(%w, %w, %w, %w) heads = 8 window = 4 : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
  %2 = attn.mha %1 weights(%w, %w, %w, %w) heads = 8 scale = 0.5 : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
  %3 = attn.mha %2 weights(%w, %wkv, %wkv, %w) heads = 8 kv_heads = 4 causal window = 8 scale = 0.125 : (tensor<2x16x512xbf16>, tensor<512x512xbf16>, tensor<256x512xbf16>, tensor<256x512xbf16>, tensor<512x512xbf16>) -> tensor<2x16x512xbf16>
  return %3 : tensor<2x16x512xbf16>
}

//===----------------------------------------------------------------------===//
// attn.layer_norm, attn.rms_norm
//===----------------------------------------------------------------------===//

// -----

// The default epsilon (1e-5) is elided; other values are printed.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x768xf32>, %[[G:[^:]+]]: tensor<768xf32>, %[[B:[^:]+]]: tensor<768xf32>
// CHECK:         %[[R0:.*]] = attn.layer_norm %[[X]], %[[G]], %[[B]] : tensor<2x16x768xf32>, tensor<768xf32>, tensor<768xf32>
// CHECK:         %[[R1:.*]] = attn.layer_norm %[[R0]], %[[G]], %[[B]] : tensor<2x16x768xf32>, tensor<768xf32>, tensor<768xf32>
// CHECK:         %[[R2:.*]] = attn.layer_norm %[[R1]], %[[G]], %[[B]] epsilon = 1.000000e-03 : tensor<2x16x768xf32>, tensor<768xf32>, tensor<768xf32>
// CHECK:         return %[[R2]]
func.func @layer_norm(%x: tensor<2x16x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<2x16x768xf32> {
  %0 = attn.layer_norm %x, %g, %b : tensor<2x16x768xf32>, tensor<768xf32>, tensor<768xf32>
  %1 = attn.layer_norm %0, %g, %b epsilon = 1.0e-5 : tensor<2x16x768xf32>, tensor<768xf32>, tensor<768xf32>
  %2 = attn.layer_norm %1, %g, %b epsilon = 1.0e-3 : tensor<2x16x768xf32>, tensor<768xf32>, tensor<768xf32>
  return %2 : tensor<2x16x768xf32>
}

// -----

// The default epsilon (1e-6) is elided; other values are printed.
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x7x4096xf16>, %[[G:[^:]+]]: tensor<4096xf16>
// CHECK:         %[[R0:.*]] = attn.rms_norm %[[X]], %[[G]] : tensor<1x7x4096xf16>, tensor<4096xf16>
// CHECK:         %[[R1:.*]] = attn.rms_norm %[[R0]], %[[G]] : tensor<1x7x4096xf16>, tensor<4096xf16>
// CHECK:         %[[R2:.*]] = attn.rms_norm %[[R1]], %[[G]] epsilon = 1.000000e-05 : tensor<1x7x4096xf16>, tensor<4096xf16>
// CHECK:         return %[[R2]]
func.func @rms_norm(%x: tensor<1x7x4096xf16>, %g: tensor<4096xf16>) -> tensor<1x7x4096xf16> {
  %0 = attn.rms_norm %x, %g : tensor<1x7x4096xf16>, tensor<4096xf16>
  %1 = attn.rms_norm %0, %g epsilon = 1.0e-6 : tensor<1x7x4096xf16>, tensor<4096xf16>
  %2 = attn.rms_norm %1, %g epsilon = 1.0e-5 : tensor<1x7x4096xf16>, tensor<4096xf16>
  return %2 : tensor<1x7x4096xf16>
}

//===----------------------------------------------------------------------===//
// attn.linear, attn.ffn
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @linear_rank2_no_bias(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<16x64xf32>, %[[W:[^:]+]]: tensor<256x64xf32>
// CHECK:         %[[R:.*]] = attn.linear %[[X]], %[[W]] : (tensor<16x64xf32>, tensor<256x64xf32>) -> tensor<16x256xf32>
// CHECK:         return %[[R]]
func.func @linear_rank2_no_bias(%x: tensor<16x64xf32>, %w: tensor<256x64xf32>) -> tensor<16x256xf32> {
  %0 = attn.linear %x, %w : (tensor<16x64xf32>, tensor<256x64xf32>) -> tensor<16x256xf32>
  return %0 : tensor<16x256xf32>
}

// -----

// CHECK-LABEL: func.func @linear_rank3_bias(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x64xbf16>, %[[W:[^:]+]]: tensor<256x64xbf16>, %[[B:[^:]+]]: tensor<256xbf16>
// CHECK:         %[[R:.*]] = attn.linear %[[X]], %[[W]], %[[B]] : (tensor<2x16x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16>) -> tensor<2x16x256xbf16>
// CHECK:         return %[[R]]
func.func @linear_rank3_bias(%x: tensor<2x16x64xbf16>, %w: tensor<256x64xbf16>, %b: tensor<256xbf16>) -> tensor<2x16x256xbf16> {
  %0 = attn.linear %x, %w, %b : (tensor<2x16x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16>) -> tensor<2x16x256xbf16>
  return %0 : tensor<2x16x256xbf16>
}

// -----

// The default activation (relu) is elided, whether given or not.
// CHECK-LABEL: func.func @ffn_relu(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x64xf32>, %[[UP:[^:]+]]: tensor<256x64xf32>, %[[DOWN:[^:]+]]: tensor<64x256xf32>
// CHECK:         %[[R0:.*]] = attn.ffn %[[X]] up(%[[UP]]) down(%[[DOWN]]) : (tensor<2x16x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<2x16x64xf32>
// CHECK:         %[[R1:.*]] = attn.ffn %[[R0]] up(%[[UP]]) down(%[[DOWN]]) : (tensor<2x16x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<2x16x64xf32>
// CHECK:         return %[[R1]]
func.func @ffn_relu(%x: tensor<2x16x64xf32>, %up: tensor<256x64xf32>, %down: tensor<64x256xf32>) -> tensor<2x16x64xf32> {
  %0 = attn.ffn %x up(%up) down(%down) : (tensor<2x16x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<2x16x64xf32>
  %1 = attn.ffn %0 up(%up) down(%down) activation = relu : (tensor<2x16x64xf32>, tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<2x16x64xf32>
  return %1 : tensor<2x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @ffn_gelu_biases(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x64xf32>, %[[UP:[^:]+]]: tensor<256x64xf32>, %[[UB:[^:]+]]: tensor<256xf32>, %[[DOWN:[^:]+]]: tensor<64x256xf32>, %[[DB:[^:]+]]: tensor<64xf32>
// CHECK:         attn.ffn %[[X]] up(%[[UP]], %[[UB]]) down(%[[DOWN]], %[[DB]]) activation = gelu : (tensor<2x16x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
func.func @ffn_gelu_biases(%x: tensor<2x16x64xf32>, %up: tensor<256x64xf32>, %ub: tensor<256xf32>, %down: tensor<64x256xf32>, %db: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %0 = attn.ffn %x up(%up, %ub) down(%down, %db) activation = gelu : (tensor<2x16x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

// Only the up projection has a bias.
// CHECK-LABEL: func.func @ffn_gelu_tanh_up_bias(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x64xf16>, %[[UP:[^:]+]]: tensor<256x64xf16>, %[[UB:[^:]+]]: tensor<256xf16>, %[[DOWN:[^:]+]]: tensor<64x256xf16>
// CHECK:         attn.ffn %[[X]] up(%[[UP]], %[[UB]]) down(%[[DOWN]]) activation = gelu_tanh : (tensor<2x16x64xf16>, tensor<256x64xf16>, tensor<256xf16>, tensor<64x256xf16>) -> tensor<2x16x64xf16>
func.func @ffn_gelu_tanh_up_bias(%x: tensor<2x16x64xf16>, %up: tensor<256x64xf16>, %ub: tensor<256xf16>, %down: tensor<64x256xf16>) -> tensor<2x16x64xf16> {
  %0 = attn.ffn %x up(%up, %ub) down(%down) activation = gelu_tanh : (tensor<2x16x64xf16>, tensor<256x64xf16>, tensor<256xf16>, tensor<64x256xf16>) -> tensor<2x16x64xf16>
  return %0 : tensor<2x16x64xf16>
}

// -----

// Only the down projection has a bias.
// CHECK-LABEL: func.func @ffn_silu_down_bias(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<16x64xbf16>, %[[UP:[^:]+]]: tensor<256x64xbf16>, %[[DOWN:[^:]+]]: tensor<64x256xbf16>, %[[DB:[^:]+]]: tensor<64xbf16>
// CHECK:         attn.ffn %[[X]] up(%[[UP]]) down(%[[DOWN]], %[[DB]]) activation = silu : (tensor<16x64xbf16>, tensor<256x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> tensor<16x64xbf16>
func.func @ffn_silu_down_bias(%x: tensor<16x64xbf16>, %up: tensor<256x64xbf16>, %down: tensor<64x256xbf16>, %db: tensor<64xbf16>) -> tensor<16x64xbf16> {
  %0 = attn.ffn %x up(%up) down(%down, %db) activation = silu : (tensor<16x64xbf16>, tensor<256x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

//===----------------------------------------------------------------------===//
// Pointwise ops
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @pointwise(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x64xf32>, %[[Y:[^:]+]]: tensor<2x16x64xf32>
// CHECK:         %[[RELU:.*]] = attn.relu %[[X]] : tensor<2x16x64xf32>
// CHECK:         %[[SILU:.*]] = attn.silu %[[RELU]] : tensor<2x16x64xf32>
// CHECK:         %[[ADD:.*]] = attn.add %[[SILU]], %[[Y]] : tensor<2x16x64xf32>
// CHECK:         return %[[ADD]]
func.func @pointwise(%x: tensor<2x16x64xf32>, %y: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %0 = attn.relu %x : tensor<2x16x64xf32>
  %1 = attn.silu %0 : tensor<2x16x64xf32>
  %2 = attn.add %1, %y : tensor<2x16x64xf32>
  return %2 : tensor<2x16x64xf32>
}

// -----

// `approximate = none` is the default and is elided.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xbf16>
// CHECK:         %[[R0:.*]] = attn.gelu %[[X]] : tensor<4x8xbf16>
// CHECK:         %[[R1:.*]] = attn.gelu %[[R0]] : tensor<4x8xbf16>
// CHECK:         %[[R2:.*]] = attn.gelu %[[R1]] approximate = tanh : tensor<4x8xbf16>
// CHECK:         return %[[R2]]
func.func @gelu(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = attn.gelu %x : tensor<4x8xbf16>
  %1 = attn.gelu %0 approximate = none : tensor<4x8xbf16>
  %2 = attn.gelu %1 approximate = tanh : tensor<4x8xbf16>
  return %2 : tensor<4x8xbf16>
}

// -----

// `dim = -1` is the default and is elided.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8x16x16xf32>
// CHECK:         %[[R0:.*]] = attn.softmax %[[X]] : tensor<2x8x16x16xf32>
// CHECK:         %[[R1:.*]] = attn.softmax %[[R0]] : tensor<2x8x16x16xf32>
// CHECK:         %[[R2:.*]] = attn.softmax %[[R1]] dim = 1 : tensor<2x8x16x16xf32>
// CHECK:         %[[R3:.*]] = attn.softmax %[[R2]] dim = -4 : tensor<2x8x16x16xf32>
// CHECK:         return %[[R3]]
func.func @softmax(%x: tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32> {
  %0 = attn.softmax %x : tensor<2x8x16x16xf32>
  %1 = attn.softmax %0 dim = -1 : tensor<2x8x16x16xf32>
  %2 = attn.softmax %1 dim = 1 : tensor<2x8x16x16xf32>
  %3 = attn.softmax %2 dim = -4 : tensor<2x8x16x16xf32>
  return %3 : tensor<2x8x16x16xf32>
}

//===----------------------------------------------------------------------===//
// Embeddings and positional encodings
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:    %[[IDS32:[^:]+]]: tensor<2x16xi32>, %[[IDS64:[^:]+]]: tensor<16xi64>, %[[T:[^:]+]]: tensor<30522x768xf32>
// CHECK:         attn.embedding %[[IDS32]], %[[T]] : (tensor<2x16xi32>, tensor<30522x768xf32>) -> tensor<2x16x768xf32>
// CHECK:         attn.embedding %[[IDS64]], %[[T]] : (tensor<16xi64>, tensor<30522x768xf32>) -> tensor<16x768xf32>
func.func @embedding(%ids32: tensor<2x16xi32>, %ids64: tensor<16xi64>, %t: tensor<30522x768xf32>) -> (tensor<2x16x768xf32>, tensor<16x768xf32>) {
  %0 = attn.embedding %ids32, %t : (tensor<2x16xi32>, tensor<30522x768xf32>) -> tensor<2x16x768xf32>
  %1 = attn.embedding %ids64, %t : (tensor<16xi64>, tensor<30522x768xf32>) -> tensor<16x768xf32>
  return %0, %1 : tensor<2x16x768xf32>, tensor<16x768xf32>
}

// -----

// `offset = 0` is the default and is elided.
// CHECK-LABEL: func.func @sinusoidal_pos(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x512xf32>
// CHECK:         %[[R0:.*]] = attn.sinusoidal_pos %[[X]] : tensor<2x16x512xf32>
// CHECK:         %[[R1:.*]] = attn.sinusoidal_pos %[[R0]] : tensor<2x16x512xf32>
// CHECK:         %[[R2:.*]] = attn.sinusoidal_pos %[[R1]] offset = 7 : tensor<2x16x512xf32>
// CHECK:         return %[[R2]]
func.func @sinusoidal_pos(%x: tensor<2x16x512xf32>) -> tensor<2x16x512xf32> {
  %0 = attn.sinusoidal_pos %x : tensor<2x16x512xf32>
  %1 = attn.sinusoidal_pos %0 offset = 0 : tensor<2x16x512xf32>
  %2 = attn.sinusoidal_pos %1 offset = 7 : tensor<2x16x512xf32>
  return %2 : tensor<2x16x512xf32>
}

// -----

// Run-time start positions, and a run-time sequence length.
// CHECK-LABEL: func.func @sinusoidal_pos_positions(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x?x512xf32>, %[[P:[^:]+]]: tensor<2xi64>
// CHECK:         %[[R:.*]] = attn.sinusoidal_pos %[[X]] positions(%[[P]] : tensor<2xi64>) offset = 3 : tensor<2x?x512xf32>
// CHECK:         return %[[R]]
func.func @sinusoidal_pos_positions(%x: tensor<2x?x512xf32>, %p: tensor<2xi64>) -> tensor<2x?x512xf32> {
  %0 = attn.sinusoidal_pos %x positions(%p : tensor<2xi64>) offset = 3 : tensor<2x?x512xf32>
  return %0 : tensor<2x?x512xf32>
}

// -----

// CHECK-LABEL: func.func @learned_pos(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x768xf32>, %[[T:[^:]+]]: tensor<512x768xf32>
// CHECK:         %[[R0:.*]] = attn.learned_pos %[[X]], %[[T]] : tensor<2x16x768xf32>, tensor<512x768xf32>
// CHECK:         %[[R1:.*]] = attn.learned_pos %[[R0]], %[[T]] offset = 496 : tensor<2x16x768xf32>, tensor<512x768xf32>
// CHECK:         return %[[R1]]
func.func @learned_pos(%x: tensor<2x16x768xf32>, %t: tensor<512x768xf32>) -> tensor<2x16x768xf32> {
  %0 = attn.learned_pos %x, %t : tensor<2x16x768xf32>, tensor<512x768xf32>
  %1 = attn.learned_pos %0, %t offset = 496 : tensor<2x16x768xf32>, tensor<512x768xf32>
  return %1 : tensor<2x16x768xf32>
}

// -----

// Run-time start positions (a decode step): learned_pos, rotary and the KV
// cache write.
// CHECK-LABEL: func.func @decode_positions(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x1x64xf32>, %[[T:[^:]+]]: tensor<32x64xf32>, %[[P:[^:]+]]: tensor<2xi64>, %[[H:[^:]+]]: tensor<2x4x1x16xf32>, %[[C:[^:]+]]: tensor<2x4x32x16xf32>
// CHECK:         %[[R0:.*]] = attn.learned_pos %[[X]], %[[T]] positions(%[[P]] : tensor<2xi64>) offset = 2 : tensor<2x1x64xf32>, tensor<32x64xf32>
// CHECK:         %[[R1:.*]] = attn.rotary %[[H]] positions(%[[P]] : tensor<2xi64>) base = 5.000000e+05 : tensor<2x4x1x16xf32>
// CHECK:         %[[R2:.*]] = attn.cache_write %[[R1]] into %[[C]] at %[[P]] : tensor<2x4x1x16xf32>, tensor<2x4x32x16xf32>, tensor<2xi64>
// CHECK:         return %[[R0]], %[[R2]]
func.func @decode_positions(%x: tensor<2x1x64xf32>, %t: tensor<32x64xf32>, %p: tensor<2xi64>, %h: tensor<2x4x1x16xf32>, %c: tensor<2x4x32x16xf32>) -> (tensor<2x1x64xf32>, tensor<2x4x32x16xf32>) {
  %0 = attn.learned_pos %x, %t positions(%p : tensor<2xi64>) offset = 2 : tensor<2x1x64xf32>, tensor<32x64xf32>
  %1 = attn.rotary %h positions(%p : tensor<2xi64>) base = 500000.0 : tensor<2x4x1x16xf32>
  %2 = attn.cache_write %1 into %c at %p : tensor<2x4x1x16xf32>, tensor<2x4x32x16xf32>, tensor<2xi64>
  return %0, %2 : tensor<2x1x64xf32>, tensor<2x4x32x16xf32>
}

// -----

// Defaults (base = 10000, offset = 0, rotary_dim = head_dim) are elided.
// CHECK-LABEL: func.func @rotary(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x32x7x128xf32>
// CHECK:         %[[R0:.*]] = attn.rotary %[[X]] : tensor<1x32x7x128xf32>
// CHECK:         %[[R1:.*]] = attn.rotary %[[R0]] : tensor<1x32x7x128xf32>
// CHECK:         %[[R2:.*]] = attn.rotary %[[R1]] base = 5.000000e+05 : tensor<1x32x7x128xf32>
// CHECK:         %[[R3:.*]] = attn.rotary %[[R2]] offset = 42 : tensor<1x32x7x128xf32>
// CHECK:         %[[R4:.*]] = attn.rotary %[[R3]] rotary_dim = 32 : tensor<1x32x7x128xf32>
// CHECK:         %[[R5:.*]] = attn.rotary %[[R4]] base = 1.000000e+06 offset = 3 rotary_dim = 64 : tensor<1x32x7x128xf32>
// CHECK:         return %[[R5]]
func.func @rotary(%x: tensor<1x32x7x128xf32>) -> tensor<1x32x7x128xf32> {
  %0 = attn.rotary %x : tensor<1x32x7x128xf32>
  %1 = attn.rotary %0 base = 10000.0 offset = 0 : tensor<1x32x7x128xf32>
  %2 = attn.rotary %1 base = 500000.0 : tensor<1x32x7x128xf32>
  %3 = attn.rotary %2 offset = 42 : tensor<1x32x7x128xf32>
  %4 = attn.rotary %3 rotary_dim = 32 : tensor<1x32x7x128xf32>
  %5 = attn.rotary %4 base = 1000000.0 offset = 3 rotary_dim = 64 : tensor<1x32x7x128xf32>
  return %5 : tensor<1x32x7x128xf32>
}

// -----

// Scaled frequencies (linear, llama3, yarn): inv_freq, and the factor on
// cos and sin.
// CHECK-LABEL: func.func @rotary_scaled(
// CHECK:         attn.rotary %{{.*}} rotary_dim = 4 inv_freq = [2.500000e-01, 2.500000e-03] scale = 1.125000e+00 : tensor<1x2x3x8xf32>
func.func @rotary_scaled(%x: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = attn.rotary %x rotary_dim = 4 inv_freq = [0.25, 0.0025] scale = 1.125 : tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// Frequencies chosen by the run-time length: past length_threshold, the
// long table (longrope) or the base grown by ntk_factor (dynamic NTK).
// CHECK-LABEL: func.func @rotary_by_length(
// CHECK:         %[[R0:.*]] = attn.rotary %{{.*}} rotary_dim = 4 inv_freq = [1.000000e+00, 5.000000e-03] scale = 1.250000e+00 length_threshold = 12 long_inv_freq = [5.000000e-01, 1.250000e-03] : tensor<1x2x3x8xf32>
// CHECK:         attn.rotary %[[R0]] positions(%{{.*}} : tensor<1xi64>) length_threshold = 4096 ntk_factor = 2.000000e+00 : tensor<1x2x3x8xf32>
func.func @rotary_by_length(%x: tensor<1x2x3x8xf32>, %p: tensor<1xi64>) -> tensor<1x2x3x8xf32> {
  %0 = attn.rotary %x rotary_dim = 4 inv_freq = [1.0, 0.005] scale = 1.25 length_threshold = 12 long_inv_freq = [0.5, 0.00125] : tensor<1x2x3x8xf32>
  %1 = attn.rotary %0 positions(%p : tensor<1xi64>) length_threshold = 4096 ntk_factor = 2.0 : tensor<1x2x3x8xf32>
  return %1 : tensor<1x2x3x8xf32>
}

//===----------------------------------------------------------------------===//
// attn.layer, attn.yield
//===----------------------------------------------------------------------===//

// -----

// A layer with a LayerDrop score whose body holds its own weights.
// CHECK-LABEL: func.func @layer_with_score(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x64xf32>
// CHECK:         %[[R:.*]] = attn.layer index = 3 score = 9.000000e-01 (%[[X]]) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
// CHECK-NEXT:    ^bb0(%[[H:[^:]+]]: tensor<1x8x64xf32>):
// CHECK-NEXT:      %[[W:.*]] = attn.weight "layer.3.fc.weight" : tensor<64x64xf32>
// CHECK-NEXT:      %[[L:.*]] = attn.linear %[[H]], %[[W]] : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
// CHECK-NEXT:      %[[A:.*]] = attn.add %[[H]], %[[L]] : tensor<1x8x64xf32>
// CHECK-NEXT:      attn.yield %[[A]] : tensor<1x8x64xf32>
// CHECK-NEXT:    }
// CHECK:         return %[[R]]
func.func @layer_with_score(%x: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %0 = attn.layer index = 3 score = 0.9 (%x) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  ^bb0(%h: tensor<1x8x64xf32>):
    %w = attn.weight "layer.3.fc.weight" : tensor<64x64xf32>
    %l = attn.linear %h, %w : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
    %a = attn.add %h, %l : tensor<1x8x64xf32>
    attn.yield %a : tensor<1x8x64xf32>
  }
  return %0 : tensor<1x8x64xf32>
}

// -----

// Without a score; a layer that only forwards its input is valid IR.
// CHECK-LABEL: func.func @layer_without_score(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x64xf32>
// CHECK:         %[[R0:.*]] = attn.layer index = 0 (%[[X]]) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
// CHECK-NEXT:    ^bb0(%[[H0:[^:]+]]: tensor<1x8x64xf32>):
// CHECK-NEXT:      %[[G:.*]] = attn.gelu %[[H0]] approximate = tanh : tensor<1x8x64xf32>
// CHECK-NEXT:      attn.yield %[[G]] : tensor<1x8x64xf32>
// CHECK-NEXT:    }
// CHECK:         %[[R1:.*]] = attn.layer index = 1 (%[[R0]]) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
// CHECK-NEXT:    ^bb0(%[[H1:[^:]+]]: tensor<1x8x64xf32>):
// CHECK-NEXT:      attn.yield %[[H1]] : tensor<1x8x64xf32>
// CHECK-NEXT:    }
// CHECK:         return %[[R1]]
func.func @layer_without_score(%x: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  ^bb0(%h: tensor<1x8x64xf32>):
    %g = attn.gelu %h approximate = tanh : tensor<1x8x64xf32>
    attn.yield %g : tensor<1x8x64xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  ^bb0(%h: tensor<1x8x64xf32>):
    attn.yield %h : tensor<1x8x64xf32>
  }
  return %1 : tensor<1x8x64xf32>
}

// -----

// A decoder layer: residual stream, encoder output and padding lengths in;
// residual stream and the (forwarded) lengths out. Extra attributes survive.
// CHECK-LABEL: func.func @layer_multiple_operands_results(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x64xf32>, %[[ENC:[^:]+]]: tensor<2x40x64xf32>, %[[LEN:[^:]+]]: tensor<2xi32>
// CHECK:         %[[R:.*]]:2 = attn.layer index = 5 score = -2.500000e-01 (%[[X]], %[[ENC]], %[[LEN]]) {attn.original_index = 11 : i64} : (tensor<2x16x64xf32>, tensor<2x40x64xf32>, tensor<2xi32>) -> (tensor<2x16x64xf32>, tensor<2xi32>) {
// CHECK-NEXT:    ^bb0(%[[H:[^:]+]]: tensor<2x16x64xf32>, %[[E:[^:]+]]: tensor<2x40x64xf32>, %[[N:[^:]+]]: tensor<2xi32>):
// CHECK-NEXT:      %[[W:.*]] = attn.weight "decoder.layers.5.cross.w" : tensor<64x64xf32>
// CHECK-NEXT:      %[[C:.*]] = attn.mha %[[H]], %[[E]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) kv_lengths(%[[N]]) heads = 4 : (tensor<2x16x64xf32>, tensor<2x40x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<2xi32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:      %[[A:.*]] = attn.add %[[H]], %[[C]] : tensor<2x16x64xf32>
// CHECK-NEXT:      attn.yield %[[A]], %[[N]] : tensor<2x16x64xf32>, tensor<2xi32>
// CHECK-NEXT:    }
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @layer_multiple_operands_results(%x: tensor<2x16x64xf32>, %enc: tensor<2x40x64xf32>, %len: tensor<2xi32>) -> (tensor<2x16x64xf32>, tensor<2xi32>) {
  %0:2 = attn.layer index = 5 score = -0.25 (%x, %enc, %len) {attn.original_index = 11 : i64} : (tensor<2x16x64xf32>, tensor<2x40x64xf32>, tensor<2xi32>) -> (tensor<2x16x64xf32>, tensor<2xi32>) {
  ^bb0(%h: tensor<2x16x64xf32>, %e: tensor<2x40x64xf32>, %n: tensor<2xi32>):
    %w = attn.weight "decoder.layers.5.cross.w" : tensor<64x64xf32>
    %c = attn.mha %h, %e weights(%w, %w, %w, %w) kv_lengths(%n) heads = 4 : (tensor<2x16x64xf32>, tensor<2x40x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<2xi32>) -> tensor<2x16x64xf32>
    %a = attn.add %h, %c : tensor<2x16x64xf32>
    attn.yield %a, %n : tensor<2x16x64xf32>, tensor<2xi32>
  }
  return %0#0, %0#1 : tensor<2x16x64xf32>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @weight_gather
// CHECK: attn.weight "q" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>} : tensor<8x16xf32>
func.func @weight_gather() -> tensor<8x16xf32> {
  %0 = attn.weight "q" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// W^T of a [16, 8] tensor whose rows 4..7 and 12..15 are gathered from 16.
// CHECK-LABEL: func.func @weight_transpose
// CHECK: attn.weight "q" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>, transpose} : tensor<8x8xf32>
func.func @weight_transpose() -> tensor<8x8xf32> {
  %0 = attn.weight "q" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 4, 4, 12, 4>, transpose} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Panels of 4 columns of W^T [8, 16] (a [16, 8] tensor transposed); the
// gather's ranges refer to the [16, 8] tensor.
// CHECK-LABEL: func.func @weight_panels
// CHECK: attn.weight "q" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 16>, panels, transpose} : tensor<4x8x4xf32>
func.func @weight_panels() -> tensor<4x8x4xf32> {
  %0 = attn.weight "q" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 16>, panels, transpose} : tensor<4x8x4xf32>
  return %0 : tensor<4x8x4xf32>
}

// -----

// Pair panels of 4 columns of W^T [16, 16]: [16 / 4, 16 / 2, 2 * 4].
// CHECK-LABEL: func.func @weight_pair_panels
// CHECK: attn.weight "q" {convert, pairs, panels, transpose} : tensor<4x8x8xbf16>
func.func @weight_pair_panels() -> tensor<4x8x8xbf16> {
  %0 = attn.weight "q" {transpose, panels, pairs, convert} : tensor<4x8x8xbf16>
  return %0 : tensor<4x8x8xbf16>
}

// -----

// CHECK-LABEL: func.func @mha_explicit_head_dim
// CHECK: attn.mha %{{.*}} weights(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) heads = 2 head_dim = 3 :
func.func @mha_explicit_head_dim(%x: tensor<1x4x8xf32>, %w: tensor<6x8xf32>, %wo: tensor<8x6xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.mha %x weights(%w, %w, %w, %wo) heads = 2 head_dim = 3 : (tensor<1x4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<8x6xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}
