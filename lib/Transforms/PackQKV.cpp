//===- PackQKV.cpp - one matmul for projections of the same input ---------===//
//
// Q, K and V are three projections of one input; computed separately they
// read the input three times and run three smaller matmuls. Packed, they are
// one matmul against the concatenated weights, which the runtime builds by
// concatenating the named checkpoint tensors at bind time.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPACKQKV
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// A weight or bias operand that can take part in a concatenation: a plain
/// (not gathered, not already packed) attn.weight.
static WeightOp plainWeight(Value v) {
  auto weight = v ? v.getDefiningOp<WeightOp>() : WeightOp();
  if (!weight || weight.getGatherRangesAttr() || weight.getConcatNamesAttr())
    return {};
  return weight;
}

/// The concatenation of `parts` along axis 0 (of the result type), as one
/// attn.weight.
static Value concatWeights(OpBuilder &b, Location loc,
                           ArrayRef<WeightOp> parts) {
  WeightOp firstPart = parts.front();
  RankedTensorType first = firstPart.getType();
  SmallVector<int64_t> shape(first.getShape());
  shape[0] = 0;
  SmallVector<Attribute> names;
  std::string label;
  for (WeightOp part : llvm::to_vector(parts)) {
    shape[0] += part.getType().getDimSize(0);
    names.push_back(part.getNameAttr());
    label += (label.empty() ? "" : "+") + part.getName().str();
  }
  // Transposed parts (bound as W^T of [K, N] checkpoint tensors) are
  // concatenated along the checkpoint tensors' axis 1, then transposed:
  // concat_axis refers to the untransposed shape.
  bool transpose = firstPart.getTranspose();
  auto packed = WeightOp::create(
      b, loc, RankedTensorType::get(shape, first.getElementType()),
      b.getStringAttr(label), /*gather_axis=*/nullptr,
      /*gather_extent=*/nullptr, /*gather_ranges=*/nullptr,
      b.getArrayAttr(names), b.getI64IntegerAttr(transpose ? 1 : 0));
  packed.setTranspose(transpose);
  return packed;
}

namespace {
struct AttnPackQKVPass
    : public mlir::attn::impl::AttnPackQKVBase<AttnPackQKVPass> {
  void runOnOperation() override {
    // Group packable projections by (input, weight element type and width,
    // has bias, bound transposed), in program order.
    llvm::MapVector<std::tuple<Value, Type, int64_t, int64_t, int64_t>,
                    SmallVector<LinearOp>>
        groups;
    getOperation().walk([&](LinearOp linear) {
      WeightOp weight = plainWeight(linear.getWeight());
      if (!weight || (linear.getBias() && !plainWeight(linear.getBias())))
        return;
      RankedTensorType type = weight.getType();
      groups[{linear.getInput(), type.getElementType(), type.getDimSize(1),
              linear.getBias() ? 1 : 0, weight.getTranspose() ? 1 : 0}]
          .push_back(linear);
    });
    for (auto &[key, linears] : groups) {
      if (linears.size() < 2)
        continue;
      // Insert after the last weight/bias the projections use and before
      // the first projection: all operands are defined there.
      Operation *insertBefore = linears.front();
      for (LinearOp linear : linears)
        if (linear->isBeforeInBlock(insertBefore) &&
            linear->getBlock() == insertBefore->getBlock())
          insertBefore = linear;
      if (llvm::any_of(linears, [&](LinearOp l) {
            return l->getBlock() != insertBefore->getBlock();
          }))
        continue;
      OpBuilder b(insertBefore);
      Location loc = linears.front().getLoc();
      SmallVector<WeightOp> weights, biases;
      for (LinearOp linear : linears) {
        weights.push_back(plainWeight(linear.getWeight()));
        if (linear.getBias())
          biases.push_back(plainWeight(linear.getBias()));
      }
      // Weights may be defined after the first projection in the block;
      // the packed weights are new ops, so only the input must dominate.
      Value packedWeight = concatWeights(b, loc, weights);
      Value packedBias =
          biases.empty() ? Value() : concatWeights(b, loc, biases);
      auto inputType =
          cast<RankedTensorType>(linears.front().getInput().getType());
      SmallVector<int64_t> shape(inputType.getShape());
      shape.back() =
          cast<RankedTensorType>(packedWeight.getType()).getDimSize(0);
      auto resultType = RankedTensorType::get(
          shape, linears.front().getType().getElementType());
      auto packed =
          LinearOp::create(b, loc, resultType, linears.front().getInput(),
                           packedWeight, packedBias);
      // Tiles that attn-tile chose for every part also suit the whole: same
      // K and M, and a multiple of their N.
      if (auto tile = TileAttr::lookup(linears.front());
          tile && llvm::all_of(linears, [&](LinearOp l) {
            return TileAttr::lookup(l) == tile;
          }))
        packed->setAttr(TileAttr::kAttrName, tile);
      int64_t offset = 0;
      int64_t rank = shape.size();
      for (LinearOp linear : linears) {
        RankedTensorType type = linear.getType();
        SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
        for (int64_t d : type.getShape())
          sizes.push_back(b.getIndexAttr(d));
        offsets.back() = b.getIndexAttr(offset);
        offset += type.getShape().back();
        Value slice = tensor::ExtractSliceOp::create(b, linear.getLoc(), type,
                                                     packed.getResult(),
                                                     offsets, sizes, strides);
        linear.getResult().replaceAllUsesWith(slice);
      }
      for (LinearOp linear : linears) {
        Value weight = linear.getWeight(), bias = linear.getBias();
        linear.erase();
        for (Value v : {weight, bias})
          if (v && v.use_empty())
            v.getDefiningOp()->erase();
      }
    }
  }
};
} // namespace
