//===- CpuLowerStridedCopies.cpp - strided copies as loops ----------------===//
//
// finalize-memref-to-llvm lowers a memref.copy to llvm.memcpy only when both
// buffers are one contiguous block; any other copy becomes a call of
// memrefCopy, which copies element by element through memcpy calls (a
// GPT-2 decode step's KV-cache writes took about 1% of it there). Where
// both innermost dimensions are contiguous and of the same static size, the
// copy becomes loops of vector loads and stores along it (LLVM left the
// scalar loops of linalg.copy scalar: the buffers may alias); otherwise
// linalg.copy's loops.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPULOWERSTRIDEDCOPIES
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// Whether finalize-memref-to-llvm copies `type` as one block (its own
/// condition for llvm.memcpy).
static bool isOneBlock(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    (memref.hasStaticShape() && memref.getNumElements() > 0 &&
                     memref::isStaticShapeAndContiguousRowMajor(memref)));
}

/// Whether the innermost dimension of `type` is contiguous (unit stride).
static bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// Elements per vector of the copy of `from` to `to` along their innermost
/// dimension: up to 64 bytes dividing its static size; 0 where that
/// dimension is dynamic, differs, or is not contiguous on both sides.
static int64_t vectorLanes(MemRefType from, MemRefType to) {
  int64_t rank = from.getRank();
  // Vectors of whole-byte ints and floats (not index, nor i1).
  if (!from.getElementType().isIntOrFloat())
    return 0;
  unsigned bits = from.getElementTypeBitWidth();
  if (rank == 0 || to.getRank() != rank || bits % 8 != 0 ||
      from.getElementType() != to.getElementType() ||
      !hasUnitInnerStride(from) || !hasUnitInnerStride(to))
    return 0;
  int64_t size = from.getDimSize(rank - 1);
  if (ShapedType::isDynamic(size) || size != to.getDimSize(rank - 1))
    return 0;
  int64_t lanes = std::max<int64_t>(1, 512 / bits);
  while (size % lanes != 0)
    lanes /= 2;
  return lanes;
}

namespace {
struct LowerStridedCopy : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    if (isOneBlock(copy.getSource().getType()) &&
        isOneBlock(copy.getTarget().getType()))
      return rewriter.notifyMatchFailure(copy, "a memcpy of one block");
    Value from = copy.getSource(), to = copy.getTarget();
    auto fromType = dyn_cast<MemRefType>(from.getType());
    auto toType = dyn_cast<MemRefType>(to.getType());
    if (!fromType || !toType)
      return rewriter.notifyMatchFailure(copy, "unranked");
    int64_t lanes = vectorLanes(fromType, toType);
    if (!lanes) {
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, from, to);
      return success();
    }
    Location loc = copy.getLoc();
    int64_t rank = fromType.getRank();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> lbs(rank, zero), ubs, steps(rank, one);
    for (int64_t d = 0; d < rank; ++d)
      ubs.push_back(memref::DimOp::create(rewriter, loc, from, d));
    steps.back() = arith::ConstantIndexOp::create(rewriter, loc, lanes);
    auto vectorType = VectorType::get({lanes}, fromType.getElementType());
    scf::buildLoopNest(rewriter, loc, lbs, ubs, steps,
                       [&](OpBuilder &b, Location l, ValueRange ivs) {
                         Value v = vector::LoadOp::create(b, l, vectorType,
                                                          from, ivs);
                         vector::StoreOp::create(b, l, v, to, ivs);
                       });
    rewriter.eraseOp(copy);
    return success();
  }
};

struct AttnCpuLowerStridedCopiesPass
    : public mlir::attn::impl::AttnCpuLowerStridedCopiesBase<
          AttnCpuLowerStridedCopiesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerStridedCopy>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
