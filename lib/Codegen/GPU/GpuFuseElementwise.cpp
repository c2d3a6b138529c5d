//===- GpuFuseElementwise.cpp - one kernel per elementwise chain ----------===//
//
// On CUDA every top-level generic becomes a kernel, so an f16 residual add
// (widen, widen, add, narrow) costs four launches; fused it is one. See
// Passes.td for what is left alone and why.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/GPU/Passes.h"

#include "attnc/Support/PatternDriver.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUFUSEELEMENTWISE
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// An elementwise generic at the top level of a function.
static bool isTopLevelElementwise(linalg::GenericOp op) {
  return op && isa<func::FuncOp>(op->getParentOp()) &&
         op.getNumLoops() == op.getNumParallelLoops();
}

/// Whether `op` reads the result of a contraction (possibly reshaped): it
/// is a matmul epilogue that the kernel passes fold into the matmul.
static bool readsContraction(linalg::GenericOp op) {
  for (Value input : op.getDpsInputs()) {
    while (Operation *def = input.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
        break;
      input = def->getOperand(0);
    }
    auto producer = input.getDefiningOp<linalg::GenericOp>();
    if (producer && producer.getNumReductionLoops() != 0)
      return true;
  }
  return false;
}

/// Whether a result of `op` feeds a contraction (possibly reshaped): `op`
/// then widens a matmul operand, which the kernel passes trace to the
/// narrow buffer it reads.
static bool feedsContraction(linalg::GenericOp op) {
  SmallVector<Value> worklist(op->getResults());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
        worklist.append(user->result_begin(), user->result_end());
      else if (auto generic = dyn_cast<linalg::GenericOp>(user);
               generic && generic.getNumReductionLoops() != 0)
        return true;
    }
  }
  return false;
}

/// Fuses a producer into an elementwise consumer where both are taken (see
/// Passes.td). Written out rather than linalg's pattern set, which also
/// rewrites the outs of every generic (the flash loops' too) and folds
/// fills into generics.
struct FuseElementwiseChain : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!isTopLevelElementwise(consumer) || readsContraction(consumer) ||
        feedsContraction(consumer))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      if (!isTopLevelElementwise(producer) || readsContraction(producer) ||
          !linalg::areElementwiseOpsFusable(&operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      // The producer stays for its other users (which may come before the
      // consumer): it is computed twice rather than moved.
      rewriter.replaceOp(consumer, fused->fusedOp->getResults().take_back(
                                       consumer->getNumResults()));
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

struct AttnGpuFuseElementwisePass
    : public mlir::attn::impl::AttnGpuFuseElementwiseBase<
          AttnGpuFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseElementwiseChain>(&getContext());
    // Nothing else changes: the loops of the flash kernels stay as
    // attn-flash-attention made them.
    if (failed(attn::applyOwnPatterns(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
