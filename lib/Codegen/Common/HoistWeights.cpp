//===- HoistWeights.cpp - attn.weight ops become entry arguments ----------===//
//
// The runtime binds weights by name; after this pass they are ordinary
// function arguments (so bufferization and every later lowering treat them
// like inputs), and the module carries the manifest that tells the runtime
// which name goes to which argument.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/DynamicDims.h"
#include "attnc/Codegen/Common/Manifest.h"
#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Dialect/Attn/GenerationAttrs.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNHOISTWEIGHTS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// Weights are the same argument when name and gather agree.
static std::string weightKey(WeightOp weight) {
  std::string key = weight.getName().str();
  if (ArrayAttr names = weight.getConcatNamesAttr()) {
    key += "|concat" + std::to_string(weight.getConcatAxisAttr().getInt());
    for (Attribute name : names)
      key += "," + cast<StringAttr>(name).getValue().str();
  }
  if (auto ranges = weight.getGatherRanges()) {
    key += "|" + std::to_string(weight.getGatherAxisAttr().getInt()) + "|" +
           std::to_string(weight.getGatherExtentAttr().getInt());
    for (int64_t v : *ranges)
      key += "," + std::to_string(v);
  }
  if (weight.getTranspose())
    key += "|transpose";
  if (weight.getPanels())
    key += "|panels";
  if (weight.getPairs())
    key += "|pairs";
  if (weight.getConvert())
    key += "|convert";
  return key;
}

/// Finds the model entry: @main, else the only public function.
static FailureOr<func::FuncOp> findEntry(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main")) {
    if (main.isPrivate() || main.isExternal()) {
      main.emitOpError("is the model entry and must be a public function "
                       "with a body");
      return failure();
    }
    return main;
  }
  func::FuncOp entry;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    if (entry) {
      module.emitError("cannot tell the model entry: no @main and several "
                       "public functions (@")
          << entry.getName() << ", @" << func.getName() << ")";
      return failure();
    }
    entry = func;
  }
  if (!entry) {
    module.emitError("no model entry: expected a public func.func @main");
    return failure();
  }
  return entry;
}

/// Result index -> argument index of the entry's `attn.state_arg` results,
/// after checking that each names a distinct argument of the same type.
static FailureOr<DenseMap<unsigned, unsigned>>
findStateArgs(func::FuncOp entry) {
  DenseMap<unsigned, unsigned> states;
  llvm::DenseSet<unsigned> args;
  for (unsigned i = 0, e = entry.getNumResults(); i < e; ++i) {
    Attribute attr =
        entry.getResultAttr(i, AttnDialect::StateArgAttrHelper::getNameStr());
    if (!attr)
      continue;
    auto index = dyn_cast<IntegerAttr>(attr);
    if (!index || index.getInt() < 0 ||
        index.getInt() >= static_cast<int64_t>(entry.getNumArguments()))
      return entry.emitOpError("result ")
             << i << ": " << AttnDialect::StateArgAttrHelper::getNameStr()
             << " must be the index of an argument, got " << attr;
    unsigned arg = static_cast<unsigned>(index.getInt());
    if (entry.getArgumentTypes()[arg] != entry.getResultTypes()[i])
      return entry.emitOpError("result ")
             << i << " (" << entry.getResultTypes()[i]
             << ") is the state of argument " << arg << " ("
             << entry.getArgumentTypes()[arg] << "): the types must match";
    if (!args.insert(arg).second)
      return entry.emitOpError("argument ")
             << arg << " is the state of two results";
    states[i] = arg;
  }
  return states;
}

namespace {
struct AttnHoistWeightsPass
    : public mlir::attn::impl::AttnHoistWeightsBase<AttnHoistWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> maybeEntry = findEntry(module);
    if (failed(maybeEntry))
      return signalPassFailure();
    func::FuncOp entry = *maybeEntry;

    // Model state (a KV cache): a result tagged `attn.state_arg = i` is the
    // new value of argument i, which the compiled code updates in place.
    FailureOr<DenseMap<unsigned, unsigned>> stateArgs = findStateArgs(entry);
    if (failed(stateArgs))
      return signalPassFailure();
    llvm::DenseSet<unsigned> isStateArg;
    for (auto [result, arg] : *stateArgs)
      isStateArg.insert(arg);

    // Layers are isolated from above: their weights cannot become entry
    // arguments until the layers are inlined.
    LayerOp layer;
    entry.walk([&](LayerOp op) {
      layer = op;
      return WalkResult::interrupt();
    });
    if (layer) {
      layer.emitOpError("must be inlined before attn-hoist-weights (run "
                        "attn-lower-to-linalg first)");
      return signalPassFailure();
    }

    // Weights used outside the entry would be unbound at run time.
    WalkResult outside = module.walk([&](WeightOp weight) {
      auto func = weight->getParentOfType<func::FuncOp>();
      if (func != entry) {
        InFlightDiagnostic diag =
            weight.emitOpError("is outside the model entry @")
            << entry.getName() << "; only the entry's weights can be bound";
        // An encoder-decoder's --kv-cache import is two models.
        if (func && func.getName() == "encoder" && entry.getName() == "main")
          diag << " (@encoder and the decoder step @main are two models: "
                  "attn-compile lowers each and links both)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (outside.wasInterrupted())
      return signalPassFailure();

    // One argument per distinct (name, gather): a pruned projection binds
    // only some rows of its checkpoint tensor.
    std::vector<std::pair<std::string, SmallVector<WeightOp>>> byName;
    llvm::StringMap<size_t> slots;
    WalkResult clash = entry.walk([&](WeightOp weight) {
      std::string key = weightKey(weight);
      auto [it, inserted] = slots.try_emplace(key, byName.size());
      if (inserted)
        byName.emplace_back(key, SmallVector<WeightOp>());
      auto &uses = byName[it->second].second;
      if (!uses.empty() && uses.front().getType() != weight.getType()) {
        weight.emitOpError("weight '")
            << weight.getName() << "' is used with type " << weight.getType()
            << " here but " << uses.front().getType() << " elsewhere";
        return WalkResult::interrupt();
      }
      uses.push_back(weight);
      return WalkResult::advance();
    });
    if (clash.wasInterrupted())
      return signalPassFailure();
    llvm::StringSet<> weightNames;
    for (auto &[key, uses] : byName)
      weightNames.insert(uses.front().getName());

    SmallVector<Attribute> manifest;
    auto record =
        [&](attnrt::EntryKind kind, StringRef name, Type type, Location loc,
            WeightOp weight = {}, IntegerAttr idBound = {}, bool causal = false,
            IntegerAttr positionBound = {},
            ArrayRef<std::pair<int, int>> dimsFrom = {}, bool encoder = false,
            IntegerAttr recomputePast = {}) -> LogicalResult {
      FailureOr<DictionaryAttr> dict =
          buildManifestRecord(kind, name, type, weight, idBound, causal,
                              positionBound, dimsFrom, encoder, recomputePast);
      if (failed(dict))
        return emitError(loc)
               << "model " << attnrt::entryKindName(kind) << " '" << name
               << "' has type " << type << "; the runtime takes tensors of "
               << attnrt::dtypeNameList()
               << " (with static shapes, except the batch and sequence "
                  "dimensions of inputs and outputs)";
      manifest.push_back(*dict);
      return success();
    };

    Block &body = entry.getBody().front();
    Builder builder(&getContext());
    unsigned index = 0;
    for (auto &[key, uses] : byName) {
      Type type = uses.front().getType();
      StringRef name = uses.front().getName();
      if (failed(record(attnrt::EntryKind::Weight, name, type,
                        uses.front().getLoc(), uses.front())))
        return signalPassFailure();
      if (failed(entry.insertArgument(
              index, type,
              builder.getDictionaryAttr(builder.getNamedAttr(
                  kWeightArgAttrName, builder.getStringAttr(name))),
              uses.front().getLoc())))
        return signalPassFailure();
      BlockArgument arg = body.getArgument(index++);
      for (WeightOp use : uses) {
        use.getResult().replaceAllUsesWith(arg);
        use.erase();
      }
    }
    // Imported models name their inputs and outputs (`attn.name`, e.g. the
    // ONNX graph's "input_ids"); the runtime then accepts them by name.
    llvm::StringSet<> ioNames;
    auto ioName = [&](StringAttr given, StringRef fallback,
                      std::string &name) -> LogicalResult {
      name = given ? given.getValue().str() : fallback.str();
      if (given && (name.empty() || llvm::any_of(name, [](char c) {
                      return std::isspace(static_cast<unsigned char>(c)) ||
                             !std::isprint(static_cast<unsigned char>(c));
                    })))
        return entry.emitOpError("attn.name '")
               << name << "' is not a valid model input/output name (empty, "
               << "or with whitespace or unprintable characters)";
      if (!ioNames.insert(name).second || weightNames.contains(name))
        return entry.emitOpError("attn.name '")
               << name << "' names two model inputs/outputs or a weight";
      return success();
    };
    // Dynamic sizes: which input gives each, so that the runtime can check
    // inputs against each other and size the outputs.
    SmallVector<int> inputIndex;
    int numInputs = 0;
    for (unsigned i = index, e = entry.getNumArguments(); i < e; ++i)
      inputIndex.push_back(isStateArg.contains(i - index) ? -1 : numInputs++);
    FailureOr<ModelDynamicDims> dynamicDims =
        analyzeDynamicDims(module, entry, index, inputIndex);
    if (failed(dynamicDims))
      return signalPassFailure();
    for (unsigned i = index, e = entry.getNumArguments(); i < e; ++i) {
      std::string name;
      bool state = isStateArg.contains(i - index);
      auto idBound = entry.getArgAttrOfType<IntegerAttr>(
          i, AttnDialect::IdBoundAttrHelper::getNameStr());
      auto positionBound = entry.getArgAttrOfType<IntegerAttr>(
          i, AttnDialect::PositionBoundAttrHelper::getNameStr());
      // Ids that are also positions: one bound, the smaller.
      if (idBound && positionBound) {
        if (positionBound.getInt() < idBound.getInt())
          idBound = positionBound;
        positionBound = {};
      }
      if (failed(ioName(entry.getArgAttrOfType<StringAttr>(i, "attn.name"),
                        ((state ? "state" : "input") + Twine(i - index)).str(),
                        name)) ||
          failed(record(
              state ? attnrt::EntryKind::State : attnrt::EntryKind::Input, name,
              entry.getArgument(i).getType(), entry.getLoc(),
              /*weight=*/{}, idBound, /*causal=*/false, positionBound,
              dynamicDims->inputs[i - index],
              /*encoder=*/
              static_cast<bool>(entry.getArgAttr(
                  i, AttnDialect::EncoderInputAttrHelper::getNameStr())))))
        return signalPassFailure();
    }
    // A causal language model's [batch, seq, vocab] float outputs are the
    // logits that generation samples from.
    bool causalModel =
        AttnDialect::CausalLmAttrHelper(&getContext()).isAttrPresent(module);
    // When generation recomputes the sequence (Phi-3's LongRoPE), the
    // logits say past which length.
    IntegerAttr recomputePast =
        causalModel ? module->getAttrOfType<IntegerAttr>(kRecomputePastAttrName)
                    : IntegerAttr();
    unsigned outputs = 0;
    for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
      if (auto it = stateArgs->find(i); it != stateArgs->end()) {
        // The state is its argument's buffer; attn-drop-state-results
        // removes the result once bufferization has updated it in place.
        entry.setResultAttr(i, AttnDialect::StateArgAttrHelper::getNameStr(),
                            builder.getI64IntegerAttr(it->second + index));
        continue;
      }
      std::string name;
      auto tensor = dyn_cast<RankedTensorType>(type);
      bool causal = causalModel && tensor && tensor.getRank() == 3 &&
                    isa<FloatType>(tensor.getElementType());
      if (failed(ioName(entry.getResultAttrOfType<StringAttr>(i, "attn.name"),
                        ("output" + Twine(outputs++)).str(), name)) ||
          failed(record(attnrt::EntryKind::Output, name, type, entry.getLoc(),
                        /*weight=*/{}, /*idBound=*/{}, causal, {},
                        dynamicDims->outputs[i], /*encoder=*/false,
                        causal ? recomputePast : IntegerAttr())))
        return signalPassFailure();
    }
    module->setAttr(kManifestAttrName, builder.getArrayAttr(manifest));
    AttnDialect::EntryAttrHelper(&getContext())
        .setAttr(module, FlatSymbolRefAttr::get(entry.getNameAttr()));
  }
};
} // namespace
