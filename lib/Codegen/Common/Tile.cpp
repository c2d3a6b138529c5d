//===- Tile.cpp - choose tile sizes per target (attn-tile) ----------------===//
//
// Tile sizes used to be separate options of the passes that tile (flash
// attention, the CPU and GPU matmul kernels, the GPU loop mapping), with one
// default each for every shape. attn-tile chooses them per op, from the op's
// shapes and a model of the target, on the attn-level IR where the shapes
// are still those of the model (M, N, K of a projection, the heads and head
// width of an attention), and records them as #attn.tile for the consumers.
// This file reads the shapes off the ops and records the choice; the
// target halves of the heuristic are Codegen/CPU/KernelConfig.cpp and
// Codegen/GPU/KernelConfig.cpp (rules in docs/passes.md, "Tile sizes").
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "Codegen/CPU/KernelConfig.h"
#include "Codegen/GPU/KernelConfig.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

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

/// The largest value of a size option: the tiles' own limits
/// (TileAttr::maxValue), and for the CPU model what any real machine stays
/// far below, so that the cost model's products cannot overflow.
static int64_t maxOptionValue(StringRef option) {
  // The tile options are the #attn.tile fields with '-' for '_'.
  std::string field = option.str();
  std::replace(field.begin(), field.end(), '-', '_');
  return llvm::StringSwitch<int64_t>(option)
      .Case("simd-width", 64)
      .Case("vector-registers", 256)
      .Cases({"l1-kib", "l2-kib"}, 1 << 20)
      .Case("cores", 4096)
      .Default(TileAttr::maxValue(field));
}

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
  for (auto [name, value] : sizes) {
    if (value < 0)
      return func.emitError() << "attn-tile: " << name
                              << " must be >= 0 (0 = choose), got " << value;
    if (value > maxOptionValue(name))
      return func.emitError() << "attn-tile: " << name << " must be at most "
                              << maxOptionValue(name) << ", got " << value;
  }
  std::pair<StringLiteral, int64_t> lanes[] = {{"vector-width", vectorWidth},
                                               {"simd-width", simdWidth}};
  for (auto [name, value] : lanes)
    if (value && !llvm::isPowerOf2_64(value))
      return func.emitError() << "attn-tile: " << name
                              << " must be a power of two, got " << value;
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
    if (!isa_and_nonnull<AttnDialect>(op->getDialect()) ||
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
      SdpaShape s = sdpa.getSdpaShape();
      AttentionShape a{s.batch, s.hkv, s.group, s.sq, s.sk, s.dk, s.dv};
      Type elt = sdpa.getType().getElementType();
      a.tensorCoreOperands =
          isNarrowFloat(sdpa.getType()) && q.getElementType() == elt &&
          k.getElementType() == elt && v.getElementType() == elt &&
          (!sdpa.getWindow() || *sdpa.getWindow() == 0);
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
