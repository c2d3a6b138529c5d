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
    return c.flagError("alibi", true)
           << "only Falcon with rotary positions is supported";
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
  if (failed(checkKvHeadsDivide(c, heads, "num_kv_heads", kvHeads)))
    return failure();
  FailureOr<RopeConfig> rope = readRope(c, 10000.0);
  if (failed(rope) || failed(checkRopeWidth(c, *rope, dh)))
    return failure();

  FailureOr<ModelBuilder::DecoderStart> start =
      mb.startDecoder({"transformer.", ""}, "word_embeddings", vocab, d,
                      "[vocab_size, hidden_size]");
  if (failed(start))
    return failure();
  const std::string &p = start->prefix;

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
      view = interleavedQkvRows(heads, dh, part);
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

  auto buildLayer = [&](int64_t i, const LayerWeights &w,
                        Value x) -> FailureOr<Value> {
    StringRef dv = "[hidden_size]";
    StringRef ln1 = twoLn ? "ln_attn" : "input_layernorm",
              ln2 = twoLn ? "ln_mlp" : "post_attention_layernorm";
    bool hasLn2 = twoLn || !parallelResidual;
    auto norm = [&](bool present, StringRef name, StringRef param) {
      return w.optional(present, name.str() + "." + param.str(), {d}, dv);
    };
    FailureOr<Value> g1 = norm(true, ln1, "weight"),
                     be1 = norm(true, ln1, "bias"),
                     g2 = norm(hasLn2, ln2, "weight"),
                     be2 = norm(hasLn2, ln2, "bias");
    FailureOr<ModelBuilder::AttentionWeights> aw =
        w.fusedAttention("self_attention.query_key_value", qkvRows, d,
                         "(num_attention_heads + 2 * kv heads) * head_dim",
                         rows, "self_attention.dense", *bias);
    FailureOr<Value> w1 = w("mlp.dense_h_to_4h.weight", {*ff, d},
                            "[ffn_hidden_size, hidden_size]"),
                     b1 = w.optional(*bias, "mlp.dense_h_to_4h.bias", {*ff},
                                     "[ffn_hidden_size]"),
                     w2 = w("mlp.dense_4h_to_h.weight", {d, *ff},
                            "[hidden_size, ffn_hidden_size]"),
                     b2 = w.optional(*bias, "mlp.dense_4h_to_h.bias", {d}, dv);
    if (!allFound({g1, be1, g2, be2, w1, b1, w2, b2}) || failed(aw))
      return failure();
    ModelBuilder::AttentionOptions opts;
    opts.rope = *rope;
    // The FFN's input: ln_mlp(x), the attention's own ln(x), or (the
    // sequential residual) post_attention_layernorm(x + attn).
    ModelBuilder::FfnInput ffnInput = twoLn ? ModelBuilder::FfnInput::Parallel
                                      : parallelResidual
                                          ? ModelBuilder::FfnInput::SharedNorm
                                          : ModelBuilder::FfnInput::Sequential;
    return mb.layerNormDecoderLayer(
        w.loc(), x, {*g1, *be1, *g2, *be2, *w1, *b1, *w2, *b2}, *eps,
        *activation, ffnInput, i, start->decode, *aw, heads, kvHeads, dh, opts);
  };
  FailureOr<Value> out =
      mb.decoderLayers(start->h, layers, p + "h.", buildLayer);
  if (failed(out))
    return failure();
  return mb.finishLmHeadAfterLayerNorm(mb.loc("lm_head"), *out, p + "ln_f",
                                       "[hidden_size]", *eps, start->table,
                                       *tied, "[vocab_size, hidden_size]");
}
