//===- KernelConfig.cpp - CPU tile selection (attn-tile) ------------------===//
//
// The constants below are the heuristic's parameters; docs/passes.md ("Tile
// sizes") states the rules.
//
//===----------------------------------------------------------------------===//

#include "Codegen/CPU/KernelConfig.h"

#include "attnc/Codegen/CPU/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Target model
//===----------------------------------------------------------------------===//

static int64_t hostCacheBytes(int level, int64_t fallback) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  long bytes =
      sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
  if (bytes > 0)
    return bytes;
#endif
  return fallback;
}

CpuModel mlir::attn::hostCpuModel() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](StringRef f) { return features.lookup(f); };
  CpuModel m;
  if (has("avx512f")) {
    m.vectorWidth = 16;
    m.registers = 32;
  } else if (has("avx2") || has("avx")) {
    m.vectorWidth = 8;
    m.registers = 16;
  } else {
    // SSE (16 registers) or NEON (32 registers) of 128 bits.
    m.vectorWidth = 4;
    m.registers = has("neon") ? 32 : 16;
  }
  m.l1Bytes = hostCacheBytes(1, 32 * 1024);
  m.l2Bytes = hostCacheBytes(2, 1024 * 1024);
  // OpenMP runs one thread per hardware thread by default.
  m.cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  return m;
}

//===----------------------------------------------------------------------===//
// CPU: matmul kernel tiles
//===----------------------------------------------------------------------===//

/// Cycles of one k step of an mr x nr tile, in half cycles: mr + nr vector
/// loads and mr * nr FMAs at 2 per cycle each, at least the FMA latency (4
/// cycles) since each accumulator is one dependency chain, plus one cycle
/// of loop overhead.
static int64_t tileStepCost(int64_t mr, int64_t nr) {
  return std::max({mr + nr, mr * nr, int64_t{8}}) + 2;
}

/// Cost of one column block of `n` weight rows over all M rows, as the
/// kernel tiles it: full mr x nr tiles, mr x 1 tiles for the last columns,
/// 1 x 1 tiles for the last rows.
static int64_t blockCost(int64_t m, int64_t n, int64_t mr, int64_t nr) {
  return (m / mr) * (n / nr) * tileStepCost(mr, nr) +
         (m / mr) * (n % nr) * tileStepCost(mr, 1) +
         (m % mr) * n * tileStepCost(1, 1);
}

CpuMatmulTile mlir::attn::chooseCpuMatmul(ArrayRef<MatmulShape> shapes,
                                          const CpuModel &cpu,
                                          const CpuMatmulTile &fixed) {
  CpuMatmulTile best = fixed;
  int64_t maxK = 0, maxM = 0, maxN = 0;
  for (const MatmulShape &s : shapes) {
    maxK = std::max(maxK, s.k);
    maxM = std::max(maxM, s.m);
    maxN = std::max(maxN, s.n);
  }
  if (!best.vectorWidth) {
    // The kernel needs K % VL == 0; a narrower vector beats no kernel.
    best.vectorWidth = cpu.vectorWidth;
    while (best.vectorWidth > 4 &&
           llvm::any_of(shapes, [&](const MatmulShape &s) {
             return s.k % best.vectorWidth != 0;
           }))
      best.vectorWidth /= 2;
  }
  // Weight rows of one column block, kept in half of L2 across the rows.
  int64_t l2Rows = std::max<int64_t>(1, cpu.l2Bytes / 2 / (maxK * 4));
  struct Candidate {
    int64_t cost, mr, nr, nb;
  };
  SmallVector<Candidate> candidates;
  auto consider = [&](int64_t mr, int64_t nr) {
    SmallVector<int64_t> blocks;
    if (fixed.columnBlock) {
      blocks.push_back(fixed.columnBlock);
    } else {
      for (int64_t nb = nr; nb <= std::min(maxN, l2Rows); nb += nr)
        blocks.push_back(nb);
      if (maxN % nr != 0 && maxN <= l2Rows)
        blocks.push_back(maxN);
      if (blocks.empty())
        blocks.push_back(std::min(nr, maxN));
    }
    for (int64_t nb : blocks) {
      int64_t cost = 0;
      for (const MatmulShape &s : shapes) {
        // Full blocks run `cores` at a time, the remainder after them.
        int64_t width = std::min(nb, s.n);
        int64_t full = s.n / width;
        cost +=
            llvm::divideCeil(full, cpu.cores) * blockCost(s.m, width, mr, nr) +
            blockCost(s.m, s.n - full * width, mr, nr);
      }
      candidates.push_back({cost, mr, nr, nb});
    }
  };
  int64_t maxMr = fixed.rowTile ? fixed.rowTile : std::min<int64_t>(maxM, 8);
  int64_t maxNr = fixed.colTile ? fixed.colTile : std::min<int64_t>(maxN, 16);
  for (int64_t mr = fixed.rowTile ? fixed.rowTile : 1; mr <= maxMr; ++mr)
    for (int64_t nr = fixed.colTile ? fixed.colTile : 1; nr <= maxNr; ++nr) {
      // Accumulators plus one vector of each operand row must stay in
      // registers; fixed sizes are the user's call.
      bool fits = mr * nr + mr + nr <= cpu.registers;
      if (fits || (fixed.rowTile && fixed.colTile))
        consider(mr, nr);
    }
  if (candidates.empty())
    consider(fixed.rowTile ? fixed.rowTile : 1,
             fixed.colTile ? fixed.colTile : 1);
  // Times within 1% of the least are below the model's resolution: among
  // them, the larger column block (fewer blocks), then fewer loads per FMA,
  // then the larger MR.
  int64_t least =
      llvm::min_element(candidates, [](const Candidate &a, const Candidate &b) {
        return a.cost < b.cost;
      })->cost;
  auto preferred = [](const Candidate &a, const Candidate &b) {
    if (a.nb != b.nb)
      return a.nb > b.nb;
    // (a.mr + a.nr) / (a.mr * a.nr) < (b.mr + b.nr) / (b.mr * b.nr)
    int64_t aLoads = (a.mr + a.nr) * b.mr * b.nr;
    int64_t bLoads = (b.mr + b.nr) * a.mr * a.nr;
    if (aLoads != bLoads)
      return aLoads < bLoads;
    return a.mr > b.mr;
  };
  const Candidate *chosen = nullptr;
  for (const Candidate &c : candidates)
    if ((c.cost - least) * 100 <= least && (!chosen || preferred(c, *chosen)))
      chosen = &c;
  best.rowTile = chosen->mr;
  best.colTile = chosen->nr;
  best.columnBlock = chosen->nb;
  return best;
}

//===----------------------------------------------------------------------===//
// Flash attention blocks
//===----------------------------------------------------------------------===//

void mlir::attn::chooseCpuFlash(const AttentionShape &a, const CpuModel &cpu,
                                int64_t fixedQ, int64_t fixedK, int64_t &blockQ,
                                int64_t &blockK) {
  auto sizes = [](int64_t fixed, int64_t extent) {
    SmallVector<int64_t> out;
    if (fixed) {
      out.push_back(std::min(fixed, extent));
      return out;
    }
    for (int64_t s : {16, 32, 64, 128, 256})
      if (out.empty() || out.back() < extent)
        out.push_back(std::min<int64_t>(s, extent));
    return out;
  };
  // rank: 0 fits the caches and keeps every core busy, 1 fits the caches,
  // 2 fits nothing; then the smaller 1/bq + 1/bk, then the larger bq.
  int64_t bestRank = 3;
  double bestCost = 0;
  for (int64_t bq : sizes(fixedQ, a.sq))
    for (int64_t bk : sizes(fixedK, a.sk)) {
      int64_t scoreTile = 4 * a.group * bq * bk;
      int64_t workingSet =
          4 * (a.group * bq * (a.dk + a.dv) + bk * (a.dk + a.dv)) + scoreTile;
      bool fits = scoreTile <= cpu.l1Bytes / 2 && workingSet <= cpu.l2Bytes / 2;
      bool busy =
          a.batch * a.hkv * int64_t(llvm::divideCeil(a.sq, bq)) >= cpu.cores;
      int64_t rank = !fits ? 2 : busy ? 0 : 1;
      // Too big for the caches: the smallest tile is the least bad.
      double cost = rank == 2 ? double(bq * bk) : 1.0 / bq + 1.0 / bk;
      if (rank < bestRank ||
          (rank == bestRank &&
           (cost < bestCost || (cost == bestCost && bq > blockQ)))) {
        bestRank = rank;
        bestCost = cost;
        blockQ = bq;
        blockK = bk;
      }
    }
}

//===----------------------------------------------------------------------===//
// attn-tile's CPU configuration
//===----------------------------------------------------------------------===//

namespace {
/// The host's model with the options' overrides; the matmul and flash sizes
/// the options fix are kept.
class CpuTileConfig : public TileConfig {
public:
  explicit CpuTileConfig(const AttnTileOptions &options)
      : options(options), cpu(hostCpuModel()) {
    if (options.simdWidth)
      cpu.vectorWidth = options.simdWidth;
    if (options.vectorRegisters)
      cpu.registers = options.vectorRegisters;
    if (options.l1KiB)
      cpu.l1Bytes = options.l1KiB * 1024;
    if (options.l2KiB)
      cpu.l2Bytes = options.l2KiB * 1024;
    if (options.cores)
      cpu.cores = options.cores;
  }

  StringRef unusedOptionsSet() const override {
    return options.warpNTiles || options.threads ? "warp-n-tiles and threads"
                                                 : "";
  }

  void chooseMatmul(ArrayRef<MatmulShape> shapes, bool /*narrow*/,
                    TileChoice &choice) const override {
    if (shapes.empty())
      return;
    CpuMatmulTile t = chooseCpuMatmul(shapes, cpu,
                                      {options.vectorWidth, options.rowTile,
                                       options.colTile, options.columnBlock});
    choice.vectorWidth = t.vectorWidth;
    choice.rowTile = t.rowTile;
    choice.colTile = t.colTile;
    choice.columnBlock = t.columnBlock;
  }

  void chooseFlash(const AttentionShape &attention,
                   TileChoice &choice) const override {
    int64_t q = 0, k = 0;
    chooseCpuFlash(attention, cpu, options.blockQ, options.blockK, q, k);
    choice.blockQ = q;
    choice.blockK = k;
  }

  std::optional<int64_t> chooseThreads(int64_t) const override {
    return std::nullopt;
  }

private:
  AttnTileOptions options;
  CpuModel cpu;
};
} // namespace

void mlir::attn::registerCpuTileConfig() {
  registerTileConfig(
      attnc::Target::CPU,
      [](const AttnTileOptions &options) -> std::unique_ptr<TileConfig> {
        return std::make_unique<CpuTileConfig>(options);
      });
}
