//===- FuseRows.cpp - one loop nest for residual add + norm ---------------===//
//
// A layer norm lowers to two row reductions and a normalization, usually
// right after a residual add: four passes over the activations. Tiling the
// normalization by rows and fusing its producers into the row loop makes
// them one loop nest in which each row is read from memory once.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEROWS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// The elementwise generic that is `norm`'s only use (the truncf of an
/// f16/bf16 norm's f32 result), if any, else `norm`: tiling it instead puts
/// the conversion in the row loop too, so no f32 copy of the activations is
/// written and converted by another loop (kernel).
static linalg::GenericOp withConversion(linalg::GenericOp norm) {
  // With run-time sizes, a `tensor.dim` of the result sizes the conversion's
  // output; the init it was written into has the same sizes.
  for (OpOperand &use : llvm::make_early_inc_range(norm->getUses()))
    if (isa<tensor::DimOp>(use.getOwner()))
      use.set(norm.getDpsInits()[cast<OpResult>(use.get()).getResultNumber()]);
  if (!norm->hasOneUse())
    return norm;
  auto user = dyn_cast<linalg::GenericOp>(*norm->user_begin());
  if (!user || !user.hasPureTensorSemantics() ||
      user.getNumLoops() != norm.getNumLoops() ||
      user.getNumReductionLoops() != 0 ||
      !llvm::all_of(user.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return norm;
  return user;
}

namespace {
struct AttnFuseRowsPass
    : public mlir::attn::impl::AttnFuseRowsBase<AttnFuseRowsPass> {
  using AttnFuseRowsBase::AttnFuseRowsBase;

  /// Whether `root`'s rows go to an scf.forall.
  bool sharesRows(linalg::GenericOp root) {
    if (!parallel)
      return false;
    if (parallelMinRows <= 0)
      return true;
    int64_t rowCount = 1;
    SmallVector<int64_t> ranges = root.getStaticLoopRanges();
    for (int64_t size : ArrayRef(ranges).drop_back()) {
      if (ShapedType::isDynamic(size))
        return false;
      rowCount *= size;
    }
    return rowCount >= parallelMinRows;
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> roots;
    attn::AttnDialect::FuseRowsAttrHelper fuseRows(&getContext());
    getOperation().walk([&](linalg::GenericOp op) {
      if (fuseRows.isAttrPresent(op) && op.hasPureTensorSemantics())
        roots.push_back(fuseElementwise ? withConversion(op) : op);
    });
    if (rows < 1) {
      getOperation()->emitError() << "attn-fuse-rows: rows must be >= 1, got "
                                  << static_cast<int64_t>(rows);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    llvm::SmallPtrSet<Operation *, 8> rowLoops;
    for (linalg::GenericOp root : roots) {
      unsigned loops = root.getNumLoops();
      if (loops < 2)
        continue;
      // An empty iteration space has no rows to fuse (and tiling it would
      // make empty slices of its producers): leave it as it is.
      if (llvm::is_contained(root.getStaticLoopRanges(), 0))
        continue;
      SmallVector<OpFoldResult> tileSizes(loops - 1,
                                          rewriter.getIndexAttr(rows));
      tileSizes.push_back(rewriter.getIndexAttr(0));
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(tileSizes);
      tiling.setLoopType(sharesRows(root)
                             ? scf::SCFTilingOptions::LoopType::ForallOp
                             : scf::SCFTilingOptions::LoopType::ForOp);
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      // Fuse the elementwise and row-reduction producers; never a matmul,
      // which has its own kernels and would be recomputed per row.
      options.setFusionControlFn(
          [](tensor::ExtractSliceOp, OpResult producer, bool)
              -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            auto linalgOp = dyn_cast<linalg::LinalgOp>(producer.getOwner());
            if (!linalgOp || linalg::isaContractionOpInterface(linalgOp))
              return std::nullopt;
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          });
      rewriter.setInsertionPoint(root);
      FailureOr<scf::SCFTileAndFuseResult> result =
          scf::tileConsumerAndFuseProducersUsingSCF(
              rewriter, cast<TilingInterface>(root.getOperation()), options);
      if (failed(result)) {
        root.emitOpError("attn-fuse-rows: tiling failed");
        return signalPassFailure();
      }
      for (auto [original, replacement] : result->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      if (root->use_empty())
        rewriter.eraseOp(root);
      for (LoopLikeOpInterface loop : result->loops)
        rowLoops.insert(loop.getOperation());
    }
    if (fuseElementwise && !rowLoops.empty() &&
        failed(fuseElementwiseInRows(rowLoops)))
      return signalPassFailure();
  }

  /// Fuses each elementwise producer in a row loop's body into its
  /// consumers there. Only inside the row loops: elsewhere the matmul
  /// kernels' patterns expect the generics the lowering emitted. Upstream's
  /// pattern set is not used as a whole: its RemoveOutsDependency would
  /// give the row's result a fresh init instead of the output slice, and
  /// the row would be written to a temporary and copied.
  /// Fusing a producer whose body reads linalg.index remaps the indices
  /// through affine.apply of its indexing map, one layer per fusion. The
  /// layers are mostly projections (one dimension of the operands); left in
  /// place they grow with every fusion into chains whose verification
  /// (affine symbol checks, which revisit shared operands) took minutes on
  /// a decode step. Each projection is replaced by the operand it selects;
  /// nothing else in the body changes (a general folder would also move
  /// constants, and layers that compute the same thing must stay equal
  /// for attn-outline-layers).
  static void forwardProjections(RewriterBase &rewriter, Operation *op) {
    op->walk([&](affine::AffineApplyOp apply) {
      AffineMap map = apply.getAffineMap();
      if (map.getNumResults() != 1)
        return;
      unsigned position;
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(0)))
        position = dim.getPosition();
      else if (auto symbol = dyn_cast<AffineSymbolExpr>(map.getResult(0)))
        position = map.getNumDims() + symbol.getPosition();
      else
        return;
      rewriter.replaceAllUsesWith(apply.getResult(),
                                  apply.getMapOperands()[position]);
      rewriter.eraseOp(apply);
    });
  }

  LogicalResult
  fuseElementwiseInRows(const llvm::SmallPtrSetImpl<Operation *> &rowLoops) {
    IRRewriter rewriter(&getContext());
    // A producer with several consumers in the row (the residual sum
    // feeding mean, variance and normalization) is recomputed in each:
    // cheaper than a row temporary per thread.
    auto fusable = [&](OpOperand &operand) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      return producer && rowLoops.contains(producer->getParentOp()) &&
             producer->getBlock() == operand.getOwner()->getBlock() &&
             llvm::all_of(producer->getUsers(),
                          [&](Operation *user) {
                            return isa<linalg::GenericOp>(user) &&
                                   user->getBlock() == producer->getBlock();
                          }) &&
             linalg::areElementwiseOpsFusable(&operand);
    };
    // A row has a handful of generics: fuse one pair at a time until none
    // is left.
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<linalg::GenericOp> generics;
      for (Operation *loop : rowLoops)
        loop->walk([&](linalg::GenericOp op) { generics.push_back(op); });
      for (linalg::GenericOp consumer : generics) {
        auto it = llvm::find_if(consumer->getOpOperands(), fusable);
        if (it == consumer->getOpOperands().end())
          continue;
        Operation *producer = it->get().getDefiningOp();
        rewriter.setInsertionPoint(consumer);
        FailureOr<linalg::ElementwiseOpFusionResult> fused =
            linalg::fuseElementwiseOps(rewriter, &*it);
        if (failed(fused))
          return consumer.emitOpError("attn-fuse-rows: elementwise fusion "
                                      "failed");
        // The consumer's results, and the producer's where the fused op
        // precedes the use (earlier consumers keep the producer, and fuse
        // it in turn).
        Operation *fusedOp = fused->fusedOp;
        for (auto [original, replacement] : fused->replacements)
          rewriter.replaceUsesWithIf(
              original, replacement, [&](OpOperand &use) {
                return use.getOwner() != producer &&
                       (original.getDefiningOp() != producer ||
                        fusedOp->isBeforeInBlock(use.getOwner()));
              });
        rewriter.eraseOp(consumer);
        if (producer->use_empty())
          rewriter.eraseOp(producer);
        forwardProjections(rewriter, fusedOp);
        changed = true;
        break;
      }
    }
    return success();
  }
};
} // namespace
