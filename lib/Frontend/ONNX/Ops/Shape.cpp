//===- Shape.cpp - ONNX shape ops -----------------------------------------===//
//
// Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity), Transpose, Expand,
// shape queries (Shape, Size: host constants, symbolic where dims are) and
// constants (Constant, ConstantOfShape, Range).
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

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

Expected<SmallVector<int64_t>> Importer::reshapeTarget(StringRef op,
                                                       ArrayRef<int64_t> in) {
  int64_t rank = static_cast<int64_t>(in.size());
  auto totalOr = syms.product(in);
  if (!totalOr)
    return fail("the element count of " + shapeText(in) + " overflows");
  int64_t total = *totalOr;
  SmallVector<int64_t> out;
  if (op == "Reshape") {
    auto target = constantInts(1, "the shape");
    if (!target)
      return target.takeError();
    bool allowZero = getIntAttr(*current, "allowzero", 0) != 0;
    int64_t inferred = -1, known = 1;
    for (size_t i = 0; i < target->size(); ++i) {
      int64_t d = (*target)[i];
      if (d == 0 && !allowZero) {
        if (static_cast<int64_t>(i) >= rank)
          return fail("shape copies dimension " + Twine(i) + " of a rank-" +
                      Twine(rank) + " input");
        d = in[i];
      }
      if (d == -1) {
        if (inferred >= 0)
          return fail("shape has more than one -1");
        inferred = static_cast<int64_t>(i);
        out.push_back(1);
        continue;
      }
      if (d < 0 && !isSymbolic(d))
        return fail("shape has a negative dimension " + Twine(d));
      out.push_back(d);
      auto k = syms.mul(known, d);
      if (!k)
        return fail("the shape's element count overflows");
      known = *k;
    }
    bool symbolic = llvm::any_of(out, isSymbolic) || isSymbolic(total);
    if (inferred >= 0) {
      // -1 resolves symbolically: [B, S, 768] -> [B*S, -1] gives 768.
      std::optional<int64_t> q;
      if (known != 0)
        q = isSymbolic(total) || isSymbolic(known)
                ? syms.divExact(total, known)
                : (total % known == 0 ? std::optional<int64_t>(total / known)
                                      : std::nullopt);
      if (!q && symbolic)
        return failSymbolic("cannot resolve the -1 of the shape " +
                            shapeText(*target) + " for an input of shape " +
                            shapeText(in));
      if (!q)
        return fail("cannot reshape " + shapeText(in) + " to " +
                    shapeText(*target));
      out[inferred] = *q;
      known = *syms.mul(known, *q);
    }
    if (known != total) {
      if (symbolic)
        return failSymbolic("cannot show that " + shapeText(in) + " (" +
                            syms.str(total) + " elements) reshapes to " +
                            shapeText(out) + " (" + syms.str(known) +
                            " elements)");
      return fail("cannot reshape " + shapeText(in) + " (" + Twine(total) +
                  " elements) to " + shapeText(out));
    }
    return out;
  }
  if (op == "Flatten") {
    int64_t axis = getIntAttr(*current, "axis", 1);
    if (axis < -rank || axis > rank)
      return fail("axis " + Twine(axis) + " is out of range");
    if (axis < 0)
      axis += rank;
    int64_t outer = *syms.product(in.take_front(axis));
    int64_t inner = *syms.product(in.drop_front(axis));
    return SmallVector<int64_t>{outer, inner};
  }
  // Squeeze and Unsqueeze take their axes from input 1 since opset 13 (an
  // optional one for Squeeze).
  auto axes = axesArgument(opset >= 13, /*required=*/op == "Unsqueeze");
  if (!axes)
    return axes.takeError();
  if (op == "Squeeze") {
    if (Error err = normalizeAxes(*axes, rank))
      return err;
    for (int64_t d = 0; d < rank; ++d) {
      bool listed = llvm::is_contained(*axes, d);
      if (listed && isSymbolic(in[d]))
        return failSymbolic("cannot squeeze dimension " + Twine(d) +
                            " of symbolic extent " + syms.str(in[d]));
      if (listed && in[d] != 1)
        return fail("cannot squeeze dimension " + Twine(d) + " of extent " +
                    Twine(in[d]));
      if (listed || (axes->empty() && in[d] == 1))
        continue;
      out.push_back(in[d]);
    }
    return out;
  }
  // Unsqueeze: the axes index the output.
  int64_t outRank = rank + static_cast<int64_t>(axes->size());
  if (Error err = normalizeAxes(*axes, outRank))
    return err;
  size_t src = 0;
  for (int64_t d = 0; d < outRank; ++d)
    out.push_back(llvm::is_contained(*axes, d) ? 1 : in[src++]);
  return out;
}

Error Importer::importReshapeLike(StringRef op, ArrayRef<int64_t> shape) {
  auto target = reshapeTarget(op, shape);
  if (!target)
    return target.takeError();
  if (const HostTensor *c = constantInput(0)) {
    HostTensor t = *c;
    t.shape = *target;
    setConstantOutput(0, std::move(t));
    return Error::success();
  }
  auto x = input(0);
  if (!x)
    return x.takeError();
  setOutput(0, reshapeTo(*x, *target));
  return Error::success();
}

Expected<Value> Importer::importTranspose(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> perm;
  if (auto p = getIntsAttr(*current, "perm"))
    perm.assign(p->begin(), p->end());
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if (static_cast<int64_t>(perm.size()) != rank ||
      (rank &&
       (sorted.front() != 0 || sorted.back() != rank - 1 ||
        std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())))
    return fail("perm is not a permutation of the input's " + Twine(rank) +
                " dimensions");
  return transpose(x, perm);
}

Expected<Value> Importer::importExpand(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto target = constantInts(1, "the shape");
  if (!target)
    return target.takeError();
  auto s = broadcastShape(dimsOf(x), *target);
  if (!s)
    return fail("shape " + shapeText(*target) + " does not broadcast with " +
                shapeText(dimsOf(x)));
  return broadcastTo(x, *s);
}

Error Importer::importShapeOf(StringRef op, ArrayRef<int64_t> shape) {
  if (op == "Size") {
    auto n = syms.product(shape);
    if (!n)
      return fail("the element count overflows");
    HostTensor t = HostTensor::fromInts({*n});
    t.shape.clear();
    t.settleSymbolic();
    setConstantOutput(0, std::move(t));
    return Error::success();
  }
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = getIntAttr(*current, "start", 0),
          end = getIntAttr(*current, "end", rank);
  auto clampDim = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  start = clampDim(start);
  end = clampDim(end);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(shape[d]);
  HostTensor t = HostTensor::fromInts(dims);
  t.settleSymbolic();
  setConstantOutput(0, std::move(t));
  return Error::success();
}

Error Importer::importConstantOfShape() {
  const HostTensor *shapeT = constantInput(0);
  if (!shapeT)
    return fail("the shape must be computable from the input shapes");
  std::vector<int64_t> shape = shapeT->toInts();
  for (int64_t d : shape)
    if (d < 0 && !isSymbolic(d))
      return fail("has a negative dimension in its shape");
  HostTensor value = HostTensor::zeros(onnx::TensorProto::FLOAT, {});
  if (const onnx::AttributeProto *attr = findAttribute(*current, "value")) {
    std::string error;
    if (!decodeTensor(attr->t(), value, error) || value.numElements() != 1)
      return fail("value attribute must hold one element");
  }
  auto elem = elementType(value.dtype);
  if (!elem)
    return elem.takeError();
  setOutput(0, splat(shape, *elem, value.asDouble(0)));
  return Error::success();
}

Error Importer::importRange() {
  const HostTensor *start = constantInput(0), *limit = constantInput(1),
                   *delta = constantInput(2);
  if (!start || !limit || !delta)
    return fail("start, limit and delta must be computable from the input "
                "shapes");
  if (start->numElements() != 1 || limit->numElements() != 1 ||
      delta->numElements() != 1)
    return fail("start, limit and delta must be scalars");
  if (start->isFloat() || delta->symbolic)
    return failSymbolic("only an integer Range of a constant step is "
                        "supported");
  int64_t first = start->ints[0], step = delta->ints[0];
  // The length: (limit - start) / delta, for unit steps.
  std::optional<int64_t> n;
  if (step == 1)
    n = syms.sub(limit->ints[0], first);
  else if (step == -1)
    n = syms.sub(first, limit->ints[0]);
  if (!n)
    return failSymbolic("cannot size a Range of step " + Twine(step) +
                        " up to " + syms.str(limit->ints[0]));
  auto elem = elementType(start->dtype);
  if (!elem)
    return elem.takeError();
  Type elemType = *elem;
  // A symbolic start (positions after a past of run-time length) is read
  // once, outside the loop.
  Value symbolicStart;
  if (isSymbolic(first))
    symbolicStart =
        arith::IndexCastOp::create(b, loc, elemType, indexValue(first));
  setOutput(0,
            generic(ValueRange{}, {*n}, elemType,
                    [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
                      Value i = linalg::IndexOp::create(nb, nl, 0);
                      Value v = arith::IndexCastOp::create(nb, nl, elemType, i);
                      Value s = arith::ConstantOp::create(
                          nb, nl, nb.getIntegerAttr(elemType, step));
                      Value f =
                          symbolicStart
                              ? symbolicStart
                              : arith::ConstantOp::create(
                                    nb, nl, nb.getIntegerAttr(elemType, first));
                      return arith::AddIOp::create(
                          nb, nl, f, arith::MulIOp::create(nb, nl, v, s));
                    }));
  return Error::success();
}

Error Importer::importConstant() {
  HostTensor t;
  std::string error;
  if (const onnx::AttributeProto *v = findAttribute(*current, "value")) {
    if (!decodeTensor(v->t(), t, error))
      return fail("value " + error);
  } else if (const onnx::AttributeProto *f =
                 findAttribute(*current, "value_float")) {
    t = HostTensor::zeros(onnx::TensorProto::FLOAT, {});
    t.floats[0] = f->f();
  } else if (const onnx::AttributeProto *fs =
                 findAttribute(*current, "value_floats")) {
    t = HostTensor::zeros(onnx::TensorProto::FLOAT, {fs->floats_size()});
    for (int i = 0; i < fs->floats_size(); ++i)
      t.floats[i] = fs->floats(i);
  } else if (const onnx::AttributeProto *i =
                 findAttribute(*current, "value_int")) {
    t = HostTensor::zeros(onnx::TensorProto::INT64, {});
    t.ints[0] = i->i();
  } else if (const onnx::AttributeProto *is =
                 findAttribute(*current, "value_ints")) {
    t = HostTensor::fromInts(
        std::vector<int64_t>(is->ints().begin(), is->ints().end()));
  } else {
    return fail("only value, value_float(s) and value_int(s) constants are "
                "supported");
  }
  setConstantOutput(0, std::move(t));
  return Error::success();
}

Error Importer::importIdentity() {
  if (current->op_type() == "Dropout" && current->output_size() > 1 &&
      !current->output(1).empty())
    return fail("the mask output is not supported");
  Entry *e = lookup(current->input(0));
  if (!e)
    return fail("input is missing");
  values[current->output(0)] = *e;
  return Error::success();
}

Expected<Value> Importer::importTile(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto repeats = constantInts(1, "repeats");
  if (!repeats)
    return repeats.takeError();
  int64_t rank = typeOf(x).getRank();
  if (static_cast<int64_t>(repeats->size()) != rank)
    return fail("repeats has " + Twine(repeats->size()) +
                " elements for a rank-" + Twine(rank) + " input");
  Value result = x;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t r = (*repeats)[d];
    if (isSymbolic(r) || r < 0)
      return fail("repeats must be non-negative constants");
    if (r == 1)
      continue;
    SmallVector<int64_t> dims = dimsOf(result);
    auto total = syms.mul(dims[d], r);
    if (!total)
      return fail("the tiled extent overflows");
    dims[d] = *total;
    if (r == 0) {
      result = empty(dims, typeOf(x).getElementType());
      continue;
    }
    SmallVector<Value> copies(r, result);
    result = record(tensor::ConcatOp::create(b, loc, d, copies), dims);
  }
  return result;
}

Value Importer::padByIndex(Value x, StringRef mode, ArrayRef<int64_t> low,
                           ArrayRef<int64_t> outShape) {
  // Output index o of an axis reads input index i = o - low there, folded
  // into [0, n) as numpy folds it: clamped (edge), mirrored about the first
  // and last element without repeating them (reflect: period 2 (n - 1)), or
  // modulo n (wrap); so pads longer than the axis repeat the folding.
  SmallVector<int64_t> dims = dimsOf(x);
  int64_t rank = dims.size();
  SmallVector<Value> extents;
  for (int64_t d = 0; d < rank; ++d)
    extents.push_back(
        low[d] != 0 || outShape[d] != dims[d] ? indexValue(dims[d]) : Value());
  Type elem = typeOf(x).getElementType();
  auto ctx = b.getContext();
  Value init = empty(outShape, elem);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange) {
        auto c = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nl, v);
        };
        // ((a mod m) + m) mod m: a non-negative remainder.
        auto mod = [&](Value a, Value m) -> Value {
          Value r = arith::RemSIOp::create(nb, nl, a, m);
          return arith::RemSIOp::create(nb, nl,
                                        arith::AddIOp::create(nb, nl, r, m), m);
        };
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d) {
          Value o = linalg::IndexOp::create(nb, nl, d);
          if (!extents[d]) {
            coords.push_back(o);
            continue;
          }
          Value n = extents[d], last = arith::SubIOp::create(nb, nl, n, c(1));
          Value i = arith::SubIOp::create(nb, nl, o, c(low[d]));
          Value src;
          if (mode == "edge") {
            src = arith::MinSIOp::create(
                nb, nl, arith::MaxSIOp::create(nb, nl, i, c(0)), last);
          } else if (mode == "wrap") {
            src = mod(i, n);
          } else {
            // reflect; an axis of one element reads it everywhere.
            Value period = arith::MaxSIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, last, c(2)), c(1));
            Value m = mod(i, period);
            Value back = arith::SubIOp::create(nb, nl, period, m);
            Value inside =
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, m, n);
            src = arith::SelectOp::create(nb, nl, inside, m, back);
            src = arith::MinSIOp::create(nb, nl, src, last);
          }
          coords.push_back(src);
        }
        Value v = tensor::ExtractOp::create(nb, nl, x, coords);
        linalg::YieldOp::create(nb, nl, v);
      });
  return record(generic.getResult(0), outShape);
}

Expected<Value> Importer::importPad(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  const onnx::AttributeProto *modeAttr = findAttribute(*current, "mode");
  std::string mode = modeAttr ? modeAttr->s() : "constant";
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      (mode != "wrap" || opset < 19))
    return fail("mode '" + mode +
                "' is not supported (constant, edge, "
                "reflect" +
                (opset >= 19 ? ", wrap" : "") + ")");
  auto pads = constantInts(1, "pads");
  if (!pads)
    return pads.takeError();
  int64_t rank = typeOf(x).getRank();
  // Pad-18 pads only the axes of its optional input 3.
  std::vector<int64_t> axes;
  if (opset >= 18 && hasInput(3)) {
    auto a = constantInts(3, "axes");
    if (!a)
      return a.takeError();
    axes = *a;
    for (int64_t &axis : axes)
      if (Error err = normalizeAxis(axis, rank))
        return std::move(err);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  size_t n = axes.size();
  if (pads->size() != 2 * n)
    return fail("pads has " + Twine(pads->size()) + " elements for " +
                Twine(n) + " axes (begins, then ends)");
  SmallVector<int64_t> dims = dimsOf(x), low(rank, 0), outShape = dims;
  for (size_t i = 0; i < n; ++i) {
    int64_t lo = (*pads)[i], hi = (*pads)[i + n];
    if (isSymbolic(lo) || isSymbolic(hi) || lo < 0 || hi < 0)
      return fail("pads must be non-negative constants (negative pads crop, "
                  "which is not supported)");
    low[axes[i]] += lo;
    auto grown = syms.add(outShape[axes[i]], lo + hi);
    if (!grown)
      return fail("the padded extent overflows");
    outShape[axes[i]] = *grown;
  }
  Type elem = typeOf(x).getElementType();
  if (mode != "constant") {
    // Symbolic extents are at least 1; a constant 0 has nothing to repeat.
    for (int64_t d = 0, r = dims.size(); d < r; ++d)
      if (dims[d] == 0 && outShape[d] != 0)
        return fail("mode '" + mode + "' pads axis " + Twine(d) +
                    ", which is empty");
    return padByIndex(x, mode, low, outShape);
  }
  Value padValue;
  if (const HostTensor *c = constantInput(2)) {
    if (c->numElements() != 1)
      return fail("constant_value must be a scalar");
    padValue = arith::ConstantOp::create(
        b, loc,
        isa<FloatType>(elem)
            ? TypedAttr(b.getFloatAttr(elem, c->asDouble(0)))
            : TypedAttr(b.getIntegerAttr(
                  elem, c->isFloat() ? int64_t(c->floats[0]) : c->ints[0])));
  } else if (hasInput(2)) {
    auto v = input(2);
    if (!v)
      return v.takeError();
    if (typeOf(*v).getElementType() != elem || !typeOf(*v).hasStaticShape() ||
        typeOf(*v).getNumElements() != 1)
      return fail("constant_value must be a scalar of the input's type");
    padValue =
        tensor::ExtractOp::create(b, loc, reshapeTo(*v, {}), ValueRange{});
  } else {
    padValue = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
  }
  Value filled = fill(outShape, padValue);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  return record(tensor::InsertSliceOp::create(b, loc, x, filled,
                                              foldResults(low),
                                              foldResults(dims), strides),
                outShape);
}

void attnc::onnx_frontend::registerShapeOps(OpRegistry &r) {
  using R = OpRegistry;
  constexpr int kMin = kMinOpset, kMax = kLatestOpset;
  // Versions 19, 21 and 23 of these add data types only (float8, 4-bit
  // integers, float4), which the importer refuses by type.
  r.add("Constant", kMin, kMax,
        "value value_float value_floats value_int value_ints value_string "
        "value_strings sparse_value",
        plainImporter<&Importer::importConstant>, R::BeforeInputs);
  // Shape-15 adds start and end.
  r.add("Shape", kMin, 14, "", shapeImporter<&Importer::importShapeOf>,
        R::BeforeInputs);
  r.add("Shape", 15, kMax, "start end", shapeImporter<&Importer::importShapeOf>,
        R::BeforeInputs);
  r.add("Size", kMin, kMax, "", shapeImporter<&Importer::importShapeOf>,
        R::BeforeInputs);
  r.add("Identity", kMin, kMax, "", plainImporter<&Importer::importIdentity>);
  r.add("Dropout", kMin, kMax, "seed",
        plainImporter<&Importer::importIdentity>);
  // Reshape-14 adds allowzero.
  r.add("Reshape", kMin, 13, "", shapeImporter<&Importer::importReshapeLike>,
        R::NoFold);
  r.add("Reshape", 14, kMax, "allowzero",
        shapeImporter<&Importer::importReshapeLike>, R::NoFold);
  r.add("Flatten", kMin, kMax, "axis",
        shapeImporter<&Importer::importReshapeLike>, R::NoFold);
  for (StringRef op : {"Squeeze", "Unsqueeze"})
    r.add(op, kMin, kMax, "", shapeImporter<&Importer::importReshapeLike>,
          R::NoFold);
  r.add("Transpose", kMin, kMax, "perm",
        valueImporter<&Importer::importTranspose, 1>);
  r.add("Expand", kMin, kMax, "", valueImporter<&Importer::importExpand, 1>);
  r.add("Range", kMin, kMax, "", plainImporter<&Importer::importRange>);
  // ConstantOfShape-20/21/23 add data types only.
  r.add("ConstantOfShape", kMin, kMax, "value",
        plainImporter<&Importer::importConstantOfShape>);
  r.add("Tile", kMin, kMax, "", valueImporter<&Importer::importTile, 1>);
  // Pad-18 adds the axes input, Pad-19 the wrap mode (refused: only the
  // constant mode is read).
  r.add("Pad", kMin, kMax, "mode", valueImporter<&Importer::importPad, 1>);
}
