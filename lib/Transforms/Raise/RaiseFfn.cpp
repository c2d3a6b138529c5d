//===- RaiseFfn.cpp - raise linear-activation-linear to attn.ffn ----------===//
//
// attn.linear (up) -> attn.relu / attn.gelu / attn.silu -> attn.linear
// (down) with single-use intermediates and the model width restored becomes
// one attn.ffn, the unit that structured pruning (FFN neuron groups) and the
// fused FFN lowering work on. Runs after attn-raise-linear and
// attn-raise-gelu.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatchers.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEFFN
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// The activation computed by `op` on its input, if attn.ffn has it.
static std::optional<Activation> getActivation(Operation *op) {
  if (isa<ReluOp>(op))
    return Activation::relu;
  if (isa<SiluOp>(op))
    return Activation::silu;
  if (auto gelu = dyn_cast<GeluOp>(op))
    return gelu.getApproximate() == GeluApproximation::tanh
               ? Activation::gelu_tanh
               : Activation::gelu;
  return std::nullopt;
}

namespace {

struct RaiseFfn : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp down,
                                PatternRewriter &rewriter) const override {
    Operation *act = down.getInput().getDefiningOp();
    if (!act || !act->hasOneUse() || act->getNumOperands() != 1)
      return rewriter.notifyMatchFailure(down, "input is not an activation");
    std::optional<Activation> activation = getActivation(act);
    auto up = act->getOperand(0).getDefiningOp<LinearOp>();
    if (!activation || !up || !up->hasOneUse())
      return rewriter.notifyMatchFailure(
          down, "input is not a single-use activation of a projection");
    if (up.getInput().getType() != down.getType())
      return rewriter.notifyMatchFailure(
          down, "the down projection does not restore the model width");
    rewriter.replaceOpWithNewOp<FfnOp>(
        down, down.getType(), up.getInput(), /*gate_weight=*/Value(),
        /*gate_bias=*/Value(), up.getWeight(), up.getBias(), down.getWeight(),
        down.getBias(), *activation);
    return success();
  }
};

struct AttnRaiseFfnPass
    : raise::RaisingPass<AttnRaiseFfnPass, attn::impl::AttnRaiseFfnBase,
                         RaiseFfn> {};

} // namespace
