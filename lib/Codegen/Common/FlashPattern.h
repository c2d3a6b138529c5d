//===- FlashPattern.h - what the flash-attention rewrites share -*- C++ -*-===//
//
// attn-flash-attention and attn-gpu-flash-attention both take dot-product
// attn.sdpa ops of static shape and block them by query and key blocks,
// which attn-tile's choice on the op overrides.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_COMMON_FLASHPATTERN_H
#define ATTNC_LIB_CODEGEN_COMMON_FLASHPATTERN_H

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"

#include <utility>

namespace mlir::attn {

struct FlashPatternBase : OpRewritePattern<SdpaOp> {
  FlashPatternBase(MLIRContext *ctx, int64_t blockQ, int64_t blockK,
                   bool allowDynamic = false)
      : OpRewritePattern<SdpaOp>(ctx), blockQ(blockQ), blockK(blockK),
        allowDynamic(allowDynamic) {}

  /// Only `op`s that score by a dot product (the other score functions need
  /// per-key state, norms or projections, and stay with the unfused
  /// lowering) and whose operands and result have static shapes (or, with
  /// allowDynamic, dynamic batch and sequence lengths only) and elements
  /// (an empty attention has no blocks) reach rewriteFlash.
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const final {
    ScoreFunction score = op.getScore();
    if (score != ScoreFunction::dot && score != ScoreFunction::scaled_dot)
      return rewriter.notifyMatchFailure(op, "not a dot-product score");
    ShapedType types[] = {op.getQuery().getType(), op.getKey().getType(),
                          op.getValue().getType(), op.getType()};
    // Dims 1 and 3 are heads and head dims; 0 and 2 batch and sequence.
    auto supported = [&](ShapedType t) {
      if (t.hasStaticShape())
        return true;
      return allowDynamic && !t.isDynamicDim(1) && !t.isDynamicDim(3);
    };
    if (!llvm::all_of(types, supported))
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    if (llvm::any_of(types, [](ShapedType t) {
          return t.hasStaticShape() && t.getNumElements() == 0;
        }))
      return rewriter.notifyMatchFailure(op, "empty tensors");
    return rewriteFlash(op, rewriter);
  }

  /// The flash lowering of a static dot-product `op`.
  virtual LogicalResult rewriteFlash(SdpaOp op,
                                     PatternRewriter &rewriter) const = 0;

  /// The query and key blocks asked for: attn-tile's choice on the op where
  /// it made one, the pass options otherwise.
  std::pair<int64_t, int64_t> requestedBlocks(SdpaOp op) const {
    int64_t bq = blockQ, bk = blockK;
    if (auto tile = TileAttr::lookup(op)) {
      bq = tile.getBlockQ().value_or(bq);
      bk = tile.getBlockK().value_or(bk);
    }
    return {bq, bk};
  }

  int64_t blockQ, blockK;
  /// Whether rewriteFlash takes dynamic batch and sequence lengths.
  bool allowDynamic;
};

/// Applies only `patterns` to `root`, without folding or region
/// simplification: cleaning up the rest of the module is the job of the
/// canonicalizer later in the pipeline.
inline LogicalResult applyFlashPatterns(Operation *root,
                                        RewritePatternSet &&patterns) {
  GreedyRewriteConfig config;
  config.enableFolding(false).setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
  return applyPatternsGreedily(root, std::move(patterns), config);
}

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_COMMON_FLASHPATTERN_H
