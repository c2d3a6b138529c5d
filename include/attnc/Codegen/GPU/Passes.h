//===- Passes.h - GPU codegen passes ----------------------------*- C++ -*-===//
//
// Tensor-core kernels (mma.sync GEMM and flash attention), loop mapping,
// device buffers and kernel-module merging for the CUDA target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CODEGEN_GPU_PASSES_H
#define ATTNC_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace attn {

#define GEN_PASS_DECL
#include "attnc/Codegen/GPU/Passes.h.inc"

/// Memory-effect models for the warp/block primitives that the tensor-core
/// kernels emit before bufferization's deallocation runs (gpu.barrier,
/// nvvm.mma.sync), which upstream leaves without effects.
void registerGpuKernelEffectModels(DialectRegistry &registry);

/// Registers the CUDA half of attn-tile's heuristic (its TileConfig).
void registerCudaTileConfig();

#define GEN_PASS_REGISTRATION
#include "attnc/Codegen/GPU/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTNC_CODEGEN_GPU_PASSES_H
