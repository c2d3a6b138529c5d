//===- RaiseAttention.cpp - raise unfused attention to attn.sdpa ----------===//
//
// Recognises attention written with primitive ops on tensors,
//
//   O = softmax_last(scale(Q @ K^T) [+ M]) @ V
//
// rooted at the final linalg.batch_matmul ([N, Sq, Sk] x [N, Sk, Dv]) or
// linalg.matmul (rank 2), and rewrites it to
//
//   O = collapse(attn.sdpa(expand(Q), expand(K), expand(V)
//                          [bias(expand(M))] score = dot, scale = s))
//
// with Q, K, V and M reshaped from [N, S, D] to [1, N, S, D] (rank 2:
// [1, 1, S, D]). Every piece must match exactly; anything else (another
// softmax dimension, a scale that is not a constant, an intermediate with a
// second use, a transpose that is not K^T, mixed element types, dynamic
// shapes) leaves the IR as it is.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/RaiseAttention.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <optional>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEATTENTION
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Matching helpers
//===----------------------------------------------------------------------===//

/// The value of a float constant: a scalar arith.constant, a splat tensor
/// arith.constant, or a tensor filled (linalg.fill) with a scalar constant.
static std::optional<double> getFloatSplatConstant(Value value) {
  Attribute attr;
  if (matchPattern(value, m_Constant(&attr))) {
    if (auto floatAttr = dyn_cast<FloatAttr>(attr))
      return floatAttr.getValueAsDouble();
    auto dense = dyn_cast<DenseFPElementsAttr>(attr);
    if (!dense || !dense.isSplat())
      return std::nullopt;
    APFloat splat = dense.getSplatValue<APFloat>();
    bool losesInfo = false;
    splat.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    return splat.convertToDouble();
  }
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics())
    return std::nullopt;
  Value scalar = fill.getInputs()[0];
  if (!isa<FloatType>(scalar.getType()) ||
      !matchPattern(scalar, m_Constant(&attr)))
    return std::nullopt;
  if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    return floatAttr.getValueAsDouble();
  return std::nullopt;
}

/// True if every indexing map of `op` is the identity.
static bool hasIdentityMaps(linalg::LinalgOp op) {
  return llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); });
}

/// The two inputs of a binary elementwise linalg op `OpTy` on tensors, all of
/// the result's type.
template <typename OpTy>
static std::optional<std::pair<Value, Value>> matchLinalgBinary(Value value) {
  auto op = value.getDefiningOp<OpTy>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op->getNumResults() != 1 || !hasIdentityMaps(op))
    return std::nullopt;
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  if (lhs.getType() != value.getType() || rhs.getType() != value.getType())
    return std::nullopt;
  return std::make_pair(lhs, rhs);
}

namespace {
/// A value scaled by a constant factor.
struct Scaled {
  Value input;
  double factor;
};
} // namespace

/// `x * c` or `c * x` (when `isDivision` is false), or `x / c`, with `c` a
/// constant given by `getConstant`; the factor, `c` or `1 / c`, must be
/// finite.
template <typename GetConstant>
static std::optional<Scaled> matchScaleOperands(Value lhs, Value rhs,
                                                bool isDivision,
                                                GetConstant getConstant) {
  std::optional<Scaled> scaled;
  if (isDivision) {
    std::optional<double> divisor = getConstant(rhs);
    if (divisor && *divisor != 0.0)
      scaled = Scaled{lhs, 1.0 / *divisor};
  } else if (std::optional<double> factor = getConstant(rhs)) {
    scaled = Scaled{lhs, *factor};
  } else if (std::optional<double> factor = getConstant(lhs)) {
    scaled = Scaled{rhs, *factor};
  }
  if (!scaled || !std::isfinite(scaled->factor))
    return std::nullopt;
  return scaled;
}

/// A single-input linalg.generic over identity maps and parallel loops whose
/// body is `arith.mulf %in, %cst` (either order) or `arith.divf %in, %cst`,
/// `%cst` a scalar constant defined outside the body.
static std::optional<Scaled> matchGenericScale(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() || !hasIdentityMaps(op))
    return std::nullopt;
  Value input = op.getDpsInputs()[0];
  if (input.getType() != op->getResult(0).getType())
    return std::nullopt;

  Block &body = op.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return std::nullopt;
  Operation &arith = body.front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1 || arith.getNumResults() != 1 ||
      yield.getOperand(0) != arith.getResult(0))
    return std::nullopt;
  bool isDivision = isa<arith::DivFOp>(arith);
  if (!isDivision && !isa<arith::MulFOp>(arith))
    return std::nullopt;

  BlockArgument in = body.getArgument(0);
  // Only a constant from outside the generic counts: the body holds no other
  // op, and block arguments are never constants.
  auto getConstant = [&](Value v) -> std::optional<double> {
    if (!isa<FloatType>(v.getType()))
      return std::nullopt;
    return getFloatSplatConstant(v);
  };
  std::optional<Scaled> scaled = matchScaleOperands(
      arith.getOperand(0), arith.getOperand(1), isDivision, getConstant);
  if (!scaled || scaled->input != in)
    return std::nullopt;
  return Scaled{input, scaled->factor};
}

/// `value` as a constant multiple of another tensor: linalg.mul / linalg.div
/// with a constant-filled tensor, the single-input generic above, or
/// arith.mulf / arith.divf on tensors with a splat constant.
static std::optional<Scaled> matchScale(Value value) {
  if (auto ins = matchLinalgBinary<linalg::MulOp>(value))
    return matchScaleOperands(ins->first, ins->second, /*isDivision=*/false,
                              getFloatSplatConstant);
  if (auto ins = matchLinalgBinary<linalg::DivOp>(value))
    return matchScaleOperands(ins->first, ins->second, /*isDivision=*/true,
                              getFloatSplatConstant);
  if (auto generic = value.getDefiningOp<linalg::GenericOp>())
    return matchGenericScale(generic);
  Operation *op = value.getDefiningOp();
  if (!isa_and_nonnull<arith::MulFOp, arith::DivFOp>(op) ||
      !isa<RankedTensorType>(value.getType()))
    return std::nullopt;
  auto getSplat = [](Value v) -> std::optional<double> {
    // Only splat tensor constants here, not fills: arith ops on tensors come
    // from frontends that materialise constants directly.
    if (!v.getDefiningOp<arith::ConstantOp>())
      return std::nullopt;
    return getFloatSplatConstant(v);
  };
  return matchScaleOperands(op->getOperand(0), op->getOperand(1),
                            isa<arith::DivFOp>(op), getSplat);
}

/// The operands of an additive mask, `lhs + rhs`: linalg.add or attn.add of
/// same-typed tensors.
static std::optional<std::pair<Value, Value>> matchAdd(Value value) {
  if (auto ins = matchLinalgBinary<linalg::AddOp>(value))
    return ins;
  if (auto add = value.getDefiningOp<attn::AddOp>())
    return std::make_pair(add.getLhs(), add.getRhs());
  return std::nullopt;
}

/// The input of a softmax over the last dimension (linalg.softmax or
/// attn.softmax) producing `value`.
static Value matchLastDimSoftmax(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return Value();
  int64_t last = type.getRank() - 1;
  if (auto softmax = value.getDefiningOp<linalg::SoftmaxOp>()) {
    if (!softmax.hasPureTensorSemantics() ||
        static_cast<int64_t>(softmax.getDimension()) != last ||
        softmax.getInput().getType() != type)
      return Value();
    return softmax.getInput();
  }
  if (auto softmax = value.getDefiningOp<attn::SoftmaxOp>()) {
    if (softmax.getNormalizedDim() != last)
      return Value();
    return softmax.getInput();
  }
  return Value();
}

/// True if `init` is a tensor of zeros (a fill of 0.0 or a zero splat), so
/// that a matmul accumulating into it computes the plain product.
static bool isZeroTensor(Value init) {
  std::optional<double> value = getFloatSplatConstant(init);
  return value && *value == 0.0;
}

/// The indexing maps of `MatmulOpTy` that read B transposed: B is [.., N, K]
/// instead of [.., K, N].
template <typename MatmulOpTy>
static SmallVector<AffineMap> getTransposedBMaps(MLIRContext *ctx) {
  SmallVector<AffineMap> maps = MatmulOpTy::getDefaultIndexingMaps(ctx);
  AffineMap rhs = maps[1];
  SmallVector<AffineExpr> results(rhs.getResults());
  std::swap(results[results.size() - 1], results[results.size() - 2]);
  maps[1] = AffineMap::get(rhs.getNumDims(), 0, results, ctx);
  return maps;
}

/// True if `perm` swaps the last two dimensions and keeps the others.
static bool isLastTwoSwap(ArrayRef<int64_t> perm) {
  int64_t rank = perm.size();
  if (rank < 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

namespace {

/// What the root's chain is made of.
struct AttentionChain {
  Value query, key, value, bias;
  double scale = 1.0;
  /// softmax, [add], [scale], scores: the ops the rewrite replaces, from the
  /// root's operand backwards.
  SmallVector<Operation *> intermediates;
};

/// Rewrites `softmax_last(scale(Q @ K^T) [+ M]) @ V` rooted at the final
/// `MatmulOpTy` (linalg.matmul or linalg.batch_matmul; the scores use the
/// same op) to attn.sdpa.
template <typename MatmulOpTy>
struct RaiseAttentionPattern : OpRewritePattern<MatmulOpTy> {
  using OpRewritePattern<MatmulOpTy>::OpRewritePattern;

  /// The matmul's two inputs, if it multiplies tensors into a zero tensor
  /// with the given indexing maps.
  static std::optional<std::pair<Value, Value>>
  matchMatmul(MatmulOpTy op, ArrayRef<AffineMap> maps) {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
        !isZeroTensor(op.getDpsInits()[0]) ||
        ArrayRef<AffineMap>(op.getIndexingMapsArray()) != maps)
      return std::nullopt;
    return std::make_pair(op.getDpsInputs()[0], op.getDpsInputs()[1]);
  }

  /// Q and K of the scores `Q @ K^T`: a matmul of Q with a transpose of K
  /// (last two dims swapped), or a matmul whose indexing maps read K
  /// transposed.
  static LogicalResult matchScores(Value scores, AttentionChain &chain) {
    auto op = scores.getDefiningOp<MatmulOpTy>();
    if (!op)
      return failure();
    MLIRContext *ctx = op.getContext();
    if (auto ins = matchMatmul(op, MatmulOpTy::getDefaultIndexingMaps(ctx))) {
      auto transpose =
          ins->second.template getDefiningOp<linalg::TransposeOp>();
      if (!transpose || !transpose.hasPureTensorSemantics() ||
          !isLastTwoSwap(transpose.getPermutation()))
        return failure();
      chain.query = ins->first;
      chain.key = transpose.getInput();
    } else if (auto ins =
                   matchMatmul(op, getTransposedBMaps<MatmulOpTy>(ctx))) {
      chain.query = ins->first;
      chain.key = ins->second;
    } else {
      return failure();
    }
    chain.intermediates.push_back(op);
    return success();
  }

  /// `scores` or a constant multiple of it: fills the scale, Q and K.
  static LogicalResult matchScaledScores(Value value, AttentionChain &chain) {
    if (succeeded(matchScores(value, chain)))
      return success();
    std::optional<Scaled> scaled = matchScale(value);
    if (!scaled || !scaled->input.hasOneUse())
      return failure();
    chain.intermediates.push_back(value.getDefiningOp());
    if (failed(matchScores(scaled->input, chain))) {
      chain.intermediates.pop_back();
      return failure();
    }
    chain.scale = scaled->factor;
    return success();
  }

  static LogicalResult matchChain(MatmulOpTy root, AttentionChain &chain,
                                  PatternRewriter &rewriter) {
    auto ins = matchMatmul(
        root, MatmulOpTy::getDefaultIndexingMaps(root.getContext()));
    if (!ins)
      return rewriter.notifyMatchFailure(
          root, "not a plain product of tensors into a zero tensor");
    auto [probs, value] = *ins;
    chain.value = value;

    Value logits = matchLastDimSoftmax(probs);
    if (!logits || !probs.hasOneUse())
      return rewriter.notifyMatchFailure(
          root, "lhs is not a single-use softmax over the last dimension");
    chain.intermediates.push_back(probs.getDefiningOp());
    if (!logits.hasOneUse())
      return rewriter.notifyMatchFailure(root, "softmax input has other uses");

    if (succeeded(matchScaledScores(logits, chain)))
      return success();
    std::optional<std::pair<Value, Value>> add = matchAdd(logits);
    if (!add)
      return rewriter.notifyMatchFailure(
          root, "softmax input is not (scaled) Q @ K^T or a sum with it");
    chain.intermediates.push_back(logits.getDefiningOp());
    for (auto [scores, bias] :
         {*add, std::make_pair(add->second, add->first)}) {
      if (scores.hasOneUse() && succeeded(matchScaledScores(scores, chain))) {
        chain.bias = bias;
        return success();
      }
    }
    return rewriter.notifyMatchFailure(
        root, "neither operand of the sum is single-use (scaled) Q @ K^T");
  }

  /// Element types and static shapes: everything is a static tensor of one
  /// float type, and the shapes are those of attention.
  static LogicalResult checkTypes(MatmulOpTy root,
                                  const AttentionChain &chain) {
    auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
    Type elementType = resultType.getElementType();
    if (!isa<FloatType>(elementType))
      return failure();
    SmallVector<Value> values = {chain.query, chain.key, chain.value,
                                 root->getResult(0)};
    if (chain.bias)
      values.push_back(chain.bias);
    for (Operation *op : chain.intermediates)
      values.push_back(op->getResult(0));
    for (Value v : values) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !type.hasStaticShape() ||
          type.getElementType() != elementType ||
          type.getRank() != resultType.getRank())
        return failure();
    }

    auto shape = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getShape();
    };
    ArrayRef<int64_t> q = shape(chain.query), k = shape(chain.key),
                      v = shape(chain.value), o = resultType.getShape();
    int64_t rank = resultType.getRank();
    ArrayRef<int64_t> batch = q.drop_back(2);
    if (k.drop_back(2) != batch || v.drop_back(2) != batch ||
        o.drop_back(2) != batch)
      return failure();
    int64_t sq = q[rank - 2], d = q[rank - 1], sk = k[rank - 2],
            dv = v[rank - 1];
    if (k[rank - 1] != d || v[rank - 2] != sk || o[rank - 2] != sq ||
        o[rank - 1] != dv)
      return failure();
    SmallVector<int64_t> scoresShape(batch);
    scoresShape.append({sq, sk});
    for (Operation *op : chain.intermediates)
      if (shape(op->getResult(0)) != ArrayRef<int64_t>(scoresShape))
        return failure();
    if (chain.bias && shape(chain.bias) != ArrayRef<int64_t>(scoresShape))
      return failure();
    return success();
  }

  LogicalResult matchAndRewrite(MatmulOpTy root,
                                PatternRewriter &rewriter) const override {
    AttentionChain chain;
    if (failed(matchChain(root, chain, rewriter)))
      return failure();
    if (failed(checkTypes(root, chain)))
      return rewriter.notifyMatchFailure(
          root, "not static tensors of one float type with attention shapes");

    // [N, S, D] -> [1, N, S, D]; [S, D] -> [1, 1, S, D].
    auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
    int64_t rank = resultType.getRank();
    SmallVector<ReassociationIndices> reassociation;
    if (rank == 3)
      reassociation = {{0, 1}, {2}, {3}};
    else
      reassociation = {{0, 1, 2}, {3}};
    Location loc = root.getLoc();
    auto expand = [&](Value v) -> Value {
      if (!v)
        return v;
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(4 - rank, 1);
      llvm::append_range(shape, type.getShape());
      return tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()), v,
          reassociation);
    };

    Value query = expand(chain.query), key = expand(chain.key),
          value = expand(chain.value), bias = expand(chain.bias);
    SmallVector<int64_t> sdpaShape(4 - rank, 1);
    llvm::append_range(sdpaShape, resultType.getShape());
    Value sdpa = SdpaOp::create(
        rewriter, loc,
        RankedTensorType::get(sdpaShape, resultType.getElementType()), query,
        key, value, bias, /*kv_lengths=*/Value(),
        /*score_weights=*/ValueRange{}, ScoreFunction::dot,
        rewriter.getF64FloatAttr(chain.scale),
        /*causal=*/false, /*window=*/IntegerAttr());
    Value result = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                                   sdpa, reassociation);
    rewriter.replaceOp(root, result);
    // Each intermediate had one use, by the op before it in the list.
    for (Operation *op : chain.intermediates)
      rewriter.eraseOp(op);
    return success();
  }
};

struct AttnRaiseAttentionPass
    : public attn::impl::AttnRaiseAttentionBase<AttnRaiseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseAttentionPatterns(patterns);
    // Only the raise: no folding or constant hoisting elsewhere in the
    // function. The driver erases the producers the chain leaves dead.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateRaiseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttentionPattern<linalg::BatchMatmulOp>,
               RaiseAttentionPattern<linalg::MatmulOp>>(patterns.getContext());
}
