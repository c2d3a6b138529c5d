//===- ModelBuilder.cpp - shared pieces of the HF model builders ----------===//

#include "ModelBuilder.h"

#include "attnc/Support/ShapeText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;
using attnc::shapeText;

static StringRef safetensorsDType(Type t) {
  if (t.isF32())
    return "F32";
  if (t.isF16())
    return "F16";
  return "BF16";
}

ModelBuilder::ModelBuilder(Checkpoint &ckpt, const ImportOptions &options,
                           ModuleOp module)
    : ckpt(ckpt), options(options), b(module.getContext()),
      elementType(ckpt.getElementType()) {
  b.setInsertionPointToEnd(module.getBody());
}

Location ModelBuilder::loc(StringRef name) const {
  return NameLoc::get(StringAttr::get(ckpt.getContext(), name));
}

FailureOr<Value> ModelBuilder::weight(StringRef name, ArrayRef<int64_t> shape,
                                      StringRef dims,
                                      std::optional<GatherView> gather,
                                      bool transpose) {
  std::string key = name.str();
  if (gather) {
    key += "#gather" + std::to_string(gather->axis);
    for (int64_t r : gather->ranges)
      key += ":" + std::to_string(r);
  }
  if (transpose)
    key += "#T";
  if (Value cached = weightCache.lookup(key))
    return cached;

  const attnrt::StTensor *t = ckpt.findTensor(name);
  if (!t)
    return emitError(ckpt.tensorLoc(name))
           << "the checkpoint has no tensor '" << name << "' (" << dims << " = "
           << shapeText(shape) << "), which the model needs";
  if (t->dtype != safetensorsDType(elementType))
    return emitError(ckpt.tensorLoc(name))
           << "tensor '" << name << "' has dtype " << t->dtype
           << ", but the checkpoint's weights are "
           << safetensorsDType(elementType)
           << " (all float tensors must share one dtype)";
  if (ArrayRef<int64_t>(t->shape) != shape)
    return emitError(ckpt.tensorLoc(name))
           << "tensor '" << name << "' has shape " << shapeText(t->shape)
           << ", but config.json implies " << dims << " = " << shapeText(shape);

  SmallVector<int64_t> resultShape(shape);
  IntegerAttr axisAttr, extentAttr;
  DenseI64ArrayAttr rangesAttr;
  if (gather) {
    int64_t total = 0;
    for (size_t i = 1; i < gather->ranges.size(); i += 2)
      total += gather->ranges[i];
    resultShape[gather->axis] = total;
    axisAttr = b.getI64IntegerAttr(gather->axis);
    extentAttr = b.getI64IntegerAttr(shape[gather->axis]);
    rangesAttr = b.getDenseI64ArrayAttr(gather->ranges);
  }
  if (transpose)
    std::swap(resultShape[0], resultShape[1]);
  Value result =
      WeightOp::create(b, loc(name), tensorType(resultShape),
                       b.getStringAttr(name), axisAttr, extentAttr, rangesAttr,
                       /*concat_names=*/nullptr, /*concat_axis=*/nullptr,
                       transpose ? b.getUnitAttr() : nullptr);
  weightCache[key] = result;
  return result;
}

FailureOr<std::string> ModelBuilder::detectPrefix(ArrayRef<StringRef> prefixes,
                                                  StringRef probe) {
  for (StringRef prefix : prefixes)
    if (ckpt.findTensor((prefix + probe).str()))
      return prefix.str();
  std::string tried;
  for (StringRef prefix : prefixes)
    tried += (tried.empty() ? "'" : ", '") + (prefix + probe).str() + "'";
  return emitError(ckpt.weightsLoc())
         << "the checkpoint has none of the tensors " << tried
         << ", so it does not hold this architecture's weights";
}

LogicalResult ModelBuilder::checkInputNames(ArrayRef<StringRef> inputNames) {
  for (const auto &entry : options.inputShapes)
    if (!llvm::is_contained(inputNames, entry.getKey())) {
      std::string known;
      for (StringRef n : inputNames)
        known += (known.empty() ? "" : ", ") + n.str();
      return emitError(ckpt.configLoc())
             << "--input-shape names input '" << entry.getKey()
             << "', but the model's inputs are: " << known;
    }
  return success();
}

FailureOr<std::pair<int64_t, int64_t>>
ModelBuilder::tokenIdsShape(StringRef positionsKey, int64_t maxPositions,
                            ArrayRef<StringRef> optionalInputs) {
  SmallVector<StringRef> names = {"input_ids"};
  llvm::append_range(names, optionalInputs);
  if (failed(checkInputNames(names)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      inputShape("input_ids", {"batch", "sequence"});
  if (failed(shape))
    return failure();
  int64_t batch = (*shape)[0], seq = (*shape)[1];
  if (!positionsKey.empty() && seq > maxPositions)
    return emitError(ckpt.keyLoc(positionsKey))
           << "sequence length " << seq << " (--input-shape input_ids) "
           << "exceeds " << positionsKey << " = " << maxPositions;
  return std::make_pair(batch, seq);
}

LogicalResult mlir::attn::hf::checkHeadsDivide(Checkpoint &ckpt,
                                               StringRef widthKey, int64_t d,
                                               StringRef headsKey,
                                               int64_t heads) {
  if (d % heads == 0)
    return success();
  return emitError(ckpt.keyLoc(headsKey))
         << widthKey << " " << d << " is not divisible by " << headsKey << " "
         << heads;
}

FailureOr<SmallVector<int64_t>>
ModelBuilder::inputShape(StringRef name, ArrayRef<StringRef> dimNames) {
  std::string symbolic;
  for (StringRef d : dimNames)
    symbolic += (symbolic.empty() ? "" : ", ") + d.str();
  auto it = options.inputShapes.find(name);
  if (it == options.inputShapes.end())
    return emitError(ckpt.configLoc())
           << "input '" << name << "' has symbolic dimensions [" << symbolic
           << "]; fix them with --input-shape " << name << "=<"
           << llvm::join(dimNames, ">x<") << ">";
  if (it->second.size() != dimNames.size())
    return emitError(ckpt.configLoc())
           << "--input-shape " << name << " has " << it->second.size()
           << " dimensions, but input '" << name << "' has " << dimNames.size()
           << " ([" << symbolic << "])";
  return it->second;
}

Value ModelBuilder::createMain(ArrayRef<int64_t> idsShape) {
  auto idsType = RankedTensorType::get(idsShape, b.getI64Type());
  Location l = ckpt.configLoc();
  mainFunc =
      func::FuncOp::create(b, l, "main", b.getFunctionType({idsType}, {}));
  // transformers' names, for the manifest and the model CLI.
  mainFunc.setArgAttr(0, "attn.name", b.getStringAttr("input_ids"));
  Block *entry = mainFunc.addEntryBlock();
  b.setInsertionPointToStart(entry);
  return entry->getArgument(0);
}

Value ModelBuilder::addInput(StringRef name, RankedTensorType type) {
  unsigned index = mainFunc.getNumArguments();
  if (failed(mainFunc.insertArgument(index, type, {}, ckpt.configLoc())))
    return Value();
  mainFunc.setArgAttr(index, "attn.name", b.getStringAttr(name));
  return mainFunc.getArgument(index);
}

void ModelBuilder::finishMain(Value result, StringRef resultName) {
  func::ReturnOp::create(b, ckpt.configLoc(), result);
  mainFunc.setFunctionType(b.getFunctionType(
      mainFunc.getFunctionType().getInputs(), {result.getType()}));
  mainFunc.setResultAttr(0, "attn.name", b.getStringAttr(resultName));
}

FailureOr<Value>
ModelBuilder::layer(int64_t index, Value h,
                    function_ref<FailureOr<Value>(Value)> buildBody,
                    ValueRange extras) {
  Location l = h.getLoc();
  SmallVector<Value> operands = {h};
  llvm::append_range(operands, extras);
  auto layerOp = LayerOp::create(b, l, TypeRange{h.getType()}, operands,
                                 b.getI64IntegerAttr(index), FloatAttr());
  Block *body = new Block();
  layerOp.getBody().push_back(body);
  Value x = body->addArgument(h.getType(), l);
  currentExtras.clear();
  for (Value extra : extras)
    currentExtras.push_back(body->addArgument(extra.getType(), l));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  // The body is isolated from above: it binds its own weights.
  llvm::StringMap<Value> outerCache = std::move(weightCache);
  weightCache.clear();
  FailureOr<Value> out = buildBody(x);
  weightCache = std::move(outerCache);
  if (failed(out))
    return failure();
  YieldOp::create(b, l, ValueRange{*out});
  return layerOp.getResult(0);
}

FailureOr<Activation> mlir::attn::hf::parseActivation(Checkpoint &ckpt,
                                                      StringRef key,
                                                      StringRef value) {
  // transformers' ACT2FN names for the activations attn has.
  if (value == "gelu")
    return Activation::gelu;
  if (value == "gelu_new" || value == "gelu_pytorch_tanh" ||
      value == "gelu_fast")
    return Activation::gelu_tanh;
  if (value == "relu")
    return Activation::relu;
  if (value == "silu" || value == "swish")
    return Activation::silu;
  return emitError(ckpt.keyLoc(key))
         << "config.json key \"" << key << "\" is \"" << value
         << "\"; supported activations: gelu, gelu_new, gelu_pytorch_tanh, "
            "gelu_fast, relu, silu, swish";
}
