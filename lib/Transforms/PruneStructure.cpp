//===- PruneStructure.cpp - prune attention heads and FFN groups ----------===//
//
// Heads and FFN neuron groups are pruned by binding only the kept slices of
// their projection weights (attn.weight gathers), so both the matmuls and
// the bytes read from the checkpoint shrink.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Support/SafeFiles.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <numeric>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPRUNESTRUCTURE
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What to keep in one layer; empty lists mean "leave alone".
struct LayerSpec {
  SmallVector<int64_t> heads;
  SmallVector<int64_t> ffnGroups;
  /// How many scores chose them ("head_scores", "ffn_scores"), if scores
  /// did: one per head or group, or the choice would ignore the rest.
  std::optional<int64_t> headScores, ffnScores;
};

/// Parses a list of kept indices, or scores plus a keep count (top by
/// score, ties to the lower index), into ascending indices.
static FailureOr<SmallVector<int64_t>>
parseSelection(const llvm::json::Object &layer, StringRef listKey,
               StringRef scoresKey, StringRef countKey,
               function_ref<InFlightDiagnostic()> error,
               std::optional<int64_t> &scoreCount) {
  SmallVector<int64_t> kept;
  if (const llvm::json::Array *list = layer.getArray(listKey)) {
    for (const llvm::json::Value &v : *list) {
      std::optional<int64_t> index = v.getAsInteger();
      if (!index || *index < 0)
        return error() << "'" << listKey << "' holds a non-index value";
      kept.push_back(*index);
    }
  } else if (const llvm::json::Array *scores = layer.getArray(scoresKey)) {
    std::optional<int64_t> count = layer.getInteger(countKey);
    if (!count || *count < 1 || *count > static_cast<int64_t>(scores->size()))
      return error() << "'" << scoresKey << "' needs '" << countKey
                     << "' in [1, " << scores->size() << "]";
    SmallVector<double> values;
    for (const llvm::json::Value &v : *scores) {
      std::optional<double> score = v.getAsNumber();
      if (!score)
        return error() << "'" << scoresKey << "' holds a non-number";
      values.push_back(*score);
    }
    scoreCount = static_cast<int64_t>(values.size());
    SmallVector<int64_t> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::stable_sort(
        order, [&](int64_t a, int64_t b) { return values[a] > values[b]; });
    kept.assign(order.begin(), order.begin() + *count);
  } else {
    return kept;
  }
  llvm::sort(kept);
  if (std::adjacent_find(kept.begin(), kept.end()) != kept.end())
    return error() << "'" << listKey << "' names an index twice";
  if (kept.empty())
    return error() << "'" << listKey << "' would remove everything";
  return kept;
}

/// The source ranges (start, length pairs) that the view ranges `view`
/// select from a gather whose ranges are `gathered`: view position p is
/// position p of the concatenation of the gathered slices.
static SmallVector<int64_t> composeRanges(ArrayRef<int64_t> gathered,
                                          ArrayRef<int64_t> view) {
  SmallVector<int64_t> result;
  auto append = [&](int64_t start, int64_t length) {
    if (!result.empty() && result[result.size() - 2] + result.back() == start)
      result.back() += length;
    else
      result.append({start, length});
  };
  for (size_t i = 0; i + 1 < view.size(); i += 2) {
    int64_t p = view[i], remaining = view[i + 1], base = 0;
    for (size_t j = 0; j + 1 < gathered.size() && remaining > 0; j += 2) {
      int64_t start = gathered[j], length = gathered[j + 1];
      if (p < base + length) {
        int64_t take = std::min(remaining, base + length - p);
        append(start + (p - base), take);
        p += take;
        remaining -= take;
      }
      base += length;
    }
  }
  return result;
}

/// A gathered copy of `weight` along `axis` (of its type): for each kept
/// unit u, the range [u * width, (u + 1) * width). A weight bound transposed
/// gathers along the checkpoint tensor's other axis; one that is already a
/// gather along that axis (an imported packed projection) selects from its
/// ranges.
static FailureOr<Value> gatherUnits(OpBuilder &b, Operation *user, Value weight,
                                    int64_t axis, ArrayRef<int64_t> units,
                                    int64_t width) {
  auto source = weight.getDefiningOp<WeightOp>();
  RankedTensorType type = source ? source.getType() : RankedTensorType();
  int64_t checkpointAxis =
      source && source.getTranspose() ? type.getRank() - 1 - axis : axis;
  if (!source || source.getConcatNamesAttr() ||
      (source.getGatherRanges() && source.getGatherAxis() != checkpointAxis)) {
    user->emitOpError("cannot be pruned: its weights must come straight from "
                      "attn.weight ops (not computed, packed or gathered "
                      "along another axis)");
    return failure();
  }
  SmallVector<int64_t> ranges;
  for (int64_t u : units)
    ranges.append({u * width, width});
  int64_t extent = type.getDimSize(axis);
  if (DenseI64ArrayAttr gathered = source.getGatherRangesAttr()) {
    ranges = composeRanges(gathered.asArrayRef(), ranges);
    extent = *source.getGatherExtent();
  }
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = static_cast<int64_t>(units.size()) * width;
  auto gathered = WeightOp::create(
      b, source.getLoc(), RankedTensorType::get(shape, type.getElementType()),
      source.getNameAttr(), b.getI64IntegerAttr(checkpointAxis),
      b.getI64IntegerAttr(extent), b.getDenseI64ArrayAttr(ranges),
      /*concat_names=*/nullptr, /*concat_axis=*/nullptr);
  gathered.setTranspose(source.getTranspose());
  gathered.setConvert(source.getConvert());
  return gathered.getResult();
}

struct AttnPruneStructurePass
    : public mlir::attn::impl::AttnPruneStructureBase<AttnPruneStructurePass> {
  using AttnPruneStructureBase::AttnPruneStructureBase;

  LogicalResult pruneHeads(MhaOp op, ArrayRef<int64_t> heads,
                           std::optional<int64_t> scores) {
    int64_t numHeads = op.getNumHeads();
    if (scores && *scores != numHeads)
      return op.emitOpError()
             << "has " << numHeads << " heads but 'head_scores' gives "
             << *scores << " scores; give one score per head";
    if (op.getKvHeads() != numHeads)
      return op.emitOpError("head pruning of grouped-query attention "
                            "(kv_heads != heads) is not supported");
    for (int64_t h : heads)
      if (h >= numHeads)
        return op.emitOpError()
               << "has " << numHeads << " heads; cannot keep head " << h;
    if (Value bias = op.getScoreBias();
        bias && cast<RankedTensorType>(bias.getType()).getDimSize(1) != 1)
      return op.emitOpError("head pruning with a per-head score_bias is not "
                            "supported");
    int64_t dh = op.getEffectiveHeadDim();
    OpBuilder b(op);
    FailureOr<Value> wq = gatherUnits(b, op, op.getQWeight(), 0, heads, dh);
    FailureOr<Value> wk = gatherUnits(b, op, op.getKWeight(), 0, heads, dh);
    FailureOr<Value> wv = gatherUnits(b, op, op.getVWeight(), 0, heads, dh);
    FailureOr<Value> wo = gatherUnits(b, op, op.getOWeight(), 1, heads, dh);
    if (failed(wq) || failed(wk) || failed(wv) || failed(wo))
      return failure();
    SmallVector<Value> biases;
    if (!op.getBiases().empty()) {
      for (int i = 0; i < 3; ++i) {
        FailureOr<Value> bias =
            gatherUnits(b, op, op.getBiases()[i], 0, heads, dh);
        if (failed(bias))
          return failure();
        biases.push_back(*bias);
      }
      biases.push_back(op.getBiases()[3]); // The output bias is per d_model.
    }
    int64_t kept = heads.size();
    op.getQWeightMutable().assign(*wq);
    op.getKWeightMutable().assign(*wk);
    op.getVWeightMutable().assign(*wv);
    op.getOWeightMutable().assign(*wo);
    if (!biases.empty())
      op.getBiasesMutable().assign(biases);
    op.setNumHeads(kept);
    op.removeNumKvHeadsAttr();
    op.removeWideAttr();
    op.setHeadDimAttr(b.getI64IntegerAttr(dh));
    if (report)
      op.emitRemark() << "attn-prune-structure: kept " << kept << " of "
                      << numHeads << " heads";
    return success();
  }

  LogicalResult pruneFfn(FfnOp op, ArrayRef<int64_t> groups, int64_t size,
                         std::optional<int64_t> scores) {
    int64_t hidden = op.getUpWeight().getType().getDimSize(0);
    if (size <= 0 || hidden % size != 0)
      return op.emitOpError()
             << "d_ff " << hidden << " is not a multiple of ffn_group_size "
             << size;
    if (scores && *scores != hidden / size)
      return op.emitOpError() << "has " << hidden / size << " FFN groups of "
                              << size << " but 'ffn_scores' gives " << *scores
                              << " scores; give one score per group";
    for (int64_t g : groups)
      if (g >= hidden / size)
        return op.emitOpError() << "has " << hidden / size << " FFN groups of "
                                << size << "; cannot keep group " << g;
    OpBuilder b(op);
    FailureOr<Value> up = gatherUnits(b, op, op.getUpWeight(), 0, groups, size);
    FailureOr<Value> down =
        gatherUnits(b, op, op.getDownWeight(), 1, groups, size);
    if (failed(up) || failed(down))
      return failure();
    op.getUpWeightMutable().assign(*up);
    op.getDownWeightMutable().assign(*down);
    // A gated FFN's gate rows pair with the up rows: keep the same groups.
    if (Value gate = op.getGateWeight()) {
      FailureOr<Value> keptGate = gatherUnits(b, op, gate, 0, groups, size);
      if (failed(keptGate))
        return failure();
      op.getGateWeightMutable().assign(*keptGate);
      if (Value gateBias = op.getGateBias()) {
        FailureOr<Value> bias = gatherUnits(b, op, gateBias, 0, groups, size);
        if (failed(bias))
          return failure();
        op.getGateBiasMutable().assign(*bias);
      }
    }
    if (Value upBias = op.getUpBias()) {
      FailureOr<Value> bias = gatherUnits(b, op, upBias, 0, groups, size);
      if (failed(bias))
        return failure();
      op.getUpBiasMutable().assign(*bias);
    }
    if (report)
      op.emitRemark() << "attn-prune-structure: kept " << groups.size()
                      << " of " << hidden / size << " FFN groups of " << size;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto error = [&]() {
      return module.emitError()
             << "attn-prune-structure: spec-file '" << specFile << "': ";
    };
    if (specFile.empty()) {
      error() << "no spec-file given";
      return signalPassFailure();
    }
    // A regular file only (a FIFO would block), nested no deeper than
    // llvm::json's recursive parser can take.
    auto buffer = attnc::readJsonFile(specFile);
    if (!buffer) {
      error() << llvm::toString(buffer.takeError());
      return signalPassFailure();
    }
    llvm::Expected<llvm::json::Value> json =
        llvm::json::parse((*buffer)->getBuffer());
    if (!json) {
      error() << "invalid JSON: " << llvm::toString(json.takeError());
      return signalPassFailure();
    }
    const llvm::json::Object *root = json->getAsObject();
    const llvm::json::Object *layers =
        root ? root->getObject("layers") : nullptr;
    if (!layers) {
      error() << "expected an object with \"layers\"";
      return signalPassFailure();
    }
    int64_t groupSize = root->getInteger("ffn_group_size").value_or(0);

    llvm::DenseMap<int64_t, LayerSpec> specs;
    for (const auto &[key, value] : *layers) {
      int64_t depth;
      const llvm::json::Object *layer = value.getAsObject();
      if (StringRef(key).getAsInteger(10, depth) || depth < 0 || !layer) {
        error() << "layer key '" << StringRef(key)
                << "' must be a depth with an object";
        return signalPassFailure();
      }
      auto layerError = [&]() { return error() << "layer " << depth << ": "; };
      LayerSpec spec;
      auto heads = parseSelection(*layer, "heads", "head_scores", "keep_heads",
                                  layerError, spec.headScores);
      auto groups =
          parseSelection(*layer, "ffn_groups", "ffn_scores", "keep_ffn_groups",
                         layerError, spec.ffnScores);
      if (failed(heads) || failed(groups))
        return signalPassFailure();
      if (!groups->empty() && groupSize <= 0) {
        layerError() << "FFN groups need a positive \"ffn_group_size\"";
        return signalPassFailure();
      }
      spec.heads = std::move(*heads);
      spec.ffnGroups = std::move(*groups);
      specs[depth] = std::move(spec);
    }

    llvm::DenseSet<int64_t> found;
    WalkResult result = module.walk([&](LayerOp layer) {
      int64_t depth = layer.getIndex();
      if (IntegerAttr original =
              AttnDialect::OriginalIndexAttrHelper(layer.getContext())
                  .getAttr(layer))
        depth = original.getInt();
      auto it = specs.find(depth);
      if (it == specs.end())
        return WalkResult::advance();
      found.insert(depth);
      const LayerSpec &spec = it->second;
      SmallVector<MhaOp> mhas;
      SmallVector<FfnOp> ffns;
      layer.walk([&](MhaOp op) { mhas.push_back(op); });
      layer.walk([&](FfnOp op) { ffns.push_back(op); });
      if (!spec.heads.empty()) {
        if (mhas.empty()) {
          layer.emitOpError("has no attn.mha to prune heads of");
          return WalkResult::interrupt();
        }
        for (MhaOp op : mhas)
          if (failed(pruneHeads(op, spec.heads, spec.headScores)))
            return WalkResult::interrupt();
      }
      if (!spec.ffnGroups.empty()) {
        if (ffns.empty()) {
          layer.emitOpError("has no attn.ffn to prune groups of");
          return WalkResult::interrupt();
        }
        for (FfnOp op : ffns)
          if (failed(pruneFfn(op, spec.ffnGroups, groupSize, spec.ffnScores)))
            return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (auto &[depth, spec] : specs)
      if (!found.contains(depth)) {
        error() << "no attn.layer has depth " << depth;
        return signalPassFailure();
      }
    // The full-size attn.weight ops lost their users.
    SmallVector<WeightOp> dead;
    module.walk([&](WeightOp weight) {
      if (weight->use_empty())
        dead.push_back(weight);
    });
    for (WeightOp weight : dead)
      weight.erase();
  }
};

} // namespace
