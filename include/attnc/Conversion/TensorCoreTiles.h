//===- TensorCoreFlash.h - shapes the mma.sync flash kernels take -*- C++
//-*-===//
//
// What attn-gpu-flash-attention requires of an attn.sdpa's shape, shared with
// attn-tile so that it chooses tensor-core tiles exactly for the ops that
// will get them. (Besides the shape: f16 or bf16 operands and result, a
// dot-product score, no bias, no window.)
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_TENSORCOREFLASH_H
#define ATTNC_CONVERSION_TENSORCOREFLASH_H

#include <cstdint>

namespace mlir::attn {

/// Query rows per warp (the m of mma.sync m16n8k16).
constexpr int64_t kTensorCoreFlashRows = 16;
/// Keys per k16 step of P V; also the unit of the key blocks.
constexpr int64_t kTensorCoreFlashKeys = 16;
/// Default largest head dim kept in registers (Q fragments, O accumulators).
constexpr int64_t kTensorCoreFlashMaxHeadDim = 128;

/// attn-gpu-flash-attention takes an attn.sdpa with f16 or bf16 operands and
/// result, a dot-product score, no bias and no window, whose shape has
/// Sq and Sk multiples of 16, Dk of 16 (k steps of S = Q K^T), Dv of 8 (n8
/// tiles of O), both head dims at most `maxHeadDim`.
inline bool
fitsTensorCoreFlash(int64_t sq, int64_t sk, int64_t dk, int64_t dv,
                    int64_t maxHeadDim = kTensorCoreFlashMaxHeadDim) {
  return sq > 0 && sk > 0 && sq % kTensorCoreFlashRows == 0 &&
         sk % kTensorCoreFlashKeys == 0 && dk % 16 == 0 && dv % 8 == 0 &&
         dk > 0 && dv > 0 && dk <= maxHeadDim && dv <= maxHeadDim;
}

/// The largest of `preferred`, preferred / 2, ... (multiples of `unit`,
/// down to `unit`) that divides `extent`; 0 when not even `unit` does.
inline int64_t dividingBlock(int64_t preferred, int64_t unit, int64_t extent) {
  int64_t block = preferred / unit * unit;
  if (block < unit)
    block = unit;
  while (block > unit && extent % block != 0)
    block /= 2;
  if (block % unit != 0)
    block = unit;
  return extent % block == 0 ? block : 0;
}

/// How attn-gpu-mma-matmul splits C[M, N] += A[M, K] B[N, K]^T: a thread
/// block of wm x wn warps computes a (16 mt wm) x (8 nt wn) tile of C, each
/// warp mt x nt mma tiles of 16 x 8, staging bk columns of its A and B rows
/// in shared memory per step.
struct MmaGemmTiling {
  int64_t wm, wn, mt, nt, bk;
  int64_t blockM() const { return 16 * mt * wm; }
  int64_t blockN() const { return 8 * nt * wn; }
  int64_t threads() const { return 32 * wm * wn; }
  int64_t blocks(int64_t m, int64_t n) const {
    return (m / blockM()) * (n / blockN());
  }
};

/// 2 x 2 warps of 2 x `warpNTiles` mma tiles (64 x 64 with NT = 4), halved
/// along a dimension the block would not divide; k steps of 32 (16 when K
/// is not a multiple of 32). Needs M % 16 == N % 8 == K % 16 == 0.
inline MmaGemmTiling chooseMmaGemmTiling(int64_t m, int64_t n, int64_t k,
                                         int64_t warpNTiles) {
  MmaGemmTiling t;
  t.wm = m % 32 == 0 ? 2 : 1;
  t.mt = m % (32 * t.wm) == 0 ? 2 : 1;
  t.wn = n % 16 == 0 ? 2 : 1;
  t.nt = warpNTiles > 1 ? warpNTiles : 1;
  while (t.nt > 1 && n % (8 * t.nt * t.wn) != 0)
    t.nt /= 2;
  if (n % (8 * t.nt * t.wn) != 0)
    t.nt = 1;
  t.bk = k % 32 == 0 ? 32 : 16;
  return t;
}

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_TENSORCORETILES_H
