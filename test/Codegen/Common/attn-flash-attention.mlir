// RUN: attn-opt %s --split-input-file --attn-flash-attention --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=256x256 --implicit-check-not=200x200 \
// RUN:       --implicit-check-not=130x300
// RUN: attn-opt %s --split-input-file --attn-flash-attention="block-q=32 block-k=128" \
// RUN:     --mlir-print-local-scope | FileCheck %s --check-prefix=BLOCKS
// RUN: attn-opt %s --split-input-file --mlir-print-local-scope --pass-pipeline="builtin.module(attn-flash-attention,attn-lower-to-linalg,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries},func.func(attn-promote-loop-buffers),cse,canonicalize)" \
// RUN:   | FileCheck %s --check-prefix=BUF
// RUN: attn-opt %s --split-input-file --attn-flash-attention=transpose-keys=1 \
// RUN:     --mlir-print-local-scope | FileCheck %s --check-prefix=TKEYS
// RUN: not attn-opt %s --split-input-file --attn-flash-attention=block-k=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD

// attn-flash-attention: dot-product attn.sdpa becomes an scf.forall over
// (batch, kv head, query block) around an scf.for over key blocks whose
// iter_args carry the online softmax state (m, l, O) and the tile scratch.
// No Sq x Sk tensor is ever built (the implicit checks above). The key
// loop's bounds come from the query block index: key blocks that the causal
// or window mask hides from every row of the block are never visited.

// BAD: error: attn-flash-attention: block-q and block-k must be >= 1

// Causal, Sq = Sk = 256, blocks of 64: 4 query blocks per (batch, head).
// Query block qb holds rows [64 qb, 64 qb + 64); row i sees keys j <= i, so
// the key loop stops at min(256, 64 qb + 64).
// CHECK-LABEL: func.func @causal(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x4x256x64xf32>, %[[K:[^:]+]]: tensor<1x4x256x64xf32>, %[[V:[^:]+]]: tensor<1x4x256x64xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[EIGHTH:.*]] = arith.constant 1.250000e-01 : f32
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<1x4x256x64xf32>
// CHECK:         %[[R:.*]] = scf.forall (%[[B:.*]], %[[N:.*]], %[[QB:.*]]) in (1, 4, 4) shared_outs(%[[OUT:.*]] = %[[INIT]])
// CHECK:           %[[Q0:.*]] = affine.apply affine_map<()[s0] -> (s0 * 64)>()[%[[QB]]]
// CHECK:           %[[QT:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[N]], %[[Q0]], 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x4x256x64xf32> to tensor<1x64x64xf32>
// CHECK:           %[[HI:.*]] = affine.min affine_map<()[s0] -> (256, s0 * 64 + 64)>()[%[[QB]]]
// CHECK-COUNT-6:   bufferization.alloc_tensor() : tensor<1x64
// CHECK:           %[[RES:.*]]:6 = scf.for %[[K0:.*]] = %[[C0]] to %[[HI]] step %[[C64]] iter_args(%[[M:[^ ]+]] = %{{[^,]+}}, %[[L:[^ ]+]] = %{{[^,]+}}, %[[ACC:[^ ]+]] = %{{[^,]+}}, %[[S:[^ ]+]] = %{{[^,]+}}, %[[T:[^ ]+]] = %{{[^,]+}}, %[[A:[^ ]+]] = %{{[^,]+}}) -> (tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>)
// CHECK:             %[[KT:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[N]], %[[K0]], 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x4x256x64xf32> to tensor<64x64xf32>
// CHECK:             %[[VT:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[N]], %[[K0]], 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x4x256x64xf32> to tensor<64x64xf32>
// S = Q_blk K_blk^T into the score scratch.
// CHECK:             %[[S0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : tensor<1x64x64xf32>)
// CHECK:             %[[QK:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[QT]], %[[KT]] : tensor<1x64x64xf32>, tensor<64x64xf32>) outs(%[[S0]] : tensor<1x64x64xf32>)
// Scale 1/sqrt(64) and the causal mask from the block offsets: key k0 + j
// is visible from row q0 + i when k0 + j <= q0 + i.
// CHECK:             %[[SC:.*]] = linalg.generic {{.*}} outs(%[[QK]] : tensor<1x64x64xf32>)
// CHECK-NEXT:        ^bb0(%[[X:.*]]: f32):
// CHECK-NEXT:          %[[XS:.*]] = arith.mulf %[[X]], %[[EIGHTH]] : f32
// CHECK-NEXT:          %[[J:.*]] = linalg.index 2 : index
// CHECK-NEXT:          %[[JA:.*]] = arith.addi %[[J]], %[[K0]] : index
// CHECK-NEXT:          %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:          %[[IA:.*]] = arith.addi %[[I]], %[[Q0]] : index
// CHECK-NEXT:          %[[VIS:.*]] = arith.cmpi sle, %[[JA]], %[[IA]] : index
// CHECK-NEXT:          %[[SEL:.*]] = arith.select %[[VIS]], %[[XS]], %[[NEGINF]] : f32
// CHECK-NEXT:          linalg.yield %[[SEL]] : f32
// The tile's row max, alpha = exp(m - max(m, t)), P = exp(S - max(m, t))
// (0 where masked), l and O rescaled by alpha and accumulated, m updated
// last. The maximum only shifts the exponents: it may ignore NaN and the
// sign of zero.
// CHECK:             %[[TMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SC]] : tensor<1x64x64xf32>)
// CHECK:               arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
// CHECK:             %[[ALPHA:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[TMAX]] : tensor<1x64xf32>, tensor<1x64xf32>) outs(%[[A]] : tensor<1x64xf32>)
// CHECK:               math.exp
// CHECK:             %[[P:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[TMAX]] : tensor<1x64xf32>, tensor<1x64xf32>) outs(%[[SC]] : tensor<1x64x64xf32>)
// CHECK:               math.exp
// CHECK:             %[[L1:.*]] = linalg.generic {{.*}} ins(%[[ALPHA]] : tensor<1x64xf32>) outs(%[[L]] : tensor<1x64xf32>)
// CHECK:             %[[L2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<1x64x64xf32>) outs(%[[L1]] : tensor<1x64xf32>)
// CHECK:             %[[O1:.*]] = linalg.generic {{.*}} ins(%[[ALPHA]] : tensor<1x64xf32>) outs(%[[ACC]] : tensor<1x64x64xf32>)
// CHECK:             %[[O2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[VT]] : tensor<1x64x64xf32>, tensor<64x64xf32>) outs(%[[O1]] : tensor<1x64x64xf32>)
// CHECK:             %[[M2:.*]] = linalg.generic {{.*}} ins(%[[TMAX]] : tensor<1x64xf32>) outs(%[[M]] : tensor<1x64xf32>)
// CHECK:             scf.yield %[[M2]], %[[L2]], %[[O2]], %[[P]], %[[TMAX]], %[[ALPHA]] :
// O / l (0 for a row that saw no key) into this block's slice of the result.
// CHECK:           %[[OT:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[N]], %[[Q0]], 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x4x256x64xf32> to tensor<1x64x64xf32>
// CHECK:           %[[FIN:.*]] = linalg.generic {{.*}} ins(%[[RES]]#2, %[[RES]]#1 : tensor<1x64x64xf32>, tensor<1x64xf32>) outs(%[[OT]] : tensor<1x64x64xf32>)
// CHECK:             arith.divf
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %[[FIN]] into %[[OUT]][%[[B]], %[[N]], %[[Q0]], 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x64x64xf32> into tensor<1x4x256x64xf32>
// CHECK:         return %[[R]] : tensor<1x4x256x64xf32>

// Other block sizes: 8 query blocks of 32 rows, key blocks of 128.
// BLOCKS-LABEL: func.func @causal(
// BLOCKS:         scf.forall (%{{.*}}, %{{.*}}, %[[QB:.*]]) in (1, 4, 8)
// BLOCKS:           %[[HI:.*]] = affine.min affine_map<()[s0] -> (256, s0 * 32 + 32)>()[%[[QB]]]
// BLOCKS:           scf.for %{{.*}} = %{{.*}} to %[[HI]] step %c128
// BLOCKS-SAME:        -> (tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32x64xf32>, tensor<1x32x128xf32>, tensor<1x32xf32>, tensor<1x32xf32>)

// After bufferization every temporary of a query block is a stack buffer
// of the forall iteration (allocated once per query block, not per key
// block), and nothing is copied.
// BUF-LABEL: func.func @causal(
// BUF:         memref.alloc() {{.*}} : memref<1x4x256x64xf32>
// BUF-NOT:     memref.alloc
// BUF:         scf.forall
// BUF-NOT:       memref.alloc(
// BUF-COUNT-6:   memref.alloca() {{.*}} : memref<1x64
// BUF-NOT:       memref.alloc
// BUF:           scf.for
// BUF-NOT:       memref.alloc
// BUF-NOT:       memref.copy
// BUF:         return
func.func @causal(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>, %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32> -> tensor<1x4x256x64xf32>
  return %0 : tensor<1x4x256x64xf32>
}

// -----

// Sliding window W = 70, no causal mask: row p sees keys p - 69 .. p + 69.
// Query block qb (rows 64 qb .. 64 qb + 63) needs keys from 64 qb - 69,
// rounded down to a block boundary (max(0, 64 qb - 128)), up to
// 64 qb + 63 + 70 (exclusive min(256, 64 qb + 133)): both bounds depend on
// qb, so far-away key blocks on either side are skipped.
// CHECK-LABEL: func.func @window(
// CHECK-DAG:     %[[W:.*]] = arith.constant 70 : index
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %[[QB:.*]]) in (1, 4, 4)
// CHECK:           %[[LO:.*]] = affine.max affine_map<()[s0] -> (0, s0 * 64 - 128)>()[%[[QB]]]
// CHECK:           %[[HI:.*]] = affine.min affine_map<()[s0] -> (256, s0 * 64 + 133)>()[%[[QB]]]
// CHECK:           scf.for %{{.*}} = %[[LO]] to %[[HI]] step %{{.*}} iter_args
// |p - j| < 70 in both directions.
// CHECK:             arith.subi
// CHECK-NEXT:        arith.cmpi slt, %{{.*}}, %[[W]] : index
// CHECK:             arith.subi
// CHECK-NEXT:        arith.cmpi slt, %{{.*}}, %[[W]] : index
// CHECK:         return
func.func @window(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>, %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %0 = attn.sdpa %q, %k, %v window = 70 : tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32> -> tensor<1x4x256x64xf32>
  return %0 : tensor<1x4x256x64xf32>
}

// -----

// Sq = Sk = 200 is 3 full blocks and one of 8: the rows of a query block
// and the columns of a key block are affine.min sizes, and the tiles
// dynamic. kv_lengths bounds the key loop too (keys past len[b] are never
// visited) and is still masked inside the last block. f16 operands are
// extended inside the contractions; the result is truncated once.
// CHECK-LABEL: func.func @partial_f16_lengths(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x2x200x32xf16>, %[[K:[^:]+]]: tensor<2x2x200x32xf16>, %[[V:[^:]+]]: tensor<2x2x200x32xf16>, %[[LEN:[^:]+]]: tensor<2xi32>)
// CHECK:         scf.forall (%[[B:.*]], %[[N:.*]], %[[QB:.*]]) in (2, 2, 4)
// CHECK:           %[[Q0:.*]] = affine.apply affine_map<()[s0] -> (s0 * 64)>()[%[[QB]]]
// CHECK:           %[[QS:.*]] = affine.min affine_map<()[s0] -> (64, s0 * -64 + 200)>()[%[[QB]]]
// CHECK:           tensor.extract_slice %[[Q]][%[[B]], %[[N]], %[[Q0]], 0] [1, 1, %[[QS]], 32] [1, 1, 1, 1] : tensor<2x2x200x32xf16> to tensor<1x?x32xf16>
// CHECK:           %[[LENB:.*]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi32>
// CHECK:           %[[LENI:.*]] = arith.index_cast %[[LENB]] : i32 to index
// CHECK:           %[[HI:.*]] = affine.min affine_map<()[s0] -> (200, s0)>()[%[[LENI]]]
// CHECK:           scf.for %[[K0:.*]] = %{{.*}} to %[[HI]] step %{{.*}} iter_args({{.*}}) -> (tensor<1x?xf32>, tensor<1x?xf32>, tensor<1x?x32xf32>, tensor<1x?x64xf32>, tensor<1x?xf32>, tensor<1x?xf32>)
// CHECK:             %[[KS:.*]] = affine.min affine_map<()[s0] -> (64, -s0 + 200)>()[%[[K0]]]
// CHECK:             tensor.extract_slice %[[K]][%[[B]], %[[N]], %[[K0]], 0] [1, 1, %[[KS]], 32] [1, 1, 1, 1] : tensor<2x2x200x32xf16> to tensor<?x32xf16>
// CHECK:             tensor.extract_slice %{{.*}}[0, 0, 0] [1, %[[QS]], %[[KS]]] [1, 1, 1] : tensor<1x?x64xf32> to tensor<1x?x?xf32>
// CHECK:             linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x?x32xf16>, tensor<?x32xf16>) outs(%{{.*}} : tensor<1x?x?xf32>)
// CHECK-DAG:           arith.extf %{{.*}} : f16 to f32
// CHECK-DAG:           arith.extf %{{.*}} : f16 to f32
// CHECK:               arith.cmpi slt, %{{.*}}, %[[LENI]] : index
// CHECK:             tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, %[[QS]], %[[KS]]] [1, 1, 1] : tensor<1x?x?xf32> into tensor<1x?x64xf32>
// CHECK:           linalg.generic
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:           tensor.parallel_insert_slice %{{.*}} [1, 1, %[[QS]], 32] [1, 1, 1, 1] : tensor<1x?x32xf16> into tensor<2x2x200x32xf16>
// transpose-keys does not apply to keys with kv_lengths (a KV cache, read
// only up to each row's length): no transposed copy of all of it.
// TKEYS-LABEL: func.func @partial_f16_lengths(
// TKEYS-NOT:     linalg.transpose
// TKEYS:         scf.forall
func.func @partial_f16_lengths(%q: tensor<2x2x200x32xf16>, %k: tensor<2x2x200x32xf16>, %v: tensor<2x2x200x32xf16>, %len: tensor<2xi32>) -> tensor<2x2x200x32xf16> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%len : tensor<2xi32>) : tensor<2x2x200x32xf16>, tensor<2x2x200x32xf16>, tensor<2x2x200x32xf16> -> tensor<2x2x200x32xf16>
  return %0 : tensor<2x2x200x32xf16>
}

// -----

// transpose-keys: K becomes [B, Hkv, Dk, Sk] once, before the forall, and
// the score contraction reads a [Dk, ks] tile of it, indexed (d, j), like
// V's (j, e) in P V.
// TKEYS-LABEL: func.func @partial_f16_keys(
// TKEYS-SAME:    %{{[^:]+}}: tensor<2x2x200x32xf16>, %[[K:[^:]+]]: tensor<2x2x200x32xf16>
// TKEYS:         %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<2x2x200x32xf16>) outs(%{{.*}} : tensor<2x2x32x200xf16>) permutation = [0, 1, 3, 2]
// TKEYS:         scf.forall (%[[B:.*]], %[[N:.*]], %{{.*}}) in (2, 2, 4)
// TKEYS:           scf.for %[[K0:[^ ]+]] =
// TKEYS:             %[[KS:.*]] = affine.min affine_map<()[s0] -> (64, -s0 + 200)>()[%[[K0]]]
// TKEYS:             %[[KTILE:.*]] = tensor.extract_slice %[[KT]][%[[B]], %[[N]], 0, %[[K0]]] [1, 1, 32, %[[KS]]] [1, 1, 1, 1] : tensor<2x2x32x200xf16> to tensor<32x?xf16>
// TKEYS:             linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], {{.*}} ins(%{{.*}}, %[[KTILE]] : tensor<1x?x32xf16>, tensor<32x?xf16>)
func.func @partial_f16_keys(%q: tensor<2x2x200x32xf16>, %k: tensor<2x2x200x32xf16>, %v: tensor<2x2x200x32xf16>) -> tensor<2x2x200x32xf16> {
  %0 = attn.sdpa %q, %k, %v : tensor<2x2x200x32xf16>, tensor<2x2x200x32xf16>, tensor<2x2x200x32xf16> -> tensor<2x2x200x32xf16>
  return %0 : tensor<2x2x200x32xf16>
}

// -----

// GQA 8 -> 2 heads: a forall iteration takes the 4 query heads of its kv
// head (rows 4 n .. 4 n + 3 of Q) against one K/V block. Causal with
// Sq = 130 < Sk = 300 is bottom-right aligned: row i sits at position
// i + 170, so block qb needs keys below min(300, 64 qb + qs + 170). The
// bias [1, 1, 1, 300] is sliced along the keys only.
// CHECK-LABEL: func.func @gqa_causal_bias(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x8x130x16xf32>, %{{[^:]+}}: tensor<1x2x300x16xf32>, %{{[^:]+}}: tensor<1x2x300x16xf32>, %[[BIAS:[^:]+]]: tensor<1x1x1x300xf32>)
// CHECK-DAG:     %[[OFF:.*]] = arith.constant 170 : index
// CHECK:         scf.forall (%[[B:.*]], %[[N:.*]], %[[QB:.*]]) in (1, 2, 3)
// CHECK:           %[[Q0:.*]] = affine.apply affine_map<()[s0] -> (s0 * 64)>()[%[[QB]]]
// CHECK:           %[[QS:.*]] = affine.min affine_map<()[s0] -> (64, s0 * -64 + 130)>()[%[[QB]]]
// CHECK:           %[[H0:.*]] = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%[[N]]]
// CHECK:           tensor.extract_slice %[[Q]][%[[B]], %[[H0]], %[[Q0]], 0] [1, 4, %[[QS]], 16] [1, 1, 1, 1] : tensor<1x8x130x16xf32> to tensor<4x?x16xf32>
// CHECK:           %[[HI:.*]] = affine.min affine_map<()[s0, s1] -> (300, s0 + s1 * 64 + 170)>()[%[[QS]], %[[QB]]]
// CHECK:           scf.for %[[K0:.*]] = %{{.*}} to %[[HI]] step
// CHECK:             %[[KS:.*]] = affine.min affine_map<()[s0] -> (64, -s0 + 300)>()[%[[K0]]]
// CHECK:             %[[BT:.*]] = tensor.extract_slice %[[BIAS]][0, 0, 0, %[[K0]]] [1, 1, 1, %[[KS]]] [1, 1, 1, 1] : tensor<1x1x1x300xf32> to tensor<1x1x?xf32>
// CHECK:             linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%[[BT]] : tensor<1x1x?xf32>) outs(%{{.*}} : tensor<4x?x?xf32>)
// CHECK:               %[[POS:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK-NEXT:          arith.cmpi sle, %{{.*}}, %[[POS]] : index
func.func @gqa_causal_bias(%q: tensor<1x8x130x16xf32>, %k: tensor<1x2x300x16xf32>, %v: tensor<1x2x300x16xf32>, %bias: tensor<1x1x1x300xf32>) -> tensor<1x8x130x16xf32> {
  %0 = attn.sdpa %q, %k, %v bias(%bias : tensor<1x1x1x300xf32>) causal : tensor<1x8x130x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32> -> tensor<1x8x130x16xf32>
  return %0 : tensor<1x8x130x16xf32>
}

// -----

// attn.mha is split into projections and attn.sdpa first, so its attention
// is blocked too.
// CHECK-LABEL: func.func @mha(
// CHECK-NOT:     attn.mha
// CHECK-COUNT-3: attn.linear
// CHECK-NOT:     attn.sdpa
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, 4)
// CHECK:           affine.min affine_map<()[s0] -> (256, s0 * 64 + 64)>
// CHECK:           scf.for
// CHECK:         attn.linear
// CHECK:         return
func.func @mha(%x: tensor<1x256x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>) -> tensor<1x256x32xf32> {
  %0 = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 causal : (tensor<1x256x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<1x256x32xf32>
  return %0 : tensor<1x256x32xf32>
}

// -----

// The other score functions stay attn.sdpa for the unfused lowering.
// CHECK-LABEL: func.func @general(
// CHECK-NOT:     scf.forall
// CHECK:         attn.sdpa {{.*}} score = general
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @general(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x7x6xf32>, %v: tensor<2x4x7x8xf32>, %w: tensor<8x6xf32>) -> tensor<2x4x5x8xf32> {
  %0 = attn.sdpa %q, %k, %v score_weights(%w : tensor<8x6xf32>) score = general : tensor<2x4x5x8xf32>, tensor<2x4x7x6xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x5x8xf32>
  return %0 : tensor<2x4x5x8xf32>
}

// -----

// CHECK-LABEL: func.func @additive(
// CHECK-NOT:     scf.forall
// CHECK:         attn.sdpa {{.*}} score = additive
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @additive(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x7x6xf32>, %v: tensor<2x4x7x8xf32>, %w: tensor<5x14xf32>, %va: tensor<5xf32>) -> tensor<2x4x5x8xf32> {
  %0 = attn.sdpa %q, %k, %v score_weights(%w, %va : tensor<5x14xf32>, tensor<5xf32>) score = additive : tensor<2x4x5x8xf32>, tensor<2x4x7x6xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x5x8xf32>
  return %0 : tensor<2x4x5x8xf32>
}

// -----

// CHECK-LABEL: func.func @cosine(
// CHECK-NOT:     scf.forall
// CHECK:         attn.sdpa {{.*}} score = cosine
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @cosine(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x5x8xf32> {
  %0 = attn.sdpa %q, %k, %v score = cosine causal : tensor<2x4x5x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x5x8xf32>
  return %0 : tensor<2x4x5x8xf32>
}

// -----

// CHECK-LABEL: func.func @gaussian(
// CHECK-NOT:     scf.forall
// CHECK:         attn.sdpa {{.*}} score = gaussian
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @gaussian(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x5x8xf32> {
  %0 = attn.sdpa %q, %k, %v score = gaussian : tensor<2x4x5x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x5x8xf32>
  return %0 : tensor<2x4x5x8xf32>
}
