//===- HostTensor.h - constant tensors of the ONNX importer -----*- C++ -*-===//
//
// Private to lib/Frontend/ONNX. Initializers, Constant nodes and the
// results of constant-foldable nodes (shape subgraphs, masks built from
// buffers) live on the host while importing; only what compute needs is
// materialized in the IR.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_FRONTEND_ONNX_HOSTTENSOR_H
#define ATTNC_LIB_FRONTEND_ONNX_HOSTTENSOR_H

#include "SymbolicDims.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace attnc::onnx_frontend {

/// A dense tensor on the host: float types hold doubles, integer and bool
/// types int64 (ONNX's data type is kept for materialization).
struct HostTensor {
  int32_t dtype = onnx::TensorProto::FLOAT;
  llvm::SmallVector<int64_t> shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  /// Integer elements may be symbolic dims (handles, see SymbolicDims.h):
  /// Shape of a value with dynamic dims and what is computed from it.
  bool symbolic = false;

  static bool isFloatType(int32_t dtype) {
    return dtype == onnx::TensorProto::FLOAT ||
           dtype == onnx::TensorProto::DOUBLE ||
           dtype == onnx::TensorProto::FLOAT16 ||
           dtype == onnx::TensorProto::BFLOAT16;
  }
  bool isFloat() const { return isFloatType(dtype); }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  double asDouble(int64_t i) const {
    return isFloat() ? floats[i] : static_cast<double>(ints[i]);
  }
  int64_t asInt(int64_t i) const {
    return isFloat() ? static_cast<int64_t>(floats[i]) : ints[i];
  }
  /// A tensor of `dtype` and `shape` with zeroed storage.
  static HostTensor zeros(int32_t dtype, llvm::ArrayRef<int64_t> shape);
  /// 1-D int64 tensor.
  static HostTensor fromInts(llvm::ArrayRef<int64_t> values);
  void set(int64_t i, double v) {
    if (isFloat())
      floats[i] = v;
    else
      ints[i] = static_cast<int64_t>(v);
  }
  /// Every element as int64 (for shapes, axes, indices).
  std::vector<int64_t> toInts() const;
  /// Element j of `in` into element i, exactly for integers (handles and
  /// large int64 do not survive a trip through double).
  void copyFrom(int64_t i, const HostTensor &in, int64_t j) {
    if (!isFloat() && !in.isFloat())
      ints[i] = in.ints[j];
    else
      set(i, in.asDouble(j));
  }
  /// Clears `symbolic` when no element is a handle any more (e.g. S - S).
  void settleSymbolic();
};

/// Decodes an initializer or Constant value. Returns false with `error` set
/// for unsupported data types or data that does not match the dims. Without
/// `decodeValues`, only the type and shape are filled in (the data is still
/// checked against the dims).
bool decodeTensor(const onnx::TensorProto &proto, HostTensor &out,
                  std::string &error, bool decodeValues = true);

/// The values of a float32 tensor that decodeTensor accepted, as
/// little-endian f32 bytes: raw_data is moved out of `proto` (weights go to
/// the safetensors file as they are, never through doubles or copies).
std::string takeFloat32Bytes(onnx::TensorProto &proto);
/// `values` as little-endian f32 bytes.
std::string float32Bytes(llvm::ArrayRef<double> values);

/// The ONNX spelling of a data type, e.g. "float", "int64".
std::string dataTypeName(int32_t dtype);

/// numpy broadcasting of two shapes; nullopt when incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Evaluates `node` on constant inputs (nullptr for an omitted optional
/// input). Returns nullopt when the op has no evaluator (the node is then
/// imported as IR), false with `error` set when the node is malformed.
struct FoldResult {
  bool folded = false;
  std::vector<HostTensor> outputs;
};
/// Inputs with symbolic elements fold where the result follows from the
/// polynomials (`dims`); where it needs run-time values (Range,
/// ConstantOfShape) nothing is folded, and where it cannot be decided
/// (e.g. Equal(batch, 1)) it is an error.
bool foldNode(const onnx::NodeProto &node, int opset,
              llvm::ArrayRef<const HostTensor *> inputs, FoldResult &result,
              std::string &error, SymbolicDims &dims);

/// Attribute accessors (nullptr / defaults when absent).
const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node,
                                          llvm::StringRef name);
int64_t getIntAttr(const onnx::NodeProto &node, llvm::StringRef name,
                   int64_t defaultValue);
float getFloatAttr(const onnx::NodeProto &node, llvm::StringRef name,
                   float defaultValue);
std::optional<std::vector<int64_t>> getIntsAttr(const onnx::NodeProto &node,
                                                llvm::StringRef name);

} // namespace attnc::onnx_frontend

#endif // ATTNC_LIB_FRONTEND_ONNX_HOSTTENSOR_H
