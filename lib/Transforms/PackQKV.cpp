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
/// attn.weight (not gathered, not already packed), or a gather of one
/// checkpoint tensor along its output axis (GPT-2's fused c_attn, PyTorch's
/// in_proj_weight), whose parts merge back into one binding of that tensor.
struct PackablePart {
  WeightOp op;
  /// The gathered tensor's name; null for a plain weight.
  StringAttr gatherSource;
};

/// `v` as a packable part; `outputAxis` is the output axis of the
/// checkpoint tensor (1 for weights bound transposed, else 0).
static std::optional<PackablePart> packablePart(Value v, int64_t outputAxis) {
  auto weight = v ? v.getDefiningOp<WeightOp>() : WeightOp();
  if (!weight || weight.getConcatNamesAttr())
    return std::nullopt;
  if (!weight.getGatherRangesAttr())
    return PackablePart{weight, nullptr};
  if (weight.getGatherAxis() != outputAxis)
    return std::nullopt;
  return PackablePart{weight, weight.getNameAttr()};
}

/// Whether `v` is bound transposed: the checkpoint tensor's output axis.
static int64_t outputAxisOf(Value weight) {
  auto op = weight.getDefiningOp<WeightOp>();
  return op && op.getTranspose() ? 1 : 0;
}

/// The concatenation of `parts` along axis 0 (of the result type), as one
/// attn.weight: plain parts become a `concat_names` binding; gathers of one
/// tensor become one gather whose ranges are the parts' in order (adjacent
/// ranges merged), or the plain tensor when they cover it.
static Value concatWeights(OpBuilder &b, Location loc,
                           ArrayRef<PackablePart> parts) {
  WeightOp firstPart = parts.front().op;
  RankedTensorType first = firstPart.getType();
  SmallVector<int64_t> shape(first.getShape());
  shape[0] = 0;
  for (PackablePart part : parts)
    shape[0] += part.op.getType().getDimSize(0);
  auto type = RankedTensorType::get(shape, first.getElementType());
  // Transposed parts (bound as W^T of [K, N] checkpoint tensors) are
  // concatenated along the checkpoint tensors' axis 1, then transposed:
  // concat_axis and gather_axis refer to the untransposed shape.
  bool transpose = firstPart.getTranspose();

  if (StringAttr source = parts.front().gatherSource) {
    SmallVector<int64_t> ranges;
    for (PackablePart part : parts) {
      ArrayRef<int64_t> own = part.op.getGatherRangesAttr().asArrayRef();
      for (size_t i = 0; i + 1 < own.size(); i += 2) {
        if (!ranges.empty() &&
            ranges[ranges.size() - 2] + ranges.back() == own[i]) {
          ranges.back() += own[i + 1];
          continue;
        }
        ranges.append({own[i], own[i + 1]});
      }
    }
    int64_t extent = *firstPart.getGatherExtent();
    bool whole = ranges.size() == 2 && ranges[0] == 0 && ranges[1] == extent;
    auto packed = WeightOp::create(
        b, loc, type, source,
        whole ? nullptr : b.getI64IntegerAttr(*firstPart.getGatherAxis()),
        whole ? nullptr : b.getI64IntegerAttr(extent),
        whole ? nullptr : b.getDenseI64ArrayAttr(ranges),
        /*concat_names=*/nullptr, /*concat_axis=*/nullptr);
    packed.setTranspose(transpose);
    packed.setConvert(firstPart.getConvert());
    return packed;
  }

  SmallVector<Attribute> names;
  std::string label;
  for (PackablePart part : parts) {
    names.push_back(part.op.getNameAttr());
    label += (label.empty() ? "" : "+") + part.op.getName().str();
  }
  auto packed = WeightOp::create(
      b, loc, type, b.getStringAttr(label), /*gather_axis=*/nullptr,
      /*gather_extent=*/nullptr, /*gather_ranges=*/nullptr,
      b.getArrayAttr(names), b.getI64IntegerAttr(transpose ? 1 : 0));
  packed.setTranspose(transpose);
  packed.setConvert(firstPart.getConvert());
  return packed;
}

namespace {
struct AttnPackQKVPass
    : public mlir::attn::impl::AttnPackQKVBase<AttnPackQKVPass> {
  void runOnOperation() override {
    // Group packable projections by (input, weight element type and width,
    // has bias, bound transposed), in program order.
    // Gathered weights (and biases) pack only with gathers of the same
    // tensor.
    llvm::MapVector<std::tuple<Value, Type, int64_t, int64_t, int64_t,
                               Attribute, Attribute>,
                    SmallVector<LinearOp>>
        groups;
    getOperation().walk([&](LinearOp linear) {
      std::optional<PackablePart> weight =
          packablePart(linear.getWeight(), outputAxisOf(linear.getWeight()));
      std::optional<PackablePart> bias;
      if (linear.getBias()) {
        bias = packablePart(linear.getBias(), 0);
        if (!bias)
          return;
      }
      if (!weight)
        return;
      RankedTensorType type = weight->op.getType();
      groups[{linear.getInput(), type.getElementType(), type.getDimSize(1),
              bias ? 1 : 0,
              (weight->op.getTranspose() ? 1 : 0) |
                  (weight->op.getConvert() ? 2 : 0),
              weight->gatherSource, bias ? bias->gatherSource : Attribute()}]
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
      SmallVector<PackablePart> weights, biases;
      for (LinearOp linear : linears) {
        weights.push_back(*packablePart(linear.getWeight(),
                                        outputAxisOf(linear.getWeight())));
        if (linear.getBias())
          biases.push_back(*packablePart(linear.getBias(), 0));
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
        // Batch and sequence may be dynamic: their sizes are the packed
        // result's (which is sized like the shared input).
        for (auto [i, d] : llvm::enumerate(type.getShape()))
          sizes.push_back(
              ShapedType::isDynamic(d)
                  ? OpFoldResult(tensor::DimOp::create(b, linear.getLoc(),
                                                       packed.getResult(), i)
                                     .getResult())
                  : OpFoldResult(b.getIndexAttr(d)));
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
