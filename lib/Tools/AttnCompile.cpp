//===- AttnCompile.cpp - attn-compile as a library ------------------------===//
//
// attn-compile MODEL --target=cpu|cuda -o OUT
//
// Runs the pipelines attn-opt registers (attn-to-cpu, attn-to-cuda),
// translates to LLVM IR, emits a host object and links it with libattnrt.
// --emit stops at a stage and writes that stage instead. Output is written
// to a temporary file and renamed at the end (copied into a device or FIFO,
// never renamed over one), so a failed compile never leaves a partial OUT
// behind; an output that is one of the inputs is refused before anything is
// read.
//
//===----------------------------------------------------------------------===//

#include "attnc/Tools/AttnCompile.h"

#include "attnc/Codegen/CPU/WeightOnlyLayout.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Dialect/Attn/GenerationAttrs.h"
#include "attnc/Frontend/Import.h"
#include "attnc/InitAttnc.h"
#include "attnc/Runtime/SafeTensors.h"
#include "attnc/Support/BytecodeNesting.h"
#include "attnc/Support/SafeFiles.h"
#include "attnc/Target/Target.h"
#include "attnc/Tools/LayerSearch.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <list>
#include <memory>
#include <optional>

using namespace llvm;
using attnc::CompileOptions;
using attnc::CudaChip;
using attnc::Precision;
using attnc::Target;

namespace {
/// Progress lines on stderr, with elapsed time, unless -q.
class Progress {
public:
  explicit Progress(bool quiet) : quiet(quiet) {}
  void step(const Twine &what) {
    if (quiet)
      return;
    auto now = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(now - start).count();
    errs() << format("[attn-compile %6.2fs] ", secs) << what << "\n";
  }

private:
  bool quiet;
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};

} // namespace

static mlir::LogicalResult fail(const Twine &message) {
  WithColor::error(errs(), "attn-compile") << message << "\n";
  return mlir::failure();
}

//===----------------------------------------------------------------------===//
// LayerDrop search
//===----------------------------------------------------------------------===//

namespace {
/// --layer-drop="strategy=search keep=k [exhaustive-limit=n]", read by
/// MLIR's pass-option parser like the pass's own options.
struct LayerSearchCLOptions
    : public mlir::PassPipelineOptions<LayerSearchCLOptions> {
  Option<std::string> strategy{*this, "strategy",
                               cl::desc("search: choose on calibration data")};
  Option<int64_t> keep{*this, "keep", cl::desc("how many layers to keep"),
                       cl::init(0)};
  Option<int64_t> exhaustiveLimit{
      *this, "exhaustive-limit",
      cl::desc("enumerate every k-subset up to this many, else greedy"),
      cl::init(200)};
};
} // namespace

/// Runs the search and returns attn-layer-drop's options for the layers it
/// keeps, or the empty string after reporting an error.
static std::string searchLayers(mlir::ModuleOp module,
                                const CompileOptions &options,
                                Progress &progress) {
  // The option parser has said what it could not read (e.g. "for the --keep
  // option: 'x' value invalid").
  auto parsed = LayerSearchCLOptions::createFromString(options.layerDrop);
  if (!parsed) {
    (void)fail("bad --layer-drop='" + options.layerDrop +
               "': strategy=search takes keep=k and exhaustive-limit=n");
    return "";
  }
  if (parsed->exhaustiveLimit < 0) {
    (void)fail("bad exhaustive-limit=" + Twine(parsed->exhaustiveLimit) +
               " in --layer-drop (must be >= 0)");
    return "";
  }
  attnc::LayerSearchOptions search;
  search.keep = parsed->keep;
  search.maxExhaustive = static_cast<double>(parsed->exhaustiveLimit);
  search.calibration = options.calibration;
  search.weightsPath = options.searchWeights;
  auto found = attnc::searchLayersToKeep(
      module, search, [&](const Twine &what) { progress.step(what); });
  if (!found) {
    (void)fail(toString(found.takeError()));
    return "";
  }
  std::string layers;
  for (int64_t i : found->kept)
    layers += (layers.empty() ? "" : ",") + std::to_string(i);
  errs() << "attn-compile: search (" << found->method << ", "
         << found->evaluations << " evaluations) kept [" << layers
         << "]: relative error " << format("%.3e", found->relativeError)
         << ", cosine " << format("%.6f", found->cosine) << "\n";
  return "strategy=keep-list layers=" + layers;
}

//===----------------------------------------------------------------------===//
// compile
//===----------------------------------------------------------------------===//

static std::string defaultRuntimeDir() {
  std::string exe = sys::fs::getMainExecutable(nullptr, (void *)&fail);
  SmallString<256> dir(sys::path::parent_path(sys::path::parent_path(exe)));
  sys::path::append(dir, "lib");
  return std::string(dir);
}

// In namespace attnc, like compile() whose phases these are.
namespace attnc {
namespace {
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
} // namespace

mlir::LogicalResult Compilation::validateOptions() {
  if (std::optional<std::string> message = checkIOPrecision(
          options.pipeline.precision, options.pipeline.ioPrecision))
    return fail("--" + *message);
  static const char *const stages[] = {"attn", "linalg", "llvm", "llvm-ir",
                                       "ptx",  "obj",    "exe"};
  if (!llvm::is_contained(stages, emit))
    return fail("unknown --emit stage '" + emit +
                "' (expected attn, linalg, llvm, llvm-ir, ptx, obj or exe)");
  // A switch of the other target's pipeline would be silently ignored.
  for (const PipelineSwitch &s : getPipelineSwitches())
    if (!s.appliesTo(options.target) &&
        options.pipeline.*(s.field) != PipelineOptions().*(s.field))
      return fail(Twine("--") + (s.cpu ? "" : "no-") + s.name +
                  " is for --target=" +
                  stringifyOption(s.cpu ? Target::CPU : Target::CUDA));
  inputKind = getModelKind(options.inputPath);
  onnxInput = inputKind == ModelKind::ONNX;
  bool hfInput = inputKind == ModelKind::Checkpoint;
  if (emit == "attn" && !onnxInput && !hfInput)
    return fail("--emit=attn is for imported models (model.onnx or a "
                "checkpoint directory)");
  if (emit == "attn" &&
      (!options.layerDrop.empty() || !options.pruneSpec.empty()))
    return fail("--emit=attn writes the model as imported and raised; "
                "--layer-drop and --prune apply when compiling it");
  if (!onnxInput && options.noRaise)
    return fail("--no-raise is for model.onnx inputs");
  importOptions.toolName = "attn-compile";
  if (options.verbose)
    importOptions.verbose = &errs();
  importOptions.inputShapes = options.inputShapes;
  importOptions.kvCache = options.kvCache;
  if (options.lastTokenLogits && options.kvCache <= 0)
    return fail("--logits=last is for --kv-cache steps: a full-sequence "
                "model's generation reads each row's logits at its own "
                "length, not the last column");
  importOptions.raise = options.noRaise ? RaiseMode::None
                        : options.pipeline.raiseAttention
                            ? RaiseMode::All
                            : RaiseMode::AllButAttention;
  if (Error err = checkImportOptions(inputKind, importOptions))
    return fail(toString(std::move(err)));
  if (emit == "ptx" && !cuda())
    return fail("--emit=ptx needs --target=cuda");
  if (options.shared && emit != "exe")
    return fail("--shared writes a library; it cannot be combined with --emit");
  StringRef apiPrefix = options.apiPrefix;
  if (!apiPrefix.empty() &&
      (!options.shared ||
       !llvm::all_of(apiPrefix,
                     [](char c) { return isAlnum(c) || c == '_'; }) ||
       isDigit(apiPrefix[0])))
    return fail("--api-prefix needs --shared and a C identifier, got '" +
                apiPrefix + "'");
  if (outputFile == "-" && (emit == "obj" || emit == "exe"))
    return fail("-o - (stdout) is only for text stages: --emit=linalg, llvm, "
                "llvm-ir or ptx");
  // Before any work: LLVM would otherwise fall back to a generic CPU with a
  // warning, or stop with a fatal error when the target machine is made.
  if (Error err = checkHostCpu(options.hostCpu, options.hostCpuFeatures))
    return fail("--cpu: " + toString(std::move(err)));
  inputs = {options.inputPath, options.searchWeights, options.pruneSpec};
  for (const std::vector<std::string> &set : options.calibration)
    llvm::append_range(inputs, set);
  StringRef layerDropSpec = options.layerDrop;
  if (size_t at = layerDropSpec.find("scores-file="); at != StringRef::npos)
    inputs.push_back(layerDropSpec.drop_front(at + strlen("scores-file="))
                         .take_until([](char c) { return c == ' '; })
                         .str());
  // The search's files are read late (after a JIT compile): refuse a FIFO,
  // device or directory now.
  if (!options.searchWeights.empty())
    if (Error err = checkRegularFile(options.searchWeights, "--weights"))
      return fail(toString(std::move(err)));
  for (const std::vector<std::string> &set : options.calibration)
    for (const std::string &file : set)
      if (Error err = checkRegularFile(file, "--calibration file"))
        return fail(toString(std::move(err)));
  if (outputFile != "-") {
    auto prepared = SafeOutputFile::prepare(outputFile, inputs);
    if (!prepared)
      return fail(toString(prepared.takeError()));
    output.emplace(std::move(*prepared));
  }
  search = StringRef(options.layerDrop).contains("strategy=search");
  if (!search &&
      (!options.calibration.empty() || !options.searchWeights.empty()))
    return fail("--calibration and --weights are for "
                "--layer-drop='strategy=search keep=k'");
  pipeline = options.pipeline;
  if (pipeline.quantizeInt8) {
    // The quantized weights go into the weights file attn-compile writes
    // beside an imported model's executable.
    if (cuda())
      return fail("--quantize=int8 is for --target=cpu");
    if (pipeline.precision != Precision::F32 ||
        pipeline.ioPrecision != Precision::F32)
      return fail("--quantize=int8 computes between the projections in f32; "
                  "it does not combine with --precision or --io-precision");
    if (!onnxInput)
      return fail("--quantize=int8 needs a model.onnx input (its quantized "
                  "weights are written into the weights file attn-compile "
                  "writes beside the output)");
    if (emit == "attn" || emit == "ptx")
      return fail("--quantize=int8 is for --emit=exe, obj, linalg, llvm or "
                  "llvm-ir");
    if (search || options.kvCache > 0)
      return fail("--quantize=int8 is for encoders: it does not combine with "
                  "--kv-cache or --layer-drop='strategy=search ...'");
  }
  if (pipeline.quantizeWeightBits) {
    std::string mode =
        pipeline.quantizeWeightBits == 8 ? "int8-weights" : "int4-weights";
    if (cuda())
      return fail("--quantize=" + mode + " is for --target=cpu");
    if (pipeline.precision != Precision::F32 ||
        pipeline.ioPrecision != Precision::F32)
      return fail("--quantize=" + mode +
                  " keeps activations in f32; it does not combine with "
                  "--precision or --io-precision");
    if (!hfInput)
      return fail("--quantize=" + mode +
                  " needs a checkpoint directory input (its quantized "
                  "weights are written into OUT.safetensors beside the "
                  "output)");
    if (emit == "attn" || emit == "ptx")
      return fail("--quantize=" + mode +
                  " is for --emit=exe, obj, linalg, llvm or llvm-ir");
    if (search || !options.pruneSpec.empty() || !options.layerDrop.empty())
      return fail("--quantize=" + mode +
                  " does not combine with --layer-drop or --prune");
  }
  if (options.noRaise)
    pipeline.raiseAttention = false;
  pipeline.cpuAvx512Bf16 =
      !cuda() &&
      hostCpuHasFeature(options.hostCpu, options.hostCpuFeatures, "avx512bf16");
  pipeline.cpuAvx512Vnni =
      !cuda() &&
      hostCpuHasFeature(options.hostCpu, options.hostCpuFeatures, "avx512vnni");
  pipeline.cpuAvx512 =
      !cuda() &&
      hostCpuHasFeature(options.hostCpu, options.hostCpuFeatures, "avx512f");
  pipeline.stopAfter = emit == "linalg" ? Stage::Linalg : Stage::LLVM;
  if (cuda()) {
    auto ptxas = findPtxas();
    if (!ptxas)
      return fail(toString(ptxas.takeError()));
    // <toolkit>/bin/ptxas
    pipeline.toolkit =
        sys::path::parent_path(sys::path::parent_path(*ptxas)).str();
    pipeline.format = emit == "ptx" ? "isa" : "bin";
  }
  return mlir::success();
}

mlir::LogicalResult Compilation::importModel() {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registerAllPasses();
  context = std::make_unique<mlir::MLIRContext>(registry);
  context->allowUnregisteredDialects(false);
  // Located messages are enough; dumping a whole model per note is not.
  context->printOpOnDiagnostic(false);
  diagnostics = std::make_unique<mlir::SourceMgrDiagnosticHandler>(
      sourceMgr, context.get());

  Progress *progressPtr = &progress;
  importOptions.progress = [progressPtr](const Twine &what) {
    progressPtr->step(what);
  };
  mlir::FailureOr<ModelImport> imported =
      attnc::importModel(options.inputPath, *context, sourceMgr, importOptions);
  if (failed(imported))
    return mlir::failure(); // Reported, located, by the importer.
  module = std::move(imported->module);
  // The weights of an imported model go beside what runs them (m ->
  // m.safetensors for exe/obj, m.mlir -> m.safetensors for --emit=attn),
  // committed with it; the text stages in between are for reading.
  if (onnxInput && outputTakesSideFiles(outputFile) &&
      (emit == "attn" || emit == "exe" || emit == "obj")) {
    SmallString<256> weightsPath(outputFile);
    if (emit == "attn")
      sys::path::replace_extension(weightsPath, "safetensors");
    else
      weightsPath += ".safetensors";
    if (failed(prepareWeightsOutput(weightsPath)))
      return mlir::failure();
    if (pipeline.quantizeInt8) {
      pendingWeights = std::move(imported->weights);
      return mlir::success();
    }
    if (Error err = onnx_frontend::writeSafeTensors(weightsOutput->tempPath(),
                                                    imported->weights))
      return fail(toString(std::move(err)));
  }
  if (inputKind == ModelKind::Checkpoint && pipeline.quantizeWeightBits &&
      outputTakesSideFiles(outputFile) && (emit == "exe" || emit == "obj")) {
    if (failed(prepareWeightsOutput(outputFile.str() + ".safetensors")))
      return mlir::failure();
  }
  return mlir::success();
}

/// The row-major [rows, cols] matrix `stored`, or its transpose [cols, rows]
/// when `transpose` (the binding of a `transpose` weight).
static std::vector<float> transposedIf(bool transpose,
                                       std::vector<float> stored, int64_t rows,
                                       int64_t cols) {
  if (!transpose)
    return stored;
  std::vector<float> bound(stored.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      bound[j * rows + i] = stored[i * cols + j];
  return bound;
}

/// The f32 matrix [N, K] that the `attn.weight` with attributes `recipe`
/// binds (a plain, transposed and/or concatenated tensor), from `byName`.
static Expected<std::vector<float>>
assembleBinding(mlir::DictionaryAttr recipe, ArrayRef<int64_t> shape,
                const StringMap<const onnx_frontend::WeightTensor *> &byName) {
  auto name = recipe.getAs<mlir::StringAttr>("name");
  auto concat = recipe.getAs<mlir::ArrayAttr>("concat_names");
  auto axisAttr = recipe.getAs<mlir::IntegerAttr>("concat_axis");
  bool transpose = static_cast<bool>(recipe.get("transpose"));
  SmallVector<StringRef> parts;
  if (concat)
    for (mlir::Attribute part : concat)
      parts.push_back(cast<mlir::StringAttr>(part).getValue());
  else
    parts.push_back(name.getValue());
  int64_t axis = axisAttr ? axisAttr.getInt() : 0;
  // The stored (untransposed) matrix: the parts side by side along `axis`.
  int64_t rows = 0, cols = 0;
  SmallVector<const onnx_frontend::WeightTensor *> tensors;
  for (StringRef part : parts) {
    auto it = byName.find(part);
    if (it == byName.end() || it->second->shape.size() != 2)
      return createStringError("--quantize=int8: no 2-D f32 weight '" + part +
                               "' among the model's initializers");
    const onnx_frontend::WeightTensor *t = it->second;
    tensors.push_back(t);
    if (axis == 0) {
      rows += t->shape[0];
      cols = t->shape[1];
    } else {
      rows = t->shape[0];
      cols += t->shape[1];
    }
  }
  int64_t n = transpose ? cols : rows, k = transpose ? rows : cols;
  if (shape.size() != 2 || shape[0] != n || shape[1] != k)
    return createStringError("--quantize=int8: the binding of '" +
                             name.getValue() + "' is not the recorded shape");
  std::vector<float> stored(rows * cols);
  int64_t offset = 0;
  for (const onnx_frontend::WeightTensor *t : tensors) {
    const float *src = reinterpret_cast<const float *>(t->bytes.data());
    int64_t r = t->shape[0], c = t->shape[1];
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j)
        stored[axis == 0 ? (offset + i) * cols + j : i * cols + offset + j] =
            src[i * c + j];
    offset += axis == 0 ? r : c;
  }
  return transposedIf(transpose, std::move(stored), rows, cols);
}

mlir::LogicalResult Compilation::prepareWeightsOutput(const Twine &path) {
  std::string weightsPath = path.str();
  auto prepared = SafeOutputFile::prepare(weightsPath, inputs);
  if (!prepared)
    return fail(toString(prepared.takeError()));
  // After the check against the inputs, which says more.
  if (Error err = checkSideFileReplaceable(weightsPath, options.force))
    return fail(toString(std::move(err)));
  weightsOutput.emplace(std::move(*prepared));
  return mlir::success();
}

mlir::LogicalResult Compilation::writeQuantizedWeights() {
  auto recorded =
      (*module)->getAttrOfType<mlir::DictionaryAttr>("attn.int8_weights");
  if (recorded)
    (*module)->removeAttr("attn.int8_weights");
  if (!weightsOutput)
    return mlir::success(); // A text stage: nothing is bound.
  StringMap<const onnx_frontend::WeightTensor *> byName;
  for (const onnx_frontend::WeightTensor &w : pendingWeights)
    byName[w.name] = &w;
  std::vector<onnx_frontend::WeightTensor> derived;
  for (mlir::NamedAttribute entry :
       recorded ? recorded.getValue() : ArrayRef<mlir::NamedAttribute>()) {
    auto info = cast<mlir::DictionaryAttr>(entry.getValue());
    ArrayRef<int64_t> shape =
        info.getAs<mlir::DenseI64ArrayAttr>("shape").asArrayRef();
    Expected<std::vector<float>> bound = assembleBinding(
        info.getAs<mlir::DictionaryAttr>("weight"), shape, byName);
    if (!bound)
      return fail(toString(bound.takeError()));
    // Per output column n: symmetric s8 with scale max|W[n, :]| / 127,
    // rounded half to even as the generated code does; stored K-major as
    // little-endian i32 words [K/4, N] of 4 consecutive k bytes, what one
    // vpdpbusd lane multiplies.
    int64_t n = shape[0], k = shape[1];
    std::string name = entry.getName().str();
    onnx_frontend::WeightTensor q{
        name, {k / 4, n}, std::string(n * k, '\0'), "I32"};
    onnx_frontend::WeightTensor scale{
        name + "_scale", {n}, std::string(n * 4, '\0'), "F32"};
    onnx_frontend::WeightTensor colsum{
        name + "_colsum", {n}, std::string(n * 4, '\0'), "F32"};
    for (int64_t i = 0; i < n; ++i) {
      const float *row = bound->data() + i * k;
      float amax = 0.0f;
      for (int64_t j = 0; j < k; ++j)
        amax = std::max(amax, std::fabs(row[j]));
      float s = amax / 127.0f;
      if (s == 0.0f)
        s = 1.0f;
      int64_t sum = 0;
      for (int64_t j = 0; j < k; ++j) {
        float v = std::nearbyint(row[j] / s);
        auto b = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
        q.bytes[(j / 4) * n * 4 + i * 4 + j % 4] = static_cast<char>(b);
        sum += b;
      }
      float sumF = static_cast<float>(sum);
      std::memcpy(&scale.bytes[i * 4], &s, 4);
      std::memcpy(&colsum.bytes[i * 4], &sumF, 4);
    }
    derived.push_back(std::move(q));
    derived.push_back(std::move(scale));
    derived.push_back(std::move(colsum));
  }
  for (onnx_frontend::WeightTensor &w : derived) {
    if (byName.count(w.name))
      return fail("--quantize=int8: the model already has a weight named '" +
                  w.name + "'");
    pendingWeights.push_back(std::move(w));
  }
  if (Error err = onnx_frontend::writeSafeTensors(weightsOutput->tempPath(),
                                                  pendingWeights))
    return fail(toString(std::move(err)));
  return mlir::success();
}

/// The f32 matrix [N, K] that the `attn.weight` with attributes `recipe`
/// binds, read from the checkpoint: the named tensor (or the
/// concatenation of `concat_names` along `concat_axis`), sliced by
/// `gather_ranges` along `gather_axis`, then transposed with `transpose`.
static Expected<std::vector<float>>
assembleCheckpointBinding(mlir::DictionaryAttr recipe, ArrayRef<int64_t> shape,
                          const attnrt::SafeTensorsWeights &weights) {
  auto name = recipe.getAs<mlir::StringAttr>("name").getValue();
  SmallVector<StringRef> parts;
  if (auto concat = recipe.getAs<mlir::ArrayAttr>("concat_names"))
    for (mlir::Attribute part : concat)
      parts.push_back(cast<mlir::StringAttr>(part).getValue());
  else
    parts.push_back(name);
  auto axisAttr = recipe.getAs<mlir::IntegerAttr>("concat_axis");
  int64_t axis = axisAttr ? axisAttr.getInt() : 0;
  // The stored matrix: the parts side by side along `axis`.
  int64_t rows = 0, cols = 0;
  std::vector<std::pair<const attnrt::StTensor *, const float *>> tensors;
  for (StringRef part : parts) {
    const attnrt::StTensor *t = weights.find(part.str());
    if (!t || t->shape.size() != 2 || t->dtype != "F32")
      return createStringError(
          "--quantize: '" + part +
          "' is not a 2-D F32 tensor of the checkpoint (weight-only "
          "quantization reads f32 checkpoints)");
    tensors.push_back(
        {t, reinterpret_cast<const float *>(weights.tensorData(*t))});
    if (axis == 0) {
      rows += t->shape[0];
      cols = t->shape[1];
    } else {
      rows = t->shape[0];
      cols += t->shape[1];
    }
  }
  std::vector<float> stored(rows * cols);
  int64_t offset = 0;
  for (auto [t, src] : tensors) {
    int64_t r = t->shape[0], c = t->shape[1];
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j)
        stored[axis == 0 ? (offset + i) * cols + j : i * cols + offset + j] =
            src[i * c + j];
    offset += axis == 0 ? r : c;
  }
  if (auto ranges = recipe.getAs<mlir::DenseI64ArrayAttr>("gather_ranges")) {
    int64_t gAxis = recipe.getAs<mlir::IntegerAttr>("gather_axis").getInt();
    std::vector<int64_t> keep;
    ArrayRef<int64_t> pairs = ranges.asArrayRef();
    for (size_t i = 0; i + 1 < pairs.size(); i += 2)
      for (int64_t j = 0; j < pairs[i + 1]; ++j)
        keep.push_back(pairs[i] + j);
    int64_t newRows = gAxis == 0 ? keep.size() : rows;
    int64_t newCols = gAxis == 0 ? cols : keep.size();
    std::vector<float> gathered(newRows * newCols);
    for (int64_t i = 0; i < newRows; ++i)
      for (int64_t j = 0; j < newCols; ++j)
        gathered[i * newCols + j] = gAxis == 0 ? stored[keep[i] * cols + j]
                                               : stored[i * cols + keep[j]];
    stored = std::move(gathered);
    rows = newRows;
    cols = newCols;
  }
  bool transpose = static_cast<bool>(recipe.get("transpose"));
  int64_t n = transpose ? cols : rows, k = transpose ? rows : cols;
  if (shape.size() != 2 || shape[0] != n || shape[1] != k)
    return createStringError("--quantize: the binding of '" + name +
                             "' is not the recorded shape");
  return transposedIf(transpose, std::move(stored), rows, cols);
}

mlir::LogicalResult Compilation::writeWeightOnlyWeights() {
  auto recorded =
      (*module)->getAttrOfType<mlir::DictionaryAttr>("attn.woq_weights");
  auto replaced =
      (*module)->getAttrOfType<mlir::ArrayAttr>("attn.woq_replaced");
  (*module)->removeAttr("attn.woq_weights");
  (*module)->removeAttr("attn.woq_replaced");
  if (!weightsOutput)
    return mlir::success(); // A text stage: nothing is bound.
  SmallString<256> path(options.inputPath);
  sys::path::append(path, "model.safetensors");
  if (!sys::fs::exists(path)) {
    path = options.inputPath;
    sys::path::append(path, "model.safetensors.index.json");
  }
  attnrt::SafeTensorsWeights weights;
  std::string err;
  if (!weights.open(std::string(path), err))
    return fail(err);
  llvm::StringSet<> dropped;
  if (replaced)
    for (mlir::Attribute name : replaced)
      dropped.insert(cast<mlir::StringAttr>(name).getValue());
  std::vector<onnx_frontend::WeightTensor> out;
  StringSet<> names;
  // The checkpoint's tensors that some binding still reads, as stored.
  for (const auto &file : weights.files())
    for (const attnrt::StTensor &t : file->tensors()) {
      if (dropped.contains(t.name) || !weights.find(t.name))
        continue;
      const unsigned char *data = file->tensorData(t);
      onnx_frontend::WeightTensor copy;
      copy.name = t.name;
      copy.shape.assign(t.shape.begin(), t.shape.end());
      copy.bytes.assign(reinterpret_cast<const char *>(data), t.bytes());
      copy.dtype = t.dtype;
      out.push_back(std::move(copy));
      names.insert(t.name);
    }
  for (mlir::NamedAttribute entry :
       recorded ? recorded.getValue() : ArrayRef<mlir::NamedAttribute>()) {
    auto info = cast<mlir::DictionaryAttr>(entry.getValue());
    ArrayRef<int64_t> shape =
        info.getAs<mlir::DenseI64ArrayAttr>("shape").asArrayRef();
    int64_t bits = info.getAs<mlir::IntegerAttr>("bits").getInt();
    int64_t group = info.getAs<mlir::IntegerAttr>("group").getInt();
    Expected<std::vector<float>> bound = assembleCheckpointBinding(
        info.getAs<mlir::DictionaryAttr>("weight"), shape, weights);
    if (!bound)
      return fail(toString(bound.takeError()));
    // Symmetric per group of `group` k of a row: scale = max|w| / qmax,
    // q = clamp(roundeven(w / scale), -qmax, qmax), packed into rows of
    // i32 words as WeightOnlyLayout.h lays them out.
    int64_t n = shape[0], k = shape[1];
    int64_t rowWords = mlir::attn::packedWeightWords(k, bits);
    float qmax = bits == 8 ? 127.0f : 7.0f;
    std::string name = entry.getName().str();
    onnx_frontend::WeightTensor q{
        name, {n, rowWords}, std::string(n * rowWords * 4, '\0'), "I32"};
    onnx_frontend::WeightTensor scale{name + "_scale",
                                      {n, k / group},
                                      std::string(n * (k / group) * 4, '\0'),
                                      "F32"};
    std::vector<uint32_t> words(n * rowWords, 0);
    std::vector<float> scales(n * (k / group));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t g = 0; g < k / group; ++g) {
        const float *w = bound->data() + i * k + g * group;
        float amax = 0.0f;
        for (int64_t j = 0; j < group; ++j)
          amax = std::max(amax, std::fabs(w[j]));
        float s = amax / qmax;
        if (s == 0.0f)
          s = 1.0f;
        scales[i * (k / group) + g] = s;
        for (int64_t j = 0; j < group; ++j) {
          int64_t kk = g * group + j;
          float v = std::clamp(std::nearbyint(w[j] / s), -qmax, qmax);
          uint32_t field = static_cast<uint32_t>(static_cast<int32_t>(v)) &
                           ((1u << bits) - 1);
          mlir::attn::PackedWeightField at =
              mlir::attn::packedWeightField(kk, bits);
          words[i * rowWords + at.word] |= field << at.shift;
        }
      }
    std::memcpy(q.bytes.data(), words.data(), words.size() * 4);
    std::memcpy(scale.bytes.data(), scales.data(), scales.size() * 4);
    for (onnx_frontend::WeightTensor *t : {&q, &scale}) {
      if (names.contains(t->name))
        return fail("--quantize: the checkpoint already has a tensor named '" +
                    t->name + "'");
      names.insert(t->name);
      out.push_back(std::move(*t));
    }
  }
  if (Error e = onnx_frontend::writeSafeTensors(weightsOutput->tempPath(), out))
    return fail(toString(std::move(e)));
  return mlir::success();
}

mlir::LogicalResult Compilation::splitEncoder(StringRef layerDrop) {
  auto encoder = module->lookupSymbol<mlir::func::FuncOp>("encoder");
  if (!encoder || encoder.isPrivate() || encoder.isExternal())
    return mlir::success();
  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    return fail("the module has an @encoder but no @main (the decoder step "
                "an encoder-decoder's --kv-cache build pairs it with)");
  if (cuda())
    return fail("an encoder-decoder's --kv-cache build (@encoder beside the "
                "decoder step @main) compiles for the CPU only; for CUDA, "
                "compile it without --kv-cache (generation then re-runs the "
                "whole sequence)");
  if (!layerDrop.empty() || !options.pruneSpec.empty())
    return fail("--layer-drop and --prune do not apply to an "
                "encoder-decoder's --kv-cache build (@encoder beside the "
                "decoder step @main); compile it without --kv-cache");
  encoderModule = module->clone();
  // The encoder hands keys and values to the step; its outputs are no
  // language model's logits.
  (*encoderModule)
      ->removeAttr(mlir::attn::AttnDialect::CausalLmAttrHelper::getNameStr());
  (*encoderModule)->removeAttr(mlir::attn::kRecomputePastAttrName);
  encoderModule->lookupSymbol<mlir::func::FuncOp>("main").erase();
  encoder.erase();
  return mlir::success();
}

void Compilation::printModules(raw_ostream &os, mlir::OpPrintingFlags flags) {
  module->print(os, flags);
  if (encoderModule) {
    os << "\n// -----\n";
    encoderModule->print(os, flags);
  }
}

mlir::LogicalResult Compilation::lower() {
  // "search" picks the layers by running candidates, then compiles them as
  // an explicit keep-list.
  // Before the search, which would run the two-model module.
  if (failed(splitEncoder(options.layerDrop)))
    return mlir::failure();
  if (encoderModule && pipeline.quantizeWeightBits)
    return fail("--quantize=int8-weights / int4-weights is for decoder-only "
                "checkpoints: an encoder-decoder's --kv-cache build (@encoder "
                "beside the decoder step) is not supported");
  std::string layerDrop = options.layerDrop;
  if (search) {
    layerDrop = searchLayers(*module, options, progress);
    if (layerDrop.empty())
      return mlir::failure();
  }
  // The encoder runs once per prompt on whole sequences: it keeps the
  // pipeline's defaults, whatever suits the decoder step.
  PipelineOptions encoderPipeline = pipeline;
  encoderPipeline.entrySymbolPrefix = "attn_encoder";

  mlir::PassManager pm(context.get());
  if (options.lastTokenLogits)
    pm.addPass(mlir::attn::createAttnLastTokenLogits());
  if (!layerDrop.empty() &&
      failed(mlir::parsePassPipeline(
          "attn-layer-drop{" + layerDrop + " report=true}", pm, errs())))
    return fail("bad --layer-drop options '" + options.layerDrop + "'");
  if (!options.pruneSpec.empty() &&
      failed(mlir::parsePassPipeline("attn-prune-structure{spec-file=" +
                                         options.pruneSpec + " report=true}",
                                     pm, errs())))
    return fail("bad --prune spec path '" + options.pruneSpec + "'");
  // A KV-cache step is decode-bound: each decode run multiplies one row per
  // sequence, for which the dot-product kernels read the weights as stored
  // ([out, in], one contiguous row per output) faster than the outer-product
  // kernels read K-major ones (GPT-2-small, 1 thread: 1.5x decode tokens/s,
  // prefill about 10% slower; docs/decoding.md).
  if (!cuda() && pipeline.transposeWeights &&
      module
          ->walk([](mlir::attn::CacheWriteOp) {
            return mlir::WalkResult::interrupt();
          })
          .wasInterrupted())
    pipeline.transposeWeights = false;
  buildAttnToTargetPipeline(pm, options.target, pipeline);
  progress.step(Twine("lowering for ") + stringifyOption(options.target) +
                (cuda() ? (" (" + stringifyOption(pipeline.chip) + ")").str()
                        : std::string()) +
                (pipeline.stopAfter == Stage::Linalg ? " up to linalg" : ""));
  if (failed(pm.run(*module)))
    return mlir::failure();
  if (pipeline.quantizeInt8 && failed(writeQuantizedWeights()))
    return mlir::failure();
  if (pipeline.quantizeWeightBits && failed(writeWeightOnlyWeights()))
    return mlir::failure();
  if (!encoderModule)
    return mlir::success();
  mlir::PassManager encoderPm(context.get());
  buildAttnToTargetPipeline(encoderPm, options.target, encoderPipeline);
  progress.step("lowering the encoder (run once per prompt)");
  return encoderPm.run(*encoderModule);
}

mlir::LogicalResult Compilation::commitOutputs(bool executable) {
  if (weightsOutput)
    if (Error err = weightsOutput->commit(/*executable=*/false))
      return fail(toString(std::move(err)));
  if (Error err = output->commit(executable))
    return fail(toString(std::move(err)));
  progress.step("wrote " + outputFile);
  return mlir::success();
}

mlir::LogicalResult
Compilation::writeText(function_ref<void(raw_ostream &)> print) {
  if (Error err = output->write(print))
    return fail(toString(std::move(err)));
  return commitOutputs(/*executable=*/false);
}

mlir::LogicalResult Compilation::emitImported() {
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (outputFile == "-") {
    module->print(outs(), flags);
    return mlir::success();
  }
  return writeText([&](raw_ostream &os) {
    module->print(os, flags);
    os << "\n";
  });
}

mlir::LogicalResult Compilation::emitOutput() {
  if (emit == "attn")
    return emitImported();
  StringRef hostCpu = options.hostCpu;
  StringRef hostCpuFeatures = options.hostCpuFeatures;
  std::string tempPath = output ? output->tempPath().str() : std::string();

  if (outputFile == "-" && (emit == "linalg" || emit == "llvm" ||
                            emit == "llvm-ir" || emit == "ptx")) {
    // As with other MLIR tools, "-o -" writes text stages to stdout.
    if (emit == "linalg" || emit == "llvm")
      printModules(outs());
    else if (emit == "ptx") {
      auto ptx = extractPtx(*module);
      if (!ptx)
        return fail(toString(ptx.takeError()));
      outs() << *ptx;
    } else {
      LLVMContext llvmContext;
      for (mlir::ModuleOp m :
           {*module, encoderModule ? *encoderModule : mlir::ModuleOp()}) {
        if (!m)
          continue;
        auto llvmModule =
            translateToHostLLVMIR(m, llvmContext, hostCpu, hostCpuFeatures);
        if (!llvmModule)
          return fail(toString(llvmModule.takeError()));
        (*llvmModule)->print(outs(), nullptr);
      }
    }
    return mlir::success();
  }
  if (emit == "linalg" || emit == "llvm")
    return writeText([&](raw_ostream &os) { printModules(os); });
  if (emit == "ptx") {
    auto ptx = extractPtx(*module);
    if (!ptx)
      return fail(toString(ptx.takeError()));
    return writeText([&](raw_ostream &os) { os << *ptx; });
  }

  if (emit == "obj" && encoderModule)
    return fail("--emit=obj writes one object, but an encoder-decoder's "
                "--kv-cache build has two (the decoder step and its "
                "encoder); emit an executable, or a library with --shared");
  progress.step("translating to LLVM IR and optimizing (-O3, cpu " + hostCpu +
                ")");
  LLVMContext llvmContext;
  auto llvmModule =
      translateToHostLLVMIR(*module, llvmContext, hostCpu, hostCpuFeatures);
  if (!llvmModule)
    return fail(toString(llvmModule.takeError()));
  std::optional<Expected<std::unique_ptr<llvm::Module>>> llvmEncoder;
  if (encoderModule) {
    llvmEncoder.emplace(translateToHostLLVMIR(*encoderModule, llvmContext,
                                              hostCpu, hostCpuFeatures));
    if (!*llvmEncoder)
      return fail(toString(llvmEncoder->takeError()));
  }
  if (emit == "llvm-ir")
    return writeText([&](raw_ostream &os) {
      (*llvmModule)->print(os, nullptr);
      if (llvmEncoder)
        (**llvmEncoder)->print(os, nullptr);
    });

  progress.step("emitting object code");
  if (emit == "obj") {
    if (Error err =
            emitObjectFile(**llvmModule, tempPath, hostCpu, hostCpuFeatures))
      return fail(toString(std::move(err)));
    return commitOutputs(/*executable=*/false);
  }
  std::vector<std::string> objectPaths;
  std::list<FileRemover> removeObjects;
  for (llvm::Module *m :
       {llvmModule->get(), llvmEncoder ? (*llvmEncoder)->get() : nullptr}) {
    if (!m)
      continue;
    SmallString<256> objectPath;
    if (std::error_code ec =
            sys::fs::createTemporaryFile("attnc-model", "o", objectPath))
      return fail("cannot create a temporary object file: " + ec.message());
    removeObjects.emplace_back(objectPath);
    objectPaths.push_back(std::string(objectPath));
    if (Error err = emitObjectFile(*m, objectPath, hostCpu, hostCpuFeatures))
      return fail(toString(std::move(err)));
  }
  std::string runtime =
      options.runtimeDir.empty() ? defaultRuntimeDir() : options.runtimeDir;
  progress.step(Twine("linking with libattnrt from ") + runtime);
  std::string prefix = options.apiPrefix.empty() ? defaultApiPrefix(outputFile)
                                                 : options.apiPrefix;
  if (Error err =
          linkModel(objectPaths, tempPath, runtime, options.shared, prefix))
    return fail(toString(std::move(err)));
  return commitOutputs(/*executable=*/true);
}

int compile(const CompileOptions &options) {
  Compilation compilation(options);
  if (failed(compilation.validateOptions()) ||
      failed(compilation.importModel()))
    return 1;
  // --emit=attn writes the model as imported.
  if (options.emit != "attn" && failed(compilation.lower()))
    return 1;
  return succeeded(compilation.emitOutput()) ? 0 : 1;
}

} // namespace attnc

//===----------------------------------------------------------------------===//
// The command line
//===----------------------------------------------------------------------===//

int attnc::runAttnCompileMain(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // The lists need no model or output, which the parser would require.
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    arg.consume_front("-");
    arg.consume_front("-");
    if (arg == "cpu=help" || arg == "cpu-features=help") {
      printHostCpus(outs(), /*features=*/arg == "cpu-features=help");
      return 0;
    }
  }
  cl::OptionCategory category("attn-compile options");
  cl::opt<std::string> inputFile(cl::Positional,
                                 cl::desc("<model.mlir | model.onnx | "
                                          "checkpoint directory>"),
                                 cl::Required, cl::cat(category));
  cl::opt<std::string> outputFile("o", cl::desc("Output path"),
                                  cl::value_desc("path"), cl::Required,
                                  cl::cat(category));
  // The enums' parsers (CodegenOptions.h) refuse unknown values.
  cl::opt<Target> target("target", cl::desc("Target: cpu (the host) or cuda"),
                         cl::init(Target::CPU), cl::cat(category));
  cl::opt<CudaChip> chip("chip",
                         cl::desc("CUDA architecture for --target=cuda: "
                                  "sm_80, sm_86, sm_87, sm_89, sm_90, "
                                  "sm_90a"),
                         cl::init(CudaChip::SM90a), cl::cat(category));
  cl::opt<Precision> precision(
      "precision",
      cl::desc("Compute the model's f32 tensors in f32, f16 or bf16 (f32 "
               "accumulation, norms and softmax statistics); the runtime "
               "converts the checkpoint's tensors once when it binds them"),
      cl::init(Precision::F32), cl::cat(category));
  cl::opt<std::string> quantize(
      "quantize",
      cl::desc("none; int8: projections with constant weights as u8 x s8 "
               "contractions (activations quantized per row at run time, "
               "weights per output column at compile time into the weights "
               "file; CPU, model.onnx encoders); int8-weights / "
               "int4-weights: weight-only, for checkpoint directories "
               "(decoders, --kv-cache steps included): the projections and "
               "the LM head read int8 or packed int4 weights (two per byte: "
               "a block of 32 weights in 16 bytes, byte j holding weights j "
               "and 16 + j) with one f32 "
               "scale per --quantize-group weights along K, dequantized in "
               "registers; activations stay f32. The quantized weights go "
               "into OUT.safetensors (run the model with --weights "
               "OUT.safetensors); CPU only"),
      cl::init("none"), cl::cat(category));
  cl::opt<int64_t> quantizeGroup(
      "quantize-group",
      cl::desc("With --quantize=int8-weights / int4-weights: weights per "
               "scale along K (a multiple of 8 dividing every projection's "
               "input size; default 128: one 4-byte scale per 128 weights "
               "adds 0.25 bits per weight, and 128 divides the hidden and "
               "FFN sizes of common decoders; smaller groups, e.g. 32, "
               "follow outliers more closely at 1 bit per weight)"),
      cl::value_desc("G"), cl::init(128), cl::cat(category));
  cl::opt<Precision> ioPrecision(
      "io-precision",
      cl::desc("Type of the model's float inputs and outputs: f32 (default; "
               "converted inside the model) or the --precision"),
      cl::init(Precision::F32), cl::cat(category));
  cl::opt<std::string> hostCpu("cpu",
                               cl::desc("Host CPU to generate code for "
                                        "(default: this machine; help lists "
                                        "the known ones)"),
                               cl::init("native"), cl::cat(category));
  cl::opt<std::string> hostCpuFeatures(
      "cpu-features",
      cl::desc("Host CPU features to enable or disable on top of --cpu's, "
               "e.g. +avx2,-avx512f (help lists them)"),
      cl::init(""), cl::cat(category));
  cl::opt<std::string> emit(
      "emit",
      cl::desc("Stop at a stage and write it: attn (an imported model "
               "after raising), linalg (MLIR on tensors), llvm (LLVM "
               "dialect), llvm-ir, ptx (cuda only), obj, exe"),
      cl::init("exe"), cl::cat(category));
  cl::opt<bool> shared("shared",
                       cl::desc("Write a shared library exporting the "
                                "attnrt C API instead of an executable"),
                       cl::init(false), cl::cat(category));
  cl::opt<std::string> apiPrefix(
      "api-prefix",
      cl::desc("With --shared: also export the C API as NAME_attnrt_* "
               "(default: the output's file name without lib and extensions), "
               "so that one program can link several models"),
      cl::value_desc("NAME"), cl::init(""), cl::cat(category));
  cl::opt<std::string> layerDrop(
      "layer-drop",
      cl::desc("Run attn-layer-drop first with these options, e.g. "
               "--layer-drop='strategy=every-other rate=0.5'"),
      cl::init(""), cl::cat(category));
  cl::opt<std::string> pruneSpec(
      "prune",
      cl::desc("Prune attention heads / FFN neuron groups as this JSON "
               "spec says (attn-prune-structure spec-file)"),
      cl::value_desc("spec.json"), cl::init(""), cl::cat(category));
  cl::list<std::string> calibration(
      "calibration",
      cl::desc("With --layer-drop='strategy=search keep=k': one calibration "
               "set, a comma-separated .npy per model input (repeat for more "
               "sets)"),
      cl::cat(category));
  cl::opt<std::string> searchWeights(
      "weights",
      cl::desc("With strategy=search: the model's safetensors weights, used "
               "to run the candidates"),
      cl::init(""), cl::cat(category));
  cl::opt<std::string> runtimeDir(
      "runtime-dir",
      cl::desc("Directory holding libattnrt.a (default: ../lib next to "
               "attn-compile)"),
      cl::init(""), cl::cat(category));
  cl::opt<bool> quiet("q", cl::desc("No progress lines on stderr"),
                      cl::init(false), cl::cat(category));
  cl::opt<bool> verbose("v",
                        cl::desc("model.onnx: notes on stderr about what "
                                 "the import did not check (e.g. libonnx's "
                                 "checker on a model newer than it)"),
                        cl::init(false), cl::cat(category));
  cl::list<std::string> inputShapes(
      "input-shape",
      cl::desc("model.onnx or checkpoint directory: fix an input's shape, "
               "e.g. --input-shape input_ids=1x128 (repeatable; `?` keeps a "
               "dimension dynamic; an ONNX model's unfixed symbolic "
               "dimensions stay dynamic)"),
      cl::value_desc("name=AxB..."), cl::cat(category));
  cl::opt<int64_t> kvCache(
      "kv-cache",
      cl::desc("A decoder (checkpoint directory, or a causal model.onnx "
               "exported with or without past key/values): compile a step "
               "over a KV cache of N positions (inputs input_ids [B, T] and "
               "positions [B]; the caches are model state, updated in "
               "place; an ONNX model's past inputs become the caches, or "
               "each causal attention of a stateless export gets one, and "
               "its attention mask input is dropped); with "
               "--input-shape input_ids=Bx? T is chosen per run: "
               "`model generate` prefills in one run, then decodes a token "
               "per run; with Bx1, a one-token step"),
      cl::value_desc("N"), cl::init(0), cl::cat(category));
  cl::opt<std::string> logits(
      "logits",
      cl::desc("With --kv-cache: `all` (default) computes the logits of "
               "every token a run takes ([B, T, vocab]); `last` only each "
               "row's last token's ([B, 1, vocab]), which is all generation "
               "reads: a prompt's run skips T - 1 columns of the LM head "
               "(generation then feeds each row's prompt in runs that end "
               "at it)"),
      cl::value_desc("all|last"), cl::init("all"), cl::cat(category));
  cl::opt<bool> noRaise("no-raise",
                        cl::desc("model.onnx: compile the imported graph as "
                                 "it is, without the raising passes (implies "
                                 "--no-raise-attention)"),
                        cl::init(false), cl::cat(category));
  cl::opt<bool> force(
      "force",
      cl::desc("model.onnx: replace the weights file beside the output "
               "(OUT.safetensors) even if attnc did not write it; without "
               "it such a file is never replaced"),
      cl::init(false), cl::cat(category));
  // A flag for every switch of the pipelines: --no-<name> for what runs by
  // default, --<name> for what does not.
  BumpPtrAllocator allocator;
  StringSaver saver(allocator);
  const PipelineOptions defaults;
  std::vector<std::pair<const PipelineSwitch *, std::unique_ptr<cl::opt<bool>>>>
      switches;
  for (const PipelineSwitch &s : getPipelineSwitches()) {
    bool on = defaults.*(s.field);
    switches.emplace_back(
        &s, std::make_unique<cl::opt<bool>>(
                on ? saver.save("no-" + s.name) : StringRef(s.name),
                cl::desc(on ? s.offDescription : s.description),
                cl::init(false), cl::cat(category)));
  }

  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile an attn model to a native binary.\n\n"
      "  attn-compile model.mlir --target=cpu -o model\n"
      "  ./model --weights model.safetensors --input x.npy --output y.npy\n\n"
      "The executable links libattnrt: it binds the model's attn.weight\n"
      "tensors by name from a safetensors file and runs on .npy inputs.\n");

  CompileOptions options;
  options.target = target;
  options.inputPath = inputFile;
  options.outputPath = outputFile;
  options.hostCpu = hostCpu;
  options.hostCpuFeatures = hostCpuFeatures;
  options.apiPrefix = apiPrefix;
  options.emit = emit;
  options.shared = shared;
  options.layerDrop = layerDrop;
  options.pruneSpec = pruneSpec;
  for (const std::string &set : calibration) {
    SmallVector<StringRef> files;
    StringRef(set).split(files, ',', -1, false);
    options.calibration.emplace_back(files.begin(), files.end());
  }
  options.searchWeights = searchWeights;
  options.runtimeDir = runtimeDir;
  options.quiet = quiet;
  options.verbose = verbose;
  options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  options.kvCache = kvCache;
  if (logits != "all" && logits != "last") {
    errs() << "attn-compile: --logits must be all or last, got '" << logits
           << "'\n";
    return 1;
  }
  options.lastTokenLogits = logits == "last";
  options.noRaise = noRaise;
  options.force = force;
  options.pipeline.chip = chip;
  options.pipeline.precision = precision;
  options.pipeline.ioPrecision = ioPrecision;
  if (quantize != "none" && quantize != "int8" && quantize != "int8-weights" &&
      quantize != "int4-weights") {
    (void)fail("unknown --quantize '" + quantize +
               "' (expected none, int8, int8-weights or int4-weights)");
    return 1;
  }
  options.pipeline.quantizeInt8 = quantize == "int8";
  options.pipeline.quantizeWeightBits = quantize == "int8-weights"   ? 8
                                        : quantize == "int4-weights" ? 4
                                                                     : 0;
  if (quantizeGroup.getNumOccurrences() &&
      !options.pipeline.quantizeWeightBits) {
    (void)fail("--quantize-group is for --quantize=int8-weights or "
               "int4-weights");
    return 1;
  }
  if (quantizeGroup < 8 || quantizeGroup % 8 != 0) {
    (void)fail("--quantize-group must be a positive multiple of 8, got " +
               Twine(quantizeGroup.getValue()));
    return 1;
  }
  options.pipeline.quantizeGroup = quantizeGroup;
  for (const auto &[s, flag] : switches)
    if (*flag)
      options.pipeline.*(s->field) = !(defaults.*(s->field));
  return compile(options);
}
