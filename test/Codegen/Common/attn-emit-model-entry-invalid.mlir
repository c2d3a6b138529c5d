// RUN: attn-opt %s --split-input-file --attn-emit-model-entry --verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-emit-model-entry="target=rocm" 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET: attn-opt: for the --target option: unknown target 'rocm' (expected cpu or cuda)

// expected-error @+1 {{attn-emit-model-entry: no model manifest; run attn-hoist-weights first}}
module {
  llvm.func @main(%a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// The entry must already be lowered to the LLVM dialect.
// expected-error @+1 {{attn-emit-model-entry: the entry @main is not an llvm.func yet}}
module attributes {attn.entry = @main, attn.manifest = [{kind = "output", name = "output0", type = tensor<2xf32>}]} {
  func.func @main(%a: memref<2xf32>) {
    return
  }
}

// -----

// Two records, one pointer: neither bare pointers nor descriptors.
module attributes {attn.entry = @main, attn.manifest = [{kind = "input", name = "input0", type = tensor<2xf32>}, {kind = "output", name = "output0", type = tensor<2xf32>}]} {
  // expected-error @+1 {{'llvm.func' op expected a void function taking one memref per manifest record (2), got '!llvm.func<void (ptr)>'}}
  llvm.func @main(%a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Results must have become out-parameters.
module attributes {attn.entry = @main, attn.manifest = [{kind = "output", name = "output0", type = tensor<2xf32>}]} {
  // expected-error @+1 {{'llvm.func' op expected a void function taking one memref per manifest record (1), got '!llvm.func<i32 (ptr)>'}}
  llvm.func @main(%a: !llvm.ptr) -> i32 {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
}

// -----

// The manifest is structured from attn-hoist-weights on; text is not read.
// expected-error @+1 {{attn.manifest must be an array of records, got "output output0 f32 2\0A"}}
module attributes {attn.entry = @main, attn.manifest = "output output0 f32 2\0A"} {
  llvm.func @main(%a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{attn.manifest record 0 has unknown kind 'scratch'}}
module attributes {attn.entry = @main, attn.manifest = [{kind = "scratch", name = "s", type = tensor<2xf32>}]} {
  llvm.func @main(%a: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{attn.manifest record 1 has type 'tensor<2xf64>'; the runtime takes ranked tensors of f32, f16, bf16, i32 or i64}}
module attributes {attn.entry = @main, attn.manifest = [{kind = "input", name = "x", type = tensor<2xf32>}, {kind = "output", name = "y", type = tensor<2xf64>}]} {
  llvm.func @main(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{attn.manifest record 0 needs all or none of gather_axis, gather_extent and gather_ranges (start, length pairs)}}
module attributes {attn.entry = @main, attn.manifest = [{gather_axis = 0 : i64, kind = "weight", name = "w", type = tensor<2xf32>}]} {
  llvm.func @main(%a: !llvm.ptr) {
    llvm.return
  }
}
