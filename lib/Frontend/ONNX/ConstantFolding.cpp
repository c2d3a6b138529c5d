//===- ConstantFolding.cpp - host evaluation of constant ONNX nodes -------===//
//
// Exporters compute shapes at run time (Shape -> Gather -> Concat ->
// Reshape) and slice masks out of buffers; once the input shapes are fixed
// all of that is constant and is evaluated here, so the IR holds only
// compute on static shapes.
//
//===----------------------------------------------------------------------===//

#include "FoldUtils.h"
#include "HostTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"

#include <cmath>
#include <cstring>
#include <numeric>

using namespace attnc::onnx_frontend;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

HostTensor HostTensor::zeros(int32_t dtype, ArrayRef<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  if (t.isFloat())
    t.floats.assign(t.numElements(), 0.0);
  else
    t.ints.assign(t.numElements(), 0);
  return t;
}

HostTensor HostTensor::fromInts(ArrayRef<int64_t> values) {
  HostTensor t =
      zeros(onnx::TensorProto::INT64, {static_cast<int64_t>(values.size())});
  t.ints.assign(values.begin(), values.end());
  return t;
}

void HostTensor::settleSymbolic() {
  symbolic = !isFloat() && llvm::any_of(ints, isSymbolic);
}

std::vector<int64_t> HostTensor::toInts() const {
  std::vector<int64_t> out(numElements());
  for (int64_t i = 0, e = numElements(); i < e; ++i)
    out[i] = asInt(i);
  return out;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float value;
  if (exp == 0)
    value = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    value = mant ? NAN : INFINITY;
  else
    value = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return sign ? -value : value;
}

static float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {
/// An ONNX element type: its name and, for those attnc reads, its size in
/// raw_data and how one little-endian element decodes (into a float or an
/// integer HostTensor, see HostTensor::isFloatType).
struct OnnxDType {
  int32_t proto;
  const char *name;
  size_t bytes; // 0: not read
  double (*decodeFloat)(const char *);
  int64_t (*decodeInt)(const char *);
};
} // namespace

using namespace llvm::support;

/// A little-endian IEEE float of type T, stored as the unsigned Bits.
template <typename T, typename Bits> static double decodeIEEE(const char *p) {
  Bits bits = endian::read<Bits, llvm::endianness::little>(p);
  T value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// A little-endian integer of type T.
template <typename T> static int64_t decodeInteger(const char *p) {
  return static_cast<T>(
      endian::read<std::make_unsigned_t<T>, llvm::endianness::little>(p));
}

/// The one table of ONNX element types.
static const OnnxDType kOnnxDTypes[] = {
    {onnx::TensorProto::FLOAT, "float", 4, decodeIEEE<float, uint32_t>,
     nullptr},
    {onnx::TensorProto::DOUBLE, "double", 8, decodeIEEE<double, uint64_t>,
     nullptr},
    {onnx::TensorProto::FLOAT16, "float16", 2,
     [](const char *p) -> double { return halfToFloat(endian::read16le(p)); },
     nullptr},
    {onnx::TensorProto::BFLOAT16, "bfloat16", 2,
     [](const char *p) -> double { return bf16ToFloat(endian::read16le(p)); },
     nullptr},
    {onnx::TensorProto::INT64, "int64", 8, nullptr, decodeInteger<int64_t>},
    {onnx::TensorProto::INT32, "int32", 4, nullptr, decodeInteger<int32_t>},
    {onnx::TensorProto::INT16, "int16", 2, nullptr, decodeInteger<int16_t>},
    {onnx::TensorProto::INT8, "int8", 1, nullptr, decodeInteger<int8_t>},
    {onnx::TensorProto::UINT8, "uint8", 1, nullptr, decodeInteger<uint8_t>},
    {onnx::TensorProto::BOOL, "bool", 1, nullptr,
     [](const char *p) -> int64_t { return *p != 0; }},
    {onnx::TensorProto::STRING, "string", 0, nullptr, nullptr},
    // Types newer than libonnx 1.12's enum (by number), named for errors.
    {4, "uint16", 0, nullptr, nullptr},
    {12, "uint32", 0, nullptr, nullptr},
    {13, "uint64", 0, nullptr, nullptr},
    {14, "complex64", 0, nullptr, nullptr},
    {15, "complex128", 0, nullptr, nullptr},
    {17, "float8e4m3fn", 0, nullptr, nullptr},
    {18, "float8e4m3fnuz", 0, nullptr, nullptr},
    {19, "float8e5m2", 0, nullptr, nullptr},
    {20, "float8e5m2fnuz", 0, nullptr, nullptr},
    {21, "uint4", 0, nullptr, nullptr},
    {22, "int4", 0, nullptr, nullptr},
    {23, "float4e2m1", 0, nullptr, nullptr},
    {24, "float8e8m0", 0, nullptr, nullptr},
};

static const OnnxDType *lookupOnnxDType(int32_t dtype) {
  for (const OnnxDType &t : kOnnxDTypes)
    if (t.proto == dtype)
      return &t;
  return nullptr;
}

std::string attnc::onnx_frontend::float32Bytes(llvm::ArrayRef<double> values) {
  std::string out(values.size() * sizeof(float), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    float f = static_cast<float>(values[i]);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    endian::write32le(&out[i * sizeof(float)], bits);
  }
  return out;
}

std::string attnc::onnx_frontend::takeFloat32Bytes(onnx::TensorProto &proto) {
  if (proto.has_raw_data())
    return std::move(*proto.mutable_raw_data());
  std::vector<double> values(proto.float_data().begin(),
                             proto.float_data().end());
  return float32Bytes(values);
}

std::string attnc::onnx_frontend::dataTypeName(int32_t dtype) {
  if (const OnnxDType *t = lookupOnnxDType(dtype))
    return t->name;
  return "data type " + std::to_string(dtype);
}

bool attnc::onnx_frontend::decodeTensor(const onnx::TensorProto &proto,
                                        HostTensor &out, std::string &error,
                                        bool decodeValues) {
  out = HostTensor();
  out.dtype = proto.data_type();
  int64_t n = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0 || (d > 0 && n > (int64_t(1) << 40) / d)) {
      error = "has invalid dims";
      return false;
    }
    out.shape.push_back(d);
    n *= d;
  }
  const OnnxDType *info = lookupOnnxDType(out.dtype);
  if (!info || !info->bytes) {
    error = "has unsupported data type " + dataTypeName(out.dtype);
    return false;
  }
  size_t elemBytes = info->bytes;
  if (decodeValues && out.isFloat())
    out.floats.resize(n);
  else if (decodeValues)
    out.ints.resize(n);
  auto mismatch = [&](size_t have) {
    error = "holds " + std::to_string(have) + " values but its dims need " +
            std::to_string(n);
    return false;
  };
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != n * elemBytes)
      return mismatch(raw.size() / elemBytes);
    if (!decodeValues)
      return true;
    const char *p = raw.data();
    for (int64_t i = 0; i < n; ++i, p += elemBytes) {
      if (info->decodeFloat)
        out.floats[i] = info->decodeFloat(p);
      else
        out.ints[i] = info->decodeInt(p);
    }
    return true;
  }
  // The typed fields: float_data, double_data, int64_data, and int32_data
  // for every narrower type (float16/bfloat16 as their bits).
  auto copy = [&](const auto &field, auto &values, auto convert) {
    if (field.size() != n)
      return mismatch(field.size());
    if (!decodeValues)
      return true;
    for (int64_t i = 0; i < n; ++i)
      values[i] = convert(field.Get(i));
    return true;
  };
  switch (out.dtype) {
  case onnx::TensorProto::FLOAT:
    return copy(proto.float_data(), out.floats,
                [](float v) -> double { return v; });
  case onnx::TensorProto::DOUBLE:
    return copy(proto.double_data(), out.floats, [](double v) { return v; });
  case onnx::TensorProto::INT64:
    return copy(proto.int64_data(), out.ints, [](int64_t v) { return v; });
  case onnx::TensorProto::FLOAT16:
    return copy(proto.int32_data(), out.floats, [](int32_t v) -> double {
      return halfToFloat(static_cast<uint16_t>(v));
    });
  case onnx::TensorProto::BFLOAT16:
    return copy(proto.int32_data(), out.floats, [](int32_t v) -> double {
      return bf16ToFloat(static_cast<uint16_t>(v));
    });
  case onnx::TensorProto::BOOL:
    return copy(proto.int32_data(), out.ints,
                [](int32_t v) -> int64_t { return v != 0; });
  default:
    return copy(proto.int32_data(), out.ints,
                [](int32_t v) -> int64_t { return v; });
  }
}

const onnx::AttributeProto *
attnc::onnx_frontend::findAttribute(const onnx::NodeProto &node,
                                    StringRef name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t attnc::onnx_frontend::getIntAttr(const onnx::NodeProto &node,
                                         StringRef name, int64_t defaultValue) {
  const onnx::AttributeProto *attr = findAttribute(node, name);
  return attr ? attr->i() : defaultValue;
}

float attnc::onnx_frontend::getFloatAttr(const onnx::NodeProto &node,
                                         StringRef name, float defaultValue) {
  const onnx::AttributeProto *attr = findAttribute(node, name);
  return attr ? attr->f() : defaultValue;
}

std::optional<std::vector<int64_t>>
attnc::onnx_frontend::getIntsAttr(const onnx::NodeProto &node, StringRef name) {
  const onnx::AttributeProto *attr = findAttribute(node, name);
  if (!attr)
    return std::nullopt;
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::optional<SmallVector<int64_t>>
attnc::onnx_frontend::broadcastShapes(ArrayRef<int64_t> a,
                                      ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {
/// The shape all `operands` broadcast to (Where's three), if they do.
std::optional<SmallVector<int64_t>>
broadcastAll(ArrayRef<const HostTensor *> operands) {
  std::optional<SmallVector<int64_t>> shape =
      SmallVector<int64_t>(operands.front()->shape);
  for (const HostTensor *t : operands.drop_front())
    if (shape)
      shape = attnc::onnx_frontend::broadcastShapes(*shape, t->shape);
  return shape;
}
} // namespace

namespace attnc::onnx_frontend::fold {
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The flat index into `in` (broadcast to `out`) of each flat index of out.
std::vector<int64_t> broadcastIndices(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out) {
  int64_t n = 1;
  for (int64_t d : out)
    n *= d;
  SmallVector<int64_t> inStrides = stridesOf(in);
  size_t lead = out.size() - in.size();
  std::vector<int64_t> result(n);
  SmallVector<int64_t> idx(out.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t src = 0;
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != 1)
        src += idx[d + lead] * inStrides[d];
    result[flat] = src;
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      if (++idx[d] < out[d])
        break;
      idx[d] = 0;
    }
  }
  return result;
}

bool wrapIndex(int64_t &i, int64_t extent, std::string &error) {
  if (i < -extent || i >= extent) {
    error = "index " + std::to_string(i) + " is out of range for extent " +
            std::to_string(extent);
    return false;
  }
  if (i < 0)
    i += extent;
  return true;
}

bool normalizeAxis(int64_t &axis, int64_t rank, std::string &error) {
  // A scalar's one axis is 0.
  if (rank == 0 && axis == 0)
    return true;
  if (wrapIndex(axis, rank, error))
    return true;
  error = "axis " + std::to_string(axis) + " is out of range for rank " +
          std::to_string(rank);
  return false;
}

HostTensor elementwise(ArrayRef<const HostTensor *> ins, int32_t dtype,
                       ArrayRef<int64_t> shape,
                       llvm::function_ref<double(ArrayRef<double>)> fn) {
  HostTensor out = HostTensor::zeros(dtype, shape);
  std::vector<std::vector<int64_t>> maps;
  for (const HostTensor *in : ins)
    maps.push_back(broadcastIndices(in->shape, shape));
  SmallVector<double> args(ins.size());
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    for (size_t k = 0; k < ins.size(); ++k)
      args[k] = ins[k]->asDouble(maps[k][i]);
    out.set(i, fn(args));
  }
  return out;
}
} // namespace attnc::onnx_frontend::fold

using namespace attnc::onnx_frontend::fold;

namespace {
/// Gathers along `axis` with the given (normalized) indices.
HostTensor gather(const HostTensor &data, int64_t axis,
                  ArrayRef<int64_t> indices, ArrayRef<int64_t> indexShape) {
  SmallVector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.append(indexShape.begin(), indexShape.end());
  shape.append(data.shape.begin() + axis + 1, data.shape.end());
  HostTensor out = HostTensor::zeros(data.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= data.shape[d];
  for (size_t d = axis + 1; d < data.shape.size(); ++d)
    inner *= data.shape[d];
  int64_t extent = data.shape[axis], pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : indices)
      for (int64_t i = 0; i < inner; ++i)
        out.copyFrom(pos++, data, (o * extent + idx) * inner + i);
  return out;
}

double castValue(double v, int32_t to) {
  switch (to) {
  case onnx::TensorProto::FLOAT:
    return static_cast<float>(v);
  case onnx::TensorProto::BOOL:
    return v != 0.0;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return std::trunc(v);
  default:
    return v;
  }
}
} // namespace

static bool foldConcrete(const onnx::NodeProto &node, int opset,
                         ArrayRef<const HostTensor *> inputs,
                         FoldResult &result, std::string &error);

/// Folds `node` when an input holds symbolic dims: integer arithmetic and
/// comparisons on the polynomials, Where on a known condition. The ops that
/// only move elements (Gather, Concat, Transpose, Expand) take the generic
/// path.
static bool foldSymbolic(const onnx::NodeProto &node,
                         ArrayRef<const HostTensor *> inputs,
                         FoldResult &result, std::string &error,
                         SymbolicDims &dims) {
  StringRef op = node.op_type();
  auto in = [&](size_t i) -> const HostTensor * {
    return i < inputs.size() ? inputs[i] : nullptr;
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!in(i)) {
      error = "input " + std::to_string(i) + " is missing";
      return false;
    }
  auto undecided = [&](int64_t a, int64_t b) {
    error = "cannot decide " + op.str() + "(" + dims.str(a) + ", " +
            dims.str(b) + ") for every size of the symbolic dimensions";
    return false;
  };
  auto overflow = [&]() {
    error = "symbolic dimension arithmetic overflows";
    return false;
  };
  // Elementwise over int64 elements with numpy broadcasting.
  auto map2 =
      [&](int32_t dtype,
          llvm::function_ref<std::optional<int64_t>(int64_t, int64_t)> fn) {
        auto shape = broadcastShapes(in(0)->shape, in(1)->shape);
        if (!shape) {
          error = "operand shapes do not broadcast";
          return false;
        }
        HostTensor out = HostTensor::zeros(dtype, *shape);
        std::vector<int64_t> ma = broadcastIndices(in(0)->shape, *shape),
                             mb = broadcastIndices(in(1)->shape, *shape);
        for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
          auto r = fn(in(0)->ints[ma[i]], in(1)->ints[mb[i]]);
          if (!r)
            return false;
          out.ints[i] = *r;
        }
        out.settleSymbolic();
        result.folded = true;
        result.outputs.push_back(std::move(out));
        return true;
      };
  bool isInt =
      llvm::all_of(inputs, [](const HostTensor *t) { return !t->isFloat(); });
  if (!isInt) {
    error = "symbolic dimensions meet float values (fold them to integers "
            "or fix the dimensions)";
    return false;
  }
  int32_t dtype = in(0)->dtype;
  if (inputs.size() == 2 && (op == "Add" || op == "Sub" || op == "Mul" ||
                             op == "Div" || op == "Max" || op == "Min"))
    return map2(dtype, [&](int64_t a, int64_t b) -> std::optional<int64_t> {
      std::optional<int64_t> r;
      if (op == "Add")
        r = dims.add(a, b);
      else if (op == "Sub")
        r = dims.sub(a, b);
      else if (op == "Mul")
        r = dims.mul(a, b);
      else if (op == "Div") {
        if (!isSymbolic(a) && !isSymbolic(b))
          return b == 0 || (a == INT64_MIN && b == -1) ? 0 : a / b;
        r = dims.divExact(a, b);
        if (!r) {
          error = "cannot divide " + dims.str(a) + " by " + dims.str(b) +
                  " exactly";
          return std::nullopt;
        }
      } else {
        auto c = dims.compare(a, b);
        if (!c) {
          undecided(a, b);
          return std::nullopt;
        }
        return (op == "Max") == (*c >= 0) ? a : b;
      }
      if (!r)
        overflow();
      return r;
    });
  if (inputs.size() == 2 && (op == "Equal" || op == "Less" || op == "Greater" ||
                             op == "LessOrEqual" || op == "GreaterOrEqual"))
    return map2(onnx::TensorProto::BOOL,
                [&](int64_t a, int64_t b) -> std::optional<int64_t> {
                  auto c = dims.compare(a, b);
                  if (!c) {
                    undecided(a, b);
                    return std::nullopt;
                  }
                  if (op == "Equal")
                    return *c == 0;
                  if (op == "Less")
                    return *c < 0;
                  if (op == "Greater")
                    return *c > 0;
                  if (op == "LessOrEqual")
                    return *c <= 0;
                  return *c >= 0;
                });
  if (op == "Neg" && inputs.size() == 1) {
    HostTensor out = *in(0);
    for (int64_t &v : out.ints) {
      auto r = dims.sub(0, v);
      if (!r)
        return overflow();
      v = *r;
    }
    result.folded = true;
    result.outputs.push_back(std::move(out));
    return true;
  }
  if (op == "Cast") {
    int32_t to = static_cast<int32_t>(getIntAttr(node, "to", 0));
    if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32) {
      error = "casts symbolic dimensions to " + dataTypeName(to) +
              " (only to int64 and int32 they fold)";
      return false;
    }
    HostTensor out = *in(0);
    out.dtype = to;
    result.folded = true;
    result.outputs.push_back(std::move(out));
    return true;
  }
  if (op == "Where" && inputs.size() == 3) {
    if (in(0)->symbolic) {
      error = "the condition is symbolic";
      return false;
    }
    auto s = broadcastAll({in(0), in(1), in(2)});
    if (!s) {
      error = "operand shapes do not broadcast";
      return false;
    }
    HostTensor out = HostTensor::zeros(in(1)->dtype, *s);
    std::vector<int64_t> mc = broadcastIndices(in(0)->shape, *s),
                         mx = broadcastIndices(in(1)->shape, *s),
                         my = broadcastIndices(in(2)->shape, *s);
    for (int64_t i = 0, e = out.numElements(); i < e; ++i)
      out.ints[i] =
          in(0)->ints[mc[i]] ? in(1)->ints[mx[i]] : in(2)->ints[my[i]];
    out.settleSymbolic();
    result.folded = true;
    result.outputs.push_back(std::move(out));
    return true;
  }
  error = "cannot evaluate " + op.str() + " on symbolic dimensions";
  return false;
}

bool attnc::onnx_frontend::foldNode(const onnx::NodeProto &node, int opset,
                                    ArrayRef<const HostTensor *> inputs,
                                    FoldResult &result, std::string &error,
                                    SymbolicDims &dims) {
  StringRef op = node.op_type();
  bool anySymbolic = llvm::any_of(
      inputs, [](const HostTensor *t) { return t && t->symbolic; });
  if (anySymbolic) {
    // A constant that reads as a handle would be taken for a symbol.
    for (const HostTensor *t : inputs)
      if (t && !t->symbolic && !t->isFloat() &&
          llvm::any_of(t->ints, isSymbolic)) {
        error = "has an integer constant near -2^62, which is reserved for "
                "symbolic dimensions";
        return false;
      }
    // Run-time tensors sized by symbolic dims: the importer builds them.
    if (op == "Range" || op == "ConstantOfShape")
      return true;
    bool moves = op == "Identity" || op == "Dropout" || op == "Gather" ||
                 op == "Concat" || op == "Transpose" || op == "Expand";
    if (!moves)
      return foldSymbolic(node, inputs, result, error, dims);
    if (op == "Expand" && inputs.size() > 1 && inputs[1] && inputs[1]->symbolic)
      return true;
    if (op == "Gather" && inputs.size() > 1 && inputs[1] &&
        inputs[1]->symbolic) {
      error = "gathers from a constant at a symbolic index";
      return false;
    }
    if (!foldConcrete(node, opset, inputs, result, error))
      return false;
    for (HostTensor &t : result.outputs)
      t.settleSymbolic();
    return true;
  }
  return foldConcrete(node, opset, inputs, result, error);
}

static bool foldConcrete(const onnx::NodeProto &node, int opset,
                         ArrayRef<const HostTensor *> inputs,
                         FoldResult &result, std::string &error) {
  StringRef op = node.op_type();
  fold::FoldArgs args{inputs, result, error};
  auto [in, done, need] = args.accessors();

  if (op == "Identity" || op == "Dropout") {
    if (!need(1))
      return false;
    return done(*in(0));
  }

  // Numpy-broadcasting elementwise ops.
  using Fn = std::function<double(ArrayRef<double>)>;
  Fn binary =
      llvm::StringSwitch<Fn>(op)
          .Case("Add", [](ArrayRef<double> a) { return a[0] + a[1]; })
          .Case("Sub", [](ArrayRef<double> a) { return a[0] - a[1]; })
          .Case("Mul", [](ArrayRef<double> a) { return a[0] * a[1]; })
          .Case("Pow", [](ArrayRef<double> a) { return std::pow(a[0], a[1]); })
          .Case("Max", [](ArrayRef<double> a) { return std::max(a[0], a[1]); })
          .Case("Min", [](ArrayRef<double> a) { return std::min(a[0], a[1]); })
          .Default(nullptr);
  Fn compare =
      llvm::StringSwitch<Fn>(op)
          .Case("Equal", [](ArrayRef<double> a) { return a[0] == a[1]; })
          .Case("Less", [](ArrayRef<double> a) { return a[0] < a[1]; })
          .Case("Greater", [](ArrayRef<double> a) { return a[0] > a[1]; })
          .Case("LessOrEqual", [](ArrayRef<double> a) { return a[0] <= a[1]; })
          .Case("GreaterOrEqual",
                [](ArrayRef<double> a) { return a[0] >= a[1]; })
          .Case("And", [](ArrayRef<double> a) { return a[0] && a[1]; })
          .Case("Or", [](ArrayRef<double> a) { return a[0] || a[1]; })
          .Default(nullptr);
  if (op == "Div") {
    if (!need(2))
      return false;
    bool isInt = !in(0)->isFloat();
    binary = [isInt](ArrayRef<double> a) {
      if (!isInt)
        return a[0] / a[1];
      // Integer division truncates (C semantics, as ONNX runtimes do).
      return a[1] == 0 ? 0.0 : std::trunc(a[0] / a[1]);
    };
  }
  if (binary || compare) {
    auto shape = args.binaryShape();
    if (!shape)
      return false;
    int32_t dtype = compare ? int32_t(onnx::TensorProto::BOOL) : in(0)->dtype;
    return done(
        elementwise({in(0), in(1)}, dtype, *shape, compare ? compare : binary));
  }
  Fn unary =
      llvm::StringSwitch<Fn>(op)
          .Case("Neg", [](ArrayRef<double> a) { return -a[0]; })
          .Case("Sqrt", [](ArrayRef<double> a) { return std::sqrt(a[0]); })
          .Case("Abs", [](ArrayRef<double> a) { return std::fabs(a[0]); })
          .Case("Not", [](ArrayRef<double> a) { return double(a[0] == 0); })
          .Case("Reciprocal", [](ArrayRef<double> a) { return 1.0 / a[0]; })
          .Case("Exp", [](ArrayRef<double> a) { return std::exp(a[0]); })
          .Case("Log", [](ArrayRef<double> a) { return std::log(a[0]); })
          .Case("Sign",
                [](ArrayRef<double> a) {
                  return a[0] > 0 ? 1.0 : (a[0] < 0 ? -1.0 : a[0]);
                })
          .Case("Floor", [](ArrayRef<double> a) { return std::floor(a[0]); })
          .Case("Ceil", [](ArrayRef<double> a) { return std::ceil(a[0]); })
          .Default(nullptr);
  if (unary) {
    if (!need(1))
      return false;
    return done(elementwise({in(0)}, in(0)->dtype, in(0)->shape, unary));
  }
  if (op == "Cast") {
    if (!need(1))
      return false;
    int32_t to = static_cast<int32_t>(getIntAttr(node, "to", 0));
    if (to == onnx::TensorProto::STRING || to == 0) {
      error = "casts to " + dataTypeName(to) + " are not supported";
      return false;
    }
    return done(
        elementwise({in(0)}, to, in(0)->shape,
                    [to](ArrayRef<double> a) { return castValue(a[0], to); }));
  }
  if (op == "Where") {
    if (!need(3))
      return false;
    auto s = broadcastAll({in(0), in(1), in(2)});
    if (!s) {
      error = "operand shapes do not broadcast";
      return false;
    }
    return done(elementwise(
        {in(0), in(1), in(2)}, in(1)->dtype, *s,
        [](ArrayRef<double> a) { return a[0] != 0 ? a[1] : a[2]; }));
  }
  if (op == "ConstantOfShape") {
    if (!need(1))
      return false;
    std::vector<int64_t> shape = in(0)->toInts();
    for (int64_t d : shape)
      if (d < 0) {
        error = "has a negative dimension in its shape";
        return false;
      }
    HostTensor value = HostTensor::zeros(onnx::TensorProto::FLOAT, {});
    if (const onnx::AttributeProto *attr = findAttribute(node, "value")) {
      if (!decodeTensor(attr->t(), value, error) || value.numElements() != 1) {
        error = "value attribute must hold one element";
        return false;
      }
    } else {
      value.floats.assign(1, 0.0);
    }
    HostTensor out = HostTensor::zeros(value.dtype, shape);
    for (int64_t i = 0, e = out.numElements(); i < e; ++i)
      out.set(i, value.asDouble(0));
    return done(std::move(out));
  }
  if (op == "Range") {
    if (!need(3))
      return false;
    double start = in(0)->asDouble(0), limit = in(1)->asDouble(0),
           delta = in(2)->asDouble(0);
    if (delta == 0) {
      error = "delta is zero";
      return false;
    }
    int64_t n = std::max<int64_t>(
        static_cast<int64_t>(std::ceil((limit - start) / delta)), 0);
    HostTensor out = HostTensor::zeros(in(0)->dtype, {n});
    for (int64_t i = 0; i < n; ++i)
      out.set(i, start + i * delta);
    return done(std::move(out));
  }
  if (op == "Gather") {
    if (!need(2))
      return false;
    int64_t axis = getIntAttr(node, "axis", 0);
    int64_t rank = static_cast<int64_t>(in(0)->shape.size());
    if (!normalizeAxis(axis, rank, error))
      return false;
    std::vector<int64_t> idx = in(1)->toInts();
    for (int64_t &i : idx) {
      if (i < -in(0)->shape[axis] || i >= in(0)->shape[axis]) {
        error = "index " + std::to_string(i) + " is out of range for axis " +
                std::to_string(axis) + " of extent " +
                std::to_string(in(0)->shape[axis]);
        return false;
      }
      if (i < 0)
        i += in(0)->shape[axis];
    }
    return done(gather(*in(0), axis, idx, in(1)->shape));
  }
  if (op == "Concat") {
    if (inputs.empty() || !need(inputs.size()))
      return false;
    int64_t axis = getIntAttr(node, "axis", 0);
    int64_t rank = static_cast<int64_t>(in(0)->shape.size());
    if (!normalizeAxis(axis, rank, error))
      return false;
    SmallVector<int64_t> shape = in(0)->shape;
    shape[axis] = 0;
    for (const HostTensor *t : inputs) {
      if (t->shape.size() != static_cast<size_t>(rank)) {
        error = "inputs have different ranks";
        return false;
      }
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t->shape[d] != in(0)->shape[d]) {
          error = "inputs differ outside the concatenation axis";
          return false;
        }
      shape[axis] += t->shape[axis];
    }
    HostTensor out = HostTensor::zeros(in(0)->dtype, shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= shape[d];
    int64_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const HostTensor *t : inputs) {
        int64_t chunk = t->shape[axis] * inner;
        for (int64_t i = 0; i < chunk; ++i)
          out.copyFrom(pos++, *t, o * chunk + i);
      }
    return done(std::move(out));
  }
  if (op == "Transpose") {
    if (!need(1))
      return false;
    int64_t rank = static_cast<int64_t>(in(0)->shape.size());
    std::vector<int64_t> perm(rank);
    if (auto p = getIntsAttr(node, "perm"))
      perm = *p;
    else
      for (int64_t d = 0; d < rank; ++d)
        perm[d] = rank - 1 - d;
    if (static_cast<int64_t>(perm.size()) != rank) {
      error = "perm has the wrong length";
      return false;
    }
    SmallVector<int64_t> shape(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (perm[d] < 0 || perm[d] >= rank) {
        error = "perm is not a permutation";
        return false;
      }
      shape[d] = in(0)->shape[perm[d]];
    }
    HostTensor out = HostTensor::zeros(in(0)->dtype, shape);
    SmallVector<int64_t> inStrides = stridesOf(in(0)->shape);
    SmallVector<int64_t> idx(rank, 0);
    for (int64_t flat = 0, e = out.numElements(); flat < e; ++flat) {
      int64_t src = 0;
      for (int64_t d = 0; d < rank; ++d)
        src += idx[d] * inStrides[perm[d]];
      out.copyFrom(flat, *in(0), src);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++idx[d] < shape[d])
          break;
        idx[d] = 0;
      }
    }
    return done(std::move(out));
  }
  if (op == "Trilu") {
    if (!need(1))
      return false;
    int64_t k = in(1) ? in(1)->asInt(0) : 0;
    bool upper = getIntAttr(node, "upper", 1) != 0;
    const HostTensor &x = *in(0);
    if (x.shape.size() < 2) {
      error = "input must have rank >= 2";
      return false;
    }
    HostTensor out = x;
    int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
    for (int64_t i = 0, e = x.numElements(); i < e; ++i) {
      int64_t c = i % cols, r = (i / cols) % rows;
      bool keep = upper ? c - r >= k : c - r <= k;
      if (!keep)
        out.set(i, 0);
    }
    return done(std::move(out));
  }
  if (op == "Expand") {
    if (!need(2))
      return false;
    std::vector<int64_t> target = in(1)->toInts();
    auto shape = broadcastShapes(in(0)->shape, target);
    if (!shape) {
      error = "shape does not broadcast with the input";
      return false;
    }
    HostTensor out = HostTensor::zeros(in(0)->dtype, *shape);
    std::vector<int64_t> map = broadcastIndices(in(0)->shape, *shape);
    for (int64_t i = 0, e = out.numElements(); i < e; ++i)
      out.copyFrom(i, *in(0), map[i]);
    return done(std::move(out));
  }
  // The ops of transformer exporters' masks and indexing (FoldOps.cpp).
  if (!foldTransformerOps(node, opset, inputs, result, error))
    return false;
  // Reshapes and slices are evaluated by the importer's shape logic; the
  // caller passes them back here with `shape` already resolved.
  return true;
}
