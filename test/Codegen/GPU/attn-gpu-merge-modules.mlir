// RUN: attn-opt %s --split-input-file --attn-gpu-merge-modules | FileCheck %s

// Kernel outlining leaves one gpu.module per kernel. All kernels move into
// the first gpu.module: a module holding one symbol names it after the
// module (module names are unique), a module holding several prefixes each
// with the module name; a clash with a name already taken gets a numeric
// suffix. Every gpu.launch_func is redirected.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[A:[^:]+]]: memref<4xf32>, %[[B:[^:]+]]: memref<4xf32>)
// CHECK:         gpu.launch_func @main_kernel::@main_kernel blocks in ({{.*}}) threads in ({{.*}}) args(%[[A]] : memref<4xf32>)
// CHECK-NEXT:    gpu.launch_func @main_kernel::@main_kernel_0 blocks in ({{.*}}) threads in ({{.*}}) args(%[[B]] : memref<4xf32>)
// CHECK-NEXT:    return
// CHECK:       gpu.module @main_kernel {
// CHECK-NEXT:    gpu.func @main_kernel(%{{.*}}: memref<4xf32>) kernel {
// CHECK-NEXT:      gpu.thread_id x
// CHECK-NEXT:      arith.constant
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK-NEXT:      gpu.return
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.func @main_kernel_0(%{{.*}}: memref<4xf32>) kernel {
// CHECK-NEXT:      gpu.thread_id x
// CHECK-NEXT:      memref.load %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK-NEXT:      gpu.return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NOT:   gpu.module
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>, %b: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%b : memref<4xf32>)
    return
  }
  gpu.module @main_kernel {
    gpu.func @main_kernel(%arg0: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %f = arith.constant 1.0 : f32
      memref.store %f, %arg0[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(%arg0: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %arg0[%i] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// Several kernels per module, and clashes: @k1's kernels become @k1_first
// (taken in @k0, so @k1_first_0) and @k1_second; the last module's single
// kernel would be @main_kernel (taken) and gets the next free suffix.
// Launches into the first module itself are left alone.
// CHECK-LABEL: func.func @clashes(
// CHECK:         gpu.launch_func @k0::@main_kernel blocks
// CHECK-NEXT:    gpu.launch_func @k0::@k1_first_0 blocks
// CHECK-NEXT:    gpu.launch_func @k0::@k1_second blocks
// CHECK-NEXT:    gpu.launch_func @k0::@k1_first blocks
// CHECK-NEXT:    gpu.launch_func @k0::@main_kernel_1 blocks
// CHECK:       gpu.module @k0 {
// CHECK-NEXT:    gpu.func @main_kernel(
// CHECK:         gpu.func @k1_first(
// CHECK:         gpu.func @k1_first_0(
// CHECK:         gpu.func @k1_second(
// CHECK:         gpu.func @main_kernel_1(
// CHECK:       }
// CHECK-NOT:   gpu.module
module attributes {gpu.container_module} {
  func.func @clashes(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k1::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k1::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k0::@k1_first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @k0 {
    gpu.func @main_kernel(%arg0: memref<4xf32>) kernel { gpu.return }
    gpu.func @k1_first(%arg0: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @k1 {
    gpu.func @first(%arg0: memref<4xf32>) kernel { gpu.return }
    gpu.func @second(%arg0: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @main_kernel {
    gpu.func @main_kernel(%arg0: memref<4xf32>) kernel { gpu.return }
  }
}

// -----

// Modules for the same target merge and keep it.
// CHECK-LABEL: func.func @same_target(
// CHECK:         gpu.launch_func @a::@k blocks
// CHECK-NEXT:    gpu.launch_func @a::@b blocks
// CHECK:       gpu.module @a [#nvvm.target<chip = "sm_80">] {
// CHECK-NEXT:    gpu.func @k(
// CHECK:         gpu.func @b(
// CHECK-NOT:   gpu.module
module attributes {gpu.container_module} {
  func.func @same_target(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @a [#nvvm.target<chip = "sm_80">] {
    gpu.func @k(%arg0: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @b [#nvvm.target<chip = "sm_80">] {
    gpu.func @k(%arg0: memref<4xf32>) kernel { gpu.return }
  }
}

// -----

// A single gpu.module is left as it is.
// CHECK-LABEL: func.func @single(
// CHECK:         gpu.launch_func @only::@main_kernel blocks
// CHECK:       gpu.module @only {
// CHECK-NEXT:    gpu.func @main_kernel(
module attributes {gpu.container_module} {
  func.func @single(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @only::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @only {
    gpu.func @main_kernel(%arg0: memref<4xf32>) kernel { gpu.return }
  }
}
