//===- Patterns.h - the lowering's patterns by op family --------*- C++ -*-===//
//
// Private to lib/Conversion/AttnToLinalg: each op family's patterns live in
// their own file and are collected by populateAttnToLinalgPatterns.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOLINALG_PATTERNS_H
#define ATTNC_LIB_CONVERSION_ATTNTOLINALG_PATTERNS_H

#include "Conversion/AttnToLinalg/LinalgBuilder.h"

namespace mlir::attn {

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
