//===- Bert.cpp - BERT-like encoder checkpoints ---------------------------===//
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
// The same builder reads the encoders that share this structure:
// - RobertaModel: positions count the non-padding tokens from padding_idx + 1
//   (pad_token_id; padding tokens sit at padding_idx), computed from the ids;
// - DistilBertModel: other names and config keys, no token types;
// - ElectraModel: embeddings of width embedding_size, projected to
//   hidden_size (embeddings_project) when the two differ;
// - MPNetModel: RoBERTa's positions, no token types, and a learned bias by
//   bucketed relative position added to every layer's scores;
// - AlbertModel: factorized embeddings (embedding_size, always projected by
//   embedding_hidden_mapping_in) and layers shared in num_hidden_groups
//   groups of inner_group_num layers.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include <cmath>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

namespace {
/// Where a BERT-like family keeps its config values and tensors.
struct BertNames {
  // Config keys.
  const char *width, *layers, *heads, *ffWidth, *activation, *defaultAct;
  // Tensors of the embeddings (relative to the prefix), of a layer
  // (relative to the layer's prefix) in BERT's order.
  StringRef layerPrefix;
  StringRef q, k, v, o, ln1, up, down, ln2;
};
} // namespace

LogicalResult mlir::attn::hf::buildBert(ModelBuilder &mb) {
  return buildBertLike(mb, BertFamily::Bert);
}

LogicalResult mlir::attn::hf::buildBertLike(ModelBuilder &mb,
                                            BertFamily family) {
  Checkpoint &c = mb.ckpt;
  const bool mpnet = family == BertFamily::MPNet,
             distil = family == BertFamily::DistilBert,
             albert = family == BertFamily::Albert,
             // MPNet's positions are RoBERTa's.
      roberta = family == BertFamily::Roberta || mpnet,
             // Neither has token types.
      noTypes = distil || mpnet;
  BertNames names{"hidden_size",
                  "num_hidden_layers",
                  "num_attention_heads",
                  "intermediate_size",
                  "hidden_act",
                  albert ? "gelu_new" : "gelu",
                  "encoder.layer.",
                  "attention.self.query",
                  "attention.self.key",
                  "attention.self.value",
                  "attention.output.dense",
                  "attention.output.LayerNorm",
                  "intermediate.dense",
                  "output.dense",
                  "output.LayerNorm"};
  if (distil)
    names = {"dim",
             "n_layers",
             "n_heads",
             "hidden_dim",
             "activation",
             "gelu",
             "transformer.layer.",
             "attention.q_lin",
             "attention.k_lin",
             "attention.v_lin",
             "attention.out_lin",
             "sa_layer_norm",
             "ffn.lin1",
             "ffn.lin2",
             "output_layer_norm"};
  if (mpnet) {
    names.q = "attention.attn.q";
    names.k = "attention.attn.k";
    names.v = "attention.attn.v";
    names.o = "attention.attn.o";
    names.ln1 = "attention.LayerNorm";
  }
  if (albert) {
    names.layerPrefix = "encoder.albert_layer_groups.";
    names.q = "attention.query";
    names.k = "attention.key";
    names.v = "attention.value";
    names.o = "attention.dense";
    names.ln1 = "attention.LayerNorm";
    names.up = "ffn";
    names.down = "ffn_output";
    names.ln2 = "full_layer_layer_norm";
  }
  auto dims =
      c.getPositiveInts({"vocab_size", names.width, names.layers, names.heads,
                         names.ffWidth, "max_position_embeddings"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], layers = (*dims)[2],
                heads = (*dims)[3], ff = (*dims)[4], positions = (*dims)[5];
  // DistilBERT has no token types; its LayerNorms use 1e-12.
  FailureOr<int64_t> types =
      noTypes ? FailureOr<int64_t>(0) : c.getPositiveInt("type_vocab_size", 2);
  // ELECTRA and ALBERT embed in embedding_size and project to hidden_size.
  FailureOr<int64_t> embWidth = albert ? c.getPositiveInt("embedding_size", 128)
                                : family == BertFamily::Electra
                                    ? c.getPositiveInt("embedding_size", d)
                                    : FailureOr<int64_t>(d);
  FailureOr<double> eps =
      distil ? FailureOr<double>(1e-12) : c.getFloat("layer_norm_eps", 1e-12);
  FailureOr<std::string> act = c.getString(names.activation, names.defaultAct),
                         posType =
                             c.getString("position_embedding_type", "absolute");
  FailureOr<bool> crossAttention = c.getBool("add_cross_attention", false),
                  isDecoder = c.getBool("is_decoder", false);
  // RoBERTa's positions start after its padding id.
  FailureOr<int64_t> padId =
      roberta ? c.getInt("pad_token_id") : FailureOr<int64_t>(0);
  // ALBERT's shared layers.
  // MPNet's relative position buckets.
  FailureOr<int64_t> buckets =
      mpnet ? c.getPositiveInt("relative_attention_num_buckets", 32)
            : FailureOr<int64_t>(0);
  if (failed(buckets))
    return failure();
  FailureOr<int64_t> groups = albert ? c.getPositiveInt("num_hidden_groups", 1)
                                     : FailureOr<int64_t>(1),
                     inner = albert ? c.getPositiveInt("inner_group_num", 1)
                                    : FailureOr<int64_t>(1);
  if (failed(types) || failed(embWidth) || failed(eps) || failed(act) ||
      failed(posType) || failed(crossAttention) || failed(isDecoder) ||
      failed(padId) || failed(groups) || failed(inner))
    return failure();
  FailureOr<Activation> activation = parseActivation(c, names.activation, *act);
  if (failed(activation))
    return failure();
  if (*posType != "absolute")
    return emitError(c.keyLoc("position_embedding_type"))
           << "config.json key \"position_embedding_type\" is \"" << *posType
           << "\"; only \"absolute\" (learned) positions are supported";
  if (*crossAttention || *isDecoder)
    return emitError(
               c.keyLoc(*crossAttention ? "add_cross_attention" : "is_decoder"))
           << *c.getArchitecture()
           << " as a decoder (is_decoder / add_cross_attention) is not "
              "supported; only the encoder is";
  if (failed(checkHeadsDivide(c, names.width, d, names.heads, heads)))
    return failure();
  if (roberta && (*padId < 0 || *padId >= positions - 1))
    return emitError(c.keyLoc("pad_token_id"))
           << "config.json key \"pad_token_id\" (" << *padId
           << ", where RoBERTa's positions start) must be in [0, "
              "max_position_embeddings - 1)";
  if (albert && layers % *groups != 0)
    return emitError(c.keyLoc("num_hidden_groups"))
           << "num_hidden_layers " << layers
           << " is not divisible by num_hidden_groups " << *groups;
  // DistilBERT's sinusoidal_pos_embds fills the position table it saves:
  // the lookup below reads it either way.

  // RoBERTa's positions run from padding_idx + 1.
  int64_t maxSeq = roberta ? positions - *padId - 1 : positions;
  FailureOr<ModelBuilder::ModelStart> start = mb.start(
      {"", distil                          ? "distilbert."
           : albert                        ? "albert."
           : mpnet                         ? "mpnet."
           : roberta                       ? "roberta."
           : family == BertFamily::Electra ? "electra."
                                           : "bert."},
      "embeddings.word_embeddings.weight", "max_position_embeddings", maxSeq,
      noTypes ? ArrayRef<StringRef>{"attention_mask"}
              : ArrayRef<StringRef>{"attention_mask", "token_type_ids"});
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
  const int64_t e = *embWidth;
  auto eType = mb.tensorType({batch, seq, e});
  auto hType = mb.tensorType({batch, seq, d});
  Location embLoc = mb.loc(p + "embeddings");
  std::string widthName = (e == d ? names.width : "embedding_size");
  FailureOr<Value> wordTable =
      mb.weight(p + "embeddings.word_embeddings.weight", {vocab, e},
                "[vocab_size, " + widthName + "]");
  FailureOr<Value> posTable =
      mb.weight(p + "embeddings.position_embeddings.weight", {positions, e},
                "[max_position_embeddings, " + widthName + "]");
  FailureOr<Value> typeTable =
      noTypes ? FailureOr<Value>(Value())
              : mb.weight(p + "embeddings.token_type_embeddings.weight",
                          {*types, e}, "[type_vocab_size, " + widthName + "]");
  FailureOr<Value> embGamma =
      mb.weight(p + "embeddings.LayerNorm.weight", {e}, "[" + widthName + "]");
  FailureOr<Value> embBeta =
      mb.weight(p + "embeddings.LayerNorm.bias", {e}, "[" + widthName + "]");
  if (failed(wordTable) || failed(posTable) || failed(typeTable) ||
      failed(embGamma) || failed(embBeta))
    return failure();
  Value h = EmbeddingOp::create(b, embLoc, eType, ids, *wordTable);
  if (roberta) {
    // transformers' create_position_ids_from_input_ids: a token that is
    // not padding sits at padding_idx + (the non-padding tokens up to and
    // including it); padding sits at padding_idx.
    Value init =
        linalg::FillOp::create(
            b, embLoc,
            arith::ConstantOp::create(b, embLoc, b.getI64IntegerAttr(*padId))
                .getResult(),
            tensor::EmptyOp::create(b, embLoc, idsType.getShape(),
                                    b.getI64Type())
                .getResult())
            .getResult(0);
    MLIRContext *ctx = b.getContext();
    AffineExpr bi, i, j;
    bindDims(ctx, bi, i, j);
    auto map = [&](ArrayRef<AffineExpr> exprs) {
      return AffineMap::get(3, 0, exprs, ctx);
    };
    Value posIds =
        linalg::GenericOp::create(
            b, embLoc, idsType, ValueRange{ids, ids}, ValueRange{init},
            ArrayRef<AffineMap>{map({bi, j}), map({bi, i}), map({bi, i})},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                          utils::IteratorType::parallel,
                                          utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value pad = arith::ConstantOp::create(
                  nb, nl, nb.getI64IntegerAttr(*padId));
              Value ii = linalg::IndexOp::create(nb, nl, 1);
              Value jj = linalg::IndexOp::create(nb, nl, 2);
              Value upTo = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::ule, jj, ii);
              Value jReal = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::ne, args[0], pad);
              Value iReal = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::ne, args[1], pad);
              Value counts = arith::AndIOp::create(
                  nb, nl, upTo, arith::AndIOp::create(nb, nl, jReal, iReal));
              Value one =
                  arith::ExtUIOp::create(nb, nl, nb.getI64Type(), counts);
              linalg::YieldOp::create(
                  nb, nl,
                  ValueRange{arith::AddIOp::create(nb, nl, args[2], one)});
            })
            .getResult(0);
    Value posEmb = EmbeddingOp::create(b, embLoc, eType, posIds, *posTable);
    h = AddOp::create(b, embLoc, h, posEmb);
  } else {
    h = LearnedPosOp::create(b, embLoc, h, *posTable, /*positions=*/Value(),
                             /*offset=*/0);
  }
  if (!noTypes) {
    // Without token_type_ids, 0 everywhere: row 0 of the token type table.
    if (!typeIds)
      typeIds = arith::ConstantOp::create(
          b, embLoc, DenseElementsAttr::get(idsType, b.getI64IntegerAttr(0)));
    Value typeEmb = EmbeddingOp::create(b, embLoc, eType, typeIds, *typeTable);
    h = AddOp::create(b, embLoc, h, typeEmb);
  }
  h = LayerNormOp::create(b, embLoc, h, *embGamma, *embBeta,
                          b.getF64FloatAttr(*eps));
  // The projection of the embeddings to the layers' width.
  if (albert || e != d) {
    std::string proj =
        albert ? "encoder.embedding_hidden_mapping_in" : "embeddings_project";
    Location projLoc = mb.loc(p + proj);
    FailureOr<Value> wp = mb.weight(p + proj + ".weight", {d, e},
                                    "[hidden_size, embedding_size]"),
                     bp = mb.weight(p + proj + ".bias", {d}, "[hidden_size]");
    if (failed(wp) || failed(bp))
      return failure();
    h = mb.linear(projLoc, h, *wp, *bp);
  }

  // transformers' extended attention mask, added to every head's scores.
  Value scoreBias =
      mask ? mb.paddingScoreBias(mb.loc(p + "embeddings"), mask) : Value();

  // MPNet adds a learned bias by relative position (transformers'
  // relative_position_bucket of j - i: the bucket table is a constant)
  // to every layer's scores: table [buckets, heads] looked up at the
  // buckets [S, S], as [1, heads, S, S], plus the mask's bias.
  if (mpnet) {
    Location l = mb.loc(p + "encoder.relative_attention_bias");
    FailureOr<Value> relTable = mb.weight(
        p + "encoder.relative_attention_bias.weight", {*buckets, heads},
        "[relative_attention_num_buckets, num_attention_heads]");
    if (failed(relTable))
      return failure();
    SmallVector<int64_t> ids;
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < seq; ++j)
        ids.push_back(relativePositionBucket(j - i, *buckets,
                                             /*maxDistance=*/128,
                                             /*bidirectional=*/true));
    auto bucketType = RankedTensorType::get({seq, seq}, b.getI64Type());
    Value bucketIds = arith::ConstantOp::create(
        b, l, DenseElementsAttr::get(bucketType, ArrayRef<int64_t>(ids)));
    Value looked = EmbeddingOp::create(b, l, mb.tensorType({seq, seq, heads}),
                                       bucketIds, *relTable);
    // [S, S, H] -> [B, H, S, S], plus the mask's [B, 1, 1, S].
    auto biasType = mb.tensorType({batch, heads, seq, seq});
    MLIRContext *ctx = b.getContext();
    AffineExpr bb, hh, ii, jj;
    bindDims(ctx, bb, hh, ii, jj);
    auto map = [&](ArrayRef<AffineExpr> exprs) {
      return AffineMap::get(4, 0, exprs, ctx);
    };
    SmallVector<Value> inputs = {looked};
    SmallVector<AffineMap> maps = {map({ii, jj, hh})};
    if (scoreBias) {
      inputs.push_back(scoreBias);
      maps.push_back(map(
          {bb, b.getAffineConstantExpr(0), b.getAffineConstantExpr(0), jj}));
    }
    maps.push_back(map({bb, hh, ii, jj}));
    Value init = tensor::EmptyOp::create(b, l, biasType.getShape(),
                                         biasType.getElementType());
    scoreBias =
        linalg::GenericOp::create(
            b, l, biasType, inputs, init, maps,
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value v = args[0];
              if (args.size() == 3)
                v = arith::AddFOp::create(nb, nl, v, args[1]);
              linalg::YieldOp::create(nb, nl, ValueRange{v});
            })
            .getResult(0);
  }

  // ALBERT runs each of its num_hidden_groups groups of inner_group_num
  // layers num_hidden_layers / num_hidden_groups times in a row; the other
  // families have one layer per index.
  int64_t layerIndex = 0;
  for (int64_t i = 0; i < layers; ++i) {
    for (int64_t j = 0; j < *inner; ++j) {
      std::string lp =
          albert ? p + names.layerPrefix.str() +
                       std::to_string(i / (layers / *groups)) +
                       ".albert_layers." + std::to_string(j) + "."
                 : p + names.layerPrefix.str() + std::to_string(i) + ".";
      FailureOr<Value> out = mb.layer(
          layerIndex++, h,
          [&](Value x) -> FailureOr<Value> {
            Location l = mb.loc(lp.substr(0, lp.size() - 1));
            auto w = [&](StringRef name, StringRef param,
                         ArrayRef<int64_t> shape, StringRef dims) {
              return mb.weight(lp + name.str() + "." + param.str(), shape,
                               dims);
            };
            std::string dd = "[" + std::string(names.width) + ", " +
                             names.width + "]",
                        dv = "[" + std::string(names.width) + "]",
                        df = "[" + std::string(names.ffWidth) + "]",
                        dup = "[" + std::string(names.ffWidth) + ", " +
                              names.width + "]",
                        ddown = "[" + std::string(names.width) + ", " +
                                names.ffWidth + "]";
            FailureOr<Value> wq = w(names.q, "weight", {d, d}, dd),
                             bq = w(names.q, "bias", {d}, dv),
                             wk = w(names.k, "weight", {d, d}, dd),
                             bk = w(names.k, "bias", {d}, dv),
                             wv = w(names.v, "weight", {d, d}, dd),
                             bv = w(names.v, "bias", {d}, dv),
                             wo = w(names.o, "weight", {d, d}, dd),
                             bo = w(names.o, "bias", {d}, dv),
                             g1 = w(names.ln1, "weight", {d}, dv),
                             be1 = w(names.ln1, "bias", {d}, dv),
                             w1 = w(names.up, "weight", {ff, d}, dup),
                             b1 = w(names.up, "bias", {ff}, df),
                             w2 = w(names.down, "weight", {d, ff}, ddown),
                             b2 = w(names.down, "bias", {d}, dv),
                             g2 = w(names.ln2, "weight", {d}, dv),
                             be2 = w(names.ln2, "bias", {d}, dv);
            if (!allFound({wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, w1, b1, w2,
                           b2, g2, be2}))
              return failure();
            Value attn = mb.multiHeadAttention(
                l, x, /*memory=*/Value(),
                {*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo}, heads, d / heads,
                /*causal=*/false,
                mb.layerExtras().empty() ? Value() : mb.layerExtras()[0]);
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
  }
  mb.finishMain(h, "last_hidden_state");
  return success();
}
