//===- RaisePositions.cpp - raise learned position embeddings -------------===//
//
// Exporters add learned positions as a table lookup of Range(start, start +
// S) broadcast over the batch: `x + wpe[arange(S)]`, or after a past of P
// tokens `x + wpe[arange(P, P + S)]`. That is attn.learned_pos, with the
// start as run-time `positions` (one per sequence) where it is not 0; the
// KV-cache binding (attn-bind-kv-cache) then gives each sequence its own.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatchers.h"
#include "Transforms/ProbeEvaluation.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEPOSITIONS
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

/// If `ids` ([B, T] integers) is `start[b] + t` (a linalg.generic reading
/// a [B] start per row and adding the column index, as attn-bind-kv-cache
/// writes position_ids): the start.
static Value matchRowStartPlusColumn(Value ids) {
  auto generic = ids.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic->getNumResults() != 1 || generic.getNumLoops() != 2 ||
      generic.getNumParallelLoops() != 2)
    return Value();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  MLIRContext *ctx = generic.getContext();
  if (maps[0] != AffineMap::get(2, 0, getAffineDimExpr(0, ctx)) ||
      !maps[1].isIdentity())
    return Value();
  Block &body = generic.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto trunc = yielded.getDefiningOp<arith::TruncIOp>())
    yielded = trunc.getIn();
  auto add = yielded.getDefiningOp<arith::AddIOp>();
  if (!add)
    return Value();
  auto isColumn = [](Value x) {
    auto cast = x.getDefiningOp<arith::IndexCastOp>();
    auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
    return index && index.getDim() == 1;
  };
  Value arg = body.getArgument(0);
  if (!((add.getLhs() == arg && isColumn(add.getRhs())) ||
        (add.getRhs() == arg && isColumn(add.getLhs()))))
    return Value();
  return generic.getDpsInputs()[0];
}

/// If `v` ([B, T, D]) is `f(concat(freqs, freqs))` with `f` the one-op
/// elementwise generic `Op` (math.cos / math.sin): the concatenation.
template <typename Op> static Value matchTrigOfEmbedding(Value v) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  Block &body = generic.getRegion().front();
  auto op = body.getTerminator()->getOperand(0).getDefiningOp<Op>();
  if (!op || op->getOperand(0) != body.getArgument(0))
    return Value();
  return generic.getDpsInputs()[0];
}

/// If `v` ([B, H, T, D]) is a [B, T, D] value broadcast over the heads:
/// that value.
static Value matchHeadBroadcast(Value v) {
  auto broadcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || !broadcast.hasPureTensorSemantics() ||
      broadcast.getDimensions() != ArrayRef<int64_t>{1})
    return Value();
  return stripUnitReshapes(broadcast.getInput());
}

/// The base of `freqs` if they are `base^(-2i / R)` (R = 2 * size) for a
/// base within float rounding of an integer (rope_theta: 10000, 500000).
static std::optional<double> baseOf(ArrayRef<double> freqs) {
  int64_t half = freqs.size();
  if (half < 2 || freqs[1] <= 0.0 || freqs[1] >= 1.0)
    return std::nullopt;
  // From the smallest frequency (best conditioned); exporters round
  // inv_freq to float.
  double base =
      std::pow(freqs[half - 1], -static_cast<double>(half) / (half - 1));
  if (std::abs(base - std::round(base)) <= 1e-5 * base)
    base = std::round(base);
  for (int64_t i = 0; i < half; ++i) {
    double want = std::pow(base, -2.0 * i / (2 * half));
    if (std::abs(freqs[i] - want) > 1e-6 * want)
      return std::nullopt;
  }
  return base;
}

namespace {

/// x + broadcast(embedding(range(start, start + S), table)) with x
/// [B, S, D] -> attn.learned_pos x, table [positions(splat start)].
struct RaiseLearnedPositions : OpRewritePattern<linalg::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::AddOp op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    auto ins = matchBinary<linalg::AddOp>(result);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!ins || !type || type.getRank() != 3 ||
        !isa<FloatType>(type.getElementType()) || type.isDynamicDim(2))
      return failure();
    for (auto [x, pos] : {*ins, std::make_pair(ins->second, ins->first)}) {
      if (x.getType() != type)
        continue;
      // The table rows, broadcast over the batch.
      Value rows = stripUnitReshapes(pos);
      if (auto broadcast = rows.getDefiningOp<linalg::BroadcastOp>()) {
        if (!broadcast.hasPureTensorSemantics() ||
            broadcast.getDimensions() != ArrayRef<int64_t>{0})
          continue;
        rows = stripUnitReshapes(broadcast.getInput());
      }
      auto lookup = rows.getDefiningOp<EmbeddingOp>();
      if (!lookup)
        continue;
      Value ids = stripUnitReshapes(lookup.getIds());
      auto idsType = cast<RankedTensorType>(ids.getType());
      std::optional<OpFoldResult> start = matchRangeStart(ids);
      if (!start || idsType.getRank() != 1 || !sameDim(ids, 0, x, 1) ||
          cast<RankedTensorType>(lookup.getTable().getType()).getDimSize(1) !=
              type.getDimSize(2))
        continue;
      Location loc = op.getLoc();
      Value positions;
      std::optional<int64_t> constant = getConstantIntValue(*start);
      if (!constant || *constant != 0) {
        // One start per sequence, all equal here.
        Type i64 = rewriter.getI64Type();
        Value s = constant ? arith::ConstantIntOp::create(rewriter, loc, i64,
                                                          *constant)
                                 .getResult()
                           : cast<Value>(*start);
        if (s.getType() != i64)
          s = arith::ExtSIOp::create(rewriter, loc, i64, s);
        SmallVector<OpFoldResult> batch = {
            tensor::getMixedSize(rewriter, loc, x, 0)};
        Value empty = tensor::EmptyOp::create(rewriter, loc, batch, i64);
        positions = linalg::FillOp::create(rewriter, loc, s, empty).result();
      }
      rewriter.replaceOpWithNewOp<LearnedPosOp>(op, x, lookup.getTable(),
                                                positions, /*offset=*/0);
      return success();
    }
    return failure();
  }
};

/// Rotary positions as transformers' LLaMA computes and exports them:
///
///   freqs = transpose(inv_freq[None, :, None] @ float(ids[:, None, :]))
///   emb = concat(freqs, freqs); cos, sin = cos(emb), sin(emb)
///   y = x * cos[:, None] + concat(-x[..., D/2:], x[..., :D/2]) * sin[:, None]
///
/// with ids `positions[b] + t` (position_ids bound by attn-bind-kv-cache)
/// and inv_freq the constant `base^(-2i / D)` -> attn.rotary x positions,
/// base. Other position ids (arbitrary per token) are left as computed.
template <typename AddOpT>
struct RaiseRotaryPositions : OpRewritePattern<AddOpT> {
  using OpRewritePattern<AddOpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOpT op,
                                PatternRewriter &rewriter) const override {
    for (const RotaryTerms &terms : matchRotaryTerms(op)) {
      Value cosB3 = matchHeadBroadcast(terms.cosTable);
      Value sinB3 = matchHeadBroadcast(terms.sinTable);
      Value cosEmb = cosB3 ? matchTrigOfEmbedding<math::CosOp>(cosB3) : Value();
      if (!cosEmb || !sinB3 ||
          matchTrigOfEmbedding<math::SinOp>(sinB3) != cosEmb)
        continue;
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      std::optional<std::pair<Value, double>> found =
          matchFrequencies(cosEmb, type.getDimSize(3) / 2);
      if (!found)
        return rewriter.notifyMatchFailure(op, "not base^(-2i/D) * ids");
      rewriter.replaceOpWithNewOp<RotaryOp>(
          op, type, terms.x, found->first,
          rewriter.getF64FloatAttr(found->second),
          rewriter.getI64IntegerAttr(0), /*rotary_dim=*/IntegerAttr(),
          /*inv_freq=*/DenseF64ArrayAttr(), rewriter.getF64FloatAttr(1.0),
          /*length_threshold=*/IntegerAttr(),
          /*long_inv_freq=*/DenseF64ArrayAttr(), /*ntk_factor=*/FloatAttr());
      return success();
    }
    return failure();
  }

private:
  /// `emb` = concat(f, f) with f = transpose(inv_freq x float(ids)):
  /// the start positions of ids and the base of inv_freq.
  static std::optional<std::pair<Value, double>>
  matchFrequencies(Value emb, int64_t half) {
    auto concat = emb.getDefiningOp<tensor::ConcatOp>();
    if (!concat || concat.getDim() != 2 || concat.getInputs().size() != 2 ||
        concat.getInputs()[0] != concat.getInputs()[1])
      return std::nullopt;
    auto transpose = concat.getInputs()[0].getDefiningOp<linalg::TransposeOp>();
    if (!transpose || !transpose.hasPureTensorSemantics() ||
        transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1})
      return std::nullopt;
    auto matmul = transpose.getInput().getDefiningOp<linalg::BatchMatmulOp>();
    if (!matmul || !matmul.hasPureTensorSemantics() ||
        !isZeroTensor(matmul.getDpsInits()[0]))
      return std::nullopt;
    // inv_freq [B, half, 1] broadcast over the batch.
    Value invFreq = matmul.getDpsInputs()[0];
    if (auto broadcast = invFreq.getDefiningOp<linalg::BroadcastOp>()) {
      if (broadcast.getDimensions() != ArrayRef<int64_t>{0})
        return std::nullopt;
      invFreq = stripUnitReshapes(broadcast.getInput());
    }
    // A constant [..., half, 1] (folded over a static batch: each [half, 1]
    // the same).
    DenseFPElementsAttr values;
    if (!matchPattern(invFreq, m_Constant(&values)) || half < 2)
      return std::nullopt;
    ArrayRef<int64_t> shape = values.getType().getShape();
    if (shape.size() < 2 || shape.back() != 1 ||
        shape[shape.size() - 2] != half)
      return std::nullopt;
    SmallVector<double> freqs;
    for (auto [i, f] : llvm::enumerate(values.getValues<APFloat>())) {
      if (static_cast<int64_t>(i) < half)
        freqs.push_back(f.convertToDouble());
      else if (f.convertToDouble() != freqs[i % half])
        return std::nullopt;
    }
    std::optional<double> base = baseOf(freqs);
    if (!base)
      return std::nullopt;
    // float(ids) [B, 1, T].
    Value ids = stripUnitReshapes(matmul.getDpsInputs()[1]);
    auto toFloat = ids.getDefiningOp<linalg::GenericOp>();
    if (!toFloat || toFloat.getNumDpsInputs() != 1)
      return std::nullopt;
    Block &body = toFloat.getRegion().front();
    auto cast =
        body.getTerminator()->getOperand(0).getDefiningOp<arith::SIToFPOp>();
    if (!cast || cast.getIn() != body.getArgument(0) ||
        !llvm::all_of(toFloat.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return std::nullopt;
    Value start =
        matchRowStartPlusColumn(stripUnitReshapes(toFloat.getDpsInputs()[0]));
    auto startType =
        start ? dyn_cast<RankedTensorType>(start.getType()) : nullptr;
    if (!startType || !startType.getElementType().isInteger(64))
      return std::nullopt;
    return std::make_pair(start, *base);
  }
};

/// Rotary positions whatever graph computes the tables: `x * C +
/// rotate_half(x) * S` with C and S depending only on the sequence length,
/// probed on the host (probeRotaryTables) to be `scale * cos/sin(t *
/// inv_freq)` for token index t -> attn.rotary from position 0. This covers
/// the tables as today's exporters compute them from a range of the
/// sequence length, at any batch.
/// (The addition is linalg.add as imported, attn.add once residual raising
/// ran.)
template <typename AddOpT> struct RaiseRotaryTables : OpRewritePattern<AddOpT> {
  RaiseRotaryTables(MLIRContext *ctx)
      : OpRewritePattern<AddOpT>(ctx, /*benefit=*/0) {}

  LogicalResult matchAndRewrite(AddOpT op,
                                PatternRewriter &rewriter) const override {
    auto func = op->template getParentOfType<func::FuncOp>();
    if (!func || op->getParentOp() != func.getOperation())
      return failure();
    for (const RotaryTerms &terms : matchRotaryTerms(op)) {
      std::string why;
      FailureOr<RotaryProbe> probe = probeRotaryTables(
          terms.cosTable, terms.sinTable, &func.getBody().front(), why);
      if (failed(probe))
        return rewriter.notifyMatchFailure(op, why);
      std::optional<double> base = baseOf(probe->invFreq);
      rewriter.replaceOpWithNewOp<RotaryOp>(
          op, op->getResult(0).getType(), terms.x, /*positions=*/Value(),
          rewriter.getF64FloatAttr(base ? *base : 10000.0),
          rewriter.getI64IntegerAttr(0), /*rotary_dim=*/IntegerAttr(),
          base ? DenseF64ArrayAttr()
               : rewriter.getDenseF64ArrayAttr(probe->invFreq),
          rewriter.getF64FloatAttr(probe->scale),
          /*length_threshold=*/IntegerAttr(),
          /*long_inv_freq=*/DenseF64ArrayAttr(), /*ntk_factor=*/FloatAttr());
      return success();
    }
    return failure();
  }
};

struct AttnRaisePositionsPass
    : raise::RaisingPass<
          AttnRaisePositionsPass, attn::impl::AttnRaisePositionsBase,
          RaiseLearnedPositions, RaiseRotaryPositions<AddOp>,
          RaiseRotaryPositions<linalg::AddOp>, RaiseRotaryTables<AddOp>,
          RaiseRotaryTables<linalg::AddOp>> {};

} // namespace
