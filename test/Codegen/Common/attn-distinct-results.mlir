// RUN: attn-opt %s --split-input-file --attn-distinct-results | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-distinct-results --buffer-results-to-out-params=modify-public-functions | FileCheck %s --check-prefix=OUT

// One buffer returned twice (two outputs that CSE merged): the repeat is a
// copy, so buffer-results-to-out-params gets two buffers.
// CHECK-LABEL: func.func @twice
// CHECK-SAME:    (%[[X:.*]]: memref<2x4xf32>)
// CHECK:         %[[COPY:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK:         memref.copy %[[X]], %[[COPY]]
// CHECK:         return %[[X]], %[[COPY]]
// OUT-LABEL: func.func @twice
// OUT-SAME:    (%{{.*}}: memref<2x4xf32>, %[[A:.*]]: memref<2x4xf32>, %[[B:.*]]: memref<2x4xf32>)
// OUT-DAG:     memref.copy %{{.*}}, %[[A]]
// OUT-DAG:     memref.copy %{{.*}}, %[[B]]
func.func @twice(%x: memref<2x4xf32>) -> (memref<2x4xf32>, memref<2x4xf32>) {
  return %x, %x : memref<2x4xf32>, memref<2x4xf32>
}

// -----

// Dynamic sizes come from the returned buffer; distinct results stay.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%[[X:.*]]: memref<?x4xf32>, %[[Y:.*]]: memref<?x4xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[D:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK:         %[[COPY:.*]] = memref.alloc(%[[D]]) : memref<?x4xf32>
// CHECK:         memref.copy %[[X]], %[[COPY]]
// CHECK:         return %[[X]], %[[Y]], %[[COPY]]
func.func @dynamic(%x: memref<?x4xf32>, %y: memref<?x4xf32>) -> (memref<?x4xf32>, memref<?x4xf32>, memref<?x4xf32>) {
  return %x, %y, %x : memref<?x4xf32>, memref<?x4xf32>, memref<?x4xf32>
}

// -----

// Every result distinct: nothing changes.
// CHECK-LABEL: func.func @distinct
// CHECK-NOT:     memref.alloc
// CHECK:         return
func.func @distinct(%x: memref<2xf32>, %y: memref<2xf32>) -> (memref<2xf32>, memref<2xf32>) {
  return %x, %y : memref<2xf32>, memref<2xf32>
}
