//===- GpuCopyKernels.cpp - strided host copies become kernels ------------===//
//
// A memref.copy left in host code becomes a gpu.memcpy, which the runtime
// performs as one contiguous byte copy from each view's first element, and
// which the GPU-to-LLVM lowering accepts for identity layouts only. A copy
// into or out of any other view (a slice of a concatenated output, a row of
// the input) becomes a linalg.copy here, before the GPU mapping turns it
// into a kernel.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUCOPYKERNELS
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    if (copy->getParentOfType<gpu::LaunchOp>() ||
        copy->getParentOfType<gpu::GPUModuleOp>())
      return rewriter.notifyMatchFailure(copy, "already device code");
    auto source = cast<MemRefType>(copy.getSource().getType());
    auto target = cast<MemRefType>(copy.getTarget().getType());
    if (source.getLayout().isIdentity() && target.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(copy, "a gpu.memcpy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
    return success();
  }
};

struct AttnGpuCopyKernelsPass
    : public mlir::attn::impl::AttnGpuCopyKernelsBase<AttnGpuCopyKernelsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
