//===- RaiseMatchers.cpp - matchers for raising imported graphs -----------===//

#include "RaiseMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

/// True if `reassociation` only groups unit dimensions of `expanded` with at
/// most one non-unit dimension each.
static bool isUnitReassociation(ArrayRef<ReassociationIndices> reassociation,
                                ArrayRef<int64_t> expanded) {
  for (const ReassociationIndices &group : reassociation) {
    int nonUnit = 0;
    for (int64_t dim : group) {
      if (ShapedType::isDynamic(expanded[dim]))
        return false;
      if (expanded[dim] != 1)
        ++nonUnit;
    }
    if (nonUnit > 1)
      return false;
  }
  return true;
}

Value mlir::attn::raise::stripUnitReshapes(Value v) {
  while (true) {
    if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
      if (!isUnitReassociation(collapse.getReassociationIndices(),
                               collapse.getSrcType().getShape()))
        return v;
      v = collapse.getSrc();
      continue;
    }
    if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
      if (!isUnitReassociation(expand.getReassociationIndices(),
                               expand.getResultType().getShape()))
        return v;
      v = expand.getSrc();
      continue;
    }
    return v;
  }
}

std::optional<double> mlir::attn::raise::getSplatValue(Value v) {
  while (true) {
    v = stripUnitReshapes(v);
    auto broadcast = v.getDefiningOp<linalg::BroadcastOp>();
    if (!broadcast || !broadcast.hasPureTensorSemantics())
      break;
    v = broadcast.getInput();
  }
  return getConstantSplatValue(v);
}

std::optional<double> mlir::attn::raise::getConstantSplatValue(Value v) {
  Attribute attr;
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    if (!fill.hasPureTensorSemantics())
      return std::nullopt;
    v = fill.getInputs()[0];
  }
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    return floatAttr.getValueAsDouble();
  auto dense = dyn_cast<DenseFPElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return std::nullopt;
  APFloat splat = dense.getSplatValue<APFloat>();
  bool losesInfo = false;
  splat.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return splat.convertToDouble();
}

bool mlir::attn::raise::isSplatNear(Value v, double expected,
                                    double relTolerance) {
  std::optional<double> value = getSplatValue(v);
  if (!value)
    return false;
  return std::fabs(*value - expected) <=
         std::max(relTolerance * std::fabs(expected), 1e-7);
}

bool mlir::attn::raise::isZeroTensor(Value init) {
  std::optional<double> value = getSplatValue(init);
  return value && *value == 0.0;
}

Value mlir::attn::raise::matchLastDimBroadcast(Value v) {
  auto broadcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || !broadcast.hasPureTensorSemantics())
    return Value();
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> dims = broadcast.getDimensions();
  if (dims.size() != 1 || dims[0] != type.getRank() - 1)
    return Value();
  return stripUnitReshapes(broadcast.getInput());
}

Value mlir::attn::raise::matchVectorBroadcast(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 1)
    return v;
  auto broadcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || !broadcast.hasPureTensorSemantics())
    return Value();
  Value input = broadcast.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  if (inputType.getRank() != 1 ||
      inputType.getDimSize(0) != type.getDimSize(type.getRank() - 1))
    return Value();
  return input;
}

/// True if `block` computes `arith.addf` of its two arguments.
static bool isAddReduction(Block &block) {
  if (block.getNumArguments() != 2 ||
      !llvm::hasSingleElement(block.without_terminator()))
    return false;
  auto add = dyn_cast<arith::AddFOp>(block.front());
  if (!add || block.getTerminator()->getNumOperands() != 1 ||
      block.getTerminator()->getOperand(0) != add.getResult())
    return false;
  return (add.getLhs() == block.getArgument(0) &&
          add.getRhs() == block.getArgument(1)) ||
         (add.getLhs() == block.getArgument(1) &&
          add.getRhs() == block.getArgument(0));
}

Value mlir::attn::raise::matchLastDimMean(Value v) {
  v = stripUnitReshapes(v);
  Value sum;
  double factor = 0.0;
  if (auto div = matchBinary<linalg::DivOp>(v)) {
    std::optional<double> count = getSplatValue(div->second);
    if (!count || *count == 0.0)
      return Value();
    sum = div->first;
    factor = 1.0 / *count;
  } else if (auto mul = matchBinary<linalg::MulOp>(v)) {
    for (auto [lhs, rhs] : {*mul, std::make_pair(mul->second, mul->first)}) {
      if (std::optional<double> f = getSplatValue(rhs)) {
        sum = lhs;
        factor = *f;
        break;
      }
    }
    if (!sum)
      return Value();
  } else {
    return Value();
  }
  auto reduce = sum.getDefiningOp<linalg::ReduceOp>();
  if (!reduce || !reduce.hasPureTensorSemantics() ||
      reduce.getNumDpsInputs() != 1 || reduce->getNumResults() != 1 ||
      !isZeroTensor(reduce.getDpsInits()[0]) ||
      !isAddReduction(reduce.getCombiner().front()))
    return Value();
  Value x = reduce.getInputs()[0];
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> dims = reduce.getDimensions();
  int64_t last = xType.getRank() - 1;
  if (dims.size() != 1 || dims[0] != last || xType.isDynamicDim(last))
    return Value();
  double expected = 1.0 / static_cast<double>(xType.getDimSize(last));
  if (std::fabs(factor - expected) > 1e-6 * expected)
    return Value();
  return x;
}

LogicalResult
mlir::attn::raise::applyRaisingPatterns(Operation *op,
                                        RewritePatternSet &&patterns) {
  GreedyRewriteConfig config;
  config.enableFolding(false).enableConstantCSE(false);
  return applyPatternsGreedily(op, std::move(patterns), config);
}
