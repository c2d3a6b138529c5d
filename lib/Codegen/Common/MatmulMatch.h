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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace mlir::attn {

/// A matched C[m, n] += sum_k A[m, k] * B[n, k] on static f32 memrefs with
/// identity layouts.
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

/// C[m, n] += sum_k A[m, k] * B on static f32 memrefs with identity
/// layouts, B being [N, K] (the checkpoint layout) or, when `kMajorB`,
/// [K, N].
inline std::optional<NTMatmul> matchMatmul(linalg::GenericOp op, bool kMajorB) {
  if (!op.hasPureBufferSemantics() || !isMulAddBody(op))
    return std::nullopt;
  std::optional<ContractionLoops> loops = matchContractionLoops(op);
  if (!loops || loops->kMajorB != kMajorB)
    return std::nullopt;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  if (!isStaticIdentityF32(a) || !isStaticIdentityF32(b) ||
      !isStaticIdentityF32(c))
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

inline std::optional<NTMatmul> matchNTMatmul(linalg::GenericOp op) {
  return matchMatmul(op, /*kMajorB=*/false);
}

/// An elementwise generic right after the matmul that reads C at (m, n) and
/// writes an [M, N] f32 buffer (C itself or its own output); other inputs may
/// be indexed by (m, n), (n) or (m). Its body becomes the kernel's store
/// epilogue (bias, activation, residual), which then writes its output in
/// place of C: when that is not C, nothing may read C later.
inline linalg::GenericOp findMatmulEpilogue(const NTMatmul &mm) {
  auto next = dyn_cast_or_null<linalg::GenericOp>(mm.op->getNextNode());
  if (!next || !next.hasPureBufferSemantics() || next.getNumLoops() != 2 ||
      next.getNumDpsInits() != 1 || next.getNumReductionLoops() != 0)
    return {};
  MLIRContext *ctx = next.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  AffineMap mn = AffineMap::get(2, 0, {d0, d1}, ctx);
  AffineMap onlyN = AffineMap::get(2, 0, {d1}, ctx);
  AffineMap onlyM = AffineMap::get(2, 0, {d0}, ctx);
  bool readsC = false;
  for (OpOperand *input : next.getDpsInputOperands()) {
    AffineMap map = next.getMatchingIndexingMap(input);
    if (input->get() == mm.c) {
      if (map != mn)
        return {};
      readsC = true;
    } else if (map != mn && map != onlyN && map != onlyM) {
      return {};
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !type.getElementType().isF32())
      return {};
  }
  OpOperand *init = next.getDpsInitOperand(0);
  if (!readsC || next.getMatchingIndexingMap(init) != mn ||
      !isStaticIdentityF32(init->get()) ||
      !next.getRegion().front().getArgument(next.getNumDpsInputs()).use_empty())
    return {};
  if (init->get() == mm.c)
    return next;
  // C is never written: its only other users may be its allocation, a fill
  // before the matmul and frees.
  if (!mm.c.getDefiningOp<memref::AllocOp>())
    return {};
  for (Operation *user : mm.c.getUsers()) {
    if (user == mm.op || user == next.getOperation() ||
        isa<memref::DeallocOp>(user))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user);
        fill && fill->isBeforeInBlock(mm.op))
      continue;
    return {};
  }
  return next;
}

/// The epilogue's value at (m, n) for the product `v`: its other inputs
/// loaded at (m, n), (m) or (n) and its body cloned after them.
inline Value buildEpilogueValue(OpBuilder &b, Location loc,
                                linalg::GenericOp epilogue, Value c, Value v,
                                Value m, Value n) {
  Block &body = epilogue.getRegion().front();
  IRMapping map;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(input->getOperandNumber());
    if (input->get() == c) {
      map.map(arg, v);
      continue;
    }
    SmallVector<Value> indices;
    for (AffineExpr e : epilogue.getMatchingIndexingMap(input).getResults())
      indices.push_back(cast<AffineDimExpr>(e).getPosition() == 0 ? m : n);
    map.map(arg, memref::LoadOp::create(b, loc, input->get(), indices));
  }
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookup(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}

/// A matched C[m, n] += sum_k A[m, k] * B[k, n]: a projection whose weight
/// is bound K-major (transposed, attn-cpu-transpose-weights).
inline std::optional<NTMatmul> matchKMajorMatmul(linalg::GenericOp op) {
  return matchMatmul(op, /*kMajorB=*/true);
}

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_MATMULMATCH_H
