//===- Checkpoint.h - config.json and safetensors headers -------*- C++ -*-===//
//
// A Hugging Face checkpoint directory as the importer sees it: the parsed
// config.json (with the line and column of each key, for diagnostics) and
// the tensor tables of its safetensors file(s), read by the runtime's
// safetensors and shard-index reader. Tensor data is never read.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_FRONTEND_HF_CHECKPOINT_H
#define ATTNC_LIB_FRONTEND_HF_CHECKPOINT_H

#include "attnc/Runtime/SafeTensors.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::hf {

class Checkpoint {
public:
  /// Reads `dir`/config.json and the safetensors header(s); emits an error
  /// and returns null on failure.
  static std::unique_ptr<Checkpoint> open(StringRef dir, MLIRContext *context);

  /// The location of `key` in config.json (its first occurrence as a quoted
  /// key), or config.json:1:1 when it is absent.
  Location keyLoc(StringRef key) const;
  Location configLoc() const;
  /// Starts the error for a boolean `key` set to a `value` the builder does
  /// not support: 'config.json key "`key`" is `value`; ' at the key, for the
  /// caller to say what is supported.
  InFlightDiagnostic flagError(StringRef key, bool value) const;

  /// Config values. A missing key or a value of the wrong kind is an error
  /// naming the key.
  FailureOr<int64_t> getInt(StringRef key) const;
  FailureOr<int64_t> getPositiveInt(StringRef key) const;
  /// `fallback` when the key is absent or null.
  FailureOr<int64_t> getPositiveInt(StringRef key, int64_t fallback) const;
  /// The required positive integers `keys`, in that order (for structured
  /// bindings); every missing or bad key is reported before failing.
  template <size_t N>
  FailureOr<std::array<int64_t, N>>
  getPositiveInts(const char *const (&keys)[N]) const {
    std::array<int64_t, N> values{};
    bool ok = true;
    for (size_t i = 0; i < N; ++i) {
      FailureOr<int64_t> v = getPositiveInt(keys[i]);
      ok &= succeeded(v);
      values[i] = succeeded(v) ? *v : 0;
    }
    if (!ok)
      return failure();
    return values;
  }
  FailureOr<double> getFloat(StringRef key) const;
  FailureOr<double> getFloat(StringRef key, double fallback) const;
  FailureOr<std::string> getString(StringRef key) const;
  FailureOr<std::string> getString(StringRef key, StringRef fallback) const;
  FailureOr<bool> getBool(StringRef key, bool fallback) const;
  /// The model class: the one entry of "architectures".
  FailureOr<std::string> getArchitecture() const;
  /// True when the key is present and not null.
  bool has(StringRef key) const;
  /// The raw value of `key` (null when absent), for nested objects and
  /// lists the typed getters do not read.
  const llvm::json::Value *getValue(StringRef key) const {
    return config.get(key);
  }

  /// The tensor `name`, or null.
  const attnrt::StTensor *findTensor(StringRef name) const;
  /// The location of the file that holds `name` (or the checkpoint's index
  /// or single file when no shard holds it).
  Location tensorLoc(StringRef name) const;
  /// The location of a file of the checkpoint as a whole.
  Location fileLoc(StringRef path) const;
  /// The index or the single safetensors file.
  Location weightsLoc() const { return fileLoc(weightsFile); }

  /// The element type of the checkpoint's floating-point tensors (they must
  /// all agree): f32, f16 or bf16.
  Type getElementType() const { return elementType; }

  MLIRContext *getContext() const { return context; }

private:
  Checkpoint(MLIRContext *context) : context(context) {}
  LogicalResult readConfig();
  LogicalResult readWeights();
  InFlightDiagnostic keyError(StringRef key) const;
  /// The value of `key`; an error when it is missing or null.
  FailureOr<const llvm::json::Value *> getRequired(StringRef key) const;
  /// The value of `key` through `convert`; an error that it "must be
  /// `what`" when that gives nothing.
  template <typename T>
  FailureOr<T> getConverted(
      StringRef key,
      llvm::function_ref<std::optional<T>(const llvm::json::Value &)> convert,
      StringRef what) const;

  MLIRContext *context;
  std::string dir, configPath, configText;
  /// The index (sharded) or the single safetensors file.
  std::string weightsFile;
  llvm::json::Object config;
  /// The file, or the shards of the index.
  attnrt::SafeTensorsWeights weights;
  Type elementType;
};

} // namespace mlir::attn::hf

#endif // ATTNC_LIB_FRONTEND_HF_CHECKPOINT_H
