//===- attn-import.cpp - import a model into attn IR ----------------------===//
//
// attn-import model.onnx -o model.mlir [--input-shape name=1x128 ...]
// attn-import --hf DIR -o model.mlir --input-shape input_ids=1x128
//
// Writes the imported IR and the model's weights (every large float
// initializer under its ONNX name) as model.safetensors beside it. Both go
// to temporary files renamed into place only when everything succeeded, so
// an error leaves nothing behind; neither replaces an input, and the weights
// replace no file that attnc did not write (unless --force).
//
//===----------------------------------------------------------------------===//

#include "attnc/Frontend/Import.h"
#include "attnc/Support/SafeFiles.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace attnc::onnx_frontend;

static cl::OptionCategory category("attn-import options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.onnx | checkpoint dir>"),
                                      cl::Optional, cl::cat(category));
static cl::opt<std::string> hfDir(
    "hf",
    cl::desc("Import a Hugging Face checkpoint directory (config.json and "
             "model.safetensors or a shard index) instead of model.onnx; the "
             "same as giving the directory as the input. The IR binds the "
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
    cl::desc("Decoders (--hf, or a causal model.onnx, exported with or "
             "without past key/values): build a step over a KV cache of N "
             "positions (inputs input_ids [B, T] and positions [B]; the "
             "caches are model state); --input-shape input_ids=Bx? for a "
             "run-time T (prefill and decode), Bx1 for one token. For "
             "model.onnx the output is the raised model bound to the caches "
             "(attn-raise with attn-bind-kv-cache: its past inputs, or a "
             "cache derived from each causal attention)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> weightsFile(
    "weights-out",
    cl::desc("Where to write the weights (default: the output path with the "
             "extension .safetensors; with -o -, none unless given)"),
    cl::value_desc("path"), cl::init(""), cl::cat(category));
static cl::opt<bool> force(
    "force",
    cl::desc("Replace the weights file (see --weights-out) even if attnc did "
             "not write it; without it such a file is never replaced"),
    cl::init(false), cl::cat(category));
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

/// The files a checkpoint directory holds that an output must not replace.
static std::vector<std::string> checkpointFiles(StringRef dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    files.push_back(it->path());
  return files;
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
      "  attn-import DIR -o model.mlir --input-shape input_ids=1x128\n\n"
      "writes model.mlir for a Hugging Face checkpoint directory; it binds\n"
      "the checkpoint's tensors (--weights DIR/model.safetensors).\n");
  if (!hfDir.empty() && !inputFile.empty())
    return fail("give either model.onnx or --hf DIR, not both");
  std::string input = hfDir.empty() ? inputFile.getValue() : hfDir.getValue();
  if (input.empty())
    return fail("no input: give model.onnx or a checkpoint directory");
  // --hf names the kind; the importer says what is wrong with the folder.
  attnc::ModelKind kind =
      hfDir.empty() ? attnc::getModelKind(input) : attnc::ModelKind::Checkpoint;
  if (kind == attnc::ModelKind::AttnIR)
    return fail(input + ": not an ONNX model (.onnx) or a checkpoint "
                        "directory; attn IR needs no import");
  if (kind == attnc::ModelKind::Checkpoint && !weightsFile.empty())
    return fail("--weights-out is for model.onnx: a checkpoint's IR binds the "
                "checkpoint's own safetensors files");

  attnc::ModelImportOptions options;
  options.toolName = "attn-import";
  options.kind = kind;
  if (verbose)
    options.verbose = &errs();
  options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  options.kvCache = kvCache;
  // A decoder bound to KV-cache state (its pasts, or caches derived from
  // its causal attention) needs the raised attention.
  options.raise = kvCache ? attnc::RaiseMode::All : attnc::RaiseMode::None;
  if (Error err = attnc::checkImportOptions(kind, options))
    return fail(toString(std::move(err)));

  // Neither output may replace what is read.
  std::vector<std::string> inputs = {input};
  if (kind == attnc::ModelKind::Checkpoint)
    llvm::append_range(inputs, checkpointFiles(input));
  std::string weightsPath = weightsFile;
  if (kind == attnc::ModelKind::ONNX && weightsPath.empty() &&
      attnc::outputTakesSideFiles(outputFile)) {
    SmallString<256> p(outputFile.getValue());
    sys::path::replace_extension(p, "safetensors");
    weightsPath = std::string(p);
  }
  if (!weightsPath.empty() && weightsPath == outputFile)
    return fail("the weights path and the output path are the same file");
  std::optional<attnc::SafeOutputFile> mlirOut, weightsOut;
  if (outputFile != "-") {
    auto prepared = attnc::SafeOutputFile::prepare(outputFile, inputs);
    if (!prepared)
      return fail(toString(prepared.takeError()));
    mlirOut.emplace(std::move(*prepared));
  }
  if (!weightsPath.empty()) {
    auto prepared = attnc::SafeOutputFile::prepare(weightsPath, inputs);
    if (!prepared)
      return fail(toString(prepared.takeError()));
    weightsOut.emplace(std::move(*prepared));
    // After the check against the inputs, which says more.
    if (Error err = attnc::checkSideFileReplaceable(weightsPath, force))
      return fail(toString(std::move(err)));
  }

  mlir::DialectRegistry registry;
  attnc::registerImportDialects(registry);
  mlir::MLIRContext context(registry);
  // file:line:col: error: ..., quoting the config.json line.
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::FailureOr<attnc::ModelImport> imported =
      attnc::importModel(input, context, sourceMgr, options);
  if (failed(imported))
    return 1; // Reported, located, by the importer.

  mlir::OpPrintingFlags flags;
  if (!noLocations && kind == attnc::ModelKind::ONNX)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  auto print = [&](raw_ostream &os) {
    imported->module->print(os, flags);
    if (kind == attnc::ModelKind::ONNX)
      os << "\n";
  };
  if (weightsOut)
    if (Error err = attnc::onnx_frontend::writeSafeTensors(
            weightsOut->tempPath(), imported->weights))
      return fail(toString(std::move(err)));
  if (!mlirOut) {
    print(outs());
    outs().flush();
  } else if (Error err = mlirOut->write(print)) {
    return fail(toString(std::move(err)));
  }
  // The weights first: a model whose weights could not be written is not
  // put in place.
  if (weightsOut)
    if (Error err = weightsOut->commit())
      return fail(toString(std::move(err)));
  if (mlirOut)
    if (Error err = mlirOut->commit())
      return fail(toString(std::move(err)));
  return 0;
}
