//===- ResultsToOutParams.cpp - out-params where the caller can allocate --===//
//
// The model entry and the outlined layer bodies of static models return
// their buffers through out-params (upstream's buffer-results-to-out-params),
// so that the runtime passes every output buffer and a layer writes its
// result where its caller wants it. A layer body of a model with run-time
// sizes (batch, sequence) returns a dynamically shaped buffer, which the
// upstream pass cannot allocate at the call site: there the body keeps
// returning the buffer it allocated, and the ownership-based deallocation
// frees it in the caller after its last use, as it would free the same
// buffer inlined.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRESULTSTOOUTPARAMS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// Whether the callers of `func` could not allocate one of its results: a
/// private function returning a memref of dynamic shape. (The entry is
/// public; its runtime caller allocates the output from the manifest.)
static bool returnsDynamicBuffer(func::FuncOp func) {
  if (!func.isPrivate())
    return false;
  return llvm::any_of(func.getResultTypes(), [](Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    return memref && !memref.hasStaticShape();
  });
}

namespace {
struct AttnResultsToOutParamsPass
    : public mlir::attn::impl::AttnResultsToOutParamsBase<
          AttnResultsToOutParamsPass> {
  void runOnOperation() override {
    bufferization::BufferResultsToOutParamsOpts options;
    options.hoistStaticAllocs = true;
    options.modifyPublicFunctions = true;
    options.filterFn = [](func::FuncOp *func) {
      return !returnsDynamicBuffer(*func);
    };
    if (failed(bufferization::promoteBufferResultsToOutParams(getOperation(),
                                                              options)))
      signalPassFailure();
  }
};
} // namespace
