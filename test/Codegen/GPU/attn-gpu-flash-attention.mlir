// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention{staging=plain ldmatrix=0}))" \
// RUN:   | FileCheck %s
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention{staging=plain ldmatrix=0 block-q=32 block-k=32}))" \
// RUN:   | FileCheck %s --check-prefix=SMALL
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention{staging=plain ldmatrix=0 block-q=4096 block-k=512}))" \
// RUN:   | FileCheck %s --check-prefix=CLAMP
// RUN: not attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention{block-k=8}))" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention))" \
// RUN:   | FileCheck %s --check-prefix=ASYNC
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention))" \
// RUN:   | attn-opt --split-input-file | FileCheck %s --check-prefix=ASYNC
// RUN: not attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-flash-attention{staging=tma}))" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADSTAGING

// f16/bf16 attn.sdpa becomes one gpu.launch on buffers: grid (Sq / 64, Hq,
// B), 4 warps per block, K and V^T staged in padded shared memory between two
// barriers per key block (staging=plain; CHECK), both contractions on
// mma.sync m16n8k16. By default (ASYNC) K and V are staged by cp.async in
// two stages, V untransposed, fragments from ldmatrix (.trans for V).
// Numerics: test/Integration/GPU/flash-mma-emulation.test (IR-level
// emulation).

// The default kernel on @gqa_causal: buffers [2][64][Dk + 8] and
// [2][64][Dv + 8]; the first key block's group is committed before the
// loop (always: Sk >= 64), then each block waits for its group (none newer
// pending), one barrier, loads K fragments with ldmatrix x4, prefetches the
// next block into the other buffer (past the last, no commit: the token
// ring gets one no wait uses) and loads V fragments with ldmatrix x4
// .trans; a final wait retires block 0's copies where no block was
// visited. The second ASYNC RUN line parses the printed kernel again.
// ASYNC-LABEL: func.func @gqa_causal(
// ASYNC:         gpu.launch
// ASYNC:           %[[KS:.*]] = memref.alloca() : memref<2x64x72xf16, #gpu.address_space<workgroup>>
// ASYNC:           %[[VS:.*]] = memref.alloca() : memref<2x64x40xf16, #gpu.address_space<workgroup>>
// ASYNC-COUNT-4:   nvgpu.device_async_copy {{.*}}, %[[KS]][%c0{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<2x2x256x64xf16> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// ASYNC-COUNT-2:   nvgpu.device_async_copy {{.*}}, %[[VS]][%c0{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<2x2x256x32xf16> to memref<2x64x40xf16, #gpu.address_space<workgroup>>
// ASYNC:           %[[FIRST:.*]] = nvgpu.device_async_create_group
// ASYNC:           %[[LOOP:.*]]:9 = scf.for {{.*}} iter_args({{.*}}, %[[PENDING:.*]] = %[[FIRST]]) -> (f32, f32, f32, f32, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, !nvgpu.device.async.token)
// ASYNC:             nvgpu.device_async_wait %[[PENDING]] {numGroups = 0 : i32}
// ASYNC-NEXT:        gpu.barrier
// ASYNC:             %[[STAGE:.*]] = arith.remui %{{.*}}, %c2{{.*}} : index
// ASYNC:             nvgpu.ldmatrix %[[KS]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<2x64x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// ASYNC:             %[[NEXT:.*]] = scf.if %{{.*}} -> (!nvgpu.device.async.token) {
// ASYNC-COUNT-6:       nvgpu.device_async_copy
// ASYNC:             } else {
// ASYNC-NEXT:          scf.yield %[[PENDING]] : !nvgpu.device.async.token
// ASYNC:             gpu.shuffle  xor
// ASYNC:             nvgpu.ldmatrix %[[VS]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true} : memref<2x64x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// ASYNC-NOT:         gpu.barrier
// ASYNC:             scf.yield {{.*}}, %[[NEXT]] :
// ASYNC:           nvgpu.device_async_wait %[[LOOP]]#8 {numGroups = 0 : i32}
// ASYNC:           gpu.terminator
// BADSTAGING: error: attn-gpu-flash-attention: staging must be cp-async or plain, not 'tma'

// GQA (8 query heads over 2 kv heads), causal, Dk = 64, Dv = 32, Sk = 256:
// per key block of 64, 8 n8 key tiles x 4 k16 steps of Dk = 32 mma for S,
// then 4 k16 key steps x 4 n8 tiles of Dv = 16 for P V.
// CHECK-LABEL: func.func @gqa_causal(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x128x64xf16>, %[[K:[^:]+]]: tensor<2x2x256x64xf16>, %[[V:[^:]+]]: tensor<2x2x256x32xf16>)
// CHECK-NOT:     attn.sdpa
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only : tensor<2x8x128x64xf16> to memref<2x8x128x64xf16>
// CHECK:         %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK:         %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<2x8x128x32xf16>
// CHECK:         gpu.launch blocks(%{{.*}}, %[[HEAD:.*]], %[[BATCH:.*]]) in (%{{.*}} = %[[C2]], %{{.*}} = %[[C8]], %{{.*}} = %[[C2]]) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:           %[[KS:.*]] = memref.alloca() : memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[VS:.*]] = memref.alloca() : memref<32x72xf16, #gpu.address_space<workgroup>>
// The kv head of query head h is h / 4.
// CHECK:           %[[KVH:.*]] = arith.divui %[[HEAD]], %{{.*}} : index
// Q fragments are loaded once, before the key loop.
// CHECK-COUNT-16:  vector.load %[[QB]][%[[BATCH]], %[[HEAD]], %{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<2x8x128x64xf16>, vector<2xf16>
// Causal: the loop stops at min(Sk, ceil(last visible key / 64) * 64).
// CHECK:           arith.maxsi
// CHECK:           %[[HI:.*]] = arith.minsi %{{.*}}, %[[C256]] : index
// CHECK:           scf.for %[[K0:.*]] = %{{.*}} to %[[HI]] step %[[C64]] iter_args({{.*}}) -> (f32, f32, f32, f32, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK-NEXT:        gpu.barrier
// CHECK:             vector.load %[[KB]][%[[BATCH]], %[[KVH]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x2x256x64xf16>, vector<8xf16>
// CHECK:             vector.store %{{.*}}, %[[KS]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// V^T: a thread loads the same 8 columns of two consecutive keys and stores
// 8 pairs VS[d][key .. key + 1].
// CHECK-COUNT-2:     vector.load %[[VB]][%[[BATCH]], %[[KVH]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x2x256x32xf16>, vector<8xf16>
// CHECK-COUNT-8:     vector.store %{{.*}}, %[[VS]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<32x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK:             gpu.barrier
// CHECK-COUNT-32:    nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// The row max is completed over the four lanes of a row.
// CHECK:             gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:             gpu.shuffle  xor
// CHECK:             math.exp
// CHECK:             arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// CHECK:             vector.load %[[VS]]
// CHECK-COUNT-16:    nvgpu.mma.sync
// CHECK-NOT:         nvgpu.mma.sync
// CHECK:             scf.yield
// CHECK:           vector.store %{{.*}}, %[[OUT]][%[[BATCH]], %[[HEAD]], %{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<2x8x128x32xf16>, vector<2xf16>
// CHECK:           gpu.terminator
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2x8x128x32xf16> to tensor<2x8x128x32xf16>
// CHECK:         return %[[R]]

// Smaller blocks: 2 warps (32 query rows) per block, 32-key stages.
// SMALL-LABEL: func.func @gqa_causal(
// SMALL:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c8, %{{.*}} = %c2) threads({{.*}}) in (%{{.*}} = %c64,
// SMALL:           memref.alloca() : memref<32x72xf16, #gpu.address_space<workgroup>>
// SMALL:           memref.alloca() : memref<32x40xf16, #gpu.address_space<workgroup>>

// Oversized blocks are clamped to the kernel's limits: at most 1024 threads
// (block-q 128 here: Sq), keys 128 at head dim 64 (S accumulators in
// registers), shared tiles within 48 KiB.
// CLAMP-LABEL: func.func @gqa_causal(
// CLAMP:         gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256,
// CLAMP:           memref.alloca() : memref<128x72xf16, #gpu.address_space<workgroup>>
// CLAMP:           memref.alloca() : memref<32x136xf16, #gpu.address_space<workgroup>>

// BAD: attn-gpu-flash-attention: block-q, block-k and max-head-dim must be >= 16
func.func @gqa_causal(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x256x64xf16>, %v: tensor<2x2x256x32xf16>) -> tensor<2x8x128x32xf16> {
  %0 = attn.sdpa %q, %k, %v causal : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x32xf16> -> tensor<2x8x128x32xf16>
  return %0 : tensor<2x8x128x32xf16>
}

// -----

// bf16 with kv_lengths: nvvm.mma.sync on packed registers; the loop bound
// comes from the batch's length (rounded up to the 32-key block that Sk = 96
// allows), keys at or past it are masked per element.
// CHECK-LABEL: func.func @bf16_lengths(
// CHECK:         gpu.launch
// CHECK:           %[[LEN:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<2xi32>
// CHECK:           %[[L:.*]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK:           scf.for
// CHECK:             nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK:             arith.cmpi slt, %{{.*}}, %[[L]] : index
// CHECK:             arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK-NOT:     attn.sdpa
func.func @bf16_lengths(%q: tensor<2x2x32x32xbf16>, %k: tensor<2x2x96x32xbf16>, %v: tensor<2x2x96x32xbf16>, %len: tensor<2xi32>) -> tensor<2x2x32x32xbf16> {
  %0 = attn.sdpa %q, %k, %v kv_lengths(%len : tensor<2xi32>) : tensor<2x2x32x32xbf16>, tensor<2x2x96x32xbf16>, tensor<2x2x96x32xbf16> -> tensor<2x2x32x32xbf16>
  return %0 : tensor<2x2x32x32xbf16>
}

// -----

// Run-time batch, Sq and Sk (ASYNC): the sizes are read off Q and K on
// the host; the grid is (ceil(Sq / 64), Hq, B) and the causal offset Sk -
// Sq is computed there. Q rows past Sq read row Sq - 1, K and V rows past
// Sk are zero-filled by the copies (clamped source row, source size 0),
// the key loop runs to min(Sk rounded up to a block, the causal bound),
// keys past Sk are masked like kv_lengths, and O stores are guarded by
// row < Sq. Numerics: test/Integration/GPU/dynamic-emulation.test.
// ASYNC-LABEL: func.func @dynamic_causal(
// ASYNC-SAME:    %[[Q:[^:]+]]: tensor<?x4x?x16xf16>, %[[K:[^:]+]]: tensor<?x4x?x16xf16>
// ASYNC:         %[[B:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x4x?x16xf16>
// ASYNC-NEXT:    %[[SQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x4x?x16xf16>
// ASYNC-NEXT:    %[[SK:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<?x4x?x16xf16>
// ASYNC:         %[[OUT:.*]] = memref.alloc(%[[B]], %[[SQ]]) : memref<?x4x?x16xf16>
// ASYNC-NEXT:    %[[SQ63:.*]] = arith.addi %[[SQ]], %{{.*}} : index
// ASYNC-NEXT:    %[[QBLOCKS:.*]] = arith.divui %[[SQ63]], %{{.*}} : index
// ASYNC-NEXT:    %[[ALIGN:.*]] = arith.subi %[[SK]], %[[SQ]] : index
// ASYNC-NEXT:    gpu.launch blocks({{.*}}) in (%{{.*}} = %[[QBLOCKS]], %{{.*}} = %{{.*}}, %{{.*}} = %[[B]]) threads
// ASYNC:           %[[LASTQ:.*]] = arith.subi %[[SQ]], %{{.*}} : index
// ASYNC-NEXT:      %[[QA:.*]] = arith.minsi %[[ROWA:.*]], %[[LASTQ]] : index
// ASYNC-NEXT:      %[[QB:.*]] = arith.minsi %[[ROWB:.*]], %[[LASTQ]] : index
// ASYNC:           vector.load %{{.*}}[%{{.*}}, %{{.*}}, %[[QA]], %{{.*}}]
// ASYNC:           vector.load %{{.*}}[%{{.*}}, %{{.*}}, %[[QB]], %{{.*}}]
// ASYNC:           %[[SKR:.*]] = arith.addi %[[SK]], %{{.*}} : index
// ASYNC:           arith.addi %{{.*}}, %[[ALIGN]] : index
// ASYNC:           %[[KIN:.*]] = arith.cmpi ult, %[[KROW:.*]], %[[SK]] : index
// ASYNC-NEXT:      %[[KLAST:.*]] = arith.subi %[[SK]], %{{.*}} : index
// ASYNC-NEXT:      %[[KCL:.*]] = arith.minsi %[[KROW]], %[[KLAST]] : index
// ASYNC-NEXT:      %[[KSIZE:.*]] = arith.select %[[KIN]], %{{.*}}, %{{.*}} : index
// ASYNC-NEXT:      nvgpu.device_async_copy %{{.*}}[%{{.*}}, %{{.*}}, %[[KCL]], %{{.*}}], %{{.*}}[{{.*}}], 8, %[[KSIZE]] {bypassL1}
// ASYNC:           nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// ASYNC:           scf.for
// ASYNC:             nvgpu.mma.sync
// ASYNC:             arith.cmpi sle, %{{.*}}, %{{.*}} : index
// ASYNC-NEXT:        arith.cmpi slt, %{{.*}}, %[[SK]] : index
// ASYNC:           %[[IN:.*]] = arith.cmpi ult, %[[ROWA]], %[[SQ]] : index
// ASYNC-NEXT:      scf.if %[[IN]] {
// ASYNC-NEXT:        vector.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %[[ROWA]], %{{.*}}]
// ASYNC:           gpu.terminator
func.func @dynamic_causal(%q: tensor<?x4x?x16xf16>, %k: tensor<?x4x?x16xf16>, %v: tensor<?x4x?x16xf16>) -> tensor<?x4x?x16xf16> {
  %o = attn.sdpa %q, %k, %v causal : tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x16xf16>
  return %o : tensor<?x4x?x16xf16>
}

// -----

// Near misses keep attn.sdpa (for attn-flash-attention): f32, a window, a
// non-dot score, Dk not a multiple of 8, a head dim above max-head-dim
// (128). (Biases and static Sq, Sk that are not multiples of 16:
// attn-gpu-flash-attention-bias.mlir.)
// CHECK-LABEL: func.func @near_misses(
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-5: attn.sdpa
// CHECK-NOT:     gpu.launch
func.func @near_misses(%q32: tensor<1x1x64x64xf32>, %q: tensor<1x1x64x64xf16>,
                       %q20: tensor<1x1x64x20xf16>, %q256: tensor<1x1x64x256xf16>)
    -> (tensor<1x1x64x64xf32>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>,
        tensor<1x1x64x20xf16>, tensor<1x1x64x256xf16>) {
  %0 = attn.sdpa %q32, %q32, %q32 : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>
  %2 = attn.sdpa %q, %q, %q window = 8 : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  %3 = attn.sdpa %q, %q, %q score = cosine : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  %5 = attn.sdpa %q20, %q20, %q20 : tensor<1x1x64x20xf16>, tensor<1x1x64x20xf16>, tensor<1x1x64x20xf16> -> tensor<1x1x64x20xf16>
  %6 = attn.sdpa %q256, %q256, %q256 : tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16> -> tensor<1x1x64x256xf16>
  return %0, %2, %3, %5, %6 : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>,
      tensor<1x1x64x20xf16>, tensor<1x1x64x256xf16>
}
