//===- ConvertPrecision.cpp - compute an f32 model in f16 or bf16 ---------===//
//
// The attn ops are polymorphic in their float type and their lowering
// already computes f16/bf16 ops with f32 accumulation and statistics, so
// changing the model's precision is a change of types: every f32 tensor an
// attn op produces becomes the target type. What the attn ops do not own
// (function arguments and results, ops an importer left) keeps its types and
// meets the converted values through explicit conversions. Model state
// (a decode step's KV caches: entry arguments tied to results by
// `attn.state_arg`) is the exception: it belongs to the model, so it takes
// the target type whatever `io-precision` says. A conversion of the cache
// would be a new tensor, which bufferization cannot update in place
// (attn-drop-state-results rejects that), and the caches take half the
// memory.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCONVERTPRECISION
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// `type` with `to` for its element type if it is an f32 tensor; else null.
static RankedTensorType convertedType(Type type, FloatType to) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isF32())
    return {};
  return tensor.clone(to);
}

/// `value` converted elementwise to `elementType` (extf or truncf), right
/// after its definition so that one conversion serves every use.
static Value convertTensor(Value value, FloatType elementType) {
  OpBuilder b(value.getContext());
  if (Operation *def = value.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
  Location loc = value.getLoc();
  auto type = cast<RankedTensorType>(value.getType());
  bool extend = elementType.getWidth() > type.getElementTypeBitWidth();
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, value), elementType);
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, empty.getType(), value, empty, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value converted =
            extend ? arith::ExtFOp::create(nb, nloc, elementType, args[0])
                         .getResult()
                   : arith::TruncFOp::create(nb, nloc, elementType, args[0])
                         .getResult();
        linalg::YieldOp::create(nb, nloc, converted);
      });
  return generic.getResult(0);
}

namespace {
struct AttnConvertPrecisionPass
    : public mlir::attn::impl::AttnConvertPrecisionBase<
          AttnConvertPrecisionPass> {
  using AttnConvertPrecisionBase::AttnConvertPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (std::optional<std::string> message =
            attnc::checkIOPrecision(precision, ioPrecision)) {
      module.emitError("attn-convert-precision: ") << *message;
      return signalPassFailure();
    }
    FloatType target;
    if (precision == attnc::Precision::F16)
      target = Float16Type::get(ctx);
    else if (precision == attnc::Precision::BF16)
      target = BFloat16Type::get(ctx);
    else
      return;
    bool lowIO = ioPrecision == precision;
    auto isBoundary = [&](func::FuncOp func) {
      return lowIO && func.isPublic() && !func.isExternal();
    };
    // The state results of each function and the arguments they update.
    llvm::DenseMap<func::FuncOp, SmallVector<std::pair<unsigned, unsigned>>>
        stateResults;
    module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        if (auto arg = func.getResultAttrOfType<IntegerAttr>(
                i, AttnDialect::StateArgAttrHelper::getNameStr());
            arg && arg.getInt() >= 0 &&
            arg.getInt() < static_cast<int64_t>(func.getNumArguments()))
          stateResults[func].push_back(
              {i, static_cast<unsigned>(arg.getInt())});
    });
    auto takesTargetAtReturn = [&](func::FuncOp func, unsigned result) {
      if (isBoundary(func))
        return true;
      auto it = stateResults.find(func);
      return it != stateResults.end() &&
             llvm::any_of(it->second,
                          [&](auto pair) { return pair.first == result; });
    };

    // The values whose type this pass changed: other ops get them back as
    // f32.
    llvm::DenseSet<Value> changed;
    auto retype = [&](Value value) {
      if (RankedTensorType type = convertedType(value.getType(), target)) {
        value.setType(type);
        changed.insert(value);
      }
    };
    module.walk([&](Operation *op) {
      if (auto func = dyn_cast<func::FuncOp>(op)) {
        if (isBoundary(func))
          for (BlockArgument arg : func.getArguments())
            retype(arg);
        else if (auto it = stateResults.find(func); it != stateResults.end())
          for (auto [result, arg] : it->second)
            retype(func.getArgument(arg));
        return;
      }
      if (!isa_and_nonnull<AttnDialect>(op->getDialect()))
        return;
      for (Value result : op->getResults())
        retype(result);
      if (auto layer = dyn_cast<LayerOp>(op))
        for (BlockArgument arg : layer.getBody().getArguments())
          retype(arg);
      if (auto weight = dyn_cast<WeightOp>(op);
          weight && changed.contains(weight.getResult()))
        weight.setConvert(true);
    });

    // Shape-only ops between attn ops (the head splits and merges of
    // attn-decompose-mha and attn-pack-qkv) move values of any type: a chain
    // of them from an attn op's result to attn ops takes the target type
    // too, so that a value is not widened to f32 for a transpose and
    // narrowed again after it (two kernels and two passes over the
    // activations each, on CUDA). A chain that ends elsewhere (a returned
    // f32 slice) keeps reading the one widened value.
    SmallVector<Operation *> movers;
    llvm::SmallPtrSet<Operation *, 16> moved;
    module.walk([&](Operation *op) {
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
              tensor::ExtractSliceOp, linalg::TransposeOp>(op) &&
          (changed.contains(op->getOperand(0)) ||
           moved.contains(op->getOperand(0).getDefiningOp()))) {
        movers.push_back(op);
        moved.insert(op);
      }
    });
    // Users come after their producers: prune backwards.
    for (Operation *op : llvm::reverse(movers))
      if (llvm::any_of(op->getResult(0).getUsers(), [&](Operation *user) {
            return !isa_and_nonnull<AttnDialect>(user->getDialect()) &&
                   !moved.contains(user);
          }))
        moved.erase(op);
    for (Operation *op : movers) {
      if (!moved.contains(op))
        continue;
      // Its source stayed f32 after all (a transpose that could not be
      // rebuilt): it stays too, and takes a widened value below.
      if (!changed.contains(op->getOperand(0))) {
        moved.erase(op);
        continue;
      }
      auto transpose = dyn_cast<linalg::TransposeOp>(op);
      if (!transpose) {
        retype(op->getResult(0));
        continue;
      }
      // A transpose's region and init carry the element type: rebuilt, on
      // a new init of the same sizes (importers share one tensor.empty
      // between the Q, K and V head transposes).
      auto empty = transpose.getInit().getDefiningOp<tensor::EmptyOp>();
      if (!empty) {
        moved.erase(op);
        continue;
      }
      OpBuilder b(transpose);
      Value init = tensor::EmptyOp::create(b, empty.getLoc(),
                                           empty.getMixedSizes(), target);
      auto narrowed = linalg::TransposeOp::create(b, transpose.getLoc(),
                                                  transpose.getInput(), init,
                                                  transpose.getPermutation());
      transpose.getResult()[0].replaceAllUsesWith(narrowed.getResult()[0]);
      changed.insert(narrowed.getResult()[0]);
      moved.erase(op);
      moved.insert(narrowed);
      transpose.erase();
      if (empty->use_empty())
        empty.erase();
    }

    // Operands whose producer and user now disagree: attn ops (and the
    // model's results with io-precision) take the target type, others f32.
    SmallVector<OpOperand *> narrow, widen;
    module.walk([&](Operation *op) {
      bool takesTarget =
          isa_and_nonnull<AttnDialect>(op->getDialect()) || moved.contains(op);
      auto ret = dyn_cast<func::ReturnOp>(op);
      for (OpOperand &use : op->getOpOperands()) {
        if (ret)
          takesTarget = takesTargetAtReturn(
              ret->getParentOfType<func::FuncOp>(), use.getOperandNumber());
        if (takesTarget && convertedType(use.get().getType(), target))
          narrow.push_back(&use);
        else if (!takesTarget && changed.contains(use.get()))
          widen.push_back(&use);
      }
    });
    llvm::DenseMap<Value, Value> narrowed, widened;
    for (OpOperand *use : narrow) {
      Value &converted = narrowed[use->get()];
      if (!converted)
        converted = convertTensor(use->get(), target);
      use->set(converted);
    }
    for (OpOperand *use : widen) {
      Value &converted = widened[use->get()];
      if (!converted)
        converted = convertTensor(use->get(), Float32Type::get(ctx));
      use->set(converted);
    }

    module.walk([&](func::FuncOp func) {
      if (!isBoundary(func) && !stateResults.count(func))
        return;
      auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
      func.setFunctionType(FunctionType::get(
          ctx, func.getBody().getArgumentTypes(), ret.getOperandTypes()));
    });
  }
};
} // namespace
