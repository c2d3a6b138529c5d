// RUN: attn-opt %s --split-input-file --attn-gpu-device-buffers | FileCheck %s

// Host-side memref.alloc/dealloc/copy become gpu.alloc/dealloc/memcpy (every
// buffer of the CUDA target lives in device memory). Ops inside a
// gpu.launch body or a gpu.module are GPU code and stay as they are.

// CHECK-LABEL: func.func @host(
// CHECK-SAME:    %[[SRC:[^:]+]]: memref<4xf32>, %[[N:[^:]+]]: index) -> memref<?xf32>
// CHECK-NEXT:    %[[BUF:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:    gpu.memcpy %[[BUF]], %[[SRC]] : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    %[[DYN:.*]] = gpu.alloc (%[[N]]) : memref<?xf32>
// CHECK:         gpu.launch blocks
// CHECK-NEXT:      %[[LOCAL:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:      memref.copy %[[BUF]], %[[LOCAL]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:      memref.dealloc %[[LOCAL]] : memref<4xf32>
// CHECK-NEXT:      gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.dealloc %[[BUF]] : memref<4xf32>
// CHECK-NEXT:    return %[[DYN]] : memref<?xf32>
// CHECK:       gpu.module @kernels {
// CHECK-NEXT:    gpu.func @k(%[[ARG:[^:]+]]: memref<4xf32>) kernel {
// CHECK-NEXT:      %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:      memref.copy %[[ARG]], %[[T]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:      memref.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:      gpu.return
// CHECK-NOT:   gpu.alloc
// CHECK-NOT:   gpu.memcpy
module attributes {gpu.container_module} {
  func.func @host(%arg0: memref<4xf32>, %n: index) -> memref<?xf32> {
    %0 = memref.alloc() : memref<4xf32>
    memref.copy %arg0, %0 : memref<4xf32> to memref<4xf32>
    %1 = memref.alloc(%n) : memref<?xf32>
    %c1 = arith.constant 1 : index
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
      %t = memref.alloc() : memref<4xf32>
      memref.copy %0, %t : memref<4xf32> to memref<4xf32>
      memref.dealloc %t : memref<4xf32>
      gpu.terminator
    }
    memref.dealloc %0 : memref<4xf32>
    return %1 : memref<?xf32>
  }
  gpu.module @kernels {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      %t = memref.alloc() : memref<4xf32>
      memref.copy %arg0, %t : memref<4xf32> to memref<4xf32>
      memref.dealloc %t : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// Host code nested in other regions (here scf.if) is still host code; the
// copy direction is kept (memref.copy src, dst -> gpu.memcpy dst, src).
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:    %[[COND:[^:]+]]: i1, %[[IN:[^:]+]]: memref<2x3xf16>, %[[OUT:[^:]+]]: memref<2x3xf16>)
// CHECK:         scf.if %[[COND]] {
// CHECK-NEXT:      %[[TMP:.*]] = gpu.alloc () : memref<2x3xf16>
// CHECK-NEXT:      gpu.memcpy %[[TMP]], %[[IN]] : memref<2x3xf16>, memref<2x3xf16>
// CHECK-NEXT:      gpu.memcpy %[[OUT]], %[[TMP]] : memref<2x3xf16>, memref<2x3xf16>
// CHECK-NEXT:      gpu.dealloc %[[TMP]] : memref<2x3xf16>
// CHECK-NEXT:    }
// CHECK-NOT:     memref.
func.func @nested(%cond: i1, %in: memref<2x3xf16>, %out: memref<2x3xf16>) {
  scf.if %cond {
    %t = memref.alloc() : memref<2x3xf16>
    memref.copy %in, %t : memref<2x3xf16> to memref<2x3xf16>
    memref.copy %t, %out : memref<2x3xf16> to memref<2x3xf16>
    memref.dealloc %t : memref<2x3xf16>
  }
  return
}

// -----

// Other memref ops (alloca, load, store) are not touched.
// CHECK-LABEL: func.func @untouched(
// CHECK:         memref.alloca() : memref<4xf32>
// CHECK:         memref.store
// CHECK:         memref.load
// CHECK-NOT:     gpu.
func.func @untouched(%v: f32, %i: index) -> f32 {
  %0 = memref.alloca() : memref<4xf32>
  memref.store %v, %0[%i] : memref<4xf32>
  %1 = memref.load %0[%i] : memref<4xf32>
  return %1 : f32
}

// -----

// A constant of the host module reaches kernels as a device copy: allocated
// and uploaded where the host takes it, freed at the end of that block; the
// global itself is only read by the upload.
// CHECK-LABEL: func.func @host_constant(
// CHECK:         %[[G:.*]] = memref.get_global @table : memref<4xf32>
// CHECK-NEXT:    %[[D:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:    gpu.memcpy %[[D]], %[[G]] : memref<4xf32>, memref<4xf32>
// CHECK:         gpu.launch blocks
// CHECK-NEXT:      memref.load %[[D]]
// CHECK:         gpu.dealloc %[[D]] : memref<4xf32>
// CHECK-NEXT:    return
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @host_constant(%out: memref<4xf32>) {
  %g = memref.get_global @table : memref<4xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %v = memref.load %g[%tx] : memref<4xf32>
    memref.store %v, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Thread-private allocas of a kernel that only the partial-block guard
// (scf.if) separates from the launch body move to its start, where LLVM
// promotes them (inside the guard they were stack adjustments: the generic
// flash kernel over a run-time query length spilled). One inside a loop,
// or of run-time size, stays.
// CHECK-LABEL: func.func @guarded_allocas(
// CHECK:         gpu.launch
// CHECK-DAG:       %[[A:.*]] = memref.alloca() : memref<2x1xf32>
// CHECK-DAG:       %[[B:.*]] = memref.alloca() : memref<8xf32>
// CHECK:           arith.cmpi
// CHECK-NEXT:      scf.if
// CHECK-NOT:         memref.alloca() : memref<2x1xf32>
// CHECK:             memref.store %{{.*}}, %[[A]]
// CHECK:             scf.if
// CHECK:               memref.store %{{.*}}, %[[B]]
// CHECK:             scf.for
// CHECK-NEXT:          memref.alloca() : memref<4xf32>
// CHECK:             memref.alloca(%{{.*}}) : memref<?xf32>
func.func @guarded_allocas(%n: index, %c: i1, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %in = arith.cmpi ult, %tx, %n : index
    scf.if %in {
      %a = memref.alloca() : memref<2x1xf32>
      memref.store %cst, %a[%c0, %c0] : memref<2x1xf32>
      scf.if %c {
        %b = memref.alloca() : memref<8xf32>
        memref.store %cst, %b[%c0] : memref<8xf32>
      }
      scf.for %i = %c0 to %c4 step %c1 {
        %l = memref.alloca() : memref<4xf32>
        memref.store %cst, %l[%i] : memref<4xf32>
      }
      %d = memref.alloca(%n) : memref<?xf32>
      memref.store %cst, %d[%c0] : memref<?xf32>
      %v = memref.load %a[%c0, %c0] : memref<2x1xf32>
      memref.store %v, %out[%tx] : memref<?xf32>
    }
    gpu.terminator
  }
  return
}
