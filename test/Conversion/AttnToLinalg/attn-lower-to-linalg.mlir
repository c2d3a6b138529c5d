// RUN: attn-opt %s --split-input-file --attn-lower-to-linalg \
// RUN:   | FileCheck %s --implicit-check-not='xi1>' \
// RUN:       --implicit-check-not='attn.{{(relu|gelu|silu|add|softmax|layer|rms_norm|linear|ffn|embedding|sinusoidal_pos|learned_pos|rotary|cache_write|sdpa|mha|yield)}}'

// Lowering of every attn op to linalg/tensor/arith/math on tensors. The
// implicit checks hold for every case: no attn op except attn.weight
// survives, and no boolean tensor (a materialized Sq x Sk mask) is ever
// built; masks are computed from linalg.index inside the score generic.

//===----------------------------------------------------------------------===//
// Pointwise activations
//===----------------------------------------------------------------------===//

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @relu(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x4xf32>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[MAX:.*]] = arith.maximumf %[[IN]], %[[ZERO]] : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
// CHECK:         return %[[R]] : tensor<2x4xf32>
func.func @relu(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = attn.relu %x : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// gelu (exact): 0.5 x (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[IN]], %[[RSQRT2]] : f32
// CHECK-NEXT:      %[[ERF:.*]] = math.erf %[[S]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[P:.*]] = arith.addf %[[ERF]], %[[ONE]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[H:.*]] = arith.mulf %[[IN]], %[[HALF]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK-NOT:     math.tanh
// CHECK:         return %[[R]]
func.func @gelu(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = attn.gelu %x : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// gelu (tanh): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// CHECK-LABEL: func.func @gelu_tanh(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[X2:.*]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT:      %[[X3:.*]] = arith.mulf %[[X2]], %[[IN]] : f32
// CHECK-NEXT:      %[[C:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT:      %[[CX3:.*]] = arith.mulf %[[X3]], %[[C]] : f32
// CHECK-NEXT:      %[[INNER:.*]] = arith.addf %[[IN]], %[[CX3]] : f32
// CHECK-NEXT:      %[[K:.*]] = arith.constant 0.797884583 : f32
// CHECK-NEXT:      %[[ARG:.*]] = arith.mulf %[[INNER]], %[[K]] : f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[ARG]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[P:.*]] = arith.addf %[[T]], %[[ONE]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[H:.*]] = arith.mulf %[[IN]], %[[HALF]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK-NOT:     math.erf
// CHECK:         return %[[R]]
func.func @gelu_tanh(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = attn.gelu %x approximate = tanh : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// silu: x / (1 + exp(-x)).
// CHECK-LABEL: func.func @silu(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[IN]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.divf %[[IN]], %[[D]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[R]]
func.func @silu(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = attn.silu %x : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @add(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<2x3x4xf32>, %[[B:[^:]+]]: tensor<2x3x4xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2x3x4xf32>)
// CHECK-NEXT:    ^bb0(%[[L:[^:]+]]: f32, %[[RR:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[L]], %[[RR]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @add(%a: tensor<2x3x4xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.add %a, %b : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

// -----

// Softmax over the last dimension: max reduction, sum of exp(x - max)
// reduction, then exp(x - max) / sum. No transpose is needed.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @softmax_last(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[MAXINIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[MAXINIT]] : tensor<2x3xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[SUMINIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP1]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<2x3x4xf32>, tensor<2x3xf32>) outs(%[[SUMINIT]] : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %[[M:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[IN]], %[[M]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK-NEXT:      linalg.yield %[[A]] : f32
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP1]], #[[MAP0]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[R]] : tensor<2x3x4xf32>
func.func @softmax_last(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.softmax %x : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Softmax over a non-last dimension: move it last, normalize, move it back.
// CHECK-LABEL: func.func @softmax_dim1(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x4x3xf32>) permutation = [0, 2, 1]
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[T]] : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[T]], %[[MAX]] : tensor<2x4x3xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} ins(%[[T]], %[[MAX]], %[[SUM]] : tensor<2x4x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4x3xf32>)
// CHECK:         %[[R:.*]] = linalg.transpose ins(%[[N]] : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) permutation = [0, 2, 1]
// CHECK:         return %[[R]] : tensor<2x3x4xf32>
func.func @softmax_dim1(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.softmax %x dim = 1 : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// The inverse permutation is used on the way back ([1, 2, 0] -> [2, 0, 1]).
// CHECK-LABEL: func.func @softmax_dim0(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3x4x2xf32>) permutation = [1, 2, 0]
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4x2xf32>)
// CHECK:         %[[R:.*]] = linalg.transpose ins(%[[N]] : tensor<3x4x2xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) permutation = [2, 0, 1]
// CHECK:         return %[[R]]
func.func @softmax_dim0(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.softmax %x dim = 0 : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

// -----

// layer_norm: sum -> mean, centered sum of squares, then
// (x - mean) * rsqrt(var + eps) * gamma + beta.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[G:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           arith.addf
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[SUM]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           %[[D:.*]] = arith.constant 4.000000e+00 : f32
// CHECK:           arith.divf %{{.*}}, %[[D]] : f32
// CHECK:         %[[SSQ:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP1]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %[[M:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:      %[[C:.*]] = arith.subf %[[IN]], %[[M]] : f32
// CHECK-NEXT:      %[[C2:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[ACC]], %[[C2]] : f32
// CHECK-NEXT:      linalg.yield %[[A]] : f32
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]], #[[MAP2]], #[[MAP1]], #[[MAP0]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[SSQ]], %[[G]], %[[B]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[XI:[^:]+]]: f32, %[[SI:[^:]+]]: f32, %[[GI:[^:]+]]: f32, %[[BI:[^:]+]]: f32, %[[MI:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[XC:.*]] = arith.subf %[[XI]], %[[MI]] : f32
// CHECK-NEXT:      %[[D2:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:      %[[VAR:.*]] = arith.divf %[[SI]], %[[D2]] : f32
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT:      %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT:      %[[INV:.*]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[XC]], %[[INV]] : f32
// CHECK-NEXT:      %[[NG:.*]] = arith.mulf %[[N]], %[[GI]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.addf %[[NG]], %[[BI]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[R]] : tensor<2x3x4xf32>
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.layer_norm %x, %g, %b : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// rms_norm: sum of squares (no mean), x * rsqrt(ms + eps) * gamma.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8xf32>, %[[G:[^:]+]]: tensor<8xf32>)
// CHECK:         %[[SSQ:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x8xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK-NEXT:      linalg.yield %[[A]] : f32
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]], #[[MAP0]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[SSQ]], %[[G]] : tensor<2x8xf32>, tensor<2xf32>, tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[XI:[^:]+]]: f32, %[[SI:[^:]+]]: f32, %[[GI:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      %[[MS:.*]] = arith.divf %[[SI]], %[[D]] : f32
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT:      %[[ME:.*]] = arith.addf %[[MS]], %[[EPS]] : f32
// CHECK-NEXT:      %[[INV:.*]] = math.rsqrt %[[ME]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[XI]], %[[INV]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[N]], %[[GI]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[R]] : tensor<2x8xf32>
func.func @rms_norm(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = attn.rms_norm %x, %g epsilon = 1.0e-05 : tensor<2x8xf32>, tensor<8xf32>
  return %0 : tensor<2x8xf32>
}

//===----------------------------------------------------------------------===//
// Projections and feed-forward
//===----------------------------------------------------------------------===//

// -----

// Rank 2, no bias: one contraction against the transposed weight, nothing
// else (no reshapes, no bias generic).
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear_2d(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<6x4xf32>, %[[W:[^:]+]]: tensor<5x4xf32>)
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<6x5xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]] : tensor<6x4xf32>, tensor<5x4xf32>) outs(%[[ACC]] : tensor<6x5xf32>)
// CHECK-NEXT:    ^bb0(%[[A:[^:]+]]: f32, %[[B:[^:]+]]: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<6x5xf32>
// CHECK-NEXT:    return %[[R]] : tensor<6x5xf32>
func.func @linear_2d(%x: tensor<6x4xf32>, %w: tensor<5x4xf32>) -> tensor<6x5xf32> {
  %0 = attn.linear %x, %w : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}

// -----

// Rank 3 with bias: collapse to a matrix, contract, add the bias broadcast
// along rows, expand back.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[MAP3:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[MAP4:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @linear_3d_bias(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[W:[^:]+]]: tensor<5x4xf32>, %[[B:[^:]+]]: tensor<5xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[MM:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FLAT]], %[[W]] : tensor<6x4xf32>, tensor<5x4xf32>) outs(%{{.*}} : tensor<6x5xf32>)
// CHECK:         %[[BIASED:.*]] = linalg.generic {indexing_maps = [#[[MAP3]], #[[MAP4]], #[[MAP3]]], iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %[[B]] : tensor<6x5xf32>, tensor<5xf32>) outs(%{{.*}} : tensor<6x5xf32>)
// CHECK:           arith.addf
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[BIASED]] {{\[}}[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
// CHECK:         return %[[R]] : tensor<2x3x5xf32>
func.func @linear_3d_bias(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %0 = attn.linear %x, %w, %b : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// ffn: up projection (+bias), activation, down projection (+bias).
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @ffn(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[W1:[^:]+]]: tensor<8x4xf32>, %[[B1:[^:]+]]: tensor<8xf32>, %[[W2:[^:]+]]: tensor<4x8xf32>, %[[B2:[^:]+]]: tensor<4xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[UP:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FLAT]], %[[W1]] : tensor<6x4xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<6x8xf32>)
// CHECK:         %[[UPB:.*]] = linalg.generic {{.*}} ins(%[[UP]], %[[B1]] : tensor<6x8xf32>, tensor<8xf32>)
// Bias and activation share one epilogue generic.
// CHECK:           arith.addf
// CHECK:           arith.negf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:         %[[H:.*]] = tensor.expand_shape %[[UPB]] {{\[}}[0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xf32> into tensor<2x3x8xf32>
// CHECK:         %[[HF:.*]] = tensor.collapse_shape %[[H]] {{\[}}[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK:         %[[DOWN:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[HF]], %[[W2]] : tensor<6x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<6x4xf32>)
// CHECK:         %[[DOWNB:.*]] = linalg.generic {{.*}} ins(%[[DOWN]], %[[B2]] : tensor<6x4xf32>, tensor<4xf32>)
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[DOWNB]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK:         return %[[R]] : tensor<2x3x4xf32>
func.func @ffn(%x: tensor<2x3x4xf32>, %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8xf32>, %b2: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.ffn %x up(%w1, %b1) down(%w2, %b2) activation = silu : (tensor<2x3x4xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

//===----------------------------------------------------------------------===//
// Embeddings and positions
//===----------------------------------------------------------------------===//

// -----

// Ids are clamped into [0, V) and the row read with tensor.extract.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<2x3xi32>, %[[T:[^:]+]]: tensor<10x4xf32>)
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IDS]] : tensor<2x3xi32>) outs(%[[INIT]] : tensor<2x3x4xf32>)
// CHECK-NEXT:    ^bb0(%[[ID:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[IDX:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[LO:.*]] = arith.maxsi %[[IDX]], %[[C0]] : index
// CHECK-NEXT:      %[[C9:.*]] = arith.constant 9 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.minsi %[[LO]], %[[C9]] : index
// CHECK-NEXT:      %[[COL:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<10x4xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         return %[[R]] : tensor<2x3x4xf32>
func.func @embedding(%ids: tensor<2x3xi32>, %t: tensor<10x4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.embedding %ids, %t : (tensor<2x3xi32>, tensor<10x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i), p = offset + s.
// CHECK-LABEL: func.func @sinusoidal_pos(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x3x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x3x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[S:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[C:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[OFF:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[POS:.*]] = arith.addi %[[S]], %[[OFF]] : index
// CHECK:           %[[PAIR:.*]] = arith.divui %[[C]], %{{.*}} : index
// CHECK:           %[[PAR:.*]] = arith.remui %[[C]], %{{.*}} : index
// CHECK:           %[[ODD:.*]] = arith.cmpi ne, %[[PAR]], %{{.*}} : index
// CHECK:           %[[PAIRI:.*]] = arith.index_cast %[[PAIR]] : index to i64
// CHECK:           %[[FREQ:.*]] = math.exp
// CHECK:           %[[POSI:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK-NEXT:      %[[POSF:.*]] = arith.sitofp %[[POSI]] : i64 to f32
// CHECK-NEXT:      %[[ANGLE:.*]] = arith.mulf %[[POSF]], %[[FREQ]] : f32
// CHECK-DAG:       %[[SIN:.*]] = math.sin %[[ANGLE]] : f32
// CHECK-DAG:       %[[COS:.*]] = math.cos %[[ANGLE]] : f32
// CHECK:           %[[PE:.*]] = arith.select %[[ODD]], %[[COS]], %[[SIN]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.addf %[[IN]], %[[PE]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[R]]
func.func @sinusoidal_pos(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %0 = attn.sinusoidal_pos %x offset = 2 : tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

// Rows [offset, offset + S) of the table, broadcast over the batch.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @learned_pos(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[T:[^:]+]]: tensor<16x4xf32>)
// CHECK:         %[[ROWS:.*]] = tensor.extract_slice %[[T]][5, 0] [3, 4] [1, 1] : tensor<16x4xf32> to tensor<3x4xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP0]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[ROWS]] : tensor<2x3x4xf32>, tensor<3x4xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[R]]
func.func @learned_pos(%x: tensor<2x3x4xf32>, %t: tensor<16x4xf32>) -> tensor<2x3x4xf32> {
  %0 = attn.learned_pos %x, %t offset = 5 : tensor<2x3x4xf32>, tensor<16x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Rotate-half RoPE on the first rotary_dim = 4 of 8 channels (half = 2):
// the partner channel c +- 2 is read with tensor.extract, channels >= 4
// pass through.
// CHECK-LABEL: func.func @rotary(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x3x8xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x2x3x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[B:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[H:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[S:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[C:.*]] = linalg.index 3 : index
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[ROT:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[INROT:.*]] = arith.cmpi ult, %[[C]], %[[ROT]] : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi ult, %[[C]], %[[HALF]] : index
// CHECK-DAG:       %[[PAIR:.*]] = arith.remui %[[C]], %[[HALF]] : index
// CHECK-DAG:       %[[UP:.*]] = arith.addi %[[C]], %[[HALF]] : index
// CHECK-DAG:       %[[DOWN:.*]] = arith.subi %[[C]], %[[HALF]] : index
// CHECK:           %[[P1:.*]] = arith.select %[[FIRST]], %[[UP]], %[[DOWN]] : index
// CHECK-NEXT:      %[[PARTNER:.*]] = arith.select %[[INROT]], %[[P1]], %[[C]] : index
// CHECK-NEXT:      %[[OTHER:.*]] = tensor.extract %[[X]][%[[B]], %[[H]], %[[S]], %[[PARTNER]]] : tensor<1x2x3x8xf32>
// CHECK-NEXT:      %[[OFF:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[POS:.*]] = arith.addi %[[S]], %[[OFF]] : index
// CHECK:           %[[PAIRI:.*]] = arith.index_cast %[[PAIR]] : index to i64
// CHECK:           %[[POSI:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK:           %[[COS:.*]] = math.cos %[[THETA:.*]] : f32
// CHECK-NEXT:      %[[SIN:.*]] = math.sin %[[THETA]] : f32
// CHECK-NEXT:      %[[NSIN:.*]] = arith.negf %[[SIN]] : f32
// CHECK-NEXT:      %[[SSIN:.*]] = arith.select %[[FIRST]], %[[NSIN]], %[[SIN]] : f32
// CHECK-DAG:       %[[T1:.*]] = arith.mulf %[[OTHER]], %[[SSIN]] : f32
// CHECK-DAG:       %[[T0:.*]] = arith.mulf %[[IN]], %[[COS]] : f32
// CHECK:           %[[ROTATED:.*]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.select %[[INROT]], %[[ROTATED]], %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[R]]
func.func @rotary(%x: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = attn.rotary %x offset = 1 rotary_dim = 4 : tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// Scaled frequencies: theta = p * inv_freq[pair], read from a constant
// table, and cos and sin multiplied by the scale.
// CHECK-LABEL: func.func @rotary_scaled(
// CHECK:         %[[TABLE:.*]] = arith.constant dense<[2.500000e-01, 2.500000e-03]> : tensor<2xf32>
// CHECK:         linalg.generic
// CHECK:           %[[PAIR:.*]] = arith.remui
// CHECK:           %[[FREQ:.*]] = tensor.extract %[[TABLE]][%[[PAIR]]] : tensor<2xf32>
// CHECK:           %[[THETA:.*]] = arith.mulf %{{.*}}, %[[FREQ]] : f32
// CHECK-NEXT:      %[[COS:.*]] = math.cos %[[THETA]] : f32
// CHECK-NEXT:      %[[SIN:.*]] = math.sin %[[THETA]] : f32
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 1.125000e+00 : f32
// CHECK-NEXT:      arith.mulf %[[COS]], %[[SCALE]] : f32
// CHECK-NEXT:      arith.mulf %[[SIN]], %[[SCALE]] : f32
// CHECK-NOT:       math.exp
// CHECK:           linalg.yield
func.func @rotary_scaled(%x: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = attn.rotary %x rotary_dim = 4 inv_freq = [0.25, 0.0025] scale = 1.125 : tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// LongRoPE: row b's length L = S + positions[b] (3 + start) picks the long
// table past length_threshold = 12, the short one (inv_freq) otherwise.
// CHECK-LABEL: func.func @rotary_long_table(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x3x8xf32>, %[[P:[^:]+]]: tensor<1xi64>)
// CHECK-DAG:     %[[SHORT:.*]] = arith.constant dense<[1.000000e+00, 0.00999999977]> : tensor<2xf32>
// CHECK-DAG:     %[[LONG:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-03]> : tensor<2xf32>
// CHECK-DAG:     %[[S:.*]] = arith.constant 3 : index
// CHECK:         linalg.generic
// CHECK:           %[[B:.*]] = linalg.index 0 : index
// CHECK:           %[[PAIR:.*]] = arith.remui
// CHECK:           %[[SF:.*]] = tensor.extract %[[SHORT]][%[[PAIR]]] : tensor<2xf32>
// CHECK:           %[[S0:.*]] = arith.addi %[[S]], %{{.*}} : index
// CHECK-NEXT:      %[[START:.*]] = tensor.extract %[[P]][%[[B]]] : tensor<1xi64>
// CHECK-NEXT:      %[[STARTI:.*]] = arith.index_cast %[[START]] : i64 to index
// CHECK-NEXT:      %[[L:.*]] = arith.addi %[[S0]], %[[STARTI]] : index
// CHECK-NEXT:      %[[N:.*]] = arith.constant 12 : index
// CHECK-NEXT:      %[[ISLONG:.*]] = arith.cmpi sgt, %[[L]], %[[N]] : index
// CHECK-NEXT:      %[[LF:.*]] = tensor.extract %[[LONG]][%[[PAIR]]] : tensor<2xf32>
// CHECK-NEXT:      %[[FREQ:.*]] = arith.select %[[ISLONG]], %[[LF]], %[[SF]] : f32
// CHECK:           %[[THETA:.*]] = arith.mulf %{{.*}}, %[[FREQ]] : f32
// CHECK-NEXT:      math.cos %[[THETA]] : f32
// CHECK-NEXT:      math.sin %[[THETA]] : f32
// CHECK-NEXT:      arith.constant 1.250000e+00 : f32
// CHECK:           linalg.yield
func.func @rotary_long_table(%x: tensor<1x2x3x8xf32>, %p: tensor<1xi64>) -> tensor<1x2x3x8xf32> {
  %0 = attn.rotary %x positions(%p : tensor<1xi64>) rotary_dim = 4 inv_freq = [1.0, 0.01] scale = 1.25 length_threshold = 12 long_inv_freq = [0.5, 0.0025] : tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// Dynamic NTK over a run-time sequence length S: past length_threshold =
// 12 the base grows to 10000 * (2 * S / 12 - 1)^(8 / 6) and the frequency
// is 1 / base_S^(2i / 8), in f32 inside the body; up to 12, base^(-2i / 8).
// CHECK-LABEL: func.func @rotary_ntk(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x?x8xf32>)
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<1x2x?x8xf32>
// CHECK:         linalg.generic
// CHECK:           %[[PAIR:.*]] = arith.remui
// CHECK:           %[[BASEF:.*]] = math.exp
// CHECK:           %[[L:.*]] = arith.addi %[[S]], %{{.*}} : index
// CHECK-NEXT:      %[[N:.*]] = arith.constant 12 : index
// CHECK-NEXT:      %[[ISLONG:.*]] = arith.cmpi sgt, %[[L]], %[[N]] : index
// CHECK-NEXT:      %[[LI:.*]] = arith.index_cast %[[L]] : index to i64
// CHECK-NEXT:      %[[LF:.*]] = arith.sitofp %[[LI]] : i64 to f32
// CHECK-NEXT:      %[[F:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[FL:.*]] = arith.mulf %[[F]], %[[LF]] : f32
// CHECK-NEXT:      %[[NF:.*]] = arith.constant 1.200000e+01 : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[FL]], %[[NF]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[RATIO:.*]] = arith.subf %[[Q]], %[[ONE]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = arith.constant 1.33333337 : f32
// CHECK-NEXT:      %[[GROWTH:.*]] = math.powf %[[RATIO]], %[[EXP]] : f32
// CHECK-NEXT:      %[[BASE:.*]] = arith.constant 1.000000e+04 : f32
// CHECK-NEXT:      %[[GROWN:.*]] = arith.mulf %[[BASE]], %[[GROWTH]] : f32
// CHECK-NEXT:      %[[PI:.*]] = arith.index_cast %[[PAIR]] : index to i64
// CHECK-NEXT:      %[[PF:.*]] = arith.sitofp %[[PI]] : i64 to f32
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[TWOI:.*]] = arith.mulf %[[PF]], %[[TWO]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      %[[SHAPE:.*]] = arith.divf %[[TWOI]], %[[R]] : f32
// CHECK-NEXT:      %[[POW:.*]] = math.powf %[[GROWN]], %[[SHAPE]] : f32
// CHECK-NEXT:      %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NTKF:.*]] = arith.divf %[[ONE2]], %[[POW]] : f32
// CHECK-NEXT:      %[[FREQ:.*]] = arith.select %[[ISLONG]], %[[NTKF]], %[[BASEF]] : f32
// CHECK:           arith.mulf %{{.*}}, %[[FREQ]] : f32
// CHECK:           linalg.yield
func.func @rotary_ntk(%x: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %0 = attn.rotary %x length_threshold = 12 ntk_factor = 2.0 : tensor<1x2x?x8xf32>
  return %0 : tensor<1x2x?x8xf32>
}

//===----------------------------------------------------------------------===//
// Scaled dot-product attention
//===----------------------------------------------------------------------===//

// -----

// Plain scaled_dot (scale 1/sqrt(4) = 0.5), no mask: the query is viewed as
// [B, Hkv, G, Sq, D] = [1, 2, 1, 3, 4]; scores are a contraction over D,
// then scale, row max, row sum of exp, P.V contraction over Sk, and the
// division by the row sum.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP3:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP4:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>
// CHECK-LABEL: func.func @sdpa_scaled_dot(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x2x3x4xf32>, %[[K:[^:]+]]: tensor<1x2x5x4xf32>, %[[V:[^:]+]]: tensor<1x2x5x6xf32>)
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 3, 4] : tensor<1x2x3x4xf32> into tensor<1x2x1x3x4xf32>
// CHECK:         %[[RAW:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QG]], %[[K]] : tensor<1x2x1x3x4xf32>, tensor<1x2x5x4xf32>) outs(%{{.*}} : tensor<1x2x1x3x5xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [#[[MAP3]], #[[MAP3]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[RAW]] : tensor<1x2x1x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[SC:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK-NEXT:      linalg.yield %[[SC]] : f32
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[S]] : tensor<1x2x1x3x5xf32>) outs(%{{.*}} : tensor<1x2x1x3xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[MAX]] : tensor<1x2x1x3x5xf32>, tensor<1x2x1x3xf32>) outs(%{{.*}} : tensor<1x2x1x3x5xf32>)
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<1x2x1x3x5xf32>) outs(%{{.*}} : tensor<1x2x1x3xf32>)
// CHECK:         %[[PV:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP4]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[V]] : tensor<1x2x1x3x5xf32>, tensor<1x2x5x6xf32>) outs(%{{.*}} : tensor<1x2x1x3x6xf32>)
// CHECK:         %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[PV]], %[[SUM]] : tensor<1x2x1x3x6xf32>, tensor<1x2x1x3xf32>) outs(%{{.*}} : tensor<1x2x1x3x6xf32>)
// CHECK:           arith.divf
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x1x3x6xf32> into tensor<1x2x3x6xf32>
// CHECK:         return %[[R]] : tensor<1x2x3x6xf32>
// CHECK-NOT:     linalg.index
func.func @sdpa_scaled_dot(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x6xf32>) -> tensor<1x2x3x6xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x6xf32> -> tensor<1x2x3x6xf32>
  return %0 : tensor<1x2x3x6xf32>
}

// -----

// Causal with Sq = 3, Sk = 5: row i sits at p = i + 2 and key j is visible
// when j <= p, computed from linalg.index inside the score generic; the only
// input of that generic is the score tensor itself.
// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @sdpa_causal(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x2x3x4xf32>, %[[K:[^:]+]]: tensor<1x2x5x4xf32>, %[[V:[^:]+]]: tensor<1x2x5x4xf32>)
// CHECK:         %[[RAW:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[K]] : tensor<1x2x1x3x4xf32>, tensor<1x2x5x4xf32>)
// CHECK:         %[[MASKED:.*]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[RAW]] : tensor<1x2x1x3x5xf32>) outs(%{{.*}} : tensor<1x2x1x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[I:.*]] = linalg.index 3 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 4 : index
// CHECK-NEXT:      %[[OFF:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[P:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK-NEXT:      %[[VIS:.*]] = arith.cmpi sle, %[[J]], %[[P]] : index
// CHECK-NEXT:      %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[VIS]], %[[S]], %[[NEGINF]] : f32
// CHECK-NEXT:      linalg.yield %[[SEL]] : f32
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[MASKED]] : tensor<1x2x1x3x5xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[MASKED]], %[[MAX]] : tensor<1x2x1x3x5xf32>, tensor<1x2x1x3xf32>)
// Fully masked entries contribute exp = 0 (and empty rows give 0).
// CHECK:           %[[ISMASKED:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK:           arith.select %[[ISMASKED]]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[V]] : tensor<1x2x1x3x5xf32>, tensor<1x2x5x4xf32>)
// CHECK:         arith.cmpf ogt
// CHECK:         return
func.func @sdpa_causal(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// Sliding window W = 3, Sq = Sk = 4 (p = i): |p - j| < 3, i.e.
// p - j < 3 and j - p < 3. No causal compare.
// CHECK-LABEL: func.func @sdpa_window(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x1x4x4xf32>
// CHECK:         %[[MASKED:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1x1x4x4xf32>) outs(%{{.*}} : tensor<1x1x1x4x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK:           %[[S:.*]] = arith.mulf %[[IN]], %{{.*}} : f32
// CHECK-NEXT:      %[[I:.*]] = linalg.index 3 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 4 : index
// CHECK-NEXT:      %[[OFF:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[P:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK-NOT:       arith.cmpi sle
// CHECK-NEXT:      %[[W:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[D1:.*]] = arith.subi %[[P]], %[[J]] : index
// CHECK-NEXT:      %[[D2:.*]] = arith.subi %[[J]], %[[P]] : index
// CHECK-NEXT:      %[[C1:.*]] = arith.cmpi slt, %[[D1]], %[[W]] : index
// CHECK-NEXT:      %[[C2:.*]] = arith.cmpi slt, %[[D2]], %[[W]] : index
// CHECK-NEXT:      %[[VIS:.*]] = arith.andi %[[C1]], %[[C2]] : i1
// CHECK-NEXT:      %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[VIS]], %[[S]], %[[NEGINF]] : f32
// CHECK-NEXT:      linalg.yield %[[SEL]] : f32
// CHECK:         return
func.func @sdpa_window(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = attn.sdpa %q, %k, %v window = 3 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// window = 0 disables the window: no mask at all.
// CHECK-LABEL: func.func @sdpa_window_zero(
// CHECK-NOT:     linalg.index
// CHECK-NOT:     arith.cmpi
// CHECK:         return
func.func @sdpa_window_zero(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = attn.sdpa %q, %k, %v window = 0 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Padding lengths: the [B] tensor is read through the batch loop dim (d0)
// and key j is visible when j < kv_lengths[b].
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0)>
// CHECK-LABEL: func.func @sdpa_kv_lengths(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x1x3x4xf32>, %[[K:[^:]+]]: tensor<2x1x5x4xf32>, %[[V:[^:]+]]: tensor<2x1x5x4xf32>, %[[L:[^:]+]]: tensor<2xi32>)
// CHECK:         %[[RAW:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[K]] : tensor<2x1x1x3x4xf32>, tensor<2x1x5x4xf32>)
// CHECK:         %[[MASKED:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP0]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[RAW]], %[[L]] : tensor<2x1x1x3x5xf32>, tensor<2xi32>) outs(%{{.*}} : tensor<2x1x1x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %[[LEN:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK:           %[[S:.*]] = arith.mulf %[[IN]], %{{.*}} : f32
// CHECK-NEXT:      %[[I:.*]] = linalg.index 3 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 4 : index
// CHECK-NOT:       arith.cmpi sle
// CHECK:           %[[LENI:.*]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK-NEXT:      %[[VIS:.*]] = arith.cmpi slt, %[[J]], %[[LENI]] : index
// CHECK-NEXT:      %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[VIS]], %[[S]], %[[NEGINF]] : f32
// CHECK-NEXT:      linalg.yield %[[SEL]] : f32
// CHECK:         return
func.func @sdpa_kv_lengths(%q: tensor<2x1x3x4xf32>, %k: tensor<2x1x5x4xf32>, %v: tensor<2x1x5x4xf32>, %l: tensor<2xi32>) -> tensor<2x1x3x4xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<2xi32>) : tensor<2x1x3x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32> -> tensor<2x1x3x4xf32>
  return %0 : tensor<2x1x3x4xf32>
}

// -----

// All three masks together are and-ed.
// CHECK-LABEL: func.func @sdpa_all_masks(
// CHECK-SAME:    %[[L:[^:]+]]: tensor<1xi64>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[L]] : tensor<1x2x1x3x5xf32>, tensor<1xi64>)
// CHECK:           %[[CAUSAL:.*]] = arith.cmpi sle
// CHECK:           %[[W1:.*]] = arith.cmpi slt
// CHECK-NEXT:      %[[A1:.*]] = arith.andi %[[CAUSAL]], %[[W1]] : i1
// CHECK-NEXT:      %[[W2:.*]] = arith.cmpi slt
// CHECK-NEXT:      %[[A2:.*]] = arith.andi %[[A1]], %[[W2]] : i1
// CHECK-NEXT:      %[[LEN:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT:      %[[KV:.*]] = arith.cmpi slt, %{{.*}}, %[[LEN]] : index
// CHECK-NEXT:      %[[VIS:.*]] = arith.andi %[[A2]], %[[KV]] : i1
// CHECK:           arith.select %[[VIS]]
// CHECK:         return
func.func @sdpa_all_masks(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %l: tensor<1xi64>) -> tensor<1x2x3x4xf32> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%l : tensor<1xi64>) causal window = 2 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// GQA: 4 query heads on 2 kv heads. The query is viewed as
// [B, Hkv, G, Sq, D] = [1, 2, 2, 3, 8] so that K and V are indexed by the kv
// head loop dim d1 directly. score = dot with an explicit scale, plus a bias
// broadcast over batch and query rows: its head index is d1 * G + d2.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP3:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP4:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1 * 2 + d2, 0, d4)>
// CHECK-DAG: #[[MAP5:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>
// CHECK-LABEL: func.func @sdpa_gqa_bias(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x4x3x8xf32>, %[[K:[^:]+]]: tensor<1x2x5x8xf32>, %[[V:[^:]+]]: tensor<1x2x5x8xf32>, %[[B:[^:]+]]: tensor<1x4x1x5xf32>)
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 8] : tensor<1x4x3x8xf32> into tensor<1x2x2x3x8xf32>
// CHECK:         %[[RAW:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], {{.*}}} ins(%[[QG]], %[[K]] : tensor<1x2x2x3x8xf32>, tensor<1x2x5x8xf32>) outs(%{{.*}} : tensor<1x2x2x3x5xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [#[[MAP3]], #[[MAP4]], #[[MAP3]]], {{.*}}} ins(%[[RAW]], %[[B]] : tensor<1x2x2x3x5xf32>, tensor<1x4x1x5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %[[BIAS:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[SC:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[SB:.*]] = arith.addf %[[SC]], %[[BIAS]] : f32
// CHECK-NEXT:      linalg.yield %[[SB]] : f32
// CHECK:         linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP5]], #[[MAP2]]], {{.*}}} ins(%{{.*}}, %[[V]] : tensor<1x2x2x3x5xf32>, tensor<1x2x5x8xf32>) outs(%{{.*}} : tensor<1x2x2x3x8xf32>)
// CHECK:         %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x2x3x8xf32> into tensor<1x4x3x8xf32>
// CHECK:         return %[[R]] : tensor<1x4x3x8xf32>
func.func @sdpa_gqa_bias(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>, %b: tensor<1x4x1x5xf32>) -> tensor<1x4x3x8xf32> {
  %0 = attn.sdpa %q, %k, %v bias(%b : tensor<1x4x1x5xf32>) score = dot scale = 2.0 : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x4x3x8xf32>
  return %0 : tensor<1x4x3x8xf32>
}

// -----

// cosine: q.k / (max(|q|, 1e-6) * max(|k|, 1e-6)), norms from two
// sum-of-squares reductions.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
// CHECK-LABEL: func.func @sdpa_cosine(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x1x3x4xf32>, %[[K:[^:]+]]: tensor<1x1x5x4xf32>
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[Q]]
// CHECK:         %[[RAW:.*]] = linalg.generic {{.*}} ins(%[[QG]], %[[K]] : tensor<1x1x1x3x4xf32>, tensor<1x1x5x4xf32>)
// CHECK:         %[[QN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QG]] : tensor<1x1x1x3x4xf32>) outs(%{{.*}} : tensor<1x1x1x3xf32>)
// CHECK:         %[[KN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[K]] : tensor<1x1x5x4xf32>) outs(%{{.*}} : tensor<1x1x5xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]], #[[MAP0]]], {{.*}}} ins(%[[RAW]], %[[QN]], %[[KN]] : tensor<1x1x1x3x5xf32>, tensor<1x1x1x3xf32>, tensor<1x1x5xf32>)
// CHECK-NEXT:    ^bb0(%[[DOT:[^:]+]]: f32, %[[QQ:[^:]+]]: f32, %[[KK:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-NEXT:      %[[QS:.*]] = math.sqrt %[[QQ]] : f32
// CHECK-NEXT:      %[[QM:.*]] = arith.maximumf %[[QS]], %[[EPS]] : f32
// CHECK-NEXT:      %[[KS:.*]] = math.sqrt %[[KK]] : f32
// CHECK-NEXT:      %[[KM:.*]] = arith.maximumf %[[KS]], %[[EPS]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.mulf %[[QM]], %[[KM]] : f32
// CHECK-NEXT:      %[[COS:.*]] = arith.divf %[[DOT]], %[[DEN]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      arith.mulf %[[COS]], %[[ONE]] : f32
// CHECK:         return
func.func @sdpa_cosine(%q: tensor<1x1x3x4xf32>, %k: tensor<1x1x5x4xf32>, %v: tensor<1x1x5x4xf32>) -> tensor<1x1x3x4xf32> {
  %0 = attn.sdpa %q, %k, %v score = cosine : tensor<1x1x3x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32> -> tensor<1x1x3x4xf32>
  return %0 : tensor<1x1x3x4xf32>
}

// -----

// gaussian: -0.5 * s * |q - k|^2 with the default s = 1/sqrt(4).
// CHECK-LABEL: func.func @sdpa_gaussian(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x1x3x4xf32>, %[[K:[^:]+]]: tensor<1x1x5x4xf32>
// CHECK:         %[[RAW:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[K]] : tensor<1x1x1x3x4xf32>, tensor<1x1x5x4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:[^:]+]]: f32, %[[B:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[D2]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         linalg.generic {{.*}} ins(%[[RAW]] : tensor<1x1x1x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[F:.*]] = arith.constant -2.500000e-01 : f32
// CHECK-NEXT:      arith.mulf %[[IN]], %[[F]] : f32
// CHECK:         return
func.func @sdpa_gaussian(%q: tensor<1x1x3x4xf32>, %k: tensor<1x1x5x4xf32>, %v: tensor<1x1x5x4xf32>) -> tensor<1x1x3x4xf32> {
  %0 = attn.sdpa %q, %k, %v score = gaussian : tensor<1x1x3x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32> -> tensor<1x1x3x4xf32>
  return %0 : tensor<1x1x3x4xf32>
}

// -----

// general (bilinear): qW[.., e] = sum_d q[.., d] W[d, e], then a dot with k
// over Dk = 2.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d5, d4)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP3:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-LABEL: func.func @sdpa_general(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x1x3x4xf32>, %[[K:[^:]+]]: tensor<1x1x5x2xf32>, %[[V:[^:]+]]: tensor<1x1x5x4xf32>, %[[W:[^:]+]]: tensor<4x2xf32>)
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[Q]]
// CHECK:         %[[QW:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QG]], %[[W]] : tensor<1x1x1x3x4xf32>, tensor<4x2xf32>) outs(%{{.*}} : tensor<1x1x1x3x2xf32>)
// CHECK:         %[[RAW:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP3]], #[[MAP2]]], {{.*}}} ins(%[[QW]], %[[K]] : tensor<1x1x1x3x2xf32>, tensor<1x1x5x2xf32>) outs(%{{.*}} : tensor<1x1x1x3x5xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[RAW]] : tensor<1x1x1x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      arith.mulf %[[IN]], %[[ONE]] : f32
// CHECK:         return
func.func @sdpa_general(%q: tensor<1x1x3x4xf32>, %k: tensor<1x1x5x2xf32>, %v: tensor<1x1x5x4xf32>, %w: tensor<4x2xf32>) -> tensor<1x1x3x4xf32> {
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<4x2xf32>) score = general : tensor<1x1x3x4xf32>, tensor<1x1x5x2xf32>, tensor<1x1x5x4xf32> -> tensor<1x1x3x4xf32>
  return %0 : tensor<1x1x3x4xf32>
}

// -----

// additive (Bahdanau): W = [Wq | Wk] split by columns, projections of q and
// k onto A = 7, then sum_a v[a] tanh(pq[a] + pk[a]).
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[MAP3:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[MAP4:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
// CHECK-DAG: #[[MAP5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[MAP6:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[MAP7:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d5)>
// CHECK-LABEL: func.func @sdpa_additive(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x1x3x4xf32>, %[[K:[^:]+]]: tensor<1x1x5x2xf32>, %[[V:[^:]+]]: tensor<1x1x5x4xf32>, %[[W:[^:]+]]: tensor<7x6xf32>, %[[VA:[^:]+]]: tensor<7xf32>)
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[Q]]
// CHECK:         %[[WQ:.*]] = tensor.extract_slice %[[W]][0, 0] [7, 4] [1, 1] : tensor<7x6xf32> to tensor<7x4xf32>
// CHECK:         %[[WK:.*]] = tensor.extract_slice %[[W]][0, 4] [7, 2] [1, 1] : tensor<7x6xf32> to tensor<7x2xf32>
// CHECK:         %[[PQ:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], {{.*}}} ins(%[[QG]], %[[WQ]] : tensor<1x1x1x3x4xf32>, tensor<7x4xf32>) outs(%{{.*}} : tensor<1x1x1x3x7xf32>)
// CHECK:         %[[PK:.*]] = linalg.generic {indexing_maps = [#[[MAP3]], #[[MAP4]], #[[MAP5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[K]], %[[WK]] : tensor<1x1x5x2xf32>, tensor<7x2xf32>) outs(%{{.*}} : tensor<1x1x5x7xf32>)
// CHECK:         %[[RAW:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP6]], #[[MAP7]], #[[MAP2]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PQ]], %[[PK]], %[[VA]] : tensor<1x1x1x3x7xf32>, tensor<1x1x5x7xf32>, tensor<7xf32>) outs(%{{.*}} : tensor<1x1x1x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[A:[^:]+]]: f32, %[[B:[^:]+]]: f32, %[[C:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[SUM]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[C]], %[[T]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         return
func.func @sdpa_additive(%q: tensor<1x1x3x4xf32>, %k: tensor<1x1x5x2xf32>, %v: tensor<1x1x5x4xf32>, %w: tensor<7x6xf32>, %va: tensor<7xf32>) -> tensor<1x1x3x4xf32> {
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %va : tensor<7x6xf32>, tensor<7xf32>) score = additive : tensor<1x1x3x4xf32>, tensor<1x1x5x2xf32>, tensor<1x1x5x4xf32> -> tensor<1x1x3x4xf32>
  return %0 : tensor<1x1x3x4xf32>
}

//===----------------------------------------------------------------------===//
// Multi-head attention and layers
//===----------------------------------------------------------------------===//

// -----

// mha (GQA: 2 query heads of width 4, 1 kv head, causal, kv_lengths):
// q/k/v projections (contractions against the [out, in] weights), head
// split (expand_shape + transpose to [B, H, S, dh]), attention on the grouped
// layout with generated masks, head merge (transpose + collapse_shape) and
// the output projection. The weights stay attn.weight ops.
// CHECK-DAG: #[[MAP0:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @mha(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x3x8xf32>, %[[L:[^:]+]]: tensor<1xi64>)
// CHECK:         %[[WQ:.*]] = attn.weight "wq" : tensor<8x8xf32>
// CHECK:         %[[WK:.*]] = attn.weight "wk" : tensor<4x8xf32>
// CHECK:         %[[WV:.*]] = attn.weight "wv" : tensor<4x8xf32>
// CHECK:         %[[WO:.*]] = attn.weight "wo" : tensor<8x8xf32>
// Query projection and head split.
// CHECK:         %[[XQ:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<1x3x8xf32> into tensor<3x8xf32>
// CHECK:         %[[PQ:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], {{.*}}} ins(%[[XQ]], %[[WQ]] : tensor<3x8xf32>, tensor<8x8xf32>)
// CHECK:         %[[PQ3:.*]] = tensor.expand_shape %[[PQ]] {{\[}}[0, 1], [2]] output_shape [1, 3, 8] : tensor<3x8xf32> into tensor<1x3x8xf32>
// CHECK:         %[[SQ:.*]] = tensor.expand_shape %[[PQ3]] {{\[}}[0], [1], [2, 3]] output_shape [1, 3, 2, 4] : tensor<1x3x8xf32> into tensor<1x3x2x4xf32>
// CHECK:         %[[QH:.*]] = linalg.transpose ins(%[[SQ]] : tensor<1x3x2x4xf32>) outs(%{{.*}} : tensor<1x2x3x4xf32>) permutation = [0, 2, 1, 3]
// Key projection and head split (1 kv head).
// CHECK:         %[[XK:.*]] = tensor.collapse_shape %[[X]]
// CHECK:         %[[PK:.*]] = linalg.generic {{.*}} ins(%[[XK]], %[[WK]] : tensor<3x8xf32>, tensor<4x8xf32>)
// CHECK:         %[[PK3:.*]] = tensor.expand_shape %[[PK]]
// CHECK:         %[[SK:.*]] = tensor.expand_shape %[[PK3]] {{\[}}[0], [1], [2, 3]] output_shape [1, 3, 1, 4] : tensor<1x3x4xf32> into tensor<1x3x1x4xf32>
// CHECK:         %[[KH:.*]] = linalg.transpose ins(%[[SK]] : tensor<1x3x1x4xf32>) outs(%{{.*}} : tensor<1x1x3x4xf32>) permutation = [0, 2, 1, 3]
// Value projection and head split.
// CHECK:         %[[XV:.*]] = tensor.collapse_shape %[[X]]
// CHECK:         %[[PV:.*]] = linalg.generic {{.*}} ins(%[[XV]], %[[WV]] : tensor<3x8xf32>, tensor<4x8xf32>)
// CHECK:         %[[PV3:.*]] = tensor.expand_shape %[[PV]]
// CHECK:         %[[SV:.*]] = tensor.expand_shape %[[PV3]] {{\[}}[0], [1], [2, 3]] output_shape [1, 3, 1, 4] : tensor<1x3x4xf32> into tensor<1x3x1x4xf32>
// CHECK:         %[[VH:.*]] = linalg.transpose ins(%[[SV]] : tensor<1x3x1x4xf32>) outs(%{{.*}} : tensor<1x1x3x4xf32>) permutation = [0, 2, 1, 3]
// Attention: query grouped as [B, Hkv, G, Sq, dh] = [1, 1, 2, 3, 4].
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[QH]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 1, 2, 3, 4] : tensor<1x2x3x4xf32> into tensor<1x1x2x3x4xf32>
// CHECK:         %[[RAW:.*]] = linalg.generic {{.*}} ins(%[[QG]], %[[KH]] : tensor<1x1x2x3x4xf32>, tensor<1x1x3x4xf32>) outs(%{{.*}} : tensor<1x1x2x3x3xf32>)
// CHECK:         %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[RAW]], %[[L]] : tensor<1x1x2x3x3xf32>, tensor<1xi64>)
// CHECK:           arith.cmpi sle
// CHECK:           arith.cmpi slt
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[VH]] : tensor<1x1x2x3x3xf32>, tensor<1x1x3x4xf32>)
// CHECK:         %[[ATT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<1x1x2x3x4xf32> into tensor<1x2x3x4xf32>
// Head merge and output projection.
// CHECK:         %[[MT:.*]] = linalg.transpose ins(%[[ATT]] : tensor<1x2x3x4xf32>) outs(%{{.*}} : tensor<1x3x2x4xf32>) permutation = [0, 2, 1, 3]
// CHECK:         %[[M:.*]] = tensor.collapse_shape %[[MT]] {{\[}}[0], [1], [2, 3]] : tensor<1x3x2x4xf32> into tensor<1x3x8xf32>
// CHECK:         %[[MF:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1], [2]] : tensor<1x3x8xf32> into tensor<3x8xf32>
// CHECK:         %[[O:.*]] = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP1]], #[[MAP2]]], {{.*}}} ins(%[[MF]], %[[WO]] : tensor<3x8xf32>, tensor<8x8xf32>)
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[O]] {{\[}}[0, 1], [2]] output_shape [1, 3, 8] : tensor<3x8xf32> into tensor<1x3x8xf32>
// CHECK:         return %[[R]] : tensor<1x3x8xf32>
func.func @mha(%x: tensor<1x3x8xf32>, %l: tensor<1xi64>) -> tensor<1x3x8xf32> {
  %wq = attn.weight "wq" : tensor<8x8xf32>
  %wk = attn.weight "wk" : tensor<4x8xf32>
  %wv = attn.weight "wv" : tensor<4x8xf32>
  %wo = attn.weight "wo" : tensor<8x8xf32>
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) kv_lengths(%l) heads = 2 kv_heads = 1 causal : (tensor<1x3x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>, tensor<1xi64>) -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

// attn.layer: the body is inlined in place of the layer (block argument ->
// layer operand, yielded value -> layer result); its attn.weight stays an
// attn.weight op (attn-hoist-weights binds it later).
// CHECK-LABEL: func.func @layer(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x3x8xf32>)
// CHECK-NEXT:    %[[W:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// CHECK:         %[[XF:.*]] = tensor.collapse_shape %[[X]]
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[XF]], %[[W]] : tensor<3x8xf32>, tensor<8x8xf32>)
// CHECK:         %[[P3:.*]] = tensor.expand_shape %[[P]]
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[P3]] : tensor<1x3x8xf32>, tensor<1x3x8xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[A]] : tensor<1x3x8xf32>
func.func @layer(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  ^bb0(%h: tensor<1x3x8xf32>):
    %w = attn.weight "layer.0.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x3x8xf32>, tensor<8x8xf32>) -> tensor<1x3x8xf32>
    %a = attn.add %h, %p : tensor<1x3x8xf32>
    attn.yield %a : tensor<1x3x8xf32>
  }
  return %0 : tensor<1x3x8xf32>
}

// -----

// Two chained layers with an extra (non-stream) operand: each body is
// inlined, the second one reading the first one's result.
// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xf32>, %[[Y:[^:]+]]: tensor<2x4xf32>)
// CHECK:         %[[A0:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:         %[[R0:.*]] = linalg.generic {{.*}} ins(%[[A0]] : tensor<2x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[A1:.*]] = linalg.generic {{.*}} ins(%[[R0]], %[[Y]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:         %[[R1:.*]] = linalg.generic {{.*}} ins(%[[A1]] : tensor<2x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         return %[[R1]] : tensor<2x4xf32>
func.func @two_layers(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = attn.layer index = 0 (%x, %y) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%h: tensor<2x4xf32>, %e: tensor<2x4xf32>):
    %a = attn.add %h, %e : tensor<2x4xf32>
    %r = attn.relu %a : tensor<2x4xf32>
    attn.yield %r : tensor<2x4xf32>
  }
  %1 = attn.layer index = 1 (%0, %y) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%h: tensor<2x4xf32>, %e: tensor<2x4xf32>):
    %a = attn.add %h, %e : tensor<2x4xf32>
    %r = attn.relu %a : tensor<2x4xf32>
    attn.yield %r : tensor<2x4xf32>
  }
  return %1 : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// Reduced precision
//===----------------------------------------------------------------------===//

// -----

// f16 operands are extended to f32 once, all arithmetic is f32, and the
// result is rounded back at the very end.
// CHECK-LABEL: func.func @sdpa_f16(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x1x2x4xf16>, %[[K:[^:]+]]: tensor<1x1x2x4xf16>, %[[V:[^:]+]]: tensor<1x1x2x4xf16>) -> tensor<1x1x2x4xf16>
// CHECK:         %[[QF:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x2x4xf16>) outs(%{{.*}} : tensor<1x1x2x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f16, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[E:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT:      linalg.yield %[[E]] : f32
// CHECK:         %[[KF:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x1x2x4xf16>) outs(%{{.*}} : tensor<1x1x2x4xf32>)
// CHECK:           arith.extf
// CHECK:         %[[VF:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<1x1x2x4xf16>) outs(%{{.*}} : tensor<1x1x2x4xf32>)
// CHECK:           arith.extf
// CHECK:         %[[QG:.*]] = tensor.expand_shape %[[QF]] {{.*}} : tensor<1x1x2x4xf32> into tensor<1x1x1x2x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[QG]], %[[KF]] : tensor<1x1x1x2x4xf32>, tensor<1x1x2x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[VF]] : tensor<1x1x1x2x2xf32>, tensor<1x1x2x4xf32>)
// CHECK:         %[[OUT:.*]] = tensor.collapse_shape %{{.*}} : tensor<1x1x1x2x4xf32> into tensor<1x1x2x4xf32>
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<1x1x2x4xf16>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[OUT]] : tensor<1x1x2x4xf32>) outs(%[[INIT]] : tensor<1x1x2x4xf16>)
// CHECK-NEXT:    ^bb0(%[[IN2:[^:]+]]: f32, %{{[^:]+}}: f16):
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[IN2]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[T]] : f16
// CHECK:         return %[[R]] : tensor<1x1x2x4xf16>
func.func @sdpa_f16(%q: tensor<1x1x2x4xf16>, %k: tensor<1x1x2x4xf16>, %v: tensor<1x1x2x4xf16>) -> tensor<1x1x2x4xf16> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16> -> tensor<1x1x2x4xf16>
  return %0 : tensor<1x1x2x4xf16>
}

// -----

// The order in which the two operands of rms_norm are converted is not
// fixed, hence CHECK-DAG.
// CHECK-LABEL: func.func @rms_norm_bf16(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x4xbf16>, %[[G:[^:]+]]: tensor<4xbf16>) -> tensor<2x4xbf16>
// CHECK-DAG:     %[[XF:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-DAG:     %[[GF:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<4xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:         %[[SSQ:.*]] = linalg.generic {{.*}} ins(%[[XF]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} ins(%[[XF]], %[[SSQ]], %[[GF]] : tensor<2x4xf32>, tensor<2xf32>, tensor<4xf32>)
// CHECK:           math.rsqrt
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[N]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:[^:]+]]: f32, %{{[^:]+}}: bf16):
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK:         return %[[R]] : tensor<2x4xbf16>
func.func @rms_norm_bf16(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>) -> tensor<2x4xbf16> {
  %0 = attn.rms_norm %x, %g : tensor<2x4xbf16>, tensor<4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

// f32 stays f32: no conversions at all.
// CHECK-LABEL: func.func @add_f32_no_casts(
// CHECK-NOT:     arith.extf
// CHECK-NOT:     arith.truncf
// CHECK:         return
func.func @add_f32_no_casts(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = attn.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// attn.cache_write: one insert_slice per sequence at its run-time position,
// clamped into [0, L - T] (here L - T = 31); no copy of the cache.
// CHECK-LABEL: func.func @cache_write(
// CHECK-SAME:    %[[NEW:[^:]+]]: tensor<2x4x1x16xf32>, %[[CACHE:[^:]+]]: tensor<2x4x32x16xf32>, %[[POS:[^:]+]]: tensor<2xi64>
// CHECK:         %[[LOOP:.*]] = scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[CACHE]])
// CHECK:           %[[P:.*]] = tensor.extract %[[POS]][%[[B]]] : tensor<2xi64>
// CHECK:           %[[I:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK:           %[[LO:.*]] = arith.maxsi %[[I]], %{{.*}} : index
// CHECK:           %[[C31:.*]] = arith.constant 31 : index
// CHECK:           %[[AT:.*]] = arith.minsi %[[LO]], %[[C31]] : index
// CHECK:           %[[ROWS:.*]] = tensor.extract_slice %[[NEW]][%[[B]], 0, 0, 0] [1, 4, 1, 16] [1, 1, 1, 1]
// CHECK:           %[[UPD:.*]] = tensor.insert_slice %[[ROWS]] into %[[ACC]][%[[B]], 0, %[[AT]], 0] [1, 4, 1, 16] [1, 1, 1, 1]
// CHECK:           scf.yield %[[UPD]]
// CHECK:         return %[[LOOP]]
func.func @cache_write(%n: tensor<2x4x1x16xf32>, %c: tensor<2x4x32x16xf32>, %p: tensor<2xi64>) -> tensor<2x4x32x16xf32> {
  %0 = attn.cache_write %n into %c at %p : tensor<2x4x1x16xf32>, tensor<2x4x32x16xf32>, tensor<2xi64>
  return %0 : tensor<2x4x32x16xf32>
}

// -----

// attn.learned_pos with run-time positions reads the table row
// offset + positions[b] + s, clamped into the table.
// CHECK-LABEL: func.func @learned_pos_positions(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x1x64xf32>, %[[T:[^:]+]]: tensor<32x64xf32>, %[[POS:[^:]+]]: tensor<2xi64>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[X]] : tensor<2x1x64xf32>)
// CHECK:           %[[B:.*]] = linalg.index 0 : index
// CHECK:           %[[P:.*]] = tensor.extract %[[POS]][%[[B]]] : tensor<2xi64>
// CHECK:           %[[S:.*]] = linalg.index 1 : index
// CHECK:           arith.constant 2 : index
// CHECK:           %[[ROW:.*]] = arith.minsi
// CHECK:           %[[D:.*]] = linalg.index 2 : index
// CHECK:           %[[V:.*]] = tensor.extract %[[T]][%[[ROW]], %[[D]]] : tensor<32x64xf32>
// CHECK:           arith.addf %{{.*}}, %[[V]] : f32
func.func @learned_pos_positions(%x: tensor<2x1x64xf32>, %t: tensor<32x64xf32>, %p: tensor<2xi64>) -> tensor<2x1x64xf32> {
  %0 = attn.learned_pos %x, %t positions(%p : tensor<2xi64>) offset = 2 : tensor<2x1x64xf32>, tensor<32x64xf32>
  return %0 : tensor<2x1x64xf32>
}
