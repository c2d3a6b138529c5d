//===- MmaSync.h - mma.sync m16n8k16 fragments for GPU kernels -*- C++ -*-===//
//
// Shared by the tensor-core kernels (attn-gpu-mma-matmul and
// attn-gpu-flash-attention): building the warp fragments of
// mma.sync.m16n8k16.row.col with f16 or bf16 inputs and f32 accumulation.
// Fragment shapes follow nvgpu.mma.sync: A vector<4x2xT>, B vector<2x2xT>,
// C and D vector<2x2xf32>, row r of a vector being PTX register r.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_MMASYNC_H
#define ATTNC_LIB_CONVERSION_MMASYNC_H

#include "mlir/IR/Builders.h"

namespace mlir::attn {

constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;

/// A fragment vector<N x 2 x T> whose row i is `pairs[i]` (vector<2xT>).
Value buildFragment(OpBuilder &b, Location loc, ArrayRef<Value> pairs);

/// D = A * B + C on one m16n8k16 tile. f16 uses nvgpu.mma.sync; bf16 uses
/// nvvm.mma.sync on the fragments packed into i32 registers, because
/// convert-nvgpu-to-nvvm in LLVM 22 cannot deduce PTX types for bf16.
Value buildMmaSync(OpBuilder &b, Location loc, Value a, Value bFrag, Value acc);

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_MMASYNC_H
