// RUN: attn-opt %s --split-input-file --attn-gpu-copy-kernels | FileCheck %s

// A concatenated output: each part goes into a strided slice of it, which
// one contiguous gpu.memcpy would scramble. It becomes a linalg.copy (a
// kernel after the GPU mapping).
// CHECK-LABEL: func.func @concat_slices
// CHECK: %[[LEFT:.*]] = memref.subview %{{.*}}[0, 0] [8, 16]
// CHECK: linalg.copy ins(%{{.*}} : memref<8x16xf32>) outs(%[[LEFT]] : memref<8x16xf32, strided<[32, 1]>>)
// CHECK: %[[RIGHT:.*]] = memref.subview %{{.*}}[0, 16] [8, 16]
// CHECK: linalg.copy ins(%{{.*}} : memref<8x16xf32>) outs(%[[RIGHT]] : memref<8x16xf32, strided<[32, 1], offset: 16>>)
// CHECK-NOT: memref.copy
func.func @concat_slices(%a: memref<8x16xf32>, %b: memref<8x16xf32>, %out: memref<8x32xf32>) {
  %left = memref.subview %out[0, 0] [8, 16] [1, 1] : memref<8x32xf32> to memref<8x16xf32, strided<[32, 1]>>
  memref.copy %a, %left : memref<8x16xf32> to memref<8x16xf32, strided<[32, 1]>>
  %right = memref.subview %out[0, 16] [8, 16] [1, 1] : memref<8x32xf32> to memref<8x16xf32, strided<[32, 1], offset: 16>>
  memref.copy %b, %right : memref<8x16xf32> to memref<8x16xf32, strided<[32, 1], offset: 16>>
  return
}

// -----

// Identity layouts, dynamic ones included, stay memref.copy (one gpu.memcpy
// each); a contiguous row block at an offset, or a slice of the input (the
// GPU-to-LLVM lowering takes gpu.memcpy of identity layouts only), is a
// kernel.
// CHECK-LABEL: func.func @layouts
// CHECK: linalg.copy ins(%{{.*}} : memref<2x32xf32>) outs(%{{.*}} : memref<2x32xf32, strided<[32, 1], offset: 64>>)
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<?x32xf32> to memref<?x32xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<1x32xf32, strided<[32, 1], offset: 32>>) outs(%{{.*}} : memref<1x32xf32>)
func.func @layouts(%a: memref<2x32xf32>, %out: memref<8x32xf32>, %c: memref<?x32xf32>, %d: memref<?x32xf32>, %row: memref<1x32xf32>) {
  %rows = memref.subview %out[2, 0] [2, 32] [1, 1] : memref<8x32xf32> to memref<2x32xf32, strided<[32, 1], offset: 64>>
  memref.copy %a, %rows : memref<2x32xf32> to memref<2x32xf32, strided<[32, 1], offset: 64>>
  memref.copy %c, %d : memref<?x32xf32> to memref<?x32xf32>
  %second = memref.subview %out[1, 0] [1, 32] [1, 1] : memref<8x32xf32> to memref<1x32xf32, strided<[32, 1], offset: 32>>
  memref.copy %second, %row : memref<1x32xf32, strided<[32, 1], offset: 32>> to memref<1x32xf32>
  return
}

// -----

// A strided source (a column block) is a kernel too.
// CHECK-LABEL: func.func @strided_source
// CHECK: linalg.copy ins(%{{.*}} : memref<4x2xf32, strided<[8, 1], offset: 6>>) outs(%{{.*}} : memref<4x2xf32>)
func.func @strided_source(%in: memref<4x8xf32>, %out: memref<4x2xf32>) {
  %cols = memref.subview %in[0, 6] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1], offset: 6>>
  memref.copy %cols, %out : memref<4x2xf32, strided<[8, 1], offset: 6>> to memref<4x2xf32>
  return
}

// -----

// Copies inside GPU code are left alone.
// CHECK-LABEL: func.func @in_launch
// CHECK: gpu.launch
// CHECK: memref.copy
func.func @in_launch(%a: memref<2x2xf32>, %out: memref<2x4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %view = memref.subview %out[0, 2] [2, 2] [1, 1] : memref<2x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
    memref.copy %a, %view : memref<2x2xf32> to memref<2x2xf32, strided<[4, 1], offset: 2>>
    gpu.terminator
  }
  return
}
