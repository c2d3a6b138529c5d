//===- Attention.cpp - attn.sdpa to linalg --------------------------------===//

#include "Conversion/AttnToLinalg/Patterns.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::attn;

namespace {

// Loop dims of the score space: b n g i j, plus one reduction dim.
constexpr unsigned B = 0, N = 1, G = 2, I = 3, J = 4, R = 5;

/// How one masked score is computed from the raw score and the other inputs
/// of the masking generic (indices into its arguments, -1 where absent).
struct ScoreMask {
  double factor = 1.0;
  int qNormIdx = -1, kNormIdx = -1, biasIdx = -1, lenIdx = -1, startIdx = -1;
  bool causal = false;
  std::optional<int64_t> window;
  /// Key position of query row 0 where it is a run-time value (Sk - Sq),
  /// else alignOffset.
  Value alignValue;
  int64_t alignOffset = 0;

  Value build(OpBuilder &b, Location l, ValueRange args) const {
    Value s = args[0];
    if (qNormIdx >= 0) {
      Value eps = LinalgBuilder::constF32(b, l, 1e-6);
      Value nq = arith::MaximumFOp::create(
          b, l, math::SqrtOp::create(b, l, args[qNormIdx]), eps);
      Value nk = arith::MaximumFOp::create(
          b, l, math::SqrtOp::create(b, l, args[kNormIdx]), eps);
      s = arith::DivFOp::create(b, l, s, mulF(b, l, nq, nk));
    }
    s = mulF(b, l, s, LinalgBuilder::constF32(b, l, factor));
    if (biasIdx >= 0)
      s = addF(b, l, s, args[biasIdx]);
    Value visible;
    auto andWith = [&](Value cond) {
      visible = visible ? arith::AndIOp::create(b, l, visible, cond).getResult()
                        : cond;
    };
    if (causal || window || lenIdx >= 0) {
      Value i = linalg::IndexOp::create(b, l, I);
      Value j = linalg::IndexOp::create(b, l, J);
      Value align = startIdx >= 0 ? arith::IndexCastOp::create(
                                        b, l, b.getIndexType(), args[startIdx])
                                        .getResult()
                    : alignValue ? alignValue
                                 : LinalgBuilder::constIndex(b, l, alignOffset);
      Value p = arith::AddIOp::create(b, l, i, align);
      if (causal)
        andWith(arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, j, p));
      if (window) {
        Value w = LinalgBuilder::constIndex(b, l, *window);
        Value diff = arith::SubIOp::create(b, l, p, j);
        Value negDiff = arith::SubIOp::create(b, l, j, p);
        andWith(
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, diff, w));
        andWith(
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, negDiff, w));
      }
      if (lenIdx >= 0) {
        Value len =
            arith::IndexCastOp::create(b, l, b.getIndexType(), args[lenIdx]);
        andWith(arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, j, len));
      }
    }
    if (!visible)
      return s;
    Value negInf =
        LinalgBuilder::constF32(b, l, -std::numeric_limits<double>::infinity());
    return arith::SelectOp::create(b, l, visible, s, negInf);
  }
};

/// Lowers attn.sdpa on a grouped 5-D layout [B, Hkv, G, Sq, *] so that a
/// query head h = n * G + g reads kv head n without a floordiv in any
/// indexing map (GQA/MQA come for free; MHA is G = 1). The steps: the
/// grouped operands in f32, the raw scores of the op's score function, the
/// scaled and masked scores, then softmax times V.
class SdpaLowering {
public:
  SdpaLowering(SdpaOp op, LinalgBuilder &lb, PatternRewriter &rewriter)
      : op(op), lb(lb), rewriter(rewriter), loc(op.getLoc()),
        shape(op.getSdpaShape()) {}

  FailureOr<Value> lower();

private:
  /// The operands in f32, Q grouped to [B, Hkv, G, Sq, Dq], and the run-time
  /// sizes of the score space.
  void prepareOperands();
  /// The raw scores [B, Hkv, G, Sq, Sk] of the op's score function; for
  /// cosine also the squared norms of the Q and K rows.
  Value rawScores(Value &qNorm, Value &kNorm);
  /// v_a . tanh(Wq q + Wk k), W = [Wq | Wk] split by columns.
  Value additiveScores();
  /// The raw scores scaled, with the bias added and the generated masks
  /// (causal, window, kv lengths) applied: masked scores are -inf.
  Value maskedScores(Value raw, Value qNorm, Value kNorm);
  /// softmax(masked) V over the keys, [B, Hq, Sq, Dv]; rows that see no key
  /// give 0.
  Value attend(Value masked);

  OpFoldResult index(int64_t size) { return rewriter.getIndexAttr(size); }
  /// A block of query or key rows: [b, n, g, i, width] or [b, n, j, width].
  SmallVector<OpFoldResult> rowsOf(OpFoldResult seq, int64_t width,
                                   bool grouped);
  /// A contraction of Q-side rows with K-side rows over their last
  /// dimension into a zero-filled score tensor.
  Value contract(Value lhs, Value rhs, BodyFn body);
  static Value dotBody(OpBuilder &b, Location l, ValueRange args) {
    return addF(b, l, args[2], mulF(b, l, args[0], args[1]));
  }

  SdpaOp op;
  LinalgBuilder &lb;
  PatternRewriter &rewriter;
  Location loc;
  SdpaShape shape;
  Value q, k, v;
  OpFoldResult batchSize, sqSize, skSize;
  SmallVector<OpFoldResult> scoreShape;
};

} // namespace

FailureOr<Value> SdpaLowering::lower() {
  // Batch and sequence lengths may be dynamic (sizes read from the operands
  // at run time); heads and head dims are static (checked by the pass).
  if (ShapedType::isDynamic(shape.hkv) || shape.group <= 0 ||
      ShapedType::isDynamic(shape.dq) || ShapedType::isDynamic(shape.dk) ||
      ShapedType::isDynamic(shape.dv))
    return rewriter.notifyMatchFailure(op, "dynamic heads or head dims");
  prepareOperands();
  Value qNorm, kNorm; // cosine only
  Value raw = rawScores(qNorm, kNorm);
  Value masked = maskedScores(raw, qNorm, kNorm);
  return attend(masked);
}

void SdpaLowering::prepareOperands() {
  q = lb.toF32(op.getQuery());
  k = lb.toF32(op.getKey());
  v = lb.toF32(op.getValue());
  SmallVector<OpFoldResult> qSizes = lb.sizes(q), kSizes = lb.sizes(k);
  batchSize = qSizes[0];
  sqSize = qSizes[2];
  skSize = kSizes[2];
  auto groupedQType = RankedTensorType::get(
      {shape.batch, shape.hkv, shape.group, shape.sq, shape.dq}, lb.f32());
  SmallVector<ReassociationIndices> qGroups = {{0}, {1, 2}, {3}, {4}};
  if (groupedQType.hasStaticShape())
    q = tensor::ExpandShapeOp::create(rewriter, loc, groupedQType, q, qGroups);
  else
    q = tensor::ExpandShapeOp::create(
        rewriter, loc, groupedQType, q, qGroups,
        ArrayRef<OpFoldResult>{batchSize, index(shape.hkv), index(shape.group),
                               sqSize, index(shape.dq)});
  scoreShape = {batchSize, index(shape.hkv), index(shape.group), sqSize,
                skSize};
}

SmallVector<OpFoldResult> SdpaLowering::rowsOf(OpFoldResult seq, int64_t width,
                                               bool grouped) {
  SmallVector<OpFoldResult> sizes = {batchSize, index(shape.hkv)};
  if (grouped)
    sizes.push_back(index(shape.group));
  sizes.append({seq, index(width)});
  return sizes;
}

Value SdpaLowering::contract(Value lhs, Value rhs, BodyFn body) {
  return lb.generic({lhs, rhs}, lb.filled(scoreShape, 0.0),
                    {lb.dims(6, {B, N, G, I, R}), lb.dims(6, {B, N, J, R}),
                     lb.dims(6, {B, N, G, I, J})},
                    lb.iterators(R + 1, true), body);
}

Value SdpaLowering::rawScores(Value &qNorm, Value &kNorm) {
  switch (op.getScore()) {
  case ScoreFunction::dot:
  case ScoreFunction::scaled_dot:
    return contract(q, k, dotBody);
  case ScoreFunction::gaussian:
    return contract(
        q, k, [](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value diff = arith::SubFOp::create(b, l, args[0], args[1]);
          return addF(b, l, args[2], mulF(b, l, diff, diff));
        });
  case ScoreFunction::cosine: {
    Value raw = contract(q, k, dotBody);
    auto sq2 = [](OpBuilder &b, Location l, Value x, ValueRange) -> Value {
      return mulF(b, l, x, x);
    };
    auto add = [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
      return addF(b, l, acc, x);
    };
    qNorm = lb.reduceLast(q, 0.0, {}, sq2, add);
    kNorm = lb.reduceLast(k, 0.0, {}, sq2, add);
    return raw;
  }
  case ScoreFunction::general: {
    // qW[b,n,g,i,e] = sum_d q[b,n,g,i,d] W[d,e], then a plain dot with k.
    Value w = lb.toF32(op.getScoreWeights()[0]);
    Value qw =
        lb.generic({q, w}, lb.filled(rowsOf(sqSize, shape.dk, true), 0.0),
                   {lb.dims(6, {0, 1, 2, 3, 5}), lb.dims(6, {5, 4}),
                    lb.dims(6, {0, 1, 2, 3, 4})},
                   lb.iterators(6, true), dotBody);
    return contract(qw, k, dotBody);
  }
  case ScoreFunction::additive:
    return additiveScores();
  }
  llvm_unreachable("unknown score function");
}

Value SdpaLowering::additiveScores() {
  Value w = lb.toF32(op.getScoreWeights()[0]);
  Value va = lb.toF32(op.getScoreWeights()[1]);
  int64_t a = cast<RankedTensorType>(w.getType()).getDimSize(0);
  auto slice = [&](int64_t col, int64_t width) -> Value {
    return tensor::ExtractSliceOp::create(
        rewriter, loc, w,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                               rewriter.getIndexAttr(col)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(a),
                               rewriter.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                               rewriter.getIndexAttr(1)});
  };
  Value wq = slice(0, shape.dq), wk = slice(shape.dq, shape.dk);
  // pq[b,n,g,i,a] = sum_d q[..,d] wq[a,d]; pk[b,n,j,a] likewise.
  Value pq = lb.generic({q, wq}, lb.filled(rowsOf(sqSize, a, true), 0.0),
                        {lb.dims(6, {0, 1, 2, 3, 5}), lb.dims(6, {4, 5}),
                         lb.dims(6, {0, 1, 2, 3, 4})},
                        lb.iterators(6, true), dotBody);
  Value pk = lb.generic(
      {k, wk}, lb.filled(rowsOf(skSize, a, false), 0.0),
      {lb.dims(5, {0, 1, 2, 4}), lb.dims(5, {3, 4}), lb.dims(5, {0, 1, 2, 3})},
      lb.iterators(5, true), dotBody);
  return lb.generic({pq, pk, va}, lb.filled(scoreShape, 0.0),
                    {lb.dims(6, {B, N, G, I, R}), lb.dims(6, {B, N, J, R}),
                     lb.dims(6, {R}), lb.dims(6, {B, N, G, I, J})},
                    lb.iterators(R + 1, true),
                    [](OpBuilder &b, Location l, ValueRange args) -> Value {
                      Value t = math::TanhOp::create(
                          b, l, addF(b, l, args[0], args[1]));
                      return addF(b, l, args[3], mulF(b, l, args[2], t));
                    });
}

Value SdpaLowering::maskedScores(Value raw, Value qNorm, Value kNorm) {
  ScoreFunction score = op.getScore();
  double scale = op.getEffectiveScale();
  int64_t group = shape.group, sq = shape.sq, sk = shape.sk;
  // Scale, bias, generated masks: masked scores are -inf.
  ScoreMask mask;
  mask.factor = score == ScoreFunction::gaussian ? -0.5 * scale : scale;
  SmallVector<Value> inputs = {raw};
  SmallVector<AffineMap> maps = {lb.identity(5)};
  if (qNorm) {
    mask.qNormIdx = inputs.size();
    inputs.push_back(qNorm);
    maps.push_back(lb.dims(5, {B, N, G, I}));
    mask.kNormIdx = inputs.size();
    inputs.push_back(kNorm);
    maps.push_back(lb.dims(5, {B, N, J}));
  }
  if (Value bias = op.getBias()) {
    auto bType = cast<RankedTensorType>(bias.getType());
    mask.biasIdx = inputs.size();
    inputs.push_back(lb.toF32(bias));
    MLIRContext *ctx = rewriter.getContext();
    auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
    auto zero = getAffineConstantExpr(0, ctx);
    SmallVector<AffineExpr> exprs = {
        bType.getDimSize(0) == 1 ? zero : dim(B),
        bType.getDimSize(1) == 1 ? zero : dim(N) * group + dim(G),
        bType.getDimSize(2) == 1 ? zero : dim(I),
        bType.getDimSize(3) == 1 ? zero : dim(J)};
    maps.push_back(lb.map(5, exprs));
  }
  if (Value lengths = op.getKvLengths()) {
    mask.lenIdx = inputs.size();
    inputs.push_back(lengths);
    maps.push_back(lb.dims(5, {B}));
  }
  mask.causal = op.getCausal();
  if (op.getWindow() && *op.getWindow() != 0)
    mask.window = static_cast<int64_t>(*op.getWindow());
  bool generated = mask.causal || mask.window;
  // Query row i sits at key position i + query_positions[b] when the op
  // has them (each row aligned to its own start), else at i + Sk - Sq
  // (bottom-right alignment), a run-time value when either length is
  // dynamic.
  if (Value starts = op.getQueryPositions(); starts && generated) {
    mask.startIdx = inputs.size();
    inputs.push_back(starts);
    maps.push_back(lb.dims(5, {B}));
  }
  maps.push_back(lb.identity(5));
  // (With query positions the alignment is read per batch row in the body.)
  if (mask.startIdx < 0 && !ShapedType::isDynamic(sk) &&
      !ShapedType::isDynamic(sq))
    mask.alignOffset = sk - sq;
  else if (mask.startIdx < 0 && generated)
    mask.alignValue = arith::SubIOp::create(
        rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, skSize),
        getValueOrCreateConstantIndexOp(rewriter, loc, sqSize));
  return lb.generic(inputs, lb.empty(scoreShape, lb.f32()), maps,
                    lb.iterators(5),
                    [&](OpBuilder &b, Location l, ValueRange args) {
                      return mask.build(b, l, args);
                    });
}

Value SdpaLowering::attend(Value masked) {
  // Softmax over j without normalizing yet; rows with no visible key have
  // max = -inf and contribute exp = 0 everywhere, so their output is 0.
  Value rowMax = lb.maxLast(masked);
  auto expMasked = [](OpBuilder &b, Location l, Value x, Value max) -> Value {
    Value negInf =
        LinalgBuilder::constF32(b, l, -std::numeric_limits<double>::infinity());
    Value isMasked =
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, negInf);
    Value e = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, max));
    return arith::SelectOp::create(b, l, isMasked,
                                   LinalgBuilder::constF32(b, l, 0.0), e);
  };
  // exp(s - max) once per score (the PV product below must not recompute
  // it per output column).
  SmallVector<unsigned> rowDims = {B, N, G, I};
  Value probs = lb.generic(
      {masked, rowMax}, lb.empty(scoreShape, lb.f32()),
      {lb.identity(5), lb.dims(5, rowDims), lb.identity(5)}, lb.iterators(5),
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        return expMasked(b, l, args[0], args[1]);
      });
  Value rowSum = lb.reduceLast(
      probs, 0.0, {},
      [](OpBuilder &, Location, Value x, ValueRange) { return x; },
      [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
        return addF(b, l, acc, x);
      });
  // out[b,n,g,i,e] = sum_j p[b,n,g,i,j] v[b,n,j,e]; dims b n g i e j.
  SmallVector<IteratorType> pvIters = lb.iterators(6, true);
  Value unnormalized = lb.generic(
      {probs, v}, lb.filled(rowsOf(sqSize, shape.dv, true), 0.0),
      {lb.dims(6, {0, 1, 2, 3, 5}), lb.dims(6, {0, 1, 5, 4}),
       lb.dims(6, {0, 1, 2, 3, 4})},
      pvIters, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        return addF(b, l, args[2], mulF(b, l, args[0], args[1]));
      });
  SmallVector<IteratorType> outIters(5, IteratorType::parallel);
  Value out = lb.generic(
      {unnormalized, rowSum},
      lb.empty(rowsOf(sqSize, shape.dv, true), lb.f32()),
      {lb.identity(5), lb.dims(5, {0, 1, 2, 3}), lb.identity(5)}, outIters,
      [](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value zero = LinalgBuilder::constF32(b, l, 0.0);
        Value positive = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                               args[1], zero);
        Value div = arith::DivFOp::create(b, l, args[0], args[1]);
        return arith::SelectOp::create(b, l, positive, div, zero);
      });
  return tensor::CollapseShapeOp::create(
      rewriter, loc, out,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

static FailureOr<Value> lowerSdpa(SdpaOp op, LinalgBuilder &lb,
                                  PatternRewriter &rewriter) {
  return SdpaLowering(op, lb, rewriter).lower();
}

namespace {
/// attn.cache_write -> an scf.for over the batch inserting each sequence's
/// rows at its run-time position: O(T) work per sequence, and in place
/// when the cache is writable (a model state argument). The token count T
/// may be dynamic (a step that serves prefill and decode); the cache is
/// static (it is model state, allocated by the runtime).
struct CacheWriteLowering : OpRewritePattern<CacheWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CacheWriteOp op,
                                PatternRewriter &rewriter) const override {
    auto cacheType = op.getCache().getType();
    auto rowsType = op.getNewRows().getType();
    if (!cacheType.hasStaticShape() || rowsType.isDynamicDim(0) ||
        rowsType.isDynamicDim(1) || rowsType.isDynamicDim(3))
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    Location loc = op.getLoc();
    int64_t batch = cacheType.getDimSize(0), heads = cacheType.getDimSize(1),
            length = cacheType.getDimSize(2), dh = cacheType.getDimSize(3);
    Value positions = op.getPositions(), rows = op.getNewRows();
    auto c = [&](int64_t v) {
      return LinalgBuilder::constIndex(rewriter, loc, v);
    };
    OpFoldResult tokens =
        tensor::getMixedSize(rewriter, loc, op.getNewRows(), 2);
    std::optional<int64_t> staticTokens = getConstantIntValue(tokens);
    auto loop = scf::ForOp::create(
        rewriter, loc, c(0), c(batch), c(1), ValueRange{op.getCache()},
        [&](OpBuilder &b, Location l, Value bIdx, ValueRange iter) {
          Value pos = tensor::ExtractOp::create(b, l, positions, bIdx);
          pos = arith::IndexCastOp::create(b, l, b.getIndexType(), pos);
          pos = arith::MaxSIOp::create(b, l, pos,
                                       LinalgBuilder::constIndex(b, l, 0));
          // The last start that keeps all T rows inside the cache: L - T.
          Value lastStart =
              staticTokens
                  ? LinalgBuilder::constIndex(b, l, length - *staticTokens)
                  : arith::SubIOp::create(
                        b, l, LinalgBuilder::constIndex(b, l, length),
                        cast<Value>(tokens))
                        .getResult();
          pos = arith::MinSIOp::create(b, l, pos, lastStart);
          SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                             b.getIndexAttr(heads), tokens,
                                             b.getIndexAttr(dh)};
          SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
          SmallVector<OpFoldResult> from = {
              bIdx, b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0)};
          Value slice = tensor::ExtractSliceOp::create(
              b, l,
              RankedTensorType::get({1, heads, rowsType.getDimSize(2), dh},
                                    rowsType.getElementType()),
              rows, from, sizes, strides);
          SmallVector<OpFoldResult> to = {bIdx, b.getIndexAttr(0), pos,
                                          b.getIndexAttr(0)};
          Value updated = tensor::InsertSliceOp::create(b, l, slice, iter[0],
                                                        to, sizes, strides);
          scf::YieldOp::create(b, l, updated);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};
} // namespace

void mlir::attn::populateAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  addF32Lowering(patterns, lowerSdpa);
  patterns.add<CacheWriteLowering>(patterns.getContext());
}
