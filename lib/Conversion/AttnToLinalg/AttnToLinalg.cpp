//===- AttnToLinalg.cpp - lower attn ops to linalg on tensors -------------===//
//
// Correctness-first lowering of every attn op to linalg.generic and tensor
// ops. All arithmetic happens in f32; f16/bf16 operands are extended on entry
// and the result rounded once at the end. Fused and tiled forms (flash
// attention, epilogues) are the job of later passes; nothing here prevents
// them, since each op still lowers to a handful of generics on its own.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilder.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEMHA
#define GEN_PASS_DEF_ATTNLOWERTOLINALG
#include "attnc/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The activation functions, on f32 scalars.
static Value applyActivation(OpBuilder &b, Location loc, Activation act,
                             Value x) {
  switch (act) {
  case Activation::relu:
    return arith::MaximumFOp::create(b, loc, x,
                                     LinalgBuilder::constF32(b, loc, 0.0));
  case Activation::gelu: {
    // 0.5 x (1 + erf(x / sqrt(2)))
    Value scaled = mulF(b, loc, x, LinalgBuilder::constF32(b, loc, M_SQRT1_2));
    Value erf = math::ErfOp::create(b, loc, scaled);
    Value onePlus = addF(b, loc, erf, LinalgBuilder::constF32(b, loc, 1.0));
    return mulF(b, loc, mulF(b, loc, x, LinalgBuilder::constF32(b, loc, 0.5)),
                onePlus);
  }
  case Activation::gelu_tanh: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 = mulF(b, loc, mulF(b, loc, x, x), x);
    Value inner = addF(
        b, loc, x, mulF(b, loc, x3, LinalgBuilder::constF32(b, loc, 0.044715)));
    Value arg = mulF(b, loc, inner,
                     LinalgBuilder::constF32(b, loc, std::sqrt(2.0 / M_PI)));
    Value t = math::TanhOp::create(b, loc, arg);
    Value onePlus = addF(b, loc, t, LinalgBuilder::constF32(b, loc, 1.0));
    return mulF(b, loc, mulF(b, loc, x, LinalgBuilder::constF32(b, loc, 0.5)),
                onePlus);
  }
  case Activation::silu: {
    // x / (1 + exp(-x))
    Value neg = arith::NegFOp::create(b, loc, x);
    Value e = math::ExpOp::create(b, loc, neg);
    Value denom = addF(b, loc, e, LinalgBuilder::constF32(b, loc, 1.0));
    return arith::DivFOp::create(b, loc, x, denom);
  }
  }
  llvm_unreachable("unknown activation");
}

//===----------------------------------------------------------------------===//
// Pointwise ops
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct UnaryActivationLowering : OpRewritePattern<OpTy> {
  UnaryActivationLowering(MLIRContext *ctx, function_ref<Activation(OpTy)> kind)
      : OpRewritePattern<OpTy>(ctx), kind(kind) {}
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Activation act = kind(op);
    Value x = lb.toF32(op.getInput());
    Value y = lb.pointwise(x, [&](OpBuilder &b, Location loc, ValueRange args) {
      return applyActivation(b, loc, act, args[0]);
    });
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
  function_ref<Activation(OpTy)> kind;
};

static Activation reluKind(ReluOp) { return Activation::relu; }
static Activation siluKind(SiluOp) { return Activation::silu; }
static Activation geluKind(GeluOp op) {
  return op.getApproximate() == GeluApproximation::tanh ? Activation::gelu_tanh
                                                        : Activation::gelu;
}

struct AddLowering : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value y = lb.pointwise({lb.toF32(op.getLhs()), lb.toF32(op.getRhs())},
                           [](OpBuilder &b, Location loc, ValueRange args) {
                             return addF(b, loc, args[0], args[1]);
                           });
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

/// Numerically stable softmax over the last dimension of an f32 tensor.
static Value softmaxLast(LinalgBuilder &lb, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  auto identityPre = [](OpBuilder &, Location, Value v, ValueRange) {
    return v;
  };
  Value max = lb.reduceLast(
      x, -std::numeric_limits<double>::infinity(), {}, identityPre,
      [](OpBuilder &b, Location loc, Value acc, Value v) -> Value {
        return arith::MaximumFOp::create(b, loc, acc, v);
      });
  Value sum = lb.reduceLast(
      x, 0.0, {max},
      [](OpBuilder &b, Location loc, Value v, ValueRange outer) -> Value {
        return math::ExpOp::create(b, loc,
                                   arith::SubFOp::create(b, loc, v, outer[0]));
      },
      [](OpBuilder &b, Location loc, Value acc, Value v) -> Value {
        return addF(b, loc, acc, v);
      });
  SmallVector<unsigned> outer;
  for (unsigned d = 0; d + 1 < rank; ++d)
    outer.push_back(d);
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  return lb.generic(
      {x, max, sum}, lb.empty(type.getShape(), lb.f32()),
      {lb.identity(rank), lb.dims(rank, outer), lb.dims(rank, outer),
       lb.identity(rank)},
      iters, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value e = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, args[0], args[1]));
        return arith::DivFOp::create(b, loc, e, args[2]);
      });
}

struct SoftmaxLowering : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    auto type = op.getType();
    int64_t rank = type.getRank();
    int64_t dim = op.getNormalizedDim();
    Value x = lb.toF32(op.getInput());
    // Move `dim` last, normalize, move it back.
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim)
        perm.push_back(d);
    perm.push_back(dim);
    bool needsTranspose = dim != rank - 1;
    if (needsTranspose) {
      SmallVector<int64_t> shape;
      for (int64_t d : perm)
        shape.push_back(type.getDimSize(d));
      x = linalg::TransposeOp::create(rewriter, op.getLoc(), x,
                                      lb.empty(shape, lb.f32()), perm)
              .getResult()[0];
    }
    Value y = softmaxLast(lb, x);
    if (needsTranspose) {
      SmallVector<int64_t> inverse(rank);
      for (int64_t i = 0; i < rank; ++i)
        inverse[perm[i]] = i;
      y = linalg::TransposeOp::create(rewriter, op.getLoc(), y,
                                      lb.empty(type.getShape(), lb.f32()),
                                      inverse)
              .getResult()[0];
    }
    rewriter.replaceOp(op, lb.fromF32(y, type.getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

/// (x - mean) * rsqrt(var + eps) * gamma (+ beta), over the last dimension.
/// RMS norm skips the mean.
static Value normalizeLast(LinalgBuilder &lb, Value x, Value gamma, Value beta,
                           double epsilon, bool subtractMean) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  int64_t d = type.getShape().back();
  auto add = [](OpBuilder &b, Location loc, Value acc, Value v) -> Value {
    return addF(b, loc, acc, v);
  };
  Value mean;
  SmallVector<Value> outerInputs;
  if (subtractMean) {
    Value sum = lb.reduceLast(
        x, 0.0, {},
        [](OpBuilder &, Location, Value v, ValueRange) { return v; }, add);
    unsigned outerRank = rank - 1;
    SmallVector<IteratorType> iters(outerRank, IteratorType::parallel);
    mean = lb.generic(
        sum, lb.empty(type.getShape().drop_back(), lb.f32()),
        {lb.identity(outerRank), lb.identity(outerRank)}, iters,
        [d](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return arith::DivFOp::create(
              b, loc, args[0],
              LinalgBuilder::constF32(b, loc, static_cast<double>(d)));
        });
    outerInputs.push_back(mean);
  }
  // Sum of squares of the (centered) values.
  Value sumSq = lb.reduceLast(
      x, 0.0, outerInputs,
      [&](OpBuilder &b, Location loc, Value v, ValueRange outer) -> Value {
        Value c = subtractMean
                      ? arith::SubFOp::create(b, loc, v, outer[0]).getResult()
                      : v;
        return mulF(b, loc, c, c);
      },
      add);
  SmallVector<unsigned> outer;
  for (unsigned i = 0; i + 1 < rank; ++i)
    outer.push_back(i);
  SmallVector<Value> inputs = {x, sumSq, gamma};
  SmallVector<AffineMap> maps = {lb.identity(rank), lb.dims(rank, outer),
                                 lb.dims(rank, {rank - 1})};
  if (beta) {
    inputs.push_back(beta);
    maps.push_back(lb.dims(rank, {rank - 1}));
  }
  if (subtractMean) {
    inputs.push_back(mean);
    maps.push_back(lb.dims(rank, outer));
  }
  maps.push_back(lb.identity(rank));
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  bool hasBeta = static_cast<bool>(beta);
  Value normalized = lb.generic(
      inputs, lb.empty(type.getShape(), lb.f32()), maps, iters,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value v = args[0];
        if (subtractMean)
          v = arith::SubFOp::create(b, loc, v, args[hasBeta ? 4 : 3]);
        Value var = arith::DivFOp::create(
            b, loc, args[1],
            LinalgBuilder::constF32(b, loc, static_cast<double>(d)));
        Value inv = math::RsqrtOp::create(
            b, loc,
            addF(b, loc, var, LinalgBuilder::constF32(b, loc, epsilon)));
        Value y = mulF(b, loc, mulF(b, loc, v, inv), args[2]);
        if (hasBeta)
          y = addF(b, loc, y, args[3]);
        return y;
      });
  // attn-fuse-rows tiles this by rows and pulls the reductions (and the
  // residual add before the norm) into the same loop.
  normalized.getDefiningOp()->setAttr("attn.fuse_rows",
                                      UnitAttr::get(x.getContext()));
  return normalized;
}

struct LayerNormLowering : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value y =
        normalizeLast(lb, lb.toF32(op.getInput()), lb.toF32(op.getGamma()),
                      lb.toF32(op.getBeta()), op.getEpsilon().convertToDouble(),
                      /*subtractMean=*/true);
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

struct RmsNormLowering : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value y =
        normalizeLast(lb, lb.toF32(op.getInput()), lb.toF32(op.getGamma()),
                      Value(), op.getEpsilon().convertToDouble(),
                      /*subtractMean=*/false);
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Projections and feed-forward
//===----------------------------------------------------------------------===//

static Value toF32OrNull(LinalgBuilder &lb, Value v) {
  return v ? lb.toF32(v) : Value();
}

struct LinearLowering : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value y =
        lb.linear(lb.toF32(op.getInput()), lb.toF32(op.getWeight()),
                  toF32OrNull(lb, op.getBias()), nullptr, TileAttr::lookup(op));
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

struct FfnLowering : OpRewritePattern<FfnOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FfnOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Activation act = op.getActivation();
    // Bias and activation share one epilogue generic with the up projection.
    Value hidden = lb.linear(
        lb.toF32(op.getInput()), lb.toF32(op.getUpWeight()),
        toF32OrNull(lb, op.getUpBias()),
        [&](OpBuilder &b, Location loc, Value v) {
          return applyActivation(b, loc, act, v);
        },
        TileAttr::lookup(op));
    Value y = lb.linear(hidden, lb.toF32(op.getDownWeight()),
                        toF32OrNull(lb, op.getDownBias()), nullptr,
                        TileAttr::lookup(op));
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Embeddings and positions
//===----------------------------------------------------------------------===//

struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    auto type = op.getType();
    unsigned rank = type.getRank();
    Value table = op.getTable();
    int64_t vocab = op.getTable().getType().getDimSize(0);
    SmallVector<unsigned> outer;
    for (unsigned d = 0; d + 1 < rank; ++d)
      outer.push_back(d);
    SmallVector<IteratorType> iters(rank, IteratorType::parallel);
    // Ids outside [0, vocab) are clamped rather than read out of bounds.
    Value y = lb.generic(
        op.getIds(), lb.empty(type.getShape(), type.getElementType()),
        {lb.dims(rank, outer), lb.identity(rank)}, iters,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value id =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
          id = arith::MaxSIOp::create(b, loc, id,
                                      LinalgBuilder::constIndex(b, loc, 0));
          id = arith::MinSIOp::create(
              b, loc, id, LinalgBuilder::constIndex(b, loc, vocab - 1));
          Value col = linalg::IndexOp::create(b, loc, rank - 1);
          return tensor::ExtractOp::create(b, loc, table, ValueRange{id, col});
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// An index value converted to f32.
static Value indexToF32(OpBuilder &b, Location loc, Value index) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, b.getF32Type(), i64);
}

struct SinusoidalPosLowering : OpRewritePattern<SinusoidalPosOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SinusoidalPosOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    int64_t d = op.getType().getDimSize(2);
    int64_t offset = static_cast<int64_t>(op.getOffset());
    Value x = lb.toF32(op.getInput());
    Value y = lb.pointwise(
        x, [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value s = linalg::IndexOp::create(b, loc, 1);
          Value c = linalg::IndexOp::create(b, loc, 2);
          Value pos = arith::AddIOp::create(
              b, loc, s, LinalgBuilder::constIndex(b, loc, offset));
          Value two = LinalgBuilder::constIndex(b, loc, 2);
          Value pair = arith::DivUIOp::create(b, loc, c, two);
          Value isCos =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                    arith::RemUIOp::create(b, loc, c, two),
                                    LinalgBuilder::constIndex(b, loc, 0));
          // freq = exp(-(2i/D) ln 10000)
          Value twoI = mulF(
              b, loc, indexToF32(b, loc, pair),
              LinalgBuilder::constF32(b, loc, 2.0 / static_cast<double>(d)));
          Value freq = math::ExpOp::create(
              b, loc,
              mulF(b, loc, twoI,
                   LinalgBuilder::constF32(b, loc, -std::log(10000.0))));
          Value angle = mulF(b, loc, indexToF32(b, loc, pos), freq);
          Value pe = arith::SelectOp::create(
              b, loc, isCos, math::CosOp::create(b, loc, angle),
              math::SinOp::create(b, loc, angle));
          return addF(b, loc, args[0], pe);
        });
    rewriter.replaceOp(op, lb.fromF32(y, op.getType().getElementType()));
    return success();
  }
};

struct LearnedPosLowering : OpRewritePattern<LearnedPosOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LearnedPosOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    auto type = op.getType();
    int64_t s = type.getDimSize(1), d = type.getDimSize(2);
    int64_t offset = static_cast<int64_t>(op.getOffset());
    Value rows = tensor::ExtractSliceOp::create(
        rewriter, op.getLoc(), op.getTable(),
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(offset),
                               rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(s),
                               rewriter.getIndexAttr(d)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                               rewriter.getIndexAttr(1)});
    Value x = lb.toF32(op.getInput());
    Value table = lb.toF32(rows);
    SmallVector<IteratorType> iters(3, IteratorType::parallel);
    Value y =
        lb.generic({x, table}, lb.empty(type.getShape(), lb.f32()),
                   {lb.identity(3), lb.dims(3, {1, 2}), lb.identity(3)}, iters,
                   [](OpBuilder &b, Location loc, ValueRange args) {
                     return addF(b, loc, args[0], args[1]);
                   });
    rewriter.replaceOp(op, lb.fromF32(y, type.getElementType()));
    return success();
  }
};

struct RotaryLowering : OpRewritePattern<RotaryOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotaryOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    auto type = op.getType();
    int64_t dh = type.getDimSize(3);
    int64_t rotary =
        op.getRotaryDim() ? static_cast<int64_t>(*op.getRotaryDim()) : dh;
    int64_t half = rotary / 2;
    int64_t offset = static_cast<int64_t>(op.getOffset());
    double logBase = std::log(op.getBase().convertToDouble());
    Value x = lb.toF32(op.getInput());
    Value y = lb.pointwise(
        x, [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value bIdx = linalg::IndexOp::create(b, loc, 0);
          Value hIdx = linalg::IndexOp::create(b, loc, 1);
          Value sIdx = linalg::IndexOp::create(b, loc, 2);
          Value c = linalg::IndexOp::create(b, loc, 3);
          Value halfV = LinalgBuilder::constIndex(b, loc, half);
          Value inRotary =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                    LinalgBuilder::constIndex(b, loc, rotary));
          Value firstHalf = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, c, halfV);
          // Pair index i and partner channel; clamp the partner for channels
          // past the rotary part, where the result is x itself.
          Value i = arith::RemUIOp::create(b, loc, c, halfV);
          Value partner = arith::SelectOp::create(
              b, loc, firstHalf, arith::AddIOp::create(b, loc, c, halfV),
              arith::SubIOp::create(b, loc, c, halfV));
          partner = arith::SelectOp::create(b, loc, inRotary, partner, c);
          Value other = tensor::ExtractOp::create(
              b, loc, x, ValueRange{bIdx, hIdx, sIdx, partner});
          Value pos = arith::AddIOp::create(
              b, loc, sIdx, LinalgBuilder::constIndex(b, loc, offset));
          // theta = p * base^(-2i/R)
          Value expo =
              mulF(b, loc, indexToF32(b, loc, i),
                   LinalgBuilder::constF32(
                       b, loc, -2.0 * logBase / static_cast<double>(rotary)));
          Value theta = mulF(b, loc, indexToF32(b, loc, pos),
                             math::ExpOp::create(b, loc, expo));
          Value cosT = math::CosOp::create(b, loc, theta);
          Value sinT = math::SinOp::create(b, loc, theta);
          Value signedSin = arith::SelectOp::create(
              b, loc, firstHalf, arith::NegFOp::create(b, loc, sinT), sinT);
          Value rotated = addF(b, loc, mulF(b, loc, args[0], cosT),
                               mulF(b, loc, other, signedSin));
          return arith::SelectOp::create(b, loc, inRotary, rotated, args[0]);
        });
    rewriter.replaceOp(op, lb.fromF32(y, type.getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Lowers attn.sdpa on a grouped 5-D layout [B, Hkv, G, Sq, *] so that a
/// query head h = n * G + g reads kv head n without a floordiv in any
/// indexing map (GQA/MQA come for free; MHA is G = 1).
struct SdpaLowering : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    auto qType = op.getQuery().getType();
    auto kType = op.getKey().getType();
    auto vType = op.getValue().getType();
    if (!qType.hasStaticShape() || !kType.hasStaticShape() ||
        !vType.hasStaticShape())
      return rewriter.notifyMatchFailure(op,
                                         "dynamic shapes are not supported");
    Location loc = op.getLoc();
    LinalgBuilder lb(rewriter, loc);
    int64_t batch = qType.getDimSize(0), hq = qType.getDimSize(1),
            sq = qType.getDimSize(2), dq = qType.getDimSize(3);
    int64_t hkv = kType.getDimSize(1), sk = kType.getDimSize(2),
            dk = kType.getDimSize(3), dv = vType.getDimSize(3);
    int64_t group = hq / hkv;
    ScoreFunction score = op.getScore();
    double scale = op.getEffectiveScale();

    Value q = lb.toF32(op.getQuery());
    Value k = lb.toF32(op.getKey());
    Value v = lb.toF32(op.getValue());
    q = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({batch, hkv, group, sq, dq}, lb.f32()), q,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});

    // Loop dims of the score space: b n g i j, plus one reduction dim.
    const unsigned B = 0, N = 1, G = 2, I = 3, J = 4, R = 5;
    SmallVector<int64_t> scoreShape = {batch, hkv, group, sq, sk};
    SmallVector<IteratorType> scoreIters(5, IteratorType::parallel);
    SmallVector<IteratorType> contractIters(6, IteratorType::parallel);
    contractIters[R] = IteratorType::reduction;
    auto contract = [&](Value lhs, Value rhs, BodyFn body) {
      return lb.generic({lhs, rhs}, lb.filled(scoreShape, 0.0),
                        {lb.dims(6, {B, N, G, I, R}), lb.dims(6, {B, N, J, R}),
                         lb.dims(6, {B, N, G, I, J})},
                        contractIters, body);
    };
    auto dotBody = [](OpBuilder &b, Location l, ValueRange args) -> Value {
      return addF(b, l, args[2], mulF(b, l, args[0], args[1]));
    };

    Value raw;
    Value qNorm, kNorm; // cosine only
    switch (score) {
    case ScoreFunction::dot:
    case ScoreFunction::scaled_dot:
      raw = contract(q, k, dotBody);
      break;
    case ScoreFunction::gaussian:
      raw = contract(
          q, k, [](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value diff = arith::SubFOp::create(b, l, args[0], args[1]);
            return addF(b, l, args[2], mulF(b, l, diff, diff));
          });
      break;
    case ScoreFunction::cosine: {
      raw = contract(q, k, dotBody);
      auto sq2 = [](OpBuilder &b, Location l, Value x, ValueRange) -> Value {
        return mulF(b, l, x, x);
      };
      auto add = [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
        return addF(b, l, acc, x);
      };
      qNorm = lb.reduceLast(q, 0.0, {}, sq2, add);
      kNorm = lb.reduceLast(k, 0.0, {}, sq2, add);
      break;
    }
    case ScoreFunction::general: {
      // qW[b,n,g,i,e] = sum_d q[b,n,g,i,d] W[d,e], then a plain dot with k.
      Value w = lb.toF32(op.getScoreWeights()[0]);
      SmallVector<IteratorType> iters(6, IteratorType::parallel);
      iters[5] = IteratorType::reduction;
      Value qw = lb.generic({q, w}, lb.filled({batch, hkv, group, sq, dk}, 0.0),
                            {lb.dims(6, {0, 1, 2, 3, 5}), lb.dims(6, {5, 4}),
                             lb.dims(6, {0, 1, 2, 3, 4})},
                            iters, dotBody);
      raw = contract(qw, k, dotBody);
      break;
    }
    case ScoreFunction::additive: {
      // v_a . tanh(Wq q + Wk k) with W = [Wq | Wk] split by columns.
      Value w = lb.toF32(op.getScoreWeights()[0]);
      Value va = lb.toF32(op.getScoreWeights()[1]);
      int64_t a = cast<RankedTensorType>(w.getType()).getDimSize(0);
      auto slice = [&](int64_t col, int64_t width) -> Value {
        return tensor::ExtractSliceOp::create(
            rewriter, loc, w,
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                                   rewriter.getIndexAttr(col)},
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(a),
                                   rewriter.getIndexAttr(width)},
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                                   rewriter.getIndexAttr(1)});
      };
      Value wq = slice(0, dq), wk = slice(dq, dk);
      // pq[b,n,g,i,a] = sum_d q[..,d] wq[a,d]; pk[b,n,j,a] likewise.
      SmallVector<IteratorType> it6(6, IteratorType::parallel);
      it6[5] = IteratorType::reduction;
      Value pq = lb.generic({q, wq}, lb.filled({batch, hkv, group, sq, a}, 0.0),
                            {lb.dims(6, {0, 1, 2, 3, 5}), lb.dims(6, {4, 5}),
                             lb.dims(6, {0, 1, 2, 3, 4})},
                            it6, dotBody);
      SmallVector<IteratorType> it5(5, IteratorType::parallel);
      it5[4] = IteratorType::reduction;
      Value pk = lb.generic({k, wk}, lb.filled({batch, hkv, sk, a}, 0.0),
                            {lb.dims(5, {0, 1, 2, 4}), lb.dims(5, {3, 4}),
                             lb.dims(5, {0, 1, 2, 3})},
                            it5, dotBody);
      raw = lb.generic({pq, pk, va}, lb.filled(scoreShape, 0.0),
                       {lb.dims(6, {B, N, G, I, R}), lb.dims(6, {B, N, J, R}),
                        lb.dims(6, {R}), lb.dims(6, {B, N, G, I, J})},
                       contractIters,
                       [](OpBuilder &b, Location l, ValueRange args) -> Value {
                         Value t = math::TanhOp::create(
                             b, l, addF(b, l, args[0], args[1]));
                         return addF(b, l, args[3], mulF(b, l, args[2], t));
                       });
      break;
    }
    }

    // Scale, bias, generated masks: masked scores are -inf.
    double factor = score == ScoreFunction::gaussian ? -0.5 * scale : scale;
    SmallVector<Value> inputs = {raw};
    SmallVector<AffineMap> maps = {lb.identity(5)};
    int qNormIdx = -1, kNormIdx = -1, biasIdx = -1, lenIdx = -1;
    if (qNorm) {
      qNormIdx = inputs.size();
      inputs.push_back(qNorm);
      maps.push_back(lb.dims(5, {B, N, G, I}));
      kNormIdx = inputs.size();
      inputs.push_back(kNorm);
      maps.push_back(lb.dims(5, {B, N, J}));
    }
    if (Value bias = op.getBias()) {
      auto bType = cast<RankedTensorType>(bias.getType());
      biasIdx = inputs.size();
      inputs.push_back(lb.toF32(bias));
      MLIRContext *ctx = rewriter.getContext();
      auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
      auto zero = getAffineConstantExpr(0, ctx);
      SmallVector<AffineExpr> exprs = {
          bType.getDimSize(0) == 1 ? zero : dim(B),
          bType.getDimSize(1) == 1 ? zero : dim(N) * group + dim(G),
          bType.getDimSize(2) == 1 ? zero : dim(I),
          bType.getDimSize(3) == 1 ? zero : dim(J)};
      maps.push_back(lb.map(5, exprs));
    }
    Value lengths = op.getKvLengths();
    if (lengths) {
      lenIdx = inputs.size();
      inputs.push_back(lengths);
      maps.push_back(lb.dims(5, {B}));
    }
    maps.push_back(lb.identity(5));
    bool causal = op.getCausal();
    std::optional<int64_t> window;
    if (op.getWindow() && *op.getWindow() != 0)
      window = static_cast<int64_t>(*op.getWindow());
    int64_t alignOffset = sk - sq;
    Value masked = lb.generic(
        inputs, lb.empty(scoreShape, lb.f32()), maps, scoreIters,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value s = args[0];
          if (qNormIdx >= 0) {
            Value eps = LinalgBuilder::constF32(b, l, 1e-6);
            Value nq = arith::MaximumFOp::create(
                b, l, math::SqrtOp::create(b, l, args[qNormIdx]), eps);
            Value nk = arith::MaximumFOp::create(
                b, l, math::SqrtOp::create(b, l, args[kNormIdx]), eps);
            s = arith::DivFOp::create(b, l, s, mulF(b, l, nq, nk));
          }
          s = mulF(b, l, s, LinalgBuilder::constF32(b, l, factor));
          if (biasIdx >= 0)
            s = addF(b, l, s, args[biasIdx]);
          Value visible;
          auto andWith = [&](Value cond) {
            visible =
                visible ? arith::AndIOp::create(b, l, visible, cond).getResult()
                        : cond;
          };
          if (causal || window || lenIdx >= 0) {
            Value i = linalg::IndexOp::create(b, l, I);
            Value j = linalg::IndexOp::create(b, l, J);
            Value p = arith::AddIOp::create(
                b, l, i, LinalgBuilder::constIndex(b, l, alignOffset));
            if (causal)
              andWith(
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, j, p));
            if (window) {
              Value w = LinalgBuilder::constIndex(b, l, *window);
              Value diff = arith::SubIOp::create(b, l, p, j);
              Value negDiff = arith::SubIOp::create(b, l, j, p);
              andWith(arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                            diff, w));
              andWith(arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                            negDiff, w));
            }
            if (lenIdx >= 0) {
              Value len = arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                     args[lenIdx]);
              andWith(arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, j,
                                            len));
            }
          }
          if (!visible)
            return s;
          Value negInf = LinalgBuilder::constF32(
              b, l, -std::numeric_limits<double>::infinity());
          return arith::SelectOp::create(b, l, visible, s, negInf);
        });

    // Softmax over j without normalizing yet; rows with no visible key have
    // max = -inf and contribute exp = 0 everywhere, so their output is 0.
    auto identityPre = [](OpBuilder &, Location, Value x, ValueRange) {
      return x;
    };
    Value rowMax = lb.reduceLast(
        masked, -std::numeric_limits<double>::infinity(), {}, identityPre,
        [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
          return arith::MaximumFOp::create(b, l, acc, x);
        });
    auto expMasked = [](OpBuilder &b, Location l, Value x, Value max) -> Value {
      Value negInf = LinalgBuilder::constF32(
          b, l, -std::numeric_limits<double>::infinity());
      Value isMasked =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, negInf);
      Value e = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, max));
      return arith::SelectOp::create(b, l, isMasked,
                                     LinalgBuilder::constF32(b, l, 0.0), e);
    };
    // exp(s - max) once per score (the PV product below must not recompute
    // it per output column).
    SmallVector<unsigned> rowDims = {B, N, G, I};
    Value probs = lb.generic(
        {masked, rowMax}, lb.empty(scoreShape, lb.f32()),
        {lb.identity(5), lb.dims(5, rowDims), lb.identity(5)}, scoreIters,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return expMasked(b, l, args[0], args[1]);
        });
    Value rowSum = lb.reduceLast(
        probs, 0.0, {},
        [](OpBuilder &, Location, Value x, ValueRange) { return x; },
        [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
          return addF(b, l, acc, x);
        });
    // out[b,n,g,i,e] = sum_j p[b,n,g,i,j] v[b,n,j,e]; dims b n g i e j.
    SmallVector<IteratorType> pvIters(6, IteratorType::parallel);
    pvIters[5] = IteratorType::reduction;
    Value unnormalized = lb.generic(
        {probs, v}, lb.filled({batch, hkv, group, sq, dv}, 0.0),
        {lb.dims(6, {0, 1, 2, 3, 5}), lb.dims(6, {0, 1, 5, 4}),
         lb.dims(6, {0, 1, 2, 3, 4})},
        pvIters, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return addF(b, l, args[2], mulF(b, l, args[0], args[1]));
        });
    SmallVector<IteratorType> outIters(5, IteratorType::parallel);
    Value out = lb.generic(
        {unnormalized, rowSum}, lb.empty({batch, hkv, group, sq, dv}, lb.f32()),
        {lb.identity(5), lb.dims(5, {0, 1, 2, 3}), lb.identity(5)}, outIters,
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value zero = LinalgBuilder::constF32(b, l, 0.0);
          Value positive = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OGT, args[1], zero);
          Value div = arith::DivFOp::create(b, l, args[0], args[1]);
          return arith::SelectOp::create(b, l, positive, div, zero);
        });
    out = tensor::CollapseShapeOp::create(
        rewriter, loc, out,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    rewriter.replaceOp(op, lb.fromF32(out, op.getType().getElementType()));
    return success();
  }
};

/// attn.mha -> attn.linear projections, head split/merge reshapes and one
/// attn.sdpa; those are lowered by the other patterns.
struct MhaLowering : OpRewritePattern<MhaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MhaOp op,
                                PatternRewriter &rewriter) const override {
    return decomposeMha(rewriter, op);
  }
};

/// attn.layer -> its body, inlined in place.
struct LayerInlining : OpRewritePattern<LayerOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.inlineBlockBefore(&body, op, op.getInputs());
    rewriter.eraseOp(yield);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct AttnDecomposeMhaPass
    : public mlir::attn::impl::AttnDecomposeMhaBase<AttnDecomposeMhaPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MhaLowering>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

struct AttnLowerToLinalgPass
    : public mlir::attn::impl::AttnLowerToLinalgBase<AttnLowerToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // The lowering builds static tensor.empty ops; say so instead of
    // producing invalid IR for dynamic shapes.
    WalkResult dynamic = getOperation().walk([](Operation *op) {
      if (!isa<AttnDialect>(op->getDialect()) || isa<LayerOp, YieldOp>(op))
        return WalkResult::advance();
      auto isDynamic = [](Type t) {
        auto shaped = dyn_cast<ShapedType>(t);
        return shaped && !shaped.hasStaticShape();
      };
      if (llvm::any_of(op->getOperandTypes(), isDynamic) ||
          llvm::any_of(op->getResultTypes(), isDynamic)) {
        op->emitOpError("has dynamic shapes, which attn-lower-to-linalg does "
                        "not support yet");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (dynamic.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.addIllegalDialect<AttnDialect>();
    target.addLegalOp<WeightOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateAttnToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::attn::decomposeMha(RewriterBase &rewriter, MhaOp op) {
  auto xType = op.getQuery().getType();
  if (!xType.hasStaticShape())
    return rewriter.notifyMatchFailure(op, "dynamic shapes are not supported");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Type elt = xType.getElementType();
  Value x = op.getQuery();
  Value kvIn = op.getKeyValue() ? op.getKeyValue() : x;
  auto kvType = cast<RankedTensorType>(kvIn.getType());
  int64_t batch = xType.getDimSize(0), sq = xType.getDimSize(1),
          dm = xType.getDimSize(2), sk = kvType.getDimSize(1);
  int64_t heads = op.getNumHeads(), kvHeads = op.getKvHeads();
  int64_t dh = op.getEffectiveHeadDim();
  auto biases = op.getBiases();
  auto bias = [&](int i) { return biases.empty() ? Value() : biases[i]; };
  // attn-tile chose one configuration for all the parts (see attn-tile).
  TileAttr tile = TileAttr::lookup(op);

  auto project = [&](Value in, int64_t seq, Value w, Value b, int64_t nHeads) {
    auto flatType = RankedTensorType::get({batch, seq, nHeads * dh}, elt);
    auto flat = LinearOp::create(rewriter, loc, flatType, in, w, b);
    if (tile)
      flat->setAttr(TileAttr::kAttrName, tile);
    Value split = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({batch, seq, nHeads, dh}, elt),
        flat, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    Value init = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{batch, nHeads, seq, dh}, elt);
    return linalg::TransposeOp::create(rewriter, loc, split, init,
                                       ArrayRef<int64_t>{0, 2, 1, 3})
        .getResult()[0];
  };
  Value q = project(x, sq, op.getQWeight(), bias(0), heads);
  Value k = project(kvIn, sk, op.getKWeight(), bias(1), kvHeads);
  Value v = project(kvIn, sk, op.getVWeight(), bias(2), kvHeads);
  auto attnType = RankedTensorType::get({batch, heads, sq, dh}, elt);
  auto attn =
      SdpaOp::create(rewriter, loc, attnType, q, k, v, /*bias=*/Value(),
                     op.getKvLengths(), ValueRange{}, ScoreFunction::scaled_dot,
                     op.getScaleAttr(), op.getCausal(), op.getWindowAttr());
  if (tile)
    attn->setAttr(TileAttr::kAttrName, tile);
  Value merged =
      linalg::TransposeOp::create(
          rewriter, loc, attn,
          tensor::EmptyOp::create(rewriter, loc,
                                  ArrayRef<int64_t>{batch, sq, heads, dh}, elt),
          ArrayRef<int64_t>{0, 2, 1, 3})
          .getResult()[0];
  merged = tensor::CollapseShapeOp::create(
      rewriter, loc, merged, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  auto out =
      LinearOp::create(rewriter, loc, xType, merged, op.getOWeight(), bias(3));
  if (tile)
    out->setAttr(TileAttr::kAttrName, tile);
  (void)dm;
  rewriter.replaceOp(op, out.getResult());
  return success();
}

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AddLowering, SoftmaxLowering, LayerNormLowering, RmsNormLowering,
               LinearLowering, FfnLowering, EmbeddingLowering,
               SinusoidalPosLowering, LearnedPosLowering, RotaryLowering,
               SdpaLowering, MhaLowering, LayerInlining>(ctx);
  patterns.add<UnaryActivationLowering<ReluOp>>(ctx, reluKind);
  patterns.add<UnaryActivationLowering<SiluOp>>(ctx, siluKind);
  patterns.add<UnaryActivationLowering<GeluOp>>(ctx, geluKind);
}
