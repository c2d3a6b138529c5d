//===- Tile.cpp - choose tile sizes per target (attn-tile) ----------------===//
//
// Tile sizes used to be separate options of the passes that tile (flash
// attention, the CPU and GPU matmul kernels, the GPU loop mapping), with one
// default each for every shape. attn-tile chooses them per op, from the op's
// shapes and a model of the target, on the attn-level IR where the shapes
// are still those of the model (M, N, K of a projection, the heads and head
// width of an attention), and records them as #attn.tile for the consumers.
// This file reads the shapes off the ops and records the choice; the
// target halves of the heuristic are TileConfigs (TileConfig.h) that the
// targets register: Codegen/CPU/KernelConfig.cpp and
// Codegen/GPU/KernelConfig.cpp (rules in docs/passes.md, "Tile sizes").
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "attnc/Codegen/Common/TileConfig.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <atomic>
#include <iterator>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// The targets' configurations
//===----------------------------------------------------------------------===//

TileConfig::~TileConfig() = default;

/// The registered factories, indexed by attnc::Target.
static std::atomic<TileConfigFactory>
    tileConfigFactories[std::size(attnrt::kTargetNames)];

void mlir::attn::registerTileConfig(attnc::Target target,
                                    TileConfigFactory factory) {
  tileConfigFactories[static_cast<size_t>(target)].store(factory);
}

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
  /// The options as set, for the target's TileConfig.
  AttnTileOptions currentOptions() const;
  /// The sizes' ranges (the options each target uses are its own check).
  LogicalResult checkOptions();
  /// The tile attribute that `config` chooses for an op that lowers to the
  /// contractions `mms` and, when `attention` is set, to a flash attention.
  TileAttr choose(const TileConfig &config, ArrayRef<MatmulShape> mms,
                  bool narrow, std::optional<AttentionShape> attention);
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

AttnTileOptions AttnTilePass::currentOptions() const {
  AttnTileOptions o;
  o.target = target;
  o.blockQ = blockQ;
  o.blockK = blockK;
  o.vectorWidth = vectorWidth;
  o.rowTile = rowTile;
  o.colTile = colTile;
  o.columnBlock = columnBlock;
  o.warpNTiles = warpNTiles;
  o.threads = threads;
  o.simdWidth = simdWidth;
  o.vectorRegisters = vectorRegisters;
  o.l1KiB = l1KiB;
  o.l2KiB = l2KiB;
  o.cores = cores;
  return o;
}

LogicalResult AttnTilePass::checkOptions() {
  func::FuncOp func = getOperation();
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
  return success();
}

TileAttr AttnTilePass::choose(const TileConfig &config,
                              ArrayRef<MatmulShape> mms, bool narrow,
                              std::optional<AttentionShape> attention) {
  SmallVector<MatmulShape> shapes;
  for (const MatmulShape &s : mms)
    if (s.m > 0 && s.n > 0 && s.k > 0)
      shapes.push_back(s);
  TileChoice c;
  config.chooseMatmul(shapes, narrow, c);
  if (attention)
    config.chooseFlash(*attention, c);
  if (!c.blockQ && !c.blockK && !c.vectorWidth && !c.rowTile && !c.colTile &&
      !c.columnBlock && !c.warpNTiles)
    return {};
  return TileAttr::get(&getContext(), c.blockQ, c.blockK, c.vectorWidth,
                       c.rowTile, c.colTile, c.columnBlock, c.warpNTiles,
                       /*threads=*/std::nullopt);
}

void AttnTilePass::runOnOperation() {
  TileConfigFactory factory =
      tileConfigFactories[static_cast<size_t>(target.getValue())].load();
  if (!factory) {
    getOperation().emitError()
        << "attn-tile: no tile configuration registered for target="
        << attnc::stringifyOption(target.getValue());
    return signalPassFailure();
  }
  if (failed(checkOptions()))
    return signalPassFailure();
  // The target's half of the heuristic, for this function.
  std::unique_ptr<TileConfig> config = factory(currentOptions());
  // An option of the other target would be silently ignored: say so.
  if (StringRef unused = config->unusedOptionsSet(); !unused.empty()) {
    getOperation().emitError()
        << "attn-tile: " << unused << " do not apply to target="
        << attnc::stringifyOption(target.getValue());
    return signalPassFailure();
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
          *config,
          {{rowsOf(linear.getInput()), w.getDimSize(0), w.getDimSize(1)}},
          isNarrowFloat(linear.getType()), std::nullopt);
    } else if (auto ffn = dyn_cast<FfnOp>(op)) {
      auto up = ffn.getUpWeight().getType();
      int64_t m = rowsOf(ffn.getInput());
      tile = choose(*config,
                    {{m, up.getDimSize(0), up.getDimSize(1)},
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
      tile = choose(*config, {}, false, a);
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
      tile = choose(*config,
                    {{batch * sq, heads * dh, dm},
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
  if (largestResult > 0 && !TileAttr::lookup(func))
    if (std::optional<int64_t> t = config->chooseThreads(largestResult))
      func->setAttr(TileAttr::kAttrName, TileAttr::get(&getContext(), {}, {},
                                                       {}, {}, {}, {}, {}, *t));
}

} // namespace
