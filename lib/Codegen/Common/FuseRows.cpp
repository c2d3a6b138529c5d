//===- FuseRows.cpp - one loop nest for residual add + norm ---------------===//
//
// A layer norm lowers to two row reductions and a normalization, usually
// right after a residual add: four passes over the activations. Tiling the
// normalization by rows and fusing its producers into the row loop makes
// them one loop nest in which each row is read from memory once.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEROWS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnFuseRowsPass
    : public mlir::attn::impl::AttnFuseRowsBase<AttnFuseRowsPass> {
  using AttnFuseRowsBase::AttnFuseRowsBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> roots;
    attn::AttnDialect::FuseRowsAttrHelper fuseRows(&getContext());
    getOperation().walk([&](linalg::GenericOp op) {
      if (fuseRows.isAttrPresent(op) && op.hasPureTensorSemantics())
        roots.push_back(op);
    });
    if (rows < 1) {
      getOperation()->emitError() << "attn-fuse-rows: rows must be >= 1, got "
                                  << static_cast<int64_t>(rows);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
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
      tiling.setLoopType(parallel ? scf::SCFTilingOptions::LoopType::ForallOp
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
    }
  }
};
} // namespace
