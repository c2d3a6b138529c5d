// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg --mlir-print-local-scope | FileCheck %s --implicit-check-not=attn.sdpa --implicit-check-not=attn.cache_write --implicit-check-not=attn.sinusoidal_pos

// A KV-cache step of a run-time number of tokens T: the query rows of
// batch row b sit at query_positions[b] + i (not at i + Sk - Sq), the
// cache write inserts T rows at each row's position, and sinusoidal
// positions start at each row's position.

// The score generic reads query_positions per batch row (map d0) and
// compares the key index with i + query_positions[b]; no Sk - Sq
// alignment is computed.
// CHECK-LABEL: func.func @sdpa_query_positions(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x4x?x16xf32>, %[[K:[^:]+]]: tensor<2x2x32x16xf32>, %[[V:[^:]+]]: tensor<2x2x32x16xf32>, %[[L:[^:]+]]: tensor<2xi64>, %[[P:[^:]+]]: tensor<2xi64>
// CHECK-NOT:     arith.subi
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0)>, affine_map<(d0, d1, d2, d3, d4) -> (d0)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], {{.*}}} ins(%{{.*}}, %[[L]], %[[P]] : tensor<2x2x2x?x32xf32>, tensor<2xi64>, tensor<2xi64>)
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: f32, %[[LEN:[^:]+]]: i64, %[[START:[^:]+]]: i64, %{{[^:]+}}: f32):
// CHECK:           %[[I:.*]] = linalg.index 3 : index
// CHECK:           %[[J:.*]] = linalg.index 4 : index
// CHECK:           %[[S:.*]] = arith.index_cast %[[START]] : i64 to index
// CHECK:           %[[POS:.*]] = arith.addi %[[I]], %[[S]] : index
// CHECK:           %[[CAUSAL:.*]] = arith.cmpi sle, %[[J]], %[[POS]] : index
// CHECK:           %[[N:.*]] = arith.index_cast %[[LEN]] : i64 to index
// CHECK:           %[[INLEN:.*]] = arith.cmpi slt, %[[J]], %[[N]] : index
// CHECK:           %[[VIS:.*]] = arith.andi %[[CAUSAL]], %[[INLEN]] : i1
// CHECK:           arith.select %[[VIS]]
func.func @sdpa_query_positions(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x32x16xf32>, %v: tensor<2x2x32x16xf32>, %l: tensor<2xi64>, %p: tensor<2xi64>) -> tensor<2x4x?x16xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xi64>) query_positions(%p : tensor<2xi64>) causal : tensor<2x4x?x16xf32>, tensor<2x2x32x16xf32>, tensor<2x2x32x16xf32> -> tensor<2x4x?x16xf32>
  return %0 : tensor<2x4x?x16xf32>
}

// -----

// A sliding window measured from the positioned query row, both ways.
// CHECK-LABEL: func.func @sdpa_query_positions_window(
// CHECK-SAME:    %{{[^:]+}}: tensor<1x2x4x8xf32>, %{{[^:]+}}: tensor<1x2x16x8xf32>, %{{[^:]+}}: tensor<1x2x16x8xf32>, %[[P:[^:]+]]: tensor<1xi32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<1x2x1x4x16xf32>, tensor<1xi32>)
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: f32, %[[START:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK:           %[[I:.*]] = linalg.index 3 : index
// CHECK:           %[[J:.*]] = linalg.index 4 : index
// CHECK:           %[[S:.*]] = arith.index_cast %[[START]] : i32 to index
// CHECK:           %[[POS:.*]] = arith.addi %[[I]], %[[S]] : index
// CHECK:           %[[W:.*]] = arith.constant 3 : index
// CHECK:           %[[D:.*]] = arith.subi %[[POS]], %[[J]] : index
// CHECK:           %[[ND:.*]] = arith.subi %[[J]], %[[POS]] : index
// CHECK:           arith.cmpi slt, %[[D]], %[[W]] : index
// CHECK:           arith.cmpi slt, %[[ND]], %[[W]] : index
func.func @sdpa_query_positions_window(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %p: tensor<1xi32>) -> tensor<1x2x4x8xf32> {
  %0 = attn.sdpa %q, %k, %v query_positions(%p : tensor<1xi32>) window = 3 : tensor<1x2x4x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// T rows, T = tensor.dim of the new rows, inserted at each row's position
// clamped into [0, L - T] (L = 32, computed at run time).
// CHECK-LABEL: func.func @cache_write_dynamic_rows(
// CHECK-SAME:    %[[NEW:[^:]+]]: tensor<2x4x?x16xf32>, %[[CACHE:[^:]+]]: tensor<2x4x32x16xf32>, %[[POS:[^:]+]]: tensor<2xi64>
// CHECK:         %[[T:.*]] = tensor.dim %[[NEW]], %{{.*}} : tensor<2x4x?x16xf32>
// CHECK:         %[[LOOP:.*]] = scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[CACHE]])
// CHECK:           %[[P:.*]] = tensor.extract %[[POS]][%[[B]]] : tensor<2xi64>
// CHECK:           %[[I:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK:           %[[LO:.*]] = arith.maxsi %[[I]], %{{.*}} : index
// CHECK:           %[[C32:.*]] = arith.constant 32 : index
// CHECK:           %[[LAST:.*]] = arith.subi %[[C32]], %[[T]] : index
// CHECK:           %[[AT:.*]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK:           %[[ROWS:.*]] = tensor.extract_slice %[[NEW]][%[[B]], 0, 0, 0] [1, 4, %[[T]], 16] [1, 1, 1, 1] : tensor<2x4x?x16xf32> to tensor<1x4x?x16xf32>
// CHECK:           %[[UPD:.*]] = tensor.insert_slice %[[ROWS]] into %[[ACC]][%[[B]], 0, %[[AT]], 0] [1, 4, %[[T]], 16] [1, 1, 1, 1]
// CHECK:           scf.yield %[[UPD]]
// CHECK:         return %[[LOOP]]
func.func @cache_write_dynamic_rows(%n: tensor<2x4x?x16xf32>, %c: tensor<2x4x32x16xf32>, %p: tensor<2xi64>) -> tensor<2x4x32x16xf32> {
  %0 = attn.cache_write %n into %c at %p : tensor<2x4x?x16xf32>, tensor<2x4x32x16xf32>, tensor<2xi64>
  return %0 : tensor<2x4x32x16xf32>
}

// -----

// Sinusoidal positions from run-time starts: p = s + offset + positions[b]
// feeds the angle; no clamp (the encoding is computed, not a table).
// CHECK-LABEL: func.func @sinusoidal_positions(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x?x4xf32>, %[[P:[^:]+]]: tensor<2xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<2x?x4xf32>)
// CHECK:           %[[S:.*]] = linalg.index 1 : index
// CHECK:           %[[C:.*]] = linalg.index 2 : index
// CHECK:           %[[OFF:.*]] = arith.constant 5 : index
// CHECK:           %[[SO:.*]] = arith.addi %[[S]], %[[OFF]] : index
// CHECK:           %[[B:.*]] = linalg.index 0 : index
// CHECK:           %[[START:.*]] = tensor.extract %[[P]][%[[B]]] : tensor<2xi32>
// CHECK:           %[[STARTI:.*]] = arith.index_cast %[[START]] : i32 to index
// CHECK:           %[[POS:.*]] = arith.addi %[[SO]], %[[STARTI]] : index
// CHECK-NOT:       arith.minsi
// CHECK:           math.sin
func.func @sinusoidal_positions(%x: tensor<2x?x4xf32>, %p: tensor<2xi32>) -> tensor<2x?x4xf32> {
  %0 = attn.sinusoidal_pos %x positions(%p : tensor<2xi32>) offset = 5 : tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}
