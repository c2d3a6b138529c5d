// RUN: attn-opt %s --split-input-file --attn-verify-model="static-shapes-target=cuda" --verify-diagnostics
// RUN: attn-opt %s --split-input-file --attn-verify-model | FileCheck %s --check-prefix=ANY

// The CUDA pipeline runs attn-verify-model with static-shapes-target=cuda:
// a dynamic batch or sequence in the model's signature is an error at the
// function, before any GPU pass sees it. Without the option (the CPU
// pipeline) the same models are fine.

// ANY-LABEL: func.func @dynamic_argument(
// expected-error @+1 {{'func.func' op argument #0 has type 'tensor<1x?x8xf32>' with a dynamic size, which the cuda target does not support yet (fix the size, or compile for the cpu target)}}
func.func @dynamic_argument(%x: tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
  %0 = attn.relu %x : tensor<1x?x8xf32>
  return %0 : tensor<1x?x8xf32>
}

// -----

// ANY-LABEL: func.func @dynamic_result(
// expected-error @+1 {{'func.func' op result #0 has type 'tensor<?x8xf32>' with a dynamic size}}
func.func @dynamic_result(%x: tensor<2x8xf32>) -> tensor<?x8xf32> {
  %0 = tensor.cast %x : tensor<2x8xf32> to tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Private helpers are not the model's interface.
// ANY-LABEL: func.func @static_entry(
func.func @static_entry(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  return %x : tensor<2x8xf32>
}
func.func private @helper(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
