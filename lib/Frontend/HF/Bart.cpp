//===- Bart.cpp - BART and mBART checkpoints ------------------------------===//
//
// BartForConditionalGeneration and MBartForConditionalGeneration
// (transformers' modeling_bart / modeling_mbart) as one full-sequence
// model: the encoder over `input_ids` and the decoder over
// `decoder_input_ids`, whose logits are the result; with --kv-cache, the
// encoder (@encoder, once per prompt: every decoder layer's
// cross-attention keys and values) and a decoder step over KV caches
// (@main).
//
// Each stack embeds its ids by the shared table (times sqrt(d_model) when
// scale_embedding), adds learned positions (table row = position + 2) and
// applies layernorm_embedding. Encoder layers: self-attention and the FFN
// (activation_function); decoder layers: causal self-attention,
// cross-attention over the encoder output and the FFN. BART's layers are
// post-LN (x = LN(x + sublayer(x))); mBART's are pre-LN
// (x = x + sublayer(LN(x))) with a final LayerNorm (layer_norm) on each
// stack. The LM head is the shared table (tie_word_embeddings, else
// lm_head.weight) plus final_logits_bias.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

/// Keys of transformers 4's BART configs (kept in Hub checkpoints) that
/// transformers 5 no longer reads: an error unless they hold the value that
/// means this architecture, so that no other model is built silently.
static LogicalResult checkLegacyKeys(Checkpoint &c, bool preNorm) {
  struct Legacy {
    const char *key;
    bool expected;
  };
  const Legacy keys[] = {{"add_bias_logits", false},
                         {"normalize_before", preNorm},
                         {"add_final_layer_norm", preNorm},
                         {"normalize_embedding", true},
                         {"static_position_embeddings", false}};
  for (const Legacy &k : keys) {
    if (!c.has(k.key))
      continue;
    FailureOr<bool> v = c.getBool(k.key, k.expected);
    if (failed(v))
      return failure();
    if (*v != k.expected)
      return emitError(c.keyLoc(k.key))
             << "config.json key \"" << k.key << "\" is "
             << (*v ? "true" : "false") << "; only "
             << (k.expected ? "true" : "false") << " is supported for "
             << (preNorm ? "MBart" : "Bart");
  }
  if (c.has("extra_pos_embeddings")) {
    FailureOr<int64_t> extra = c.getInt("extra_pos_embeddings");
    if (failed(extra))
      return failure();
    if (*extra != 2)
      return emitError(c.keyLoc("extra_pos_embeddings"))
             << "config.json key \"extra_pos_embeddings\" is " << *extra
             << "; only 2 (the position table's offset) is supported";
  }
  return success();
}

LogicalResult mlir::attn::hf::buildBart(ModelBuilder &mb, bool preNorm) {
  Checkpoint &c = mb.ckpt;
  auto dims = c.getPositiveInts({"vocab_size", "d_model", "encoder_layers",
                                 "decoder_layers", "encoder_attention_heads",
                                 "decoder_attention_heads", "encoder_ffn_dim",
                                 "decoder_ffn_dim", "max_position_embeddings"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], encLayers = (*dims)[2],
                decLayers = (*dims)[3], encHeads = (*dims)[4],
                decHeads = (*dims)[5], encFf = (*dims)[6], decFf = (*dims)[7],
                positions = (*dims)[8];
  FailureOr<std::string> act = c.getString("activation_function", "gelu");
  FailureOr<bool> scaleEmbedding = c.getBool("scale_embedding", false),
                  tied = c.getBool("tie_word_embeddings", true);
  if (failed(act) || failed(scaleEmbedding) || failed(tied) ||
      failed(checkLegacyKeys(c, preNorm)))
    return failure();
  FailureOr<Activation> activation =
      parseActivation(c, "activation_function", *act);
  if (failed(activation) ||
      failed(checkHeadsDivide(c, "d_model", d, "encoder_attention_heads",
                              encHeads)) ||
      failed(checkHeadsDivide(c, "d_model", d, "decoder_attention_heads",
                              decHeads)))
    return failure();

  FailureOr<ModelBuilder::Seq2SeqStart> start = mb.startSeq2Seq(
      {"model."}, "shared.weight", "max_position_embeddings", positions);
  if (failed(start))
    return failure();
  const std::string p = start->prefix;
  OpBuilder &b = mb.b;
  const double eps = 1e-5;
  StringRef dd = "[d_model, d_model]", dv = "[d_model]";
  Value table;

  // The embeddings of one stack ("encoder" or "decoder"), at
  // `stepPositions` (a step's run-time positions; null: 0, 1, ...).
  auto embed = [&](StringRef stack, Value ids,
                   Value stepPositions = Value()) -> FailureOr<Value> {
    std::string s = p + stack.str() + ".";
    FailureOr<std::pair<Value, Value>> e =
        mb.embedTokens(ids, p + "shared", vocab, d, "[vocab_size, d_model]");
    FailureOr<Value> posTable =
        mb.weight(s + "embed_positions.weight", {positions + 2, d},
                  "[max_position_embeddings + 2, d_model]");
    if (failed(e) || failed(posTable))
      return failure();
    table = e->first;
    Location l = mb.loc(s + "embed_tokens");
    Value h = e->second;
    if (*scaleEmbedding)
      h = mb.scaleBy(l, h, std::sqrt(static_cast<double>(d)));
    // BART's position table starts 2 rows in.
    h = LearnedPosOp::create(b, l, h, *posTable, stepPositions, /*offset=*/2);
    return mb.layerNorm(mb.loc(s + "layernorm_embedding"), h,
                        s + "layernorm_embedding", dv, eps);
  };
  // A sub-layer `body` with its LayerNorm `norm` and residual:
  // x + body(LN(x)) (mBART) or LN(x + body(x)) (BART).
  auto residual =
      [&](const LayerWeights &w, StringRef norm, Value x,
          function_ref<FailureOr<Value>(Value)> body) -> FailureOr<Value> {
    FailureOr<Value> g = w(norm.str() + ".weight", {d}, dv),
                     be = w(norm.str() + ".bias", {d}, dv);
    if (failed(g) || failed(be))
      return failure();
    Location l = w.loc();
    auto ln = [&](Value v) {
      return LayerNormOp::create(b, l, v, *g, *be, b.getF64FloatAttr(eps))
          .getResult();
    };
    FailureOr<Value> y = body(preNorm ? ln(x) : x);
    if (failed(y))
      return failure();
    Value sum = AddOp::create(b, l, x, *y);
    return preNorm ? sum : ln(sum);
  };
  // The projections of one attention (`module`); `query`, `keyValue`:
  // which of them to bind (a step's cross-attention has its keys and values
  // from the encoder, which binds only those).
  auto attentionWeights =
      [&](const LayerWeights &w, StringRef module, bool query = true,
          bool keyValue = true) -> FailureOr<ModelBuilder::AttentionWeights> {
    std::string m = module.str() + ".";
    auto proj = [&](bool present, StringRef name, ArrayRef<int64_t> shape,
                    StringRef dims) {
      return w.optional(present, m + name.str(), shape, dims);
    };
    FailureOr<Value> wq = proj(query, "q_proj.weight", {d, d}, dd),
                     bq = proj(query, "q_proj.bias", {d}, dv),
                     wk = proj(keyValue, "k_proj.weight", {d, d}, dd),
                     bk = proj(keyValue, "k_proj.bias", {d}, dv),
                     wv = proj(keyValue, "v_proj.weight", {d, d}, dd),
                     bv = proj(keyValue, "v_proj.bias", {d}, dv),
                     wo = proj(query, "out_proj.weight", {d, d}, dd),
                     bo = proj(query, "out_proj.bias", {d}, dv);
    if (!allFound({wq, bq, wk, bk, wv, bv, wo, bo}))
      return failure();
    return ModelBuilder::AttentionWeights{*wq, *bq, *wk, *bk,
                                          *wv, *bv, *wo, *bo};
  };
  // One attention (`module`) with its LayerNorm and residual; `bias`: the
  // encoder's padding over the keys, or null.
  auto attention = [&](const LayerWeights &w, StringRef module, StringRef norm,
                       Value x, Value memory, bool causal, int64_t heads,
                       Value bias) -> FailureOr<Value> {
    FailureOr<ModelBuilder::AttentionWeights> aw = attentionWeights(w, module);
    if (failed(aw))
      return failure();
    return residual(w, norm, x, [&](Value n) -> FailureOr<Value> {
      return mb.multiHeadAttention(w.loc(), n, memory, *aw, heads, d / heads,
                                   causal, bias);
    });
  };
  auto feedForward = [&](const LayerWeights &w, Value x,
                         int64_t ff) -> FailureOr<Value> {
    FailureOr<Value> w1 = w("fc1.weight", {ff, d}, "[ffn_dim, d_model]"),
                     b1 = w("fc1.bias", {ff}, "[ffn_dim]"),
                     w2 = w("fc2.weight", {d, ff}, "[d_model, ffn_dim]"),
                     b2 = w("fc2.bias", {d}, dv);
    if (!allFound({w1, b1, w2, b2}))
      return failure();
    return residual(w, "final_layer_norm", x, [&](Value n) -> FailureOr<Value> {
      return FfnOp::create(b, w.loc(), x.getType(), n, /*gate_weight=*/Value(),
                           /*gate_bias=*/Value(), *w1, *b1, *w2, *b2,
                           *activation)
          .getResult();
    });
  };
  // mBART's final LayerNorm of a stack.
  auto finalNorm = [&](StringRef stack, Value h) -> FailureOr<Value> {
    if (!preNorm)
      return h;
    std::string name = p + stack.str() + ".layer_norm";
    return mb.layerNorm(mb.loc(name), h, name, dv, eps);
  };

  FailureOr<Value> h = embed("encoder", start->ids);
  if (failed(h))
    return failure();
  // The encoder's padding masks its own keys and the cross-attention's.
  Value padding = start->sourcePadding;
  ValueRange paddingExtra = padding ? ValueRange(padding) : ValueRange();
  FailureOr<Value> encoded = mb.decoderLayers(
      *h, encLayers, p + "encoder.layers.",
      [&](int64_t, const LayerWeights &w, Value x) -> FailureOr<Value> {
        FailureOr<Value> y =
            attention(w, "self_attn", "self_attn_layer_norm", x, Value(),
                      /*causal=*/false, encHeads,
                      padding ? mb.layerExtras()[0] : Value());
        if (failed(y))
          return failure();
        return feedForward(w, *y, encFf);
      },
      paddingExtra);
  if (failed(encoded))
    return failure();
  FailureOr<Value> encOut = finalNorm("encoder", *encoded);
  if (failed(encOut))
    return failure();

  FailureOr<Value> decoded;
  if (mb.options.kvCache > 0) {
    // A --kv-cache build: @encoder hands each decoder layer's
    // cross-attention keys and values to the decoder step @main.
    const int64_t dh = d / decHeads;
    SmallVector<std::pair<std::string, Value>> crossKV;
    for (int64_t i = 0; i < decLayers; ++i) {
      LayerWeights w(mb, p + "decoder.layers." + std::to_string(i) + ".");
      FailureOr<ModelBuilder::AttentionWeights> aw =
          attentionWeights(w, "encoder_attn", /*query=*/false);
      if (failed(aw))
        return failure();
      crossKV.push_back(
          {ModelBuilder::crossKeyName(i),
           mb.projectHeads(w.loc(), *encOut, aw->wk, aw->bk, decHeads, dh)});
      crossKV.push_back(
          {ModelBuilder::crossValueName(i),
           mb.projectHeads(w.loc(), *encOut, aw->wv, aw->bv, decHeads, dh)});
    }
    mb.finishEncoder(crossKV);
    FailureOr<ModelBuilder::Seq2SeqStep> step =
        mb.startSeq2SeqStep(*start, decLayers, decHeads, dh);
    if (failed(step))
      return failure();
    h = embed("decoder", step->decoderIds, step->decode->positions);
    if (failed(h))
      return failure();
    Value stepPadding = step->sourcePadding;
    decoded = mb.decoderLayers(
        *h, decLayers, p + "decoder.layers.",
        [&](int64_t i, const LayerWeights &w, Value x) -> FailureOr<Value> {
          FailureOr<ModelBuilder::AttentionWeights> self =
              attentionWeights(w, "self_attn");
          FailureOr<ModelBuilder::AttentionWeights> cross =
              attentionWeights(w, "encoder_attn", /*query=*/true,
                               /*keyValue=*/false);
          if (failed(self) || failed(cross))
            return failure();
          FailureOr<Value> y =
              residual(w, "self_attn_layer_norm", x, [&](Value n) {
                return mb.attention(i, n, step->decode, *self, decHeads,
                                    decHeads, dh, {});
              });
          if (failed(y))
            return failure();
          y = residual(w, "encoder_attn_layer_norm", *y,
                       [&](Value n) -> FailureOr<Value> {
                         return mb.stepCrossAttention(
                             w.loc(), n, step->crossKeys[i],
                             step->crossValues[i], cross->wq, cross->bq,
                             cross->wo, cross->bo, decHeads, dh,
                             stepPadding ? mb.layerExtras()[0] : Value());
                       });
          if (failed(y))
            return failure();
          return feedForward(w, *y, decFf);
        },
        stepPadding ? ValueRange{stepPadding} : ValueRange{},
        /*firstIndex=*/encLayers);
  } else {
    h = embed("decoder", start->decoderIds);
    if (failed(h))
      return failure();
    // Decoder layers follow the encoder's in one stack and see the encoder
    // output as an extra.
    decoded = mb.decoderLayers(
        *h, decLayers, p + "decoder.layers.",
        [&](int64_t, const LayerWeights &w, Value x) -> FailureOr<Value> {
          FailureOr<Value> y =
              attention(w, "self_attn", "self_attn_layer_norm", x, Value(),
                        /*causal=*/true, decHeads, Value());
          if (failed(y))
            return failure();
          y = attention(w, "encoder_attn", "encoder_attn_layer_norm", *y,
                        mb.layerExtras()[0], /*causal=*/false, decHeads,
                        padding ? mb.layerExtras()[1] : Value());
          if (failed(y))
            return failure();
          return feedForward(w, *y, decFf);
        },
        padding ? ValueRange{*encOut, padding} : ValueRange{*encOut},
        /*firstIndex=*/encLayers);
  }
  if (failed(decoded))
    return failure();
  FailureOr<Value> out = finalNorm("decoder", *decoded);
  Location headLoc = mb.loc("lm_head");
  FailureOr<Value> logitsBias =
      mb.weight("final_logits_bias", {1, vocab}, "[1, vocab_size]");
  if (failed(out) || failed(logitsBias))
    return failure();
  Value bias = tensor::CollapseShapeOp::create(
      b, headLoc, *logitsBias, ArrayRef<ReassociationIndices>{{0, 1}});
  return mb.finishLmHead(headLoc, *out, table, *tied, "[vocab_size, d_model]",
                         "lm_head.weight", bias);
}
