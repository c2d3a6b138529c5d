// top-k with the scores taken from a JSON file instead of the layers' own
// `score` attributes (the file wins), and the file's error cases.
// RUN: attn-opt %s --attn-layer-drop="strategy=top-k keep=2 scores-file=%S/Inputs/scores3.json" | FileCheck %s --check-prefix=ARRAY
// RUN: attn-opt %s --attn-layer-drop="strategy=top-k keep=1 scores-file=%S/Inputs/scores3-object.json" | FileCheck %s --check-prefix=OBJECT
// RUN: not attn-opt %s --attn-layer-drop="strategy=top-k keep=1 scores-file=%S/Inputs/scores2.json" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not attn-opt %s --attn-layer-drop="strategy=top-k keep=1 scores-file=%S/Inputs/scores-bad.json" 2>&1 | FileCheck %s --check-prefix=BADJSON
// RUN: not attn-opt %s --attn-layer-drop="strategy=top-k keep=1 scores-file=%S/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING

// ARRAY-LABEL: func.func @stack
// ARRAY: attn.layer index = 0 score = 9.000000e-01
// ARRAY: attn.weight "layer.0.w"
// ARRAY-NOT: layer.1.w
// ARRAY: attn.layer index = 1 score = 6.000000e-01
// ARRAY: attn.weight "layer.2.w"

// OBJECT-LABEL: func.func @stack
// OBJECT: attn.layer index = 0 score = 8.000000e-01 {{.*}}attn.original_index = 1
// OBJECT: attn.weight "layer.1.w"
// OBJECT-NOT: attn.layer

// COUNT: error: attn-layer-drop: scores-file '{{.*}}scores2.json': has 2 scores but the stack has 3 layers
// BADJSON: error: attn-layer-drop: scores-file '{{.*}}scores-bad.json': invalid JSON
// MISSING: error: attn-layer-drop: scores-file '{{.*}}missing.json': No such file or directory
func.func @stack(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 score = 0.1 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.0.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 1 score = 0.9 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.1.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p : tensor<1x4x8xf32>
  }
  %2 = attn.layer index = 2 (%1) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.2.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    attn.yield %p : tensor<1x4x8xf32>
  }
  return %2 : tensor<1x4x8xf32>
}
