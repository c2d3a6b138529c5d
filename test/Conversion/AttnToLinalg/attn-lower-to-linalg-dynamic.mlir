// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg | FileCheck %s

// Batch and sequence dimensions may be dynamic: results are sized from the
// operands at run time (tensor.dim), feature dimensions stay static.

// CHECK-LABEL: func.func @relu_dynamic(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<?x?x8xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?x8xf32>
// CHECK-DAG:     %[[D1:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<?x?x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x8xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x?x8xf32>) outs(%[[E]] : tensor<?x?x8xf32>)
// CHECK:           arith.maximumf
// CHECK:         return %[[R]] : tensor<?x?x8xf32>
func.func @relu_dynamic(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.relu %x : tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// The rows are collapsed into one dynamic M for the contraction (which the
// matmul kernels take) and expanded back with the input's run-time
// sequence length.
// CHECK-LABEL: func.func @linear_dynamic_rows(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x?x8xf32>, %[[W:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<4xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
// CHECK:         %[[M:.*]] = tensor.dim %[[FLAT]], %{{.*}} : tensor<?x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[M]]) : tensor<?x4xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x4xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[FLAT]], %[[W]] : tensor<?x8xf32>, tensor<4x8xf32>) outs(%[[Z]] : tensor<?x4xf32>)
// CHECK:         %[[E2:.*]] = tensor.empty(%[[M]]) : tensor<?x4xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[B]] : tensor<?x4xf32>, tensor<4xf32>) outs(%[[E2]] : tensor<?x4xf32>)
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<1x?x8xf32>
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [1, %[[S]], 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
// CHECK:         return %[[R]]
func.func @linear_dynamic_rows(%x: tensor<1x?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<1x?x4xf32> {
  %0 = attn.linear %x, %w, %b : (tensor<1x?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<1x?x4xf32>
  return %0 : tensor<1x?x4xf32>
}

// -----

// Row statistics are [B, S] tensors of run-time size.
// CHECK-LABEL: func.func @layer_norm_dynamic(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<?x?x8xf32>
// CHECK:         %[[D0:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x8xf32>
// CHECK:         %[[D1:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x8xf32>
// CHECK:         tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x8xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<?x?x8xf32>) attrs = {attn.fuse_rows}
// CHECK:         return %[[R]] : tensor<?x?x8xf32>
func.func @layer_norm_dynamic(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.layer_norm %x, %g, %b epsilon = 1.0e-05 : tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// The result is the ids' run-time shape plus the table's row width.
// CHECK-LABEL: func.func @embedding_dynamic(
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<?x?xi32>, %[[T:[^:]+]]: tensor<100x8xf32>)
// CHECK-DAG:     %[[D0:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi32>
// CHECK-DAG:     %[[D1:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[IDS]] : tensor<?x?xi32>) outs(%[[E]] : tensor<?x?x8xf32>)
// CHECK:           tensor.extract %[[T]]
func.func @embedding_dynamic(%ids: tensor<?x?xi32>, %table: tensor<100x8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.embedding %ids, %table : (tensor<?x?xi32>, tensor<100x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// A run-time sequence reads table row offset + s per element, clamped to
// the table's last row (a slice of run-time size could read past its end).
// CHECK-LABEL: func.func @learned_pos_dynamic(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x?x8xf32>, %[[T:[^:]+]]: tensor<32x8xf32>)
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<1x?x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[S]]) : tensor<1x?x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<1x?x8xf32>) outs(%[[E]] : tensor<1x?x8xf32>)
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           %[[P:.*]] = arith.addi %[[I]], %c2{{(_[0-9]+)?}} : index
// CHECK:           %[[ROW:.*]] = arith.minsi %[[P]], %c31{{(_[0-9]+)?}} : index
// CHECK:           tensor.extract %[[T]][%[[ROW]], %{{.*}}] : tensor<32x8xf32>
// CHECK-NOT:     tensor.extract_slice
func.func @learned_pos_dynamic(%x: tensor<1x?x8xf32>, %table: tensor<32x8xf32>) -> tensor<1x?x8xf32> {
  %0 = attn.learned_pos %x, %table offset = 2 : tensor<1x?x8xf32>, tensor<32x8xf32>
  return %0 : tensor<1x?x8xf32>
}

// -----

// Score tensors are [1, 2, 1, Sq, Sk] of run-time size; the causal mask
// compares j with i + (Sk - Sq), computed once from the operands.
// CHECK-LABEL: func.func @sdpa_causal_dynamic(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x2x?x4xf32>, %[[K:[^:]+]]: tensor<1x2x?x4xf32>, %[[V:[^:]+]]: tensor<1x2x?x4xf32>)
// CHECK:         %[[SQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<1x2x?x4xf32>
// CHECK:         %[[SK:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<1x2x?x4xf32>
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 1, %[[SQ]], 4]
// CHECK:         tensor.empty(%[[SQ]], %[[SK]]) : tensor<1x2x1x?x?xf32>
// CHECK:         %[[RAW:.*]] = linalg.generic {{.*}} ins(%[[QG]], %[[K]] : tensor<1x2x1x?x4xf32>, tensor<1x2x?x4xf32>)
// CHECK:         %[[OFF:.*]] = arith.subi %[[SK]], %[[SQ]] : index
// CHECK:         linalg.generic {{.*}} ins(%[[RAW]] : tensor<1x2x1x?x?xf32>)
// CHECK:           %[[I:.*]] = linalg.index 3 : index
// CHECK:           %[[J:.*]] = linalg.index 4 : index
// CHECK:           %[[P:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK:           arith.cmpi sle, %[[J]], %[[P]] : index
// CHECK:         } -> tensor<1x2x1x?x4xf32>
// CHECK:         %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x1x?x4xf32> into tensor<1x2x?x4xf32>
// CHECK:         return %[[R]]
func.func @sdpa_causal_dynamic(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  return %0 : tensor<1x2x?x4xf32>
}

// -----

// Softmax over the dynamic dimension: transposed last and back, with
// run-time sizes both ways.
// CHECK-LABEL: func.func @softmax_dynamic(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<?x6xf32>)
// CHECK:         %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x6xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[D]]) : tensor<6x?xf32>
// CHECK:         linalg.transpose ins(%[[X]] : tensor<?x6xf32>) outs(%[[E]] : tensor<6x?xf32>) permutation = [1, 0]
// CHECK:         %[[R:.*]] = linalg.transpose ins(%{{.*}} : tensor<6x?xf32>) outs(%{{.*}} : tensor<?x6xf32>) permutation = [1, 0]
// CHECK:         return %[[R]] : tensor<?x6xf32>
func.func @softmax_dynamic(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %0 = attn.softmax %x dim = 0 : tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}
