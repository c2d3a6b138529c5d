// RUN: attn-opt %s --split-input-file --attn-emit-model-entry | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-emit-model-entry="target=cuda" | FileCheck %s --check-prefix=CUDA

// attn-emit-model-entry on hand-written LLVM-dialect modules.

// Bare-pointer convention; other uses of the entry are renamed too, and
// argument attributes are dropped. The model's other functions become
// internal: only the entry points are exported.
// CHECK-LABEL: module attributes
// CHECK:         llvm.func internal @attn_model_forward(%{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr) {
// CHECK-LABEL:   llvm.func internal @user(
// CHECK:           llvm.call @attn_model_forward(
// CHECK-LABEL:   llvm.func @attn_model_invoke(
// CHECK-SAME:      %[[BUFS:[^:]+]]: !llvm.ptr)
// CHECK-NEXT:      %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:      %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:      %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:      %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:      llvm.call @attn_model_forward(%[[P0]], %[[P1]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:      llvm.return
// CHECK:         llvm.mlir.global external constant @attn_model_manifest("attnc-manifest 1\0Atarget cpu\0Aweight w f32 4x8\0Aoutput output0 f32 2x4\0A\00")
// CHECK-NOT:     @main
// CUDA:          llvm.mlir.global external constant @attn_model_manifest("attnc-manifest 1\0Atarget cuda\0Aweight w f32 4x8\0Aoutput output0 f32 2x4\0A\00")
module attributes {attn.entry = @main, attn.manifest = [{kind = "weight", name = "w", type = tensor<4x8xf32>}, {kind = "output", name = "output0", type = tensor<2x4xf32>}]} {
  llvm.func @main(%a: !llvm.ptr {llvm.noalias}, %b: !llvm.ptr) {
    llvm.return
  }
  llvm.func @user(%a: !llvm.ptr, %b: !llvm.ptr) {
    llvm.call @main(%a, %b) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Expanded memref descriptors: each record becomes (allocated, aligned,
// offset = 0, sizes..., row-major strides...) built from the manifest shape;
// a scalar record has no sizes or strides.
// CHECK-LABEL: module attributes
// CHECK:         llvm.func internal @attn_model_forward(
// CHECK-LABEL:   llvm.func @attn_model_invoke(
// CHECK-SAME:      %[[BUFS:[^:]+]]: !llvm.ptr)
// CHECK-NEXT:      %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:      %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:      %[[OFF0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:      %[[SZ00:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT:      %[[SZ01:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT:      %[[ST00:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT:      %[[ST01:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:      %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:      %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:      %[[OFF1:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:      %[[S2:.*]] = llvm.getelementptr %[[BUFS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:      %[[P2:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:      %[[OFF2:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:      %[[SZ20:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT:      %[[SZ21:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-NEXT:      %[[SZ22:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT:      %[[ST20:.*]] = llvm.mlir.constant(12 : i64) : i64
// CHECK-NEXT:      %[[ST21:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT:      %[[ST22:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:      llvm.call @attn_model_forward(%[[P0]], %[[P0]], %[[OFF0]], %[[SZ00]], %[[SZ01]], %[[ST00]], %[[ST01]], %[[P1]], %[[P1]], %[[OFF1]], %[[P2]], %[[P2]], %[[OFF2]], %[[SZ20]], %[[SZ21]], %[[SZ22]], %[[ST20]], %[[ST21]], %[[ST22]])
// CHECK-NEXT:      llvm.return
// CHECK:         llvm.mlir.global external constant @attn_model_manifest("attnc-manifest 1\0Atarget cpu\0Aweight w f32 4x8\0Ainput input0 i32 scalar\0Aoutput output0 f32 2x3x4\0A\00")
// CUDA:          @attn_model_manifest("attnc-manifest 1\0Atarget cuda\0A
module attributes {attn.entry = @main, attn.manifest = [{kind = "weight", name = "w", type = tensor<4x8xf32>}, {kind = "input", name = "input0", type = tensor<i32>}, {kind = "output", name = "output0", type = tensor<2x3x4xf32>}]} {
  llvm.func @main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64, %s0: i64, %s1: i64, %t0: i64, %t1: i64,
                  %b0: !llvm.ptr, %b1: !llvm.ptr, %bo: i64,
                  %c0: !llvm.ptr, %c1: !llvm.ptr, %co: i64, %cs0: i64, %cs1: i64, %cs2: i64, %ct0: i64, %ct1: i64, %ct2: i64) {
    llvm.return
  }
}
