// RUN: attn-opt %s --split-input-file --attn-drop-state-results | FileCheck %s

// After bufferization, a state result (attn.state_arg = i) that is argument
// i's own buffer is dropped: the entry updates the state in place. Other
// results stay.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]+]]: memref<4xf32>, %[[C:[^:]+]]: memref<8xf32>) -> memref<4xf32>
// CHECK:         memref.store
// CHECK:         return %[[X]] : memref<4xf32>
module attributes {attn.entry = @main} {
  func.func @main(%x: memref<4xf32>, %c: memref<8xf32>) -> (memref<8xf32> {attn.state_arg = 1 : i64}, memref<4xf32>) {
    %i = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    memref.store %v, %c[%i] : memref<8xf32>
    return %c, %x : memref<8xf32>, memref<4xf32>
  }
}

// -----

// The state passes through a loop that carries the buffer and an outlined
// layer body that returns it: both fold to the argument.
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME:    %{{[^:]+}}: memref<8xf32>) {
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[C:[^:]+]]: memref<8xf32>) {
// CHECK:         call @layer(%[[C]]) : (memref<8xf32>) -> ()
// CHECK:         return{{$}}
module attributes {attn.entry = @main} {
  func.func private @layer(%c: memref<8xf32>) -> memref<8xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %v = arith.constant 1.0 : f32
    %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %c) -> (memref<8xf32>) {
      memref.store %v, %acc[%i] : memref<8xf32>
      scf.yield %acc : memref<8xf32>
    }
    return %r : memref<8xf32>
  }
  func.func @main(%c: memref<8xf32>) -> (memref<8xf32> {attn.state_arg = 0 : i64}) {
    %r = call @layer(%c) : (memref<8xf32>) -> memref<8xf32>
    return %r : memref<8xf32>
  }
}

// -----

// Without state results nothing changes.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]+]]: memref<4xf32>) -> memref<4xf32>
// CHECK:         return %[[X]]
module attributes {attn.entry = @main} {
  func.func @main(%x: memref<4xf32>) -> memref<4xf32> {
    return %x : memref<4xf32>
  }
}
