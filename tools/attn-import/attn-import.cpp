//===- attn-import.cpp - import a model into attn IR ----------------------===//
//
// attn-import model.onnx -o model.mlir [--input-shape name=1x128 ...]
// attn-import --hf DIR -o model.mlir --input-shape input_ids=1x128
//
// Writes the imported IR and the model's weights (every large float
// initializer under its ONNX name) as model.safetensors beside it. Both go
// to temporary files renamed into place only when everything succeeded, so
// an error leaves nothing behind.
//
//===----------------------------------------------------------------------===//

#include "attnc/Frontend/HF/HFImport.h"
#include "attnc/Frontend/ONNX/ONNXImporter.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace attnc::onnx_frontend;

static cl::OptionCategory category("attn-import options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Optional, cl::cat(category));
static cl::opt<std::string> hfDir(
    "hf",
    cl::desc("Import a Hugging Face checkpoint directory (config.json and "
             "model.safetensors or a shard index; BertModel, GPT2LMHeadModel, "
             "LlamaForCausalLM) instead of model.onnx. The IR binds the "
             "checkpoint's tensors by their names: no weights are written"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<std::string>
    outputFile("o", cl::desc("Output .mlir path (- for stdout)"),
               cl::value_desc("path"), cl::Required, cl::cat(category));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Fix a graph input's shape, e.g. --input-shape input_ids=1x128 "
             "(repeatable; `?` keeps a dimension symbolic, e.g. 1x?; "
             "unfixed ONNX symbolic dimensions stay dynamic)"),
    cl::value_desc("name=AxB..."), cl::cat(category));
static cl::opt<int64_t> kvCache(
    "kv-cache",
    cl::desc("Decoders (--hf, or model.onnx exported with past key/values): "
             "build a step over a KV cache of N positions (inputs input_ids "
             "[B, T] and positions [B]; the caches are model state); "
             "--input-shape input_ids=Bx? for a run-time T (prefill and "
             "decode), Bx1 for one token. For model.onnx the output is the "
             "raised model with its past inputs bound (attn-raise, "
             "attn-bind-kv-cache)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> weightsFile(
    "weights-out",
    cl::desc("Where to write the weights (default: the output path with the "
             "extension .safetensors; with -o -, none unless given)"),
    cl::value_desc("path"), cl::init(""), cl::cat(category));
static cl::opt<bool> noLocations(
    "no-locations",
    cl::desc("Do not print the node locations (loc(\"node\"(\"model.onnx\"))) "
             "that later errors point with"),
    cl::init(false), cl::cat(category));

static cl::opt<bool> verbose(
    "v",
    cl::desc("Notes on stderr about what the import did not check (e.g. "
             "libonnx's checker on a model newer than it)"),
    cl::init(false), cl::cat(category));

static int fail(const Twine &message) {
  WithColor::error(errs(), "attn-import") << message << "\n";
  return 1;
}

namespace {
/// A file written next to its final path and renamed into place on commit.
class PendingFile {
public:
  explicit PendingFile(std::string finalPath)
      : finalPath(std::move(finalPath)) {}
  ~PendingFile() {
    if (!tempPath.empty() && !committed)
      sys::fs::remove(tempPath);
  }
  Expected<std::string> create() {
    SmallString<256> model(finalPath);
    model += ".tmp-%%%%%%";
    int fd;
    SmallString<256> temp;
    if (std::error_code ec = sys::fs::createUniqueFile(model, fd, temp))
      return createStringError(ec, "cannot create a file next to " + finalPath +
                                       ": " + ec.message());
    sys::Process::SafelyCloseFileDescriptor(fd);
    tempPath = std::string(temp);
    return tempPath;
  }
  /// Creates the file and fills it with `print`.
  Error write(function_ref<void(raw_ostream &)> print) {
    Expected<std::string> temp = create();
    if (!temp)
      return temp.takeError();
    std::error_code ec;
    raw_fd_ostream os(*temp, ec);
    if (ec)
      return createStringError(ec,
                               "cannot write " + *temp + ": " + ec.message());
    print(os);
    os.close();
    if (os.has_error())
      return createStringError(inconvertibleErrorCode(),
                               "error writing " + finalPath);
    return Error::success();
  }
  Error commit() {
    if (std::error_code ec = sys::fs::rename(tempPath, finalPath))
      return createStringError(ec, "cannot write " + finalPath + ": " +
                                       ec.message());
    committed = true;
    return Error::success();
  }

private:
  std::string finalPath, tempPath;
  bool committed = false;
};
} // namespace

/// `attn-import --hf DIR`: the checkpoint's IR, which binds the checkpoint's
/// own tensors, so only the .mlir is written (renamed into place when
/// complete, like the ONNX path's outputs).
static int importHFCheckpoint() {
  if (!inputFile.empty())
    return fail("give either model.onnx or --hf DIR, not both");
  if (!weightsFile.empty())
    return fail("--weights-out is for model.onnx: a checkpoint's IR binds the "
                "checkpoint's own safetensors files");
  mlir::attn::hf::ImportOptions options;
  options.kvCache = kvCache;
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (!mlir::attn::hf::parseInputShape(spec, options, error))
      return fail(error);
  }
  mlir::MLIRContext context;
  // file:line:col: error: ..., quoting the config.json line.
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::attn::hf::importCheckpoint(hfDir, options, &context);
  if (!module)
    return 1;
  if (outputFile == "-") {
    module->print(outs());
    outs().flush();
    return 0;
  }
  PendingFile mlirOut(outputFile);
  if (Error err = mlirOut.write([&](raw_ostream &os) { module->print(os); }))
    return fail(toString(std::move(err)));
  if (Error err = mlirOut.commit())
    return fail(toString(std::move(err)));
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-import: import a model into attn IR.\n\n"
      "  attn-import model.onnx -o model.mlir --input-shape input_ids=1x128\n\n"
      "writes model.mlir and model.safetensors (the weights, by their ONNX\n"
      "initializer names); attn-compile model.mlir binds them at run time.\n\n"
      "  attn-import --hf DIR -o model.mlir --input-shape input_ids=1x128\n\n"
      "writes model.mlir for a Hugging Face checkpoint directory; it binds\n"
      "the checkpoint's tensors (--weights DIR/model.safetensors).\n");
  if (!hfDir.empty())
    return importHFCheckpoint();
  if (inputFile.empty())
    return fail("no input: give model.onnx or --hf DIR");
  if (kvCache < 0)
    return fail("--kv-cache must be a positive cache length");

  ImportOptions options;
  if (verbose)
    options.verbose = &errs();
  for (const std::string &spec : inputShapes)
    if (Error err = parseInputShape(spec, options))
      return fail(toString(std::move(err)));

  std::string weightsPath = weightsFile;
  if (weightsPath.empty() && outputFile != "-") {
    SmallString<256> p(outputFile.getValue());
    sys::path::replace_extension(p, "safetensors");
    weightsPath = std::string(p);
  }
  if (!weightsPath.empty() && weightsPath == outputFile)
    return fail("the weights path and the output path are the same file");

  mlir::DialectRegistry registry;
  registerONNXImportDialects(registry);
  mlir::MLIRContext context(registry);
  auto imported = importONNXModel(inputFile, context, options);
  if (!imported) {
    errs() << toString(imported.takeError()) << "\n";
    return 1;
  }
  // A decoder exported with past key/values: its pasts become KV-cache state,
  // which needs the raised attention.
  if (kvCache) {
    SourceMgr sourceMgr;
    mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
    mlir::PassManager pm(&context);
    mlir::attn::buildRaisePipeline(pm);
    pm.addPass(mlir::attn::createAttnBindKVCache(
        mlir::attn::AttnBindKVCacheOptions{kvCache}));
    // Rotary positions from bound position_ids start at `positions`.
    pm.addNestedPass<mlir::func::FuncOp>(
        mlir::attn::createAttnRaisePositions());
    if (failed(pm.run(*imported->module)))
      return 1;
  }

  mlir::OpPrintingFlags flags;
  if (!noLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);

  std::optional<PendingFile> weightsOut;
  if (!weightsPath.empty()) {
    weightsOut.emplace(weightsPath);
    auto temp = weightsOut->create();
    if (!temp)
      return fail(toString(temp.takeError()));
    if (Error err = writeSafeTensors(*temp, imported->weights))
      return fail(toString(std::move(err)));
  }
  if (outputFile == "-") {
    imported->module->print(outs(), flags);
    outs().flush();
  } else {
    PendingFile mlirOut(outputFile);
    if (Error err = mlirOut.write([&](raw_ostream &os) {
          imported->module->print(os, flags);
          os << "\n";
        }))
      return fail(toString(std::move(err)));
    // The weights first: if the model then cannot be renamed into place,
    // the weights are taken back, so an error leaves neither.
    bool weightsExisted = !weightsPath.empty() && sys::fs::exists(weightsPath);
    if (weightsOut)
      if (Error err = weightsOut->commit())
        return fail(toString(std::move(err)));
    if (Error err = mlirOut.commit()) {
      if (weightsOut && !weightsExisted)
        sys::fs::remove(weightsPath);
      return fail(toString(std::move(err)));
    }
    return 0;
  }
  if (weightsOut)
    if (Error err = weightsOut->commit())
      return fail(toString(std::move(err)));
  return 0;
}
