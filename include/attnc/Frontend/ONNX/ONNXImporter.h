//===- ONNXImporter.h - ONNX graph -> attn IR -------------------*- C++ -*-===//
//
// Imports an ONNX model (protobuf, opsets 13-23, external data) as one
// `func.func @main`: graph inputs become the arguments (ONNX names kept as
// `attn.name`; symbolic dimensions that --input-shape does not fix stay
// dynamic), shape subgraphs are folded on the host (symbolically where
// dimensions are dynamic), large float initializers become
// `attn.weight "<initializer name>"` and everything else linalg / tensor /
// arith and the few attn primitives (relu, softmax, layer_norm, embedding)
// that raising builds on.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_FRONTEND_ONNX_ONNXIMPORTER_H
#define ATTNC_FRONTEND_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace attnc::onnx_frontend {

/// A float tensor bound at run time by name (written to safetensors).
struct WeightTensor {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  /// The values as little-endian f32 bytes (safetensors' F32 layout, and
  /// ONNX raw_data's, from which they are moved without a copy).
  std::string bytes;
  /// The safetensors dtype of `bytes`: F32 for initializers; attn-compile's
  /// --quantize=int8 adds I32 tensors (s8 weights, 4 per word).
  std::string dtype = "F32";
};

struct ImportOptions {
  /// Sizes for the graph inputs' symbolic (or unknown) dimensions, by input
  /// name; each entry gives the input's whole shape (ShapedType::kDynamic,
  /// `?` on the command line, leaves a dimension symbolic).
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Where notes go (-v): the checks skipped for a model newer than
  /// libonnx, for instance. None when null.
  llvm::raw_ostream *verbose = nullptr;
};

struct ImportedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<WeightTensor> weights;
};

/// Parses `--input-shape` values, `name=1x128` or `name=1x?` (repeatable).
llvm::Error parseInputShape(llvm::StringRef spec, ImportOptions &options);

/// Reads, checks and imports the model at `path`. Errors name the file and,
/// for a node, `path:<node name>` with the node's op type and the opset.
llvm::Expected<ImportedModel> importONNXModel(llvm::StringRef path,
                                              mlir::MLIRContext &context,
                                              const ImportOptions &options);

/// The entry of the safetensors `__metadata__` that marks a file attnc
/// wrote, so that a later import may replace it (and no file it did not
/// write; see checkSideFileReplaceable).
constexpr const char *kWrittenByKey = "written_by";
constexpr const char *kWrittenByValue = "attnc";

/// Writes `weights` as a safetensors file, marked as attnc's in its
/// metadata. The data starts 64-byte aligned; the tensors whose sizes are
/// multiples of 64 bytes come first, in the given order, so that their
/// data is aligned too (the runtime reads such weights in place), then the
/// rest in the given order.
llvm::Error writeSafeTensors(llvm::StringRef path,
                             llvm::ArrayRef<WeightTensor> weights);

/// The dialects the imported IR uses.
void registerONNXImportDialects(mlir::DialectRegistry &registry);

} // namespace attnc::onnx_frontend

#endif // ATTNC_FRONTEND_ONNX_ONNXIMPORTER_H
