//===- Passes.td - attnc conversion passes -----------------*- tablegen -*-===//

#ifndef ATTNC_CONVERSION_PASSES_TD
#define ATTNC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerToLinalg : Pass<"attn-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower attn ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every attn op except `attn.weight` into upstream ops on tensors:
    `attn.layer` bodies are inlined (or, with `inline-layers=false`, lowered
    in place, so that attn-outline-layers can compile each distinct body
    once), `attn.mha` becomes projections, head
    reshapes and `attn.sdpa`, and everything else becomes `linalg.generic`
    ops (contractions, reductions, pointwise maps). Masks are computed from
    loop indices inside the score computation, never materialized as
    `Sq x Sk` tensors. f16/bf16 ops compute in f32 and round the result.
    Batch and sequence dimensions may be dynamic (`?`): results are sized
    from the operands (tensor.dim), masks take Sk - Sq at run time, and a
    run-time sequence reads learned positions row by row (clamped to the
    table). A dynamic feature, head or head dimension, and a dynamic
    `attn.cache_write`, are errors at the op.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"inlineLayers", "inline-layers", "bool", "true",
           "Inline attn.layer bodies in place; false keeps the layers (their "
           "bodies lowered) for attn-outline-layers">,
    Option<"inlineStateLayers", "inline-state-layers", "bool", "false",
           "Inline the attn.layer ops that return more than their stream (a "
           "KV-cache step's layers, which also return their updated caches) "
           "even with inline-layers=false, so that the row fusion sees them "
           "in their function as it sees an inlined model">
  ];
}

#endif // ATTNC_CONVERSION_PASSES_TD
