// RUN: attn-opt %s --attn-lower-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not='attn.ffn'

// Gated FFN: the activation is the gate projection's epilogue, the up
// projection has none, their product feeds the down projection.
// CHECK-LABEL: func.func @ffn_gated(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[WG:[^:]+]]: tensor<8x4xf32>, %[[WU:[^:]+]]: tensor<8x4xf32>, %[[WD:[^:]+]]: tensor<4x8xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[GATE:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FLAT]], %[[WG]] : tensor<6x4xf32>, tensor<8x4xf32>)
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[GATE]] : tensor<6x8xf32>)
// CHECK:           arith.negf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:         %[[G3:.*]] = tensor.expand_shape %[[ACT]]
// CHECK:         %[[FLAT2:.*]] = tensor.collapse_shape %[[X]]
// CHECK:         %[[UP:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FLAT2]], %[[WU]] : tensor<6x4xf32>, tensor<8x4xf32>)
// CHECK:         %[[U3:.*]] = tensor.expand_shape %[[UP]]
// CHECK:         %[[PROD:.*]] = linalg.generic {{.*}} ins(%[[G3]], %[[U3]] : tensor<2x3x8xf32>, tensor<2x3x8xf32>)
// CHECK:           arith.mulf
// CHECK:         %[[PF:.*]] = tensor.collapse_shape %[[PROD]]
// CHECK:         %[[DOWN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PF]], %[[WD]] : tensor<6x8xf32>, tensor<4x8xf32>)
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[DOWN]]
// CHECK:         return %[[R]] : tensor<2x3x4xf32>
func.func @ffn_gated(%x: tensor<2x3x4xf32>, %wg: tensor<8x4xf32>, %wu: tensor<8x4xf32>, %wd: tensor<4x8xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.ffn %x gate(%wg) up(%wu) down(%wd) activation = silu : (tensor<2x3x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
