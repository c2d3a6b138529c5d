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

// -----

// A copy into a strided view cannot be one gpu.memcpy (the runtime copies a
// contiguous range): attn-gpu-copy-kernels makes it a kernel first.
func.func @strided_copy(%src: memref<2x4xf32>, %dst: memref<2x8xf32>) {
  %view = memref.subview %dst[0, 4] [2, 4] [1, 1] : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  // expected-error @below {{copy of the view 'memref<2x4xf32, strided<[8, 1], offset: 4>>' in host code}}
  memref.copy %src, %view : memref<2x4xf32> to memref<2x4xf32, strided<[8, 1], offset: 4>>
  return
}
