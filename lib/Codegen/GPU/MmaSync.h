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
#include "llvm/Support/Alignment.h"

namespace mlir::attn {

constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;

/// A fragment vector<N x 2 x T> whose row i is `pairs[i]` (vector<2xT>).
Value buildFragment(OpBuilder &b, Location loc, ArrayRef<Value> pairs);

/// D = A * B + C on one m16n8k16 tile. f16 uses nvgpu.mma.sync; bf16 uses
/// nvvm.mma.sync on the fragments packed into i32 registers, because
/// convert-nvgpu-to-nvvm in LLVM 22 cannot deduce PTX types for bf16.
Value buildMmaSync(OpBuilder &b, Location loc, Value a, Value bFrag, Value acc);

/// Elements appended to each shared-memory row of a staged tile (16 bytes:
/// consecutive rows start 4 banks apart, so the eight rows g = 0..7 whose
/// fragments a warp loads at once hit distinct banks).
constexpr int64_t kSmemPad = 8;

/// Copies a rows x width tile of `src` (indices `prefix..., row0 + r,
/// col0 + c`) into the shared buffer `dst` as dst[r][c], or transposed as
/// dst[c][r] (rows even), in 16-byte chunks (width % 8 == 0) that the
/// `threads` threads of the block (this one is `tid`) take in turn; a last
/// partial round is guarded. `srcAlign` is what the chunk loads may assume
/// of their address. A nonzero `rowLimit` (`colLimit`) is the extent of
/// `src` along the row (column) index: elements at or past it are staged as
/// zeros and never loaded (the loads read clamped indices and the values
/// are selected away), so a partial edge tile fills the rest of `dst` with
/// zeros; with a `colLimit` that is not a multiple of 8 the chunks are
/// loaded element by element.
void buildSharedTileCopy(OpBuilder &b, Location loc, Value src,
                         ValueRange prefix, Value row0, Value col0,
                         int64_t rows, int64_t width, Value dst, bool transpose,
                         Value tid, int64_t threads, llvm::MaybeAlign srcAlign,
                         int64_t rowLimit = 0, int64_t colLimit = 0);

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_MMASYNC_H
