//===- RaiseMatchers.h - matchers for raising imported graphs ---*- C++ -*-===//
//
// Shared helpers of the raising passes (attn-raise-*). The ONNX importer
// writes elementwise nodes as linalg named ops on equal shapes, with every
// broadcast operand made explicit as `linalg.broadcast` of a value whose unit
// dimensions were dropped by `tensor.collapse_shape`, and ReduceMean as
// `linalg.reduce` + `linalg.div` (+ `tensor.expand_shape` for keepdims).
// These helpers look through exactly those wrappers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TRANSFORMS_RAISEMATCHERS_H
#define ATTNC_LIB_TRANSFORMS_RAISEMATCHERS_H

#include "attnc/Support/PatternDriver.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace mlir::attn::raise {

/// `v` with tensor.collapse_shape / tensor.expand_shape ops that only drop or
/// add unit dimensions peeled off.
Value stripUnitReshapes(Value v);

/// The value of a float constant: a scalar or splat arith.constant, or a
/// linalg.fill of a scalar constant.
std::optional<double> getConstantSplatValue(Value v);
/// The same, or either of these through linalg.broadcast and unit reshapes.
std::optional<double> getSplatValue(Value v);

/// True if `v` is a splat within a relative 1e-5 (absolute 1e-7 near zero)
/// of `expected`.
bool isSplatNear(Value v, double expected, double relTolerance = 1e-5);

/// True if `init` is a tensor of zeros.
bool isZeroTensor(Value init);

/// The inputs of the binary linalg named op `OpTy` (add, sub, mul, div,
/// powf, max, min) on tensors of the result's type with identity maps.
template <typename OpTy>
std::optional<std::pair<Value, Value>> matchBinary(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op->getNumResults() != 1)
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isIdentity())
      return std::nullopt;
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  if (lhs.getType() != v.getType() || rhs.getType() != v.getType())
    return std::nullopt;
  return std::make_pair(lhs, rhs);
}

/// The input of the unary linalg named op `OpTy` (sqrt, erf, tanh, exp,
/// negf, reciprocal) on a tensor of the result's type.
template <typename OpTy> Value matchUnary(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op->getNumResults() != 1)
    return Value();
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isIdentity())
      return Value();
  Value input = op.getDpsInputs()[0];
  if (input.getType() != v.getType())
    return Value();
  return input;
}

/// If `v` ([..., D], rank n) is a linalg.broadcast along its last dimension
/// only, the broadcast row value (rank n - 1, unit reshapes stripped).
Value matchLastDimBroadcast(Value v);

/// If `v` ([..., D], rank n) is a linalg.broadcast of a [D] vector over all
/// leading dimensions (or already that vector, rank 1), the vector.
Value matchVectorBroadcast(Value v);

/// If `v` (unit reshapes stripped) is the mean of `x` over its last
/// dimension (linalg.reduce with arith.addf into zeros, then linalg.div by a
/// splat of the count or linalg.mul by its reciprocal), `x`.
Value matchLastDimMean(Value v);

/// Whether dimension `da` of `a` and `db` of `b` have the same size in every
/// run: equal static sizes, or dynamic sizes that trace (through inits,
/// tensor.empty, reshapes, slices and tensor.dim arithmetic) to the same
/// product of argument dimensions. Two `?` are not enough: a reshape of
/// [B*S] to [S, B] has the types of one to [B, S].
bool sameDim(Value a, int64_t da, Value b, int64_t db);
/// The same for a size (an expand's output size, a slice size) and
/// dimension `d` of `v`.
bool sameSize(OpFoldResult size, Value v, int64_t d);
/// Whether two sizes (constants or index values) are equal in every run.
bool sameSize(OpFoldResult a, OpFoldResult b);
/// Equal ranks and sameDim on every dimension.
bool sameShape(Value a, Value b);

/// If `v` is a 1-D integer linalg.generic with no inputs yielding
/// `start + index * 1` (Range as imported): the start, a constant or a value
/// defined outside the generic.
std::optional<OpFoldResult> matchRangeStart(Value v);

/// Concrete sizes for dynamic dimensions, to check a view chain element by
/// element as for static shapes: each distinct argument dimension (model
/// input size) takes the next of `sizes` in order of first use; a size that
/// does not trace to argument dimensions has no value. Checks that pass for
/// two environments of different, coprime sizes stand for all sizes.
class DimEnv {
public:
  explicit DimEnv(ArrayRef<int64_t> sizes) : sizes(sizes) {}
  std::optional<int64_t> dim(Value v, int64_t d);
  std::optional<SmallVector<int64_t>> shape(Value v);
  std::optional<int64_t> size(OpFoldResult size);

private:
  template <typename Key> std::optional<int64_t> evaluate(const Key &key);
  SmallVector<int64_t> sizes;
  std::map<std::string, int64_t> atoms;
};

/// `rotated` = concat(-x[..., half:], x[..., :half]) on the last axis.
bool isRotatedHalf(Value rotated, Value x, int64_t half);

/// `x * C + rotate_half(x) * S` as an addition (linalg.add as imported,
/// attn.add once residual raising ran) of x [B, H, T, D]: each way the
/// products can be read as (x, C, S).
struct RotaryTerms {
  Value x, cosTable, sinTable;
};
SmallVector<RotaryTerms> matchRotaryTerms(Operation *add);

/// Applies a raising pass's patterns `Patterns...` (each built from the
/// context alone) and nothing else: raising only rewrites what it matches.
template <typename... Patterns>
LogicalResult applyRaisingPatterns(Operation *op) {
  RewritePatternSet patterns(op->getContext());
  patterns.add<Patterns...>(op->getContext());
  return applyOwnPatterns(op, std::move(patterns));
}

/// The body of a raising pass that only applies `Patterns...`: derive the
/// pass from RaisingPass<ThePass, impl::TheBase, Patterns...>.
template <typename PassT, template <typename> class BaseT, typename... Patterns>
struct RaisingPass : public BaseT<PassT> {
  void runOnOperation() override {
    if (failed(applyRaisingPatterns<Patterns...>(this->getOperation())))
      this->signalPassFailure();
  }
};

} // namespace mlir::attn::raise

#endif // ATTNC_LIB_TRANSFORMS_RAISEMATCHERS_H
