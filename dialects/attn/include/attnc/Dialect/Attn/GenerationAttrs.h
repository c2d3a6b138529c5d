//===- GenerationAttrs.h - module attributes about generation ---*- C++ -*-===//
//
// Discardable module attributes that tell the runtime how a causal language
// model generates, beside the ODS-declared ones of AttnBase.td:
//
//   attn.recompute_past  (module, positive integer) generation drops the KV
//                        cache and recomputes the whole sequence once, when
//                        the sequence first grows past this many tokens, as
//                        transformers' Phi-3 `generate` does (with LongRoPE
//                        the recomputed keys take the long factors). Set by
//                        the HF importer; attn-hoist-weights writes it on
//                        the causal logits (`causal recompute_past N` in the
//                        manifest); the attn dialect verifies it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTN_GENERATIONATTRS_H
#define ATTNC_DIALECT_ATTN_GENERATIONATTRS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::attn {

constexpr llvm::StringLiteral kRecomputePastAttrName = "attn.recompute_past";

} // namespace mlir::attn

#endif // ATTNC_DIALECT_ATTN_GENERATIONATTRS_H
