//===- RaiseCausalMaskedFill.cpp - LLaMA's causal mask to causal ----------===//
//
// transformers' LLaMA builds the additive mask of attention after a past from
// a causal mask and the attention mask; the causal part becomes attn.sdpa's
// `causal`, so that the bias left depends on the attention mask only.
//
//===----------------------------------------------------------------------===//

#include "AttentionPatterns.h"
#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

using namespace mlir;
using namespace mlir::attn;
using raise::hasIdentityMaps;
using raise::isHidingValue;
using raise::stripLeadingBroadcast;

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

void mlir::attn::raise::populateRaiseCausalMaskedFillPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RaiseCausalMaskedFill>(patterns.getContext());
}
