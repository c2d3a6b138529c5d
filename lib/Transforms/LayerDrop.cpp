//===- LayerDrop.cpp - compile-time LayerDrop depth pruning ---------------===//
//
// Picks the sub-network of an attn.layer stack to keep (Fan et al., ICLR
// 2020) and turns the others into the identity on the residual stream.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Support/SafeFiles.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLAYERDROP
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnLayerDropPass
    : public mlir::attn::impl::AttnLayerDropBase<AttnLayerDropPass> {
  using AttnLayerDropBase::AttnLayerDropBase;

  void runOnOperation() override;

private:
  /// Prunes one function's stack.
  LogicalResult pruneStack(func::FuncOp func, SmallVector<LayerOp> &stack);

  /// Reads one score per depth from scores-file.
  FailureOr<SmallVector<double>> readScores(func::FuncOp func, int64_t depth);

  /// Returns, for each layer of `stack` (in depth order), whether it stays.
  FailureOr<SmallVector<bool>> chooseKept(func::FuncOp func,
                                          ArrayRef<LayerOp> stack);
};

} // namespace

FailureOr<SmallVector<double>> AttnLayerDropPass::readScores(func::FuncOp func,
                                                             int64_t depth) {
  auto fail = [&](const Twine &why) -> FailureOr<SmallVector<double>> {
    return func.emitError()
           << "attn-layer-drop: scores-file '" << scoresFile << "': " << why;
  };
  // A regular file only (a FIFO would block), nested no deeper than
  // llvm::json's recursive parser can take.
  auto buffer = attnc::readJsonFile(scoresFile);
  if (!buffer)
    return fail(llvm::toString(buffer.takeError()));
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Array *array = json->getAsArray();
  const llvm::json::Object *object = json->getAsObject();
  if (object && object->getArray("scores"))
    array = object->getArray("scores");
  SmallVector<double> scores(depth, 0.0);
  if (array) {
    if (static_cast<int64_t>(array->size()) != depth)
      return fail("has " + Twine(array->size()) + " scores but the stack has " +
                  Twine(depth) + " layers");
    for (auto [i, v] : llvm::enumerate(*array)) {
      std::optional<double> score = v.getAsNumber();
      if (!score || !std::isfinite(*score))
        return fail("score #" + Twine(i) + " is not a finite number");
      scores[i] = *score;
    }
    return scores;
  }
  if (!object)
    return fail("expected an array of scores or an object");
  SmallVector<bool> seen(depth, false);
  for (const auto &[key, v] : *object) {
    int64_t index;
    if (StringRef(key).getAsInteger(10, index) || index < 0 || index >= depth)
      return fail("key '" + StringRef(key) + "' is not a layer depth in 0.." +
                  Twine(depth - 1));
    std::optional<double> score = v.getAsNumber();
    if (!score || !std::isfinite(*score))
      return fail("score of layer " + Twine(index) + " is not a finite number");
    scores[index] = *score;
    seen[index] = true;
  }
  for (int64_t i = 0; i < depth; ++i)
    if (!seen[i])
      return fail("has no score for layer " + Twine(i));
  return scores;
}

FailureOr<SmallVector<bool>>
AttnLayerDropPass::chooseKept(func::FuncOp func, ArrayRef<LayerOp> stack) {
  int64_t depth = stack.size();
  SmallVector<bool> kept(depth, false);

  if (strategy == "every-other") {
    if (!(rate > 0.0 && rate < 1.0))
      return func.emitError()
             << "attn-layer-drop: rate must be in (0, 1), got " << rate;
    // The paper's rule: drop depth d (1-based) when d = 0 mod floor(1/p).
    int64_t period = static_cast<int64_t>(std::floor(1.0 / rate));
    if (period < 2)
      return func.emitError()
             << "attn-layer-drop: rate=" << static_cast<double>(rate)
             << " would drop every layer (floor(1/p) = 1); every-other "
                "pruning needs p <= 0.5";
    for (int64_t i = 0; i < depth; ++i)
      kept[i] = (i + 1) % period != 0;
    return kept;
  }

  if (strategy == "top-k") {
    if (keep < 1 || keep > depth)
      return func.emitError()
             << "attn-layer-drop: keep=" << static_cast<int64_t>(keep)
             << " must be in [1, " << depth << "] (the stack has " << depth
             << " layers)";
    SmallVector<double> scores;
    if (!scoresFile.empty()) {
      FailureOr<SmallVector<double>> fromFile = readScores(func, depth);
      if (failed(fromFile))
        return failure();
      scores = *fromFile;
    } else {
      for (LayerOp layer : stack) {
        if (!layer.getScore())
          return layer.emitOpError()
                 << "has no score; top-k needs a LayerDrop score on every "
                    "layer (or scores-file=...)";
        scores.push_back(layer.getScore()->convertToDouble());
      }
    }
    SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, depth));
    llvm::stable_sort(
        order, [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
    for (int64_t i = 0; i < keep; ++i)
      kept[order[i]] = true;
    // The report shows the scores that decided.
    Builder builder(func.getContext());
    for (auto [layer, score] : llvm::zip(stack, scores))
      LayerOp(layer).setScoreAttr(builder.getF64FloatAttr(score));
    return kept;
  }

  if (strategy == "keep-list") {
    if (layers.empty())
      return func.emitError()
             << "attn-layer-drop: keep-list needs layers=i,j,... (none given)";
    for (int64_t index : layers) {
      if (index < 0 || index >= depth)
        return func.emitError() << "attn-layer-drop: layer " << index
                                << " does not exist (the stack has layers 0.."
                                << depth - 1 << ")";
      if (kept[index])
        return func.emitError()
               << "attn-layer-drop: layer " << index << " is listed twice";
      kept[index] = true;
    }
    return kept;
  }

  return func.emitError() << "attn-layer-drop: unknown strategy '" << strategy
                          << "' (expected every-other, top-k or keep-list)";
}

void AttnLayerDropPass::runOnOperation() {
  // A module pass: the "no stack anywhere" check looks at every function,
  // which a function pass must not do while siblings run in parallel.
  ModuleOp module = getOperation();
  bool anyStack = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<LayerOp> stack;
    func.walk([&](LayerOp layer) { stack.push_back(layer); });
    if (stack.empty())
      continue;
    anyStack = true;
    if (failed(pruneStack(func, stack)))
      return signalPassFailure();
  }
  if (!anyStack) {
    auto funcs = module.getOps<func::FuncOp>();
    Location loc = funcs.empty() ? module.getLoc() : (*funcs.begin()).getLoc();
    emitError(loc, "attn-layer-drop: no attn.layer ops to prune");
    signalPassFailure();
  }
}

LogicalResult AttnLayerDropPass::pruneStack(func::FuncOp func,
                                            SmallVector<LayerOp> &stack) {
  // Depth order is the layers' index, which must be unique.
  llvm::stable_sort(
      stack, [](LayerOp a, LayerOp b) { return a.getIndex() < b.getIndex(); });
  for (auto [i, layer] : llvm::enumerate(stack)) {
    if (layer.getIndex() != i) {
      layer.emitOpError() << "has index " << layer.getIndex()
                          << " but the stack's depths must be 0.."
                          << stack.size() - 1 << ", each once";
      return failure();
    }
  }

  FailureOr<SmallVector<bool>> kept = chooseKept(func, stack);
  if (failed(kept))
    return failure();

  for (auto [layer, keepIt] : llvm::zip(stack, *kept)) {
    if (keepIt)
      continue;
    for (auto [i, result] : llvm::enumerate(layer.getResults())) {
      if (i >= layer.getInputs().size() ||
          layer.getInputs()[i].getType() != result.getType()) {
        layer.emitOpError() << "cannot be dropped: result #" << i
                            << " has no operand of the same type to forward";
        return failure();
      }
    }
  }

  if (report) {
    std::string text;
    llvm::raw_string_ostream os(text);
    auto print = [&](bool wantKept) {
      os << "[";
      llvm::interleaveComma(llvm::make_filter_range(llvm::enumerate(*kept),
                                                    [&](auto it) {
                                                      return it.value() ==
                                                             wantKept;
                                                    }),
                            os, [&](auto it) {
                              os << it.index();
                              if (auto s = stack[it.index()].getScore())
                                os << " (score " << s->convertToDouble() << ")";
                            });
      os << "]";
    };
    os << "attn-layer-drop (" << strategy << "): kept ";
    print(true);
    os << ", dropped ";
    print(false);
    // Emitted on the location alone: attaching the op would dump the whole
    // function into the report.
    mlir::emitRemark(func.getLoc(), os.str());
  }

  Builder builder(&getContext());
  int64_t newIndex = 0;
  AttnDialect::OriginalIndexAttrHelper originalIndex(&getContext());
  for (auto [layer, keepIt] : llvm::zip(stack, *kept)) {
    if (keepIt) {
      // A second pruning keeps the checkpoint depth, not the intermediate.
      if (!originalIndex.isAttrPresent(layer))
        originalIndex.setAttr(layer,
                              builder.getI64IntegerAttr(layer.getIndex()));
      layer.setIndex(newIndex++);
      continue;
    }
    // The identity on the residual stream (and on any pass-through value).
    SmallVector<Value> forwarded(
        layer.getInputs().take_front(layer.getNumResults()));
    layer->replaceAllUsesWith(forwarded);
    layer->erase();
  }
  return success();
}
