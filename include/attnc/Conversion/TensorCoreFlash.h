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

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_TENSORCOREFLASH_H
