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
  FailureOr<int64_t> rotaryDim = rotaryWidth(
      c, dh, *rope,
      c.has("rope_parameters") ? "partial_rotary_factor" : "rotary_pct",
      "the partial rotary factor");
  if (failed(rotaryDim))
    return failure();

  FailureOr<ModelBuilder::DecoderStart> start = mb.startDecoder(
      {"gpt_neox.", ""}, "embed_in", vocab, d, "[vocab_size, hidden_size]");
  if (failed(start))
    return failure();
  const std::string &p = start->prefix;

  auto buildLayer = [&](int64_t i, const LayerWeights &w,
                        Value x) -> FailureOr<Value> {
    FailureOr<MegatronLayerWeights> lw = readMegatronLayer(
        w, "attention", d, ff, "intermediate_size", heads, dh, *bias);
    if (failed(lw))
      return failure();
    ModelBuilder::AttentionOptions opts;
    opts.rope = *rope;
    opts.rotaryDim = *rotaryDim;
    // Parallel: x + attn(ln1(x)) + mlp(ln2(x)); sequential: the FFN reads
    // x + attn.
    return mb.layerNormDecoderLayer(
        w.loc(), x, lw->normsAndFfn, *eps, *activation,
        *parallel ? ModelBuilder::FfnInput::Parallel
                  : ModelBuilder::FfnInput::Sequential,
        i, start->decode, lw->attention, heads, heads, dh, opts);
  };
  FailureOr<Value> out =
      mb.decoderLayers(start->h, layers, p + "layers.", buildLayer);
  if (failed(out))
    return failure();
  // transformers 4 saved the head as embed_out, 5 as lm_head.
  StringRef head =
      c.findTensor("embed_out.weight") ? "embed_out.weight" : "lm_head.weight";
  return mb.finishLmHeadAfterLayerNorm(
      mb.loc("embed_out"), *out, p + "final_layer_norm", "[hidden_size]", *eps,
      start->table, *tied, "[vocab_size, hidden_size]", head);
}
