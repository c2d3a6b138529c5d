//===- RaisePositions.cpp - raise learned position embeddings -------------===//
//
// Exporters add learned positions as a table lookup of Range(start, start +
// S) broadcast over the batch: `x + wpe[arange(S)]`, or after a past of P
// tokens `x + wpe[arange(P, P + S)]`. That is attn.learned_pos, with the
// start as run-time `positions` (one per sequence) where it is not 0; the
// KV-cache binding (attn-bind-kv-cache) then gives each sequence its own.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEPOSITIONS
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {

/// x + broadcast(embedding(range(start, start + S), table)) with x
/// [B, S, D] -> attn.learned_pos x, table [positions(splat start)].
struct RaiseLearnedPositions : OpRewritePattern<linalg::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::AddOp op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    auto ins = matchBinary<linalg::AddOp>(result);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!ins || !type || type.getRank() != 3 ||
        !isa<FloatType>(type.getElementType()) || type.isDynamicDim(2))
      return failure();
    for (auto [x, pos] : {*ins, std::make_pair(ins->second, ins->first)}) {
      if (x.getType() != type)
        continue;
      // The table rows, broadcast over the batch.
      Value rows = stripUnitReshapes(pos);
      if (auto broadcast = rows.getDefiningOp<linalg::BroadcastOp>()) {
        if (!broadcast.hasPureTensorSemantics() ||
            broadcast.getDimensions() != ArrayRef<int64_t>{0})
          continue;
        rows = stripUnitReshapes(broadcast.getInput());
      }
      auto lookup = rows.getDefiningOp<EmbeddingOp>();
      if (!lookup)
        continue;
      Value ids = stripUnitReshapes(lookup.getIds());
      auto idsType = cast<RankedTensorType>(ids.getType());
      std::optional<OpFoldResult> start = matchRangeStart(ids);
      if (!start || idsType.getRank() != 1 || !sameDim(ids, 0, x, 1) ||
          cast<RankedTensorType>(lookup.getTable().getType()).getDimSize(1) !=
              type.getDimSize(2))
        continue;
      Location loc = op.getLoc();
      Value positions;
      std::optional<int64_t> constant = getConstantIntValue(*start);
      if (!constant || *constant != 0) {
        // One start per sequence, all equal here.
        Type i64 = rewriter.getI64Type();
        Value s = constant ? arith::ConstantIntOp::create(rewriter, loc, i64,
                                                          *constant)
                                 .getResult()
                           : cast<Value>(*start);
        if (s.getType() != i64)
          s = arith::ExtSIOp::create(rewriter, loc, i64, s);
        SmallVector<OpFoldResult> batch = {
            tensor::getMixedSize(rewriter, loc, x, 0)};
        Value empty = tensor::EmptyOp::create(rewriter, loc, batch, i64);
        positions = linalg::FillOp::create(rewriter, loc, s, empty).result();
      }
      rewriter.replaceOpWithNewOp<LearnedPosOp>(op, x, lookup.getTable(),
                                                positions, /*offset=*/0);
      return success();
    }
    return failure();
  }
};

struct AttnRaisePositionsPass
    : raise::RaisingPass<AttnRaisePositionsPass,
                         attn::impl::AttnRaisePositionsBase,
                         RaiseLearnedPositions> {};

} // namespace
