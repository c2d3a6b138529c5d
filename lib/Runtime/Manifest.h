//===- Manifest.h - compiled-model manifest ---------------------*- C++ -*-===//
//
// Parses the `attnc-manifest 1` text a compiled model carries. The format,
// its keywords and its writer are in attnc/Runtime/ManifestSchema.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_MANIFEST_H
#define ATTNC_LIB_RUNTIME_MANIFEST_H

#include "Support.h"

#include <string>
#include <vector>

namespace attnrt {

/// A parsed record with its derived sizes.
struct ManifestEntry : ManifestRecord {
  uint64_t numElements = 0;
  uint64_t bytes = 0;

  /// A weight bound straight from one same-shaped tensor of the file.
  bool isPlainWeight() const {
    return kind == EntryKind::Weight && !isConcat() && !isGather() &&
           !transpose && !panels;
  }
  /// The record of the 2-D tensor a `panels` weight lays out: this one
  /// without `panels`, its dims [P, K, W] as [K, P * W] (with `pairs`,
  /// [P, K / 2, 2 * W] as [K, P * W]).
  ManifestEntry unpaneled() const;
  /// The record describing the tensor as assembled from the file: this one
  /// without `panels` (see unpaneled) and `transpose`, its dims reversed
  /// when transposed.
  ManifestEntry untransposed() const;
  /// For gather weights: the shape the source tensor must have.
  std::vector<int64_t> gatherSourceDims() const;
  /// For gather weights: the ranges as written, e.g. "0:256,512:256".
  std::string gatherRangesText() const {
    return formatGatherRanges(gatherRanges);
  }
};

struct Manifest {
  int version = 0;
  Target target = Target::CPU;
  /// All records in manifest (= buffer) order.
  std::vector<ManifestEntry> entries;
  /// Indices into entries, per kind, in manifest order.
  std::vector<int> weights, inputs, outputs, states;
};

/// Parses manifest text. Input and output names are unique among all
/// records; a weight name may be repeated by other weight records (e.g. a
/// tensor bound whole and also gathered), each binding independently. Errors
/// look like "manifest line 3: unknown dtype
/// 'f64' (expected f32, f16, bf16, i32 or i64)".
bool parseManifest(const char *text, Manifest &out, std::string &err);

/// The manifest of an open model, and recording an error on it (returns 1),
/// for the parts of libattnrt built over the public API (Session.cpp).
const Manifest &modelManifest(attnrt_model *m);
/// The encoder linked beside a decoder step (null: none).
attnrt_model *modelEncoder(attnrt_model *m);
int failModel(attnrt_model *m, const std::string &msg);
/// Output `index` of context c's last successful run, read in place (the
/// host buffer attnrt_context_get_output copies from; valid until c runs
/// again); null with c's error set unless `bytes` is its size.
const void *contextOutputData(attnrt_context *c, int index, size_t bytes);
/// Runs context `one` (of a one-row KV-cache step, CPU) with its state
/// buffers taken from row `row` of context `many`'s (a step of the same
/// model compiled for more rows): each state is [rows, ...] row-major, so
/// the one row's part of every buffer is contiguous and has the shape of
/// `one`'s state. Only that row of `many`'s caches changes. 1 with
/// `error` on failure (the run's error is `one`'s context error).
int runOnStateRow(attnrt_context *one, attnrt_context *many, int64_t row,
                  std::string &error);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_MANIFEST_H
