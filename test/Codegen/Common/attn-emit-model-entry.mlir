// RUN: attn-opt %s --attn-to-cpu | FileCheck %s --check-prefix=LLVM
// RUN: attn-opt %s --attn-to-cpu="stop-after=bufferized" | FileCheck %s --check-prefix=BUF --implicit-check-not=tensor
// RUN: attn-opt %s --attn-to-cpu="stop-after=linalg" | FileCheck %s --check-prefix=LINALG --implicit-check-not='= attn.' --implicit-check-not=attn.yield

// A small model (one linear layer with bias, relu) through the CPU pipeline.
// Its manifest has four records: two weights, one input, one output.

// After the whole pipeline (attn-emit-model-entry runs last), the entry is
// the internal `attn_model_forward` taking one bare pointer per record
// (bare-pointer calling convention, weight names dropped from the
// signature), `attn_model_invoke(void **)` loads the four pointers and calls
// it, and the NUL-terminated manifest is an external constant global.

// LLVM-NOT:     llvm.func @main
// LLVM-NOT:     func.func
// LLVM-LABEL:   llvm.func internal @attn_model_forward(
// LLVM-SAME:      %[[W:[^:]+]]: !llvm.ptr, %[[B:[^:]+]]: !llvm.ptr, %[[X:[^:]+]]: !llvm.ptr, %[[O:[^:]+]]: !llvm.ptr) {
// LLVM-DAG:       llvm.getelementptr {{.*}}%[[W]][
// LLVM-DAG:       llvm.getelementptr {{.*}}%[[B]][
// LLVM-DAG:       llvm.getelementptr {{.*}}%[[X]][
// LLVM-DAG:       llvm.getelementptr {{.*}}%[[O]][
// LLVM-DAG:       llvm.store {{.*}} : f32, !llvm.ptr
// LLVM:           llvm.return
// LLVM-NEXT:    }

// LLVM-LABEL:   llvm.func @attn_model_invoke(
// LLVM-SAME:      %[[BUFS:[^:]+]]: !llvm.ptr) {
// LLVM-NEXT:      %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM-NEXT:      %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// LLVM-NEXT:      %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM-NEXT:      %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// LLVM-NEXT:      %[[S2:.*]] = llvm.getelementptr %[[BUFS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM-NEXT:      %[[P2:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// LLVM-NEXT:      %[[S3:.*]] = llvm.getelementptr %[[BUFS]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM-NEXT:      %[[P3:.*]] = llvm.load %[[S3]] : !llvm.ptr -> !llvm.ptr
// LLVM-NEXT:      llvm.call @attn_model_forward(%[[P0]], %[[P1]], %[[P2]], %[[P3]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// LLVM-NEXT:      llvm.return
// LLVM-NEXT:    }

// LLVM:         llvm.mlir.global external constant @attn_model_manifest("attnc-manifest 1\0Atarget cpu\0Aweight proj.weight f32 8x4 transpose\0Aweight proj.bias f32 4\0Ainput input0 f32 2x8\0Aoutput output0 f32 2x4\0A\00")

// After bufferization the tensor result is an out-parameter: @main returns
// nothing and its last argument is the output buffer, written in place.
// BUF:          module attributes {attn.entry = @main, attn.manifest = [{kind = "weight", name = "proj.weight", transpose, type = tensor<8x4xf32>}, {kind = "weight", name = "proj.bias", type = tensor<4xf32>}, {kind = "input", name = "input0", type = tensor<2x8xf32>}, {kind = "output", name = "output0", type = tensor<2x4xf32>}]}
// BUF-LABEL:    func.func @main(
// BUF-SAME:       %[[W:[^:]+]]: memref<8x4xf32> {attn.weight = "proj.weight"},
// BUF-SAME:       %[[B:[^:]+]]: memref<4xf32> {attn.weight = "proj.bias"},
// BUF-SAME:       %[[X:[^:]+]]: memref<2x8xf32>,
// BUF-SAME:       %[[O:[^:]+]]: memref<2x4xf32>) {
// BUF-NOT:        memref.alloc
// BUF:            linalg.fill ins(%{{.*}} : f32) outs(%[[O]] : memref<2x4xf32>)
// BUF:            linalg.generic {{.*}} ins(%[[X]], %[[W]] : memref<2x8xf32>, memref<8x4xf32>) outs(%[[O]] : memref<2x4xf32>)
// BUF:            linalg.generic {{.*}} ins(%[[O]], %[[B]] : memref<2x4xf32>, memref<4xf32>) outs(%[[O]] : memref<2x4xf32>)
// BUF:              arith.maximumf
// BUF:            return{{$}}

// After the linalg stage no attn op is left (only the attn.* attributes),
// the weights are entry arguments and the manifest is recorded; the
// projection's weight is bound transposed (attn-cpu-transpose-weights).
// LINALG:       module attributes {attn.entry = @main, attn.manifest = [{kind = "weight", name = "proj.weight", transpose, type = tensor<8x4xf32>}, {kind = "weight", name = "proj.bias", type = tensor<4xf32>}, {kind = "input", name = "input0", type = tensor<2x8xf32>}, {kind = "output", name = "output0", type = tensor<2x4xf32>}]}
// LINALG-LABEL: func.func @main(
// LINALG-SAME:    %[[W:[^:]+]]: tensor<8x4xf32> {attn.weight = "proj.weight"},
// LINALG-SAME:    %[[B:[^:]+]]: tensor<4xf32> {attn.weight = "proj.bias"},
// LINALG-SAME:    %[[X:[^:]+]]: tensor<2x8xf32>) -> tensor<2x4xf32>
// LINALG:         %[[MM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<2x8xf32>, tensor<8x4xf32>)
// LINALG:         %[[BIASED:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[B]] : tensor<2x4xf32>, tensor<4xf32>)
// LINALG:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[BIASED]] : tensor<2x4xf32>)
// LINALG:           arith.maximumf
// LINALG:         return %[[R]] : tensor<2x4xf32>
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = attn.weight "proj.weight" : tensor<4x8xf32>
  %b = attn.weight "proj.bias" : tensor<4xf32>
  %0 = attn.linear %x, %w, %b : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = attn.relu %0 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// An unknown stage is an option error, not a silent full run.
// RUN: not attn-opt %s --attn-to-cpu="stop-after=foo" 2>&1 | FileCheck %s --check-prefix=BADSTAGE
// BADSTAGE: Cannot find option named 'foo'
