//===- Embeddings.cpp - embeddings and positions to linalg ----------------===//

#include "Conversion/AttnToLinalg/Patterns.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    auto type = op.getType();
    unsigned rank = type.getRank();
    Value table = op.getTable();
    int64_t vocab = op.getTable().getType().getDimSize(0);
    SmallVector<unsigned> outer;
    for (unsigned d = 0; d + 1 < rank; ++d)
      outer.push_back(d);
    SmallVector<IteratorType> iters(rank, IteratorType::parallel);
    // The result is the ids' shape plus the table's row width; batch and
    // sequence may be dynamic.
    Value init;
    if (type.hasStaticShape()) {
      init = lb.empty(type.getShape(), type.getElementType());
    } else {
      SmallVector<OpFoldResult> sizes = lb.sizes(op.getIds());
      sizes.push_back(rewriter.getIndexAttr(type.getShape().back()));
      init = lb.empty(sizes, type.getElementType());
    }
    // Ids outside [0, vocab) are clamped rather than read out of bounds.
    Value y = lb.generic(
        op.getIds(), init, {lb.dims(rank, outer), lb.identity(rank)}, iters,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value id =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
          id = arith::MaxSIOp::create(b, loc, id,
                                      LinalgBuilder::constIndex(b, loc, 0));
          id = arith::MinSIOp::create(
              b, loc, id, LinalgBuilder::constIndex(b, loc, vocab - 1));
          Value col = linalg::IndexOp::create(b, loc, rank - 1);
          return tensor::ExtractOp::create(b, loc, table, ValueRange{id, col});
        });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// An index value converted to f32.
static Value indexToF32(OpBuilder &b, Location loc, Value index) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, b.getF32Type(), i64);
}

static FailureOr<Value> lowerSinusoidalPos(SinusoidalPosOp op,
                                           LinalgBuilder &lb,
                                           PatternRewriter &rewriter) {
  int64_t d = op.getType().getDimSize(2);
  int64_t offset = static_cast<int64_t>(op.getOffset());
  Value positions = op.getPositions();
  Value x = lb.toF32(op.getInput());
  Value y = lb.pointwise(
      x, [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value s = linalg::IndexOp::create(b, loc, 1);
        Value c = linalg::IndexOp::create(b, loc, 2);
        Value pos = arith::AddIOp::create(
            b, loc, s, LinalgBuilder::constIndex(b, loc, offset));
        // Run-time starts: the encoding is computed, not read from a
        // table, so any position is in range (no clamp).
        if (positions) {
          Value start = tensor::ExtractOp::create(
              b, loc, positions,
              ValueRange{linalg::IndexOp::create(b, loc, 0)});
          pos = arith::AddIOp::create(
              b, loc, pos,
              arith::IndexCastOp::create(b, loc, b.getIndexType(), start));
        }
        Value two = LinalgBuilder::constIndex(b, loc, 2);
        Value pair = arith::DivUIOp::create(b, loc, c, two);
        Value isCos =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                  arith::RemUIOp::create(b, loc, c, two),
                                  LinalgBuilder::constIndex(b, loc, 0));
        // freq = exp(-(2i/D) ln 10000)
        Value twoI =
            mulF(b, loc, indexToF32(b, loc, pair),
                 LinalgBuilder::constF32(b, loc, 2.0 / static_cast<double>(d)));
        Value freq = math::ExpOp::create(
            b, loc,
            mulF(b, loc, twoI,
                 LinalgBuilder::constF32(b, loc, -std::log(10000.0))));
        Value angle = mulF(b, loc, indexToF32(b, loc, pos), freq);
        Value pe = arith::SelectOp::create(b, loc, isCos,
                                           math::CosOp::create(b, loc, angle),
                                           math::SinOp::create(b, loc, angle));
        return addF(b, loc, args[0], pe);
      });
  return y;
}

/// `offset + positions[batch] + seq` as an index (inside a linalg body whose
/// loops 0 and `seqDim` are batch and sequence), clamped to [0, limit].
static Value runTimePosition(OpBuilder &b, Location loc, Value positions,
                             unsigned seqDim, int64_t offset, int64_t limit) {
  Value batch = linalg::IndexOp::create(b, loc, 0);
  Value start = tensor::ExtractOp::create(b, loc, positions, batch);
  start = arith::IndexCastOp::create(b, loc, b.getIndexType(), start);
  Value pos = arith::AddIOp::create(b, loc, start,
                                    linalg::IndexOp::create(b, loc, seqDim));
  pos = arith::AddIOp::create(b, loc, pos,
                              LinalgBuilder::constIndex(b, loc, offset));
  pos =
      arith::MaxSIOp::create(b, loc, pos, LinalgBuilder::constIndex(b, loc, 0));
  return arith::MinSIOp::create(b, loc, pos,
                                LinalgBuilder::constIndex(b, loc, limit));
}

static FailureOr<Value> lowerLearnedPos(LearnedPosOp op, LinalgBuilder &lb,
                                        PatternRewriter &rewriter) {
  auto type = op.getType();
  int64_t s = type.getDimSize(1), d = type.getDimSize(2);
  int64_t offset = static_cast<int64_t>(op.getOffset());
  Value positions = op.getPositions();
  if (positions || ShapedType::isDynamic(s)) {
    // Rows chosen at run time: read the table per element, at the position
    // the input says, or at offset + s for a run-time sequence length (the
    // verifier can only check static lengths against the table, so a slice
    // of run-time size could read past its end), clamped into the table.
    Value table = op.getTable();
    int64_t rows = op.getTable().getType().getDimSize(0);
    Value x = lb.toF32(op.getInput());
    return lb.generic(
        x, lb.emptyLike(x, lb.f32()), {lb.identity(3), lb.identity(3)},
        SmallVector<IteratorType>(3, IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value row;
          if (positions) {
            row = runTimePosition(b, loc, positions, 1, offset, rows - 1);
          } else {
            row = arith::AddIOp::create(
                b, loc, linalg::IndexOp::create(b, loc, 1),
                LinalgBuilder::constIndex(b, loc, offset));
            row = arith::MinSIOp::create(
                b, loc, row, LinalgBuilder::constIndex(b, loc, rows - 1));
          }
          Value col = linalg::IndexOp::create(b, loc, 2);
          Value v =
              tensor::ExtractOp::create(b, loc, table, ValueRange{row, col});
          if (!v.getType().isF32())
            v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
          return addF(b, loc, args[0], v);
        });
  }
  OpFoldResult seqLen = rewriter.getIndexAttr(s);
  Value rows = tensor::ExtractSliceOp::create(
      rewriter, op.getLoc(), op.getTable(),
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(offset),
                             rewriter.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{seqLen, rewriter.getIndexAttr(d)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                             rewriter.getIndexAttr(1)});
  Value x = lb.toF32(op.getInput());
  Value table = lb.toF32(rows);
  SmallVector<IteratorType> iters(3, IteratorType::parallel);
  Value y = lb.generic({x, table}, lb.emptyLike(x, lb.f32()),
                       {lb.identity(3), lb.dims(3, {1, 2}), lb.identity(3)},
                       iters, [](OpBuilder &b, Location loc, ValueRange args) {
                         return addF(b, loc, args[0], args[1]);
                       });
  return y;
}

static FailureOr<Value> lowerRotary(RotaryOp op, LinalgBuilder &lb,
                                    PatternRewriter &rewriter) {
  auto type = op.getType();
  int64_t dh = type.getDimSize(3);
  int64_t rotary =
      op.getRotaryDim() ? static_cast<int64_t>(*op.getRotaryDim()) : dh;
  int64_t half = rotary / 2;
  int64_t offset = static_cast<int64_t>(op.getOffset());
  double logBase = std::log(op.getBase().convertToDouble());
  Value positions = op.getPositions();
  Value x = lb.toF32(op.getInput());
  // Scaled frequencies: tables of R / 2 values, read by pair index.
  auto f32Table = [&](std::optional<ArrayRef<double>> freqs) -> Value {
    if (!freqs)
      return Value();
    SmallVector<float> values(freqs->begin(), freqs->end());
    auto tableType = RankedTensorType::get(
        {static_cast<int64_t>(values.size())}, rewriter.getF32Type());
    return arith::ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(tableType, ArrayRef<float>(values)));
  };
  Value invFreqTable = f32Table(op.getInvFreq());
  // Frequencies chosen by the row's run-time length (longrope, dynamic
  // NTK): the long table, or the sequence extent S for the grown base.
  std::optional<int64_t> threshold;
  if (std::optional<uint64_t> t = op.getLengthThreshold())
    threshold = static_cast<int64_t>(*t);
  Value longTable = f32Table(op.getLongInvFreq());
  std::optional<double> ntkFactor;
  if (std::optional<APFloat> f = op.getNtkFactor())
    ntkFactor = f->convertToDouble();
  Value seqExtent;
  if (threshold)
    seqExtent =
        getValueOrCreateConstantIndexOp(rewriter, op.getLoc(), lb.sizes(x)[2]);
  double scale = op.getScale().convertToDouble();
  Value y = lb.pointwise(
      x, [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value bIdx = linalg::IndexOp::create(b, loc, 0);
        Value hIdx = linalg::IndexOp::create(b, loc, 1);
        Value sIdx = linalg::IndexOp::create(b, loc, 2);
        Value c = linalg::IndexOp::create(b, loc, 3);
        Value halfV = LinalgBuilder::constIndex(b, loc, half);
        Value inRotary =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                  LinalgBuilder::constIndex(b, loc, rotary));
        Value firstHalf =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c, halfV);
        // Pair index i and partner channel; clamp the partner for channels
        // past the rotary part, where the result is x itself.
        Value i = arith::RemUIOp::create(b, loc, c, halfV);
        Value partner = arith::SelectOp::create(
            b, loc, firstHalf, arith::AddIOp::create(b, loc, c, halfV),
            arith::SubIOp::create(b, loc, c, halfV));
        partner = arith::SelectOp::create(b, loc, inRotary, partner, c);
        Value other = tensor::ExtractOp::create(
            b, loc, x, ValueRange{bIdx, hIdx, sIdx, partner});
        Value pos =
            positions
                ? runTimePosition(b, loc, positions, 2, offset,
                                  std::numeric_limits<int32_t>::max())
                : arith::AddIOp::create(
                      b, loc, sIdx, LinalgBuilder::constIndex(b, loc, offset));
        // theta = p * base^(-2i/R), or p * inv_freq[i] when scaled.
        Value freq;
        if (invFreqTable) {
          freq = tensor::ExtractOp::create(b, loc, invFreqTable, ValueRange{i});
        } else {
          Value expo =
              mulF(b, loc, indexToF32(b, loc, i),
                   LinalgBuilder::constF32(
                       b, loc, -2.0 * logBase / static_cast<double>(rotary)));
          freq = math::ExpOp::create(b, loc, expo);
        }
        if (threshold) {
          // The row's length: its last position plus one.
          Value length = arith::AddIOp::create(
              b, loc, seqExtent, LinalgBuilder::constIndex(b, loc, offset));
          if (positions) {
            Value start = tensor::ExtractOp::create(b, loc, positions, bIdx);
            start = arith::IndexCastOp::create(b, loc, b.getIndexType(), start);
            length = arith::AddIOp::create(b, loc, length, start);
          }
          Value isLong = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sgt, length,
              LinalgBuilder::constIndex(b, loc, *threshold));
          Value longFreq;
          if (longTable) {
            longFreq =
                tensor::ExtractOp::create(b, loc, longTable, ValueRange{i});
          } else {
            // As transformers, in float32: base * (f * L / N - (f - 1)) ^
            // (R / (R - 2)), then 1 / base_L ^ (2i / R). One statement per
            // op keeps their order fixed.
            auto constF = [&](double v) {
              return LinalgBuilder::constF32(b, loc, v);
            };
            double f = *ntkFactor;
            Value lengthF = indexToF32(b, loc, length);
            Value ratio = mulF(b, loc, constF(f), lengthF);
            ratio =
                divF(b, loc, ratio, constF(static_cast<double>(*threshold)));
            ratio = subF(b, loc, ratio, constF(f - 1.0));
            double growth =
                static_cast<double>(rotary) / static_cast<double>(rotary - 2);
            Value grown = math::PowFOp::create(b, loc, ratio, constF(growth));
            grown = mulF(b, loc, constF(op.getBase().convertToDouble()), grown);
            Value exponent = indexToF32(b, loc, i);
            exponent = mulF(b, loc, exponent, constF(2.0));
            exponent =
                divF(b, loc, exponent, constF(static_cast<double>(rotary)));
            Value power = math::PowFOp::create(b, loc, grown, exponent);
            longFreq = divF(b, loc, constF(1.0), power);
          }
          freq = arith::SelectOp::create(b, loc, isLong, longFreq, freq);
        }
        Value theta = mulF(b, loc, indexToF32(b, loc, pos), freq);
        Value cosT = math::CosOp::create(b, loc, theta);
        Value sinT = math::SinOp::create(b, loc, theta);
        if (scale != 1.0) {
          Value factor = LinalgBuilder::constF32(b, loc, scale);
          cosT = mulF(b, loc, cosT, factor);
          sinT = mulF(b, loc, sinT, factor);
        }
        Value signedSin = arith::SelectOp::create(
            b, loc, firstHalf, arith::NegFOp::create(b, loc, sinT), sinT);
        Value rotated = addF(b, loc, mulF(b, loc, args[0], cosT),
                             mulF(b, loc, other, signedSin));
        return arith::SelectOp::create(b, loc, inRotary, rotated, args[0]);
      });
  return y;
}

} // namespace

void mlir::attn::populateEmbeddingsToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<EmbeddingLowering>(patterns.getContext());
  addF32Lowering(patterns, lowerSinusoidalPos);
  addF32Lowering(patterns, lowerLearnedPos);
  addF32Lowering(patterns, lowerRotary);
}
