//===- TensorCoreTiles.h - tiles of the mma.sync kernels --------*- C++ -*-===//
//
// The shapes the tensor-core kernels take and how they split them, shared by
// the kernel passes (attn-gpu-flash-attention, attn-gpu-mma-matmul) and
// attn-tile, so that attn-tile reasons about the tiles the kernels will
// really use. Header-only: attn-tile lives in another library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_TENSORCORETILES_H
#define ATTNC_CONVERSION_TENSORCORETILES_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir::attn {

/// The `staging` option of the tensor-core passes: cp-async or plain. Emits
/// an error on `op` naming `pass` otherwise.
inline LogicalResult checkStagingOption(Operation *op, StringRef pass,
                                        StringRef staging) {
  if (staging == "cp-async" || staging == "plain")
    return success();
  return op->emitError() << pass << ": staging must be cp-async or plain, not '"
                         << staging << "'";
}

/// Query rows per warp (the m of mma.sync m16n8k16).
constexpr int64_t kTensorCoreFlashRows = 16;
/// Keys per k16 step of P V; also the unit of the key blocks.
constexpr int64_t kTensorCoreFlashKeys = 16;
/// Default largest head dim kept in registers (Q fragments, O accumulators).
constexpr int64_t kTensorCoreFlashMaxHeadDim = 128;

/// attn-gpu-flash-attention takes an attn.sdpa with f16 or bf16 operands and
/// result, a dot-product score and no window, whose shape has nonempty Sq
/// and Sk (static ones that are not multiples of 16 are handled as run-time
/// sizes are, negative here, ShapedType::kDynamic: the kernel masks the
/// edge blocks), Dk a multiple of 8 (k16 steps of S = Q K^T, the last one
/// half zeros where Dk % 16 == 8), Dv of 8 (n8 tiles of O), both head dims
/// at most `maxHeadDim`.
inline bool
fitsTensorCoreFlash(int64_t sq, int64_t sk, int64_t dk, int64_t dv,
                    int64_t maxHeadDim = kTensorCoreFlashMaxHeadDim) {
  return sq != 0 && sk != 0 && dk % 8 == 0 && dv % 8 == 0 && dk > 0 && dv > 0 &&
         dk <= maxHeadDim && dv <= maxHeadDim;
}

/// The extent the flash kernel's blocks cover: a static Sq (Sk) rounded up
/// to whole units of 16 rows (keys); run-time extents stay negative.
inline int64_t flashBlockedExtent(int64_t extent, int64_t unit) {
  return extent < 0 ? extent : (extent + unit - 1) / unit * unit;
}

/// The largest of `preferred`, preferred / 2, ... (multiples of `unit`,
/// down to `unit`) that divides `extent`; 0 when not even `unit` does. A
/// run-time `extent` (negative) takes `preferred` (rounded to `unit`).
inline int64_t dividingBlock(int64_t preferred, int64_t unit, int64_t extent) {
  int64_t block = preferred / unit * unit;
  if (block < unit)
    block = unit;
  if (extent < 0)
    return block;
  while (block > unit && extent % block != 0)
    block /= 2;
  if (block % unit != 0)
    block = unit;
  return extent % block == 0 ? block : 0;
}

/// Limits every kernel keeps: threads per block, and static shared memory
/// (more than 48 KiB would need dynamic shared memory and an opt-in).
constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// Stages of the flash kernel's cp.async pipeline (staging=cp-async).
constexpr int64_t kFlashAsyncStages = 2;

/// Shared memory of a flash kernel: K [bk][Dk + 8] and V^T [Dv][bk + 8] of
/// 2-byte elements with plain staging (`stages` 0), or `stages` buffers of
/// K [bk][Dk + 8] and V [bk][Dv + 8] with the cp.async pipeline.
inline int64_t flashSharedBytes(int64_t blockK, int64_t dk, int64_t dv,
                                int64_t stages = 0) {
  if (stages)
    return stages * 2 * blockK * (dk + 8 + dv + 8);
  return 2 * (blockK * (dk + 8) + dv * (blockK + 8));
}

/// The flash kernel's blocks for preferred sizes `blockQ` x `blockK`: the
/// largest dividing Sq (Sk, both rounded up to multiples of 16) at most that,
/// with at most 1024 threads (16 query rows per warp), its K/V tiles within the
/// static shared memory, and at most 128 keys (64 when a head dim exceeds 64)
/// so that the S accumulators (blockK / 2 registers per thread) leave room for
/// Q and O. Assumes fitsTensorCoreFlash.
inline void chooseFlashBlocks(int64_t sq, int64_t sk, int64_t dk, int64_t dv,
                              int64_t &blockQ, int64_t &blockK,
                              int64_t stages = 0) {
  sq = flashBlockedExtent(sq, kTensorCoreFlashRows);
  sk = flashBlockedExtent(sk, kTensorCoreFlashKeys);
  int64_t maxRows = kMaxThreadsPerBlock / 32 * kTensorCoreFlashRows;
  blockQ = dividingBlock(blockQ < maxRows ? blockQ : maxRows,
                         kTensorCoreFlashRows, sq);
  int64_t maxKeys = dk > 64 || dv > 64 ? 64 : 128;
  blockK = dividingBlock(blockK < maxKeys ? blockK : maxKeys,
                         kTensorCoreFlashKeys, sk);
  while (blockK > kTensorCoreFlashKeys &&
         flashSharedBytes(blockK, dk, dv, stages) > kMaxStaticSharedBytes)
    blockK = dividingBlock(blockK / 2, kTensorCoreFlashKeys, sk);
}

/// How attn-gpu-mma-matmul splits C[M, N] += A[M, K] B[N, K]^T: a thread
/// block of wm x wn warps computes a (16 mt wm) x (8 nt wn) tile of C, each
/// warp mt x nt mma tiles of 16 x 8, staging bk columns of its A and B rows
/// in shared memory per step. Where a block does not divide M (N, K) the
/// grid (the k loop) covers it rounded up and the kernel masks the edge.
struct MmaGemmTiling {
  int64_t wm, wn, mt, nt, bk;
  int64_t blockM() const { return 16 * mt * wm; }
  int64_t blockN() const { return 8 * nt * wn; }
  int64_t threads() const { return 32 * wm * wn; }
  int64_t blocks(int64_t m, int64_t n) const {
    return (m + blockM() - 1) / blockM() * ((n + blockN() - 1) / blockN());
  }
  /// Whether the kernel needs bounds checks along M (N, K); a run-time M
  /// (ShapedType::kDynamic, negative) always does.
  bool raggedM(int64_t m) const { return m < 0 || m % blockM() != 0; }
  bool raggedN(int64_t n) const { return n % blockN() != 0; }
  bool raggedK(int64_t k) const { return k % bk != 0; }
};

/// 2 x 2 warps of 2 x `warpNTiles` (<= 8) mma tiles (64 x 64 with NT = 4),
/// halved along a dimension the block would not divide; k steps of 32 (16
/// when K is not a multiple of 32). A dimension that is not a multiple of
/// its mma tile (M % 16, N % 8, K % 16) is ragged: its block is the largest
/// of these at most the dimension rounded up to the tile, and the edge
/// blocks (k steps) are partial.
inline MmaGemmTiling chooseMmaGemmTiling(int64_t m, int64_t n, int64_t k,
                                         int64_t warpNTiles) {
  MmaGemmTiling t;
  int64_t maxNt = warpNTiles > 8 ? 8 : warpNTiles > 1 ? warpNTiles : 1;
  if (m < 0) {
    // A run-time M (ShapedType::kDynamic): the full block, the edge masked.
    t.wm = 2;
    t.mt = 2;
  } else if (m % 16 == 0) {
    t.wm = m % 32 == 0 ? 2 : 1;
    t.mt = m % (32 * t.wm) == 0 ? 2 : 1;
  } else {
    t.wm = m > 16 ? 2 : 1;
    t.mt = m > 32 * t.wm ? 2 : 1;
  }
  // At most 8 n8 tiles per warp: 2 x 8 accumulators (64 registers) and
  // [64 + 128][bk + 8] staged elements (15 KiB).
  t.nt = maxNt;
  if (n % 8 == 0) {
    t.wn = n % 16 == 0 ? 2 : 1;
    while (t.nt > 1 && n % (8 * t.nt * t.wn) != 0)
      t.nt /= 2;
    if (n % (8 * t.nt * t.wn) != 0)
      t.nt = 1;
  } else {
    t.wn = n > 8 ? 2 : 1;
    while (t.nt > 1 && 8 * t.nt * t.wn > (n + 7) / 8 * 8)
      t.nt /= 2;
  }
  if (k % 16 == 0)
    t.bk = k % 32 == 0 ? 32 : 16;
  else
    t.bk = k > 16 ? 32 : 16;
  return t;
}

/// The wgmma kernel (sm_90a): one warpgroup (4 warps, 128 threads) per
/// thread block computes a 64 x 8 nt tile of C with wgmma.mma_async
/// m64n(8 nt)k16. Its accumulator fragment gives warp w rows 16 w .. 16 w +
/// 15 laid out, per n8 column block, as mma.sync's m16n8 C fragment, so it
/// is the tiling of 4 x 1 warps of 1 x nt mma tiles. nt is twice
/// `warpNTiles` (a block as wide as mma.sync's 2 x 2 warps; at most 16:
/// n128, 64 accumulator registers), else the largest divisor of N / 8
/// below that; a ragged N takes it rounded up to 8 (the edge block masked).
/// The k steps are mma.sync's.
inline MmaGemmTiling chooseWgmmaGemmTiling(int64_t m, int64_t n, int64_t k,
                                           int64_t warpNTiles) {
  MmaGemmTiling t = chooseMmaGemmTiling(m, n, k, warpNTiles);
  t.wm = 4;
  t.wn = 1;
  t.mt = 1;
  int64_t maxNt = 2 * warpNTiles > 16 ? 16 : 2 * warpNTiles;
  if (maxNt < 1)
    maxNt = 1;
  int64_t tiles = (n + 7) / 8;
  t.nt = tiles < maxNt ? tiles : maxNt;
  if (n % 8 == 0)
    while (tiles % t.nt != 0)
      --t.nt;
  return t;
}

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_TENSORCORETILES_H
