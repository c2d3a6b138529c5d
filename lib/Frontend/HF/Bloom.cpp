//===- Bloom.cpp - BloomForCausalLM checkpoints ---------------------------===//
//
// BloomForCausalLM (transformers' modeling_bloom): token embedding and its
// LayerNorm, pre-LN causal layers (LayerNorm; self-attention with ALiBi
// position biases; residual; LayerNorm; GELU (tanh) FFN; residual), a final
// LayerNorm and the LM head tied to the embedding. The result is the logits.
//
// ALiBi adds slope_h * j to head h's score of key j (transformers adds it
// for the key's position only: the query's part is the same for a whole
// softmax row). It is an additive attn.sdpa bias [1, heads, 1, keys], a
// constant: the keys' positions are their indices, over the sequence or
// over the cache rows of a --kv-cache step. The fused query_key_value
// projection interleaves the heads as GPT-NeoX's does and binds as gather
// views.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

/// transformers' _get_alibi_slopes: a geometric sequence for the largest
/// power of two of heads, interleaved extra slopes for the rest.
static SmallVector<double> alibiSlopes(int64_t heads) {
  int64_t closest = int64_t(1)
                    << static_cast<int>(std::floor(std::log2(heads)));
  auto baseFor = [](int64_t n) {
    return std::pow(2.0, -std::pow(2.0, -(std::log2(double(n)) - 3.0)));
  };
  SmallVector<double> slopes;
  double base = baseFor(closest);
  for (int64_t i = 1; i <= closest; ++i)
    slopes.push_back(std::pow(base, double(i)));
  if (closest != heads) {
    double extra = baseFor(2 * closest);
    int64_t remaining = std::min(closest, heads - closest);
    for (int64_t i = 1; i < 1 + 2 * remaining; i += 2)
      slopes.push_back(std::pow(extra, double(i)));
  }
  return slopes;
}

LogicalResult mlir::attn::hf::buildBloom(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  auto dims =
      c.getPositiveInts({"vocab_size", "hidden_size", "n_layer", "n_head"});
  if (failed(dims))
    return failure();
  const int64_t vocab = (*dims)[0], d = (*dims)[1], layers = (*dims)[2],
                heads = (*dims)[3];
  FailureOr<double> eps = c.getFloat("layer_norm_epsilon", 1e-5);
  FailureOr<bool> postLnResidual = c.getBool(
                      "apply_residual_connection_post_layernorm", false),
                  tied = c.getBool("tie_word_embeddings", true);
  if (failed(eps) || failed(postLnResidual) || failed(tied))
    return failure();
  if (*postLnResidual)
    return c.flagError("apply_residual_connection_post_layernorm", true)
           << "only the residual from the layer input is supported";
  if (failed(checkHeadsDivide(c, "hidden_size", d, "n_head", heads)))
    return failure();
  int64_t dh = d / heads;

  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"transformer.", ""}, "word_embeddings.weight");
  if (failed(start))
    return failure();
  int64_t batch = start->batch, seq = start->seq;
  std::string p = start->prefix;

  OpBuilder &b = mb.b;
  auto hType = mb.tensorType({batch, seq, d});
  Location embLoc = mb.loc(p + "word_embeddings");
  StringRef dv = "[hidden_size]";
  FailureOr<Value> table = mb.weight(p + "word_embeddings.weight", {vocab, d},
                                     "[vocab_size, hidden_size]"),
                   ge = mb.weight(p + "word_embeddings_layernorm.weight", {d},
                                  dv),
                   be =
                       mb.weight(p + "word_embeddings_layernorm.bias", {d}, dv);
  if (failed(table) || failed(ge) || failed(be))
    return failure();
  Value h = EmbeddingOp::create(b, embLoc, hType, start->ids, *table);
  h = LayerNormOp::create(b, embLoc, h, *ge, *be, b.getF64FloatAttr(*eps));
  const ModelBuilder::DecodeInputs *decode = mb.addStepInputs(start->ids);

  SmallVector<double> slopes = alibiSlopes(heads);
  auto floatType = cast<FloatType>(mb.elementType);
  auto buildLayer = [&](int64_t i, const LayerWeights &w,
                        Value x) -> FailureOr<Value> {
    Location l = w.loc();
    FailureOr<MegatronLayerWeights> lw = readMegatronLayer(
        w, "self_attention", d, 4 * d, "4 * hidden_size", heads, dh,
        /*qkvBias=*/true);
    if (failed(lw))
      return failure();
    ModelBuilder::AttentionOptions opts;
    // ALiBi: slope_h * j for key j, rounded to the weights' type as
    // transformers does.
    opts.scoreBias = [&](int64_t keys) -> Value {
      return createKeySlopeBias(b, l, floatType, slopes, keys);
    };
    return mb.layerNormDecoderLayer(
        l, x, lw->normsAndFfn, *eps, Activation::gelu_tanh,
        ModelBuilder::FfnInput::Sequential, i, decode, lw->attention, heads,
        heads, dh, opts);
  };
  FailureOr<Value> out = mb.decoderLayers(h, layers, p + "h.", buildLayer);
  if (failed(out))
    return failure();
  return mb.finishLmHeadAfterLayerNorm(mb.loc("lm_head"), *out, p + "ln_f", dv,
                                       *eps, *table, *tied,
                                       "[vocab_size, hidden_size]");
}
