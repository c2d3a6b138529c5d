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
#include "llvm/ADT/SmallVector.h"
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
/// `dstPrefix` indexes `dst` before the row and column (a pipeline stage).
/// A non-null `dynamicRowLimit` (an index known at run time only, e.g. the
/// rows of a memref with a dynamic first dimension) takes the place of
/// `rowLimit`.
void buildSharedTileCopy(OpBuilder &b, Location loc, Value src,
                         ValueRange prefix, Value row0, Value col0,
                         int64_t rows, int64_t width, Value dst, bool transpose,
                         Value tid, int64_t threads, llvm::MaybeAlign srcAlign,
                         int64_t rowLimit = 0, int64_t colLimit = 0,
                         ValueRange dstPrefix = {}, Value dynamicRowLimit = {});

/// The elements per cp.async of a rows x width tile copy (16, 8 or 4 bytes
/// of 2-byte elements: 8, 4 or 2) that keeps every chunk aligned in a
/// source whose rows have `srcRowLength` elements (and start at an aligned
/// allocation) and gives every one of the `threads` threads the same number
/// of chunks (no partial round, so that every thread commits the same
/// groups); 0 when there is none.
int64_t asyncCopyChunk(int64_t rows, int64_t width, int64_t srcRowLength,
                       int64_t threads);

/// The asynchronous counterpart of buildSharedTileCopy (not transposed):
/// nvgpu.device_async_copy of `chunk` elements per copy (from
/// asyncCopyChunk), 16-byte copies bypassing L1. Elements at or past
/// `rowLimit` (`colLimit`, a multiple of `chunk`) are zero-filled in `dst`
/// (source size 0, the source index clamped into `src` so the address stays
/// valid). Returns the copies' tokens; nothing is visible in `dst` before a
/// group holding them is waited for. With `coreMatrices` (`chunk` divides
/// 8) element (r, c) lands at dst[c / 8][r][c % 8] instead of dst[r][c]:
/// wgmma's no-swizzle K-major layout, where the 8 x 16-byte core matrices
/// (8 rows, 8 consecutive columns) are contiguous 128-byte blocks.
/// A non-null `dynamicRowLimit` takes the place of `rowLimit` as in
/// buildSharedTileCopy.
SmallVector<Value> buildSharedTileAsyncCopy(
    OpBuilder &b, Location loc, Value src, ValueRange prefix, Value row0,
    Value col0, int64_t rows, int64_t width, Value dst, ValueRange dstPrefix,
    Value tid, int64_t threads, int64_t chunk, int64_t rowLimit = 0,
    int64_t colLimit = 0, bool coreMatrices = false,
    Value dynamicRowLimit = {});

/// The wait at the start of step i of a `stages`-deep cp.async pipeline
/// whose steps each commit one group (steps past the last commit none):
/// nvgpu.device_async_wait on `group` (step i's) letting the groups of the
/// steps after it stay pending, min(stages - 2, `remaining`) of them, where
/// `remaining` counts the steps after step i (unused, and may be null, for
/// 2 stages). The count is an attribute, so the last steps branch to their
/// own wait.
void buildPipelineWait(OpBuilder &b, Location loc, Value group, Value remaining,
                       int64_t stages);

/// nvgpu.ldmatrix of `numTiles` 8x8 matrices of 16-bit elements from the
/// shared buffer `smem` at this thread's row address `indices` (PTX: lane l
/// gives row l % 8 of matrix l / 8): vector<numTiles x 2 x T>, row i being
/// the thread's pair of matrix i.
Value buildLdMatrix(OpBuilder &b, Location loc, Value smem, ValueRange indices,
                    int64_t numTiles, bool transpose);

/// Rows [first, first + count) of a fragment vector<N x 2 x T>.
Value fragmentRows(OpBuilder &b, Location loc, Value frag, int64_t first,
                   int64_t count);

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_MMASYNC_H
