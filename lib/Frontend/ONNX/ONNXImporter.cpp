//===- ONNXImporter.cpp - ONNX graph -> attn IR ---------------------------===//
//
// Walks the graph in its (topological) node order. Every value is either a
// host constant (initializers, Constant nodes, anything computed from
// constants only, and Shape of any value) or an SSA value of a ranked
// tensor. Constants are materialized where compute first uses them: large
// float initializers as `attn.weight`, everything else as `arith.constant`.
// The emitted form is the contract with the raising passes (see
// docs/onnx.md).
//
// A symbolic input dimension that `--input-shape` does not fix stays
// dynamic: every dimension the importer handles is a constant or a handle
// of a polynomial over the symbols (SymbolicDims.h), shape vectors fold on
// them, and only where a size must exist at run time (tensor.empty, slice
// sizes, reshape output shapes, Range) is it materialized, as arithmetic on
// `tensor.dim` of the argument that defines each symbol.
//
//===----------------------------------------------------------------------===//

#include "attnc/Frontend/ONNX/ONNXImporter.h"

#include "HostTensor.h"
#include "ModelLoader.h"

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

namespace {

/// Float initializers with more elements than this are run-time weights.
constexpr int64_t kMaxInlineFloatElements = 16;

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

class Importer {
public:
  Importer(StringRef path, MLIRContext &context, const ImportOptions &options,
           onnx::ModelProto &model)
      : path(path.str()), fileName(llvm::sys::path::filename(path).str()),
        context(context), options(options), model(model), b(&context) {}

  Expected<ImportedModel> run();

private:
  /// One ONNX value: a host constant or an SSA value (or both, once a
  /// constant has been materialized).
  struct Entry {
    std::optional<HostTensor> constant;
    Value value;
    /// Large float initializers: bound by name at run time, never folded.
    bool isWeight = false;
    std::string weightName;
    /// A float32 weight's initializer: its values are read from there when
    /// the weight is written, never decoded into `constant` (type and shape
    /// only).
    onnx::TensorProto *weightSource = nullptr;
  };

  // Errors.
  /// A shape in errors: `[batch, sequence, 32]`.
  std::string shapeText(ArrayRef<int64_t> dims) const {
    return syms.shapeStr(dims);
  }
  /// An error about symbolic dimensions, with the way out.
  Error failSymbolic(const Twine &message) {
    return fail(message + "; fix the symbolic dimensions with --input-shape "
                          "name=AxB...");
  }
  Error fail(const Twine &message) {
    std::string where = fileName;
    std::string what;
    if (current) {
      where += ":" + nodeName(*current);
      what =
          " (" + current->op_type() + ", opset " + std::to_string(opset) + ")";
    }
    return llvm::createStringError(where + ": error: " + message.str() + what);
  }

  /// Makes `axis`, which must be in [-rank, rank), non-negative.
  Error normalizeAxis(int64_t &axis, int64_t rank) {
    if (axis < -rank || axis >= rank)
      return fail("axis " + Twine(axis) + " is out of range");
    if (axis < 0)
      axis += rank;
    return Error::success();
  }

  /// The integer attribute `name` (default `dflt`) as an axis of a rank-
  /// `rank` tensor, made non-negative.
  Expected<int64_t> axisAttr(StringRef name, int64_t dflt, int64_t rank) {
    int64_t axis = getIntAttr(*current, name, dflt);
    if (Error err = normalizeAxis(axis, rank))
      return std::move(err);
    return axis;
  }

  /// The `axes` of Squeeze/Unsqueeze/Reduce*: from input 1 when
  /// `fromInput` (where the opset moved them; optional unless `required`),
  /// else from the attribute. As written: not yet normalized.
  Expected<std::vector<int64_t>> axesArgument(bool fromInput, bool required) {
    if (fromInput) {
      if (!required && !hasInput(1))
        return std::vector<int64_t>();
      return constantInts(1, "axes");
    }
    if (auto a = getIntsAttr(*current, "axes"))
      return *a;
    return std::vector<int64_t>();
  }

  /// Normalizes `axes` of a rank-`rank` tensor and sorts them; a repeated
  /// axis is an error unless `mergeRepeats`.
  Error normalizeAxes(std::vector<int64_t> &axes, int64_t rank,
                      bool mergeRepeats = false) {
    for (int64_t &a : axes)
      if (Error err = normalizeAxis(a, rank))
        return err;
    llvm::sort(axes);
    auto repeat = std::adjacent_find(axes.begin(), axes.end());
    if (repeat != axes.end() && !mergeRepeats)
      return fail("axes repeat");
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    return Error::success();
  }

  std::string nodeName(const onnx::NodeProto &node) {
    if (!node.name().empty())
      return node.name();
    return node.op_type() + "#" + std::to_string(currentIndex);
  }

  Location nodeLoc(const onnx::NodeProto &node) {
    return NameLoc::get(b.getStringAttr(nodeName(node)), fileLoc());
  }
  Location fileLoc() { return FileLineColLoc::get(&context, fileName, 0, 0); }

  // Values.
  Entry *lookup(const std::string &name) {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
  Expected<Type> elementType(int32_t dtype);
  Expected<Value> materialize(Entry &entry);
  Expected<Value> input(size_t i);
  /// The constant behind input i (nullptr when omitted, a run-time value or
  /// a weight).
  const HostTensor *constantInput(size_t i);
  bool hasInput(size_t i) {
    return i < static_cast<size_t>(current->input_size()) &&
           !current->input(i).empty();
  }
  Expected<SmallVector<int64_t>> shapeOf(size_t i);
  Expected<std::vector<int64_t>> constantInts(size_t i, StringRef what);
  void setOutput(size_t i, Value v) {
    if (i < static_cast<size_t>(current->output_size()) &&
        !current->output(i).empty())
      values[current->output(i)].value = v;
  }
  void setConstantOutput(size_t i, HostTensor t) {
    if (i < static_cast<size_t>(current->output_size()) &&
        !current->output(i).empty()) {
      Entry &e = values[current->output(i)];
      e.constant = std::move(t);
      e.value = {};
    }
  }

  // IR helpers.
  static RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  /// The tensor type of `dims` (symbolic ones dynamic).
  static RankedTensorType tensorType(ArrayRef<int64_t> dims, Type elem) {
    SmallVector<int64_t> shape;
    for (int64_t d : dims)
      shape.push_back(isSymbolic(d) ? ShapedType::kDynamic : d);
    return RankedTensorType::get(shape, elem);
  }
  /// Records the (symbolic) dims of `v`.
  Value record(Value v, ArrayRef<int64_t> dims) {
    valueDims[v] = SmallVector<int64_t>(dims);
    return v;
  }
  /// The dims of an SSA value: recorded where it was built, or those of the
  /// init it is computed into (destination-style ops), or of the operand
  /// whose type it shares (attn elementwise ops, softmax, norms).
  SmallVector<int64_t> dimsOf(Value v) {
    auto type = typeOf(v);
    if (type.hasStaticShape())
      return SmallVector<int64_t>(type.getShape());
    auto it = valueDims.find(v);
    if (it != valueDims.end())
      return it->second;
    if (auto r = dyn_cast<OpResult>(v)) {
      Operation *op = r.getOwner();
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
        if (OpOperand *init = dps.getTiedOpOperand(r))
          return dimsOf(init->get());
      if (op->getNumOperands() && op->getOperand(0).getType() == v.getType())
        return dimsOf(op->getOperand(0));
    }
    llvm_unreachable("importer: a dynamic value without recorded dims");
  }
  /// The run-time value of symbol `id`: tensor.dim of its argument.
  Value symbolValue(unsigned id);
  /// A dim as an index value (arith on the symbols' tensor.dims).
  Value indexValue(int64_t dim);
  OpFoldResult foldResult(int64_t dim) {
    if (isSymbolic(dim))
      return indexValue(dim);
    return b.getIndexAttr(dim);
  }
  SmallVector<OpFoldResult> foldResults(ArrayRef<int64_t> dims) {
    SmallVector<OpFoldResult> out;
    for (int64_t d : dims)
      out.push_back(foldResult(d));
    return out;
  }
  Value empty(ArrayRef<int64_t> shape, Type elem) {
    SmallVector<Value> sizes;
    for (int64_t d : shape)
      if (isSymbolic(d))
        sizes.push_back(indexValue(d));
    return record(
        tensor::EmptyOp::create(b, loc, tensorType(shape, elem), sizes), shape);
  }
  /// A tensor of `shape` filled with `scalar`.
  Value fill(ArrayRef<int64_t> shape, Value scalar) {
    return linalg::FillOp::create(b, loc, ValueRange{scalar},
                                  ValueRange{empty(shape, scalar.getType())})
        .getResult(0);
  }
  Value zeros(ArrayRef<int64_t> shape, Type elem) {
    return fill(shape, arith::ConstantOp::create(b, loc, b.getZeroAttr(elem)));
  }
  Value splat(ArrayRef<int64_t> shape, Type elem, double value);
  Value broadcastTo(Value v, ArrayRef<int64_t> shape);
  Value reshapeTo(Value v, ArrayRef<int64_t> shape);
  Value transpose(Value v, ArrayRef<int64_t> perm);
  Value staticSlice(Value v, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                    ArrayRef<int64_t> strides);
  /// Output `i` as a slice of input 0: folded when the input is a host
  /// constant, else a tensor.extract_slice.
  Error setSliceOutput(size_t i, ArrayRef<int64_t> offsets,
                       ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides);
  Value matmul2d(Value a, Value bm);
  Value generic(ValueRange ins, ArrayRef<int64_t> shape, Type outElem,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body);

  // Nodes.
  Error importNode(const onnx::NodeProto &node);
  Expected<Value> importElementwiseBinary(StringRef op, ArrayRef<Value> in);
  Expected<Value> importUnary(StringRef op, ArrayRef<Value> in);
  Expected<Value> importMatMul(StringRef op, ArrayRef<Value> in);
  Expected<Value> importGemm(StringRef op, ArrayRef<Value> in);
  Error importReshapeLike(StringRef op, ArrayRef<int64_t> shape);
  Error importSlice(StringRef op, ArrayRef<int64_t> shape);
  /// A Slice start or end clamped to [0, dim] (symbolically).
  Expected<int64_t> clampIndex(int64_t v, int64_t dim);
  /// Checks at run time that lo <= v (< or <= hi) where that depends on
  /// the symbols: a position the folding takes to lie inside a dimension
  /// (a `tril` buffer cut to the sequence). A failure ends the run with
  /// `what` (cf.assert, reported by libattnrt).
  void checkInside(int64_t v, int64_t lo, int64_t hi, bool inclusive,
                   const Twine &what);
  Error importSplit(StringRef op, ArrayRef<int64_t> shape);
  Error importGather(StringRef op, ArrayRef<int64_t> shape);
  Error importConcat();
  Expected<Value> importTranspose(StringRef op, ArrayRef<Value> in);
  Expected<Value> importSoftmax(StringRef op, ArrayRef<Value> in);
  Expected<Value> importLayerNorm(StringRef op, ArrayRef<Value> in);
  Expected<Value> importReduceMean(StringRef op, ArrayRef<Value> in);
  Expected<Value> importWhere(StringRef op, ArrayRef<Value> in);
  Expected<Value> importCast(StringRef op, ArrayRef<Value> in);
  Expected<Value> importCompare(StringRef op, ArrayRef<Value> in);
  Expected<Value> importExpand(StringRef op, ArrayRef<Value> in);
  Expected<Value> importTrilu(StringRef op, ArrayRef<Value> in);
  Error importShapeOf(StringRef op, ArrayRef<int64_t> shape);
  Error importConstant();
  /// Range and ConstantOfShape sized by symbolic dims (run-time tensors).
  Error importRange();
  Error importConstantOfShape();
  /// Computes the output shape of Reshape/Flatten/Squeeze/Unsqueeze.
  Expected<SmallVector<int64_t>> reshapeTarget(StringRef op,
                                               ArrayRef<int64_t> inShape);

  std::string path, fileName;
  MLIRContext &context;
  const ImportOptions &options;
  onnx::ModelProto &model;
  OpBuilder b;
  Location loc = UnknownLoc::get(&context);
  int opset = 0;
  const onnx::NodeProto *current = nullptr;
  int currentIndex = 0;
  std::map<std::string, Entry> values;
  std::vector<WeightTensor> weights;
  llvm::StringSet<> writtenWeights;

  // Symbolic dims.
  SymbolicDims syms;
  /// Per symbol: the argument and axis it is read from.
  std::vector<std::pair<unsigned, unsigned>> symbolSource;
  DenseMap<unsigned, Value> symbolValues;
  Block *entryBlock = nullptr;
  DenseMap<Value, SmallVector<int64_t>> valueDims;
};

Value Importer::symbolValue(unsigned id) {
  if (Value v = symbolValues.lookup(id))
    return v;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entryBlock);
  auto [arg, axis] = symbolSource[id];
  Value v = tensor::DimOp::create(b, fileLoc(), entryBlock->getArgument(arg),
                                  static_cast<int64_t>(axis));
  symbolValues[id] = v;
  return v;
}

Value Importer::indexValue(int64_t dim) {
  if (!isSymbolic(dim))
    return arith::ConstantIndexOp::create(b, loc, dim);
  Value sum;
  for (const auto &[term, coeff] : syms.poly(dim)) {
    Value t;
    for (unsigned s : term)
      t = t ? arith::MulIOp::create(b, loc, t, symbolValue(s)).getResult()
            : symbolValue(s);
    if (!t)
      t = arith::ConstantIndexOp::create(b, loc, coeff);
    else if (coeff != 1)
      t = arith::MulIOp::create(b, loc, t,
                                arith::ConstantIndexOp::create(b, loc, coeff));
    sum = sum ? arith::AddIOp::create(b, loc, sum, t).getResult() : t;
  }
  return sum;
}

Expected<Type> Importer::elementType(int32_t dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return fail("tensors of " + dataTypeName(dtype) + " are not supported");
  }
}

Expected<Value> Importer::materialize(Entry &entry) {
  if (entry.value)
    return entry.value;
  const HostTensor &t = *entry.constant;
  auto elem = elementType(t.dtype);
  if (!elem)
    return elem.takeError();
  auto type = RankedTensorType::get(t.shape, *elem);
  OpBuilder::InsertionGuard guard(b);
  if (entry.isWeight) {
    if (t.dtype != onnx::TensorProto::FLOAT)
      return fail("initializer '" + entry.weightName + "' is " +
                  dataTypeName(t.dtype) +
                  "; only float32 weights are supported");
    // Aliases (Identity of an initializer) bind the same tensor; the file
    // holds it once.
    if (writtenWeights.insert(entry.weightName).second) {
      WeightTensor w;
      w.name = entry.weightName;
      w.shape = t.shape;
      w.bytes = entry.weightSource ? takeFloat32Bytes(*entry.weightSource)
                                   : float32Bytes(t.floats);
      weights.push_back(std::move(w));
    }
    entry.value = attn::WeightOp::create(
        b, NameLoc::get(b.getStringAttr(entry.weightName), fileLoc()), type,
        b.getStringAttr(entry.weightName), nullptr, nullptr, nullptr, nullptr,
        nullptr, nullptr);
    return entry.value;
  }
  DenseElementsAttr attr;
  int64_t n = t.numElements();
  if (t.symbolic) {
    // A shape vector used as data: its elements computed from the symbols.
    SmallVector<Value> elems;
    for (int64_t i = 0; i < n; ++i)
      elems.push_back(
          arith::IndexCastOp::create(b, loc, *elem, indexValue(t.ints[i])));
    entry.value = tensor::FromElementsOp::create(b, loc, type, elems);
    return entry.value;
  }
  if (isa<FloatType>(*elem)) {
    const llvm::fltSemantics &sem = cast<FloatType>(*elem).getFloatSemantics();
    SmallVector<APFloat> vals;
    vals.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      APFloat v(t.floats[i]);
      bool lost;
      v.convert(sem, APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(v);
    }
    attr = DenseElementsAttr::get(type, vals);
  } else {
    unsigned width = (*elem).getIntOrFloatBitWidth();
    SmallVector<APInt> vals;
    vals.reserve(n);
    for (int64_t i = 0; i < n; ++i)
      vals.push_back(APInt(width, static_cast<uint64_t>(t.ints[i]),
                           /*isSigned=*/width > 1, /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(type, vals);
  }
  entry.value = arith::ConstantOp::create(b, loc, attr);
  return entry.value;
}

Expected<Value> Importer::input(size_t i) {
  if (!hasInput(i))
    return fail("input " + Twine(i) + " is missing");
  Entry *e = lookup(current->input(i));
  if (!e)
    return fail("input '" + current->input(i) + "' is not defined before use");
  return materialize(*e);
}

const HostTensor *Importer::constantInput(size_t i) {
  if (!hasInput(i))
    return nullptr;
  Entry *e = lookup(current->input(i));
  if (!e || !e->constant || e->isWeight)
    return nullptr;
  return &*e->constant;
}

Expected<SmallVector<int64_t>> Importer::shapeOf(size_t i) {
  if (!hasInput(i))
    return fail("input " + Twine(i) + " is missing");
  Entry *e = lookup(current->input(i));
  if (!e)
    return fail("input '" + current->input(i) + "' is not defined before use");
  if (e->constant)
    return e->constant->shape;
  return dimsOf(e->value);
}

Expected<std::vector<int64_t>> Importer::constantInts(size_t i,
                                                      StringRef what) {
  const HostTensor *t = constantInput(i);
  if (!t)
    return fail(Twine(what) +
                " must be a constant (or computable from the fixed input "
                "shapes)");
  return t->toInts();
}

Value Importer::splat(ArrayRef<int64_t> shape, Type elem, double value) {
  auto type = tensorType(shape, elem);
  TypedAttr scalar =
      isa<FloatType>(elem)
          ? TypedAttr(b.getFloatAttr(elem, value))
          : TypedAttr(b.getIntegerAttr(elem, static_cast<int64_t>(value)));
  if (!type.hasStaticShape())
    return fill(shape, arith::ConstantOp::create(b, loc, scalar));
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, scalar));
}

Value Importer::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> in = dimsOf(v);
  if (ArrayRef<int64_t>(in) == shape)
    return v;
  // Dims of `v` that already have the output's extent stay; its unit dims
  // that broadcast (and missing leading dims) are added by linalg.broadcast.
  size_t lead = shape.size() - in.size();
  SmallVector<int64_t> keptShape, addedDims;
  SmallVector<ReassociationIndices> groups;
  SmallVector<bool> kept(shape.size(), false);
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == shape[d + lead]) {
      kept[d + lead] = true;
      keptShape.push_back(in[d]);
    }
  for (size_t d = 0; d < shape.size(); ++d)
    if (!kept[d])
      addedDims.push_back(static_cast<int64_t>(d));
  Value collapsed = v;
  if (keptShape.size() != in.size()) {
    // Each kept dim absorbs the dropped unit dims before it; trailing
    // dropped dims join the last group.
    ReassociationIndices group;
    for (size_t d = 0; d < in.size(); ++d) {
      group.push_back(static_cast<int64_t>(d));
      if (kept[d + lead]) {
        groups.push_back(group);
        group.clear();
      }
    }
    if (!group.empty() && !groups.empty())
      groups.back().append(group.begin(), group.end());
    collapsed =
        record(tensor::CollapseShapeOp::create(
                   b, loc, tensorType(keptShape, typeOf(v).getElementType()), v,
                   groups),
               keptShape);
  }
  Value init = empty(shape, typeOf(v).getElementType());
  return linalg::BroadcastOp::create(b, loc, collapsed, init, addedDims)
      .getResult()[0];
}

/// Groups the dims of `big` into runs whose products are the dims of
/// `small` (symbolically; unit dims left over join the last run), as
/// getReassociationIndicesForReshape does for static shapes.
static std::optional<SmallVector<ReassociationIndices>>
groupDims(ArrayRef<int64_t> big, ArrayRef<int64_t> small, SymbolicDims &syms) {
  SmallVector<ReassociationIndices> groups;
  size_t i = 0;
  for (int64_t want : small) {
    ReassociationIndices group;
    int64_t prod = 1;
    while (i < big.size()) {
      auto p = syms.mul(prod, big[i]);
      if (!p)
        return std::nullopt;
      prod = *p;
      group.push_back(static_cast<int64_t>(i++));
      if (prod == want)
        break;
    }
    if (prod != want)
      return std::nullopt;
    groups.push_back(group);
  }
  for (; i < big.size(); ++i) {
    if (big[i] != 1 || groups.empty())
      return std::nullopt;
    groups.back().push_back(static_cast<int64_t>(i));
  }
  return groups;
}

Value Importer::reshapeTo(Value v, ArrayRef<int64_t> shape) {
  auto srcType = typeOf(v);
  SmallVector<int64_t> src = dimsOf(v);
  if (ArrayRef<int64_t>(src) == shape)
    return v;
  Type elem = srcType.getElementType();
  auto dstType = tensorType(shape, elem);
  auto expand = [&](Value from, ArrayRef<ReassociationIndices> groups) {
    return record(tensor::ExpandShapeOp::create(b, loc, dstType, from, groups,
                                                foldResults(shape)),
                  shape);
  };
  if (src.size() > shape.size()) {
    if (auto groups = groupDims(src, shape, syms))
      return record(
          tensor::CollapseShapeOp::create(b, loc, dstType, v, *groups), shape);
  } else if (src.size() < shape.size()) {
    if (auto groups = groupDims(shape, src, syms))
      return expand(v, *groups);
  }
  // Not a pure collapse or expand: through the flat vector (both are
  // plain views of the row-major data). The caller checked that the
  // element counts agree.
  int64_t n = *syms.product(src);
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < srcType.getRank(); ++d)
    all[0].push_back(d);
  Value flat = srcType.getRank() == 1
                   ? v
                   : record(tensor::CollapseShapeOp::create(
                                b, loc, tensorType({n}, elem), v, all),
                            {n});
  SmallVector<ReassociationIndices> out(1);
  for (int64_t d = 0; d < dstType.getRank(); ++d)
    out[0].push_back(d);
  if (dstType.getRank() == 1)
    return flat;
  return expand(flat, out);
}

Value Importer::transpose(Value v, ArrayRef<int64_t> perm) {
  auto type = typeOf(v);
  SmallVector<int64_t> dims = dimsOf(v), shape;
  for (int64_t p : perm)
    shape.push_back(dims[p]);
  return linalg::TransposeOp::create(b, loc, v,
                                     empty(shape, type.getElementType()), perm)
      .getResult()[0];
}

Value Importer::matmul2d(Value a, Value bm) {
  Value init = zeros({dimsOf(a)[0], dimsOf(bm)[1]}, typeOf(a).getElementType());
  return linalg::MatmulOp::create(b, loc, ValueRange{a, bm}, ValueRange{init})
      .getResult(0);
}

Value Importer::generic(
    ValueRange ins, ArrayRef<int64_t> shape, Type outElem,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto map = b.getMultiDimIdentityMap(shape.size());
  SmallVector<AffineMap> maps(ins.size() + 1, map);
  SmallVector<utils::IteratorType> iters(shape.size(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{tensorType(shape, outElem)}, ins,
             ValueRange{empty(shape, outElem)}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value r = body(nb, nl, args.drop_back());
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

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

/// Host slicing for constants (e.g. a causal buffer cut to the sequence).
static HostTensor sliceHost(const HostTensor &in, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes,
                            ArrayRef<int64_t> strides) {
  HostTensor out = HostTensor::zeros(in.dtype, sizes);
  int64_t rank = static_cast<int64_t>(sizes.size());
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * in.shape[d + 1];
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t flat = 0, e = out.numElements(); flat < e; ++flat) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (offsets[d] + idx[d] * strides[d]) * inStrides[d];
    out.copyFrom(flat, in, src);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d])
        break;
      idx[d] = 0;
    }
  }
  out.symbolic = in.symbolic;
  out.settleSymbolic();
  return out;
}

Value Importer::staticSlice(Value v, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes,
                            ArrayRef<int64_t> strides) {
  auto type = tensorType(sizes, typeOf(v).getElementType());
  return record(
      tensor::ExtractSliceOp::create(b, loc, type, v, foldResults(offsets),
                                     foldResults(sizes), foldResults(strides)),
      sizes);
}

Error Importer::setSliceOutput(size_t i, ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> strides) {
  // A constant cut to a symbolic size (a causal buffer sliced to the
  // sequence) stays a run-time slice of the materialized constant.
  bool symbolicBounds =
      llvm::any_of(offsets, isSymbolic) || llvm::any_of(sizes, isSymbolic);
  if (const HostTensor *c = constantInput(0); c && !symbolicBounds) {
    setConstantOutput(i, sliceHost(*c, offsets, sizes, strides));
    return Error::success();
  }
  auto x = input(0);
  if (!x)
    return x.takeError();
  setOutput(i, staticSlice(*x, offsets, sizes, strides));
  return Error::success();
}

void Importer::checkInside(int64_t v, int64_t lo, int64_t hi, bool inclusive,
                           const Twine &what) {
  auto loOk = syms.compare(v, lo);
  auto hiOk = syms.compare(v, hi);
  bool needLo = !loOk, needHi = !hiOk;
  if (!needLo && !needHi)
    return;
  Value iv = indexValue(v);
  Value ok;
  if (needLo)
    ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, iv,
                               indexValue(lo));
  if (needHi) {
    Value c = arith::CmpIOp::create(b, loc,
                                    inclusive ? arith::CmpIPredicate::sle
                                              : arith::CmpIPredicate::slt,
                                    iv, indexValue(hi));
    ok = ok ? arith::AndIOp::create(b, loc, ok, c).getResult() : c;
  }
  // The reason on a `^ ` line, as upstream's runtime verification writes.
  cf::AssertOp::create(b, loc, ok,
                       ("^ " + nodeName(*current) + ": " + what).str());
}

Expected<int64_t> Importer::clampIndex(int64_t v, int64_t dim) {
  // Negative positions count from the end.
  if (!isSymbolic(v) && v < 0) {
    if (v < -(int64_t(1) << 40))
      return 0;
    v = *syms.add(v, dim);
  }
  if (!isSymbolic(v) && !isSymbolic(dim))
    return std::clamp<int64_t>(v, 0, dim);
  if (auto c = syms.compare(v, dim); c && *c >= 0)
    return dim;
  if (auto c = syms.compare(v, 0); c && *c <= 0)
    return 0;
  // A constant beyond any size a model takes means "to the end" (exporters
  // write INT64_MAX); otherwise the position is taken to lie within the
  // dimension, as the exporter's trace had it.
  if (!isSymbolic(v) && v >= (int64_t(1) << 31))
    return dim;
  checkInside(v, 0, dim, /*inclusive=*/true,
              "the slice bound " + syms.str(v) + " lies outside [0, " +
                  syms.str(dim) + "] at this size");
  return v;
}

Error Importer::importSlice(StringRef op, ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset >= 10) {
    auto s = constantInts(1, "starts"), e = constantInts(2, "ends");
    if (!s)
      return s.takeError();
    if (!e)
      return e.takeError();
    starts = *s;
    ends = *e;
    if (hasInput(3)) {
      auto a = constantInts(3, "axes");
      if (!a)
        return a.takeError();
      axes = *a;
    }
    if (hasInput(4)) {
      auto st = constantInts(4, "steps");
      if (!st)
        return st.takeError();
      steps = *st;
    }
  }
  if (starts.size() != ends.size())
    return fail("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return fail("axes and steps must match starts in length");
  if (llvm::any_of(axes, isSymbolic) || llvm::any_of(steps, isSymbolic))
    return failSymbolic("axes and steps must not be symbolic");
  SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes[i];
    if (Error err = normalizeAxis(axis, rank))
      return err;
    int64_t dim = shape[axis], step = steps[i];
    if (step <= 0)
      return fail("steps must be positive (negative steps are not supported)");
    auto start = clampIndex(starts[i], dim);
    if (!start)
      return start.takeError();
    auto end = clampIndex(ends[i], dim);
    if (!end)
      return end.takeError();
    offsets[axis] = *start;
    strides[axis] = step;
    if (!isSymbolic(*start) && !isSymbolic(*end)) {
      sizes[axis] = *end > *start ? (*end - *start + step - 1) / step : 0;
      continue;
    }
    auto len = syms.sub(*end, *start);
    if (auto c = syms.compare(*end, *start); c && *c <= 0)
      len = 0;
    else if (len && step != 1)
      len = syms.divExact(*len, step);
    if (!len)
      return failSymbolic("cannot size the slice " + syms.str(*start) + ":" +
                          syms.str(*end) + ":" + Twine(step).str() +
                          " of dimension " + Twine(axis).str() + " (" +
                          syms.str(dim) + ")");
    sizes[axis] = *len;
  }
  return setSliceOutput(0, offsets, sizes, strides);
}

Error Importer::importSplit(StringRef op, ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  auto axis = axisAttr("axis", 0, rank);
  if (!axis)
    return axis.takeError();
  int64_t outputs = current->output_size(), dim = shape[*axis];
  std::vector<int64_t> parts;
  if (opset >= 13 && hasInput(1)) {
    auto s = constantInts(1, "split");
    if (!s)
      return s.takeError();
    parts = *s;
  } else if (auto s = getIntsAttr(*current, "split")) {
    parts = *s;
  } else {
    if (isSymbolic(dim))
      return failSymbolic("cannot split the symbolic extent " + syms.str(dim) +
                          " into equal parts");
    int64_t count = getIntAttr(*current, "num_outputs", outputs);
    if (count <= 0)
      return fail("num_outputs must be positive");
    int64_t chunk = (dim + count - 1) / count;
    for (int64_t i = 0; i < count; ++i)
      parts.push_back(std::min(chunk, dim - i * chunk));
  }
  if (static_cast<int64_t>(parts.size()) != outputs)
    return fail("split has " + Twine(parts.size()) + " parts for " +
                Twine(outputs) + " outputs");
  int64_t sum = 0;
  for (int64_t p : parts) {
    if (p < 0 && !isSymbolic(p))
      return fail("split sizes must not be negative");
    auto s = syms.add(sum, p);
    if (!s)
      return fail("split sizes overflow");
    sum = *s;
  }
  if (sum != dim) {
    if (isSymbolic(sum) || isSymbolic(dim))
      return failSymbolic("split sizes add up to " + syms.str(sum) +
                          ", not the axis extent " + syms.str(dim));
    return fail("split sizes add up to " + Twine(sum) +
                ", not the axis extent " + Twine(dim));
  }
  int64_t offset = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
    offsets[*axis] = offset;
    sizes[*axis] = parts[i];
    offset = *syms.add(offset, parts[i]);
    if (Error err = setSliceOutput(i, offsets, sizes, strides))
      return err;
  }
  return Error::success();
}

Error Importer::importGather(StringRef op, ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  auto axis = axisAttr("axis", 0, rank);
  if (!axis)
    return axis.takeError();
  Entry *data = lookup(current->input(0));
  const HostTensor *indices = constantInput(1);
  // A table lookup: an initializer (or constant) table indexed by ids; with
  // constant ids, still a lookup of the weight.
  if (data && data->constant && rank == 2 && *axis == 0 &&
      data->constant->isFloat()) {
    auto table = input(0), ids = input(1);
    if (!table)
      return table.takeError();
    if (!ids)
      return ids.takeError();
    auto idsType = typeOf(*ids);
    SmallVector<int64_t> outShape;
    if (indices) {
      for (int64_t i : indices->toInts())
        if (i < 0 || i >= shape[0])
          return fail("index " + Twine(i) + " is out of range for a table of " +
                      Twine(shape[0]) + " rows");
      outShape.assign(indices->shape.begin(), indices->shape.end());
    } else {
      if (!idsType.getElementType().isInteger(64) &&
          !idsType.getElementType().isInteger(32))
        return fail("indices must be int32 or int64");
      outShape = dimsOf(*ids);
    }
    // Scalar ids look up one row.
    Value ids2 = outShape.empty() ? reshapeTo(*ids, {1}) : *ids;
    outShape.push_back(shape[1]);
    SmallVector<int64_t> embShape = dimsOf(ids2);
    embShape.push_back(shape[1]);
    Value emb = record(
        attn::EmbeddingOp::create(
            b, loc, tensorType(embShape, typeOf(*table).getElementType()), ids2,
            *table),
        embShape);
    setOutput(0, reshapeTo(emb, outShape));
    return Error::success();
  }
  if (!indices)
    return fail("gathering from a computed tensor with run-time indices is "
                "not supported");
  auto x = input(0);
  if (!x)
    return x.takeError();
  std::vector<int64_t> idx = indices->toInts();
  int64_t extent = shape[*axis];
  for (int64_t &i : idx) {
    if (isSymbolic(i) || isSymbolic(extent)) {
      // x[:, s - 1]: a symbolic index, or a constant one into a symbolic
      // extent; negative constants count from the end.
      if (!isSymbolic(i) && i < 0)
        i = *syms.add(i, extent);
      auto lo = syms.compare(i, 0), hi = syms.compare(i, extent);
      if ((lo && *lo < 0) || (hi && *hi >= 0))
        return fail("index " + syms.str(i) + " is out of range for extent " +
                    syms.str(extent));
      checkInside(i, 0, extent, /*inclusive=*/false,
                  "index " + syms.str(i) + " lies outside [0, " +
                      syms.str(extent) + ") at this size");
      continue;
    }
    if (i < -extent || i >= extent)
      return fail("index " + Twine(i) + " is out of range for extent " +
                  Twine(extent));
    if (i < 0)
      i += extent;
  }
  // One slice per index along the axis, concatenated (a single slice for a
  // scalar index or a run of consecutive ones).
  auto sliceAt = [&](int64_t start, int64_t len) -> Value {
    SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
    offsets[*axis] = start;
    sizes[*axis] = len;
    return staticSlice(*x, offsets, sizes, strides);
  };
  bool consecutive = true;
  for (size_t i = 1; i < idx.size(); ++i)
    consecutive &= syms.sub(idx[i], idx[i - 1]) == std::optional<int64_t>(1);
  Value gathered;
  if (idx.empty())
    return fail("empty indices are not supported");
  SmallVector<int64_t> gatheredShape(shape);
  if (consecutive) {
    gathered = sliceAt(idx[0], static_cast<int64_t>(idx.size()));
    gatheredShape[*axis] = static_cast<int64_t>(idx.size());
  } else {
    SmallVector<Value> parts;
    for (int64_t i : idx)
      parts.push_back(sliceAt(i, 1));
    gathered = tensor::ConcatOp::create(b, loc, *axis, parts);
    gatheredShape[*axis] = static_cast<int64_t>(idx.size());
    record(gathered, gatheredShape);
  }
  SmallVector<int64_t> outShape(shape.begin(), shape.begin() + *axis);
  outShape.append(indices->shape.begin(), indices->shape.end());
  outShape.append(shape.begin() + *axis + 1, shape.end());
  setOutput(0, reshapeTo(gathered, outShape));
  return Error::success();
}

Error Importer::importConcat() {
  SmallVector<Value> parts;
  for (int i = 0; i < current->input_size(); ++i) {
    auto shape = shapeOf(i);
    if (!shape)
      return shape.takeError();
    // Empty parts (zero along the axis) add nothing.
    bool emptyPart = llvm::is_contained(*shape, 0);
    if (emptyPart)
      continue;
    auto v = input(i);
    if (!v)
      return v.takeError();
    parts.push_back(*v);
  }
  if (parts.empty())
    return fail("all inputs are empty");
  int64_t rank = typeOf(parts[0]).getRank();
  auto axis = axisAttr("axis", 0, rank);
  if (!axis)
    return axis.takeError();
  SmallVector<int64_t> first = dimsOf(parts[0]), outShape = first;
  outShape[*axis] = 0;
  for (Value p : parts) {
    auto t = typeOf(p);
    SmallVector<int64_t> dims = dimsOf(p);
    if (t.getRank() != rank ||
        t.getElementType() != typeOf(parts[0]).getElementType())
      return fail("inputs differ in rank or element type");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && dims[d] != first[d])
        return fail("inputs differ outside the concatenation axis: " +
                    shapeText(first) + " and " + shapeText(dims));
    auto sum = syms.add(outShape[*axis], dims[*axis]);
    if (!sum)
      return fail("the concatenated extent overflows");
    outShape[*axis] = *sum;
  }
  setOutput(0, parts.size() == 1
                   ? parts[0]
                   : record(tensor::ConcatOp::create(b, loc, *axis, parts),
                            outShape));
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

Expected<Value> Importer::importExpand(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto target = constantInts(1, "the shape");
  if (!target)
    return target.takeError();
  auto s = broadcastShapes(dimsOf(x), *target);
  if (!s)
    return fail("shape " + shapeText(*target) + " does not broadcast with " +
                shapeText(dimsOf(x)));
  return broadcastTo(x, *s);
}

Expected<Value> Importer::importTrilu(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  if (type.getRank() < 2)
    return fail("input must have rank >= 2");
  int64_t k = 0;
  if (hasInput(1)) {
    auto kk = constantInts(1, "k");
    if (!kk)
      return kk.takeError();
    k = kk->empty() ? 0 : (*kk)[0];
  }
  bool upper = getIntAttr(*current, "upper", 1) != 0;
  int64_t rank = type.getRank();
  Type elem = type.getElementType();
  return generic(ValueRange{x}, dimsOf(x), elem,
                 [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                   Value r = linalg::IndexOp::create(nb, nl, rank - 2);
                   Value c = linalg::IndexOp::create(nb, nl, rank - 1);
                   Value diff = arith::SubIOp::create(nb, nl, c, r);
                   Value kv = arith::ConstantIndexOp::create(nb, nl, k);
                   Value keep =
                       arith::CmpIOp::create(nb, nl,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diff, kv);
                   Value zero =
                       arith::ConstantOp::create(nb, nl, nb.getZeroAttr(elem));
                   return arith::SelectOp::create(nb, nl, keep, a[0], zero);
                 });
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

Error Importer::importNode(const onnx::NodeProto &node) {
  current = &node;
  loc = nodeLoc(node);
  StringRef op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return fail("op domain '" + node.domain() + "' is not supported");

  // Ops that read input 0's shape (views, shape queries) get it first.
  using ShapeImporter =
      Error (Importer::*)(StringRef op, ArrayRef<int64_t> shape);
  auto importWithShape = [&](ShapeImporter import) -> Error {
    auto shape = shapeOf(0);
    if (!shape)
      return shape.takeError();
    return (this->*import)(op, *shape);
  };
  if (op == "Constant")
    return importConstant();
  if (op == "Shape" || op == "Size")
    return importWithShape(&Importer::importShapeOf);

  // Nodes whose inputs are all constants (and no weights) are evaluated.
  bool allConstant = node.input_size() > 0;
  std::vector<const HostTensor *> constants;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      constants.push_back(nullptr);
      continue;
    }
    Entry *e = lookup(node.input(i));
    if (!e)
      return fail("input '" + node.input(i) + "' is not defined before use");
    if (!e->constant || e->isWeight)
      allConstant = false;
    constants.push_back(e->constant && !e->isWeight ? &*e->constant : nullptr);
  }
  bool shapeOnly = op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
                   op == "Unsqueeze" || op == "Slice" || op == "Split";
  if (allConstant && !shapeOnly) {
    FoldResult folded;
    std::string error;
    if (!foldNode(node, opset, constants, folded, error, syms)) {
      if (llvm::any_of(constants,
                       [](const HostTensor *t) { return t && t->symbolic; }))
        return failSymbolic(error);
      return fail(error);
    }
    if (folded.folded) {
      for (size_t i = 0; i < folded.outputs.size(); ++i)
        setConstantOutput(i, std::move(folded.outputs[i]));
      return Error::success();
    }
  }

  if (op == "Identity" || op == "Dropout") {
    if (op == "Dropout" && node.output_size() > 1 && !node.output(1).empty())
      return fail("the mask output is not supported");
    Entry *e = lookup(node.input(0));
    if (!e)
      return fail("input is missing");
    values[node.output(0)] = *e;
    return Error::success();
  }
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze")
    return importWithShape(&Importer::importReshapeLike);
  // Ops of one result computed from their leading `inputs` inputs (all
  // required values): the importer gets them materialized.
  struct ValueImporter {
    StringRef type;
    unsigned inputs;
    Expected<Value> (Importer::*import)(StringRef op, ArrayRef<Value> in);
  };
  static const ValueImporter kValueImporters[] = {
      {"Add", 2, &Importer::importElementwiseBinary},
      {"Sub", 2, &Importer::importElementwiseBinary},
      {"Mul", 2, &Importer::importElementwiseBinary},
      {"Div", 2, &Importer::importElementwiseBinary},
      {"Pow", 2, &Importer::importElementwiseBinary},
      {"Max", 2, &Importer::importElementwiseBinary},
      {"Min", 2, &Importer::importElementwiseBinary},
      {"Sqrt", 1, &Importer::importUnary},
      {"Erf", 1, &Importer::importUnary},
      {"Tanh", 1, &Importer::importUnary},
      {"Exp", 1, &Importer::importUnary},
      {"Neg", 1, &Importer::importUnary},
      {"Reciprocal", 1, &Importer::importUnary},
      {"Relu", 1, &Importer::importUnary},
      {"Sigmoid", 1, &Importer::importUnary},
      {"Sin", 1, &Importer::importUnary},
      {"Cos", 1, &Importer::importUnary},
      {"Equal", 2, &Importer::importCompare},
      {"Less", 2, &Importer::importCompare},
      {"Greater", 2, &Importer::importCompare},
      {"LessOrEqual", 2, &Importer::importCompare},
      {"GreaterOrEqual", 2, &Importer::importCompare},
      {"MatMul", 2, &Importer::importMatMul},
      {"Gemm", 2, &Importer::importGemm},
      {"Transpose", 1, &Importer::importTranspose},
      {"Softmax", 1, &Importer::importSoftmax},
      {"LayerNormalization", 2, &Importer::importLayerNorm},
      {"ReduceMean", 1, &Importer::importReduceMean},
      {"Where", 3, &Importer::importWhere},
      {"Cast", 1, &Importer::importCast},
      {"Expand", 1, &Importer::importExpand},
      {"Trilu", 1, &Importer::importTrilu},
  };
  for (const ValueImporter &row : kValueImporters) {
    if (op != row.type)
      continue;
    // The elementwise ops take exactly their inputs (no optional ones).
    if (row.import == &Importer::importElementwiseBinary &&
        node.input_size() != 2)
      return fail("expects two inputs");
    SmallVector<Value, 3> in;
    for (unsigned i = 0; i < row.inputs; ++i) {
      auto v = input(i);
      if (!v)
        return v.takeError();
      in.push_back(*v);
    }
    auto result = (this->*row.import)(op, in);
    if (!result)
      return result.takeError();
    setOutput(0, *result);
    return Error::success();
  }
  // Slices of input 0 (several outputs, folded on constants, inputs that
  // need not be materialized).
  if (op == "Slice")
    return importWithShape(&Importer::importSlice);
  if (op == "Split")
    return importWithShape(&Importer::importSplit);
  if (op == "Gather")
    return importWithShape(&Importer::importGather);
  if (op == "Concat")
    return importConcat();
  if (op == "Range")
    return importRange();
  if (op == "ConstantOfShape")
    return importConstantOfShape();
  return fail("unsupported op '" + op + "'");
}

Expected<ImportedModel> Importer::run() {
  for (const auto &import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx")
      opset = static_cast<int>(import.version());
  if (opset < kMinOpset || opset > kMaxOpset)
    return fail("opset " + Twine(opset) + " is not supported (the importer " +
                "reads opsets " + Twine(kMinOpset) + " to " + Twine(kMaxOpset) +
                ")");
  const onnx::GraphProto &graph = model.graph();

  // Initializers first: graph inputs that repeat an initializer's name (old
  // exporters) are the initializer.
  llvm::StringSet<> initializerNames;
  // Mutable: a weight's raw_data is moved into the weights file's buffer.
  for (onnx::TensorProto &init :
       *model.mutable_graph()->mutable_initializer()) {
    HostTensor t;
    std::string error;
    if (!decodeTensor(init, t, error, /*decodeValues=*/false))
      return fail("initializer '" + init.name() + "' " + error);
    if (init.name().empty())
      return fail("an initializer has no name");
    Entry &e = values[init.name()];
    e.isWeight = t.isFloat() && t.numElements() > kMaxInlineFloatElements;
    // A weight's values go to the weights file as they are, so only
    // constants are decoded (into doubles, for folding).
    if (e.isWeight && t.dtype == onnx::TensorProto::FLOAT)
      e.weightSource = &init;
    else if (!decodeTensor(init, t, error))
      return fail("initializer '" + init.name() + "' " + error);
    if (e.isWeight) {
      for (char c : init.name())
        if (std::isspace(static_cast<unsigned char>(c)) || !std::isprint(c))
          return fail("initializer '" + init.name() +
                      "' has whitespace or unprintable characters in its "
                      "name, which weight names cannot carry");
      e.weightName = init.name();
    }
    e.constant = std::move(t);
    initializerNames.insert(init.name());
  }

  llvm::StringSet<> graphInputs;
  for (const onnx::ValueInfoProto &in : graph.input())
    if (!initializerNames.contains(in.name()))
      graphInputs.insert(in.name());
  for (const auto &entry : options.inputShapes)
    if (!graphInputs.contains(entry.getKey()))
      return fail("--input-shape names '" + entry.getKey() +
                  "', which is not a graph input");

  // Graph inputs: fixed shapes, sizes from --input-shape (`?` keeps a dim
  // symbolic), or symbols: one per distinct dim_param (an unnamed dim gets
  // its own), read at run time from the first input dimension that has it.
  // A dim_param that --input-shape fixes on one input is fixed everywhere.
  std::map<std::string, int64_t> named;
  std::map<std::string, std::string> namedBy;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    auto given = options.inputShapes.find(in.name());
    if (initializerNames.contains(in.name()) ||
        given == options.inputShapes.end() || !in.type().has_tensor_type() ||
        !in.type().tensor_type().has_shape())
      continue;
    const auto &dims = in.type().tensor_type().shape().dim();
    for (int d = 0; d < dims.size(); ++d) {
      if (!dims[d].has_dim_param() || d >= (int)given->second.size() ||
          ShapedType::isDynamic(given->second[d]))
        continue;
      auto [it, inserted] =
          named.try_emplace(dims[d].dim_param(), given->second[d]);
      if (!inserted && it->second != given->second[d])
        return fail("--input-shape gives the symbolic dimension '" +
                    dims[d].dim_param() + "' as " + Twine(given->second[d]) +
                    " for '" + in.name() + "' but as " + Twine(it->second) +
                    " for '" + namedBy[dims[d].dim_param()] + "'");
      namedBy.try_emplace(dims[d].dim_param(), in.name());
    }
  }
  // Exporters name a dimension that is a sum of others by the sum, e.g.
  // `past_sequence + sequence` for an attention mask over past and new
  // tokens. Such a dim_param (every `+` term a dim_param that stands alone on
  // some input, or an integer) is that polynomial, checked at run time, so
  // that it broadcasts against the keys' concatenated length.
  llvm::StringSet<> atomicParams;
  for (const onnx::ValueInfoProto &in : graph.input())
    if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
      for (const auto &dim : in.type().tensor_type().shape().dim())
        if (dim.has_dim_param() && !StringRef(dim.dim_param()).contains('+'))
          atomicParams.insert(dim.dim_param());
  auto sumTerms = [&](StringRef param) {
    SmallVector<StringRef> terms;
    if (!param.contains('+'))
      return terms;
    param.split(terms, '+');
    for (StringRef &t : terms) {
      t = t.trim();
      int64_t c;
      if (!atomicParams.contains(t) && (t.getAsInteger(10, c) || c < 0))
        return SmallVector<StringRef>();
    }
    return terms;
  };
  // (argument, axis, dim_param) of each sum, resolved after all inputs.
  SmallVector<std::tuple<unsigned, unsigned, std::string>> sumDims;

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  SmallVector<SmallVector<int64_t>> argDims;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initializerNames.contains(in.name()))
      continue;
    if (!in.type().has_tensor_type())
      return fail("graph input '" + in.name() + "' is not a tensor");
    const auto &tt = in.type().tensor_type();
    // The runtime binds inputs of these types (not bool).
    auto elem = tt.elem_type() == onnx::TensorProto::BOOL
                    ? Expected<Type>(llvm::createStringError("bool"))
                    : elementType(tt.elem_type());
    if (!elem) {
      llvm::consumeError(elem.takeError());
      return fail("graph input '" + in.name() + "' has element type " +
                  dataTypeName(tt.elem_type()) +
                  " (supported: float, float16, bfloat16, int64, int32)");
    }
    if (!tt.has_shape())
      return fail("graph input '" + in.name() + "' has no shape");
    const auto &dims = tt.shape().dim();
    auto given = options.inputShapes.find(in.name());
    ArrayRef<int64_t> fixed;
    if (given != options.inputShapes.end()) {
      fixed = given->second;
      if (fixed.size() != static_cast<size_t>(dims.size()))
        return fail("--input-shape " + in.name() + "=" +
                    attnc::shapeText(fixed) + " has rank " +
                    Twine(fixed.size()) + ", but the input has rank " +
                    Twine(dims.size()));
    }
    unsigned argIndex = argTypes.size();
    SmallVector<int64_t> shape;
    for (int d = 0; d < dims.size(); ++d) {
      const auto &dim = dims[d];
      bool isStatic = dim.has_dim_value() && dim.dim_value() > 0;
      if (!fixed.empty() && !ShapedType::isDynamic(fixed[d])) {
        if (isStatic && dim.dim_value() != fixed[d])
          return fail("--input-shape " + in.name() + " gives dimension " +
                      Twine(d) + " as " + Twine(fixed[d]) +
                      ", but the model fixes it to " + Twine(dim.dim_value()));
        shape.push_back(fixed[d]);
        continue;
      }
      if (isStatic) {
        shape.push_back(dim.dim_value());
        continue;
      }
      if (dim.has_dim_param()) {
        auto it = named.find(dim.dim_param());
        if (it != named.end()) {
          shape.push_back(it->second);
          continue;
        }
        if (!sumTerms(dim.dim_param()).empty()) {
          sumDims.push_back(
              {argIndex, static_cast<unsigned>(d), dim.dim_param()});
          shape.push_back(ShapedType::kDynamic); // resolved below
          continue;
        }
      }
      std::string name = dim.has_dim_param() && !dim.dim_param().empty()
                             ? dim.dim_param()
                             : in.name() + "." + std::to_string(d);
      int64_t symbol = syms.newSymbol(name);
      symbolSource.push_back({argIndex, static_cast<unsigned>(d)});
      if (dim.has_dim_param() && !dim.dim_param().empty())
        named[dim.dim_param()] = symbol;
      shape.push_back(symbol);
    }
    argTypes.push_back(tensorType(shape, *elem));
    argNames.push_back(in.name());
    argDims.push_back(shape);
  }

  for (auto &[arg, axis, param] : sumDims) {
    int64_t sum = 0;
    for (StringRef t : sumTerms(param)) {
      int64_t term;
      if (t.getAsInteger(10, term)) {
        auto it = named.find(t.str());
        if (it == named.end())
          return fail("graph input '" + argNames[arg] + "' has dimension '" +
                      param + "', whose term '" + t +
                      "' names no dimension of an input");
        term = it->second;
      }
      auto next = syms.add(sum, term);
      if (!next)
        return fail("the dimension '" + param + "' overflows");
      sum = *next;
    }
    argDims[arg][axis] = sum;
  }

  auto module = ModuleOp::create(fileLoc());
  OwningOpRef<ModuleOp> owned(module);
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, fileLoc(), "main",
                                   b.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  entryBlock = body;
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "attn.name", b.getStringAttr(name));
    // Dimensions of one symbol on several inputs have one size; the raising
    // and the runtime's input checks read that from attn.dim_symbols.
    if (llvm::any_of(argDims[i], isSymbolic)) {
      SmallVector<Attribute> names;
      for (int64_t d : argDims[i]) {
        SymbolicDims::Poly poly = syms.poly(d);
        bool single = isSymbolic(d) && poly.size() == 1 &&
                      poly.begin()->first.size() == 1 &&
                      poly.begin()->second == 1;
        names.push_back(b.getStringAttr(single ? syms.str(d) : ""));
      }
      func.setArgAttr(i, attn::AttnDialect::DimSymbolsAttrHelper::getNameStr(),
                      b.getArrayAttr(names));
    }
    values[name].value = record(body->getArgument(i), argDims[i]);
  }
  b.setInsertionPointToEnd(body);
  // A sum dimension must hold its value: one run-time check each.
  for (auto &[arg, axis, param] : sumDims) {
    loc = fileLoc();
    int64_t sum = argDims[arg][axis];
    Value actual = tensor::DimOp::create(b, loc, body->getArgument(arg),
                                         static_cast<int64_t>(axis));
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, actual,
                                     indexValue(sum));
    cf::AssertOp::create(b, loc, ok,
                         ("^ input '" + argNames[arg] + "' dimension " +
                          Twine(axis) + " must be " + param + " (" +
                          syms.str(sum) + ")")
                             .str());
  }

  for (int i = 0; i < graph.node_size(); ++i) {
    currentIndex = i;
    if (Error err = importNode(graph.node(i)))
      return std::move(err);
  }
  current = nullptr;

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  loc = fileLoc();
  for (const onnx::ValueInfoProto &out : graph.output()) {
    Entry *e = lookup(out.name());
    if (!e)
      return fail("graph output '" + out.name() + "' is never computed");
    auto v = materialize(*e);
    if (!v)
      return v.takeError();
    results.push_back(*v);
    resultTypes.push_back(v->getType());
  }
  func::ReturnOp::create(b, fileLoc(), results);
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "attn.name", b.getStringAttr(out.name()));

  // A verifier failure here is an importer bug; report it located.
  std::string diag;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diag);
      os << d.getLocation() << ": " << d.str() << "\n";
      return success();
    });
    if (failed(verify(module)))
      return llvm::createStringError(fileName +
                                     ": error: the imported IR does not "
                                     "verify (importer bug):\n" +
                                     diag);
  }
  ImportedModel result;
  result.module = std::move(owned);
  result.weights = std::move(weights);
  return std::move(result);
}

} // namespace

Error attnc::onnx_frontend::parseInputShape(StringRef spec,
                                            ImportOptions &options) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || dims.empty() || !spec.contains('='))
    return llvm::createStringError("--input-shape '" + spec.str() +
                                   "': expected name=AxBx... (e.g. "
                                   "input_ids=1x128)");
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  SmallVector<int64_t> shape;
  for (StringRef p : parts) {
    // `?` leaves the dimension symbolic (dynamic), e.g. input_ids=1x?.
    if (p == "?") {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t d;
    if (p.getAsInteger(10, d) || d <= 0 || d > (int64_t(1) << 31))
      return llvm::createStringError("--input-shape '" + spec.str() + "': '" +
                                     p.str() +
                                     "' is not a positive dimension or ?");
    shape.push_back(d);
  }
  if (options.inputShapes.count(name))
    return llvm::createStringError("--input-shape: '" + name.str() +
                                   "' is given twice");
  options.inputShapes[name] = shape;
  return Error::success();
}

Expected<ImportedModel>
attnc::onnx_frontend::importONNXModel(StringRef path, MLIRContext &context,
                                      const ImportOptions &options) {
  context.loadDialect<attn::AttnDialect, arith::ArithDialect,
                      cf::ControlFlowDialect, func::FuncDialect,
                      linalg::LinalgDialect, math::MathDialect,
                      tensor::TensorDialect>();
  onnx::ModelProto model;
  std::string error;
  if (!loadONNXModel(path.str(), model, error))
    return llvm::createStringError(llvm::sys::path::filename(path).str() +
                                   ": error: " + error);
  Importer importer(path, context, options, model);
  return importer.run();
}

void attnc::onnx_frontend::registerONNXImportDialects(
    DialectRegistry &registry) {
  registry
      .insert<attn::AttnDialect, arith::ArithDialect, cf::ControlFlowDialect,
              func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
              tensor::TensorDialect>();
}

Error attnc::onnx_frontend::writeSafeTensors(StringRef path,
                                             ArrayRef<WeightTensor> weights) {
  std::string header;
  {
    llvm::raw_string_ostream os(header);
    llvm::json::OStream j(os);
    j.object([&] {
      j.attributeObject("__metadata__",
                        [&] { j.attribute(kWrittenByKey, kWrittenByValue); });
      uint64_t offset = 0;
      for (const WeightTensor &w : weights) {
        uint64_t bytes = w.bytes.size();
        j.attributeObject(w.name, [&] {
          j.attribute("dtype", "F32");
          j.attributeArray("shape", [&] {
            for (int64_t d : w.shape)
              j.value(d);
          });
          j.attributeArray("data_offsets", [&] {
            j.value(static_cast<int64_t>(offset));
            j.value(static_cast<int64_t>(offset + bytes));
          });
        });
        offset += bytes;
      }
    });
  }
  // The data starts 8-byte aligned (padding the header with spaces, as the
  // format allows).
  while ((header.size() + 8) % 8 != 0)
    header.push_back(' ');
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + path.str() + ": " +
                                           ec.message());
  uint64_t len = header.size();
  char lenBytes[8];
  for (int i = 0; i < 8; ++i)
    lenBytes[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  os.write(lenBytes, 8);
  os << header;
  for (const WeightTensor &w : weights)
    os.write(w.bytes.data(), w.bytes.size());
  os.close();
  if (os.has_error())
    return llvm::createStringError("error writing " + path.str());
  return Error::success();
}
