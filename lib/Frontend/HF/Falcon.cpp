//===- Falcon.cpp - FalconForCausalLM checkpoints -------------------------===//
//
// FalconForCausalLM (transformers' modeling_falcon): token embedding, layers
// of LayerNorm + causal self-attention with rotary positions + GELU FFN, a
// final LayerNorm and the LM head (tied by default). The result is the
// logits.
//
// The layer's residual is parallel, x + attn(ln(x)) + mlp(ln'(x)), when
// parallel_attn or new_decoder_architecture (ln' = ln_mlp with two
// LayerNorms, else the same input_layernorm), and sequential otherwise
// (post_attention_layernorm before the FFN). The fused query_key_value
// projection has one of three layouts, each bound as gather views of its
// rows:
// - new_decoder_architecture (Falcon-40B/180B): num_kv_heads groups of
//   (heads / num_kv_heads) query heads, one key head and one value head;
// - multi_query (Falcon-7B): all query heads, then one key and one value
//   head;
// - otherwise: per head, its query, key and value (as GPT-NeoX).
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildFalcon(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  auto dims = c.getPositiveInts({"vocab_size", "hidden_size",
                                 "num_hidden_layers", "num_attention_heads"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], layers = (*dims)[2],
                heads = (*dims)[3];
  FailureOr<int64_t> ff = c.getPositiveInt("ffn_hidden_size", 4 * d),
                     kvConfig = c.getPositiveInt("num_kv_heads", heads),
                     numLn = c.getPositiveInt("num_ln_in_parallel_attn", 0);
  FailureOr<double> eps = c.getFloat("layer_norm_epsilon", 1e-5);
  FailureOr<std::string> act = c.getString("activation", "gelu");
  FailureOr<bool> alibi = c.getBool("alibi", false),
                  newArch = c.getBool("new_decoder_architecture", false),
                  multiQuery = c.getBool("multi_query", true),
                  parallel = c.getBool("parallel_attn", true),
                  bias = c.getBool("bias", false),
                  tied = c.getBool("tie_word_embeddings", true);
  if (failed(ff) || failed(kvConfig) || failed(numLn) || failed(eps) ||
      failed(act) || failed(alibi) || failed(newArch) || failed(multiQuery) ||
      failed(parallel) || failed(bias) || failed(tied))
    return failure();
  FailureOr<Activation> activation = parseActivation(c, "activation", *act);
  if (failed(activation))
    return failure();
  if (*alibi)
    return emitError(c.keyLoc("alibi"))
           << "config.json key \"alibi\" is true; only Falcon with rotary "
              "positions is supported";
  if (failed(
          checkHeadsDivide(c, "hidden_size", d, "num_attention_heads", heads)))
    return failure();
  const int64_t dh = d / heads;
  if (dh % 2 != 0)
    return emitError(c.keyLoc("num_attention_heads"))
           << "the head width " << dh
           << " is odd; rotary positions rotate pairs of channels";
  // transformers: two LayerNorms by default with the new architecture.
  int64_t lnCount = c.has("num_ln_in_parallel_attn") ? *numLn
                    : *newArch                       ? 2
                                                     : 1;
  if (*newArch && lnCount != 1 && lnCount != 2)
    return emitError(c.keyLoc("num_ln_in_parallel_attn"))
           << "config.json key \"num_ln_in_parallel_attn\" must be 1 or 2, got "
           << lnCount;
  if (*newArch && lnCount == 1 && !*parallel)
    return emitError(c.keyLoc("parallel_attn"))
           << "config.json key \"parallel_attn\" is false with one LayerNorm "
              "in the new decoder architecture, which has no FFN input";
  const bool twoLn = *newArch && lnCount == 2;
  const bool parallelResidual = *newArch || *parallel;
  const int64_t kvHeads = *newArch ? *kvConfig : *multiQuery ? 1 : heads;
  if (heads % kvHeads != 0)
    return emitError(c.keyLoc("num_kv_heads"))
           << "num_attention_heads " << heads
           << " is not a multiple of num_kv_heads " << kvHeads;
  FailureOr<RopeConfig> rope = readRope(c, 10000.0);
  if (failed(rope))
    return failure();

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"transformer.", ""}, "word_embeddings.weight");
  if (failed(start))
    return failure();
  int64_t batch = start->batch, seq = start->seq;
  std::string p = start->prefix;
  bool decodeStep = mb.options.kvCache > 0;

  // The rows of the query (part 0), key (1) and value (2) heads in
  // query_key_value.
  const int64_t qkvRows = (heads + 2 * kvHeads) * dh;
  auto rows = [&](int64_t part) {
    GatherView view{0, {}};
    auto add = [&](int64_t head) { view.ranges.append({head * dh, dh}); };
    if (*newArch) {
      int64_t group = heads / kvHeads;
      for (int64_t g = 0; g < kvHeads; ++g) {
        int64_t first = g * (group + 2);
        if (part == 0)
          for (int64_t r = 0; r < group; ++r)
            add(first + r);
        else
          add(first + group + part - 1);
      }
    } else if (*multiQuery) {
      if (part == 0)
        for (int64_t hd = 0; hd < heads; ++hd)
          add(hd);
      else
        add(heads + part - 1);
    } else {
      for (int64_t hd = 0; hd < heads; ++hd)
        add(3 * hd + part);
    }
    // Adjacent rows merge into one range.
    GatherView merged{0, {}};
    for (size_t i = 0; i < view.ranges.size(); i += 2) {
      if (!merged.ranges.empty() &&
          merged.ranges[merged.ranges.size() - 2] + merged.ranges.back() ==
              view.ranges[i])
        merged.ranges.back() += view.ranges[i + 1];
      else
        merged.ranges.append({view.ranges[i], view.ranges[i + 1]});
    }
    return merged;
  };

  OpBuilder &b = mb.b;
  auto hType = mb.tensorType({batch, seq, d});
  FailureOr<Value> table = mb.weight(p + "word_embeddings.weight", {vocab, d},
                                     "[vocab_size, hidden_size]");
  if (failed(table))
    return failure();
  Value h = EmbeddingOp::create(b, mb.loc(p + "word_embeddings"), hType,
                                start->ids, *table);
  ModelBuilder::DecodeInputs decode;
  if (decodeStep)
    decode = mb.addDecodeInputs(start->ids);

  for (int64_t i = 0; i < layers; ++i) {
    std::string lp = p + "h." + std::to_string(i) + ".";
    auto body = [&](Value x) -> FailureOr<Value> {
      Location l = mb.loc(lp.substr(0, lp.size() - 1));
      auto w = [&](StringRef name, ArrayRef<int64_t> shape, StringRef dims,
                   std::optional<GatherView> gather = std::nullopt) {
        return mb.weight(lp + name.str(), shape, dims, gather);
      };
      auto maybe = [&](StringRef name, ArrayRef<int64_t> shape, StringRef dims,
                       std::optional<GatherView> gather =
                           std::nullopt) -> FailureOr<Value> {
        return *bias ? w(name, shape, dims, gather) : FailureOr<Value>(Value());
      };
      StringRef qkvDims = "[(num_attention_heads + 2 * kv heads) * head_dim, "
                          "hidden_size]",
                dv = "[hidden_size]";
      auto qkv = [&](int64_t part) {
        return w("self_attention.query_key_value.weight", {qkvRows, d}, qkvDims,
                 rows(part));
      };
      auto qkvBias = [&](int64_t part) {
        return maybe("self_attention.query_key_value.bias", {qkvRows},
                     "[(num_attention_heads + 2 * kv heads) * head_dim]",
                     rows(part));
      };
      StringRef ln1 = twoLn ? "ln_attn" : "input_layernorm",
                ln2 = twoLn ? "ln_mlp" : "post_attention_layernorm";
      bool hasLn2 = twoLn || !parallelResidual;
      auto norm = [&](StringRef name, StringRef param) -> FailureOr<Value> {
        return w(name.str() + "." + param.str(), {d}, dv);
      };
      FailureOr<Value> g1 = norm(ln1, "weight"), be1 = norm(ln1, "bias"),
                       g2 = hasLn2 ? norm(ln2, "weight")
                                   : FailureOr<Value>(Value()),
                       be2 = hasLn2 ? norm(ln2, "bias")
                                    : FailureOr<Value>(Value()),
                       wq = qkv(0), wk = qkv(1), wv = qkv(2), bq = qkvBias(0),
                       bk = qkvBias(1), bv = qkvBias(2),
                       wo = w("self_attention.dense.weight", {d, d},
                              "[hidden_size, hidden_size]"),
                       bo = maybe("self_attention.dense.bias", {d}, dv),
                       w1 = w("mlp.dense_h_to_4h.weight", {*ff, d},
                              "[ffn_hidden_size, hidden_size]"),
                       b1 = maybe("mlp.dense_h_to_4h.bias", {*ff},
                                  "[ffn_hidden_size]"),
                       w2 = w("mlp.dense_4h_to_h.weight", {d, *ff},
                              "[hidden_size, ffn_hidden_size]"),
                       b2 = maybe("mlp.dense_4h_to_h.bias", {d}, dv);
      for (const FailureOr<Value> &v :
           {g1, be1, g2, be2, wq, wk, wv, bq, bk, bv, wo, bo, w1, b1, w2, b2})
        if (failed(v))
          return failure();
      ModelBuilder::AttentionOptions opts;
      opts.rope = *rope;
      Value n1 =
          LayerNormOp::create(b, l, x, *g1, *be1, b.getF64FloatAttr(*eps));
      FailureOr<Value> attn = mb.attention(
          i, n1, decodeStep ? &decode : nullptr,
          {*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo}, heads, kvHeads, dh, opts);
      if (failed(attn))
        return failure();
      Value mid = AddOp::create(b, l, x, *attn);
      // The FFN's input: ln_mlp(x), the attention's own ln(x), or (the
      // sequential residual) post_attention_layernorm(x + attn).
      Value n2 =
          twoLn
              ? LayerNormOp::create(b, l, x, *g2, *be2, b.getF64FloatAttr(*eps))
                    .getResult()
          : parallelResidual ? n1
                             : LayerNormOp::create(b, l, mid, *g2, *be2,
                                                   b.getF64FloatAttr(*eps))
                                   .getResult();
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
  Location headLoc = mb.loc("lm_head");
  FailureOr<Value> gf = mb.weight(p + "ln_f.weight", {d}, "[hidden_size]"),
                   bf = mb.weight(p + "ln_f.bias", {d}, "[hidden_size]");
  if (failed(gf) || failed(bf))
    return failure();
  h = LayerNormOp::create(b, headLoc, h, *gf, *bf, b.getF64FloatAttr(*eps));
  return mb.finishLmHead(headLoc, h, *table, *tied,
                         "[vocab_size, hidden_size]");
}
