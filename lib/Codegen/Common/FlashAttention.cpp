//===- FlashAttention.cpp - attn.sdpa as blocked online-softmax loops -----===//
//
// Flash attention (Dao et al., 2022) on tensors. One scf.forall iteration
// handles one (batch, kv head, block of block-q query rows); inside, an
// scf.for walks the key/value blocks of block-k columns and carries the
// online-softmax state in iter_args: the running row max m, the running row
// sum l and the unnormalized output O. Scores only ever exist for one
// block-q x block-k tile, so memory grows with S, not with Sq x Sk.
//
// Query heads are grouped as in the unfused lowering: kv head n serves the
// G = Hq / Hkv query heads n*G .. n*G+G-1, so a query block covers those G
// heads and every K/V block is read once for all of them (GQA/MQA). Tiles
// are [G, rows, cols].
//
// Block skipping: before the key loop, the range of keys that the causal,
// window and kv_lengths masks leave visible to at least one row of the
// query block is computed from the query block index (bottom-right
// alignment, p = i + Sk - Sq, or p = i + query_positions[b] per batch row
// when the op has them) and becomes the loop bounds, the lower bound
// rounded down to a block boundary. Key blocks outside it are never visited;
// inside it the masks are applied per element.
//
// Buffers: a query block's temporaries (m, l, O, the score tile, its row
// max and the rescale factor) are bufferization.alloc_tensor ops in the
// forall body, threaded through the key loop as iter_args and updated in
// place, so one-shot bufferization gives each one buffer per query block
// and copies nothing; attn-promote-loop-buffers then puts them on the stack
// (per-thread local memory in CUDA kernels).
//
// attn.mha is split into projections and attn.sdpa first (as
// attn-lower-to-linalg would), so multi-head layers are blocked too. Other
// score functions (general, additive, cosine, gaussian) are left to the
// unfused lowering.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/FlashPattern.h"
#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Conversion/LinalgBuilder.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFLASHATTENTION
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// The running row maximum of the online softmax. It only shifts the
/// exponents (any value at least about the true maximum gives the same
/// probabilities), so it may ignore NaN and the sign of zero: without those
/// flags a CPU maximum of a vector is a compare-and-blend sequence per step
/// instead of one vmaxps. A NaN score still reaches the output through
/// exp(NaN - m) in the row's sum.
static Value rowMax(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MaximumFOp::create(
      b, loc, x, y, arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
}

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// `x` as f32 (inputs may be f16/bf16; all arithmetic is f32).
static Value extToF32(OpBuilder &b, Location loc, Value x) {
  if (x.getType().isF32())
    return x;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
}

/// Sizes of a tile type: static where known, dynamic otherwise.
static RankedTensorType tileType(ArrayRef<OpFoldResult> sizes, Type elt) {
  SmallVector<int64_t> shape;
  for (OpFoldResult size : sizes)
    shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
  return RankedTensorType::get(shape, elt);
}

/// The static description of one attn.sdpa that is being blocked.
struct FlashProblem : SdpaShape {
  int64_t blockQ, blockK, numQBlocks;
  /// Query row i sits at key position i + alignOffset (without
  /// `starts`).
  int64_t alignOffset;
  /// Dynamic batch and sequence lengths (run-time values; attributes where
  /// static): Sq, Sk and, when either is dynamic and a mask needs it, the
  /// alignment Sk - Sq as a value (alignOffset is then unused).
  OpFoldResult sqSize, skSize;
  Value alignValue;
  double scale;
  bool causal;
  std::optional<int64_t> window;
  Type elementType;
  /// With keyTransposed, `key` is K^T, [B, Hkv, Dk, Sk].
  bool keyTransposed;
  Value query, key, value, bias, lengths;
  /// query_positions ([B]) when a mask needs them: row i of batch b sits at
  /// starts[b] + i, and alignOffset/alignValue are unused.
  Value starts;
};

/// Working storage of one query block, threaded through the key loop as
/// iter_args so that every step updates it in place.
enum Scratch : unsigned {
  kRowMax,  ///< m: running row max, [G, qs].
  kRowSum,  ///< l: running row sum of exp, [G, qs].
  kAcc,     ///< O: unnormalized output, [G, qs, Dv].
  kScores,  ///< S, then P: one score tile, [G, qs, block-k].
  kTileMax, ///< row max of one score tile, [G, qs].
  kAlpha,   ///< rescale factor exp(m_old - m_new), [G, qs].
  kNumScratch
};

/// Builds the body of one forall iteration, i.e. one query block: the key
/// range, the key loop with the online softmax, and the normalized output
/// tile.
class FlashBlockBuilder {
public:
  FlashBlockBuilder(OpBuilder &b, Location loc, const FlashProblem &p,
                    ValueRange ivs)
      : b(b), loc(loc), p(p), lb(b, loc), batchIv(ivs[0]), headIv(ivs[1]),
        qBlockIv(ivs[2]) {}

  /// Emits the block and returns its result tile, [G, qs, Dv] in the
  /// element type, computed into the matching slice of `outArg`; `offsets`
  /// and `sizes` receive that slice.
  Value build(Value outArg, SmallVectorImpl<OpFoldResult> &offsets,
              SmallVectorImpl<OpFoldResult> &sizes);

private:
  OpFoldResult apply(AffineExpr e, ArrayRef<OpFoldResult> operands) {
    return affine::makeComposedFoldedAffineApply(b, loc, e, operands);
  }
  OpFoldResult minOf(ArrayRef<AffineExpr> exprs,
                     ArrayRef<OpFoldResult> operands) {
    auto map = AffineMap::get(0, operands.size(), exprs, b.getContext());
    return affine::makeComposedFoldedAffineMin(b, loc, map, operands);
  }
  OpFoldResult maxOf(ArrayRef<AffineExpr> exprs,
                     ArrayRef<OpFoldResult> operands) {
    auto map = AffineMap::get(0, operands.size(), exprs, b.getContext());
    return affine::makeComposedFoldedAffineMax(b, loc, map, operands);
  }
  Value value(OpFoldResult ofr) {
    return getValueOrCreateConstantIndexOp(b, loc, ofr);
  }
  OpFoldResult index(int64_t v) { return b.getIndexAttr(v); }
  AffineExpr sym(unsigned i) { return b.getAffineSymbolExpr(i); }
  AffineExpr cst(int64_t v) { return b.getAffineConstantExpr(v); }

  /// The size of the block starting at `start` of a dimension of `extent`
  /// split into blocks of `block`: static unless there is a partial last
  /// block (always possible for a dynamic extent, `size`).
  OpFoldResult blockSize(Value start, int64_t block, int64_t extent,
                         OpFoldResult size) {
    if (ShapedType::isDynamic(extent))
      return minOf({cst(block), sym(1) - sym(0)}, {start, size});
    if (extent % block == 0)
      return index(block);
    return minOf({cst(block), cst(extent) - sym(0)}, {start});
  }

  /// A new f32 buffer for one block: `shape` is the full block, `sizes`
  /// its used part (smaller for a partial last query block).
  Value blockBuffer(ArrayRef<int64_t> shape, ArrayRef<OpFoldResult> sizes);

  /// [lo, hi): the keys visible to at least one row of the query block.
  std::pair<OpFoldResult, OpFoldResult> keyRange();

  /// scale * q.k (+ bias), -inf where a mask hides the key, into `init`.
  Value scoreTile(Value init, Value kTile, Value biasTile, Value k0);

  /// One key block starting at `k0`. `state` holds the iter_args (m, l, O,
  /// then the S, tile max and alpha scratch); returns their new values.
  SmallVector<Value> keyStep(Value k0, ValueRange state);

  OpBuilder &b;
  Location loc;
  const FlashProblem &p;
  LinalgBuilder lb;
  Value batchIv, headIv, qBlockIv;
  // Set by build() before the key loop. `rowStart` is the batch row's
  // query position (query_positions[b]) when the op has them.
  OpFoldResult q0, qs, head0;
  Value qTile, length, rowStart;
};

Value FlashBlockBuilder::blockBuffer(ArrayRef<int64_t> shape,
                                     ArrayRef<OpFoldResult> sizes) {
  // bufferization.alloc_tensor rather than tensor.empty: it has an
  // allocation effect, so CSE never merges two of these temporaries into
  // one buffer (which would force copies). The shape is static, the full
  // block, so that attn-promote-loop-buffers can put it on the stack.
  auto type = RankedTensorType::get(shape, b.getF32Type());
  Value buffer =
      bufferization::AllocTensorOp::create(b, loc, type, ValueRange{});
  if (llvm::all_of(llvm::zip(shape, sizes), [](auto pair) {
        return getConstantIntValue(std::get<1>(pair)) == std::get<0>(pair);
      }))
    return buffer;
  SmallVector<OpFoldResult> offsets(shape.size(), index(0));
  SmallVector<OpFoldResult> strides(shape.size(), index(1));
  return tensor::ExtractSliceOp::create(b, loc, tileType(sizes, b.getF32Type()),
                                        buffer, offsets, sizes, strides);
}

std::pair<OpFoldResult, OpFoldResult> FlashBlockBuilder::keyRange() {
  // Rows [q0, q0 + qs) sit at positions q0 + off .. q0 + qs - 1 + off.
  SmallVector<OpFoldResult> operands = {q0, qs};
  // Dynamic lengths: the alignment and Sk are symbols.
  AffineExpr align = cst(p.alignOffset), skExpr = cst(p.sk);
  if (Value alignment = rowStart ? rowStart : p.alignValue) {
    align = sym(operands.size());
    operands.push_back(alignment);
  }
  if (ShapedType::isDynamic(p.sk)) {
    skExpr = sym(operands.size());
    operands.push_back(p.skSize);
  }
  AffineExpr first = sym(0) + align;
  AffineExpr last = sym(0) + sym(1) - 1 + align;
  SmallVector<AffineExpr> upper = {skExpr};
  OpFoldResult lo = index(0);
  if (p.causal)
    upper.push_back(last + 1); // j <= p
  if (p.window) {
    // |p - j| < W, i.e. p - W < j < p + W. The lower bound is rounded down
    // to a block boundary so that the blocks visited are the fixed blocks
    // [k * bk, (k + 1) * bk): every key tile but a partial last one is full
    // (static sizes when Sk is a multiple of block-k).
    upper.push_back(last + *p.window);
    lo = maxOf({cst(0), (first - *p.window + 1).floorDiv(p.blockK) * p.blockK},
               operands);
  }
  if (length) {
    // j < kv_lengths[b]: keys past the batch's length are never visited.
    upper.push_back(sym(operands.size()));
    operands.push_back(length);
  }
  OpFoldResult hi = upper.size() == 1 ? p.skSize : minOf(upper, operands);
  return {lo, hi};
}

Value FlashBlockBuilder::scoreTile(Value init, Value kTile, Value biasTile,
                                   Value k0) {
  // Dims g i j d: s[g, i, j] += q[g, i, d] * k[j, d], or * kT[d, j].
  Value scores =
      lb.generic({qTile, kTile}, lb.fill(init, 0.0),
                 {lb.dims(4, {0, 1, 3}),
                  p.keyTransposed ? lb.dims(4, {3, 2}) : lb.dims(4, {2, 3}),
                  lb.dims(4, {0, 1, 2})},
                 {IteratorType::parallel, IteratorType::parallel,
                  IteratorType::parallel, IteratorType::reduction},
                 [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                   Value prod = mulF(nb, l, extToF32(nb, l, args[0]),
                                     extToF32(nb, l, args[1]));
                   return addF(nb, l, args[2], prod);
                 });

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  if (biasTile) {
    // The bias tile is [G|1, qs|1, ks|1]: broadcast dimensions stay size 1.
    auto biasType = cast<RankedTensorType>(p.bias.getType());
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < 3; ++d)
      exprs.push_back(biasType.getDimSize(d + 1) == 1 ? cst(0)
                                                      : b.getAffineDimExpr(d));
    inputs.push_back(biasTile);
    maps.push_back(lb.map(3, exprs));
  }
  maps.push_back(lb.identity(3));
  bool masked = p.causal || p.window || length;
  Value blockStart = masked ? value(q0) : Value();
  bool hasBias = static_cast<bool>(biasTile);
  return lb.generic(
      inputs, scores, maps,
      SmallVector<IteratorType>(3, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value s =
            mulF(nb, l, args.back(), LinalgBuilder::constF32(nb, l, p.scale));
        if (hasBias)
          s = addF(nb, l, s, extToF32(nb, l, args[0]));
        if (!masked)
          return s;
        // Absolute key index j and query position p = i + Sk - Sq (or
        // i + query_positions[b]).
        Value j =
            arith::AddIOp::create(nb, l, linalg::IndexOp::create(nb, l, 2), k0);
        Value pos = arith::AddIOp::create(
            nb, l, linalg::IndexOp::create(nb, l, 1), blockStart);
        if (rowStart)
          pos = arith::AddIOp::create(nb, l, pos, rowStart);
        else if (p.alignValue)
          pos = arith::AddIOp::create(nb, l, pos, p.alignValue);
        else if (p.alignOffset != 0)
          pos = arith::AddIOp::create(
              nb, l, pos, LinalgBuilder::constIndex(nb, l, p.alignOffset));
        Value visible;
        auto andWith = [&](Value cond) {
          visible =
              visible ? arith::AndIOp::create(nb, l, visible, cond).getResult()
                      : cond;
        };
        if (p.causal)
          andWith(
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, j, pos));
        if (p.window) {
          Value w = LinalgBuilder::constIndex(nb, l, *p.window);
          andWith(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                        arith::SubIOp::create(nb, l, pos, j),
                                        w));
          andWith(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                        arith::SubIOp::create(nb, l, j, pos),
                                        w));
        }
        if (length)
          andWith(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, j,
                                        length));
        return arith::SelectOp::create(nb, l, visible, s,
                                       LinalgBuilder::constF32(nb, l, kNegInf));
      });
}

SmallVector<Value> FlashBlockBuilder::keyStep(Value k0, ValueRange state) {
  OpFoldResult zero = index(0), one = index(1), groupSize = index(p.group);
  OpFoldResult ks = blockSize(k0, p.blockK, p.sk, p.skSize);
  SmallVector<OpFoldResult> unitStrides(4, one);
  auto kvTile = [&](Value source, int64_t width) -> Value {
    SmallVector<OpFoldResult> sizes = {ks, index(width)};
    return tensor::ExtractSliceOp::create(
        b, loc, tileType(sizes, p.elementType), source,
        ArrayRef<OpFoldResult>{batchIv, headIv, k0, zero},
        ArrayRef<OpFoldResult>{one, one, ks, index(width)}, unitStrides);
  };
  Value kTile;
  if (p.keyTransposed) {
    SmallVector<OpFoldResult> sizes = {index(p.dk), ks};
    kTile = tensor::ExtractSliceOp::create(
        b, loc, tileType(sizes, p.elementType), p.key,
        ArrayRef<OpFoldResult>{batchIv, headIv, zero, k0},
        ArrayRef<OpFoldResult>{one, one, index(p.dk), ks}, unitStrides);
  } else {
    kTile = kvTile(p.key, p.dk);
  }
  Value vTile = kvTile(p.value, p.dv);
  Value biasTile;
  if (p.bias) {
    auto biasType = cast<RankedTensorType>(p.bias.getType());
    auto full = [&](unsigned d) { return biasType.getDimSize(d) != 1; };
    SmallVector<OpFoldResult> sizes = {full(1) ? groupSize : one,
                                       full(2) ? qs : one, full(3) ? ks : one};
    biasTile = tensor::ExtractSliceOp::create(
        b, loc, tileType(sizes, biasType.getElementType()), p.bias,
        ArrayRef<OpFoldResult>{full(0) ? batchIv : zero, full(1) ? head0 : zero,
                               full(2) ? q0 : zero,
                               full(3) ? OpFoldResult(k0) : zero},
        ArrayRef<OpFoldResult>{one, sizes[0], sizes[1], sizes[2]}, unitStrides);
  }
  // The score scratch holds a full [G, qs, bk] tile; a partial last key
  // block uses its leading ks columns.
  Value sBuf = state[3];
  bool fullKeyBlock = getConstantIntValue(ks) == p.blockK;
  SmallVector<OpFoldResult> sOffsets(3, zero), sSizes = {groupSize, qs, ks};
  SmallVector<OpFoldResult> sStrides(3, one);
  Value sInit =
      fullKeyBlock
          ? sBuf
          : tensor::ExtractSliceOp::create(b, loc, tileType(sSizes, lb.f32()),
                                           sBuf, sOffsets, sSizes, sStrides)
                .getResult();
  Value scores = scoreTile(sInit, kTile, biasTile, k0);

  Value m = state[0], l = state[1], acc = state[2];
  SmallVector<OpFoldResult> rowSizes = {groupSize, qs};
  AffineMap id2 = lb.identity(2), id3 = lb.identity(3);
  AffineMap rowOf3 = lb.dims(3, {0, 1});
  SmallVector<IteratorType> par2(2, IteratorType::parallel);
  SmallVector<IteratorType> par3(3, IteratorType::parallel);
  SmallVector<IteratorType> rowReduce = {
      IteratorType::parallel, IteratorType::parallel, IteratorType::reduction};
  // The tile's row max t; m_new = max(m, t). m itself is updated in place
  // by the last op of the step, after every read of the old m, so that it
  // bufferizes in place.
  Value tileMax =
      lb.generic({scores}, lb.fill(state[4], kNegInf), {id3, rowOf3}, rowReduce,
                 [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                   return rowMax(nb, l, args[1], args[0]);
                 });
  // alpha = exp(m - m_new). While a row has seen only hidden keys both are
  // -inf (exp would give NaN); its l and O are still 0, so any factor works:
  // use 1.
  Value alpha = lb.generic(
      {m, tileMax}, state[5], {id2, id2, id2}, par2,
      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value mNew = rowMax(nb, l, args[0], args[1]);
        Value none =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, mNew,
                                  LinalgBuilder::constF32(nb, l, kNegInf));
        Value e = math::ExpOp::create(
            nb, l, arith::SubFOp::create(nb, l, args[0], mNew));
        return arith::SelectOp::create(nb, l, none,
                                       LinalgBuilder::constF32(nb, l, 1.0), e);
      });
  // P = exp(S - m_new), exactly 0 for hidden keys (where m_new may be -inf).
  Value probs = lb.generic(
      {m, tileMax}, scores, {rowOf3, rowOf3, id3}, par3,
      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value mNew = rowMax(nb, l, args[0], args[1]);
        Value hidden =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, args[2],
                                  LinalgBuilder::constF32(nb, l, kNegInf));
        Value e = math::ExpOp::create(
            nb, l, arith::SubFOp::create(nb, l, args[2], mNew));
        return arith::SelectOp::create(nb, l, hidden,
                                       LinalgBuilder::constF32(nb, l, 0.0), e);
      });
  auto rescale = [](OpBuilder &nb, Location l, ValueRange args) -> Value {
    return mulF(nb, l, args[1], args[0]);
  };
  // l = l * alpha + rowsum(P).
  Value lNew = lb.generic({alpha}, l, {id2, id2}, par2, rescale);
  lNew = lb.generic({probs}, lNew, {id3, rowOf3}, rowReduce,
                    [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                      return addF(nb, l, args[1], args[0]);
                    });
  // O = O * alpha + P V; dims g i e j: O[g, i, e] += P[g, i, j] * V[j, e].
  Value accNew = lb.generic({alpha}, acc, {rowOf3, id3}, par3, rescale);
  accNew = lb.generic(
      {probs, vTile}, accNew,
      {lb.dims(4, {0, 1, 3}), lb.dims(4, {3, 2}), lb.dims(4, {0, 1, 2})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return addF(nb, l, args[2],
                    mulF(nb, l, args[0], extToF32(nb, l, args[1])));
      });
  Value mNew =
      lb.generic({tileMax}, m, {id2, id2}, par2,
                 [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                   return rowMax(nb, l, args[1], args[0]);
                 });
  Value sOut = fullKeyBlock
                   ? probs
                   : tensor::InsertSliceOp::create(b, loc, probs, sBuf,
                                                   sOffsets, sSizes, sStrides)
                         .getResult();
  return {mNew, lNew, accNew, sOut, tileMax, alpha};
}

Value FlashBlockBuilder::build(Value outArg,
                               SmallVectorImpl<OpFoldResult> &offsets,
                               SmallVectorImpl<OpFoldResult> &sizes) {
  OpFoldResult zero = index(0), one = index(1), groupSize = index(p.group);
  q0 = apply(sym(0) * p.blockQ, {qBlockIv});
  qs = blockSize(value(q0), p.blockQ, p.sq, p.sqSize);
  head0 = apply(sym(0) * p.group, {headIv});
  SmallVector<OpFoldResult> unitStrides(4, one);

  // Q rows of the block for the G query heads of this kv head: [G, qs, Dk].
  SmallVector<OpFoldResult> qSizes = {groupSize, qs, index(p.dk)};
  qTile = tensor::ExtractSliceOp::create(
      b, loc, tileType(qSizes, p.elementType), p.query,
      ArrayRef<OpFoldResult>{batchIv, head0, q0, zero},
      ArrayRef<OpFoldResult>{one, groupSize, qs, index(p.dk)}, unitStrides);
  if (p.lengths)
    length = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, p.lengths, batchIv));
  if (p.starts)
    rowStart = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, p.starts, batchIv));

  auto [lo, hi] = keyRange();
  SmallVector<OpFoldResult> rowSizes = {groupSize, qs};
  SmallVector<OpFoldResult> accSizes = {groupSize, qs, index(p.dv)};
  SmallVector<int64_t> rowShape = {p.group, p.blockQ};
  SmallVector<Value> inits(kNumScratch);
  inits[kRowMax] = lb.fill(blockBuffer(rowShape, rowSizes), kNegInf);
  inits[kRowSum] = lb.fill(blockBuffer(rowShape, rowSizes), 0.0);
  inits[kAcc] = lb.fill(blockBuffer({p.group, p.blockQ, p.dv}, accSizes), 0.0);
  inits[kScores] = blockBuffer({p.group, p.blockQ, p.blockK},
                               {groupSize, qs, index(p.blockK)});
  inits[kTileMax] = blockBuffer(rowShape, rowSizes);
  inits[kAlpha] = blockBuffer(rowShape, rowSizes);
  auto loop = scf::ForOp::create(
      b, loc, value(lo), value(hi),
      arith::ConstantIndexOp::create(b, loc, p.blockK), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, loc, keyStep(loop.getInductionVar(), loop.getRegionIterArgs()));
  }

  // out = O / l, 0 for rows that saw no key.
  offsets.assign({batchIv, head0, q0, zero});
  sizes.assign({one, groupSize, qs, index(p.dv)});
  Value outTile =
      tensor::ExtractSliceOp::create(b, loc, tileType(accSizes, p.elementType),
                                     outArg, offsets, sizes, unitStrides);
  Type elt = p.elementType;
  return lb.generic(
      {loop.getResult(kAcc), loop.getResult(kRowSum)}, outTile,
      {lb.identity(3), lb.dims(3, {0, 1}), lb.identity(3)},
      SmallVector<IteratorType>(3, IteratorType::parallel),
      [elt](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value zeroF = LinalgBuilder::constF32(nb, l, 0.0);
        Value positive = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                               args[1], zeroF);
        Value div = arith::DivFOp::create(nb, l, args[0], args[1]);
        Value out = arith::SelectOp::create(nb, l, positive, div, zeroF);
        if (!elt.isF32())
          out = arith::TruncFOp::create(nb, l, elt, out);
        return out;
      });
}

/// attn.sdpa with a dot-product score -> scf.forall over (batch, kv head,
/// query block) around an scf.for over key blocks (see the file comment).
struct FlashSdpaLowering : FlashPatternBase {
  FlashSdpaLowering(MLIRContext *ctx, int64_t blockQ, int64_t blockK,
                    bool transposeKeys)
      : FlashPatternBase(ctx, blockQ, blockK, /*allowDynamic=*/true),
        transposeKeys(transposeKeys) {}

  LogicalResult rewriteFlash(SdpaOp op,
                             PatternRewriter &rewriter) const override {
    auto resultType = op.getType();

    FlashProblem p;
    static_cast<SdpaShape &>(p) = op.getSdpaShape();
    // A block never exceeds a static sequence, so short sequences get one
    // exact block instead of a partial one. Dynamic lengths (batch and
    // sequence given at run time) keep the requested blocks, with a partial
    // last block.
    auto [bq, bk] = requestedBlocks(op);
    bool dynamicQ = ShapedType::isDynamic(p.sq),
         dynamicK = ShapedType::isDynamic(p.sk);
    p.blockQ = dynamicQ ? bq : std::min(bq, p.sq);
    p.blockK = dynamicK ? bk : std::min(bk, p.sk);
    p.numQBlocks = dynamicQ ? 0 : llvm::divideCeil(p.sq, p.blockQ);
    p.alignOffset = dynamicQ || dynamicK ? 0 : p.sk - p.sq;
    p.scale = op.getEffectiveScale();
    p.causal = op.getCausal();
    if (op.getWindow() && *op.getWindow() != 0)
      p.window = static_cast<int64_t>(*op.getWindow());
    p.elementType = resultType.getElementType();
    p.query = op.getQuery();
    p.key = op.getKey();
    p.value = op.getValue();
    p.bias = op.getBias();
    p.lengths = op.getKvLengths();
    if (p.causal || p.window)
      p.starts = op.getQueryPositions();

    Location loc = op.getLoc();
    bool dynamic =
        !resultType.hasStaticShape() || !op.getKey().getType().hasStaticShape();
    SmallVector<OpFoldResult> qSizes, kSizes;
    if (dynamic) {
      qSizes = tensor::getMixedSizes(rewriter, loc, p.query);
      kSizes = tensor::getMixedSizes(rewriter, loc, p.key);
      p.sqSize = qSizes[2];
      p.skSize = kSizes[2];
      if ((dynamicQ || dynamicK) && (p.causal || p.window) && !p.starts)
        p.alignValue = arith::SubIOp::create(
            rewriter, loc,
            getValueOrCreateConstantIndexOp(rewriter, loc, p.skSize),
            getValueOrCreateConstantIndexOp(rewriter, loc, p.sqSize));
    } else {
      p.sqSize = rewriter.getIndexAttr(p.sq);
      p.skSize = rewriter.getIndexAttr(p.sk);
    }
    // Keys with per-row lengths are a KV cache, read only up to each row's
    // length: a transposed copy of all of it would cost every step in
    // proportion to the cache's capacity, not to what the step reads.
    p.keyTransposed = transposeKeys && !op.getKvLengths();
    if (p.keyTransposed) {
      // One copy of K per call, read by every query block: afterwards both
      // block contractions stream their right operand along the output
      // columns (outer-product form, no horizontal reductions).
      SmallVector<int64_t> shape = {p.batch, p.hkv, p.dk, p.sk};
      Type keyElt = op.getKey().getType().getElementType();
      Value empty = dynamic
                        ? tensor::EmptyOp::create(
                              rewriter, loc,
                              ArrayRef<OpFoldResult>{
                                  kSizes[0], rewriter.getIndexAttr(p.hkv),
                                  rewriter.getIndexAttr(p.dk), p.skSize},
                              keyElt)
                        : tensor::EmptyOp::create(rewriter, loc, shape, keyElt);
      p.key = linalg::TransposeOp::create(rewriter, loc, p.key, empty,
                                          ArrayRef<int64_t>{0, 1, 3, 2})
                  .getResult()[0];
    }
    Value init;
    SmallVector<OpFoldResult> bounds;
    if (dynamic) {
      // [B, Hq, Sq, Dv] sized from the query; ceil(Sq / block-q) blocks.
      init = tensor::EmptyOp::create(
          rewriter, loc,
          ArrayRef<OpFoldResult>{qSizes[0], qSizes[1], p.sqSize,
                                 rewriter.getIndexAttr(p.dv)},
          p.elementType);
      AffineExpr sq = rewriter.getAffineSymbolExpr(0);
      bounds = {qSizes[0], rewriter.getIndexAttr(p.hkv),
                affine::makeComposedFoldedAffineApply(
                    rewriter, loc, sq.ceilDiv(p.blockQ), {p.sqSize})};
    } else {
      init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                     p.elementType);
      bounds = {rewriter.getIndexAttr(p.batch), rewriter.getIndexAttr(p.hkv),
                rewriter.getIndexAttr(p.numQBlocks)};
    }
    auto forall = scf::ForallOp::create(rewriter, loc, bounds, ValueRange{init},
                                        /*mapping=*/std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(forall.getTerminator());
      Value outArg = forall.getRegionOutArgs()[0];
      SmallVector<OpFoldResult> offsets, sizes;
      FlashBlockBuilder builder(rewriter, loc, p, forall.getInductionVars());
      Value tile = builder.build(outArg, offsets, sizes);
      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, tile, outArg, offsets, sizes,
          SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
    }
    rewriter.replaceOp(op, forall.getResult(0));
    return success();
  }

  bool transposeKeys;
};

struct AttnFlashAttentionPass
    : public mlir::attn::impl::AttnFlashAttentionBase<AttnFlashAttentionPass> {
  using AttnFlashAttentionBase::AttnFlashAttentionBase;

  void runOnOperation() override {
    if (blockQ < 1 || blockK < 1) {
      getOperation().emitError("attn-flash-attention: block-q and block-k "
                               "must be >= 1");
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // attn.mha -> projections and attn.sdpa, so that the attention inside
    // multi-head layers is blocked as well.
    populateDecomposeMhaPatterns(patterns);
    patterns.add<FlashSdpaLowering>(ctx, blockQ, blockK, transposeKeys);
    if (failed(applyFlashPatterns(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
