//===- CpuTransposeWeights.cpp - bind projection weights K-major ----------===//
//
// A projection x W^T reads the checkpoint's W [out, in] along k. The CPU's
// outer-product tiles (attn-cpu-matmul-kernel) want W^T [in, out], contiguous
// along the output columns, so that each k step is one row load of W^T plus
// broadcasts of x and no horizontal reductions. The weights file is never
// rewritten: this pass marks the weight `transpose`, attn-hoist-weights
// writes that into the manifest record, and the runtime transposes the
// tensor once when it binds the weights. A weight that is already a
// `transpose` view of a tensor stored [in, out] loses the flag instead. A
// binding that something else also reads as it is (a tied LM head and its
// embedding table) stays as it is: a transposed copy would hold the largest
// tensor of the model twice.
//
// An f16/bf16 model's weight reaches its f32 contraction through an
// elementwise `arith.extf` generic (attn-convert-precision): the weight is
// transposed the same way and the widening follows it, so that the matmul
// kernel reads the narrow W^T (and widens it in registers or feeds it to
// bf16 dot products).
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "Codegen/Common/MatmulMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUTRANSPOSEWEIGHTS
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A projection's weight and, for an f16/bf16 weight, the elementwise
/// `arith.extf` generic that widens it for the f32 contraction.
struct Projection {
  WeightOp weight;
  linalg::GenericOp widen;
  /// The weight's use that the projection owns (by the contraction, or by
  /// the widening generic).
  OpOperand *use;
  /// The contraction already reads the weight K-major (an ONNX MatMul's
  /// [in, out] initializer): only panels can change its binding.
  bool kMajor = false;
};

/// The 2-D identity `arith.extf` generic to f32 of an f16/bf16 attn.weight
/// that only `contraction` reads: the weight; else null.
static WeightOp matchWidenedWeight(Value operand, linalg::GenericOp &widen) {
  widen = operand.getDefiningOp<linalg::GenericOp>();
  if (!widen || !widen.hasPureTensorSemantics() ||
      widen.getNumDpsInputs() != 1 || widen.getNumDpsInits() != 1 ||
      widen.getNumLoops() != 2 || widen.getNumReductionLoops() != 0 ||
      !llvm::all_of(widen.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !operand.hasOneUse())
    return {};
  Block &body = widen.getRegion().front();
  auto ext = dyn_cast<arith::ExtFOp>(&body.front());
  if (body.getOperations().size() != 2 || !ext ||
      ext.getIn() != body.getArgument(0) || !ext.getType().isF32() ||
      cast<linalg::YieldOp>(body.getTerminator()).getValues()[0] != ext)
    return {};
  auto weight = widen.getDpsInputs()[0].getDefiningOp<WeightOp>();
  if (!weight)
    return {};
  Type elem = weight.getResult().getType().getElementType();
  return elem.isF16() || elem.isBF16() ? weight : WeightOp();
}

/// C[m, n] += A[m, k] * B[n, k] on f32 tensors with B an f32 attn.weight or
/// one widened from f16/bf16 (an f16/bf16 model's projection); or
/// C[m, n] += A[m, k] * B[k, n] with B likewise (kMajor), not in panels.
static std::optional<Projection> matchProjection(linalg::GenericOp op) {
  std::optional<ContractionLoops> loops = matchContractionLoops(op);
  if (!op.hasPureTensorSemantics() || !isMulAddBody(op) || !loops)
    return std::nullopt;
  Value b = op.getDpsInputs()[1];
  Projection p{
      b.getDefiningOp<WeightOp>(), {}, &op->getOpOperand(1), loops->kMajorB};
  if (!p.weight) {
    p.weight = matchWidenedWeight(b, p.widen);
    if (!p.weight)
      return std::nullopt;
    p.use = &p.widen->getOpOperand(0);
  } else if (!p.weight.getResult().getType().getElementType().isF32()) {
    return std::nullopt;
  }
  if (p.weight.getResult().getType().getRank() != 2 ||
      (p.kMajor && p.weight.getPanels()))
    return std::nullopt;
  return p;
}

/// `weight` (a transposed binding [K, N]) bound in column panels of `width`
/// instead, read back as [K, N] through a permuting copy and a collapse
/// (see the pass description); the [K, N] value. Plain panels are
/// [N / W, K, W], copied back over (k, p, c); with `pairs` (K even) they
/// are [N / W, K / 2, 2 * W], copied back over (j, t, p, c) from
/// panels[p, j, 2 c + t].
static Value bindInPanels(OpBuilder &b, WeightOp weight, int64_t width,
                          bool pairs) {
  Location loc = weight.getLoc();
  RankedTensorType type = weight.getResult().getType();
  Type elem = type.getElementType();
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  int64_t rows = pairs ? 2 : 1;
  auto panels = cast<WeightOp>(b.clone(*weight));
  panels.getResult().setType(
      RankedTensorType::get({n / width, k / rows, rows * width}, elem));
  panels.setPanels(true);
  panels.setPairs(pairs);
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> copyShape;
  AffineMap read;
  SmallVector<ReassociationIndices> collapse;
  if (pairs) {
    AffineExpr j, t, p, c;
    bindDims(ctx, j, t, p, c);
    copyShape = {k / 2, 2, n / width, width};
    read = AffineMap::get(4, 0, {p, j, 2 * c + t}, ctx);
    collapse = {{0, 1}, {2, 3}};
  } else {
    AffineExpr r, p, c;
    bindDims(ctx, r, p, c);
    copyShape = {k, n / width, width};
    read = AffineMap::get(3, 0, {p, r, c}, ctx);
    collapse = {{0}, {1, 2}};
  }
  Value empty = tensor::EmptyOp::create(b, loc, copyShape, elem);
  unsigned loops = copyShape.size();
  SmallVector<AffineMap> maps = {read,
                                 AffineMap::getMultiDimIdentityMap(loops, ctx)};
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(
      b, loc, empty.getType(), ValueRange{panels.getResult()},
      ValueRange{empty}, maps, iterators,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, args[0]);
      });
  return tensor::CollapseShapeOp::create(b, loc, type, copy.getResult(0),
                                         collapse);
}

struct AttnCpuTransposeWeightsPass
    : public mlir::attn::impl::AttnCpuTransposeWeightsBase<
          AttnCpuTransposeWeightsPass> {
  using Base::Base;

  /// The panels' width for `op`: panel-vectors of its tile's vector width.
  int64_t panelWidth(Operation *op) const {
    int64_t vl = vectorWidth;
    if (auto tile = TileAttr::lookup(op))
      vl = tile.getVectorWidth().value_or(vl);
    return panelVectors * vl;
  }

  /// Whether a [K, N] binding goes in panels of `width`: more than one
  /// panel, whole ones.
  static bool fitsPanels(RankedTensorType kn, int64_t width) {
    return width > 0 && kn.getDimSize(1) > width &&
           kn.getDimSize(1) % width == 0;
  }

  void runOnOperation() override {
    bindInt8WordsInPanels();
    SmallVector<std::pair<linalg::GenericOp, Projection>> matches;
    llvm::SmallPtrSet<OpOperand *, 8> projectionUses;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Projection> p = matchProjection(op)) {
        matches.push_back({op, *p});
        projectionUses.insert(p->use);
      }
    });
    // Bindings (attributes and type) that a non-projection user reads.
    llvm::DenseSet<std::pair<Attribute, Type>> keptAsIs;
    getOperation().walk([&](WeightOp weight) {
      if (llvm::any_of(weight->getUses(), [&](OpOperand &use) {
            return !projectionUses.contains(&use);
          }))
        keptAsIs.insert({weight->getAttrDictionary(), weight.getType()});
    });
    for (auto [op, p] : matches) {
      WeightOp weight = p.weight;
      if (keptAsIs.contains({weight->getAttrDictionary(), weight.getType()}))
        continue;
      int64_t width = panelWidth(op);
      auto panelsFit = [&](RankedTensorType kn) {
        return fitsPanels(kn, width);
      };
      RankedTensorType type = weight.getResult().getType();
      // Pair panels for a bf16 [K, N] that the contraction reads widened.
      auto pairsFit = [&](RankedTensorType kn) {
        return pairPanels && kn.getElementType().isBF16() && panelsFit(kn) &&
               kn.getDimSize(0) % 2 == 0;
      };
      if (p.kMajor && p.widen) {
        // A binding the contraction already reads [K, N] (no transpose view
        // to flip): the widening reads the pairs' copy instead.
        if (pairsFit(type)) {
          OpBuilder pb(p.widen);
          p.use->set(bindInPanels(pb, weight, width, /*pairs=*/true));
          if (weight->use_empty())
            weight.erase();
        }
        continue;
      }
      if (p.kMajor) {
        if (panelsFit(weight.getResult().getType())) {
          OpBuilder pb(op);
          op->setOperand(1, bindInPanels(pb, weight, width, /*pairs=*/false));
          if (weight->use_empty())
            weight.erase();
        }
        continue;
      }
      OpBuilder b(weight);
      auto transposedType = RankedTensorType::get(
          {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
      // Same attributes (name, gather, concat) with `transpose` flipped; uses
      // of one weight by several contractions share it after CSE and in the
      // manifest (attn-hoist-weights keys on all attributes). A weight that
      // was already a transpose view (e.g. a GPT-2 Conv1D weight stored
      // [in, out]) is then bound as stored, with no transpose at all.
      auto transposed = cast<WeightOp>(b.clone(*weight));
      transposed.getResult().setType(transposedType);
      transposed.setTranspose(!weight.getTranspose());
      Value operand = transposed.getResult();
      if (!p.widen && panelsFit(transposedType)) {
        OpBuilder pb(op);
        operand = bindInPanels(pb, transposed, width, /*pairs=*/false);
      } else if (p.widen) {
        if (pairsFit(transposedType)) {
          OpBuilder pb(p.widen);
          operand = bindInPanels(pb, transposed, width, /*pairs=*/true);
        }
        // The widening follows the weight: an f32 [k, n] copy of W^T, which
        // the matmul kernel reads narrow from the transposed binding.
        OpBuilder wb(p.widen);
        Location loc = p.widen.getLoc();
        Value empty = tensor::EmptyOp::create(
            wb, loc, transposedType.getShape(), wb.getF32Type());
        auto widen = cast<linalg::GenericOp>(wb.clone(*p.widen));
        widen->setOperand(0, operand);
        widen->setOperand(1, empty);
        widen.getResult(0).setType(cast<RankedTensorType>(empty.getType()));
        operand = widen.getResult(0);
      }
      MLIRContext *ctx = op.getContext();
      AffineExpr d0, d1, d2;
      bindDims(ctx, d0, d1, d2);
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[1] = AffineMap::get(3, 0, {d2, d1}, ctx);
      op.setIndexingMapsAttr(Builder(ctx).getAffineMapArrayAttr(maps));
      op->setOperand(1, operand);
      if (p.widen && p.widen->use_empty())
        p.widen.erase();
      if (transposed->use_empty())
        transposed.erase();
      if (weight->use_empty())
        weight.erase();
    }
  }

  /// The s8 words of attn-cpu-quantize-int8 ([K / 4, N] i32, K-major
  /// already) in column panels too: the VNNI tiles read them in place like
  /// f32 panels.
  void bindInt8WordsInPanels() {
    SmallVector<std::pair<linalg::GenericOp, WeightOp>> words;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op->hasAttr("attn.int8_matmul") || op.getNumDpsInputs() != 2)
        return;
      auto weight = op.getDpsInputs()[1].getDefiningOp<WeightOp>();
      if (!weight || weight.getPanels())
        return;
      RankedTensorType type = weight.getResult().getType();
      if (type.getRank() == 2 && type.getElementType().isInteger(32) &&
          fitsPanels(type, panelWidth(op)))
        words.push_back({op, weight});
    });
    for (auto [op, weight] : words) {
      OpBuilder pb(op);
      op->setOperand(1, bindInPanels(pb, weight, panelWidth(op),
                                     /*pairs=*/false));
      if (weight->use_empty())
        weight.erase();
    }
  }
};

} // namespace
