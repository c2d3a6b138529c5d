//===- ManifestSchema.h - the compiled-model manifest format ----*- C++ -*-===//
//
// The one definition of the manifest a compiled model carries in
// `attn_model_manifest`: its keywords, the dtype table and the writer. The
// compiler (attn-emit-model-entry, the layer search) writes manifests with
// writeManifest and libattnrt parses them (lib/Runtime/Manifest.cpp) with
// the same keywords, so the two sides cannot drift apart. Plain C++17 with
// no LLVM: libattnrt must not link LLVM.
//
// Manifest text, one record per line:
//
//   attnc-manifest 1
//   target cpu | target cuda
//   weight <name> <dtype> <dims>
//   weight <name> <dtype> <dims> concat <axis> <name1>,<name2>,...
//   weight <name> <dtype> <dims> gather <axis> <source_extent>
//          <start>:<length>,<start>:<length>,...      (all on one line)
//   weight <name> <dtype> <dims> [concat ... | gather ...] [transpose]
//          [panels [pairs]] [convert]
//   input <name> <dtype> <dims>
//   input <name> <dtype> <dims> ids <rows>
//   input <name> <dtype> <dims> positions <bound>
//   input <name> <dtype> <dims> [ids <rows>] encoder
//   output <name> <dtype> <dims>
//   output <name> <dtype> <dims> causal
//   output <name> <dtype> <dims> causal recompute_past <length>
//   state <name> <dtype> <dims>
//   input|output <name> <dtype> <dims> dims_from <from>,<from>,... [...]
//
// dtype is one of f32 f16 bf16 i32 i64 (the spelling of the MLIR element
// type); dims look like `1x128x768`, or `scalar` for rank 0; a `?` is a
// dynamic (run-time) size of an input or output (`1x?x768`). Blank lines and
// lines starting with '#' are ignored. The records are in buffer order:
// `attn_model_invoke(void **buffers)` takes one buffer per record.
//
// A plain weight is the safetensors tensor <name> with exactly that dtype and
// shape. A concat weight is the concatenation along <axis> of the tensors
// <name1>, <name2>, ... (<name> only names the buffer). A gather weight (for
// structurally pruned heads or neuron groups) takes the tensor <name>, whose
// shape is <dims> except <source_extent> along <axis>, and concatenates along
// <axis> the slices [start, start + length) in the listed order; lengths are
// positive, each slice lies within [0, source_extent), slices may overlap or
// repeat, and the lengths sum to dims[axis]. Input and output names are
// unique; a weight name may appear in several weight records (e.g. once plain
// and once gathered), each bound independently into its own buffer.
// A trailing `transpose` (2-D weights only) binds the transpose: <dims> is
// then the buffer's shape [d0, d1] and the tensor as assembled from the file
// (plain, concat or gather, whose axis and shapes refer to this tensor) has
// shape [d1, d0].
// A trailing `panels` (3-D weights only) binds column panels: <dims> is then
// the buffer's shape [P, K, W], and the 2-D tensor it lays out (the transpose
// with `transpose`; plain, concat or gather as above otherwise) has shape
// [K, P * W]; buffer[p, k, c] = tensor[k, p * W + c].
// `panels pairs` binds panels that hold pairs of consecutive k side by side
// in each column (AVX-512 BF16's dot-product operand layout): <dims> is then
// [P, K / 2, 2 * W] and buffer[p, j, 2 * c + t] = tensor[2 * j + t, p * W + c].
// A trailing `convert` (float weights only) lets the file hold the tensors in
// any float dtype (f32, f16, bf16): the runtime assembles them as stored and
// converts the result to <dtype> once, at bind time (round to nearest even).
// An `ids <rows>` input (i32 or i64) holds embedding ids: the runtime fails a
// run whose input has an element outside [0, rows), naming its batch (the
// row-major index over the leading dimensions), position (the index in the
// last one) and value, before any compiled code reads it. A `positions
// <bound>` input (i32 or i64, [batch]) holds run-time positions (a decode
// step's cache lengths), checked the same way against [0, bound); when the
// model's `ids` input is [batch, ?] (a step of a run-time token count T),
// against [0, bound - T].
// A `causal` output (float, [batch, seq, vocab]) holds a causal language
// model's logits: position t depends only on input positions <= t, so text
// can be generated with it (attnrt_session_*, `model generate`). The
// compiler writes it for modules marked `attn.causal_lm`. With
// `recompute_past <length>` (a positive token count; the compiler writes it
// for modules marked `attn.recompute_past`), generation follows
// transformers' Phi-3 `generate` with LongRoPE: when the sequence (the
// longest row) first grows from at most <length> tokens past it, the
// session drops the KV cache and recomputes every row's whole sequence so
// far in one run, so that all of it takes the rotation of the longer
// length.
// An `encoder` input (i32/i64 [batch, seq]) is an encoder-decoder's encoder
// input: its token ids (with `ids <rows>`) or their padding mask (1: a
// token, 0: padding; without). The logits depend on all of it and causally
// on the model's other id input (the decoder stream). Generation sets it
// once per prompt. A float `encoder` input (static, [batch, ...]) belongs to
// a decoder step whose program also links an encoder model (entry symbols
// `attn_encoder_manifest` and `attn_encoder_invoke`): generation runs the
// encoder once per prompt on the ids and mask and binds its output of the
// same name (e.g. a decoder layer's cross-attention keys) to the input.
// Dynamic sizes: an input or output whose dims hold a `?` carries
// `dims_from` (before any other trailing keyword) with one <from> per `?`,
// in order: `-` for a size the caller chooses (inputs only), or
// `<input>:<axis>` (the index among the inputs and a dimension of that
// input) for a size that equals a chosen one, which must be `-` there. The
// runtime takes an input of any size where it is `-`, checks the others and
// sizes the outputs from them; `attn_model_invoke` then receives, after the
// one buffer per record, a pointer to the run-time sizes of every `?` in
// record order (int64_t each). Weights and states are static.
// A `state` buffer (a decode step's KV cache) belongs to the model: the
// runtime allocates it zero-filled when the model opens, the compiled code
// reads and updates it in place on every run, and it persists between runs
// (attnrt_reset_state zeroes it again).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_RUNTIME_MANIFESTSCHEMA_H
#define ATTNC_RUNTIME_MANIFESTSCHEMA_H

#include "attnc/Runtime/attnrt.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnrt {

//===----------------------------------------------------------------------===//
// Keywords
//===----------------------------------------------------------------------===//

inline constexpr const char *kManifestMagic = "attnc-manifest";
inline constexpr int kManifestVersion = 1;
inline constexpr const char *kTargetKeyword = "target";
inline constexpr const char *kConcatKeyword = "concat";
inline constexpr const char *kGatherKeyword = "gather";
inline constexpr const char *kTransposeKeyword = "transpose";
inline constexpr const char *kPanelsKeyword = "panels";
inline constexpr const char *kPairsKeyword = "pairs";
inline constexpr const char *kConvertKeyword = "convert";
inline constexpr const char *kIdsKeyword = "ids";
inline constexpr const char *kCausalKeyword = "causal";
inline constexpr const char *kRecomputePastKeyword = "recompute_past";
inline constexpr const char *kEncoderKeyword = "encoder";
inline constexpr const char *kPositionsKeyword = "positions";
inline constexpr const char *kDimsFromKeyword = "dims_from";
/// A dynamic size in a record's dims (`?` in the text).
inline constexpr int64_t kDynamicDim = -1;
/// The dims of a rank-0 record.
inline constexpr const char *kScalarDims = "scalar";

enum class Target { CPU, CUDA };
/// Indexed by Target.
inline constexpr const char *kTargetNames[] = {"cpu", "cuda"};

/// The record kinds, in the order the compiler writes them.
enum class EntryKind { Weight, Input, Output, State };
/// Indexed by EntryKind.
inline constexpr const char *kEntryKindNames[] = {"weight", "input", "output",
                                                  "state"};

constexpr const char *targetName(Target t) {
  return kTargetNames[static_cast<size_t>(t)];
}
constexpr const char *entryKindName(EntryKind k) {
  return kEntryKindNames[static_cast<size_t>(k)];
}

/// The target spelled `name`, if any.
inline std::optional<Target> lookupTarget(std::string_view name) {
  for (size_t i = 0; i < std::size(kTargetNames); ++i)
    if (name == kTargetNames[i])
      return static_cast<Target>(i);
  return std::nullopt;
}
/// The record kind spelled `name`, if any.
inline std::optional<EntryKind> lookupEntryKind(std::string_view name) {
  for (size_t i = 0; i < std::size(kEntryKindNames); ++i)
    if (name == kEntryKindNames[i])
      return static_cast<EntryKind>(i);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Dtypes
//===----------------------------------------------------------------------===//

/// The element types a model's buffers may have; the values are those of the
/// C API's attnrt_dtype.
enum class DType {
  F32 = ATTNRT_F32,
  F16 = ATTNRT_F16,
  BF16 = ATTNRT_BF16,
  I32 = ATTNRT_I32,
  I64 = ATTNRT_I64,
};

/// Everything the runtime and the compiler need to know about a dtype, in
/// one place (manifest, .npy and safetensors spellings, element size).
struct DTypeInfo {
  DType dtype;
  /// The manifest spelling, which is also the MLIR element type's.
  const char *name;
  size_t bytes;
  /// The .npy descr; bfloat16 is not a numpy dtype, so bf16 travels as raw
  /// '<u2' bits.
  const char *npyDescr;
  const char *safetensorsName;
};

/// Indexed by DType.
inline constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", 4, "<f4", "F32"},
    {DType::F16, "f16", 2, "<f2", "F16"},
    {DType::BF16, "bf16", 2, "<u2", "BF16"},
    {DType::I32, "i32", 4, "<i4", "I32"},
    {DType::I64, "i64", 8, "<i8", "I64"},
};

constexpr bool dtypeTableIsIndexed() {
  for (size_t i = 0; i < std::size(kDTypes); ++i)
    if (static_cast<size_t>(kDTypes[i].dtype) != i)
      return false;
  return true;
}
static_assert(dtypeTableIsIndexed(), "kDTypes must be indexed by DType");

constexpr const DTypeInfo &dtypeInfo(DType t) {
  return kDTypes[static_cast<size_t>(t)];
}
/// "f32", "f16", "bf16", "i32", "i64".
constexpr const char *dtypeName(DType t) { return dtypeInfo(t).name; }
constexpr size_t dtypeSize(DType t) { return dtypeInfo(t).bytes; }
/// f32, f16 and bf16.
constexpr bool isFloatDType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

/// The dtype spelled `name` in a manifest (or as an MLIR element type).
inline const DTypeInfo *lookupDType(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (std::string_view(info.name) == name)
      return &info;
  return nullptr;
}

/// The dtype a safetensors header spells `name` ("F32", ...), if any.
inline const DTypeInfo *lookupSafetensorsDType(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (std::string_view(info.safetensorsName) == name)
      return &info;
  return nullptr;
}

/// "f32, f16, bf16, i32 or i64", for error messages.
inline std::string dtypeNameList() {
  std::string s;
  for (size_t i = 0; i < std::size(kDTypes); ++i) {
    if (i)
      s += i + 1 == std::size(kDTypes) ? " or " : ", ";
    s += kDTypes[i].name;
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

/// One `<start>:<length>` slice of a gather weight's source along its axis.
struct GatherRange {
  int64_t start = 0;
  int64_t length = 0;
  bool operator==(const GatherRange &o) const {
    return start == o.start && length == o.length;
  }
};

/// One manifest record, as written and as parsed.
struct ManifestRecord {
  EntryKind kind = EntryKind::Input;
  std::string name;
  DType dtype = DType::F32;
  /// The buffer's shape (for transposed weights: the transposed one).
  std::vector<int64_t> dims;
  /// For `concat <axis> a,b,...` weights: the axis and the parts (otherwise
  /// concatAxis is -1 and concatParts is empty).
  int concatAxis = -1;
  std::vector<std::string> concatParts;
  /// For `gather <axis> <source_extent> <start>:<length>,...` weights: the
  /// safetensors tensor `name` has `dims` except `gatherSourceExtent` along
  /// `gatherAxis`, and the buffer is the concatenation along that axis of
  /// the listed slices, in order (otherwise gatherAxis is -1 and
  /// gatherRanges is empty).
  int gatherAxis = -1;
  int64_t gatherSourceExtent = 0;
  std::vector<GatherRange> gatherRanges;
  /// For `... transpose` weights (2-D): `dims` is the buffer's shape and the
  /// tensor assembled from the file (plain, concat or gather, all described
  /// relative to it) has the reversed shape; the buffer is its transpose.
  bool transpose = false;
  /// For `... panels` weights (3-D): `dims` is the buffer's shape [P, K, W]
  /// and the 2-D tensor it lays out (after any transpose) is [K, P * W].
  bool panels = false;
  /// With `panels pairs`: `dims` is [P, K / 2, 2 * W], pairs of k
  /// interleaved per column.
  bool pairs = false;
  /// For `... convert` weights: the file's tensors may have any float dtype;
  /// the runtime converts to `dtype` at bind time.
  bool convert = false;
  /// For `input ... ids <rows>`: every element must lie in [0, rows)
  /// (otherwise -1).
  int64_t idBound = -1;
  /// For `output ... causal`: causal language-model logits.
  bool causal = false;
  /// For `output ... causal recompute_past <length>`: generation recomputes
  /// the whole sequence when it first grows past this many tokens
  /// (otherwise -1).
  int64_t recomputePast = -1;
  /// For `input ... encoder`: an encoder-decoder's encoder input (token
  /// ids or their mask, or an output of the linked encoder); the other id
  /// input is the decoder stream.
  bool encoder = false;
  /// For `input ... positions <bound>`: idBound bounds run-time positions
  /// (a decode step's cache length) rather than embedding ids.
  bool positions = false;
  /// For records with kDynamicDim sizes: per dynamic size, in order, the
  /// input (index among the inputs) and axis whose size it equals, or
  /// {-1, -1} for a size the caller chooses (inputs only).
  std::vector<std::pair<int, int>> dimsFrom;

  bool isDynamic() const {
    for (int64_t d : dims)
      if (d == kDynamicDim)
        return true;
    return false;
  }

  bool isConcat() const { return !concatParts.empty(); }
  bool isGather() const { return gatherAxis >= 0; }
};

/// "1x128x768", or "scalar" for rank 0.
inline std::string formatManifestDims(const std::vector<int64_t> &dims) {
  if (dims.empty())
    return kScalarDims;
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "x" : "") +
         (dims[i] == kDynamicDim ? std::string("?") : std::to_string(dims[i]));
  return s;
}

/// "-,0:1".
inline std::string
formatDimsFrom(const std::vector<std::pair<int, int>> &dimsFrom) {
  std::string s;
  for (size_t i = 0; i < dimsFrom.size(); ++i) {
    s += i ? "," : "";
    s += dimsFrom[i].first < 0 ? std::string("-")
                               : std::to_string(dimsFrom[i].first) + ":" +
                                     std::to_string(dimsFrom[i].second);
  }
  return s;
}

/// "0:256,512:256".
inline std::string formatGatherRanges(const std::vector<GatherRange> &ranges) {
  std::string s;
  for (size_t i = 0; i < ranges.size(); ++i)
    s += (i ? "," : "") + std::to_string(ranges[i].start) + ":" +
         std::to_string(ranges[i].length);
  return s;
}

/// The record's line, without the newline.
inline std::string formatManifestRecord(const ManifestRecord &r) {
  std::string s = entryKindName(r.kind);
  // Appends a space and `w`.
  auto word = [&s](const std::string &w) { s += " " + w; };
  word(r.name);
  word(dtypeName(r.dtype));
  word(formatManifestDims(r.dims));
  if (!r.dimsFrom.empty()) {
    word(kDimsFromKeyword);
    word(formatDimsFrom(r.dimsFrom));
  }
  if (r.isConcat()) {
    word(kConcatKeyword);
    word(std::to_string(r.concatAxis));
    std::string parts;
    for (size_t i = 0; i < r.concatParts.size(); ++i)
      parts += (i ? "," : "") + r.concatParts[i];
    word(parts);
  }
  if (r.isGather()) {
    word(kGatherKeyword);
    word(std::to_string(r.gatherAxis));
    word(std::to_string(r.gatherSourceExtent));
    word(formatGatherRanges(r.gatherRanges));
  }
  for (auto [set, keyword] :
       {std::pair{r.transpose, kTransposeKeyword},
        std::pair{r.panels, kPanelsKeyword}, std::pair{r.pairs, kPairsKeyword},
        std::pair{r.convert, kConvertKeyword}})
    if (set)
      word(keyword);
  if (r.idBound >= 0) {
    word(r.positions ? kPositionsKeyword : kIdsKeyword);
    word(std::to_string(r.idBound));
  }
  if (r.causal)
    word(kCausalKeyword);
  if (r.recomputePast >= 0) {
    word(kRecomputePastKeyword);
    word(std::to_string(r.recomputePast));
  }
  if (r.encoder)
    word(kEncoderKeyword);
  return s;
}

/// The complete manifest text (without a terminating NUL). Names must be
/// non-empty and free of whitespace; the writer does not check (the
/// compiler's attn-hoist-weights does).
inline std::string writeManifest(Target target,
                                 const std::vector<ManifestRecord> &records) {
  std::string s = kManifestMagic;
  s += " " + std::to_string(kManifestVersion) + "\n";
  s += kTargetKeyword;
  s += " ";
  s += targetName(target);
  s += "\n";
  for (const ManifestRecord &r : records)
    s += formatManifestRecord(r) + "\n";
  return s;
}

} // namespace attnrt

#endif // ATTNC_RUNTIME_MANIFESTSCHEMA_H
