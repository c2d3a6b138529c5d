// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention))" \
// RUN:   | FileCheck %s
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention{staging=plain ldmatrix=0}))" \
// RUN:   | FileCheck %s --check-prefix=PLAIN

// The tensor-core flash kernels with an additive score bias (attn.sdpa's
// `bias`, attn.mha's `score_bias`), added to the scaled scores before the
// masks, and with static Sq and Sk that are not multiples of 16.
// Numerics: test/Integration/GPU/flash-mma-emulation.test.

// A key-padding mask ([B, 1, 1, Sk], transformers' extended attention mask):
// per key block, one 4-byte load of the keys 2t, 2t + 1 of each n8 tile,
// shared by the thread's two rows, widened and added to the scaled scores.
// CHECK-LABEL: func.func @key_padding(
// CHECK-SAME:    %[[BIAS:[^:]+]]: tensor<2x1x1x128xf16>
// CHECK:         %[[BB:.*]] = bufferization.to_buffer %[[BIAS]] read_only : tensor<2x1x1x128xf16> to memref<2x1x1x128xf16>
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             {{nvgpu|nvvm}}.mma.sync
// CHECK:             %[[PAIR:.*]] = vector.load %[[BB]][%{{.*}}, %c0{{.*}}, %c0{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<2x1x1x128xf16>, vector<2xf16>
// CHECK-NEXT:        %[[E0:.*]] = vector.extract %[[PAIR]][0] : f16 from vector<2xf16>
// CHECK-NEXT:        %[[W0:.*]] = arith.extf %[[E0]] : f16 to f32
// CHECK:             %[[S:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:        arith.addf %[[S]], %[[W0]] : f32
// CHECK:             {{nvgpu|nvvm}}.mma.sync
// CHECK:           gpu.terminator
// CHECK-NOT:     attn.sdpa
// One load per n8 tile of a 64-key block, none for the second row.
// PLAIN-LABEL: func.func @key_padding(
// PLAIN:         scf.for
// PLAIN-COUNT-8:   vector.load %{{.*}} : memref<2x1x1x128xf16>, vector<2xf16>
// PLAIN-NOT:       vector.load %{{.*}} : memref<2x1x1x128xf16>, vector<2xf16>
// PLAIN:           scf.yield
func.func @key_padding(%q: tensor<2x4x64x32xf16>, %k: tensor<2x4x128x32xf16>, %v: tensor<2x4x128x32xf16>,
                       %bias: tensor<2x1x1x128xf16>) -> tensor<2x4x64x32xf16> {
  %0 = attn.sdpa %q, %k, %v bias(%bias : tensor<2x1x1x128xf16>) : tensor<2x4x64x32xf16>, tensor<2x4x128x32xf16>, tensor<2x4x128x32xf16> -> tensor<2x4x64x32xf16>
  return %0 : tensor<2x4x64x32xf16>
}

// -----

// A [1, Hq, Sq, Sk] bf16 bias with a causal mask: each of the thread's two
// rows (g, g + 8) loads its own pairs at the query head, the batch dimension
// (1) broadcast; the bias goes before the mask.
// CHECK-LABEL: func.func @full_causal(
// CHECK:         gpu.launch blocks(%{{[^,]+}}, %[[HEAD:[^,]+]], %{{[^)]+}}) in
// CHECK:           scf.for
// CHECK:             nvvm.mma.sync
// CHECK:             vector.load %{{.*}}[%c0{{.*}}, %[[HEAD]], %[[ROWA:[^,]+]], %{{.*}}] {alignment = 4 : i64} : memref<1x4x32x64xbf16>, vector<2xbf16>
// CHECK:             vector.load %{{.*}}[%c0{{.*}}, %[[HEAD]], %[[ROWB:[^,]+]], %{{.*}}] {alignment = 4 : i64} : memref<1x4x32x64xbf16>, vector<2xbf16>
// CHECK:             arith.extf %{{.*}} : bf16 to f32
// CHECK:             %[[S:.*]] = arith.mulf
// CHECK-NEXT:        %[[SB:.*]] = arith.addf %[[S]], %{{.*}} : f32
// CHECK:             %[[VIS:.*]] = arith.cmpi sle
// CHECK-NEXT:        arith.select %[[VIS]], %[[SB]], %{{.*}} : f32
// CHECK:           gpu.terminator
// PLAIN-LABEL: func.func @full_causal(
// PLAIN:         scf.for
// PLAIN-COUNT-16:  vector.load %{{.*}} : memref<1x4x32x64xbf16>, vector<2xbf16>
// PLAIN-NOT:       vector.load %{{.*}} : memref<1x4x32x64xbf16>, vector<2xbf16>
// PLAIN:           scf.yield
func.func @full_causal(%q: tensor<1x4x32x32xbf16>, %k: tensor<1x2x64x32xbf16>, %v: tensor<1x2x64x32xbf16>,
                       %bias: tensor<1x4x32x64xbf16>) -> tensor<1x4x32x32xbf16> {
  %0 = attn.sdpa %q, %k, %v bias(%bias : tensor<1x4x32x64xbf16>) causal : tensor<1x4x32x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16> -> tensor<1x4x32x32xbf16>
  return %0 : tensor<1x4x32x32xbf16>
}

// -----

// A bias that does not vary along the keys ([1, Hq, Sq, 1]) is loaded once
// per kernel, for the thread's two rows, before the key loop.
// CHECK-LABEL: func.func @per_row(
// CHECK:         gpu.launch
// CHECK:           memref.load %{{.*}}[%c0{{.*}}, %{{.*}}, %{{.*}}, %c0{{.*}}] : memref<1x2x32x1xf16>
// CHECK:           memref.load %{{.*}}[%c0{{.*}}, %{{.*}}, %{{.*}}, %c0{{.*}}] : memref<1x2x32x1xf16>
// CHECK:           scf.for
// CHECK-NOT:         memref<1x2x32x1xf16>
// CHECK:           gpu.terminator
func.func @per_row(%q: tensor<1x2x32x16xf16>, %bias: tensor<1x2x32x1xf16>) -> tensor<1x2x32x16xf16> {
  %0 = attn.sdpa %q, %q, %q bias(%bias : tensor<1x2x32x1xf16>) : tensor<1x2x32x16xf16>, tensor<1x2x32x16xf16>, tensor<1x2x32x16xf16> -> tensor<1x2x32x16xf16>
  return %0 : tensor<1x2x32x16xf16>
}

// -----

// Run-time Sk: the bias rows have no known alignment and the last block's
// keys may lie past Sk, so each key is a scalar load at min(key, Sk - 1)
// (its score is masked anyway).
// CHECK-LABEL: func.func @dynamic_key_padding(
// CHECK-SAME:    %{{[^:]+}}: tensor<?x2x?x16xf16>, %[[K:[^:]+]]: tensor<?x2x?x16xf16>
// CHECK:         %[[SK:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<?x2x?x16xf16>
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             %[[LAST:.*]] = arith.subi %[[SK]], %{{.*}} : index
// CHECK-NEXT:        %[[AT:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK-NEXT:        memref.load %{{.*}}[%{{.*}}, %c0{{.*}}, %c0{{.*}}, %[[AT]]] : memref<?x1x1x?xf16>
// CHECK:           gpu.terminator
func.func @dynamic_key_padding(%q: tensor<?x2x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x16xf16>,
                               %bias: tensor<?x1x1x?xf16>) -> tensor<?x2x?x16xf16> {
  %0 = attn.sdpa %q, %k, %v bias(%bias : tensor<?x1x1x?xf16>) : tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16> -> tensor<?x2x?x16xf16>
  return %0 : tensor<?x2x?x16xf16>
}

// -----

// Static Sq = 8 and Sk = 40 (not multiples of 16) take the run-time-size
// path with constant sizes: one 16-row query block whose rows past 8 read
// row 7 and store nothing, keys past 40 staged as zeros and masked.
// CHECK-LABEL: func.func @ragged(
// CHECK-DAG:     %[[SQ:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[SK:.*]] = arith.constant 40 : index
// CHECK:         gpu.launch
// CHECK:           arith.minsi %{{.*}}, %{{.*}} : index
// CHECK:           scf.for
// CHECK:             {{nvgpu|nvvm}}.mma.sync
// CHECK:             arith.cmpi slt, %{{.*}}, %[[SK]] : index
// CHECK:           arith.cmpi ult, %{{.*}}, %[[SQ]] : index
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        vector.store
// CHECK:           gpu.terminator
// CHECK-NOT:     attn.sdpa
func.func @ragged(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x40x16xf16>, %v: tensor<1x2x40x16xf16>) -> tensor<1x2x8x16xf16> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x2x8x16xf16>, tensor<1x2x40x16xf16>, tensor<1x2x40x16xf16> -> tensor<1x2x8x16xf16>
  return %0 : tensor<1x2x8x16xf16>
}
