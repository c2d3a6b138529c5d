//===- LayerSearch.h - LayerDrop search on calibration data -----*- C++ -*-===//

#ifndef ATTNC_TOOLS_LAYERSEARCH_H
#define ATTNC_TOOLS_LAYERSEARCH_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace attnc {

struct LayerSearchOptions {
  /// How many layers to keep.
  int64_t keep = 0;
  /// Calibration sets; each holds one .npy path per model input.
  std::vector<std::vector<std::string>> calibration;
  /// The safetensors file the model's weights come from.
  std::string weightsPath;
  /// Enumerate every k-subset up to this many; beyond, search greedily.
  double maxExhaustive = 200;
};

struct LayerSearchResult {
  std::vector<int64_t> kept; ///< 0-based depths, ascending.
  double relativeError = 0;  ///< of the chosen sub-network's outputs
  double cosine = 0;         ///< cosine similarity to the full outputs
  int evaluations = 0;       ///< forward passes per calibration set
  std::string method;        ///< the search space that was used
};

/// Picks the `keep` layers of `module`'s attn.layer stack whose sub-network
/// best reproduces the full model on the calibration inputs (JIT on the
/// host CPU). `module` is not modified.
llvm::Expected<LayerSearchResult>
searchLayersToKeep(mlir::ModuleOp module, const LayerSearchOptions &options,
                   llvm::function_ref<void(const llvm::Twine &)> progress);

} // namespace attnc

#endif // ATTNC_TOOLS_LAYERSEARCH_H
