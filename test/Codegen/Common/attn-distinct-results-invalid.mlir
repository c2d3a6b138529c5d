// RUN: attn-opt %s --split-input-file --attn-distinct-results -verify-diagnostics

func.func @strided(%x: memref<2xf32, strided<[2]>>) -> (memref<2xf32, strided<[2]>>, memref<2xf32, strided<[2]>>) {
  // expected-error @below {{returns the buffer of type 'memref<2xf32, strided<[2]>>' twice, and it has no identity layout to copy to}}
  return %x, %x : memref<2xf32, strided<[2]>>, memref<2xf32, strided<[2]>>
}
