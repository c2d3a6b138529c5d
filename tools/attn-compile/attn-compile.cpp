//===- attn-compile.cpp - compile an attn model to a native binary --------===//
//
// attn-compile MODEL.mlir --target=cpu|cuda -o OUT
//
// Runs the same pipelines attn-opt registers (attn-to-cpu, attn-to-cuda),
// translates to LLVM IR, emits a host object and links it with libattnrt.
// --emit stops at a stage and writes that stage instead. Output is written
// to a temporary file and renamed at the end (copied into a device or FIFO,
// never renamed over one), so a failed compile never leaves a partial OUT
// behind; an output that is one of the inputs is refused before anything is
// read.
//
//===----------------------------------------------------------------------===//

#include "attnc/Frontend/HF/HFImport.h"
#include "attnc/Frontend/ONNX/ONNXImporter.h"
#include "attnc/InitAttnc.h"
#include "attnc/Pipelines/Pipelines.h"
#include "attnc/Support/SafeFiles.h"
#include "attnc/Target/LayerSearch.h"
#include "attnc/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory category("attn-compile options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.mlir | model.onnx | "
                                               "checkpoint directory>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output path"),
                                       cl::value_desc("path"), cl::Required,
                                       cl::cat(category));
static cl::opt<std::string>
    targetName("target", cl::desc("Target: cpu (the host) or cuda"),
               cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    chip("chip",
         cl::desc("CUDA architecture for --target=cuda: "
                  "sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a"),
         cl::init("sm_90a"), cl::cat(category));
static cl::opt<std::string> hostCpu("cpu",
                                    cl::desc("Host CPU to generate code for "
                                             "(default: this machine; help "
                                             "lists the known ones)"),
                                    cl::init("native"), cl::cat(category));
static cl::opt<std::string>
    hostCpuFeatures("cpu-features",
                    cl::desc("Host CPU features to enable or disable on top "
                             "of --cpu's, e.g. +avx2,-avx512f (help lists "
                             "them)"),
                    cl::init(""), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("Stop at a stage and write it: attn (an imported model "
                  "after raising), linalg (MLIR on tensors), llvm (LLVM "
                  "dialect), llvm-ir, ptx (cuda only), obj, exe"),
         cl::init("exe"), cl::cat(category));
static cl::opt<bool> shared("shared",
                            cl::desc("Write a shared library exporting the "
                                     "attnrt C API instead of an executable"),
                            cl::init(false), cl::cat(category));
static cl::opt<std::string> apiPrefix(
    "api-prefix",
    cl::desc("With --shared: also export the C API as NAME_attnrt_* (default: "
             "the output's file name without lib and extensions), so that one "
             "program can link several models"),
    cl::value_desc("NAME"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    layerDrop("layer-drop",
              cl::desc("Run attn-layer-drop first with these options, e.g. "
                       "--layer-drop='strategy=every-other rate=0.5'"),
              cl::init(""), cl::cat(category));
static cl::opt<std::string>
    pruneSpec("prune",
              cl::desc("Prune attention heads / FFN neuron groups as this JSON "
                       "spec says (attn-prune-structure spec-file)"),
              cl::value_desc("spec.json"), cl::init(""), cl::cat(category));
static cl::list<std::string> calibration(
    "calibration",
    cl::desc("With --layer-drop='strategy=search keep=k': one calibration set, "
             "a comma-separated .npy per model input (repeat for more sets)"),
    cl::cat(category));
static cl::opt<std::string>
    searchWeights("weights",
                  cl::desc("With strategy=search: the model's safetensors "
                           "weights, used to run the candidates"),
                  cl::init(""), cl::cat(category));
static cl::opt<std::string>
    runtimeDir("runtime-dir",
               cl::desc("Directory holding libattnrt.a (default: ../lib next "
                        "to attn-compile)"),
               cl::init(""), cl::cat(category));
static cl::opt<bool>
    noFlash("no-flash",
            cl::desc("Lower attention unfused (the whole Sq x Sk score "
                     "matrix) instead of with attn-flash-attention"),
            cl::init(false), cl::cat(category));
static cl::opt<bool>
    noTile("no-tile",
           cl::desc("Use the tiling passes' default tile sizes instead of "
                    "choosing them per op for the target (attn-tile)"),
           cl::init(false), cl::cat(category));
static cl::opt<bool>
    noRaiseAttention("no-raise-attention",
                     cl::desc("Do not raise unfused attention chains "
                              "to attn.sdpa"),
                     cl::init(false), cl::cat(category));
static cl::opt<bool> noPackQKV("no-pack-qkv",
                               cl::desc("Do not pack projections of one input "
                                        "(Q, K, V) into one matmul"),
                               cl::init(false), cl::cat(category));
static cl::opt<bool> noFuseRows("no-fuse-rows",
                                cl::desc("Do not fuse residual add + norm into "
                                         "one row loop"),
                                cl::init(false), cl::cat(category));
static cl::opt<bool> noMatmulKernels(
    "no-matmul-kernels",
    cl::desc("Plain loops instead of the register-tiled (CPU) / tensor-core "
             "(CUDA) matmul kernels with fused epilogues"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noAttentionKernels(
    "no-attention-kernels",
    cl::desc("CPU: plain loops instead of the outer-product vector kernels "
             "for the flash attention block contractions"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noTransposeWeights(
    "no-transpose-weights",
    cl::desc("CPU: bind projection weights as stored ([out, in]) for the "
             "dot-product matmul kernels instead of transposed at bind time "
             "for the outer-product ones"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noVectorizeRows(
    "no-vectorize-rows",
    cl::desc("CPU: leave elementwise and row-reduction loops (softmax, "
             "epilogues) to LLVM's vectorizers"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noApproximateMath(
    "no-approximate-math",
    cl::desc("CPU: libm exp/erf/tanh instead of vectorizable polynomial "
             "approximations"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> runtimeChecks(
    "runtime-checks",
    cl::desc("CPU: check every memory access of the generated code at run "
             "time; a failed check prints the op's source location and "
             "exits with status 3 (slower; for debugging)"),
    cl::init(false), cl::cat(category));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("model.onnx or checkpoint directory: fix an input's shape, e.g. "
             "--input-shape input_ids=1x128 (repeatable)"),
    cl::value_desc("name=AxB..."), cl::cat(category));
static cl::opt<bool>
    noRaise("no-raise",
            cl::desc("model.onnx: compile the imported graph as it is, "
                     "without the raising passes (implies "
                     "--no-raise-attention)"),
            cl::init(false), cl::cat(category));
static cl::opt<bool> quiet("q", cl::desc("No progress lines on stderr"),
                           cl::init(false), cl::cat(category));

namespace {
/// Progress lines on stderr, with elapsed time, unless -q.
class Progress {
public:
  void step(const Twine &what) {
    if (quiet)
      return;
    auto now = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(now - start).count();
    errs() << format("[attn-compile %6.2fs] ", secs) << what << "\n";
  }

private:
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};

} // namespace

static int fail(const Twine &message) {
  WithColor::error(errs(), "attn-compile") << message << "\n";
  return 1;
}

static std::string defaultRuntimeDir(const char *argv0) {
  std::string exe = sys::fs::getMainExecutable(argv0, (void *)&fail);
  SmallString<256> dir(sys::path::parent_path(sys::path::parent_path(exe)));
  sys::path::append(dir, "lib");
  return std::string(dir);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // The lists need no model or output, which the parser would require.
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    arg.consume_front("-");
    arg.consume_front("-");
    if (arg == "cpu=help" || arg == "cpu-features=help") {
      attnc::printHostCpus(outs(), /*features=*/arg == "cpu-features=help");
      return 0;
    }
  }
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile an attn model to a native binary.\n\n"
      "  attn-compile model.mlir --target=cpu -o model\n"
      "  ./model --weights model.safetensors --input x.npy --output y.npy\n\n"
      "The executable links libattnrt: it binds the model's attn.weight\n"
      "tensors by name from a safetensors file and runs on .npy inputs.\n");

  enum class Target { Cpu, Cuda };
  std::optional<Target> target = StringSwitch<std::optional<Target>>(targetName)
                                     .Case("cpu", Target::Cpu)
                                     .Case("cuda", Target::Cuda)
                                     .Default(std::nullopt);
  if (!target)
    return fail("unknown target '" + targetName + "' (expected cpu or cuda)");
  static const char *const chips[] = {"sm_80", "sm_86", "sm_87",
                                      "sm_89", "sm_90", "sm_90a"};
  if (*target == Target::Cuda && !llvm::is_contained(chips, StringRef(chip)))
    return fail("unknown CUDA chip '" + chip +
                "' (expected sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a)");
  static const char *const stages[] = {"attn", "linalg", "llvm", "llvm-ir",
                                       "ptx",  "obj",    "exe"};
  if (!llvm::is_contained(stages, StringRef(emit)))
    return fail("unknown --emit stage '" + emit +
                "' (expected attn, linalg, llvm, llvm-ir, ptx, obj or exe)");
  if (runtimeChecks && *target != Target::Cpu)
    return fail("--runtime-checks is for --target=cpu");
  bool onnxInput = StringRef(inputFile).ends_with(".onnx");
  // A Hugging Face checkpoint directory (config.json + safetensors).
  bool hfInput = sys::fs::is_directory(inputFile);
  if (emit == "attn" && !onnxInput && !hfInput)
    return fail("--emit=attn is for imported models (model.onnx or a "
                "checkpoint directory)");
  if (emit == "attn" && (!layerDrop.empty() || !pruneSpec.empty()))
    return fail("--emit=attn writes the model as imported and raised; "
                "--layer-drop and --prune apply when compiling it");
  if (!onnxInput && noRaise)
    return fail("--no-raise is for model.onnx inputs");
  if (!onnxInput && !hfInput && !inputShapes.empty())
    return fail("--input-shape is for model.onnx and checkpoint directory "
                "inputs");
  if (emit == "ptx" && *target != Target::Cuda)
    return fail("--emit=ptx needs --target=cuda");
  if (shared && emit != "exe")
    return fail("--shared writes a library; it cannot be combined with --emit");
  if (!apiPrefix.empty() &&
      (!shared || !llvm::all_of(apiPrefix.getValue(),
                                [](char c) { return isAlnum(c) || c == '_'; }) ||
       isDigit(apiPrefix[0])))
    return fail("--api-prefix needs --shared and a C identifier, got '" +
                apiPrefix + "'");
  if (outputFile == "-" && (emit == "obj" || emit == "exe"))
    return fail("-o - (stdout) is only for text stages: --emit=linalg, llvm, "
                "llvm-ir or ptx");
  // Before any work: LLVM would otherwise fall back to a generic CPU with a
  // warning, or stop with a fatal error when the target machine is made.
  if (Error err = attnc::checkHostCpu(hostCpu, hostCpuFeatures))
    return fail("--cpu: " + toString(std::move(err)));
  // Every file the compile reads; the output must be none of them.
  std::vector<std::string> calibrationFiles;
  for (const std::string &set : calibration) {
    SmallVector<StringRef> files;
    StringRef(set).split(files, ',', -1, false);
    for (StringRef f : files)
      calibrationFiles.push_back(f.str());
  }
  std::vector<std::string> inputs = {inputFile, searchWeights, pruneSpec};
  llvm::append_range(inputs, calibrationFiles);
  if (size_t at = StringRef(layerDrop).find("scores-file=");
      at != StringRef::npos)
    inputs.push_back(StringRef(layerDrop)
                         .drop_front(at + strlen("scores-file="))
                         .take_until([](char c) { return c == ' '; })
                         .str());
  // The search's files are read late (after a JIT compile): refuse a FIFO,
  // device or directory now.
  if (!searchWeights.empty())
    if (Error err = attnc::checkRegularFile(searchWeights, "--weights"))
      return fail(toString(std::move(err)));
  for (const std::string &file : calibrationFiles)
    if (Error err = attnc::checkRegularFile(file, "--calibration file"))
      return fail(toString(std::move(err)));
  std::optional<attnc::SafeOutputFile> output;
  if (outputFile != "-") {
    auto prepared = attnc::SafeOutputFile::prepare(outputFile, inputs);
    if (!prepared)
      return fail(toString(prepared.takeError()));
    output.emplace(std::move(*prepared));
  }
  std::string cudaToolkit;
  if (*target == Target::Cuda) {
    auto ptxas = attnc::findPtxas();
    if (!ptxas)
      return fail(toString(ptxas.takeError()));
    // <toolkit>/bin/ptxas
    cudaToolkit = sys::path::parent_path(sys::path::parent_path(*ptxas)).str();
  }

  Progress progress;
  mlir::DialectRegistry registry;
  attnc::registerAllDialects(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  attnc::registerAllPasses();
  mlir::MLIRContext context(registry);
  context.allowUnregisteredDialects(false);
  // Located messages are enough; dumping a whole model per note is not.
  context.printOpOnDiagnostic(false);

  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  // An imported model's weights, written beside the output.
  std::optional<attnc::onnx_frontend::ImportedModel> imported;
  if (onnxInput) {
    progress.step("importing " + inputFile);
    // The importer opens the file itself: no FIFO, device or directory.
    if (Error err = attnc::checkRegularFile(inputFile, "input file"))
      return fail(toString(std::move(err)));
    attnc::onnx_frontend::ImportOptions importOptions;
    for (const std::string &spec : inputShapes)
      if (Error err =
              attnc::onnx_frontend::parseInputShape(spec, importOptions))
        return fail(toString(std::move(err)));
    auto result = attnc::onnx_frontend::importONNXModel(inputFile, context,
                                                        importOptions);
    if (!result) {
      errs() << toString(result.takeError()) << "\n";
      return 1;
    }
    module = std::move(result->module);
    imported = std::move(*result);
    // Raising is an optimization: the target pipelines compile the imported
    // form as it is (--no-raise).
    if (!noRaise) {
      progress.step("raising");
      mlir::PassManager raise(&context);
      if (failed(mlir::parsePassPipeline(
              noRaiseAttention ? attnc::kImportRaisingPipelineNoAttention
                               : attnc::kImportRaisingPipeline,
              raise, errs())))
        return fail("internal error: cannot build the raising pipeline");
      if (failed(raise.run(*module)))
        return 1;
    }
  } else if (hfInput) {
    // The IR binds the checkpoint's own tensors: run the model with
    // --weights DIR/model.safetensors; nothing is written beside it.
    progress.step("importing checkpoint " + inputFile);
    mlir::attn::hf::ImportOptions importOptions;
    for (const std::string &spec : inputShapes) {
      std::string error;
      if (!mlir::attn::hf::parseInputShape(spec, importOptions, error))
        return fail(error);
    }
    module =
        mlir::attn::hf::importCheckpoint(inputFile, importOptions, &context);
    if (!module)
      return 1; // The diagnostic handler has printed a located error.
  } else {
    progress.step("parsing " + inputFile);
    auto file = attnc::readRegularFile(inputFile, "input file");
    if (!file)
      return fail(toString(file.takeError()));
    StringRef text = (*file)->getBuffer();
    if (auto at =
            attnc::findExcessiveMlirNesting(text, attnc::kMaxNestingDepth)) {
      // Without the source line: it may be megabytes long.
      errs() << inputFile << ":" << attnc::lineColumn(text, *at)
             << ": error: nesting deeper than " << attnc::kMaxNestingDepth
             << " levels of (), [], {} or <>; attn-compile does not parse IR "
                "nested this deeply\n";
      return 1;
    }
    sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1; // The diagnostic handler has printed a located error.
  }
  // The weights of an imported model go beside what runs them (m ->
  // m.safetensors for exe/obj, m.mlir -> m.safetensors for --emit=attn),
  // committed with it; the text stages in between are for reading.
  std::optional<attnc::SafeOutputFile> weightsOutput;
  if (imported && outputFile != "-" &&
      (emit == "attn" || emit == "exe" || emit == "obj")) {
    SmallString<256> weightsPath(outputFile.getValue());
    if (emit == "attn")
      sys::path::replace_extension(weightsPath, "safetensors");
    else
      weightsPath += ".safetensors";
    auto prepared = attnc::SafeOutputFile::prepare(weightsPath, inputs);
    if (!prepared)
      return fail(toString(prepared.takeError()));
    weightsOutput.emplace(std::move(*prepared));
    if (Error err = attnc::onnx_frontend::writeSafeTensors(
            weightsOutput->tempPath(), imported->weights))
      return fail(toString(std::move(err)));
  }
  auto commitWeights = [&]() -> int {
    if (weightsOutput)
      if (Error err = weightsOutput->commit(/*executable=*/false))
        return fail(toString(std::move(err)));
    return 0;
  };
  if (emit == "attn") {
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    if (outputFile == "-") {
      module->print(outs(), flags);
      return 0;
    }
    std::error_code ec;
    raw_fd_ostream os(output->tempPath(), ec);
    if (ec)
      return fail("cannot write " + output->tempPath() + ": " + ec.message());
    module->print(os, flags);
    os << "\n";
    os.close();
    if (os.has_error())
      return fail("error writing " + outputFile);
    if (int rc = commitWeights())
      return rc;
    if (Error err = output->commit(/*executable=*/false))
      return fail(toString(std::move(err)));
    progress.step("wrote " + outputFile);
    return 0;
  }

  // "search" picks the layers by running candidates, then compiles them as
  // an explicit keep-list.
  std::string layerDropOptions = layerDrop;
  if (StringRef(layerDrop).contains("strategy=search")) {
    attnc::LayerSearchOptions search;
    SmallVector<StringRef> words;
    StringRef(layerDrop).split(words, ' ', -1, false);
    for (StringRef word : words) {
      if (word.starts_with("strategy="))
        continue;
      int64_t limit;
      if (word.consume_front("exhaustive-limit=")) {
        if (word.getAsInteger(10, limit) || limit < 0)
          return fail("bad exhaustive-limit= in --layer-drop='" + layerDrop +
                      "'");
        search.maxExhaustive = static_cast<double>(limit);
        continue;
      }
      if (!word.consume_front("keep="))
        return fail("strategy=search takes keep=k and exhaustive-limit=n, "
                    "got '" +
                    word + "'");
      if (word.getAsInteger(10, search.keep))
        return fail("bad keep= in --layer-drop='" + layerDrop + "'");
    }
    for (const std::string &set : calibration) {
      SmallVector<StringRef> files;
      StringRef(set).split(files, ',', -1, false);
      search.calibration.emplace_back(files.begin(), files.end());
    }
    search.weightsPath = searchWeights;
    auto found = attnc::searchLayersToKeep(
        *module, search, [&](const Twine &what) { progress.step(what); });
    if (!found)
      return fail(toString(found.takeError()));
    std::string layers;
    for (int64_t i : found->kept)
      layers += (layers.empty() ? "" : ",") + std::to_string(i);
    errs() << "attn-compile: search (" << found->method << ", "
           << found->evaluations << " evaluations) kept [" << layers
           << "]: relative error " << format("%.3e", found->relativeError)
           << ", cosine " << format("%.6f", found->cosine) << "\n";
    layerDropOptions = "strategy=keep-list layers=" + layers;
  } else if (!calibration.empty() || !searchWeights.empty()) {
    return fail("--calibration and --weights are for "
                "--layer-drop='strategy=search keep=k'");
  }

  mlir::PassManager pm(&context);
  if (!layerDropOptions.empty() &&
      failed(mlir::parsePassPipeline(
          "attn-layer-drop{" + layerDropOptions + " report=true}", pm, errs())))
    return fail("bad --layer-drop options '" + layerDrop + "'");
  if (!pruneSpec.empty() &&
      failed(mlir::parsePassPipeline(
          "attn-prune-structure{spec-file=" + pruneSpec + " report=true}", pm,
          errs())))
    return fail("bad --prune spec path '" + pruneSpec + "'");
  attnc::Stage stopAfter =
      emit == "linalg" ? attnc::Stage::Linalg : attnc::Stage::LLVM;
  LogicalResult built = success();
  if (*target == Target::Cpu) {
    attnc::CpuPipelineOptions options;
    options.stopAfter = stopAfter;
    options.tile = !noTile;
    options.flash = !noFlash;
    options.raiseAttention = !noRaiseAttention && !noRaise;
    options.packQKV = !noPackQKV;
    options.fuseRows = !noFuseRows;
    options.matmulKernels = !noMatmulKernels;
    options.attentionKernels = !noAttentionKernels;
    options.vectorizeRows = !noVectorizeRows;
    options.approximateMath = !noApproximateMath;
    options.transposeWeights = !noTransposeWeights;
    options.runtimeChecks = runtimeChecks;
    built = attnc::buildAttnToCpuPipeline(pm, options);
  } else {
    attnc::CudaPipelineOptions options;
    options.stopAfter = stopAfter;
    options.tile = !noTile;
    options.flash = !noFlash;
    options.raiseAttention = !noRaiseAttention && !noRaise;
    options.packQKV = !noPackQKV;
    options.fuseRows = !noFuseRows;
    options.matmulKernels = !noMatmulKernels;
    options.chip = chip;
    options.features = "+ptx80";
    options.format = emit == "ptx" ? "isa" : "bin";
    options.toolkit = cudaToolkit;
    built = attnc::buildAttnToCudaPipeline(pm, options);
  }
  if (failed(built))
    return fail("internal error: cannot build the pass pipeline");
  progress.step(Twine("lowering for ") + targetName +
                (*target == Target::Cuda ? " (" + chip + ")" : std::string()) +
                (stopAfter == attnc::Stage::Linalg ? " up to linalg" : ""));
  if (failed(pm.run(*module)))
    return 1;

  std::string tempPath = output ? output->tempPath().str() : std::string();

  auto writeText = [&](function_ref<void(raw_ostream &)> print) -> int {
    std::error_code ec;
    raw_fd_ostream os(tempPath, ec);
    if (ec)
      return fail("cannot write " + tempPath + ": " + ec.message());
    print(os);
    os.close();
    if (os.has_error())
      return fail("error writing " + outputFile);
    if (int rc = commitWeights())
      return rc;
    if (Error err = output->commit(/*executable=*/false))
      return fail(toString(std::move(err)));
    progress.step("wrote " + outputFile);
    return 0;
  };
  if (outputFile == "-" && (emit == "linalg" || emit == "llvm" ||
                            emit == "llvm-ir" || emit == "ptx")) {
    // As with other MLIR tools, "-o -" writes text stages to stdout.
    if (emit == "linalg" || emit == "llvm")
      module->print(outs());
    else if (emit == "ptx") {
      auto ptx = attnc::extractPtx(*module);
      if (!ptx)
        return fail(toString(ptx.takeError()));
      outs() << *ptx;
    } else {
      LLVMContext llvmContext;
      auto llvmModule = attnc::translateToHostLLVMIR(*module, llvmContext,
                                                     hostCpu, hostCpuFeatures);
      if (!llvmModule)
        return fail(toString(llvmModule.takeError()));
      (*llvmModule)->print(outs(), nullptr);
    }
    return 0;
  }
  if (emit == "linalg" || emit == "llvm")
    return writeText([&](raw_ostream &os) { module->print(os); });
  if (emit == "ptx") {
    auto ptx = attnc::extractPtx(*module);
    if (!ptx)
      return fail(toString(ptx.takeError()));
    return writeText([&](raw_ostream &os) { os << *ptx; });
  }

  progress.step("translating to LLVM IR and optimizing (-O3, cpu " + hostCpu +
                ")");
  LLVMContext llvmContext;
  auto llvmModule = attnc::translateToHostLLVMIR(*module, llvmContext, hostCpu,
                                                 hostCpuFeatures);
  if (!llvmModule)
    return fail(toString(llvmModule.takeError()));
  if (emit == "llvm-ir")
    return writeText(
        [&](raw_ostream &os) { (*llvmModule)->print(os, nullptr); });

  progress.step("emitting object code");
  if (emit == "obj") {
    if (Error err = attnc::emitObjectFile(**llvmModule, tempPath, hostCpu,
                                          hostCpuFeatures))
      return fail(toString(std::move(err)));
    if (int rc = commitWeights())
      return rc;
    if (Error err = output->commit(/*executable=*/false))
      return fail(toString(std::move(err)));
    progress.step("wrote " + outputFile);
    return 0;
  }
  SmallString<256> objectPath;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("attnc-model", "o", objectPath))
    return fail("cannot create a temporary object file: " + ec.message());
  FileRemover removeObject(objectPath);
  if (Error err = attnc::emitObjectFile(**llvmModule, objectPath, hostCpu,
                                        hostCpuFeatures))
    return fail(toString(std::move(err)));
  std::string runtime =
      runtimeDir.empty() ? defaultRuntimeDir(argv[0]) : runtimeDir.getValue();
  progress.step(Twine("linking with libattnrt from ") + runtime);
  std::string prefix = apiPrefix.empty()
                           ? attnc::defaultApiPrefix(outputFile)
                           : apiPrefix.getValue();
  if (Error err =
          attnc::linkModel(objectPath, tempPath, runtime, shared, prefix))
    return fail(toString(std::move(err)));
  if (int rc = commitWeights())
    return rc;
  if (Error err = output->commit(/*executable=*/true))
    return fail(toString(std::move(err)));
  progress.step("wrote " + outputFile);
  return 0;
}
