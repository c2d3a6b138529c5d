//===- Graph.cpp - the phases of importing an ONNX graph ------------------===//
//
// A graph is imported in order: the opset, the initializers (host
// constants; large float ones run-time weights), the graph inputs (the
// arguments of @main, with symbolic dimensions), the nodes (Ops/*.cpp, by
// the registry) and the outputs.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

Error Importer::importOpsets() {
  for (const auto &import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx")
      opset = static_cast<int>(import.version());
    else if (import.domain() == "com.microsoft")
      microsoftOpset = static_cast<int>(import.version());
  if (opset < kMinOpset || opset > kMaxOpset)
    return fail("opset " + Twine(opset) + " is not supported (the importer " +
                "reads opsets " + Twine(kMinOpset) + " to " + Twine(kMaxOpset) +
                ")");
  return Error::success();
}

Error Importer::importInitializers(llvm::StringSet<> &initializerNames) {
  // Initializers first: graph inputs that repeat an initializer's name (old
  // exporters) are the initializer.
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

  return Error::success();
}

Error Importer::importInputs(const llvm::StringSet<> &initializerNames) {
  const onnx::GraphProto &graph = model.graph();
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
        // `?` asks for a size chosen per run, which the graph cannot give.
        if (!fixed.empty())
          return fail("--input-shape " + in.name() + " gives dimension " +
                      Twine(d) + " as ?, but the model fixes it to " +
                      Twine(dim.dim_value()) +
                      " (export it with that axis dynamic)");
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
  symbolInputUses.assign(syms.numSymbols(), 0);
  for (ArrayRef<int64_t> dims : argDims)
    for (int64_t d : dims) {
      SymbolicDims::Poly poly = syms.poly(d);
      if (isSymbolic(d) && poly.size() == 1 &&
          poly.begin()->first.size() == 1 && poly.begin()->second == 1)
        ++symbolInputUses[poly.begin()->first[0]];
    }

  module = ModuleOp::create(fileLoc());
  b.setInsertionPointToEnd(module->getBody());
  mainFunc = func::FuncOp::create(b, fileLoc(), "main",
                                  b.getFunctionType(argTypes, {}));
  func::FuncOp func = mainFunc;
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

  return Error::success();
}

Error Importer::importNodes() {
  const onnx::GraphProto &graph = model.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    currentIndex = i;
    if (Error err = importNode(graph.node(i)))
      return err;
  }
  current = nullptr;

  return Error::success();
}

Error Importer::importOutputs() {
  const onnx::GraphProto &graph = model.graph();
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
  func::FuncOp func = mainFunc;
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
    if (failed(verify(*module)))
      return llvm::createStringError(fileName +
                                     ": error: the imported IR does not "
                                     "verify (importer bug):\n" +
                                     diag);
  }
  return Error::success();
}
