//===- KernelConfig.h - CPU tile selection (attn-tile) ----------*- C++ -*-===//
//
// The CPU half of attn-tile: a model of the host (vector width, registers,
// caches, cores) and the tiles of the matmul kernels and flash attention
// that the model rates fastest. The rules are in docs/passes.md ("Tile sizes").
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_CPU_KERNELCONFIG_H
#define ATTNC_LIB_CODEGEN_CPU_KERNELCONFIG_H

#include "attnc/Codegen/Common/TileConfig.h"

#include "mlir/Support/LLVM.h"

namespace mlir::attn {

/// What the CPU heuristic knows about the machine.
struct CpuModel {
  int64_t vectorWidth; ///< f32 lanes of one vector register.
  int64_t registers;   ///< vector registers.
  int64_t l1Bytes, l2Bytes;
  int64_t cores;
};

/// The host's model (features from LLVM, caches from sysconf, threads).
CpuModel hostCpuModel();

/// Tiles of attn-cpu-matmul-kernel; 0 = not fixed.
struct CpuMatmulTile {
  int64_t vectorWidth, rowTile, colTile, columnBlock;
};

/// One configuration for the contractions `shapes` of one op (all of them
/// run with the same tiles): the least total modelled time. Nonzero fields
/// of `fixed` are the user's and kept.
CpuMatmulTile chooseCpuMatmul(ArrayRef<MatmulShape> shapes, const CpuModel &cpu,
                              const CpuMatmulTile &fixed);

/// attn-flash-attention's query and key blocks (`fixedQ`/`fixedK` nonzero:
/// the user's).
void chooseCpuFlash(const AttentionShape &a, const CpuModel &cpu,
                    int64_t fixedQ, int64_t fixedK, int64_t &blockQ,
                    int64_t &blockK);

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_CPU_KERNELCONFIG_H
