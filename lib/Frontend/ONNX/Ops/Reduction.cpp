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

Expected<Value> Importer::importLayerNorm(StringRef op, ArrayRef<Value> in) {
  for (int i = 1; i < current->output_size(); ++i)
    if (!current->output(i).empty())
      return fail("the Mean and InvStdDev outputs are not supported");
  Value x = in[0], scale = in[1];
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
  Type elem = type.getElementType();
  if (!typeOf(scale).hasStaticShape() || typeOf(scale).getNumElements() != d)
    return fail("scale must have " + Twine(d) + " elements");
  Value gamma = reshapeTo(scale, {d});
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
  // The attribute is a float; its shortest decimal form (1e-05, not
  // 9.99999974e-06) is what the exporter meant.
  char epsText[32] = {};
  std::to_chars(epsText, epsText + sizeof(epsText) - 1,
                getFloatAttr(*current, "epsilon", 1e-5f));
  double eps = std::strtod(epsText, nullptr);
  return attn::LayerNormOp::create(b, loc, type, x, gamma, beta,
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
  bool fromInput = opset >= 18;
  auto axesOr = axesArgument(fromInput, /*required=*/false);
  if (!axesOr)
    return axesOr.takeError();
  std::vector<int64_t> axes = std::move(*axesOr);
  if (axes.empty()) {
    if (fromInput && getIntAttr(*current, "noop_with_empty_axes", 0)) {
      return x;
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (Error err = normalizeAxes(axes, rank, /*mergeRepeats=*/true))
    return err;
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

void attnc::onnx_frontend::registerReductionOps(OpRegistry &registry) {
  registry.add({"Softmax", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importSoftmax, 1>});
  registry.add({"LayerNormalization", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importLayerNorm, 2>});
  registry.add({"ReduceMean", kMinOpset, kLatestOpset,
                valueImporter<&Importer::importReduceMean, 1>});
}
