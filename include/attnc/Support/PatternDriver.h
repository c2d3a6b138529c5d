//===- PatternDriver.h - applying only a pass's own patterns ----*- C++ -*-===//
//
// Several passes rewrite a few ops and must leave everything else as it is
// (later passes match the unfolded forms; the canonicalizer cleans up once,
// later in the pipeline). They share one greedy driver configuration.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_PATTERNDRIVER_H
#define ATTNC_SUPPORT_PATTERNDRIVER_H

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {

/// Applies `patterns` greedily to `op` without folding and without
/// deduplicating constants, so that only what the patterns rewrite changes.
inline LogicalResult
applyOwnPatterns(Operation *op, RewritePatternSet &&patterns,
                 GreedySimplifyRegionLevel simplifyRegions =
                     GreedySimplifyRegionLevel::Aggressive) {
  GreedyRewriteConfig config;
  config.enableFolding(false).enableConstantCSE(false);
  config.setRegionSimplificationLevel(simplifyRegions);
  return applyPatternsGreedily(op, std::move(patterns), config);
}

} // namespace mlir::attn

#endif // ATTNC_SUPPORT_PATTERNDRIVER_H
