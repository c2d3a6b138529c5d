//===- WidenedOperands.h - matmul operands widened from f16/bf16 -*- C++
//-*-===//
//
// attn.linear on f16/bf16 operands lowers to elementwise `arith.extf`
// generics that widen both operands to f32 before an f32 contraction. The
// matmul kernels of both targets (tensor cores on CUDA, AVX-512 BF16 dot
// products or in-register widening on the CPU) read the narrow buffers
// instead; these helpers find them and remove the widened copies that no
// longer have readers, so that no weight is copied to f32 per run.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_COMMON_WIDENEDOPERANDS_H
#define ATTNC_LIB_CODEGEN_COMMON_WIDENEDOPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <optional>

namespace mlir::attn {

/// An f32 operand of a contraction traced back to the narrow buffer it was
/// widened from.
struct WidenedOperand {
  linalg::GenericOp ext;        // the extf generic writing `wide`
  Value wide;                   // its f32 output buffer
  memref::CollapseShapeOp view; // optional 2-D view the contraction reads
  Value narrow;                 // the f16/bf16 source of the extf generic
};

/// The f16/bf16 buffer that `operand` of `contraction` (bufferized, same
/// block) holds widened: the last generic writing it before the contraction
/// is a plain extf of that buffer, and neither is written in between.
std::optional<WidenedOperand> traceWidened(Value operand,
                                           Operation *contraction);

/// The narrow source viewed like the operand the contraction read.
Value narrowOperand(OpBuilder &b, Location loc, const WidenedOperand &w);

/// Once the contractions that read `operands` read their narrow sources
/// instead: erases the views nothing uses any more, then each extf generic
/// whose result nobody reads and its buffer when nothing else uses it.
void eraseDeadWidenings(ArrayRef<WidenedOperand> operands);

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_COMMON_WIDENEDOPERANDS_H
