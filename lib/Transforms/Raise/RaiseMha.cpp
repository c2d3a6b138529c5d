//===- RaiseMha.cpp - projections + head split + attn.sdpa -> attn.mha ----===//
//
// An exported attention block is four attn.linear projections around one
// attn.sdpa, joined by reshapes and transposes that split the projected width
// into heads and merge them back. As attn.mha the block is one op that
// structured pruning can cut heads from and that attn-decompose-mha /
// attn-pack-qkv rebuild in the form the targets want.
//
// Exporters write the head split in many ways (batch-first or PyTorch's
// sequence-first nn.MultiheadAttention, one packed in_proj matmul sliced
// three ways, or three matmuls). Rather than match each spelling, the pattern
// follows every element of the attention's operands through the view ops
// (expand/collapse_shape, linalg.transpose, extract_slice) to the projection
// it reads, and raises only when each (batch, head, position, channel) reads
// column `offset + head * head_dim + channel` of a row that depends only on
// (batch, position), in batch-major or position-major order; the output side
// is checked the same way. The check enumerates the elements, so its cost is
// the size of the attention's operands, once, at compile time.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "RaiseMatchers.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEMHA
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Beyond this many elements per operand the index check is skipped (and
/// the attention stays attn.sdpa): 64 Mi elements take well under a second.
constexpr int64_t kMaxCheckedElements = int64_t(1) << 26;

/// Whether `op` is a view op the pattern follows: its result's elements are
/// elements of its single tensor source.
static Value viewSource(Operation *op) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return expand.getSrc();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return collapse.getSrc();
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.hasPureTensorSemantics() ? transpose.getInput() : Value();
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    // Static, unit strides, no rank reduction.
    if (slice.getSourceType().getRank() != slice.getType().getRank() ||
        !slice.hasUnitStride() ||
        llvm::any_of(slice.getStaticOffsets(), ShapedType::isDynamic))
      return Value();
    return slice.getSource();
  }
  return Value();
}

/// Maps `index`, an index of `op`'s result, to the index of its source;
/// dynamic sizes are those of `env` (checked by the caller to exist).
static void mapToSource(Operation *op, SmallVectorImpl<int64_t> &index,
                        raise::DimEnv &env) {
  SmallVector<int64_t> src;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    SmallVector<int64_t> shape = *env.shape(expand.getResult());
    for (const ReassociationIndices &group : expand.getReassociationIndices()) {
      int64_t linear = 0;
      for (int64_t d : group)
        linear = linear * shape[d] + index[d];
      src.push_back(linear);
    }
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    SmallVector<int64_t> shape = *env.shape(collapse.getSrc());
    for (auto [i, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      int64_t linear = index[i];
      SmallVector<int64_t> part(group.size());
      for (int64_t j = group.size() - 1; j >= 0; --j) {
        part[j] = linear % shape[group[j]];
        linear /= shape[group[j]];
      }
      src.append(part);
    }
  } else if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    // result dim i is input dim permutation[i].
    ArrayRef<int64_t> perm = transpose.getPermutation();
    src.assign(perm.size(), 0);
    for (auto [i, p] : llvm::enumerate(perm))
      src[p] = index[i];
  } else {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    for (auto [i, offset] : llvm::enumerate(slice.getStaticOffsets()))
      src.push_back(index[i] + offset);
  }
  index.assign(src);
}

/// A chain of view ops from `source` to a value, nearest the value first.
struct ViewChain {
  Value source;
  SmallVector<Operation *> ops;

  void mapToSource(SmallVectorImpl<int64_t> &index, raise::DimEnv &env) const {
    for (Operation *op : ops)
      ::mapToSource(op, index, env);
  }
  /// Whether every size the mapping reads has a value in `env`.
  bool sized(raise::DimEnv &env) const {
    for (Operation *op : ops)
      if (!env.shape(op->getResult(0)) || !env.shape(op->getOperand(0)))
        return false;
    return true;
  }
};

/// Follows `v` up through view ops.
static ViewChain chainAbove(Value v) {
  ViewChain chain;
  while (Operation *op = v.getDefiningOp()) {
    Value src = viewSource(op);
    if (!src)
      break;
    chain.ops.push_back(op);
    v = src;
  }
  chain.source = v;
  return chain;
}

/// How rows of a projection ([..., N] flattened to [R, N]) correspond to
/// (batch, position) of the attention: R = B * S and row = b * S + s
/// (batch-major) or s * B + b (position-major, PyTorch's default
/// nn.MultiheadAttention layout).
enum class RowOrder { BatchMajor, PositionMajor };

/// Row `r` of (b, s) in `order`.
static int64_t rowOf(RowOrder order, int64_t b, int64_t s, int64_t batch,
                     int64_t seq) {
  return order == RowOrder::BatchMajor ? b * seq + s : s * batch + b;
}

/// Which columns of which projection a [B, H, S, dh] attention operand
/// reads.
struct HeadSplit {
  LinearOp projection;
  int64_t columnOffset = 0;
  RowOrder order = RowOrder::BatchMajor;
  /// Batches folded into the attention's head dimension: PyTorch's
  /// sequence-first attention runs batch 1 with B * H "heads".
  int64_t foldedBatch = 1;
};

/// The effective (batch, head) of attention (b, h) when `folded` batches
/// share the head dimension of H = folded * heads.
static std::pair<int64_t, int64_t> unfold(int64_t b, int64_t h, int64_t folded,
                                          int64_t heads) {
  return {b * folded + h / heads, h % heads};
}

/// Decodes flat index `e` of `shape` into `index`.
static void delinearize(int64_t e, ArrayRef<int64_t> shape,
                        SmallVectorImpl<int64_t> &index) {
  index.assign(shape.size(), 0);
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    index[d] = e % shape[d];
    e /= shape[d];
  }
}

/// Row (leading dimensions linearized) and column of `index` in `shape`.
static std::pair<int64_t, int64_t> rowColumn(ArrayRef<int64_t> index,
                                             ArrayRef<int64_t> shape) {
  int64_t row = 0;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    row = row * shape[d] + index[d];
  return {row, index.back()};
}

/// The row each (b, s) of the attention was seen at.
class RowMap {
public:
  RowMap(int64_t batch, int64_t seq)
      : batch(batch), seq(seq), rows(batch * seq, -1) {}

  /// Records that (b, s) reads `row`; false if it read another before.
  bool record(int64_t b, int64_t s, int64_t row) {
    int64_t &seen = rows[b * seq + s];
    if (seen == -1)
      seen = row;
    return seen == row;
  }

  /// The order the rows follow, if one of the two.
  std::optional<RowOrder> order() const {
    for (RowOrder order : {RowOrder::BatchMajor, RowOrder::PositionMajor}) {
      bool all = true;
      for (int64_t b = 0; b < batch && all; ++b)
        for (int64_t s = 0; s < seq && all; ++s)
          all = rows[b * seq + s] == rowOf(order, b, s, batch, seq);
      if (all)
        return order;
    }
    return std::nullopt;
  }

private:
  int64_t batch, seq;
  SmallVector<int64_t> rows;
};

/// The projection an attention operand ([B, H, S, dh], static) is a head
/// split of, if every element checks out.
/// The number of elements of `shape`, if at most kMaxCheckedElements.
static std::optional<int64_t> checkedElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d && n > kMaxCheckedElements / d))
      return std::nullopt;
    n *= d;
  }
  return n;
}

static std::optional<HeadSplit> matchHeadSplit(Value operand,
                                               raise::DimEnv &env) {
  ViewChain chain = chainAbove(operand);
  auto projection = chain.source.getDefiningOp<LinearOp>();
  if (!projection || chain.ops.empty() || !chain.sized(env))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> shapeOr = env.shape(operand),
                                      projShapeOr =
                                          env.shape(projection.getResult());
  if (!shapeOr || !projShapeOr || !checkedElements(*shapeOr) ||
      !checkedElements(*projShapeOr))
    return std::nullopt;
  ArrayRef<int64_t> shape = *shapeOr, projShape = *projShapeOr;
  int64_t seq = shape[2], dh = shape[3];
  int64_t projRows = *checkedElements(projShape) / projShape.back();
  if (projRows % (shape[0] * seq) != 0)
    return std::nullopt;
  int64_t folded = projRows / (shape[0] * seq);
  if (shape[1] % folded != 0)
    return std::nullopt;
  int64_t batch = shape[0] * folded, heads = shape[1] / folded;

  RowMap rows(batch, seq);
  std::optional<int64_t> offset;
  SmallVector<int64_t> index;
  for (int64_t e = 0, n = *checkedElements(shape); e < n; ++e) {
    delinearize(e, shape, index);
    auto [b, h] = unfold(index[0], index[1], folded, heads);
    int64_t s = index[2], d = index[3];
    chain.mapToSource(index, env);
    auto [row, column] = rowColumn(index, projShape);
    if (!offset)
      offset = column - (h * dh + d);
    if (column != *offset + h * dh + d || !rows.record(b, s, row))
      return std::nullopt;
  }
  std::optional<RowOrder> order = rows.order();
  if (!order || *offset < 0 || *offset + heads * dh > projShape.back())
    return std::nullopt;
  return HeadSplit{projection, *offset, *order, folded};
}

/// The projection that reads the attention result ([B, H, S, dh], with
/// `folded` batches in the head dimension) merged back to rows of
/// H / folded * dh columns, through single-use view ops, and the order of
/// its rows.
static std::optional<std::pair<LinearOp, RowOrder>>
matchHeadMerge(Value result, int64_t folded, raise::DimEnv &env) {
  Value v = result;
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    if (!viewSource(user) || viewSource(user) != v)
      break;
    v = user->getResult(0);
  }
  if (!v.hasOneUse())
    return std::nullopt;
  auto projection = dyn_cast<LinearOp>(*v.getUsers().begin());
  if (!projection || projection.getInput() != v || v == result)
    return std::nullopt;
  ViewChain chain = chainAbove(v);
  if (chain.source != result || !chain.sized(env))
    return std::nullopt;

  std::optional<SmallVector<int64_t>> shapeOr = env.shape(result),
                                      mergedOr = env.shape(v);
  if (!shapeOr || !mergedOr)
    return std::nullopt;
  ArrayRef<int64_t> shape = *shapeOr, merged = *mergedOr;
  if (folded <= 0 || shape[1] % folded != 0)
    return std::nullopt;
  int64_t batch = shape[0] * folded, heads = shape[1] / folded, seq = shape[2],
          dh = shape[3];
  std::optional<int64_t> count = checkedElements(merged);
  if (merged.back() != heads * dh || !count || count != checkedElements(shape))
    return std::nullopt;
  RowMap rows(batch, seq);
  SmallVector<int64_t> index;
  for (int64_t e = 0, n = *count; e < n; ++e) {
    delinearize(e, merged, index);
    auto [row, column] = rowColumn(index, merged);
    chain.mapToSource(index, env);
    auto [b, h] = unfold(index[0], index[1], folded, heads);
    int64_t s = index[2], d = index[3];
    if (column != h * dh + d || !rows.record(b, s, row))
      return std::nullopt;
  }
  std::optional<RowOrder> order = rows.order();
  if (!order)
    return std::nullopt;
  return std::make_pair(projection, *order);
}

/// `x` ([..., D] whose rows are (b, s) in `order`) as [B, S, D].
static Value toBatchMajor(PatternRewriter &rewriter, Location loc, Value x,
                          RowOrder order, int64_t batch, int64_t seq) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t width = type.getShape().back();
  SmallVector<int64_t> target = order == RowOrder::BatchMajor
                                    ? SmallVector<int64_t>{batch, seq, width}
                                    : SmallVector<int64_t>{seq, batch, width};
  Value v = x;
  if (type.getShape() != ArrayRef<int64_t>(target)) {
    auto flatType =
        RankedTensorType::get({batch * seq, width}, type.getElementType());
    if (type.getRank() != 2) {
      ReassociationIndices leading;
      for (int64_t d = 0; d + 1 < type.getRank(); ++d)
        leading.push_back(d);
      v = tensor::CollapseShapeOp::create(
          rewriter, loc, flatType, v,
          ArrayRef<ReassociationIndices>{leading, {type.getRank() - 1}});
    }
    v = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(target, type.getElementType()), v,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  }
  if (order == RowOrder::BatchMajor)
    return v;
  Value init = tensor::EmptyOp::create(rewriter, loc,
                                       ArrayRef<int64_t>{batch, seq, width},
                                       type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, v, init,
                                     ArrayRef<int64_t>{1, 0, 2})
      ->getResult(0);
}

/// `y` ([B, S, D]) in the shape and row order of `like`.
static Value fromBatchMajor(PatternRewriter &rewriter, Location loc, Value y,
                            RankedTensorType like, RowOrder order) {
  auto type = cast<RankedTensorType>(y.getType());
  ArrayRef<int64_t> shape = type.getShape();
  Value v = y;
  if (order == RowOrder::PositionMajor) {
    Value init = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{shape[1], shape[0], shape[2]},
        type.getElementType());
    v = linalg::TransposeOp::create(rewriter, loc, v, init,
                                    ArrayRef<int64_t>{1, 0, 2})
            ->getResult(0);
  }
  if (cast<RankedTensorType>(v.getType()) == like)
    return v;
  auto flatType = RankedTensorType::get({shape[0] * shape[1], shape[2]},
                                        type.getElementType());
  v = tensor::CollapseShapeOp::create(
      rewriter, loc, flatType, v, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  if (like.getRank() == 2)
    return v;
  ReassociationIndices leading;
  for (int64_t d = 0; d + 1 < like.getRank(); ++d)
    leading.push_back(d);
  return tensor::ExpandShapeOp::create(
      rewriter, loc, like, v,
      ArrayRef<ReassociationIndices>{leading, {like.getRank() - 1}});
}

/// `x` ([B, S, D] or [S, B, D] by `order`, dynamic sizes) as [B, S, D].
static Value toBatchMajorDynamic(PatternRewriter &rewriter, Location loc,
                                 Value x, RowOrder order) {
  if (order == RowOrder::BatchMajor)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
  std::swap(sizes[0], sizes[1]);
  Value init =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, x, init,
                                     ArrayRef<int64_t>{1, 0, 2})
      ->getResult(0);
}

/// `y` ([B, S, D], dynamic sizes) as `like`: [B, S, D], [S, B, D] or its
/// rows flattened, by `order`.
static Value fromBatchMajorDynamic(PatternRewriter &rewriter, Location loc,
                                   Value y, RankedTensorType like,
                                   RowOrder order) {
  Value v = toBatchMajorDynamic(rewriter, loc, y, order);
  if (like.getRank() == 2)
    v = tensor::CollapseShapeOp::create(
        rewriter, loc, v, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  if (v.getType() != like)
    v = tensor::CastOp::create(rewriter, loc, like, v);
  return v;
}

/// Whether rows [offset, offset + count) of `w` can be bound: all of it, or
/// a slice of a plain attn.weight (a gather of it).
static bool canBindRows(Value w, int64_t offset, int64_t count) {
  if (offset == 0 && count == cast<RankedTensorType>(w.getType()).getDimSize(0))
    return true;
  auto weight = w.getDefiningOp<WeightOp>();
  return weight && !weight.getGatherRangesAttr() &&
         !weight.getConcatNamesAttr();
}

/// Rows [offset, offset + count) of a projection's weight (or elements of
/// its bias), bound from the checkpoint: the weight itself when that is all
/// of it, else a gather of a plain attn.weight along its output axis
/// (canBindRows must hold).
static Value projectionRows(PatternRewriter &rewriter, Value w, int64_t offset,
                            int64_t count) {
  auto type = cast<RankedTensorType>(w.getType());
  if (offset == 0 && count == type.getDimSize(0))
    return w;
  auto weight = w.getDefiningOp<WeightOp>();
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = count;
  // gather_axis refers to the checkpoint tensor: axis 1 of a weight bound
  // transposed.
  int64_t axis = weight.getTranspose() ? 1 : 0;
  auto gathered =
      WeightOp::create(rewriter, weight.getLoc(),
                       RankedTensorType::get(shape, type.getElementType()),
                       weight.getNameAttr(), rewriter.getI64IntegerAttr(axis),
                       rewriter.getI64IntegerAttr(type.getDimSize(0)),
                       rewriter.getDenseI64ArrayAttr({offset, count}),
                       /*concat_names=*/nullptr, /*concat_axis=*/nullptr);
  gathered.setTranspose(weight.getTranspose());
  gathered.setConvert(weight.getConvert());
  return gathered;
}

struct RaiseMha : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp sdpa,
                                PatternRewriter &rewriter) const override {
    if (!sdpa.getScoreWeights().empty() ||
        (sdpa.getScore() != ScoreFunction::scaled_dot &&
         sdpa.getScore() != ScoreFunction::dot))
      return rewriter.notifyMatchFailure(sdpa, "not plain dot attention");
    auto qType = cast<RankedTensorType>(sdpa.getQuery().getType());
    auto kType = cast<RankedTensorType>(sdpa.getKey().getType());
    auto vType = cast<RankedTensorType>(sdpa.getValue().getType());
    // Batch and sequence sizes may be dynamic: the element check then runs
    // at two sets of sizes (raise::DimEnv) and must pass at both.
    if (qType.getRank() != 4 || kType.getRank() != 4 || vType.getRank() != 4 ||
        qType.isDynamicDim(3) || qType.getDimSize(3) != kType.getDimSize(3) ||
        !raise::sameShape(sdpa.getKey(), sdpa.getValue()))
      return rewriter.notifyMatchFailure(sdpa, "not [B, H, S, dh] operands");
    bool dynamic = !qType.hasStaticShape() || !kType.hasStaticShape();
    raise::DimEnv env({2, 3, 5, 7}), env2({3, 5, 7, 11});
    std::optional<HeadSplit> q = matchHeadSplit(sdpa.getQuery(), env),
                             k = matchHeadSplit(sdpa.getKey(), env),
                             v = matchHeadSplit(sdpa.getValue(), env);
    if (!q || !k || !v)
      return rewriter.notifyMatchFailure(sdpa, "operands are not head splits");
    if (dynamic) {
      auto agrees = [&](const HeadSplit &a, Value operand) {
        std::optional<HeadSplit> b = matchHeadSplit(operand, env2);
        return b && b->projection == a.projection &&
               b->columnOffset == a.columnOffset && b->order == a.order &&
               (b->foldedBatch == 1) == (a.foldedBatch == 1);
      };
      if (!agrees(*q, sdpa.getQuery()) || !agrees(*k, sdpa.getKey()) ||
          !agrees(*v, sdpa.getValue()))
        return rewriter.notifyMatchFailure(sdpa,
                                           "head splits differ between sizes");
    }
    // attn.mha has no per-row query positions to carry them.
    if (sdpa.getQueryPositions())
      return rewriter.notifyMatchFailure(sdpa, "has query positions");
    int64_t folded = q->foldedBatch;
    if (k->foldedBatch != folded || v->foldedBatch != folded ||
        (folded != 1 && sdpa.getKvLengths()))
      return rewriter.notifyMatchFailure(sdpa, "batches folded differently");
    // A bias over the folded batch or head dimension does not carry over.
    if (Value bias = sdpa.getBias(); bias && folded != 1) {
      auto biasShape = cast<RankedTensorType>(bias.getType()).getShape();
      if (biasShape[0] != 1 || biasShape[1] != 1)
        return rewriter.notifyMatchFailure(sdpa, "bias over folded batches");
    }
    // Sizes at `env` (the static ones when nothing is dynamic).
    SmallVector<int64_t> qShape = *env.shape(sdpa.getQuery());
    std::optional<SmallVector<int64_t>> kShapeOr = env.shape(sdpa.getKey());
    if (!kShapeOr)
      return rewriter.notifyMatchFailure(sdpa, "key sizes");
    int64_t batch = qShape[0] * folded, heads = qShape[1] / folded,
            sq = qShape[2], dh = qShape[3];
    int64_t kvHeads = (*kShapeOr)[1] / folded, sk = (*kShapeOr)[2];
    auto merge = matchHeadMerge(sdpa.getResult(), folded, env);
    if (!merge)
      return rewriter.notifyMatchFailure(sdpa, "result is not a head merge");
    auto [out, outOrder] = *merge;
    if (dynamic) {
      std::optional<HeadSplit> q2 = matchHeadSplit(sdpa.getQuery(), env2);
      auto merge2 = matchHeadMerge(sdpa.getResult(), q2->foldedBatch, env2);
      if (!merge2 || merge2->first != out || merge2->second != outOrder)
        return rewriter.notifyMatchFailure(sdpa,
                                           "head merges differ between sizes");
    }

    Value queryIn = q->projection.getInput();
    Value kvIn = k->projection.getInput();
    if (v->projection.getInput() != kvIn || k->order != v->order)
      return rewriter.notifyMatchFailure(sdpa, "key and value inputs differ");
    bool self = kvIn == queryIn && k->order == q->order && sk == sq &&
                raise::sameDim(sdpa.getQuery(), 2, sdpa.getKey(), 2);
    // With dynamic sizes the inputs and the output must already be rows
    // of [B, S] or [S, B] (or [B * S] flattened): checked at both sizes.
    if (dynamic) {
      auto laidOut = [&](Value x, RowOrder order, int64_t s2) {
        for (raise::DimEnv *e : {&env, &env2}) {
          std::optional<SmallVector<int64_t>> shape = e->shape(x);
          std::optional<SmallVector<int64_t>> qs = e->shape(sdpa.getQuery());
          std::optional<SmallVector<int64_t>> ks = e->shape(sdpa.getKey());
          if (!shape || !qs || !ks)
            return false;
          int64_t b = (*qs)[0] * (e == &env ? folded : 1),
                  s = s2 == 0 ? (*qs)[2] : (*ks)[2];
          if (e == &env2) {
            std::optional<HeadSplit> q2 = matchHeadSplit(sdpa.getQuery(), env2);
            b = (*qs)[0] * q2->foldedBatch;
          }
          SmallVector<int64_t> want = order == RowOrder::BatchMajor
                                          ? SmallVector<int64_t>{b, s}
                                          : SmallVector<int64_t>{s, b};
          if (shape->size() == 3 &&
              ArrayRef<int64_t>(*shape).drop_back() != ArrayRef<int64_t>(want))
            return false;
          if (shape->size() == 2 && (*shape)[0] != b * s)
            return false;
          if (shape->size() != 2 && shape->size() != 3)
            return false;
        }
        return true;
      };
      if (!laidOut(queryIn, q->order, 0) || !laidOut(kvIn, k->order, 1) ||
          !laidOut(out.getInput(), outOrder, 0) ||
          cast<RankedTensorType>(queryIn.getType()).getRank() != 3 ||
          cast<RankedTensorType>(kvIn.getType()).getRank() != 3)
        return rewriter.notifyMatchFailure(sdpa, "dynamic rows not [B, S]");
    }
    auto queryType = cast<RankedTensorType>(queryIn.getType());
    int64_t dm = queryType.getShape().back();
    auto outType = out.getType();
    if (outType.getShape().back() != dm)
      return rewriter.notifyMatchFailure(sdpa, "output width != query width");
    // All four projections with biases, or none.
    int64_t biased = 0;
    for (LinearOp p : {q->projection, k->projection, v->projection, out})
      biased += p.getBias() ? 1 : 0;
    if (biased != 0 && biased != 4)
      return rewriter.notifyMatchFailure(sdpa, "biases on some projections");

    // Check every binding before creating any op.
    for (auto [split, n] :
         {std::make_pair(*q, heads), std::make_pair(*k, kvHeads),
          std::make_pair(*v, kvHeads)})
      for (Value w : {split.projection.getWeight(), split.projection.getBias()})
        if (w && !canBindRows(w, split.columnOffset, n * dh))
          return rewriter.notifyMatchFailure(sdpa,
                                             "packed weight not bindable");

    Location loc = sdpa.getLoc();
    rewriter.setInsertionPoint(out);
    auto rows = [&](HeadSplit split, int64_t n, bool bias) {
      Value w =
          bias ? split.projection.getBias() : split.projection.getWeight();
      return projectionRows(rewriter, w, split.columnOffset, n * dh);
    };
    Value wq = rows(*q, heads, false), wk = rows(*k, kvHeads, false),
          wv = rows(*v, kvHeads, false);
    SmallVector<Value> biases;
    if (biased) {
      biases = {rows(*q, heads, true), rows(*k, kvHeads, true),
                rows(*v, kvHeads, true), out.getBias()};
    }

    Value query =
        dynamic ? toBatchMajorDynamic(rewriter, loc, queryIn, q->order)
                : toBatchMajor(rewriter, loc, queryIn, q->order, batch, sq);
    Value keyValue =
        self      ? Value()
        : dynamic ? toBatchMajorDynamic(rewriter, loc, kvIn, k->order)
                  : toBatchMajor(rewriter, loc, kvIn, k->order, batch, sk);
    // dot's default scale is 1; mha's (scaled_dot's) is 1/sqrt(dh).
    FloatAttr scale = sdpa.getScaleAttr();
    if (!scale && sdpa.getScore() == ScoreFunction::dot)
      scale = rewriter.getF64FloatAttr(1.0);
    auto queryBM = cast<RankedTensorType>(query.getType());
    auto mhaType =
        RankedTensorType::get({dynamic ? queryBM.getDimSize(0) : batch,
                               dynamic ? queryBM.getDimSize(1) : sq, dm},
                              queryType.getElementType());
    auto mha = MhaOp::create(
        rewriter, loc, mhaType, query, keyValue, wq, wk, wv, out.getWeight(),
        biases, sdpa.getBias(), sdpa.getKvLengths(),
        rewriter.getI64IntegerAttr(heads),
        kvHeads == heads ? IntegerAttr() : rewriter.getI64IntegerAttr(kvHeads),
        dm == heads * dh ? IntegerAttr() : rewriter.getI64IntegerAttr(dh),
        UnitAttr(), sdpa.getCausalAttr(), sdpa.getWindowAttr(),
        cast_or_null<FloatAttr>(scale));
    rewriter.replaceOp(
        out, dynamic
                 ? fromBatchMajorDynamic(rewriter, loc, mha, outType, outOrder)
                 : fromBatchMajor(rewriter, loc, mha, outType, outOrder));
    return success();
  }
};

struct AttnRaiseMhaPass
    : raise::RaisingPass<AttnRaiseMhaPass, attn::impl::AttnRaiseMhaBase,
                         RaiseMha> {};

} // namespace
