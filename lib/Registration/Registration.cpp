//===- Registration.cpp - dialect and pass registration for attnc tools ---===//

#include "attnc/InitAttnc.h"

#include "attnc/Codegen/CPU/Passes.h"
#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Codegen/GPU/Passes.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Pipelines/Pipelines.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void attnc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::attn::AttnDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::attn::registerGpuKernelEffectModels(registry);
  // gpu-module-to-binary translates kernels to LLVM IR inside the pipeline.
  mlir::registerAllToLLVMIRTranslations(registry);
}

void attnc::registerAllPasses() {
  mlir::registerAllPasses();
  mlir::attn::registerAttncPasses();
  mlir::attn::registerAttncConversionPasses();
  mlir::attn::registerAttncCodegenCommonPasses();
  mlir::attn::registerAttncCodegenCPUPasses();
  mlir::attn::registerAttncCodegenGPUPasses();
  mlir::attn::registerCpuTileConfig();
  mlir::attn::registerCudaTileConfig();
  attnc::registerPipelines();
  mlir::attn::registerRaisePipeline();
}
