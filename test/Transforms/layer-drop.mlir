// RUN: attn-opt %s --attn-layer-drop | FileCheck %s --check-prefix=HALF --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=every-other rate=0.5" | FileCheck %s --check-prefix=HALF --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=every-other rate=0.34" | FileCheck %s --check-prefix=HALF --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=every-other rate=0.25" | FileCheck %s --check-prefix=QUARTER --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=every-other rate=0.2" | FileCheck %s --check-prefix=FIFTH --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=every-other rate=0.05" | FileCheck %s --check-prefix=ALL --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=top-k keep=4" | FileCheck %s --check-prefix=TOPK --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=top-k keep=12" | FileCheck %s --check-prefix=ALL --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=keep-list layers=0,5,11" | FileCheck %s --check-prefix=KEEP --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=keep-list layers=11,0,5" | FileCheck %s --check-prefix=KEEP --implicit-check-not=attn.layer --implicit-check-not=attn.weight
// RUN: attn-opt %s --attn-layer-drop="strategy=top-k keep=4 report=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// LayerDrop on a 12-layer stack. Layer i owns the weight "layer.i.w", so the
// kept layers are identified by their weights; dropped layers (and with them
// their weights) must vanish, the kept ones chain on each other in their
// original order, renumbered 0..k-1, remembering their depth in
// attn.original_index and keeping their score.
//
// Scores (for top-k): 0.9 0.1 0.6 0.2 0.3 0.8 0.4 0.6 -0.25 0.5 0.6 0.35.
// The best four are 0 (0.9), 5 (0.8) and two of the three layers tied at 0.6
// (2, 7, 10): ties go to the shallower layers, so 10 is dropped.

// rate = 0.5 (and rate = 0.34): floor(1/p) = 2, drop depths 2, 4, ..., 12
// (1-based), i.e. keep 0, 2, 4, 6, 8, 10.
// HALF-LABEL: func.func @stack(
// HALF-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// HALF:         %[[L0:.*]] = attn.layer index = 0 score = 9.000000e-01 (%[[X]]) {attn.original_index = 0 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// HALF-NEXT:    ^bb0(%[[H0:[^:]+]]: tensor<1x4x8xf32>):
// HALF-NEXT:      %[[W0:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// HALF-NEXT:      %[[P0:.*]] = attn.linear %[[H0]], %[[W0]]
// HALF-NEXT:      %[[A0:.*]] = attn.add %[[H0]], %[[P0]]
// HALF-NEXT:      attn.yield %[[A0]]
// HALF-NEXT:    }
// HALF-NOT:     "layer.1.w"
// HALF:         %[[L1:.*]] = attn.layer index = 1 score = 6.000000e-01 (%[[L0]]) {attn.original_index = 2 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// HALF-NEXT:    ^bb0(%[[H1:[^:]+]]: tensor<1x4x8xf32>):
// HALF-NEXT:      %[[W1:.*]] = attn.weight "layer.2.w" : tensor<8x8xf32>
// HALF-NEXT:      %[[P1:.*]] = attn.linear %[[H1]], %[[W1]]
// HALF-NEXT:      %[[A1:.*]] = attn.add %[[H1]], %[[P1]]
// HALF-NEXT:      attn.yield %[[A1]]
// HALF-NEXT:    }
// HALF-NOT:     "layer.3.w"
// HALF:         %[[L2:.*]] = attn.layer index = 2 score = 3.000000e-01 (%[[L1]]) {attn.original_index = 4 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// HALF-NEXT:    ^bb0(%[[H2:[^:]+]]: tensor<1x4x8xf32>):
// HALF-NEXT:      %[[W2:.*]] = attn.weight "layer.4.w" : tensor<8x8xf32>
// HALF-NEXT:      %[[P2:.*]] = attn.linear %[[H2]], %[[W2]]
// HALF-NEXT:      %[[A2:.*]] = attn.add %[[H2]], %[[P2]]
// HALF-NEXT:      attn.yield %[[A2]]
// HALF-NEXT:    }
// HALF-NOT:     "layer.5.w"
// HALF:         %[[L3:.*]] = attn.layer index = 3 score = 4.000000e-01 (%[[L2]]) {attn.original_index = 6 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// HALF-NEXT:    ^bb0(%[[H3:[^:]+]]: tensor<1x4x8xf32>):
// HALF-NEXT:      %[[W3:.*]] = attn.weight "layer.6.w" : tensor<8x8xf32>
// HALF-NEXT:      %[[P3:.*]] = attn.linear %[[H3]], %[[W3]]
// HALF-NEXT:      %[[A3:.*]] = attn.add %[[H3]], %[[P3]]
// HALF-NEXT:      attn.yield %[[A3]]
// HALF-NEXT:    }
// HALF-NOT:     "layer.7.w"
// HALF:         %[[L4:.*]] = attn.layer index = 4 score = -2.500000e-01 (%[[L3]]) {attn.original_index = 8 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// HALF-NEXT:    ^bb0(%[[H4:[^:]+]]: tensor<1x4x8xf32>):
// HALF-NEXT:      %[[W4:.*]] = attn.weight "layer.8.w" : tensor<8x8xf32>
// HALF-NEXT:      %[[P4:.*]] = attn.linear %[[H4]], %[[W4]]
// HALF-NEXT:      %[[A4:.*]] = attn.add %[[H4]], %[[P4]]
// HALF-NEXT:      attn.yield %[[A4]]
// HALF-NEXT:    }
// HALF-NOT:     "layer.9.w"
// HALF:         %[[L5:.*]] = attn.layer index = 5 score = 6.000000e-01 (%[[L4]]) {attn.original_index = 10 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// HALF-NEXT:    ^bb0(%[[H5:[^:]+]]: tensor<1x4x8xf32>):
// HALF-NEXT:      %[[W5:.*]] = attn.weight "layer.10.w" : tensor<8x8xf32>
// HALF-NEXT:      %[[P5:.*]] = attn.linear %[[H5]], %[[W5]]
// HALF-NEXT:      %[[A5:.*]] = attn.add %[[H5]], %[[P5]]
// HALF-NEXT:      attn.yield %[[A5]]
// HALF-NEXT:    }
// HALF-NOT:     "layer.11.w"
// HALF:         return %[[L5]] : tensor<1x4x8xf32>

// rate = 0.25: floor(1/p) = 4, drop depths 4, 8, 12 (1-based) = 3, 7, 11.
// QUARTER-LABEL: func.func @stack(
// QUARTER-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// QUARTER:         %[[L0:.*]] = attn.layer index = 0 score = 9.000000e-01 (%[[X]]) {attn.original_index = 0 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H0:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W0:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P0:.*]] = attn.linear %[[H0]], %[[W0]]
// QUARTER-NEXT:      %[[A0:.*]] = attn.add %[[H0]], %[[P0]]
// QUARTER-NEXT:      attn.yield %[[A0]]
// QUARTER-NEXT:    }
// QUARTER:         %[[L1:.*]] = attn.layer index = 1 score = 1.000000e-01 (%[[L0]]) {attn.original_index = 1 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H1:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W1:.*]] = attn.weight "layer.1.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P1:.*]] = attn.linear %[[H1]], %[[W1]]
// QUARTER-NEXT:      %[[A1:.*]] = attn.add %[[H1]], %[[P1]]
// QUARTER-NEXT:      attn.yield %[[A1]]
// QUARTER-NEXT:    }
// QUARTER:         %[[L2:.*]] = attn.layer index = 2 score = 6.000000e-01 (%[[L1]]) {attn.original_index = 2 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H2:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W2:.*]] = attn.weight "layer.2.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P2:.*]] = attn.linear %[[H2]], %[[W2]]
// QUARTER-NEXT:      %[[A2:.*]] = attn.add %[[H2]], %[[P2]]
// QUARTER-NEXT:      attn.yield %[[A2]]
// QUARTER-NEXT:    }
// QUARTER-NOT:     "layer.3.w"
// QUARTER:         %[[L3:.*]] = attn.layer index = 3 score = 3.000000e-01 (%[[L2]]) {attn.original_index = 4 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H3:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W3:.*]] = attn.weight "layer.4.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P3:.*]] = attn.linear %[[H3]], %[[W3]]
// QUARTER-NEXT:      %[[A3:.*]] = attn.add %[[H3]], %[[P3]]
// QUARTER-NEXT:      attn.yield %[[A3]]
// QUARTER-NEXT:    }
// QUARTER:         %[[L4:.*]] = attn.layer index = 4 score = 8.000000e-01 (%[[L3]]) {attn.original_index = 5 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H4:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W4:.*]] = attn.weight "layer.5.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P4:.*]] = attn.linear %[[H4]], %[[W4]]
// QUARTER-NEXT:      %[[A4:.*]] = attn.add %[[H4]], %[[P4]]
// QUARTER-NEXT:      attn.yield %[[A4]]
// QUARTER-NEXT:    }
// QUARTER:         %[[L5:.*]] = attn.layer index = 5 score = 4.000000e-01 (%[[L4]]) {attn.original_index = 6 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H5:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W5:.*]] = attn.weight "layer.6.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P5:.*]] = attn.linear %[[H5]], %[[W5]]
// QUARTER-NEXT:      %[[A5:.*]] = attn.add %[[H5]], %[[P5]]
// QUARTER-NEXT:      attn.yield %[[A5]]
// QUARTER-NEXT:    }
// QUARTER-NOT:     "layer.7.w"
// QUARTER:         %[[L6:.*]] = attn.layer index = 6 score = -2.500000e-01 (%[[L5]]) {attn.original_index = 8 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H6:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W6:.*]] = attn.weight "layer.8.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P6:.*]] = attn.linear %[[H6]], %[[W6]]
// QUARTER-NEXT:      %[[A6:.*]] = attn.add %[[H6]], %[[P6]]
// QUARTER-NEXT:      attn.yield %[[A6]]
// QUARTER-NEXT:    }
// QUARTER:         %[[L7:.*]] = attn.layer index = 7 score = 5.000000e-01 (%[[L6]]) {attn.original_index = 9 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H7:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W7:.*]] = attn.weight "layer.9.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P7:.*]] = attn.linear %[[H7]], %[[W7]]
// QUARTER-NEXT:      %[[A7:.*]] = attn.add %[[H7]], %[[P7]]
// QUARTER-NEXT:      attn.yield %[[A7]]
// QUARTER-NEXT:    }
// QUARTER:         %[[L8:.*]] = attn.layer index = 8 score = 6.000000e-01 (%[[L7]]) {attn.original_index = 10 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// QUARTER-NEXT:    ^bb0(%[[H8:[^:]+]]: tensor<1x4x8xf32>):
// QUARTER-NEXT:      %[[W8:.*]] = attn.weight "layer.10.w" : tensor<8x8xf32>
// QUARTER-NEXT:      %[[P8:.*]] = attn.linear %[[H8]], %[[W8]]
// QUARTER-NEXT:      %[[A8:.*]] = attn.add %[[H8]], %[[P8]]
// QUARTER-NEXT:      attn.yield %[[A8]]
// QUARTER-NEXT:    }
// QUARTER-NOT:     "layer.11.w"
// QUARTER:         return %[[L8]] : tensor<1x4x8xf32>

// rate = 0.2: floor(1/p) = 5, drop depths 5, 10 (1-based) = 4, 9.
// FIFTH-LABEL: func.func @stack(
// FIFTH-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// FIFTH:         %[[L0:.*]] = attn.layer index = 0 score = 9.000000e-01 (%[[X]]) {attn.original_index = 0 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H0:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W0:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P0:.*]] = attn.linear %[[H0]], %[[W0]]
// FIFTH-NEXT:      %[[A0:.*]] = attn.add %[[H0]], %[[P0]]
// FIFTH-NEXT:      attn.yield %[[A0]]
// FIFTH-NEXT:    }
// FIFTH:         %[[L1:.*]] = attn.layer index = 1 score = 1.000000e-01 (%[[L0]]) {attn.original_index = 1 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H1:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W1:.*]] = attn.weight "layer.1.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P1:.*]] = attn.linear %[[H1]], %[[W1]]
// FIFTH-NEXT:      %[[A1:.*]] = attn.add %[[H1]], %[[P1]]
// FIFTH-NEXT:      attn.yield %[[A1]]
// FIFTH-NEXT:    }
// FIFTH:         %[[L2:.*]] = attn.layer index = 2 score = 6.000000e-01 (%[[L1]]) {attn.original_index = 2 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H2:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W2:.*]] = attn.weight "layer.2.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P2:.*]] = attn.linear %[[H2]], %[[W2]]
// FIFTH-NEXT:      %[[A2:.*]] = attn.add %[[H2]], %[[P2]]
// FIFTH-NEXT:      attn.yield %[[A2]]
// FIFTH-NEXT:    }
// FIFTH:         %[[L3:.*]] = attn.layer index = 3 score = 2.000000e-01 (%[[L2]]) {attn.original_index = 3 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H3:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W3:.*]] = attn.weight "layer.3.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P3:.*]] = attn.linear %[[H3]], %[[W3]]
// FIFTH-NEXT:      %[[A3:.*]] = attn.add %[[H3]], %[[P3]]
// FIFTH-NEXT:      attn.yield %[[A3]]
// FIFTH-NEXT:    }
// FIFTH-NOT:     "layer.4.w"
// FIFTH:         %[[L4:.*]] = attn.layer index = 4 score = 8.000000e-01 (%[[L3]]) {attn.original_index = 5 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H4:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W4:.*]] = attn.weight "layer.5.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P4:.*]] = attn.linear %[[H4]], %[[W4]]
// FIFTH-NEXT:      %[[A4:.*]] = attn.add %[[H4]], %[[P4]]
// FIFTH-NEXT:      attn.yield %[[A4]]
// FIFTH-NEXT:    }
// FIFTH:         %[[L5:.*]] = attn.layer index = 5 score = 4.000000e-01 (%[[L4]]) {attn.original_index = 6 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H5:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W5:.*]] = attn.weight "layer.6.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P5:.*]] = attn.linear %[[H5]], %[[W5]]
// FIFTH-NEXT:      %[[A5:.*]] = attn.add %[[H5]], %[[P5]]
// FIFTH-NEXT:      attn.yield %[[A5]]
// FIFTH-NEXT:    }
// FIFTH:         %[[L6:.*]] = attn.layer index = 6 score = 6.000000e-01 (%[[L5]]) {attn.original_index = 7 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H6:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W6:.*]] = attn.weight "layer.7.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P6:.*]] = attn.linear %[[H6]], %[[W6]]
// FIFTH-NEXT:      %[[A6:.*]] = attn.add %[[H6]], %[[P6]]
// FIFTH-NEXT:      attn.yield %[[A6]]
// FIFTH-NEXT:    }
// FIFTH:         %[[L7:.*]] = attn.layer index = 7 score = -2.500000e-01 (%[[L6]]) {attn.original_index = 8 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H7:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W7:.*]] = attn.weight "layer.8.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P7:.*]] = attn.linear %[[H7]], %[[W7]]
// FIFTH-NEXT:      %[[A7:.*]] = attn.add %[[H7]], %[[P7]]
// FIFTH-NEXT:      attn.yield %[[A7]]
// FIFTH-NEXT:    }
// FIFTH-NOT:     "layer.9.w"
// FIFTH:         %[[L8:.*]] = attn.layer index = 8 score = 6.000000e-01 (%[[L7]]) {attn.original_index = 10 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H8:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W8:.*]] = attn.weight "layer.10.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P8:.*]] = attn.linear %[[H8]], %[[W8]]
// FIFTH-NEXT:      %[[A8:.*]] = attn.add %[[H8]], %[[P8]]
// FIFTH-NEXT:      attn.yield %[[A8]]
// FIFTH-NEXT:    }
// FIFTH:         %[[L9:.*]] = attn.layer index = 9 score = 3.500000e-01 (%[[L8]]) {attn.original_index = 11 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// FIFTH-NEXT:    ^bb0(%[[H9:[^:]+]]: tensor<1x4x8xf32>):
// FIFTH-NEXT:      %[[W9:.*]] = attn.weight "layer.11.w" : tensor<8x8xf32>
// FIFTH-NEXT:      %[[P9:.*]] = attn.linear %[[H9]], %[[W9]]
// FIFTH-NEXT:      %[[A9:.*]] = attn.add %[[H9]], %[[P9]]
// FIFTH-NEXT:      attn.yield %[[A9]]
// FIFTH-NEXT:    }
// FIFTH:         return %[[L9]] : tensor<1x4x8xf32>

// rate = 0.05 (period 20 > depth) and top-k with keep = depth keep every
// layer (still renumbered and annotated).
// ALL-LABEL: func.func @stack(
// ALL-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// ALL:         %[[L0:.*]] = attn.layer index = 0 score = 9.000000e-01 (%[[X]]) {attn.original_index = 0 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H0:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W0:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P0:.*]] = attn.linear %[[H0]], %[[W0]]
// ALL-NEXT:      %[[A0:.*]] = attn.add %[[H0]], %[[P0]]
// ALL-NEXT:      attn.yield %[[A0]]
// ALL-NEXT:    }
// ALL:         %[[L1:.*]] = attn.layer index = 1 score = 1.000000e-01 (%[[L0]]) {attn.original_index = 1 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H1:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W1:.*]] = attn.weight "layer.1.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P1:.*]] = attn.linear %[[H1]], %[[W1]]
// ALL-NEXT:      %[[A1:.*]] = attn.add %[[H1]], %[[P1]]
// ALL-NEXT:      attn.yield %[[A1]]
// ALL-NEXT:    }
// ALL:         %[[L2:.*]] = attn.layer index = 2 score = 6.000000e-01 (%[[L1]]) {attn.original_index = 2 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H2:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W2:.*]] = attn.weight "layer.2.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P2:.*]] = attn.linear %[[H2]], %[[W2]]
// ALL-NEXT:      %[[A2:.*]] = attn.add %[[H2]], %[[P2]]
// ALL-NEXT:      attn.yield %[[A2]]
// ALL-NEXT:    }
// ALL:         %[[L3:.*]] = attn.layer index = 3 score = 2.000000e-01 (%[[L2]]) {attn.original_index = 3 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H3:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W3:.*]] = attn.weight "layer.3.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P3:.*]] = attn.linear %[[H3]], %[[W3]]
// ALL-NEXT:      %[[A3:.*]] = attn.add %[[H3]], %[[P3]]
// ALL-NEXT:      attn.yield %[[A3]]
// ALL-NEXT:    }
// ALL:         %[[L4:.*]] = attn.layer index = 4 score = 3.000000e-01 (%[[L3]]) {attn.original_index = 4 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H4:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W4:.*]] = attn.weight "layer.4.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P4:.*]] = attn.linear %[[H4]], %[[W4]]
// ALL-NEXT:      %[[A4:.*]] = attn.add %[[H4]], %[[P4]]
// ALL-NEXT:      attn.yield %[[A4]]
// ALL-NEXT:    }
// ALL:         %[[L5:.*]] = attn.layer index = 5 score = 8.000000e-01 (%[[L4]]) {attn.original_index = 5 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H5:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W5:.*]] = attn.weight "layer.5.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P5:.*]] = attn.linear %[[H5]], %[[W5]]
// ALL-NEXT:      %[[A5:.*]] = attn.add %[[H5]], %[[P5]]
// ALL-NEXT:      attn.yield %[[A5]]
// ALL-NEXT:    }
// ALL:         %[[L6:.*]] = attn.layer index = 6 score = 4.000000e-01 (%[[L5]]) {attn.original_index = 6 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H6:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W6:.*]] = attn.weight "layer.6.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P6:.*]] = attn.linear %[[H6]], %[[W6]]
// ALL-NEXT:      %[[A6:.*]] = attn.add %[[H6]], %[[P6]]
// ALL-NEXT:      attn.yield %[[A6]]
// ALL-NEXT:    }
// ALL:         %[[L7:.*]] = attn.layer index = 7 score = 6.000000e-01 (%[[L6]]) {attn.original_index = 7 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H7:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W7:.*]] = attn.weight "layer.7.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P7:.*]] = attn.linear %[[H7]], %[[W7]]
// ALL-NEXT:      %[[A7:.*]] = attn.add %[[H7]], %[[P7]]
// ALL-NEXT:      attn.yield %[[A7]]
// ALL-NEXT:    }
// ALL:         %[[L8:.*]] = attn.layer index = 8 score = -2.500000e-01 (%[[L7]]) {attn.original_index = 8 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H8:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W8:.*]] = attn.weight "layer.8.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P8:.*]] = attn.linear %[[H8]], %[[W8]]
// ALL-NEXT:      %[[A8:.*]] = attn.add %[[H8]], %[[P8]]
// ALL-NEXT:      attn.yield %[[A8]]
// ALL-NEXT:    }
// ALL:         %[[L9:.*]] = attn.layer index = 9 score = 5.000000e-01 (%[[L8]]) {attn.original_index = 9 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H9:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W9:.*]] = attn.weight "layer.9.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P9:.*]] = attn.linear %[[H9]], %[[W9]]
// ALL-NEXT:      %[[A9:.*]] = attn.add %[[H9]], %[[P9]]
// ALL-NEXT:      attn.yield %[[A9]]
// ALL-NEXT:    }
// ALL:         %[[L10:.*]] = attn.layer index = 10 score = 6.000000e-01 (%[[L9]]) {attn.original_index = 10 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H10:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W10:.*]] = attn.weight "layer.10.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P10:.*]] = attn.linear %[[H10]], %[[W10]]
// ALL-NEXT:      %[[A10:.*]] = attn.add %[[H10]], %[[P10]]
// ALL-NEXT:      attn.yield %[[A10]]
// ALL-NEXT:    }
// ALL:         %[[L11:.*]] = attn.layer index = 11 score = 3.500000e-01 (%[[L10]]) {attn.original_index = 11 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// ALL-NEXT:    ^bb0(%[[H11:[^:]+]]: tensor<1x4x8xf32>):
// ALL-NEXT:      %[[W11:.*]] = attn.weight "layer.11.w" : tensor<8x8xf32>
// ALL-NEXT:      %[[P11:.*]] = attn.linear %[[H11]], %[[W11]]
// ALL-NEXT:      %[[A11:.*]] = attn.add %[[H11]], %[[P11]]
// ALL-NEXT:      attn.yield %[[A11]]
// ALL-NEXT:    }
// ALL:         return %[[L11]] : tensor<1x4x8xf32>

// TOPK-LABEL: func.func @stack(
// TOPK-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// TOPK:         %[[L0:.*]] = attn.layer index = 0 score = 9.000000e-01 (%[[X]]) {attn.original_index = 0 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// TOPK-NEXT:    ^bb0(%[[H0:[^:]+]]: tensor<1x4x8xf32>):
// TOPK-NEXT:      %[[W0:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// TOPK-NEXT:      %[[P0:.*]] = attn.linear %[[H0]], %[[W0]]
// TOPK-NEXT:      %[[A0:.*]] = attn.add %[[H0]], %[[P0]]
// TOPK-NEXT:      attn.yield %[[A0]]
// TOPK-NEXT:    }
// TOPK-NOT:     "layer.1.w"
// TOPK:         %[[L1:.*]] = attn.layer index = 1 score = 6.000000e-01 (%[[L0]]) {attn.original_index = 2 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// TOPK-NEXT:    ^bb0(%[[H1:[^:]+]]: tensor<1x4x8xf32>):
// TOPK-NEXT:      %[[W1:.*]] = attn.weight "layer.2.w" : tensor<8x8xf32>
// TOPK-NEXT:      %[[P1:.*]] = attn.linear %[[H1]], %[[W1]]
// TOPK-NEXT:      %[[A1:.*]] = attn.add %[[H1]], %[[P1]]
// TOPK-NEXT:      attn.yield %[[A1]]
// TOPK-NEXT:    }
// TOPK-NOT:     "layer.3.w"
// TOPK-NOT:     "layer.4.w"
// TOPK:         %[[L2:.*]] = attn.layer index = 2 score = 8.000000e-01 (%[[L1]]) {attn.original_index = 5 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// TOPK-NEXT:    ^bb0(%[[H2:[^:]+]]: tensor<1x4x8xf32>):
// TOPK-NEXT:      %[[W2:.*]] = attn.weight "layer.5.w" : tensor<8x8xf32>
// TOPK-NEXT:      %[[P2:.*]] = attn.linear %[[H2]], %[[W2]]
// TOPK-NEXT:      %[[A2:.*]] = attn.add %[[H2]], %[[P2]]
// TOPK-NEXT:      attn.yield %[[A2]]
// TOPK-NEXT:    }
// TOPK-NOT:     "layer.6.w"
// TOPK:         %[[L3:.*]] = attn.layer index = 3 score = 6.000000e-01 (%[[L2]]) {attn.original_index = 7 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// TOPK-NEXT:    ^bb0(%[[H3:[^:]+]]: tensor<1x4x8xf32>):
// TOPK-NEXT:      %[[W3:.*]] = attn.weight "layer.7.w" : tensor<8x8xf32>
// TOPK-NEXT:      %[[P3:.*]] = attn.linear %[[H3]], %[[W3]]
// TOPK-NEXT:      %[[A3:.*]] = attn.add %[[H3]], %[[P3]]
// TOPK-NEXT:      attn.yield %[[A3]]
// TOPK-NEXT:    }
// TOPK-NOT:     "layer.8.w"
// TOPK-NOT:     "layer.9.w"
// TOPK-NOT:     "layer.10.w"
// TOPK-NOT:     "layer.11.w"
// TOPK:         return %[[L3]] : tensor<1x4x8xf32>

// KEEP-LABEL: func.func @stack(
// KEEP-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// KEEP:         %[[L0:.*]] = attn.layer index = 0 score = 9.000000e-01 (%[[X]]) {attn.original_index = 0 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// KEEP-NEXT:    ^bb0(%[[H0:[^:]+]]: tensor<1x4x8xf32>):
// KEEP-NEXT:      %[[W0:.*]] = attn.weight "layer.0.w" : tensor<8x8xf32>
// KEEP-NEXT:      %[[P0:.*]] = attn.linear %[[H0]], %[[W0]]
// KEEP-NEXT:      %[[A0:.*]] = attn.add %[[H0]], %[[P0]]
// KEEP-NEXT:      attn.yield %[[A0]]
// KEEP-NEXT:    }
// KEEP-NOT:     "layer.1.w"
// KEEP-NOT:     "layer.2.w"
// KEEP-NOT:     "layer.3.w"
// KEEP-NOT:     "layer.4.w"
// KEEP:         %[[L1:.*]] = attn.layer index = 1 score = 8.000000e-01 (%[[L0]]) {attn.original_index = 5 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// KEEP-NEXT:    ^bb0(%[[H1:[^:]+]]: tensor<1x4x8xf32>):
// KEEP-NEXT:      %[[W1:.*]] = attn.weight "layer.5.w" : tensor<8x8xf32>
// KEEP-NEXT:      %[[P1:.*]] = attn.linear %[[H1]], %[[W1]]
// KEEP-NEXT:      %[[A1:.*]] = attn.add %[[H1]], %[[P1]]
// KEEP-NEXT:      attn.yield %[[A1]]
// KEEP-NEXT:    }
// KEEP-NOT:     "layer.6.w"
// KEEP-NOT:     "layer.7.w"
// KEEP-NOT:     "layer.8.w"
// KEEP-NOT:     "layer.9.w"
// KEEP-NOT:     "layer.10.w"
// KEEP:         %[[L2:.*]] = attn.layer index = 2 score = 3.500000e-01 (%[[L1]]) {attn.original_index = 11 : i64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// KEEP-NEXT:    ^bb0(%[[H2:[^:]+]]: tensor<1x4x8xf32>):
// KEEP-NEXT:      %[[W2:.*]] = attn.weight "layer.11.w" : tensor<8x8xf32>
// KEEP-NEXT:      %[[P2:.*]] = attn.linear %[[H2]], %[[W2]]
// KEEP-NEXT:      %[[A2:.*]] = attn.add %[[H2]], %[[P2]]
// KEEP-NEXT:      attn.yield %[[A2]]
// KEEP-NEXT:    }
// KEEP:         return %[[L2]] : tensor<1x4x8xf32>

// REPORT: layer-drop.mlir:[[@LINE+1]]:1: remark: attn-layer-drop (top-k): kept [0 (score 9.000000e-01), 2 (score 6.000000e-01), 5 (score 8.000000e-01), 7 (score 6.000000e-01)], dropped [1 (score 1.000000e-01), 3 (score 2.000000e-01), 4 (score 3.000000e-01), 6 (score 4.000000e-01), 8 (score -2.500000e-01), 9 (score 5.000000e-01), 10 (score 6.000000e-01), 11 (score 3.500000e-01)]
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
  %3 = attn.layer index = 3 score = 0.2 (%2) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.3.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %4 = attn.layer index = 4 score = 0.3 (%3) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.4.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %5 = attn.layer index = 5 score = 0.8 (%4) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.5.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %6 = attn.layer index = 6 score = 0.4 (%5) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.6.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %7 = attn.layer index = 7 score = 0.6 (%6) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.7.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %8 = attn.layer index = 8 score = -0.25 (%7) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.8.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %9 = attn.layer index = 9 score = 0.5 (%8) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.9.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %10 = attn.layer index = 10 score = 0.6 (%9) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.10.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %11 = attn.layer index = 11 score = 0.35 (%10) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layer.11.w" : tensor<8x8xf32>
    %p = attn.linear %h, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %a = attn.add %h, %p : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  return %11 : tensor<1x4x8xf32>
}
