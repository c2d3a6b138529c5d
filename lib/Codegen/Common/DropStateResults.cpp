//===- DropStateResults.cpp - update model state in place -----------------===//
//
// A decode step returns its updated KV cache; after bufferization that
// result should be the cache argument's own buffer. Upstream's
// dropEquivalentBufferResults removes such results from private functions
// (outlined layer bodies) and rewrites their callers; this pass then drops
// the entry's state results that are its arguments. A state result that is
// anything else was copied: an error.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Manifest.h"
#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDROPSTATERESULTS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

static size_t countResults(ModuleOp module) {
  size_t n = 0;
  for (auto func : module.getOps<func::FuncOp>())
    n += func.getNumResults();
  return n;
}

namespace {
struct AttnDropStateResultsPass
    : public mlir::attn::impl::AttnDropStateResultsBase<
          AttnDropStateResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FlatSymbolRefAttr entryRef =
        AttnDialect::EntryAttrHelper(&getContext()).getAttr(module);
    auto entry = entryRef
                     ? module.lookupSymbol<func::FuncOp>(entryRef.getAttr())
                     : func::FuncOp();
    if (!entry)
      return;
    auto hasState = [&] {
      for (unsigned i = 0, e = entry.getNumResults(); i < e; ++i)
        if (entry.getResultAttr(i,
                                AttnDialect::StateArgAttrHelper::getNameStr()))
          return true;
      return false;
    };
    if (!hasState())
      return;

    // Loops that only carry the buffer (attn.cache_write's scf.for over the
    // batch) yield their region argument: fold their results to the init
    // buffer, and casts of it, so that the returned value is the argument.
    RewritePatternSet patterns(&getContext());
    scf::ForOp::getCanonicalizationPatterns(patterns, &getContext());
    memref::CastOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    // Outlined layer bodies (private) return the cache they update: drop
    // those results so that callers see the argument itself. A callee is
    // rewritten before its callers see the change, so repeat to a fixpoint.
    for (size_t before = 0, after = countResults(module); before != after;) {
      before = after;
      if (failed(bufferization::dropEquivalentBufferResults(module)))
        return signalPassFailure();
      after = countResults(module);
    }
    // Upstream leaves public functions alone; the entry's callers are the
    // runtime's, which pass the state buffer as the argument.
    auto ret = cast<func::ReturnOp>(entry.getBody().front().getTerminator());
    llvm::BitVector drop(entry.getNumResults());
    for (unsigned i = 0, e = entry.getNumResults(); i < e; ++i) {
      auto arg = entry.getResultAttrOfType<IntegerAttr>(
          i, AttnDialect::StateArgAttrHelper::getNameStr());
      if (!arg)
        continue;
      Value returned = ret.getOperand(i);
      while (auto cast = returned.getDefiningOp<memref::CastOp>())
        returned = cast.getSource();
      if (returned != entry.getArgument(static_cast<unsigned>(arg.getInt()))) {
        entry.emitOpError("model state (argument ")
            << arg.getInt()
            << ") is not updated in place: bufferization copies it (is the "
               "old value read after the update?)";
        return signalPassFailure();
      }
      drop.set(i);
    }
    ret->eraseOperands(drop);
    if (failed(entry.eraseResults(drop)))
      return signalPassFailure();
  }
};
} // namespace
