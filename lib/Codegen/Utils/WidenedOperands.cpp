//===- WidenedOperands.cpp - matmul operands widened from f16/bf16 --------===//

#include "Codegen/Utils/WidenedOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::attn;

/// An identity-layout memref, of static shape unless `dynamicShapes`.
static bool isIdentityMemRef(Value v, bool dynamicShapes) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && (dynamicShapes || type.hasStaticShape()) &&
         type.getLayout().isIdentity();
}

static bool isNarrowFloat(Type t) { return t.isF16() || t.isBF16(); }

/// A single-input elementwise generic whose body is only a `CastOp` from
/// `from` to `to` element types, between static identity-layout memrefs of
/// one shape (with `dynamicShapes` also of one shape with run-time sizes:
/// the identity maps make them agree).
template <typename CastOp>
static bool isCastGeneric(linalg::GenericOp op, function_ref<bool(Type)> from,
                          function_ref<bool(Type)> to, bool dynamicShapes) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return false;
  Value in = op.getDpsInputs()[0], out = op.getDpsInits()[0];
  if (!isIdentityMemRef(in, dynamicShapes) ||
      !isIdentityMemRef(out, dynamicShapes))
    return false;
  auto inType = cast<MemRefType>(in.getType());
  auto outType = cast<MemRefType>(out.getType());
  if (inType.getShape() != outType.getShape() ||
      !from(inType.getElementType()) || !to(outType.getElementType()))
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isIdentity())
      return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  auto castOp = dyn_cast<CastOp>(body.front());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return castOp && castOp.getIn() == body.getArgument(0) &&
         yield.getValues().size() == 1 && yield.getValues()[0] == castOp;
}

/// f16/bf16 -> f32.
static bool isExtFGeneric(linalg::GenericOp op, bool dynamicShapes) {
  return isCastGeneric<arith::ExtFOp>(
      op, isNarrowFloat, [](Type t) { return t.isF32(); }, dynamicShapes);
}

/// f32 -> f16/bf16.
static bool isTruncFGeneric(linalg::GenericOp op, bool dynamicShapes) {
  return isCastGeneric<arith::TruncFOp>(
      op, [](Type t) { return t.isF32(); }, isNarrowFloat, dynamicShapes);
}

/// The buffer `v` is a view of (through view-like ops), or `v` itself.
static Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Every value that aliases `root` through view-like ops, root included.
static SmallVector<Value> aliasesOf(Value root) {
  SmallVector<Value> worklist = {root}, all;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    all.push_back(v);
    for (Operation *user : v.getUsers())
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == v)
          worklist.append(user->result_begin(), user->result_end());
  }
  return all;
}

/// Whether any op strictly between `begin` and `end` (same block) may write
/// `buffer`, the buffer it views or any other view of that. Users without
/// memory-effect information count as writers.
static bool writtenBetween(Value buffer, Operation *begin, Operation *end) {
  Block *block = begin->getBlock();
  for (Value alias : aliasesOf(rootOf(buffer))) {
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      if (isa<ViewLikeOpInterface>(user))
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || !begin->isBeforeInBlock(ancestor) ||
          !ancestor->isBeforeInBlock(end))
        continue;
      auto iface = dyn_cast<MemoryEffectOpInterface>(user);
      if (!iface)
        return true;
      SmallVector<MemoryEffects::EffectInstance> effects;
      iface.getEffectsOnValue(alias, effects);
      for (MemoryEffects::EffectInstance &effect : effects)
        if (isa<MemoryEffects::Write>(effect.getEffect()))
          return true;
    }
  }
  return false;
}

/// The last generic of the contraction's block before it that writes
/// `buffer` (one buffer may hold several copies one after the other).
static linalg::GenericOp lastWriterBefore(Value buffer,
                                          Operation *contraction) {
  linalg::GenericOp writer;
  for (Operation *user : buffer.getUsers()) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || generic->getBlock() != contraction->getBlock() ||
        !generic->isBeforeInBlock(contraction) ||
        !llvm::is_contained(generic.getDpsInits(), buffer))
      continue;
    if (!writer || writer->isBeforeInBlock(generic))
      writer = generic;
  }
  return writer;
}

std::optional<WidenedOperand> mlir::attn::traceWidened(Value operand,
                                                       Operation *contraction,
                                                       bool dynamicShapes) {
  WidenedOperand w;
  w.wide = operand;
  if (auto collapse = operand.getDefiningOp<memref::CollapseShapeOp>()) {
    w.view = collapse;
    w.wide = collapse.getSrc();
  }
  linalg::GenericOp writer = lastWriterBefore(w.wide, contraction);
  if (!writer || !isExtFGeneric(writer, dynamicShapes))
    return std::nullopt;
  w.ext = writer;
  w.narrow = writer.getDpsInputs()[0];
  // The contraction must read what the extf generic computed from the
  // narrow buffer: neither may be written in between.
  if (writtenBetween(w.wide, writer, contraction) ||
      writtenBetween(w.narrow, writer, contraction))
    return std::nullopt;
  return w;
}

std::optional<WidenedOperand> mlir::attn::tracePanels(Value operand,
                                                      Operation *reader,
                                                      int64_t width,
                                                      bool pairs) {
  auto collapse = operand.getDefiningOp<memref::CollapseShapeOp>();
  SmallVector<ReassociationIndices> grouping;
  if (pairs)
    grouping = {{0, 1}, {2, 3}};
  else
    grouping = {{0}, {1, 2}};
  if (!collapse || collapse.getReassociationIndices() != grouping)
    return std::nullopt;
  WidenedOperand w;
  w.view = collapse;
  w.wide = collapse.getSrc();
  unsigned loops = pairs ? 4 : 3;
  linalg::GenericOp copy = lastWriterBefore(w.wide, reader);
  if (!copy || !copy.hasPureBufferSemantics() || copy.getNumDpsInputs() != 1 ||
      copy.getNumDpsInits() != 1 || copy.getNumLoops() != loops ||
      copy.getNumReductionLoops() != 0)
    return std::nullopt;
  Value panels = copy.getDpsInputs()[0];
  if (!isIdentityMemRef(panels, false) || !isIdentityMemRef(w.wide, false))
    return std::nullopt;
  auto panelType = cast<MemRefType>(panels.getType());
  auto wideType = cast<MemRefType>(w.wide.getType());
  int64_t rows = pairs ? 2 : 1;
  SmallVector<int64_t> copyShape = {panelType.getDimSize(1),
                                    panelType.getDimSize(0), width};
  if (pairs)
    copyShape.insert(copyShape.begin() + 1, 2);
  if ((pairs && !panelType.getElementType().isBF16()) ||
      panelType.getElementType() != wideType.getElementType() ||
      panelType.getDimSize(2) != rows * width ||
      wideType.getShape() != ArrayRef<int64_t>(copyShape))
    return std::nullopt;
  // The copy reads panels[p, k, c] at (k, p, c), or panels[p, j, 2 c + t]
  // at (j, t, p, c).
  MLIRContext *ctx = copy.getContext();
  AffineMap read;
  if (pairs) {
    AffineExpr j, t, p, c;
    bindDims(ctx, j, t, p, c);
    read = AffineMap::get(4, 0, {p, j, 2 * c + t}, ctx);
  } else {
    AffineExpr r, p, c;
    bindDims(ctx, r, p, c);
    read = AffineMap::get(3, 0, {p, r, c}, ctx);
  }
  SmallVector<AffineMap> maps = copy.getIndexingMapsArray();
  if (maps[0] != read || !maps[1].isIdentity())
    return std::nullopt;
  Block &body = copy.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getValues()[0] != body.getArgument(0))
    return std::nullopt;
  w.ext = copy;
  w.narrow = panels;
  if (writtenBetween(w.wide, copy, reader) ||
      writtenBetween(w.narrow, copy, reader))
    return std::nullopt;
  return w;
}

Value mlir::attn::narrowOperand(OpBuilder &b, Location loc,
                                const WidenedOperand &w) {
  if (!w.view)
    return w.narrow;
  return memref::CollapseShapeOp::create(
      b, loc, w.narrow,
      memref::CollapseShapeOp(w.view).getReassociationIndices());
}

/// Whether any op strictly between `begin` and `end` (same block) uses
/// `buffer` or any view of what it views.
static bool usedBetween(Value buffer, Operation *begin, Operation *end) {
  Block *block = begin->getBlock();
  for (Value alias : aliasesOf(rootOf(buffer)))
    for (Operation *user : alias.getUsers()) {
      if (isa<ViewLikeOpInterface>(user))
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (ancestor && begin->isBeforeInBlock(ancestor) &&
          ancestor->isBeforeInBlock(end))
        return true;
    }
  return false;
}

std::optional<NarrowedResult>
mlir::attn::traceNarrowed(Value result, ArrayRef<Operation *> writers,
                          bool dynamicShapes) {
  NarrowedResult n;
  n.wide = result.getDefiningOp<memref::AllocOp>();
  if (!n.wide || writers.empty())
    return std::nullopt;
  Operation *first = writers.front(), *last = writers.back();
  // Nothing but the writers, one truncf generic (of the buffer or of an
  // expand_shape of it) and frees may use the result.
  for (Value alias : aliasesOf(result)) {
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      if (isa<ViewLikeOpInterface>(user) && use.getOperandNumber() == 0)
        continue;
      if (llvm::is_contained(writers, user) || isa<memref::DeallocOp>(user))
        continue;
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (n.trunc || !generic || !isTruncFGeneric(generic, dynamicShapes))
        return std::nullopt;
      n.trunc = generic;
    }
  }
  if (!n.trunc || n.trunc->getBlock() != last->getBlock() ||
      !last->isBeforeInBlock(n.trunc))
    return std::nullopt;
  Value in = n.trunc.getDpsInputs()[0];
  if (in != result) {
    auto expand = in.getDefiningOp<memref::ExpandShapeOp>();
    if (!expand || expand.getSrc() != result)
      return std::nullopt;
    n.collapse = expand.getReassociationIndices();
  }
  n.narrow = n.trunc.getDpsInits()[0];
  // The kernel writes the narrow buffer where the first writer was: nothing
  // in between may read or write it.
  if (usedBetween(n.narrow, first, n.trunc))
    return std::nullopt;
  // Its allocation must come first (an argument always does).
  if (auto alloc = n.narrow.getDefiningOp<memref::AllocOp>()) {
    if (alloc->getBlock() != first->getBlock())
      return std::nullopt;
    // Run-time sizes must be known before the first writer.
    for (Value size : alloc->getOperands()) {
      Operation *def = size.getDefiningOp();
      if (!dynamicShapes || (def && (def->getBlock() != first->getBlock() ||
                                     !def->isBeforeInBlock(first))))
        return std::nullopt;
    }
    if (first->isBeforeInBlock(alloc))
      alloc->moveBefore(first);
  } else if (!isa<BlockArgument>(n.narrow) ||
             cast<BlockArgument>(n.narrow).getOwner() != first->getBlock()) {
    return std::nullopt;
  }
  return n;
}

Value mlir::attn::narrowResultView(OpBuilder &b, Location loc,
                                   const NarrowedResult &n) {
  if (n.collapse.empty())
    return n.narrow;
  return memref::CollapseShapeOp::create(b, loc, n.narrow, n.collapse);
}

/// Whether `op` writes every element of `buffer` (its only init, an
/// identity map over parallel loops) without reading it: its body ignores
/// the init's value and no input is a view of the same buffer. Bufferization
/// reuses a dead widened weight's buffer this way (e.g. for a bias add).
bool mlir::attn::overwritesAll(linalg::GenericOp op, Value buffer) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getDpsInits()[0] != buffer || op.getNumReductionLoops() != 0 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  if (!op.getMatchingBlockArgument(op.getDpsInitOperand(0)).use_empty())
    return false;
  for (Value in : op.getDpsInputs())
    if (rootOf(in) == rootOf(buffer))
      return false;
  return true;
}

/// Whether `user` reads or writes nothing of a buffer it uses: it takes
/// the buffer's address or sizes, or frees it. The ownership-based
/// deallocation of a function that receives buffers from calls (an outlined
/// layer body returning the hidden states it allocated) compares the
/// addresses of the buffers it may free with those of the call results and
/// frees each under an scf.if: none of that reads the contents.
static bool usesOnlyAddress(Operation *user) {
  return isa<memref::ExtractAlignedPointerAsIndexOp,
             memref::ExtractStridedMetadataOp, memref::DimOp,
             memref::DeallocOp>(user);
}

/// Whether nothing but `readers` reads what the extf generic `ext` wrote:
/// after it, the first other op of its block that uses the buffer (or a
/// view of it) frees it or is a generic overwriting all of it without
/// reading it (another extf generic, say), or no other op uses it at all.
/// Ops that only take its address or free it under a condition are passed
/// over.
static bool isDeadStore(linalg::GenericOp ext,
                        const llvm::SmallPtrSetImpl<Operation *> &readers) {
  Value wide = ext.getDpsInits()[0];
  // A function argument (an out-param that bufferization reused for the
  // copy) is visible to the caller: dead only where a later op overwrites
  // all of it.
  bool ownBuffer = wide.getDefiningOp<memref::AllocOp>() != nullptr;
  if (!ownBuffer && !isa<BlockArgument>(wide))
    return false;
  Block *block = ext->getBlock();
  // The ops of the block that use the buffer, each with the users it holds.
  llvm::DenseMap<Operation *, SmallVector<Operation *, 2>> users;
  for (Value alias : aliasesOf(wide))
    for (Operation *user : alias.getUsers())
      if (!isa<ViewLikeOpInterface>(user))
        if (Operation *ancestor = block->findAncestorOpInBlock(*user))
          users[ancestor].push_back(user);
  for (Operation *op = ext->getNextNode(); op; op = op->getNextNode()) {
    auto it = users.find(op);
    if (it == users.end() || readers.contains(op))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      return dealloc.getMemref() == wide;
    if (auto next = dyn_cast<linalg::GenericOp>(op))
      return overwritesAll(next, wide);
    if (!ownBuffer || !llvm::all_of(it->second, usesOnlyAddress))
      return false;
  }
  return ownBuffer;
}

namespace {
/// dim(collapse_shape(x), i): the product of x's sizes in group i.
struct DimOfCollapseShape : OpRewritePattern<memref::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::DimOp dim,
                                PatternRewriter &rewriter) const override {
    auto collapse = dim.getSource().getDefiningOp<memref::CollapseShapeOp>();
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!collapse || !index || *index < 0 ||
        *index >= collapse.getResultType().getRank())
      return failure();
    Location loc = dim.getLoc();
    MemRefType srcType = collapse.getSrcType();
    Value product;
    int64_t constant = 1;
    // A copy: the reassociation is returned by value, and a range over an
    // element of the temporary would outlive it.
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (int64_t d : groups[*index]) {
      if (!srcType.isDynamicDim(d)) {
        constant *= srcType.getDimSize(d);
        continue;
      }
      Value size = memref::DimOp::create(rewriter, loc, collapse.getSrc(), d);
      product =
          product ? arith::MulIOp::create(rewriter, loc, product, size) : size;
    }
    if (!product)
      return failure(); // a static size folds by itself
    if (constant != 1)
      product = arith::MulIOp::create(
          rewriter, loc, product,
          arith::ConstantIndexOp::create(rewriter, loc, constant));
    rewriter.replaceOp(dim, product);
    return success();
  }
};
} // namespace

void mlir::attn::resolveReshapeDims(Operation *root) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  patterns.add<DimOfCollapseShape>(ctx);
  // expand_shape reifies its sizes from output_shape; dims of allocations
  // fold to their size operands.
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  memref::DimOp::getCanonicalizationPatterns(patterns, ctx);
  // Only those dims (and what they become), so that nothing else is folded.
  SmallVector<Operation *> dims;
  root->walk([&](memref::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = cast<MemRefType>(dim.getSource().getType());
    Operation *def = dim.getSource().getDefiningOp();
    if (index && *index >= 0 && *index < type.getRank() &&
        type.isDynamicDim(*index) &&
        isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp,
                        memref::AllocOp>(def))
      dims.push_back(dim);
  });
  if (dims.empty())
    return;
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(dims, std::move(patterns), config);
}

void mlir::attn::eraseAllocIfUnused(memref::AllocOp alloc) {
  SmallVector<Operation *> dead;
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<memref::DeallocOp>(user)) {
        dead.push_back(user);
        continue;
      }
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (!view || view.getViewSource() != v)
        return;
      dead.push_back(user);
      worklist.append(user->result_begin(), user->result_end());
    }
  }
  // Users before their operands' producers: views of views first.
  for (Operation *op : llvm::reverse(dead))
    op->erase();
  alloc.erase();
}

void WidenedCopies::add(const WidenedOperand &w, Operation *reader) {
  operands.push_back(w);
  readers.insert(reader);
}

void WidenedCopies::findDead() {
  llvm::SetVector<linalg::GenericOp> widened;
  for (const WidenedOperand &w : operands)
    widened.insert(w.ext);
  // In the order added: a copy that only a dead one reads (pair panels
  // read back for the widening) is dead too.
  for (linalg::GenericOp ext : widened)
    if (isDeadStore(ext, readers)) {
      dead.push_back(ext);
      readers.insert(ext);
    }
}

void WidenedCopies::eraseDead() {
  // The copies first: a dead one may read another's view.
  llvm::SetVector<Operation *> allocs;
  for (linalg::GenericOp ext : dead) {
    if (Operation *alloc =
            ext.getDpsInits()[0].getDefiningOp<memref::AllocOp>())
      allocs.insert(alloc);
    ext.erase();
  }
  llvm::SetVector<Operation *> views;
  for (const WidenedOperand &w : operands)
    if (w.view)
      views.insert(w.view);
  for (Operation *view : views)
    if (view->use_empty())
      view->erase();
  for (Operation *alloc : allocs)
    eraseAllocIfUnused(cast<memref::AllocOp>(alloc));
}
