// RUN: attn-opt %s --split-input-file --attn-gpu-merge-modules --verify-diagnostics

// Modules for different targets cannot share one binary.
module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target<chip = "sm_80">] {
    gpu.func @k(%arg0: memref<4xf32>) kernel { gpu.return }
  }
  // expected-error @+1 {{'gpu.module' op has different targets than a; cannot merge}}
  gpu.module @b [#nvvm.target<chip = "sm_90">] {
    gpu.func @k(%arg0: memref<4xf32>) kernel { gpu.return }
  }
}
