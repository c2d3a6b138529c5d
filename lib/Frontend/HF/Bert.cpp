//===- Bert.cpp - BertModel checkpoints -----------------------------------===//
//
// BertModel (transformers' modeling_bert): word + learned position + token
// type embeddings and a LayerNorm, then post-LN encoder layers (self-attention
// with biases, residual, LayerNorm, GELU FFN, residual, LayerNorm). The result
// is the last hidden state; the pooler is not part of it and is not bound.
// `token_type_ids` and `attention_mask` are inputs when --input-shape gives
// them (same shape as input_ids), else all 0 and all 1, as when BertModel is
// called without them. The mask becomes transformers' additive bias,
// (1 - mask) * float_min over the keys, as attn.mha's score_bias.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildBert(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  auto dims = c.getPositiveInts(
      {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
       "intermediate_size", "max_position_embeddings"});
  FailureOr<int64_t> types = c.getPositiveInt("type_vocab_size", 2);
  if (failed(dims) || failed(types))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], layers = (*dims)[2],
                heads = (*dims)[3], ff = (*dims)[4], positions = (*dims)[5];
  FailureOr<double> eps = c.getFloat("layer_norm_eps", 1e-12);
  FailureOr<std::string> act = c.getString("hidden_act", "gelu"),
                         posType =
                             c.getString("position_embedding_type", "absolute");
  FailureOr<bool> crossAttention = c.getBool("add_cross_attention", false),
                  isDecoder = c.getBool("is_decoder", false);
  if (failed(eps) || failed(act) || failed(posType) || failed(crossAttention) ||
      failed(isDecoder))
    return failure();
  FailureOr<Activation> activation = parseActivation(c, "hidden_act", *act);
  if (failed(activation))
    return failure();
  if (*posType != "absolute")
    return emitError(c.keyLoc("position_embedding_type"))
           << "config.json key \"position_embedding_type\" is \"" << *posType
           << "\"; only \"absolute\" (learned) positions are supported";
  if (*crossAttention || *isDecoder)
    return emitError(
               c.keyLoc(*crossAttention ? "add_cross_attention" : "is_decoder"))
           << "BertModel as a decoder (is_decoder / add_cross_attention) is "
              "not supported; only the encoder is";
  if (failed(
          checkHeadsDivide(c, "hidden_size", d, "num_attention_heads", heads)))
    return failure();

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"", "bert."}, "embeddings.word_embeddings.weight",
               "max_position_embeddings", positions,
               {"attention_mask", "token_type_ids"});
  if (failed(start))
    return failure();
  // Plain copies: the layer lambdas capture them.
  int64_t batch = start->batch, seq = start->seq;
  std::string p = start->prefix;
  Value ids = start->ids;

  // The optional inputs have input_ids' shape.
  auto optionalInput = [&](StringRef name) -> FailureOr<bool> {
    if (!mb.options.inputShapes.count(name))
      return false;
    FailureOr<SmallVector<int64_t>> shape =
        mb.inputShape(name, {"batch", "sequence"});
    if (failed(shape))
      return failure();
    if ((*shape)[0] != batch || (*shape)[1] != seq)
      return emitError(c.configLoc())
             << "--input-shape " << name << " must equal input_ids' shape "
             << batch << "x" << seq;
    return true;
  };
  FailureOr<bool> hasTypes = optionalInput("token_type_ids"),
                  hasMask = optionalInput("attention_mask");
  if (failed(hasTypes) || failed(hasMask))
    return failure();

  OpBuilder &b = mb.b;
  auto idsType = RankedTensorType::get({batch, seq}, b.getI64Type());
  // BertModel.forward's order.
  Value mask = *hasMask ? mb.addInput("attention_mask", idsType) : Value();
  Value typeIds = *hasTypes ? mb.addInput("token_type_ids", idsType) : Value();
  auto hType = mb.tensorType({batch, seq, d});
  Location embLoc = mb.loc(p + "embeddings");
  FailureOr<Value> wordTable =
      mb.weight(p + "embeddings.word_embeddings.weight", {vocab, d},
                "[vocab_size, hidden_size]");
  FailureOr<Value> posTable =
      mb.weight(p + "embeddings.position_embeddings.weight", {positions, d},
                "[max_position_embeddings, hidden_size]");
  FailureOr<Value> typeTable =
      mb.weight(p + "embeddings.token_type_embeddings.weight", {*types, d},
                "[type_vocab_size, hidden_size]");
  FailureOr<Value> embGamma =
      mb.weight(p + "embeddings.LayerNorm.weight", {d}, "[hidden_size]");
  FailureOr<Value> embBeta =
      mb.weight(p + "embeddings.LayerNorm.bias", {d}, "[hidden_size]");
  if (failed(wordTable) || failed(posTable) || failed(typeTable) ||
      failed(embGamma) || failed(embBeta))
    return failure();
  Value h = EmbeddingOp::create(b, embLoc, hType, ids, *wordTable);
  h = LearnedPosOp::create(b, embLoc, h, *posTable, /*positions=*/Value(),
                           /*offset=*/0);
  // Without token_type_ids, 0 everywhere: row 0 of the token type table.
  if (!typeIds)
    typeIds = arith::ConstantOp::create(
        b, embLoc, DenseElementsAttr::get(idsType, b.getI64IntegerAttr(0)));
  Value typeEmb = EmbeddingOp::create(b, embLoc, hType, typeIds, *typeTable);
  h = AddOp::create(b, embLoc, h, typeEmb);
  h = LayerNormOp::create(b, embLoc, h, *embGamma, *embBeta,
                          b.getF64FloatAttr(*eps));

  // transformers' extended attention mask: (1 - mask) * finfo.min, [B, 1, 1,
  // S], added to every head's scores.
  Value scoreBias;
  if (mask) {
    Location l = mb.loc(p + "embeddings");
    auto biasType = mb.tensorType({batch, 1, 1, seq});
    Value mask4 = tensor::ExpandShapeOp::create(
        b, l, RankedTensorType::get({batch, 1, 1, seq}, b.getI64Type()), mask,
        ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
    AffineMap identity = b.getMultiDimIdentityMap(4);
    Value init = tensor::EmptyOp::create(b, l, biasType.getShape(),
                                         biasType.getElementType());
    scoreBias =
        linalg::GenericOp::create(
            b, l, biasType, mask4, init,
            ArrayRef<AffineMap>{identity, identity},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Type f = biasType.getElementType();
              Value m = arith::SIToFPOp::create(nb, nl, f, args[0]);
              Value one =
                  arith::ConstantOp::create(nb, nl, nb.getFloatAttr(f, 1.0));
              Value lowest = arith::ConstantOp::create(
                  nb, nl,
                  nb.getFloatAttr(f, APFloat::getLargest(
                                         cast<FloatType>(f).getFloatSemantics(),
                                         /*Negative=*/true)));
              Value off = arith::SubFOp::create(nb, nl, one, m);
              linalg::YieldOp::create(
                  nb, nl,
                  ValueRange{arith::MulFOp::create(nb, nl, off, lowest)});
            })
            .getResult(0);
  }

  for (int64_t i = 0; i < layers; ++i) {
    std::string lp = p + "encoder.layer." + std::to_string(i) + ".";
    FailureOr<Value> out = mb.layer(
        i, h,
        [&](Value x) -> FailureOr<Value> {
          Location l = mb.loc(lp.substr(0, lp.size() - 1));
          auto w = [&](StringRef name, ArrayRef<int64_t> shape,
                       StringRef dims) {
            return mb.weight(lp + name.str(), shape, dims);
          };
          StringRef dd = "[hidden_size, hidden_size]", dv = "[hidden_size]";
          FailureOr<Value> wq = w("attention.self.query.weight", {d, d}, dd),
                           bq = w("attention.self.query.bias", {d}, dv),
                           wk = w("attention.self.key.weight", {d, d}, dd),
                           bk = w("attention.self.key.bias", {d}, dv),
                           wv = w("attention.self.value.weight", {d, d}, dd),
                           bv = w("attention.self.value.bias", {d}, dv),
                           wo = w("attention.output.dense.weight", {d, d}, dd),
                           bo = w("attention.output.dense.bias", {d}, dv),
                           g1 = w("attention.output.LayerNorm.weight", {d}, dv),
                           be1 = w("attention.output.LayerNorm.bias", {d}, dv),
                           w1 = w("intermediate.dense.weight", {ff, d},
                                  "[intermediate_size, hidden_size]"),
                           b1 = w("intermediate.dense.bias", {ff},
                                  "[intermediate_size]"),
                           w2 = w("output.dense.weight", {d, ff},
                                  "[hidden_size, intermediate_size]"),
                           b2 = w("output.dense.bias", {d}, dv),
                           g2 = w("output.LayerNorm.weight", {d}, dv),
                           be2 = w("output.LayerNorm.bias", {d}, dv);
          for (const FailureOr<Value> &v : {wq, bq, wk, bk, wv, bv, wo, bo, g1,
                                            be1, w1, b1, w2, b2, g2, be2})
            if (failed(v))
              return failure();
          Value attn = MhaOp::create(
              b, l, hType, x, /*key_value=*/Value(), *wq, *wk, *wv, *wo,
              ValueRange{*bq, *bk, *bv, *bo},
              mb.layerExtras().empty() ? Value() : mb.layerExtras()[0],
              /*kv_lengths=*/Value(), b.getI64IntegerAttr(heads), IntegerAttr(),
              IntegerAttr(), UnitAttr(), UnitAttr(), IntegerAttr(),
              FloatAttr());
          Value n1 = LayerNormOp::create(b, l, AddOp::create(b, l, x, attn),
                                         *g1, *be1, b.getF64FloatAttr(*eps));
          Value ffn = FfnOp::create(b, l, hType, n1, /*gate_weight=*/Value(),
                                    /*gate_bias=*/Value(), *w1, *b1, *w2, *b2,
                                    *activation);
          return LayerNormOp::create(b, l, AddOp::create(b, l, n1, ffn), *g2,
                                     *be2, b.getF64FloatAttr(*eps))
              .getResult();
        },
        scoreBias ? ValueRange{scoreBias} : ValueRange{});
    if (failed(out))
      return failure();
    h = *out;
  }
  mb.finishMain(h, "last_hidden_state");
  return success();
}
