// RUN: attn-opt %s --split-input-file --attn-drop-state-results --verify-diagnostics -o /dev/null

// A state that bufferization had to copy is an error, not a silent copy.
module attributes {attn.entry = @main} {
  // expected-error @+1 {{'func.func' op model state (argument 0) is not updated in place: bufferization copies it (is the old value read after the update?)}}
  func.func @main(%c: memref<8xf32>) -> (memref<8xf32> {attn.state_arg = 0 : i64}) {
    %copy = memref.alloc() : memref<8xf32>
    memref.copy %c, %copy : memref<8xf32> to memref<8xf32>
    return %copy : memref<8xf32>
  }
}

