// RUN: attn-opt %s --split-input-file --attn-cpu-check-token-ids | FileCheck %s

// Every id is compared (unsigned, so negative ids count as too large) with
// the table's row count; a bad one is reported with its batch and position.
// CHECK:       func.func private @attnrt_report_token_id(i64, i64, i64, i64)
// CHECK-LABEL: func.func @lookup
// CHECK-SAME:    (%[[IDS:.*]]: tensor<2x5xi32>
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 100 : i64
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             %[[ID:.*]] = tensor.extract %[[IDS]][%[[B]], %[[P]]] : tensor<2x5xi32>
// CHECK:             %[[ID64:.*]] = arith.extsi %[[ID]] : i32 to i64
// CHECK:             %[[BAD:.*]] = arith.cmpi uge, %[[ID64]], %[[ROWS]] : i64
// CHECK:             scf.if %[[BAD]] {
// CHECK:               %[[M:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:               %[[BI:.*]] = arith.addi %[[M]], %[[B]] : index
// CHECK:               %[[BATCH:.*]] = arith.index_cast %[[BI]] : index to i64
// CHECK:               %[[POS:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK:               func.call @attnrt_report_token_id(%[[BATCH]], %[[POS]], %[[ID64]], %[[ROWS]])
// CHECK:         attn.embedding %[[IDS]]
func.func @lookup(%ids: tensor<2x5xi32>, %table: tensor<100x8xf32>) -> tensor<2x5x8xf32> {
  %0 = attn.embedding %ids, %table : (tensor<2x5xi32>, tensor<100x8xf32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

// i64 ids need no extension; rank-3 ids report the row-major index of the
// leading dimensions as the batch. One declaration serves both lookups.
// CHECK:       func.func private @attnrt_report_token_id
// CHECK-LABEL: func.func @rank3_i64
// CHECK:         scf.for %[[I:.*]] = %[[C0:.*]] to
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %[[DJ:[^ ]*]] step
// CHECK:             scf.for %[[K:.*]] = %{{.*}} to
// CHECK:               %[[ID:.*]] = tensor.extract %{{.*}}[%[[I]], %[[J]], %[[K]]] : tensor<3x4x6xi64>
// CHECK-NOT:           arith.extsi
// CHECK:               arith.cmpi uge, %[[ID]], %{{.*}} : i64
// CHECK:               scf.if
// CHECK:                 %[[M:.*]] = arith.muli %[[C0]], %{{.*}} : index
// CHECK:                 %[[A:.*]] = arith.addi %[[M]], %[[I]] : index
// CHECK:                 %[[M2:.*]] = arith.muli %[[A]], %[[DJ]] : index
// CHECK:                 arith.addi %[[M2]], %[[J]] : index
// CHECK:         attn.embedding
// CHECK:         scf.for
// CHECK:         attn.embedding
// CHECK-NOT:     func.func private
func.func @rank3_i64(%ids: tensor<3x4x6xi64>, %table: tensor<50x8xf32>) -> (tensor<3x4x6x8xf32>, tensor<3x4x6x8xf32>) {
  %0 = attn.embedding %ids, %table : (tensor<3x4x6xi64>, tensor<50x8xf32>) -> tensor<3x4x6x8xf32>
  %1 = attn.embedding %ids, %table : (tensor<3x4x6xi64>, tensor<50x8xf32>) -> tensor<3x4x6x8xf32>
  return %0, %1 : tensor<3x4x6x8xf32>, tensor<3x4x6x8xf32>
}

// -----

// Ids of a run-time batch and sequence: the loops run to their run-time
// extents (tensor.dim).
// CHECK:       func.func private @attnrt_report_token_id
// CHECK-LABEL: func.func @lookup_dynamic
// CHECK-SAME:    (%[[IDS:[^:]*]]: tensor<?x?xi32>
// CHECK:         %[[DB:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi32>
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %[[DB]] step
// CHECK:           %[[DS:.*]] = tensor.dim %[[IDS]], %{{.*}} : tensor<?x?xi32>
// CHECK:           scf.for %[[P:.*]] = %{{.*}} to %[[DS]] step
// CHECK:             tensor.extract %[[IDS]][%[[B]], %[[P]]] : tensor<?x?xi32>
// CHECK:         attn.embedding %[[IDS]]
func.func @lookup_dynamic(%ids: tensor<?x?xi32>, %table: tensor<100x8xf32>) -> tensor<?x?x8xf32> {
  %0 = attn.embedding %ids, %table : (tensor<?x?xi32>, tensor<100x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// Without embeddings, nothing is added.
// CHECK-LABEL: func.func @no_lookup
// CHECK-NOT: scf.for
// CHECK-NOT: attnrt_report_token_id
func.func @no_lookup(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = attn.relu %x : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
