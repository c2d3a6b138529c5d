//===- RaiseAttention.h - raise unfused attention to attn.sdpa --*- C++ -*-===//
//
// Patterns recognising attention written with primitive ops (matmul,
// transpose, scale, additive mask, softmax, matmul) and rewriting it to one
// attn.sdpa. The pass attn-raise-attention applies them to a function.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_RAISEATTENTION_H
#define ATTNC_TRANSFORMS_RAISEATTENTION_H

namespace mlir {
class RewritePatternSet;

namespace attn {

/// Adds the patterns that rewrite `softmax(s * Q @ K^T [+ M]) @ V`, rooted at
/// the final linalg.matmul / linalg.batch_matmul, to attn.sdpa (score = dot).
/// The pattern erases the chain's intermediate ops it replaced; producers
/// that become dead (transposes, fills) are left to the driver.
void populateRaiseAttentionPatterns(RewritePatternSet &patterns);

} // namespace attn
} // namespace mlir

#endif // ATTNC_TRANSFORMS_RAISEATTENTION_H
