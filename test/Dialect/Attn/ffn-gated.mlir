// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --mlir-print-op-generic | attn-opt --split-input-file | FileCheck %s

// Round trip of the gated attn.ffn (GLU family, e.g. SwiGLU): with and
// without biases; the plain form prints no gate.

// CHECK-LABEL: func.func @ffn_swiglu(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x16x64xf32>, %[[G:[^:]+]]: tensor<172x64xf32>, %[[U:[^:]+]]: tensor<172x64xf32>, %[[D:[^:]+]]: tensor<64x172xf32>)
// CHECK:         attn.ffn %[[X]] gate(%[[G]]) up(%[[U]]) down(%[[D]]) activation = silu : (tensor<1x16x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<1x16x64xf32>
func.func @ffn_swiglu(%x: tensor<1x16x64xf32>, %g: tensor<172x64xf32>, %u: tensor<172x64xf32>, %d: tensor<64x172xf32>) -> tensor<1x16x64xf32> {
  %0 = attn.ffn %x gate(%g) up(%u) down(%d) activation = silu : (tensor<1x16x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>, tensor<64x172xf32>) -> tensor<1x16x64xf32>
  return %0 : tensor<1x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @ffn_geglu_biases(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8xbf16>, %[[G:[^:]+]]: tensor<24x8xbf16>, %[[GB:[^:]+]]: tensor<24xbf16>, %[[U:[^:]+]]: tensor<24x8xbf16>, %[[UB:[^:]+]]: tensor<24xbf16>, %[[D:[^:]+]]: tensor<8x24xbf16>, %[[DB:[^:]+]]: tensor<8xbf16>)
// CHECK:         attn.ffn %[[X]] gate(%[[G]]) gate_bias(%[[GB]]) up(%[[U]], %[[UB]]) down(%[[D]], %[[DB]]) activation = gelu :
func.func @ffn_geglu_biases(%x: tensor<2x8xbf16>, %g: tensor<24x8xbf16>, %gb: tensor<24xbf16>, %u: tensor<24x8xbf16>, %ub: tensor<24xbf16>, %d: tensor<8x24xbf16>, %db: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %0 = attn.ffn %x gate(%g) gate_bias(%gb) up(%u, %ub) down(%d, %db) activation = gelu : (tensor<2x8xbf16>, tensor<24x8xbf16>, tensor<24xbf16>, tensor<24x8xbf16>, tensor<24xbf16>, tensor<8x24xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

// CHECK-LABEL: func.func @ffn_plain(
// CHECK:         attn.ffn %{{.*}} up(%{{.*}}) down(%{{.*}}) :
// CHECK-NOT:     gate
func.func @ffn_plain(%x: tensor<2x8xf32>, %u: tensor<24x8xf32>, %d: tensor<8x24xf32>) -> tensor<2x8xf32> {
  %0 = attn.ffn %x up(%u) down(%d) : (tensor<2x8xf32>, tensor<24x8xf32>, tensor<8x24xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
