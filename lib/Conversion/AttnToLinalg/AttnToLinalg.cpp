//===- AttnToLinalg.cpp - lower attn ops to linalg on tensors -------------===//
//
// Correctness-first lowering of every attn op to linalg.generic and tensor
// ops. All arithmetic happens in f32; f16/bf16 operands are extended on entry
// and the result rounded once at the end. Fused and tiled forms (flash
// attention, epilogues) are the job of later passes; nothing here prevents
// them, since each op still lowers to a handful of generics on its own.
// The patterns live with their op family (Pointwise, Norms, Linear,
// Embeddings, Attention); this file holds the pass.
//
//===----------------------------------------------------------------------===//

#include "Conversion/AttnToLinalg/Patterns.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOLINALG
#include "attnc/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Why `op`'s dynamic dimensions cannot be lowered, or nullopt when they can
/// (or it has none).
static std::optional<std::string> unsupportedDynamicShape(Operation *op) {
  auto isDynamic = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && !shaped.hasStaticShape();
  };
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  if (!llvm::any_of(types, isDynamic))
    return std::nullopt;
  if (auto write = dyn_cast<CacheWriteOp>(op)) {
    // The cache is model state (allocated by the runtime): static. The
    // number of rows written may be a run-time value.
    auto rows = write.getNewRows().getType();
    if (!write.getCache().getType().hasStaticShape() || rows.isDynamicDim(0) ||
        rows.isDynamicDim(1) || rows.isDynamicDim(3))
      return std::string("dynamic shapes (KV-cache writes need a static "
                         "cache; only the number of rows written may be "
                         "dynamic)");
    return std::nullopt;
  }
  for (Type t : types) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    // Integer tensors (ids, positions, kv lengths) are indexed by batch
    // and sequence only.
    if (!tensor || !isa<FloatType>(tensor.getElementType()) ||
        tensor.getRank() == 0)
      continue;
    // A softmax sizes nothing from its last dimension (scores over a
    // run-time key length, where attention was not raised to attn.sdpa).
    if (tensor.isDynamicDim(tensor.getRank() - 1) && !isa<SoftmaxOp>(op)) {
      std::string why;
      llvm::raw_string_ostream os(why);
      os << "a dynamic feature (last) dimension in " << tensor
         << " (only batch and sequence dimensions may be dynamic)";
      return why;
    }
    if (tensor.getRank() == 4 && isa<SdpaOp, RotaryOp>(op) &&
        tensor.isDynamicDim(1))
      return std::string("a dynamic number of heads (only batch and sequence "
                         "dimensions may be dynamic)");
  }
  return std::nullopt;
}

/// attn.layer -> its body, inlined in place.
struct LayerInlining : OpRewritePattern<LayerOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.inlineBlockBefore(&body, op, op.getInputs());
    rewriter.eraseOp(yield);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct AttnLowerToLinalgPass
    : public mlir::attn::impl::AttnLowerToLinalgBase<AttnLowerToLinalgPass> {
  using AttnLowerToLinalgBase::AttnLowerToLinalgBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Batch and sequence dimensions may be dynamic: the patterns size their
    // results from the operands at run time. Feature dimensions (the last
    // one, and the heads of 4-D attention operands) size weights and head
    // splits and must be static; KV-cache writes need a static cache. Say so
    // instead of leaving an op unconverted.
    WalkResult dynamic = getOperation().walk([](Operation *op) {
      if (!isa_and_nonnull<AttnDialect>(op->getDialect()) ||
          isa<LayerOp, YieldOp>(op))
        return WalkResult::advance();
      std::optional<std::string> why = unsupportedDynamicShape(op);
      if (!why)
        return WalkResult::advance();
      op->emitOpError("has ")
          << *why << ", which attn-lower-to-linalg does not support";
      return WalkResult::interrupt();
    });
    if (dynamic.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.addIllegalDialect<AttnDialect>();
    target.addLegalOp<WeightOp>();
    if (!inlineLayers) {
      bool inlineState = inlineStateLayers;
      target.addDynamicallyLegalOp<LayerOp>([inlineState](LayerOp layer) {
        return !inlineState || layer->getNumResults() == 1;
      });
      target.addLegalOp<YieldOp>();
    }
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    if (inlineLayers || inlineStateLayers)
      patterns.add<LayerInlining>(ctx);
    populateAttnToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns) {
  populatePointwiseToLinalgPatterns(patterns);
  populateNormsToLinalgPatterns(patterns);
  populateLinearToLinalgPatterns(patterns);
  populateEmbeddingsToLinalgPatterns(patterns);
  populateAttentionToLinalgPatterns(patterns);
  // attn.mha becomes attn.linear projections, head reshapes and one
  // attn.sdpa, which the patterns above lower.
  populateDecomposeMhaPatterns(patterns);
}
