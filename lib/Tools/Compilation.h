//===- Compilation.h - One run of attn-compile ------------------*- C++ -*-===//
//
// Private to lib/Tools. attnc::compile's phases are one class whose methods
// live in AttnCompile.cpp (options, import, lowering, output) and
// CompileWeights.cpp (the weights files that quantized builds write).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TOOLS_COMPILATION_H
#define ATTNC_LIB_TOOLS_COMPILATION_H

#include "attnc/Frontend/Import.h"
#include "attnc/Frontend/ONNX/ONNXImporter.h"
#include "attnc/Pipelines/Pipelines.h"
#include "attnc/Support/SafeFiles.h"
#include "attnc/Tools/AttnCompile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnc {
using llvm::function_ref;
using llvm::raw_ostream;
using llvm::SourceMgr;
using llvm::StringRef;
using llvm::Twine;

/// Progress lines on stderr, with elapsed time, unless -q.
class Progress {
public:
  explicit Progress(bool quiet) : quiet(quiet) {}
  void step(const Twine &what) {
    if (quiet)
      return;
    auto now = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(now - start).count();
    llvm::errs() << llvm::format("[attn-compile %6.2fs] ", secs) << what
                 << "\n";
  }

private:
  bool quiet;
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};

/// Reports `message` as attn-compile's error on stderr; returns failure.
mlir::LogicalResult fail(const Twine &message);

/// One run of attn-compile, in the phases attnc::compile runs: validate the
/// options, import the model, lower it, emit the output. Each phase reports
/// its own errors.
class Compilation {
public:
  explicit Compilation(const CompileOptions &options)
      : options(options), emit(options.emit), outputFile(options.outputPath),
        progress(options.quiet) {}

  /// Checks every option and every file the compile reads or writes before
  /// any work, and settles the pipeline's options.
  mlir::LogicalResult validateOptions();
  /// Reads the model (and writes the weights of an imported one beside the
  /// output).
  mlir::LogicalResult importModel();
  /// Runs LayerDrop, pruning and the target's pipeline up to --emit's stage.
  mlir::LogicalResult lower();
  /// Writes --emit's stage: text, an object, or a linked executable.
  mlir::LogicalResult emitOutput();

private:
  bool cuda() const { return options.target == Target::CUDA; }
  mlir::LogicalResult emitImported();
  /// Commits the output and the weights beside it, once all was written.
  mlir::LogicalResult commitOutputs(bool executable);
  mlir::LogicalResult writeText(function_ref<void(raw_ostream &)> print);

  const CompileOptions &options;
  StringRef emit;
  StringRef outputFile;
  Progress progress;

  // Settled by validateOptions.
  ModelKind inputKind = ModelKind::AttnIR;
  bool onnxInput = false;
  ModelImportOptions importOptions;
  /// Every file the compile reads; the outputs must be none of them.
  std::vector<std::string> inputs;
  std::optional<SafeOutputFile> output;
  bool search = false;
  PipelineOptions pipeline;

  // Made by importModel (the context outlives what refers to it).
  std::unique_ptr<mlir::MLIRContext> context;
  SourceMgr sourceMgr;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// An encoder-decoder's --kv-cache build: its @encoder, split off
  /// `module` (which keeps the decoder step @main) and lowered beside it
  /// with the entry symbols attn_encoder_*.
  mlir::OwningOpRef<mlir::ModuleOp> encoderModule;
  std::optional<SafeOutputFile> weightsOutput;
  /// With --quantize=int8: the imported weights, written after lowering
  /// together with the quantized forms the lowered model binds.
  std::vector<onnx_frontend::WeightTensor> pendingWeights;

  mlir::LogicalResult splitEncoder(StringRef layerDrop);
  /// Quantizes the weights that attn-cpu-quantize-int8 recorded and writes
  /// them with the imported ones.
  mlir::LogicalResult writeQuantizedWeights();
  /// Opens `weightsOutput` at `path`: refused when it is one of the inputs
  /// or a file that attnc did not write (without --force).
  mlir::LogicalResult prepareWeightsOutput(const Twine &path);
  /// With --quantize=int8-weights / int4-weights: writes the checkpoint's
  /// tensors that the model still binds and the grouped quantized forms
  /// that attn-cpu-quantize-weights recorded.
  mlir::LogicalResult writeWeightOnlyWeights();
  /// Prints `module` and, after a `// -----` line (as --split-input-file
  /// reads it), the encoder's.
  void printModules(raw_ostream &os, mlir::OpPrintingFlags flags = {});
};

} // namespace attnc

#endif // ATTNC_LIB_TOOLS_COMPILATION_H
