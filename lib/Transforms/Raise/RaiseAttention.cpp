//===- RaiseAttention.cpp - raise unfused attention to attn.sdpa ----------===//
//
// The attn-raise-attention pass: its patterns rewrite attention written with
// primitive ops to attn.sdpa and simplify the attn.sdpa that result, one file
// each:
//
//   RaiseAttentionChain     softmax(scale(Q @ K^T) [+ M]) @ V on matmuls
//   RaiseImportedAttention  the same on [B, H, S, D] tensors as imported
//   FoldRepeatedKVHeads     grouped-query attention's repeated kv heads
//   RaiseCausalMaskedFill   transformers' LLaMA causal mask after a past
//
// This file also holds the matchers they share (AttentionPatterns.h).
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/RaiseAttention.h"

#include "AttentionPatterns.h"
#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEATTENTION
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

bool mlir::attn::raise::hasIdentityMaps(linalg::LinalgOp op) {
  return llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); });
}

std::optional<Scaled> mlir::attn::raise::matchBroadcastScale(Value v) {
  if (auto mul = raise::matchBinary<linalg::MulOp>(v))
    return matchScaleOperands(mul->first, mul->second, /*isDivision=*/false,
                              raise::getSplatValue);
  if (auto div = raise::matchBinary<linalg::DivOp>(v))
    return matchScaleOperands(div->first, div->second, /*isDivision=*/true,
                              raise::getSplatValue);
  return std::nullopt;
}

Value mlir::attn::raise::matchLastDimSoftmax(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return Value();
  int64_t last = type.getRank() - 1;
  if (auto softmax = value.getDefiningOp<linalg::SoftmaxOp>()) {
    if (!softmax.hasPureTensorSemantics() ||
        static_cast<int64_t>(softmax.getDimension()) != last ||
        softmax.getInput().getType() != type)
      return Value();
    return softmax.getInput();
  }
  if (auto softmax = value.getDefiningOp<attn::SoftmaxOp>()) {
    if (softmax.getNormalizedDim() != last)
      return Value();
    return softmax.getInput();
  }
  return Value();
}

Value mlir::attn::raise::stripLeadingBroadcast(Value mask) {
  Value v = raise::stripUnitReshapes(mask);
  auto broadcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast)
    return v;
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  if (!broadcast.hasPureTensorSemantics() ||
      llvm::any_of(broadcast.getDimensions(),
                   [&](int64_t d) { return d >= rank - 2; }))
    return {};
  return raise::stripUnitReshapes(broadcast.getInput());
}

namespace {

struct AttnRaiseAttentionPass
    : public attn::impl::AttnRaiseAttentionBase<AttnRaiseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseAttentionPatterns(patterns);
    // The driver erases the producers the chain leaves dead.
    if (failed(applyOwnPatterns(getOperation(), std::move(patterns),
                                GreedySimplifyRegionLevel::Disabled)))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateRaiseAttentionPatterns(RewritePatternSet &patterns) {
  populateRaiseAttentionChainPatterns(patterns);
  populateRaiseImportedAttentionPatterns(patterns);
  populateFoldRepeatedKVHeadsPatterns(patterns);
  populateRaiseCausalMaskedFillPatterns(patterns);
}
