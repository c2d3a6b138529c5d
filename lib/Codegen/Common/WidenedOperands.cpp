//===- WidenedOperands.cpp - matmul operands widened from f16/bf16 --------===//

#include "Codegen/Common/WidenedOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::attn;

static bool isStaticIdentity(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

/// A single-input elementwise generic whose body is only `arith.extf` from
/// f16/bf16 to f32, between static identity-layout memrefs of one shape.
static bool isExtFGeneric(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return false;
  Value in = op.getDpsInputs()[0], out = op.getDpsInits()[0];
  if (!isStaticIdentity(in) || !isStaticIdentity(out))
    return false;
  auto inType = cast<MemRefType>(in.getType());
  auto outType = cast<MemRefType>(out.getType());
  Type inElem = inType.getElementType();
  if (inType.getShape() != outType.getShape() ||
      !(inElem.isF16() || inElem.isBF16()) || !outType.getElementType().isF32())
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isIdentity())
      return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return ext && ext.getIn() == body.getArgument(0) &&
         yield.getValues().size() == 1 && yield.getValues()[0] == ext;
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

std::optional<WidenedOperand> mlir::attn::traceWidened(Value operand,
                                                       Operation *contraction) {
  WidenedOperand w;
  w.wide = operand;
  if (auto collapse = operand.getDefiningOp<memref::CollapseShapeOp>()) {
    w.view = collapse;
    w.wide = collapse.getSrc();
  }
  // The last generic before the contraction that writes the buffer (one
  // buffer may hold several widened tensors one after the other).
  linalg::GenericOp writer;
  for (Operation *user : w.wide.getUsers()) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || generic->getBlock() != contraction->getBlock() ||
        !generic->isBeforeInBlock(contraction) ||
        !llvm::is_contained(generic.getDpsInits(), w.wide))
      continue;
    if (!writer || writer->isBeforeInBlock(generic))
      writer = generic;
  }
  if (!writer || !isExtFGeneric(writer))
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

Value mlir::attn::narrowOperand(OpBuilder &b, Location loc,
                                const WidenedOperand &w) {
  if (!w.view)
    return w.narrow;
  return memref::CollapseShapeOp::create(
      b, loc, w.narrow,
      memref::CollapseShapeOp(w.view).getReassociationIndices());
}

/// Whether `op` writes every element of `buffer` (its only init, an
/// identity map over parallel loops) without reading it: its body ignores
/// the init's value and no input is a view of the same buffer. Bufferization
/// reuses a dead widened weight's buffer this way (e.g. for a bias add).
static bool overwritesAll(linalg::GenericOp op, Value buffer) {
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

/// Whether nothing but `readers` reads what the extf generic `ext` wrote:
/// after it, the first other op of its block that uses the buffer (or a
/// view of it) frees it or is a generic overwriting all of it without
/// reading it (another extf generic, say), or no other op uses it at all.
static bool isDeadStore(linalg::GenericOp ext,
                        const llvm::SmallPtrSetImpl<Operation *> &readers) {
  Value wide = ext.getDpsInits()[0];
  if (!wide.getDefiningOp<memref::AllocOp>())
    return false; // e.g. a function argument: visible to the caller
  Block *block = ext->getBlock();
  llvm::SmallPtrSet<Operation *, 8> users;
  for (Value alias : aliasesOf(wide))
    for (Operation *user : alias.getUsers())
      if (!isa<ViewLikeOpInterface>(user))
        if (Operation *ancestor = block->findAncestorOpInBlock(*user))
          users.insert(ancestor);
  for (Operation *op = ext->getNextNode(); op; op = op->getNextNode()) {
    if (!users.contains(op) || readers.contains(op))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      return dealloc.getMemref() == wide;
    auto next = dyn_cast<linalg::GenericOp>(op);
    return next && overwritesAll(next, wide);
  }
  return true;
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
  for (linalg::GenericOp ext : widened)
    if (isDeadStore(ext, readers))
      dead.push_back(ext);
}

void WidenedCopies::eraseDead() {
  llvm::SetVector<Operation *> views;
  for (const WidenedOperand &w : operands)
    if (w.view)
      views.insert(w.view);
  for (Operation *view : views)
    if (view->use_empty())
      view->erase();
  llvm::SetVector<Operation *> allocs;
  for (linalg::GenericOp ext : dead) {
    allocs.insert(ext.getDpsInits()[0].getDefiningOp());
    ext.erase();
  }
  for (Operation *alloc : allocs)
    eraseAllocIfUnused(cast<memref::AllocOp>(alloc));
}
