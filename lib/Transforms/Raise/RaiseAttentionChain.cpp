//===- RaiseAttentionChain.cpp - attention from primitive ops -------------===//
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

#include "AttentionPatterns.h"
#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

using namespace mlir;
using namespace mlir::attn;
using raise::hasIdentityMaps;
using raise::matchBroadcastScale;
using raise::matchLastDimSoftmax;
using raise::matchScaleOperands;
using raise::Scaled;

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
    return raise::getConstantSplatValue(v);
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
  // Constants as imported: splats, fills, or either broadcast.
  if (auto ins = raise::matchBinary<linalg::MulOp>(value))
    return matchScaleOperands(ins->first, ins->second, /*isDivision=*/false,
                              raise::getSplatValue);
  if (auto ins = raise::matchBinary<linalg::DivOp>(value))
    return matchScaleOperands(ins->first, ins->second, /*isDivision=*/true,
                              raise::getSplatValue);
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
    return raise::getConstantSplatValue(v);
  };
  return matchScaleOperands(op->getOperand(0), op->getOperand(1),
                            isa<arith::DivFOp>(op), getSplat);
}

/// The operands of an additive mask, `lhs + rhs`: linalg.add or attn.add of
/// same-typed tensors.
static std::optional<std::pair<Value, Value>> matchAdd(Value value) {
  if (auto ins = raise::matchBinary<linalg::AddOp>(value))
    return ins;
  if (auto add = value.getDefiningOp<attn::AddOp>())
    return std::make_pair(add.getLhs(), add.getRhs());
  return std::nullopt;
}

/// True if `init` is a tensor of zeros (a fill of 0.0 or a zero splat), so
/// that a matmul accumulating into it computes the plain product.
static bool isZeroTensor(Value init) {
  std::optional<double> value = raise::getConstantSplatValue(init);
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

namespace {

/// What the root's chain is made of.
struct AttentionChain {
  Value query, key, value, bias;
  /// When set, K is `key` transposed by this permutation (K^T came from a
  /// transpose that is not a swap of the last two dimensions, e.g. PyTorch
  /// MHA's [S, B*H, D] -> [B*H, D, S]).
  SmallVector<int64_t> keyPermutation;
  double scale = 1.0;
  /// softmax, [add], [scale], scores: the ops the rewrite replaces, from the
  /// root's operand backwards.
  SmallVector<Operation *> intermediates;
  /// A scale of Q folded into `scale`, erased after the scores.
  Operation *queryScale = nullptr;
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
          transpose.getPermutation().size() < 2)
        return failure();
      chain.query = ins->first;
      chain.key = transpose.getInput();
      if (!isLastTwoSwap(transpose.getPermutation())) {
        chain.keyPermutation.assign(transpose.getPermutation().begin(),
                                    transpose.getPermutation().end());
        std::swap(chain.keyPermutation[chain.keyPermutation.size() - 1],
                  chain.keyPermutation[chain.keyPermutation.size() - 2]);
      }
    } else if (auto ins =
                   matchMatmul(op, getTransposedBMaps<MatmulOpTy>(ctx))) {
      chain.query = ins->first;
      chain.key = ins->second;
    } else {
      return failure();
    }
    chain.intermediates.push_back(op);
    // A constant scale of Q alone (PyTorch MHA divides q by sqrt(d) before
    // the product) scales the scores.
    if (chain.query.hasOneUse())
      if (std::optional<Scaled> scaled = matchBroadcastScale(chain.query)) {
        chain.queryScale = chain.query.getDefiningOp();
        chain.scale *= scaled->factor;
        chain.query = scaled->input;
      }
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
    chain.scale *= scaled->factor;
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

  /// Element types and shapes: everything is a tensor of one float type,
  /// and the shapes are those of attention. Dynamic sizes (batch, sequence)
  /// must be the same in every run (raise::sameDim), not just both `?`.
  static LogicalResult checkTypes(MatmulOpTy root,
                                  const AttentionChain &chain) {
    Value out = root->getResult(0);
    auto resultType = cast<RankedTensorType>(out.getType());
    Type elementType = resultType.getElementType();
    if (!isa<FloatType>(elementType))
      return failure();
    SmallVector<Value> values = {chain.query, chain.key, chain.value, out};
    if (chain.bias)
      values.push_back(chain.bias);
    for (Operation *op : chain.intermediates)
      values.push_back(op->getResult(0));
    int64_t rank = resultType.getRank();
    for (Value v : values) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || type.getElementType() != elementType ||
          type.getRank() != rank)
        return failure();
    }
    // Dimension i of K is dimension perm[i] of `key`.
    auto keyDim = [&](int64_t i) -> std::pair<Value, int64_t> {
      if (chain.keyPermutation.empty())
        return {chain.key, i};
      return {chain.key, chain.keyPermutation[i]};
    };
    using Dim = std::pair<Value, int64_t>;
    auto same = [](Dim a, Dim b) {
      return raise::sameDim(a.first, a.second, b.first, b.second);
    };
    Value q = chain.query, v = chain.value;
    for (int64_t d = 0; d + 2 < rank; ++d)
      if (!same({q, d}, keyDim(d)) || !same({q, d}, {v, d}) ||
          !same({q, d}, {out, d}))
        return failure();
    Dim sq{q, rank - 2}, d{q, rank - 1}, sk = keyDim(rank - 2), dv{v, rank - 1};
    if (!same(keyDim(rank - 1), d) || !same({v, rank - 2}, sk) ||
        !same({out, rank - 2}, sq) || !same({out, rank - 1}, dv))
      return failure();
    // The scores and the bias: [batch..., Sq, Sk].
    auto isScores = [&](Value s) {
      for (int64_t i = 0; i + 2 < rank; ++i)
        if (!same({s, i}, {q, i}))
          return false;
      return same({s, rank - 2}, sq) && same({s, rank - 1}, sk);
    };
    for (Operation *op : chain.intermediates)
      if (!isScores(op->getResult(0)))
        return failure();
    if (chain.bias && !isScores(chain.bias))
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

    Value key = chain.key;
    if (!chain.keyPermutation.empty()) {
      auto keyType = cast<RankedTensorType>(key.getType());
      SmallVector<OpFoldResult> sizes =
                                    tensor::getMixedSizes(rewriter, loc, key),
                                permuted;
      for (int64_t d : chain.keyPermutation)
        permuted.push_back(sizes[d]);
      Value init = tensor::EmptyOp::create(rewriter, loc, permuted,
                                           keyType.getElementType());
      key = linalg::TransposeOp::create(rewriter, loc, key, init,
                                        chain.keyPermutation)
                ->getResult(0);
    }
    Value query = expand(chain.query);
    key = expand(key);
    Value value = expand(chain.value), bias;
    // A [Sq, Sk] mask broadcast over the batch dimensions stays one
    // [1, 1, Sq, Sk] bias (not a copy per folded batch and head).
    auto maskBroadcast =
        chain.bias ? chain.bias.getDefiningOp<linalg::BroadcastOp>() : nullptr;
    if (maskBroadcast && maskBroadcast.hasPureTensorSemantics() &&
        llvm::equal(maskBroadcast.getDimensions(),
                    llvm::seq<int64_t>(0, rank - 2))) {
      Value mask = maskBroadcast.getInput();
      auto maskType = cast<RankedTensorType>(mask.getType());
      SmallVector<OpFoldResult> sizes(2, rewriter.getIndexAttr(1));
      llvm::append_range(sizes, tensor::getMixedSizes(rewriter, loc, mask));
      bias = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(
              {1, 1, maskType.getDimSize(0), maskType.getDimSize(1)},
              maskType.getElementType()),
          mask, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}}, sizes);
    } else {
      bias = expand(chain.bias);
    }
    SmallVector<int64_t> sdpaShape(4 - rank, 1);
    llvm::append_range(sdpaShape, resultType.getShape());
    Value sdpa = SdpaOp::create(
        rewriter, loc,
        RankedTensorType::get(sdpaShape, resultType.getElementType()), query,
        key, value, bias, /*kv_lengths=*/Value(), /*query_positions=*/Value(),
        /*score_weights=*/ValueRange{}, ScoreFunction::dot,
        rewriter.getF64FloatAttr(chain.scale),
        /*causal=*/false, /*window=*/IntegerAttr());
    Value result = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                                   sdpa, reassociation);
    rewriter.replaceOp(root, result);
    // Each intermediate had one use, by the op before it in the list.
    for (Operation *op : chain.intermediates)
      rewriter.eraseOp(op);
    if (chain.queryScale)
      rewriter.eraseOp(chain.queryScale);
    return success();
  }
};

} // namespace

void mlir::attn::raise::populateRaiseAttentionChainPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RaiseAttentionPattern<linalg::BatchMatmulOp>,
               RaiseAttentionPattern<linalg::MatmulOp>>(patterns.getContext());
}
