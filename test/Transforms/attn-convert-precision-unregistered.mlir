// RUN: attn-opt --allow-unregistered-dialect %s --attn-convert-precision=precision=f16 | FileCheck %s
// RUN: attn-opt --allow-unregistered-dialect %s --attn-tile --attn-lower-to-linalg | FileCheck %s --check-prefix=LOWER

// Ops of unregistered dialects are other ops like any: they keep their f32
// types and get the attn result converted back; the lowering leaves them.
// CHECK-LABEL: func.func @main(
// CHECK:         %[[Y:.*]] = attn.linear {{.*}} -> tensor<2x8xf16>
// CHECK:         %[[YF:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x8xf16>)
// CHECK:         "test.op"(%[[YF]]) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// LOWER-LABEL: func.func @main(
// LOWER:         linalg.generic
// LOWER:         "test.op"
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = attn.weight "w" : tensor<8x8xf32>
  %y = attn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %z = "test.op"(%y) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %z : tensor<2x8xf32>
}
