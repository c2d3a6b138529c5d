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
  auto shape = broadcastShapes(da, dc);
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
  if (!isa<FloatType>(type.getElementType()))
    return fail("expects a float tensor, got " + typeText(type));
  SmallVector<int64_t> dims = dimsOf(x);
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
  auto s = broadcastShapes(dimsOf(c), dimsOf(x));
  if (s)
    s = broadcastShapes(*s, dimsOf(y));
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
  auto s = broadcastShapes(dimsOf(a), dimsOf(c));
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

void attnc::onnx_frontend::registerElementwiseOps(OpRegistry &registry) {
  registry.add({"Add", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importElementwiseBinary, 2, true>});
  registry.add({"Sub", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importElementwiseBinary, 2, true>});
  registry.add({"Mul", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importElementwiseBinary, 2, true>});
  registry.add({"Div", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importElementwiseBinary, 2, true>});
  registry.add({"Pow", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importElementwiseBinary, 2, true>});
  registry.add({"Max", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importElementwiseBinary, 2, true>});
  registry.add({"Min", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importElementwiseBinary, 2, true>});
  registry.add({"Sqrt", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Erf", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Tanh", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Exp", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Neg", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Reciprocal", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Relu", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Sigmoid", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Sin", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Cos", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importUnary, 1>});
  registry.add({"Equal", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importCompare, 2>});
  registry.add({"Less", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importCompare, 2>});
  registry.add({"Greater", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importCompare, 2>});
  registry.add({"LessOrEqual", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importCompare, 2>});
  registry.add({"GreaterOrEqual", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importCompare, 2>});
  registry.add({"Where", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importWhere, 3>});
  registry.add({"Cast", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importCast, 1>});
}
