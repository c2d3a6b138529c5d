//===- Manifest.h - compiled-model manifest ---------------------*- C++ -*-===//
//
// Parses the `attnc-manifest 1` text a compiled model carries (see attnrt.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_MANIFEST_H
#define ATTNC_LIB_RUNTIME_MANIFEST_H

#include "Support.h"

#include <string>
#include <vector>

namespace attnrt {

enum class EntryKind { Weight, Input, Output };
enum class Target { CPU, CUDA };

const char *entryKindName(EntryKind k);

/// One `<start>:<length>` slice of a gather weight's source along its axis.
struct GatherRange {
  int64_t start = 0;
  int64_t length = 0;
  bool operator==(const GatherRange &o) const {
    return start == o.start && length == o.length;
  }
};

struct ManifestEntry {
  EntryKind kind = EntryKind::Input;
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  uint64_t numElements = 0;
  uint64_t bytes = 0;
  /// For `concat <axis> a,b,...` weights: the axis and the parts (otherwise
  /// concatAxis is -1 and parts is empty).
  int concatAxis = -1;
  std::vector<std::string> concatParts;
  /// For `gather <axis> <source_extent> <start>:<length>,...` weights: the
  /// safetensors tensor `name` has `dims` except `gatherSourceExtent` along
  /// `gatherAxis`, and the buffer is the concatenation along that axis of the
  /// listed slices, in order (otherwise gatherAxis is -1 and gatherRanges is
  /// empty). Validated at parse time: ranges lie within [0, extent), lengths
  /// are positive and sum to dims[gatherAxis]; ranges may overlap.
  int gatherAxis = -1;
  int64_t gatherSourceExtent = 0;
  std::vector<GatherRange> gatherRanges;

  /// For `... transpose` weights (2-D): `dims` is the buffer's shape and the
  /// tensor assembled from the file (plain, concat or gather, all described
  /// relative to it) has the reversed shape; the buffer is its transpose.
  bool transpose = false;

  bool isConcat() const { return !concatParts.empty(); }
  bool isGather() const { return gatherAxis >= 0; }
  /// A weight bound straight from one same-shaped tensor of the file.
  bool isPlainWeight() const {
    return kind == EntryKind::Weight && !isConcat() && !isGather() &&
           !transpose;
  }
  /// The record describing the tensor as assembled from the file: this one
  /// without `transpose`, its dims reversed when transposed.
  ManifestEntry untransposed() const;
  /// For gather weights: the shape the source tensor must have.
  std::vector<int64_t> gatherSourceDims() const;
  /// For gather weights: the ranges as written, e.g. "0:256,512:256".
  std::string gatherRangesText() const;
};

struct Manifest {
  int version = 0;
  Target target = Target::CPU;
  /// All records in manifest (= buffer) order.
  std::vector<ManifestEntry> entries;
  /// Indices into entries, per kind, in manifest order.
  std::vector<int> weights, inputs, outputs;
};

/// Parses manifest text. Input and output names are unique among all
/// records; a weight name may be repeated by other weight records (e.g. a
/// tensor bound whole and also gathered), each binding independently. Errors
/// look like "manifest line 3: unknown dtype
/// 'f64' (expected f32, f16, bf16, i32 or i64)".
bool parseManifest(const char *text, Manifest &out, std::string &err);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_MANIFEST_H
