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
// Imported ONNX graphs (see RaiseImportedAttention below) compute attention
// on [B, H, S, D] tensors: each batched MatMul is a linalg.batch_matmul
// between tensor.collapse_shape / tensor.expand_shape of the leading dims,
// K^T a linalg.transpose of the head-split key, the scale a multiplication
// or division by a broadcast constant (of the scores, or of Q and K^T), the
// mask a broadcast additive tensor. These become one attn.sdpa on the 4-D
// tensors; a constant lower-triangular additive mask (0 / -inf or <= -1e4)
// becomes `causal`, any other mask the additive `bias` (broadcast
// dimensions kept as unit dimensions, which attn.sdpa broadcasts).
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/RaiseAttention.h"

#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"
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
  if (auto ins = matchLinalgBinary<linalg::MulOp>(value))
    return matchScaleOperands(ins->first, ins->second, /*isDivision=*/false,
                              raise::getSplatValue);
  if (auto ins = matchLinalgBinary<linalg::DivOp>(value))
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

/// The constant factor of `v` = x * c, c * x or x / c with c a broadcast
/// splat: x and the factor.
static std::optional<Scaled> matchBroadcastScale(Value v) {
  if (auto mul = raise::matchBinary<linalg::MulOp>(v))
    return matchScaleOperands(mul->first, mul->second, /*isDivision=*/false,
                              raise::getSplatValue);
  if (auto div = raise::matchBinary<linalg::DivOp>(v))
    return matchScaleOperands(div->first, div->second, /*isDivision=*/true,
                              raise::getSplatValue);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

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

/// Peels single-use constant scalings off `v`, multiplying them into
/// `scale` and recording the ops in `ops`.
static Value peelScales(Value v, double &scale,
                        SmallVectorImpl<Operation *> &ops) {
  while (v.hasOneUse()) {
    std::optional<Scaled> scaled = matchBroadcastScale(v);
    if (!scaled)
      break;
    ops.push_back(v.getDefiningOp());
    scale *= scaled->factor;
    v = scaled->input;
  }
  return v;
}

/// True if `matmul` is a single-use batch matmul on tensors with the
/// default maps into zeros (the plain product of its two operands).
static bool isPlainBatchMatmul(linalg::BatchMatmulOp matmul) {
  return matmul && matmul.hasPureTensorSemantics() && matmul->hasOneUse() &&
         matmul.getNumDpsInputs() == 2 &&
         raise::isZeroTensor(matmul.getDpsInits()[0]) &&
         ArrayRef<AffineMap>(matmul.getIndexingMapsArray()) ==
             ArrayRef<AffineMap>(linalg::BatchMatmulOp::getDefaultIndexingMaps(
                 matmul.getContext()));
}

/// If `v` is `expand_shape(batch_matmul(collapse_shape(a), collapse_shape(b)))`
/// into zeros, the leading dimensions collapsed into one and expanded back
/// the same way: a and b (rank 4), with the matmul and collapses in `ops`.
static std::optional<std::pair<Value, Value>>
matchCollapsedBatchMatmul(Value v, SmallVectorImpl<Operation *> &ops) {
  auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || expand.getResultType().getRank() != 4)
    return std::nullopt;
  SmallVector<ReassociationIndices> expected = {{0, 1}, {2}, {3}};
  if (expand.getReassociationIndices() != expected)
    return std::nullopt;
  auto matmul = expand.getSrc().getDefiningOp<linalg::BatchMatmulOp>();
  if (!isPlainBatchMatmul(matmul))
    return std::nullopt;
  SmallVector<Value, 2> operands;
  for (Value in : matmul.getDpsInputs()) {
    auto collapse = in.getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || collapse.getReassociationIndices() != expected ||
        !raise::sameSize(expand.getMixedOutputShape()[0], collapse.getSrc(),
                         0) ||
        !raise::sameSize(expand.getMixedOutputShape()[1], collapse.getSrc(), 1))
      return std::nullopt;
    operands.push_back(collapse.getSrc());
  }
  ops.push_back(expand);
  ops.push_back(matmul);
  return std::make_pair(operands[0], operands[1]);
}

/// If `v` ([B*H, Sq, Sk]) is `batch_matmul(collapse(q),
/// transpose(collapse(k)))` into zeros, with q [B, H, Sq, D] and k [B, H, Sk,
/// D] collapsed on their leading pair and B, H the sizes `expand` splits back
/// out: q and k, with the matmul in `ops`. This is the product BLOOM's baddbmm
/// exports, which adds its bias before the heads are expanded again.
static std::optional<std::pair<Value, Value>>
matchHeadsBatchMatmul(Value v, tensor::ExpandShapeOp expand,
                      SmallVectorImpl<Operation *> &ops) {
  auto matmul = v.getDefiningOp<linalg::BatchMatmulOp>();
  if (!isPlainBatchMatmul(matmul))
    return std::nullopt;
  SmallVector<ReassociationIndices> leadingPair = {{0, 1}, {2}, {3}};
  auto headsOf = [&](Value in) -> Value {
    auto collapse = in.getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || collapse.getReassociationIndices() != leadingPair ||
        !raise::sameSize(expand.getMixedOutputShape()[0], collapse.getSrc(),
                         0) ||
        !raise::sameSize(expand.getMixedOutputShape()[1], collapse.getSrc(), 1))
      return Value();
    return collapse.getSrc();
  };
  Value query = headsOf(matmul.getDpsInputs()[0]);
  auto transpose =
      matmul.getDpsInputs()[1].getDefiningOp<linalg::TransposeOp>();
  if (!query || !transpose || !transpose.hasPureTensorSemantics() ||
      !llvm::equal(transpose.getPermutation(), ArrayRef<int64_t>{0, 2, 1}))
    return std::nullopt;
  Value key = headsOf(transpose.getInput());
  if (!key)
    return std::nullopt;
  ops.push_back(matmul);
  return std::make_pair(query, key);
}

namespace {
/// `expand(scores + bias)`: a bias added in the [B*H, Sq, Sk] domain of the
/// score product, before the heads are expanded to [B, H, Sq, Sk].
struct HeadsBiasAdd {
  tensor::ExpandShapeOp expand;
  Operation *add;
  Value scores, bias;
};
} // namespace

/// `v` as a HeadsBiasAdd whose scores lead, through constant scales, to a
/// matchHeadsBatchMatmul product.
static std::optional<HeadsBiasAdd> matchHeadsBiasAdd(Value v) {
  auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
  SmallVector<ReassociationIndices> leadingPair = {{0, 1}, {2}, {3}};
  if (!expand || expand.getResultType().getRank() != 4 ||
      expand.getReassociationIndices() != leadingPair ||
      !expand.getSrc().hasOneUse())
    return std::nullopt;
  auto add = raise::matchBinary<linalg::AddOp>(expand.getSrc());
  if (!add)
    return std::nullopt;
  for (auto [scores, bias] : {*add, std::make_pair(add->second, add->first)}) {
    double ignored = 1.0;
    SmallVector<Operation *> scratch;
    Value product = peelScales(scores, ignored, scratch);
    if (scores.hasOneUse() && matchHeadsBatchMatmul(product, expand, scratch))
      return HeadsBiasAdd{expand, expand.getSrc().getDefiningOp(), scores,
                          bias};
  }
  return std::nullopt;
}

/// A HeadsBiasAdd's bias ([B*H, Sq, Sk]) as [B, H, Sq, Sk] with `sizes`: a
/// broadcast's input with its broadcast dimensions as unit dimensions, or
/// the bias expanded.
static Value buildHeadsBias(PatternRewriter &rewriter, Location loc, Value bias,
                            ArrayRef<OpFoldResult> sizes) {
  auto biasType = cast<RankedTensorType>(bias.getType());
  auto broadcast = bias.getDefiningOp<linalg::BroadcastOp>();
  SmallVector<int64_t> added;
  Value input = bias;
  if (broadcast && broadcast.hasPureTensorSemantics() &&
      !llvm::is_contained(broadcast.getDimensions(), 0)) {
    added.assign(broadcast.getDimensions().begin(),
                 broadcast.getDimensions().end());
    input = broadcast.getInput();
  }
  // Dimension 0 splits into B, H; each broadcast dimension becomes a unit
  // dimension in the group before it.
  SmallVector<ReassociationIndices> reassociation = {{0, 1}};
  SmallVector<OpFoldResult> shape4(sizes.begin(), sizes.end());
  for (int64_t d = 1; d < 3; ++d) {
    if (llvm::is_contained(added, d)) {
      reassociation.back().push_back(d + 1);
      shape4[d + 1] = rewriter.getIndexAttr(1);
    } else {
      reassociation.push_back({d + 1});
    }
  }
  SmallVector<int64_t> staticShape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(shape4, dynamic, staticShape);
  auto type = RankedTensorType::get(staticShape, biasType.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, type, input,
                                       reassociation, shape4);
}

/// `a + b` for biases broadcastable to [B, H, Sq, Sk]: a broadcasting generic
/// whose sizes are taken from the operands (so that the sum depends on what
/// the biases depend on, not on the attention's operands).
static Value addBiases(PatternRewriter &rewriter, Location loc, Value a,
                       Value b) {
  MLIRContext *ctx = rewriter.getContext();
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(b.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < 4; ++d) {
    Value from = aType.getDimSize(d) != 1 ? a : b;
    sizes.push_back(tensor::getMixedSizes(rewriter, loc, from)[d]);
  }
  SmallVector<AffineMap> maps;
  for (RankedTensorType type : {aType, bType}) {
    SmallVector<AffineExpr> results;
    for (int64_t d = 0; d < 4; ++d)
      results.push_back(type.getDimSize(d) == 1 &&
                                getConstantIntValue(sizes[d]) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(d, ctx));
    maps.push_back(AffineMap::get(4, 0, results, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  Value init =
      tensor::EmptyOp::create(rewriter, loc, sizes, aType.getElementType());
  return linalg::GenericOp::create(
             rewriter, loc, init.getType(), ValueRange{a, b}, init, maps,
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [](OpBuilder &nested, Location l, ValueRange args) {
               Value sum = arith::AddFOp::create(nested, l, args[0], args[1]);
               linalg::YieldOp::create(nested, l, sum);
             })
      ->getResult(0);
}

/// `mask` without unit reshapes and a broadcast over its leading
/// dimensions (the last two, [Sq, Sk], are the mask's own); null when a
/// broadcast also spans one of the last two.
static Value stripLeadingBroadcast(Value mask) {
  Value v = raise::stripUnitReshapes(mask);
  auto broadcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast)
    return v;
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  if (!broadcast.hasPureTensorSemantics() ||
      llvm::any_of(broadcast.getDimensions(),
                   [&](int64_t d) { return d >= rank - 2; }))
    return {};
  return raise::stripUnitReshapes(broadcast.getInput());
}

/// The constant [.., Sq, Sk] behind `mask` ([B, H, Sq, Sk]): a constant,
/// possibly broadcast over leading dimensions (through unit reshapes).
static DenseElementsAttr getLeadingBroadcastConstant(Value mask, int64_t sq,
                                                     int64_t sk) {
  Value v = stripLeadingBroadcast(mask);
  if (!v)
    return {};
  DenseElementsAttr values;
  if (!matchPattern(v, m_Constant(&values)))
    return {};
  auto type = cast<ShapedType>(values.getType());
  if (type.getRank() < 2 || type.getNumElements() != sq * sk ||
      type.getShape().take_back(2) != ArrayRef<int64_t>{sq, sk})
    return {};
  return values;
}

/// The constant [.., M, N] behind `mask` ([B, H, Sq, Sk], dynamic sizes)
/// when the mask is a window of it (slices with unit strides, possibly
/// broadcast over leading dimensions) that keeps a causal buffer's causal
/// alignment, with M and N: the top-left Sq x Sq corner (GPT-2's
/// `bias[:, :, :S, :S]`), or rows [P, P + Sq) and columns [0, Sk) with
/// Sk = P + Sq (`bias[:, :, sk - sq:sk, :sk]` after P past positions, where
/// query i sits at P + i and sees keys j <= P + i: bottom-right alignment).
static std::tuple<DenseElementsAttr, int64_t, int64_t>
getCausalWindowConstant(Value mask) {
  Value v = stripLeadingBroadcast(mask);
  if (!v)
    return {};
  auto last = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!last || last.getType().getRank() < 2)
    return {};
  int64_t rank = last.getType().getRank();
  SmallVector<OpFoldResult> sizes = last.getMixedSizes();
  // The offsets of a chain of slices add up; only the row offset may be
  // non-zero, in one of them.
  OpFoldResult rowOffset;
  while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice.hasUnitStride() || slice.getDroppedDims().any())
      return {};
    for (auto [d, offset] : llvm::enumerate(slice.getMixedOffsets())) {
      if (isConstantIntValue(offset, 0))
        continue;
      if (static_cast<int64_t>(d) != rank - 2 || rowOffset)
        return {};
      rowOffset = offset;
    }
    v = slice.getSource();
  }
  if (!rowOffset) {
    if (!raise::sameSize(sizes[rank - 2], last.getResult(), rank - 1))
      return {};
  } else {
    // Sk = P + Sq, in either order.
    auto cols = dyn_cast<Value>(sizes[rank - 1]);
    auto sum = cols ? cols.getDefiningOp<arith::AddIOp>() : nullptr;
    if (!sum)
      return {};
    Value lhs = sum.getLhs(), rhs = sum.getRhs();
    if (!(raise::sameSize(lhs, rowOffset) &&
          raise::sameSize(rhs, sizes[rank - 2])) &&
        !(raise::sameSize(rhs, rowOffset) &&
          raise::sameSize(lhs, sizes[rank - 2])))
      return {};
  }
  // Leading dims whole (static).
  auto srcType = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (last.getType().getDimSize(d) != srcType.getDimSize(d) ||
        srcType.isDynamicDim(d))
      return {};
  DenseElementsAttr values;
  if (!matchPattern(v, m_Constant(&values)))
    return {};
  return {values, srcType.getDimSize(rank - 2), srcType.getDimSize(rank - 1)};
}

/// True if query row i sees key j under attn.sdpa's bottom-right aligned
/// causal mask.
static bool isCausallyVisible(int64_t index, int64_t sq, int64_t sk) {
  int64_t i = index / sk, j = index % sk;
  return j <= i + sk - sq;
}

/// True if `value` hides a score as well as -inf does after softmax: -inf or
/// at most -1e4 (exporters' "large negative" fill values).
static bool isHidingValue(double value) { return value <= -1e4; }

/// True if `mask` ([B, H, Sq, Sk]) is a constant additive causal mask,
/// broadcast over its leading dimensions: 0 where key j <= i + Sk - Sq
/// (attn.sdpa's bottom-right alignment), -inf or at most -1e4 elsewhere.
static bool isAdditiveCausalMask(Value mask, int64_t sq, int64_t sk) {
  auto values = dyn_cast_or_null<DenseFPElementsAttr>(
      getLeadingBroadcastConstant(mask, sq, sk));
  if (!values)
    return false;
  int64_t index = 0;
  for (APFloat element : values.getValues<APFloat>()) {
    bool visible = isCausallyVisible(index++, sq, sk);
    if (visible ? !element.isZero() : !isHidingValue(element.convertToDouble()))
      return false;
  }
  return true;
}

/// If `v` ([B, H, Sq, Sk]) is Where(causal, s, fill) as imported (a
/// linalg.generic whose body is one arith.select of its three inputs), with
/// `causal` a constant boolean lower-triangular pattern and `fill` a splat
/// <= -1e4: s.
static Value matchCausalSelect(Value v) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumDpsInputs() != 3 || generic->getNumResults() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !hasIdentityMaps(generic))
    return Value();
  Block &body = generic.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return Value();
  auto select = dyn_cast<arith::SelectOp>(body.front());
  if (!select || body.getTerminator()->getOperand(0) != select.getResult() ||
      select.getCondition() != body.getArgument(0) ||
      select.getTrueValue() != body.getArgument(1) ||
      select.getFalseValue() != body.getArgument(2))
    return Value();
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() != 4)
    return Value();
  int64_t sq = type.getDimSize(2), sk = type.getDimSize(3);
  Value scores = generic.getDpsInputs()[1];
  std::optional<double> fill = raise::getSplatValue(generic.getDpsInputs()[2]);
  DenseIntElementsAttr condition;
  if (type.hasStaticShape()) {
    condition = dyn_cast_or_null<DenseIntElementsAttr>(
        getLeadingBroadcastConstant(generic.getDpsInputs()[0], sq, sk));
  } else {
    // A dynamic sequence: a causal window of a constant buffer; the buffer
    // itself must be causal (and square, for the window to stay aligned).
    auto [buffer, rows, cols] =
        getCausalWindowConstant(generic.getDpsInputs()[0]);
    condition = dyn_cast_or_null<DenseIntElementsAttr>(buffer);
    sq = rows;
    sk = cols;
    if (rows != cols)
      return Value();
  }
  if (scores.getType() != type || !fill || !isHidingValue(*fill) ||
      !condition || !condition.getElementType().isInteger(1))
    return Value();
  int64_t index = 0;
  for (bool visible : condition.getValues<bool>())
    if (visible != isCausallyVisible(index++, sq, sk))
      return Value();
  return scores;
}

/// The single block op of an all-parallel, identity-mapped linalg.generic
/// defining `v` with `inputs` inputs, if its body is that one op yielded.
static Operation *matchElementwiseBody(Value v, unsigned inputs) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumDpsInputs() != inputs || generic->getNumResults() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !hasIdentityMaps(generic))
    return nullptr;
  Block &body = generic.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()) ||
      body.getTerminator()->getOperand(0) != body.front().getResult(0))
    return nullptr;
  return &body.front();
}

/// If `v` is Where(IsNaN(p), 0, p) as imported (torch's decomposition of
/// scaled_dot_product_attention writes it after the softmax, so that a row
/// whose keys are all masked gives zeros): p, with the two generics added to
/// `ops`. attn.sdpa gives such a row zeros too, so the guard folds into it.
static Value peelNanGuard(Value v, SmallVectorImpl<Operation *> &ops) {
  auto select = dyn_cast_or_null<arith::SelectOp>(matchElementwiseBody(v, 3));
  if (!select)
    return Value();
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  Block &body = generic.getRegion().front();
  if (select.getCondition() != body.getArgument(0) ||
      select.getTrueValue() != body.getArgument(1) ||
      select.getFalseValue() != body.getArgument(2))
    return Value();
  Value isNan = generic.getDpsInputs()[0];
  Value zero = generic.getDpsInputs()[1];
  Value probs = generic.getDpsInputs()[2];
  std::optional<double> fill = raise::getSplatValue(zero);
  if (!fill || *fill != 0.0 || probs.getType() != v.getType())
    return Value();
  auto cmp = dyn_cast_or_null<arith::CmpFOp>(matchElementwiseBody(isNan, 1));
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::UNO)
    return Value();
  auto nanGeneric = isNan.getDefiningOp<linalg::GenericOp>();
  Value arg = nanGeneric.getRegion().front().getArgument(0);
  if (cmp.getLhs() != arg || cmp.getRhs() != arg ||
      nanGeneric.getDpsInputs()[0] != probs || !isNan.hasOneUse())
    return Value();
  // p feeds only the guard.
  for (Operation *user : probs.getUsers())
    if (user != generic && user != nanGeneric)
      return Value();
  ops.push_back(generic);
  ops.push_back(nanGeneric);
  return probs;
}

/// If `keyT` ([B, H, D, Sk]) is a transpose of the keys: the keys' source and
/// the permutation that takes it to [B, H, Sk, D]. Two forms: a 4-D
/// linalg.transpose, or (torch's SDPA decomposition as imported) the [B*H,
/// Sk, D] collapse of [B, H, Sk, D] keys transposed to [B*H, D, Sk] and
/// expanded back.
static bool matchKeyTranspose(Value keyT, Value &key,
                              SmallVectorImpl<int64_t> &perm) {
  if (auto transpose = keyT.getDefiningOp<linalg::TransposeOp>()) {
    if (!transpose.hasPureTensorSemantics() ||
        transpose.getPermutation().size() != 4)
      return false;
    perm.assign(transpose.getPermutation().begin(),
                transpose.getPermutation().end());
    std::swap(perm[2], perm[3]);
    key = transpose.getInput();
    return true;
  }
  auto leadingPair = [](ArrayRef<ReassociationIndices> groups) {
    return groups.size() == 3 && groups[0] == ReassociationIndices{0, 1} &&
           groups[1] == ReassociationIndices{2} &&
           groups[2] == ReassociationIndices{3};
  };
  auto expand = keyT.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !leadingPair(expand.getReassociationIndices()))
    return false;
  auto transpose = expand.getSrc().getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      !llvm::equal(transpose.getPermutation(), ArrayRef<int64_t>{0, 2, 1}))
    return false;
  auto collapse = transpose.getInput().getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !leadingPair(collapse.getReassociationIndices()))
    return false;
  // The heads split back out must be the heads collapsed.
  auto srcType = cast<RankedTensorType>(collapse.getSrc().getType());
  auto ktType = cast<RankedTensorType>(keyT.getType());
  if (srcType.isDynamicDim(1) || srcType.getDimSize(1) != ktType.getDimSize(1))
    return false;
  key = collapse.getSrc();
  perm.assign({0, 1, 2, 3});
  return true;
}

/// `mask` ([B, H, Sq, Sk]) as an attn.sdpa bias: the broadcast's input with
/// its broadcast dimensions as unit dimensions, or `mask` itself.
static Value buildBias(PatternRewriter &rewriter, Location loc, Value mask) {
  auto broadcast = mask.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || !broadcast.hasPureTensorSemantics())
    return mask;
  auto maskType = cast<RankedTensorType>(mask.getType());
  Value input = broadcast.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(maskType.getShape());
  // The kept dimensions have the input's (run-time) sizes.
  SmallVector<OpFoldResult> inputSizes =
      tensor::getMixedSizes(rewriter, loc, input);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0, next = 0; d < maskType.getRank(); ++d) {
    bool added = llvm::is_contained(broadcast.getDimensions(), d);
    if (added)
      shape[d] = 1;
    if (!added && next >= inputType.getRank())
      return mask;
    sizes.push_back(added ? OpFoldResult(rewriter.getIndexAttr(1))
                          : inputSizes[next++]);
  }
  auto biasType = RankedTensorType::get(shape, maskType.getElementType());
  if (inputType.getRank() == 0)
    return tensor::ExpandShapeOp::create(rewriter, loc, biasType, input,
                                         SmallVector<ReassociationIndices>{});
  // Each input dimension with the unit dimensions before it (the last one
  // also with those after it).
  SmallVector<ReassociationIndices> reassociation;
  ReassociationIndices group;
  for (int64_t d = 0; d < maskType.getRank(); ++d) {
    group.push_back(d);
    if (!llvm::is_contained(broadcast.getDimensions(), d)) {
      reassociation.push_back(group);
      group.clear();
    }
  }
  if (reassociation.size() != static_cast<size_t>(inputType.getRank()))
    return mask;
  reassociation.back().append(group.begin(), group.end());
  return tensor::ExpandShapeOp::create(rewriter, loc, biasType, input,
                                       reassociation, sizes);
}

namespace {

/// softmax_last(scale(Q K^T) [+ M]) V on [B, H, S, D] tensors as imported
/// (batch matmuls between collapse/expand of the leading dims), rooted at
/// the final expand_shape -> attn.sdpa.
struct RaiseImportedAttention : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp root,
                                PatternRewriter &rewriter) const override {
    SmallVector<Operation *> ops;
    auto pv = matchCollapsedBatchMatmul(root.getResult(), ops);
    if (!pv)
      return failure();
    ops.erase(ops.begin()); // The root, replaced below.
    auto [probs, value] = *pv;
    // torch's SDPA decomposition: softmax, then zeros for NaN rows.
    bool guarded = false;
    if (!probs.hasOneUse())
      return rewriter.notifyMatchFailure(root, "probabilities have other uses");
    if (Value unguarded = peelNanGuard(probs, ops)) {
      probs = unguarded;
      guarded = true;
    }
    Value logits = matchLastDimSoftmax(probs);
    if (!logits || (!guarded && !probs.hasOneUse()) || !logits.hasOneUse())
      return rewriter.notifyMatchFailure(
          root, "not a single-use last-dimension softmax times V");
    ops.push_back(probs.getDefiningOp());

    // From the softmax back to Q K^T: constant scales, at most one additive
    // mask and at most one causal Where. A scale outside the mask or the
    // Where would scale the mask or the fill value too, so these must come
    // after the scale.
    double scale = 1.0;
    Value mask;
    bool causal = false;
    std::optional<std::pair<Value, Value>> qk;
    // Set when the product is matched in the [B*H, Sq, Sk] domain: qk then
    // holds the keys, not their transpose.
    std::optional<HeadsBiasAdd> headsBias;
    Value v = logits;
    while (true) {
      v = peelScales(v, scale, ops);
      if ((qk = matchCollapsedBatchMatmul(v, ops)))
        break;
      if ((headsBias = matchHeadsBiasAdd(v))) {
        // A scale outside the add would scale the bias too.
        if (scale != 1.0)
          return rewriter.notifyMatchFailure(root, "scaled score bias");
        ops.append({headsBias->expand, headsBias->add});
        Value product = peelScales(headsBias->scores, scale, ops);
        qk = matchHeadsBatchMatmul(product, headsBias->expand, ops);
        break;
      }
      if (Value scores = matchCausalSelect(v);
          scores && !causal && scale == 1.0 && scores.hasOneUse()) {
        ops.push_back(v.getDefiningOp());
        causal = true;
        v = scores;
        continue;
      }
      auto add = raise::matchBinary<linalg::AddOp>(v);
      if (!add || mask || scale != 1.0)
        return rewriter.notifyMatchFailure(root, "no Q K^T before softmax");
      // The scores are the operand that leads to the product.
      auto leadsToScores = [](Value operand) {
        double ignored = 1.0;
        SmallVector<Operation *> scratch;
        Value w = peelScales(operand, ignored, scratch);
        if (Value s = matchCausalSelect(w))
          w = peelScales(s, ignored, scratch);
        return matchCollapsedBatchMatmul(w, scratch).has_value() ||
               matchHeadsBiasAdd(w).has_value();
      };
      auto [lhs, rhs] = *add;
      if (leadsToScores(lhs) == leadsToScores(rhs))
        return rewriter.notifyMatchFailure(root, "no Q K^T before softmax");
      Value scores = leadsToScores(lhs) ? lhs : rhs;
      if (!scores.hasOneUse())
        return rewriter.notifyMatchFailure(root, "scores have other uses");
      ops.push_back(v.getDefiningOp());
      mask = scores == lhs ? rhs : lhs;
      v = scores;
    }

    if (!qk)
      return rewriter.notifyMatchFailure(root, "no Q K^T before softmax");
    // Scales of Q and of K^T (exporters may split 1/sqrt(d) between them).
    Value query = peelScales(qk->first, scale, ops);
    Value key;
    SmallVector<int64_t> keyPerm;
    if (headsBias) {
      key = qk->second;
      keyPerm.assign({0, 1, 2, 3});
    } else if (!matchKeyTranspose(peelScales(qk->second, scale, ops), key,
                                  keyPerm)) {
      return rewriter.notifyMatchFailure(root, "K^T is not a transpose");
    }

    auto resultType = root.getResultType();
    Type elementType = resultType.getElementType();
    auto qType = cast<RankedTensorType>(query.getType());
    auto vType = cast<RankedTensorType>(value.getType());
    auto kType = cast<RankedTensorType>(key.getType());
    // Heads and head widths static; batch and sequence may be dynamic, with
    // sizes that agree in every run.
    if (!isa<FloatType>(elementType) || qType.getRank() != 4 ||
        vType.getRank() != 4 || kType.getRank() != 4 || qType.isDynamicDim(1) ||
        qType.isDynamicDim(3) || vType.isDynamicDim(3) ||
        qType.getElementType() != elementType ||
        vType.getElementType() != elementType ||
        kType.getElementType() != elementType || !std::isfinite(scale))
      return rewriter.notifyMatchFailure(root, "not one float type");
    // Key dimension `d` of [B, H, Sk, D] in the key's own layout.
    auto keyDim = [&](int64_t d) { return keyPerm[d]; };
    int64_t sq = qType.getDimSize(2), sk = kType.getDimSize(keyDim(2));
    if (!raise::sameDim(value, 2, key, keyDim(2)) ||
        !raise::sameDim(query, 0, value, 0) ||
        !raise::sameDim(query, 1, value, 1) ||
        !raise::sameDim(query, 0, key, keyDim(0)) ||
        !raise::sameDim(query, 1, key, keyDim(1)) ||
        !raise::sameDim(query, 3, key, keyDim(3)))
      return rewriter.notifyMatchFailure(root, "not attention shapes");

    if (mask) {
      if (!raise::sameDim(mask, 0, query, 0) ||
          !raise::sameDim(mask, 1, query, 1) ||
          !raise::sameDim(mask, 2, query, 2) ||
          !raise::sameDim(mask, 3, key, keyDim(2)))
        return rewriter.notifyMatchFailure(root, "mask shape");
      // A causal mask added after a causal Where adds nothing new.
      if (!ShapedType::isDynamic(sq) && !ShapedType::isDynamic(sk) &&
          isAdditiveCausalMask(mask, sq, sk)) {
        causal = true;
        mask = Value();
      }
    }

    Location loc = root.getLoc();
    if (!llvm::equal(keyPerm, llvm::seq<int64_t>(0, 4))) {
      SmallVector<OpFoldResult> sizes =
                                    tensor::getMixedSizes(rewriter, loc, key),
                                shape;
      for (int64_t d : keyPerm)
        shape.push_back(sizes[d]);
      Value init = tensor::EmptyOp::create(rewriter, loc, shape, elementType);
      key = linalg::TransposeOp::create(rewriter, loc, key, init, keyPerm)
                ->getResult(0);
    }
    Value bias = mask ? buildBias(rewriter, loc, mask) : Value();
    if (headsBias) {
      Value scoreBias = buildHeadsBias(rewriter, loc, headsBias->bias,
                                       headsBias->expand.getMixedOutputShape());
      bias = bias ? addBiases(rewriter, loc, bias, scoreBias) : scoreBias;
    }
    Value sdpa =
        SdpaOp::create(rewriter, loc, resultType, query, key, value, bias,
                       /*kv_lengths=*/Value(), /*query_positions=*/Value(),
                       /*score_weights=*/ValueRange{}, ScoreFunction::dot,
                       rewriter.getF64FloatAttr(scale), causal,
                       /*window=*/IntegerAttr());
    rewriter.replaceOp(root, sdpa);
    // Uses run from later to earlier in `ops` except for the Q / K^T scale
    // chains; erase whatever became dead, users first.
    bool erased = true;
    while (erased) {
      erased = false;
      for (Operation *&op : ops)
        if (op && op->use_empty()) {
          rewriter.eraseOp(op);
          op = nullptr;
          erased = true;
        }
    }
    return success();
  }
};

} // namespace

/// If `v` ([B, H, S, D]) repeats each head of a [B, Hkv, S, D] value R =
/// H / Hkv times, as repeat_kv exports it (Expand to [B, Hkv, R, S, D] and
/// Reshape merging Hkv and R, so head h reads kv head h / R): that value
/// (unit reshapes stripped) and R.
static std::optional<std::pair<Value, int64_t>> matchRepeatedHeads(Value v) {
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getSrcType().getRank() != 5)
    return std::nullopt;
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  if (groups != SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}})
    return std::nullopt;
  auto broadcast = collapse.getSrc().getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || !broadcast.hasPureTensorSemantics() ||
      broadcast.getDimensions() != ArrayRef<int64_t>{2})
    return std::nullopt;
  int64_t repeats = collapse.getSrcType().getDimSize(2);
  Value kv = raise::stripUnitReshapes(broadcast.getInput());
  auto type = dyn_cast<RankedTensorType>(kv.getType());
  if (ShapedType::isDynamic(repeats) || !type || type.getRank() != 4 ||
      type.isDynamicDim(1) ||
      type.getDimSize(1) != collapse.getSrcType().getDimSize(1))
    return std::nullopt;
  return std::make_pair(kv, repeats);
}

/// If `v` is the additive causal mask after a past as transformers' LLaMA
/// builds it (`_update_causal_mask`), [Sq, Sk] with Sk = P + Sq:
///
///   fill(min) [triu(., 1)] * float(range(0, Sk)[j] > range(P, P + Sq)[i])
///
/// i.e. a hiding value where key j > P + i and zero elsewhere: attn.sdpa's
/// bottom-right aligned causal mask. The triu (exported for Sq != 1) hides
/// j > i, which the comparison implies.
static bool isCausalMaskAfterPast(Value v) {
  auto product = raise::matchBinary<linalg::MulOp>(v);
  if (!product)
    return false;
  // The hiding factor: a splat, or triu(splat, k <= 1) of one.
  auto isHidingFactor = [](Value f) {
    if (std::optional<double> splat = raise::getSplatValue(f))
      return isHidingValue(*splat);
    auto triu = f.getDefiningOp<linalg::GenericOp>();
    if (!triu || triu.getNumDpsInputs() != 1 || !hasIdentityMaps(triu) ||
        triu.getNumLoops() != 2 || triu.getNumParallelLoops() != 2)
      return false;
    std::optional<double> splat = raise::getSplatValue(triu.getDpsInputs()[0]);
    Block &body = triu.getRegion().front();
    auto select =
        body.getTerminator()->getOperand(0).getDefiningOp<arith::SelectOp>();
    if (!splat || !isHidingValue(*splat) || !select ||
        select.getTrueValue() != body.getArgument(0) ||
        !matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
      return false;
    // (j - i) >= k with k <= 1, or > k with k <= 0.
    auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
    auto diff = cmp ? cmp.getLhs().getDefiningOp<arith::SubIOp>() : nullptr;
    APInt k;
    if (!diff || !matchPattern(cmp.getRhs(), m_ConstantInt(&k)))
      return false;
    auto index = [](Value x) {
      auto op = x.getDefiningOp<linalg::IndexOp>();
      return op ? static_cast<int64_t>(op.getDim()) : int64_t(-1);
    };
    if (index(diff.getLhs()) != 1 || index(diff.getRhs()) != 0)
      return false;
    return (cmp.getPredicate() == arith::CmpIPredicate::sge &&
            k.getSExtValue() <= 1) ||
           (cmp.getPredicate() == arith::CmpIPredicate::sgt &&
            k.getSExtValue() <= 0);
  };
  // The comparison as 0 / 1: float(keys > queries) on [Sq, Sk].
  auto isAfterPastComparison = [](Value f) {
    auto toFloat = f.getDefiningOp<linalg::GenericOp>();
    if (!toFloat || toFloat.getNumDpsInputs() != 1 || !hasIdentityMaps(toFloat))
      return false;
    Block &body = toFloat.getRegion().front();
    auto cast =
        body.getTerminator()->getOperand(0).getDefiningOp<arith::UIToFPOp>();
    if (!cast || cast.getIn() != body.getArgument(0))
      return false;
    auto compare = toFloat.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
    if (!compare || compare.getNumDpsInputs() != 2 || !hasIdentityMaps(compare))
      return false;
    Block &cmpBody = compare.getRegion().front();
    auto cmp =
        cmpBody.getTerminator()->getOperand(0).getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      return false;
    Value keys, queries;
    if (cmp.getPredicate() == arith::CmpIPredicate::sgt &&
        cmp.getLhs() == cmpBody.getArgument(0) &&
        cmp.getRhs() == cmpBody.getArgument(1)) {
      keys = compare.getDpsInputs()[0];
      queries = compare.getDpsInputs()[1];
    } else if (cmp.getPredicate() == arith::CmpIPredicate::slt &&
               cmp.getLhs() == cmpBody.getArgument(0) &&
               cmp.getRhs() == cmpBody.getArgument(1)) {
      keys = compare.getDpsInputs()[1];
      queries = compare.getDpsInputs()[0];
    } else {
      return false;
    }
    // keys: range(0, Sk) along dimension 1; queries: range(P, P + Sq) along
    // dimension 0.
    auto rangeAlong = [](Value x, int64_t kept) -> Value {
      auto b = x.getDefiningOp<linalg::BroadcastOp>();
      if (!b || !b.hasPureTensorSemantics() ||
          b.getDimensions() != ArrayRef<int64_t>{1 - kept})
        return Value();
      return raise::stripUnitReshapes(b.getInput());
    };
    Value keyRange = rangeAlong(keys, 1), queryRange = rangeAlong(queries, 0);
    if (!keyRange || !queryRange)
      return false;
    std::optional<OpFoldResult> keyStart = raise::matchRangeStart(keyRange);
    std::optional<OpFoldResult> past = raise::matchRangeStart(queryRange);
    if (!keyStart || !isConstantIntValue(*keyStart, 0) || !past)
      return false;
    // Sk = P + Sq: the key range's length is a sum of the past (the query
    // range's start, an index cast) and the query range's length.
    auto length = [](Value range) -> OpFoldResult {
      auto empty = range.getDefiningOp<linalg::GenericOp>()
                       .getDpsInits()[0]
                       .getDefiningOp<tensor::EmptyOp>();
      if (!empty)
        return OpFoldResult();
      return empty.getMixedSizes()[0];
    };
    OpFoldResult sk = length(keyRange), sq = length(queryRange);
    Value pastIndex = dyn_cast<Value>(*past);
    if (auto cast =
            pastIndex ? pastIndex.getDefiningOp<arith::IndexCastOp>() : nullptr)
      pastIndex = cast.getIn();
    auto sum = dyn_cast_if_present<Value>(sk);
    auto add = sum ? sum.getDefiningOp<arith::AddIOp>() : nullptr;
    if (!pastIndex || !sq || !add)
      return false;
    return (raise::sameSize(add.getLhs(), pastIndex) &&
            raise::sameSize(add.getRhs(), sq)) ||
           (raise::sameSize(add.getRhs(), pastIndex) &&
            raise::sameSize(add.getLhs(), sq));
  };
  auto [lhs, rhs] = *product;
  return (isHidingFactor(lhs) && isAfterPastComparison(rhs)) ||
         (isHidingFactor(rhs) && isAfterPastComparison(lhs));
}

namespace {

/// attn.sdpa over keys and values whose heads are repeated (grouped-query
/// attention as exported: repeat_kv) -> attn.sdpa over the kv heads, which
/// it reads per query-head group itself. The KV-cache binding then keeps
/// the caches at the kv heads.
struct FoldRepeatedKVHeads : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    auto key = matchRepeatedHeads(op.getKey());
    auto value = matchRepeatedHeads(op.getValue());
    if (!key || !value || key->second != value->second)
      return rewriter.notifyMatchFailure(op, "keys and values not repeated");
    rewriter.modifyOpInPlace(op, [&] {
      op.getKeyMutable().assign(key->first);
      op.getValueMutable().assign(value->first);
    });
    return success();
  }
};

/// attn.sdpa with the bias transformers' LLaMA builds from a causal mask
/// after a past C and an attention mask M (`_update_causal_mask`:
/// `C.masked_fill(C + M == 0, min)`, seen through unit reshapes and slices
/// at offset 0) -> causal attn.sdpa with the bias computed from M alone
/// (C replaced by zeros). Where C hides, causal hides; elsewhere C is zero,
/// so the bias is unchanged there. The bias then depends on the mask input
/// only, which the KV-cache binding drops.
struct RaiseCausalMaskedFill : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value bias = op.getBias();
    if (!bias || op.getCausal() || op.getWindow() || op.getKvLengths() ||
        op.getQueryPositions())
      return rewriter.notifyMatchFailure(op, "no plain bias");
    // The view chain from the filled mask to the bias.
    SmallVector<Operation *> views;
    Value v = bias;
    while (true) {
      Value inner = raise::stripUnitReshapes(v);
      if (inner != v) {
        for (Value w = v; w != inner; w = w.getDefiningOp()->getOperand(0))
          views.push_back(w.getDefiningOp());
        v = inner;
        continue;
      }
      auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
      if (!slice || !slice.hasUnitStride() || slice.getDroppedDims().any() ||
          !llvm::all_of(slice.getMixedOffsets(), [](OpFoldResult o) {
            return isConstantIntValue(o, 0);
          }))
        break;
      views.push_back(slice);
      v = slice.getSource();
    }
    // select(C + M == 0, fill, C).
    auto fill = v.getDefiningOp<linalg::GenericOp>();
    if (!fill || fill.getNumDpsInputs() != 3 || !hasIdentityMaps(fill) ||
        !llvm::hasSingleElement(fill.getRegion().front().without_terminator()))
      return rewriter.notifyMatchFailure(op, "no masked fill");
    Block &body = fill.getRegion().front();
    auto select = dyn_cast<arith::SelectOp>(body.front());
    if (!select || body.getTerminator()->getOperand(0) != select ||
        select.getCondition() != body.getArgument(0) ||
        select.getTrueValue() != body.getArgument(1) ||
        select.getFalseValue() != body.getArgument(2))
      return rewriter.notifyMatchFailure(op, "no masked fill");
    Value causalMask = fill.getDpsInputs()[2];
    std::optional<double> filled = raise::getSplatValue(fill.getDpsInputs()[1]);
    auto equal = fill.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
    if (!filled || !isHidingValue(*filled) || !equal ||
        equal.getNumDpsInputs() != 2 || !hasIdentityMaps(equal) ||
        !llvm::hasSingleElement(equal.getRegion().front().without_terminator()))
      return rewriter.notifyMatchFailure(op, "no masked fill");
    Block &eqBody = equal.getRegion().front();
    auto cmp = dyn_cast<arith::CmpFOp>(eqBody.front());
    std::optional<double> zero = raise::getSplatValue(equal.getDpsInputs()[1]);
    if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OEQ ||
        cmp.getLhs() != eqBody.getArgument(0) ||
        cmp.getRhs() != eqBody.getArgument(1) || !zero || *zero != 0.0)
      return rewriter.notifyMatchFailure(op, "no comparison with zero");
    auto sum = raise::matchBinary<linalg::AddOp>(equal.getDpsInputs()[0]);
    if (!sum || (sum->first != causalMask && sum->second != causalMask))
      return rewriter.notifyMatchFailure(op, "not C + M");
    Value causal = stripLeadingBroadcast(causalMask);
    if (!causal || cast<RankedTensorType>(causal.getType()).getRank() != 2 ||
        !isCausalMaskAfterPast(causal))
      return rewriter.notifyMatchFailure(op, "C is not causal after a past");
    // The mask must span the sdpa's queries and keys exactly.
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 4 ||
        !raise::sameDim(causal, 0, op.getQuery(), 2) ||
        !raise::sameDim(causal, 1, op.getKey(), 2) ||
        !raise::sameDim(bias, 2, op.getQuery(), 2) ||
        !raise::sameDim(bias, 3, op.getKey(), 2))
      return rewriter.notifyMatchFailure(op, "mask shape");

    // The chain again with C = 0.
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    auto maskType = cast<RankedTensorType>(causalMask.getType());
    // Zeros shaped by the fill's init (of C's type), not by C: nothing of C
    // (the past length) stays alive.
    Value empty = fill.getDpsInits()[0];
    if (empty.getType() != causalMask.getType())
      return rewriter.notifyMatchFailure(op, "masked fill of another type");
    Value zeroScalar = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(maskType.getElementType()));
    Value zeros =
        linalg::FillOp::create(rewriter, loc, zeroScalar, empty).result();
    IRMapping mapping;
    mapping.map(causalMask, zeros);
    for (Operation *chainOp : {equal.getDpsInputs()[0].getDefiningOp(),
                               equal.getOperation(), fill.getOperation()})
      rewriter.clone(*chainOp, mapping);
    for (Operation *view : llvm::reverse(views))
      rewriter.clone(*view, mapping);
    Value newBias = mapping.lookup(bias);
    rewriter.modifyOpInPlace(op, [&] {
      op.getBiasMutable().assign(newBias);
      op.setCausal(true);
    });
    return success();
  }
};

} // namespace

namespace {

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
               RaiseAttentionPattern<linalg::MatmulOp>, RaiseImportedAttention,
               FoldRepeatedKVHeads, RaiseCausalMaskedFill>(
      patterns.getContext());
}
