//===- Norms.cpp - layer and RMS norms to linalg --------------------------===//

#include "Conversion/AttnToLinalg/Patterns.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

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
        sum, lb.emptyLike(sum, lb.f32()),
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
      inputs, lb.emptyLike(x, lb.f32()), maps, iters,
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
  AttnDialect::FuseRowsAttrHelper(x.getContext())
      .setAttr(normalized.getDefiningOp(), UnitAttr::get(x.getContext()));
  return normalized;
}

static FailureOr<Value> lowerLayerNorm(LayerNormOp op, LinalgBuilder &lb,
                                       PatternRewriter &rewriter) {
  Value y =
      normalizeLast(lb, lb.toF32(op.getInput()), lb.toF32(op.getGamma()),
                    lb.toF32(op.getBeta()), op.getEpsilon().convertToDouble(),
                    /*subtractMean=*/true);
  return y;
}

static FailureOr<Value> lowerRmsNorm(RmsNormOp op, LinalgBuilder &lb,
                                     PatternRewriter &rewriter) {
  Value y = normalizeLast(lb, lb.toF32(op.getInput()), lb.toF32(op.getGamma()),
                          Value(), op.getEpsilon().convertToDouble(),
                          /*subtractMean=*/false);
  return y;
}

} // namespace

void mlir::attn::populateNormsToLinalgPatterns(RewritePatternSet &patterns) {
  addF32Lowering(patterns, lowerLayerNorm);
  addF32Lowering(patterns, lowerRmsNorm);
}
