//===- GpuKernelEffects.cpp - memory effects of GPU kernel primitives -----===//
//
// attn-gpu-flash-attention builds its kernels on tensors, so
// ownership-based buffer deallocation later walks them, and it rejects ops
// whose memory effects are unknown. Upstream declares none for gpu.barrier
// and nvvm.mma.sync. What they are is clear: mma.sync only reads and writes
// registers; a barrier orders the block's memory accesses, modelled as a
// read and a write of memory, so nothing is moved across it. The cp.async
// group ops (nvgpu.device_async_create_group, nvgpu.device_async_wait)
// declare none either: committing orders the thread's copies and a wait
// makes them land in shared memory, so both are modelled like a barrier.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
template <typename OpT>
struct BarrierEffects
    : public MemoryEffectOpInterface::ExternalModel<BarrierEffects<OpT>, OpT> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

struct MmaSyncEffects
    : public MemoryEffectOpInterface::ExternalModel<MmaSyncEffects,
                                                    NVVM::MmaOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {}
};
} // namespace

void mlir::attn::registerGpuKernelEffectModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::BarrierOp::attachInterface<BarrierEffects<gpu::BarrierOp>>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, nvgpu::NVGPUDialect *) {
    nvgpu::DeviceAsyncCreateGroupOp::attachInterface<
        BarrierEffects<nvgpu::DeviceAsyncCreateGroupOp>>(*ctx);
    nvgpu::DeviceAsyncWaitOp::attachInterface<
        BarrierEffects<nvgpu::DeviceAsyncWaitOp>>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, NVVM::NVVMDialect *) {
    NVVM::MmaOp::attachInterface<MmaSyncEffects>(*ctx);
  });
}
