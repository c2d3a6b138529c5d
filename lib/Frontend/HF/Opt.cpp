//===- Opt.cpp - OPTForCausalLM checkpoints -------------------------------===//
//
// OPTForCausalLM (transformers' modeling_opt): token embeddings of width
// word_embed_proj_dim (projected to hidden_size by project_in when the two
// differ) plus learned positions (table row = position + 2), pre-LN causal
// layers (LayerNorm; self-attention with biases; residual; LayerNorm; ReLU
// FFN fc2(act(fc1(x))); residual), a final LayerNorm, project_out when
// project_in exists, and the LM head (tied to the embedding by default).
// The result is the logits.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildOpt(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  auto dims = c.getPositiveInts({"vocab_size", "hidden_size",
                                 "num_hidden_layers", "num_attention_heads",
                                 "ffn_dim", "max_position_embeddings"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], layers = (*dims)[2],
                heads = (*dims)[3], ff = (*dims)[4], positions = (*dims)[5];
  FailureOr<int64_t> embWidth = c.getPositiveInt("word_embed_proj_dim", d);
  FailureOr<std::string> act = c.getString("activation_function", "relu");
  FailureOr<bool> preNorm = c.getBool("do_layer_norm_before", true),
                  noFinalNorm = c.getBool("_remove_final_layer_norm", false),
                  bias = c.getBool("enable_bias", true),
                  affine = c.getBool("layer_norm_elementwise_affine", true),
                  tied = c.getBool("tie_word_embeddings", true);
  if (failed(embWidth) || failed(act) || failed(preNorm) ||
      failed(noFinalNorm) || failed(bias) || failed(affine) || failed(tied))
    return failure();
  FailureOr<Activation> activation =
      parseActivation(c, "activation_function", *act);
  if (failed(activation))
    return failure();
  // OPT-350m's post-LN layers and LayerNorms without weights are other
  // models; say so rather than build one of them wrongly.
  if (!*preNorm)
    return c.flagError("do_layer_norm_before", false)
           << "only pre-LN OPT layers (true) are supported";
  if (*noFinalNorm)
    return c.flagError("_remove_final_layer_norm", true)
           << "only OPT with its final LayerNorm is supported";
  if (!*affine)
    return c.flagError("layer_norm_elementwise_affine", false)
           << "only LayerNorms with weights and biases are supported";
  if (failed(
          checkHeadsDivide(c, "hidden_size", d, "num_attention_heads", heads)))
    return failure();

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"model.decoder.", "decoder."}, "embed_tokens.weight",
               "max_position_embeddings", positions);
  if (failed(start))
    return failure();
  int64_t batch = start->batch, seq = start->seq;
  std::string p = start->prefix;
  const int64_t e = *embWidth;
  const bool projected = e != d;

  OpBuilder &b = mb.b;
  Location embLoc = mb.loc(p + "embed_tokens");
  FailureOr<Value> table = mb.weight(p + "embed_tokens.weight", {vocab, e},
                                     "[vocab_size, word_embed_proj_dim]");
  FailureOr<Value> posTable =
      mb.weight(p + "embed_positions.weight", {positions + 2, d},
                "[max_position_embeddings + 2, hidden_size]");
  if (failed(table) || failed(posTable))
    return failure();
  Value h = EmbeddingOp::create(b, embLoc, mb.tensorType({batch, seq, e}),
                                start->ids, *table);
  // OPT-350m's projections between the embedding width and the hidden size.
  auto project = [&](StringRef name, int64_t out, int64_t in,
                     StringRef shape) -> LogicalResult {
    FailureOr<Value> w =
        mb.weight(p + name.str() + ".weight", {out, in}, shape);
    if (failed(w))
      return failure();
    h = mb.linear(mb.loc(p + name.str()), h, *w);
    return success();
  };
  if (projected &&
      failed(project("project_in", d, e, "[hidden_size, word_embed_proj_dim]")))
    return failure();
  // OPT's position table starts 2 rows in.
  const ModelBuilder::DecodeInputs *decode =
      mb.addLearnedPositions(embLoc, h, *posTable, start->ids, /*offset=*/2);

  int64_t dh = d / heads;
  auto buildLayer = [&](int64_t i, const LayerWeights &w,
                        Value x) -> FailureOr<Value> {
    auto maybe = [&](StringRef name, ArrayRef<int64_t> shape, StringRef dims) {
      return w.optional(*bias, name, shape, dims);
    };
    StringRef dd = "[hidden_size, hidden_size]", dv = "[hidden_size]";
    FailureOr<Value> g1 = w("self_attn_layer_norm.weight", {d}, dv),
                     be1 = w("self_attn_layer_norm.bias", {d}, dv),
                     wq = w("self_attn.q_proj.weight", {d, d}, dd),
                     bq = maybe("self_attn.q_proj.bias", {d}, dv),
                     wk = w("self_attn.k_proj.weight", {d, d}, dd),
                     bk = maybe("self_attn.k_proj.bias", {d}, dv),
                     wv = w("self_attn.v_proj.weight", {d, d}, dd),
                     bv = maybe("self_attn.v_proj.bias", {d}, dv),
                     wo = w("self_attn.out_proj.weight", {d, d}, dd),
                     bo = maybe("self_attn.out_proj.bias", {d}, dv),
                     g2 = w("final_layer_norm.weight", {d}, dv),
                     be2 = w("final_layer_norm.bias", {d}, dv),
                     w1 = w("fc1.weight", {ff, d}, "[ffn_dim, hidden_size]"),
                     b1 = maybe("fc1.bias", {ff}, "[ffn_dim]"),
                     w2 = w("fc2.weight", {d, ff}, "[hidden_size, ffn_dim]"),
                     b2 = maybe("fc2.bias", {d}, dv);
    if (!allFound(
            {g1, be1, wq, bq, wk, bk, wv, bv, wo, bo, g2, be2, w1, b1, w2, b2}))
      return failure();
    return mb.layerNormDecoderLayer(
        w.loc(), x, {*g1, *be1, *g2, *be2, *w1, *b1, *w2, *b2}, 1e-5,
        *activation, ModelBuilder::FfnInput::Sequential, i, decode,
        {*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo}, heads, heads, dh, {});
  };
  FailureOr<Value> out = mb.decoderLayers(h, layers, p + "layers.", buildLayer);
  if (failed(out))
    return failure();
  Location headLoc = mb.loc("lm_head");
  FailureOr<Value> normed = mb.layerNorm(headLoc, *out, p + "final_layer_norm",
                                         "[hidden_size]", 1e-5);
  if (failed(normed))
    return failure();
  h = *normed;
  if (projected && failed(project("project_out", e, d,
                                  "[word_embed_proj_dim, hidden_size]")))
    return failure();
  return mb.finishLmHead(headLoc, h, *table, *tied,
                         "[vocab_size, word_embed_proj_dim]");
}
