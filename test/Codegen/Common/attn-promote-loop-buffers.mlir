// RUN: attn-opt %s --split-input-file --allow-unregistered-dialect \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-promote-loop-buffers{max-bytes=1024}))" \
// RUN:   | FileCheck %s

// Temporaries of one scf.forall iteration move to the stack inside an
// alloca scope of the iteration: static ones up to max-bytes, directly in
// the body. Larger, dynamic and nested-loop allocations, and those outside
// any forall, stay on the heap.

// CHECK-LABEL: func.func @per_iteration(
// CHECK:         %[[OUTER:.*]] = memref.alloc() : memref<64xf32>
// CHECK:         scf.forall (%[[I:.*]]) in (4) {
// CHECK-NEXT:      memref.alloca_scope {
// CHECK-NEXT:        %[[SMALL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK-NEXT:        %[[BIG:.*]] = memref.alloc() : memref<32x16xf32>
// CHECK-NEXT:        %[[DYN:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:             scf.for
// CHECK-NEXT:          memref.alloc() : memref<4xf32>
// CHECK:             linalg.fill {{.*}} outs(%[[SMALL]] : memref<16x16xf32>)
// CHECK-NEXT:        "test.use"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @per_iteration(%n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %outer = memref.alloc() : memref<64xf32>
  scf.forall (%i) in (4) {
    %small = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
    %big = memref.alloc() : memref<32x16xf32>
    %dyn = memref.alloc(%n) : memref<?xf32>
    scf.for %j = %c0 to %n step %c1 {
      %inner = memref.alloc() : memref<4xf32>
      "test.use"(%inner) : (memref<4xf32>) -> ()
    }
    linalg.fill ins(%cst : f32) outs(%small : memref<16x16xf32>)
    "test.use"(%big, %dyn, %outer) : (memref<32x16xf32>, memref<?xf32>, memref<64xf32>) -> ()
  }
  return
}

// -----

// Nothing to promote: the body is left as it is.
// CHECK-LABEL: func.func @nothing(
// CHECK:         scf.forall
// CHECK-NOT:       memref.alloca_scope
// CHECK:           memref.store
func.func @nothing(%out: memref<4xf32>) {
  %cst = arith.constant 0.0 : f32
  scf.forall (%i) in (4) {
    memref.store %cst, %out[%i] : memref<4xf32>
  }
  return
}
