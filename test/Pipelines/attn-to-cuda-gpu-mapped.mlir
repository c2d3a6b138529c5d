// RUN: attn-opt %s --attn-to-cuda="stop-after=gpu-mapped" | FileCheck %s --implicit-check-not=llvm. --implicit-check-not=nvvm. --implicit-check-not=gpu.binary

// attn-to-cuda stops after its map stage: the host code allocates, copies and
// launches on the device with async tokens, the kernels are outlined into one
// gpu.module, and nothing is lowered to NVVM or LLVM yet (no toolkit needed).
// This is what Integration/GPU/model-emulation.test runs.

// CHECK:       module attributes {attn.entry = @main, attn.manifest = [{{.*}}], gpu.container_module}
// CHECK-LABEL: func.func @main(
// CHECK:         %{{.*}}, %[[TOKEN:.*]] = gpu.alloc async
// CHECK:         gpu.launch_func async [%[[TOKEN]]] @main_kernel::@main_kernel blocks in
// CHECK:         gpu.wait [%{{.*}}]
// CHECK-NEXT:    return
// CHECK:       gpu.module @main_kernel {
// CHECK:         gpu.func @main_kernel(
// CHECK-SAME:      kernel

func.func @main(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %g = attn.weight "ln.weight" : tensor<8xf32>
  %b = attn.weight "ln.bias" : tensor<8xf32>
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %1 = attn.layer_norm %0, %g, %b : tensor<1x2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %1 : tensor<1x2x4x8xf32>
}
