//===- AttnBase.td - attn dialect definition and enums -----*- tablegen -*-===//
//
// The attn dialect: transformer-level ops on builtin ranked tensors.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTN_ATTNBASE_TD
#define ATTNC_DIALECT_ATTN_ATTNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Transformer-level ops: attention, norms, feed-forward, layers";
  let description = [{
    The attn dialect describes transformer models at the level a model author
    thinks in: scaled dot-product and multi-head attention with generated
    masks, layer and RMS norms, feed-forward blocks, positional encodings and
    whole layers (`attn.layer`), over builtin ranked tensors of f32, f16 or
    bf16. Parameters are named `attn.weight` values bound at run time; they
    never appear as dense constants.
  }];
  let hasCanonicalizer = 0;
  // #attn.tile<...>, and the check of the discardable `attn.tile`.
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  // Discardable attributes the passes hand on to later passes, with typed
  // accessors (AttnDialect::EntryAttrHelper, ...):
  //   attn.entry           (module) the model entry, from attn-hoist-weights
  //   attn.fuse_rows       (linalg.generic) a norm step for attn-fuse-rows
  //   attn.original_index  (attn.layer) its checkpoint depth after pruning
  //   attn.id_bound        (function argument) embedding ids: the table's
  //                        row count, from attn-mark-token-id-inputs
  //   attn.position_bound  (function argument) run-time positions: one
  //                        past the largest valid (cache or position table
  //                        length), from attn-mark-token-id-inputs
  //   attn.state_arg       (entry function result) model state: the new
  //                        value of the argument of this index (KV caches)
  //   attn.dim_symbols     (function argument) a name per dimension ("" for
  //                        none): arguments' dynamic dimensions of one name
  //                        have one size in every run (ONNX dim_params;
  //                        the runtime checks them, see DynamicDims.cpp)
  //   attn.causal_lm       (module) a causal language model: every output
  //                        position depends only on input positions up to
  //                        it (set by the importers for decoders and
  //                        encoder-decoders; every attention in the module
  //                        must be causal, except where the queries, or the
  //                        keys and values, depend on encoder inputs only);
  //                        its logits outputs are marked `causal` in the
  //                        manifest
  //   attn.encoder_input   (function argument) an encoder-decoder's encoder
  //                        input: the outputs depend on all of it, and
  //                        causally on the other inputs (the decoder
  //                        stream); marked `encoder` in the manifest
  // (attn.recompute_past, about generation, is in GenerationAttrs.h.)
  let discardableAttrs = (ins
    "::mlir::FlatSymbolRefAttr":$entry,
    "::mlir::UnitAttr":$fuse_rows,
    "::mlir::IntegerAttr":$original_index,
    "::mlir::IntegerAttr":$id_bound,
    "::mlir::IntegerAttr":$position_bound,
    "::mlir::IntegerAttr":$state_arg,
    "::mlir::ArrayAttr":$dim_symbols,
    "::mlir::UnitAttr":$causal_lm,
    "::mlir::UnitAttr":$encoder_input
  );
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Attn_ScoreFunction : I32EnumAttr<"ScoreFunction",
    "how attention scores are computed from a query and a key", [
      I32EnumAttrCase<"dot", 0>,
      I32EnumAttrCase<"scaled_dot", 1>,
      I32EnumAttrCase<"general", 2>,
      I32EnumAttrCase<"additive", 3>,
      I32EnumAttrCase<"cosine", 4>,
      I32EnumAttrCase<"gaussian", 5>
    ]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_Activation : I32EnumAttr<"Activation",
    "pointwise activation function", [
      I32EnumAttrCase<"relu", 0>,
      I32EnumAttrCase<"gelu", 1>,
      I32EnumAttrCase<"gelu_tanh", 2>,
      I32EnumAttrCase<"silu", 3>
    ]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how GELU is evaluated", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>
    ]> {
  let cppNamespace = "::mlir::attn";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Attn_IndexTensor : RankedTensorOf<[I32, I64]>;

#endif // ATTNC_DIALECT_ATTN_ATTNBASE_TD
