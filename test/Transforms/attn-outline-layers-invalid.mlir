// RUN: attn-opt %s --split-input-file --attn-outline-layers -verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-outline-layers=min-group-size=0 2>&1 | FileCheck %s --check-prefix=SIZE0

// SIZE0: error: attn-outline-layers: min-group-size must be at least 1, got 0

// A layer outside any function has no caller to hold its weights.
%x = attn.weight "x" : tensor<4xf32>
// expected-error @below {{'attn.layer' op must be inside a func.func to be outlined}}
%0 = attn.layer index = 0 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
^bb0(%h: tensor<4xf32>):
  attn.yield %h : tensor<4xf32>
}
