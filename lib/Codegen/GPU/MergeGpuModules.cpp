//===- MergeGpuModules.cpp - one gpu.module for all kernels ---------------===//

#include "attnc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUMERGEMODULES
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
constexpr int64_t kWorkgroupAlignment = 16;
constexpr int64_t kTmaAlignment = 128;
/// What the GPU-to-NVVM lowering reads as the shared buffer's alignment.
constexpr llvm::StringLiteral kAlignAttrName = "llvm.align";

struct AttnGpuMergeModulesPass
    : public mlir::attn::impl::AttnGpuMergeModulesBase<
          AttnGpuMergeModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Shared memory is declared with its element type's alignment; kernels
    // stage tiles with 16-byte vector accesses, so ask for 16 bytes.
    auto align = IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                  kWorkgroupAlignment);
    // TMA destinations (cp.async.bulk.tensor without swizzle) need 128
    // bytes: kernels that issue TMA loads get that for all their buffers.
    auto tmaAlign =
        IntegerAttr::get(IntegerType::get(&getContext(), 64), kTmaAlignment);
    module.walk([&](gpu::GPUFuncOp func) {
      bool tma = func.walk([](nvgpu::TmaAsyncLoadOp) {
                       return WalkResult::interrupt();
                     })
                     .wasInterrupted();
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i)
        if (!func.getWorkgroupAttributionAttr(i, kAlignAttrName))
          func.setWorkgroupAttributionAttr(i, kAlignAttrName,
                                           tma ? tmaAlign : align);
    });
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() < 2)
      return;
    gpu::GPUModuleOp target = gpuModules.front();
    SymbolTable targetSymbols(target);
    // (old module, old function) -> new function name in `target`.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp source : llvm::drop_begin(gpuModules)) {
      if (source.getTargetsAttr() != target.getTargetsAttr()) {
        source.emitOpError("has different targets than ")
            << target.getName() << "; cannot merge";
        return signalPassFailure();
      }
      SmallVector<Operation *> symbols;
      for (Operation &op : source.getBody()->without_terminator())
        symbols.push_back(&op);
      bool single = symbols.size() == 1;
      for (Operation *op : symbols) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op->emitOpError("cannot be merged into another gpu.module");
          return signalPassFailure();
        }
        StringAttr oldName = symbol.getNameAttr();
        std::string base =
            single ? source.getName().str()
                   : (source.getName() + "_" + oldName.getValue()).str();
        op->remove();
        SymbolTable::setSymbolName(op, base);
        // insert() renames on a clash and returns the name it used.
        StringAttr newName = targetSymbols.insert(op);
        renamed[{source.getNameAttr(), oldName}] = newName;
      }
      source.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};
} // namespace
