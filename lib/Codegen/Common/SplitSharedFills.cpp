//===- SplitSharedFills.cpp - one tensor fill per consumer ----------------===//
//
// Undoes CSE's merging of identical accumulator fills before bufferization,
// so that every contraction's zero fill stays next to it (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "attnc/Support/PatternDriver.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSPLITSHAREDFILLS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
/// A tensor fill with several consumers in its block: every consumer after
/// the first gets a clone of the fill (and of its empty init) right before
/// it.
struct SplitSharedFill : public OpRewritePattern<linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::FillOp fill,
                                PatternRewriter &rewriter) const override {
    if (!fill.hasPureTensorSemantics())
      return failure();
    Value filled = fill.getResult(0);
    // Consumers in the fill's block, in program order; each consumer is
    // counted once even when it reads the fill through several operands.
    SmallVector<Operation *> consumers;
    for (Operation *user : filled.getUsers()) {
      if (user->getBlock() == fill->getBlock() &&
          !llvm::is_contained(consumers, user))
        consumers.push_back(user);
    }
    if (consumers.size() < 2)
      return failure();
    llvm::sort(consumers, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    for (Operation *consumer : llvm::drop_begin(consumers)) {
      rewriter.setInsertionPoint(consumer);
      IRMapping map;
      if (empty)
        map.map(empty.getResult(), rewriter.clone(*empty)->getResult(0));
      Operation *clone = rewriter.clone(*fill, map);
      rewriter.modifyOpInPlace(consumer, [&] {
        consumer->replaceUsesOfWith(filled, clone->getResult(0));
      });
    }
    return success();
  }
};

struct AttnSplitSharedFillsPass
    : public mlir::attn::impl::AttnSplitSharedFillsBase<
          AttnSplitSharedFillsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitSharedFill>(&getContext());
    // Only the fills themselves change: no folding of anything else.
    if (failed(attn::applyOwnPatterns(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
