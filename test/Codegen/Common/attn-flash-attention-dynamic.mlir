// RUN: attn-opt %s --split-input-file --attn-flash-attention --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not='x1x?x?xf32' --implicit-check-not=attn.sdpa

// Dynamic batch and sequence lengths (a model compiled once for any
// length): the forall runs over the run-time batch and ceil(Sq / 64) query
// blocks, every block size is min(64, S - start) (a partial last block is
// always possible), and the causal alignment Sk - Sq is a run-time value.
// No Sq x Sk tensor is built.

// CHECK-LABEL: func.func @causal_dynamic(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<?x4x?x64xf32>, %[[K:[^:]+]]: tensor<?x4x?x64xf32>, %[[V:[^:]+]]: tensor<?x4x?x64xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[B:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x4x?x64xf32>
// CHECK:         %[[SQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x4x?x64xf32>
// CHECK:         %[[SK:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<?x4x?x64xf32>
// CHECK:         %[[OFF:.*]] = arith.subi %[[SK]], %[[SQ]] : index
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[B]], %[[SQ]]) : tensor<?x4x?x64xf32>
// CHECK:         %[[NQ:.*]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%[[SQ]]]
// CHECK:         scf.forall (%[[BI:.*]], %[[N:.*]], %[[QB:.*]]) in (%[[B]], 4, %[[NQ]]) shared_outs(%{{.*}} = %[[INIT]])
// CHECK:           %[[Q0:.*]] = affine.apply affine_map<()[s0] -> (s0 * 64)>()[%[[QB]]]
// CHECK:           %[[QS:.*]] = affine.min affine_map<()[s0, s1] -> (64, s0 - s1 * 64)>()[%[[SQ]], %[[QB]]]
// CHECK:           tensor.extract_slice %[[Q]][%[[BI]], %[[N]], %[[Q0]], 0] [1, 1, %[[QS]], 64] [1, 1, 1, 1] : tensor<?x4x?x64xf32> to tensor<1x?x64xf32>
// Causal: keys up to the block's last row's position q0 + qs - 1 + (Sk - Sq).
// CHECK:           %[[HI:.*]] = affine.min affine_map<()[s0, s1, s2, s3] -> (s0, s1 + s2 + s3 * 64)>()[%[[SK]], %[[QS]], %[[OFF]], %[[QB]]]
// CHECK-COUNT-6:   bufferization.alloc_tensor() : tensor<1x64
// CHECK:           scf.for %[[K0:.*]] = %[[C0]] to %[[HI]] step %[[C64]]
// CHECK:             %[[KS:.*]] = affine.min affine_map<()[s0, s1] -> (64, s1 - s0)>()[%[[K0]], %[[SK]]]
// CHECK:             tensor.extract_slice %[[K]][%[[BI]], %[[N]], %[[K0]], 0] [1, 1, %[[KS]], 64] [1, 1, 1, 1] : tensor<?x4x?x64xf32> to tensor<?x64xf32>
// The mask: j = k0 + jj <= q0 + ii + (Sk - Sq).
// CHECK:             linalg.generic
// CHECK:             linalg.generic
// CHECK:               %[[JJ:.*]] = linalg.index 2 : index
// CHECK:               %[[J:.*]] = arith.addi %[[JJ]], %[[K0]] : index
// CHECK:               %[[II:.*]] = linalg.index 1 : index
// CHECK:               %[[I:.*]] = arith.addi %[[II]], %[[Q0]] : index
// CHECK:               %[[P:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK:               arith.cmpi sle, %[[J]], %[[P]] : index
func.func @causal_dynamic(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %0 : tensor<?x4x?x64xf32>
}

// -----

// Without a mask there is no alignment to compute.
// CHECK-LABEL: func.func @plain_dynamic_seq(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x2x?x16xf32>, %[[K:[^:]+]]: tensor<1x2x?x16xf32>
// CHECK-NOT:     arith.subi
// CHECK:         %[[SQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<1x2x?x16xf32>
// CHECK:         %[[SK:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<1x2x?x16xf32>
// CHECK:         %[[NQ:.*]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%[[SQ]]]
// CHECK:         scf.forall ({{.*}}) in (1, 2, %[[NQ]])
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[SK]] step
// CHECK-NOT:       arith.subi
func.func @plain_dynamic_seq(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %0 : tensor<1x2x?x16xf32>
}
