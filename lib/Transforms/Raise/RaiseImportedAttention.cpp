//===- RaiseImportedAttention.cpp - attention as ONNX imports it ----------===//
//
// Imported ONNX graphs compute attention on [B, H, S, D] tensors: each
// batched MatMul is a linalg.batch_matmul between tensor.collapse_shape /
// tensor.expand_shape of the leading dims, K^T a linalg.transpose of the
// head-split key, the scale a multiplication or division by a broadcast
// constant (of the scores, or of Q and K^T), the mask a broadcast additive
// tensor. These become one attn.sdpa on the 4-D tensors; a constant
// lower-triangular additive mask (0 / -inf or <= -1e4) becomes `causal`, any
// other mask the additive `bias` (broadcast dimensions kept as unit
// dimensions, which attn.sdpa broadcasts).
//
//===----------------------------------------------------------------------===//

#include "AttentionPatterns.h"
#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using raise::hasIdentityMaps;
using raise::isHidingValue;
using raise::matchBroadcastScale;
using raise::matchLastDimSoftmax;
using raise::Scaled;
using raise::stripLeadingBroadcast;

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

void mlir::attn::raise::populateRaiseImportedAttentionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RaiseImportedAttention>(patterns.getContext());
}
