// RUN: attn-opt %s --attn-to-cpu | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu="attention-kernels=0 vectorize-rows=0 approximate-math=0" | FileCheck %s --check-prefix=PLAIN
// RUN: attn-opt %s --attn-to-cpu="stop-after=bufferized" | FileCheck %s --check-prefix=BUF

// The CPU pipeline's attention: flash blocks whose contractions are
// outer-product vector kernels (vector<16xf32> FMAs) on a K transposed once
// per call, and a softmax in vector loops along the rows whose exp is a
// polynomial (no libm call). With all three turned off: scalar loops (LLVM
// vectorizes them later, or not) and llvm.intr.exp.
// BUF-LABEL: func.func @sdpa
// BUF:         linalg.transpose ins(%{{.*}} : memref<1x2x64x64xf32>) {{.*}} permutation = [0, 1, 3, 2]
// BUF:         scf.forall
// CHECK-LABEL: llvm.func internal @attn_model_forward
// CHECK:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NOT:     llvm.intr.exp
// PLAIN-LABEL: llvm.func internal @attn_model_forward
// PLAIN-NOT:     vector<16xf32>
// PLAIN:         llvm.intr.exp
// PLAIN-NOT:     vector<16xf32>
func.func @sdpa(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  return %0 : tensor<1x2x64x64xf32>
}
