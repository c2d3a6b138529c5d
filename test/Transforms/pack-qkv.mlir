// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-pack-qkv))" | FileCheck %s

// Three projections of one input become one against the concatenated
// weights (bound by the runtime), then slices.
// CHECK-LABEL: func.func @qkv
// CHECK-DAG: %[[W:.*]] = attn.weight "wq+wk+wv" {concat_axis = 0 : i64, concat_names = ["wq", "wk", "wv"]} : tensor<48x16xf32>
// CHECK-DAG: %[[B:.*]] = attn.weight "bq+bk+bv" {concat_axis = 0 : i64, concat_names = ["bq", "bk", "bv"]} : tensor<48xf32>
// CHECK: %[[P:.*]] = attn.linear %arg0, %[[W]], %[[B]] : (tensor<2x16xf32>, tensor<48x16xf32>, tensor<48xf32>) -> tensor<2x48xf32>
// CHECK: %[[Q:.*]] = tensor.extract_slice %[[P]][0, 0] [2, 16] [1, 1]
// CHECK: %[[K:.*]] = tensor.extract_slice %[[P]][0, 16] [2, 16] [1, 1]
// CHECK: %[[V:.*]] = tensor.extract_slice %[[P]][0, 32] [2, 16] [1, 1]
// CHECK: return %[[Q]], %[[K]], %[[V]]
// CHECK-NOT: attn.weight "wq" :
func.func @qkv(%x: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) {
  %wq = attn.weight "wq" : tensor<16x16xf32>
  %bq = attn.weight "bq" : tensor<16xf32>
  %wk = attn.weight "wk" : tensor<16x16xf32>
  %bk = attn.weight "bk" : tensor<16xf32>
  %wv = attn.weight "wv" : tensor<16x16xf32>
  %bv = attn.weight "bv" : tensor<16xf32>
  %q = attn.linear %x, %wq, %bq : (tensor<2x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %k = attn.linear %x, %wk, %bk : (tensor<2x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %v = attn.linear %x, %wv, %bv : (tensor<2x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %q, %k, %v : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// Different inputs, or a bias on only one of them: nothing to pack.
// CHECK-LABEL: func.func @near_misses
// CHECK-COUNT-4: attn.linear
// CHECK-NOT: concat_names
func.func @near_misses(%x: tensor<2x16xf32>, %y: tensor<2x16xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %w1 = attn.weight "w1" : tensor<8x16xf32>
  %w2 = attn.weight "w2" : tensor<8x16xf32>
  %b2 = attn.weight "b2" : tensor<8xf32>
  %a = attn.linear %x, %w1 : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %b = attn.linear %x, %w2, %b2 : (tensor<2x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %c = attn.linear %y, %w1 : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %w3 = attn.weight "w3" {gather_axis = 0 : i64, gather_extent = 16 : i64, gather_ranges = array<i64: 0, 8>} : tensor<8x16xf32>
  %d = attn.linear %y, %w3 : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  return %a, %b, %c, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Projections whose weights are bound transposed (ONNX [K, N] initializers
// as attn.weight {transpose}) concatenate along the checkpoint tensors' axis
// 1 and stay transposed; a plain weight is not packed with them.
// CHECK-LABEL: func.func @transposed
// CHECK-DAG: %[[W:.*]] = attn.weight "wq+wk" {concat_axis = 1 : i64, concat_names = ["wq", "wk"], transpose} : tensor<24x16xf32>
// CHECK-DAG: %[[WV:.*]] = attn.weight "wv" : tensor<8x16xf32>
// CHECK: attn.linear %arg0, %[[W]] : (tensor<2x16xf32>, tensor<24x16xf32>) -> tensor<2x24xf32>
// CHECK: attn.linear %arg0, %[[WV]] : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
func.func @transposed(%x: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %wq = attn.weight "wq" {transpose} : tensor<16x16xf32>
  %wk = attn.weight "wk" {transpose} : tensor<8x16xf32>
  %wv = attn.weight "wv" : tensor<8x16xf32>
  %q = attn.linear %x, %wq : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
  %k = attn.linear %x, %wk : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %v = attn.linear %x, %wv : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  return %q, %k, %v : tensor<2x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Projections gathered from one fused tensor (GPT-2's c_attn, Conv1D layout
// [in, 3*out] bound transposed) pack back into one binding of that tensor:
// the ranges cover it, so no gather and no three-way concatenation is left.
// CHECK-LABEL: func.func @fused_gathers
// CHECK-DAG: %[[W:.*]] = attn.weight "c_attn.weight" {transpose} : tensor<48x16xf32>
// CHECK-DAG: %[[B:.*]] = attn.weight "c_attn.bias" : tensor<48xf32>
// CHECK: %[[P:.*]] = attn.linear %arg0, %[[W]], %[[B]] : (tensor<2x16xf32>, tensor<48x16xf32>, tensor<48xf32>) -> tensor<2x48xf32>
// CHECK-COUNT-3: tensor.extract_slice %[[P]]
// CHECK-NOT: gather_ranges
// CHECK-NOT: concat_names
func.func @fused_gathers(%x: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) {
  %wq = attn.weight "c_attn.weight" {gather_axis = 1 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 0, 16>, transpose} : tensor<16x16xf32>
  %wk = attn.weight "c_attn.weight" {gather_axis = 1 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 16, 16>, transpose} : tensor<16x16xf32>
  %wv = attn.weight "c_attn.weight" {gather_axis = 1 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 32, 16>, transpose} : tensor<16x16xf32>
  %bq = attn.weight "c_attn.bias" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 0, 16>} : tensor<16xf32>
  %bk = attn.weight "c_attn.bias" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 16, 16>} : tensor<16xf32>
  %bv = attn.weight "c_attn.bias" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 32, 16>} : tensor<16xf32>
  %q = attn.linear %x, %wq, %bq : (tensor<2x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %k = attn.linear %x, %wk, %bk : (tensor<2x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %v = attn.linear %x, %wv, %bv : (tensor<2x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %q, %k, %v : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// Gathers that do not cover the tensor (heads pruned from an in_proj_weight
// [3*16, 16]) stay one gather: adjacent ranges merge, the rest are listed in
// the projections' order. Gathers of different tensors, or along the input
// axis, are not packed together.
// CHECK-LABEL: func.func @partial_gathers
// CHECK-DAG: %[[W:.*]] = attn.weight "in_proj_weight" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 8, 16, 32, 8>} : tensor<24x16xf32>
// CHECK-DAG: attn.weight "other" {gather_axis = 0 : i64
// CHECK-DAG: attn.weight "cols" {gather_axis = 1 : i64
// CHECK: attn.linear %arg0, %[[W]] : (tensor<2x16xf32>, tensor<24x16xf32>) -> tensor<2x24xf32>
func.func @partial_gathers(%x: tensor<2x16xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %wq = attn.weight "in_proj_weight" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 8, 8>} : tensor<8x16xf32>
  %wk = attn.weight "in_proj_weight" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 16, 8>} : tensor<8x16xf32>
  %wv = attn.weight "in_proj_weight" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 32, 8>} : tensor<8x16xf32>
  %wo = attn.weight "other" {gather_axis = 0 : i64, gather_extent = 48 : i64, gather_ranges = array<i64: 0, 8>} : tensor<8x16xf32>
  %wc = attn.weight "cols" {gather_axis = 1 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 16>} : tensor<8x16xf32>
  %q = attn.linear %x, %wq : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %k = attn.linear %x, %wk : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %v = attn.linear %x, %wv : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %o = attn.linear %x, %wo : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %c = attn.linear %x, %wc : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  return %q, %k, %v, %o, %c : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A dynamic batch and sequence: the slices take their sizes from the packed
// result (tensor.dim), the feature offsets stay static.
// CHECK-LABEL: func.func @qkv_dynamic
// CHECK: %[[P:.*]] = attn.linear %arg0, %{{.*}} : (tensor<?x?x16xf32>, tensor<32x16xf32>) -> tensor<?x?x32xf32>
// CHECK: %[[B:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x?x32xf32>
// CHECK: %[[S:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x?x32xf32>
// CHECK: %[[Q:.*]] = tensor.extract_slice %[[P]][0, 0, 0] [%[[B]], %[[S]], 16] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?x16xf32>
// CHECK: %[[B2:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x?x32xf32>
// CHECK: %[[S2:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x?x32xf32>
// CHECK: %[[K:.*]] = tensor.extract_slice %[[P]][0, 0, 16] [%[[B2]], %[[S2]], 16] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?x16xf32>
// CHECK: return %[[Q]], %[[K]]
func.func @qkv_dynamic(%x: tensor<?x?x16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %wq = attn.weight "wq" : tensor<16x16xf32>
  %wk = attn.weight "wk" : tensor<16x16xf32>
  %q = attn.linear %x, %wq : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %k = attn.linear %x, %wk : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  return %q, %k : tensor<?x?x16xf32>, tensor<?x?x16xf32>
}
