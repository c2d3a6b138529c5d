//===- RaiseResidual.cpp - raise residual additions to attn.add -----------===//
//
// A linalg.add of two same-typed float tensors, neither of them a broadcast
// or a constant, is a residual connection (biases and masks arrive through
// linalg.broadcast or as constants); it becomes attn.add, which the row
// fusion (residual add + norm in one loop) and attn.layer formation know.
// Runs after the passes that fold biases and masks into attn ops.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISERESIDUAL
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

/// True if `v` is a broadcast or a constant rather than an activation.
static bool isBroadcastOrConstant(Value v) {
  Operation *op = stripUnitReshapes(v).getDefiningOp();
  return op && (isa<linalg::BroadcastOp, linalg::FillOp, WeightOp>(op) ||
                matchPattern(op, m_Constant()));
}

namespace {

struct RaiseResidualAdd : OpRewritePattern<linalg::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::AddOp op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    auto ins = matchBinary<linalg::AddOp>(result);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!ins || !type || type.getRank() < 2 ||
        !isa<FloatType>(type.getElementType()))
      return failure();
    if (isBroadcastOrConstant(ins->first) || isBroadcastOrConstant(ins->second))
      return rewriter.notifyMatchFailure(op, "a bias or mask, not a residual");
    rewriter.replaceOpWithNewOp<AddOp>(op, type, ins->first, ins->second);
    return success();
  }
};

struct AttnRaiseResidualPass
    : raise::RaisingPass<AttnRaiseResidualPass,
                         attn::impl::AttnRaiseResidualBase, RaiseResidualAdd> {
};

} // namespace
