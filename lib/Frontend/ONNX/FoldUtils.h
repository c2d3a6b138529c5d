//===- FoldUtils.h - host evaluation helpers of the ONNX importer -*- C++ -*-=//
//
// Private to lib/Frontend/ONNX: what ConstantFolding.cpp and FoldOps.cpp
// share to evaluate nodes on host constants.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_FRONTEND_ONNX_FOLDUTILS_H
#define ATTNC_LIB_FRONTEND_ONNX_FOLDUTILS_H

#include "HostTensor.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <tuple>

namespace attnc::onnx_frontend {

/// Evaluates the ops of transformer exporters' masks and indexing (logical,
/// Mod, Sign, Clip, CumSum, Tile, Pad, Gather/ScatterElements, GatherND,
/// ScatterND, ReduceSum/ReduceMax...) on concrete constants. Returns true
/// with `result.folded` unset for other ops, false with `error` set for
/// malformed nodes.
bool foldTransformerOps(const onnx::NodeProto &node, int opset,
                        llvm::ArrayRef<const HostTensor *> inputs,
                        FoldResult &result, std::string &error);

namespace fold {
/// One host fold's inputs and results, with what every folder starts with:
/// an input or null, the result, and the check that inputs are present.
struct FoldArgs {
  llvm::ArrayRef<const HostTensor *> inputs;
  FoldResult &result;
  std::string &error;

  const HostTensor *in(size_t i) const {
    return i < inputs.size() ? inputs[i] : nullptr;
  }
  bool done(HostTensor t) {
    result.folded = true;
    result.outputs.push_back(std::move(t));
    return true;
  }
  bool need(size_t count) {
    for (size_t i = 0; i < count; ++i)
      if (!in(i)) {
        error = "input " + std::to_string(i) + " is missing";
        return false;
      }
    return true;
  }
  /// The broadcast shape of inputs 0 and 1 (a binary elementwise op);
  /// nullopt with `error` set when one is missing or they do not broadcast.
  std::optional<llvm::SmallVector<int64_t>> binaryShape() {
    if (!need(2))
      return std::nullopt;
    auto shape = broadcastShapes(in(0)->shape, in(1)->shape);
    if (!shape)
      error = "operand shapes do not broadcast";
    return shape;
  }
  /// `in`, `done` and `need` as callables, so that a fold body reads
  /// `auto [in, done, need] = args.accessors();` and then `in(0)`.
  auto accessors() {
    return std::make_tuple([this](size_t i) { return in(i); },
                           [this](HostTensor t) { return done(std::move(t)); },
                           [this](size_t count) { return need(count); });
  }
};

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);
/// The flat index into `in` (broadcast to `out`) of each flat index of out.
std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> in,
                                      llvm::ArrayRef<int64_t> out);
/// Makes `i`, an index into an axis of `extent` elements (negative from the
/// end), non-negative; false with `error` set when it is out of range.
bool wrapIndex(int64_t &i, int64_t extent, std::string &error);
/// Makes `axis` of a rank-`rank` tensor non-negative; false with `error`
/// set when it is out of range.
bool normalizeAxis(int64_t &axis, int64_t rank, std::string &error);
/// `fn` of the elements of `ins` broadcast to `shape`, as a `dtype` tensor.
HostTensor elementwise(llvm::ArrayRef<const HostTensor *> ins, int32_t dtype,
                       llvm::ArrayRef<int64_t> shape,
                       llvm::function_ref<double(llvm::ArrayRef<double>)> fn);
} // namespace fold

} // namespace attnc::onnx_frontend

#endif // ATTNC_LIB_FRONTEND_ONNX_FOLDUTILS_H
