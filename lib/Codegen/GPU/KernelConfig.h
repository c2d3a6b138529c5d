//===- KernelConfig.h - CUDA tile selection (attn-tile) ---------*- C++ -*-===//
//
// The CUDA half of attn-tile: flash attention blocks, tensor-core warp tiles
// and threads per block, sized to fill the SMs of the device it aims at.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_GPU_KERNELCONFIG_H
#define ATTNC_LIB_CODEGEN_GPU_KERNELCONFIG_H

#include "attnc/Codegen/Common/TileConfig.h"

namespace mlir::attn {

/// Query and key blocks of attn-gpu-flash-attention (tensor-core shapes) or
/// of attn-flash-attention (the rest); `fixedQ`/`fixedK` nonzero: the
/// user's.
void chooseCudaFlash(const AttentionShape &a, int64_t fixedQ, int64_t fixedK,
                     int64_t &blockQ, int64_t &blockK);

/// n8 tiles per warp for attn-gpu-mma-matmul, or 0 when the kernel does
/// not apply to this shape (it needs M % 16, N % 8 and K % 16 == 0).
int64_t chooseWarpNTiles(const MatmulShape &s, int64_t fixed);

/// Threads per block for a function whose largest result has
/// `largestResult` elements.
int64_t chooseThreads(int64_t largestResult);

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_GPU_KERNELCONFIG_H
