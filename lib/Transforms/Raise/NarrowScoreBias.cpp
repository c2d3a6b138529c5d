//===- NarrowScoreBias.cpp - one row for a query-invariant score bias -----===//
//
// A padding mask says which keys each sequence may attend to; it is the
// same for every query. Exporters still expand it to [B, 1, Sq, Sk] before
// adding it to the scores, and the attention kernels then read Sq x Sk
// floats per head and layer (1 MiB at seq 512) where Sk would do. When the
// bias provably does not depend on the query position, the attention gets
// its first query row instead; attention broadcasts a bias along size-1
// dimensions.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNNARROWSCOREBIAS
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// The dimension of `reshape`'s other side that dimension `d` of
/// `expandedType` stands for, when the other dimensions of its group are
/// all 1; nullopt otherwise.
static std::optional<int64_t>
collapsedDim(ArrayRef<ReassociationIndices> groups,
             RankedTensorType expandedType, int64_t d) {
  for (auto [index, group] : llvm::enumerate(groups)) {
    if (!llvm::is_contained(group, d))
      continue;
    for (int64_t other : group)
      if (other != d && expandedType.getDimSize(other) != 1)
        return std::nullopt;
    return static_cast<int64_t>(index);
  }
  return std::nullopt;
}

namespace {
/// Whether values are the same at every index of one of their dimensions,
/// remembered per (value, dimension): a value read by several ops of the
/// chain is checked once, so a graph that shares values cannot make the
/// walk exponential.
class InvariantDims {
public:
  /// True if `v` provably has the same value at every index of dimension
  /// `d`.
  bool isInvariantAlong(Value v, int64_t d, unsigned depth = 0) {
    auto [it, inserted] = known.try_emplace({v, d}, false);
    if (!inserted)
      return it->second;
    bool invariant = compute(v, d, depth);
    known[{v, d}] = invariant;
    return invariant;
  }

private:
  bool compute(Value v, int64_t d, unsigned depth);
  DenseMap<std::pair<Value, int64_t>, bool> known;
};
} // namespace

bool InvariantDims::compute(Value v, int64_t d, unsigned depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || d >= type.getRank())
    return false;
  if (type.getDimSize(d) == 1)
    return true;
  // Masks are a few ops deep; a long chain is not one.
  if (depth > 32)
    return false;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (SplatElementsAttr splat; matchPattern(v, m_Constant(&splat)))
    return true;
  if (isa<linalg::FillOp>(def))
    return true;
  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def)) {
    ArrayRef<int64_t> added = broadcast.getDimensions();
    if (llvm::is_contained(added, d))
      return true;
    int64_t inputDim =
        d - llvm::count_if(added, [&](int64_t a) { return a < d; });
    return isInvariantAlong(broadcast.getInput(), inputDim, depth + 1);
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    std::optional<int64_t> source = collapsedDim(
        expand.getReassociationIndices(), expand.getResultType(), d);
    return source && isInvariantAlong(expand.getSrc(), *source, depth + 1);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    // The group of `d` holds one source dimension that is not 1.
    ReassociationIndices group = collapse.getReassociationIndices()[d];
    auto sourceType = collapse.getSrcType();
    std::optional<int64_t> wide;
    for (int64_t s : group) {
      if (sourceType.getDimSize(s) == 1)
        continue;
      if (wide)
        return false;
      wide = s;
    }
    return !wide || isInvariantAlong(collapse.getSrc(), *wide, depth + 1);
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  // Loop d is dimension d of the result (an identity output map).
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  if (!linalgOp.getMatchingIndexingMap(init).isIdentity() ||
      linalgOp.payloadUsesValueFromOperand(init))
    return false;
  bool usesIndex = false;
  linalgOp->walk([&](linalg::IndexOp) { usesIndex = true; });
  if (usesIndex)
    return false;
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return false;
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(d, map.getContext()));
    if (position && !isInvariantAlong(input->get(), *position, depth + 1))
      return false;
  }
  return true;
}

/// The first query row of `bias` ([B, H, Sq, Sk], static) when it is the
/// same for every query and Sq > 1; null otherwise.
static Value narrowedBias(OpBuilder &b, Location loc, Value bias,
                          InvariantDims &invariance) {
  auto type = dyn_cast<RankedTensorType>(bias.getType());
  if (!type || type.getRank() != 4 || !type.hasStaticShape() ||
      type.getDimSize(2) == 1 || !invariance.isInvariantAlong(bias, 2))
    return Value();
  SmallVector<int64_t> shape(type.getShape());
  shape[2] = 1;
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(b.getContext(), shape);
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), bias,
      offsets, sizes, strides);
}

namespace {
struct AttnNarrowScoreBiasPass
    : public mlir::attn::impl::AttnNarrowScoreBiasBase<
          AttnNarrowScoreBiasPass> {
  void runOnOperation() override {
    InvariantDims invariance;
    getOperation().walk([&](Operation *op) {
      OpOperand *bias = nullptr;
      if (auto sdpa = dyn_cast<attn::SdpaOp>(op))
        bias =
            sdpa.getBiasMutable().empty() ? nullptr : &sdpa.getBiasMutable()[0];
      else if (auto mha = dyn_cast<attn::MhaOp>(op))
        bias = mha.getScoreBiasMutable().empty()
                   ? nullptr
                   : &mha.getScoreBiasMutable()[0];
      if (!bias)
        return;
      OpBuilder b(op);
      if (Value row = narrowedBias(b, op->getLoc(), bias->get(), invariance))
        bias->set(row);
    });
  }
};
} // namespace
