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
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "Codegen/Common/MatmulMatch.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// C[m, n] += A[m, k] * B[n, k] on f32 tensors with B an attn.weight: the
/// weight, else null.
static WeightOp matchProjection(linalg::GenericOp op) {
  std::optional<ContractionLoops> loops = matchContractionLoops(op);
  if (!op.hasPureTensorSemantics() || !isMulAddBody(op) || !loops ||
      loops->kMajorB)
    return {};
  auto weight = op.getDpsInputs()[1].getDefiningOp<WeightOp>();
  if (!weight)
    return {};
  RankedTensorType type = weight.getResult().getType();
  if (type.getRank() != 2 || !type.getElementType().isF32())
    return {};
  return weight;
}

struct AttnCpuTransposeWeightsPass
    : public mlir::attn::impl::AttnCpuTransposeWeightsBase<
          AttnCpuTransposeWeightsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, WeightOp>> matches;
    llvm::SmallPtrSet<OpOperand *, 8> projectionUses;
    getOperation().walk([&](linalg::GenericOp op) {
      if (WeightOp weight = matchProjection(op)) {
        matches.push_back({op, weight});
        projectionUses.insert(&op->getOpOperand(1));
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
    for (auto [op, weight] : matches) {
      if (keptAsIs.contains({weight->getAttrDictionary(), weight.getType()}))
        continue;
      OpBuilder b(weight);
      RankedTensorType type = weight.getResult().getType();
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
      MLIRContext *ctx = op.getContext();
      AffineExpr d0, d1, d2;
      bindDims(ctx, d0, d1, d2);
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[1] = AffineMap::get(3, 0, {d2, d1}, ctx);
      op.setIndexingMapsAttr(Builder(ctx).getAffineMapArrayAttr(maps));
      op->setOperand(1, transposed.getResult());
      if (weight->use_empty())
        weight.erase();
    }
  }
};

} // namespace
