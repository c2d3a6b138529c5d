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
};

struct Manifest {
  int version = 0;
  Target target = Target::CPU;
  /// All records in manifest (= buffer) order.
  std::vector<ManifestEntry> entries;
  /// Indices into entries, per kind, in manifest order.
  std::vector<int> weights, inputs, outputs;
};

/// Parses manifest text. Errors look like "manifest line 3: unknown dtype
/// 'f64' (expected f32, f16, bf16, i32 or i64)".
bool parseManifest(const char *text, Manifest &out, std::string &err);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_MANIFEST_H
