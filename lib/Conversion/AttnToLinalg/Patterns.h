//===- Patterns.h - the lowering's patterns by op family --------*- C++ -*-===//
//
// Private to lib/Conversion/AttnToLinalg: each op family's patterns live in
// their own file and are collected by populateAttnToLinalgPatterns.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOLINALG_PATTERNS_H
#define ATTNC_LIB_CONVERSION_ATTNTOLINALG_PATTERNS_H

#include "attnc/Conversion/LinalgBuilder.h"

namespace mlir::attn {

/// Lowers an op by computing its result in f32 and rounding it once to the
/// result's element type, as every attn op lowers.
template <typename OpTy>
using F32LoweringFn = FailureOr<Value> (*)(OpTy op, LinalgBuilder &lb,
                                           PatternRewriter &rewriter);

/// The pattern that applies an F32LoweringFn at the op.
template <typename OpTy> struct F32Lowering final : OpRewritePattern<OpTy> {
  F32Lowering(MLIRContext *ctx, F32LoweringFn<OpTy> lower)
      : OpRewritePattern<OpTy>(ctx), lower(lower) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    FailureOr<Value> result = lower(op, lb, rewriter);
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, lb.fromF32(*result, op.getType().getElementType()));
    return success();
  }

  F32LoweringFn<OpTy> lower;
};

template <typename OpTy>
void addF32Lowering(RewritePatternSet &patterns, F32LoweringFn<OpTy> lower) {
  patterns.add<F32Lowering<OpTy>>(patterns.getContext(), lower);
}

/// The activation functions, on f32 scalars (pointwise ops, FFN epilogues).
Value applyActivation(OpBuilder &b, Location loc, Activation act, Value x);

/// attn.relu, attn.gelu, attn.silu, attn.add, attn.softmax.
void populatePointwiseToLinalgPatterns(RewritePatternSet &patterns);
/// attn.layer_norm, attn.rms_norm.
void populateNormsToLinalgPatterns(RewritePatternSet &patterns);
/// attn.linear, attn.ffn.
void populateLinearToLinalgPatterns(RewritePatternSet &patterns);
/// attn.embedding, attn.sinusoidal_pos, attn.learned_pos, attn.rotary.
void populateEmbeddingsToLinalgPatterns(RewritePatternSet &patterns);
/// attn.sdpa.
void populateAttentionToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_ATTNTOLINALG_PATTERNS_H
