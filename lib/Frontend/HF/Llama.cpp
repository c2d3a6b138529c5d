//===- Llama.cpp - LLaMA-like decoder checkpoints -------------------------===//
//
// LlamaForCausalLM (transformers' modeling_llama): token embedding, pre-norm
// decoder layers (RMSNorm; causal grouped-query self-attention with rotary
// positions on the queries and keys; RMSNorm; SwiGLU FFN
// down(silu(gate(x)) * up(x))), a final RMSNorm and the LM head. The result
// is the logits.
//
// The same builder reads the families that share this structure, with
// their differences as options:
// - MistralForCausalLM: sliding-window attention (`sliding_window`);
// - Qwen2ForCausalLM: biases on the query/key/value projections (not the
//   output), sliding windows per `layer_types`;
// - Qwen3ForCausalLM: an RMSNorm over each query and key head (q_norm,
//   k_norm) before the rotation;
// - GemmaForCausalLM: the embedding scaled by sqrt(hidden_size), RMSNorms
//   that scale by (1 + weight), a GELU (tanh) gated FFN, a tied head;
// - Phi3ForCausalLM: fused projections (qkv_proj, gate_up_proj, bound as
//   gather views of their row blocks), rotary on the first
//   partial_rotary_factor of each head, a sliding window on every layer;
// - Gemma2ForCausalLM: Gemma's with RMSNorms after the attention and around
//   the FFN, the score scale query_pre_attn_scalar^-1/2, sliding windows on
//   alternate layers and soft-capped logits (final_logit_softcapping);
//   soft-capped attention scores (attn_logit_softcapping), which attn.sdpa
//   has no form for, are refused.
//
// Rotary positions apply between the projections and the attention, which
// attn.mha does not model, so each layer's attention is built from its
// parts (ModelBuilder::attention): attn.linear projections, head split,
// attn.rotary on the queries and keys, attn.sdpa (causal, fewer kv heads
// for GQA, a window), head merge and the output projection.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildLlama(ModelBuilder &mb) {
  return buildLlamaLike(mb, LlamaFamily::Llama);
}

LogicalResult mlir::attn::hf::buildLlamaLike(ModelBuilder &mb,
                                             LlamaFamily family) {
  Checkpoint &c = mb.ckpt;
  const bool gemma2 = family == LlamaFamily::Gemma2,
             gemma = family == LlamaFamily::Gemma || gemma2,
             qwen2 = family == LlamaFamily::Qwen2,
             qwen3 = family == LlamaFamily::Qwen3,
             phi3 = family == LlamaFamily::Phi3;
  FailureOr<DecoderSizes> sizes = readDecoderSizes(c);
  if (failed(sizes))
    return failure();
  const auto [vocab, d, ff, layers, heads, kvHeads] = *sizes;
  if (!c.has("head_dim") &&
      failed(
          checkHeadsDivide(c, "hidden_size", d, "num_attention_heads", heads)))
    return failure();
  FailureOr<int64_t> dh = c.getPositiveInt("head_dim", d / heads);
  FailureOr<double> eps = c.getFloat("rms_norm_eps", 1e-6);
  // Gemma's checkpoints name the FFN activation hidden_activation (older
  // configs) or hidden_act.
  StringRef actKey =
      gemma && c.has("hidden_activation") ? "hidden_activation" : "hidden_act";
  FailureOr<std::string> act =
      c.getString(actKey, gemma ? "gelu_pytorch_tanh" : "silu");
  // Qwen2 always has query/key/value biases and no output bias.
  FailureOr<bool> attnBias = c.getBool("attention_bias", false),
                  mlpBias = c.getBool("mlp_bias", false),
                  tied = c.getBool("tie_word_embeddings", gemma),
                  bidirectional =
                      c.getBool("use_bidirectional_attention", false),
                  useSliding = c.getBool("use_sliding_window", false);
  if (failed(dh) || failed(eps) || failed(act) || failed(attnBias) ||
      failed(mlpBias) || failed(tied) || failed(bidirectional) ||
      failed(useSliding))
    return failure();
  FailureOr<Activation> activation = parseActivation(c, actKey, *act);
  if (failed(activation))
    return failure();
  if (failed(checkKvHeadsDivide(c, heads, "num_key_value_heads", kvHeads)))
    return failure();
  if (*dh % 2 != 0)
    return emitError(
               c.keyLoc(c.has("head_dim") ? "head_dim" : "num_attention_heads"))
           << "the head width " << *dh
           << " is odd; rotary positions rotate pairs of channels";
  if (*bidirectional)
    return c.flagError("use_bidirectional_attention", true)
           << "only causal attention is supported";
  // Gemma 2's scale and soft-capping.
  FailureOr<double> preAttnScalar = gemma2 ? c.getFloat("query_pre_attn_scalar")
                                           : FailureOr<double>(0.0),
                    finalSoftcap =
                        gemma2 ? c.getFloat("final_logit_softcapping", 0.0)
                               : FailureOr<double>(0.0);
  if (failed(preAttnScalar) || failed(finalSoftcap))
    return failure();
  if (gemma2 && c.has("attn_logit_softcapping"))
    return emitError(c.keyLoc("attn_logit_softcapping"))
           << "config.json key \"attn_logit_softcapping\" is set: attn.sdpa "
              "has no soft-capping of attention scores (tanh(s / c) * c); "
              "only attn_logit_softcapping: null is supported";
  if (gemma2 && *preAttnScalar <= 0.0)
    return emitError(c.keyLoc("query_pre_attn_scalar"))
           << "config.json key \"query_pre_attn_scalar\" must be positive, got "
           << *preAttnScalar;
  if (gemma2 && *finalSoftcap < 0.0)
    return emitError(c.keyLoc("final_logit_softcapping"))
           << "config.json key \"final_logit_softcapping\" must be positive "
              "or null, got "
           << *finalSoftcap;
  FailureOr<RopeConfig> rope =
      readRope(c, 10000.0, "rope_theta", phi3 ? "partial_rotary_factor" : "");
  if (failed(rope))
    return failure();
  // transformers' Phi-3 `generate` drops its KV cache once, when the
  // sequence first grows past original_max_position_embeddings, and
  // recomputes all of it; with LongRoPE that rotates every cached key by the
  // long factors, which the generation session then does too.
  if (phi3 && rope->scaling == RopeConfig::Scaling::LongRope)
    mb.setRecomputePast(*rope->lengthThreshold);
  FailureOr<int64_t> rotaryDim = rotaryWidth(
      c, *dh, *rope, "partial_rotary_factor", "partial_rotary_factor");
  if (failed(rotaryDim))
    return failure();
  // The windows of the layers: Mistral's sliding_window applies to all of
  // them; Qwen's to those layer_types marks (transformers 5), or, in older
  // configs, to layers from max_window_layers on when use_sliding_window.
  if ((qwen2 || qwen3) && *useSliding && !c.has("layer_types"))
    return emitError(c.keyLoc("use_sliding_window"))
           << "config.json key \"use_sliding_window\" is true without "
              "\"layer_types\"; only configs that list each layer's type "
              "support sliding windows";
  SmallVector<int64_t> windows;
  for (int64_t i = 0; i < layers; ++i) {
    // transformers 4's Gemma 2 configs have no layer_types: the even
    // layers slide.
    if (gemma2 && !c.has("layer_types")) {
      FailureOr<int64_t> w = i % 2 == 0 ? c.getPositiveInt("sliding_window")
                                        : FailureOr<int64_t>(0);
      if (failed(w))
        return failure();
      windows.push_back(*w);
      continue;
    }
    FailureOr<int64_t> w = layerWindow(
        c, i, layers,
        family == LlamaFamily::Mistral || phi3 ? "sliding_window" : "");
    if (failed(w))
      return failure();
    windows.push_back(*w);
  }
  const bool qkvBias = *attnBias || qwen2, oBias = *attnBias;

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"model.", ""}, "embed_tokens.weight");
  if (failed(start))
    return failure();
  std::string p = start->prefix;

  OpBuilder &b = mb.b;
  auto hType = mb.tensorType({start->batch, start->seq, d});
  FailureOr<std::pair<Value, Value>> embedded = mb.embedTokens(
      start->ids, p + "embed_tokens", vocab, d, "[vocab_size, hidden_size]");
  if (failed(embedded))
    return failure();
  Location embLoc = mb.loc(p + "embed_tokens");
  auto [table, h] = *embedded;
  // Gemma scales the embeddings by sqrt(hidden_size), rounded to the
  // weights' type as transformers does.
  if (gemma)
    h = mb.scaleBy(embLoc, h, std::sqrt(double(d)));
  const ModelBuilder::DecodeInputs *decode = mb.addStepInputs(start->ids);
  // An RMSNorm of `x` by the checkpoint's weight `g`; Gemma's scales by
  // (1 + g).
  auto rmsNorm = [&](Location l, Value x, Value g) -> Value {
    if (gemma)
      g = mb.addConstant(l, g, 1.0);
    return RmsNormOp::create(b, l, x.getType(), x, g, b.getF64FloatAttr(*eps));
  };

  auto buildLayer = [&](int64_t i, const LayerWeights &w,
                        Value x) -> FailureOr<Value> {
    Location l = w.loc();
    int64_t qWidth = heads * *dh, kvWidth = kvHeads * *dh;
    // Phi-3's fused projections: rows [start, start + size) of one tensor.
    auto fused = [&](StringRef name, int64_t rows, StringRef dims,
                     int64_t start, int64_t size) {
      return w(name, {rows, d}, dims, GatherView{0, {start, size}});
    };
    StringRef qkvDims = "[(num_attention_heads + 2 * num_key_value_heads) * "
                        "head_dim, hidden_size]",
              gateUpDims = "[2 * intermediate_size, hidden_size]";
    int64_t qkvRows = qWidth + 2 * kvWidth;
    FailureOr<Value>
        g1 = w("input_layernorm.weight", {d}, "[hidden_size]"),
        wq = phi3 ? fused("self_attn.qkv_proj.weight", qkvRows, qkvDims, 0,
                          qWidth)
                  : w("self_attn.q_proj.weight", {qWidth, d},
                      "[num_attention_heads * head_dim, "
                      "hidden_size]"),
        wk = phi3 ? fused("self_attn.qkv_proj.weight", qkvRows, qkvDims, qWidth,
                          kvWidth)
                  : w("self_attn.k_proj.weight", {kvWidth, d},
                      "[num_key_value_heads * head_dim, "
                      "hidden_size]"),
        wv = phi3 ? fused("self_attn.qkv_proj.weight", qkvRows, qkvDims,
                          qWidth + kvWidth, kvWidth)
                  : w("self_attn.v_proj.weight", {kvWidth, d},
                      "[num_key_value_heads * head_dim, "
                      "hidden_size]"),
        wo = w("self_attn.o_proj.weight", {d, qWidth},
               "[hidden_size, num_attention_heads * head_dim]"),
        bq = w.optional(qkvBias, "self_attn.q_proj.bias", {qWidth},
                        "[num_attention_heads * head_dim]"),
        bk = w.optional(qkvBias, "self_attn.k_proj.bias", {kvWidth},
                        "[num_key_value_heads * head_dim]"),
        bv = w.optional(qkvBias, "self_attn.v_proj.bias", {kvWidth},
                        "[num_key_value_heads * head_dim]"),
        bo = w.optional(oBias, "self_attn.o_proj.bias", {d}, "[hidden_size]"),
        qn = w.optional(qwen3, "self_attn.q_norm.weight", {*dh}, "[head_dim]"),
        kn = w.optional(qwen3, "self_attn.k_norm.weight", {*dh}, "[head_dim]"),
        g2 = w("post_attention_layernorm.weight", {d}, "[hidden_size]"),
        wg = phi3 ? fused("mlp.gate_up_proj.weight", 2 * ff, gateUpDims, 0, ff)
                  : w("mlp.gate_proj.weight", {ff, d},
                      "[intermediate_size, hidden_size]"),
        wu = phi3 ? fused("mlp.gate_up_proj.weight", 2 * ff, gateUpDims, ff, ff)
                  : w("mlp.up_proj.weight", {ff, d},
                      "[intermediate_size, hidden_size]"),
        wd = w("mlp.down_proj.weight", {d, ff},
               "[hidden_size, intermediate_size]"),
        bg = w.optional(*mlpBias, "mlp.gate_proj.bias", {ff},
                        "[intermediate_size]"),
        bu = w.optional(*mlpBias, "mlp.up_proj.bias", {ff},
                        "[intermediate_size]"),
        bd = w.optional(*mlpBias, "mlp.down_proj.bias", {d}, "[hidden_size]");
    if (!allFound({g1, wq, wk, wv, wo, bq, bk, bv, bo, qn, kn, g2, wg, wu, wd,
                   bg, bu, bd}))
      return failure();

    ModelBuilder::AttentionOptions opts;
    opts.rope = *rope;
    opts.rotaryDim = *rotaryDim;
    opts.window = windows[i];
    if (gemma2)
      opts.scale = b.getF64FloatAttr(1.0 / std::sqrt(*preAttnScalar));
    if (qwen3)
      opts.headNorm = [&](Value t, bool isKey) {
        return rmsNorm(l, t, isKey ? *kn : *qn);
      };
    Value n1 = rmsNorm(l, x, *g1);
    FailureOr<Value> attn =
        mb.attention(i, n1, decode, {*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo},
                     heads, kvHeads, *dh, opts);
    if (failed(attn))
      return failure();
    if (!gemma2) {
      Value res1 = AddOp::create(b, l, hType, x, *attn);
      Value n2 = rmsNorm(l, res1, *g2);
      Value ffn = FfnOp::create(b, l, hType, n2, *wg, *bg, *wu, *bu, *wd, *bd,
                                *activation);
      return AddOp::create(b, l, hType, res1, ffn).getResult();
    }
    // Gemma 2: x + post_attention_norm(attn), then
    // + post_feedforward_norm(ffn(pre_feedforward_norm(.))).
    FailureOr<Value> g3 = w("pre_feedforward_layernorm.weight", {d},
                            "[hidden_size]"),
                     g4 = w("post_feedforward_layernorm.weight", {d},
                            "[hidden_size]");
    if (failed(g3) || failed(g4))
      return failure();
    Value res1 = AddOp::create(b, l, hType, x, rmsNorm(l, *attn, *g2));
    Value ffn = FfnOp::create(b, l, hType, rmsNorm(l, res1, *g3), *wg, *bg, *wu,
                              *bu, *wd, *bd, *activation);
    return AddOp::create(b, l, hType, res1, rmsNorm(l, ffn, *g4)).getResult();
  };
  FailureOr<Value> out = mb.decoderLayers(h, layers, p + "layers.", buildLayer);
  if (failed(out))
    return failure();
  h = *out;
  Location headLoc = mb.loc("lm_head");
  FailureOr<Value> gf = mb.weight(p + "norm.weight", {d}, "[hidden_size]");
  if (failed(gf))
    return failure();
  h = rmsNorm(headLoc, h, *gf);
  return mb.finishLmHead(headLoc, h, table, *tied, "[vocab_size, hidden_size]",
                         "lm_head.weight", Value(), *finalSoftcap);
}
