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

namespace {
struct AttnMarkTokenIdInputsPass
    : public mlir::attn::impl::AttnMarkTokenIdInputsBase<
          AttnMarkTokenIdInputsPass> {
  using AttnMarkTokenIdInputsBase::AttnMarkTokenIdInputsBase;

  void runOnOperation() override {
    AttnDialect::IdBoundAttrHelper idBound(&getContext());
    Builder b(&getContext());
    getOperation().walk([&](EmbeddingOp op) {
      int64_t rows = op.getTable().getType().getDimSize(0);
      BlockArgument arg = findIdsArgument(op.getIds());
      if (!arg || ShapedType::isDynamic(rows)) {
        if (warnComputedIds)
          op.emitWarning("ids computed inside the model are not range-checked "
                         "on this target: an id outside the table reads its "
                         "first or last row");
        return;
      }
      auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
      unsigned index = arg.getArgNumber();
      if (auto known =
              func.getArgAttrOfType<IntegerAttr>(index, idBound.getName()))
        rows = std::min(rows, known.getInt());
      func.setArgAttr(index, idBound.getName(), b.getI64IntegerAttr(rows));
    });
  }
};
} // namespace
