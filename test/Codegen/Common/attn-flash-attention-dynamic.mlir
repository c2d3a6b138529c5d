// RUN: attn-opt %s --split-input-file --attn-flash-attention --mlir-print-local-scope | FileCheck %s

// Dynamic batch and sequence lengths (a model compiled once for any
// length): the forall runs over the run-time batch and ceil(Sq / 64) query
// blocks, every block size is min(64, S - start) (a partial last block is
// always possible), and the causal alignment Sk - Sq is a run-time value.
// No Sq x Sk tensor is built.

// CHECK-LABEL: func.func @causal_dynamic(
func.func @causal_dynamic(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %0 : tensor<?x4x?x64xf32>
}

// -----

// Without a mask there is no alignment to compute.
// CHECK-LABEL: func.func @plain_dynamic_seq(
func.func @plain_dynamic_seq(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %0 : tensor<1x2x?x16xf32>
}
