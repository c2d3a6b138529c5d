//===- Seq2SeqBuilder.cpp - encoder-decoder pieces of the HF builders -----===//
//
// What the encoder-decoder families (T5, BART and their kin) add to
// ModelBuilder: the encoder and decoder inputs, T5's relative position
// buckets, and the decoder step over the encoder's cross-attention keys and
// values.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "attnc/Dialect/Attn/GenerationAttrs.h"
#include "attnc/Support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;
using attnc::shapeText;

FailureOr<ModelBuilder::Seq2SeqStart>
ModelBuilder::startSeq2Seq(ArrayRef<StringRef> prefixes, StringRef probe,
                           StringRef positionsKey, int64_t maxPositions) {
  if (failed(checkInputNames(
          {"input_ids", "attention_mask", "decoder_input_ids"})))
    return failure();
  // Checked here: inputShape's hint (a decoder's --kv-cache step) does not
  // apply. A step's decoder_input_ids may take a run-time token count.
  const bool step = options.kvCache > 0;
  for (StringRef name : {"input_ids", "attention_mask", "decoder_input_ids"}) {
    auto it = options.inputShapes.find(name);
    if (it == options.inputShapes.end() ||
        !llvm::any_of(it->second, ShapedType::isDynamic))
      continue;
    if (step && name == "decoder_input_ids" && it->second.size() == 2 &&
        !ShapedType::isDynamic(it->second[0]))
      continue;
    return emitError(ckpt.configLoc())
           << "--input-shape " << name
           << " has a '?' dimension, but encoder-decoder imports take "
              "static shapes only"
           << (step ? " (but for the sequence of a --kv-cache step's "
                      "decoder_input_ids)"
                    : "");
  }
  FailureOr<SmallVector<int64_t>> source =
      inputShape("input_ids", {"batch", "source_sequence"});
  if (failed(source))
    return failure();
  FailureOr<SmallVector<int64_t>> target =
      inputShape("decoder_input_ids", {"batch", "target_sequence"},
                 step ? std::optional<unsigned>(1) : std::nullopt);
  if (failed(target) ||
      failed(checkDecodeStep((*target)[1], positionsKey, maxPositions)))
    return failure();
  if ((*source)[0] != (*target)[0])
    return emitError(ckpt.configLoc())
           << "--input-shape gives input_ids batch " << (*source)[0]
           << " but decoder_input_ids batch " << (*target)[0]
           << "; the encoder and the decoder take the same batch";
  for (auto [name, len] : {std::make_pair("input_ids", (*source)[1]),
                           std::make_pair("decoder_input_ids", (*target)[1])})
    if (!positionsKey.empty() && !ShapedType::isDynamic(len) &&
        len > maxPositions)
      return emitError(ckpt.keyLoc(positionsKey))
             << "sequence length " << len << " (--input-shape " << name
             << ") exceeds " << positionsKey << " = " << maxPositions;
  auto maskShape = options.inputShapes.find("attention_mask");
  if (maskShape != options.inputShapes.end() &&
      ArrayRef<int64_t>(maskShape->second) != ArrayRef<int64_t>(*source))
    return emitError(ckpt.configLoc())
           << "--input-shape attention_mask must equal input_ids' shape "
           << (*source)[0] << "x" << (*source)[1];
  FailureOr<std::string> prefix = detectPrefix(prefixes, probe);
  if (failed(prefix))
    return failure();
  // A step's encoder is a function of its own.
  Value ids = createEntry(step ? "encoder" : "main", "input_ids",
                          RankedTensorType::get(*source, b.getI64Type()));
  // The encoder's input: generation sets it once per prompt, and the
  // causal_lm verifier lets attention read it unmasked.
  mainFunc.setArgAttr(cast<BlockArgument>(ids).getArgNumber(),
                      AttnDialect::EncoderInputAttrHelper::getNameStr(),
                      b.getUnitAttr());
  // transformers' forward order: input_ids, attention_mask,
  // decoder_input_ids. The mask is the encoder's too.
  Value sourcePadding;
  if (maskShape != options.inputShapes.end()) {
    Value mask = addInput("attention_mask",
                          RankedTensorType::get(*source, b.getI64Type()));
    if (!mask)
      return failure();
    mainFunc.setArgAttr(cast<BlockArgument>(mask).getArgNumber(),
                        AttnDialect::EncoderInputAttrHelper::getNameStr(),
                        b.getUnitAttr());
    sourcePadding = paddingScoreBias(ckpt.configLoc(), mask);
  }
  Value decoderIds;
  if (!step) {
    decoderIds = addInput("decoder_input_ids",
                          RankedTensorType::get(*target, b.getI64Type()));
    if (!decoderIds)
      return failure();
  }
  return Seq2SeqStart{(*source)[0],       (*source)[1], (*target)[1],
                      std::move(*prefix), ids,          decoderIds,
                      sourcePadding};
}

int64_t mlir::attn::hf::relativePositionBucket(int64_t relative,
                                               int64_t buckets,
                                               int64_t maxDistance,
                                               bool bidirectional) {
  int64_t bucket = 0, n;
  if (bidirectional) {
    buckets /= 2;
    bucket = relative > 0 ? buckets : 0;
    n = std::abs(relative);
  } else {
    n = std::max<int64_t>(-relative, 0);
  }
  const int64_t maxExact = buckets / 2;
  if (n < maxExact)
    return bucket + n;
  // As transformers computes it: log in float32, the ratio of the logs
  // and the product with a float32 tensor.
  float large = std::log(float(n) / float(maxExact)) /
                float(std::log(double(maxDistance) / double(maxExact))) *
                float(buckets - maxExact);
  return bucket +
         std::min<int64_t>(maxExact + static_cast<int64_t>(large), buckets - 1);
}

Value ModelBuilder::relativePositionBias(Location l, Value table,
                                         int64_t queries, int64_t keys,
                                         int64_t maxDistance,
                                         bool bidirectional) {
  ArrayRef<int64_t> tableShape =
      cast<RankedTensorType>(table.getType()).getShape();
  int64_t buckets = tableShape[0], heads = tableShape[1];
  SmallVector<int64_t> ids;
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j)
      ids.push_back(
          relativePositionBucket(j - i, buckets, maxDistance, bidirectional));
  auto bucketType = RankedTensorType::get({queries, keys}, b.getI64Type());
  Value bucketIds = arith::ConstantOp::create(
      b, l, DenseElementsAttr::get(bucketType, ArrayRef<int64_t>(ids)));
  Value looked = EmbeddingOp::create(b, l, tensorType({queries, keys, heads}),
                                     bucketIds, table);
  // [Q, K, H] -> [1, H, Q, K].
  Value perHead =
      linalg::TransposeOp::create(
          b, l, looked,
          tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{heads, queries, keys},
                                  elementType),
          ArrayRef<int64_t>{2, 0, 1})
          .getResult()[0];
  return tensor::ExpandShapeOp::create(
      b, l, tensorType({1, heads, queries, keys}), perHead,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}

std::string ModelBuilder::crossKeyName(int64_t layer) {
  return "encoder_kv." + std::to_string(layer) + ".key";
}

std::string ModelBuilder::crossValueName(int64_t layer) {
  return "encoder_kv." + std::to_string(layer) + ".value";
}

void ModelBuilder::finishEncoder(
    ArrayRef<std::pair<std::string, Value>> outputs) {
  SmallVector<Value> values;
  for (const auto &output : outputs)
    values.push_back(output.second);
  func::ReturnOp::create(b, ckpt.configLoc(), values);
  mainFunc.setFunctionType(b.getFunctionType(
      mainFunc.getFunctionType().getInputs(), ValueRange(values).getTypes()));
  for (auto [i, output] : llvm::enumerate(outputs))
    mainFunc.setResultAttr(i, "attn.name", b.getStringAttr(output.first));
}

FailureOr<ModelBuilder::Seq2SeqStep>
ModelBuilder::startSeq2SeqStep(const Seq2SeqStart &start, int64_t layers,
                               int64_t heads, int64_t headDim) {
  Seq2SeqStep step;
  step.decoderIds = createEntry(
      "main", "decoder_input_ids",
      RankedTensorType::get({start.batch, start.targetLen}, b.getI64Type()));
  step.decode = addStepInputs(step.decoderIds);
  // Bound once per prompt, as the encoder's own inputs are.
  auto addEncoderInput = [&](StringRef name, RankedTensorType type) -> Value {
    Value arg = addInput(name, type);
    if (arg)
      mainFunc.setArgAttr(cast<BlockArgument>(arg).getArgNumber(),
                          AttnDialect::EncoderInputAttrHelper::getNameStr(),
                          b.getUnitAttr());
    return arg;
  };
  if (start.sourcePadding) {
    Value mask = addEncoderInput(
        "attention_mask",
        RankedTensorType::get({start.batch, start.sourceLen}, b.getI64Type()));
    if (!mask)
      return failure();
    step.sourcePadding = paddingScoreBias(ckpt.configLoc(), mask);
  }
  auto type = tensorType({start.batch, heads, start.sourceLen, headDim});
  for (int64_t i = 0; i < layers; ++i) {
    Value k = addEncoderInput(crossKeyName(i), type);
    Value v = addEncoderInput(crossValueName(i), type);
    if (!k || !v)
      return failure();
    step.crossKeys.push_back(k);
    step.crossValues.push_back(v);
  }
  return step;
}

Value ModelBuilder::projectHeads(Location loc, Value memory, Value w,
                                 Value bias, int64_t heads, int64_t headDim) {
  int64_t len = cast<RankedTensorType>(memory.getType()).getDimSize(1);
  return splitHeads(loc, memory, w, bias, heads, headDim, b.getIndexAttr(len));
}

Value ModelBuilder::stepCrossAttention(Location loc, Value x, Value keys,
                                       Value values, Value wq, Value bq,
                                       Value wo, Value bo, int64_t heads,
                                       int64_t headDim, Value scoreBias,
                                       FloatAttr scale) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t batch = xType.getDimSize(0), seq = xType.getDimSize(1);
  OpFoldResult tokens =
      xType.isDynamicDim(1)
          ? OpFoldResult(tensor::DimOp::create(b, loc, x, 1).getResult())
          : OpFoldResult(b.getIndexAttr(seq));
  Value q = splitHeads(loc, x, wq, bq, heads, headDim, tokens);
  Value o = SdpaOp::create(b, loc, tensorType({batch, heads, seq, headDim}), q,
                           keys, values, scoreBias, /*kv_lengths=*/Value(),
                           /*query_positions=*/Value(), ValueRange{},
                           ScoreFunction::scaled_dot, scale,
                           /*causal=*/false, IntegerAttr());
  return mergeHeads(loc, o, wo, bo, xType, tokens);
}

Value ModelBuilder::stepRelativePositionBias(Location l, Value table,
                                             const DecodeInputs &decode,
                                             int64_t maxDistance) {
  ArrayRef<int64_t> tableShape =
      cast<RankedTensorType>(table.getType()).getShape();
  const int64_t buckets = tableShape[0], heads = tableShape[1];
  const int64_t keys = options.kvCache;
  // A query sees keys at or before it: the distance n = query - key in
  // [0, keys) decides the bucket (later keys are masked; they take n = 0).
  SmallVector<int64_t> bucketOf;
  for (int64_t n = 0; n < keys; ++n)
    bucketOf.push_back(relativePositionBucket(-n, buckets, maxDistance,
                                              /*bidirectional=*/false));
  auto bucketType = RankedTensorType::get({keys}, b.getI64Type());
  Value bucketTable = arith::ConstantOp::create(
      b, l, DenseElementsAttr::get(bucketType, ArrayRef<int64_t>(bucketOf)));
  int64_t batch =
      cast<RankedTensorType>(decode.positions.getType()).getDimSize(0);
  Value init = emptyWithTokens(b, l, {batch, heads, ShapedType::kDynamic, keys},
                               2, decode.tokens, elementType);
  MLIRContext *ctx = b.getContext();
  AffineMap rowMap = AffineMap::get(4, 0, getAffineDimExpr(0, ctx));
  AffineMap identity = b.getMultiDimIdentityMap(4);
  auto resultType = cast<RankedTensorType>(init.getType());
  return linalg::GenericOp::create(
             b, l, resultType, decode.positions, init,
             ArrayRef<AffineMap>{rowMap, identity},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Type i64 = nb.getI64Type();
               auto index = [&](unsigned dim) -> Value {
                 return arith::IndexCastOp::create(
                     nb, nl, i64, linalg::IndexOp::create(nb, nl, dim));
               };
               auto constant = [&](int64_t v) -> Value {
                 return arith::ConstantOp::create(nb, nl,
                                                  nb.getI64IntegerAttr(v));
               };
               Value query = arith::AddIOp::create(nb, nl, args[0], index(2));
               Value n = arith::SubIOp::create(nb, nl, query, index(3));
               n = arith::MaxSIOp::create(nb, nl, n, constant(0));
               n = arith::MinSIOp::create(nb, nl, n, constant(keys - 1));
               Value at =
                   arith::IndexCastOp::create(nb, nl, nb.getIndexType(), n);
               Value bucket =
                   tensor::ExtractOp::create(nb, nl, bucketTable, at);
               bucket = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                   bucket);
               Value head = linalg::IndexOp::create(nb, nl, 1);
               Value bias = tensor::ExtractOp::create(nb, nl, table,
                                                      ValueRange{bucket, head});
               linalg::YieldOp::create(nb, nl, bias);
             })
      .getResult(0);
}
