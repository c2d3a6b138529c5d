//===- CpuCheckTokenIds.cpp - run-time check of embedding ids -------------===//
//
// An id outside the embedding table must not silently become row 0 or row
// V-1 (the lookup's clamp): before each attn.embedding, a loop over the ids
// reports the first bad one to the runtime, which fails the run with the
// batch, position and id (PyTorch's "index out of range" for embeddings).
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUCHECKTOKENIDS
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// The runtime entry (libattnrt, Runtime.cpp).
static constexpr llvm::StringLiteral kReportFn = "attnrt_report_token_id";

namespace {
struct AttnCpuCheckTokenIdsPass
    : public mlir::attn::impl::AttnCpuCheckTokenIdsBase<
          AttnCpuCheckTokenIdsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<EmbeddingOp> lookups;
    module.walk([&](EmbeddingOp op) { lookups.push_back(op); });
    if (lookups.empty())
      return;
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    auto report = module.lookupSymbol<func::FuncOp>(kReportFn);
    if (!report) {
      b.setInsertionPointToStart(module.getBody());
      report =
          func::FuncOp::create(b, module.getLoc(), kReportFn,
                               b.getFunctionType({i64, i64, i64, i64}, {}));
      report.setPrivate();
    }
    for (EmbeddingOp op : lookups)
      insertCheck(b, op, report);
  }

  void insertCheck(OpBuilder &b, EmbeddingOp op, func::FuncOp report) {
    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    Value ids = op.getIds();
    auto idsType = cast<RankedTensorType>(ids.getType());
    int64_t rows = op.getTable().getType().getDimSize(0);
    Type i64 = b.getI64Type();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value rowsValue;
    if (ShapedType::isDynamic(rows))
      rowsValue = arith::IndexCastOp::create(
          b, loc, i64, tensor::DimOp::create(b, loc, op.getTable(), 0));
    else
      rowsValue = arith::ConstantIntOp::create(b, loc, i64, rows);

    // One loop per id dimension; the body compares and, rarely, calls.
    SmallVector<Value> indices, extents;
    for (int64_t d = 0; d < idsType.getRank(); ++d) {
      Value extent = tensor::DimOp::create(b, loc, ids, d);
      extents.push_back(extent);
      auto loop = scf::ForOp::create(b, loc, zero, extent, one);
      b.setInsertionPointToStart(loop.getBody());
      indices.push_back(loop.getInductionVar());
    }
    Value id = tensor::ExtractOp::create(b, loc, ids, indices);
    if (id.getType() != i64)
      id = arith::ExtSIOp::create(b, loc, i64, id);
    // Unsigned: negative ids compare above every row count.
    Value bad =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, id, rowsValue);
    auto ifBad = scf::IfOp::create(b, loc, bad, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifBad.thenBlock());
    // batch: row-major index over the leading dimensions; position: the
    // index in the last one (0 for rank-0 ids).
    Value batch = zero, position = zero;
    if (!indices.empty()) {
      position = indices.back();
      for (size_t d = 0; d + 1 < indices.size(); ++d)
        batch = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, batch, extents[d]),
            indices[d]);
    }
    func::CallOp::create(
        b, loc, report,
        ValueRange{arith::IndexCastOp::create(b, loc, i64, batch),
                   arith::IndexCastOp::create(b, loc, i64, position), id,
                   rowsValue});
  }
};
} // namespace
