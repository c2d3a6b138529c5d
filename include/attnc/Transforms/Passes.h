//===- Passes.h - attnc transformation passes -------------------*- C++ -*-===//

#ifndef ATTNC_TRANSFORMS_PASSES_H
#define ATTNC_TRANSFORMS_PASSES_H

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attnc/Transforms/Passes.h.inc"

/// attn.mha -> attn.linear projections, head split/merge reshapes and one
/// attn.sdpa (what attn-decompose-mha applies).
void populateDecomposeMhaPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "attnc/Transforms/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_PASSES_H
