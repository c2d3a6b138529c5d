//===- DistinctResults.cpp - one buffer per returned result ---------------===//
//
// Two graph outputs can be one value: an exporter's Identity, or two equal
// computations that CSE merged. Each result becomes an output buffer of its
// own (buffer-results-to-out-params), which cannot be two results at once,
// so every repeat of a returned buffer is returned as a copy.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDISTINCTRESULTS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnDistinctResultsPass
    : public mlir::attn::impl::AttnDistinctResultsBase<
          AttnDistinctResultsPass> {
  void runOnOperation() override {
    WalkResult walk = getOperation().walk([&](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 8> seen;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        if (seen.insert(value).second)
          continue;
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type)
          continue;
        if (!type.getLayout().isIdentity()) {
          ret.emitOpError("returns the buffer of type ")
              << type << " twice, and it has no identity layout to copy to";
          return WalkResult::interrupt();
        }
        Location loc = value.getLoc();
        SmallVector<Value> dynamicSizes;
        for (int64_t dim = 0; dim < type.getRank(); ++dim)
          if (type.isDynamicDim(dim))
            dynamicSizes.push_back(
                memref::DimOp::create(builder, loc, value, dim));
        Value copy = memref::AllocOp::create(builder, loc, type, dynamicSizes);
        memref::CopyOp::create(builder, loc, value, copy);
        operand.set(copy);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
