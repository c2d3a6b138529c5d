//===- DecomposeMha.cpp - attn.mha into projections and attn.sdpa ---------===//
//
// One rewrite of attn.mha, shared by attn-decompose-mha, attn-flash-attention
// (so that the attention inside attn.mha is blocked too) and
// attn-lower-to-linalg (which lowers the parts further).
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEMHA
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

static LogicalResult decomposeMha(RewriterBase &rewriter, MhaOp op) {
  auto xType = op.getQuery().getType();
  // Batch and sequence may be dynamic; the model width may not (the head
  // split needs it).
  if (xType.isDynamicDim(xType.getRank() - 1))
    return rewriter.notifyMatchFailure(op, "dynamic model width");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Type elt = xType.getElementType();
  Value x = op.getQuery();
  Value kvIn = op.getKeyValue() ? op.getKeyValue() : x;
  auto kvType = cast<RankedTensorType>(kvIn.getType());
  int64_t batch = xType.getDimSize(0), sq = xType.getDimSize(1),
          sk = kvType.getDimSize(1);
  int64_t heads = op.getNumHeads(), kvHeads = op.getKvHeads();
  int64_t dh = op.getEffectiveHeadDim();
  auto biases = op.getBiases();
  auto bias = [&](int i) { return biases.empty() ? Value() : biases[i]; };
  // attn-tile chose one configuration for all the parts (see attn-tile).
  TileAttr tile = TileAttr::lookup(op);

  // Run-time batch and sequence sizes (attributes where static, so that
  // static shapes build exactly the ops they always did).
  auto sizesOf = [&](Value v) {
    return tensor::getMixedSizes(rewriter, loc, v);
  };
  auto index = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  auto project = [&](Value in, int64_t seq, Value w, Value b, int64_t nHeads) {
    auto flatType = RankedTensorType::get({batch, seq, nHeads * dh}, elt);
    auto flat = LinearOp::create(rewriter, loc, flatType, in, w, b);
    if (tile)
      flat->setAttr(TileAttr::kAttrName, tile);
    auto splitType = RankedTensorType::get({batch, seq, nHeads, dh}, elt);
    SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
    Value split, init;
    if (splitType.hasStaticShape()) {
      split =
          tensor::ExpandShapeOp::create(rewriter, loc, splitType, flat, groups);
      init = tensor::EmptyOp::create(
          rewriter, loc, ArrayRef<int64_t>{batch, nHeads, seq, dh}, elt);
    } else {
      SmallVector<OpFoldResult> inSizes = sizesOf(in);
      split = tensor::ExpandShapeOp::create(
          rewriter, loc, splitType, flat, groups,
          ArrayRef<OpFoldResult>{inSizes[0], inSizes[1], index(nHeads),
                                 index(dh)});
      init = tensor::EmptyOp::create(
          rewriter, loc,
          ArrayRef<OpFoldResult>{inSizes[0], index(nHeads), inSizes[1],
                                 index(dh)},
          elt);
    }
    return linalg::TransposeOp::create(rewriter, loc, split, init,
                                       ArrayRef<int64_t>{0, 2, 1, 3})
        .getResult()[0];
  };
  Value q = project(x, sq, op.getQWeight(), bias(0), heads);
  Value k = project(kvIn, sk, op.getKWeight(), bias(1), kvHeads);
  Value v = project(kvIn, sk, op.getVWeight(), bias(2), kvHeads);
  auto attnType = RankedTensorType::get({batch, heads, sq, dh}, elt);
  auto attn = SdpaOp::create(
      rewriter, loc, attnType, q, k, v, op.getScoreBias(), op.getKvLengths(),
      /*query_positions=*/Value(), ValueRange{}, ScoreFunction::scaled_dot,
      op.getScaleAttr(), op.getCausal(), op.getWindowAttr());
  if (tile)
    attn->setAttr(TileAttr::kAttrName, tile);
  Value mergedInit;
  if (xType.hasStaticShape()) {
    mergedInit = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{batch, sq, heads, dh}, elt);
  } else {
    SmallVector<OpFoldResult> xSizes = sizesOf(x);
    mergedInit = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{xSizes[0], xSizes[1], index(heads), index(dh)},
        elt);
  }
  Value merged = linalg::TransposeOp::create(rewriter, loc, attn, mergedInit,
                                             ArrayRef<int64_t>{0, 2, 1, 3})
                     .getResult()[0];
  merged = tensor::CollapseShapeOp::create(
      rewriter, loc, merged, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  auto out =
      LinearOp::create(rewriter, loc, xType, merged, op.getOWeight(), bias(3));
  if (tile)
    out->setAttr(TileAttr::kAttrName, tile);
  rewriter.replaceOp(op, out.getResult());
  return success();
}

namespace {

/// attn.mha -> attn.linear projections, head split/merge reshapes and one
/// attn.sdpa.
struct MhaDecomposition : OpRewritePattern<MhaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MhaOp op,
                                PatternRewriter &rewriter) const override {
    return decomposeMha(rewriter, op);
  }
};

struct AttnDecomposeMhaPass
    : public mlir::attn::impl::AttnDecomposeMhaBase<AttnDecomposeMhaPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeMhaPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateDecomposeMhaPatterns(RewritePatternSet &patterns) {
  patterns.add<MhaDecomposition>(patterns.getContext());
}
