//===- GptNeoX.cpp - GPTNeoXForCausalLM checkpoints -----------------------===//
//
// GPTNeoXForCausalLM (transformers' modeling_gpt_neox; Pythia): token
// embedding (embed_in), layers of LayerNorm + causal self-attention with
// rotary positions on the first partial_rotary_factor (rotary_pct) of each
// head's channels and a GELU FFN, with a parallel residual
// x + attn(ln1(x)) + mlp(ln2(x)) (use_parallel_residual) or a sequential
// one, a final LayerNorm and the untied head (embed_out or lm_head). The result
// is the logits.
//
// The fused query_key_value projection ([3 * hidden, hidden]) interleaves
// the heads: rows [h * 3 * dh, (h + 1) * 3 * dh) hold head h's query, key
// and value. Each of the three is bound as a gather view of its rows, so the
// checkpoint is used as stored.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildGptNeoX(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  auto dims =
      c.getPositiveInts({"vocab_size", "hidden_size", "num_hidden_layers",
                         "num_attention_heads", "intermediate_size"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], layers = (*dims)[2],
                heads = (*dims)[3], ff = (*dims)[4];
  FailureOr<double> eps = c.getFloat("layer_norm_eps", 1e-5);
  FailureOr<std::string> act = c.getString("hidden_act", "gelu");
  FailureOr<bool> parallel = c.getBool("use_parallel_residual", true),
                  bias = c.getBool("attention_bias", true),
                  tied = c.getBool("tie_word_embeddings", false);
  if (failed(eps) || failed(act) || failed(parallel) || failed(bias) ||
      failed(tied))
    return failure();
  FailureOr<Activation> activation = parseActivation(c, "hidden_act", *act);
  if (failed(activation))
    return failure();
  if (failed(
          checkHeadsDivide(c, "hidden_size", d, "num_attention_heads", heads)))
    return failure();
  int64_t dh = d / heads;
  // transformers 4 names the rotary settings rotary_emb_base / rotary_pct.
  FailureOr<RopeConfig> rope = readRope(
      c, 10000.0, "rotary_emb_base",
      c.has("partial_rotary_factor") ? "partial_rotary_factor" : "rotary_pct");
  if (failed(rope))
    return failure();
  // Without rope_parameters, transformers 5 defaults rotary_pct to 0.25.
  if (!c.has("rope_parameters") && !c.has("rotary_pct") &&
      !c.has("partial_rotary_factor"))
    rope->partialFactor = 0.25;
  int64_t rotaryDim = static_cast<int64_t>(dh * rope->partialFactor);
  if (rotaryDim < 2 || rotaryDim % 2 != 0)
    return emitError(c.keyLoc(c.has("rope_parameters") ? "partial_rotary_factor"
                                                       : "rotary_pct"))
           << "the rotary width " << rotaryDim << " (head width " << dh
           << " times the partial rotary factor) must be even and at least 2";

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"gpt_neox.", ""}, "embed_in.weight");
  if (failed(start))
    return failure();
  int64_t batch = start->batch, seq = start->seq;
  std::string p = start->prefix;
  bool decodeStep = mb.options.kvCache > 0;

  OpBuilder &b = mb.b;
  auto hType = mb.tensorType({batch, seq, d});
  FailureOr<Value> table =
      mb.weight(p + "embed_in.weight", {vocab, d}, "[vocab_size, hidden_size]");
  if (failed(table))
    return failure();
  Value h =
      EmbeddingOp::create(b, mb.loc(p + "embed_in"), hType, start->ids, *table);
  ModelBuilder::DecodeInputs decode;
  if (decodeStep)
    decode = mb.addDecodeInputs(start->ids);

  for (int64_t i = 0; i < layers; ++i) {
    std::string lp = p + "layers." + std::to_string(i) + ".";
    auto body = [&](Value x) -> FailureOr<Value> {
      Location l = mb.loc(lp.substr(0, lp.size() - 1));
      auto w = [&](StringRef name, ArrayRef<int64_t> shape, StringRef dims,
                   std::optional<GatherView> gather = std::nullopt) {
        return mb.weight(lp + name.str(), shape, dims, gather);
      };
      // Part `part` (0: query, 1: key, 2: value) of every head's rows.
      auto rows = [&](int64_t part) {
        GatherView view{0, {}};
        for (int64_t hd = 0; hd < heads; ++hd)
          view.ranges.append({(3 * hd + part) * dh, dh});
        return view;
      };
      auto qkv = [&](int64_t part) {
        return w("attention.query_key_value.weight", {3 * d, d},
                 "[3 * hidden_size, hidden_size]", rows(part));
      };
      auto qkvBias = [&](int64_t part) -> FailureOr<Value> {
        if (!*bias)
          return Value();
        return w("attention.query_key_value.bias", {3 * d}, "[3 * hidden_size]",
                 rows(part));
      };
      StringRef dv = "[hidden_size]";
      FailureOr<Value> g1 = w("input_layernorm.weight", {d}, dv),
                       be1 = w("input_layernorm.bias", {d}, dv),
                       g2 = w("post_attention_layernorm.weight", {d}, dv),
                       be2 = w("post_attention_layernorm.bias", {d}, dv),
                       wq = qkv(0), wk = qkv(1), wv = qkv(2), bq = qkvBias(0),
                       bk = qkvBias(1), bv = qkvBias(2),
                       wo = w("attention.dense.weight", {d, d},
                              "[hidden_size, hidden_size]"),
                       bo = *bias ? w("attention.dense.bias", {d}, dv)
                                  : FailureOr<Value>(Value()),
                       w1 = w("mlp.dense_h_to_4h.weight", {ff, d},
                              "[intermediate_size, hidden_size]"),
                       b1 = w("mlp.dense_h_to_4h.bias", {ff},
                              "[intermediate_size]"),
                       w2 = w("mlp.dense_4h_to_h.weight", {d, ff},
                              "[hidden_size, intermediate_size]"),
                       b2 = w("mlp.dense_4h_to_h.bias", {d}, dv);
      for (const FailureOr<Value> &v :
           {g1, be1, g2, be2, wq, wk, wv, bq, bk, bv, wo, bo, w1, b1, w2, b2})
        if (failed(v))
          return failure();
      ModelBuilder::AttentionOptions opts;
      opts.rope = *rope;
      opts.rotaryDim = rotaryDim;
      Value n1 =
          LayerNormOp::create(b, l, x, *g1, *be1, b.getF64FloatAttr(*eps));
      FailureOr<Value> attn = mb.attention(
          i, n1, decodeStep ? &decode : nullptr,
          {*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo}, heads, heads, dh, opts);
      if (failed(attn))
        return failure();
      // Parallel: x + attn(ln1(x)) + mlp(ln2(x)); sequential: the FFN
      // reads x + attn.
      Value mid = AddOp::create(b, l, x, *attn);
      Value n2 = LayerNormOp::create(b, l, *parallel ? x : mid, *g2, *be2,
                                     b.getF64FloatAttr(*eps));
      Value ffn =
          FfnOp::create(b, l, hType, n2, /*gate_weight=*/Value(),
                        /*gate_bias=*/Value(), *w1, *b1, *w2, *b2, *activation);
      return AddOp::create(b, l, mid, ffn).getResult();
    };
    FailureOr<Value> out = decodeStep ? body(h) : mb.layer(i, h, body);
    if (failed(out))
      return failure();
    h = *out;
  }
  Location headLoc = mb.loc("embed_out");
  FailureOr<Value> gf = mb.weight(p + "final_layer_norm.weight", {d},
                                  "[hidden_size]"),
                   bf = mb.weight(p + "final_layer_norm.bias", {d},
                                  "[hidden_size]");
  if (failed(gf) || failed(bf))
    return failure();
  h = LayerNormOp::create(b, headLoc, h, *gf, *bf, b.getF64FloatAttr(*eps));
  // transformers 4 saved the head as embed_out, 5 as lm_head.
  StringRef head =
      c.findTensor("embed_out.weight") ? "embed_out.weight" : "lm_head.weight";
  return mb.finishLmHead(headLoc, h, *table, *tied, "[vocab_size, hidden_size]",
                         head);
}
