//===- InitAttnc.h - register every dialect and pass attnc tools use -*- C++
//-*-===//
//
// One registration point shared by attn-opt and attn-compile, so that the
// tools stay thin and agree on what they accept.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_INITATTNC_H
#define ATTNC_INITATTNC_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace attnc {

/// Adds the attn dialect plus every upstream dialect and extension.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers the attn passes and pipelines plus every upstream pass.
void registerAllPasses();

} // namespace attnc

#endif // ATTNC_INITATTNC_H
