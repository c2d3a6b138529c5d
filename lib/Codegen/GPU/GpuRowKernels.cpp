//===- GpuRowKernels.cpp - one thread block per fused row -----------------===//
//
// A fused row loop (attn-fuse-rows: residual + layer norm, RMS norm) mapped
// as a parallel loop runs each row in one thread: a few blocks in all,
// uncoalesced accesses and serial reductions over the whole row. Here each
// row gets a thread block; see Passes.td for what is taken.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/IndexArith.h"
#include "attnc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUROWKERNELS
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

constexpr int64_t kWarpSize = 32;

/// What one op of a row body becomes in the kernel.
enum class RowOpKind {
  Clone,       // views, stack scalars, their fills and copies, scalar ops
  Scalar,      // a generic over unit loops only, on stack scalars
  Elementwise, // a generic parallel over the row: strided over the threads
  Reduction,   // a generic reducing the row into a stack scalar
};

struct RowOp {
  Operation *op;
  RowOpKind kind;
  int64_t loop = -1; // the row loop of a generic
};

struct RowBody {
  SmallVector<RowOp> ops;
  int64_t rowSize = 0;
  bool hasReduction = false;
};

static bool isUnitShaped(Type type) {
  auto shaped = dyn_cast<MemRefType>(type);
  return shaped && shaped.hasStaticShape() &&
         llvm::all_of(shaped.getShape(), [](int64_t d) { return d == 1; });
}

/// A stack scalar of the row: an alloca of unit shape inside the forall.
/// Every thread keeps its own copy.
static bool isStackScalar(Value v, scf::ForallOp forall) {
  auto alloca = v.getDefiningOp<memref::AllocaOp>();
  return alloca && forall->isProperAncestor(alloca) &&
         isUnitShaped(alloca.getType());
}

/// Indexing maps whose results are loop dims or the constant 0.
static bool hasSimpleMaps(linalg::GenericOp op) {
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults()) {
      if (isa<AffineDimExpr>(e))
        continue;
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!c || c.getValue() != 0)
        return false;
    }
  return true;
}

/// The yielded `out + x` or `max(out, x)` of a reduction body whose init
/// argument has no other use: the combiner of the threads' partials.
static Operation *getCombiner(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combiner = yield.getValues()[0].getDefiningOp();
  if (!combiner || combiner->getBlock() != &body ||
      !isa<arith::AddFOp, arith::MaximumFOp>(combiner))
    return nullptr;
  if (!out.hasOneUse() || *out.getUsers().begin() != combiner)
    return nullptr;
  return combiner;
}

/// The row loop (the one loop of size > 1) of a generic: -1 when every loop
/// has size 1, std::nullopt when several do or a size is dynamic.
static std::optional<int64_t> getRowLoop(linalg::GenericOp op, int64_t &size) {
  int64_t loop = -1;
  for (auto [i, range] : llvm::enumerate(op.getStaticLoopRanges())) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    if (range == 1)
      continue;
    if (loop != -1)
      return std::nullopt;
    loop = i;
    size = range;
  }
  return loop;
}

static std::optional<RowBody> matchRowBody(scf::ForallOp forall) {
  if (forall.getNumResults() != 0 || forall.getMapping() ||
      !isa<func::FuncOp>(forall->getParentOp()) ||
      !forall.getTerminator().getBody()->empty())
    return std::nullopt;
  // The row count may be dynamic (batch and sequence at run time): the
  // grid is then computed on the host.
  if (llvm::any_of(forall.getStaticLowerBound(),
                   [](int64_t v) { return v != 0; }) ||
      llvm::any_of(forall.getStaticStep(), [](int64_t v) { return v != 1; }))
    return std::nullopt;

  RowBody row;
  // Buffers the elementwise row loops write: element j of a row belongs to
  // thread j mod T, so only row loops may read them afterwards.
  llvm::SmallPtrSet<Value, 4> rowWritten;
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(
            op)) {
      row.ops.push_back({&op, RowOpKind::Clone});
      continue;
    }
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      if (!isUnitShaped(alloca.getType()))
        return std::nullopt;
      row.ops.push_back({&op, RowOpKind::Clone});
      continue;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (!fill.hasPureBufferSemantics() ||
          !isStackScalar(fill.getDpsInits()[0], forall))
        return std::nullopt;
      row.ops.push_back({&op, RowOpKind::Clone});
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      // Into a stack scalar, or from one into a buffer of unit shape that
      // nothing else in the row uses (the row's result: thread 0 writes it).
      Value target = copy.getTarget();
      bool toStack = isStackScalar(target, forall);
      if (!isUnitShaped(copy.getSource().getType()) ||
          !isUnitShaped(target.getType()) ||
          rowWritten.contains(copy.getSource()) ||
          (!toStack &&
           (!isStackScalar(copy.getSource(), forall) || !target.hasOneUse())))
        return std::nullopt;
      row.ops.push_back({&op, RowOpKind::Clone});
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic) {
      if (op.getNumRegions() != 0 || !isPure(&op))
        return std::nullopt;
      row.ops.push_back({&op, RowOpKind::Clone});
      continue;
    }
    if (!generic.hasPureBufferSemantics() || !hasSimpleMaps(generic))
      return std::nullopt;
    int64_t size = 1;
    std::optional<int64_t> loop = getRowLoop(generic, size);
    if (!loop)
      return std::nullopt;
    bool onStackScalars = llvm::all_of(generic.getDpsInits(), [&](Value v) {
      return isStackScalar(v, forall);
    });
    if (*loop == -1) {
      // Scalar: every thread computes it from values all threads hold.
      if (!onStackScalars || llvm::any_of(generic.getDpsInputs(), [&](Value v) {
            return rowWritten.contains(v);
          }))
        return std::nullopt;
      row.ops.push_back({&op, RowOpKind::Scalar});
      continue;
    }
    if (row.rowSize && row.rowSize != size)
      return std::nullopt;
    row.rowSize = size;
    if (generic.getIteratorTypesArray()[*loop] ==
        utils::IteratorType::reduction) {
      if (generic.getNumDpsInits() != 1 || !onStackScalars ||
          !getCombiner(generic) ||
          !cast<MemRefType>(generic.getDpsInits()[0].getType())
               .getElementType()
               .isF32())
        return std::nullopt;
      row.ops.push_back({&op, RowOpKind::Reduction, *loop});
      row.hasReduction = true;
      continue;
    }
    // Elementwise over the row: every output is indexed by the row loop.
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      AffineMap map = generic.getMatchingIndexingMap(&init);
      if (!map.isFunctionOfDim(*loop))
        return std::nullopt;
      rowWritten.insert(init.get());
    }
    row.ops.push_back({&op, RowOpKind::Elementwise, *loop});
  }
  if (!row.rowSize)
    return std::nullopt;
  return row;
}

/// Emits the kernel of one matched forall.
class RowKernelBuilder {
public:
  RowKernelBuilder(OpBuilder &b, Location loc, int64_t threads)
      : b(b), loc(loc), ia(b, loc), threads(threads) {}

  void emit(scf::ForallOp forall, const RowBody &row) {
    SmallVector<int64_t> ubs(forall.getStaticUpperBound());
    SmallVector<Value> dynamicUbs(forall.getDynamicUpperBound());
    // Per forall dimension: its extent as a value where it is dynamic.
    SmallVector<Value> ubValues(ubs.size());
    int64_t rows = 1;
    Value dynamicRows;
    for (auto [i, ub] : llvm::enumerate(ubs)) {
      if (!ShapedType::isDynamic(ub)) {
        rows *= ub;
        continue;
      }
      ubValues[i] = dynamicUbs[llvm::count_if(
          ArrayRef<int64_t>(ubs).take_front(i),
          [](int64_t v) { return ShapedType::isDynamic(v); })];
      dynamicRows =
          dynamicRows ? arith::MulIOp::create(b, loc, dynamicRows, ubValues[i])
                            .getResult()
                      : ubValues[i];
    }
    Value one = ia.cst(1);
    Value grid =
        dynamicRows && rows != 1 ? ia.mul(dynamicRows, rows) : dynamicRows;
    auto launch = gpu::LaunchOp::create(b, loc, grid ? grid : ia.cst(rows), one,
                                        one, ia.cst(threads), one, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    tid = launch.getThreadIds().x;
    if (row.hasReduction && threads > kWarpSize) {
      // One slot per warp; attn-gpu-device-buffers makes it an attribution.
      auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
      scratch = memref::AllocaOp::create(
          b, loc,
          MemRefType::get({threads / kWarpSize}, b.getF32Type(),
                          MemRefLayoutAttrInterface(), space));
    }
    // The forall's induction variables from the block's row index.
    Value rest = launch.getBlockIds().x;
    SmallVector<Value> ivs(ubs.size());
    for (int64_t i = ubs.size() - 1; i >= 0; --i) {
      if (Value ub = ubValues[i]) {
        ivs[i] = i == 0 ? rest
                        : arith::RemUIOp::create(b, loc, rest, ub).getResult();
        if (i)
          rest = arith::DivUIOp::create(b, loc, rest, ub);
        continue;
      }
      ivs[i] = i == 0 ? rest : ia.remu(rest, ubs[i]);
      if (i)
        rest = ia.divu(rest, ubs[i]);
    }
    for (auto [iv, value] : llvm::zip(forall.getInductionVars(), ivs))
      map.map(iv, value);

    for (const RowOp &rowOp : row.ops) {
      switch (rowOp.kind) {
      case RowOpKind::Clone:
        emitClone(rowOp.op);
        break;
      case RowOpKind::Scalar:
        emitScalar(cast<linalg::GenericOp>(rowOp.op));
        break;
      case RowOpKind::Elementwise:
        emitElementwise(cast<linalg::GenericOp>(rowOp.op), rowOp.loop,
                        row.rowSize);
        break;
      case RowOpKind::Reduction:
        emitReduction(cast<linalg::GenericOp>(rowOp.op), rowOp.loop,
                      row.rowSize);
        break;
      }
    }
    gpu::TerminatorOp::create(b, loc);
  }

private:
  /// Indices of `operand` in iteration (row loop at `j`, others at 0).
  SmallVector<Value> indicesOf(linalg::GenericOp op, OpOperand &operand,
                               int64_t loop, Value j) {
    SmallVector<Value> indices;
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      indices.push_back(dim && (int64_t)dim.getPosition() == loop ? j
                                                                  : ia.cst(0));
    }
    return indices;
  }

  /// The body of `op` at one iteration: its operands loaded (the init's
  /// value replaced by `init` when given), its ops cloned; the yielded
  /// values.
  SmallVector<Value> emitBody(linalg::GenericOp op, int64_t loop, Value j,
                              Value init = {}) {
    Block &body = op.getRegion().front();
    IRMapping bodyMap;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (arg.use_empty())
        continue;
      if (init && op.isDpsInit(&operand)) {
        bodyMap.map(arg, init);
        continue;
      }
      Value source = map.lookupOrDefault(operand.get());
      if (!isa<MemRefType>(source.getType())) {
        bodyMap.map(arg, source);
        continue;
      }
      bodyMap.map(arg, memref::LoadOp::create(b, loc, source,
                                              indicesOf(op, operand, loop, j)));
    }
    // Values the body captures from the forall (or above it).
    for (Operation &bodyOp : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
        bodyMap.map(index.getResult(),
                    (int64_t)index.getDim() == loop ? j : ia.cst(0));
        continue;
      }
      Operation *clone = b.clone(bodyOp, bodyMap);
      for (OpOperand &use : clone->getOpOperands())
        if (Value mapped = map.lookupOrNull(use.get()))
          use.set(mapped);
    }
    SmallVector<Value> results;
    for (Value v : cast<linalg::YieldOp>(body.getTerminator()).getValues())
      results.push_back(bodyMap.contains(v) ? bodyMap.lookup(v)
                                            : map.lookupOrDefault(v));
    return results;
  }

  void storeResults(linalg::GenericOp op, ValueRange values, int64_t loop,
                    Value j) {
    for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), values))
      memref::StoreOp::create(b, loc, value, map.lookupOrDefault(init.get()),
                              indicesOf(op, init, loop, j));
  }

  /// Views, allocas and scalar ops as they are; fills and copies of stack
  /// scalars as scalar stores (structured ops would become loops, and
  /// kernels of their own, inside the kernel).
  void emitClone(Operation *op) {
    auto zerosOf = [&](Value memref) {
      return SmallVector<Value>(cast<MemRefType>(memref.getType()).getRank(),
                                ia.cst(0));
    };
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      Value target = map.lookupOrDefault(fill.getDpsInits()[0]);
      memref::StoreOp::create(b, loc, map.lookupOrDefault(fill.getInputs()[0]),
                              target, zerosOf(target));
      return;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      Value source = map.lookupOrDefault(copy.getSource());
      Value target = map.lookupOrDefault(copy.getTarget());
      Value v = memref::LoadOp::create(b, loc, source, zerosOf(source));
      if (target.getDefiningOp<memref::AllocaOp>()) {
        memref::StoreOp::create(b, loc, v, target, zerosOf(target));
        return;
      }
      // Every thread holds the value; one stores it.
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                          ia.cst(0));
      auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(b, loc, v, target, zerosOf(target));
      return;
    }
    b.clone(*op, map);
  }

  void emitScalar(linalg::GenericOp op) {
    Value zero = ia.cst(0);
    storeResults(op, emitBody(op, -1, zero), -1, zero);
  }

  /// for j = tid; j < N; j += T: the body at j.
  void emitElementwise(linalg::GenericOp op, int64_t loop, int64_t size) {
    auto forOp = scf::ForOp::create(b, loc, tid, ia.cst(size), ia.cst(threads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    Value j = forOp.getInductionVar();
    storeResults(op, emitBody(op, loop, j), loop, j);
  }

  Value combine(Operation *combiner, Value x, Value y) {
    auto fastmath =
        cast<arith::ArithFastMathInterface>(combiner).getFastMathFlagsAttr();
    if (isa<arith::AddFOp>(combiner))
      return arith::AddFOp::create(b, loc, x, y, fastmath);
    return arith::MaximumFOp::create(b, loc, x, y, fastmath);
  }

  /// Each thread's partial over its elements, combined across the block:
  /// butterfly shuffles within each warp, then one slot per warp in shared
  /// memory that every thread reads back. The init (the stack scalar's
  /// value) joins last; every thread stores the result in its own copy.
  void emitReduction(linalg::GenericOp op, int64_t loop, int64_t size) {
    Operation *combiner = getCombiner(op);
    Type f32 = b.getF32Type();
    Value identity =
        isa<arith::AddFOp>(combiner)
            ? arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0))
            : arith::ConstantOp::create(
                  b, loc,
                  b.getFloatAttr(f32,
                                 -std::numeric_limits<double>::infinity()));
    auto forOp = scf::ForOp::create(b, loc, tid, ia.cst(size), ia.cst(threads),
                                    ValueRange{identity});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      SmallVector<Value> next = emitBody(op, loop, forOp.getInductionVar(),
                                         forOp.getRegionIterArg(0));
      scf::YieldOp::create(b, loc, next);
    }
    Value v = forOp.getResult(0);
    for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
      Value other = gpu::ShuffleOp::create(b, loc, v, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = combine(combiner, v, other);
    }
    int64_t warps = threads / kWarpSize;
    if (warps > 1) {
      Value lane = ia.remu(tid, kWarpSize);
      Value warp = ia.divu(tid, kWarpSize);
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          lane, ia.cst(0));
      auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        memref::StoreOp::create(b, loc, v, scratch, ValueRange{warp});
      }
      gpu::BarrierOp::create(b, loc);
      v = memref::LoadOp::create(b, loc, scratch, ValueRange{ia.cst(0)});
      for (int64_t w = 1; w < warps; ++w)
        v = combine(
            combiner, v,
            memref::LoadOp::create(b, loc, scratch, ValueRange{ia.cst(w)}));
      // The slots are written again by the next reduction.
      gpu::BarrierOp::create(b, loc);
    }
    OpOperand &init = op.getDpsInitsMutable()[0];
    Value out = map.lookupOrDefault(init.get());
    SmallVector<Value> zeros(cast<MemRefType>(out.getType()).getRank(),
                             ia.cst(0));
    Value start = memref::LoadOp::create(b, loc, out, zeros);
    memref::StoreOp::create(b, loc, combine(combiner, start, v), out, zeros);
  }

  OpBuilder &b;
  Location loc;
  attn::IndexArith ia;
  int64_t threads;
  IRMapping map; // forall values -> kernel values
  Value tid, scratch;
};

struct AttnGpuRowKernelsPass
    : public mlir::attn::impl::AttnGpuRowKernelsBase<AttnGpuRowKernelsPass> {
  using AttnGpuRowKernelsBase::AttnGpuRowKernelsBase;

  void runOnOperation() override {
    if (maxThreads < kWarpSize || maxThreads % kWarpSize != 0 ||
        maxThreads > 1024) {
      getOperation().emitError("attn-gpu-row-kernels: max-threads must be a "
                               "multiple of 32 in [32, 1024]");
      return signalPassFailure();
    }
    SmallVector<scf::ForallOp> foralls;
    getOperation().walk([&](scf::ForallOp op) { foralls.push_back(op); });
    for (scf::ForallOp forall : foralls) {
      std::optional<RowBody> row = matchRowBody(forall);
      if (!row)
        continue;
      int64_t threads =
          std::min<int64_t>(maxThreads, llvm::alignTo(row->rowSize, kWarpSize));
      OpBuilder b(forall);
      RowKernelBuilder(b, forall.getLoc(), threads).emit(forall, *row);
      forall.erase();
    }
  }
};

} // namespace
