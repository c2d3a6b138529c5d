//===- T5.cpp - T5ForConditionalGeneration checkpoints --------------------===//
//
// T5ForConditionalGeneration and MT5ForConditionalGeneration (transformers'
// modeling_t5 / modeling_mt5) as one full-sequence model: the encoder over
// `input_ids` and the decoder over `decoder_input_ids`, whose logits are
// the result; with --kv-cache, the encoder (@encoder, once per prompt:
// every decoder layer's cross-attention keys and values) and a decoder
// step over KV caches (@main).
//
// Both stacks embed their ids by the shared table and run pre-norm blocks
// with T5's LayerNorm (RMS: no mean, no bias): self-attention (the
// decoder's causal), the decoder's cross-attention over the encoder output,
// and the FFN, each added to the residual; then a final norm. Attention
// scores are not scaled. Positions are a learned bias by bucketed relative
// position (bidirectional in the encoder, unidirectional in the decoder),
// whose table each stack keeps in its block 0 and shares with all its
// blocks. The FFN is `feed_forward_proj`: "ACT" (wo(act(wi(x))), e.g.
// "relu") or "gated-ACT" (wo(act(wi_0(x)) * wi_1(x)); "gated-gelu" is
// gelu_new, T5 v1.1 / MT5). The LM head is the shared table when
// tie_word_embeddings, else lm_head.weight. T5 scales the decoder output by
// d_model**-0.5 when tie_word_embeddings, or as transformers 5's
// scale_decoder_outputs says when present; MT5 never does.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

namespace {
/// T5's FFN: `feed_forward_proj` parsed.
struct T5Ffn {
  Activation activation;
  bool gated;
};
} // namespace

/// Reads `feed_forward_proj` as transformers does ("ACT" or "gated-ACT";
/// "gated-gelu" is gelu_new), and checks the keys transformers 5 derives
/// from it and saves (is_gated_act, dense_act_fn) agree.
static FailureOr<T5Ffn> readFfn(Checkpoint &c) {
  FailureOr<std::string> proj = c.getString("feed_forward_proj", "relu");
  if (failed(proj))
    return failure();
  StringRef act = *proj;
  bool gated = act.consume_front("gated-");
  std::string actName = *proj == "gated-gelu" ? "gelu_new" : act.str();
  std::optional<Activation> activation = activationByName(actName);
  if (act.empty() || act.contains('-') || !activation)
    return emitError(c.keyLoc("feed_forward_proj"))
           << "config.json key \"feed_forward_proj\" is \"" << *proj
           << "\"; supported: \"ACT\" or \"gated-ACT\" with ACT one of "
           << activationNames;
  FailureOr<bool> isGated = c.getBool("is_gated_act", gated);
  FailureOr<std::string> denseAct = c.getString("dense_act_fn", actName);
  if (failed(isGated) || failed(denseAct))
    return failure();
  if (*isGated != gated)
    return emitError(c.keyLoc("is_gated_act"))
           << "config.json key \"is_gated_act\" is "
           << (*isGated ? "true" : "false") << ", but feed_forward_proj \""
           << *proj << "\" is " << (gated ? "" : "not ") << "gated";
  if (*denseAct != actName)
    return emitError(c.keyLoc("dense_act_fn"))
           << "config.json key \"dense_act_fn\" is \"" << *denseAct
           << "\", but feed_forward_proj \"" << *proj << "\" means \""
           << actName << "\"";
  return T5Ffn{*activation, gated};
}

LogicalResult mlir::attn::hf::buildT5(ModelBuilder &mb, bool mt5) {
  Checkpoint &c = mb.ckpt;
  auto dims = c.getPositiveInts(
      {"vocab_size", "d_model", "d_kv", "d_ff", "num_layers", "num_heads"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], dh = (*dims)[2],
                ff = (*dims)[3], encLayers = (*dims)[4], heads = (*dims)[5];
  FailureOr<int64_t> decLayers =
      c.getPositiveInt("num_decoder_layers", encLayers);
  FailureOr<int64_t> buckets =
      c.getPositiveInt("relative_attention_num_buckets", 32);
  FailureOr<int64_t> maxDistance =
      c.getPositiveInt("relative_attention_max_distance", 128);
  FailureOr<double> eps = c.getFloat("layer_norm_epsilon", 1e-6);
  FailureOr<bool> tied = c.getBool("tie_word_embeddings", true);
  if (failed(decLayers) || failed(buckets) || failed(maxDistance) ||
      failed(eps) || failed(tied))
    return failure();
  // MT5 never rescales (transformers' modeling_mt5).
  FailureOr<bool> scaleOutput =
      mt5 ? false : c.getBool("scale_decoder_outputs", *tied);
  FailureOr<T5Ffn> ffn = readFfn(c);
  if (failed(scaleOutput) || failed(ffn))
    return failure();
  // Exact distances need at least one bucket per direction in the encoder
  // (num_buckets / 4 > 0), and the logarithmic buckets a distance past them.
  if (*buckets < 4)
    return emitError(c.keyLoc("relative_attention_num_buckets"))
           << "config.json key \"relative_attention_num_buckets\" must be at "
              "least 4, got "
           << *buckets;
  if (*maxDistance <= *buckets / 2)
    return emitError(c.keyLoc("relative_attention_max_distance"))
           << "config.json key \"relative_attention_max_distance\" ("
           << *maxDistance
           << ") must exceed relative_attention_num_buckets / 2 ("
           << *buckets / 2 << ")";

  FailureOr<ModelBuilder::Seq2SeqStart> start =
      mb.startSeq2Seq({""}, "shared.weight");
  if (failed(start))
    return failure();
  const int64_t inner = heads * dh;
  OpBuilder &b = mb.b;
  FloatAttr unscaled = b.getF64FloatAttr(1.0);
  FailureOr<std::pair<Value, Value>> enc =
      mb.embedTokens(start->ids, "shared", vocab, d, "[vocab_size, d_model]");
  if (failed(enc))
    return failure();
  Value table = enc->first;

  // Each stack's position bias [1, heads, queries, keys], from its block 0.
  auto positionBias = [&](StringRef stack, int64_t len,
                          bool bidirectional) -> FailureOr<Value> {
    std::string name =
        (stack + ".block.0.layer.0.SelfAttention.relative_attention_bias")
            .str();
    FailureOr<Value> t =
        mb.weight(name + ".weight", {*buckets, heads},
                  "[relative_attention_num_buckets, num_heads]");
    if (failed(t))
      return failure();
    return mb.relativePositionBias(mb.loc(name), *t, len, len, *maxDistance,
                                   bidirectional);
  };
  auto norm = [&](const LayerWeights &w, StringRef name, Value x) {
    FailureOr<Value> g = w(name, {d}, "[d_model]");
    if (failed(g))
      return g;
    return FailureOr<Value>(
        RmsNormOp::create(b, w.loc(), x, *g, b.getF64FloatAttr(*eps))
            .getResult());
  };
  // One attention sub-layer (`sub` = "layer.<k>.", `module` SelfAttention or
  // EncDecAttention) with its residual.
  auto attention = [&](const LayerWeights &w, StringRef sub, StringRef module,
                       Value x, Value memory, bool causal,
                       Value bias) -> FailureOr<Value> {
    std::string p = (sub + module + ".").str();
    StringRef in = "[num_heads * d_kv, d_model]";
    FailureOr<Value> n = norm(w, (sub + "layer_norm.weight").str(), x),
                     wq = w(p + "q.weight", {inner, d}, in),
                     wk = w(p + "k.weight", {inner, d}, in),
                     wv = w(p + "v.weight", {inner, d}, in),
                     wo = w(p + "o.weight", {d, inner},
                            "[d_model, num_heads * d_kv]");
    if (!allFound({n, wq, wk, wv, wo}))
      return failure();
    Value a = mb.multiHeadAttention(w.loc(), *n, memory,
                                    {*wq, {}, *wk, {}, *wv, {}, *wo, {}}, heads,
                                    dh, causal, bias, unscaled);
    return AddOp::create(b, w.loc(), x, a).getResult();
  };
  auto feedForward = [&](const LayerWeights &w, StringRef sub,
                         Value x) -> FailureOr<Value> {
    std::string p = (sub + "DenseReluDense.").str();
    StringRef up = "[d_ff, d_model]";
    FailureOr<Value> n = norm(w, (sub + "layer_norm.weight").str(), x),
                     gate =
                         w.optional(ffn->gated, p + "wi_0.weight", {ff, d}, up),
                     wi = w(p + (ffn->gated ? "wi_1" : "wi") + ".weight",
                            {ff, d}, up),
                     wo = w(p + "wo.weight", {d, ff}, "[d_model, d_ff]");
    if (!allFound({n, gate, wi, wo}))
      return failure();
    Value y = FfnOp::create(b, w.loc(), x.getType(), *n, *gate,
                            /*gate_bias=*/Value(), *wi, /*up_bias=*/Value(),
                            *wo, /*down_bias=*/Value(), ffn->activation);
    return AddOp::create(b, w.loc(), x, y).getResult();
  };

  // The decoder's final norm, output scale and LM head.
  auto finish = [&](Value decoded) -> LogicalResult {
    Location headLoc = mb.loc("lm_head");
    FailureOr<Value> out =
        norm(LayerWeights(mb, "decoder."), "final_layer_norm.weight", decoded);
    if (failed(out))
      return failure();
    Value h = *out;
    if (*scaleOutput)
      h = mb.scaleBy(headLoc, h, 1.0 / std::sqrt(static_cast<double>(d)));
    return mb.finishLmHead(headLoc, h, table, *tied, "[vocab_size, d_model]");
  };
  // A --kv-cache build: @encoder hands each decoder layer's cross-attention
  // keys and values (from the encoder output `encOut`) to the decoder step
  // @main, whose self-attention bias follows the run-time positions.
  auto buildStep = [&](Value encOut) -> FailureOr<Value> {
    StringRef in = "[num_heads * d_kv, d_model]";
    SmallVector<std::pair<std::string, Value>> crossKV;
    for (int64_t i = 0; i < *decLayers; ++i) {
      LayerWeights w(mb, "decoder.block." + std::to_string(i) + ".");
      std::string p = "layer.1.EncDecAttention.";
      FailureOr<Value> wk = w(p + "k.weight", {inner, d}, in),
                       wv = w(p + "v.weight", {inner, d}, in);
      if (!allFound({wk, wv}))
        return failure();
      crossKV.push_back(
          {ModelBuilder::crossKeyName(i),
           mb.projectHeads(w.loc(), encOut, *wk, Value(), heads, dh)});
      crossKV.push_back(
          {ModelBuilder::crossValueName(i),
           mb.projectHeads(w.loc(), encOut, *wv, Value(), heads, dh)});
    }
    mb.finishEncoder(crossKV);
    FailureOr<ModelBuilder::Seq2SeqStep> step =
        mb.startSeq2SeqStep(*start, *decLayers, heads, dh);
    if (failed(step))
      return failure();
    FailureOr<std::pair<Value, Value>> dec = mb.embedTokens(
        step->decoderIds, "shared", vocab, d, "[vocab_size, d_model]");
    std::string biasName =
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias";
    FailureOr<Value> biasTable =
        mb.weight(biasName + ".weight", {*buckets, heads},
                  "[relative_attention_num_buckets, num_heads]");
    if (failed(dec) || failed(biasTable))
      return failure();
    table = dec->first;
    Value decBias = mb.stepRelativePositionBias(mb.loc(biasName), *biasTable,
                                                *step->decode, *maxDistance);
    Value padding = step->sourcePadding;
    return mb.decoderLayers(
        dec->second, *decLayers, "decoder.block.",
        [&](int64_t i, const LayerWeights &w, Value x) -> FailureOr<Value> {
          ArrayRef<Value> extras = mb.layerExtras();
          std::string self = "layer.0.SelfAttention.",
                      cross = "layer.1.EncDecAttention.";
          StringRef out = "[d_model, num_heads * d_kv]";
          FailureOr<Value> n1 = norm(w, "layer.0.layer_norm.weight", x),
                           wq = w(self + "q.weight", {inner, d}, in),
                           wk = w(self + "k.weight", {inner, d}, in),
                           wv = w(self + "v.weight", {inner, d}, in),
                           wo = w(self + "o.weight", {d, inner}, out),
                           cq = w(cross + "q.weight", {inner, d}, in),
                           co = w(cross + "o.weight", {d, inner}, out);
          if (!allFound({n1, wq, wk, wv, wo, cq, co}))
            return failure();
          ModelBuilder::AttentionOptions opts;
          opts.scale = unscaled;
          opts.scoreBias = [&](int64_t) { return extras[0]; };
          FailureOr<Value> a = mb.attention(
              i, *n1, step->decode, {*wq, {}, *wk, {}, *wv, {}, *wo, {}}, heads,
              heads, dh, opts);
          if (failed(a))
            return failure();
          Value h = AddOp::create(b, w.loc(), x, *a);
          FailureOr<Value> n2 = norm(w, "layer.1.layer_norm.weight", h);
          if (failed(n2))
            return failure();
          Value c = mb.stepCrossAttention(
              w.loc(), *n2, step->crossKeys[i], step->crossValues[i], *cq,
              Value(), *co, Value(), heads, dh, padding ? extras[1] : Value(),
              unscaled);
          h = AddOp::create(b, w.loc(), h, c);
          return feedForward(w, "layer.2.", h);
        },
        padding ? ValueRange{decBias, padding} : ValueRange{decBias},
        /*firstIndex=*/encLayers);
  };

  FailureOr<Value> encBias =
      positionBias("encoder", start->sourceLen, /*bidirectional=*/true);
  if (failed(encBias))
    return failure();
  // The encoder's padding masks its own keys and the cross-attention's.
  Value padding = start->sourcePadding;
  if (padding)
    encBias = mb.addScoreBiases(mb.loc("encoder"), *encBias, padding);
  FailureOr<Value> encoded = mb.decoderLayers(
      enc->second, encLayers, "encoder.block.",
      [&](int64_t, const LayerWeights &w, Value x) -> FailureOr<Value> {
        FailureOr<Value> h =
            attention(w, "layer.0.", "SelfAttention", x, Value(),
                      /*causal=*/false, mb.layerExtras()[0]);
        if (failed(h))
          return failure();
        return feedForward(w, "layer.1.", *h);
      },
      ValueRange{*encBias});
  if (failed(encoded))
    return failure();
  FailureOr<Value> encOut =
      norm(LayerWeights(mb, "encoder."), "final_layer_norm.weight", *encoded);
  if (succeeded(encOut) && mb.options.kvCache > 0) {
    FailureOr<Value> decoded = buildStep(*encOut);
    if (failed(decoded))
      return failure();
    return finish(*decoded);
  }
  FailureOr<std::pair<Value, Value>> dec = mb.embedTokens(
      start->decoderIds, "shared", vocab, d, "[vocab_size, d_model]");
  FailureOr<Value> decBias =
      positionBias("decoder", start->targetLen, /*bidirectional=*/false);
  if (failed(encOut) || failed(dec) || failed(decBias))
    return failure();
  // Decoder layers follow the encoder's in one stack; they see the encoder
  // output and the position bias as extras.
  FailureOr<Value> decoded = mb.decoderLayers(
      dec->second, *decLayers, "decoder.block.",
      [&](int64_t, const LayerWeights &w, Value x) -> FailureOr<Value> {
        ArrayRef<Value> extras = mb.layerExtras();
        FailureOr<Value> h = attention(w, "layer.0.", "SelfAttention", x,
                                       Value(), /*causal=*/true, extras[1]);
        if (failed(h))
          return failure();
        h = attention(w, "layer.1.", "EncDecAttention", *h, extras[0],
                      /*causal=*/false, padding ? extras[2] : Value());
        if (failed(h))
          return failure();
        return feedForward(w, "layer.2.", *h);
      },
      padding ? ValueRange{*encOut, *decBias, padding}
              : ValueRange{*encOut, *decBias},
      /*firstIndex=*/encLayers);
  if (failed(decoded))
    return failure();
  return finish(*decoded);
}
