//===- Passes.h - attnc conversion passes -----------------------*- C++ -*-===//
//
// attn -> upstream dialects on tensors (attn-lower-to-linalg).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_PASSES_H
#define ATTNC_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace attn {

#define GEN_PASS_DECL
#include "attnc/Conversion/Passes.h.inc"

/// Patterns lowering attn ops (all but attn.weight) to linalg on tensors.
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "attnc/Conversion/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTNC_CONVERSION_PASSES_H
