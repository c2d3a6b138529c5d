//===- PromoteLoopBuffers.cpp - per-iteration temporaries on the stack ----===//
//
// One-shot bufferization allocates a block-local tensor created inside an
// scf.forall body (attn-flash-attention's running max, sum, accumulator and
// score tile) with memref.alloc inside the body. On the CPU that is a malloc
// and free per iteration; in a CUDA kernel it would be device-side malloc,
// which is slow and limited by a small heap. A stack allocation scoped to
// the iteration is what these buffers are.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPROMOTELOOPBUFFERS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Static, small, and owned by the iteration: every use is in the body and
/// nothing frees it explicitly (deallocation has not run yet).
static bool isPromotable(memref::AllocOp alloc, int64_t maxBytes) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return false;
  int64_t bytes =
      type.getNumElements() *
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  if (bytes > maxBytes)
    return false;
  return llvm::none_of(alloc->getUsers(), [](Operation *user) {
    return isa<memref::DeallocOp>(user);
  });
}

struct AttnPromoteLoopBuffersPass
    : public mlir::attn::impl::AttnPromoteLoopBuffersBase<
          AttnPromoteLoopBuffersPass> {
  using AttnPromoteLoopBuffersBase::AttnPromoteLoopBuffersBase;

  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    getOperation().walk([&](scf::ForallOp loop) { loops.push_back(loop); });
    for (scf::ForallOp loop : loops) {
      // Only allocations directly in the body: one in a nested sequential
      // loop would be per inner iteration, and the stack would grow with it.
      Block *body = loop.getBody();
      SmallVector<memref::AllocOp> allocs;
      for (Operation &op : body->without_terminator())
        if (auto alloc = dyn_cast<memref::AllocOp>(op);
            alloc && isPromotable(alloc, maxBytes))
          allocs.push_back(alloc);
      if (allocs.empty())
        continue;

      // The lowerings of scf.forall (to scf.for on the CPU, to gpu.launch
      // bodies that may still loop) do not keep the forall's automatic
      // allocation scope; an explicit scope frees the stack per iteration.
      Location loc = loop.getLoc();
      OpBuilder b(body, body->begin());
      auto scope = memref::AllocaScopeOp::create(b, loc, TypeRange{});
      Block *scopeBlock = b.createBlock(&scope.getBodyRegion());
      scopeBlock->getOperations().splice(
          scopeBlock->end(), body->getOperations(),
          std::next(Block::iterator(scope)),
          Block::iterator(body->getTerminator()));
      b.setInsertionPointToEnd(scopeBlock);
      memref::AllocaScopeReturnOp::create(b, loc, ValueRange{});

      for (memref::AllocOp alloc : allocs) {
        b.setInsertionPoint(alloc);
        auto alloca = memref::AllocaOp::create(
            b, alloc.getLoc(), alloc.getType(), alloc.getAlignmentAttr());
        alloc.replaceAllUsesWith(alloca.getResult());
        alloc.erase();
      }
    }
  }
};

} // namespace
