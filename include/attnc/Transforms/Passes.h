//===- Passes.h - attnc transformation passes -------------------*- C++ -*-===//

#ifndef ATTNC_TRANSFORMS_PASSES_H
#define ATTNC_TRANSFORMS_PASSES_H

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Support/CodegenOptions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// attn-raise: the raising passes for imported graphs, in order (norms,
/// GELU, projections, attention, FFN, residual adds, CSE of the weight
/// views they create, then whole blocks as attn.layer). Without
/// `raiseAttention`, attention stays as imported (--no-raise-attention).
/// With `kvCacheLength` > 0 (and raiseAttention), the raised decoder is
/// bound to KV-cache state of that many positions (attn-bind-kv-cache).
void buildRaisePipeline(OpPassManager &pm, bool raiseAttention = true,
                        int64_t kvCacheLength = 0);

/// Registers attn-raise with the pass registry.
void registerRaisePipeline();

} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_PASSES_H
