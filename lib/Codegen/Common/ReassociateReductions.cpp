//===- ReassociateReductions.cpp - vectorizable reductions ----------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNREASSOCIATEREDUCTIONS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnReassociateReductionsPass
    : public mlir::attn::impl::AttnReassociateReductionsBase<
          AttnReassociateReductionsPass> {
  void runOnOperation() override {
    auto added = arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() == 0)
        return;
      // Added to the flags an op already has (a maximum that may ignore
      // NaN keeps saying so).
      op.getRegion().walk([&](arith::ArithFastMathInterface arith) {
        arith::FastMathFlags flags = added;
        if (arith::FastMathFlagsAttr old = arith.getFastMathFlagsAttr())
          flags = flags | old.getValue();
        arith->setAttr(arith.getFastMathAttrName(),
                       arith::FastMathFlagsAttr::get(&getContext(), flags));
      });
    });
  }
};
} // namespace
