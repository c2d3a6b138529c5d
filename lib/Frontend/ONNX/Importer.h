//===- Importer.h - the ONNX importer's state and op registry --*- C++ -*-===//
//
// Private to lib/Frontend/ONNX. The importer core (ONNXImporter.cpp: values,
// materialization, dispatch; Graph.cpp: the phases of a graph; Builders.cpp:
// IR helpers) and the op importers by family (Ops/<Family>.cpp), which add
// themselves to the registry that maps an op type and the opsets an entry
// implements to its importer.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_FRONTEND_ONNX_IMPORTER_H
#define ATTNC_LIB_FRONTEND_ONNX_IMPORTER_H

#include "attnc/Frontend/ONNX/ONNXImporter.h"

#include "HostTensor.h"
#include "ModelLoader.h"
#include "SymbolicDims.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Path.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnc::onnx_frontend {

using namespace mlir;
using llvm::Error;
using llvm::Expected;

/// Float initializers with more elements than this are run-time weights.
constexpr int64_t kMaxInlineFloatElements = 16;

/// `t` as MLIR prints it, for errors.
std::string typeText(Type t);

class Importer {
public:
  Importer(StringRef path, MLIRContext &context, const ImportOptions &options,
           onnx::ModelProto &model)
      : path(path.str()), fileName(llvm::sys::path::filename(path).str()),
        context(context), options(options), model(model), b(&context) {}

  Expected<ImportedModel> run();

  // The members below serve the op importers (Ops/*.cpp); the class is
  // private to lib/Frontend/ONNX.
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
  /// Pad of `x` to `outShape`, `low` before each axis, in mode edge,
  /// reflect or wrap (each output element reads a folded input index).
  Value padByIndex(Value x, StringRef mode, ArrayRef<int64_t> low,
                   ArrayRef<int64_t> outShape);
  /// The shape `a` and `c` broadcast to (numpy rules), or nullopt. Two
  /// different symbolic dims where one is a single symbol are taken as
  /// equal (SymbolicDims::bindSymbol) with a run-time check: exporters give
  /// lengths that are equal at run time different names.
  std::optional<SmallVector<int64_t>> broadcastShape(ArrayRef<int64_t> a,
                                                     ArrayRef<int64_t> c);
  /// True if dims `a` and `c` are equal, binding a symbol as
  /// broadcastShape does (with its run-time check).
  bool unifyDims(int64_t a, int64_t c);
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

  // Graph phases (Graph.cpp).
  /// Reads the default-domain opset the model imports.
  Error importOpsets();
  /// Initializers: host constants, large float ones run-time weights.
  Error importInitializers(llvm::StringSet<> &initializerNames);
  /// Graph inputs as the arguments of @main (symbolic dims, sums of them).
  /// Creates `module` and its @main.
  Error importInputs(const llvm::StringSet<> &initializerNames);
  Error importNodes();
  /// Returns the graph outputs from @main and verifies the module.
  Error importOutputs();

  // Nodes.
  /// Imports one node with the registry's importer for its op type and the
  /// model's opset, after folding it on the host where it can be.
  Error importNode(const onnx::NodeProto &node);
  /// Imports the current node with `import`, its leading `inputs` inputs
  /// materialized (all required; exactly that many with `exact`).
  Error importValues(unsigned inputs, bool exact,
                     Expected<Value> (Importer::*import)(StringRef op,
                                                         ArrayRef<Value> in));
  /// Imports the current node with `import`, given input 0's shape.
  Error importWithShape(Error (Importer::*import)(StringRef op,
                                                  ArrayRef<int64_t> shape));
  Error importIdentity();
  Expected<Value> importElementwiseBinary(StringRef op, ArrayRef<Value> in);
  Expected<Value> importUnary(StringRef op, ArrayRef<Value> in);
  Expected<Value> importMatMul(StringRef op, ArrayRef<Value> in);
  Expected<Value> importGemm(StringRef op, ArrayRef<Value> in);
  Expected<Value> importConv(StringRef op, ArrayRef<Value> in);
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
  /// Gather with indices known only at run time.
  Error importRuntimeGather(int64_t axis, ArrayRef<int64_t> shape);
  Error importConcat();
  Expected<Value> importTranspose(StringRef op, ArrayRef<Value> in);
  Expected<Value> importSoftmax(StringRef op, ArrayRef<Value> in);
  /// What LayerNormalization and RMSNormalization check alike: float32
  /// statistics (stash_type), normalization over the last axis of `x`
  /// only, static, and a `scale` of that width; returns `scale` as a vector
  /// of that width.
  Expected<Value> normalizedScale(Value x, Value scale);
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
  // Ops of the transformer exporters (Ops/*.cpp).
  Expected<Value> importLogical(StringRef op, ArrayRef<Value> in);
  Expected<Value> importMod(StringRef op, ArrayRef<Value> in);
  Expected<Value> importMathUnary(StringRef op, ArrayRef<Value> in);
  Expected<Value> importClip(StringRef op, ArrayRef<Value> in);
  Expected<Value> importGelu(StringRef op, ArrayRef<Value> in);
  Expected<Value> importEinsum(StringRef op, ArrayRef<Value> in);
  Expected<Value> importCumSum(StringRef op, ArrayRef<Value> in);
  Expected<Value> importArgMaxMin(StringRef op, ArrayRef<Value> in);
  Expected<Value> importReduceSumMax(StringRef op, ArrayRef<Value> in);
  Expected<Value> importRmsNorm(StringRef op, ArrayRef<Value> in);
  /// com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization.
  Error importSkipNorm();
  Error importAttention();
  Error importRotaryEmbedding();
  Expected<Value> importTile(StringRef op, ArrayRef<Value> in);
  Expected<Value> importPad(StringRef op, ArrayRef<Value> in);
  Expected<Value> importGatherElements(StringRef op, ArrayRef<Value> in);
  Expected<Value> importGatherND(StringRef op, ArrayRef<Value> in);
  Expected<Value> importScatter(StringRef op, ArrayRef<Value> in);
  /// ScatterND / ScatterElements whose indices are computed at run time.
  Expected<Value> importScatterRuntime(bool nd, StringRef reduction, Value data,
                                       Value indices, Value updates);
  /// The `axes` of a Reduce* op (attribute or input, by `fromInput`),
  /// normalized; empty with `noop` set where noop_with_empty_axes applies.
  Expected<std::vector<int64_t>> reduceAxes(bool fromInput, int64_t rank,
                                            bool &noop);
  /// Broadcasts `ins` to their common shape; fails naming the shapes.
  Expected<SmallVector<int64_t>> broadcastAll(SmallVectorImpl<Value> &ins);
  /// A scalar of `elem` holding `v` (in a region body).
  static Value scalarConst(OpBuilder &nb, Location nl, Type elem, double v);
  /// `old` combined with `v` by `reduction` (add, mul, max or min, as a
  /// Scatter* op's attribute names them; floats or signed integers).
  static Value combine(OpBuilder &nb, Location nl, StringRef reduction,
                       Value old, Value v);
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
  /// The com.microsoft opset the model imports (ONNX Runtime's contrib ops,
  /// as its optimizer writes them); 0 when none.
  int microsoftOpset = 0;
  const onnx::NodeProto *current = nullptr;
  int currentIndex = 0;
  std::map<std::string, Entry> values;
  std::vector<WeightTensor> weights;
  llvm::StringSet<> writtenWeights;
  OwningOpRef<ModuleOp> module;
  func::FuncOp mainFunc;
  SmallVector<Type> argTypes;

  // Symbolic dims.
  SymbolicDims syms;
  /// Per symbol: the argument and axis it is read from.
  std::vector<std::pair<unsigned, unsigned>> symbolSource;
  /// Per symbol: how many graph input dimensions are that symbol alone.
  /// unifyDims binds the least used one (an attention mask's length rather
  /// than the sequence that input_ids and the outputs share).
  std::vector<unsigned> symbolInputUses;
  DenseMap<unsigned, Value> symbolValues;
  Block *entryBlock = nullptr;
  DenseMap<Value, SmallVector<int64_t>> valueDims;
};

/// One row of the op registry: the importer of `opType` for the models whose
/// default-domain opset is in [sinceVersion, untilVersion]. An op's versions
/// are separate rows where their attributes or semantics differ (each row
/// starts at the op version it implements, or at kMinOpset for ops older
/// than that).
struct OpImporter {
  llvm::StringRef opType;
  int sinceVersion;
  int untilVersion;
  /// The attributes the importer reads, space-separated. Any other is an
  /// error: a newer version's attribute may change the meaning.
  llvm::StringRef attributes;
  Error (*import)(Importer &);
  /// Whether a node whose inputs are all host constants is first evaluated
  /// on the host (views and slices fold themselves without materializing).
  bool foldConstants = true;
  /// Imported before its inputs are looked up (Constant, Shape, Size: they
  /// read no values, only shapes).
  bool beforeInputs = false;
};

/// The importers, by op type.
class OpRegistry {
public:
  enum Flags : unsigned { None = 0, NoFold = 1, BeforeInputs = 2 };
  void add(llvm::StringRef opType, int since, int until,
           llvm::StringRef attributes, Error (*import)(Importer &),
           unsigned flags = None) {
    // The row's name refers to the map's copy of the key.
    auto it = rows.try_emplace(opType).first;
    it->second.push_back({it->first(), since, until, attributes, import,
                          !(flags & NoFold), bool(flags & BeforeInputs)});
  }
  /// The row for `opType` at `opset`; nullptr when there is none.
  const OpImporter *lookup(llvm::StringRef opType, int opset) const;
  /// The first opset any row of `opType` covers (0 if none).
  int firstOpset(llvm::StringRef opType) const;
  /// The registry of every family below, built once.
  static const OpRegistry &get();

private:
  llvm::StringMap<llvm::SmallVector<OpImporter, 1>> rows;
};

// Adapters from the three shapes of op importer to a registry row's entry.
template <Expected<Value> (Importer::*F)(StringRef, ArrayRef<Value>),
          unsigned Inputs, bool Exact = false>
Error valueImporter(Importer &imp) {
  return imp.importValues(Inputs, Exact, F);
}
template <Error (Importer::*F)(StringRef, ArrayRef<int64_t>)>
Error shapeImporter(Importer &imp) {
  return imp.importWithShape(F);
}
template <Error (Importer::*F)()> Error plainImporter(Importer &imp) {
  return (imp.*F)();
}

/// The registry key of `opType` of the com.microsoft domain.
inline std::string microsoftOp(llvm::StringRef opType) {
  return "com.microsoft." + opType.str();
}

/// The latest default-domain opset the importer reads.
constexpr int kLatestOpset = kMaxOpset;

// The op families (Ops/<Family>.cpp).
void registerElementwiseOps(OpRegistry &registry);
void registerMatMulOps(OpRegistry &registry);
void registerShapeOps(OpRegistry &registry);
void registerIndexOps(OpRegistry &registry);
void registerReductionOps(OpRegistry &registry);
void registerMaskOps(OpRegistry &registry);
void registerAttentionOps(OpRegistry &registry);

} // namespace attnc::onnx_frontend

#endif // ATTNC_LIB_FRONTEND_ONNX_IMPORTER_H
