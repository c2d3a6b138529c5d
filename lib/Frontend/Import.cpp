//===- Import.cpp - one entry from a model file to attn IR ----------------===//
//
// attn-import and attn-compile both come through here, so a model file is
// read, imported, raised and bound to a KV cache the same way by either.
//
//===----------------------------------------------------------------------===//

#include "attnc/Frontend/Import.h"

#include "attnc/Frontend/HF/HFImport.h"
#include "attnc/Frontend/ONNX/ONNXImporter.h"
#include "attnc/Support/BytecodeNesting.h"
#include "attnc/Support/SafeFiles.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

attnc::ModelKind attnc::getModelKind(StringRef path) {
  // By name first: a directory called x.onnx is refused as an ONNX file.
  if (path.ends_with(".onnx"))
    return ModelKind::ONNX;
  if (sys::fs::is_directory(path))
    return ModelKind::Checkpoint;
  return ModelKind::AttnIR;
}

Error attnc::checkImportOptions(ModelKind kind,
                                const ModelImportOptions &options) {
  if (options.kvCache < 0)
    return createStringError("--kv-cache must be a positive cache length");
  if (kind == ModelKind::AttnIR) {
    if (options.kvCache)
      return createStringError(
          "--kv-cache is for decoders given as model.onnx (exported with "
          "past key/values) or as a checkpoint directory");
    if (!options.inputShapes.empty())
      return createStringError("--input-shape is for model.onnx and "
                               "checkpoint directory inputs");
  }
  if (kind == ModelKind::ONNX && options.kvCache &&
      options.raise != RaiseMode::All)
    return createStringError("--kv-cache binds the raised attention; it "
                             "cannot be combined with --no-raise");
  return Error::success();
}

void attnc::registerImportDialects(mlir::DialectRegistry &registry) {
  onnx_frontend::registerONNXImportDialects(registry);
}

namespace {

using attnc::ModelImport;
using attnc::ModelImportOptions;

mlir::FailureOr<ModelImport> importONNX(StringRef path,
                                        mlir::MLIRContext &context,
                                        const ModelImportOptions &options) {
  // The loader opens the file itself (refusing a FIFO, device or
  // directory with a located message).
  attnc::onnx_frontend::ImportOptions importOptions;
  importOptions.verbose = options.verbose;
  for (const std::string &spec : options.inputShapes)
    if (Error err =
            attnc::onnx_frontend::parseInputShape(spec, importOptions)) {
      WithColor::error(errs(), options.toolName)
          << toString(std::move(err)) << "\n";
      return mlir::failure();
    }
  auto imported =
      attnc::onnx_frontend::importONNXModel(path, context, importOptions);
  if (!imported) {
    // Already "file:node: error: ..." in the importer's words.
    errs() << toString(imported.takeError()) << "\n";
    return mlir::failure();
  }
  ModelImport result;
  result.kind = attnc::ModelKind::ONNX;
  result.module = std::move(imported->module);
  result.weights = std::move(imported->weights);
  if (options.raise == attnc::RaiseMode::None)
    return result;
  // Raising is an optimization: the target pipelines compile the imported
  // form as it is too.
  if (options.progress)
    options.progress("raising");
  mlir::PassManager pm(&context);
  // A decoder with past key/values, or a stateless causal one: its past
  // inputs or its attention's keys and values become KV-cache state.
  mlir::attn::buildRaisePipeline(pm, /*raiseAttention=*/options.raise ==
                                         attnc::RaiseMode::All,
                                 options.kvCache);
  if (failed(pm.run(*result.module)))
    return mlir::failure();
  return result;
}

mlir::FailureOr<ModelImport>
importCheckpoint(StringRef dir, mlir::MLIRContext &context,
                 const ModelImportOptions &options) {
  mlir::attn::hf::ImportOptions importOptions;
  importOptions.kvCache = options.kvCache;
  for (const std::string &spec : options.inputShapes) {
    std::string error;
    if (!mlir::attn::hf::parseInputShape(spec, importOptions, error)) {
      WithColor::error(errs(), options.toolName) << error << "\n";
      return mlir::failure();
    }
  }
  ModelImport result;
  result.kind = attnc::ModelKind::Checkpoint;
  // The IR binds the checkpoint's own tensors: nothing is written beside it.
  result.module =
      mlir::attn::hf::importCheckpoint(dir, importOptions, &context);
  if (!result.module)
    return mlir::failure(); // The diagnostic handler printed a located error.
  return result;
}

mlir::FailureOr<ModelImport> parseAttnIR(StringRef path,
                                         mlir::MLIRContext &context,
                                         SourceMgr &sourceMgr,
                                         const ModelImportOptions &options) {
  auto file = attnc::readRegularFile(path, "input file");
  if (!file) {
    WithColor::error(errs(), options.toolName)
        << toString(file.takeError()) << "\n";
    return mlir::failure();
  }
  StringRef text = (*file)->getBuffer();
  if (auto at =
          attnc::findExcessiveMlirNesting(text, attnc::kMaxNestingDepth)) {
    // Without the source line: it may be megabytes long.
    errs() << path << ":" << attnc::lineColumn(text, *at)
           << ": error: nesting deeper than " << attnc::kMaxNestingDepth
           << " levels of (), [], {} or <>; attnc does not parse IR nested "
              "this deeply\n";
    return mlir::failure();
  }
  if (Error err = attnc::checkBytecodeNesting(
          (*file)->getMemBufferRef(), context.getDialectRegistry(),
          context.allowsUnregisteredDialects(), attnc::kMaxNestingDepth)) {
    WithColor::error(errs(), options.toolName)
        << toString(std::move(err)) << "\n";
    return mlir::failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  ModelImport result;
  result.kind = attnc::ModelKind::AttnIR;
  result.module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!result.module)
    return mlir::failure(); // The diagnostic handler printed a located error.
  return result;
}

} // namespace

mlir::FailureOr<ModelImport>
attnc::importModel(StringRef path, mlir::MLIRContext &context,
                   SourceMgr &sourceMgr, const ModelImportOptions &options) {
  ModelKind kind = options.kind ? *options.kind : getModelKind(path);
  if (Error err = checkImportOptions(kind, options)) {
    WithColor::error(errs(), options.toolName)
        << toString(std::move(err)) << "\n";
    return mlir::failure();
  }
  switch (kind) {
  case ModelKind::ONNX:
    if (options.progress)
      options.progress("importing " + path);
    return importONNX(path, context, options);
  case ModelKind::Checkpoint:
    if (options.progress)
      options.progress("importing checkpoint " + path);
    return importCheckpoint(path, context, options);
  case ModelKind::AttnIR:
    if (options.progress)
      options.progress("parsing " + path);
    return parseAttnIR(path, context, sourceMgr, options);
  }
  llvm_unreachable("unknown model kind");
}

bool attnc::outputTakesSideFiles(StringRef outputPath) {
  if (outputPath == "-")
    return false;
  sys::fs::file_status status;
  if (sys::fs::status(outputPath, status))
    return true; // Not there yet: a new regular file.
  return status.type() != sys::fs::file_type::character_file &&
         status.type() != sys::fs::file_type::fifo_file &&
         status.type() != sys::fs::file_type::block_file;
}

Error attnc::checkSideFileReplaceable(StringRef path, bool force) {
  sys::fs::file_status status;
  if (sys::fs::status(path, status) ||
      status.type() == sys::fs::file_type::file_not_found)
    return Error::success(); // Nothing there (or nothing we can see).
  if (force)
    return Error::success();
  auto refuse = [&] {
    return createStringError(
        path + " exists and was not written by attnc; it would be replaced "
               "by the model's weights. Choose another output path, move "
               "the file away, or pass --force to replace it");
  };
  if (status.type() != sys::fs::file_type::regular_file)
    return refuse();
  // A safetensors file begins with the 8-byte little-endian length of its
  // JSON header; attnc's own carry a metadata marker there.
  auto file = MemoryBuffer::getFileSlice(path, /*MapSize=*/8, /*Offset=*/0,
                                         /*IsVolatile=*/false);
  if (!file || (*file)->getBufferSize() != 8)
    return refuse();
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize =
        (headerSize << 8) | static_cast<uint8_t>((*file)->getBufferStart()[i]);
  // attnc's headers name its tensors: megabytes at most.
  if (headerSize == 0 || headerSize > (64u << 20) ||
      headerSize + 8 > status.getSize())
    return refuse();
  auto header = MemoryBuffer::getFileSlice(path, headerSize, /*Offset=*/8,
                                           /*IsVolatile=*/false);
  if (!header)
    return refuse();
  if (findExcessiveJsonNesting((*header)->getBuffer(), kMaxNestingDepth))
    return refuse();
  Expected<json::Value> parsed = json::parse((*header)->getBuffer());
  if (!parsed) {
    consumeError(parsed.takeError());
    return refuse();
  }
  const json::Object *root = parsed->getAsObject();
  const json::Object *metadata =
      root ? root->getObject("__metadata__") : nullptr;
  std::optional<StringRef> writer =
      metadata ? metadata->getString(onnx_frontend::kWrittenByKey)
               : std::nullopt;
  if (!writer || *writer != onnx_frontend::kWrittenByValue)
    return refuse();
  return Error::success();
}
