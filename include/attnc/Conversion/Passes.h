//===- Passes.h - attnc conversion passes -----------------------*- C++ -*-===//

#ifndef ATTNC_CONVERSION_PASSES_H
#define ATTNC_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
class RewritePatternSet;
namespace attn {

#define GEN_PASS_DECL
#include "attnc/Conversion/Passes.h.inc"

/// Patterns lowering attn ops (all but attn.weight) to linalg on tensors.
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);

/// Memory-effect models for the warp/block primitives that the tensor-core
/// kernels emit before bufferization's deallocation runs (gpu.barrier,
/// nvvm.mma.sync), which upstream leaves without effects.
void registerGpuKernelEffectModels(DialectRegistry &registry);

/// The module attribute holding the model manifest text.
constexpr llvm::StringLiteral kManifestAttrName = "attn.manifest";
/// The argument attribute naming the weight an entry argument binds.
constexpr llvm::StringLiteral kWeightArgAttrName = "attn.weight";

#define GEN_PASS_REGISTRATION
#include "attnc/Conversion/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTNC_CONVERSION_PASSES_H
