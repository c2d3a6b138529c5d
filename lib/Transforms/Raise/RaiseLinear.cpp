//===- RaiseLinear.cpp - raise imported MatMul/Gemm to attn.linear --------===//
//
// ONNX writes a projection as MatMul(x, W) with W : [K, N] (PyTorch exports
// nn.Linear's weight transposed at export time), or as Gemm(x, W, b) with
// transB = 1 and W : [N, K]; the importer turns both into linalg.matmul
// (with linalg.transpose for transB, and tensor.collapse_shape /
// tensor.expand_shape around it for [..., M, K] inputs) and the bias into a
// linalg.add of a broadcast [N] vector. attn.linear keeps nn.Linear's
// [N, K] layout, so a [K, N] checkpoint tensor is bound as
// `attn.weight {transpose}`: the runtime transposes it at bind time, the
// weights file keeps its ONNX names and layout.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatchers.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISELINEAR
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

/// The [N, K] weight of `x @ rhs` with `rhs : [K, N]`: the transpose operand
/// of a linalg.transpose (Gemm transB), or the same attn.weight bound
/// transposed. Null if `rhs` is neither.
static Value getLinearWeight(PatternRewriter &rewriter, Value rhs) {
  if (auto transpose = rhs.getDefiningOp<linalg::TransposeOp>()) {
    if (transpose.hasPureTensorSemantics() &&
        transpose.getPermutation() == ArrayRef<int64_t>{1, 0})
      return transpose.getInput();
    return Value();
  }
  auto weight = rhs.getDefiningOp<WeightOp>();
  if (!weight)
    return Value();
  RankedTensorType type = weight.getType();
  if (type.getRank() != 2 || !type.hasStaticShape())
    return Value();
  // Same binding (name, gather, concat); `transpose` flipped. The clone sits
  // next to the original so that it dominates the same uses.
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(weight);
  auto transposed = cast<WeightOp>(rewriter.clone(*weight));
  transposed.getResult().setType(RankedTensorType::get(
      {type.getDimSize(1), type.getDimSize(0)}, type.getElementType()));
  transposed.setTranspose(!weight.getTranspose());
  return transposed.getResult();
}

/// Whether `expand` restores the leading dimensions of `src` (sizes that
/// are the same in every run, dynamic ones included).
static bool sameLeadingDims(tensor::ExpandShapeOp expand, Value src) {
  auto srcType = cast<RankedTensorType>(src.getType());
  if (expand.getResultType().getRank() != srcType.getRank())
    return false;
  SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
  for (int64_t d = 0; d + 1 < srcType.getRank(); ++d)
    if (!sameSize(sizes[d], src, d))
      return false;
  return true;
}

namespace {

/// linalg.matmul(x, W) into zeros with W an attn.weight or a transposed
/// tensor -> attn.linear; with a collapse of x's leading dims before and the
/// matching expand after, on x itself.
struct RaiseMatmulToLinear : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op->getNumResults() != 1 || !isZeroTensor(op.getDpsInits()[0]) ||
        ArrayRef<AffineMap>(op.getIndexingMapsArray()) !=
            ArrayRef<AffineMap>(
                linalg::MatmulOp::getDefaultIndexingMaps(op.getContext())))
      return rewriter.notifyMatchFailure(op, "not a plain matmul into zeros");
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Type elementType = resultType.getElementType();
    // Rows may be dynamic (batch, sequence); the weight is static.
    if (!isa<FloatType>(elementType) || resultType.isDynamicDim(1) ||
        cast<RankedTensorType>(lhs.getType()).getElementType() != elementType ||
        cast<RankedTensorType>(rhs.getType()).getElementType() != elementType)
      return rewriter.notifyMatchFailure(op, "not one static float type");
    bool rhsIsWeight = rhs.getDefiningOp<WeightOp>() ||
                       (rhs.getDefiningOp<linalg::TransposeOp>() &&
                        rhs.getDefiningOp<linalg::TransposeOp>()
                            .getInput()
                            .getDefiningOp<WeightOp>());
    if (!rhsIsWeight)
      return rewriter.notifyMatchFailure(op, "rhs is not a weight");

    // [..., M, K] inputs: x collapsed to [M', K], the product expanded back.
    Value input = lhs;
    Operation *replaced = op;
    RankedTensorType linearType = resultType;
    auto collapse = lhs.getDefiningOp<tensor::CollapseShapeOp>();
    if (collapse && op->hasOneUse()) {
      auto expand = dyn_cast<tensor::ExpandShapeOp>(*op->getUsers().begin());
      RankedTensorType srcType = collapse.getSrcType();
      int64_t rank = srcType.getRank();
      if (expand && sameLeadingDims(expand, collapse.getSrc()) &&
          expand.getReassociationIndices() ==
              collapse.getReassociationIndices() &&
          collapse.getReassociationIndices().back() ==
              ReassociationIndices{rank - 1}) {
        input = collapse.getSrc();
        replaced = expand;
        linearType = expand.getResultType();
      }
    }

    Value weight = getLinearWeight(rewriter, rhs);
    if (!weight)
      return rewriter.notifyMatchFailure(op, "rhs is not a [K, N] weight");
    rewriter.setInsertionPoint(replaced);
    Value linear = LinearOp::create(rewriter, op.getLoc(), linearType, input,
                                    weight, /*bias=*/Value());
    rewriter.replaceOp(replaced, linear);
    return success();
  }
};

/// linalg.add(attn.linear(x, W), broadcast(b)) with b : [N] (either order)
/// -> attn.linear(x, W, b).
struct FoldLinearBias : OpRewritePattern<linalg::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::AddOp op,
                                PatternRewriter &rewriter) const override {
    auto ins = matchBinary<linalg::AddOp>(op->getResult(0));
    if (!ins)
      return failure();
    for (auto [lhs, rhs] : {*ins, std::make_pair(ins->second, ins->first)}) {
      auto linear = lhs.getDefiningOp<LinearOp>();
      if (!linear || linear.getBias() || !linear->hasOneUse())
        continue;
      Value bias = matchVectorBroadcast(rhs);
      if (!bias || bias.getType() != RankedTensorType::get(
                                         {linear.getType().getShape().back()},
                                         linear.getType().getElementType()))
        continue;
      rewriter.replaceOpWithNewOp<LinearOp>(
          op, linear.getType(), linear.getInput(), linear.getWeight(), bias);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a projection plus a bias");
  }
};

/// expand_shape(attn.linear(collapse_shape(x))) with the leading dims of x
/// collapsed into one and expanded back the same way -> attn.linear(x) (a
/// Gemm on a flattened activation, e.g. GPT-2's Conv1D addmm, once its bias
/// is folded).
struct FoldLinearReshapes : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto linear = expand.getSrc().getDefiningOp<LinearOp>();
    if (!linear || !linear->hasOneUse())
      return failure();
    auto collapse = linear.getInput().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse)
      return failure();
    RankedTensorType srcType = collapse.getSrcType();
    // The last group may hold unit dimensions besides the contracted one
    // (PyTorch's [S, 1, D] -> [S, D] for batch 1).
    if (expand.getReassociationIndices() !=
            collapse.getReassociationIndices() ||
        srcType.isDynamicDim(srcType.getRank() - 1) ||
        collapse.getResultType().getShape().back() !=
            srcType.getShape().back() ||
        expand.getResultType().getShape().back() !=
            linear.getType().getShape().back() ||
        !sameLeadingDims(expand, collapse.getSrc()))
      return rewriter.notifyMatchFailure(expand, "not the inverse reshapes");
    rewriter.replaceOpWithNewOp<LinearOp>(expand, expand.getResultType(),
                                          collapse.getSrc(), linear.getWeight(),
                                          linear.getBias());
    return success();
  }
};

struct AttnRaiseLinearPass
    : raise::RaisingPass<AttnRaiseLinearPass, attn::impl::AttnRaiseLinearBase,
                         RaiseMatmulToLinear, FoldLinearBias,
                         FoldLinearReshapes> {};

} // namespace
