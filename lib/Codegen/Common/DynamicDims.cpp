//===- DynamicDims.cpp - which run-time sizes of a model are the same -----===//
//
// A model with dynamic batch or sequence dimensions is compiled once; the
// runtime must know, before it calls the model, how large each output is and
// which input sizes have to agree (the ids and the mask of one sequence).
// Both follow from equalities that the IR on tensors states: every operand
// of a linalg op indexed by one loop dimension has that loop's extent, a
// destination-style result has its init's shape, tensor.empty and slices
// have the sizes they are given, tensor.concat keeps its inputs' sizes off
// the concatenated dimension, loop-carried and called-function values keep
// theirs. This file joins the dynamic dimensions of all values into
// classes of equal size with those rules (each one an equality that holds
// in any well-formed run, so outputs are never sized wrongly) and reads
// off, per input and output dimension, the first input dimension of its
// class.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/DynamicDims.h"

#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"

#include <map>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A dynamic dimension of a value (axis >= 0), an index value used as a
/// size (axis -1), or a loop dimension of a linalg op (the op's pointer).
using DimKey = std::pair<const void *, int64_t>;

class DimClasses {
public:
  void join(DimKey a, DimKey b) { classes.unionSets(a, b); }
  DimKey leader(DimKey k) {
    classes.insert(k);
    return classes.getLeaderValue(k);
  }

  static DimKey dim(Value v, int64_t axis) {
    return {v.getAsOpaquePointer(), axis};
  }
  static DimKey size(Value v) { return {v.getAsOpaquePointer(), -1}; }

  /// Joins dimension `axis` of `v` with the size `ofr` when it is a value.
  void joinSize(Value v, int64_t axis, OpFoldResult ofr) {
    if (auto size = dyn_cast<Value>(ofr))
      join(dim(v, axis), DimClasses::size(size));
  }
  /// Joins every dynamic dimension of two values of the same shape.
  void joinShapes(Value a, Value b) {
    auto ta = dyn_cast<RankedTensorType>(a.getType());
    auto tb = dyn_cast<RankedTensorType>(b.getType());
    if (!ta || !tb || ta.getRank() != tb.getRank())
      return;
    for (int64_t d = 0; d < ta.getRank(); ++d)
      if (ta.isDynamicDim(d) || tb.isDynamicDim(d))
        join(dim(a, d), dim(b, d));
  }

private:
  llvm::EquivalenceClasses<DimKey> classes;
};

/// Applies the rules of the file comment to one op.
static void visit(Operation *op, DimClasses &dims, ModuleOp module) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    // Operands indexed by loop d all have its extent.
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type)
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      for (auto [axis, expr] : llvm::enumerate(map.getResults()))
        if (auto d = dyn_cast<AffineDimExpr>(expr);
            d && type.isDynamicDim(axis))
          dims.join(DimClasses::dim(operand.get(), axis),
                    {op, d.getPosition()});
    }
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (OpResult result : op->getResults())
      if (OpOperand *init = dps.getTiedOpOperand(result))
        dims.joinShapes(result, init->get());
    return;
  }
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    if (std::optional<int64_t> axis = dim.getConstantIndex())
      dims.join(DimClasses::size(dim.getResult()),
                DimClasses::dim(dim.getSource(), *axis));
    return;
  }
  auto joinMixed = [&](Value result, ArrayRef<OpFoldResult> sizes) {
    for (auto [axis, size] : llvm::enumerate(sizes))
      dims.joinSize(result, axis, size);
  };
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return joinMixed(empty.getResult(), empty.getMixedSizes());
  if (auto alloc = dyn_cast<bufferization::AllocTensorOp>(op)) {
    auto type = alloc.getType();
    unsigned next = 0;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dims.join(DimClasses::dim(alloc.getResult(), d),
                  DimClasses::size(alloc.getDynamicSizes()[next++]));
    return;
  }
  // A reassociation group whose other dimensions are all static 1s keeps
  // the size of its one other dimension ([1, ?] <-> [?]).
  auto onlySized = [](RankedTensorType type,
                      const ReassociationIndices &group) -> int64_t {
    int64_t sized = -1;
    for (int64_t d : group) {
      if (type.getDimSize(d) == 1)
        continue;
      if (sized >= 0)
        return -1;
      sized = d;
    }
    return sized;
  };
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    joinMixed(expand.getResult(), expand.getMixedOutputShape());
    for (auto [src, group] : llvm::enumerate(expand.getReassociationIndices()))
      if (int64_t d = onlySized(expand.getResultType(), group); d >= 0)
        dims.join(DimClasses::dim(expand.getSrc(), src),
                  DimClasses::dim(expand.getResult(), d));
    return;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (auto [result, group] :
         llvm::enumerate(collapse.getReassociationIndices()))
      if (int64_t d = onlySized(collapse.getSrcType(), group); d >= 0)
        dims.join(DimClasses::dim(collapse.getSrc(), d),
                  DimClasses::dim(collapse.getResult(), result));
    return;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    int64_t axis = 0;
    for (auto [d, size] : llvm::enumerate(slice.getMixedSizes()))
      if (!dropped.test(d))
        dims.joinSize(slice.getResult(), axis++, size);
    return;
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    // Every dimension but the concatenated one is each input's.
    auto type = concat.getResultType();
    for (Value in : concat.getInputs())
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (d != static_cast<int64_t>(concat.getDim()) && type.isDynamicDim(d))
          dims.join(DimClasses::dim(concat.getResult(), d),
                    DimClasses::dim(in, d));
    return;
  }
  if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    for (auto [init, arg, result, yielded] :
         llvm::zip(forOp.getInitArgs(), forOp.getRegionIterArgs(),
                   forOp.getResults(), forOp.getYieldedValues())) {
      dims.joinShapes(init, arg);
      dims.joinShapes(init, result);
      dims.joinShapes(init, yielded);
    }
    return;
  }
  if (auto forall = dyn_cast<scf::ForallOp>(op)) {
    for (auto [init, arg, result] :
         llvm::zip(forall.getOutputs(), forall.getRegionOutArgs(),
                   forall.getResults())) {
      dims.joinShapes(init, arg);
      dims.joinShapes(init, result);
    }
    return;
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal())
      return;
    for (auto [operand, arg] :
         llvm::zip(call.getOperands(), callee.getArguments()))
      dims.joinShapes(operand, arg);
    callee.walk([&](func::ReturnOp ret) {
      for (auto [result, returned] :
           llvm::zip(call.getResults(), ret.getOperands()))
        dims.joinShapes(result, returned);
    });
    return;
  }
  if (op->hasTrait<OpTrait::SameOperandsAndResultShape>()) {
    for (Value v : op->getOperands())
      for (Value r : op->getResults())
        dims.joinShapes(v, r);
  }
}

/// A term of a sum: a class's leader, or a constant (null pointer).
using Term = DimKey;

/// Dimension `axis` of `v`, or the index value `v` itself (axis -1).
static Term termOf(Value v, int64_t axis, DimClasses &dims) {
  if (axis < 0) {
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c)))
      return {nullptr, c.getSExtValue()};
    return dims.leader(DimClasses::size(v));
  }
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(axis))
    return {nullptr, type.getDimSize(axis)};
  return dims.leader(DimClasses::dim(v, axis));
}

/// Joins sums of the same two sizes: a concatenation's length is the sum
/// of its inputs' lengths, so it has the size of an index sum of the same
/// two sizes (the length of keys after a past, and that of the attention
/// mask over them, which a `cf.assert` ties to such a sum).
static void joinSums(ModuleOp module, DimClasses &dims) {
  struct Sum {
    DimKey key;
    Value lhs, rhs;
    int64_t axis; // of lhs and rhs; -1: they are index values
  };
  SmallVector<Sum> sums;
  module.walk([&](Operation *op) {
    if (auto add = dyn_cast<arith::AddIOp>(op);
        add && add.getType().isIndex()) {
      sums.push_back({DimClasses::size(add), add.getLhs(), add.getRhs(), -1});
      return;
    }
    auto concat = dyn_cast<tensor::ConcatOp>(op);
    if (concat && concat.getInputs().size() == 2 &&
        concat.getResultType().isDynamicDim(concat.getDim()))
      sums.push_back({DimClasses::dim(concat.getResult(), concat.getDim()),
                      concat.getInputs()[0], concat.getInputs()[1],
                      static_cast<int64_t>(concat.getDim())});
  });
  // A join may make two more sums alike: repeat until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    std::map<std::pair<Term, Term>, DimKey> seen;
    for (const Sum &sum : sums) {
      Term a = termOf(sum.lhs, sum.axis, dims),
           b = termOf(sum.rhs, sum.axis, dims);
      if (b < a)
        std::swap(a, b);
      auto [it, inserted] = seen.try_emplace({a, b}, sum.key);
      if (!inserted && dims.leader(it->second) != dims.leader(sum.key)) {
        dims.join(it->second, sum.key);
        changed = true;
      }
    }
  }
}

/// `cf.assert (a == b)`: after it, the two sizes are one.
static void joinAssertedEqualities(ModuleOp module, DimClasses &dims) {
  module.walk([&](cf::AssertOp check) {
    auto cmp = check.getArg().getDefiningOp<arith::CmpIOp>();
    if (cmp && cmp.getPredicate() == arith::CmpIPredicate::eq &&
        cmp.getLhs().getType().isIndex())
      dims.join(DimClasses::size(cmp.getLhs()), DimClasses::size(cmp.getRhs()));
  });
}

} // namespace

FailureOr<ModelDynamicDims>
mlir::attn::analyzeDynamicDims(ModuleOp module, func::FuncOp entry,
                               unsigned firstInput, ArrayRef<int> inputIndex) {
  ModelDynamicDims result;
  auto isDynamic = [](Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    return type && !type.hasStaticShape();
  };
  bool any = llvm::any_of(entry.getArgumentTypes(), isDynamic) ||
             llvm::any_of(entry.getResultTypes(), isDynamic);
  // Indexed like the arguments from firstInput on.
  result.inputs.resize(entry.getNumArguments() - firstInput);
  result.outputs.resize(entry.getNumResults());
  if (!any)
    return result;

  DimClasses dims;
  module.walk([&](Operation *op) { visit(op, dims, module); });
  // Argument dimensions named alike (attn.dim_symbols) have one size.
  llvm::StringMap<DimKey> named;
  for (unsigned i = firstInput, e = entry.getNumArguments(); i < e; ++i) {
    auto names = entry.getArgAttrOfType<ArrayAttr>(
        i, AttnDialect::DimSymbolsAttrHelper::getNameStr());
    if (!names)
      continue;
    for (auto [d, attr] : llvm::enumerate(names)) {
      auto name = dyn_cast<StringAttr>(attr);
      if (!name || name.getValue().empty())
        continue;
      DimKey key = DimClasses::dim(entry.getArgument(i), d);
      auto [it, inserted] = named.try_emplace(name.getValue(), key);
      if (!inserted)
        dims.join(it->second, key);
    }
  }
  joinAssertedEqualities(module, dims);
  joinSums(module, dims);

  // The first input dimension of each class is chosen by the caller; the
  // others of its class must equal it.
  std::map<DimKey, std::pair<int, int>> chosen;
  for (unsigned i = firstInput, e = entry.getNumArguments(); i < e; ++i) {
    Value arg = entry.getArgument(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      int input = inputIndex[i - firstInput];
      if (input < 0)
        return entry.emitOpError("argument ")
               << i << " is model state of type " << type
               << "; model state must have a static shape";
      DimKey leader = dims.leader(DimClasses::dim(arg, d));
      auto [it, inserted] =
          chosen.try_emplace(leader, input, static_cast<int>(d));
      result.inputs[i - firstInput].push_back(inserted ? std::make_pair(-1, -1)
                                                       : it->second);
    }
  }
  // Outputs are the operands of the entry's return.
  auto ret = cast<func::ReturnOp>(entry.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      continue;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      auto it = chosen.find(dims.leader(DimClasses::dim(value, d)));
      if (it == chosen.end())
        return entry.emitOpError("result ")
               << i << " has a dynamic dimension " << d << " (" << type
               << ") whose size does not follow from the inputs' sizes; the "
                  "runtime could not size it";
      result.outputs[i].push_back(it->second);
    }
  }
  return result;
}
