//===- GpuFlashAttention.cpp - tensor-core flash attention for CUDA -------===//
//
// f16/bf16 attn.sdpa becomes one gpu.launch of a tensor-core flash attention
// kernel (GpuFlashAttentionKernel.cpp describes and builds it). This file
// decides which attn.sdpa take it and with which blocks and staging, and
// gives the kernel its operands: identity-layout buffers, or a head split
// read in place through a transposed view of the projection's buffer, and
// a result written in the merged [B, S, H, D] layout where only the merge
// reads it.
//
//===----------------------------------------------------------------------===//

#include "Codegen/GPU/GpuFlashAttention.h"
#include "Codegen/GPU/MmaSync.h"

#include "Codegen/Common/FlashPattern.h"
#include "Codegen/GPU/TensorCoreTiles.h"
#include "attnc/Codegen/GPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <array>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUFLASHATTENTION
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_flash;

namespace {

constexpr int64_t kWarpSize = 32;

/// The head split and merge of attention: [B, S, H, D] <-> [B, H, S, D].
constexpr std::array<int64_t, 4> kHeadPermutation = {0, 2, 1, 3};

/// A stand-in for run-time sizes when checking strides' alignment: odd (see
/// OperandView) and not 1 (so that rank-reducing slices drop the same unit
/// dimensions).
constexpr int64_t kOddSize = 17;

/// `op` if it is a linalg.transpose of a [B, S, H, D] tensor into the
/// kernel's [B, H, S, D] (or back).
static linalg::TransposeOp headTranspose(Operation *op) {
  auto transpose = dyn_cast_or_null<linalg::TransposeOp>(op);
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      transpose.getPermutation() != ArrayRef<int64_t>(kHeadPermutation))
    return {};
  return transpose;
}

/// `type` (strided, [B, S, H, D]) seen as [B, H, S, D].
static MemRefType headTransposedType(MemRefType type) {
  auto [strides, offset] = type.getStridesAndOffset();
  SmallVector<int64_t> shape, permuted;
  for (int64_t d : kHeadPermutation) {
    shape.push_back(type.getDimSize(d));
    permuted.push_back(strides[d]);
  }
  return MemRefType::get(
      shape, type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), offset, permuted));
}

/// A view of the tensor `x` as the memref views of the static slices and
/// reshapes that lead to it from a root tensor, whose buffer is taken with an
/// identity layout (bufferization copies it into a fresh allocation
/// otherwise, so it starts at an allocation or an entry argument, as the
/// kernel's other operands do). The layout is then known here, exactly.
class OperandView {
public:
  /// With a nonzero `dynamicAs`, every run-time size (batch, sequence) is
  /// taken to be that value: an odd one makes the view's strides the
  /// static factors of the real ones times odd numbers (strides of these
  /// views are products of sizes), so they have the same powers of two.
  explicit OperandView(int64_t dynamicAs = 0) : dynamicAs(dynamicAs) {}

  /// The view's type, or null where a step is not a slice with static
  /// offsets and strides or a reshape that memref views can express.
  MemRefType analyze(Value x) {
    Operation *def = x.getDefiningOp();
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape = sizesOf(type.getShape());
    if (chain.size() < kMaxSteps && def) {
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
        if (ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
            ShapedType::isDynamicShape(slice.getStaticStrides()))
          return {};
        return step(def, slice.getSource(), [&](MemRefType src) {
          return memref::SubViewOp::inferRankReducedResultType(
              shape, src, slice.getStaticOffsets(),
              sizesOf(slice.getStaticSizes()), slice.getStaticStrides());
        });
      }
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
        return step(def, expand.getSrc(), [&](MemRefType src) -> MemRefType {
          FailureOr<MemRefType> expanded =
              memref::ExpandShapeOp::computeExpandedType(
                  src, shape, expand.getReassociationIndices());
          return succeeded(expanded) ? *expanded : MemRefType();
        });
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
        return step(def, collapse.getSrc(), [&](MemRefType src) {
          auto reassociation = collapse.getReassociationIndices();
          if (!memref::CollapseShapeOp::isGuaranteedCollapsible(src,
                                                                reassociation))
            return MemRefType();
          return memref::CollapseShapeOp::computeCollapsedType(src,
                                                               reassociation);
        });
    }
    root = x;
    types.push_back(MemRefType::get(shape, type.getElementType()));
    return types.back();
  }

  /// Builds the analyzed view (analyze() returned a type).
  Value build(OpBuilder &b, Location loc) {
    Value view = bufferization::ToBufferOp::create(b, loc, types.front(), root,
                                                   /*read_only=*/true);
    for (auto [op, type] :
         llvm::zip(llvm::reverse(chain), llvm::drop_begin(types))) {
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
        view = memref::SubViewOp::create(
            b, loc, type, view, slice.getMixedOffsets(), slice.getMixedSizes(),
            slice.getMixedStrides());
      else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
        view = type.hasStaticShape()
                   ? memref::ExpandShapeOp::create(
                         b, loc, type, view, expand.getReassociationIndices())
                   : memref::ExpandShapeOp::create(
                         b, loc, type, view, expand.getReassociationIndices(),
                         expand.getMixedOutputShape());
      else
        view = memref::CollapseShapeOp::create(
            b, loc, type, view,
            cast<tensor::CollapseShapeOp>(op).getReassociationIndices());
    }
    return view;
  }

private:
  static constexpr size_t kMaxSteps = 8;

  SmallVector<int64_t> sizesOf(ArrayRef<int64_t> sizes) const {
    SmallVector<int64_t> result(sizes);
    if (dynamicAs)
      for (int64_t &size : result)
        if (ShapedType::isDynamic(size))
          size = dynamicAs;
    return result;
  }

  int64_t dynamicAs;
  MemRefType step(Operation *op, Value source,
                  function_ref<MemRefType(MemRefType)> viewType) {
    chain.push_back(op);
    MemRefType src = analyze(source);
    if (!src)
      return {};
    MemRefType type = viewType(src);
    if (!type)
      return {};
    types.push_back(type);
    return type;
  }

  /// The ops from the tensor back to the root, and the view types from the
  /// root's buffer to the tensor's.
  SmallVector<Operation *> chain;
  SmallVector<MemRefType> types;
  Value root;
};

struct GpuFlashSdpaLowering : FlashPatternBase {
  GpuFlashSdpaLowering(MLIRContext *ctx, int64_t blockQ, int64_t blockK,
                       int64_t maxHeadDim, bool asyncStaging, bool ldmatrix)
      : FlashPatternBase(ctx, blockQ, blockK, /*allowDynamic=*/true),
        maxHeadDim(maxHeadDim), asyncStaging(asyncStaging), ldmatrix(ldmatrix) {
  }

  LogicalResult rewriteFlash(SdpaOp op,
                             PatternRewriter &rewriter) const override {
    if (op.getWindow() && *op.getWindow() != 0)
      return rewriter.notifyMatchFailure(op, "has a window");
    // The kernel aligns its causal mask bottom-right; per-row query
    // positions are left to attn-flash-attention's blocked loops.
    if (op.getQueryPositions())
      return rewriter.notifyMatchFailure(op, "has query positions");
    auto qType = op.getQuery().getType();
    auto kType = op.getKey().getType();
    auto vType = op.getValue().getType();
    auto resultType = op.getType();
    Type elt = resultType.getElementType();
    if (!(elt.isF16() || elt.isBF16()) || qType.getElementType() != elt ||
        kType.getElementType() != elt || vType.getElementType() != elt)
      return rewriter.notifyMatchFailure(op, "not all f16 or all bf16");

    GpuFlashProblem p;
    static_cast<SdpaShape &>(p) = op.getSdpaShape();
    if (!fitsTensorCoreFlash(p.sq, p.sk, p.dk, p.dv, maxHeadDim))
      return rewriter.notifyMatchFailure(
          op, "Dk or Dv not a multiple of 8, or head dims above "
              "max-head-dim");
    // Static Sq and Sk that are not multiples of 16 are handled as run-time
    // ones are: a partial last query block, keys past Sk masked.
    bool raggedQ = !ShapedType::isDynamic(p.sq) && p.sq % kMmaM != 0;
    bool raggedK = !ShapedType::isDynamic(p.sk) && p.sk % kMmaK != 0;
    auto [bq, bk] = requestedBlocks(op);
    // The pipeline stages V as it is, which only ldmatrix.trans reads.
    int64_t stages = asyncStaging && ldmatrix ? kFlashAsyncStages : 0;
    chooseFlashBlocks(p.sq, p.sk, p.dk, p.dv, bq, bk, stages);
    p.blockQ = bq;
    p.blockK = bk;
    p.ldmatrix = ldmatrix;
    p.stages = stages;
    p.chunkK = p.chunkV = 0;
    if (stages) {
      // K and V rows of Dk, Dv (multiples of 8) elements from buffers that
      // start at allocations (below): 16-byte chunks are aligned.
      int64_t threads = bq / kMmaM * kWarpSize;
      p.chunkK = asyncCopyChunk(bk, p.dk, p.dk, threads);
      p.chunkV = asyncCopyChunk(bk, p.dv, p.dv, threads);
    }
    if (p.hq > 65535 || p.batch > 65535)
      return rewriter.notifyMatchFailure(op, "grid too large");
    p.warps = p.blockQ / kMmaM;
    bool dynamicLengths = ShapedType::isDynamic(p.sq) ||
                          ShapedType::isDynamic(p.sk) || raggedQ || raggedK;
    p.alignOffset = dynamicLengths ? 0 : p.sk - p.sq;
    p.scale = op.getEffectiveScale();
    p.causal = op.getCausal();
    p.elementType = elt;

    Location loc = op.getLoc();
    // Run-time batch and lengths, read off the operands on the host
    // (Q [B, Hq, Sq, Dk], K [B, Hkv, Sk, Dk]).
    RuntimeSizes sizes;
    auto dimOf = [&](Value tensor, int64_t d) -> Value {
      return tensor::DimOp::create(rewriter, loc, tensor, d);
    };
    if (ShapedType::isDynamic(p.batch))
      sizes.batch = dimOf(op.getQuery(), 0);
    if (ShapedType::isDynamic(p.sq))
      sizes.sq = dimOf(op.getQuery(), 2);
    if (ShapedType::isDynamic(p.sk))
      sizes.sk = dimOf(op.getKey(), 2);
    if (raggedQ)
      sizes.sq = arith::ConstantIndexOp::create(rewriter, loc, p.sq);
    if (raggedK)
      sizes.sk = arith::ConstantIndexOp::create(rewriter, loc, p.sk);
    // Identity-layout buffers: bufferization copies a tensor that lives at
    // an offset inside another buffer into a fresh allocation, so every
    // operand starts at an allocation (64-byte aligned) or at an entry
    // argument (cuMemAlloc, 256-byte aligned). The kernel's 16-byte loads
    // at multiples of 8 elements of rows of Dk, Dv % 8 == 0 rely on that.
    auto bufferOf = [&](Value tensor) -> Value {
      auto type = cast<RankedTensorType>(tensor.getType());
      auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
      return bufferization::ToBufferOp::create(rewriter, loc, memrefType,
                                               tensor, /*read_only=*/true);
    };
    Value q = operandBuffer(rewriter, loc, op.getQuery(), bufferOf),
          k = operandBuffer(rewriter, loc, op.getKey(), bufferOf),
          v = operandBuffer(rewriter, loc, op.getValue(), bufferOf);
    Value lengths = op.getKvLengths() ? bufferOf(op.getKvLengths()) : Value();
    Value bias = op.getBias() ? bufferOf(op.getBias()) : Value();
    // A result that is only merged back to [B, S, H, D] is written in that
    // layout: the kernel stores its rows through a transposed view (pairs
    // of Dv % 8 == 0 columns stay 4-byte aligned) and the merge goes.
    linalg::TransposeOp merge;
    if (op->hasOneUse()) {
      merge = headTranspose(*op->getUsers().begin());
      if (merge && merge.getInput() != op.getResult())
        merge = {};
    }
    SmallVector<int64_t> outShape(resultType.getShape());
    if (merge)
      outShape = llvm::to_vector(merge.getInit().getType().getShape());
    // The result's [B, Hq, Sq, Dv] sizes (permuted for a merged layout).
    SmallVector<Value> outSizes;
    for (auto [d, size] : llvm::enumerate(outShape)) {
      if (!ShapedType::isDynamic(size))
        continue;
      int64_t resultDim = merge ? kHeadPermutation[d] : d;
      // Only B and Sq can be run-time sizes (heads and head dims are not).
      outSizes.push_back(resultDim == 0 ? sizes.batch : sizes.sq);
    }
    Value out = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(outShape, elt), outSizes);
    Value outView = out;
    if (merge)
      outView = memref::TransposeOp::create(
          rewriter, loc, out,
          AffineMapAttr::get(AffineMap::getPermutationMap(
              ArrayRef<int64_t>(kHeadPermutation), getContext())));
    buildFlashKernel(rewriter, loc, p, q, k, v, lengths, bias, outView, sizes);
    if (merge) {
      rewriter.setInsertionPoint(merge);
      rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
          merge, merge.getInit().getType(), out, /*restrict=*/true,
          /*writable=*/true);
      rewriter.eraseOp(op);
      return success();
    }
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, resultType, out, /*restrict=*/true, /*writable=*/true);
    return success();
  }

  /// The buffer the kernel reads `operand` from. The head split of a
  /// projection (transpose of x, [B, S, H, D] -> [B, H, S, D]) is read in
  /// place, through a transposed view of x's buffer, when x's layout is
  /// known (static slices and reshapes of a root tensor) and keeps the
  /// kernel's 16-byte row chunks aligned: its offset and strides a multiple
  /// of 16 bytes and its rows contiguous. Otherwise the operand's own
  /// (transposed) buffer, `bufferOf(operand)`.
  static Value operandBuffer(OpBuilder &b, Location loc, Value operand,
                             function_ref<Value(Value)> bufferOf) {
    linalg::TransposeOp split = headTranspose(operand.getDefiningOp());
    if (!split)
      return bufferOf(operand);
    OperandView view;
    MemRefType type = view.analyze(split.getInput());
    if (!type)
      return bufferOf(operand);
    MemRefType transposed = headTransposedType(type);
    auto [strides, offset] = transposed.getStridesAndOffset();
    if (ShapedType::isDynamic(offset))
      return bufferOf(operand);
    // Run-time strides (of buffers with run-time batch or sequence sizes)
    // are checked on a copy of the view with odd sizes in their place.
    if (ShapedType::isDynamicShape(strides)) {
      MemRefType odd = OperandView(kOddSize).analyze(split.getInput());
      if (!odd || !odd.hasStaticShape())
        return bufferOf(operand);
      strides = headTransposedType(odd).getStridesAndOffset().first;
    }
    int64_t elementsPer16Bytes = 16 * 8 / transposed.getElementTypeBitWidth();
    if (strides.back() != 1 || offset % elementsPer16Bytes != 0 ||
        llvm::any_of(ArrayRef(strides).drop_back(), [&](int64_t stride) {
          return ShapedType::isDynamic(stride) ||
                 stride % elementsPer16Bytes != 0;
        }))
      return bufferOf(operand);
    return memref::TransposeOp::create(
        b, loc, view.build(b, loc),
        AffineMapAttr::get(AffineMap::getPermutationMap(
            ArrayRef<int64_t>(kHeadPermutation), b.getContext())));
  }

  int64_t maxHeadDim;
  bool asyncStaging, ldmatrix;
};

struct AttnGpuFlashAttentionPass
    : public mlir::attn::impl::AttnGpuFlashAttentionBase<
          AttnGpuFlashAttentionPass> {
  using AttnGpuFlashAttentionBase::AttnGpuFlashAttentionBase;

  void runOnOperation() override {
    if (blockQ < kMmaM || blockK < kMmaK || maxHeadDim < kMmaK) {
      getOperation().emitError("attn-gpu-flash-attention: block-q, block-k "
                               "and max-head-dim must be >= 16");
      return signalPassFailure();
    }
    if (failed(checkStagingOption(getOperation(), "attn-gpu-flash-attention",
                                  staging)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<GpuFlashSdpaLowering>(ctx, blockQ, blockK, maxHeadDim,
                                       staging == "cp-async", ldmatrix);
    if (failed(applyFlashPatterns(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
