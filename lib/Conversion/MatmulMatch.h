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

/// The body must be `out + a * b` (in either operand order).
inline bool isMulAddBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  if (add.getLhs() != acc && add.getRhs() != acc)
    return false;
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}

inline std::optional<NTMatmul> matchNTMatmul(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  SmallVector<AffineMap> expected = {AffineMap::get(3, 0, {d0, d2}, ctx),
                                     AffineMap::get(3, 0, {d1, d2}, ctx),
                                     AffineMap::get(3, 0, {d0, d1}, ctx)};
  if (op.getIndexingMapsArray() != expected)
    return std::nullopt;
  auto iters = op.getIteratorTypesArray();
  if (iters[0] != utils::IteratorType::parallel ||
      iters[1] != utils::IteratorType::parallel ||
      iters[2] != utils::IteratorType::reduction || !isMulAddBody(op))
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
                  bType.getDimSize(0),
                  aType.getDimSize(1)};
}

/// A matched C[m, n] += sum_k A[m, k] * B[k, n] on static f32 memrefs with
/// identity layouts: a projection whose weight is bound K-major (transposed,
/// attn-cpu-transpose-weights). `n` is B's dimension 1.
inline std::optional<NTMatmul> matchKMajorMatmul(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  SmallVector<AffineMap> expected = {AffineMap::get(3, 0, {d0, d2}, ctx),
                                     AffineMap::get(3, 0, {d2, d1}, ctx),
                                     AffineMap::get(3, 0, {d0, d1}, ctx)};
  if (op.getIndexingMapsArray() != expected)
    return std::nullopt;
  auto iters = op.getIteratorTypesArray();
  if (iters[0] != utils::IteratorType::parallel ||
      iters[1] != utils::IteratorType::parallel ||
      iters[2] != utils::IteratorType::reduction || !isMulAddBody(op))
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
                  bType.getDimSize(1),
                  aType.getDimSize(1)};
}

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_MATMULMATCH_H
