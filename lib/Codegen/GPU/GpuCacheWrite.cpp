//===- GpuCacheWrite.cpp - KV-cache writes as device kernels (CUDA) -------===//
//
// The CPU lowering of attn.cache_write (attn-lower-to-linalg) is a host
// scf.for over the batch that extracts positions[b] with tensor.extract and
// inserts the sequence's rows with tensor.insert_slice. On CUDA every buffer,
// `positions` included, lives in device memory, and the GPU mapping only
// moves parallel loops to the device: that host loop cannot run there.
//
// This pass writes the rows from a kernel instead, one thread per element of
// new[B, H, T, D] (grid (ceil(T * D / threads), H, B), consecutive threads on
// consecutive elements of a row, so the stores of a warp are coalesced); each
// thread loads positions[b] and clamps it into [0, L - T] like the CPU loop.
//
// Why a gpu.launch built on bridged buffers rather than tensor-level loops:
//  - the cache is model state and must be updated in place. The write of
//    a few rows at a run-time offset has no linalg form (an output indexed
//    by an affine map cannot start at positions[b]); as an scf.forall with
//    tensor.parallel_insert_slice per element it would be in place, but
//    bufferizes to a memref.copy of a 1x1x1x1 subview per thread, which
//    becomes a memcpy inside the kernel. A writable bufferization.to_buffer
//    of the cache is, for One-Shot Bufferize, a write of the cache tensor in
//    place (out of place, i.e. a copy, only if the old value is read later),
//    and the result is bufferization.to_tensor restrict of that same buffer:
//    after bufferization the updated cache is the argument's buffer, which
//    attn-drop-state-results checks;
//  - the kernel's indexing is exactly what this pass emits (no dependence on
//    the per-function thread count attn-tile picks for the generic loop
//    mapping), and the GPU kernel emulator runs it as emitted
//    (test/Integration/GPU/cache-write-emulation.test).
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/IndexArith.h"
#include "attnc/Codegen/GPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUCACHEWRITE
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The largest grid dimension y or z a launch may have.
constexpr int64_t kMaxGridYZ = 65535;

/// Why `op` cannot become a kernel, or empty if it can. The cache (model
/// state) is static; the token count T of the new rows may be dynamic (a
/// step of a run-time length): the grid is then sized on the host.
static std::string unsupportedReason(CacheWriteOp op) {
  auto rowsType = op.getNewRows().getType();
  if (!op.getCache().getType().hasStaticShape() ||
      !op.getPositions().getType().hasStaticShape() ||
      rowsType.isDynamicDim(0) || rowsType.isDynamicDim(1) ||
      rowsType.isDynamicDim(3))
    return "only the token count of the new rows may be dynamic";
  auto cacheType = op.getCache().getType();
  if (cacheType.getDimSize(0) > kMaxGridYZ ||
      cacheType.getDimSize(1) > kMaxGridYZ)
    return "batch and heads must be at most 65535 (grid z and y)";
  return "";
}

struct GpuCacheWriteLowering : OpRewritePattern<CacheWriteOp> {
  GpuCacheWriteLowering(MLIRContext *ctx, int64_t blockThreads)
      : OpRewritePattern(ctx), blockThreads(blockThreads) {}

  LogicalResult matchAndRewrite(CacheWriteOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason = unsupportedReason(op);
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);
    Location loc = op.getLoc();
    auto cacheType = op.getCache().getType();
    auto rowsType = op.getNewRows().getType();
    int64_t batch = cacheType.getDimSize(0), heads = cacheType.getDimSize(1),
            length = cacheType.getDimSize(2), dh = cacheType.getDimSize(3),
            tokens = rowsType.getDimSize(2);
    bool dynamic = ShapedType::isDynamic(tokens);
    int64_t elements = dynamic ? ShapedType::kDynamic : tokens * dh;
    if (elements == 0 || dh == 0) {
      rewriter.replaceOp(op, op.getCache());
      return success();
    }
    int64_t threads = dynamic ? blockThreads : std::min(elements, blockThreads);

    auto bufferOf = [&](Value tensor, bool readOnly) -> Value {
      auto type = cast<RankedTensorType>(tensor.getType());
      auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
      return bufferization::ToBufferOp::create(rewriter, loc, memrefType,
                                               tensor, readOnly);
    };
    Value rows = bufferOf(op.getNewRows(), /*readOnly=*/true);
    Value positions = bufferOf(op.getPositions(), /*readOnly=*/true);
    Value cache = bufferOf(op.getCache(), /*readOnly=*/false);

    IndexArith ia(rewriter, loc);
    Value one = ia.cst(1);
    // A dynamic T: T * D elements in ceil(T * D / threads) blocks, computed
    // on the host, and every thread checks that it has an element.
    Value tokenCount =
        dynamic ? memref::DimOp::create(rewriter, loc, rows, 2).getResult()
                : ia.cst(tokens);
    Value elementCount = dynamic ? ia.mul(tokenCount, dh) : ia.cst(elements);
    Value blocks = dynamic ? ia.divu(ia.add(elementCount, threads - 1), threads)
                           : ia.cst((elements + threads - 1) / threads);
    auto launch =
        gpu::LaunchOp::create(rewriter, loc, blocks, ia.cst(heads),
                              ia.cst(batch), ia.cst(threads), one, one);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      Value head = launch.getBlockIds().y, seq = launch.getBlockIds().z;
      Value flat = ia.add(ia.mul(launch.getBlockIds().x, threads),
                          launch.getThreadIds().x);
      auto store = [&](OpBuilder &b, Location l) {
        IndexArith at(b, l);
        Value t = at.divu(flat, dh), d = at.remu(flat, dh);
        Value pos = memref::LoadOp::create(b, l, positions, ValueRange{seq});
        pos = arith::IndexCastOp::create(b, l, b.getIndexType(), pos);
        pos = arith::MaxSIOp::create(b, l, pos, at.cst(0));
        Value last =
            dynamic ? arith::SubIOp::create(b, l, at.cst(length), tokenCount)
                          .getResult()
                    : at.cst(length - tokens);
        pos = arith::MinSIOp::create(b, l, pos, last);
        auto write = [&](OpBuilder &b, Location l) {
          Value row =
              memref::LoadOp::create(b, l, rows, ValueRange{seq, head, t, d});
          memref::StoreOp::create(b, l, row, cache,
                                  ValueRange{seq, head, at.add(pos, t), d});
        };
        if (!dynamic)
          return write(b, l);
        // More run-time tokens than cache rows: the rows past the end are
        // dropped, which keeps memory safe (the runtime checks positions).
        Value fits = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                           at.add(pos, t), at.cst(length));
        scf::IfOp::create(b, l, fits, [&](OpBuilder &b, Location l) {
          write(b, l);
          scf::YieldOp::create(b, l);
        });
      };
      if (!dynamic && elements % threads == 0) {
        store(rewriter, loc);
      } else {
        Value inside = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::ult, flat, elementCount);
        scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location l) {
          store(b, l);
          scf::YieldOp::create(b, l);
        });
      }
      gpu::TerminatorOp::create(rewriter, loc);
    }
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, cacheType, cache, /*restrict=*/true, /*writable=*/true);
    return success();
  }

  int64_t blockThreads;
};

struct AttnGpuCacheWritePass
    : public mlir::attn::impl::AttnGpuCacheWriteBase<AttnGpuCacheWritePass> {
  using AttnGpuCacheWriteBase::AttnGpuCacheWriteBase;

  void runOnOperation() override {
    if (blockThreads < 1 || blockThreads > 1024) {
      getOperation().emitError(
          "attn-gpu-cache-write: block-threads must be in [1, 1024]");
      return signalPassFailure();
    }
    // What the pattern cannot take would fall to the CPU lowering's host
    // loop, which fails far from here on the GPU: report it at the op.
    WalkResult unsupported = getOperation().walk([](CacheWriteOp op) {
      std::string reason = unsupportedReason(op);
      if (reason.empty())
        return WalkResult::advance();
      op.emitOpError("cannot be lowered for CUDA: ") << reason;
      return WalkResult::interrupt();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<GpuCacheWriteLowering>(&getContext(), blockThreads);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
