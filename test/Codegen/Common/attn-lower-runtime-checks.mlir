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

// -----

// In the model's entry (attn.entry), checks of the input sizes alone are
// preconditions: evaluated first, a failure reports to libattnrt and returns
// before the body runs. A check of computed values stays where it is, fatal.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[IDS:.*]]: memref<1x?xi64>, %[[OUT:.*]]: memref<1x?xf32>
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[S:.*]] = memref.dim %[[IDS]], %[[C1]]
// CHECK:         %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[OK:.*]] = arith.cmpi sle, %[[S]], %[[C16]]
// CHECK:         %[[FAILED:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK:         scf.if %[[FAILED]] {
// CHECK:           func.call @attnrt_precondition_failed(
// CHECK:         cf.cond_br %[[FAILED]], ^[[STOP:.*]], ^[[BODY:.*]]
// CHECK:       ^[[STOP]]:
// CHECK-NEXT:    return
// CHECK:       ^[[BODY]]:
// CHECK:         memref.load
// CHECK:         scf.if
// CHECK:           func.call @attnrt_runtime_check_failed(
// CHECK-NOT:     cf.assert
// CHECK:         return
// CHECK-DAG:   func.func private @attnrt_runtime_check_failed(!llvm.ptr)
// CHECK-DAG:   func.func private @attnrt_precondition_failed(!llvm.ptr)
module attributes {attn.entry = @forward} {
  func.func @forward(%ids: memref<1x?xi64>, %out: memref<1x?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = memref.dim %ids, %c1 : memref<1x?xi64>
    %c16 = arith.constant 16 : index
    %ok = arith.cmpi sle, %s, %c16 : index
    cf.assert %ok, "^ the sequence passes the 16-row table" loc("model.onnx":5:6)
    %id = memref.load %ids[%c0, %c0] : memref<1x?xi64>
    %zero = arith.constant 0 : i64
    %valid = arith.cmpi sge, %id, %zero : i64
    cf.assert %valid, "^ a negative id" loc("model.onnx":7:8)
    return
  }
}
