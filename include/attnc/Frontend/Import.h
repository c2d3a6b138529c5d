//===- Import.h - one entry from a model file to attn IR --------*- C++ -*-===//
//
// What attn-import and attn-compile do with the model a user names: tell its
// kind (an ONNX file, a Hugging Face checkpoint directory, or attn IR), check
// the import options against it, import it, raise an imported graph, and
// bind a decoder's KV cache. Both tools call importModel, so a model comes in
// the same way whichever tool reads it.
//
// The weights an ONNX import writes beside its output are marked as attnc's
// in their safetensors metadata; a file at that path that attnc did not
// write is never replaced without --force (checkSideFileReplaceable).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_FRONTEND_IMPORT_H
#define ATTNC_FRONTEND_IMPORT_H

#include "attnc/Frontend/ONNX/ONNXImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
class SourceMgr;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace attnc {

/// What a model file holds.
enum class ModelKind {
  /// attn IR (text or bytecode).
  AttnIR,
  /// An ONNX protobuf (`.onnx`).
  ONNX,
  /// A Hugging Face checkpoint directory (config.json + safetensors).
  Checkpoint,
};

/// The kind of the model at `path`: a `.onnx` path is an ONNX model, another
/// directory a checkpoint, anything else attn IR.
ModelKind getModelKind(llvm::StringRef path);

/// How raising runs on an imported ONNX graph.
enum class RaiseMode {
  /// The graph as imported (attn-compile --no-raise, plain attn-import).
  None,
  /// Every raising pass (attn-raise).
  All,
  /// All but attention (attn-compile --no-raise-attention).
  AllButAttention,
};

struct ModelImportOptions {
  /// The model's kind, where the user named it (attn-import --hf); otherwise
  /// getModelKind's guess.
  std::optional<ModelKind> kind;
  /// `--input-shape name=AxB...` as given (ONNX and checkpoints).
  std::vector<std::string> inputShapes;
  /// `--kv-cache N`: decoders (checkpoints, ONNX exported with past
  /// key/values) become a step over a KV cache of N positions.
  int64_t kvCache = 0;
  RaiseMode raise = RaiseMode::None;
  /// The tool whose errors these are (`attn-compile: error: ...`).
  std::string toolName = "attnc";
  /// Where the ONNX importer says what it skipped (libonnx's checker on a
  /// model newer than it knows; -v), or null.
  llvm::raw_ostream *verbose = nullptr;
  /// Called before each long step ("importing x.onnx", "raising").
  std::function<void(const llvm::Twine &)> progress;
};

/// An imported model. `weights` holds an ONNX model's initializers, to be
/// written beside the output (writeSafeTensors); a checkpoint's IR binds the
/// checkpoint's own files, and attn IR names its weights.
struct ModelImport {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<onnx_frontend::WeightTensor> weights;
  ModelKind kind = ModelKind::AttnIR;
};

/// An error if `options` do not apply to a model of `kind` (--kv-cache on
/// attn IR, --input-shape on attn IR, --kv-cache with the raising off).
llvm::Error checkImportOptions(ModelKind kind,
                               const ModelImportOptions &options);

/// Reads, imports and (as `options` say) raises the model at `path`.
/// Failures have been reported when it returns failure: located diagnostics
/// through the context's handler (attn IR, checkpoints, passes; the caller
/// installs a SourceMgrDiagnosticHandler on `sourceMgr`) or an ONNX
/// importer's message on stderr.
mlir::FailureOr<ModelImport> importModel(llvm::StringRef path,
                                         mlir::MLIRContext &context,
                                         llvm::SourceMgr &sourceMgr,
                                         const ModelImportOptions &options);

/// The dialects every import may produce.
void registerImportDialects(mlir::DialectRegistry &registry);

/// Whether `path` may be replaced by a side file attnc writes (the weights
/// beside an import or an executable): it does not exist, or it is a
/// safetensors file attnc wrote (writeSafeTensors marks them), or `force`.
/// The error names the file and the way out.
llvm::Error checkSideFileReplaceable(llvm::StringRef path, bool force);

} // namespace attnc

#endif // ATTNC_FRONTEND_IMPORT_H
