// RUN: attn-opt %s --split-input-file --attn-gpu-mma-matmul="staging=plain ldmatrix=0" | FileCheck %s

// Conversions around a tensor-core matmul of an f16 model stay in the kernel:
// an epilogue input widened from f16 (a bias) is loaded narrow and widened in
// registers, and a result that only a truncf generic reads is stored narrow
// into that generic's output (viewed [M, N]). The widening and truncating
// generics and the f32 buffers go. Numerics: mma-fragment-layout.test
// ("narrow bias" cases) and the f16 whole models of model-emulation.test.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#n = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @narrow_bias_and_result(
// CHECK-SAME:    %[[X:[^:]+]]: memref<32x64xf16>, %[[W:[^:]+]]: memref<64x64xf16>, %[[BIAS:[^:]+]]: memref<64xf16>, %[[Y:[^:]+]]: memref<1x32x64xf16>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[Y2:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1], [2]] : memref<1x32x64xf16> into memref<32x64xf16>
// CHECK:         gpu.launch
// CHECK:           %[[B0:.*]] = memref.load %[[BIAS]][%{{.*}}] : memref<64xf16>
// CHECK:           %[[B0W:.*]] = arith.extf %[[B0]] : f16 to f32
// CHECK:           arith.addf %{{.*}}, %[[B0W]] : f32
// CHECK:           %[[T:.*]] = arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// CHECK:           vector.store %[[T]], %[[Y2]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<32x64xf16>, vector<2xf16>
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc
// CHECK:         return
func.func @narrow_bias_and_result(%x: memref<32x64xf16>, %w: memref<64x64xf16>, %bias: memref<64xf16>, %y: memref<1x32x64xf16>) {
  %cst = arith.constant 0.0 : f32
  %xf = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x64xf16>) outs(%xf : memref<32x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x64xf16>) outs(%wf : memref<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %bf = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%bias : memref<64xf16>) outs(%bf : memref<64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %c = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<32x64xf32>, memref<64x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id2, #n, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bf : memref<32x64xf32>, memref<64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %0 = arith.addf %v, %bv : f32
    linalg.yield %0 : f32
  }
  %c3 = memref.expand_shape %c [[0, 1], [2]] output_shape [1, 32, 64] : memref<32x64xf32> into memref<1x32x64xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c3 : memref<1x32x64xf32>) outs(%y : memref<1x32x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  memref.dealloc %xf : memref<32x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  memref.dealloc %bf : memref<64xf32>
  memref.dealloc %c : memref<32x64xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#n = affine_map<(d0, d1) -> (d1)>

// The f32 result is also read as such (%z): it is stored in f32 and the
// truncating generic stays. The widened bias is read again after the kernel:
// the kernel still loads the f16 bias, but the widened copy stays.
// CHECK-LABEL: func.func @result_read_wide(
// CHECK-SAME:    %[[BIAS:[^:]+]]: memref<64xf16>, %[[Y:[^:]+]]: memref<32x64xf16>, %[[Z:[^:]+]]: memref<32x64xf32>, %[[ZB:[^:]+]]: memref<64xf32>)
// CHECK:         %[[BF:.*]] = memref.alloc() : memref<64xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[BIAS]] : memref<64xf16>) outs(%[[BF]] : memref<64xf32>)
// CHECK:         %[[C:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[BIAS]][%{{.*}}] : memref<64xf16>
// CHECK:           vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<32x64xf32>, vector<2xf32>
// CHECK:           gpu.terminator
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[C]] : memref<32x64xf32>) outs(%[[Y]] : memref<32x64xf16>)
// CHECK:           arith.truncf
// CHECK:         memref.copy %[[C]], %[[Z]]
// CHECK:         memref.copy %[[BF]], %[[ZB]]
// CHECK:         return
func.func @result_read_wide(%x: memref<32x64xf16>, %w: memref<64x64xf16>, %bias: memref<64xf16>, %y: memref<32x64xf16>, %z: memref<32x64xf32>, %zb: memref<64xf32>) {
  %cst = arith.constant 0.0 : f32
  %xf = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x64xf16>) outs(%xf : memref<32x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x64xf16>) outs(%wf : memref<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %bf = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%bias : memref<64xf16>) outs(%bf : memref<64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %c = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<32x64xf32>, memref<64x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id2, #n, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bf : memref<32x64xf32>, memref<64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %0 = arith.addf %v, %bv : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<32x64xf32>) outs(%y : memref<32x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  memref.copy %c, %z : memref<32x64xf32> to memref<32x64xf32>
  memref.copy %bf, %zb : memref<64xf32> to memref<64xf32>
  memref.dealloc %xf : memref<32x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  memref.dealloc %bf : memref<64xf32>
  memref.dealloc %c : memref<32x64xf32>
  return
}

// -----

// The epilogue's output buffer is allocated between the contraction and the
// epilogue (as bufferization places it) and C's buffer is reused later for
// another result that overwrites all of it: the epilogue still fuses (the
// allocation moves above the kernel, which writes it; nothing reads what the
// product left in C).
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#n = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @epilogue_after_alloc(
// CHECK-SAME:    %[[BIAS:[^:]+]]: memref<64xf32>, %[[Z:[^:]+]]: memref<32x64xf32>)
// CHECK:         %[[C:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK:         %[[O:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK:         gpu.launch
// CHECK:           vector.store %{{.*}}, %[[O]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<32x64xf32>, vector<2xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.fill
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[O]] : memref<32x64xf32>) outs(%[[C]] : memref<32x64xf32>)
// CHECK:           arith.negf
// CHECK:         memref.copy %[[C]], %[[Z]]
func.func @epilogue_after_alloc(%x: memref<32x64xf16>, %w: memref<64x64xf16>, %bias: memref<64xf32>, %z: memref<32x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %xf = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x64xf16>) outs(%xf : memref<32x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x64xf16>) outs(%wf : memref<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %c = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<32x64xf32>, memref<64x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %o = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #n, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<32x64xf32>, memref<64xf32>) outs(%o : memref<32x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %0 = arith.addf %v, %bv : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%o : memref<32x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %0 = arith.negf %v : f32
    linalg.yield %0 : f32
  }
  memref.copy %c, %z : memref<32x64xf32> to memref<32x64xf32>
  memref.dealloc %xf : memref<32x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  memref.dealloc %o : memref<32x64xf32>
  memref.dealloc %c : memref<32x64xf32>
  return
}

// -----

// The same, but the op after the epilogue reads C (the product) before
// overwriting it: the epilogue stays a generic of its own.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#n = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @c_read_later(
// CHECK:         gpu.launch
// CHECK:           gpu.terminator
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.negf
func.func @c_read_later(%x: memref<32x64xf16>, %w: memref<64x64xf16>, %bias: memref<64xf32>, %z: memref<32x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %xf = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x64xf16>) outs(%xf : memref<32x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %wf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x64xf16>) outs(%wf : memref<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  }
  %c = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<32x64xf32>, memref<64x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  %o = memref.alloc() : memref<32x64xf32>
  linalg.generic {indexing_maps = [#id2, #n, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<32x64xf32>, memref<64xf32>) outs(%o : memref<32x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %0 = arith.addf %v, %bv : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%o : memref<32x64xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %s = arith.addf %v, %out : f32
    %0 = arith.negf %s : f32
    linalg.yield %0 : f32
  }
  memref.copy %c, %z : memref<32x64xf32> to memref<32x64xf32>
  memref.dealloc %xf : memref<32x64xf32>
  memref.dealloc %wf : memref<64x64xf32>
  memref.dealloc %o : memref<32x64xf32>
  memref.dealloc %c : memref<32x64xf32>
  return
}
