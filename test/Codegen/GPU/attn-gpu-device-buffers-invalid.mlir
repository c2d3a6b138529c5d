// RUN: attn-opt %s --split-input-file --attn-gpu-device-buffers -verify-diagnostics

// A constant with a strided layout has no device copy: an error, not a
// kernel reading host memory.
module attributes {gpu.container_module} {
  memref.global "private" constant @strided : memref<2xf32, strided<[2]>> = dense<[1.0, 2.0]>
  func.func @strided_constant() {
    // expected-error @below {{host constant of type 'memref<2xf32, strided<[2]>>' has no device copy}}
    %g = memref.get_global @strided : memref<2xf32, strided<[2]>>
    return
  }
}
