//===- Linear.cpp - projections and feed-forward blocks to linalg ---------===//

#include "Conversion/AttnToLinalg/Patterns.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

static Value toF32OrNull(LinalgBuilder &lb, Value v) {
  return v ? lb.toF32(v) : Value();
}

struct LinearLowering : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value y =
        lb.linear(lb.toF32(op.getInput()), lb.toF32(op.getWeight()),
                  toF32OrNull(lb, op.getBias()), nullptr, TileAttr::lookup(op));
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

struct FfnLowering : OpRewritePattern<FfnOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FfnOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Activation act = op.getActivation();
    // Bias and activation share one epilogue generic with the up projection.
    Value hidden = lb.linear(
        lb.toF32(op.getInput()), lb.toF32(op.getUpWeight()),
        toF32OrNull(lb, op.getUpBias()),
        [&](OpBuilder &b, Location loc, Value v) {
          return applyActivation(b, loc, act, v);
        },
        TileAttr::lookup(op));
    Value y = lb.linear(hidden, lb.toF32(op.getDownWeight()),
                        toF32OrNull(lb, op.getDownBias()), nullptr,
                        TileAttr::lookup(op));
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

} // namespace

void mlir::attn::populateLinearToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LinearLowering, FfnLowering>(patterns.getContext());
}
