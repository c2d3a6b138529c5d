// RUN: attn-opt %s --split-input-file --attn-convert-precision=precision=f16 | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-convert-precision="precision=bf16 io-precision=bf16" | FileCheck %s --check-prefix=IO
// RUN: attn-opt %s --split-input-file --attn-convert-precision=precision=f32 | FileCheck %s --check-prefix=NOOP
// RUN: not attn-opt %s --attn-convert-precision=precision=f64 2>&1 | FileCheck %s --check-prefix=BADP
// RUN: not attn-opt %s --attn-convert-precision="precision=f16 io-precision=bf16" 2>&1 | FileCheck %s --check-prefix=BADIO

// BADP: attn-opt: for the --precision option: unknown precision 'f64' (expected f32, f16 or bf16)
// BADIO: error: attn-convert-precision: io-precision must be f32 or the precision (f16), got 'bf16'

// attn ops compute in f16; what they do not own (the argument, the constant
// bias an importer left, the slice, the results) keeps f32 and meets them
// through one conversion per value. The weight's type changed: the runtime
// converts the checkpoint's tensor (`convert`).
// CHECK-LABEL: func.func @boundary(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>)
// CHECK:         %[[XE:.*]] = tensor.empty() : tensor<2x8xf16>
// CHECK:         %[[XH:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x8xf32>) outs(%[[XE]] : tensor<2x8xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         %[[W:.*]] = attn.weight "w" {convert} : tensor<8x8xf16>
// CHECK:         %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK:         %[[CH:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<8xf32>)
// CHECK:         %[[Y:.*]] = attn.linear %[[XH]], %[[W]], %[[CH]] : (tensor<2x8xf16>, tensor<8x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
// CHECK:         %[[YF:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x8xf16>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[YF]]
// CHECK:         return %[[YF]], %[[S]] : tensor<2x8xf32>, tensor<2x4xf32>
// With io-precision = precision the signature takes the type too.
// IO-LABEL: func.func @boundary(
// IO-SAME:    %[[X:[^:]+]]: tensor<2x8xbf16>) -> (tensor<2x8xbf16>, tensor<2x4xbf16>)
// IO:         %[[W:.*]] = attn.weight "w" {convert} : tensor<8x8xbf16>
// IO:         %[[Y:.*]] = attn.linear %[[X]], %[[W]], %{{.*}} : (tensor<2x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
// IO:         %[[YF:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x8xbf16>) outs(%{{.*}} : tensor<2x8xf32>)
// IO:         %[[S:.*]] = tensor.extract_slice %[[YF]]
// IO:         %[[SH:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// IO:         return %[[Y]], %[[SH]] : tensor<2x8xbf16>, tensor<2x4xbf16>
// NOOP-LABEL: func.func @boundary(
// NOOP:         attn.weight "w" : tensor<8x8xf32>
// NOOP-NOT:     linalg.generic
func.func @boundary(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>) {
  %w = attn.weight "w" : tensor<8x8xf32>
  %c = arith.constant dense<1.0> : tensor<8xf32>
  %y = attn.linear %x, %w, %c : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %s = tensor.extract_slice %y[0, 0] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
  return %y, %s : tensor<2x8xf32>, tensor<2x4xf32>
}

// -----

// Layers: operands, block arguments and results take the type; integer ids
// are left alone.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<1x4xi32>) -> tensor<1x4x8xf32>
// CHECK:         %[[T:.*]] = attn.weight "table" {convert} : tensor<16x8xf16>
// CHECK:         %[[E:.*]] = attn.embedding %[[IDS]], %[[T]] : (tensor<1x4xi32>, tensor<16x8xf16>) -> tensor<1x4x8xf16>
// CHECK:         %[[L:.*]] = attn.layer index = 0 (%[[E]]) : (tensor<1x4x8xf16>) -> tensor<1x4x8xf16> {
// CHECK:         ^bb0(%[[H:[^:]+]]: tensor<1x4x8xf16>):
// CHECK:           %[[G:.*]] = attn.weight "g" {convert} : tensor<8xf16>
// CHECK:           %[[B:.*]] = attn.weight "b" {convert} : tensor<8xf16>
// CHECK:           %[[N:.*]] = attn.layer_norm %[[H]], %[[G]], %[[B]] : tensor<1x4x8xf16>, tensor<8xf16>, tensor<8xf16>
// CHECK:           attn.yield %[[N]] : tensor<1x4x8xf16>
// CHECK:         %[[LF:.*]] = linalg.generic {{.*}} ins(%[[L]] : tensor<1x4x8xf16>)
// CHECK:         return %[[LF]] : tensor<1x4x8xf32>
// IO-LABEL: func.func @layers(
// IO-SAME:    tensor<1x4xi32>) -> tensor<1x4x8xbf16>
func.func @layers(%ids: tensor<1x4xi32>) -> tensor<1x4x8xf32> {
  %t = attn.weight "table" : tensor<16x8xf32>
  %e = attn.embedding %ids, %t : (tensor<1x4xi32>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %l = attn.layer index = 0 (%e) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %g = attn.weight "g" : tensor<8xf32>
    %b = attn.weight "b" : tensor<8xf32>
    %n = attn.layer_norm %h, %g, %b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
    attn.yield %n : tensor<1x4x8xf32>
  }
  return %l : tensor<1x4x8xf32>
}

// -----

// An f16 model is already in f16: nothing changes, no weight converts.
// CHECK-LABEL: func.func @already_f16(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:    %[[W:.*]] = attn.weight "w" : tensor<8x8xf16>
// CHECK-NEXT:    %[[Y:.*]] = attn.linear %[[X]], %[[W]]
// CHECK-NEXT:    return %[[Y]]
func.func @already_f16(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %w = attn.weight "w" : tensor<8x8xf16>
  %y = attn.linear %x, %w : (tensor<2x8xf16>, tensor<8x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Model state (the cache, tied to result 1 by attn.state_arg) takes the
// compute type even with f32 io-precision, so that the cache write updates
// the argument itself (no converted copy); the other argument and result keep
// f32.
// CHECK-LABEL: func.func @state(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x1x4xf32>, %[[P:[^:]+]]: tensor<1xi64>, %[[C:[^:]+]]: tensor<1x2x8x4xf16>)
// CHECK-SAME:    -> (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf16> {attn.state_arg = 2 : i64})
// CHECK:         %[[XH:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x2x1x4xf32>)
// CHECK:         %[[W:.*]] = attn.cache_write %[[XH]] into %[[C]] at %[[P]] : tensor<1x2x1x4xf16>, tensor<1x2x8x4xf16>, tensor<1xi64>
// CHECK:         return %[[X]], %[[W]] : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf16>
// IO-LABEL: func.func @state(
// IO-SAME:    tensor<1x2x1x4xbf16>, %{{[^:]+}}: tensor<1xi64>, %{{[^:]+}}: tensor<1x2x8x4xbf16>)
// NOOP-LABEL: func.func @state(
// NOOP-SAME:    tensor<1x2x8x4xf32>)
func.func @state(%x: tensor<1x2x1x4xf32>, %pos: tensor<1xi64>,
                 %cache: tensor<1x2x8x4xf32>)
    -> (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32> {attn.state_arg = 2 : i64}) {
  %0 = attn.cache_write %x into %cache at %pos : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>
  return %x, %0 : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// Head split and merge between attn ops (as attn-decompose-mha leaves
// them): the reshapes, the slice and the transpose move f16 values, with no
// widening to f32 around them.
// CHECK-LABEL: func.func @head_split
// CHECK:         %[[QKV:.*]] = attn.linear {{.*}} -> tensor<1x4x24xf16>
// CHECK-NOT:     arith.extf
// CHECK-NOT:     arith.truncf
// CHECK:         %[[Q:.*]] = tensor.extract_slice %[[QKV]][0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<1x4x24xf16> to tensor<1x4x8xf16>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[Q]] {{.*}} : tensor<1x4x8xf16> into tensor<1x4x2x4xf16>
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<1x2x4x4xf16>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<1x4x2x4xf16>) outs(%[[INIT]] : tensor<1x2x4x4xf16>) permutation = [0, 2, 1, 3]
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[T]] {{.*}} : tensor<1x2x4x4xf16> into tensor<1x8x4xf16>
// CHECK-NOT:     arith.extf
// CHECK-NOT:     arith.truncf
// CHECK:         attn.linear %[[C]]
func.func @head_split(%x: tensor<1x4x16xf32>) -> tensor<1x8x4xf32> {
  %w = attn.weight "w" : tensor<24x16xf32>
  %qkv = attn.linear %x, %w : (tensor<1x4x16xf32>, tensor<24x16xf32>) -> tensor<1x4x24xf32>
  %q = tensor.extract_slice %qkv[0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<1x4x24xf32> to tensor<1x4x8xf32>
  %e = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %init = tensor.empty() : tensor<1x2x4x4xf32>
  %t = linalg.transpose ins(%e : tensor<1x4x2x4xf32>) outs(%init : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %c = tensor.collapse_shape %t [[0], [1, 2], [3]] : tensor<1x2x4x4xf32> into tensor<1x8x4xf32>
  %w2 = attn.weight "w2" : tensor<4x4xf32>
  %y = attn.linear %c, %w2 : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// The ONNX importer gives the Q, K and V head transposes one shared
// tensor.empty: each transpose is rebuilt on its own f16 init.
// CHECK-LABEL: func.func @shared_init
// CHECK:         %[[QKV:.*]] = attn.linear {{.*}} -> tensor<1x4x16xf16>
// CHECK-NOT:     arith.extf
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<1x4x2x4xf16>) outs(%{{.*}} : tensor<1x2x4x4xf16>)
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<1x4x2x4xf16>) outs(%{{.*}} : tensor<1x2x4x4xf16>)
// CHECK-NOT:     arith.extf
// CHECK:         attn.sdpa {{.*}} : tensor<1x2x4x4xf16>, tensor<1x2x4x4xf16>, tensor<1x2x4x4xf16> -> tensor<1x2x4x4xf16>
func.func @shared_init(%x: tensor<1x4x16xf32>) -> tensor<1x2x4x4xf32> {
  %w = attn.weight "w" : tensor<16x16xf32>
  %qk = attn.linear %x, %w : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %q = tensor.extract_slice %qk[0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<1x4x16xf32> to tensor<1x4x8xf32>
  %k = tensor.extract_slice %qk[0, 0, 8] [1, 4, 8] [1, 1, 1] : tensor<1x4x16xf32> to tensor<1x4x8xf32>
  %eq = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %ek = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %init = tensor.empty() : tensor<1x2x4x4xf32>
  %tq = linalg.transpose ins(%eq : tensor<1x4x2x4xf32>) outs(%init : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %tk = linalg.transpose ins(%ek : tensor<1x4x2x4xf32>) outs(%init : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %o = attn.sdpa %tq, %tk, %tk score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %o : tensor<1x2x4x4xf32>
}
