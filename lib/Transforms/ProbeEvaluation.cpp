//===- ProbeEvaluation.cpp - evaluate size-only values at chosen sizes ----===//

#include "ProbeEvaluation.h"

#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

/// No evaluated tensor may hold more elements (a mask at a few thousand
/// positions fits; anything larger is not a probe).
static constexpr int64_t kMaxElements = int64_t(1) << 23;

int64_t ProbeValue::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static ProbeValue makeValue(Type type, ArrayRef<int64_t> shape, bool isTensor) {
  ProbeValue v;
  v.shape.assign(shape.begin(), shape.end());
  v.isTensor = isTensor;
  v.isFloat = isa<FloatType>(getElementTypeOrSelf(type));
  int64_t n = v.numElements();
  if (v.isFloat)
    v.floats.assign(n, 0.0);
  else
    v.ints.assign(n, 0);
  return v;
}

/// `x` rounded to the float type `type`.
static double roundTo(Type type, double x) {
  auto ft = cast<FloatType>(type);
  if (ft.isF64())
    return x;
  if (ft.isF32())
    return static_cast<float>(x);
  llvm::APFloat f(x);
  bool lost;
  f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

/// `x` wrapped to the integer type `type` (i1 as 0/1, others signed).
static int64_t wrapTo(Type type, int64_t x) {
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  if (width == 1)
    return x & 1;
  if (width >= 64)
    return x;
  return llvm::SignExtend64(static_cast<uint64_t>(x), width);
}

namespace {
/// One element: the int or the float, as the type says.
struct Scalar {
  int64_t i = 0;
  double f = 0.0;
};
} // namespace

static unsigned widthOf(Type t) {
  return t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
}

/// Evaluates an arith/math op on scalars; failure for an op it does not
/// know.
static FailureOr<Scalar>
evaluateScalarOp(Operation *op, ArrayRef<Scalar> in,
                 const llvm::DenseMap<int64_t, int64_t> &intOverrides) {
  Type type = op->getResult(0).getType();
  Scalar r;
  auto flt = [&](double x) {
    r.f = roundTo(type, x);
    return r;
  };
  auto integer = [&](int64_t x) {
    r.i = wrapTo(type, x);
    return r;
  };
  auto operandType = [&](unsigned i) { return op->getOperand(i).getType(); };
  return llvm::TypeSwitch<Operation *, FailureOr<Scalar>>(op)
      .Case([&](arith::ConstantOp c) -> FailureOr<Scalar> {
        if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
          int64_t x = i.getValue().getSExtValue();
          if (!i.getType().isInteger(1))
            if (auto it = intOverrides.find(x); it != intOverrides.end())
              x = it->second;
          return integer(x);
        }
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          return flt(f.getValueAsDouble());
        return failure();
      })
      .Case([&](arith::AddIOp) { return integer(in[0].i + in[1].i); })
      .Case([&](arith::SubIOp) { return integer(in[0].i - in[1].i); })
      .Case([&](arith::MulIOp) { return integer(in[0].i * in[1].i); })
      .Case([&](arith::DivSIOp) -> FailureOr<Scalar> {
        if (in[1].i == 0)
          return failure();
        return integer(in[0].i / in[1].i);
      })
      .Case([&](arith::RemSIOp) -> FailureOr<Scalar> {
        if (in[1].i == 0)
          return failure();
        return integer(in[0].i % in[1].i);
      })
      .Case([&](arith::FloorDivSIOp) -> FailureOr<Scalar> {
        if (in[1].i == 0)
          return failure();
        int64_t q = in[0].i / in[1].i;
        if ((in[0].i % in[1].i != 0) && ((in[0].i < 0) != (in[1].i < 0)))
          --q;
        return integer(q);
      })
      .Case([&](arith::MaxSIOp) { return integer(std::max(in[0].i, in[1].i)); })
      .Case([&](arith::MinSIOp) { return integer(std::min(in[0].i, in[1].i)); })
      .Case([&](arith::AndIOp) { return integer(in[0].i & in[1].i); })
      .Case([&](arith::OrIOp) { return integer(in[0].i | in[1].i); })
      .Case([&](arith::XOrIOp) { return integer(in[0].i ^ in[1].i); })
      .Case([&](arith::CmpIOp c) {
        // The scalars hold sign-extended values of the operand's width.
        unsigned w = widthOf(operandType(0));
        APInt a(w, static_cast<uint64_t>(in[0].i), /*isSigned=*/true,
                /*implicitTrunc=*/true),
            b(w, static_cast<uint64_t>(in[1].i), /*isSigned=*/true,
              /*implicitTrunc=*/true);
        return integer(arith::applyCmpPredicate(c.getPredicate(), a, b));
      })
      .Case([&](arith::CmpFOp c) {
        return integer(arith::applyCmpPredicate(
            c.getPredicate(), APFloat(in[0].f), APFloat(in[1].f)));
      })
      .Case([&](arith::SelectOp) -> FailureOr<Scalar> {
        return in[0].i ? in[1] : in[2];
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
          [&](Operation *) {
            int64_t x = in[0].i;
            // i1 true is -1 when sign-extended.
            if (widthOf(operandType(0)) == 1 && isa<arith::ExtSIOp>(op))
              x = -x;
            return integer(x);
          })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](Operation *) {
        unsigned w = widthOf(operandType(0));
        uint64_t mask = w >= 64 ? ~uint64_t(0) : ((uint64_t(1) << w) - 1);
        return integer(
            static_cast<int64_t>(static_cast<uint64_t>(in[0].i) & mask));
      })
      .Case([&](arith::SIToFPOp) { return flt(static_cast<double>(in[0].i)); })
      .Case([&](arith::UIToFPOp) {
        return flt(static_cast<double>(static_cast<uint64_t>(in[0].i)));
      })
      .Case([&](arith::FPToSIOp) -> FailureOr<Scalar> {
        if (!std::isfinite(in[0].f) || std::abs(in[0].f) > 9.2e18)
          return failure();
        return integer(static_cast<int64_t>(in[0].f));
      })
      .Case<arith::ExtFOp, arith::TruncFOp>(
          [&](Operation *) { return flt(in[0].f); })
      .Case([&](arith::AddFOp) { return flt(in[0].f + in[1].f); })
      .Case([&](arith::SubFOp) { return flt(in[0].f - in[1].f); })
      .Case([&](arith::MulFOp) { return flt(in[0].f * in[1].f); })
      .Case([&](arith::DivFOp) { return flt(in[0].f / in[1].f); })
      .Case([&](arith::NegFOp) { return flt(-in[0].f); })
      .Case([&](arith::MaximumFOp) {
        return flt(std::isnan(in[0].f) || std::isnan(in[1].f)
                       ? NAN
                       : std::max(in[0].f, in[1].f));
      })
      .Case([&](arith::MinimumFOp) {
        return flt(std::isnan(in[0].f) || std::isnan(in[1].f)
                       ? NAN
                       : std::min(in[0].f, in[1].f));
      })
      .Case([&](arith::MaxNumFOp) { return flt(std::fmax(in[0].f, in[1].f)); })
      .Case([&](arith::MinNumFOp) { return flt(std::fmin(in[0].f, in[1].f)); })
      .Case([&](math::CosOp) { return flt(std::cos(in[0].f)); })
      .Case([&](math::SinOp) { return flt(std::sin(in[0].f)); })
      .Case([&](math::ExpOp) { return flt(std::exp(in[0].f)); })
      .Case([&](math::LogOp) { return flt(std::log(in[0].f)); })
      .Case([&](math::SqrtOp) { return flt(std::sqrt(in[0].f)); })
      .Case([&](math::RsqrtOp) { return flt(1.0 / std::sqrt(in[0].f)); })
      .Case([&](math::PowFOp) { return flt(std::pow(in[0].f, in[1].f)); })
      .Case([&](math::AbsFOp) { return flt(std::abs(in[0].f)); })
      .Case([&](math::FloorOp) { return flt(std::floor(in[0].f)); })
      .Case([&](math::CeilOp) { return flt(std::ceil(in[0].f)); })
      .Case([&](math::TanhOp) { return flt(std::tanh(in[0].f)); })
      .Case([&](math::AbsIOp) { return integer(std::abs(in[0].i)); })
      .Default([](Operation *) { return failure(); });
}

static bool isScalarOp(Operation *op) {
  return op->getNumResults() == 1 &&
         isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
         !isa<ShapedType>(op->getResult(0).getType());
}

//===----------------------------------------------------------------------===//
// ProbeEvaluator
//===----------------------------------------------------------------------===//

LogicalResult ProbeEvaluator::fail(const Twine &why) {
  if (failureReason.empty())
    failureReason = why.str();
  return failure();
}

void ProbeEvaluator::setArgumentShape(BlockArgument arg,
                                      ArrayRef<int64_t> shape) {
  argShapes[arg] = SmallVector<int64_t>(shape);
}

void ProbeEvaluator::setArgumentData(BlockArgument arg,
                                     std::vector<int64_t> data) {
  argData[arg] = std::move(data);
}

LogicalResult
ProbeEvaluator::setShapesFromSymbols(const llvm::StringMap<int64_t> &sizes,
                                     std::optional<int64_t> otherSize) {
  auto func = dyn_cast<func::FuncOp>(entry->getParentOp());
  StringRef symbolsName = AttnDialect::DimSymbolsAttrHelper::getNameStr();
  for (BlockArgument arg : entry->getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    ArrayAttr symbols =
        func ? func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), symbolsName)
             : ArrayAttr();
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      auto symbol = symbols && static_cast<int64_t>(symbols.size()) > d
                        ? dyn_cast<StringAttr>(symbols[d])
                        : StringAttr();
      auto it = symbol ? sizes.find(symbol.getValue()) : sizes.end();
      if (it == sizes.end() && otherSize) {
        shape[d] = *otherSize;
        continue;
      }
      if (it == sizes.end()) {
        // Only an argument nothing reads needs no shape.
        if (!arg.use_empty())
          return fail("input " + Twine(arg.getArgNumber()) + " dimension " +
                      Twine(d) + " has no size to probe with");
        shape.clear();
        break;
      }
      shape[d] = it->second;
    }
    if (!shape.empty() || type.getRank() == 0)
      setArgumentShape(arg, shape);
  }
  return success();
}

FailureOr<int64_t> ProbeEvaluator::evaluateIndex(Value v) {
  FailureOr<ProbeValue> value = evaluate(v);
  if (failed(value))
    return failure();
  if (value->isTensor || value->isFloat)
    return fail("expected an integer scalar");
  return value->ints[0];
}

FailureOr<int64_t> ProbeEvaluator::evaluateDim(Value v, int64_t d) {
  auto type = cast<ShapedType>(v.getType());
  if (!type.isDynamicDim(d))
    return type.getDimSize(d);
  auto it = argShapes.find(v);
  if (it != argShapes.end())
    return it->second[d];
  FailureOr<ProbeValue> value = evaluate(v);
  if (failed(value))
    return failure();
  return value->shape[d];
}

FailureOr<ProbeValue> ProbeEvaluator::evaluate(Value v) {
  auto it = values.find(v);
  if (it != values.end())
    return it->second;
  FailureOr<ProbeValue> result;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto shape = argShapes.find(arg);
    auto data = argData.find(arg);
    if (arg.getOwner() != entry || shape == argShapes.end() ||
        data == argData.end()) {
      (void)fail("reads the data of input " + Twine(arg.getArgNumber()));
      return failure();
    }
    ProbeValue value = makeValue(arg.getType(), shape->second, true);
    if (value.isFloat ||
        static_cast<int64_t>(data->second.size()) != value.numElements()) {
      (void)fail("input data of the wrong size");
      return failure();
    }
    value.ints = data->second;
    result = std::move(value);
  } else {
    result = evaluateOp(v.getDefiningOp(), cast<OpResult>(v).getResultNumber());
  }
  if (failed(result))
    return failure();
  if (result->numElements() > kMaxElements) {
    (void)fail("a value of more than " + Twine(kMaxElements) + " elements");
    return failure();
  }
  values[v] = *result;
  return result;
}

/// The row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Calls `fn(index)` for every index of `shape`, row-major.
static void forEachIndex(ArrayRef<int64_t> shape,
                         function_ref<void(ArrayRef<int64_t>)> fn) {
  for (int64_t d : shape)
    if (d == 0)
      return;
  SmallVector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(index);
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

static Scalar elementOf(const ProbeValue &v, int64_t i) {
  Scalar s;
  if (v.isFloat)
    s.f = v.floats[i];
  else
    s.i = v.ints[i];
  return s;
}

static void setElement(ProbeValue &v, int64_t i, Scalar s) {
  if (v.isFloat)
    v.floats[i] = s.f;
  else
    v.ints[i] = s.i;
}

FailureOr<ProbeValue> ProbeEvaluator::evaluateOp(Operation *op,
                                                 unsigned resultNumber) {
  Value result = op->getResult(resultNumber);
  auto sizesOf =
      [&](ArrayRef<OpFoldResult> mixed) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> out;
    for (OpFoldResult ofr : mixed) {
      if (auto attr = dyn_cast<Attribute>(ofr)) {
        out.push_back(cast<IntegerAttr>(attr).getInt());
        continue;
      }
      FailureOr<int64_t> size = evaluateIndex(cast<Value>(ofr));
      if (failed(size))
        return failure();
      out.push_back(*size);
    }
    return out;
  };
  auto resultShape =
      [&](ValueRange dynamicSizes) -> FailureOr<SmallVector<int64_t>> {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> shape(type.getShape());
    unsigned next = 0;
    for (int64_t &d : shape)
      if (ShapedType::isDynamic(d)) {
        FailureOr<int64_t> size = evaluateIndex(dynamicSizes[next++]);
        if (failed(size))
          return failure();
        d = *size;
      }
    return shape;
  };

  if (isScalarOp(op)) {
    SmallVector<Scalar> in;
    for (Value operand : op->getOperands()) {
      FailureOr<ProbeValue> value = evaluate(operand);
      if (failed(value))
        return failure();
      if (value->isTensor)
        return fail("an arith op on tensors");
      in.push_back(elementOf(*value, 0));
    }
    FailureOr<Scalar> s = evaluateScalarOp(op, in, intOverrides);
    if (failed(s))
      return fail("op " + op->getName().getStringRef());
    ProbeValue value = makeValue(result.getType(), {}, false);
    setElement(value, 0, *s);
    return value;
  }

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense)
      return fail("a constant of an unknown kind");
    auto type = cast<ShapedType>(dense.getType());
    ProbeValue value = makeValue(type, type.getShape(), true);
    if (value.numElements() > kMaxElements)
      return fail("a large constant");
    if (value.isFloat) {
      int64_t i = 0;
      for (const APFloat &f : dense.getValues<APFloat>())
        value.floats[i++] = f.convertToDouble();
    } else {
      bool isBool = type.getElementType().isInteger(1);
      int64_t i = 0;
      for (const APInt &x : dense.getValues<APInt>()) {
        int64_t v = isBool ? x.getZExtValue() : x.getSExtValue();
        if (!isBool)
          if (auto it = intOverrides.find(v); it != intOverrides.end())
            v = it->second;
        value.ints[i++] = v;
      }
    }
    return value;
  }

  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!d)
      return fail("tensor.dim of a run-time dimension");
    FailureOr<int64_t> size = evaluateDim(dim.getSource(), *d);
    if (failed(size))
      return failure();
    ProbeValue value = makeValue(result.getType(), {}, false);
    value.ints[0] = *size;
    return value;
  }

  if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
    SmallVector<int64_t> operands;
    for (Value operand : apply.getMapOperands()) {
      FailureOr<int64_t> x = evaluateIndex(operand);
      if (failed(x))
        return failure();
      operands.push_back(*x);
    }
    SmallVector<int64_t> out = apply.getAffineMap().compose(operands);
    ProbeValue value = makeValue(result.getType(), {}, false);
    value.ints[0] = out[0];
    return value;
  }

  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    FailureOr<SmallVector<int64_t>> shape =
        resultShape(empty.getDynamicSizes());
    if (failed(shape))
      return failure();
    return makeValue(result.getType(), *shape, true);
  }

  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return evaluate(cast.getSource());

  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    FailureOr<ProbeValue> src = evaluate(expand.getSrc());
    if (failed(src))
      return failure();
    FailureOr<SmallVector<int64_t>> shape =
        sizesOf(expand.getMixedOutputShape());
    if (failed(shape))
      return failure();
    ProbeValue value = *src;
    value.shape = *shape;
    if (value.numElements() != src->numElements())
      return fail("an inconsistent expand_shape");
    return value;
  }

  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    FailureOr<ProbeValue> src = evaluate(collapse.getSrc());
    if (failed(src))
      return failure();
    ProbeValue value = *src;
    value.shape.clear();
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      int64_t n = 1;
      for (int64_t d : group)
        n *= src->shape[d];
      value.shape.push_back(n);
    }
    return value;
  }

  if (auto fromElements = dyn_cast<tensor::FromElementsOp>(op)) {
    auto type = fromElements.getType();
    ProbeValue value = makeValue(type, type.getShape(), true);
    for (auto [i, element] : llvm::enumerate(fromElements.getElements())) {
      FailureOr<ProbeValue> x = evaluate(element);
      if (failed(x))
        return failure();
      setElement(value, i, elementOf(*x, 0));
    }
    return value;
  }

  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    FailureOr<ProbeValue> src = evaluate(extract.getTensor());
    if (failed(src))
      return failure();
    SmallVector<int64_t> strides = stridesOf(src->shape);
    int64_t offset = 0;
    for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
      FailureOr<int64_t> i = evaluateIndex(index);
      if (failed(i))
        return failure();
      if (*i < 0 || *i >= src->shape[d])
        return fail("an extract out of bounds");
      offset += *i * strides[d];
    }
    ProbeValue value = makeValue(result.getType(), {}, false);
    setElement(value, 0, elementOf(*src, offset));
    return value;
  }

  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    SmallVector<ProbeValue> parts;
    for (Value input : concat.getInputs()) {
      FailureOr<ProbeValue> part = evaluate(input);
      if (failed(part))
        return failure();
      parts.push_back(std::move(*part));
    }
    int64_t axis = concat.getDim();
    SmallVector<int64_t> shape = parts[0].shape;
    shape[axis] = 0;
    for (const ProbeValue &part : parts)
      shape[axis] += part.shape[axis];
    ProbeValue value = makeValue(result.getType(), shape, true);
    SmallVector<int64_t> strides = stridesOf(shape);
    int64_t start = 0;
    for (const ProbeValue &part : parts) {
      int64_t i = 0;
      forEachIndex(part.shape, [&](ArrayRef<int64_t> index) {
        int64_t offset = 0;
        for (auto [d, x] : llvm::enumerate(index))
          offset +=
              (d == static_cast<size_t>(axis) ? x + start : x) * strides[d];
        setElement(value, offset, elementOf(part, i++));
      });
      start += part.shape[axis];
    }
    return value;
  }

  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    FailureOr<ProbeValue> src = evaluate(slice.getSource());
    if (failed(src))
      return failure();
    auto offsets = sizesOf(slice.getMixedOffsets());
    auto sizes = sizesOf(slice.getMixedSizes());
    auto steps = sizesOf(slice.getMixedStrides());
    if (failed(offsets) || failed(sizes) || failed(steps))
      return failure();
    for (size_t d = 0; d < sizes->size(); ++d)
      if ((*sizes)[d] > 0 &&
          ((*offsets)[d] < 0 ||
           (*offsets)[d] + ((*sizes)[d] - 1) * (*steps)[d] >= src->shape[d]))
        return fail("a slice out of bounds");
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> shape;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (size_t d = 0; d < sizes->size(); ++d)
      if (!dropped.test(d))
        shape.push_back((*sizes)[d]);
    ProbeValue value = makeValue(type, shape, true);
    SmallVector<int64_t> strides = stridesOf(src->shape);
    int64_t i = 0;
    forEachIndex(*sizes, [&](ArrayRef<int64_t> index) {
      int64_t offset = 0;
      for (auto [d, x] : llvm::enumerate(index))
        offset += ((*offsets)[d] + x * (*steps)[d]) * strides[d];
      setElement(value, i++, elementOf(*src, offset));
    });
    return value;
  }

  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (!linalgOp.hasPureTensorSemantics())
      return fail("a linalg op on buffers");
    // Operand values and shapes; the loop bounds follow from the shapes.
    SmallVector<ProbeValue> operands;
    SmallVector<int64_t> allShapes;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<ProbeValue> value = evaluate(operand.get());
      if (failed(value))
        return failure();
      llvm::append_range(allShapes, value->shape);
      operands.push_back(std::move(*value));
    }
    AffineMap shapesToLoops = linalgOp.getShapesToLoopsMap();
    if (!shapesToLoops)
      return fail("a linalg op without loop bounds");
    SmallVector<int64_t> bounds = shapesToLoops.compose(allShapes);
    int64_t points = 1;
    for (int64_t b : bounds)
      points *= b;
    if (points > kMaxElements)
      return fail("a linalg op of more than " + Twine(kMaxElements) +
                  " iterations");
    SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
    unsigned numInputs = linalgOp.getNumDpsInputs();
    SmallVector<ProbeValue> outputs;
    for (unsigned i = numInputs; i < operands.size(); ++i)
      outputs.push_back(operands[i]);
    SmallVector<SmallVector<int64_t>> strides;
    for (const ProbeValue &operand : operands)
      strides.push_back(stridesOf(operand.shape));
    Block *body = linalgOp.getBlock();
    DenseMap<Value, Scalar> scalars;
    LogicalResult status = success();
    auto offsetOf = [&](unsigned o, ArrayRef<int64_t> point) {
      SmallVector<int64_t> index = maps[o].compose(point);
      int64_t offset = 0;
      for (auto [d, x] : llvm::enumerate(index))
        offset += x * strides[o][d];
      return offset;
    };
    auto lookup = [&](Value v, ArrayRef<int64_t> point) -> FailureOr<Scalar> {
      auto found = scalars.find(v);
      if (found != scalars.end())
        return found->second;
      // A value from outside the body (a size, a constant).
      FailureOr<ProbeValue> outer = evaluate(v);
      if (failed(outer) || outer->isTensor)
        return fail("a body reading a tensor from outside");
      return elementOf(*outer, 0);
    };
    forEachIndex(bounds, [&](ArrayRef<int64_t> point) {
      if (failed(status))
        return;
      scalars.clear();
      for (unsigned o = 0; o < operands.size(); ++o) {
        const ProbeValue &source =
            o < numInputs ? operands[o] : outputs[o - numInputs];
        scalars[body->getArgument(o)] =
            source.isTensor ? elementOf(source, offsetOf(o, point))
                            : elementOf(source, 0);
      }
      for (Operation &inner : *body) {
        if (auto yield = dyn_cast<linalg::YieldOp>(inner)) {
          for (auto [r, operand] : llvm::enumerate(yield.getOperands())) {
            FailureOr<Scalar> x = lookup(operand, point);
            if (failed(x)) {
              status = failure();
              return;
            }
            setElement(outputs[r], offsetOf(numInputs + r, point), *x);
          }
          break;
        }
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          Scalar s;
          s.i = point[index.getDim()];
          scalars[index.getResult()] = s;
          continue;
        }
        if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
          FailureOr<ProbeValue> src = evaluate(extract.getTensor());
          if (failed(src)) {
            status = failure();
            return;
          }
          SmallVector<int64_t> srcStrides = stridesOf(src->shape);
          int64_t offset = 0;
          for (auto [d, idx] : llvm::enumerate(extract.getIndices())) {
            FailureOr<Scalar> x = lookup(idx, point);
            if (failed(x) || x->i < 0 || x->i >= src->shape[d]) {
              status = fail("an extract out of bounds");
              return;
            }
            offset += x->i * srcStrides[d];
          }
          scalars[extract.getResult()] = elementOf(*src, offset);
          continue;
        }
        if (!isScalarOp(&inner)) {
          status = fail("op " + inner.getName().getStringRef() +
                        " in a linalg body");
          return;
        }
        SmallVector<Scalar> in;
        for (Value operand : inner.getOperands()) {
          FailureOr<Scalar> x = lookup(operand, point);
          if (failed(x)) {
            status = failure();
            return;
          }
          in.push_back(*x);
        }
        FailureOr<Scalar> s = evaluateScalarOp(&inner, in, intOverrides);
        if (failed(s)) {
          status = fail("op " + inner.getName().getStringRef());
          return;
        }
        scalars[inner.getResult(0)] = *s;
      }
    });
    if (failed(status))
      return failure();
    return outputs[resultNumber];
  }

  return fail("op " + op->getName().getStringRef());
}
