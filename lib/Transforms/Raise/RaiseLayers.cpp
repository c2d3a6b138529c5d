//===- RaiseLayers.cpp - group raised transformer blocks into attn.layer --===//
//
// After the other raising passes a block is: attention (attn.sdpa or
// attn.mha), a residual attn.add, the FFN, a second residual attn.add, with
// norms before the sublayers (pre-LN) or after the adds (post-LN). Each block
// whose attention is followed by exactly two residual adds before the next
// block's attention becomes one attn.layer, index = its depth:
//
//   - the residual stream h entering the block is the add's operand that does
//     not depend on the attention; the block ends at the second add, or
//     (post-LN: the first add's only user is a norm) at the norm after it;
//   - the body is every op that depends on h and that the end depends on;
//     constants and weights it reads are cloned into the isolated region (so
//     that dropping the layer drops its weights), other values computed
//     outside (e.g. a padding mask) become further operands;
//   - a block whose intermediate values are used outside it is left alone.
//
// Either every block of the function is grouped or none, so that depths
// stay the checkpoint's.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISELAYERS
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// One block found in the function: stream in, end value, the ops between.
struct BlockMatch {
  Value stream;
  Value end;
  llvm::SetVector<Operation *> body;
};

} // namespace

/// True for ops that are free to duplicate: their results depend on nothing
/// computed at run time except other such ops.
static bool isCloneable(Operation *op) {
  if (isa<WeightOp, tensor::EmptyOp>(op) || matchPattern(op, m_Constant()))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics() &&
           llvm::all_of(op->getOperands(), [](Value v) {
             Operation *def = v.getDefiningOp();
             return def && isCloneable(def);
           });
  return false;
}

/// True if `v` depends on `op` (through operands, within one block).
static bool dependsOn(Value v, Operation *op) {
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.inclusive = true;
  if (Operation *def = v.getDefiningOp())
    (void)getBackwardSlice(def, &slice, options);
  return slice.contains(op);
}

static bool isNorm(Operation *op) { return isa<LayerNormOp, RmsNormOp>(op); }

/// The block around `attention`, whose residual adds are `first` and
/// `second`.
static std::optional<BlockMatch> findBlock(Operation *attention, AddOp first,
                                           AddOp second) {
  BlockMatch block;
  Value lhs = first.getLhs(), rhs = first.getRhs();
  bool lhsFromAttention = dependsOn(lhs, attention);
  bool rhsFromAttention = dependsOn(rhs, attention);
  if (lhsFromAttention == rhsFromAttention)
    return std::nullopt;
  block.stream = lhsFromAttention ? rhs : lhs;
  if (!dependsOn(second.getResult(), first))
    return std::nullopt;
  block.end = second.getResult();
  if (first->hasOneUse() && isNorm(*first->getUsers().begin())) {
    if (!second->hasOneUse() || !isNorm(*second->getUsers().begin()))
      return std::nullopt;
    block.end = (*second->getUsers().begin())->getResult(0);
  }
  // A block may flatten the stream for its FFN ([B*S, D], as OPT does) and
  // restore it after the second add: the block then ends at the
  // expand_shape that restores it. A layer keeps the stream's type.
  if (block.end.getType() != block.stream.getType() && block.end.hasOneUse())
    if (auto expand =
            dyn_cast<tensor::ExpandShapeOp>(*block.end.getUsers().begin());
        expand && expand.getResult().getType() == block.stream.getType())
      block.end = expand.getResult();
  if (block.end.getType() != block.stream.getType())
    return std::nullopt;

  // Ops that depend on the stream and that the end depends on.
  // Run-time sizes read off the stream (tensor.dim, shared by every block
  // when the sizes are dynamic) stay outside and enter as operands.
  SetVector<Operation *> forward;
  ForwardSliceOptions forwardOptions;
  forwardOptions.filter = [&](Operation *op) {
    auto dim = dyn_cast<tensor::DimOp>(op);
    return !dim || dim.getSource() != block.stream;
  };
  getForwardSlice(block.stream, &forward, forwardOptions);
  SetVector<Operation *> backward;
  BackwardSliceOptions backwardOptions;
  backwardOptions.omitBlockArguments = true;
  backwardOptions.inclusive = true;
  (void)getBackwardSlice(block.end.getDefiningOp(), &backward, backwardOptions);
  for (Operation *op : backward)
    if (forward.contains(op))
      block.body.insert(op);
  if (!block.body.contains(attention))
    return std::nullopt;
  // Only the end leaves the block.
  for (Operation *op : block.body)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (!block.body.contains(user) && result != block.end)
          return std::nullopt;
  return block;
}

/// Clones `op` and the cloneable ops it reads into the region being built.
static Value cloneInto(OpBuilder &b, Value v, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *op = v.getDefiningOp();
  for (Value operand : op->getOperands())
    cloneInto(b, operand, mapping);
  b.clone(*op, mapping);
  return mapping.lookup(v);
}

static LayerOp buildLayer(BlockMatch &block, int64_t index) {
  Operation *endOp = block.end.getDefiningOp();
  // Operands: the stream, then values from outside that are not cloneable.
  // Cloneable ops are cloned with what they read (e.g. a tensor.empty with
  // its dynamic sizes), so that becomes an operand instead.
  SmallVector<Value> inputs = {block.stream};
  std::function<void(Value)> collect = [&](Value operand) {
    Operation *def = operand.getDefiningOp();
    if (operand == block.stream || (def && block.body.contains(def)) ||
        llvm::is_contained(inputs, operand))
      return;
    if (def && isCloneable(def)) {
      for (Value v : def->getOperands())
        collect(v);
      return;
    }
    inputs.push_back(operand);
  };
  for (Operation *op : block.body)
    for (Value operand : op->getOperands())
      collect(operand);

  OpBuilder b(endOp);
  auto layer = LayerOp::create(b, endOp->getLoc(), block.end.getType(), inputs,
                               b.getI64IntegerAttr(index),
                               /*score=*/FloatAttr());
  Region &region = layer.getBody();
  Block *body = b.createBlock(&region);
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  b.setInsertionPointToStart(body);
  // The body in program order, with the cloneable values it reads.
  SmallVector<Operation *> ordered(block.body.begin(), block.body.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
  for (Operation *op : ordered) {
    for (Value operand : op->getOperands())
      if (!mapping.contains(operand))
        cloneInto(b, operand, mapping);
    b.clone(*op, mapping);
  }
  YieldOp::create(b, endOp->getLoc(), mapping.lookup(block.end));
  block.end.replaceAllUsesWith(layer.getResult(0));
  for (Operation *op : llvm::reverse(ordered))
    op->erase();
  return layer;
}

namespace {

struct AttnRaiseLayersPass
    : public attn::impl::AttnRaiseLayersBase<AttnRaiseLayersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getOps<LayerOp>().empty())
      return; // Already structured by hand or by an earlier run.
    SmallVector<Operation *> attentions;
    SmallVector<AddOp> adds;
    SmallVector<Operation *> sequence;
    for (Operation &op : func.getBody().getOps()) {
      if (isa<SdpaOp, MhaOp>(op))
        sequence.push_back(&op);
      else if (isa<AddOp>(op))
        sequence.push_back(&op);
    }
    // Each attention followed by exactly two residual adds before the next.
    SmallVector<std::tuple<Operation *, AddOp, AddOp>> candidates;
    for (size_t i = 0; i < sequence.size(); ++i) {
      if (!isa<SdpaOp, MhaOp>(sequence[i]))
        continue;
      if (i + 2 >= sequence.size() || !isa<AddOp>(sequence[i + 1]) ||
          !isa<AddOp>(sequence[i + 2]) ||
          (i + 3 < sequence.size() && isa<AddOp>(sequence[i + 3])))
        return;
      candidates.push_back({sequence[i], cast<AddOp>(sequence[i + 1]),
                            cast<AddOp>(sequence[i + 2])});
    }
    SmallVector<BlockMatch> blocks;
    for (auto [attention, first, second] : candidates) {
      std::optional<BlockMatch> block = findBlock(attention, first, second);
      if (!block)
        return;
      blocks.push_back(std::move(*block));
    }
    // Blocks must not overlap: each starts where the previous one ended or
    // later.
    for (size_t i = 1; i < blocks.size(); ++i)
      for (Operation *op : blocks[i].body)
        if (blocks[i - 1].body.contains(op))
          return;
    for (auto [index, block] : llvm::enumerate(blocks)) {
      // The next block's stream may be this block's end, which the layer's
      // result replaces.
      Value end = block.end;
      LayerOp layer = buildLayer(block, index);
      for (BlockMatch &later : llvm::drop_begin(blocks, index + 1))
        if (later.stream == end)
          later.stream = layer.getResult(0);
    }
    // The weights and constants the layers cloned are dead outside.
    for (Operation &op : llvm::make_early_inc_range(
             llvm::reverse(func.getBody().front().getOperations())))
      if (isCloneable(&op) && op.use_empty())
        op.erase();
  }
};

} // namespace
