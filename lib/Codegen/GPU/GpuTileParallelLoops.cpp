//===- GpuTileParallelLoops.cpp - blocks x threads for parallel loops -----===//

#include "attnc/Codegen/GPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUTILEPARALLELLOOPS
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnGpuTileParallelLoopsPass
    : public mlir::attn::impl::AttnGpuTileParallelLoopsBase<
          AttnGpuTileParallelLoopsPass> {
  using AttnGpuTileParallelLoopsBase::AttnGpuTileParallelLoopsBase;

  void runOnOperation() override {
    if (threads < 1) {
      getOperation().emitError("attn-gpu-tile-parallel-loops: threads must be "
                               ">= 1");
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost, nested;
    getOperation().walk([&](scf::ParallelOp loop) {
      (loop->getParentOfType<scf::ParallelOp>() ? nested : outermost)
          .push_back(loop);
    });
    // A parallel loop inside another one is per-iteration work of the outer
    // loop (e.g. attn-flash-attention's block code, a forall body), which
    // runs serially in one thread. convert-parallel-loops-to-gpu maps only
    // loops nested directly in each other and gives up on a nested loop
    // that follows a side effect (a store, a stack buffer), so make such
    // loops sequential here. The walk is post-order: inner loops first.
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : nested) {
      rewriter.setInsertionPoint(loop);
      if (failed(scf::parallelForToNestedFors(rewriter, loop))) {
        loop.emitError("attn-gpu-tile-parallel-loops: cannot make this "
                       "nested parallel loop sequential");
        return signalPassFailure();
      }
    }
    // attn-tile records its choice on the function.
    int64_t blockThreads = threads;
    if (auto tile = mlir::attn::TileAttr::lookup(getOperation()))
      blockThreads = tile.getThreads().value_or(blockThreads);
    bool minBounds = false;
    for (scf::ParallelOp loop : outermost) {
      // Two dimensions at most, the leading ones collapsed into the first.
      // gpu-map-parallel-loops gives the outer loop's dimensions to block x,
      // y, z (a fourth runs sequentially in a block, and then the tile loop
      // below stays unmapped: one thread per block, e.g. for a [B, H, S, D]
      // head transpose) and the tile loop's to threads x, y, z in order: with
      // three, the threads would go to z, which allows only 64 per block.
      if (loop.getNumLoops() > 2 && loop.getNumResults() == 0) {
        unsigned rank = loop.getNumLoops();
        std::vector<unsigned> leading;
        for (unsigned d = 0; d + 1 < rank; ++d)
          leading.push_back(d);
        Operation *next = loop->getNextNode();
        rewriter.setInsertionPoint(loop);
        collapseParallelLoops(rewriter, loop, {leading, {rank - 1}});
        loop = cast<scf::ParallelOp>(next->getPrevNode());
        // The collapsed bounds are arith on constants: fold them, so that
        // the tiling below sees constant extents.
        SmallVector<Operation *> boundOps;
        SmallVector<Value> worklist(loop.getUpperBound());
        while (!worklist.empty())
          if (Operation *def = worklist.pop_back_val().getDefiningOp()) {
            boundOps.push_back(def);
            llvm::append_range(worklist, def->getOperands());
          }
        (void)applyOpPatternsGreedily(boundOps, FrozenRewritePatternSet());
      }
      unsigned rank = loop.getNumLoops();
      std::optional<int64_t> lower =
          getConstantIntValue(loop.getLowerBound()[rank - 1]);
      std::optional<int64_t> upper =
          getConstantIntValue(loop.getUpperBound()[rank - 1]);
      std::optional<int64_t> step =
          getConstantIntValue(loop.getStep()[rank - 1]);
      if (!lower || !step || *step != 1)
        continue;
      if (!upper) {
        // A run-time extent (a sequence length): blocks of blockThreads
        // threads, the last one partial.
        SmallVector<int64_t> tileSizes(rank, 1);
        tileSizes.back() = blockThreads;
        minBounds = true;
        scf::tileParallelLoop(loop, tileSizes, /*noMinMaxBounds=*/false);
        continue;
      }
      int64_t extent = *upper - *lower;
      if (extent <= 1)
        continue;
      SmallVector<int64_t> tileSizes(rank, 1);
      tileSizes.back() = std::min<int64_t>(blockThreads, extent);
      // Min/max bounds only where the tile does not divide the extent.
      bool divides = extent % tileSizes.back() == 0;
      minBounds |= !divides;
      scf::tileParallelLoop(loop, tileSizes, /*noMinMaxBounds=*/divides);
    }
    if (!minBounds)
      return;
    // The tile loop's bound is affine.min(step, ub - iv) with the step as an
    // operand. When that loop is mapped to threads, convert-parallel-loops-
    // to-gpu needs a constant in the min's map to size the block, so fold
    // the constant operands into the maps.
    RewritePatternSet patterns(&getContext());
    affine::AffineMinOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
