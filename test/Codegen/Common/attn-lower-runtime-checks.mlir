// RUN: attn-opt %s --split-input-file --attn-lower-runtime-checks | FileCheck %s

// A host check becomes a call of libattnrt's reporter on the failed
// condition, with a located message (file:line:col of the assert).
// CHECK:       llvm.mlir.global internal constant @attn_runtime_check_0("model.onnx:3:4: error: run-time check failed: the slice bound lies outside [0, 16]\00")
// CHECK-LABEL: func.func @host(
// CHECK-SAME:    %[[OK:.*]]: i1
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         %[[FAILED:.*]] = arith.xori %[[OK]], %[[TRUE]] : i1
// CHECK:         scf.if %[[FAILED]] {
// CHECK:           %[[GLOBAL:.*]] = llvm.mlir.addressof @attn_runtime_check_0
// CHECK:           %[[MSG:.*]] = llvm.getelementptr %[[GLOBAL]][0, 0]
// CHECK:           func.call @attnrt_runtime_check_failed(%[[MSG]])
// CHECK-NOT:     cf.assert
// CHECK:         return
// CHECK:       func.func private @attnrt_runtime_check_failed(!llvm.ptr)
func.func @host(%ok: i1) {
  cf.assert %ok, "ERROR: Runtime op verification failed\n^ the slice bound lies outside [0, 16]" loc("model.onnx":3:4)
  return
}

// -----

// Device code cannot call the host library: a check in a gpu.module stays
// for the GPU lowering, and no reporter is declared.
// CHECK-LABEL: gpu.module @kernels
// CHECK:         gpu.func @kernel(
// CHECK:           cf.assert
// CHECK-NOT:   attnrt_runtime_check_failed
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%ok: i1) kernel {
      cf.assert %ok, "device check"
      gpu.return
    }
  }
}
