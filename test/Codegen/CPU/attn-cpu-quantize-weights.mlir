// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=8 group-size=8" | FileCheck %s --check-prefix=INT8
// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=4 group-size=8" | FileCheck %s --check-prefix=INT4
// RUN: not attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=8 group-size=32" 2>&1 | FileCheck %s --check-prefix=GROUP
// RUN: not attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=3" 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not attn-opt %s --split-input-file --attn-cpu-quantize-weights="group-size=12" 2>&1 | FileCheck %s --check-prefix=MULT8
// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=8 group-size=8 int8-activations=true" | FileCheck %s --check-prefix=ACT
// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=4 group-size=8 int8-activations=true" | FileCheck %s --check-prefix=ACT4
// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=4 group-size=8 int8-activations=true interleave-columns=16" | FileCheck %s --check-prefix=IL4
// RUN: attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=8 group-size=8 int8-activations=true interleave-columns=16" | FileCheck %s --check-prefix=IL8
// RUN: not attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=8 group-size=8 interleave-columns=16" 2>&1 | FileCheck %s --check-prefix=ILACT
// RUN: not attn-opt %s --split-input-file --attn-cpu-quantize-weights="bits=8 group-size=8 int8-activations=true interleave-columns=8" 2>&1 | FileCheck %s --check-prefix=ILACT

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// x W^T with W [24, 16] (K = 16): the contraction reads the packed words
// (int8: [N, K / 4]; int4: [N, 4] per block of 32 weights, the block
// padded past K) and the group scales [N, K / G], widens and scales the
// weight in its body and accumulates in f32; the f32 weight is no longer
// bound, the module records how to quantize it and which checkpoint tensor
// no binding reads any more.
// int8 weight k's word is k / 4, its field at bit 8 * (k mod 4). int4 weight k
// lives in block k / 32's byte k mod 16, in the high nibble for the second
// half of the block.
// INT8-DAG:   #[[WMAP8:.*]] = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 4)>
// INT4-DAG:   #[[WMAP4:.*]] = affine_map<(d0, d1, d2) -> (d1, (d2 floordiv 32) * 4 + (d2 mod 16) floordiv 4)>
// INT8-LABEL: module attributes {attn.woq_replaced = ["w"], attn.woq_weights = {w.q8 = {bits = 8 : i64, group = 8 : i64, shape = array<i64: 24, 16>, weight = {name = "w", transpose}}}}
// INT8-LABEL: func.func @projection
// INT8-NOT:     attn.weight "w" {
// INT8-DAG:     %[[QW:.*]] = attn.weight "w.q8" : tensor<24x4xi32>
// INT8-DAG:     %[[S:.*]] = attn.weight "w.q8_scale" : tensor<24x2xf32>
// INT8:         %[[Y:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[WMAP8]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[QW]], %[[S]] : tensor<?x16xf32>, tensor<24x4xi32>, tensor<24x2xf32>) outs(%{{.*}} : tensor<?x24xf32>) attrs =  {attn.woq_matmul = {bits = 8 : i64, group = 8 : i64}}
// INT8:           linalg.index 2
// INT8:           arith.shli
// INT8:           arith.shrsi
// INT8:           arith.sitofp
// INT8:           arith.mulf
// INT8:           arith.mulf
// INT8:           arith.addf
// INT8:         return %[[Y]]
// INT4-LABEL: module attributes {attn.woq_replaced = ["w"], attn.woq_weights = {w.q4 = {bits = 4 : i64, group = 8 : i64, shape = array<i64: 24, 16>, weight = {name = "w", transpose}}}}
// INT4-LABEL: func.func @projection
// INT4-DAG:     %[[QW4:.*]] = attn.weight "w.q4" : tensor<24x4xi32>
// INT4-DAG:     attn.weight "w.q4_scale" : tensor<24x2xf32>
// INT4:         linalg.generic {indexing_maps = [#{{.*}}, #[[WMAP4]], #{{.*}}, #{{.*}}], {{.*}} ins(%{{.*}}, %[[QW4]], %{{.*}} : {{.*}}) {{.*}}attn.woq_matmul = {bits = 4 : i64, group = 8 : i64}
// INT4:           %[[K:.*]] = linalg.index 2
// INT4:           %[[LOW:.*]] = arith.remui %[[K]], %c4
// INT4:           %[[BYTEBIT:.*]] = arith.muli %c8{{.*}}, %[[LOW]]
// INT4:           %[[INBLOCK:.*]] = arith.remui %[[K]], %c32
// INT4:           %[[HALF:.*]] = arith.divui %[[INBLOCK]], %c16
// INT4:           %[[NIBBLE:.*]] = arith.muli %c4{{.*}}, %[[HALF]]
// INT4:           %[[START:.*]] = arith.addi %[[BYTEBIT]], %[[NIBBLE]]
// INT4:           %[[START32:.*]] = arith.index_cast %[[START]] : index to i32
// INT4:           %[[UP:.*]] = arith.subi %c28_i32, %[[START32]]
// INT4:           %[[TOP:.*]] = arith.shli %{{.*}}, %[[UP]]
// INT4:           arith.shrsi %[[TOP]], %c28_i32
// With int8 activations: per row and group of 8, max |x| over the row
// viewed as [M, K / 8, 8] (maxnumf, a reduction LLVM vectorizes); the
// scale max / 127 (1 for a zero group); the rows, in the same view so that
// a group's loop divides by one scale, rounded half to even, clamped to
// +-127, stored as i8 and collapsed back to [M, K]; the contraction reads
// them with both scales and is marked activations = 8.
// ACT-DAG:    #[[GROUPS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// ACT-DAG:    #[[PERGROUP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// ACT-DAG:    #[[AMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// ACT-DAG:    #[[RSMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 8)>
// ACT-LABEL: func.func @projection
// ACT-SAME:      (%[[X:[^:]+]]: tensor<?x16xf32>
// ACT-DAG:     %[[QW:.*]] = attn.weight "w.q8" : tensor<24x4xi32>
// ACT-DAG:     %[[S:.*]] = attn.weight "w.q8_scale" : tensor<24x2xf32>
// ACT:         %[[G:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] {{.*}} : tensor<?x16xf32> into tensor<?x2x8xf32>
// ACT:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[GROUPS]], #[[PERGROUP]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[G]] : tensor<?x2x8xf32>)
// ACT:           math.absf
// ACT:           arith.maxnumf
// ACT:         %[[RS:.*]] = linalg.generic {{.*}} ins(%[[MAX]] : tensor<?x2xf32>)
// ACT:           arith.divf %{{.*}}, %{{.*}} : f32
// ACT:           arith.cmpf oeq
// ACT:           arith.select
// ACT:         %[[QG:.*]] = linalg.generic {indexing_maps = [#[[GROUPS]], #[[PERGROUP]], #[[GROUPS]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[G]], %[[RS]] : tensor<?x2x8xf32>, tensor<?x2xf32>) outs(%{{.*}} : tensor<?x2x8xi8>)
// ACT:           arith.divf
// ACT:           math.roundeven
// ACT:           arith.maxnumf
// ACT:           arith.minnumf
// ACT:           arith.fptosi %{{.*}} : f32 to i8
// ACT:         %[[Q:.*]] = tensor.collapse_shape %[[QG]] {{\[\[}}0], [1, 2]] : tensor<?x2x8xi8> into tensor<?x16xi8>
// ACT:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[AMAP]], #{{.*}}, #{{.*}}, #[[RSMAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[Q]], %[[QW]], %[[S]], %[[RS]] : tensor<?x16xi8>, tensor<24x4xi32>, tensor<24x2xf32>, tensor<?x2xf32>) outs(%{{.*}} : tensor<?x24xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 8 : i64, group = 8 : i64}}
// ACT:           arith.sitofp %{{.*}} : i32 to f32
// ACT:           arith.sitofp %{{.*}} : i8 to f32
// ACT:           arith.mulf
// ACT:           arith.mulf
// ACT:           arith.mulf
// ACT:           arith.addf
// ACT:         return %[[Y]]
// ACT-LABEL: func.func @tied
// ACT4-LABEL: func.func @projection
// ACT4:         %[[Q:.*]] = tensor.collapse_shape {{.*}} into tensor<?x16xi8>
// ACT4:         linalg.generic {{.*}} ins(%[[Q]], %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x16xi8>, tensor<24x4xi32>, tensor<24x2xf32>, tensor<?x2xf32>) {{.*}}attn.woq_matmul = {activations = 8 : i64, bits = 4 : i64, group = 8 : i64}
// ACT4-LABEL: func.func @tied
// Interleaved (AVX-512 VNNI): 16 rows of W a word at a time, N = 24
// padded to 2 blocks; weight k of row n in word (n / 16, k / 8, n mod 16)
// (int4; int8: k / 4), its field at 8 * (k mod 4), plus 4 for k mod 8 >= 4
// (int4); the scales [2, K / G, 16] the same way (with G = 8 the int4
// words' map). The records and the
// contraction's mark carry interleave = 16.
// IL4-DAG:    #[[IW4:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2 floordiv 8, d1 mod 16)>
// IL4-LABEL: module attributes {attn.woq_replaced = ["w"], attn.woq_weights = {w.q4 = {bits = 4 : i64, group = 8 : i64, interleave = 16 : i64, shape = array<i64: 24, 16>, weight = {name = "w", transpose}}}}
// IL4-LABEL: func.func @projection
// IL4-DAG:     %[[QW:.*]] = attn.weight "w.q4" : tensor<2x2x16xi32>
// IL4-DAG:     %[[S:.*]] = attn.weight "w.q4_scale" : tensor<2x2x16xf32>
// IL4:         linalg.generic {indexing_maps = [#{{.*}}, #[[IW4]], #[[IW4]], #{{.*}}, #{{.*}}], {{.*}} ins(%{{.*}}, %[[QW]], %[[S]], %{{.*}} : tensor<?x16xi8>, tensor<2x2x16xi32>, tensor<2x2x16xf32>, tensor<?x2xf32>) {{.*}}attn.woq_matmul = {activations = 8 : i64, bits = 4 : i64, group = 8 : i64, interleave = 16 : i64}
// IL4:           %[[K:.*]] = linalg.index 2
// IL4:           %[[LOW:.*]] = arith.remui %[[K]], %c4
// IL4:           %[[BYTEBIT:.*]] = arith.muli %c8{{.*}}, %[[LOW]]
// IL4:           %[[INWORD:.*]] = arith.remui %[[K]], %c8
// IL4:           %[[HALF:.*]] = arith.divui %[[INWORD]], %c4
// IL4:           %[[NIBBLE:.*]] = arith.muli %c4{{.*}}, %[[HALF]]
// IL4:           arith.addi %[[BYTEBIT]], %[[NIBBLE]]
// IL4-LABEL: func.func @tied
// IL4:         attn.weight "table.q4" : tensor<1x1x16xi32>
// IL4:         attn.weight "q+k.q4" : tensor<1x1x16xi32>
// IL8-DAG:    #[[IW8:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2 floordiv 4, d1 mod 16)>
// IL8-LABEL: func.func @projection
// IL8-DAG:     %[[QW:.*]] = attn.weight "w.q8" : tensor<2x4x16xi32>
// IL8-DAG:     attn.weight "w.q8_scale" : tensor<2x2x16xf32>
// IL8:         linalg.generic {indexing_maps = [#{{.*}}, #[[IW8]], #{{.*}}, #{{.*}}, #{{.*}}], {{.*}} ins(%{{.*}}, %[[QW]], %{{.*}}, %{{.*}} : tensor<?x16xi8>, tensor<2x4x16xi32>, tensor<2x2x16xf32>, tensor<?x2xf32>) {{.*}}interleave = 16 : i64
// IL8-LABEL: func.func @tied
// ILACT:        error: attn-cpu-quantize-weights: interleave-columns must be 0, or 16 with int8-activations, got
// GROUP:        error: attn-cpu-quantize-weights: the input size K = 16 of the projection by 'w' is not a multiple of group-size 32
// BITS:         error: attn-cpu-quantize-weights: bits must be 8 or 4, got 3
// MULT8:        error: attn-cpu-quantize-weights: group-size must be a positive multiple of 8, got 12
func.func @projection(%x: tensor<?x16xf32>, %init: tensor<?x24xf32>) -> tensor<?x24xf32> {
  %w = attn.weight "w" {transpose} : tensor<24x16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x16xf32>, tensor<24x16xf32>) outs(%init : tensor<?x24xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x24xf32>
  return %0 : tensor<?x24xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A tied table: the LM head's binding is quantized, the embedding keeps
// gathering from the f32 tensor, which therefore is not replaced; the
// packed QKV binding gets one quantized form for its concatenation.
// INT8-LABEL: module attributes {attn.woq_replaced = ["k", "q"], attn.woq_weights = {"q+k.q8" = {bits = 8 : i64, group = 8 : i64, shape = array<i64: 16, 8>, weight = {concat_axis = 0 : i64, concat_names = ["q", "k"], name = "q+k"}}, table.q8 = {bits = 8 : i64, group = 8 : i64, shape = array<i64: 8, 8>, weight = {name = "table"}}}}
// INT8-LABEL: func.func @tied
// INT8:         attn.weight "table" : tensor<8x8xf32>
// INT8:         attn.weight "table.q8" : tensor<8x2xi32>
// INT8:         attn.weight "q+k.q8" : tensor<16x2xi32>
func.func @tied(%x: tensor<4x8xf32>, %init: tensor<4x8xf32>, %init2: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x16xf32>) {
  %w = attn.weight "table" : tensor<8x8xf32>
  %qk = attn.weight "q+k" {concat_names = ["q", "k"], concat_axis = 0 : i64} : tensor<16x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %qk : tensor<4x8xf32>, tensor<16x8xf32>) outs(%init2 : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0, %w, %1 : tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x16xf32>
}
