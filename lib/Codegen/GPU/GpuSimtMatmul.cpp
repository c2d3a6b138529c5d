//===- GpuSimtMatmul.cpp - f32 x*W^T as one parallel loop for CUDA --------===//
//
// Without it an f32 projection with a bias costs three kernels (zero fill,
// contraction, bias add) and two extra passes over C; fused, one kernel
// keeps each output's sum in a register and stores it once. The SIMT loop
// itself is what linalg's parallel-loop lowering gave the contraction.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/IndexArith.h"
#include "Codegen/Common/MatmulMatch.h"
#include "Codegen/Utils/WidenedOperands.h"
#include "attnc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUSIMTMATMUL
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using mlir::attn::NTMatmul;

namespace {

/// acc + A[m, k] * B[n, k] with the contraction's own body ops (and their
/// fastmath flags).
static Value emitMulAdd(OpBuilder &b, NTMatmul &mm, Value acc, Value m, Value n,
                        Value k) {
  Location loc = mm.op.getLoc();
  Block &body = mm.op.getRegion().front();
  IRMapping map;
  map.map(body.getArgument(0),
          memref::LoadOp::create(b, loc, mm.a, ValueRange{m, k}));
  map.map(body.getArgument(1),
          memref::LoadOp::create(b, loc, mm.b, ValueRange{n, k}));
  map.map(body.getArgument(2), acc);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookup(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}

struct AttnGpuSimtMatmulPass
    : public mlir::attn::impl::AttnGpuSimtMatmulBase<AttnGpuSimtMatmulPass> {
  using AttnGpuSimtMatmulBase::AttnGpuSimtMatmulBase;

  void runOnOperation() override {
    SmallVector<NTMatmul> matches;
    getOperation().walk([&](linalg::GenericOp op) {
      // Contractions nested in loops (attention blocks) run inside another
      // op's threads already.
      if (!isa<func::FuncOp>(op->getParentOp()))
        return;
      // A dynamic M (batch * sequence rows at run time) bounds the loop
      // from A's run-time rows.
      if (std::optional<NTMatmul> mm =
              mlir::attn::matchNTMatmul(op, /*dynamicM=*/true))
        matches.push_back(*mm);
    });
    for (NTMatmul &mm : matches) {
      Location loc = mm.op.getLoc();
      OpBuilder b(mm.op);
      Operation *zeroInit = mlir::attn::findZeroInit(mm);
      linalg::GenericOp epilogue =
          fuseEpilogues ? mlir::attn::findMatmulEpilogue(mm) : nullptr;
      attn::IndexArith ix(b, loc);
      Value dynamicRows =
          ShapedType::isDynamic(mm.m)
              ? memref::DimOp::create(b, loc, mm.a, 0).getResult()
              : Value();
      auto loop = scf::ParallelOp::create(
          b, loc, ValueRange{ix.cst(0), ix.cst(0)},
          ValueRange{dynamicRows ? dynamicRows : ix.cst(mm.m), ix.cst(mm.n)},
          ValueRange{ix.cst(1), ix.cst(1)});
      OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
      Value m = loop.getInductionVars()[0], n = loop.getInductionVars()[1];
      Value init =
          zeroInit
              ? arith::ConstantOp::create(lb, loc, lb.getF32FloatAttr(0.0f))
                    .getResult()
              : memref::LoadOp::create(lb, loc, mm.c, ValueRange{m, n})
                    .getResult();
      attn::IndexArith lx(lb, loc);
      auto kLoop = scf::ForOp::create(
          lb, loc, lx.cst(0), lx.cst(mm.k), lx.cst(1), ValueRange{init},
          [&](OpBuilder &kb, Location, Value k, ValueRange acc) {
            scf::YieldOp::create(kb, loc, emitMulAdd(kb, mm, acc[0], m, n, k));
          });
      Value sum = kLoop.getResult(0);
      if (epilogue) {
        Value out =
            mlir::attn::buildEpilogueValue(lb, loc, epilogue, mm.c, sum, m, n);
        memref::StoreOp::create(lb, loc, out, epilogue.getDpsInits()[0],
                                ValueRange{m, n});
        epilogue.erase();
      } else {
        memref::StoreOp::create(lb, loc, sum, mm.c, ValueRange{m, n});
      }
      mm.op.erase();
      // The loop writes every element of C (or, with an epilogue writing
      // elsewhere, nothing reads C): its zeroing is dead, and C itself
      // when the epilogue wrote elsewhere.
      if (zeroInit)
        mlir::attn::eraseZeroInit(zeroInit);
      if (auto alloc = mm.c.getDefiningOp<memref::AllocOp>())
        mlir::attn::eraseAllocIfUnused(alloc);
    }
  }
};

} // namespace
