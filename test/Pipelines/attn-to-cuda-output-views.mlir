// REQUIRES: cuda-toolkit
// RUN: attn-opt %s --split-input-file --attn-to-cuda="chip=sm_90a format=isa" \
// RUN:   | FileCheck %s --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %s --split-input-file --attn-to-cuda="stop-after=gpu-mapped" \
// RUN:   | FileCheck %s --check-prefix=MAPPED

// Outputs that are views: a concatenation writes each part into a strided
// slice of the output, and an output can be a slice of an input. gpu.memcpy
// copies one contiguous range and lowers for identity layouts only, so these
// copies are kernels (attn-gpu-copy-kernels). Before, the concatenation's
// parts were copied as contiguous ranges (scrambled output on an H200) and
// the input slice stopped the compile (an unrealized_conversion_cast left).

// CHECK-LABEL: llvm.func internal @attn_model_forward(
// CHECK-NOT:     llvm.call @mgpuMemcpy
// CHECK:         llvm.return
// MAPPED-LABEL: func.func @main
// MAPPED-NOT:   gpu.memcpy
// MAPPED-COUNT-2: gpu.launch_func
// MAPPED-NOT:   gpu.memcpy
// MAPPED:       return
func.func @main(%a: tensor<8x16xf32> {attn.name = "a"}, %b: tensor<8x16xf32> {attn.name = "b"}) -> (tensor<8x32xf32> {attn.name = "y"}) {
  %y = tensor.concat dim(1) %a, %b : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: llvm.func internal @attn_model_forward(
// CHECK-NOT:     llvm.call @mgpuMemcpy
// CHECK:         llvm.return
// MAPPED-LABEL: func.func @main
// MAPPED-NOT:   gpu.memcpy
// MAPPED:       gpu.launch_func
// MAPPED-NOT:   gpu.memcpy
// MAPPED:       return
func.func @main(%x: tensor<1x8x32xf32> {attn.name = "x"}) -> (tensor<1x1x32xf32> {attn.name = "y"}) {
  %y = tensor.extract_slice %x[0, 2, 0] [1, 1, 32] [1, 1, 1] : tensor<1x8x32xf32> to tensor<1x1x32xf32>
  return %y : tensor<1x1x32xf32>
}
