// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// x W^T with a bias + relu epilogue: vector<16xf32> accumulators over k,
// column blocks in parallel, the epilogue folded into the store.
// CHECK-LABEL: func.func @nt_matmul_epilogue
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] : memref<8x64xf32>, vector<16xf32>
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}] : memref<128x64xf32>, vector<16xf32>
// CHECK: vector.fma
// CHECK: vector.reduction <add>
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %arg3
// CHECK-NOT: linalg.generic
func.func @nt_matmul_epilogue(%x: memref<8x64xf32>, %w: memref<128x64xf32>, %bias: memref<128xf32>, %out: memref<8x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x64xf32>, memref<128x64xf32>) outs(%c : memref<8x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<8x128xf32>, memref<128xf32>) outs(%out : memref<8x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<8x128xf32>
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#bn = affine_map<(d0, d1, d2) -> (d2, d1)>

// K not a multiple of the vector width, and the NN form: left alone.
// CHECK-LABEL: func.func @near_misses
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: vector.fma
func.func @near_misses(%x: memref<8x20xf32>, %w: memref<16x20xf32>, %c: memref<8x16xf32>, %y: memref<8x64xf32>, %v: memref<64x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<8x20xf32>, memref<16x20xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #bn, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y, %v : memref<8x64xf32>, memref<64x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
