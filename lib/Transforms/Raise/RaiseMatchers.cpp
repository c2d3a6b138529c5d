//===- RaiseMatchers.cpp - matchers for raising imported graphs -----------===//

#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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
      // A dynamic dimension counts as non-unit.
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

namespace {
/// A run-time size as a product: a constant times dimensions of block
/// arguments (the model's inputs) and opaque values, sorted.
struct SizeKey {
  int64_t coeff = 1;
  SmallVector<std::string> atoms;
  bool operator==(const SizeKey &o) const {
    return coeff == o.coeff && atoms == o.atoms;
  }
  SizeKey &operator*=(const SizeKey &o) {
    coeff *= o.coeff;
    atoms.append(o.atoms.begin(), o.atoms.end());
    llvm::sort(atoms);
    return *this;
  }
};
} // namespace

static std::string atomOf(const void *p, int64_t i, const char *what) {
  return std::string(what) + std::to_string(reinterpret_cast<uintptr_t>(p)) +
         ":" + std::to_string(i);
}

static SizeKey keyOfDim(Value v, int64_t d, int depth);

/// A sum of sizes: the constant when every term is one, otherwise one atom
/// naming the sorted terms, so that `P + S` and `S + P` (an addi, or a
/// concatenation's length) compare equal.
static SizeKey sumKey(ArrayRef<SizeKey> terms) {
  SizeKey key;
  key.coeff = 0;
  SmallVector<std::string> named;
  for (const SizeKey &t : terms) {
    if (t.atoms.empty()) {
      key.coeff += t.coeff;
      continue;
    }
    std::string text = std::to_string(t.coeff);
    for (const std::string &atom : t.atoms)
      text += "*" + atom;
    named.push_back(text);
  }
  if (named.empty())
    return key;
  llvm::sort(named);
  std::string atom = "sum(" + std::to_string(key.coeff);
  for (const std::string &text : named)
    atom += "+" + text;
  key.coeff = 1;
  key.atoms.push_back(atom + ")");
  return key;
}

static SizeKey keyOfIndex(Value idx, int depth) {
  SizeKey key;
  if (depth > 64) {
    key.atoms.push_back(atomOf(idx.getAsOpaquePointer(), 0, "v"));
    return key;
  }
  APInt c;
  if (matchPattern(idx, m_ConstantInt(&c))) {
    key.coeff = c.getSExtValue();
    return key;
  }
  if (auto dim = idx.getDefiningOp<tensor::DimOp>())
    if (std::optional<int64_t> axis = dim.getConstantIndex())
      return keyOfDim(dim.getSource(), *axis, depth + 1);
  if (auto mul = idx.getDefiningOp<arith::MulIOp>()) {
    key = keyOfIndex(mul.getLhs(), depth + 1);
    key *= keyOfIndex(mul.getRhs(), depth + 1);
    return key;
  }
  if (auto cast = idx.getDefiningOp<arith::IndexCastOp>())
    return keyOfIndex(cast.getIn(), depth + 1);
  if (auto add = idx.getDefiningOp<arith::AddIOp>())
    return sumKey({keyOfIndex(add.getLhs(), depth + 1),
                   keyOfIndex(add.getRhs(), depth + 1)});
  key.atoms.push_back(atomOf(idx.getAsOpaquePointer(), 0, "v"));
  return key;
}

static SizeKey keyOfSize(OpFoldResult size, int depth) {
  if (auto v = dyn_cast<Value>(size))
    return keyOfIndex(v, depth);
  SizeKey key;
  key.coeff = cast<IntegerAttr>(cast<Attribute>(size)).getInt();
  return key;
}

static SizeKey keyOfDim(Value v, int64_t d, int depth) {
  SizeKey key;
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(d)) {
    key.coeff = type.getDimSize(d);
    return key;
  }
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    // Function arguments' dimensions that the importer named alike (ONNX
    // dim_params) have one size.
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (func && arg.getOwner()->isEntryBlock())
      if (auto names = func.getArgAttrOfType<ArrayAttr>(
              arg.getArgNumber(),
              mlir::attn::AttnDialect::DimSymbolsAttrHelper::getNameStr());
          names && d < static_cast<int64_t>(names.size()))
        if (auto name = dyn_cast<StringAttr>(names[d]);
            name && !name.getValue().empty()) {
          key.atoms.push_back("argsym:" + name.getValue().str());
          return key;
        }
    key.atoms.push_back(
        atomOf(arg.getOwner(), arg.getArgNumber() * 64 + d, "arg"));
    return key;
  }
  Operation *op = v.getDefiningOp();
  auto opaque = [&] {
    key.atoms.push_back(atomOf(v.getAsOpaquePointer(), d, "r"));
    return key;
  };
  if (depth > 64)
    return opaque();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    if (OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(v)))
      return keyOfDim(init->get(), d, depth + 1);
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return keyOfIndex(empty.getDynamicSize(d), depth + 1);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return keyOfSize(expand.getMixedOutputShape()[d], depth + 1);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (int64_t s : groups[d])
      key *= keyOfDim(collapse.getSrc(), s, depth + 1);
    return key;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (slice.getDroppedDims().any())
      return opaque();
    return keyOfSize(slice.getMixedSizes()[d], depth + 1);
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    // The other dims agree across the inputs; a computed input's trace back
    // to the sizes the rest of the function uses, while a block argument's
    // (a KV cache's past) are only known as themselves.
    if (static_cast<int64_t>(concat.getDim()) != d) {
      Value pick = concat.getInputs().front();
      for (Value in : concat.getInputs())
        if (!isa<BlockArgument>(in))
          pick = in;
      return keyOfDim(pick, d, depth + 1);
    }
    SmallVector<SizeKey> terms;
    for (Value in : concat.getInputs())
      terms.push_back(keyOfDim(in, d, depth + 1));
    return sumKey(terms);
  }
  // A lookup's rows are its ids' positions.
  if (auto lookup = dyn_cast<mlir::attn::EmbeddingOp>(op);
      lookup && d + 1 < type.getRank())
    return keyOfDim(lookup.getIds(), d, depth + 1);
  // attn ops keep the leading dimensions of their first operand (all of
  // them when the types agree: softmax, norms, activations).
  if (op->getDialect()->getNamespace() == "attn" && op->getNumOperands()) {
    auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (in && in.getRank() == type.getRank() &&
        (d + 1 < type.getRank() || in == type))
      return keyOfDim(op->getOperand(0), d, depth + 1);
  }
  return opaque();
}

bool mlir::attn::raise::sameDim(Value a, int64_t da, Value b, int64_t db) {
  return keyOfDim(a, da, 0) == keyOfDim(b, db, 0);
}

bool mlir::attn::raise::sameSize(OpFoldResult size, Value v, int64_t d) {
  return keyOfSize(size, 0) == keyOfDim(v, d, 0);
}

bool mlir::attn::raise::sameSize(OpFoldResult a, OpFoldResult b) {
  return keyOfSize(a, 0) == keyOfSize(b, 0);
}

bool mlir::attn::raise::sameShape(Value a, Value b) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getRank() != tb.getRank())
    return false;
  for (int64_t d = 0; d < ta.getRank(); ++d)
    if (!sameDim(a, d, b, d))
      return false;
  return true;
}

std::optional<int64_t> mlir::attn::raise::DimEnv::size(OpFoldResult size) {
  return evaluate(keyOfSize(size, 0));
}

std::optional<int64_t> mlir::attn::raise::DimEnv::dim(Value v, int64_t d) {
  return evaluate(keyOfDim(v, d, 0));
}

std::optional<SmallVector<int64_t>> mlir::attn::raise::DimEnv::shape(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::optional<int64_t> size = dim(v, d);
    if (!size)
      return std::nullopt;
    out.push_back(*size);
  }
  return out;
}

template <typename Key>
std::optional<int64_t> mlir::attn::raise::DimEnv::evaluate(const Key &key) {
  int64_t value = key.coeff;
  for (const std::string &atom : key.atoms) {
    // Only argument dimensions take chosen sizes; an opaque size cannot be
    // evaluated.
    if (!StringRef(atom).starts_with("arg"))
      return std::nullopt;
    auto [it, inserted] = atoms.try_emplace(atom, 0);
    if (inserted)
      it->second = sizes[std::min(atoms.size() - 1, sizes.size() - 1)] +
                   static_cast<int64_t>(atoms.size() > sizes.size()
                                            ? atoms.size() - sizes.size()
                                            : 0);
    value *= it->second;
  }
  return value;
}

/// If `v` is a 1-D integer linalg.generic with no inputs yielding
/// `start + index * 1` (Range as imported): the start, a constant or a value
/// defined outside the generic.
std::optional<OpFoldResult> mlir::attn::raise::matchRangeStart(Value v) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 0 ||
      generic->getNumResults() != 1 || generic.getNumLoops() != 1 ||
      generic.getNumParallelLoops() != 1 ||
      !generic.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  Block &body = generic.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  auto add = yielded.getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  // index * 1 (or the index itself), cast to the element type.
  auto isIndex = [&](Value x) {
    if (auto mul = x.getDefiningOp<arith::MulIOp>()) {
      if (matchPattern(mul.getRhs(), m_One()))
        x = mul.getLhs();
      else if (matchPattern(mul.getLhs(), m_One()))
        x = mul.getRhs();
      else
        return false;
    }
    auto cast = x.getDefiningOp<arith::IndexCastOp>();
    auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
    return index && index.getDim() == 0;
  };
  Value start;
  if (isIndex(add.getRhs()))
    start = add.getLhs();
  else if (isIndex(add.getLhs()))
    start = add.getRhs();
  else
    return std::nullopt;
  APInt c;
  if (matchPattern(start, m_ConstantInt(&c)))
    return OpFoldResult(IntegerAttr::get(start.getType(), c));
  if (start.getParentRegion() == &generic.getRegion())
    return std::nullopt;
  return OpFoldResult(start);
}

bool mlir::attn::raise::isRotatedHalf(Value rotated, Value x, int64_t half) {
  auto concat = rotated.getDefiningOp<tensor::ConcatOp>();
  if (!concat || concat.getDim() != 3 || concat.getInputs().size() != 2)
    return false;
  Value upper = matchUnary<linalg::NegFOp>(concat.getInputs()[0]);
  auto isHalf = [&](Value v, int64_t offset) {
    auto slice = v ? v.getDefiningOp<tensor::ExtractSliceOp>() : nullptr;
    if (!slice || slice.getSource() != x || !slice.hasUnitStride() ||
        slice.getDroppedDims().any())
      return false;
    for (auto [d, o] : llvm::enumerate(slice.getMixedOffsets()))
      if (!isConstantIntValue(o, d == 3 ? offset : 0))
        return false;
    for (auto [d, s] : llvm::enumerate(slice.getMixedSizes()))
      if (d == 3 ? !isConstantIntValue(s, half) : !sameSize(s, x, d))
        return false;
    return true;
  };
  return isHalf(upper, half) && isHalf(concat.getInputs()[1], 0);
}

SmallVector<mlir::attn::raise::RotaryTerms>
mlir::attn::raise::matchRotaryTerms(Operation *add) {
  SmallVector<RotaryTerms> found;
  Value sum = add->getResult(0);
  std::optional<std::pair<Value, Value>> terms;
  if (auto attnAdd = dyn_cast<AddOp>(add))
    terms = std::make_pair(attnAdd.getLhs(), attnAdd.getRhs());
  else
    terms = matchBinary<linalg::AddOp>(sum);
  auto type = dyn_cast<RankedTensorType>(sum.getType());
  if (!terms || !type || type.getRank() != 4 || type.isDynamicDim(3) ||
      type.getDimSize(3) % 2 != 0)
    return found;
  int64_t half = type.getDimSize(3) / 2;
  for (auto [cosTerm, sinTerm] :
       {*terms, std::make_pair(terms->second, terms->first)}) {
    auto cosMul = matchBinary<linalg::MulOp>(cosTerm);
    auto sinMul = matchBinary<linalg::MulOp>(sinTerm);
    if (!cosMul || !sinMul)
      continue;
    for (auto [x, cosTable] :
         {*cosMul, std::make_pair(cosMul->second, cosMul->first)})
      for (auto [rotated, sinTable] :
           {*sinMul, std::make_pair(sinMul->second, sinMul->first)})
        if (isRotatedHalf(rotated, x, half))
          found.push_back({x, cosTable, sinTable});
  }
  return found;
}
