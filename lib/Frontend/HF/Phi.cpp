//===- Phi.cpp - PhiForCausalLM checkpoints -------------------------------===//
//
// PhiForCausalLM (transformers' modeling_phi; Phi-1, Phi-1.5, Phi-2): token
// embedding, layers whose one LayerNorm feeds both the attention and the FFN
// in parallel, x + attn(ln(x)) + mlp(ln(x)), with causal self-attention
// (biases; rotary positions on the first partial_rotary_factor of each
// head's channels; the output projection `dense`) and a GELU FFN
// fc2(act(fc1(x))), a final LayerNorm and an LM head with a bias. The
// result is the logits.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildPhi(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  FailureOr<DecoderSizes> sizes = readDecoderSizes(c);
  if (failed(sizes))
    return failure();
  const auto [vocab, d, ff, layers, heads, kvHeads] = *sizes;
  FailureOr<double> eps = c.getFloat("layer_norm_eps", 1e-5);
  FailureOr<std::string> act = c.getString("hidden_act", "gelu_new");
  FailureOr<bool> qkNorm = c.getBool("qk_layernorm", false),
                  tied = c.getBool("tie_word_embeddings", false);
  if (failed(eps) || failed(act) || failed(qkNorm) || failed(tied))
    return failure();
  FailureOr<Activation> activation = parseActivation(c, "hidden_act", *act);
  if (failed(activation))
    return failure();
  if (*qkNorm)
    return c.flagError("qk_layernorm", true)
           << "only Phi without query/key LayerNorms is supported";
  if (*tied)
    return c.flagError("tie_word_embeddings", true)
           << "Phi's LM head (with its bias) is only supported untied";
  if (failed(
          checkHeadsDivide(c, "hidden_size", d, "num_attention_heads", heads)))
    return failure();
  if (failed(checkKvHeadsDivide(c, heads, "num_key_value_heads", kvHeads)))
    return failure();
  int64_t dh = d / heads;
  FailureOr<RopeConfig> rope =
      readRope(c, 10000.0, "rope_theta", "partial_rotary_factor");
  if (failed(rope))
    return failure();
  // transformers' default when neither config generation names it.
  if (!c.has("rope_parameters") && !c.has("partial_rotary_factor"))
    rope->partialFactor = 0.5;
  FailureOr<int64_t> rotaryDim = rotaryWidth(
      c, dh, *rope, "partial_rotary_factor", "partial_rotary_factor");
  if (failed(rotaryDim))
    return failure();

  FailureOr<ModelBuilder::DecoderStart> start = mb.startDecoder(
      {"model.", ""}, "embed_tokens", vocab, d, "[vocab_size, hidden_size]");
  if (failed(start))
    return failure();
  const std::string &p = start->prefix;

  auto buildLayer = [&](int64_t i, const LayerWeights &w,
                        Value x) -> FailureOr<Value> {
    int64_t kvWidth = kvHeads * dh;
    StringRef dv = "[hidden_size]";
    FailureOr<Value> g = w("input_layernorm.weight", {d}, dv),
                     be = w("input_layernorm.bias", {d}, dv),
                     wq = w("self_attn.q_proj.weight", {d, d},
                            "[hidden_size, hidden_size]"),
                     bq = w("self_attn.q_proj.bias", {d}, dv),
                     wk = w("self_attn.k_proj.weight", {kvWidth, d},
                            "[num_key_value_heads * head_dim, hidden_size]"),
                     bk = w("self_attn.k_proj.bias", {kvWidth},
                            "[num_key_value_heads * head_dim]"),
                     wv = w("self_attn.v_proj.weight", {kvWidth, d},
                            "[num_key_value_heads * head_dim, hidden_size]"),
                     bv = w("self_attn.v_proj.bias", {kvWidth},
                            "[num_key_value_heads * head_dim]"),
                     wo = w("self_attn.dense.weight", {d, d},
                            "[hidden_size, hidden_size]"),
                     bo = w("self_attn.dense.bias", {d}, dv),
                     w1 = w("mlp.fc1.weight", {ff, d},
                            "[intermediate_size, hidden_size]"),
                     b1 = w("mlp.fc1.bias", {ff}, "[intermediate_size]"),
                     w2 = w("mlp.fc2.weight", {d, ff},
                            "[hidden_size, intermediate_size]"),
                     b2 = w("mlp.fc2.bias", {d}, dv);
    if (!allFound({g, be, wq, bq, wk, bk, wv, bv, wo, bo, w1, b1, w2, b2}))
      return failure();
    ModelBuilder::AttentionOptions opts;
    opts.rope = *rope;
    opts.rotaryDim = *rotaryDim;
    // x + attn(ln(x)) + mlp(ln(x)), the FFN built before the residual sum.
    Location l = w.loc();
    OpBuilder &b = mb.b;
    Value n = LayerNormOp::create(b, l, x, *g, *be, b.getF64FloatAttr(*eps));
    FailureOr<Value> attn = mb.attention(
        i, n, start->decode, {*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo}, heads,
        kvHeads, dh, opts);
    if (failed(attn))
      return failure();
    Value ffn =
        FfnOp::create(b, l, x.getType(), n, /*gate_weight=*/Value(),
                      /*gate_bias=*/Value(), *w1, *b1, *w2, *b2, *activation);
    return AddOp::create(b, l, AddOp::create(b, l, x, *attn), ffn).getResult();
  };
  FailureOr<Value> out =
      mb.decoderLayers(start->h, layers, p + "layers.", buildLayer);
  if (failed(out))
    return failure();
  Location headLoc = mb.loc("lm_head");
  FailureOr<Value> gf = mb.weight(p + "final_layernorm.weight", {d},
                                  "[hidden_size]"),
                   bf = mb.weight(p + "final_layernorm.bias", {d},
                                  "[hidden_size]"),
                   headBias =
                       mb.weight("lm_head.bias", {vocab}, "[vocab_size]");
  if (failed(gf) || failed(bf) || failed(headBias))
    return failure();
  OpBuilder &b = mb.b;
  Value h =
      LayerNormOp::create(b, headLoc, *out, *gf, *bf, b.getF64FloatAttr(*eps));
  return mb.finishLmHead(headLoc, h, start->table, /*tied=*/false,
                         "[vocab_size, hidden_size]", "lm_head.weight",
                         *headBias);
}
