//===- Tile.cpp - choose tile sizes per target (attn-tile) ----------------===//
//
// Tile sizes used to be separate options of the passes that tile (flash
// attention, the CPU and GPU matmul kernels, the GPU loop mapping), with one
// default each for every shape. attn-tile chooses them per op, from the op's
// shapes and a model of the target, on the attn-level IR where the shapes
// are still those of the model (M, N, K of a projection, the heads and head
// width of an attention), and records them as #attn.tile for the consumers.
// The heuristic is documented in the pass description (Passes.td) and in
// README.md; the constants below are its parameters.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"

#include "attnc/Conversion/TensorCoreTiles.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <thread>
#include <unistd.h>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

//===----------------------------------------------------------------------===//
// Target models
//===----------------------------------------------------------------------===//

/// What the CPU heuristic knows about the machine.
struct CpuModel {
  int64_t vectorWidth; ///< f32 lanes of one vector register.
  int64_t registers;   ///< vector registers.
  int64_t l1Bytes, l2Bytes;
  int64_t cores;
};

static int64_t hostCacheBytes(int level, int64_t fallback) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  long bytes =
      sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
  if (bytes > 0)
    return bytes;
#endif
  return fallback;
}

static CpuModel hostCpuModel() {
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

/// CUDA: the device the grid-size rules aim to fill (H100 SXM: 132 SMs).
constexpr int64_t kCudaSMs = 132;
/// CUDA: local memory per thread for flash attention's block temporaries;
/// 128 threads x 1 KiB stays within the L1 of an A100/H100 SM.
constexpr int64_t kCudaFlashLocalBytes = 1024;

//===----------------------------------------------------------------------===//
// CPU: matmul kernel tiles
//===----------------------------------------------------------------------===//

struct MatmulShape {
  int64_t m, n, k;
};

struct CpuMatmulTile {
  int64_t vectorWidth, rowTile, colTile, columnBlock;
};

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

/// One configuration for the contractions `shapes` of one op (all of them
/// run with the same tiles): the least total modelled time.
static CpuMatmulTile chooseCpuMatmul(ArrayRef<MatmulShape> shapes,
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

struct AttentionShape {
  int64_t batch, hkv, group, sq, sk, dk, dv;
  /// f16/bf16 with a dot-product score, no bias and no window: on CUDA
  /// attn-gpu-flash-attention takes it if the shape fits too.
  bool tensorCoreOperands = false;
};

static void chooseCpuFlash(const AttentionShape &a, const CpuModel &cpu,
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

static void chooseCudaFlash(const AttentionShape &a, int64_t fixedQ,
                            int64_t fixedK, int64_t &blockQ, int64_t &blockK) {
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
      if (fixedQ || rowBlocks * (a.sq / blockQ) >= kCudaSMs)
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

/// n8 tiles per warp for attn-gpu-mma-matmul, or 0 when the kernel does
/// not apply to this shape (it needs M % 16, N % 8 and K % 16 == 0).
static int64_t chooseWarpNTiles(const MatmulShape &s, int64_t fixed) {
  if (s.m % 16 != 0 || s.n % 8 != 0 || s.k % 16 != 0)
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

static int64_t chooseThreads(int64_t largestResult) {
  for (int64_t t : {128, 64})
    if (llvm::divideCeil(largestResult, t) >= kCudaSMs)
      return t;
  return 32;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Rows of `x : [..., K]` seen as a matrix.
static int64_t rowsOf(Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rows = 1;
  for (int64_t d : type.getShape().drop_back())
    rows *= d;
  return rows;
}

static bool isNarrowFloat(Type t) {
  Type elt = cast<ShapedType>(t).getElementType();
  return elt.isF16() || elt.isBF16();
}

struct AttnTilePass : public mlir::attn::impl::AttnTileBase<AttnTilePass> {
  using AttnTileBase::AttnTileBase;

  void runOnOperation() override;

private:
  bool cuda() const { return target == "cuda"; }
  LogicalResult checkOptions();
  /// The tile attribute of an op that lowers to the contractions `mms` and,
  /// when `attention` is set, to a flash attention.
  TileAttr choose(ArrayRef<MatmulShape> mms, bool narrow,
                  std::optional<AttentionShape> attention);

  CpuModel cpu;
};

LogicalResult AttnTilePass::checkOptions() {
  func::FuncOp func = getOperation();
  if (target != "cpu" && target != "cuda")
    return func.emitError()
           << "attn-tile: target must be cpu or cuda, got '" << target << "'";
  std::pair<StringLiteral, int64_t> sizes[] = {
      {"block-q", blockQ},
      {"block-k", blockK},
      {"vector-width", vectorWidth},
      {"row-tile", rowTile},
      {"col-tile", colTile},
      {"column-block", columnBlock},
      {"warp-n-tiles", warpNTiles},
      {"threads", threads},
      {"simd-width", simdWidth},
      {"vector-registers", vectorRegisters},
      {"l1-kib", l1KiB},
      {"l2-kib", l2KiB},
      {"cores", cores}};
  for (auto [name, value] : sizes)
    if (value < 0)
      return func.emitError() << "attn-tile: " << name
                              << " must be >= 0 (0 = choose), got " << value;
  std::pair<StringLiteral, int64_t> lanes[] = {{"vector-width", vectorWidth},
                                               {"simd-width", simdWidth}};
  for (auto [name, value] : lanes)
    if (value && !llvm::isPowerOf2_64(value))
      return func.emitError() << "attn-tile: " << name
                              << " must be a power of two, got " << value;
  if (threads > 1024)
    return func.emitError() << "attn-tile: threads must be at most 1024, got "
                            << static_cast<int64_t>(threads);
  // An option of the other target would be silently ignored: say so.
  StringRef wrong;
  if (cuda()) {
    if (vectorWidth || rowTile || colTile || columnBlock || simdWidth ||
        vectorRegisters || l1KiB || l2KiB || cores)
      wrong = "the CPU matmul and CPU model options";
  } else if (warpNTiles || threads) {
    wrong = "warp-n-tiles and threads";
  }
  if (!wrong.empty())
    return func.emitError()
           << "attn-tile: " << wrong << " do not apply to target=" << target;
  return success();
}

TileAttr AttnTilePass::choose(ArrayRef<MatmulShape> mms, bool narrow,
                              std::optional<AttentionShape> attention) {
  MLIRContext *ctx = &getContext();
  std::optional<int64_t> bq, bk, vl, mr, nr, nb, nt;
  SmallVector<MatmulShape> shapes;
  for (const MatmulShape &s : mms)
    if (s.m > 0 && s.n > 0 && s.k > 0)
      shapes.push_back(s);
  if (cuda()) {
    // attn-gpu-mma-matmul falls back to NT = 1 where N % (8 NT) != 0, so
    // the smallest choice among the contractions it applies to suits all.
    for (const MatmulShape &s : shapes)
      if (int64_t chosen = narrow ? chooseWarpNTiles(s, warpNTiles) : 0)
        nt = nt ? std::min(*nt, chosen) : chosen;
  } else if (!shapes.empty()) {
    CpuMatmulTile t = chooseCpuMatmul(
        shapes, cpu, {vectorWidth, rowTile, colTile, columnBlock});
    vl = t.vectorWidth;
    mr = t.rowTile;
    nr = t.colTile;
    nb = t.columnBlock;
  }
  if (attention) {
    int64_t q = 0, k = 0;
    if (cuda())
      chooseCudaFlash(*attention, blockQ, blockK, q, k);
    else
      chooseCpuFlash(*attention, cpu, blockQ, blockK, q, k);
    bq = q;
    bk = k;
  }
  if (!bq && !bk && !vl && !mr && !nr && !nb && !nt)
    return {};
  return TileAttr::get(ctx, bq, bk, vl, mr, nr, nb, nt,
                       /*threads=*/std::nullopt);
}

void AttnTilePass::runOnOperation() {
  if (failed(checkOptions()))
    return signalPassFailure();
  if (!cuda()) {
    cpu = hostCpuModel();
    if (simdWidth)
      cpu.vectorWidth = simdWidth;
    if (vectorRegisters)
      cpu.registers = vectorRegisters;
    if (l1KiB)
      cpu.l1Bytes = l1KiB * 1024;
    if (l2KiB)
      cpu.l2Bytes = l2KiB * 1024;
    if (cores)
      cpu.cores = cores;
  }

  func::FuncOp func = getOperation();
  int64_t largestResult = 0;
  auto isStatic = [](Operation *op) {
    auto isStaticTensor = [](Type t) {
      auto type = dyn_cast<RankedTensorType>(t);
      return type && type.hasStaticShape();
    };
    return llvm::all_of(op->getOperandTypes(), isStaticTensor) &&
           llvm::all_of(op->getResultTypes(), isStaticTensor);
  };
  func.walk([&](Operation *op) {
    if (!isa<AttnDialect>(op->getDialect()) ||
        isa<WeightOp, LayerOp, YieldOp>(op) || !isStatic(op))
      return;
    for (Type t : op->getResultTypes())
      largestResult =
          std::max(largestResult, cast<RankedTensorType>(t).getNumElements());
    // The user's (or an earlier run's) choice stands.
    if (TileAttr::lookup(op))
      return;
    TileAttr tile;
    if (auto linear = dyn_cast<LinearOp>(op)) {
      auto w = linear.getWeight().getType();
      tile = choose(
          {{rowsOf(linear.getInput()), w.getDimSize(0), w.getDimSize(1)}},
          isNarrowFloat(linear.getType()), std::nullopt);
    } else if (auto ffn = dyn_cast<FfnOp>(op)) {
      auto up = ffn.getUpWeight().getType();
      int64_t m = rowsOf(ffn.getInput());
      tile = choose({{m, up.getDimSize(0), up.getDimSize(1)},
                     {m, up.getDimSize(1), up.getDimSize(0)}},
                    isNarrowFloat(ffn.getType()), std::nullopt);
    } else if (auto sdpa = dyn_cast<SdpaOp>(op)) {
      // attn-flash-attention blocks only dot-product scores.
      if (sdpa.getScore() != ScoreFunction::dot &&
          sdpa.getScore() != ScoreFunction::scaled_dot)
        return;
      auto q = sdpa.getQuery().getType(), k = sdpa.getKey().getType(),
           v = sdpa.getValue().getType();
      if (q.getNumElements() == 0 || k.getNumElements() == 0)
        return;
      AttentionShape a{
          q.getDimSize(0), k.getDimSize(1), q.getDimSize(1) / k.getDimSize(1),
          q.getDimSize(2), k.getDimSize(2), k.getDimSize(3),
          v.getDimSize(3)};
      Type elt = sdpa.getType().getElementType();
      a.tensorCoreOperands =
          isNarrowFloat(sdpa.getType()) && q.getElementType() == elt &&
          k.getElementType() == elt && v.getElementType() == elt &&
          !sdpa.getBias() && (!sdpa.getWindow() || *sdpa.getWindow() == 0);
      tile = choose({}, false, a);
    } else if (auto mha = dyn_cast<MhaOp>(op)) {
      // The projections and the attention that attn.mha decomposes into;
      // the decomposition copies this attribute onto each of them.
      auto x = mha.getQuery().getType();
      auto kv = mha.getKeyValue()
                    ? cast<RankedTensorType>(mha.getKeyValue().getType())
                    : x;
      int64_t batch = x.getDimSize(0), sq = x.getDimSize(1),
              dm = x.getDimSize(2), sk = kv.getDimSize(1),
              dkv = kv.getDimSize(2);
      int64_t heads = mha.getNumHeads(), kvHeads = mha.getKvHeads(),
              dh = mha.getEffectiveHeadDim();
      AttentionShape a{batch, kvHeads, heads / kvHeads, sq, sk, dh, dh};
      a.tensorCoreOperands =
          isNarrowFloat(x) && (!mha.getWindow() || *mha.getWindow() == 0);
      tile = choose({{batch * sq, heads * dh, dm},
                     {batch * sk, kvHeads * dh, dkv},
                     {batch * sq, dm, heads * dh}},
                    isNarrowFloat(x), a);
    }
    if (tile)
      op->setAttr(TileAttr::kAttrName, tile);
  });

  // Threads per block is a property of the function's kernels: the
  // parallel loops that attn-gpu-tile-parallel-loops maps no longer know
  // which attn op they came from.
  if (cuda() && largestResult > 0 && !TileAttr::lookup(func)) {
    int64_t t = threads ? threads : chooseThreads(largestResult);
    func->setAttr(TileAttr::kAttrName,
                  TileAttr::get(&getContext(), {}, {}, {}, {}, {}, {}, {}, t));
  }
}

} // namespace
