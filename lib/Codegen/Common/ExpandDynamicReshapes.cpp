//===- ExpandDynamicReshapes.cpp - expand_shape with dynamic groups -------===//
//
// A model with dynamic batch and sequence splits [B * S, N] back into
// [B, S, N]: memref.expand_shape with two dynamic sizes in one group, on
// which upstream's expand-strided-metadata crashes. On a contiguous source
// the expansion is just a reinterpret_cast with row-major strides.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDDYNAMICRESHAPES
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Whether some reassociation group of `op` expands into more than one
/// dynamic size (the case expand-strided-metadata cannot take).
static bool hasMultiDynamicGroup(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); }) >
        1)
      return true;
  return false;
}

struct AttnExpandDynamicReshapesPass
    : public mlir::attn::impl::AttnExpandDynamicReshapesBase<
          AttnExpandDynamicReshapesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation().walk([&](memref::ExpandShapeOp op) {
      // Identity layouts only: the source is then contiguous with offset 0,
      // and so is the result.
      if (hasMultiDynamicGroup(op) &&
          op.getSrcType().getLayout().isIdentity() &&
          op.getResultType().getLayout().isIdentity())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp op : ops) {
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
      // Row-major strides: the product of the sizes after each dimension;
      // constant while those are static.
      int64_t rank = static_cast<int64_t>(sizes.size());
      SmallVector<OpFoldResult> strides(rank);
      int64_t staticStride = 1;
      Value dynamicStride;
      for (int64_t d = rank - 1; d >= 0; --d) {
        strides[d] = dynamicStride
                         ? OpFoldResult(dynamicStride)
                         : OpFoldResult(rewriter.getIndexAttr(staticStride));
        if (std::optional<int64_t> size = getConstantIntValue(sizes[d]);
            size && !dynamicStride) {
          staticStride *= *size;
          continue;
        }
        Value sizeValue =
            getValueOrCreateConstantIndexOp(rewriter, loc, sizes[d]);
        Value before =
            dynamicStride
                ? dynamicStride
                : arith::ConstantIndexOp::create(rewriter, loc, staticStride)
                      .getResult();
        dynamicStride = arith::MulIOp::create(rewriter, loc, before, sizeValue);
      }
      rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
          op, op.getResultType(), op.getSrc(), rewriter.getIndexAttr(0), sizes,
          strides);
    }
  }
};

} // namespace
