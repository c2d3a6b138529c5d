// RUN: not attn-opt %s --attn-layer-drop="rate=0" 2>&1 | FileCheck %s --check-prefix=RATE0
// RUN: not attn-opt %s --attn-layer-drop="strategy=every-other rate=1" 2>&1 | FileCheck %s --check-prefix=RATE1
// RUN: not attn-opt %s --attn-layer-drop="strategy=every-other rate=1.5" 2>&1 | FileCheck %s --check-prefix=RATE15
// RUN: not attn-opt %s --attn-layer-drop="rate=-0.5" 2>&1 | FileCheck %s --check-prefix=RATENEG
// RUN: not attn-opt %s --attn-layer-drop="rate=0.75" 2>&1 | FileCheck %s --check-prefix=RATEALL
// RUN: not attn-opt %s --attn-layer-drop="strategy=top-k keep=4" 2>&1 | FileCheck %s --check-prefix=KEEPBIG
// RUN: not attn-opt %s --attn-layer-drop="strategy=top-k keep=0" 2>&1 | FileCheck %s --check-prefix=KEEP0
// RUN: not attn-opt %s --attn-layer-drop="strategy=top-k" 2>&1 | FileCheck %s --check-prefix=KEEPNONE
// RUN: not attn-opt %s --attn-layer-drop="strategy=keep-list layers=0,3" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not attn-opt %s --attn-layer-drop="strategy=keep-list layers=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attn-opt %s --attn-layer-drop="strategy=keep-list layers=1,0,1" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not attn-opt %s --attn-layer-drop="strategy=keep-list" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not attn-opt %s --attn-layer-drop="strategy=random" 2>&1 | FileCheck %s --check-prefix=STRATEGY

// Invalid pass options: each RUN line must fail with one error on the
// function holding the 3-layer stack, and print no IR.

// RATE0: layer-drop-invalid-options.mlir:[[@LINE+26]]:1: error: attn-layer-drop: rate must be in (0, 1), got 0.000000e+00
// RATE0-NOT: {{^}}module
// RATE1: layer-drop-invalid-options.mlir:[[@LINE+24]]:1: error: attn-layer-drop: rate must be in (0, 1), got 1.000000e+00
// RATE1-NOT: {{^}}module
// RATE15: layer-drop-invalid-options.mlir:[[@LINE+22]]:1: error: attn-layer-drop: rate must be in (0, 1), got 1.500000e+00
// RATE15-NOT: {{^}}module
// RATENEG: layer-drop-invalid-options.mlir:[[@LINE+20]]:1: error: attn-layer-drop: rate must be in (0, 1), got -5.000000e-01
// RATENEG-NOT: {{^}}module
// RATEALL: error: attn-layer-drop: rate=7.500000e-01 would drop every layer (floor(1/p) = 1); every-other pruning needs p <= 0.5
// RATEALL-NOT: {{^}}module
// KEEPBIG: layer-drop-invalid-options.mlir:[[@LINE+16]]:1: error: attn-layer-drop: keep=4 must be in [1, 3] (the stack has 3 layers)
// KEEPBIG-NOT: {{^}}module
// KEEP0: layer-drop-invalid-options.mlir:[[@LINE+14]]:1: error: attn-layer-drop: keep=0 must be in [1, 3] (the stack has 3 layers)
// KEEP0-NOT: {{^}}module
// KEEPNONE: layer-drop-invalid-options.mlir:[[@LINE+12]]:1: error: attn-layer-drop: keep=-1 must be in [1, 3] (the stack has 3 layers)
// KEEPNONE-NOT: {{^}}module
// UNKNOWN: layer-drop-invalid-options.mlir:[[@LINE+10]]:1: error: attn-layer-drop: layer 3 does not exist (the stack has layers 0..2)
// UNKNOWN-NOT: {{^}}module
// NEGATIVE: layer-drop-invalid-options.mlir:[[@LINE+8]]:1: error: attn-layer-drop: layer -1 does not exist (the stack has layers 0..2)
// NEGATIVE-NOT: {{^}}module
// TWICE: layer-drop-invalid-options.mlir:[[@LINE+6]]:1: error: attn-layer-drop: layer 1 is listed twice
// TWICE-NOT: {{^}}module
// EMPTY: layer-drop-invalid-options.mlir:[[@LINE+4]]:1: error: attn-layer-drop: keep-list needs layers=i,j,... (none given)
// EMPTY-NOT: {{^}}module
// STRATEGY: layer-drop-invalid-options.mlir:[[@LINE+2]]:1: error: attn-layer-drop: unknown strategy 'random' (expected every-other, top-k or keep-list)
// STRATEGY-NOT: {{^}}module
func.func @stack(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 score = 0.9 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.0.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 1 score = 0.1 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.1.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %2 = attn.layer index = 2 score = 0.6 (%1) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.2.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  return %2 : tensor<1x4x8xf32>
}
