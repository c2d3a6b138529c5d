//===- Gpt2.cpp - GPT2LMHeadModel checkpoints -----------------------------===//
//
// GPT2LMHeadModel (transformers' modeling_gpt2): token + learned position
// embeddings, pre-LN causal blocks, a final LayerNorm and the LM head, which
// is tied to the token embedding unless the config unties it. The result is
// the logits.
//
// GPT-2's projections are Conv1D modules whose weights are stored [in, out],
// the transpose of nn.Linear's [out, in] that attn.linear/mha/ffn take: they
// are bound as `transpose` views. The fused query/key/value projection
// `c_attn` ([D, 3D], bias [3D]) is bound as three gather views of column
// blocks (bias: element blocks) of the one tensor, so that the checkpoint is
// used as stored. The tied head binds the embedding table once: the
// embedding lookup and the LM head read the same attn.weight.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildGpt2(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  auto dims = c.getPositiveInts(
      {"vocab_size", "n_embd", "n_layer", "n_head", "n_positions"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], layers = (*dims)[2],
                heads = (*dims)[3], positions = (*dims)[4];
  FailureOr<int64_t> ff = c.getPositiveInt("n_inner", 4 * d);
  FailureOr<double> eps = c.getFloat("layer_norm_epsilon", 1e-5);
  FailureOr<std::string> act = c.getString("activation_function", "gelu_new");
  FailureOr<bool> scaleWeights = c.getBool("scale_attn_weights", true),
                  scaleByLayer =
                      c.getBool("scale_attn_by_inverse_layer_idx", false),
                  crossAttention = c.getBool("add_cross_attention", false),
                  tied = c.getBool("tie_word_embeddings", true);
  if (failed(ff) || failed(eps) || failed(act) || failed(scaleWeights) ||
      failed(scaleByLayer) || failed(crossAttention) || failed(tied))
    return failure();
  FailureOr<Activation> activation =
      parseActivation(c, "activation_function", *act);
  if (failed(activation))
    return failure();
  if (*crossAttention)
    return emitError(c.keyLoc("add_cross_attention"))
           << "GPT-2 with cross-attention (add_cross_attention) is not "
              "supported";
  if (failed(checkHeadsDivide(c, "n_embd", d, "n_head", heads)))
    return failure();

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"transformer.", ""}, "wte.weight", "n_positions", positions);
  if (failed(start))
    return failure();
  const std::string &p = start->prefix;

  OpBuilder &b = mb.b;
  auto hType = mb.tensorType({start->batch, start->seq, d});
  Location embLoc = mb.loc(p + "wte");
  FailureOr<Value> wte =
      mb.weight(p + "wte.weight", {vocab, d}, "[vocab_size, n_embd]");
  FailureOr<Value> wpe =
      mb.weight(p + "wpe.weight", {positions, d}, "[n_positions, n_embd]");
  if (failed(wte) || failed(wpe))
    return failure();
  Value h = EmbeddingOp::create(b, embLoc, hType, start->ids, *wte);
  const ModelBuilder::DecodeInputs *decode =
      mb.addLearnedPositions(embLoc, h, *wpe, start->ids, /*offset=*/0);

  int64_t dh = d / heads;
  auto buildLayer = [&](int64_t i, const LayerWeights &w,
                        Value x) -> FailureOr<Value> {
    Location l = w.loc();
    StringRef dv = "[n_embd]";
    // Column block `part` (0: query, 1: key, 2: value) of c_attn.
    auto qkv = [&](int64_t part) {
      return w("attn.c_attn.weight", {d, 3 * d}, "[n_embd, 3 * n_embd]",
               GatherView{1, {part * d, d}}, /*transpose=*/true);
    };
    auto qkvBias = [&](int64_t part) {
      return w("attn.c_attn.bias", {3 * d}, "[3 * n_embd]",
               GatherView{0, {part * d, d}});
    };
    FailureOr<Value> g1 = w("ln_1.weight", {d}, dv),
                     be1 = w("ln_1.bias", {d}, dv), wq = qkv(0), wk = qkv(1),
                     wv = qkv(2), bq = qkvBias(0), bk = qkvBias(1),
                     bv = qkvBias(2),
                     wo = w("attn.c_proj.weight", {d, d}, "[n_embd, n_embd]",
                            std::nullopt, true),
                     bo = w("attn.c_proj.bias", {d}, dv),
                     g2 = w("ln_2.weight", {d}, dv),
                     be2 = w("ln_2.bias", {d}, dv),
                     w1 = w("mlp.c_fc.weight", {d, *ff}, "[n_embd, n_inner]",
                            std::nullopt, true),
                     b1 = w("mlp.c_fc.bias", {*ff}, "[n_inner]"),
                     w2 = w("mlp.c_proj.weight", {*ff, d}, "[n_inner, n_embd]",
                            std::nullopt, true),
                     b2 = w("mlp.c_proj.bias", {d}, dv);
    if (!allFound(
            {g1, be1, wq, wk, wv, bq, bk, bv, wo, bo, g2, be2, w1, b1, w2, b2}))
      return failure();
    // HF divides the scores by sqrt(head_dim) when scale_attn_weights and
    // also by (layer index + 1) when scale_attn_by_inverse_layer_idx.
    // The default (no attribute) is attn.mha's 1/sqrt(head_dim).
    FloatAttr scale;
    if (!*scaleWeights || *scaleByLayer)
      scale = b.getF64FloatAttr(
          (*scaleWeights ? 1.0 / std::sqrt(double(dh)) : 1.0) /
          (*scaleByLayer ? double(i + 1) : 1.0));
    auto attention = [&](Value n1) -> FailureOr<Value> {
      if (decode)
        return mb.cachedAttention(i, n1, *decode, *wq, *bq, *wk, *bk, *wv, *bv,
                                  *wo, *bo, heads, heads, dh, scale,
                                  std::nullopt);
      return mb.multiHeadAttention(l, n1, /*memory=*/Value(),
                                   {*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo},
                                   heads, dh, /*causal=*/true,
                                   /*scoreBias=*/Value(), scale);
    };
    return mb.layerNormDecoderLayer(
        l, x, {*g1, *be1, *g2, *be2, *w1, *b1, *w2, *b2}, *eps, *activation,
        ModelBuilder::FfnInput::Sequential, attention);
  };
  FailureOr<Value> out = mb.decoderLayers(h, layers, p + "h.", buildLayer);
  if (failed(out))
    return failure();
  return mb.finishLmHeadAfterLayerNorm(mb.loc("lm_head"), *out, p + "ln_f",
                                       "[n_embd]", *eps, *wte, *tied,
                                       "[vocab_size, n_embd]");
}
