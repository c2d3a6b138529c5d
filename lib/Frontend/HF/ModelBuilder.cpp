//===- ModelBuilder.cpp - shared pieces of the HF model builders ----------===//

#include "ModelBuilder.h"

#include "attnc/Dialect/Attn/GenerationAttrs.h"
#include "attnc/Support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;
using attnc::shapeText;

static Value
elementwise(OpBuilder &b, Location loc, Value x, double c,
            function_ref<Value(OpBuilder &, Location, Value, Value)> fn);

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
      elementType(ckpt.getElementType()), module(module) {
  b.setInsertionPointToEnd(module.getBody());
}

void ModelBuilder::setRecomputePast(int64_t length) {
  module->setAttr(kRecomputePastAttrName, b.getI64IntegerAttr(length));
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
  // A --kv-cache step may take a run-time number of tokens (prefill and
  // decode through one entry point); its caches fix the batch.
  FailureOr<SmallVector<int64_t>> shape =
      inputShape("input_ids", {"batch", "sequence"},
                 /*dynamicDim=*/options.kvCache > 0 ? std::optional<unsigned>(1)
                                                    : std::nullopt);
  if (failed(shape))
    return failure();
  int64_t batch = (*shape)[0], seq = (*shape)[1];
  if (!positionsKey.empty() && !ShapedType::isDynamic(seq) &&
      seq > maxPositions)
    return emitError(ckpt.keyLoc(positionsKey))
           << "sequence length " << seq << " (--input-shape input_ids) "
           << "exceeds " << positionsKey << " = " << maxPositions;
  return std::make_pair(batch, seq);
}

FailureOr<ModelBuilder::ModelStart>
ModelBuilder::start(ArrayRef<StringRef> prefixes, StringRef probe,
                    StringRef positionsKey, int64_t maxPositions,
                    ArrayRef<StringRef> optionalInputs) {
  FailureOr<std::pair<int64_t, int64_t>> shape =
      tokenIdsShape(positionsKey, maxPositions, optionalInputs);
  if (failed(shape) ||
      failed(checkDecodeStep(shape->second, positionsKey, maxPositions)))
    return failure();
  FailureOr<std::string> prefix = detectPrefix(prefixes, probe);
  if (failed(prefix))
    return failure();
  Value ids = createMain({shape->first, shape->second});
  return ModelStart{shape->first, shape->second, std::move(*prefix), ids};
}

Value ModelBuilder::paddingScoreBias(Location loc, Value mask) {
  auto maskType = cast<RankedTensorType>(mask.getType());
  int64_t batch = maskType.getDimSize(0), len = maskType.getDimSize(1);
  auto biasType = tensorType({batch, 1, 1, len});
  Value mask4 = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({batch, 1, 1, len}, maskType.getElementType()),
      mask, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  AffineMap identity = b.getMultiDimIdentityMap(4);
  Value init = tensor::EmptyOp::create(b, loc, biasType.getShape(),
                                       biasType.getElementType());
  return linalg::GenericOp::create(
             b, loc, biasType, mask4, init,
             ArrayRef<AffineMap>{identity, identity},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Type f = biasType.getElementType();
               Value m = arith::SIToFPOp::create(nb, nl, f, args[0]);
               Value one =
                   arith::ConstantOp::create(nb, nl, nb.getFloatAttr(f, 1.0));
               Value lowest = arith::ConstantOp::create(
                   nb, nl,
                   nb.getFloatAttr(f,
                                   APFloat::getLargest(
                                       cast<FloatType>(f).getFloatSemantics(),
                                       /*Negative=*/true)));
               Value off = arith::SubFOp::create(nb, nl, one, m);
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::MulFOp::create(nb, nl, off, lowest)});
             })
      .getResult(0);
}

Value ModelBuilder::addScoreBiases(Location loc, Value lhs, Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  unsigned rank = lhsType.getRank();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> lhsExprs, rhsExprs;
  for (unsigned i = 0; i < rank; ++i) {
    int64_t l = lhsType.getDimSize(i), r = rhsType.getDimSize(i);
    shape.push_back(std::max(l, r));
    // A size-1 dimension is read at 0 along the other's extent.
    lhsExprs.push_back(l == 1 ? b.getAffineConstantExpr(0)
                              : b.getAffineDimExpr(i));
    rhsExprs.push_back(r == 1 ? b.getAffineConstantExpr(0)
                              : b.getAffineDimExpr(i));
  }
  MLIRContext *ctx = b.getContext();
  auto type = tensorType(shape);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{lhs, rhs}, init,
             ArrayRef<AffineMap>{AffineMap::get(rank, 0, lhsExprs, ctx),
                                 AffineMap::get(rank, 0, rhsExprs, ctx),
                                 b.getMultiDimIdentityMap(rank)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
             })
      .getResult(0);
}

Value ModelBuilder::multiHeadAttention(Location l, Value x, Value memory,
                                       const AttentionWeights &w, int64_t heads,
                                       int64_t headDim, bool causal,
                                       Value scoreBias, FloatAttr scale) {
  int64_t width = cast<RankedTensorType>(x.getType()).getShape().back();
  SmallVector<Value> biases;
  if (w.bq)
    biases = {w.bq, w.bk, w.bv, w.bo};
  return MhaOp::create(
             b, l, x.getType(), x, memory, w.wq, w.wk, w.wv, w.wo, biases,
             scoreBias, /*kv_lengths=*/Value(), b.getI64IntegerAttr(heads),
             /*num_kv_heads=*/IntegerAttr(),
             headDim * heads != width ? b.getI64IntegerAttr(headDim)
                                      : IntegerAttr(),
             /*wide=*/UnitAttr(), causal ? b.getUnitAttr() : UnitAttr(),
             /*window=*/IntegerAttr(), scale)
      .getResult();
}

FailureOr<SmallVector<int64_t>>
ModelBuilder::inputShape(StringRef name, ArrayRef<StringRef> dimNames,
                         std::optional<unsigned> dynamicDim) {
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
  for (auto [i, dim] : llvm::enumerate(it->second))
    if (ShapedType::isDynamic(dim) && dynamicDim != i)
      return emitError(ckpt.configLoc())
             << "--input-shape " << name << ": dimension " << i << " ("
             << dimNames[i] << ") is '?', but "
             << (options.kvCache > 0 || name != "input_ids"
                     ? "only the sequence of a --kv-cache step's input_ids "
                       "may be chosen at run time"
                     : "checkpoint imports take run-time sequence lengths "
                       "only for a --kv-cache step (fix it, or add "
                       "--kv-cache N)");
  return it->second;
}

Value ModelBuilder::createMain(ArrayRef<int64_t> idsShape) {
  return createMain("input_ids",
                    RankedTensorType::get(idsShape, b.getI64Type()));
}

Value ModelBuilder::createMain(StringRef name, RankedTensorType type) {
  return createEntry("main", name, type);
}

Value ModelBuilder::createEntry(StringRef name, StringRef argName,
                                RankedTensorType type) {
  Location l = ckpt.configLoc();
  b.setInsertionPointToEnd(module.getBody());
  mainFunc = func::FuncOp::create(b, l, name, b.getFunctionType({type}, {}));
  // transformers' names, for the manifest and the model CLI.
  mainFunc.setArgAttr(0, "attn.name", b.getStringAttr(argName));
  Block *entry = mainFunc.addEntryBlock();
  b.setInsertionPointToStart(entry);
  // Weights are bound per function.
  weightCache.clear();
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
  SmallVector<Value> results = {result};
  for (auto &[cache, arg] : states)
    results.push_back(cache);
  func::ReturnOp::create(b, ckpt.configLoc(), results);
  mainFunc.setFunctionType(b.getFunctionType(
      mainFunc.getFunctionType().getInputs(), ValueRange(results).getTypes()));
  mainFunc.setResultAttr(0, "attn.name", b.getStringAttr(resultName));
  for (auto [i, state] : llvm::enumerate(states))
    mainFunc.setResultAttr(i + 1, AttnDialect::StateArgAttrHelper::getNameStr(),
                           b.getI64IntegerAttr(state.second));
}

FailureOr<std::pair<Value, Value>>
ModelBuilder::embedTokens(Value ids, StringRef module, int64_t vocab,
                          int64_t width, StringRef dims) {
  FailureOr<Value> table =
      weight(module.str() + ".weight", {vocab, width}, dims);
  if (failed(table))
    return failure();
  ArrayRef<int64_t> idsShape = cast<RankedTensorType>(ids.getType()).getShape();
  Value h = EmbeddingOp::create(b, loc(module),
                                tensorType({idsShape[0], idsShape[1], width}),
                                ids, *table);
  return std::make_pair(*table, h);
}

FailureOr<Value> ModelBuilder::layerNorm(Location loc, Value h,
                                         StringRef module, StringRef dims,
                                         double eps) {
  int64_t width = cast<RankedTensorType>(h.getType()).getShape().back();
  FailureOr<Value> g = weight(module.str() + ".weight", {width}, dims),
                   be = weight(module.str() + ".bias", {width}, dims);
  if (failed(g) || failed(be))
    return failure();
  return LayerNormOp::create(b, loc, h, *g, *be, b.getF64FloatAttr(eps))
      .getResult();
}

LogicalResult ModelBuilder::finishLmHeadAfterLayerNorm(
    Location loc, Value h, StringRef norm, StringRef normDims, double eps,
    Value table, bool tied, StringRef dims, StringRef headName) {
  FailureOr<Value> normed = layerNorm(loc, h, norm, normDims, eps);
  if (failed(normed))
    return failure();
  return finishLmHead(loc, *normed, table, tied, dims, headName);
}

LogicalResult ModelBuilder::finishLmHead(Location loc, Value h, Value table,
                                         bool tied, StringRef dims,
                                         StringRef headName, Value headBias,
                                         double softcap) {
  ArrayRef<int64_t> tableShape =
      cast<RankedTensorType>(table.getType()).getShape();
  FailureOr<Value> head =
      tied ? FailureOr<Value>(table) : weight(headName, tableShape, dims);
  if (failed(head))
    return failure();
  ArrayRef<int64_t> hShape = cast<RankedTensorType>(h.getType()).getShape();
  Value logits = LinearOp::create(
      b, loc, tensorType({hShape[0], hShape[1], tableShape[0]}), h, *head,
      headBias);
  if (softcap > 0.0)
    logits =
        elementwise(b, loc, logits, softcap,
                    [](OpBuilder &nb, Location nl, Value v, Value c) -> Value {
                      Value t = math::TanhOp::create(
                          nb, nl, arith::DivFOp::create(nb, nl, v, c));
                      return arith::MulFOp::create(nb, nl, t, c);
                    });
  finishMain(logits, "logits");
  return success();
}

LogicalResult ModelBuilder::checkDecodeStep(int64_t seq, StringRef positionsKey,
                                            int64_t maxPositions) {
  if (options.kvCache <= 0)
    return success();
  if (seq != 1 && !ShapedType::isDynamic(seq))
    return emitError(ckpt.configLoc())
           << "--kv-cache builds a step of one token (--input-shape "
              "input_ids=<batch>x1) or of a run-time number of tokens "
              "(<batch>x?), not a fixed sequence of "
           << seq;
  if (!positionsKey.empty() && options.kvCache > maxPositions)
    return emitError(ckpt.keyLoc(positionsKey))
           << "--kv-cache " << options.kvCache << " exceeds " << positionsKey
           << " = " << maxPositions;
  return success();
}

ModelBuilder::DecodeInputs ModelBuilder::addDecodeInputs(Value ids) {
  Location l = ckpt.configLoc();
  auto idsType = cast<RankedTensorType>(ids.getType());
  auto type = RankedTensorType::get({idsType.getDimSize(0)}, b.getI64Type());
  Value positions = addInput("positions", type);
  // The step's token count T: the ids' sequence length, a run-time value
  // when it is dynamic.
  OpFoldResult tokens =
      idsType.isDynamicDim(1)
          ? OpFoldResult(tensor::DimOp::create(b, l, ids, 1).getResult())
          : OpFoldResult(b.getIndexAttr(idsType.getDimSize(1)));
  Value count = idsType.isDynamicDim(1)
                    ? arith::IndexCastOp::create(b, l, b.getI64Type(),
                                                 cast<Value>(tokens))
                          .getResult()
                    : arith::ConstantOp::create(
                          b, l, b.getI64IntegerAttr(idsType.getDimSize(1)))
                          .getResult();
  Value init = tensor::EmptyOp::create(b, l, type.getShape(), b.getI64Type());
  Value counts = linalg::FillOp::create(b, l, count, init).getResult(0);
  // Each row sees its cache up to its last new token: positions + T.
  Value lengths =
      linalg::AddOp::create(b, l, TypeRange{type},
                            ValueRange{positions, counts}, ValueRange{init})
          .getResult(0);
  return {positions, lengths, tokens};
}

const ModelBuilder::DecodeInputs *ModelBuilder::addStepInputs(Value ids) {
  if (options.kvCache <= 0)
    return nullptr;
  stepInputs = addDecodeInputs(ids);
  return &stepInputs;
}

const ModelBuilder::DecodeInputs *
ModelBuilder::addLearnedPositions(Location l, Value &h, Value table, Value ids,
                                  int64_t offset) {
  const DecodeInputs *decode = addStepInputs(ids);
  h = LearnedPosOp::create(b, l, h, table, decode ? decode->positions : Value(),
                           offset);
  return decode;
}

FailureOr<ModelBuilder::DecoderStart>
ModelBuilder::startDecoder(ArrayRef<StringRef> prefixes, StringRef embedding,
                           int64_t vocab, int64_t width, StringRef dims) {
  FailureOr<ModelStart> s = start(prefixes, embedding.str() + ".weight");
  if (failed(s))
    return failure();
  FailureOr<std::pair<Value, Value>> embedded =
      embedTokens(s->ids, s->prefix + embedding.str(), vocab, width, dims);
  if (failed(embedded))
    return failure();
  const DecodeInputs *decode = addStepInputs(s->ids);
  return DecoderStart{s->prefix, embedded->first, embedded->second, decode};
}

FailureOr<Value> ModelBuilder::cachedAttention(
    int64_t layer, Value x, const DecodeInputs &decode, Value wq, Value bq,
    Value wk, Value bk, Value wv, Value bv, Value wo, Value bo, int64_t heads,
    int64_t kvHeads, int64_t headDim, FloatAttr scale,
    std::optional<RopeConfig> rope) {
  AttentionOptions opts;
  opts.scale = scale;
  opts.rope = rope;
  return attention(layer, x, &decode, {wq, bq, wk, bk, wv, bv, wo, bo}, heads,
                   kvHeads, headDim, opts);
}

FailureOr<Value> ModelBuilder::attention(int64_t layer, Value x,
                                         const DecodeInputs *decode,
                                         const AttentionWeights &w,
                                         int64_t heads, int64_t kvHeads,
                                         int64_t headDim,
                                         const AttentionOptions &opts) {
  Location l = x.getLoc();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t batch = xType.getDimSize(0), seq = xType.getDimSize(1);
  // The step's token count T (run-time when `seq` is dynamic), or the
  // whole sequence.
  OpFoldResult tokens = decode ? decode->tokens : b.getIndexAttr(seq);
  Value positions = decode ? decode->positions : Value();
  // [B, T, n * dh] -> [B, n, T, dh], normed and rotated (at the run-time
  // positions in a step).
  auto split = [&](Value wt, Value bias, int64_t n, bool rotate, bool isKey) {
    Value t = splitHeads(l, x, wt, bias, n, headDim, tokens);
    if (rotate && opts.headNorm)
      t = opts.headNorm(t, isKey);
    if (rotate && opts.rope) {
      int64_t rotaryDim = opts.rotaryDim ? *opts.rotaryDim : headDim;
      const RopeConfig &rope = *opts.rope;
      SmallVector<double> invFreq = rope.inverseFrequencies(rotaryDim);
      SmallVector<double> longFreq = rope.longInverseFrequencies(rotaryDim);
      bool dynamic = rope.scaling == RopeConfig::Scaling::Dynamic;
      t = RotaryOp::create(
          b, l, t.getType(), t, positions, b.getF64FloatAttr(rope.theta),
          b.getI64IntegerAttr(0),
          rotaryDim != headDim ? b.getI64IntegerAttr(rotaryDim) : IntegerAttr(),
          invFreq.empty() ? DenseF64ArrayAttr()
                          : b.getDenseF64ArrayAttr(invFreq),
          b.getF64FloatAttr(rope.cosSinScale()),
          rope.lengthThreshold ? b.getI64IntegerAttr(*rope.lengthThreshold)
                               : IntegerAttr(),
          longFreq.empty() ? DenseF64ArrayAttr()
                           : b.getDenseF64ArrayAttr(longFreq),
          dynamic ? b.getF64FloatAttr(rope.factor) : FloatAttr());
    }
    return t;
  };
  Value q = split(w.wq, w.bq, heads, true, false);
  Value k = split(w.wk, w.bk, kvHeads, true, true);
  Value v = split(w.wv, w.bv, kvHeads, false, false);
  IntegerAttr window =
      opts.window > 0 ? b.getI64IntegerAttr(opts.window) : IntegerAttr();
  Value o;
  if (decode) {
    auto cacheType = tensorType({batch, kvHeads, options.kvCache, headDim});
    std::string prefix = "past_key_values." + std::to_string(layer) + ".";
    Value kCache = addInput(prefix + "key", cacheType);
    Value vCache = addInput(prefix + "value", cacheType);
    if (!kCache || !vCache)
      return failure();
    Value kNew = CacheWriteOp::create(b, l, cacheType, kCache, k, positions);
    Value vNew = CacheWriteOp::create(b, l, cacheType, vCache, v, positions);
    states.push_back({kNew, cast<BlockArgument>(kCache).getArgNumber()});
    states.push_back({vNew, cast<BlockArgument>(vCache).getArgNumber()});
    // Query i of row b sits at positions[b] + i (query_positions: causal
    // per row from the row's own start, not from the end of the cache) and
    // sees the cache rows up to it; kv_lengths (positions + T) bounds the
    // keys a row's queries can see at all, which the flash lowering uses to
    // skip the cache beyond it.
    Value bias = opts.scoreBias ? opts.scoreBias(options.kvCache) : Value();
    o = SdpaOp::create(b, l, tensorType({batch, heads, seq, headDim}), q, kNew,
                       vNew, bias, decode->kvLengths, positions, ValueRange{},
                       ScoreFunction::scaled_dot, opts.scale,
                       /*causal=*/true, window);
  } else {
    Value bias = opts.scoreBias ? opts.scoreBias(seq) : Value();
    o = SdpaOp::create(b, l, tensorType({batch, heads, seq, headDim}), q, k, v,
                       bias, /*kv_lengths=*/Value(),
                       /*query_positions=*/Value(), ValueRange{},
                       ScoreFunction::scaled_dot, opts.scale,
                       /*causal=*/true, window);
  }
  return mergeHeads(l, o, w.wo, w.bo, xType, tokens);
}

Value mlir::attn::hf::emptyWithTokens(OpBuilder &b, Location l,
                                      ArrayRef<int64_t> shape, unsigned seqDim,
                                      OpFoldResult tokens, Type elementType) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : shape)
    sizes.push_back(b.getIndexAttr(size));
  sizes[seqDim] = tokens;
  return tensor::EmptyOp::create(b, l, sizes, elementType);
}

Value ModelBuilder::splitHeads(Location l, Value x, Value w, Value bias,
                               int64_t n, int64_t headDim,
                               OpFoldResult tokens) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t batch = xType.getDimSize(0), seq = xType.getDimSize(1);
  Value flat =
      LinearOp::create(b, l, tensorType({batch, seq, n * headDim}), x, w, bias);
  SmallVector<OpFoldResult> partSizes = {b.getIndexAttr(batch), tokens,
                                         b.getIndexAttr(n),
                                         b.getIndexAttr(headDim)};
  Value parts = tensor::ExpandShapeOp::create(
      b, l, tensorType({batch, seq, n, headDim}), flat,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}}, partSizes);
  Value init =
      emptyWithTokens(b, l, {batch, n, seq, headDim}, 2, tokens, elementType);
  return linalg::TransposeOp::create(b, l, parts, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

Value ModelBuilder::mergeHeads(Location l, Value o, Value wo, Value bo,
                               RankedTensorType xType, OpFoldResult tokens) {
  ArrayRef<int64_t> oShape = cast<RankedTensorType>(o.getType()).getShape();
  Value merged =
      linalg::TransposeOp::create(
          b, l, o,
          emptyWithTokens(b, l, {oShape[0], oShape[2], oShape[1], oShape[3]}, 1,
                          tokens, elementType),
          ArrayRef<int64_t>{0, 2, 1, 3})
          .getResult()[0];
  merged = tensor::CollapseShapeOp::create(
      b, l, merged, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  return LinearOp::create(b, l, xType, merged, wo, bo).getResult();
}

/// `x` with `fn(element, constant c)` applied elementwise.
static Value
elementwise(OpBuilder &b, Location loc, Value x, double c,
            function_ref<Value(OpBuilder &, Location, Value, Value)> fn) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, type, x, init, ArrayRef<AffineMap>{identity, identity},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value cst = arith::ConstantOp::create(
                   nb, nl, nb.getFloatAttr(type.getElementType(), c));
               linalg::YieldOp::create(nb, nl,
                                       ValueRange{fn(nb, nl, args[0], cst)});
             })
      .getResult(0);
}

Value ModelBuilder::scaleBy(Location loc, Value x, double factor) {
  return elementwise(b, loc, x, factor,
                     [](OpBuilder &nb, Location nl, Value v, Value c) {
                       return arith::MulFOp::create(nb, nl, v, c).getResult();
                     });
}

Value ModelBuilder::addConstant(Location loc, Value x, double c) {
  return elementwise(b, loc, x, c,
                     [](OpBuilder &nb, Location nl, Value v, Value cst) {
                       return arith::AddFOp::create(nb, nl, v, cst).getResult();
                     });
}

Value ModelBuilder::linear(Location loc, Value x, Value w, Value bias) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t n = cast<RankedTensorType>(w.getType()).getDimSize(0);
  return LinearOp::create(
      b, loc, tensorType({xType.getDimSize(0), xType.getDimSize(1), n}), x, w,
      bias);
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
  size_t firstState = states.size();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  // The body is isolated from above: it binds its own weights.
  llvm::StringMap<Value> outerCache = std::move(weightCache);
  weightCache.clear();
  FailureOr<Value> out = buildBody(x);
  weightCache = std::move(outerCache);
  if (failed(out))
    return failure();
  // A --kv-cache step's layer reads step inputs (positions, lengths, its
  // caches) that are @main's, and updates its caches: the values it reads
  // from outside become further inputs, the caches it wrote further
  // results, so that the layer stays isolated and one body can serve
  // every layer (attn-outline-layers).
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(layerOp.getBody(), captured);
  SmallVector<Value> results = {*out};
  for (auto &state : llvm::drop_begin(states, firstState))
    results.push_back(state.first);
  YieldOp::create(b, l, results);
  if (captured.empty() && results.size() == 1)
    return layerOp.getResult(0);

  // The caches come right after the residual stream, in the order of the
  // results that update them, so that result i stays input i updated (what
  // LayerDrop forwards when it drops a layer: its caches unchanged).
  unsigned position = 1;
  for (auto &state : llvm::drop_begin(states, firstState)) {
    Value cache = mainFunc.getArgument(state.second);
    Value arg = body->insertArgument(position, cache.getType(), cache.getLoc());
    replaceAllUsesInRegionWith(cache, arg, layerOp.getBody());
    operands.insert(operands.begin() + position++, cache);
    captured.remove(cache);
  }
  for (Value value : captured) {
    Value arg = body->addArgument(value.getType(), value.getLoc());
    replaceAllUsesInRegionWith(value, arg, layerOp.getBody());
    operands.push_back(value);
  }
  b.setInsertionPoint(layerOp);
  auto extended =
      LayerOp::create(b, l, ValueRange(results).getTypes(), operands,
                      layerOp.getIndexAttr(), layerOp.getScoreAttr());
  extended.getBody().takeBody(layerOp.getBody());
  layerOp.erase();
  for (auto [state, result] :
       llvm::zip_equal(llvm::drop_begin(states, firstState),
                       extended.getResults().drop_front()))
    state.first = result;
  return extended.getResult(0);
}

FailureOr<Value> ModelBuilder::layerNormDecoderLayer(
    Location l, Value x, const LayerNormLayerWeights &w, double eps,
    Activation activation, FfnInput input,
    function_ref<FailureOr<Value>(Value)> attention) {
  Value n1 =
      LayerNormOp::create(b, l, x, w.ln1, w.ln1Bias, b.getF64FloatAttr(eps));
  FailureOr<Value> attn = attention(n1);
  if (failed(attn))
    return failure();
  Value mid = AddOp::create(b, l, x, *attn);
  Value n2 =
      input == FfnInput::SharedNorm
          ? n1
          : LayerNormOp::create(b, l, input == FfnInput::Parallel ? x : mid,
                                w.ln2, w.ln2Bias, b.getF64FloatAttr(eps))
                .getResult();
  Value ffn = FfnOp::create(b, l, x.getType(), n2, /*gate_weight=*/Value(),
                            /*gate_bias=*/Value(), w.up, w.upBias, w.down,
                            w.downBias, activation);
  return AddOp::create(b, l, mid, ffn).getResult();
}

FailureOr<Value> ModelBuilder::layerNormDecoderLayer(
    Location l, Value x, const LayerNormLayerWeights &w, double eps,
    Activation activation, FfnInput input, int64_t layer,
    const DecodeInputs *decode, const AttentionWeights &attn, int64_t heads,
    int64_t kvHeads, int64_t headDim, const AttentionOptions &opts) {
  return layerNormDecoderLayer(l, x, w, eps, activation, input, [&](Value n1) {
    return attention(layer, n1, decode, attn, heads, kvHeads, headDim, opts);
  });
}

FailureOr<Value> ModelBuilder::decoderLayers(
    Value h, int64_t count, StringRef prefix,
    function_ref<FailureOr<Value>(int64_t, const LayerWeights &, Value)>
        buildLayer,
    ValueRange extras, int64_t firstIndex) {
  for (int64_t i = 0; i < count; ++i) {
    LayerWeights w(*this, prefix.str() + std::to_string(i) + ".");
    auto body = [&](Value x) { return buildLayer(i, w, x); };
    FailureOr<Value> out = layer(firstIndex + i, h, body, extras);
    if (failed(out))
      return failure();
    h = *out;
  }
  return h;
}

FailureOr<ModelBuilder::AttentionWeights>
LayerWeights::fusedAttention(StringRef qkv, int64_t rows, int64_t width,
                             StringRef rowsDim,
                             function_ref<GatherView(int64_t)> partRows,
                             StringRef out, bool bias) const {
  std::string qkvWeight = qkv.str() + ".weight", qkvBias = qkv.str() + ".bias",
              weightDims = ("[" + rowsDim + ", hidden_size]").str(),
              biasDims = ("[" + rowsDim + "]").str();
  FailureOr<Value> parts[8];
  for (int64_t part = 0; part < 3; ++part)
    parts[part] = (*this)(qkvWeight, {rows, width}, weightDims, partRows(part));
  for (int64_t part = 0; part < 3; ++part)
    parts[3 + part] = optional(bias, qkvBias, {rows}, biasDims, partRows(part));
  parts[6] = (*this)(out.str() + ".weight", {width, width},
                     "[hidden_size, hidden_size]");
  parts[7] = optional(bias, out.str() + ".bias", {width}, "[hidden_size]");
  if (!allFound(parts))
    return failure();
  return ModelBuilder::AttentionWeights{*parts[0], *parts[3], *parts[1],
                                        *parts[4], *parts[2], *parts[5],
                                        *parts[6], *parts[7]};
}

GatherView mlir::attn::hf::interleavedQkvRows(int64_t heads, int64_t headDim,
                                              int64_t part) {
  GatherView view{0, {}};
  for (int64_t h = 0; h < heads; ++h)
    view.ranges.append({(3 * h + part) * headDim, headDim});
  return view;
}

FailureOr<MegatronLayerWeights> mlir::attn::hf::readMegatronLayer(
    const LayerWeights &w, StringRef attention, int64_t width, int64_t ff,
    StringRef ffDim, int64_t heads, int64_t headDim, bool qkvBias) {
  StringRef dv = "[hidden_size]";
  const int64_t d = width;
  FailureOr<Value> g1 = w("input_layernorm.weight", {d}, dv),
                   be1 = w("input_layernorm.bias", {d}, dv),
                   g2 = w("post_attention_layernorm.weight", {d}, dv),
                   be2 = w("post_attention_layernorm.bias", {d}, dv);
  FailureOr<ModelBuilder::AttentionWeights> aw = w.fusedAttention(
      attention.str() + ".query_key_value", 3 * d, d, "3 * hidden_size",
      [&](int64_t part) { return interleavedQkvRows(heads, headDim, part); },
      attention.str() + ".dense", qkvBias);
  std::string ffName = ffDim.str();
  FailureOr<Value> w1 = w("mlp.dense_h_to_4h.weight", {ff, d},
                          "[" + ffName + ", hidden_size]"),
                   b1 = w("mlp.dense_h_to_4h.bias", {ff}, "[" + ffName + "]"),
                   w2 = w("mlp.dense_4h_to_h.weight", {d, ff},
                          "[hidden_size, " + ffName + "]"),
                   b2 = w("mlp.dense_4h_to_h.bias", {d}, dv);
  if (!allFound({g1, be1, g2, be2, w1, b1, w2, b2}) || failed(aw))
    return failure();
  return MegatronLayerWeights{{*g1, *be1, *g2, *be2, *w1, *b1, *w2, *b2}, *aw};
}

std::optional<Activation> mlir::attn::hf::activationByName(StringRef value) {
  // transformers' ACT2FN names for the activations attn has.
  return llvm::StringSwitch<std::optional<Activation>>(value)
      .Case("gelu", Activation::gelu)
      .Cases({"gelu_new", "gelu_pytorch_tanh", "gelu_fast"},
             Activation::gelu_tanh)
      .Case("relu", Activation::relu)
      .Cases({"silu", "swish"}, Activation::silu)
      .Default(std::nullopt);
}

const char *const mlir::attn::hf::activationNames =
    "gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu, swish";

FailureOr<Activation> mlir::attn::hf::parseActivation(Checkpoint &ckpt,
                                                      StringRef key,
                                                      StringRef value) {
  if (std::optional<Activation> act = activationByName(value))
    return *act;
  return emitError(ckpt.keyLoc(key))
         << "config.json key \"" << key << "\" is \"" << value
         << "\"; supported activations: " << activationNames;
}
