// RUN: attn-opt %s --split-input-file --attn-to-cpu="approximate-math=0" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-to-cpu | FileCheck %s --check-prefix=APPROX

// Without attn-approximate-math, an erf GELU in vector code (the matmul
// kernel's epilogue, vectorized rows) is lowered lane by lane to libm's
// erff before vector-to-llvm runs, so no vector op survives into the LLVM
// dialect (it used to leave vector.extract next to llvm.call @erff).
// CHECK-LABEL: llvm.func internal @attn_model_forward
// CHECK-NOT:     {{ vector\.(extract|insert)}}
// CHECK:         llvm.call @erff
// CHECK-NOT:     {{ vector\.(extract|insert)}}
// CHECK:         llvm.func @erff(f32) -> f32
// APPROX-LABEL: llvm.func internal @attn_model_forward
// APPROX-NOT:    @erff
func.func @ffn_gelu(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %up = attn.weight "up" : tensor<128x64xf32>
  %down = attn.weight "down" : tensor<64x128xf32>
  %y = attn.ffn %x up(%up) down(%down) activation = gelu : (tensor<4x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// CHECK-LABEL: llvm.func internal @attn_model_forward
// CHECK-NOT:     {{ vector\.(extract|insert)}}
// CHECK:         llvm.call @erff
func.func @gelu_rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = attn.gelu %x : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
