//===- AttentionPatterns.h - attention raising internals --------*- C++ -*-===//
//
// Private to attn-raise-attention: the populate functions of its patterns
// (one file each) and the matchers more than one of them uses. Defined in
// RaiseAttention.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TRANSFORMS_RAISE_ATTENTIONPATTERNS_H
#define ATTNC_LIB_TRANSFORMS_RAISE_ATTENTIONPATTERNS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"

#include <cmath>
#include <optional>

namespace mlir::attn::raise {

/// `softmax_last(scale(Q @ K^T) [+ M]) @ V` rooted at a linalg.matmul or
/// linalg.batch_matmul -> attn.sdpa (RaiseAttentionChain.cpp).
void populateRaiseAttentionChainPatterns(RewritePatternSet &patterns);
/// The same on [B, H, S, D] tensors as the ONNX importer writes it
/// (RaiseImportedAttention.cpp).
void populateRaiseImportedAttentionPatterns(RewritePatternSet &patterns);
/// attn.sdpa over repeated kv heads -> attn.sdpa over the kv heads
/// (FoldRepeatedKVHeads.cpp).
void populateFoldRepeatedKVHeadsPatterns(RewritePatternSet &patterns);
/// attn.sdpa with transformers' LLaMA causal masked fill -> causal attn.sdpa
/// (RaiseCausalMaskedFill.cpp).
void populateRaiseCausalMaskedFillPatterns(RewritePatternSet &patterns);

/// True if every indexing map of `op` is the identity.
bool hasIdentityMaps(linalg::LinalgOp op);

/// A value scaled by a constant factor.
struct Scaled {
  Value input;
  double factor;
};

/// `x * c` or `c * x` (when `isDivision` is false), or `x / c`, with `c` a
/// constant given by `getConstant`; the factor, `c` or `1 / c`, must be
/// finite.
template <typename GetConstant>
std::optional<Scaled> matchScaleOperands(Value lhs, Value rhs, bool isDivision,
                                         GetConstant getConstant) {
  std::optional<Scaled> scaled;
  if (isDivision) {
    std::optional<double> divisor = getConstant(rhs);
    if (divisor && *divisor != 0.0)
      scaled = Scaled{lhs, 1.0 / *divisor};
  } else if (std::optional<double> factor = getConstant(rhs)) {
    scaled = Scaled{lhs, *factor};
  } else if (std::optional<double> factor = getConstant(lhs)) {
    scaled = Scaled{rhs, *factor};
  }
  if (!scaled || !std::isfinite(scaled->factor))
    return std::nullopt;
  return scaled;
}

/// The constant factor of `v` = x * c, c * x or x / c with c a broadcast
/// splat: x and the factor.
std::optional<Scaled> matchBroadcastScale(Value v);

/// The input of a softmax over the last dimension (linalg.softmax or
/// attn.softmax) producing `value`.
Value matchLastDimSoftmax(Value value);

/// True if `value` hides a score as well as -inf does after softmax: -inf or
/// at most -1e4 (exporters' "large negative" fill values).
inline bool isHidingValue(double value) { return value <= -1e4; }

/// `mask` without unit reshapes and a broadcast over its leading
/// dimensions (the last two, [Sq, Sk], are the mask's own); null when a
/// broadcast also spans one of the last two.
Value stripLeadingBroadcast(Value mask);

} // namespace mlir::attn::raise

#endif // ATTNC_LIB_TRANSFORMS_RAISE_ATTENTIONPATTERNS_H
