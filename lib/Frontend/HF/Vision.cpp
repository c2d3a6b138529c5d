//===- Vision.cpp - ViT and CLIP checkpoints ------------------------------===//
//
// ViTModel, ViTForImageClassification (transformers' modeling_vit) and
// CLIP's towers, CLIPVisionModel and CLIPTextModel (modeling_clip).
//
// The vision models take `pixel_values` [B, C, H, W] at the config's
// image_size (no position interpolation). The patch embedding, a Conv2d
// whose stride is its kernel (patch_size), reads each patch once: it is
// the patches [B, rows * cols, C * p * p] (in the conv's (c, kh, kw)
// order, row-major over the grid, as flatten(2) orders them) times the
// conv weight reshaped to [hidden, C * p * p], plus its bias. The class
// token goes first, then the learned positions are added. Both families'
// layers are pre-LN: x + attn(LN1(x)), then x + mlp(LN2(x)).
//
// Outputs: ViTModel's last_hidden_state (after the final layernorm; the
// pooler, when the checkpoint has one, is not built), the classifier's
// logits on the CLS token, and the CLIP towers' pooler_output (vision: the
// CLS token through post_layernorm; text: the final_layer_norm state at
// each row's end-of-text token).
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

namespace {
/// What a vision model reads first.
struct VisionStart {
  int64_t batch, channels, patch, tokens;
  std::string prefix;
  /// The input and its embeddings [B, tokens, hidden] (embedImage).
  Value pixels, embeddings;
};

/// The sizes and settings of a ViT or CLIP encoder.
struct EncoderConfig {
  int64_t d, layers, heads, ff;
  double eps;
  /// The MLP activation; unset: quick_gelu.
  std::optional<Activation> act;
  /// Whether the query, key and value projections have biases.
  bool qkvBias = true;
};

/// The module names of one pre-LN encoder layer (each with .weight and
/// .bias).
struct PreLnNames {
  StringRef q, k, v, o, ln1, ln2, up, down;
};
} // namespace

/// A square size config value (`image_size`, `patch_size`): an integer or a
/// list of two equal ones.
static FailureOr<int64_t> squareSize(Checkpoint &c, StringRef key) {
  if (const llvm::json::Array *pair =
          c.getValue(key) ? c.getValue(key)->getAsArray() : nullptr) {
    std::optional<int64_t> h, w;
    if (pair->size() == 2) {
      h = (*pair)[0].getAsInteger();
      w = (*pair)[1].getAsInteger();
    }
    if (!h || !w || *h <= 0 || *h != *w)
      return emitError(c.keyLoc(key))
             << "config.json key \"" << key
             << "\" must be a positive integer or a list of two equal ones";
    return *h;
  }
  return c.getPositiveInt(key);
}

/// The pixel_values input, the grid of patches and the prefix; creates
/// @main with pixel_values [B, C, H, W].
static FailureOr<VisionStart>
startVision(ModelBuilder &mb, ArrayRef<StringRef> prefixes, StringRef probe) {
  Checkpoint &c = mb.ckpt;
  FailureOr<int64_t> image = squareSize(c, "image_size"),
                     patch = squareSize(c, "patch_size"),
                     channels = c.getPositiveInt("num_channels", 3);
  if (failed(image) || failed(patch) || failed(channels) ||
      failed(mb.checkInputNames({"pixel_values"})))
    return failure();
  if (*image % *patch)
    return emitError(c.keyLoc("patch_size"))
           << "config.json key \"patch_size\" (" << *patch
           << ") must divide image_size (" << *image << ")";
  FailureOr<SmallVector<int64_t>> shape = mb.inputShape(
      "pixel_values", {"batch", "num_channels", "height", "width"});
  if (failed(shape))
    return failure();
  const SmallVector<int64_t> want = {(*shape)[0], *channels, *image, *image};
  if (*shape != want)
    return emitError(c.keyLoc((*shape)[1] != *channels && c.has("num_channels")
                                  ? "num_channels"
                                  : "image_size"))
           << "--input-shape pixel_values="
           << llvm::join(
                  llvm::map_range(*shape,
                                  [](int64_t d) { return std::to_string(d); }),
                  "x")
           << " must be Bx" << *channels << "x" << *image << "x" << *image
           << ": num_channels " << *channels << " and image_size " << *image
           << " (the position table is not interpolated to other sizes)";
  FailureOr<std::string> prefix = mb.detectPrefix(prefixes, probe);
  if (failed(prefix))
    return failure();
  const int64_t grid = *image / *patch;
  Value pixels = mb.createMain("pixel_values", mb.tensorType(want));
  return VisionStart{want[0],         *channels, *patch,
                     grid * grid + 1, *prefix,   pixels};
}

/// The patch embedding: the patches of `pixels` [B, C, H, W] times the conv
/// weight `convWeight` [hidden, C, p, p] (plus `convBias` [hidden] when
/// given), [B, grid * grid, hidden].
static Value patchEmbedding(ModelBuilder &mb, Location l, Value pixels,
                            Value convWeight, Value convBias, int64_t p) {
  OpBuilder &b = mb.b;
  ArrayRef<int64_t> s = cast<RankedTensorType>(pixels.getType()).getShape();
  const int64_t batch = s[0], channels = s[1], rows = s[2] / p, cols = s[3] / p,
                hidden =
                    cast<RankedTensorType>(convWeight.getType()).getDimSize(0);
  // [B, C, H, W] -> [B, C, rows, p, cols, p] -> [B, rows, cols, C, p, p]
  // -> [B, rows * cols, C * p * p]: each patch in the weight's order.
  Value split = tensor::ExpandShapeOp::create(
      b, l, mb.tensorType({batch, channels, rows, p, cols, p}), pixels,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}});
  Value init = tensor::EmptyOp::create(
      b, l, ArrayRef<int64_t>{batch, rows, cols, channels, p, p},
      mb.elementType);
  Value moved = linalg::TransposeOp::create(b, l, split, init,
                                            ArrayRef<int64_t>{0, 2, 4, 1, 3, 5})
                    .getResult()[0];
  Value patches = tensor::CollapseShapeOp::create(
      b, l, mb.tensorType({batch, rows * cols, channels * p * p}), moved,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  Value filters = tensor::CollapseShapeOp::create(
      b, l, mb.tensorType({hidden, channels * p * p}), convWeight,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  return mb.linear(l, patches, filters, convBias);
}

/// The class embedding `cls` [hidden] before the patches `h` [B, N, hidden]:
/// [B, N + 1, hidden].
static Value prependClass(ModelBuilder &mb, Location l, Value h, Value cls) {
  OpBuilder &b = mb.b;
  ArrayRef<int64_t> s = cast<RankedTensorType>(h.getType()).getShape();
  Value init = tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{s[0], 1, s[2]},
                                       mb.elementType);
  Value rows =
      linalg::BroadcastOp::create(b, l, cls, init, ArrayRef<int64_t>{0, 1})
          .getResult()[0];
  return tensor::ConcatOp::create(b, l, /*dim=*/1, ValueRange{rows, h});
}

/// The embeddings of the image: patchEmbedding by `conv`.weight (with
/// `conv`.bias in ViT's layout), the class embedding `cls` first, then the
/// learned positions `positions` (names under the prefix's "embeddings.").
/// ViT's layout keeps the leading 1s of cls_token [1, 1, hidden] and
/// position_embeddings [1, tokens, hidden]; CLIP's are [hidden] and
/// [tokens, hidden], and its conv has no bias.
static FailureOr<Value> embedImage(ModelBuilder &mb, const VisionStart &s,
                                   int64_t d, StringRef conv, StringRef cls,
                                   StringRef positions, bool vitLayout) {
  const std::string e = s.prefix + "embeddings.";
  const int64_t p = s.patch, tokens = s.tokens;
  auto lead = [&](SmallVector<int64_t> shape) {
    if (vitLayout)
      shape.insert(shape.begin(), 1);
    return shape;
  };
  StringRef leadDims = vitLayout ? "1, " : "";
  FailureOr<Value> w = mb.weight(
                       e + conv.str() + ".weight", {d, s.channels, p, p},
                       "[hidden_size, num_channels, patch_size, patch_size]"),
                   bias = vitLayout ? mb.weight(e + conv.str() + ".bias", {d},
                                                "[hidden_size]")
                                    : FailureOr<Value>(Value()),
                   clsW = mb.weight(
                       e + cls.str(),
                       lead(vitLayout ? SmallVector<int64_t>{1, d}
                                      : SmallVector<int64_t>{d}),
                       ("[" + leadDims + leadDims + "hidden_size]").str()),
                   table = mb.weight(e + positions.str(), lead({tokens, d}),
                                     ("[" + leadDims +
                                      "(image_size / patch_size)^2 + 1, "
                                      "hidden_size]")
                                         .str());
  if (!allFound({w, bias, clsW, table}))
    return failure();
  OpBuilder &b = mb.b;
  Location l = mb.loc(e.substr(0, e.size() - 1));
  Value h = patchEmbedding(mb, l, s.pixels, *w, *bias, p);
  Value clsRow = *clsW, posTable = *table;
  if (vitLayout) {
    clsRow = tensor::CollapseShapeOp::create(
        b, l, mb.tensorType({d}), clsRow,
        ArrayRef<ReassociationIndices>{{0, 1, 2}});
    posTable = tensor::CollapseShapeOp::create(
        b, l, mb.tensorType({tokens, d}), posTable,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  }
  h = prependClass(mb, l, h, clsRow);
  return LearnedPosOp::create(b, l, h, posTable, /*positions=*/Value(),
                              /*offset=*/0)
      .getResult();
}

/// What a vision builder reads first: startVision (the prefix found by
/// the class embedding `cls`), then the image's embeddings (embedImage).
static FailureOr<VisionStart>
startImage(ModelBuilder &mb, ArrayRef<StringRef> prefixes, int64_t d,
           StringRef conv, StringRef cls, StringRef positions, bool vitLayout) {
  FailureOr<VisionStart> s =
      startVision(mb, prefixes, ("embeddings." + cls).str());
  if (failed(s))
    return failure();
  FailureOr<Value> h = embedImage(mb, *s, d, conv, cls, positions, vitLayout);
  if (failed(h))
    return failure();
  s->embeddings = *h;
  return s;
}

/// Row `row` of `h` [B, S, D] per sequence: [B, 1, D].
static Value selectRow(ModelBuilder &mb, Location l, Value h, int64_t row) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(h.getType()).getShape();
  OpBuilder &b = mb.b;
  return tensor::ExtractSliceOp::create(
      b, l, mb.tensorType({s[0], 1, s[2]}), h, ValueRange{}, ValueRange{},
      ValueRange{}, b.getDenseI64ArrayAttr({0, row, 0}),
      b.getDenseI64ArrayAttr({s[0], 1, s[2]}),
      b.getDenseI64ArrayAttr({1, 1, 1}));
}

/// `x` [B, 1, N] as [B, N].
static Value dropRowDim(ModelBuilder &mb, Location l, Value x) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(x.getType()).getShape();
  return tensor::CollapseShapeOp::create(
      mb.b, l, mb.tensorType({s[0], s[2]}), x,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
}

/// transformers' quick_gelu, x * sigmoid(1.702 x), elementwise.
static Value quickGelu(ModelBuilder &mb, Location l, Value x) {
  OpBuilder &b = mb.b;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  Value init = tensor::EmptyOp::create(b, l, type.getShape(), mb.elementType);
  return linalg::GenericOp::create(
             b, l, type, ValueRange{x}, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Type t = args[0].getType();
               Value k = arith::ConstantOp::create(nb, nl, t,
                                                   nb.getFloatAttr(t, 1.702));
               Value one =
                   arith::ConstantOp::create(nb, nl, t, nb.getFloatAttr(t, 1));
               Value kx = arith::MulFOp::create(nb, nl, k, args[0]);
               Value e = math::ExpOp::create(nb, nl,
                                             arith::NegFOp::create(nb, nl, kx));
               Value sig = arith::DivFOp::create(
                   nb, nl, one, arith::AddFOp::create(nb, nl, one, e));
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::MulFOp::create(nb, nl, args[0], sig)});
             })
      .getResult(0);
}

/// The pre-LN encoder layers of `cfg` on `h` [B, S, hidden] under
/// `prefix` (module names `n`, attention projections with biases), causal
/// when `causal`.
static FailureOr<Value> preLnEncoder(ModelBuilder &mb, Value h,
                                     StringRef prefix, const PreLnNames &n,
                                     const EncoderConfig &cfg, bool causal) {
  const int64_t d = cfg.d, ff = cfg.ff, heads = cfg.heads;
  const double eps = cfg.eps;
  const std::optional<Activation> act = cfg.act;
  StringRef dd = "[hidden_size, hidden_size]", dv = "[hidden_size]";
  return mb.decoderLayers(
      h, cfg.layers, prefix,
      [&](int64_t, const LayerWeights &w, Value x) -> FailureOr<Value> {
        auto pair = [&](StringRef module, ArrayRef<int64_t> shape,
                        StringRef dims, StringRef biasDims, bool bias = true) {
          return std::make_pair(w(module.str() + ".weight", shape, dims),
                                w.optional(bias, module.str() + ".bias",
                                           {shape.front()}, biasDims));
        };
        auto [wq, bq] = pair(n.q, {d, d}, dd, dv, cfg.qkvBias);
        auto [wk, bk] = pair(n.k, {d, d}, dd, dv, cfg.qkvBias);
        auto [wv, bv] = pair(n.v, {d, d}, dd, dv, cfg.qkvBias);
        auto [wo, bo] = pair(n.o, {d, d}, dd, dv);
        auto [ln1, ln1b] = pair(n.ln1, {d}, dv, dv);
        auto [ln2, ln2b] = pair(n.ln2, {d}, dv, dv);
        auto [up, upb] = pair(n.up, {ff, d}, "[intermediate_size, hidden_size]",
                              "[intermediate_size]");
        auto [down, downb] =
            pair(n.down, {d, ff}, "[hidden_size, intermediate_size]", dv);
        if (!allFound({wq, bq, wk, bk, wv, bv, wo, bo, ln1, ln1b, ln2, ln2b, up,
                       upb, down, downb}))
          return failure();
        Location l = w.loc();
        OpBuilder &b = mb.b;
        Value n1 =
            LayerNormOp::create(b, l, x, *ln1, *ln1b, b.getF64FloatAttr(eps));
        // attn.mha takes all four biases or none: without query, key and
        // value biases (ViT's qkv_bias false), the output's is added after.
        Value attn = mb.multiHeadAttention(
            l, n1, Value(),
            {*wq, *bq, *wk, *bk, *wv, *bv, *wo, cfg.qkvBias ? *bo : Value()},
            heads, d / heads, causal);
        if (!cfg.qkvBias) {
          auto type = cast<RankedTensorType>(attn.getType());
          Value init = tensor::EmptyOp::create(b, l, type.getShape(),
                                               type.getElementType());
          Value bias = linalg::BroadcastOp::create(b, l, *bo, init,
                                                   ArrayRef<int64_t>{0, 1})
                           .getResult()[0];
          attn = AddOp::create(b, l, attn, bias);
        }
        Value mid = AddOp::create(b, l, x, attn);
        Value n2 =
            LayerNormOp::create(b, l, mid, *ln2, *ln2b, b.getF64FloatAttr(eps));
        Value mlp;
        if (act) {
          mlp = FfnOp::create(b, l, x.getType(), n2, /*gate_weight=*/Value(),
                              /*gate_bias=*/Value(), *up, *upb, *down, *downb,
                              *act);
        } else {
          // attn.ffn has no quick_gelu: the MLP as two projections.
          Value inner = quickGelu(mb, l, mb.linear(l, n2, *up, *upb));
          mlp = mb.linear(l, inner, *down, *downb);
        }
        return AddOp::create(b, l, mid, mlp).getResult();
      });
}

/// What every encoder here reads: the sizes (both families name them
/// alike), the LayerNorm epsilon and the MLP activation, with the family's
/// defaults.
static FailureOr<EncoderConfig>
readEncoderConfig(Checkpoint &c, double defaultEps, StringRef defaultAct) {
  auto dims = c.getPositiveInts({"hidden_size", "num_hidden_layers",
                                 "num_attention_heads", "intermediate_size"});
  FailureOr<double> eps = c.getFloat("layer_norm_eps", defaultEps);
  FailureOr<std::string> act = c.getString("hidden_act", defaultAct);
  if (failed(dims) || failed(eps) || failed(act) ||
      failed(checkHeadsDivide(c, "hidden_size", (*dims)[0],
                              "num_attention_heads", (*dims)[2])))
    return failure();
  EncoderConfig cfg{(*dims)[0], (*dims)[1], (*dims)[2],
                    (*dims)[3], *eps,       std::nullopt};
  // attn has no quick_gelu activation: preLnEncoder builds it.
  if (*act != "quick_gelu") {
    FailureOr<Activation> parsed = parseActivation(c, "hidden_act", *act);
    if (failed(parsed))
      return failure();
    cfg.act = *parsed;
  }
  return cfg;
}

LogicalResult mlir::attn::hf::buildViT(ModelBuilder &mb, bool classifier) {
  Checkpoint &c = mb.ckpt;
  FailureOr<EncoderConfig> cfg = readEncoderConfig(c, 1e-12, "gelu");
  if (failed(cfg))
    return failure();
  const int64_t d = cfg->d;
  FailureOr<bool> qkvBias = c.getBool("qkv_bias", true);
  if (failed(qkvBias))
    return failure();
  cfg->qkvBias = *qkvBias;
  FailureOr<VisionStart> start = startImage(
      mb,
      classifier ? ArrayRef<StringRef>{"vit."}
                 : ArrayRef<StringRef>{"", "vit."},
      d, "patch_embeddings.projection", "cls_token", "position_embeddings",
      /*vitLayout=*/true);
  if (failed(start))
    return failure();
  const std::string p = start->prefix;

  const PreLnNames names = {
      "attention.attention.query", "attention.attention.key",
      "attention.attention.value", "attention.output.dense",
      "layernorm_before",          "layernorm_after",
      "intermediate.dense",        "output.dense"};
  FailureOr<Value> encoded =
      preLnEncoder(mb, start->embeddings, p + "encoder.layer.", names, *cfg,
                   /*causal=*/false);
  if (failed(encoded))
    return failure();
  FailureOr<Value> out =
      mb.layerNorm(mb.loc(p + "layernorm"), *encoded, p + "layernorm",
                   "[hidden_size]", cfg->eps);
  if (failed(out))
    return failure();
  if (!classifier) {
    mb.finishMain(*out, "last_hidden_state");
    return success();
  }
  FailureOr<int64_t> labels = c.getPositiveInt("num_labels", 2);
  if (failed(labels))
    return failure();
  // num_labels is not saved when id2label names the labels.
  if (!c.has("num_labels"))
    if (const llvm::json::Value *ids = c.getValue("id2label"))
      if (const llvm::json::Object *o = ids->getAsObject())
        labels = static_cast<int64_t>(o->size());
  FailureOr<Value> wc = mb.weight("classifier.weight", {*labels, d},
                                  "[num_labels, hidden_size]"),
                   bc = mb.weight("classifier.bias", {*labels}, "[num_labels]");
  if (failed(wc) || failed(bc))
    return failure();
  Location hl = mb.loc("classifier");
  // The CLS token as a one-row sequence through the classifier.
  Value logits = mb.linear(hl, selectRow(mb, hl, *out, 0), *wc, *bc);
  mb.finishMain(dropRowDim(mb, hl, logits), "logits");
  return success();
}

/// CLIP's encoder layers.
static const PreLnNames clipNames = {"self_attn.q_proj", "self_attn.k_proj",
                                     "self_attn.v_proj", "self_attn.out_proj",
                                     "layer_norm1",      "layer_norm2",
                                     "mlp.fc1",          "mlp.fc2"};

LogicalResult mlir::attn::hf::buildClipVision(ModelBuilder &mb) {
  FailureOr<EncoderConfig> cfg = readEncoderConfig(mb.ckpt, 1e-5, "quick_gelu");
  if (failed(cfg))
    return failure();
  const int64_t d = cfg->d;
  const double eps = cfg->eps;
  FailureOr<VisionStart> start =
      startImage(mb, {"", "vision_model."}, d, "patch_embedding",
                 "class_embedding", "position_embedding.weight",
                 /*vitLayout=*/false);
  if (failed(start))
    return failure();
  const std::string p = start->prefix;
  FailureOr<Value> pre =
      mb.layerNorm(mb.loc(p + "pre_layrnorm"), start->embeddings,
                   p + "pre_layrnorm", "[hidden_size]", eps);
  if (failed(pre))
    return failure();
  FailureOr<Value> encoded =
      preLnEncoder(mb, *pre, p + "encoder.layers.", clipNames, *cfg,
                   /*causal=*/false);
  if (failed(encoded))
    return failure();
  Location pl = mb.loc(p + "post_layernorm");
  FailureOr<Value> pooled =
      mb.layerNorm(pl, selectRow(mb, pl, *encoded, 0), p + "post_layernorm",
                   "[hidden_size]", eps);
  if (failed(pooled))
    return failure();
  mb.finishMain(dropRowDim(mb, pl, *pooled), "pooler_output");
  return success();
}

/// The row of `h` [B, S, D] at each sequence's first `eos` in `ids`
/// [B, S] (row 0 where there is none), or, when `eos` is unset, at its
/// first largest id: [B, D].
static Value poolAtToken(ModelBuilder &mb, Location l, Value h, Value ids,
                         std::optional<int64_t> eos) {
  OpBuilder &b = mb.b;
  ArrayRef<int64_t> s = cast<RankedTensorType>(h.getType()).getShape();
  const int64_t batch = s[0], seq = s[1], width = s[2];
  Type i64 = b.getI64Type();
  // The first position of the largest key (ids == eos, or the ids) is the
  // largest key * seq + (seq - 1 - position): a max reduction that does
  // not depend on the order it runs in.
  Value init =
      linalg::FillOp::create(
          b, l,
          ValueRange{arith::ConstantOp::create(
              b, l, b.getI64IntegerAttr(std::numeric_limits<int64_t>::min()))},
          ValueRange{
              tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{batch}, i64)})
          .getResult(0);
  MLIRContext *ctx = b.getContext();
  AffineMap full = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap rows = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  Value best =
      linalg::GenericOp::create(
          b, l, RankedTensorType::get({batch}, i64), ValueRange{ids},
          ValueRange{init}, ArrayRef<AffineMap>{full, rows},
          ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                        utils::IteratorType::reduction},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            auto cst = [&](int64_t v) {
              return arith::ConstantOp::create(nb, nl, nb.getI64IntegerAttr(v))
                  .getResult();
            };
            Value key = args[0];
            if (eos)
              key = arith::ExtUIOp::create(
                  nb, nl, i64,
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                        args[0], cst(*eos)));
            Value pos = arith::IndexCastOp::create(
                nb, nl, i64, linalg::IndexOp::create(nb, nl, 1));
            Value score = arith::AddIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, key, cst(seq)),
                arith::SubIOp::create(nb, nl, cst(seq - 1), pos));
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::MaxSIOp::create(nb, nl, args[1], score)});
          })
          .getResult(0);
  AffineMap out = AffineMap::getMultiDimIdentityMap(2, ctx);
  Value outInit = tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{batch, width},
                                          mb.elementType);
  return linalg::GenericOp::create(
             b, l, mb.tensorType({batch, width}), ValueRange{best},
             ValueRange{outInit}, ArrayRef<AffineMap>{rows, out},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               // score mod seq is seq - 1 - position (floor: keys may be
               // negative ids).
               Value n =
                   arith::ConstantOp::create(nb, nl, nb.getI64IntegerAttr(seq));
               Value rem = arith::RemSIOp::create(nb, nl, args[0], n);
               Value isNeg = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::slt, rem,
                   arith::ConstantOp::create(nb, nl, nb.getI64IntegerAttr(0)));
               rem = arith::SelectOp::create(
                   nb, nl, isNeg, arith::AddIOp::create(nb, nl, rem, n), rem);
               Value pos = arith::SubIOp::create(
                   nb, nl,
                   arith::ConstantOp::create(nb, nl,
                                             nb.getI64IntegerAttr(seq - 1)),
                   rem);
               Value at =
                   arith::IndexCastOp::create(nb, nl, nb.getIndexType(), pos);
               Value v = tensor::ExtractOp::create(
                   nb, nl, h,
                   ValueRange{linalg::IndexOp::create(nb, nl, 0), at,
                              linalg::IndexOp::create(nb, nl, 1)});
               linalg::YieldOp::create(nb, nl, ValueRange{v});
             })
      .getResult(0);
}

LogicalResult mlir::attn::hf::buildClipText(ModelBuilder &mb) {
  Checkpoint &c = mb.ckpt;
  FailureOr<EncoderConfig> cfg = readEncoderConfig(c, 1e-5, "quick_gelu");
  FailureOr<int64_t> vocab = c.getPositiveInt("vocab_size"),
                     maxPositions = c.getPositiveInt("max_position_embeddings"),
                     eos = c.has("eos_token_id") ? c.getInt("eos_token_id")
                                                 : FailureOr<int64_t>(2);
  if (failed(cfg) || failed(vocab) || failed(maxPositions) || failed(eos))
    return failure();
  const int64_t d = cfg->d;
  FailureOr<ModelBuilder::ModelStart> start =
      mb.start({"", "text_model."}, "embeddings.token_embedding.weight",
               "max_position_embeddings", *maxPositions);
  if (failed(start))
    return failure();
  const std::string p = start->prefix, e = p + "embeddings.";
  FailureOr<std::pair<Value, Value>> tokens =
      mb.embedTokens(start->ids, e + "token_embedding", *vocab, d,
                     "[vocab_size, hidden_size]");
  FailureOr<Value> positions =
      mb.weight(e + "position_embedding.weight", {*maxPositions, d},
                "[max_position_embeddings, hidden_size]");
  if (failed(tokens) || failed(positions))
    return failure();
  Location l = mb.loc(e.substr(0, e.size() - 1));
  Value h = LearnedPosOp::create(mb.b, l, tokens->second, *positions,
                                 /*positions=*/Value(), /*offset=*/0);
  FailureOr<Value> encoded =
      preLnEncoder(mb, h, p + "encoder.layers.", clipNames, *cfg,
                   /*causal=*/true);
  if (failed(encoded))
    return failure();
  Location fl = mb.loc(p + "final_layer_norm");
  FailureOr<Value> out = mb.layerNorm(fl, *encoded, p + "final_layer_norm",
                                      "[hidden_size]", cfg->eps);
  if (failed(out))
    return failure();
  // transformers pools at the first eos_token_id, but for configs whose
  // eos_token_id is the legacy 2 at the largest id (the end-of-text token
  // was the vocabulary's last).
  std::optional<int64_t> pooledToken;
  if (*eos != 2)
    pooledToken = *eos;
  mb.finishMain(poolAtToken(mb, fl, *out, start->ids, pooledToken),
                "pooler_output");
  return success();
}
