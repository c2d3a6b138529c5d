//===- MarkTokenIdInputs.cpp - id bounds of embedding inputs --------------===//
//
// The embedding lookup clamps an id outside its table; a silent substitute
// row is a wrong answer. The CPU code checks ids in place
// (attn-cpu-check-token-ids), but a CUDA model has no host-visible place to
// report from, so the bound travels with the input to the runtime, which
// checks the ids on the host before they are uploaded.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNMARKTOKENIDINPUTS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// The function argument `ids` is a view of, if any: shape-only ops and
/// attn.layer block arguments are looked through.
static BlockArgument findIdsArgument(Value ids) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(ids)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<func::FuncOp>(owner))
        return arg;
      auto layer = dyn_cast<LayerOp>(owner);
      if (!layer)
        return {};
      ids = layer.getInputs()[arg.getArgNumber()];
      continue;
    }
    Operation *def = ids.getDefiningOp();
    if (!isa<tensor::ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::CastOp>(def))
      return {};
    ids = def->getOperand(0);
  }
}

/// Whether `ids` is computed from a function argument (through any ops and
/// attn.layer block arguments). Ids computed from constants alone (learned
/// positions: an iota over a static sequence) are in range by construction
/// and need no check.
static bool dependsOnArguments(Value ids) {
  SmallVector<Value> work = {ids};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<func::FuncOp>(owner))
        return true;
      if (auto layer = dyn_cast<LayerOp>(owner))
        work.push_back(layer.getInputs()[arg.getArgNumber()]);
      continue;
    }
    llvm::append_range(work, value.getDefiningOp()->getOperands());
  }
  return false;
}

namespace {
struct AttnMarkTokenIdInputsPass
    : public mlir::attn::impl::AttnMarkTokenIdInputsBase<
          AttnMarkTokenIdInputsPass> {
  using AttnMarkTokenIdInputsBase::AttnMarkTokenIdInputsBase;

  void runOnOperation() override {
    StringAttr idBound =
        AttnDialect::IdBoundAttrHelper(&getContext()).getName();
    StringAttr positionBound =
        AttnDialect::PositionBoundAttrHelper(&getContext()).getName();
    Builder b(&getContext());
    // Records `limit` as argument attribute `name` on the function argument
    // `arg` (the smallest limit when several uses bound it).
    auto bound = [&](BlockArgument arg, int64_t limit, StringAttr name) {
      auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
      unsigned index = arg.getArgNumber();
      if (auto known = func.getArgAttrOfType<IntegerAttr>(index, name))
        limit = std::min(limit, known.getInt());
      func.setArgAttr(index, name, b.getI64IntegerAttr(limit));
    };
    // Run-time positions (a decode step's cache lengths) are bounded like
    // ids: the cache rows written and the position-table rows read must
    // exist; the lowering only clamps.
    auto boundPositions = [&](Value positions, int64_t limit) {
      if (BlockArgument arg = positions ? findIdsArgument(positions) : nullptr;
          arg && limit >= 1)
        bound(arg, limit, positionBound);
    };
    // A run-time number of tokens T (a step that serves prefill and
    // decode) is bounded as T = 1, the weakest bound that holds for every
    // run; the caller keeps positions + T within it (the generation
    // session does) and the lowering clamps the rest.
    auto tokensOr1 = [](int64_t tokens) {
      return ShapedType::isDynamic(tokens) ? 1 : tokens;
    };
    getOperation().walk([&](Operation *op) {
      if (auto write = dyn_cast<CacheWriteOp>(op)) {
        auto cache = write.getCache().getType();
        auto rows = write.getNewRows().getType();
        if (!cache.isDynamicDim(2))
          boundPositions(write.getPositions(),
                         cache.getDimSize(2) - tokensOr1(rows.getDimSize(2)) +
                             1);
      } else if (auto pos = dyn_cast<LearnedPosOp>(op)) {
        int64_t rows = pos.getTable().getType().getDimSize(0);
        int64_t seq = pos.getInput().getType().getDimSize(1);
        if (!ShapedType::isDynamic(rows))
          boundPositions(pos.getPositions(),
                         rows - static_cast<int64_t>(pos.getOffset()) -
                             tokensOr1(seq) + 1);
      }
    });
    getOperation().walk([&](EmbeddingOp op) {
      int64_t rows = op.getTable().getType().getDimSize(0);
      BlockArgument arg = findIdsArgument(op.getIds());
      if (!arg || ShapedType::isDynamic(rows)) {
        if (warnComputedIds && dependsOnArguments(op.getIds()))
          op.emitWarning("ids computed inside the model are not range-checked "
                         "on this target: an id outside the table reads its "
                         "first or last row");
        return;
      }
      bound(arg, rows, idBound);
    });
  }
};
} // namespace
