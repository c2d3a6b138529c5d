//===- OutlineLayers.cpp - one function per distinct attn.layer body ------===//
//
// The layers of a stack usually compute the same thing on different
// weights. Inlined, every one of them is lowered, optimized and compiled
// again, so code size and compile time grow with depth; outlined, each
// distinct body is compiled once and called per layer with that layer's
// weights, which stay `attn.weight` ops of the caller (so the manifest,
// bind-time transposes and pruning keep working per layer).
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNOUTLINELAYERS
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// The top-level weights of a layer body, in body order: the arguments its
/// function takes after the layer's inputs.
static SmallVector<WeightOp> bodyWeights(LayerOp layer) {
  return llvm::to_vector(layer.getBody().front().getOps<WeightOp>());
}

/// Whether `layer` can become a call: its weights are all top-level (they
/// become arguments) and it holds no layers of its own (those are outlined
/// on their own once this one is inlined). Layers with dynamically shaped
/// results (run-time batch or sequence) only with `dynamicShapes`: their
/// bodies return a buffer they allocate, which a target must support.
/// Layers that update a KV cache only with `cacheWrites`: those holding an
/// attn.cache_write or returning more than the residual stream (their
/// updated caches, after a target lowered the writes already).
static bool isOutlinable(LayerOp layer, bool dynamicShapes, bool cacheWrites) {
  if (!cacheWrites && layer.getNumResults() > 1)
    return false;
  auto isDynamic = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && !shaped.hasStaticShape();
  };
  if (!dynamicShapes && llvm::any_of(layer.getResultTypes(), isDynamic))
    return false;
  Block &body = layer.getBody().front();
  WalkResult result = body.walk([&](Operation *op) {
    if (isa<LayerOp>(op) || (isa<WeightOp>(op) && op->getBlock() != &body) ||
        (!cacheWrites && isa<CacheWriteOp>(op)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Whether `a` and `b` compute the same thing: the same ops, attributes,
/// types and dataflow, except that top-level weights only need the same
/// type (they become arguments, bound per call).
static bool haveSameBody(LayerOp a, LayerOp b) {
  if (a.getInputs().getTypes() != b.getInputs().getTypes() ||
      a.getResultTypes() != b.getResultTypes())
    return false;
  Block &blockA = a.getBody().front();
  Block &blockB = b.getBody().front();
  if (blockA.getOperations().size() != blockB.getOperations().size())
    return false;
  llvm::DenseMap<Value, Value> equivalent;
  for (auto [argA, argB] :
       llvm::zip_equal(blockA.getArguments(), blockB.getArguments()))
    equivalent[argA] = argB;
  auto check = [&](Value lhs, Value rhs) {
    return success(equivalent.lookup(lhs) == rhs);
  };
  auto mark = [&](Value lhs, Value rhs) { equivalent[lhs] = rhs; };
  for (auto [opA, opB] : llvm::zip_equal(blockA, blockB)) {
    auto weightA = dyn_cast<WeightOp>(opA);
    auto weightB = dyn_cast<WeightOp>(opB);
    if (weightA || weightB) {
      if (!weightA || !weightB || weightA.getType() != weightB.getType())
        return false;
      mark(weightA, weightB);
      continue;
    }
    if (!OperationEquivalence::isEquivalentTo(
            &opA, &opB, check, mark,
            OperationEquivalence::Flags::IgnoreLocations))
      return false;
  }
  return true;
}

/// A private function holding `layer`'s body: its inputs, then its
/// top-level weights, as arguments.
static func::FuncOp createBodyFunction(LayerOp layer, SymbolTable &symbols,
                                       unsigned number) {
  Block &body = layer.getBody().front();
  SmallVector<WeightOp> weights = bodyWeights(layer);
  SmallVector<Type> argTypes(body.getArgumentTypes());
  SmallVector<Location> argLocs;
  for (BlockArgument arg : body.getArguments())
    argLocs.push_back(arg.getLoc());
  for (WeightOp weight : weights) {
    argTypes.push_back(weight.getType());
    argLocs.push_back(weight.getLoc());
  }
  MLIRContext *ctx = layer.getContext();
  OpBuilder builder(ctx);
  auto func = func::FuncOp::create(
      builder, layer.getLoc(), ("attn_layer_body_" + Twine(number)).str(),
      FunctionType::get(ctx, argTypes, layer.getResultTypes()));
  func.setPrivate();
  // At the end of the module, renamed if the name is taken.
  symbols.insert(func);

  Block *entry = builder.createBlock(&func.getBody(), {}, argTypes, argLocs);
  IRMapping mapping;
  mapping.map(body.getArguments(),
              entry->getArguments().take_front(body.getNumArguments()));
  for (auto [weight, arg] : llvm::zip_equal(
           weights, entry->getArguments().drop_front(body.getNumArguments())))
    mapping.map(weight.getResult(), arg);
  builder.setInsertionPointToEnd(entry);
  for (Operation &op : body.without_terminator())
    if (!isa<WeightOp>(op))
      builder.clone(op, mapping);
  auto yield = cast<YieldOp>(body.getTerminator());
  func::ReturnOp::create(builder, yield.getLoc(),
                         llvm::map_to_vector(yield.getValues(), [&](Value v) {
                           return mapping.lookup(v);
                         }));
  return func;
}

/// Replaces `layer` by its weights, cloned before it, and a call of `func`.
static void replaceByCall(LayerOp layer, func::FuncOp func) {
  OpBuilder builder(layer);
  SmallVector<Value> operands(layer.getInputs());
  for (WeightOp weight : bodyWeights(layer))
    operands.push_back(builder.clone(*weight)->getResult(0));
  auto call = func::CallOp::create(builder, layer.getLoc(), func, operands);
  layer.replaceAllUsesWith(call.getResults());
  layer.erase();
}

/// Replaces `layer` by its body.
static void inlineLayer(LayerOp layer) {
  Block &body = layer.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> results(yield.getValues());
  yield.erase();
  for (auto [arg, input] :
       llvm::zip_equal(body.getArguments(), layer.getInputs()))
    arg.replaceAllUsesWith(input);
  layer->getBlock()->getOperations().splice(
      Block::iterator(layer), body.getOperations(), body.begin(), body.end());
  layer.replaceAllUsesWith(results);
  layer.erase();
}

namespace {
struct AttnOutlineLayersPass
    : public mlir::attn::impl::AttnOutlineLayersBase<AttnOutlineLayersPass> {
  using AttnOutlineLayersBase::AttnOutlineLayersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (minGroupSize < 1) {
      module.emitError("attn-outline-layers: min-group-size must be at least "
                       "1, got ")
          << static_cast<int64_t>(minGroupSize);
      return signalPassFailure();
    }
    // Layers that cannot become calls are inlined first, outermost first,
    // so that the layers they hold join the groups below.
    while (true) {
      SmallVector<LayerOp> blocking;
      module.walk([&](LayerOp layer) {
        if (!layer->getParentOfType<LayerOp>() &&
            !isOutlinable(layer, dynamicShapes, cacheWrites))
          blocking.push_back(layer);
      });
      if (blocking.empty())
        break;
      for (LayerOp layer : blocking)
        inlineLayer(layer);
      numInlined += blocking.size();
    }

    SmallVector<LayerOp> layers;
    WalkResult outsideFunc = module.walk([&](LayerOp layer) {
      if (!layer->getParentOfType<func::FuncOp>()) {
        layer.emitOpError("must be inside a func.func to be outlined");
        return WalkResult::interrupt();
      }
      layers.push_back(layer);
      return WalkResult::advance();
    });
    if (outsideFunc.wasInterrupted())
      return signalPassFailure();
    // A weight nothing reads would still be an argument, bound and passed
    // per call: drop it, as dead code elimination would.
    for (LayerOp layer : layers)
      for (WeightOp weight : bodyWeights(layer))
        if (weight->use_empty())
          weight.erase();

    // Groups in order of their first layer, so that function numbers and
    // argument orders are deterministic.
    SmallVector<SmallVector<LayerOp>> groups;
    for (LayerOp layer : layers) {
      auto *group = llvm::find_if(groups, [&](ArrayRef<LayerOp> g) {
        return haveSameBody(g.front(), layer);
      });
      if (group == groups.end())
        groups.push_back({layer});
      else
        group->push_back(layer);
    }

    SymbolTable symbols(module);
    unsigned numBodies = 0;
    for (ArrayRef<LayerOp> group : groups) {
      if (static_cast<int64_t>(group.size()) < minGroupSize) {
        for (LayerOp layer : group)
          inlineLayer(layer);
        numInlined += group.size();
        continue;
      }
      func::FuncOp func =
          createBodyFunction(group.front(), symbols, numBodies++);
      for (LayerOp layer : group)
        replaceByCall(layer, func);
      ++numFunctions;
      numCalls += group.size();
    }
  }
};
} // namespace
