//===- RaiseGelu.cpp - raise GELU formulas to attn.gelu -------------------===//
//
// GELU arrives as its formula:
//
//   erf:  0.5 * x * (1 + erf(x / sqrt(2)))
//   tanh: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
//
// with the multiplications in any order and grouping, x / c or x * (1 / c).
// Products are flattened into a constant and the non-constant factors, so
// that every grouping matches; the constants must agree with the formula
// to a relative 1e-5 (exporters round them to the model's precision).
//
//===----------------------------------------------------------------------===//

#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEGELU
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {
/// A product: a constant times non-constant factors.
struct Product {
  double constant = 1.0;
  SmallVector<Value> factors;
};
} // namespace

/// Adds the factors of `v` to `product`, looking through linalg.mul and
/// linalg.div by a constant; intermediates other than the root (`isRoot`)
/// are only looked into when this product is their one use.
static void flattenProduct(Value v, Product &product, bool isRoot) {
  if (std::optional<double> c = getSplatValue(v)) {
    product.constant *= *c;
    return;
  }
  if (isRoot || v.hasOneUse()) {
    if (auto mul = matchBinary<linalg::MulOp>(v)) {
      flattenProduct(mul->first, product, false);
      flattenProduct(mul->second, product, false);
      return;
    }
    if (auto div = matchBinary<linalg::DivOp>(v)) {
      std::optional<double> c = getSplatValue(div->second);
      if (c && *c != 0.0) {
        product.constant /= *c;
        flattenProduct(div->first, product, false);
        return;
      }
    }
  }
  product.factors.push_back(v);
}

static bool isNear(double value, double expected) {
  return std::fabs(value - expected) <= 1e-5 * std::fabs(expected);
}

/// `v` as c * x with a single factor x and c near `expected`: x.
static Value matchScaled(Value v, double expected) {
  Product product;
  flattenProduct(v, product, /*isRoot=*/true);
  if (product.factors.size() != 1 || !isNear(product.constant, expected))
    return Value();
  return product.factors[0];
}

/// True if `v` is 0.044715 * x^3, the cube as linalg.powf(x, 3) or as a
/// product with x three times.
static bool isCubicTerm(Value v, Value x) {
  Product product;
  flattenProduct(v, product, /*isRoot=*/true);
  if (!isNear(product.constant, 0.044715))
    return false;
  if (product.factors.size() == 3)
    return llvm::all_of(product.factors, [&](Value f) { return f == x; });
  if (product.factors.size() != 1)
    return false;
  auto pow = matchBinary<linalg::PowFOp>(product.factors[0]);
  return pow && pow->first == x && isSplatNear(pow->second, 3.0, 0.0);
}

/// The GELU argument `x` of `1 + erf(x / sqrt(2))` or of
/// `1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))`, with which formula.
static std::optional<std::pair<Value, GeluApproximation>>
matchOnePlusGeluCore(Value v) {
  auto add = matchBinary<linalg::AddOp>(v);
  if (!add)
    return std::nullopt;
  for (auto [one, core] : {*add, std::make_pair(add->second, add->first)}) {
    if (!isSplatNear(one, 1.0, 0.0))
      continue;
    if (Value erfArg = matchUnary<linalg::ErfOp>(core)) {
      if (Value x = matchScaled(erfArg, 1.0 / std::sqrt(2.0)))
        return std::make_pair(x, GeluApproximation::none);
      continue;
    }
    Value tanhArg = matchUnary<linalg::TanhOp>(core);
    if (!tanhArg)
      continue;
    Value inner = matchScaled(tanhArg, std::sqrt(2.0 / M_PI));
    auto sum = inner ? matchBinary<linalg::AddOp>(inner) : std::nullopt;
    if (!sum)
      continue;
    for (auto [x, term] : {*sum, std::make_pair(sum->second, sum->first)})
      if (isCubicTerm(term, x))
        return std::make_pair(x, GeluApproximation::tanh);
  }
  return std::nullopt;
}

namespace {

/// 0.5 * x * (1 + core(x)) -> attn.gelu, rooted at the outermost product.
struct RaiseGelu : OpRewritePattern<linalg::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::MulOp op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !matchBinary<linalg::MulOp>(result))
      return failure();
    Product product;
    flattenProduct(result, product, /*isRoot=*/true);
    if (product.factors.size() != 2 || !isNear(product.constant, 0.5))
      return rewriter.notifyMatchFailure(op, "not 0.5 * x * y");
    for (auto [x, y] :
         {std::make_pair(product.factors[0], product.factors[1]),
          std::make_pair(product.factors[1], product.factors[0])}) {
      auto core = matchOnePlusGeluCore(y);
      if (!core || core->first != x)
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(op, type, x, core->second);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a GELU formula");
  }
};

struct AttnRaiseGeluPass
    : raise::RaisingPass<AttnRaiseGeluPass, attn::impl::AttnRaiseGeluBase,
                         RaiseGelu> {};

} // namespace
