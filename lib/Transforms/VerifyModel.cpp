//===- VerifyModel.cpp - whole-module checks before lowering --------------===//
//
// Op verifiers see one op. A tensor of 2^48 bytes, or one checkpoint name
// bound as two different tensors in two places, is only wrong for the
// model as a whole (and for a target): this pass rejects both with the
// location of the op that uses them, before anything is lowered.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNVERIFYMODEL
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Bytes of one element, or nullopt where the element has no fixed size.
std::optional<uint64_t> elementBytes(Type type) {
  if (type.isIntOrFloat())
    return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
  if (isa<IndexType>(type))
    return 8;
  if (auto vector = dyn_cast<VectorType>(type)) {
    std::optional<uint64_t> element = elementBytes(vector.getElementType());
    uint64_t bytes = element.value_or(1);
    bool overflowed = false;
    for (int64_t d : vector.getShape()) {
      bool now = false;
      bytes = llvm::SaturatingMultiply(bytes, static_cast<uint64_t>(d), &now);
      overflowed |= now;
    }
    if (overflowed)
      return std::nullopt;
    return bytes;
  }
  return std::nullopt;
}

/// The byte size of a shaped type's static part (dynamic dimensions count
/// as 1), or nullopt when it overflows 64 bits.
std::optional<uint64_t> staticBytes(ShapedType type) {
  uint64_t bytes = elementBytes(type.getElementType()).value_or(1);
  bool overflowed = false;
  for (int64_t d : type.getShape()) {
    // SaturatingMultiply resets the flag per call: keep what it reported.
    bool now = false;
    if (!ShapedType::isDynamic(d))
      bytes = llvm::SaturatingMultiply(bytes, static_cast<uint64_t>(d), &now);
    overflowed |= now;
  }
  if (overflowed)
    return std::nullopt;
  return bytes;
}

/// The checkpoint tensor a weight op binds, as far as the op determines it.
struct Binding {
  Type elementType;
  /// Empty where the op does not determine it (a concatenation's parts).
  SmallVector<int64_t> shape;
  WeightOp op;
};

/// The checkpoint shape of the tensor `name` that `op` reads.
SmallVector<int64_t> checkpointShape(WeightOp op) {
  if (op.getConcatNamesAttr())
    return {};
  SmallVector<int64_t> shape(op.getResult().getType().getShape());
  if (op.getTranspose() && shape.size() == 2)
    std::swap(shape[0], shape[1]);
  if (IntegerAttr axis = op.getGatherAxisAttr())
    shape[axis.getInt()] = op.getGatherExtentAttr().getInt();
  return shape;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(d);
  return text + "]";
}

struct AttnVerifyModelPass
    : public mlir::attn::impl::AttnVerifyModelBase<AttnVerifyModelPass> {
  using AttnVerifyModelBase::AttnVerifyModelBase;

  void runOnOperation() override {
    if (maxTensorBytes < 1) {
      getOperation().emitError()
          << "attn-verify-model: max-tensor-bytes must be >= 1, got "
          << static_cast<int64_t>(maxTensorBytes);
      return signalPassFailure();
    }
    bool ok = true;
    getOperation().walk([&](Operation *op) {
      if (failed(checkSizes(op)))
        ok = false;
      return ok ? WalkResult::advance() : WalkResult::interrupt();
    });
    if (ok)
      ok = succeeded(checkWeightBindings());
    if (!ok)
      signalPassFailure();
  }

  /// Reports `type` at `op` when its byte size overflows or exceeds the
  /// limit; `what` names the value ("result #0").
  LogicalResult checkType(Operation *op, Type type, const Twine &what) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasRank())
      return success();
    std::optional<uint64_t> bytes = staticBytes(shaped);
    if (!bytes)
      return op->emitError()
             << what << " has type " << type
             << ", whose size in bytes overflows 64 bits; no target can "
                "hold it";
    if (*bytes > static_cast<uint64_t>(maxTensorBytes))
      return op->emitError()
             << what << " has type " << type << " of " << *bytes
             << " bytes, more than the target can address ("
             << static_cast<int64_t>(maxTensorBytes) << " bytes)";
    return success();
  }

  LogicalResult checkSizes(Operation *op) {
    for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
      if (failed(checkType(op, type, "result #" + Twine(i))))
        return failure();
    for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
      if (failed(checkType(op, type, "operand #" + Twine(i))))
        return failure();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(checkType(op, arg.getType(),
                               "block argument #" + Twine(arg.getArgNumber()))))
            return failure();
    // Function signatures: an oversized input or output of the entry.
    if (auto func = dyn_cast<FunctionOpInterface>(op))
      for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
        if (failed(checkType(op, type, "function result #" + Twine(i))))
          return failure();
    return success();
  }

  LogicalResult checkWeightBindings() {
    llvm::StringMap<Binding> bindings;
    auto bind = [&](WeightOp op, StringRef name, Type elementType,
                    SmallVector<int64_t> shape) -> LogicalResult {
      auto [it, inserted] =
          bindings.try_emplace(name, Binding{elementType, shape, op});
      if (inserted) {
        return success();
      }
      Binding &first = it->second;
      bool typeDiffers = first.elementType != elementType;
      bool shapeDiffers =
          !first.shape.empty() && !shape.empty() && first.shape != shape;
      if (!typeDiffers && !shapeDiffers) {
        if (first.shape.empty())
          first.shape = shape;
        return success();
      }
      InFlightDiagnostic diag = op.emitOpError()
                                << "binds weight '" << name << "' as ";
      if (typeDiffers)
        diag << elementType << " but another attn.weight binds it as "
             << first.elementType;
      else
        diag << "a checkpoint tensor of shape " << shapeString(shape)
             << " but another attn.weight binds it with shape "
             << shapeString(first.shape);
      diag << "; one name is one tensor of the weights file";
      diag.attachNote(first.op.getLoc())
          << "the other binding of '" << name << "'";
      return failure();
    };
    WalkResult result = getOperation().walk([&](WeightOp op) {
      Type elementType = op.getResult().getType().getElementType();
      if (ArrayAttr parts = op.getConcatNamesAttr()) {
        for (Attribute part : parts)
          if (failed(
                  bind(op, cast<StringAttr>(part).getValue(), elementType, {})))
            return WalkResult::interrupt();
        return WalkResult::advance();
      }
      if (failed(bind(op, op.getName(), elementType, checkpointShape(op))))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};
} // namespace
