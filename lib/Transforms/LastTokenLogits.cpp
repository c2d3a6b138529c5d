//===- LastTokenLogits.cpp - LM head over each row's last token ---------===//
//
// A causal language model's entry returns logits [B, T, V], computed by the
// LM head (attn.linear) from the final hidden state [B, T, C]. Generation
// reads only each row's last column, so this pass moves the LM head after
// a slice of the hidden state at position T - 1: [B, 1, C] -> [B, 1, V].
// On GPT-2-small a prompt's LM head is about a third of its work (vocab
// 50257 against 12 layers at width 768); after the slice it is one
// column's.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLASTTOKENLOGITS
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// `hidden` [B, T, C] at position T - 1, as [B, 1, C].
Value lastPosition(OpBuilder &b, Location loc, Value hidden) {
  auto type = cast<RankedTensorType>(hidden.getType());
  SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(type.getDimSize(0)),
                                     b.getIndexAttr(1),
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  if (type.isDynamicDim(1)) {
    Value tokens = tensor::DimOp::create(b, loc, hidden, 1);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    offsets[1] = arith::SubIOp::create(b, loc, tokens, one).getResult();
  } else {
    offsets[1] = b.getIndexAttr(type.getDimSize(1) - 1);
  }
  auto sliced = RankedTensorType::get(
      {type.getDimSize(0), 1, type.getDimSize(2)}, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliced, hidden, offsets, sizes,
                                        strides);
}

/// Rewrites the logits results of `entry`; fails (with an error) where a
/// result is not an LM head this pass can slice.
LogicalResult sliceLogits(func::FuncOp entry) {
  auto ret = cast<func::ReturnOp>(entry.getBody().back().getTerminator());
  bool changed = false;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (entry.getResultAttr(i, AttnDialect::StateArgAttrHelper::getNameStr()) ||
        !type || type.getRank() != 3 || !isa<FloatType>(type.getElementType()))
      continue;
    // Already one column: a one-token step, or a module sliced before.
    if (type.getDimSize(1) == 1)
      continue;
    if (type.isDynamicDim(0) || type.isDynamicDim(2))
      return entry.emitOpError()
             << "result #" << i << " (logits " << type
             << "): attn-last-token-logits needs a static batch and vocab";
    auto head = value.getDefiningOp<LinearOp>();
    auto hiddenType =
        head ? dyn_cast<RankedTensorType>(head.getInput().getType()) : nullptr;
    if (!hiddenType || hiddenType.getRank() != 3)
      return entry.emitOpError()
             << "result #" << i
             << " (logits): attn-last-token-logits slices the hidden state "
                "before the LM head, but these logits are not an attn.linear "
                "of a [batch, tokens, hidden] tensor";
    OpBuilder b(head);
    Value last = lastPosition(b, head.getLoc(), head.getInput());
    auto logitsType = RankedTensorType::get(
        {type.getDimSize(0), 1, type.getDimSize(2)}, type.getElementType());
    Value logits = LinearOp::create(b, head.getLoc(), logitsType, last,
                                    head.getWeight(), head.getBias());
    ret.setOperand(i, logits);
    if (head->use_empty())
      head->erase();
    changed = true;
  }
  if (changed)
    entry.setFunctionType(FunctionType::get(
        entry.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
  return success();
}

struct AttnLastTokenLogitsPass
    : public attn::impl::AttnLastTokenLogitsBase<AttnLastTokenLogitsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!AttnDialect::CausalLmAttrHelper(&getContext()).isAttrPresent(module)) {
      module.emitError("attn-last-token-logits: the module is not a causal "
                       "language model (no attn.causal_lm): its outputs are "
                       "not logits that generation reads per row");
      return signalPassFailure();
    }
    for (auto entry : module.getOps<func::FuncOp>())
      if (entry.isPublic() && !entry.isExternal() && failed(sliceLogits(entry)))
        return signalPassFailure();
  }
};

} // namespace
