//===- Manifest.h - the model manifest on the compiler side -----*- C++ -*-===//
//
// From attn-hoist-weights on, a module carries its model interface as the
// structured attribute `attn.manifest`: an array with one dictionary per
// runtime buffer, in buffer order,
//
//   {kind = "weight", name = "w", type = tensor<8x4xf32>,
//    [concat_axis, concat_names,] [gather_axis, gather_extent, gather_ranges,]
//    [transpose] [panels]}
//   {kind = "input", name = "ids", type = tensor<1x128xi64>, [id_bound =
//   30522]}
//   {kind = "output", name = "y", type = tensor<1x?x64xf32>,
//    dims_from = array<i64: 0, 1>}
//
// where kind is weight, input or output, type is the buffer's tensor type
// and the optional fields are those of the attn.weight op the record binds.
// serializeManifest turns it into the text libattnrt parses, through the
// writer and keywords of attnc/Runtime/ManifestSchema.h, the one place the
// format is defined.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CODEGEN_COMMON_MANIFEST_H
#define ATTNC_CODEGEN_COMMON_MANIFEST_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Runtime/ManifestSchema.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <vector>

namespace mlir::attn {

/// The module attribute holding the model manifest.
constexpr llvm::StringLiteral kManifestAttrName = "attn.manifest";

/// Keys of a manifest record besides the attn.weight op's own attributes.
constexpr llvm::StringLiteral kManifestKindKey = "kind";
constexpr llvm::StringLiteral kManifestNameKey = "name";
constexpr llvm::StringLiteral kManifestTypeKey = "type";
/// Inputs holding embedding ids: the table's row count.
constexpr llvm::StringLiteral kManifestIdBoundKey = "id_bound";
/// Inputs holding run-time positions: one past the largest valid one.
constexpr llvm::StringLiteral kManifestPositionBoundKey = "position_bound";
/// Inputs and outputs with dynamic sizes: per dynamic dimension, the
/// (input index, axis) whose size it has, or (-1, -1) for an input size the
/// caller chooses (array<i64>, two values per dimension).
constexpr llvm::StringLiteral kManifestDimsFromKey = "dims_from";
/// Outputs holding causal language-model logits (a unit attribute).
constexpr llvm::StringLiteral kManifestCausalKey = "causal";
/// An encoder-decoder's encoder input (a unit attribute).
constexpr llvm::StringLiteral kManifestEncoderKey = "encoder";
/// Causal logits whose generation recomputes the whole sequence once past
/// this many tokens (an integer).
constexpr llvm::StringLiteral kManifestRecomputePastKey = "recompute_past";

/// The manifest dtype of an element type: f32, f16, bf16 and the signless
/// i32 and i64 (whose MLIR spellings are the manifest's).
std::optional<attnrt::DType> getManifestDType(Type elementType);

/// One record for a buffer of `type`; `weight` (for weight records) adds its
/// concat, gather and transpose attributes, `idBound` (for inputs of
/// embedding ids) the table's row count, `causal` (for outputs of causal
/// language models) the causal mark, `positionBound` (for inputs of
/// run-time positions) their bound, `dimsFrom` (for inputs and outputs with
/// dynamic sizes, one per dynamic dimension) where their sizes come from,
/// `encoder` (for an encoder-decoder's encoder input of token ids) the
/// encoder mark, `recomputePast` (for causal logits) the length past which
/// generation recomputes the sequence. Fails (without a diagnostic) when the
/// runtime cannot take the type: see getManifestDType; only inputs and outputs
/// may be dynamic.
FailureOr<DictionaryAttr>
buildManifestRecord(attnrt::EntryKind kind, StringRef name, Type type,
                    WeightOp weight = {}, IntegerAttr idBound = {},
                    bool causal = false, IntegerAttr positionBound = {},
                    ArrayRef<std::pair<int, int>> dimsFrom = {},
                    bool encoder = false, IntegerAttr recomputePast = {});

/// The records of the module's manifest, or an error on `module` when it has
/// none or a malformed one.
FailureOr<std::vector<attnrt::ManifestRecord>>
getManifestRecords(ModuleOp module);

/// The manifest text of `module` for `target`, as attn_model_manifest holds
/// it (without the terminating NUL).
FailureOr<std::string> serializeManifest(ModuleOp module,
                                         attnrt::Target target);

} // namespace mlir::attn

#endif // ATTNC_CODEGEN_COMMON_MANIFEST_H
