//===- GpuTileParallelLoops.cpp - blocks x threads for parallel loops -----===//

#include "attnc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUTILEPARALLELLOOPS
#include "attnc/Conversion/Passes.h.inc"
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
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    });
    for (scf::ParallelOp loop : outermost) {
      unsigned rank = loop.getNumLoops();
      std::optional<int64_t> lower =
          getConstantIntValue(loop.getLowerBound()[rank - 1]);
      std::optional<int64_t> upper =
          getConstantIntValue(loop.getUpperBound()[rank - 1]);
      std::optional<int64_t> step = getConstantIntValue(loop.getStep()[rank - 1]);
      if (!lower || !upper || !step || *step != 1)
        continue;
      int64_t extent = *upper - *lower;
      if (extent <= 1)
        continue;
      SmallVector<int64_t> tileSizes(rank, 1);
      tileSizes.back() = std::min<int64_t>(threads, extent);
      // Min/max bounds only where the tile does not divide the extent.
      scf::tileParallelLoop(loop, tileSizes,
                            /*noMinMaxBounds=*/extent % tileSizes.back() == 0);
    }
  }
};
} // namespace
