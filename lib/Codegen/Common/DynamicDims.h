//===- DynamicDims.h - run-time sizes that must be equal --------*- C++ -*-===//
//
// Private to lib/Codegen/Common (attn-hoist-weights, which writes them into
// the manifest); see DynamicDims.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_COMMON_DYNAMICDIMS_H
#define ATTNC_LIB_CODEGEN_COMMON_DYNAMICDIMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <utility>
#include <vector>

namespace mlir::attn {

/// Per dynamic dimension (in order) of each entry argument from firstInput
/// on (see analyzeDynamicDims) and of each entry result: the
/// input (its index among the inputs) and axis whose size it has, or
/// {-1, -1} for an input size the caller chooses.
struct ModelDynamicDims {
  std::vector<std::vector<std::pair<int, int>>> inputs, outputs;
};

/// Analyzes `entry` (and the functions it calls) on tensors. Its arguments
/// from `firstInput` on are the inputs; `inputIndex[i]` is the index among
/// the model's inputs of argument firstInput + i, or -1 for an argument that
/// is not an input (model state, which must be static). Fails with an error
/// on `entry` when an output's dynamic size follows from no input.
FailureOr<ModelDynamicDims> analyzeDynamicDims(ModuleOp module,
                                               func::FuncOp entry,
                                               unsigned firstInput,
                                               ArrayRef<int> inputIndex);

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_COMMON_DYNAMICDIMS_H
