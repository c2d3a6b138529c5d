//===- Reduction.cpp - ONNX reductions and norms --------------------------===//
//
// Softmax and LayerNormalization as attn.softmax / attn.layer_norm (the
// primitives raising builds on), ReduceMean as linalg.reduce and a
// division by the count.
//
//===----------------------------------------------------------------------===//

#include "../Importer.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <charconv>

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

/// A norm's "epsilon" attribute. The attribute is a float; its shortest
/// decimal form (1e-05, not 9.99999974e-06) is what the exporter meant.
static double epsilonAttr(const onnx::NodeProto &node) {
  char epsText[32] = {};
  std::to_chars(epsText, epsText + sizeof(epsText) - 1,
                getFloatAttr(node, "epsilon", 1e-5f));
  return std::strtod(epsText, nullptr);
}

/// The identity of max (`isMax`) or min over `elem`: -inf or +inf for
/// floats, the least or greatest signed integer.
static TypedAttr extremumIdentity(OpBuilder &b, Type elem, bool isMax) {
  if (auto f = dyn_cast<FloatType>(elem))
    return b.getFloatAttr(
        elem, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/isMax));
  unsigned width = elem.getIntOrFloatBitWidth();
  return b.getIntegerAttr(elem, isMax ? APInt::getSignedMinValue(width)
                                      : APInt::getSignedMaxValue(width));
}

Expected<Value> Importer::importSoftmax(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  auto axis = axisAttr("axis", opset >= 13 ? -1 : 1, rank);
  if (!axis)
    return axis.takeError();
  // Before opset 13 Softmax flattened [axis, rank) into one row.
  if (opset < 13 && *axis != rank - 1)
    return fail("axis " + Twine(*axis) +
                " before opset 13 normalizes over the flattened trailing "
                "dimensions, which is not supported (only the last axis)");
  if (!isa<FloatType>(type.getElementType()))
    return fail("expects a float tensor");
  return attn::SoftmaxOp::create(b, loc, x, *axis);
}

Expected<Value> Importer::normalizedScale(Value x, Value scale) {
  // The statistics are computed in float32 (attn.layer_norm,
  // attn.rms_norm); a stash type other than float would ask for another
  // precision.
  if (int64_t stash = getIntAttr(*current, "stash_type", 1);
      stash != onnx::TensorProto::FLOAT)
    return fail("stash_type " + Twine(stash) + " (" +
                dataTypeName(static_cast<int32_t>(stash)) +
                ") is not supported (only 1, float)");
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  auto axis = axisAttr("axis", -1, rank);
  if (!axis)
    return axis.takeError();
  if (*axis != rank - 1)
    return fail("normalization over dimensions " + Twine(*axis) + ".." +
                Twine(rank - 1) + " is not supported (only the last axis)");
  int64_t d = type.getDimSize(rank - 1);
  if (ShapedType::isDynamic(d))
    return failSymbolic("the normalized dimension is symbolic");
  if (!typeOf(scale).hasStaticShape() || typeOf(scale).getNumElements() != d)
    return fail("scale must have " + Twine(d) + " elements");
  return reshapeTo(scale, {d});
}

Expected<Value> Importer::importLayerNorm(StringRef op, ArrayRef<Value> in) {
  for (int i = 1; i < current->output_size(); ++i)
    if (!current->output(i).empty())
      return fail("the Mean and InvStdDev outputs are not supported");
  Value x = in[0];
  auto gamma = normalizedScale(x, in[1]);
  if (!gamma)
    return gamma.takeError();
  int64_t d = typeOf(*gamma).getDimSize(0);
  auto type = typeOf(x);
  Type elem = type.getElementType();
  Value beta;
  if (hasInput(2)) {
    auto bias = input(2);
    if (!bias)
      return bias.takeError();
    if (!typeOf(*bias).hasStaticShape() || typeOf(*bias).getNumElements() != d)
      return fail("bias must have " + Twine(d) + " elements");
    beta = reshapeTo(*bias, {d});
  } else {
    beta = splat({d}, elem, 0.0);
  }
  double eps = epsilonAttr(*current);
  return attn::LayerNormOp::create(b, loc, type, x, *gamma, beta,
                                   b.getF64FloatAttr(eps));
}

Expected<Value> Importer::importReduceMean(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type elem = type.getElementType();
  if (!isa<FloatType>(elem))
    return fail("expects a float tensor");
  // ReduceMean takes its axes from an optional input since opset 18.
  bool noop;
  auto axesOr = reduceAxes(/*fromInput=*/opset >= 18, rank, noop);
  if (!axesOr)
    return axesOr.takeError();
  if (noop)
    return x;
  std::vector<int64_t> axes = std::move(*axesOr);
  bool keepDims = getIntAttr(*current, "keepdims", 1) != 0;
  SmallVector<int64_t> dims = dimsOf(x), reduced, kept;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      count = *syms.mul(count, dims[d]);
      kept.push_back(1);
    } else {
      reduced.push_back(dims[d]);
      kept.push_back(dims[d]);
    }
  }
  Value init = zeros(reduced, elem);
  Value sum = linalg::ReduceOp::create(
                  b, loc, ValueRange{x}, ValueRange{init}, axes,
                  [](OpBuilder &nb, Location nl, ValueRange args) {
                    Value s = arith::AddFOp::create(nb, nl, args[0], args[1]);
                    linalg::YieldOp::create(nb, nl, s);
                  })
                  .getResult(0);
  // A mean over a symbolic extent divides by its run-time size.
  Value divisor =
      isSymbolic(count)
          ? fill(reduced, arith::SIToFPOp::create(
                              b, loc, elem,
                              arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                                         indexValue(count))))
          : splat(reduced, elem, double(count));
  Value mean = linalg::DivOp::create(b, loc, ValueRange{sum, divisor},
                                     ValueRange{empty(reduced, elem)})
                   .getResult(0);
  return keepDims ? reshapeTo(mean, kept) : mean;
}

Expected<std::vector<int64_t>> Importer::reduceAxes(bool fromInput,
                                                    int64_t rank, bool &noop) {
  noop = false;
  auto axesOr = axesArgument(fromInput, /*required=*/false);
  if (!axesOr)
    return axesOr.takeError();
  std::vector<int64_t> axes = std::move(*axesOr);
  if (axes.empty()) {
    if (fromInput && getIntAttr(*current, "noop_with_empty_axes", 0)) {
      noop = true;
      return axes;
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (Error err = normalizeAxes(axes, rank, /*mergeRepeats=*/true))
    return std::move(err);
  return axes;
}

Expected<Value> Importer::importReduceSumMax(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type elem = type.getElementType();
  bool isMax = op == "ReduceMax";
  if (elem.isInteger(1) && !isMax)
    return fail("expects a numeric tensor");
  // ReduceSum takes its axes from an input since opset 13, ReduceMax since
  // opset 18.
  bool noop;
  auto axes = reduceAxes(isMax ? opset >= 18 : true, rank, noop);
  if (!axes)
    return axes.takeError();
  if (noop)
    return x;
  bool keepDims = getIntAttr(*current, "keepdims", 1) != 0;
  SmallVector<int64_t> dims = dimsOf(x), reduced, kept;
  for (int64_t d = 0; d < rank; ++d) {
    bool listed = llvm::is_contained(*axes, d);
    if (listed && dims[d] == 0)
      return fail("reduces over an empty dimension");
    if (!listed)
      reduced.push_back(dims[d]);
    kept.push_back(listed ? 1 : dims[d]);
  }
  TypedAttr identity = !isMax              ? b.getZeroAttr(elem)
                       : elem.isInteger(1) ? b.getBoolAttr(false)
                                           : extremumIdentity(b, elem, true);
  Value init = fill(reduced, arith::ConstantOp::create(b, loc, identity));
  Value r =
      linalg::ReduceOp::create(
          b, loc, ValueRange{x}, ValueRange{init}, *axes,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            // Max over booleans is any.
            Value v =
                isMax && elem.isInteger(1)
                    ? arith::OrIOp::create(nb, nl, args[0], args[1]).getResult()
                    : combine(nb, nl, isMax ? "max" : "add", args[0], args[1]);
            linalg::YieldOp::create(nb, nl, v);
          })
          .getResult(0);
  record(r, reduced);
  return keepDims ? reshapeTo(r, kept) : r;
}

Expected<Value> Importer::importCumSum(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type elem = type.getElementType();
  if (elem.isInteger(1))
    return fail("expects a numeric tensor");
  auto axisOr = constantInts(1, "axis");
  if (!axisOr)
    return axisOr.takeError();
  if (axisOr->size() != 1)
    return fail("axis must be a scalar");
  int64_t axis = (*axisOr)[0];
  if (Error err = normalizeAxis(axis, rank))
    return std::move(err);
  bool exclusive = getIntAttr(*current, "exclusive", 0) != 0;
  bool reverse = getIntAttr(*current, "reverse", 0) != 0;
  // y[.., i, ..] sums x[.., j, ..] over the j the flags select: a reduction
  // over an extra loop j (quadratic in the axis extent, which is what masks
  // and position ids scan).
  SmallVector<int64_t> dims = dimsOf(x);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> inExprs, outExprs;
  for (int64_t d = 0; d < rank; ++d) {
    inExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, inExprs, ctx),
                              AffineMap::get(rank + 1, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value init = zeros(dims, elem);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
             maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value i = linalg::IndexOp::create(nb, nl, axis);
               Value j = linalg::IndexOp::create(nb, nl, rank);
               arith::CmpIPredicate pred =
                   reverse ? (exclusive ? arith::CmpIPredicate::sgt
                                        : arith::CmpIPredicate::sge)
                           : (exclusive ? arith::CmpIPredicate::slt
                                        : arith::CmpIPredicate::sle);
               Value take = arith::CmpIOp::create(nb, nl, pred, j, i);
               Value zero = scalarConst(nb, nl, elem, 0);
               Value v = arith::SelectOp::create(nb, nl, take, args[0], zero);
               linalg::YieldOp::create(nb, nl,
                                       combine(nb, nl, "add", args[1], v));
             })
      .getResult(0);
}

Expected<Value> Importer::importArgMaxMin(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type elem = type.getElementType();
  bool isMax = op == "ArgMax", isFloat = isa<FloatType>(elem);
  if (rank == 0 || elem.isInteger(1) || !elem.isIntOrFloat())
    return fail("expects a numeric tensor of rank >= 1");
  int64_t axis = getIntAttr(*current, "axis", 0);
  if (Error err = normalizeAxis(axis, rank))
    return std::move(err);
  bool keepDims = getIntAttr(*current, "keepdims", 1) != 0;
  bool last = getIntAttr(*current, "select_last_index", 0) != 0;
  SmallVector<int64_t> dims = dimsOf(x), reduced, kept(dims);
  if (dims[axis] == 0)
    return fail("reduces over an empty dimension");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      reduced.push_back(dims[d]);
  kept[axis] = 1;
  // Two reductions, each of one result as the tilers expect: the extreme
  // value, then the first (or last) index that holds it.
  TypedAttr identity = extremumIdentity(b, elem, isMax);
  Value extreme =
      linalg::ReduceOp::create(
          b, loc, ValueRange{x},
          ValueRange{
              fill(reduced, arith::ConstantOp::create(b, loc, identity))},
          SmallVector<int64_t>{axis},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                combine(nb, nl, isMax ? "max" : "min", args[0], args[1]));
          })
          .getResult(0);
  record(extreme, reduced);
  Type i64 = b.getI64Type();
  int64_t none = last ? -1 : std::numeric_limits<int64_t>::max();
  Value init = fill(
      reduced, arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, none)));
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> reducedExprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      reducedExprs.push_back(getAffineDimExpr(d, ctx));
  AffineMap reducedMap = AffineMap::get(rank, 0, reducedExprs, ctx);
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx),
                              reducedMap, reducedMap};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters[axis] = utils::IteratorType::reduction;
  Value index =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{x, extreme},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value hit =
                isFloat
                    ? arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            args[0], args[1])
                          .getResult()
                    : arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            args[0], args[1])
                          .getResult();
            Value i = arith::IndexCastOp::create(
                nb, nl, i64, linalg::IndexOp::create(nb, nl, axis));
            Value noIndex =
                arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(i64, none));
            Value pick = arith::SelectOp::create(nb, nl, hit, i, noIndex);
            linalg::YieldOp::create(
                nb, nl, combine(nb, nl, last ? "max" : "min", args[2], pick));
          })
          .getResult(0);
  record(index, reduced);
  return keepDims ? reshapeTo(index, kept) : index;
}

Expected<Value> Importer::importRmsNorm(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto gamma = normalizedScale(x, in[1]);
  if (!gamma)
    return gamma.takeError();
  double eps = epsilonAttr(*current);
  return attn::RmsNormOp::create(b, loc, typeOf(x), x, *gamma,
                                 b.getF64FloatAttr(eps))
      .getResult();
}

Error Importer::importSkipNorm() {
  // output = norm(input + skip [+ bias]); the statistics outputs (1, 2) are
  // not computed, the sum (3) is.
  StringRef op = current->op_type();
  bool simplified = op == "SkipSimplifiedLayerNormalization";
  for (int i = 1; i < std::min(current->output_size(), 3); ++i)
    if (!current->output(i).empty())
      return fail("the mean and inv_std_var outputs are not supported");
  SmallVector<Value> ins;
  for (size_t i : {size_t(0), size_t(1), size_t(2)}) {
    auto v = input(i);
    if (!v)
      return v.takeError();
    ins.push_back(*v);
  }
  size_t biasInput = simplified ? 3 : 4;
  Value x = ins[0], gamma = ins[2];
  auto type = typeOf(x);
  if (!isa<FloatType>(type.getElementType()) || type.getRank() < 1)
    return fail("expects a float input");
  int64_t d = type.getDimSize(type.getRank() - 1);
  if (ShapedType::isDynamic(d))
    return failSymbolic("the normalized dimension is symbolic");
  auto vector = [&](Value v, StringRef what) -> Expected<Value> {
    if (!typeOf(v).hasStaticShape() || typeOf(v).getNumElements() != d)
      return fail(Twine(what) + " must have " + Twine(d) + " elements");
    return reshapeTo(v, {d});
  };
  auto sum = importElementwiseBinary("Add", {x, ins[1]});
  if (!sum)
    return sum.takeError();
  Value s = *sum;
  if (hasInput(biasInput)) {
    auto bias = input(biasInput);
    if (!bias)
      return bias.takeError();
    auto b1 = vector(*bias, "bias");
    if (!b1)
      return b1.takeError();
    auto withBias = importElementwiseBinary("Add", {s, *b1});
    if (!withBias)
      return withBias.takeError();
    s = *withBias;
  }
  if (dimsOf(s) != dimsOf(x))
    return fail("skip does not broadcast to the input's shape");
  auto g = vector(gamma, "gamma");
  if (!g)
    return g.takeError();
  double eps = epsilonAttr(*current);
  Value y;
  if (simplified) {
    y = attn::RmsNormOp::create(b, loc, typeOf(s), s, *g,
                                b.getF64FloatAttr(eps));
  } else {
    Value beta = splat({d}, type.getElementType(), 0.0);
    if (hasInput(3)) {
      auto bt = input(3);
      if (!bt)
        return bt.takeError();
      auto b1 = vector(*bt, "beta");
      if (!b1)
        return b1.takeError();
      beta = *b1;
    }
    y = attn::LayerNormOp::create(b, loc, typeOf(s), s, *g, beta,
                                  b.getF64FloatAttr(eps));
  }
  setOutput(0, y);
  setOutput(3, s);
  return Error::success();
}

void attnc::onnx_frontend::registerReductionOps(OpRegistry &r) {
  constexpr int kMin = kMinOpset, kMax = kLatestOpset;
  r.add("Softmax", kMin, kMax, "axis",
        valueImporter<&Importer::importSoftmax, 1>);
  r.add("LayerNormalization", kMin, kMax, "axis epsilon stash_type",
        valueImporter<&Importer::importLayerNorm, 2>);
  // ReduceMean-18 takes its axes from an input.
  r.add("ReduceMean", kMin, 17, "axes keepdims",
        valueImporter<&Importer::importReduceMean, 1>);
  r.add("ReduceMean", 18, kMax, "keepdims noop_with_empty_axes",
        valueImporter<&Importer::importReduceMean, 1>);
  for (StringRef op : {"ReduceSum"})
    r.add(op, kMin, kMax, "keepdims noop_with_empty_axes",
          valueImporter<&Importer::importReduceSumMax, 1>);
  // ReduceMax-18 takes its axes from an input (ReduceMax-20 adds bool).
  r.add("ReduceMax", kMin, 17, "axes keepdims",
        valueImporter<&Importer::importReduceSumMax, 1>);
  r.add("ReduceMax", 18, kMax, "keepdims noop_with_empty_axes",
        valueImporter<&Importer::importReduceSumMax, 1>);
  // select_last_index since opset 12.
  for (StringRef op : {"ArgMax", "ArgMin"})
    r.add(op, kMin, kMax, "axis keepdims select_last_index",
          valueImporter<&Importer::importArgMaxMin, 1>);
  r.add("CumSum", kMin, kMax, "exclusive reverse",
        valueImporter<&Importer::importCumSum, 1>);
  r.add("RMSNormalization", 23, kMax, "axis epsilon stash_type",
        valueImporter<&Importer::importRmsNorm, 2>);
  // ONNX Runtime's fused norms (its optimizer's output): the RMS norm in
  // the default domain and com.microsoft, the skip norms in com.microsoft.
  r.add("SimplifiedLayerNormalization", 1, kMax, "axis epsilon stash_type",
        valueImporter<&Importer::importRmsNorm, 2>);
  r.add(microsoftOp("SimplifiedLayerNormalization"), 1, 1,
        "axis epsilon stash_type", valueImporter<&Importer::importRmsNorm, 2>);
  for (StringRef op :
       {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"})
    r.add(microsoftOp(op), 1, 1, "epsilon",
          plainImporter<&Importer::importSkipNorm>);
}
