//===- CpuQuantizeWeights.cpp - weight-only int8 / int4 projections -------===//
//
// Decoding one token reads every projection weight once and does two flops
// per weight read: it is bound by memory bandwidth. Storing the weights as
// int8 or int4 with one f32 scale per group of G weights along K cuts the
// bytes per token by about 4x or 8x, while the activations and the
// arithmetic stay f32: the contraction reads the narrow weight and widens
// it in registers (attn-cpu-matmul-kernel), never an f32 copy of it.
//
// The pass cannot see weight values: it records which f32 bindings it
// replaced (module attribute `attn.woq_weights`), and attn-compile writes
// their quantized forms into the weights file, once, at compile time.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"
#include "attnc/Codegen/CPU/WeightOnlyLayout.h"

#include "DerivedWeights.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "Codegen/Common/MatmulMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUQUANTIZEWEIGHTS
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The activation rows `a` ([M, K] f32) quantized in groups of `group`
/// along K: the i8 rows and their f32 [M, K / group] scales, as the pass
/// description specifies.
static std::pair<Value, Value> quantizeActivations(OpBuilder &b, Location loc,
                                                   Value a, int64_t group) {
  MLIRContext *ctx = b.getContext();
  auto aType = cast<RankedTensorType>(a.getType());
  int64_t k = aType.getDimSize(1), groups = k / group;
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  OpFoldResult rows = tensor::getMixedSize(b, loc, a, 0);
  auto empty = [&](int64_t cols, Type elem) {
    return tensor::EmptyOp::create(
        b, loc, SmallVector<OpFoldResult>{rows, b.getIndexAttr(cols)}, elem);
  };
  auto cstF = [](OpBuilder &nb, Location l, float v) {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v)).getResult();
  };
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  auto parallel = utils::IteratorType::parallel;
  // max |a| per (row, group), the row seen as [M, groups, group].
  Value grouped = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({aType.getDimSize(0), groups, group}, f32),
      a, SmallVector<ReassociationIndices>{{0}, {1, 2}},
      SmallVector<OpFoldResult>{rows, b.getIndexAttr(groups),
                                b.getIndexAttr(group)});
  Value zeros = linalg::FillOp::create(b, loc, cstF(b, loc, 0.0f),
                                       empty(groups, f32).getResult())
                    .getResult(0);
  Value absMax =
      linalg::GenericOp::create(
          b, loc, TypeRange{zeros.getType()}, ValueRange{grouped},
          ValueRange{zeros},
          {AffineMap::get(3, 0, {d0, d1, d2}, ctx),
           AffineMap::get(3, 0, {d0, d1}, ctx)},
          {parallel, parallel, utils::IteratorType::reduction},
          [](OpBuilder &nb, Location l, ValueRange args) {
            // maxnum: a NaN loses to the running maximum, and LLVM
            // vectorizes the reduction (it left a compare and select
            // scalar).
            Value v = math::AbsFOp::create(nb, l, args[0]);
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::MaxNumFOp::create(nb, l, v, args[1])});
          })
          .getResult(0);
  auto map2 = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(2, 0, results, ctx);
  };
  Value scale =
      linalg::GenericOp::create(
          b, loc, TypeRange{zeros.getType()}, ValueRange{absMax},
          ValueRange{empty(groups, f32)}, {map2({d0, d1}), map2({d0, d1})},
          {parallel, parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value s =
                arith::DivFOp::create(nb, l, args[0], cstF(nb, l, 127.0f));
            Value isZero = arith::CmpFOp::create(
                nb, l, arith::CmpFPredicate::OEQ, s, cstF(nb, l, 0.0f));
            linalg::YieldOp::create(nb, l,
                                    ValueRange{arith::SelectOp::create(
                                        nb, l, isZero, cstF(nb, l, 1.0f), s)});
          })
          .getResult(0);
  // Over the grouped view, so that each group's innermost loop divides by
  // one scale (a loop LLVM vectorizes; indexing the scales by k / group
  // kept it scalar).
  auto map3 = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(3, 0, results, ctx);
  };
  Value groupedQuantized =
      linalg::GenericOp::create(
          b, loc,
          TypeRange{
              RankedTensorType::get({aType.getDimSize(0), groups, group}, i8)},
          ValueRange{grouped, scale},
          ValueRange{tensor::EmptyOp::create(
              b, loc,
              SmallVector<OpFoldResult>{rows, b.getIndexAttr(groups),
                                        b.getIndexAttr(group)},
              i8)},
          {map3({d0, d1, d2}), map3({d0, d1}), map3({d0, d1, d2})},
          {parallel, parallel, parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value q = math::RoundEvenOp::create(
                nb, l, arith::DivFOp::create(nb, l, args[0], args[1]));
            q = arith::MinNumFOp::create(
                nb, l, arith::MaxNumFOp::create(nb, l, q, cstF(nb, l, -127.0f)),
                cstF(nb, l, 127.0f));
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::FPToSIOp::create(nb, l, i8, q)});
          })
          .getResult(0);
  Value quantized = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(aType.getShape(), i8), groupedQuantized,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  return {quantized, scale};
}

struct AttnCpuQuantizeWeightsPass
    : public mlir::attn::impl::AttnCpuQuantizeWeightsBase<
          AttnCpuQuantizeWeightsPass> {
  using AttnCpuQuantizeWeightsBase::AttnCpuQuantizeWeightsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (bits != 8 && bits != 4) {
      module.emitError("attn-cpu-quantize-weights: bits must be 8 or 4, got ")
          << static_cast<int64_t>(bits);
      return signalPassFailure();
    }
    // Whole i32 words (4 int8 or 8 int4 weights) never straddle a group.
    if (groupSize < 8 || groupSize % 8 != 0) {
      module.emitError("attn-cpu-quantize-weights: group-size must be a "
                       "positive multiple of 8, got ")
          << static_cast<int64_t>(groupSize);
      return signalPassFailure();
    }
    if (interleaveColumns != 0 &&
        (interleaveColumns != kInterleavedColumns || !int8Activations)) {
      module.emitError("attn-cpu-quantize-weights: interleave-columns must "
                       "be 0, or 16 with int8-activations, got ")
          << static_cast<int64_t>(interleaveColumns);
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, WeightOp>> matches;
    module.walk([&](linalg::GenericOp op) {
      if (WeightOp weight = matchF32WeightProjection(op))
        matches.push_back({op, weight});
    });
    // The first projection that does not divide is enough to say why.
    for (auto [op, weight] : matches) {
      int64_t k = weight.getResult().getType().getDimSize(1);
      if (k % groupSize != 0) {
        weight.emitError("attn-cpu-quantize-weights: the input size K = ")
            << k << " of the projection by '" << weight.getName()
            << "' is not a multiple of group-size "
            << static_cast<int64_t>(groupSize);
        return signalPassFailure();
      }
    }
    if (matches.empty())
      return;

    // The checkpoint tensors the replaced bindings read; those that no
    // remaining attn.weight reads are not written into the weights file.
    llvm::StringSet<> sources;
    auto sourcesOf = [](WeightOp weight) {
      SmallVector<StringRef> names;
      if (ArrayAttr parts = weight.getConcatNamesAttr())
        for (Attribute part : parts)
          names.push_back(cast<StringAttr>(part).getValue());
      else
        names.push_back(weight.getName());
      return names;
    };

    // Derived names, one per binding (name and how it is assembled): the
    // same tensor bound two ways would otherwise get one quantized form.
    DerivedWeights derived(module, "attn.woq_weights",
                           bits == 8 ? ".q8" : ".q4");
    Builder builder(ctx);
    bool interleave = interleaveColumns != 0;
    SmallVector<NamedAttribute> params = {
        builder.getNamedAttr("bits", builder.getI64IntegerAttr(bits)),
        builder.getNamedAttr("group", builder.getI64IntegerAttr(groupSize))};
    if (interleave)
      params.push_back(builder.getNamedAttr(
          "interleave", builder.getI64IntegerAttr(kInterleavedColumns)));

    for (auto [op, weight] : matches) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      RankedTensorType wType = weight.getResult().getType();
      int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
      std::string name = derived.nameFor(weight, params);
      auto makeWeight = [&](StringRef tail, RankedTensorType type) {
        return DerivedWeights::create(b, loc, name + tail.str(), type);
      };
      Type f32 = b.getF32Type(), i32 = b.getI32Type();
      // [N, words] rows, k-contiguous like the f32 weight they replace
      // (the dot-product kernel reads rows of W), or blocks of 16 rows
      // interleaved a word at a time, in WeightOnlyLayout.h's layout.
      int64_t blocks = llvm::divideCeil(n, kInterleavedColumns);
      auto rowsOf = [&](int64_t words, Type elem) {
        if (interleave)
          return RankedTensorType::get({blocks, words, kInterleavedColumns},
                                       elem);
        return RankedTensorType::get({n, words}, elem);
      };
      Value packed =
          makeWeight("", rowsOf(interleave ? interleavedWeightWords(k, bits)
                                           : packedWeightWords(k, bits),
                                i32));
      Value scale = makeWeight("_scale", rowsOf(k / groupSize, f32));
      for (StringRef source : sourcesOf(weight))
        sources.insert(source);

      AffineExpr m, nn, kk;
      bindDims(ctx, m, nn, kk);
      auto map = [&](ArrayRef<AffineExpr> results) {
        return AffineMap::get(3, 0, results, ctx);
      };
      int64_t w = bits, group = groupSize;
      // packedWeightField's (interleavedWeightField's) word as an affine
      // expression of k.
      AffineExpr wordOf = bits == 8    ? kk.floorDiv(4)
                          : interleave ? kk.floorDiv(8)
                                       : kk.floorDiv(kInt4BlockWeights) * 4 +
                                             (kk % 16).floorDiv(4);
      auto rowMap = [&](AffineExpr inRow) {
        if (interleave)
          return map({nn.floorDiv(kInterleavedColumns), inRow,
                      nn % kInterleavedColumns});
        return map({nn, inRow});
      };
      SmallVector<Value> inputs = {op.getDpsInputs()[0], packed, scale};
      SmallVector<AffineMap> maps = {map({m, kk}), rowMap(wordOf),
                                     rowMap(kk.floorDiv(group))};
      if (int8Activations) {
        auto [quantized, rowScale] =
            quantizeActivations(b, loc, op.getDpsInputs()[0], group);
        inputs[0] = quantized;
        inputs.push_back(rowScale);
        maps.push_back(map({m, kk.floorDiv(group)}));
      }
      maps.push_back(map({m, nn}));
      auto product = linalg::GenericOp::create(
          b, loc, TypeRange{op.getResult(0).getType()}, inputs,
          ValueRange{op.getDpsInits()[0]}, maps,
          {utils::IteratorType::parallel, utils::IteratorType::parallel,
           utils::IteratorType::reduction},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            auto cst = [&](int64_t v) {
              return arith::ConstantOp::create(nb, l, nb.getI32IntegerAttr(v))
                  .getResult();
            };
            auto index = [&](int64_t v) {
              return arith::ConstantIndexOp::create(nb, l, v).getResult();
            };
            // The bit k's field starts at: 8 * (k mod 4), plus 4 in the
            // second half of an int4 block (of a word's 8 k, interleaved).
            Value k = linalg::IndexOp::create(nb, l, 2);
            Value start = arith::MulIOp::create(
                nb, l, index(8), arith::RemUIOp::create(nb, l, k, index(4)));
            int64_t span = interleave ? 8 : kInt4BlockWeights;
            if (bits == 4)
              start = arith::AddIOp::create(
                  nb, l, start,
                  arith::MulIOp::create(
                      nb, l, index(4),
                      arith::DivUIOp::create(
                          nb, l, arith::RemUIOp::create(nb, l, k, index(span)),
                          index(span / 2))));
            // The field, moved to the top of the word and shifted back
            // arithmetically (sign extension).
            Value up = arith::SubIOp::create(
                nb, l, cst(32 - w),
                arith::IndexCastOp::create(nb, l, nb.getI32Type(), start));
            Value q = arith::ShRSIOp::create(
                nb, l, arith::ShLIOp::create(nb, l, args[1], up), cst(32 - w));
            Value weight = arith::SIToFPOp::create(nb, l, f32, q);
            Value product;
            if (int8Activations) {
              // The integer product (exact in f32) times both scales.
              Value x = arith::SIToFPOp::create(nb, l, f32, args[0]);
              product = arith::MulFOp::create(
                  nb, l, arith::MulFOp::create(nb, l, x, weight),
                  arith::MulFOp::create(nb, l, args[2], args[3]));
            } else {
              product = arith::MulFOp::create(
                  nb, l, args[0],
                  arith::MulFOp::create(nb, l, weight, args[2]));
            }
            Value sum = arith::AddFOp::create(nb, l, args.back(), product);
            linalg::YieldOp::create(nb, l, ValueRange{sum});
          });
      SmallVector<NamedAttribute> marks = {
          builder.getNamedAttr("bits", builder.getI64IntegerAttr(bits)),
          builder.getNamedAttr("group", builder.getI64IntegerAttr(group))};
      if (int8Activations)
        marks.push_back(
            builder.getNamedAttr("activations", builder.getI64IntegerAttr(8)));
      if (interleave)
        marks.push_back(params.back());
      product->setAttr("attn.woq_matmul", builder.getDictionaryAttr(marks));
      op.getResult(0).replaceAllUsesWith(product.getResult(0));
      op.erase();
      if (weight->use_empty())
        weight.erase();
    }

    // Checkpoint tensors that no binding reads any more.
    llvm::StringSet<> stillRead;
    module.walk([&](WeightOp weight) {
      for (StringRef source : sourcesOf(weight))
        stillRead.insert(source);
    });
    SmallVector<StringRef> dropped;
    for (const auto &source : sources)
      if (!stillRead.contains(source.getKey()))
        dropped.push_back(source.getKey());
    llvm::sort(dropped);
    SmallVector<Attribute> droppedAttrs;
    if (auto old = module->getAttrOfType<ArrayAttr>("attn.woq_replaced"))
      llvm::append_range(droppedAttrs, old.getValue());
    for (StringRef name : dropped)
      droppedAttrs.push_back(builder.getStringAttr(name));
    derived.save();
    module->setAttr("attn.woq_replaced", ArrayAttr::get(ctx, droppedAttrs));
  }
};

} // namespace
