//===- LinalgBuilder.h - helpers for building linalg on tensors -*- C++ -*-===//
//
// Shared by the attn lowerings (AttnToLinalg.cpp, FlashAttention.cpp):
// linalg.generic construction, indexing maps, constants and f32 conversions
// at one location. Header-only, for attn-lower-to-linalg and the codegen
// passes above it that build linalg on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_LINALGBUILDER_H
#define ATTNC_CONVERSION_LINALGBUILDER_H

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::attn {

using utils::IteratorType;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Small helpers shared by the patterns: building generics, constants and
/// f32 conversions at one location.
class LinalgBuilder {
public:
  LinalgBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Type f32() { return b.getF32Type(); }

  Value empty(ArrayRef<int64_t> shape, Type elementType) {
    return tensor::EmptyOp::create(b, loc, shape, elementType);
  }

  Value filled(ArrayRef<int64_t> shape, double value) {
    return fill(empty(shape, f32()), value);
  }

  /// Tiled code: sizes that may be SSA values (e.g. a partial last block).
  Value empty(ArrayRef<OpFoldResult> sizes, Type elementType) {
    return tensor::EmptyOp::create(b, loc, sizes, elementType);
  }
  Value filled(ArrayRef<OpFoldResult> sizes, double value) {
    return fill(empty(sizes, f32()), value);
  }

  /// The sizes of a ranked tensor: attributes for static dimensions,
  /// tensor.dim values for dynamic ones (a batch or sequence given at run
  /// time). Only dynamic dimensions create ops, so static IR is unchanged.
  SmallVector<OpFoldResult> sizes(Value v) {
    return tensor::getMixedSizes(b, loc, v);
  }

  /// An empty tensor shaped like `like` (dynamic sizes from it).
  Value emptyLike(Value like, Type elementType) {
    auto type = cast<RankedTensorType>(like.getType());
    if (type.hasStaticShape())
      return empty(type.getShape(), elementType);
    return empty(sizes(like), elementType);
  }

  /// `init` (an f32 tensor) filled with `value`.
  Value fill(Value init, double value) {
    Value cst = constF32(b, loc, value);
    return linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{init})
        .getResult(0);
  }

  static Value constF32(OpBuilder &b, Location loc, double value) {
    return arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(value)));
  }
  static Value constIndex(OpBuilder &b, Location loc, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// A generic with one result whose body returns the value to yield.
  Value generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                ArrayRef<IteratorType> iterators, BodyFn body) {
    auto op = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
        iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Value result = body(nb, nloc, args);
          linalg::YieldOp::create(nb, nloc, result);
        });
    return op.getResult(0);
  }

  AffineMap map(unsigned numDims, ArrayRef<AffineExpr> results) {
    return AffineMap::get(numDims, 0, results, b.getContext());
  }
  AffineMap dims(unsigned numDims, ArrayRef<unsigned> which) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : which)
      exprs.push_back(b.getAffineDimExpr(d));
    return map(numDims, exprs);
  }
  AffineMap identity(unsigned numDims) {
    return AffineMap::getMultiDimIdentityMap(numDims, b.getContext());
  }

  /// `rank` parallel loops, the innermost one a reduction when `reduceLast`
  /// (a contraction or row reduction).
  static SmallVector<IteratorType> iterators(unsigned rank,
                                             bool reduceLast = false) {
    SmallVector<IteratorType> iters(rank, IteratorType::parallel);
    if (reduceLast && rank)
      iters.back() = IteratorType::reduction;
    return iters;
  }

  /// Converts a float tensor to f32 (no-op for f32).
  Value toF32(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType().isF32())
      return v;
    unsigned rank = type.getRank();
    return generic(v, emptyLike(v, f32()), {identity(rank), identity(rank)},
                   iterators(rank),
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return arith::ExtFOp::create(nb, nloc, nb.getF32Type(),
                                                  args[0]);
                   });
  }

  /// Converts an f32 tensor to `elementType` (no-op for f32).
  Value fromF32(Value v, Type elementType) {
    if (elementType.isF32())
      return v;
    auto type = cast<RankedTensorType>(v.getType());
    unsigned rank = type.getRank();
    return generic(v, emptyLike(v, elementType),
                   {identity(rank), identity(rank)}, iterators(rank),
                   [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return arith::TruncFOp::create(nb, nloc, elementType,
                                                    args[0]);
                   });
  }

  /// Pointwise map over same-shaped f32 tensors.
  Value pointwise(ValueRange inputs, BodyFn body) {
    auto type = cast<RankedTensorType>(inputs.front().getType());
    unsigned rank = type.getRank();
    SmallVector<AffineMap> maps(inputs.size() + 1, identity(rank));
    return generic(inputs, emptyLike(inputs.front(), f32()), maps,
                   iterators(rank), body);
  }

  /// A scalar function applied after the bias (an activation).
  using ScalarFn = function_ref<Value(OpBuilder &, Location, Value)>;

  /// `x : [M, K]` times `w : [N, K]` transposed, plus optional `bias : [N]`,
  /// then optional `epilogue`: `[M, N]`, f32. Bias and epilogue share one
  /// generic, which the CPU matmul kernels fold into their stores. A `tile`
  /// (attn-tile's choice) goes onto the contraction, where the matmul
  /// kernels look for it after bufferization.
  Value matmulTransposedB(Value x, Value w, Value bias,
                          ScalarFn epilogue = nullptr, TileAttr tile = {}) {
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t n = wType.getDimSize(0);
    // Rows may be dynamic (batch x sequence given at run time).
    SmallVector<OpFoldResult> resultSizes = {sizes(x)[0], b.getIndexAttr(n)};
    Value init = xType.isDynamicDim(0) ? filled(resultSizes, 0.0)
                                       : filled({xType.getDimSize(0), n}, 0.0);
    Value product = generic(
        {x, w}, init, {dims(3, {0, 2}), dims(3, {1, 2}), dims(3, {0, 1})},
        {IteratorType::parallel, IteratorType::parallel,
         IteratorType::reduction},
        [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value mul = arith::MulFOp::create(nb, nloc, args[0], args[1]);
          return arith::AddFOp::create(nb, nloc, args[2], mul);
        });
    if (tile)
      product.getDefiningOp()->setAttr(TileAttr::kAttrName, tile);
    if (!bias && !epilogue)
      return product;
    SmallVector<Value> inputs = {product};
    SmallVector<AffineMap> maps = {identity(2)};
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(dims(2, {1}));
    }
    maps.push_back(identity(2));
    Value epilogueInit = xType.isDynamicDim(0)
                             ? empty(resultSizes, f32())
                             : empty({xType.getDimSize(0), n}, f32());
    return generic(inputs, epilogueInit, maps,
                   {IteratorType::parallel, IteratorType::parallel},
                   [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     Value v = args[0];
                     if (bias)
                       v = arith::AddFOp::create(nb, nloc, v, args[1]);
                     return epilogue ? epilogue(nb, nloc, v) : v;
                   });
  }

  /// `x : [..., K]` (f32) W^T + b, then `epilogue`: `[..., N]` f32.
  Value linear(Value x, Value w, Value bias, ScalarFn epilogue = nullptr,
               TileAttr tile = {}) {
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t rank = xType.getRank();
    int64_t n = cast<RankedTensorType>(w.getType()).getDimSize(0);
    Value flat = collapseToMatrix(x);
    Value result = matmulTransposedB(flat, w, bias, epilogue, tile);
    SmallVector<int64_t> shape(xType.getShape());
    shape.back() = n;
    if (xType.hasStaticShape() || rank <= 2)
      return expandFromMatrix(result, shape, rank);
    // Dynamic leading dimensions: the expansion needs their run-time sizes.
    SmallVector<OpFoldResult> outSizes = sizes(x);
    outSizes.back() = b.getIndexAttr(n);
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(result.getType()).getElementType());
    return tensor::ExpandShapeOp::create(b, loc, type, result,
                                         leadingAndLastGroups(rank), outSizes);
  }

  /// The reassociation {{0, ..., rank - 2}, {rank - 1}}: every dimension but
  /// the last folded into one.
  static SmallVector<ReassociationIndices> leadingAndLastGroups(int64_t rank) {
    ReassociationIndices leading;
    for (int64_t d = 0; d < rank - 1; ++d)
      leading.push_back(d);
    return {leading, {rank - 1}};
  }

  /// `[d0, ..., dn-1]` -> `[d0 * ... * dn-2, dn-1]`.
  Value collapseToMatrix(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    if (rank == 2)
      return x;
    if (rank == 1) {
      auto resultType =
          RankedTensorType::get({1, type.getDimSize(0)}, type.getElementType());
      return tensor::ExpandShapeOp::create(
          b, loc, resultType, x, ArrayRef<ReassociationIndices>{{0, 1}});
    }
    return tensor::CollapseShapeOp::create(b, loc, x,
                                           leadingAndLastGroups(rank));
  }

  Value expandFromMatrix(Value x, ArrayRef<int64_t> shape, int64_t rank) {
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(x.getType()).getElementType());
    if (rank == 2)
      return x;
    if (rank == 1)
      return tensor::CollapseShapeOp::create(
          b, loc, type, x, ArrayRef<ReassociationIndices>{{0, 1}});
    return tensor::ExpandShapeOp::create(b, loc, type, x,
                                         leadingAndLastGroups(rank));
  }

  /// Reduces the last dimension of an f32 tensor with `combine`, starting
  /// from `init`, after mapping each element through the body of `pre`
  /// (extra inputs are indexed like the reduced tensor without its last
  /// dimension).
  Value
  reduceLast(Value x, double init, ValueRange extraOuter,
             function_ref<Value(OpBuilder &, Location, Value, ValueRange)> pre,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
    auto type = cast<RankedTensorType>(x.getType());
    unsigned rank = type.getRank();
    SmallVector<AffineMap> maps = {identity(rank)};
    SmallVector<unsigned> outerDims;
    for (unsigned d = 0; d + 1 < rank; ++d)
      outerDims.push_back(d);
    for (size_t i = 0; i < extraOuter.size(); ++i)
      maps.push_back(dims(rank, outerDims));
    maps.push_back(dims(rank, outerDims));
    SmallVector<IteratorType> iters = iterators(rank, /*reduceLast=*/true);
    SmallVector<Value> inputs = {x};
    inputs.append(extraOuter.begin(), extraOuter.end());
    Value acc =
        type.hasStaticShape()
            ? filled(type.getShape().drop_back(), init)
            : filled(ArrayRef<OpFoldResult>(sizes(x)).drop_back(), init);
    return generic(inputs, acc, maps, iters,
                   [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     Value v =
                         pre(nb, nloc, args[0], args.drop_front().drop_back());
                     return combine(nb, nloc, args.back(), v);
                   });
  }

  /// The maximum over the last dimension of an f32 tensor (-inf for rows
  /// that are all -inf).
  Value maxLast(Value x) {
    return reduceLast(
        x, -std::numeric_limits<double>::infinity(), {},
        [](OpBuilder &, Location, Value v, ValueRange) { return v; },
        [](OpBuilder &nb, Location nloc, Value acc, Value v) -> Value {
          return arith::MaximumFOp::create(nb, nloc, acc, v);
        });
  }

  OpBuilder &b;
  Location loc;
};

inline Value addF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
inline Value mulF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
inline Value subF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y);
}
inline Value divF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::DivFOp::create(b, loc, x, y);
}

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_LINALGBUILDER_H
