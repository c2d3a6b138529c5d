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
    // Reductions are f32; elementwise ops may also read and write integers
    // of whole bytes (a quantization's f32 rows to i8) and f16/bf16 (copies
    // and conversions only, see below). Not i1 buffers: a vector of i1 is
    // stored as bits, a memref of i1 as bytes.
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return false;
    Type elem = type.getElementType();
    bool wholeBytes =
        elem.isIntOrFloat() && elem.getIntOrFloatBitWidth() % 8 == 0;
    if (!elem.isF32() && (reduce || !wholeBytes ||
                          !(elem.isInteger() || elem.isF16() || elem.isBF16())))
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
  // f16/bf16 values are only converted: their arithmetic may need
  // instructions the host lacks.
  auto isHalf = [](Type t) { return t.isF16() || t.isBF16(); };
  for (Operation &inside : body.without_terminator()) {
    bool elementwise = isa_and_nonnull<arith::ArithDialect, math::MathDialect>(
                           inside.getDialect()) ||
                       isa<linalg::IndexOp>(inside);
    if (inside.getNumRegions() != 0 || !elementwise)
      return false;
    for (Type t : inside.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return false;
    if (!isa<arith::ExtFOp, arith::TruncFOp>(inside) &&
        (llvm::any_of(inside.getResultTypes(), isHalf) ||
         llvm::any_of(inside.getOperandTypes(), isHalf)))
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

/// Matches a generic whose innermost loop is parallel, with reduction loops
/// right before it (parallel ones before those): each lane of the innermost
/// dimension is reduced on its own, in the generic's order, so any body of
/// arith and math ops vectorizes along it with the outputs held in vector
/// registers across the reduction loops (a quantization's running row
/// minimum and maximum over 16 lanes). f32 only; the innermost extent is
/// static and a multiple of `vl`. Returns the first reduction loop.
static std::optional<unsigned> matchLaneReduction(linalg::GenericOp op,
                                                  int64_t vl) {
  unsigned loops = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 || loops < 2)
    return std::nullopt;
  unsigned inner = loops - 1;
  auto iters = op.getIteratorTypesArray();
  if (iters[inner] != utils::IteratorType::parallel)
    return std::nullopt;
  unsigned first = inner;
  while (first > 0 && iters[first - 1] == utils::IteratorType::reduction)
    --first;
  if (first == inner)
    return std::nullopt;
  for (unsigned d = 0; d < first; ++d)
    if (iters[d] != utils::IteratorType::parallel)
      return std::nullopt;
  int64_t extent = op.getStaticLoopRanges()[inner];
  if (ShapedType::isDynamic(extent) || extent % vl != 0)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32())
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool usesInner;
    if (!isProjectionWithInnerLast(map, inner, usesInner))
      return std::nullopt;
    if (usesInner && !hasUnitInnerStride(type))
      return std::nullopt;
    // Outputs: one vector per lane group, the same through the reduction.
    if (op.isDpsInit(&operand) &&
        (!usesInner || llvm::any_of(map.getResults(), [&](AffineExpr e) {
          unsigned d = cast<AffineDimExpr>(e).getPosition();
          return d >= first && d < inner;
        })))
      return std::nullopt;
  }
  for (Operation &inside : op.getRegion().front().without_terminator()) {
    bool elementwise = isa_and_nonnull<arith::ArithDialect, math::MathDialect>(
        inside.getDialect());
    if (inside.getNumRegions() != 0 || !elementwise)
      return std::nullopt;
    for (Type t : inside.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return std::nullopt;
  }
  return first;
}

/// One loop of a nest: scf.parallel when `parallel` (the threads share it),
/// else scf.for; `body` builds the inside for the induction variable.
static void buildLoop(OpBuilder &b, Location loc, Value lb, Value ub,
                      Value step, bool parallel,
                      function_ref<void(OpBuilder &, Value)> body) {
  if (parallel) {
    scf::ParallelOp::create(
        b, loc, ValueRange{lb}, ValueRange{ub}, ValueRange{step},
        [&](OpBuilder &nb, Location, ValueRange iv) { body(nb, iv.front()); });
    return;
  }
  scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                     [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                       body(nb, iv);
                       scf::YieldOp::create(nb, loc);
                     });
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
  /// With a lane reduction (matchLaneReduction): its first reduction loop.
  std::optional<unsigned> laneReduction;

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
          auto load = [&](Value base, ValueRange idx) -> Value {
            auto type = VectorType::get(
                {vl}, cast<MemRefType>(base.getType()).getElementType());
            if (mask) {
              Value zero = arith::ConstantOp::create(
                  lb, loc, type, cast<TypedAttr>(lb.getZeroAttr(type)));
              return vector::MaskedLoadOp::create(lb, loc, type, base, idx,
                                                  mask, zero);
            }
            return vector::LoadOp::create(lb, loc, type, base, idx);
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
    // The lanes are combined with the combiner's own flags: a sum that may
    // reassociate becomes a shuffle tree, a maximum without NaN and signed
    // zeros plain vmaxps.
    arith::FastMathFlags flags = arith::FastMathFlags::none;
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(reduction.combiner))
      if (arith::FastMathFlagsAttr attr = fm.getFastMathFlagsAttr())
        flags = attr.getValue();
    Value rowValue = vector::ReductionOp::create(nb, loc, reduction.kind,
                                                 loop.getResult(0), flags);
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

  /// A lane reduction for the outer ivs `ivs`: per group of vl lanes, the
  /// outputs are loaded into vectors, carried through the reduction loops
  /// (the body cloned on vectors at each step), and stored once.
  void emitLanes(OpBuilder &nb, SmallVector<Value> ivs,
                 ArrayRef<Range> ranges) {
    unsigned inner = op.getNumLoops() - 1;
    Block &body = op.getRegion().front();
    Value extent = getValueOrCreateConstantIndexOp(nb, loc, ranges[inner].size);
    scf::ForOp::create(
        nb, loc, cst(nb, 0), extent, cst(nb, vl), ValueRange{},
        [&](OpBuilder &lb, Location, Value j, ValueRange) {
          // Every loop's iv; the reduction ones are set in their loops.
          SmallVector<Value> all(op.getNumLoops());
          llvm::copy(ivs, all.begin());
          all[inner] = j;
          SmallVector<Value> accs;
          for (OpOperand &init : op.getDpsInitsMutable())
            accs.push_back(vector::LoadOp::create(
                lb, loc, VectorType::get({vl}, lb.getF32Type()), init.get(),
                indices(init, all)));
          std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)>
              reduce = [&](OpBuilder &rb, unsigned d,
                           ValueRange current) -> SmallVector<Value> {
            if (d == inner) {
              IRMapping map;
              for (OpOperand *input : op.getDpsInputOperands()) {
                BlockArgument arg = body.getArgument(input->getOperandNumber());
                if (arg.use_empty())
                  continue;
                if (usesInner(*input))
                  map.map(arg,
                          vector::LoadOp::create(
                              rb, loc, VectorType::get({vl}, rb.getF32Type()),
                              input->get(), indices(*input, all)));
                else
                  map.map(arg, memref::LoadOp::create(rb, loc, input->get(),
                                                      indices(*input, all)));
              }
              for (auto [i, acc] : llvm::enumerate(current))
                map.map(body.getArgument(op.getNumDpsInputs() + i), acc);
              cloneBody(rb, all, map);
              SmallVector<Value> next;
              for (Value v :
                   cast<linalg::YieldOp>(body.getTerminator()).getValues())
                next.push_back(broadcastIfScalar(rb, map.lookupOrDefault(v)));
              return next;
            }
            Value ub = getValueOrCreateConstantIndexOp(rb, loc, ranges[d].size);
            auto loop = scf::ForOp::create(
                rb, loc, cst(rb, 0), ub, cst(rb, 1), current,
                [&](OpBuilder &fb, Location, Value iv, ValueRange iter) {
                  all[d] = iv;
                  scf::YieldOp::create(fb, loc, reduce(fb, d + 1, iter));
                });
            return SmallVector<Value>(loop.getResults());
          };
          SmallVector<Value> results = reduce(lb, *laneReduction, accs);
          for (auto [init, result] :
               llvm::zip(op.getDpsInitsMutable(), results))
            vector::StoreOp::create(lb, loc, result, init.get(),
                                    indices(init, all));
          scf::YieldOp::create(lb, loc);
        });
  }

  void emit() {
    SmallVector<Range, 4> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    unsigned inner = op.getNumLoops() - 1;
    Value extent = getValueOrCreateConstantIndexOp(b, loc, ranges[inner].size);
    std::function<void(OpBuilder &, unsigned, SmallVector<Value>)> nest =
        [&](OpBuilder &nb, unsigned d, SmallVector<Value> ivs) {
          if (laneReduction && d == *laneReduction)
            return emitLanes(nb, ivs, ranges);
          if (d == inner)
            return emitRow(nb, ivs, extent);
          Value ub = getValueOrCreateConstantIndexOp(nb, loc, ranges[d].size);
          buildLoop(nb, loc, cst(nb, 0), ub, cst(nb, 1), parallelDim == d,
                    [&](OpBuilder &lb, Value iv) {
                      SmallVector<Value> next = ivs;
                      next.push_back(iv);
                      nest(lb, d + 1, next);
                    });
        };
    nest(b, 0, {});
  }
};

struct AttnCpuVectorizeRowsPass
    : public mlir::attn::impl::AttnCpuVectorizeRowsBase<
          AttnCpuVectorizeRowsPass> {
  using AttnCpuVectorizeRowsBase::AttnCpuVectorizeRowsBase;

  /// Whether `op`, of `elements` elements, may split a loop among threads:
  /// it is outside every parallel loop (no nested forks) and large enough.
  bool worthForking(Operation *op, int64_t elements) {
    return parallelMinElements > 0 && elements >= parallelMinElements &&
           !op->getParentOfType<scf::ParallelOp>() &&
           !op->getParentOfType<scf::ForallOp>();
  }

  /// The outer loop to split among threads: the first before `end` (the
  /// vector or reduction loops) with more than one iteration, when the op
  /// is outside every parallel loop and has at least
  /// `parallelMinElements` elements (static sizes only: a run-time size
  /// may well be one row, which a thread fork would not pay for).
  std::optional<unsigned> chooseParallelDim(linalg::GenericOp op,
                                            unsigned end) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return std::nullopt;
    int64_t elements = 1;
    for (int64_t r : ranges)
      elements *= r;
    if (!worthForking(op, elements))
      return std::nullopt;
    for (unsigned d = 0; d < end; ++d)
      if (ranges[d] > 1)
        return d;
    return std::nullopt;
  }

  /// A transpose that moves the innermost dimension, on static f32 buffers
  /// with unit inner strides, whose two swapped extents (the output dims
  /// that read and write the input's and the output's innermost one) are
  /// multiples of the vector width.
  bool isBlockTransposable(linalg::TransposeOp op) {
    auto in = dyn_cast<MemRefType>(op.getInput().getType());
    auto out = dyn_cast<MemRefType>(op.getInit().getType());
    if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
        !in.getElementType().isF32() || !out.getElementType().isF32() ||
        !hasUnitInnerStride(in) || !hasUnitInnerStride(out))
      return false;
    ArrayRef<int64_t> perm = op.getPermutation();
    int64_t last = static_cast<int64_t>(perm.size()) - 1;
    int64_t q = llvm::find(perm, last) - perm.begin();
    return out.getDimSize(q) % vectorWidth == 0 &&
           out.getDimSize(last) % vectorWidth == 0;
  }

  /// out[..., q = d, ..., s] = in[..., s, ..., d] in blocks of VL x VL: VL
  /// rows of the input (VL values of s, VL contiguous values of d) are
  /// loaded, transposed in registers (vector.transpose; the CPU pipeline
  /// lowers a 16 x 16 one to shuffles) and stored as VL contiguous rows of
  /// the output. The other dims are loops, the first of more than one
  /// iteration split among threads when the copy is large enough.
  void emitBlockTranspose(linalg::TransposeOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto out = cast<MemRefType>(op.getInit().getType());
    ArrayRef<int64_t> perm = op.getPermutation();
    unsigned rank = perm.size(), last = rank - 1;
    unsigned q = llvm::find(perm, int64_t(last)) - perm.begin();
    int64_t vl = vectorWidth;
    auto rowType = VectorType::get({vl}, b.getF32Type());
    auto blockType = VectorType::get({vl, vl}, b.getF32Type());
    std::optional<unsigned> parallel;
    if (worthForking(op, out.getNumElements()))
      for (unsigned d = 0; d < rank; ++d)
        if (d != q && d != last && out.getDimSize(d) > 1) {
          parallel = d;
          break;
        }
    // Output ivs, in output dim order; dims q and last hold block starts.
    std::function<void(OpBuilder &, unsigned, SmallVector<Value>)> nest =
        [&](OpBuilder &nb, unsigned d, SmallVector<Value> ivs) {
          if (d == rank) {
            attn::IndexArith a(nb, loc);
            Value block = arith::ConstantOp::create(
                nb, loc, blockType, cast<TypedAttr>(nb.getZeroAttr(blockType)));
            SmallVector<Value> inIdx(rank);
            for (unsigned k = 0; k < rank; ++k)
              inIdx[perm[k]] = ivs[k];
            for (int64_t t = 0; t < vl; ++t) {
              SmallVector<Value> idx = inIdx;
              idx[perm[last]] = a.add(ivs[last], t);
              Value row =
                  vector::LoadOp::create(nb, loc, rowType, op.getInput(), idx);
              block = vector::InsertOp::create(nb, loc, row, block, t);
            }
            Value transposed =
                vector::TransposeOp::create(nb, loc, block, {1, 0});
            for (int64_t u = 0; u < vl; ++u) {
              SmallVector<Value> idx = ivs;
              idx[q] = a.add(ivs[q], u);
              Value row = vector::ExtractOp::create(nb, loc, transposed, u);
              vector::StoreOp::create(nb, loc, row, op.getInit(), idx);
            }
            return;
          }
          attn::IndexArith a(nb, loc);
          int64_t step = d == q || d == last ? vl : 1;
          buildLoop(nb, loc, a.cst(0), a.cst(out.getDimSize(d)), a.cst(step),
                    parallel == d, [&](OpBuilder &bb, Value iv) {
                      SmallVector<Value> more = ivs;
                      more.push_back(iv);
                      nest(bb, d + 1, more);
                    });
        };
    nest(b, 0, {});
  }

  void runOnOperation() override {
    if (vectorWidth < 1) {
      getOperation().emitError(
          "attn-cpu-vectorize-rows: vector-width must be >= 1");
      return signalPassFailure();
    }
    // Transposes that keep the innermost dimension innermost copy
    // contiguous rows: as generics they get vector loops too. Those that
    // move it (keys transposed for Q K^T) become square vector transposes.
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::TransposeOp> transposes, moves;
    getOperation().walk([&](linalg::TransposeOp op) {
      ArrayRef<int64_t> perm = op.getPermutation();
      if (!op.hasPureBufferSemantics() || perm.empty())
        return;
      if (perm.back() == static_cast<int64_t>(perm.size()) - 1)
        transposes.push_back(op);
      else if (isBlockTransposable(op))
        moves.push_back(op);
    });
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op)))
        return signalPassFailure();
    }
    for (linalg::TransposeOp op : moves) {
      emitBlockTranspose(op);
      op.erase();
    }
    struct Match {
      linalg::GenericOp op;
      RowReduction reduction;
      std::optional<unsigned> laneReduction;
    };
    SmallVector<Match> matches;
    getOperation().walk([&](linalg::GenericOp op) {
      RowReduction reduction;
      if (matchRowGeneric(op, reduction))
        matches.push_back({op, reduction, std::nullopt});
      else if (std::optional<unsigned> first =
                   matchLaneReduction(op, vectorWidth))
        matches.push_back({op, reduction, first});
    });
    for (auto &[op, reduction, laneReduction] : matches) {
      OpBuilder b(op);
      bool reduce = !laneReduction && op.getIteratorTypesArray().back() ==
                                          utils::IteratorType::reduction;
      RowVectorizer vectorizer{b,         op.getLoc(), op,
                               reduction, vectorWidth, reduce};
      vectorizer.laneReduction = laneReduction;
      vectorizer.parallelDim =
          chooseParallelDim(op, laneReduction.value_or(op.getNumLoops() - 1));
      vectorizer.emit();
      op.erase();
    }
  }
};

} // namespace
