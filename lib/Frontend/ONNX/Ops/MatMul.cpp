//===- MatMul.cpp - ONNX MatMul and Gemm ----------------------------------===//
//
// MatMul with numpy batch broadcasting (linalg.matmul with the leading dims
// folded into the rows where the right operand is a matrix, else
// linalg.batch_matmul) and Gemm with its transposes, alpha and beta.
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

Expected<Value> Importer::importMatMul(StringRef op, ArrayRef<Value> in) {
  Value a = in[0], c = in[1];
  auto ta = typeOf(a), tc = typeOf(c);
  if (!isa<FloatType>(ta.getElementType()) ||
      ta.getElementType() != tc.getElementType())
    return fail("expects float operands of one element type");
  Value lhs = a, rhs = c;
  // 1-D operands: promoted to matrices and the unit dim removed afterwards.
  bool vecL = ta.getRank() == 1, vecR = tc.getRank() == 1;
  if (ta.getRank() == 0 || tc.getRank() == 0)
    return fail("operands must have rank >= 1");
  if (vecL)
    lhs = reshapeTo(lhs, {1, dimsOf(a)[0]});
  if (vecR)
    rhs = reshapeTo(rhs, {dimsOf(c)[0], 1});
  SmallVector<int64_t> sa = dimsOf(lhs), sc = dimsOf(rhs);
  int64_t ra = sa.size(), rb = sc.size();
  int64_t m = sa[ra - 2], k = sa[ra - 1], n = sc[rb - 1];
  if (sc[rb - 2] != k)
    return fail("inner dimensions differ: " + shapeText(sa) + " x " +
                shapeText(sc));
  Value result;
  SmallVector<int64_t> outShape;
  if (rb == 2) {
    // [..., M, K] x [K, N]: the leading dims fold into the rows.
    SmallVector<int64_t> lead(ArrayRef<int64_t>(sa).drop_back(2));
    auto rows = syms.mul(m, *syms.product(lead));
    if (!rows)
      return fail("the number of rows overflows");
    Value l2 = reshapeTo(lhs, {*rows, k});
    result = matmul2d(l2, rhs);
    outShape = lead;
    outShape.append({m, n});
    result = reshapeTo(result, outShape);
  } else {
    auto batch = broadcastShapes(ArrayRef<int64_t>(sa).drop_back(2),
                                 ArrayRef<int64_t>(sc).drop_back(2));
    if (!batch)
      return fail("batch dimensions of " + shapeText(sa) + " and " +
                  shapeText(sc) + " do not broadcast");
    auto bszOr = syms.product(*batch);
    if (!bszOr)
      return fail("the batch size overflows");
    int64_t bsz = *bszOr;
    SmallVector<int64_t> aFull(*batch), bFull(*batch);
    aFull.append({m, k});
    bFull.append({k, n});
    Value l3 = reshapeTo(broadcastTo(lhs, aFull), {bsz, m, k});
    Value r3 = reshapeTo(broadcastTo(rhs, bFull), {bsz, k, n});
    Value init = zeros({bsz, m, n}, ta.getElementType());

    result = linalg::BatchMatmulOp::create(b, loc, ValueRange{l3, r3},
                                           ValueRange{init})
                 .getResult(0);
    outShape = *batch;
    outShape.append({m, n});
    result = reshapeTo(result, outShape);
  }
  if (vecL || vecR) {
    SmallVector<int64_t> squeezed(outShape.begin(), outShape.end() - 2);
    if (!vecL)
      squeezed.push_back(m);
    if (!vecR)
      squeezed.push_back(n);
    result = reshapeTo(result, squeezed);
  }
  return result;
}

Expected<Value> Importer::importGemm(StringRef op, ArrayRef<Value> in) {
  Value a = in[0], c = in[1];
  if (typeOf(a).getRank() != 2 || typeOf(c).getRank() != 2)
    return fail("A and B must be matrices");
  Value lhs = a, rhs = c;
  if (getIntAttr(*current, "transA", 0))
    lhs = transpose(lhs, {1, 0});
  if (getIntAttr(*current, "transB", 0))
    rhs = transpose(rhs, {1, 0});
  if (dimsOf(lhs)[1] != dimsOf(rhs)[0])
    return fail("inner dimensions differ");
  Type elem = typeOf(lhs).getElementType();
  Value y = matmul2d(lhs, rhs);
  SmallVector<int64_t> shape = dimsOf(y);
  float alpha = getFloatAttr(*current, "alpha", 1.0f),
        beta = getFloatAttr(*current, "beta", 1.0f);
  if (alpha != 1.0f)
    y = linalg::MulOp::create(b, loc, ValueRange{y, splat(shape, elem, alpha)},
                              ValueRange{empty(shape, elem)})
            .getResult(0);
  if (hasInput(2) && beta != 0.0f) {
    auto bias = input(2);
    if (!bias)
      return bias.takeError();
    auto biasShape = broadcastShapes(dimsOf(*bias), shape);
    if (!biasShape || *biasShape != shape)
      return fail("C does not broadcast to the result " + shapeText(shape));
    Value cb = broadcastTo(*bias, shape);
    if (beta != 1.0f)
      cb = linalg::MulOp::create(b, loc,
                                 ValueRange{cb, splat(shape, elem, beta)},
                                 ValueRange{empty(shape, elem)})
               .getResult(0);
    y = linalg::AddOp::create(b, loc, ValueRange{y, cb},
                              ValueRange{empty(shape, elem)})
            .getResult(0);
  }
  return y;
}

void attnc::onnx_frontend::registerMatMulOps(OpRegistry &registry) {
  registry.add({"MatMul", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importMatMul, 2>});
  registry.add({"Gemm", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importGemm, 2>});
}
