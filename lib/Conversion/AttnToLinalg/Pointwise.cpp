//===- Pointwise.cpp - activations, add and softmax to linalg -------------===//

#include "Conversion/AttnToLinalg/Patterns.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::applyActivation(OpBuilder &b, Location loc, Activation act,
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

namespace {

/// `act` applied to every element of `input`, in f32.
static Value lowerActivation(LinalgBuilder &lb, Value input, Activation act) {
  Value x = lb.toF32(input);
  return lb.pointwise(x, [&](OpBuilder &b, Location loc, ValueRange args) {
    return applyActivation(b, loc, act, args[0]);
  });
}

static FailureOr<Value> lowerRelu(ReluOp op, LinalgBuilder &lb,
                                  PatternRewriter &) {
  return lowerActivation(lb, op.getInput(), Activation::relu);
}

static FailureOr<Value> lowerSilu(SiluOp op, LinalgBuilder &lb,
                                  PatternRewriter &) {
  return lowerActivation(lb, op.getInput(), Activation::silu);
}

static FailureOr<Value> lowerGelu(GeluOp op, LinalgBuilder &lb,
                                  PatternRewriter &) {
  return lowerActivation(lb, op.getInput(),
                         op.getApproximate() == GeluApproximation::tanh
                             ? Activation::gelu_tanh
                             : Activation::gelu);
}

static FailureOr<Value> lowerAdd(AddOp op, LinalgBuilder &lb,
                                 PatternRewriter &rewriter) {
  Value y = lb.pointwise({lb.toF32(op.getLhs()), lb.toF32(op.getRhs())},
                         [](OpBuilder &b, Location loc, ValueRange args) {
                           return addF(b, loc, args[0], args[1]);
                         });
  return y;
}

/// Numerically stable softmax over the last dimension of an f32 tensor.
static Value softmaxLast(LinalgBuilder &lb, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value max = lb.maxLast(x);
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
      {x, max, sum}, lb.emptyLike(x, lb.f32()),
      {lb.identity(rank), lb.dims(rank, outer), lb.dims(rank, outer),
       lb.identity(rank)},
      iters, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value e = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, args[0], args[1]));
        return arith::DivFOp::create(b, loc, e, args[2]);
      });
}

static FailureOr<Value> lowerSoftmax(SoftmaxOp op, LinalgBuilder &lb,
                                     PatternRewriter &rewriter) {
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
    SmallVector<OpFoldResult> inSizes = lb.sizes(x), shape;
    for (int64_t d : perm)
      shape.push_back(inSizes[d]);
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
                                    lb.emptyLike(op.getInput(), lb.f32()),
                                    inverse)
            .getResult()[0];
  }
  return y;
}

} // namespace

void mlir::attn::populatePointwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  addF32Lowering(patterns, lowerRelu);
  addF32Lowering(patterns, lowerSilu);
  addF32Lowering(patterns, lowerGelu);
  addF32Lowering(patterns, lowerAdd);
  addF32Lowering(patterns, lowerSoftmax);
}
