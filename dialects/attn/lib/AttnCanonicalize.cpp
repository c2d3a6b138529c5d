//===- AttnCanonicalize.cpp - canonicalization patterns of attn ops -------===//

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// With bottom-right mask alignment a single query row sits at the last
/// position, so a causal mask hides nothing: drop the flag. (Not with
/// query_positions: the row then sits at a run-time position that may be
/// before the last key.)
struct DropCausalOnSingleQuery : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getCausal() || op.getQuery().getType().getDimSize(2) != 1)
      return rewriter.notifyMatchFailure(op, "not causal on one query row");
    if (op.getQueryPositions())
      return rewriter.notifyMatchFailure(op, "run-time query positions");
    rewriter.modifyOpInPlace(op, [&] { op.setCausal(false); });
    return success();
  }
};

/// `window = 0` means "no window", and a window wider than any query/key
/// distance hides nothing: both become the absent attribute. With
/// bottom-right alignment |p - j| <= max(Sq, Sk) - 1; run-time query
/// positions bound no distance. (Query positions keep a causal mask to
/// place: the verifier rejects them with only `window = 0`.)
struct DropInertWindow : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> window = op.getWindow();
    if (!window)
      return rewriter.notifyMatchFailure(op, "no window");
    int64_t sq = op.getQuery().getType().getDimSize(2);
    int64_t sk = op.getKey().getType().getDimSize(2);
    bool coversAll = !op.getQueryPositions() && !ShapedType::isDynamic(sq) &&
                     !ShapedType::isDynamic(sk) && *window >= std::max(sq, sk);
    if (*window != 0 && !coversAll)
      return rewriter.notifyMatchFailure(op, "window masks some keys");
    rewriter.modifyOpInPlace(op, [&] { op.removeWindowAttr(); });
    return success();
  }
};

/// A layer whose body only forwards its arguments is the identity on them
/// (this is what a dropped layer looks like): forward the operands.
struct FoldForwardingLayer : OpRewritePattern<LayerOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    SmallVector<Value> replacements;
    for (Value yielded : body.getTerminator()->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(yielded);
      if (!arg || arg.getOwner() != &body)
        return rewriter.notifyMatchFailure(op, "body computes something");
      replacements.push_back(op.getInputs()[arg.getArgNumber()]);
    }
    rewriter.replaceOp(op, replacements);
    return success();
  }
};
} // namespace

void SdpaOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<DropCausalOnSingleQuery, DropInertWindow>(context);
}

void LayerOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<FoldForwardingLayer>(context);
}
