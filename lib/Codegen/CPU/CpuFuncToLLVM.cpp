//===- CpuFuncToLLVM.cpp - func-to-llvm, bare pointers where static -------===//
//
// Static models keep the bare-pointer calling convention (the code they
// always had); a model with dynamic sizes needs memref descriptors, which
// the bare-pointer convention cannot express.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"

#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUFUNCTOLLVM
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnCpuFuncToLLVMPass
    : public mlir::attn::impl::AttnCpuFuncToLLVMBase<AttnCpuFuncToLLVMPass> {
  void runOnOperation() override {
    auto isDynamicMemRef = [](Type t) {
      auto memref = dyn_cast<MemRefType>(t);
      return memref && !memref.hasStaticShape();
    };
    bool dynamic = false;
    getOperation().walk([&](func::FuncOp func) {
      FunctionType type = func.getFunctionType();
      if (llvm::any_of(type.getInputs(), isDynamicMemRef) ||
          llvm::any_of(type.getResults(), isDynamicMemRef)) {
        dynamic = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    ConvertFuncToLLVMPassOptions options;
    options.useBarePtrCallConv = !dynamic;
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createConvertFuncToLLVMPass(options));
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};
} // namespace
