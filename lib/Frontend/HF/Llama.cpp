//===- Llama.cpp - LlamaForCausalLM checkpoints ---------------------------===//
//
// LlamaForCausalLM (transformers' modeling_llama): token embedding, pre-norm
// decoder layers (RMSNorm; causal grouped-query self-attention with rotary
// positions on the queries and keys; RMSNorm; SwiGLU FFN
// down(silu(gate(x)) * up(x))), a final RMSNorm and the LM head. The result
// is the logits.
//
// Rotary positions apply between the projections and the attention, which
// attn.mha does not model, so each layer's attention is built from its
// parts: attn.linear projections, head split (tensor.expand_shape +
// linalg.transpose, as attn-decompose-mha builds it), attn.rotary on the
// queries and keys, attn.sdpa (causal, fewer kv heads for GQA), head merge
// and the output projection.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::buildLlama(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  auto dims =
      c.getPositiveInts({"vocab_size", "hidden_size", "intermediate_size",
                         "num_hidden_layers", "num_attention_heads"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], ff = (*dims)[2],
                layers = (*dims)[3], heads = (*dims)[4];
  FailureOr<int64_t> kvHeads = c.getPositiveInt("num_key_value_heads", heads);
  if (failed(kvHeads))
    return failure();
  if (!c.has("head_dim") &&
      failed(
          checkHeadsDivide(c, "hidden_size", d, "num_attention_heads", heads)))
    return failure();
  FailureOr<int64_t> dh = c.getPositiveInt("head_dim", d / heads);
  FailureOr<double> eps = c.getFloat("rms_norm_eps", 1e-6),
                    theta = c.getFloat("rope_theta", 10000.0);
  FailureOr<std::string> act = c.getString("hidden_act", "silu");
  FailureOr<bool> attnBias = c.getBool("attention_bias", false),
                  mlpBias = c.getBool("mlp_bias", false),
                  tied = c.getBool("tie_word_embeddings", false);
  if (failed(dh) || failed(eps) || failed(theta) || failed(act) ||
      failed(attnBias) || failed(mlpBias) || failed(tied))
    return failure();
  FailureOr<Activation> activation = parseActivation(c, "hidden_act", *act);
  if (failed(activation))
    return failure();
  if (heads % *kvHeads != 0)
    return emitError(c.keyLoc("num_key_value_heads"))
           << "num_attention_heads " << heads
           << " is not a multiple of num_key_value_heads " << *kvHeads;
  if (*dh % 2 != 0)
    return emitError(
               c.keyLoc(c.has("head_dim") ? "head_dim" : "num_attention_heads"))
           << "the head width " << *dh
           << " is odd; rotary positions rotate pairs of channels";
  if (*theta <= 0.0)
    return emitError(c.keyLoc("rope_theta"))
           << "config.json key \"rope_theta\" must be positive, got " << *theta;
  // Scaled rotary variants (linear, dynamic NTK, llama3, yarn) change the
  // frequencies; attn.rotary computes the plain ones.
  if (c.has("rope_scaling"))
    return emitError(c.keyLoc("rope_scaling"))
           << "config.json key \"rope_scaling\" is set; only unscaled rotary "
              "positions (rope_scaling: null) are supported";

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"model.", ""}, "embed_tokens.weight");
  if (failed(start))
    return failure();
  // Plain copies: the layer lambdas capture them.
  int64_t batch = start->batch, seq = start->seq;
  std::string p = start->prefix;
  bool decodeStep = mb.options.kvCache > 0;

  OpBuilder &b = mb.b;
  Type elt = mb.elementType;
  auto hType = mb.tensorType({batch, seq, d});
  FailureOr<Value> table = mb.weight(p + "embed_tokens.weight", {vocab, d},
                                     "[vocab_size, hidden_size]");
  if (failed(table))
    return failure();
  Value h = EmbeddingOp::create(b, mb.loc(p + "embed_tokens"), hType,
                                start->ids, *table);
  ModelBuilder::DecodeInputs decode;
  if (decodeStep)
    decode = mb.addDecodeInputs(start->ids);

  for (int64_t i = 0; i < layers; ++i) {
    std::string lp = p + "layers." + std::to_string(i) + ".";
    auto body = [&](Value x) -> FailureOr<Value> {
      Location l = mb.loc(lp.substr(0, lp.size() - 1));
      auto w = [&](StringRef name, ArrayRef<int64_t> shape, StringRef dims) {
        return mb.weight(lp + name.str(), shape, dims);
      };
      auto maybe = [&](bool present, StringRef name, ArrayRef<int64_t> shape,
                       StringRef dims) -> FailureOr<Value> {
        return present ? w(name, shape, dims) : FailureOr<Value>(Value());
      };
      int64_t qWidth = heads * *dh, kvWidth = *kvHeads * *dh;
      FailureOr<Value> g1 = w("input_layernorm.weight", {d}, "[hidden_size]"),
                       wq = w("self_attn.q_proj.weight", {qWidth, d},
                              "[num_attention_heads * head_dim, hidden_size]"),
                       wk = w("self_attn.k_proj.weight", {kvWidth, d},
                              "[num_key_value_heads * head_dim, hidden_size]"),
                       wv = w("self_attn.v_proj.weight", {kvWidth, d},
                              "[num_key_value_heads * head_dim, hidden_size]"),
                       wo = w("self_attn.o_proj.weight", {d, qWidth},
                              "[hidden_size, num_attention_heads * head_dim]"),
                       bq = maybe(*attnBias, "self_attn.q_proj.bias", {qWidth},
                                  "[num_attention_heads * head_dim]"),
                       bk = maybe(*attnBias, "self_attn.k_proj.bias", {kvWidth},
                                  "[num_key_value_heads * head_dim]"),
                       bv = maybe(*attnBias, "self_attn.v_proj.bias", {kvWidth},
                                  "[num_key_value_heads * head_dim]"),
                       bo = maybe(*attnBias, "self_attn.o_proj.bias", {d},
                                  "[hidden_size]"),
                       g2 = w("post_attention_layernorm.weight", {d},
                              "[hidden_size]"),
                       wg = w("mlp.gate_proj.weight", {ff, d},
                              "[intermediate_size, hidden_size]"),
                       wu = w("mlp.up_proj.weight", {ff, d},
                              "[intermediate_size, hidden_size]"),
                       wd = w("mlp.down_proj.weight", {d, ff},
                              "[hidden_size, intermediate_size]"),
                       bg = maybe(*mlpBias, "mlp.gate_proj.bias", {ff},
                                  "[intermediate_size]"),
                       bu = maybe(*mlpBias, "mlp.up_proj.bias", {ff},
                                  "[intermediate_size]"),
                       bd = maybe(*mlpBias, "mlp.down_proj.bias", {d},
                                  "[hidden_size]");
      for (const FailureOr<Value> &v :
           {g1, wq, wk, wv, wo, bq, bk, bv, bo, g2, wg, wu, wd, bg, bu, bd})
        if (failed(v))
          return failure();

      Value n1 =
          RmsNormOp::create(b, l, hType, x, *g1, b.getF64FloatAttr(*eps));
      if (decodeStep) {
        FailureOr<Value> attn =
            mb.cachedAttention(i, n1, decode, *wq, *bq, *wk, *bk, *wv, *bv, *wo,
                               *bo, heads, *kvHeads, *dh, FloatAttr(), *theta);
        if (failed(attn))
          return failure();
        Value res1 = AddOp::create(b, l, hType, x, *attn);
        Value n2 =
            RmsNormOp::create(b, l, hType, res1, *g2, b.getF64FloatAttr(*eps));
        Value ffn = FfnOp::create(b, l, hType, n2, *wg, *bg, *wu, *bu, *wd, *bd,
                                  *activation);
        return AddOp::create(b, l, hType, res1, ffn).getResult();
      }
      // [B, S, heads * dh] -> [B, heads, S, dh], rotated when `rotate`.
      auto heads4 = [&](Value w, Value bias, int64_t n, bool rotate) {
        Value flat = LinearOp::create(
            b, l, mb.tensorType({batch, seq, n * *dh}), n1, w, bias);
        Value split = tensor::ExpandShapeOp::create(
            b, l, mb.tensorType({batch, seq, n, *dh}), flat,
            ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
        Value init = tensor::EmptyOp::create(
            b, l, ArrayRef<int64_t>{batch, n, seq, *dh}, elt);
        Value t = linalg::TransposeOp::create(b, l, split, init,
                                              ArrayRef<int64_t>{0, 2, 1, 3})
                      .getResult()[0];
        if (rotate)
          t = RotaryOp::create(b, l, t.getType(), t, /*positions=*/Value(),
                               b.getF64FloatAttr(*theta),
                               b.getI64IntegerAttr(0), IntegerAttr());
        return t;
      };
      Value q = heads4(*wq, *bq, heads, true);
      Value k = heads4(*wk, *bk, *kvHeads, true);
      Value v = heads4(*wv, *bv, *kvHeads, false);
      Value o = SdpaOp::create(b, l, mb.tensorType({batch, heads, seq, *dh}), q,
                               k, v, /*bias=*/Value(),
                               /*kv_lengths=*/Value(),
                               /*query_positions=*/Value(), ValueRange{},
                               ScoreFunction::scaled_dot, FloatAttr(),
                               /*causal=*/true, IntegerAttr());
      Value merged =
          linalg::TransposeOp::create(
              b, l, o,
              tensor::EmptyOp::create(
                  b, l, ArrayRef<int64_t>{batch, seq, heads, *dh}, elt),
              ArrayRef<int64_t>{0, 2, 1, 3})
              .getResult()[0];
      merged = tensor::CollapseShapeOp::create(
          b, l, merged, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
      Value attn = LinearOp::create(b, l, hType, merged, *wo, *bo);
      Value res1 = AddOp::create(b, l, hType, x, attn);
      Value n2 =
          RmsNormOp::create(b, l, hType, res1, *g2, b.getF64FloatAttr(*eps));
      Value ffn = FfnOp::create(b, l, hType, n2, *wg, *bg, *wu, *bu, *wd, *bd,
                                *activation);
      return AddOp::create(b, l, hType, res1, ffn).getResult();
    };
    // A decode step's layers take and return their caches: inline in @main.
    FailureOr<Value> out = decodeStep ? body(h) : mb.layer(i, h, body);
    if (failed(out))
      return failure();
    h = *out;
  }
  Location headLoc = mb.loc("lm_head");
  FailureOr<Value> gf = mb.weight(p + "norm.weight", {d}, "[hidden_size]");
  if (failed(gf))
    return failure();
  h = RmsNormOp::create(b, headLoc, hType, h, *gf, b.getF64FloatAttr(*eps));
  return mb.finishLmHead(headLoc, h, *table, *tied,
                         "[vocab_size, hidden_size]");
}
