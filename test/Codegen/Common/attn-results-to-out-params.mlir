// RUN: attn-opt %s --split-input-file --attn-results-to-out-params | FileCheck %s

// A private function with a dynamically shaped result (a layer body of a
// run-time sequence) keeps returning the buffer it allocated: its callers
// could not allocate it. The entry's results, static or not, become
// out-params that the runtime passes.
// CHECK-LABEL: func.func private @body(
// CHECK-SAME:    %[[H:[^:]+]]: memref<1x?x8xf32>) -> memref<1x?x8xf32> {
// CHECK:         %[[B:.*]] = memref.alloc(%{{.*}}) : memref<1x?x8xf32>
// CHECK:         return %[[B]] : memref<1x?x8xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]+]]: memref<1x?x8xf32>, %[[OUT:[^:]+]]: memref<1x?x8xf32>) {
// CHECK:         %[[R:.*]] = call @body(%[[X]]) : (memref<1x?x8xf32>) -> memref<1x?x8xf32>
// CHECK:         memref.copy %[[R]], %[[OUT]]
// CHECK:         return{{$}}
func.func private @body(%h: memref<1x?x8xf32>) -> memref<1x?x8xf32> {
  %c1 = arith.constant 1 : index
  %n = memref.dim %h, %c1 : memref<1x?x8xf32>
  %b = memref.alloc(%n) : memref<1x?x8xf32>
  memref.copy %h, %b : memref<1x?x8xf32> to memref<1x?x8xf32>
  return %b : memref<1x?x8xf32>
}
func.func @main(%x: memref<1x?x8xf32>) -> memref<1x?x8xf32> {
  %r = call @body(%x) : (memref<1x?x8xf32>) -> memref<1x?x8xf32>
  return %r : memref<1x?x8xf32>
}

// -----

// Static results of private functions become out-params allocated by the
// caller, as upstream's buffer-results-to-out-params with
// hoist-static-allocs does: the callee writes into the caller's buffer.
// CHECK-LABEL: func.func private @body(
// CHECK-SAME:    %[[H:[^:]+]]: memref<4xf32>, %[[R:[^:]+]]: memref<4xf32>) {
// CHECK-NOT:     memref.alloc
// CHECK:         memref.copy %[[H]], %[[R]]
// CHECK:         return{{$}}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]+]]: memref<4xf32>, %[[OUT:[^:]+]]: memref<4xf32>) {
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         call @body(%[[X]], %[[A]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK:         memref.copy %[[A]], %[[OUT]]
func.func private @body(%h: memref<4xf32>) -> memref<4xf32> {
  %b = memref.alloc() : memref<4xf32>
  memref.copy %h, %b : memref<4xf32> to memref<4xf32>
  return %b : memref<4xf32>
}
func.func @main(%x: memref<4xf32>) -> memref<4xf32> {
  %r = call @body(%x) : (memref<4xf32>) -> memref<4xf32>
  return %r : memref<4xf32>
}
