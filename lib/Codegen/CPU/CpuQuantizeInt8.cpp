//===- CpuQuantizeInt8.cpp - dynamic int8 projections for the CPU ---------===//
//
// A projection x W^T with a constant weight becomes a u8 x s8 -> i32
// contraction: the activation rows are quantized at run time (asymmetric
// u8, one scale and zero point per row: per token), the weight was
// quantized at compile time (symmetric s8, one scale per output column).
// u8 x s8 is what AVX-512 VNNI's vpdpbusd multiplies; the zero point is
// taken out afterwards with the column sums of the quantized weight:
//
//   sum_k (q[m,k] - z[m]) * Wq[n,k] = P[m,n] - z[m] * colsum[n]
//
// so that the inner loop is a plain u8 x s8 dot product. The weight is
// bound K-major as i32 words of 4 consecutive k bytes, [K/4, N] (a row of
// words is one vpdpbusd operand per 16 columns, against 4 bytes of an
// activation row broadcast), which the runtime binds like any other tensor.
//
// The pass cannot see weight values: it records which f32 bindings it
// replaced (module attribute `attn.int8_weights`), and attn-compile writes
// their quantized forms into the weights file, once, at compile time.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"

#include "DerivedWeights.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "Codegen/Common/MatmulMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUQUANTIZEINT8
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// An f32 weight projection (matchF32WeightProjection) whose weight is not
/// gathered, K a multiple of 4: the weight, else null.
static WeightOp matchProjection(linalg::GenericOp op) {
  WeightOp weight = matchF32WeightProjection(op);
  if (!weight || weight.getGatherRanges() ||
      weight.getResult().getType().getDimSize(1) % 4 != 0)
    return {};
  return weight;
}

/// The elementwise consumer of the product that the dequantization merges
/// into: an all-parallel 2-D generic that reads it at (m, n) and only
/// there, its other inputs at (m, n), (m) or (n).
static linalg::GenericOp findConsumer(linalg::GenericOp op) {
  Value product = op.getResult(0);
  if (!product.hasOneUse())
    return {};
  auto next = dyn_cast<linalg::GenericOp>(*product.getUsers().begin());
  if (!next || !next.hasPureTensorSemantics() || next.getNumResults() != 1 ||
      countRowColumnEpilogueReads(next, product) != 1)
    return {};
  return next;
}

struct Rewriter {
  OpBuilder &b;
  Location loc;

  Value cstF(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }

  /// An empty [rows..., extra...] tensor whose first size is A's rows.
  Value empty(Value a, ArrayRef<int64_t> trailing, Type elem) {
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, a, 0)};
    for (int64_t d : trailing)
      sizes.push_back(b.getIndexAttr(d));
    return tensor::EmptyOp::create(b, loc, sizes, elem);
  }

  Value fill(Value init, Value v) {
    return linalg::FillOp::create(b, loc, v, init).getResult(0);
  }
};

struct AttnCpuQuantizeInt8Pass
    : public mlir::attn::impl::AttnCpuQuantizeInt8Base<
          AttnCpuQuantizeInt8Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<std::pair<linalg::GenericOp, WeightOp>> matches;
    module.walk([&](linalg::GenericOp op) {
      if (WeightOp weight = matchProjection(op))
        matches.push_back({op, weight});
    });
    if (matches.empty())
      return;

    // Derived names, one per binding (name and how it is assembled): the
    // same tensor bound two ways would otherwise get one quantized form.
    DerivedWeights derived(module, "attn.int8_weights", ".int8");

    for (auto [op, weight] : matches) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Rewriter r{b, loc};
      Value a = op.getDpsInputs()[0];
      RankedTensorType wType = weight.getResult().getType();
      int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
      std::string name = derived.nameFor(weight);
      auto makeWeight = [&](StringRef tail, RankedTensorType type) {
        return DerivedWeights::create(b, loc, name + tail.str(), type);
      };
      Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
      Value qWeight = makeWeight("", RankedTensorType::get({k / 4, n}, i32));
      Value wScale = makeWeight("_scale", RankedTensorType::get({n}, f32));
      Value colSum = makeWeight("_colsum", RankedTensorType::get({n}, f32));

      AffineExpr d0, d1, d2, d3;
      bindDims(ctx, d0, d1, d2, d3);
      auto map2 = [&](ArrayRef<AffineExpr> results) {
        return AffineMap::get(2, 0, results, ctx);
      };
      auto parallel = utils::IteratorType::parallel;
      auto reduction = utils::IteratorType::reduction;
      Value rangeLo, rangeHi;

      // Row ranges, with 0 inside so that it is exact (zero padding). A
      // row of 16-element groups first keeps 16 running minima and maxima,
      // one per lane (independent chains the loops can vectorize), which a
      // second reduction folds; a plain row reduction is one serial chain.
      Value zero = r.cstF(0.0f);
      auto pickBody = [](OpBuilder &nb, Location l, ValueRange args) {
        // Compare and select, which x86 does in one vminss / vmaxss
        // (minnumf / minimumf would add NaN tests per element).
        auto pick = [&](arith::CmpFPredicate pred, Value acc) {
          Value take = arith::CmpFOp::create(nb, l, pred, args[0], acc);
          return arith::SelectOp::create(nb, l, take, args[0], acc).getResult();
        };
        linalg::YieldOp::create(
            nb, l,
            ValueRange{pick(arith::CmpFPredicate::OLT, args[1]),
                       pick(arith::CmpFPredicate::OGT, args[2])});
      };
      Value rangeInput = a;
      AffineMap rangeInputMap = map2({d0, d1});
      if (k % 16 == 0 && k > 16) {
        auto aType = cast<RankedTensorType>(a.getType());
        Value lanes = tensor::ExpandShapeOp::create(
            b, loc,
            RankedTensorType::get({aType.getDimSize(0), k / 16, 16}, f32), a,
            SmallVector<ReassociationIndices>{{0}, {1, 2}},
            SmallVector<OpFoldResult>{tensor::getMixedSize(b, loc, a, 0),
                                      b.getIndexAttr(k / 16),
                                      b.getIndexAttr(16)});
        auto map3 = [&](ArrayRef<AffineExpr> results) {
          return AffineMap::get(3, 0, results, ctx);
        };
        Value lo16 = r.fill(r.empty(a, {16}, f32), zero);
        Value hi16 = r.fill(r.empty(a, {16}, f32), zero);
        auto partial = linalg::GenericOp::create(
            b, loc, TypeRange{lo16.getType(), hi16.getType()},
            ValueRange{lanes}, ValueRange{lo16, hi16},
            {map3({d0, d1, d2}), map3({d0, d2}), map3({d0, d2})},
            {parallel, reduction, parallel}, pickBody);
        // The minima and maxima come in pairs: fold each output by itself.
        Value lo = r.fill(r.empty(a, {}, f32), zero);
        Value hi = r.fill(r.empty(a, {}, f32), zero);
        auto fold = [&](Value in, Value init, arith::CmpFPredicate pred) {
          return linalg::GenericOp::create(
                     b, loc, TypeRange{init.getType()}, ValueRange{in},
                     ValueRange{init}, {map2({d0, d1}), map2({d0})},
                     {parallel, reduction},
                     [pred](OpBuilder &nb, Location l, ValueRange args) {
                       Value take =
                           arith::CmpFOp::create(nb, l, pred, args[0], args[1]);
                       linalg::YieldOp::create(
                           nb, l,
                           ValueRange{arith::SelectOp::create(
                               nb, l, take, args[0], args[1])});
                     })
              .getResult(0);
        };
        rangeLo = fold(partial.getResult(0), lo, arith::CmpFPredicate::OLT);
        rangeHi = fold(partial.getResult(1), hi, arith::CmpFPredicate::OGT);
      } else {
        Value lo = r.fill(r.empty(a, {}, f32), zero);
        Value hi = r.fill(r.empty(a, {}, f32), zero);
        auto range = linalg::GenericOp::create(
            b, loc, TypeRange{lo.getType(), hi.getType()},
            ValueRange{rangeInput}, ValueRange{lo, hi},
            {rangeInputMap, map2({d0}), map2({d0})}, {parallel, reduction},
            pickBody);
        rangeLo = range.getResult(0);
        rangeHi = range.getResult(1);
      }
      // Scale and zero point per row.
      auto map1 = AffineMap::get(1, 0, {d0}, ctx);
      Value rowInit = r.empty(a, {}, f32);
      auto params = linalg::GenericOp::create(
          b, loc, TypeRange{rowInit.getType(), rowInit.getType()},
          ValueRange{rangeLo, rangeHi}, ValueRange{rowInit, rowInit},
          {map1, map1, map1, map1}, {parallel},
          [](OpBuilder &nb, Location l, ValueRange args) {
            auto cst = [&](float v) {
              return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v));
            };
            Value s = arith::DivFOp::create(
                nb, l, arith::SubFOp::create(nb, l, args[1], args[0]),
                cst(255.0f));
            Value isZero = arith::CmpFOp::create(
                nb, l, arith::CmpFPredicate::OEQ, s, cst(0.0f));
            s = arith::SelectOp::create(nb, l, isZero, cst(1.0f), s);
            Value z = math::RoundEvenOp::create(
                nb, l,
                arith::DivFOp::create(
                    nb, l, arith::NegFOp::create(nb, l, args[0]), s));
            linalg::YieldOp::create(nb, l, ValueRange{s, z});
          });
      Value rowScale = params.getResult(0), rowZero = params.getResult(1);
      // u8 rows (held in i8).
      auto quantize = linalg::GenericOp::create(
          b, loc,
          TypeRange{RankedTensorType::get(
              cast<RankedTensorType>(a.getType()).getShape(), i8)},
          ValueRange{a, rowScale, rowZero}, ValueRange{r.empty(a, {k}, i8)},
          {map2({d0, d1}), map2({d0}), map2({d0}), map2({d0, d1})},
          {parallel, parallel}, [](OpBuilder &nb, Location l, ValueRange args) {
            auto cst = [&](float v) {
              return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v));
            };
            Value q = arith::AddFOp::create(
                nb, l,
                math::RoundEvenOp::create(
                    nb, l, arith::DivFOp::create(nb, l, args[0], args[1])),
                args[2]);
            q = arith::MinNumFOp::create(
                nb, l, arith::MaxNumFOp::create(nb, l, q, cst(0.0f)),
                cst(255.0f));
            Value word = arith::FPToUIOp::create(nb, l, nb.getI32Type(), q);
            linalg::YieldOp::create(nb, l,
                                    ValueRange{arith::TruncIOp::create(
                                        nb, l, nb.getI8Type(), word)});
          });
      // [M, K] -> [M, K/4, 4]: the contraction reads byte j of word kq.
      auto aType = cast<RankedTensorType>(a.getType());
      auto groupedType =
          RankedTensorType::get({aType.getDimSize(0), k / 4, 4}, i8);
      SmallVector<OpFoldResult> groupedShape = {
          tensor::getMixedSize(b, loc, a, 0), b.getIndexAttr(k / 4),
          b.getIndexAttr(4)};
      Value grouped = tensor::ExpandShapeOp::create(
          b, loc, groupedType, quantize.getResult(0),
          SmallVector<ReassociationIndices>{{0}, {1, 2}}, groupedShape);
      Value acc =
          r.fill(r.empty(a, {n}, i32),
                 arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)));
      auto map4 = [&](ArrayRef<AffineExpr> results) {
        return AffineMap::get(4, 0, results, ctx);
      };
      auto product = linalg::GenericOp::create(
          b, loc, TypeRange{acc.getType()}, ValueRange{grouped, qWeight},
          ValueRange{acc}, {map4({d0, d2, d3}), map4({d2, d1}), map4({d0, d1})},
          {parallel, parallel, reduction, reduction},
          [](OpBuilder &nb, Location l, ValueRange args) {
            Type i32 = nb.getI32Type();
            // Byte j of the little-endian word, sign-extended.
            Value j = linalg::IndexOp::create(nb, l, 3);
            Value shift = arith::MulIOp::create(
                nb, l, arith::IndexCastOp::create(nb, l, i32, j),
                arith::ConstantOp::create(nb, l, nb.getI32IntegerAttr(8)));
            Value w = arith::TruncIOp::create(
                nb, l, nb.getI8Type(),
                arith::ShRSIOp::create(nb, l, args[1], shift));
            Value prod = arith::MulIOp::create(
                nb, l, arith::ExtUIOp::create(nb, l, i32, args[0]),
                arith::ExtSIOp::create(nb, l, i32, w));
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::AddIOp::create(nb, l, args[2], prod)});
          });
      product->setAttr("attn.int8_matmul", UnitAttr::get(ctx));

      // (P - z * colsum) * (s * scale), then what the consumer did with the
      // f32 product.
      linalg::GenericOp consumer = findConsumer(op);
      SmallVector<Value> inputs = {product.getResult(0), rowScale, rowZero,
                                   wScale, colSum};
      SmallVector<AffineMap> maps = {map2({d0, d1}), map2({d0}), map2({d0}),
                                     map2({d1}), map2({d1})};
      SmallVector<OpOperand *> kept;
      Value init;
      if (consumer) {
        b.setInsertionPoint(consumer);
        for (OpOperand *input : consumer.getDpsInputOperands())
          if (input->get() != op.getResult(0)) {
            kept.push_back(input);
            inputs.push_back(input->get());
            maps.push_back(consumer.getMatchingIndexingMap(input));
          }
        init = consumer.getDpsInits()[0];
      } else {
        init = r.empty(a, {n}, f32);
      }
      maps.push_back(map2({d0, d1}));
      auto dequantize = linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
          {parallel, parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value p = arith::SIToFPOp::create(nb, l, nb.getF32Type(), args[0]);
            p = arith::SubFOp::create(
                nb, l, p, arith::MulFOp::create(nb, l, args[2], args[4]));
            Value v = arith::MulFOp::create(
                nb, l, p, arith::MulFOp::create(nb, l, args[1], args[3]));
            if (!consumer) {
              linalg::YieldOp::create(nb, l, ValueRange{v});
              return;
            }
            Block &body = consumer.getRegion().front();
            IRMapping mapping;
            unsigned next = 5;
            for (OpOperand *input : consumer.getDpsInputOperands()) {
              BlockArgument arg = body.getArgument(input->getOperandNumber());
              mapping.map(arg,
                          input->get() == op.getResult(0) ? v : args[next++]);
            }
            mapping.map(body.getArgument(consumer.getNumDpsInputs()),
                        args.back());
            for (Operation &inner : body)
              nb.clone(inner, mapping);
          });
      if (consumer) {
        consumer.getResult(0).replaceAllUsesWith(dequantize.getResult(0));
        consumer.erase();
      } else {
        op.getResult(0).replaceAllUsesWith(dequantize.getResult(0));
      }
      op.erase();
      if (weight->use_empty())
        weight.erase();
    }
    derived.save();
  }
};

} // namespace
