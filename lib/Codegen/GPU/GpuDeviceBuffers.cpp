//===- GpuDeviceBuffers.cpp - host buffers become device buffers ----------===//

#include "attnc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUDEVICEBUFFERS
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnGpuDeviceBuffersPass
    : public mlir::attn::impl::AttnGpuDeviceBuffersBase<
          AttnGpuDeviceBuffersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> hostOps;
    getOperation().walk([&](Operation *op) {
      if (!isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp,
               memref::GetGlobalOp>(op))
        return;
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>())
        return;
      hostOps.push_back(op);
    });
    // Workgroup allocas in launch bodies -> workgroup attributions.
    SmallVector<memref::AllocaOp> workgroupAllocas;
    getOperation().walk([&](memref::AllocaOp alloca) {
      auto launch = dyn_cast<gpu::LaunchOp>(alloca->getParentOp());
      if (launch &&
          gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(alloca.getType()) &&
          alloca.getType().hasStaticShape())
        workgroupAllocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : workgroupAllocas) {
      auto launch = cast<gpu::LaunchOp>(alloca->getParentOp());
      BlockArgument attribution =
          launch.addWorkgroupAttribution(alloca.getType(), alloca.getLoc());
      rewriter.replaceOp(alloca, attribution);
    }
    // Thread-private allocas of static shape that only scf.if guards (the
    // edge guard of a partial last block) separate from the launch body move
    // to its start: LLVM promotes or places statically only allocas of the
    // entry block; the others became stack adjustments, spilling.
    SmallVector<memref::AllocaOp> guardedAllocas;
    getOperation().walk([&](memref::AllocaOp alloca) {
      if (alloca.getType().getMemorySpace() ||
          !alloca.getType().hasStaticShape() || !alloca->getOperands().empty())
        return;
      Operation *parent = alloca->getParentOp();
      while (isa_and_nonnull<scf::IfOp>(parent))
        parent = parent->getParentOp();
      if (isa_and_nonnull<gpu::LaunchOp>(parent) &&
          alloca->getParentOp() != parent)
        guardedAllocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : guardedAllocas) {
      Operation *launch = alloca->getParentOfType<gpu::LaunchOp>();
      alloca->moveBefore(&launch->getRegion(0).front().front());
    }
    for (Operation *op : hostOps) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
        // A constant of the host module (what bufferization made of a dense
        // tensor constant): kernels cannot read host memory, so they get a
        // device copy, made where the host takes the constant and freed at
        // the end of that block.
        auto type = global.getType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
          global.emitOpError("host constant of type ")
              << type << " has no device copy (static identity layout only)";
          return signalPassFailure();
        }
        rewriter.setInsertionPointAfter(global);
        auto device = gpu::AllocOp::create(
            rewriter, loc, type, /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange{}, /*dynamicSizes=*/ValueRange{},
            /*symbolOperands=*/ValueRange{}, /*hostShared=*/false);
        auto upload = gpu::MemcpyOp::create(
            rewriter, loc, /*asyncToken=*/Type(), ValueRange{},
            device.getMemref(), global.getResult());
        global.getResult().replaceAllUsesExcept(device.getMemref(), upload);
        rewriter.setInsertionPoint(global->getBlock()->getTerminator());
        gpu::DeallocOp::create(rewriter, loc, /*asyncToken=*/Type(),
                               ValueRange{}, device.getMemref());
      } else if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto device = gpu::AllocOp::create(
            rewriter, loc, alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange{}, alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/false);
        rewriter.replaceOp(alloc, device.getMemref());
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(rewriter, loc, /*asyncToken=*/Type(),
                               ValueRange{}, dealloc.getMemref());
        rewriter.eraseOp(dealloc);
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        // gpu.memcpy copies one contiguous range from each view's start
        // and lowers for identity layouts only; attn-gpu-copy-kernels made
        // kernels of the other copies.
        for (Value view : {copy.getSource(), copy.getTarget()}) {
          auto type = cast<MemRefType>(view.getType());
          if (!type.getLayout().isIdentity()) {
            copy.emitOpError("copy of the view ")
                << type
                << " in host code (run attn-gpu-copy-kernels first: "
                   "gpu.memcpy needs the identity layout)";
            return signalPassFailure();
          }
        }
        gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(),
                              ValueRange{}, copy.getTarget(), copy.getSource());
        rewriter.eraseOp(copy);
      }
    }
  }
};
} // namespace
