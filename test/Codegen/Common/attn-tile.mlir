// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-tile{target=cpu simd-width=16 vector-registers=32 l1-kib=32 l2-kib=1024 cores=2}))" | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-tile{target=cpu simd-width=8 vector-registers=16 l1-kib=48 l2-kib=2048 cores=8}))" | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-tile{target=cpu simd-width=16 vector-registers=32 l1-kib=32 l2-kib=1024 cores=2 block-q=32 block-k=128 vector-width=8 row-tile=2 col-tile=8 column-block=96}))" | FileCheck %s --check-prefix=FIXED
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-tile{target=cuda}))" | FileCheck %s --check-prefix=CUDA
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-tile{target=cuda block-q=4 block-k=16 warp-n-tiles=1 threads=256}))" | FileCheck %s --check-prefix=CUDAFIXED
// Without a machine model the host's is used: the vector width is a power
// of two (16 with AVX-512, 8 with AVX2, else 4, or less where K needs it).
// RUN: attn-opt %s --split-input-file --attn-tile | FileCheck %s --check-prefix=HOST

// The choices of attn-tile for several shapes and targets (see the pass
// description). CPU models: an AVX-512 core (32 zmm, 32 KiB L1, 1 MiB L2,
// 2 cores) and an AVX2 one (16 ymm, 48 KiB L1, 2 MiB L2, 8 cores).

// A BERT-base projection, M = 128, N = K = 768. AVX-512: 4 x 4 tiles are
// at the FMA bound with the fewest loads; 128 weight rows (384 KiB) fit
// half of L2 and give 6 blocks, 3 per core. With AVX2, 16 registers hold 4 x 2
// accumulators and 6 operand vectors (3 x 3 would leave rows over); 8
// blocks of 96 rows, one per core.
// CPU-LABEL: func.func @bert_projection
// CPU:         attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 4, column_block = 128>}
// AVX2-LABEL:  func.func @bert_projection
// AVX2:        attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = 8, row_tile = 4, col_tile = 2, column_block = 96>}
// FIXED-LABEL: func.func @bert_projection
// FIXED:       attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = 8, row_tile = 2, col_tile = 8, column_block = 96>}
// CUDA-LABEL:  func.func @bert_projection
// CUDA-SAME:     attn.tile = #attn.tile<threads = 128>
// CUDA-NOT:      attn.tile
// CUDA:          return
// HOST-LABEL:  func.func @bert_projection
// HOST:        attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = {{4|8|16}}, row_tile = {{[0-9]+}}, col_tile = {{[0-9]+}}, column_block = {{[0-9]+}}>}
func.func @bert_projection(%x: tensor<1x128x768xf32>, %w: tensor<768x768xf32>, %b: tensor<768xf32>) -> tensor<1x128x768xf32> {
  %y = attn.linear %x, %w, %b : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  return %y : tensor<1x128x768xf32>
}

// -----

// One token (decode): a single row, so MR = 1 and as wide an NR as the
// registers allow while the blocks still split evenly over the cores.
// CPU-LABEL: func.func @decode_projection
// CPU:         attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = 16, row_tile = 1, col_tile = 12, column_block = 96>}
// AVX2-LABEL: func.func @decode_projection
// AVX2:        attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = 8, row_tile = 1, col_tile = 7, column_block = 7>}
// CUDA-LABEL:  func.func @decode_projection
// CUDA-SAME:     attn.tile = #attn.tile<threads = 32>
func.func @decode_projection(%x: tensor<1x1x768xf32>, %w: tensor<3072x768xf32>) -> tensor<1x1x3072xf32> {
  %y = attn.linear %x, %w : (tensor<1x1x768xf32>, tensor<3072x768xf32>) -> tensor<1x1x3072xf32>
  return %y : tensor<1x1x3072xf32>
}

// -----

// K = 24 is no multiple of 16: the vector width halves to 8 so that the
// kernel still applies; two column blocks of 16 for the two cores.
// CPU-LABEL: func.func @narrow_k
// CPU:         attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = 8, row_tile = 4, col_tile = 4, column_block = 16>}
func.func @narrow_k(%x: tensor<8x24xf32>, %w: tensor<32x24xf32>) -> tensor<8x32xf32> {
  %y = attn.linear %x, %w : (tensor<8x24xf32>, tensor<32x24xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// Flash blocks. 12 heads of width 64, 128 tokens: a 64 x 64 f32 score tile
// is 16 KiB, half of a 32 KiB L1 (AVX2 model: 48 KiB, still 64 x 64).
// On CUDA, one query row per thread, 64 keys: 4 * (64 + 64 + 4) bytes of
// temporaries per thread.
// CPU-LABEL: func.func @mha_heads
// CPU:         attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 64, block_k = 64>}
// AVX2-LABEL: func.func @mha_heads
// AVX2:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 64, block_k = 64>}
// FIXED-LABEL: func.func @mha_heads
// FIXED:       attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 32, block_k = 128>}
// CUDA-LABEL:  func.func @mha_heads
// CUDA:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 1, block_k = 64>}
// CUDAFIXED-LABEL: func.func @mha_heads
// CUDAFIXED-SAME:    attn.tile = #attn.tile<threads = 256>
// CUDAFIXED:       attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 4, block_k = 16>}
func.func @mha_heads(%q: tensor<1x12x128x64xf32>, %k: tensor<1x12x128x64xf32>, %v: tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32> {
  %o = attn.sdpa %q, %k, %v causal : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf32>
  return %o : tensor<1x12x128x64xf32>
}

// -----

// GQA, 4 query heads per kv head of width 128: the [4, bq, bk] score tile
// must fit 16 KiB, so 32 x 32. On CUDA, 4 heads' temporaries exceed 1 KiB per
// thread at any block, so the smallest, 8 keys.
// CPU-LABEL: func.func @gqa
// CPU:         attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 32, block_k = 32>}
// CUDA-LABEL:  func.func @gqa
// CUDA:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 1, block_k = 8>}
func.func @gqa(%q: tensor<1x32x128x128xf32>, %k: tensor<1x8x128x128xf32>, %v: tensor<1x8x128x128xf32>) -> tensor<1x32x128x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x32x128x128xf32>, tensor<1x8x128x128xf32>, tensor<1x8x128x128xf32> -> tensor<1x32x128x128xf32>
  return %o : tensor<1x32x128x128xf32>
}

// -----

// MQA, one kv head for 8 query heads, 64 tokens: 64 query rows in one block
// would leave one of the 2 cores idle, so 32 x 16 (2 blocks). 8 cores (AVX2
// model) cannot all be kept busy, so the tile stays the cheapest one.
// CPU-LABEL: func.func @mqa_parallel
// CPU:         attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 32, block_k = 16>}
// AVX2-LABEL: func.func @mqa_parallel
// AVX2:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 32, block_k = 16>}
// CUDA-LABEL:  func.func @mqa_parallel
// CUDA:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 1, block_k = 8>}
func.func @mqa_parallel(%q: tensor<1x8x64x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>) -> tensor<1x8x64x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x8x64x64xf32>
  return %o : tensor<1x8x64x64xf32>
}

// -----

// Decode attention: one query row against 512 cached keys: block_q is the
// single row and the key block grows to 256.
// CPU-LABEL: func.func @decode_attention
// CPU:         attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 1, block_k = 256>}
// CUDA-LABEL:  func.func @decode_attention
// CUDA:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 1, block_k = 64>}
func.func @decode_attention(%q: tensor<1x12x1x64xf32>, %k: tensor<1x12x512x64xf32>, %v: tensor<1x12x512x64xf32>) -> tensor<1x12x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x12x1x64xf32>, tensor<1x12x512x64xf32>, tensor<1x12x512x64xf32> -> tensor<1x12x1x64xf32>
  return %o : tensor<1x12x1x64xf32>
}

// -----

// Other score functions are not blocked, so they get no tiles.
// CPU-LABEL: func.func @cosine
// CPU-NOT:     attn.tile
// CPU:         return
func.func @cosine(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %k, %v score = cosine : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// attn.ffn lowers to two contractions, 768 -> 3072 and 3072 -> 768, which
// share one configuration: the least total time, with a column block that
// fits half of L2 for the down projection's 3072-wide rows (at most 42).
// For the GPU the smallest warp tile of the two: the down projection
// (128 x 768) makes only 2 x 12 blocks of 64 x 64 (NT 4) or 2 x 24 (NT 2),
// fewer than 132 SMs, so NT 1.
// CPU-LABEL: func.func @ffn
// CPU:         attn.ffn {{.*}} {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 5, column_block = 25>}
// AVX2-LABEL: func.func @ffn
// AVX2:        attn.ffn {{.*}} {attn.tile = #attn.tile<vector_width = 8, row_tile = 4, col_tile = 2, column_block = 48>}
// CUDA-LABEL:  func.func @ffn
// CUDA:        attn.ffn {{.*}} {attn.tile = #attn.tile<warp_n_tiles = 1>}
func.func @ffn(%x: tensor<1x128x768xf16>, %w1: tensor<3072x768xf16>, %w2: tensor<768x3072xf16>) -> tensor<1x128x768xf16> {
  %y = attn.ffn %x up(%w1) down(%w2) activation = gelu : (tensor<1x128x768xf16>, tensor<3072x768xf16>, tensor<768x3072xf16>) -> tensor<1x128x768xf16>
  return %y : tensor<1x128x768xf16>
}

// -----

// Tensor cores: 16-row strips and 8 * NT-wide warp tiles. 16 rows x 768
// give 24 warps of 32 columns, too few for 132 SMs, so one n8 tile per
// warp (96 warps); f32 projections get no warp tiles.
// CUDA-LABEL:  func.func @mma_small_m
// CUDA:        attn.linear %{{.*}}, %{{.*}} {attn.tile = #attn.tile<warp_n_tiles = 1>}
// CUDA:        attn.linear %{{.*}}, %{{.*}} :
// CUDAFIXED-LABEL: func.func @mma_small_m
// CUDAFIXED:     attn.linear %{{.*}}, %{{.*}} {attn.tile = #attn.tile<warp_n_tiles = 1>}
func.func @mma_small_m(%x: tensor<16x768xbf16>, %w: tensor<768x768xbf16>, %xf: tensor<16x768xf32>, %wf: tensor<768x768xf32>) -> (tensor<16x768xbf16>, tensor<16x768xf32>) {
  %y = attn.linear %x, %w : (tensor<16x768xbf16>, tensor<768x768xbf16>) -> tensor<16x768xbf16>
  %z = attn.linear %xf, %wf : (tensor<16x768xf32>, tensor<768x768xf32>) -> tensor<16x768xf32>
  return %y, %z : tensor<16x768xbf16>, tensor<16x768xf32>
}

// -----

// attn.mha: projections (M = 2 * 64, N = 256 for q and o, 128 for k and v
// with 2 kv heads) and attention (2 query heads per kv head: a [2, 64, 32]
// score tile), one attribute for all of them. On CUDA, 8 x 16 warps at NT = 2
// are fewer than 132 SMs, so NT = 1; the f16 attention (head dim 64) goes to
// the tensor-core flash kernels, where even 16-row blocks give only
// 2 * 4 * 64 / 16 = 32 thread blocks: block_q 16, key blocks of 64.
// CPU-LABEL: func.func @mha
// CPU:         attn.mha {{.*}} {attn.tile = #attn.tile<block_q = 64, block_k = 32, vector_width = 16, row_tile = 4, col_tile = 4, column_block = 64>}
// CUDA-LABEL:  func.func @mha
// CUDA:        attn.mha {{.*}} {attn.tile = #attn.tile<block_q = 16, block_k = 64, warp_n_tiles = 1>}
func.func @mha(%x: tensor<2x64x256xf16>, %wq: tensor<256x256xf16>, %wk: tensor<128x256xf16>, %wv: tensor<128x256xf16>, %wo: tensor<256x256xf16>) -> tensor<2x64x256xf16> {
  %y = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 kv_heads = 2 causal : (tensor<2x64x256xf16>, tensor<256x256xf16>, tensor<128x256xf16>, tensor<128x256xf16>, tensor<256x256xf16>) -> tensor<2x64x256xf16>
  return %y : tensor<2x64x256xf16>
}

// -----

// A tile the user (or an earlier run) attached stands.
// CPU-LABEL: func.func @kept
// CPU:         attn.linear {{.*}} {attn.tile = #attn.tile<row_tile = 2>}
// CUDA-LABEL:  func.func @kept
// CUDA:        attn.linear {{.*}} {attn.tile = #attn.tile<row_tile = 2>}
func.func @kept(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %y = attn.linear %x, %w {attn.tile = #attn.tile<row_tile = 2>} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// f16 attention for the tensor-core flash kernels (attn-gpu-flash-attention)
// for the GPU: B=4, H=16, S=1024 gives 4 * 16 * 1024 / 64 = 1024 thread blocks of
// 4 warps, so block_q 64; Sk = 96 allows key blocks of 32. With B=1, H=2,
// S=256, 64-row blocks would give 8 thread blocks, so 16 rows (32 blocks),
// with a bias too; a window keeps the generic one-row-per-thread blocking.
// CUDA-LABEL:  func.func @tensor_core_attention
// CUDA:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 64, block_k = 64>}
// CUDA:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 64, block_k = 32>}
// CUDA:        attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 16, block_k = 64>}
// CUDA:        attn.sdpa {{.*}} bias({{.*}}) {attn.tile = #attn.tile<block_q = 16, block_k = 64>}
// CUDA:        attn.sdpa {{.*}} window = 8 {attn.tile = #attn.tile<block_q = 1, block_k = 64>}
// CUDAFIXED-LABEL: func.func @tensor_core_attention
// CUDAFIXED:     attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 4, block_k = 16>}
func.func @tensor_core_attention(%q: tensor<4x16x1024x64xf16>, %q96: tensor<4x16x1024x64xf16>, %k96: tensor<4x16x96x64xf16>,
                                 %s: tensor<1x2x256x64xf16>, %bias: tensor<1x1x256x256xf16>)
    -> (tensor<4x16x1024x64xf16>, tensor<4x16x1024x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
        tensor<1x2x256x64xf16>) {
  %0 = attn.sdpa %q, %q, %q causal : tensor<4x16x1024x64xf16>, tensor<4x16x1024x64xf16>, tensor<4x16x1024x64xf16> -> tensor<4x16x1024x64xf16>
  %1 = attn.sdpa %q96, %k96, %k96 : tensor<4x16x1024x64xf16>, tensor<4x16x96x64xf16>, tensor<4x16x96x64xf16> -> tensor<4x16x1024x64xf16>
  %2 = attn.sdpa %s, %s, %s : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  %3 = attn.sdpa %s, %s, %s bias(%bias : tensor<1x1x256x256xf16>) : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  %4 = attn.sdpa %s, %s, %s window = 8 : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %0, %1, %2, %3, %4 : tensor<4x16x1024x64xf16>, tensor<4x16x1024x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
      tensor<1x2x256x64xf16>
}
