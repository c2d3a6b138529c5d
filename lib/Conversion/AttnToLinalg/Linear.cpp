//===- Linear.cpp - projections and feed-forward blocks to linalg ---------===//

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

static Value toF32OrNull(LinalgBuilder &lb, Value v) {
  return v ? lb.toF32(v) : Value();
}

static FailureOr<Value> lowerLinear(LinearOp op, LinalgBuilder &lb,
                                    PatternRewriter &rewriter) {
  Value y =
      lb.linear(lb.toF32(op.getInput()), lb.toF32(op.getWeight()),
                toF32OrNull(lb, op.getBias()), nullptr, TileAttr::lookup(op));
  return y;
}

static FailureOr<Value> lowerFfn(FfnOp op, LinalgBuilder &lb,
                                 PatternRewriter &rewriter) {
  Activation act = op.getActivation();
  Value x = lb.toF32(op.getInput());
  auto activate = [&](OpBuilder &b, Location loc, Value v) {
    return applyActivation(b, loc, act, v);
  };
  // Bias and activation share one epilogue generic with the projection
  // they follow (the up projection, or the gate of a gated FFN).
  Value hidden;
  if (Value gateWeight = op.getGateWeight()) {
    Value gate =
        lb.linear(x, lb.toF32(gateWeight), toF32OrNull(lb, op.getGateBias()),
                  activate, TileAttr::lookup(op));
    Value up = lb.linear(x, lb.toF32(op.getUpWeight()),
                         toF32OrNull(lb, op.getUpBias()), nullptr,
                         TileAttr::lookup(op));
    hidden = lb.pointwise({gate, up},
                          [](OpBuilder &b, Location loc, ValueRange args) {
                            return mulF(b, loc, args[0], args[1]);
                          });
  } else {
    hidden = lb.linear(x, lb.toF32(op.getUpWeight()),
                       toF32OrNull(lb, op.getUpBias()), activate,
                       TileAttr::lookup(op));
  }
  // An f16/bf16 FFN keeps its hidden activation in its own type, as the
  // frameworks do (PyTorch's f16 GELU output is f16): the down projection
  // then multiplies two f16/bf16 operands, which the tensor-core kernels
  // take, instead of f32 activations with a per-run f32 copy of the weight.
  hidden = lb.toF32(lb.fromF32(hidden, op.getType().getElementType()));
  Value y = lb.linear(hidden, lb.toF32(op.getDownWeight()),
                      toF32OrNull(lb, op.getDownBias()), nullptr,
                      TileAttr::lookup(op));
  return y;
}

} // namespace

void mlir::attn::populateLinearToLinalgPatterns(RewritePatternSet &patterns) {
  addF32Lowering(patterns, lowerLinear);
  addF32Lowering(patterns, lowerFfn);
}
