//===- MatmulMatch.h - recognise x * W^T contractions on buffers -*- C++
//-*-===//
//
// Shared by the CPU and GPU matmul kernel passes: both rewrite the
// buffer-level form of attn.linear, C[m, n] += A[m, k] * B[n, k], with B in
// the checkpoint's [out, in] layout.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_MATMULMATCH_H
#define ATTNC_LIB_CONVERSION_MATMULMATCH_H

#include "Codegen/Utils/WidenedOperands.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::attn {

/// A matched C[m, n] += sum_k A[m, k] * B[n, k] on static f32 memrefs with
/// identity layouts; where the match allows it, M (the rows: batch times
/// sequence) may be dynamic, ShapedType::kDynamic in `m`.
struct NTMatmul {
  linalg::GenericOp op;
  Value a, b, c;
  int64_t m, n, k;
};

inline bool isStaticIdentityF32(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getElementType().isF32();
}

/// Like isStaticIdentityF32, but with `dynamicRows` a 2-D memref may have
/// a dynamic first dimension (rows given at run time).
inline bool isIdentityF32(Value v, bool dynamicRows) {
  if (isStaticIdentityF32(v))
    return true;
  auto type = dyn_cast<MemRefType>(v.getType());
  return dynamicRows && type && type.getRank() == 2 && !type.isDynamicDim(1) &&
         type.getLayout().isIdentity() && type.getElementType().isF32();
}

/// The body must be `out + a * b` (in either operand order) and nothing
/// else: linalg's contraction body check also admits casts between the ops,
/// which the kernels do not emit.
inline bool isMulAddBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  return body.getOperations().size() == 3 &&
         linalg::detail::isContractionBody(body, [](Operation *elemwise,
                                                    Operation *reduce) {
           return isa<arith::MulFOp>(elemwise) && isa<arith::AddFOp>(reduce);
         });
}

/// How a contraction's operands are laid out.
struct ContractionLoops {
  /// B is [k, n] (K-major) rather than [n, k].
  bool kMajorB;
};

/// A single-m, single-n, single-k, unbatched contraction (linalg's
/// inferContractionDims) with loops (m, n, k), as attn-lower-to-linalg emits
/// them, and operands A [m, k], B [n, k] or [k, n], C [m, n]: the kernels
/// handle no transposed A or C. The body is checked separately.
inline std::optional<ContractionLoops>
matchContractionLoops(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3)
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || !dims->batch.empty() || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1 || dims->m[0] != 0 ||
      dims->n[0] != 1 || dims->k[0] != 2)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](AffineExpr x, AffineExpr y) {
    return AffineMap::get(3, 0, {x, y}, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != map(m, k) || maps[2] != map(m, n) ||
      (maps[1] != map(n, k) && maps[1] != map(k, n)))
    return std::nullopt;
  return ContractionLoops{maps[1] == map(k, n)};
}

/// C[m, n] += A[m, k] * W[n, k] on f32 tensors with a 2-D A and W a 2-D
/// f32 attn.weight bound without conversion (plain, gathered, concatenated
/// and/or transposed), the projections that the quantizing passes replace:
/// the weight, else null.
inline WeightOp matchF32WeightProjection(linalg::GenericOp op) {
  std::optional<ContractionLoops> loops = matchContractionLoops(op);
  if (!op.hasPureTensorSemantics() || !isMulAddBody(op) || !loops ||
      loops->kMajorB)
    return {};
  auto weight = op.getDpsInputs()[1].getDefiningOp<WeightOp>();
  if (!weight || weight.getConvert())
    return {};
  RankedTensorType type = weight.getResult().getType();
  auto aType = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  if (type.getRank() != 2 || !type.getElementType().isF32() || !aType ||
      aType.getRank() != 2 || !aType.getElementType().isF32() ||
      !cast<ShapedType>(op.getDpsInits()[0].getType()).getElementType().isF32())
    return {};
  return weight;
}

/// C[m, n] += sum_k A[m, k] * B on static f32 memrefs with identity
/// layouts, B being [N, K] (the checkpoint layout) or, when `kMajorB`,
/// [K, N]. With `dynamicM`, A and C may have dynamic rows.
inline std::optional<NTMatmul> matchMatmul(linalg::GenericOp op, bool kMajorB,
                                           bool dynamicM = false) {
  if (!op.hasPureBufferSemantics() || !isMulAddBody(op))
    return std::nullopt;
  std::optional<ContractionLoops> loops = matchContractionLoops(op);
  if (!loops || loops->kMajorB != kMajorB)
    return std::nullopt;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  if (!isIdentityF32(a, dynamicM) || !isStaticIdentityF32(b) ||
      !isIdentityF32(c, dynamicM))
    return std::nullopt;
  auto aType = cast<MemRefType>(a.getType());
  auto bType = cast<MemRefType>(b.getType());
  return NTMatmul{op,
                  a,
                  b,
                  c,
                  aType.getDimSize(0),
                  bType.getDimSize(kMajorB ? 1 : 0),
                  aType.getDimSize(1)};
}

inline std::optional<NTMatmul> matchNTMatmul(linalg::GenericOp op,
                                             bool dynamicM = false) {
  return matchMatmul(op, /*kMajorB=*/false, dynamicM);
}

/// Whether `fill` writes +0.0.
inline bool isZeroFill(linalg::FillOp fill) {
  auto cst = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  if (auto value = cst ? dyn_cast<IntegerAttr>(cst.getValue()) : nullptr)
    return value.getValue().isZero();
  auto value = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
  return value && value.getValue().isPosZero();
}

/// The buffer that `v` views: the source at the end of a chain of view-like
/// ops (subview, collapse_shape, cast, ...).
inline Value getViewedBuffer(Value v) {
  while (true) {
    if (auto view = v.getDefiningOp<ViewLikeOpInterface>())
      v = view.getViewSource();
    else if (auto cast = v.getDefiningOp<memref::CastOp>())
      v = cast.getSource();
    else
      return v;
  }
}

/// Whether the memref `v` may view the buffer `root`: it does, or it views
/// something other than an allocation, a global or a function argument
/// (whose buffers are distinct).
inline bool mayViewBuffer(Value v, Value root) {
  Value viewed = getViewedBuffer(v);
  if (viewed == root)
    return true;
  if (auto arg = dyn_cast<BlockArgument>(viewed))
    return !arg.getOwner()->isEntryBlock() ||
           !isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return !viewed.getDefiningOp<memref::AllocOp>() &&
         !viewed.getDefiningOp<memref::AllocaOp>() &&
         !viewed.getDefiningOp<memref::GetGlobalOp>();
}

/// Whether `op` (regions included) certainly leaves the buffer `root` alone:
/// a buffer is only read or written through a memref operand that views it,
/// except that a call may reach a global or an argument's buffer by itself.
inline bool leavesBufferAlone(Operation *op, Value root) {
  bool local = root.getDefiningOp<memref::AllocOp>() ||
               root.getDefiningOp<memref::AllocaOp>();
  WalkResult result = op->walk([&](Operation *nested) {
    if (!local && isa<CallOpInterface>(nested))
      return WalkResult::interrupt();
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          mayViewBuffer(operand, root))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// What zeroes C before the contraction, if anything: a zero fill of C, or
/// a copy into C of a buffer that nothing but a zero fill writes (one zero
/// tensor shared by several contractions bufferizes to such copies). Ops
/// between them that leave C alone are looked past: preparing B (a weight's
/// permuting copy into its panels) often lands there. A kernel that starts
/// its accumulators from zero makes the zeroing redundant: eraseZeroInit
/// removes it.
inline Operation *findZeroInit(const NTMatmul &mm) {
  Operation *prev = mm.op->getPrevNode();
  Value root = getViewedBuffer(mm.c);
  while (prev && leavesBufferAlone(prev, root))
    prev = prev->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev))
    return fill.hasPureBufferSemantics() && fill.getDpsInits()[0] == mm.c &&
                   isZeroFill(fill)
               ? prev
               : nullptr;
  auto copy = dyn_cast_or_null<memref::CopyOp>(prev);
  if (!copy || copy.getTarget() != mm.c ||
      !copy.getSource().getDefiningOp<memref::AllocOp>())
    return nullptr;
  // Only what happens to the source before the copy matters: bufferization
  // may let the last contraction of that shape accumulate into it in place.
  linalg::FillOp zeroFill;
  for (Operation *user : copy.getSource().getUsers()) {
    if (user == copy.getOperation() ||
        (user->getBlock() == copy->getBlock() && copy->isBeforeInBlock(user)))
      continue;
    if (user->getBlock() != copy->getBlock())
      return nullptr;
    if (auto fill = dyn_cast<linalg::FillOp>(user)) {
      if (zeroFill || !isZeroFill(fill) || !fill->isBeforeInBlock(copy))
        return nullptr;
      zeroFill = fill;
    } else if (auto other = dyn_cast<memref::CopyOp>(user)) {
      if (other.getSource() != copy.getSource())
        return nullptr; // written by a copy
    } else if (!isa<memref::DeallocOp>(user)) {
      return nullptr;
    }
  }
  return zeroFill ? prev : nullptr;
}

/// Erases what findZeroInit found, and the shared zero buffer once no copy
/// reads it any more.
inline void eraseZeroInit(Operation *init) {
  auto copy = dyn_cast<memref::CopyOp>(init);
  if (!copy) {
    init->erase();
    return;
  }
  Value zeros = copy.getSource();
  copy.erase();
  if (!llvm::all_of(zeros.getUsers(), [](Operation *user) {
        return isa<linalg::FillOp, memref::DeallocOp>(user);
      }))
    return;
  for (Operation *user : llvm::make_early_inc_range(zeros.getUsers()))
    user->erase();
  zeros.getDefiningOp()->erase();
}

/// How many inputs of `next` are `product`, when `next` is an all-parallel
/// 2-D generic that reads `product` only at (m, n), its other inputs at
/// (m, n), (m) or (n), and writes its one init at (m, n) without reading
/// it: the form of a matmul's elementwise consumer (bias, activation,
/// residual, dequantization) that a kernel can apply per element of C.
/// 0 when `next` is not of that form or does not read `product`.
inline int countRowColumnEpilogueReads(linalg::GenericOp next, Value product) {
  if (next.getNumLoops() != 2 || next.getNumReductionLoops() != 0 ||
      next.getNumDpsInits() != 1)
    return 0;
  MLIRContext *ctx = next.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  AffineMap mn = AffineMap::get(2, 0, {d0, d1}, ctx);
  AffineMap onlyN = AffineMap::get(2, 0, {d1}, ctx);
  AffineMap onlyM = AffineMap::get(2, 0, {d0}, ctx);
  int reads = 0;
  for (OpOperand *input : next.getDpsInputOperands()) {
    AffineMap map = next.getMatchingIndexingMap(input);
    if (input->get() == product)
      ++reads;
    if (map != mn &&
        (input->get() == product || (map != onlyN && map != onlyM)))
      return 0;
  }
  if (next.getMatchingIndexingMap(next.getDpsInitOperand(0)) != mn ||
      !next.getRegion().front().getArgument(next.getNumDpsInputs()).use_empty())
    return 0;
  return reads;
}

/// An elementwise generic right after the matmul that reads C at (m, n) and
/// writes an [M, N] f32 buffer (C itself or its own output); other inputs may
/// be indexed by (m, n), (n) or (m). Its body becomes the kernel's store
/// epilogue (bias, activation, residual), which then writes its output in
/// place of C: when that is not C, nothing may read C later.
/// Allocations between the two (bufferization puts the epilogue's output
/// buffer there) are moved above the matmul, whose kernel writes them.
inline linalg::GenericOp findMatmulEpilogue(const NTMatmul &mm) {
  // The first op of C's initialization right before the matmul (a fill or
  // copy into C), above which the allocations move.
  Operation *anchor = mm.op;
  while (Operation *prev = anchor->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    auto copy = dyn_cast<memref::CopyOp>(prev);
    if (!(fill && fill.hasPureBufferSemantics() &&
          fill.getDpsInits()[0] == mm.c) &&
        !(copy && copy.getTarget() == mm.c))
      break;
    anchor = prev;
  }
  Operation *after = mm.op->getNextNode();
  SmallVector<memref::AllocOp> allocs;
  while (auto alloc = dyn_cast_or_null<memref::AllocOp>(after)) {
    // A dynamic size (rows given at run time) must be known above the
    // anchor already.
    for (Value size : alloc->getOperands()) {
      Operation *def = size.getDefiningOp();
      if (def && (def->getBlock() != anchor->getBlock() ||
                  !def->isBeforeInBlock(anchor)))
        return {};
    }
    allocs.push_back(alloc);
    after = after->getNextNode();
  }
  auto next = dyn_cast_or_null<linalg::GenericOp>(after);
  if (!next || !next.hasPureBufferSemantics() ||
      countRowColumnEpilogueReads(next, mm.c) == 0)
    return {};
  // The product keeps its own element type (i32 for the integer
  // contractions of attn-cpu-quantize-int8, whose epilogue dequantizes it);
  // every other input is f32.
  for (OpOperand *input : next.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (input->get() != mm.c && (!type || !type.getElementType().isF32()))
      return {};
  }
  OpOperand *init = next.getDpsInitOperand(0);
  if (!isIdentityF32(init->get(), ShapedType::isDynamic(mm.m)))
    return {};
  // Above C's initialization too, which findZeroInit expects right before
  // the matmul.
  auto hoistAllocs = [&] {
    for (memref::AllocOp alloc : allocs)
      alloc->moveBefore(anchor);
    return next;
  };
  if (init->get() == mm.c)
    return hoistAllocs();
  // C is never written: its only other users may be its allocation, a fill
  // or a copy into it before the matmul, frees, and ops after the epilogue
  // when the first of them overwrites all of C (bufferization reusing the
  // buffer for a later accumulator or result: nothing reads what the matmul
  // left there).
  if (!mm.c.getDefiningOp<memref::AllocOp>())
    return {};
  Operation *firstLater = nullptr;
  for (Operation *user : mm.c.getUsers()) {
    if (user == mm.op || user == next.getOperation() ||
        isa<memref::DeallocOp>(user))
      continue;
    if (user->getBlock() == next->getBlock() && next->isBeforeInBlock(user)) {
      if (!firstLater || user->isBeforeInBlock(firstLater))
        firstLater = user;
      continue;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(user);
        fill && fill->isBeforeInBlock(mm.op))
      continue;
    // Likewise a copy that initializes C (from a shared zero buffer, say).
    if (auto copy = dyn_cast<memref::CopyOp>(user);
        copy && copy.getTarget() == mm.c && copy->isBeforeInBlock(mm.op))
      continue;
    return {};
  }
  if (firstLater) {
    auto fill = dyn_cast<linalg::FillOp>(firstLater);
    auto generic = dyn_cast<linalg::GenericOp>(firstLater);
    bool overwrites =
        fill ? fill.hasPureBufferSemantics() && fill.getDpsInits()[0] == mm.c
             : generic && overwritesAll(generic, mm.c);
    if (!overwrites)
      return {};
  }
  return hoistAllocs();
}

/// Where the epilogue reads `input` for C's element (m, n): each result of
/// its indexing map is loop 0 (the row) or loop 1 (the column).
inline SmallVector<Value> epilogueIndices(linalg::GenericOp epilogue,
                                          OpOperand *input, Value m, Value n) {
  SmallVector<Value> indices;
  for (AffineExpr e : epilogue.getMatchingIndexingMap(input).getResults())
    indices.push_back(cast<AffineDimExpr>(e).getPosition() == 0 ? m : n);
  return indices;
}

/// The block-argument mapping for cloning the epilogue's body on C's value
/// `v`: the arguments of inputs that are `c` map to `v`, every other to
/// `load(input)` (a scalar or a vector, as the caller clones the body).
inline IRMapping
mapEpilogueInputs(linalg::GenericOp epilogue, Value c, Value v,
                  llvm::function_ref<Value(OpOperand *)> load) {
  Block &body = epilogue.getRegion().front();
  IRMapping map;
  for (OpOperand *input : epilogue.getDpsInputOperands())
    map.map(body.getArgument(input->getOperandNumber()),
            input->get() == c ? v : load(input));
  return map;
}

/// The epilogue's value at (m, n) for the product `v`: its other inputs
/// loaded at (m, n), (m) or (n) and its body cloned after them. An input
/// that `narrowInputs` maps (an f32 copy widened from an f16/bf16 buffer,
/// such as a bias) is loaded from the narrow buffer and widened in
/// registers instead.
inline Value
buildEpilogueValue(OpBuilder &b, Location loc, linalg::GenericOp epilogue,
                   Value c, Value v, Value m, Value n,
                   const llvm::DenseMap<Value, Value> *narrowInputs = nullptr) {
  IRMapping map = mapEpilogueInputs(epilogue, c, v, [&](OpOperand *input) {
    SmallVector<Value> indices = epilogueIndices(epilogue, input, m, n);
    Value narrow = narrowInputs ? narrowInputs->lookup(input->get()) : Value();
    if (!narrow)
      return memref::LoadOp::create(b, loc, input->get(), indices).getResult();
    Value x = memref::LoadOp::create(b, loc, narrow, indices);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x).getResult();
  });
  Block &body = epilogue.getRegion().front();
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookup(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}

/// A matched C[m, n] += sum_k A[m, k] * B[k, n]: a projection whose weight
/// is bound K-major (transposed, attn-cpu-transpose-weights).
inline std::optional<NTMatmul> matchKMajorMatmul(linalg::GenericOp op,
                                                 bool dynamicM = false) {
  return matchMatmul(op, /*kMajorB=*/true, dynamicM);
}

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_MATMULMATCH_H
