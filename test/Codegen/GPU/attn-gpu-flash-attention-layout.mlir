// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention))" \
// RUN:   | FileCheck %s
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention{staging=plain ldmatrix=0}))" \
// RUN:   | FileCheck %s --check-prefix=PLAIN

// The head split and merge around the kernel fold into its addressing: Q,
// K and V are read in place from the packed QKV projection (its buffer
// viewed through the slice, the reshape and the transpose: rows 192
// elements apart, heads 32), and the output is written as [B, S, H, D]
// through a transposed view of its allocation, which replaces the merge.
// Numerics: test/Integration/GPU/flash-mma-emulation.test.

// CHECK-LABEL: func.func @packed_heads(
// CHECK-SAME:      %[[QKV:[^:]+]]: tensor<1x64x192xf16>
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[QKV]] read_only : tensor<1x64x192xf16> to memref<1x64x192xf16>
// CHECK:         %[[QS:.*]] = memref.subview %[[BUF]][0, 0, 0] [1, 64, 64] [1, 1, 1] : memref<1x64x192xf16> to memref<1x64x64xf16, strided<[12288, 192, 1]>>
// CHECK:         %[[QE:.*]] = memref.expand_shape %[[QS]] {{\[\[}}0], [1], [2, 3]] {{.*}} into memref<1x64x2x32xf16, strided<[12288, 192, 32, 1]>>
// CHECK:         %[[Q:.*]] = memref.transpose %[[QE]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x64x2x32xf16, strided<[12288, 192, 32, 1]>> to memref<1x2x64x32xf16, strided<[12288, 32, 192, 1]>>
// CHECK:         memref.subview %{{.*}}[0, 0, 64] [1, 64, 64] [1, 1, 1] : memref<1x64x192xf16> to memref<1x64x64xf16, strided<[12288, 192, 1], offset: 64>>
// CHECK:         %[[K:.*]] = memref.transpose {{.*}} to memref<1x2x64x32xf16, strided<[12288, 32, 192, 1], offset: 64>>
// CHECK:         %[[V:.*]] = memref.transpose {{.*}} to memref<1x2x64x32xf16, strided<[12288, 32, 192, 1], offset: 128>>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x64x2x32xf16>
// CHECK:         %[[OV:.*]] = memref.transpose %[[OUT]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x64x2x32xf16> to memref<1x2x64x32xf16, strided<[4096, 32, 64, 1]>>
// CHECK:         gpu.launch
// CHECK:           vector.load %[[Q]]
// CHECK:           nvgpu.device_async_copy %[[K]]{{.*}}, 8 {bypassL1} : memref<1x2x64x32xf16, strided<[12288, 32, 192, 1], offset: 64>> to
// CHECK:           nvgpu.device_async_copy %[[V]]{{.*}}, 8 {bypassL1} : memref<1x2x64x32xf16, strided<[12288, 32, 192, 1], offset: 128>> to
// CHECK:           vector.store %{{.*}}, %[[OV]]
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<1x64x2x32xf16> to tensor<1x64x2x32xf16>
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[R]]
// PLAIN-LABEL: func.func @packed_heads(
// PLAIN-NOT:     linalg.transpose
// PLAIN:         %[[K:.*]] = memref.transpose {{.*}} to memref<1x2x64x32xf16, strided<[12288, 32, 192, 1], offset: 64>>
// PLAIN:         gpu.launch
// PLAIN:           vector.load %[[K]]{{.*}} {alignment = 16 : i64} : memref<1x2x64x32xf16, strided<[12288, 32, 192, 1], offset: 64>>, vector<8xf16>
func.func @packed_heads(%qkv: tensor<1x64x192xf16>) -> tensor<1x64x2x32xf16> {
  %qs = tensor.extract_slice %qkv[0, 0, 0] [1, 64, 64] [1, 1, 1]
      : tensor<1x64x192xf16> to tensor<1x64x64xf16>
  %ks = tensor.extract_slice %qkv[0, 0, 64] [1, 64, 64] [1, 1, 1]
      : tensor<1x64x192xf16> to tensor<1x64x64xf16>
  %vs = tensor.extract_slice %qkv[0, 0, 128] [1, 64, 64] [1, 1, 1]
      : tensor<1x64x192xf16> to tensor<1x64x64xf16>
  %qe = tensor.expand_shape %qs [[0], [1], [2, 3]] output_shape [1, 64, 2, 32]
      : tensor<1x64x64xf16> into tensor<1x64x2x32xf16>
  %ke = tensor.expand_shape %ks [[0], [1], [2, 3]] output_shape [1, 64, 2, 32]
      : tensor<1x64x64xf16> into tensor<1x64x2x32xf16>
  %ve = tensor.expand_shape %vs [[0], [1], [2, 3]] output_shape [1, 64, 2, 32]
      : tensor<1x64x64xf16> into tensor<1x64x2x32xf16>
  %e = tensor.empty() : tensor<1x2x64x32xf16>
  %q = linalg.transpose ins(%qe : tensor<1x64x2x32xf16>)
      outs(%e : tensor<1x2x64x32xf16>) permutation = [0, 2, 1, 3]
  %k = linalg.transpose ins(%ke : tensor<1x64x2x32xf16>)
      outs(%e : tensor<1x2x64x32xf16>) permutation = [0, 2, 1, 3]
  %v = linalg.transpose ins(%ve : tensor<1x64x2x32xf16>)
      outs(%e : tensor<1x2x64x32xf16>) permutation = [0, 2, 1, 3]
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>,
      tensor<1x2x64x32xf16> -> tensor<1x2x64x32xf16>
  %e2 = tensor.empty() : tensor<1x64x2x32xf16>
  %m = linalg.transpose ins(%o : tensor<1x2x64x32xf16>)
      outs(%e2 : tensor<1x64x2x32xf16>) permutation = [0, 2, 1, 3]
  return %m : tensor<1x64x2x32xf16>
}

// -----

// Not folded: K starts 4 elements (8 bytes) into the packed rows, which
// would break the kernel's 16-byte chunks; K keeps its own transposed
// buffer (bufferization copies it), Q is still read in place. The result is
// also returned in [B, H, S, D], so the merge stays and the kernel writes
// the plain layout.

// CHECK-LABEL: func.func @misaligned_key(
// CHECK:         %[[KT:.*]] = linalg.transpose
// CHECK:         memref.transpose {{.*}} to memref<1x2x64x32xf16, strided<[8704, 32, 136, 1]>>
// CHECK:         bufferization.to_buffer %[[KT]] read_only : tensor<1x2x64x32xf16> to memref<1x2x64x32xf16>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x2x64x32xf16>
// CHECK:         %[[O:.*]] = bufferization.to_tensor %[[OUT]]
// CHECK:         %[[M:.*]] = linalg.transpose ins(%[[O]]
// CHECK:         return %[[M]], %[[O]]
func.func @misaligned_key(%qk: tensor<1x64x136xf16>,
                          %v: tensor<1x2x64x32xf16>)
    -> (tensor<1x64x2x32xf16>, tensor<1x2x64x32xf16>) {
  %qs = tensor.extract_slice %qk[0, 0, 0] [1, 64, 64] [1, 1, 1]
      : tensor<1x64x136xf16> to tensor<1x64x64xf16>
  %ks = tensor.extract_slice %qk[0, 0, 68] [1, 64, 64] [1, 1, 1]
      : tensor<1x64x136xf16> to tensor<1x64x64xf16>
  %qe = tensor.expand_shape %qs [[0], [1], [2, 3]] output_shape [1, 64, 2, 32]
      : tensor<1x64x64xf16> into tensor<1x64x2x32xf16>
  %ke = tensor.expand_shape %ks [[0], [1], [2, 3]] output_shape [1, 64, 2, 32]
      : tensor<1x64x64xf16> into tensor<1x64x2x32xf16>
  %e = tensor.empty() : tensor<1x2x64x32xf16>
  %q = linalg.transpose ins(%qe : tensor<1x64x2x32xf16>)
      outs(%e : tensor<1x2x64x32xf16>) permutation = [0, 2, 1, 3]
  %k = linalg.transpose ins(%ke : tensor<1x64x2x32xf16>)
      outs(%e : tensor<1x2x64x32xf16>) permutation = [0, 2, 1, 3]
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>,
      tensor<1x2x64x32xf16> -> tensor<1x2x64x32xf16>
  %e2 = tensor.empty() : tensor<1x64x2x32xf16>
  %m = linalg.transpose ins(%o : tensor<1x2x64x32xf16>)
      outs(%e2 : tensor<1x64x2x32xf16>) permutation = [0, 2, 1, 3]
  return %m, %o : tensor<1x64x2x32xf16>, tensor<1x2x64x32xf16>
}

// -----

// Not folded: a transpose that is not the head split ([0, 1, 3, 2] swaps
// rows and columns: the kernel's rows would not be contiguous).

// CHECK-LABEL: func.func @other_permutation(
// CHECK:         %[[QT:.*]] = linalg.transpose {{.*}} permutation = [0, 1, 3, 2]
// CHECK:         bufferization.to_buffer %[[QT]] read_only : tensor<1x2x64x32xf16> to memref<1x2x64x32xf16>
// CHECK-NOT:     memref.transpose
// CHECK:         gpu.launch
func.func @other_permutation(%qt: tensor<1x2x32x64xf16>,
                             %k: tensor<1x2x64x32xf16>,
                             %v: tensor<1x2x64x32xf16>)
    -> tensor<1x2x64x32xf16> {
  %e = tensor.empty() : tensor<1x2x64x32xf16>
  %q = linalg.transpose ins(%qt : tensor<1x2x32x64xf16>)
      outs(%e : tensor<1x2x64x32xf16>) permutation = [0, 1, 3, 2]
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>,
      tensor<1x2x64x32xf16> -> tensor<1x2x64x32xf16>
  return %o : tensor<1x2x64x32xf16>
}

// -----

// Not folded: the result's only user is a transpose that overwrites it (its
// init), not one that reads it.

// CHECK-LABEL: func.func @result_is_transpose_init(
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x2x64x32xf16>
// CHECK:         %[[O:.*]] = bufferization.to_tensor %[[OUT]]
// CHECK:         %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x64x2x32xf16>) outs(%[[O]] : tensor<1x2x64x32xf16>)
// CHECK:         return %[[T]]
func.func @result_is_transpose_init(%q: tensor<1x2x64x32xf16>,
                                    %k: tensor<1x2x64x32xf16>,
                                    %v: tensor<1x2x64x32xf16>,
                                    %x: tensor<1x64x2x32xf16>)
    -> tensor<1x2x64x32xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>,
      tensor<1x2x64x32xf16> -> tensor<1x2x64x32xf16>
  %t = linalg.transpose ins(%x : tensor<1x64x2x32xf16>)
      outs(%o : tensor<1x2x64x32xf16>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x2x64x32xf16>
}
