//===- LayerSearch.cpp - LayerDrop "search on valid" ----------------------===//
//
// Fan et al. prune by "search on valid": try sub-networks on validation data
// and keep the best. attnc does that at compile time: it compiles one
// *gated* variant of the model in which every attn.layer sits under an
// scf.if on an extra keep-mask input, JIT-compiles it for the host, and runs
// it through libattnrt on the user's calibration inputs once per candidate
// mask. Candidates are ranked by the relative L2 error of their outputs
// against the unpruned model's outputs (cosine similarity is reported too).
//
// Search space: exhaustive when C(L, k) <= maxExhaustive, otherwise greedy
// backward elimination (drop, one at a time, the layer whose removal hurts
// fidelity least), which costs sum_{m=k+1..L} m evaluations.
//
//===----------------------------------------------------------------------===//

#include "attnc/Tools/LayerSearch.h"

#include "attnc/Codegen/Common/Manifest.h"
#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Pipelines/Pipelines.h"
#include "attnc/Runtime/TensorIO.h"
#include "attnc/Runtime/attnrt.h"
#include "attnc/Runtime/attnrt_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// One forward pass's outputs, as doubles.
using Outputs = std::vector<std::vector<double>>;

struct Fidelity {
  double relError = 0; ///< ||y - y_full|| / ||y_full|| over all outputs.
  double cosine = 0;   ///< cos(y, y_full) over all outputs.
};
} // namespace

static llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Appends the keep-mask input and wraps layer i in `scf.if mask[i] != 0`.
static LogicalResult gateLayers(func::FuncOp entry, ArrayRef<LayerOp> stack) {
  MLIRContext *ctx = entry.getContext();
  ctx->loadDialect<arith::ArithDialect, scf::SCFDialect,
                   tensor::TensorDialect>();
  int64_t depth = stack.size();
  auto maskType = RankedTensorType::get({depth}, IntegerType::get(ctx, 32));
  unsigned maskIndex = entry.getNumArguments();
  if (failed(entry.insertArgument(maskIndex, maskType, {}, entry.getLoc())))
    return failure();
  Value mask = entry.getArgument(maskIndex);
  for (auto [i, constLayer] : llvm::enumerate(stack)) {
    LayerOp layer = constLayer;
    OpBuilder b(layer);
    Location loc = layer.getLoc();
    Value index = arith::ConstantIndexOp::create(b, loc, i);
    Value flag = tensor::ExtractOp::create(b, loc, mask, ValueRange{index});
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    Value on =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flag, zero);
    SmallVector<Value> forwarded(
        layer.getInputs().take_front(layer.getNumResults()));
    auto ifOp = scf::IfOp::create(b, loc, layer.getResultTypes(), on,
                                  /*withElseRegion=*/true);
    layer->replaceAllUsesWith(ifOp.getResults());
    Block *thenBlock = ifOp.thenBlock();
    layer->moveBefore(thenBlock, thenBlock->end());
    OpBuilder thenBuilder = OpBuilder::atBlockEnd(thenBlock);
    scf::YieldOp::create(thenBuilder, loc, layer.getResults());
    OpBuilder elseBuilder = OpBuilder::atBlockEnd(ifOp.elseBlock());
    scf::YieldOp::create(elseBuilder, loc, forwarded);
  }
  return success();
}

static Fidelity compare(const Outputs &candidate, const Outputs &full) {
  double diff = 0, norm = 0, dot = 0, candNorm = 0;
  for (size_t o = 0; o < full.size(); ++o)
    for (size_t i = 0; i < full[o].size(); ++i) {
      double y = candidate[o][i], r = full[o][i];
      diff += (y - r) * (y - r);
      norm += r * r;
      dot += y * r;
      candNorm += y * y;
    }
  Fidelity f;
  f.relError = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  f.cosine = (norm > 0 && candNorm > 0) ? dot / std::sqrt(norm * candNorm) : 0;
  return f;
}

llvm::Expected<attnc::LayerSearchResult>
attnc::searchLayersToKeep(ModuleOp module, const LayerSearchOptions &options,
                          llvm::function_ref<void(const Twine &)> progress) {
  // The stack, in depth order, in the one function that has layers.
  OwningOpRef<ModuleOp> gated = module.clone();
  func::FuncOp entry;
  SmallVector<LayerOp> stack;
  for (auto func : gated->getOps<func::FuncOp>()) {
    SmallVector<LayerOp> layers;
    func.walk([&](LayerOp layer) { layers.push_back(layer); });
    if (layers.empty())
      continue;
    if (entry)
      return makeError("search: layers in more than one function (@" +
                       entry.getName() + ", @" + func.getName() + ")");
    entry = func;
    stack = std::move(layers);
  }
  if (!entry)
    return makeError("search: no attn.layer ops to prune");
  llvm::stable_sort(
      stack, [](LayerOp a, LayerOp b) { return a.getIndex() < b.getIndex(); });
  int64_t depth = stack.size();
  for (auto [i, layer] : llvm::enumerate(stack))
    if (LayerOp(layer).getIndex() != i)
      return makeError("search: layer indices must be 0.." + Twine(depth - 1));
  if (options.keep < 1 || options.keep > depth)
    return makeError("search: keep=" + Twine(options.keep) +
                     " must be in [1, " + Twine(depth) + "]");
  if (options.calibration.empty())
    return makeError("search needs calibration inputs (--calibration x.npy)");
  if (options.weightsPath.empty())
    return makeError("search needs the weights file (--weights W.safetensors)");

  if (failed(gateLayers(entry, stack)))
    return makeError("search: cannot gate the layers");
  progress("search: compiling the gated model (" + Twine(depth) +
           " layers) for evaluation");
  PassManager pm(gated->getContext());
  // Inlined layers: a call's result is a fresh buffer, so after a chain of
  // gates the deallocation pipeline cannot tell statically which buffer a
  // gate yields and checks aliases at run time, through a helper on
  // dynamically shaped memrefs that the bare-pointer calling convention
  // cannot lower. (Inlined, the gated models bufferize without it.)
  PipelineOptions pipeline;
  pipeline.outlineLayers = false;
  buildAttnToCpuPipeline(pm, pipeline);
  if (failed(pm.run(*gated)))
    return makeError("search: lowering the gated model failed");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto transformer = makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  // Parallel loops call the OpenMP runtime.
  std::string openmp = std::string(ATTNC_OPENMP_LIBDIR) + "/libomp.so";
  SmallVector<StringRef> libraries = {openmp};
  engineOptions.sharedLibPaths = libraries;
  auto engine = ExecutionEngine::create(*gated, engineOptions);
  if (!engine)
    return engine.takeError();
  // The model's heap buffers come from libattnrt (linked into this tool),
  // whose symbols the JIT cannot see in a statically linked executable.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](llvm::StringRef name, void *fn) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("attnrt_report_token_id",
        reinterpret_cast<void *>(&attnrt_report_token_id));
    add("_mlir_memref_to_llvm_alloc",
        reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc));
    add("_mlir_memref_to_llvm_aligned_alloc",
        reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc));
    add("_mlir_memref_to_llvm_free",
        reinterpret_cast<void *>(&_mlir_memref_to_llvm_free));
    return symbols;
  });
  auto invoke = (*engine)->lookup("attn_model_invoke");
  if (!invoke)
    return invoke.takeError();
  FailureOr<std::string> manifest =
      serializeManifest(*gated, attnrt::Target::CPU);
  if (failed(manifest))
    return makeError("search: the gated model has no valid manifest");

  char err[1024] = {0};
  attnrt_model *model = attnrt_open(
      manifest->c_str(), reinterpret_cast<void (*)(void **)>(*invoke), err,
      sizeof(err));
  if (!model)
    return makeError(Twine("search: ") + err);
  llvm::scope_exit closeModel([&] { attnrt_close(model); });
  if (attnrt_bind_weights(model, options.weightsPath.c_str()))
    return makeError(Twine("search: ") + attnrt_last_error(model));
  int numInputs = attnrt_num_inputs(model);
  int maskInput = numInputs - 1;

  // Calibration sets: each lists one .npy per model input (mask excluded).
  std::vector<std::vector<attnrt::NpyArray>> sets;
  for (const std::vector<std::string> &files : options.calibration) {
    if (static_cast<int>(files.size()) != maskInput)
      return makeError("search: a calibration set has " + Twine(files.size()) +
                       " file(s) but the model has " + Twine(maskInput) +
                       " input(s)");
    std::vector<attnrt::NpyArray> arrays(files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      std::string message;
      if (!attnrt::readNpy(files[i], arrays[i], message))
        return makeError(message);
      // The gated model is run at one size: dynamic batch or sequence
      // dimensions (an ONNX export's) must be fixed to the calibration's.
      for (int axis = 0; axis < attnrt_input_rank(model, i); ++axis)
        if (attnrt_input_dim(model, i, axis) < 0)
          return makeError(
              "search: input " + Twine(i) + " '" + attnrt_input_name(model, i) +
              "' has dynamic dimensions; fix "
              "them to the calibration files' shape with --input-shape "
              "NAME=AxB...");
      if (arrays[i].dataBytes != attnrt_input_bytes(model, i))
        return makeError(files[i] + ": " + Twine(arrays[i].dataBytes) +
                         " bytes but the model's input " + Twine(i) +
                         " takes " + Twine(attnrt_input_bytes(model, i)));
    }
    sets.push_back(std::move(arrays));
  }

  int evaluations = 0;
  auto run = [&](ArrayRef<bool> keepMask) -> llvm::Expected<Outputs> {
    ++evaluations;
    std::vector<int32_t> maskData(keepMask.begin(), keepMask.end());
    Outputs all;
    for (auto &arrays : sets) {
      for (size_t i = 0; i < arrays.size(); ++i)
        if (attnrt_set_input(model, i, arrays[i].data(), arrays[i].dataBytes))
          return makeError(Twine("search: ") + attnrt_last_error(model));
      if (attnrt_set_input(model, maskInput, maskData.data(),
                           maskData.size() * sizeof(int32_t)) ||
          attnrt_run(model))
        return makeError(Twine("search: ") + attnrt_last_error(model));
      for (int o = 0; o < attnrt_num_outputs(model); ++o) {
        size_t bytes = attnrt_output_bytes(model, o);
        std::vector<unsigned char> raw(bytes);
        if (attnrt_get_output(model, o, raw.data(), bytes))
          return makeError(Twine("search: ") + attnrt_last_error(model));
        auto dtype = static_cast<attnrt::DType>(attnrt_output_dtype(model, o));
        size_t elems = bytes / attnrt::dtypeSize(dtype);
        std::vector<double> values(elems);
        for (size_t e = 0; e < elems; ++e)
          values[e] = attnrt::elementAsDouble(raw.data(), dtype, e);
        all.push_back(std::move(values));
      }
    }
    return all;
  };

  SmallVector<bool> fullMask(depth, true);
  auto full = run(fullMask);
  if (!full)
    return full.takeError();
  // Runs the model with the layers of `mask`; when it beats `incumbent`,
  // its fidelity and mask become the incumbent and `winner`.
  auto consider = [&](ArrayRef<bool> mask, Fidelity &incumbent,
                      SmallVector<bool> &winner) -> llvm::Error {
    auto outputs = run(mask);
    if (!outputs)
      return outputs.takeError();
    Fidelity fidelity = compare(*outputs, *full);
    if (fidelity.relError < incumbent.relError) {
      incumbent = fidelity;
      winner.assign(mask.begin(), mask.end());
    }
    return llvm::Error::success();
  };

  LayerSearchResult result;
  // C(depth, keep), saturating.
  double combinations = 1;
  for (int64_t i = 0; i < options.keep; ++i)
    combinations = combinations * (depth - i) / (i + 1);
  SmallVector<bool> best;
  Fidelity bestFidelity{INFINITY, 0};
  if (combinations <= options.maxExhaustive) {
    result.method = "exhaustive over " +
                    std::to_string(static_cast<int64_t>(combinations)) +
                    " subsets";
    progress("search: " + Twine(result.method));
    // Enumerate k-subsets in lexicographic order.
    SmallVector<int64_t> pick(options.keep);
    std::iota(pick.begin(), pick.end(), 0);
    while (true) {
      SmallVector<bool> mask(depth, false);
      for (int64_t i : pick)
        mask[i] = true;
      if (llvm::Error err = consider(mask, bestFidelity, best))
        return std::move(err);
      int64_t i = options.keep - 1;
      while (i >= 0 && pick[i] == depth - options.keep + i)
        --i;
      if (i < 0)
        break;
      ++pick[i];
      for (int64_t j = i + 1; j < options.keep; ++j)
        pick[j] = pick[j - 1] + 1;
    }
  } else {
    result.method = "greedy backward elimination (C(" + std::to_string(depth) +
                    ", " + std::to_string(options.keep) + ") = " +
                    std::to_string(static_cast<int64_t>(combinations)) +
                    " subsets is over the exhaustive limit of " +
                    std::to_string(options.maxExhaustive) + ")";
    progress("search: " + Twine(result.method));
    SmallVector<bool> current(depth, true);
    for (int64_t kept = depth; kept > options.keep; --kept) {
      Fidelity stepBest{INFINITY, 0};
      SmallVector<bool> stepMask;
      for (int64_t d = 0; d < depth; ++d) {
        if (!current[d])
          continue;
        SmallVector<bool> mask = current;
        mask[d] = false;
        if (llvm::Error err = consider(mask, stepBest, stepMask))
          return std::move(err);
      }
      // Every candidate's error was infinite or NaN: nothing to choose by.
      if (stepMask.empty())
        return llvm::createStringError(
            "search: no layer can be dropped with a finite error on the "
            "calibration data");
      int64_t bestDrop = 0;
      while (stepMask[bestDrop] == current[bestDrop])
        ++bestDrop;
      current = stepMask;
      bestFidelity = stepBest;
      progress("search: dropped layer " + Twine(bestDrop) +
               llvm::formatv(", relative error {0:e3}", stepBest.relError));
    }
    best = current;
  }
  for (int64_t i = 0; i < depth; ++i)
    if (best[i])
      result.kept.push_back(i);
  result.relativeError = bestFidelity.relError;
  result.cosine = bestFidelity.cosine;
  result.evaluations = evaluations;
  return result;
}
