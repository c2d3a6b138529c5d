//===- MatMul.cpp - ONNX MatMul and Gemm ----------------------------------===//
//
// MatMul with numpy batch broadcasting (linalg.matmul with the leading dims
// folded into the rows where the right operand is a matrix, else
// linalg.batch_matmul), Gemm with its transposes, alpha and beta, and the
// patch embedding of vision transformers (a Conv whose stride is its
// kernel) as a matmul over the patches.
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

/// MatMul's and Conv's operands: floats of one element type.
static bool oneFloatType(RankedTensorType a, RankedTensorType b) {
  return isa<FloatType>(a.getElementType()) &&
         a.getElementType() == b.getElementType();
}

Expected<Value> Importer::importMatMul(StringRef op, ArrayRef<Value> in) {
  Value a = in[0], c = in[1];
  auto ta = typeOf(a), tc = typeOf(c);
  if (!oneFloatType(ta, tc))
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
  if (!unifyDims(sc[rb - 2], k))
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
    auto batch = broadcastShape(ArrayRef<int64_t>(sa).drop_back(2),
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

Expected<Value> Importer::importConv(StringRef op, ArrayRef<Value> in) {
  Value x = in[0], w = in[1];
  auto tx = typeOf(x), tw = typeOf(w);
  if (!oneFloatType(tx, tw))
    return fail("expects float operands of one element type");
  // Only the patch embedding: each output pixel reads its own patch, so
  // the convolution is one matmul of the patches by the flattened filters.
  const char *only = "; only the patch embedding of vision transformers "
                     "(2-D, strides equal to the kernel, no padding, "
                     "dilation 1, group 1) is supported";
  if (tx.getRank() != 4 || tw.getRank() != 4)
    return fail(Twine("the input and weight must be 4-D") + only);
  SmallVector<int64_t> sx = dimsOf(x), sw = dimsOf(w);
  const int64_t channels = sx[1], height = sx[2], width = sx[3];
  const int64_t filters = sw[0], kh = sw[2], kw = sw[3];
  if (ShapedType::isDynamic(channels) || ShapedType::isDynamic(height) ||
      ShapedType::isDynamic(width) || llvm::any_of(sw, ShapedType::isDynamic))
    return fail(Twine("the channels, the image size and the weight's shape "
                      "must be static"));
  if (getIntAttr(*current, "group", 1) != 1)
    return fail(Twine("group != 1") + only);
  if (sw[1] != channels)
    return fail("the weight has " + Twine(sw[1]) +
                " input channels but the "
                "input " +
                Twine(channels));
  // An absent attribute takes its ONNX default.
  auto attrIs = [&](StringRef name, std::vector<int64_t> dflt,
                    const std::vector<int64_t> &want) {
    return getIntsAttr(*current, name).value_or(std::move(dflt)) == want;
  };
  if (const onnx::AttributeProto *pad = findAttribute(*current, "auto_pad"))
    if (pad->s() != "NOTSET" && pad->s() != "VALID")
      return fail("auto_pad " + pad->s() + only);
  if (!attrIs("kernel_shape", {kh, kw}, {kh, kw}) ||
      !attrIs("dilations", {1, 1}, {1, 1}) ||
      !attrIs("pads", {0, 0, 0, 0}, {0, 0, 0, 0}))
    return fail(Twine("kernel_shape, dilations or pads") + only);
  if (!attrIs("strides", {1, 1}, {kh, kw}))
    return fail(Twine("strides other than the kernel") + only);
  if (height % kh || width % kw)
    return fail("the image size " + Twine(height) + "x" + Twine(width) +
                " is not a multiple of the patch " + Twine(kh) + "x" +
                Twine(kw));
  const int64_t rows = height / kh, cols = width / kw;
  const int64_t patch = channels * kh * kw;
  auto pixels = syms.mul(sx[0], rows * cols);
  if (!pixels)
    return fail("the number of patches overflows");
  // [N, C, H, W] -> [N, rows, cols, C, kh, kw] -> [N * rows * cols, C*kh*kw]
  Value patches = reshapeTo(x, {sx[0], channels, rows, kh, cols, kw});
  patches = transpose(patches, {0, 2, 4, 1, 3, 5});
  patches = reshapeTo(patches, {*pixels, patch});
  // [M, C, kh, kw] -> [C*kh*kw, M]
  Value filtersT = transpose(reshapeTo(w, {filters, patch}), {1, 0});
  Value y = matmul2d(patches, filtersT);
  if (hasInput(2)) {
    auto bias = input(2);
    if (!bias)
      return bias.takeError();
    if (dimsOf(*bias) != ArrayRef<int64_t>{filters})
      return fail("the bias must be [" + Twine(filters) + "]");
    Type elem = tx.getElementType();
    y = linalg::AddOp::create(
            b, loc, ValueRange{y, broadcastTo(*bias, {*pixels, filters})},
            ValueRange{empty({*pixels, filters}, elem)})
            .getResult(0);
  }
  // [N * rows * cols, M] -> [N, M, rows, cols]
  y = reshapeTo(y, {sx[0], rows, cols, filters});
  return transpose(y, {0, 3, 1, 2});
}

/// The letters of one Einsum term; nullopt for what the importer does not
/// read (an ellipsis, a repeated letter: a diagonal).
static std::optional<std::string> einsumTerm(StringRef term) {
  term = term.trim();
  std::string letters;
  for (char c : term) {
    if (!std::isalpha(static_cast<unsigned char>(c)) ||
        letters.find(c) != std::string::npos)
      return std::nullopt;
    letters.push_back(c);
  }
  return letters;
}

Expected<Value> Importer::importEinsum(StringRef op, ArrayRef<Value> in) {
  const onnx::AttributeProto *attr = findAttribute(*current, "equation");
  std::string equation = attr ? attr->s() : "";
  auto unsupported = [&](const Twine &why) {
    return fail("equation '" + equation + "' is not supported: " + why +
                " (the importer reads contractions of two operands such as "
                "'bhqd,bhkd->bhqk' and transposes such as 'ij->ji')");
  };
  StringRef eq(equation);
  auto [lhs, out] = eq.split("->");
  if (!eq.contains("->"))
    return unsupported("no explicit output ('->')");
  SmallVector<StringRef> termText;
  lhs.split(termText, ',');
  if (termText.size() != static_cast<size_t>(current->input_size()))
    return fail("equation '" + equation + "' has " + Twine(termText.size()) +
                " operands, the node " + Twine(current->input_size()));
  if (termText.size() > 2)
    return unsupported("more than two operands");
  SmallVector<std::string> terms;
  for (StringRef t : termText) {
    auto letters = einsumTerm(t);
    if (!letters)
      return unsupported("an ellipsis or a repeated index");
    terms.push_back(*letters);
  }
  auto outLetters = einsumTerm(out);
  if (!outLetters)
    return unsupported("an ellipsis or a repeated output index");
  SmallVector<Value> operands;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto v = input(i);
    if (!v)
      return v.takeError();
    if (!isa<FloatType>(typeOf(*v).getElementType()))
      return fail("expects float operands");
    if (typeOf(*v).getRank() != static_cast<int64_t>(terms[i].size()))
      return fail("operand " + Twine(i) + " has rank " +
                  Twine(typeOf(*v).getRank()) + ", but its term '" + terms[i] +
                  "' has " + Twine(terms[i].size()) + " indices");
    operands.push_back(*v);
  }
  // Each letter's extent, the same wherever it appears.
  llvm::DenseMap<char, int64_t> extent;
  for (size_t i = 0; i < terms.size(); ++i) {
    SmallVector<int64_t> dims = dimsOf(operands[i]);
    for (size_t k = 0; k < terms[i].size(); ++k) {
      auto [it, inserted] = extent.try_emplace(terms[i][k], dims[k]);
      if (!inserted && it->second != dims[k])
        return fail("index '" + Twine(terms[i][k]) + "' of equation '" +
                    equation + "' has extents " + syms.str(it->second) +
                    " and " + syms.str(dims[k]));
    }
  }
  for (char c : *outLetters)
    if (!extent.count(c))
      return unsupported("output index '" + Twine(c) + "' is in no operand");
  auto permOf = [](StringRef from, StringRef to) {
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(static_cast<int64_t>(from.find(c)));
    return perm;
  };
  auto isIdentity = [](ArrayRef<int64_t> perm) {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int64_t>(i))
        return false;
    return true;
  };
  auto permute = [&](Value v, StringRef from, StringRef to) {
    SmallVector<int64_t> perm = permOf(from, to);
    return isIdentity(perm) ? v : transpose(v, perm);
  };
  if (terms.size() == 1) {
    if (terms[0].size() != outLetters->size())
      return unsupported("a reduction of one operand");
    return permute(operands[0], terms[0], *outLetters);
  }
  // Two operands: batch letters (in both and the output), contracted ones
  // (in both, not the output) and each side's free ones: a batched matmul
  // of [batch, M, K] x [batch, K, N] between transposes and reshapes.
  StringRef a = terms[0], c = terms[1], o = *outLetters;
  std::string batch, contracted, freeA, freeC;
  for (char l : a) {
    bool inC = c.contains(l), inO = o.contains(l);
    if (inC && inO)
      batch.push_back(l);
    else if (inC)
      contracted.push_back(l);
    else if (inO)
      freeA.push_back(l);
    else
      return unsupported("index '" + Twine(l) +
                         "' is summed within one operand");
  }
  for (char l : c)
    if (!a.contains(l)) {
      if (!o.contains(l))
        return unsupported("index '" + Twine(l) +
                           "' is summed within one operand");
      freeC.push_back(l);
    }
  auto product = [&](StringRef letters) -> std::optional<int64_t> {
    SmallVector<int64_t> dims;
    for (char l : letters)
      dims.push_back(extent[l]);
    return syms.product(dims);
  };
  auto bsz = product(batch), m = product(freeA), k = product(contracted),
       n = product(freeC);
  if (!bsz || !m || !k || !n)
    return fail("the sizes of equation '" + equation + "' overflow");
  Type elem = typeOf(operands[0]).getElementType();
  if (elem != typeOf(operands[1]).getElementType())
    return fail("operands have different element types");
  Value l3 = reshapeTo(permute(operands[0], a, batch + freeA + contracted),
                       {*bsz, *m, *k});
  Value r3 = reshapeTo(permute(operands[1], c, batch + contracted + freeC),
                       {*bsz, *k, *n});
  Value prod =
      linalg::BatchMatmulOp::create(b, loc, ValueRange{l3, r3},
                                    ValueRange{zeros({*bsz, *m, *n}, elem)})
          .getResult(0);
  std::string natural = batch + freeA + freeC;
  SmallVector<int64_t> naturalShape;
  for (char l : natural)
    naturalShape.push_back(extent[l]);
  return permute(reshapeTo(prod, naturalShape), natural, o);
}

void attnc::onnx_frontend::registerMatMulOps(OpRegistry &r) {
  constexpr int kMin = kMinOpset, kMax = kLatestOpset;
  r.add("MatMul", kMin, kMax, "", valueImporter<&Importer::importMatMul, 2>);
  r.add("Gemm", kMin, kMax, "alpha beta transA transB",
        valueImporter<&Importer::importGemm, 2>);
  r.add("Conv", kMin, kMax,
        "auto_pad dilations group kernel_shape pads strides",
        valueImporter<&Importer::importConv, 2>);
  r.add("Einsum", kMin, kMax, "equation",
        valueImporter<&Importer::importEinsum, 0>);
}
