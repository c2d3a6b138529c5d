// RUN: attn-opt %s --attn-to-cpu | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu="stop-after=bufferized" | FileCheck %s --check-prefix=BUF

// A model whose rows are dynamic (a batch or sequence chosen at run time).
// Memrefs of dynamic size cannot travel as bare pointers: the module uses
// memref descriptors (attn-cpu-func-to-llvm), and attn_model_invoke builds
// them from the buffers and, for each `?`, the next run-time size, read
// through the pointer after the buffers (buffers[4] here: four records).
// Dynamic strides would be products of run-time sizes; here each row is
// static, so they are constants. The manifest writes `?` with dims_from:
// the input's rows are chosen per run, the output's are the input's.

// BUF:          attn.manifest = [{kind = "weight", name = "proj.weight", transpose, type = tensor<8x4xf32>}, {kind = "weight", name = "proj.bias", type = tensor<4xf32>}, {dims_from = array<i64: -1, -1>, kind = "input", name = "input0", type = tensor<?x8xf32>}, {dims_from = array<i64: 0, 0>, kind = "output", name = "output0", type = tensor<?x4xf32>}]
// BUF-LABEL:    func.func @main(
// BUF-SAME:       memref<8x4xf32> {attn.weight = "proj.weight"}, %{{[^:]+}}: memref<4xf32> {attn.weight = "proj.bias"}, %{{[^:]+}}: memref<?x8xf32>, %{{[^:]+}}: memref<?x4xf32>) {

// CHECK-LABEL:  llvm.func internal @attn_model_forward(
// CHECK-SAME:     !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64,
// CHECK-LABEL:  llvm.func @attn_model_invoke(
// CHECK-SAME:     %[[BUFS:[^:]+]]: !llvm.ptr) {
// CHECK-NEXT:     %[[SP:.*]] = llvm.getelementptr %[[BUFS]][4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:     %[[SIZES:.*]] = llvm.load %[[SP]] : !llvm.ptr -> !llvm.ptr
// The input: [?, 8], strides [8, 1].
// CHECK:          %[[S2:.*]] = llvm.getelementptr %[[BUFS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:     %[[X:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:     %[[XOFF:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:     %[[M0P:.*]] = llvm.getelementptr %[[SIZES]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:     %[[M0:.*]] = llvm.load %[[M0P]] : !llvm.ptr -> i64
// CHECK-NEXT:     %[[X8:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT:     %[[XS1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:     %[[XS0:.*]] = llvm.mlir.constant(8 : i64) : i64
// The output: [?, 4], the second run-time size.
// CHECK:          %[[S3:.*]] = llvm.getelementptr %[[BUFS]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:     %[[Y:.*]] = llvm.load %[[S3]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:     %[[YOFF:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:     %[[M1P:.*]] = llvm.getelementptr %[[SIZES]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:     %[[M1:.*]] = llvm.load %[[M1P]] : !llvm.ptr -> i64
// CHECK-NEXT:     %[[Y4:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT:     %[[YS1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:     %[[YS0:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT:     llvm.call @attn_model_forward({{.*}}, %[[X]], %[[X]], %[[XOFF]], %[[M0]], %[[X8]], %[[XS0]], %[[XS1]], %[[Y]], %[[Y]], %[[YOFF]], %[[M1]], %[[Y4]], %[[YS0]], %[[YS1]])
// CHECK-NEXT:     llvm.return
// CHECK:        llvm.mlir.global external constant @attn_model_manifest("attnc-manifest 1\0Atarget cpu\0Aweight proj.weight f32 8x4 transpose\0Aweight proj.bias f32 4\0Ainput input0 f32 ?x8 dims_from -\0Aoutput output0 f32 ?x4 dims_from 0:0\0A\00")
func.func @main(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %w = attn.weight "proj.weight" : tensor<4x8xf32>
  %b = attn.weight "proj.bias" : tensor<4xf32>
  %0 = attn.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = attn.relu %0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
