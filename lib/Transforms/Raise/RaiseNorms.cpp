//===- RaiseNorms.cpp - raise decomposed layer / RMS norms ----------------===//
//
// Exporters write LayerNorm below opset 17 (and RMSNorm always) as
// elementwise ops and ReduceMean over the last axis:
//
//   d = x - mean(x);  y = d / sqrt(mean(d^2) + eps) [* gamma] [+ beta]
//   y = x / sqrt(mean(x^2) + eps) [* gamma]     (or x * 1/sqrt(...))
//
// The normalization itself becomes attn.layer_norm / attn.rms_norm with
// constant ones (and zeros) as parameters; a following multiplication by a
// broadcast [D] vector and addition of one are then folded into gamma and
// beta. Only exact forms match: the mean must be over the last axis (its
// divisor the axis length), the power exactly 2, eps a splat constant.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISENORMS
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

/// The squared value: linalg.powf(d, 2) or linalg.mul(d, d).
static Value matchSquare(Value v) {
  if (auto pow = matchBinary<linalg::PowFOp>(v))
    return isSplatNear(pow->second, 2.0, 0.0) ? pow->first : Value();
  if (auto mul = matchBinary<linalg::MulOp>(v))
    return mul->first == mul->second ? mul->first : Value();
  return Value();
}

namespace {
/// sqrt(mean(d^2) + eps): `d` and eps.
struct RootMeanSquare {
  Value centered;
  double epsilon;
};
} // namespace

/// `v` (a row value, unit reshapes stripped) as sqrt(mean(d^2) + eps).
static std::optional<RootMeanSquare> matchRootMeanSquare(Value v) {
  Value radicand = matchUnary<linalg::SqrtOp>(stripUnitReshapes(v));
  if (!radicand)
    return std::nullopt;
  auto add = matchBinary<linalg::AddOp>(radicand);
  if (!add)
    return std::nullopt;
  for (auto [meanSquare, eps] :
       {*add, std::make_pair(add->second, add->first)}) {
    std::optional<double> epsilon = getSplatValue(eps);
    if (!epsilon || *epsilon < 0.0)
      continue;
    if (Value square = matchLastDimMean(meanSquare))
      if (Value d = matchSquare(square))
        return RootMeanSquare{d, *epsilon};
  }
  return std::nullopt;
}

/// A [D] tensor of `value` in the element type of `type`'s last dimension.
static Value createVector(PatternRewriter &rewriter, Location loc,
                          RankedTensorType type, double value) {
  auto vectorType =
      RankedTensorType::get({type.getShape().back()}, type.getElementType());
  return arith::ConstantOp::create(
      rewriter, loc,
      DenseElementsAttr::get(
          vectorType, rewriter.getFloatAttr(type.getElementType(), value)));
}

/// The float type of a norm's input, if the norm can be raised: the
/// normalized (last) dimension static, the others (batch, sequence) may be
/// dynamic.
static RankedTensorType getNormType(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() < 1 || type.isDynamicDim(type.getRank() - 1) ||
      !isa<FloatType>(type.getElementType()))
    return {};
  return type;
}

namespace {

/// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) -> attn.layer_norm.
struct RaiseLayerNorm : OpRewritePattern<linalg::DivOp> {
  RaiseLayerNorm(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(linalg::DivOp op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    RankedTensorType type = getNormType(result);
    auto ins = matchBinary<linalg::DivOp>(result);
    if (!type || !ins)
      return failure();
    auto [centered, denominator] = *ins;
    auto sub = matchBinary<linalg::SubOp>(centered);
    if (!sub)
      return rewriter.notifyMatchFailure(op, "numerator is not x - mean");
    Value x = sub->first;
    Value meanRow = matchLastDimBroadcast(sub->second);
    if (!meanRow || matchLastDimMean(meanRow) != x)
      return rewriter.notifyMatchFailure(op, "subtrahend is not mean(x)");
    Value stdRow = matchLastDimBroadcast(denominator);
    std::optional<RootMeanSquare> rms =
        stdRow ? matchRootMeanSquare(stdRow) : std::nullopt;
    if (!rms || rms->centered != centered)
      return rewriter.notifyMatchFailure(
          op, "denominator is not sqrt(mean((x - mean)^2) + eps)");
    Location loc = op.getLoc();
    Value gamma = createVector(rewriter, loc, type, 1.0);
    Value beta = createVector(rewriter, loc, type, 0.0);
    rewriter.replaceOpWithNewOp<LayerNormOp>(
        op, type, x, gamma, beta, rewriter.getF64FloatAttr(rms->epsilon));
    return success();
  }
};

/// x / sqrt(mean(x^2) + eps) or x * (1 / sqrt(...)) -> attn.rms_norm.
template <typename OpTy> struct RaiseRmsNorm : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  /// The row value r of `v` = 1 / r (reciprocal or division of a splat 1).
  static Value matchReciprocal(Value v) {
    v = stripUnitReshapes(v);
    if (Value r = matchUnary<linalg::ReciprocalOp>(v))
      return r;
    if (auto div = matchBinary<linalg::DivOp>(v))
      if (isSplatNear(div->first, 1.0, 0.0))
        return div->second;
    return Value();
  }

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    RankedTensorType type = getNormType(result);
    auto ins = matchBinary<OpTy>(result);
    if (!type || !ins)
      return failure();
    constexpr bool isDivision = std::is_same_v<OpTy, linalg::DivOp>;
    SmallVector<std::pair<Value, Value>> orders = {*ins};
    if (!isDivision)
      orders.push_back({ins->second, ins->first});
    for (auto [x, scale] : orders) {
      Value row = matchLastDimBroadcast(scale);
      if (!row)
        continue;
      if (!isDivision && !(row = matchReciprocal(row)))
        continue;
      std::optional<RootMeanSquare> rms = matchRootMeanSquare(row);
      if (!rms || rms->centered != x)
        continue;
      Value gamma = createVector(rewriter, op.getLoc(), type, 1.0);
      rewriter.replaceOpWithNewOp<RmsNormOp>(
          op, type, x, gamma, rewriter.getF64FloatAttr(rms->epsilon));
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not x / sqrt(mean(x^2) + eps)");
  }
};

/// norm(x) * broadcast(g), g : [D], with the norm's gamma all ones -> the
/// norm with gamma = g; layer_norm(x) + broadcast(b) with beta all zeros ->
/// beta = b.
template <typename OpTy> struct FoldNormAffine : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  static constexpr bool isScale = std::is_same_v<OpTy, linalg::MulOp>;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    auto ins = matchBinary<OpTy>(result);
    if (!ins)
      return failure();
    auto type = cast<RankedTensorType>(result.getType());
    for (auto [norm, operand] :
         {*ins, std::make_pair(ins->second, ins->first)}) {
      Value vector = matchVectorBroadcast(operand);
      if (!vector || !norm.hasOneUse() ||
          cast<RankedTensorType>(vector.getType()).getShape().back() !=
              type.getShape().back())
        continue;
      if (auto ln = norm.template getDefiningOp<LayerNormOp>()) {
        Value gamma = ln.getGamma(), beta = ln.getBeta();
        if (!isSplatNear(beta, 0.0, 0.0))
          continue;
        if (isScale) {
          if (!isSplatNear(gamma, 1.0, 0.0))
            continue;
          gamma = vector;
        } else {
          beta = vector;
        }
        rewriter.replaceOpWithNewOp<LayerNormOp>(op, type, ln.getInput(), gamma,
                                                 beta, ln.getEpsilonAttr());
        return success();
      }
      if (auto rms = norm.template getDefiningOp<RmsNormOp>()) {
        if (!isScale || !isSplatNear(rms.getGamma(), 1.0, 0.0))
          continue;
        rewriter.replaceOpWithNewOp<RmsNormOp>(op, type, rms.getInput(), vector,
                                               rms.getEpsilonAttr());
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not a norm's scale or shift");
  }
};

struct AttnRaiseNormsPass
    : public attn::impl::AttnRaiseNormsBase<AttnRaiseNormsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseLayerNorm, RaiseRmsNorm<linalg::DivOp>,
                 RaiseRmsNorm<linalg::MulOp>, FoldNormAffine<linalg::MulOp>,
                 FoldNormAffine<linalg::AddOp>>(&getContext());
    if (failed(applyOwnPatterns(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
