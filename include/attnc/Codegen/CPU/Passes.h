//===- Passes.h - CPU codegen passes ----------------------------*- C++ -*-===//
//
// Register-tiled matmul kernels, K-major weights, row vectorization and
// polynomial math for the CPU target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CODEGEN_CPU_PASSES_H
#define ATTNC_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attnc/Codegen/CPU/Passes.h.inc"

/// Registers the CPU half of attn-tile's heuristic (its TileConfig).
void registerCpuTileConfig();

#define GEN_PASS_REGISTRATION
#include "attnc/Codegen/CPU/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTNC_CODEGEN_CPU_PASSES_H
