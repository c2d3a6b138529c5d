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
#include "Compilation.h"

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

using namespace llvm;
using attnc::CompileOptions;
using attnc::CudaChip;
using attnc::fail;
using attnc::Precision;
using attnc::Progress;

namespace attnc {
mlir::LogicalResult fail(const Twine &message) {
  WithColor::error(errs(), "attn-compile") << message << "\n";
  return mlir::failure();
}
} // namespace attnc

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

namespace attnc {

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
      return fail("--quantize=int8 sets the precision between the "
                  "projections itself; it does not combine with --precision "
                  "or --io-precision");
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
  if (pipeline.int8Activations && !pipeline.quantizeWeightBits)
    return fail("--int8-activations is for --quantize=int8-weights or "
                "int4-weights");
  if (pipeline.bf16Activations &&
      (pipeline.quantizeWeightBits != 4 || pipeline.int8Activations ||
       pipeline.quantizeGroup % 128 != 0))
    return fail("--bf16-activations is for --quantize=int4-weights with "
                "--quantize-group a multiple of 128, without "
                "--int8-activations");
  if (pipeline.quantizeWeightBits) {
    std::string mode =
        pipeline.quantizeWeightBits == 8 ? "int8-weights" : "int4-weights";
    if (cuda())
      return fail("--quantize=" + mode + " is for --target=cpu");
    if (pipeline.precision != Precision::F32 ||
        pipeline.ioPrecision != Precision::F32)
      return fail("--quantize=" + mode +
                  " keeps activations in f32; it does not combine with "
                  "--precision or --io-precision (int4 weights take bf16 "
                  "activations with --bf16-activations)");
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
  if (pipeline.bf16Activations &&
      (!pipeline.cpuAvx512Bf16 || !pipeline.cpuAvx512))
    return fail(
        "--bf16-activations needs a CPU with avx512f and avx512bf16 (see --cpu "
        "and --cpu-features)");
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
