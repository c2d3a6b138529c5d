// RUN: attn-opt %s --split-input-file --attn-flash-attention --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=attn.sdpa

// Flash attention with query_positions: each forall iteration reads its
// batch row's query position, the key loop stops at the last key any row
// of the block may see (min(Sk, q0 + qs + start, kv_length)), and the mask
// places row i at q0 + i + start. No Sk - Sq alignment is computed.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x4x?x16xf32>, %[[K:[^:]+]]: tensor<2x2x32x16xf32>, %[[V:[^:]+]]: tensor<2x2x32x16xf32>, %[[L:[^:]+]]: tensor<2xi64>, %[[P:[^:]+]]: tensor<2xi64>
// CHECK-NOT:     arith.subi
// CHECK:         scf.forall (%[[BI:.*]], %{{.*}}, %[[QB:.*]]) in (2, 2, %{{.*}})
// CHECK:           %[[Q0:.*]] = affine.apply affine_map<()[s0] -> (s0 * 64)>()[%[[QB]]]
// CHECK:           %[[QS:.*]] = affine.min
// CHECK:           %[[LEN64:.*]] = tensor.extract %[[L]][%[[BI]]] : tensor<2xi64>
// CHECK:           %[[LEN:.*]] = arith.index_cast %[[LEN64]] : i64 to index
// CHECK:           %[[S64:.*]] = tensor.extract %[[P]][%[[BI]]] : tensor<2xi64>
// CHECK:           %[[S:.*]] = arith.index_cast %[[S64]] : i64 to index
// CHECK:           %[[HI:.*]] = affine.min affine_map<()[s0, s1, s2, s3] -> (32, s0 + s1 + s2 * 64, s3)>()[%[[QS]], %[[S]], %[[QB]], %[[LEN]]]
// CHECK:           scf.for %[[K0:.*]] = %{{.*}} to %[[HI]] step
// CHECK:             linalg.generic
// CHECK:             linalg.generic
// CHECK:               %[[JJ:.*]] = linalg.index 2 : index
// CHECK:               %[[J:.*]] = arith.addi %[[JJ]], %[[K0]] : index
// CHECK:               %[[II:.*]] = linalg.index 1 : index
// CHECK:               %[[I:.*]] = arith.addi %[[II]], %[[Q0]] : index
// CHECK:               %[[POS:.*]] = arith.addi %[[I]], %[[S]] : index
// CHECK:               arith.cmpi sle, %[[J]], %[[POS]] : index
// CHECK:               arith.cmpi slt, %[[J]], %[[LEN]] : index
func.func @step(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x32x16xf32>, %v: tensor<2x2x32x16xf32>, %l: tensor<2xi64>, %p: tensor<2xi64>) -> tensor<2x4x?x16xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xi64>) query_positions(%p : tensor<2xi64>) causal : tensor<2x4x?x16xf32>, tensor<2x2x32x16xf32>, tensor<2x2x32x16xf32> -> tensor<2x4x?x16xf32>
  return %0 : tensor<2x4x?x16xf32>
}

// -----

// A window: the key loop starts at the block boundary below the first
// positioned row's window, max(0, floor((q0 + start - W + 1) / bk) * bk).
// CHECK-LABEL: func.func @window(
// CHECK-SAME:    %{{[^:]+}}: tensor<1x2x4x8xf32>, %{{[^:]+}}: tensor<1x2x16x8xf32>, %{{[^:]+}}: tensor<1x2x16x8xf32>, %[[P:[^:]+]]: tensor<1xi32>
// CHECK:           %[[S32:.*]] = tensor.extract %[[P]][%{{.*}}] : tensor<1xi32>
// CHECK:           %[[S:.*]] = arith.index_cast %[[S32]] : i32 to index
// CHECK:           %[[LO:.*]] = affine.max affine_map<()[s0, s1] -> (0, ((s0 + s1 * 4 - 2) floordiv 16) * 16)>()[%[[S]], %{{.*}}]
// CHECK:           %[[HI:.*]] = affine.min affine_map<()[s0, s1] -> (16, s0 + s1 * 4 + 6)>()[%[[S]], %{{.*}}]
// CHECK:           scf.for %{{.*}} = %[[LO]] to %[[HI]] step
func.func @window(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %p: tensor<1xi32>) -> tensor<1x2x4x8xf32> {
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<1xi32>) window = 3 : tensor<1x2x4x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}
