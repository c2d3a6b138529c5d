//===- KernelConfig.cpp - CUDA tile selection (attn-tile) -----------------===//
//
// The constants below are the heuristic's parameters; docs/passes.md ("Tile
// sizes") states the rules.
//
//===----------------------------------------------------------------------===//

#include "Codegen/GPU/KernelConfig.h"

#include "Codegen/GPU/TensorCoreTiles.h"
#include "attnc/Codegen/GPU/Passes.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

/// CUDA: the device the grid-size rules aim to fill (H100 SXM: 132 SMs).
constexpr int64_t kCudaSMs = 132;
/// CUDA: local memory per thread for flash attention's block temporaries;
/// 128 threads x 1 KiB stays within the L1 of an A100/H100 SM.
constexpr int64_t kCudaFlashLocalBytes = 1024;

//===----------------------------------------------------------------------===//
// Flash attention blocks
//===----------------------------------------------------------------------===//

void mlir::attn::chooseCudaFlash(const AttentionShape &a, int64_t fixedQ,
                                 int64_t fixedK, int64_t &blockQ,
                                 int64_t &blockK) {
  if (a.tensorCoreOperands && fitsTensorCoreFlash(a.sq, a.sk, a.dk, a.dv)) {
    // Tensor-core kernels: the block-q / 16 warps of a thread block share
    // each staged K/V block, so prefer 4 warps, but fall back to fewer while
    // the grid would leave SMs idle; key blocks of 64 (two 16 KiB tiles at
    // head dim 128).
    int64_t rowBlocks = a.batch * a.hkv * a.group;
    for (int64_t bq : {64, 32, 16}) {
      blockQ = fixedQ ? fixedQ : bq;
      blockK = fixedK ? fixedK : 64;
      // The sizes the kernel will really use (within its limits).
      chooseFlashBlocks(a.sq, a.sk, a.dk, a.dv, blockQ, blockK);
      int64_t queryBlocks = a.sq > 0 ? llvm::divideCeil(a.sq, blockQ) : a.sq;
      if (fixedQ || rowBlocks * queryBlocks >= kCudaSMs)
        break;
    }
    return;
  }
  // One thread runs a whole query block (the forall becomes blocks x
  // threads), so more rows per block only means fewer threads.
  blockQ = std::min<int64_t>(fixedQ ? fixedQ : 1, a.sq);
  if (fixedK) {
    blockK = std::min(fixedK, a.sk);
    return;
  }
  blockK = 8;
  for (int64_t bk : {64, 32, 16}) {
    if (4 * a.group * blockQ * (bk + a.dv + 4) <= kCudaFlashLocalBytes) {
      blockK = bk;
      break;
    }
  }
  blockK = std::min(blockK, a.sk);
}

//===----------------------------------------------------------------------===//
// CUDA: tensor-core warp tiles and threads per block
//===----------------------------------------------------------------------===//

int64_t mlir::attn::chooseWarpNTiles(const MatmulShape &s, int64_t fixed) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0)
    return 0;
  if (fixed)
    return fixed;
  // Wider warp tiles reuse each A fragment for more mma.sync and each
  // staged A row for more columns, but make fewer thread blocks: keep one
  // per SM.
  for (int64_t nt : {4, 2}) {
    MmaGemmTiling t = chooseMmaGemmTiling(s.m, s.n, s.k, nt);
    if (t.nt == nt && t.blocks(s.m, s.n) >= kCudaSMs)
      return nt;
  }
  return 1;
}

int64_t mlir::attn::chooseThreads(int64_t largestResult) {
  for (int64_t t : {128, 64})
    if (llvm::divideCeil(largestResult, t) >= kCudaSMs)
      return t;
  return 32;
}

//===----------------------------------------------------------------------===//
// attn-tile's CUDA configuration
//===----------------------------------------------------------------------===//

namespace {
class CudaTileConfig : public TileConfig {
public:
  explicit CudaTileConfig(const AttnTileOptions &options) : options(options) {}

  StringRef unusedOptionsSet() const override {
    if (options.vectorWidth || options.rowTile || options.colTile ||
        options.columnBlock || options.simdWidth || options.vectorRegisters ||
        options.l1KiB || options.l2KiB || options.cores)
      return "the CPU matmul and CPU model options";
    return "";
  }

  void chooseMatmul(ArrayRef<MatmulShape> shapes, bool narrow,
                    TileChoice &choice) const override {
    // attn-gpu-mma-matmul falls back to NT = 1 where N % (8 NT) != 0, so
    // the smallest choice among the contractions it applies to suits all.
    for (const MatmulShape &s : shapes)
      if (int64_t chosen = narrow ? chooseWarpNTiles(s, options.warpNTiles) : 0)
        choice.warpNTiles =
            choice.warpNTiles ? std::min(*choice.warpNTiles, chosen) : chosen;
  }

  void chooseFlash(const AttentionShape &attention,
                   TileChoice &choice) const override {
    int64_t q = 0, k = 0;
    chooseCudaFlash(attention, options.blockQ, options.blockK, q, k);
    choice.blockQ = q;
    choice.blockK = k;
  }

  std::optional<int64_t> chooseThreads(int64_t largestResult) const override {
    return options.threads ? options.threads
                           : mlir::attn::chooseThreads(largestResult);
  }

private:
  AttnTileOptions options;
};
} // namespace

void mlir::attn::registerCudaTileConfig() {
  registerTileConfig(
      attnc::Target::CUDA,
      [](const AttnTileOptions &options) -> std::unique_ptr<TileConfig> {
        return std::make_unique<CudaTileConfig>(options);
      });
}
