//===- FoldTransposes.cpp - layout transposes into slices -----------------===//
//
// The head split and merge of attention ([B, S, H, D] <-> [B, H, S, D]) are
// linalg.transposes that the flash loops only read and write through slices
// of one row of D elements. A slice whose non-unit dimensions keep their
// relative order under the permutation holds the same elements in the same
// order in either layout, so the slice can address the other layout
// directly and the transpose (on CUDA a kernel writing a full copy) goes.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDTRANSPOSES
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// A slice's offsets, sizes and strides, and its type. Where the original
/// slice's type keeps unit dimensions that the moved sizes cannot give
/// (e.g. [1, G, 1, D] -> sizes [1, 1, G, D]), the type is the original's
/// without its unit dimensions and `reshape` relates the two.
struct SliceParams {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  RankedTensorType type;
  std::optional<SmallVector<ReassociationIndices>> reshape;
};

/// The parameters of `slice` (of type `type`) moved to another layout of
/// its tensor, where dimension d of the sliced tensor is dimension
/// `toDim[d]`; failure when that changes the order of the slice's non-unit
/// dimensions (dynamic sizes count as non-unit), i.e. when the slice's
/// elements would come out in another order.
static FailureOr<SliceParams> permuteSlice(OffsetSizeAndStrideOpInterface slice,
                                           RankedTensorType type,
                                           ArrayRef<int64_t> toDim,
                                           bool runTimeSizesAsIs) {
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> strides = slice.getMixedStrides();
  if (sizes.size() != toDim.size())
    return failure();
  int64_t lastNonUnit = -1;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    if (isConstantIntValue(size, 1))
      continue;
    if (toDim[d] < lastNonUnit)
      return failure();
    lastNonUnit = toDim[d];
  }
  SliceParams moved;
  moved.offsets.resize(toDim.size());
  moved.sizes.resize(toDim.size());
  moved.strides.resize(toDim.size());
  for (auto [d, to] : llvm::enumerate(toDim)) {
    moved.offsets[to] = offsets[d];
    moved.sizes[to] = sizes[d];
    moved.strides[to] = strides[d];
  }
  SmallVector<int64_t> movedShape;
  for (OpFoldResult size : moved.sizes)
    movedShape.push_back(
        getConstantIntValue(size).value_or(ShapedType::kDynamic));
  // A slice keeps its type only where that is the rank reduction tensor's
  // folders and memref.subview's lowering infer (the first unit dimensions
  // dropped): another reading of an ambiguous reduction (1x64x1x64 to
  // 1x64x64) is re-inferred as 64x1x64 once constant offsets fold, and a
  // subview of run-time sizes may be given the other reduction's strides.
  // With `runTimeSizesAsIs` (the GPU kernels' row slices, whose run-time
  // sizes differ per thread, which a reshape cannot take) a slice of
  // run-time sizes keeps any valid reduction.
  moved.type = type;
  bool runTimeSizes = llvm::any_of(movedShape, ShapedType::isDynamic);
  SmallVector<int64_t> canonicalShape;
  int64_t unitsToDrop = movedShape.size() - type.getRank();
  for (int64_t dim : movedShape) {
    if (dim == 1 && unitsToDrop > 0) {
      --unitsToDrop;
      continue;
    }
    canonicalShape.push_back(dim);
  }
  bool canonical =
      unitsToDrop == 0 && ArrayRef<int64_t>(canonicalShape) == type.getShape();
  if (canonical ||
      (runTimeSizes && runTimeSizesAsIs &&
       isRankReducedType(
           RankedTensorType::get(movedShape, type.getElementType()), type) ==
           SliceVerificationResult::Success))
    return moved;
  SmallVector<int64_t> reducedShape;
  for (int64_t dim : type.getShape())
    if (dim != 1)
      reducedShape.push_back(dim);
  moved.type = RankedTensorType::get(reducedShape, type.getElementType());
  moved.reshape =
      getReassociationIndicesForCollapse(type.getShape(), reducedShape);
  if (!moved.reshape)
    return failure();
  return moved;
}

/// Replaces `slice` by the slice `moved` of `source` (of the same elements),
/// reshaped to its type where needed.
static void replaceWithSlice(RewriterBase &rewriter,
                             tensor::ExtractSliceOp slice, Value source,
                             const SliceParams &moved) {
  Value result = tensor::ExtractSliceOp::create(
      rewriter, slice.getLoc(), moved.type, source, moved.offsets, moved.sizes,
      moved.strides);
  if (moved.reshape)
    result = tensor::ExpandShapeOp::create(
        rewriter, slice.getLoc(), slice.getType(), result, *moved.reshape);
  rewriter.replaceOp(slice, result);
}

/// extract_slice(transpose(x)) -> extract_slice(x): dimension i of the
/// transpose is dimension perm[i] of x.
struct ExtractSliceOfTranspose : OpRewritePattern<tensor::ExtractSliceOp> {
  ExtractSliceOfTranspose(MLIRContext *ctx, bool runTimeSizesAsIs)
      : OpRewritePattern(ctx), runTimeSizesAsIs(runTimeSizesAsIs) {}
  bool runTimeSizesAsIs;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto transpose = slice.getSource().getDefiningOp<linalg::TransposeOp>();
    if (!transpose || !transpose.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(slice, "not a slice of a transpose");
    FailureOr<SliceParams> moved = permuteSlice(
        slice, slice.getType(), transpose.getPermutation(), runTimeSizesAsIs);
    if (failed(moved))
      return rewriter.notifyMatchFailure(
          slice, "the permutation reorders the slice's non-unit dimensions");
    replaceWithSlice(rewriter, slice, transpose.getInput(), *moved);
    return success();
  }
};

/// transpose(scf.forall result) -> the forall writes the transposed layout:
/// its shared_out starts as an empty tensor of the transposed type and every
/// slice of it addresses that layout (dimension d of the forall's result is
/// dimension inverse(perm)[d] of the transpose).
struct TransposeOfForallResult : OpRewritePattern<linalg::TransposeOp> {
  TransposeOfForallResult(MLIRContext *ctx, bool runTimeSizesAsIs)
      : OpRewritePattern(ctx), runTimeSizesAsIs(runTimeSizesAsIs) {}
  bool runTimeSizesAsIs;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    if (!transpose.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(transpose, "not on tensors");
    auto result = dyn_cast<OpResult>(transpose.getInput());
    auto forall =
        result ? dyn_cast<scf::ForallOp>(result.getOwner()) : scf::ForallOp();
    if (!forall)
      return rewriter.notifyMatchFailure(transpose, "not of a forall result");
    // Other users would still need the forall's own layout.
    if (!result.hasOneUse())
      return rewriter.notifyMatchFailure(transpose,
                                         "the forall result has other users");
    OpOperand *init = forall.getTiedOpOperand(result);
    auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
    if (!empty)
      return rewriter.notifyMatchFailure(
          transpose, "the shared_out's initial contents are read");

    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<int64_t> toDim(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      toDim[p] = i;
    BlockArgument arg = forall.getTiedBlockArgument(init);
    SmallVector<std::pair<Operation *, SliceParams>, 2> slices;
    for (OpOperand &use : arg.getUses()) {
      Operation *user = use.getOwner();
      auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user);
      auto extract = dyn_cast<tensor::ExtractSliceOp>(user);
      bool isSliced = (insert && &use == &insert.getDestMutable()) ||
                      (extract && use.get() == extract.getSource());
      if (!isSliced)
        return rewriter.notifyMatchFailure(
            transpose, "the shared_out is used other than through slices");
      auto type = insert ? insert.getSourceType() : extract.getType();
      FailureOr<SliceParams> moved =
          permuteSlice(cast<OffsetSizeAndStrideOpInterface>(user), type, toDim,
                       runTimeSizesAsIs);
      if (failed(moved))
        return rewriter.notifyMatchFailure(
            transpose,
            "the permutation reorders a slice's non-unit dimensions");
      slices.emplace_back(user, std::move(*moved));
    }

    auto type = cast<RankedTensorType>(transpose.getResult()[0].getType());
    SmallVector<OpFoldResult> emptySizes(perm.size());
    SmallVector<int64_t> emptyShape(perm.size());
    for (auto [d, size] : llvm::enumerate(empty.getMixedSizes())) {
      emptySizes[toDim[d]] = size;
      emptyShape[toDim[d]] = empty.getType().getDimSize(d);
    }
    if (ArrayRef<int64_t>(emptyShape) != type.getShape())
      return rewriter.notifyMatchFailure(transpose, "inconsistent shapes");
    rewriter.setInsertionPoint(forall);
    Value newEmpty = tensor::EmptyOp::create(rewriter, empty.getLoc(),
                                             emptySizes, type.getElementType());
    rewriter.modifyOpInPlace(forall, [&] {
      init->set(newEmpty);
      arg.setType(type);
      result.setType(type);
    });
    for (auto &[user, moved] : slices) {
      rewriter.setInsertionPoint(user);
      if (auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user)) {
        Value source = insert.getSource();
        if (moved.reshape) {
          // Before the in_parallel terminator, which holds only inserts.
          rewriter.setInsertionPoint(forall.getTerminator());
          source = tensor::CollapseShapeOp::create(
              rewriter, insert.getLoc(), moved.type, source, *moved.reshape);
          rewriter.setInsertionPoint(insert);
        }
        tensor::ParallelInsertSliceOp::create(rewriter, insert.getLoc(), source,
                                              arg, moved.offsets, moved.sizes,
                                              moved.strides);
        rewriter.eraseOp(insert);
        continue;
      }
      replaceWithSlice(rewriter, cast<tensor::ExtractSliceOp>(user), arg,
                       moved);
    }
    rewriter.replaceOp(transpose, result);
    return success();
  }
};

struct AttnFoldTransposesPass
    : public mlir::attn::impl::AttnFoldTransposesBase<AttnFoldTransposesPass> {
  using AttnFoldTransposesBase::AttnFoldTransposesBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // fold-reads is the GPU kernels' form (one row per thread); without
    // it, the CPU's block loops, whose run-time sizes are uniform.
    patterns.add<TransposeOfForallResult>(&getContext(), foldReads);
    if (foldReads)
      patterns.add<ExtractSliceOfTranspose>(&getContext(), foldReads);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
