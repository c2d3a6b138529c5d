//===- Elementwise.cpp - ONNX elementwise ops -----------------------------===//
//
// Binary arithmetic (numpy broadcasting), unary math, comparisons, Where and
// Cast: linalg named ops where they exist, else scalar bodies in
// linalg.generic.
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

Expected<Value> Importer::importElementwiseBinary(StringRef op,
                                                  ArrayRef<Value> in) {
  Value a = in[0], c = in[1];
  auto ta = typeOf(a), tc = typeOf(c);
  if (ta.getElementType() != tc.getElementType())
    return fail("operands have different element types (" + typeText(ta) +
                " and " + typeText(tc) + ")");
  SmallVector<int64_t> da = dimsOf(a), dc = dimsOf(c);
  auto shape = broadcastShape(da, dc);
  if (!shape)
    return fail("operand shapes " + shapeText(da) + " and " + shapeText(dc) +
                " do not broadcast");
  Type elem = ta.getElementType();
  bool isFloat = isa<FloatType>(elem);
  if (!isFloat && (op == "Pow"))
    return fail("integer Pow is not supported");
  Value lhs = broadcastTo(a, *shape), rhs = broadcastTo(c, *shape);
  Value init = empty(*shape, elem);
  SmallVector<Value> ins{lhs, rhs}, outs{init};
  Operation *result;
  if (op == "Add")
    result = linalg::AddOp::create(b, loc, ins, outs);
  else if (op == "Sub")
    result = linalg::SubOp::create(b, loc, ins, outs);
  else if (op == "Mul")
    result = linalg::MulOp::create(b, loc, ins, outs);
  else if (op == "Div")
    result = linalg::DivOp::create(b, loc, ins, outs);
  else if (op == "Pow")
    result = linalg::PowFOp::create(b, loc, ins, outs);
  else if (op == "Max")
    result = linalg::MaxOp::create(b, loc, ins, outs);
  else
    result = linalg::MinOp::create(b, loc, ins, outs);
  return result->getResult(0);
}

Expected<Value> Importer::importUnary(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  SmallVector<int64_t> dims = dimsOf(x);
  // Neg of integers: T5's relative positions negate int64 distances.
  if (op == "Neg" && type.getElementType().isSignlessInteger() &&
      !type.getElementType().isInteger(1))
    return generic({x}, dims, type.getElementType(),
                   [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                     Value zero = arith::ConstantOp::create(
                         nb, nl, nb.getIntegerAttr(a[0].getType(), 0));
                     return arith::SubIOp::create(nb, nl, zero, a[0]);
                   });
  if (!isa<FloatType>(type.getElementType()))
    return fail("expects a float tensor, got " + typeText(type));
  Value init = empty(dims, type.getElementType());
  SmallVector<Value> ins{x}, outs{init};
  Value r;
  if (op == "Sqrt")
    r = linalg::SqrtOp::create(b, loc, ins, outs).getResult(0);
  else if (op == "Erf")
    r = linalg::ErfOp::create(b, loc, ins, outs).getResult(0);
  else if (op == "Tanh")
    r = linalg::TanhOp::create(b, loc, ins, outs).getResult(0);
  else if (op == "Exp")
    r = linalg::ExpOp::create(b, loc, ins, outs).getResult(0);
  else if (op == "Log")
    r = linalg::LogOp::create(b, loc, ins, outs).getResult(0);
  else if (op == "Neg")
    r = linalg::NegFOp::create(b, loc, ins, outs).getResult(0);
  else if (op == "Reciprocal")
    r = linalg::ReciprocalOp::create(b, loc, ins, outs).getResult(0);
  else if (op == "Relu")
    r = attn::ReluOp::create(b, loc, x);
  else if (op == "Sigmoid")
    r = generic(ins, dims, type.getElementType(),
                [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                  Type t = a[0].getType();
                  Value one = arith::ConstantOp::create(
                      nb, nl, nb.getFloatAttr(t, 1.0));
                  Value neg = arith::NegFOp::create(nb, nl, a[0]);
                  Value e = math::ExpOp::create(nb, nl, neg);
                  Value den = arith::AddFOp::create(nb, nl, one, e);
                  return arith::DivFOp::create(nb, nl, one, den);
                });
  else if (op == "Sin" || op == "Cos") {
    bool sin = op == "Sin";
    r = generic(ins, dims, type.getElementType(),
                [sin](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                  if (sin)
                    return math::SinOp::create(nb, nl, a[0]);
                  return math::CosOp::create(nb, nl, a[0]);
                });
  }
  return r;
}

Expected<Value> Importer::importWhere(StringRef op, ArrayRef<Value> in) {
  Value c = in[0], x = in[1], y = in[2];
  if (!typeOf(c).getElementType().isInteger(1))
    return fail("condition must be bool");
  if (typeOf(x).getElementType() != typeOf(y).getElementType())
    return fail("X and Y have different element types");
  auto s = broadcastShape(dimsOf(c), dimsOf(x));
  if (s)
    s = broadcastShape(*s, dimsOf(y));
  if (!s)
    return fail("operand shapes do not broadcast");
  SmallVector<Value> ins{broadcastTo(c, *s), broadcastTo(x, *s),
                         broadcastTo(y, *s)};
  return generic(ins, *s, typeOf(x).getElementType(),
                 [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                   return arith::SelectOp::create(nb, nl, a[0], a[1], a[2]);
                 });
}

Expected<Value> Importer::importCast(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto to = elementType(static_cast<int32_t>(getIntAttr(*current, "to", 0)));
  if (!to)
    return to.takeError();
  Type from = typeOf(x).getElementType();
  if (from == *to) {
    return x;
  }
  Type target = *to;
  return generic(
      ValueRange{x}, dimsOf(x), target,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = a[0];
        auto fIn = dyn_cast<FloatType>(from);
        auto fOut = dyn_cast<FloatType>(target);
        if (fIn && fOut)
          return fIn.getWidth() < fOut.getWidth()
                     ? arith::ExtFOp::create(nb, nl, target, v).getResult()
                     : arith::TruncFOp::create(nb, nl, target, v).getResult();
        if (fOut)
          return from.isInteger(1)
                     ? arith::UIToFPOp::create(nb, nl, target, v).getResult()
                     : arith::SIToFPOp::create(nb, nl, target, v).getResult();
        if (target.isInteger(1)) {
          if (fIn) {
            Value zero =
                arith::ConstantOp::create(nb, nl, nb.getFloatAttr(from, 0.0));
            return arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNE, v,
                                         zero);
          }
          Value zero =
              arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(from, 0));
          return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, v,
                                       zero);
        }
        if (fIn)
          return arith::FPToSIOp::create(nb, nl, target, v);
        unsigned wIn = from.getIntOrFloatBitWidth(),
                 wOut = target.getIntOrFloatBitWidth();
        if (wIn < wOut)
          return from.isInteger(1)
                     ? arith::ExtUIOp::create(nb, nl, target, v).getResult()
                     : arith::ExtSIOp::create(nb, nl, target, v).getResult();
        return arith::TruncIOp::create(nb, nl, target, v);
      });
}

Expected<Value> Importer::importCompare(StringRef op, ArrayRef<Value> in) {
  Value a = in[0], c = in[1];
  Type elem = typeOf(a).getElementType();
  if (elem != typeOf(c).getElementType())
    return fail("operands have different element types");
  auto s = broadcastShape(dimsOf(a), dimsOf(c));
  if (!s)
    return fail("operand shapes " + shapeText(dimsOf(a)) + " and " +
                shapeText(dimsOf(c)) + " do not broadcast");
  bool isFloat = isa<FloatType>(elem);
  auto fpred = llvm::StringSwitch<arith::CmpFPredicate>(op)
                   .Case("Equal", arith::CmpFPredicate::OEQ)
                   .Case("Less", arith::CmpFPredicate::OLT)
                   .Case("Greater", arith::CmpFPredicate::OGT)
                   .Case("LessOrEqual", arith::CmpFPredicate::OLE)
                   .Default(arith::CmpFPredicate::OGE);
  auto ipred = llvm::StringSwitch<arith::CmpIPredicate>(op)
                   .Case("Equal", arith::CmpIPredicate::eq)
                   .Case("Less", arith::CmpIPredicate::slt)
                   .Case("Greater", arith::CmpIPredicate::sgt)
                   .Case("LessOrEqual", arith::CmpIPredicate::sle)
                   .Default(arith::CmpIPredicate::sge);
  return generic(ValueRange{broadcastTo(a, *s), broadcastTo(c, *s)}, *s,
                 b.getI1Type(),
                 [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                   if (isFloat)
                     return arith::CmpFOp::create(nb, nl, fpred, v[0], v[1]);
                   return arith::CmpIOp::create(nb, nl, ipred, v[0], v[1]);
                 });
}

Expected<SmallVector<int64_t>>
Importer::broadcastAll(SmallVectorImpl<Value> &ins) {
  SmallVector<int64_t> shape = dimsOf(ins[0]);
  for (Value v : ArrayRef<Value>(ins).drop_front()) {
    auto s = broadcastShape(shape, dimsOf(v));
    if (!s)
      return fail("operand shapes " + shapeText(shape) + " and " +
                  shapeText(dimsOf(v)) + " do not broadcast");
    shape = *s;
  }
  for (Value &v : ins)
    v = broadcastTo(v, shape);
  return shape;
}

Value Importer::scalarConst(OpBuilder &nb, Location nl, Type elem, double v) {
  if (isa<FloatType>(elem))
    return arith::ConstantOp::create(nb, nl, nb.getFloatAttr(elem, v));
  return arith::ConstantOp::create(
      nb, nl, nb.getIntegerAttr(elem, static_cast<int64_t>(v)));
}

Expected<Value> Importer::importLogical(StringRef op, ArrayRef<Value> in) {
  SmallVector<Value> ins(in.begin(), in.end());
  for (Value v : ins)
    if (!typeOf(v).getElementType().isInteger(1))
      return fail("expects bool operands, got " + typeText(v.getType()));
  auto shape = broadcastAll(ins);
  if (!shape)
    return shape.takeError();
  return generic(
      ins, *shape, b.getI1Type(),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        if (op == "Not")
          return arith::XOrIOp::create(
              nb, nl, a[0],
              arith::ConstantOp::create(nb, nl, nb.getBoolAttr(true)));
        if (op == "And")
          return arith::AndIOp::create(nb, nl, a[0], a[1]);
        if (op == "Or")
          return arith::OrIOp::create(nb, nl, a[0], a[1]);
        return arith::XOrIOp::create(nb, nl, a[0], a[1]);
      });
}

Expected<Value> Importer::importMod(StringRef op, ArrayRef<Value> in) {
  SmallVector<Value> ins(in.begin(), in.end());
  Type elem = typeOf(ins[0]).getElementType();
  if (elem != typeOf(ins[1]).getElementType())
    return fail("operands have different element types");
  bool fmod = getIntAttr(*current, "fmod", 0) != 0;
  bool isFloat = isa<FloatType>(elem);
  if (isFloat && !fmod)
    return fail("fmod must be 1 for floating-point operands");
  auto shape = broadcastAll(ins);
  if (!shape)
    return shape.takeError();
  return generic(
      ins, *shape, elem,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        if (isFloat)
          return arith::RemFOp::create(nb, nl, a[0], a[1]);
        // C's remainder (the dividend's sign)...
        Value r = arith::RemSIOp::create(nb, nl, a[0], a[1]);
        if (fmod)
          return r;
        // ...moved to the divisor's sign (Python's %).
        Value zero = scalarConst(nb, nl, elem, 0);
        Value rNeg =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, r, zero);
        Value dNeg = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                           a[1], zero);
        Value nonzero =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, r, zero);
        Value differ = arith::XOrIOp::create(nb, nl, rNeg, dNeg);
        Value fix = arith::AndIOp::create(nb, nl, nonzero, differ);
        Value moved = arith::AddIOp::create(nb, nl, r, a[1]);
        return arith::SelectOp::create(nb, nl, fix, moved, r);
      });
}

Expected<Value> Importer::importMathUnary(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  Type elem = typeOf(x).getElementType();
  bool isFloat = isa<FloatType>(elem);
  bool floatOnly =
      op == "Floor" || op == "Ceil" || op == "IsNaN" || op == "IsInf";
  if ((floatOnly && !isFloat) || elem.isInteger(1))
    return fail("expects a " + Twine(floatOnly ? "float" : "numeric") +
                " tensor, got " + typeText(x.getType()));
  bool toBool = op == "IsNaN" || op == "IsInf";
  bool detectNeg = getIntAttr(*current, "detect_negative", 1) != 0;
  bool detectPos = getIntAttr(*current, "detect_positive", 1) != 0;
  return generic(
      ValueRange{x}, dimsOf(x), toBool ? b.getI1Type() : elem,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = a[0];
        if (op == "Floor")
          return math::FloorOp::create(nb, nl, v);
        if (op == "Ceil")
          return math::CeilOp::create(nb, nl, v);
        if (op == "IsNaN")
          return arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO, v, v);
        if (op == "IsInf") {
          auto inf = [&](bool neg) {
            const auto &sem = cast<FloatType>(elem).getFloatSemantics();
            return arith::ConstantOp::create(
                nb, nl, nb.getFloatAttr(elem, APFloat::getInf(sem, neg)));
          };
          Value r = arith::ConstantOp::create(nb, nl, nb.getBoolAttr(false));
          if (detectPos)
            r = arith::OrIOp::create(
                nb, nl, r,
                arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, v,
                                      inf(false)));
          if (detectNeg)
            r = arith::OrIOp::create(
                nb, nl, r,
                arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, v,
                                      inf(true)));
          return r;
        }
        if (op == "Abs")
          return isFloat ? math::AbsFOp::create(nb, nl, v).getResult()
                         : math::AbsIOp::create(nb, nl, v).getResult();
        // Sign: -1, 0 or 1 (NaN stays NaN).
        Value zero = scalarConst(nb, nl, elem, 0);
        Value one = scalarConst(nb, nl, elem, 1);
        Value minusOne = scalarConst(nb, nl, elem, -1);
        Value pos = isFloat ? arith::CmpFOp::create(
                                  nb, nl, arith::CmpFPredicate::OGT, v, zero)
                                  .getResult()
                            : arith::CmpIOp::create(
                                  nb, nl, arith::CmpIPredicate::sgt, v, zero)
                                  .getResult();
        Value neg = isFloat ? arith::CmpFOp::create(
                                  nb, nl, arith::CmpFPredicate::OLT, v, zero)
                                  .getResult()
                            : arith::CmpIOp::create(
                                  nb, nl, arith::CmpIPredicate::slt, v, zero)
                                  .getResult();
        Value r = arith::SelectOp::create(nb, nl, neg, minusOne, v);
        return arith::SelectOp::create(nb, nl, pos, one, r);
      });
}

Expected<Value> Importer::importClip(StringRef op, ArrayRef<Value> in) {
  SmallVector<Value> ins{in[0]};
  Type elem = typeOf(in[0]).getElementType();
  if (elem.isInteger(1))
    return fail("expects a numeric tensor");
  bool hasMin = hasInput(1), hasMax = hasInput(2);
  for (size_t i = 1; i <= 2; ++i) {
    if (!hasInput(i))
      continue;
    auto bound = input(i);
    if (!bound)
      return bound.takeError();
    if (typeOf(*bound).getElementType() != elem)
      return fail(Twine(i == 1 ? "min" : "max") +
                  " has another element type than the input");
    if (typeOf(*bound).getRank() != 0 &&
        !(typeOf(*bound).hasStaticShape() &&
          typeOf(*bound).getNumElements() == 1))
      return fail(Twine(i == 1 ? "min" : "max") + " must be a scalar");
    ins.push_back(reshapeTo(*bound, {}));
  }
  auto shape = broadcastAll(ins);
  if (!shape)
    return shape.takeError();
  bool isFloat = isa<FloatType>(elem);
  return generic(
      ins, *shape, elem,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = a[0];
        size_t next = 1;
        if (hasMin) {
          Value lo = a[next++];
          v = isFloat ? arith::MaximumFOp::create(nb, nl, v, lo).getResult()
                      : arith::MaxSIOp::create(nb, nl, v, lo).getResult();
        }
        if (hasMax) {
          Value hi = a[next++];
          v = isFloat ? arith::MinimumFOp::create(nb, nl, v, hi).getResult()
                      : arith::MinSIOp::create(nb, nl, v, hi).getResult();
        }
        return v;
      });
}

Expected<Value> Importer::importGelu(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  if (!isa<FloatType>(typeOf(x).getElementType()))
    return fail("expects a float tensor, got " + typeText(x.getType()));
  const onnx::AttributeProto *a = findAttribute(*current, "approximate");
  std::string approx = a ? a->s() : "none";
  attn::GeluApproximation kind;
  if (approx == "none")
    kind = attn::GeluApproximation::none;
  else if (approx == "tanh")
    kind = attn::GeluApproximation::tanh;
  else
    return fail("approximate '" + approx + "' is not supported (none or tanh)");
  return attn::GeluOp::create(b, loc, x, kind).getResult();
}

void attnc::onnx_frontend::registerElementwiseOps(OpRegistry &r) {
  constexpr int kMin = kMinOpset, kMax = kLatestOpset;
  for (StringRef op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"})
    r.add(op, kMin, kMax, "",
          valueImporter<&Importer::importElementwiseBinary, 2, true>);
  for (StringRef op : {"Sqrt", "Erf", "Tanh", "Exp", "Log", "Neg", "Reciprocal",
                       "Relu", "Sigmoid", "Sin", "Cos"})
    r.add(op, kMin, kMax, "", valueImporter<&Importer::importUnary, 1>);
  // Equal-19 adds strings, which the importer refuses by type.
  for (StringRef op :
       {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    r.add(op, kMin, kMax, "", valueImporter<&Importer::importCompare, 2>);
  r.add("Where", kMin, kMax, "", valueImporter<&Importer::importWhere, 3>);
  // Cast-19 adds `saturate`, which only float8 targets read (refused by
  // type, as are Cast-21's 4-bit and Cast-23's float4 types).
  for (StringRef op : {"And", "Or", "Xor"})
    r.add(op, kMin, kMax, "", valueImporter<&Importer::importLogical, 2, true>);
  r.add("Not", kMin, kMax, "", valueImporter<&Importer::importLogical, 1>);
  r.add("Mod", kMin, kMax, "fmod", valueImporter<&Importer::importMod, 2>);
  for (StringRef op : {"Abs", "Sign", "Floor", "Ceil", "IsNaN"})
    r.add(op, kMin, kMax, "", valueImporter<&Importer::importMathUnary, 1>);
  r.add("IsInf", kMin, kMax, "detect_negative detect_positive",
        valueImporter<&Importer::importMathUnary, 1>);
  // Clip's bounds are optional inputs since opset 11.
  r.add("Clip", kMin, kMax, "", valueImporter<&Importer::importClip, 1>);
  r.add("Gelu", 20, kMax, "approximate",
        valueImporter<&Importer::importGelu, 1>);
  r.add("Cast", kMin, 18, "to", valueImporter<&Importer::importCast, 1>);
  r.add("Cast", 19, kMax, "to saturate",
        valueImporter<&Importer::importCast, 1>);
}
