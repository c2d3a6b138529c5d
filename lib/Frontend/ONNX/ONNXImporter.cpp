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
//
// This file is the importer's core: the value table, materialization of
// host constants, the op registry and dispatch, and the public entry
// points. Graph.cpp imports a graph phase by phase, Builders.cpp holds the IR
// helpers and Ops/<Family>.cpp the op importers.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "ModelLoader.h"

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

std::string attnc::onnx_frontend::typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

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

//===----------------------------------------------------------------------===//
// The op registry and dispatch
//===----------------------------------------------------------------------===//

const OpImporter *OpRegistry::lookup(StringRef opType, int opset) const {
  auto it = rows.find(opType);
  if (it == rows.end())
    return nullptr;
  for (const OpImporter &row : it->second)
    if (row.sinceVersion <= opset && opset <= row.untilVersion)
      return &row;
  return nullptr;
}

int OpRegistry::firstOpset(StringRef opType) const {
  auto it = rows.find(opType);
  if (it == rows.end())
    return 0;
  int first = 0;
  for (const OpImporter &row : it->second)
    if (!first || row.sinceVersion < first)
      first = row.sinceVersion;
  return first;
}

const OpRegistry &OpRegistry::get() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerMatMulOps(r);
    registerShapeOps(r);
    registerIndexOps(r);
    registerReductionOps(r);
    registerMaskOps(r);
    registerAttentionOps(r);
    return r;
  }();
  return registry;
}

Error Importer::importValues(
    unsigned inputs, bool exact,
    Expected<Value> (Importer::*import)(StringRef op, ArrayRef<Value> in)) {
  if (exact && current->input_size() != static_cast<int>(inputs))
    return fail(inputs == 2 ? Twine("expects two inputs")
                            : "expects " + Twine(inputs) + " inputs");
  SmallVector<Value, 3> in;
  for (unsigned i = 0; i < inputs; ++i) {
    auto v = input(i);
    if (!v)
      return v.takeError();
    in.push_back(*v);
  }
  auto result = (this->*import)(current->op_type(), in);
  if (!result)
    return result.takeError();
  setOutput(0, *result);
  return Error::success();
}

Error Importer::importWithShape(
    Error (Importer::*import)(StringRef op, ArrayRef<int64_t> shape)) {
  auto shape = shapeOf(0);
  if (!shape)
    return shape.takeError();
  return (this->*import)(current->op_type(), *shape);
}

Error Importer::importNode(const onnx::NodeProto &node) {
  current = &node;
  loc = nodeLoc(node);
  StringRef op = node.op_type();
  bool microsoft = node.domain() == "com.microsoft";
  if (!node.domain().empty() && node.domain() != "ai.onnx" && !microsoft)
    return fail("op domain '" + node.domain() + "' is not supported");

  const OpRegistry &registry = OpRegistry::get();
  const OpImporter *row = microsoft
                              ? registry.lookup(microsoftOp(op), microsoftOpset)
                              : registry.lookup(op, opset);
  if (microsoft && !row)
    return fail("op '" + op + "' of domain 'com.microsoft' (opset " +
                Twine(microsoftOpset) + ") is not supported");
  if (!row) {
    if (int first = registry.firstOpset(op); first > opset)
      return fail("'" + op + "' is not an op of opset " + Twine(opset) +
                  " (the importer reads it from opset " + Twine(first) + ")");
  } else {
    // An attribute the importer does not read may change the op's meaning
    // (one a newer version added, or a misspelling): refuse it.
    SmallVector<StringRef> known;
    row->attributes.split(known, ' ', -1, /*KeepEmpty=*/false);
    for (const onnx::AttributeProto &attr : node.attribute())
      if (!llvm::is_contained(known, attr.name()))
        return fail("attribute '" + attr.name() + "' is not supported (" + op +
                    " at this opset reads " +
                    (known.empty() ? std::string("no attributes")
                                   : "'" + llvm::join(known, "', '") + "'") +
                    ")");
  }
  if (row && row->beforeInputs)
    return row->import(*this);

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
  if (allConstant && (!row || row->foldConstants)) {
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
  if (!row)
    return fail("unsupported op '" + op + "'");
  return row->import(*this);
}

Expected<ImportedModel> Importer::run() {
  if (Error err = importOpsets())
    return std::move(err);
  llvm::StringSet<> initializerNames;
  if (Error err = importInitializers(initializerNames))
    return std::move(err);
  if (Error err = importInputs(initializerNames))
    return std::move(err);
  if (Error err = importNodes())
    return std::move(err);
  if (Error err = importOutputs())
    return std::move(err);
  ImportedModel result;
  result.module = std::move(module);
  result.weights = std::move(weights);
  return std::move(result);
}

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
  std::vector<std::string> notes;
  bool loaded = loadONNXModel(path.str(), model, error, notes);
  if (options.verbose)
    for (const std::string &note : notes)
      *options.verbose << llvm::sys::path::filename(path) << ": note: " << note
                       << "\n";
  if (!loaded)
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
  // The runtime binds a tensor stored as the model reads it in place when
  // its data is 64-byte aligned, and copies it otherwise: the data starts
  // at a multiple of 64 and the tensors whose sizes are multiples of 64
  // come first (the format allows no gaps between tensors).
  constexpr size_t kDataAlignment = 64;
  SmallVector<const WeightTensor *> order;
  for (const WeightTensor &w : weights)
    order.push_back(&w);
  std::stable_partition(order.begin(), order.end(), [&](const WeightTensor *w) {
    return w->bytes.size() % kDataAlignment == 0;
  });
  std::string header;
  {
    llvm::raw_string_ostream os(header);
    llvm::json::OStream j(os);
    j.object([&] {
      j.attributeObject("__metadata__",
                        [&] { j.attribute(kWrittenByKey, kWrittenByValue); });
      uint64_t offset = 0;
      for (const WeightTensor *w : order) {
        uint64_t bytes = w->bytes.size();
        j.attributeObject(w->name, [&] {
          j.attribute("dtype", w->dtype);
          j.attributeArray("shape", [&] {
            for (int64_t d : w->shape)
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
  // Padded with spaces, as the format allows.
  while ((header.size() + 8) % kDataAlignment != 0)
    header.push_back(' ');
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + path.str() + ": " +
                                           ec.message());
  // Every write but the last is whole 2 MiB blocks at 2 MiB offsets: the
  // page cache then holds the file in huge folios, which a run that maps the
  // file right after the compile reads through huge page mappings.
  os.SetBufferSize(size_t(2) << 20);
  uint64_t len = header.size();
  char lenBytes[8];
  for (int i = 0; i < 8; ++i)
    lenBytes[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  os.write(lenBytes, 8);
  os << header;
  for (const WeightTensor *w : order)
    os.write(w->bytes.data(), w->bytes.size());
  os.close();
  if (os.has_error())
    return llvm::createStringError("error writing " + path.str());
  return Error::success();
}
