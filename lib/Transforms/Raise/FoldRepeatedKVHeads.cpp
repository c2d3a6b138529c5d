//===- FoldRepeatedKVHeads.cpp - attn.sdpa over the kv heads --------------===//
//
// Grouped-query attention as exported repeats each key/value head for its
// group of query heads (repeat_kv) before attn.sdpa; attn.sdpa reads kv heads
// per query-head group itself, so the repeat folds away.
//
//===----------------------------------------------------------------------===//

#include "AttentionPatterns.h"
#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

using namespace mlir;
using namespace mlir::attn;

/// If `v` ([B, H, S, D]) repeats each head of a [B, Hkv, S, D] value R =
/// H / Hkv times, as repeat_kv exports it (Expand to [B, Hkv, R, S, D] and
/// Reshape merging Hkv and R, so head h reads kv head h / R): that value
/// (unit reshapes stripped) and R.
static std::optional<std::pair<Value, int64_t>> matchRepeatedHeads(Value v) {
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getSrcType().getRank() != 5)
    return std::nullopt;
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  if (groups != SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}})
    return std::nullopt;
  auto broadcast = collapse.getSrc().getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || !broadcast.hasPureTensorSemantics() ||
      broadcast.getDimensions() != ArrayRef<int64_t>{2})
    return std::nullopt;
  int64_t repeats = collapse.getSrcType().getDimSize(2);
  Value kv = raise::stripUnitReshapes(broadcast.getInput());
  auto type = dyn_cast<RankedTensorType>(kv.getType());
  if (ShapedType::isDynamic(repeats) || !type || type.getRank() != 4 ||
      type.isDynamicDim(1) ||
      type.getDimSize(1) != collapse.getSrcType().getDimSize(1))
    return std::nullopt;
  return std::make_pair(kv, repeats);
}

namespace {

/// attn.sdpa over keys and values whose heads are repeated (grouped-query
/// attention as exported: repeat_kv) -> attn.sdpa over the kv heads, which
/// it reads per query-head group itself. The KV-cache binding then keeps
/// the caches at the kv heads.
struct FoldRepeatedKVHeads : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    auto key = matchRepeatedHeads(op.getKey());
    auto value = matchRepeatedHeads(op.getValue());
    if (!key || !value || key->second != value->second)
      return rewriter.notifyMatchFailure(op, "keys and values not repeated");
    rewriter.modifyOpInPlace(op, [&] {
      op.getKeyMutable().assign(key->first);
      op.getValueMutable().assign(value->first);
    });
    return success();
  }
};
} // namespace

void mlir::attn::raise::populateFoldRepeatedKVHeadsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldRepeatedKVHeads>(patterns.getContext());
}
