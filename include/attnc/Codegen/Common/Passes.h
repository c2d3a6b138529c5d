//===- Passes.h - target-independent codegen passes -------------*- C++ -*-===//
//
// Tile selection, flash attention, row fusion, reassociation, loop buffers,
// weight hoisting and the model entry: the passes both targets run.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CODEGEN_COMMON_PASSES_H
#define ATTNC_CODEGEN_COMMON_PASSES_H

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Support/CodegenOptions.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attnc/Codegen/Common/Passes.h.inc"

/// The argument attribute naming the weight an entry argument binds.
constexpr llvm::StringLiteral kWeightArgAttrName = "attn.weight";

#define GEN_PASS_REGISTRATION
#include "attnc/Codegen/Common/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTNC_CODEGEN_COMMON_PASSES_H
