//===- GpuTensorMapParams.cpp - TMA tensor maps as kernel pointers --------===//
//
// See AttnGpuTensorMapParams in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUTENSORMAPPARAMS
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnGpuTensorMapParamsPass
    : public mlir::attn::impl::AttnGpuTensorMapParamsBase<
          AttnGpuTensorMapParamsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto ptrType = LLVM::LLVMPointerType::get(&getContext());
    auto isMap = [](Type type) {
      return isa<nvgpu::TensorMapDescriptorType>(type);
    };
    module.walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() || func.isExternal())
        return;
      Block &entry = func.getBody().front();
      SmallVector<Type> inputs(func.getArgumentTypes());
      bool changed = false;
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        BlockArgument arg = func.getArgument(i);
        if (!isMap(arg.getType()))
          continue;
        Type mapType = arg.getType();
        arg.setType(ptrType);
        auto cast =
            UnrealizedConversionCastOp::create(b, arg.getLoc(), mapType, arg);
        arg.replaceAllUsesExcept(cast.getResult(0), cast);
        inputs[i] = ptrType;
        changed = true;
      }
      if (changed)
        func.setFunctionType(
            FunctionType::get(&getContext(), inputs, func.getResultTypes()));
    });
    module.walk([&](gpu::LaunchFuncOp launch) {
      OpBuilder b(launch);
      for (OpOperand &operand : launch.getKernelOperandsMutable()) {
        if (!isMap(operand.get().getType()))
          continue;
        operand.set(UnrealizedConversionCastOp::create(b, launch.getLoc(),
                                                       ptrType, operand.get())
                        .getResult(0));
      }
    });
  }
};

} // namespace
