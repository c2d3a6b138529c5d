//===- CpuVectorizeRows.cpp - row-wise vector loops for linalg.generic ----===//
//
// After bufferization, the elementwise and row-reduction generics around
// the contractions (flash attention's scale and mask, row max, exp, row sum
// and rescaling; bias + activation epilogues) become scalar loops, and
// LLVM's vectorizers do not always pick the right loop: with a static inner
// trip count of 64 the row loop is fully unrolled first, and a row
// reduction then gets vectorized across rows with gathers. This pass emits
// the vector loop itself: scalar loops over the outer dimensions, and a
// vector<VLxf32> loop along the innermost one, which every operand that
// uses it must store contiguously. Operands that do not use it are loaded
// once per row and broadcast; the body is cloned on vectors. A reduction
// along the innermost dimension keeps a vector accumulator (started at the
// combiner's neutral element) and is reduced once per row.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/IndexArith.h"
#include "attnc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SmallBitVector.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUVECTORIZEROWS
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// The reduction of a row-reduction generic: `yield combiner(out, x)`.
struct RowReduction {
  Operation *combiner = nullptr;
  vector::CombiningKind kind;
  double neutral;
};

static bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// Whether `map` selects distinct loop dims, and whether it uses `inner`,
/// which must then be its last result (the operand's contiguous one).
static bool isProjectionWithInnerLast(AffineMap map, unsigned inner,
                                      bool &usesInner) {
  usesInner = false;
  llvm::SmallBitVector seen(map.getNumDims());
  for (AffineExpr e : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || seen.test(dim.getPosition()))
      return false;
    seen.set(dim.getPosition());
  }
  usesInner = seen.test(inner);
  return !usesInner ||
         cast<AffineDimExpr>(map.getResults().back()).getPosition() == inner;
}

/// Matches a generic that can be vectorized along its innermost loop;
/// `reduction` is filled in when that loop is a reduction.
static bool matchRowGeneric(linalg::GenericOp op, RowReduction &reduction) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() == 0)
    return false;
  unsigned inner = op.getNumLoops() - 1;
  auto iters = op.getIteratorTypesArray();
  for (unsigned d = 0; d < inner; ++d)
    if (iters[d] != utils::IteratorType::parallel)
      return false;
  bool reduce = iters[inner] == utils::IteratorType::reduction;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32())
      return false;
    bool usesInner;
    if (!isProjectionWithInnerLast(op.getMatchingIndexingMap(&operand), inner,
                                   usesInner))
      return false;
    if (usesInner && !hasUnitInnerStride(type))
      return false;
    bool isInit = op.isDpsInit(&operand);
    // The output is written along the row, or reduced into one value per row.
    if (isInit && usesInner == reduce)
      return false;
  }
  // An element count worth a vector loop: at least one full vector per row
  // when static.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!ShapedType::isDynamic(ranges[inner]) && ranges[inner] < 8)
    return false;
  Block &body = op.getRegion().front();
  for (Operation &inside : body.without_terminator()) {
    bool elementwise = isa_and_nonnull<arith::ArithDialect, math::MathDialect>(
                           inside.getDialect()) ||
                       isa<linalg::IndexOp>(inside);
    if (inside.getNumRegions() != 0 || !elementwise)
      return false;
    for (Type t : inside.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return false;
  }
  if (!reduce)
    return true;
  // yield combiner(out, x), with `out` used only there.
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  Value yielded = cast<linalg::YieldOp>(body.getTerminator()).getValues()[0];
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getBlock() != &body || !out.hasOneUse() ||
      *out.getUsers().begin() != combiner || combiner->getNumOperands() != 2)
    return false;
  double inf = std::numeric_limits<double>::infinity();
  if (auto add = dyn_cast<arith::AddFOp>(combiner)) {
    // Reassociating a sum is allowed only where the lowering said so.
    if (!bitEnumContainsAll(add.getFastmath(), arith::FastMathFlags::reassoc))
      return false;
    reduction = {combiner, vector::CombiningKind::ADD, 0.0};
  } else if (isa<arith::MaximumFOp>(combiner)) {
    reduction = {combiner, vector::CombiningKind::MAXIMUMF, -inf};
  } else if (isa<arith::MinimumFOp>(combiner)) {
    reduction = {combiner, vector::CombiningKind::MINIMUMF, inf};
  } else {
    return false;
  }
  return true;
}

struct RowVectorizer {
  OpBuilder &b;
  Location loc;
  linalg::GenericOp op;
  const RowReduction &reduction;
  int64_t vl;
  bool reduce;
  /// The outer loop that runs as scf.parallel, if any.
  std::optional<unsigned> parallelDim;

  Value cst(OpBuilder &nb, int64_t v) {
    return attn::IndexArith(nb, loc).cst(v);
  }

  /// Indices of `operand` for the loop ivs (the inner one is `j`).
  SmallVector<Value> indices(OpOperand &operand, ArrayRef<Value> ivs) {
    SmallVector<Value> result;
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
      result.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
    return result;
  }

  bool usesInner(OpOperand &operand) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return map.getNumResults() != 0 &&
           cast<AffineDimExpr>(map.getResults().back()).getPosition() ==
               op.getNumLoops() - 1;
  }

  Value broadcastIfScalar(OpBuilder &nb, Value v) {
    if (isa<VectorType>(v.getType()))
      return v;
    return vector::BroadcastOp::create(nb, loc,
                                       VectorType::get({vl}, v.getType()), v);
  }

  /// Clones the body on vectors for the row elements [j, j + vl). Values
  /// that do not depend on j stay scalar (and are broadcast where mixed).
  Value cloneBody(OpBuilder &nb, ArrayRef<Value> ivs, IRMapping &map) {
    Block &body = op.getRegion().front();
    for (Operation &inside : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inside)) {
        Value iv = ivs[index.getDim()];
        if (index.getDim() == op.getNumLoops() - 1) {
          auto vecType = VectorType::get({vl}, nb.getIndexType());
          Value step = vector::StepOp::create(nb, loc, vecType);
          iv = arith::AddIOp::create(nb, loc, broadcastIfScalar(nb, iv), step);
        }
        map.map(index.getResult(), iv);
        continue;
      }
      if (inside.getNumOperands() == 0) {
        nb.clone(inside, map);
        continue;
      }
      bool vector = llvm::any_of(inside.getOperands(), [&](Value v) {
        return isa<VectorType>(map.lookupOrDefault(v).getType());
      });
      if (!vector) {
        nb.clone(inside, map);
        continue;
      }
      for (Value v : inside.getOperands())
        map.map(v, broadcastIfScalar(nb, map.lookupOrDefault(v)));
      Operation *clone = nb.clone(inside, map);
      for (OpResult r : clone->getResults())
        r.setType(VectorType::get({vl}, r.getType()));
    }
    return map.lookupOrDefault(
        cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
  }

  /// The vector loop over one row; `ivs` holds the outer ivs.
  void emitRow(OpBuilder &nb, SmallVector<Value> ivs, Value extent) {
    Block &body = op.getRegion().front();
    auto vecType = VectorType::get({vl}, nb.getF32Type());
    std::optional<int64_t> staticExtent = getConstantIntValue(extent);
    bool masked = !staticExtent || *staticExtent % vl != 0;
    OpOperand *init = op.getDpsInitOperand(0);
    Value neutral;
    SmallVector<Value> iterInit;
    if (reduce) {
      neutral = arith::ConstantOp::create(
          nb, loc, vecType,
          DenseElementsAttr::get(vecType,
                                 static_cast<float>(reduction.neutral)));
      iterInit.push_back(neutral);
    }
    // Operands constant along the row: one scalar load per row.
    IRMapping rowMap;
    for (OpOperand *input : op.getDpsInputOperands())
      if (!usesInner(*input))
        rowMap.map(body.getArgument(input->getOperandNumber()),
                   memref::LoadOp::create(nb, loc, input->get(),
                                          indices(*input, ivs)));
    auto loop = scf::ForOp::create(
        nb, loc, cst(nb, 0), extent, cst(nb, vl), iterInit,
        [&](OpBuilder &lb, Location, Value j, ValueRange accs) {
          SmallVector<Value> all = ivs;
          all.push_back(j);
          Value mask;
          if (masked) {
            auto maskType = VectorType::get({vl}, lb.getI1Type());
            Value left = arith::SubIOp::create(lb, loc, extent, j);
            mask = vector::CreateMaskOp::create(lb, loc, maskType, left);
          }
          Value zero = arith::ConstantOp::create(
              lb, loc, vecType, DenseElementsAttr::get(vecType, 0.0f));
          auto load = [&](Value base, ValueRange idx) -> Value {
            if (mask)
              return vector::MaskedLoadOp::create(lb, loc, vecType, base, idx,
                                                  mask, zero);
            return vector::LoadOp::create(lb, loc, vecType, base, idx);
          };
          IRMapping map = rowMap;
          for (OpOperand &operand : op->getOpOperands()) {
            if (!usesInner(operand))
              continue;
            BlockArgument arg = body.getArgument(operand.getOperandNumber());
            if (!arg.use_empty())
              map.map(arg, load(operand.get(), indices(operand, all)));
          }
          if (reduce) {
            // The combiner takes the vector accumulator in place of `out`.
            map.map(body.getArgument(op.getNumDpsInputs()), accs[0]);
          }
          Value result = cloneBody(lb, all, map);
          result = broadcastIfScalar(lb, result);
          if (reduce) {
            // Lanes past the row end keep the accumulator.
            if (mask)
              result = arith::SelectOp::create(lb, loc, mask, result, accs[0]);
            scf::YieldOp::create(lb, loc, result);
            return;
          }
          SmallVector<Value> idx = indices(*init, all);
          if (mask)
            vector::MaskedStoreOp::create(lb, loc, init->get(), idx, mask,
                                          result);
          else
            vector::StoreOp::create(lb, loc, result, init->get(), idx);
          scf::YieldOp::create(lb, loc);
        });
    if (!reduce)
      return;
    Value rowValue =
        vector::ReductionOp::create(nb, loc, reduction.kind, loop.getResult(0));
    SmallVector<Value> idx = indices(*init, ivs);
    Value old = memref::LoadOp::create(nb, loc, init->get(), idx);
    IRMapping map;
    BlockArgument out = body.getArgument(op.getNumDpsInputs());
    Operation *combiner = reduction.combiner;
    Value other = combiner->getOperand(0) == out ? combiner->getOperand(1)
                                                 : combiner->getOperand(0);
    map.map(out, old);
    map.map(other, rowValue);
    Value combined = nb.clone(*combiner, map)->getResult(0);
    memref::StoreOp::create(nb, loc, combined, init->get(), idx);
  }

  void emit() {
    SmallVector<Range, 4> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    unsigned inner = op.getNumLoops() - 1;
    Value extent = getValueOrCreateConstantIndexOp(b, loc, ranges[inner].size);
    std::function<void(OpBuilder &, unsigned, SmallVector<Value>)> nest =
        [&](OpBuilder &nb, unsigned d, SmallVector<Value> ivs) {
          if (d == inner)
            return emitRow(nb, ivs, extent);
          Value ub = getValueOrCreateConstantIndexOp(nb, loc, ranges[d].size);
          if (parallelDim == d) {
            scf::ParallelOp::create(
                nb, loc, ValueRange{cst(nb, 0)}, ValueRange{ub},
                ValueRange{cst(nb, 1)},
                [&](OpBuilder &lb, Location, ValueRange iv) {
                  SmallVector<Value> next = ivs;
                  next.push_back(iv.front());
                  nest(lb, d + 1, next);
                });
            return;
          }
          scf::ForOp::create(
              nb, loc, cst(nb, 0), ub, cst(nb, 1), ValueRange{},
              [&](OpBuilder &lb, Location, Value iv, ValueRange) {
                SmallVector<Value> next = ivs;
                next.push_back(iv);
                nest(lb, d + 1, next);
                scf::YieldOp::create(lb, loc);
              });
        };
    nest(b, 0, {});
  }
};

struct AttnCpuVectorizeRowsPass
    : public mlir::attn::impl::AttnCpuVectorizeRowsBase<
          AttnCpuVectorizeRowsPass> {
  using AttnCpuVectorizeRowsBase::AttnCpuVectorizeRowsBase;

  /// The outer loop to split among threads: the first with more than one
  /// iteration, when the op is outside every parallel loop and has at least
  /// `parallelMinElements` elements (static sizes only: a run-time size
  /// may well be one row, which a thread fork would not pay for).
  std::optional<unsigned> chooseParallelDim(linalg::GenericOp op) {
    if (parallelMinElements <= 0 || op->getParentOfType<scf::ParallelOp>() ||
        op->getParentOfType<scf::ForallOp>())
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return std::nullopt;
    int64_t elements = 1;
    for (int64_t r : ranges)
      elements *= r;
    if (elements < parallelMinElements)
      return std::nullopt;
    for (unsigned d = 0; d + 1 < ranges.size(); ++d)
      if (ranges[d] > 1)
        return d;
    return std::nullopt;
  }

  void runOnOperation() override {
    if (vectorWidth < 1) {
      getOperation().emitError(
          "attn-cpu-vectorize-rows: vector-width must be >= 1");
      return signalPassFailure();
    }
    // Transposes that keep the innermost dimension innermost copy
    // contiguous rows: as generics they get vector loops too.
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      ArrayRef<int64_t> perm = op.getPermutation();
      if (op.hasPureBufferSemantics() && !perm.empty() &&
          perm.back() == static_cast<int64_t>(perm.size()) - 1)
        transposes.push_back(op);
    });
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op)))
        return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, RowReduction>> matches;
    getOperation().walk([&](linalg::GenericOp op) {
      RowReduction reduction;
      if (matchRowGeneric(op, reduction))
        matches.push_back({op, reduction});
    });
    for (auto &[op, reduction] : matches) {
      OpBuilder b(op);
      bool reduce =
          op.getIteratorTypesArray().back() == utils::IteratorType::reduction;
      RowVectorizer vectorizer{b,         op.getLoc(), op,
                               reduction, vectorWidth, reduce};
      vectorizer.parallelDim = chooseParallelDim(op);
      vectorizer.emit();
      op.erase();
    }
  }
};

} // namespace
