// RUN: attn-opt %s --split-input-file --attn-emit-model-entry --verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-emit-model-entry="target=rocm" 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET: error: attn-emit-model-entry: unknown target 'rocm' (expected cpu or cuda)

// expected-error @+1 {{attn-emit-model-entry: no model manifest; run attn-hoist-weights first}}
module {
  llvm.func @main(%a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// The entry must already be lowered to the LLVM dialect.
// expected-error @+1 {{attn-emit-model-entry: the entry @main is not an llvm.func yet}}
module attributes {attn.entry = @main, attn.manifest = "output output0 f32 2\0A"} {
  func.func @main(%a: memref<2xf32>) {
    return
  }
}

// -----

// Two records, one pointer: neither bare pointers nor descriptors.
module attributes {attn.entry = @main, attn.manifest = "input input0 f32 2\0Aoutput output0 f32 2\0A"} {
  // expected-error @+1 {{'llvm.func' op expected a void function taking one memref per manifest record (2), got '!llvm.func<void (ptr)>'}}
  llvm.func @main(%a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Results must have become out-parameters.
module attributes {attn.entry = @main, attn.manifest = "output output0 f32 2\0A"} {
  // expected-error @+1 {{'llvm.func' op expected a void function taking one memref per manifest record (1), got '!llvm.func<i32 (ptr)>'}}
  llvm.func @main(%a: !llvm.ptr) -> i32 {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
}
