//===- GpuMmaMatmul.cpp - tensor-core x*W^T kernels for the CUDA target ---===//
//
// attn.linear on f16/bf16 operands lowers to elementwise `arith.extf`
// generics that widen both operands to f32, then an f32 contraction
// `C[m, n] += A[m, k] * B[n, k]` (B in the checkpoint's [N, K] layout).
// After bufferization this pass replaces such a contraction by a gpu.launch
// that reads the narrow sources directly and multiplies on the tensor cores
// with mma.sync.m16n8k16 (f16 or bf16 inputs, f32 accumulation), which
// computes exactly the f32 contraction of the widened operands up to the
// order of the f32 additions.
//
// The kernel and its mma.sync staging are built in GpuMmaMatmulKernel.cpp,
// its wgmma and TMA variants (sm_90a) in GpuMmaMatmulWgmma.cpp.
//
//===----------------------------------------------------------------------===//

#include "Codegen/GPU/GpuMmaMatmul.h"

#include "attnc/Codegen/GPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "Codegen/Common/MatmulMatch.h"
#include "Codegen/GPU/MmaSync.h"
#include "Codegen/GPU/TensorCoreTiles.h"
#include "Codegen/Utils/WidenedOperands.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUMMAMATMUL
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn::mma_matmul;

bool mlir::attn::mma_matmul::startsAtAllocation(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return true;
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      v = collapse.getSrc();
    else if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      v = expand.getSrc();
    else
      return false;
  }
  return isa<func::FuncOp>(cast<BlockArgument>(v).getOwner()->getParentOp());
}

namespace {

using mlir::attn::narrowOperand;
using mlir::attn::traceWidened;
using mlir::attn::WidenedOperand;

static std::optional<MmaMatmul> matchMmaMatmul(linalg::GenericOp op) {
  if (!isa<func::FuncOp>(op->getParentOp()))
    return std::nullopt;
  // M (batch * sequence rows) may be known at run time only.
  std::optional<mlir::attn::NTMatmul> nt =
      mlir::attn::matchNTMatmul(op, /*dynamicM=*/true);
  if (!nt)
    return std::nullopt;
  Value a = nt->a, b = nt->b, c = nt->c;
  auto aType = cast<MemRefType>(nt->a.getType());
  auto bType = cast<MemRefType>(nt->b.getType());
  MmaMatmul mm;
  mm.contraction = *nt;
  mm.op = op;
  mm.c = c;
  mm.m = aType.getDimSize(0);
  mm.n = bType.getDimSize(0);
  mm.k = aType.getDimSize(1);
  bool dynamicM = ShapedType::isDynamic(mm.m);
  if ((!dynamicM && mm.m <= 0) || mm.n <= 0 || mm.k <= 0)
    return std::nullopt;
  // Grid y counts row tiles (rounded up: ragged M has a partial last one).
  if (!dynamicM && (mm.m + kTileM - 1) / kTileM > 65535)
    return std::nullopt;
  auto wa = traceWidened(a, op, /*dynamicShapes=*/true),
       wb = traceWidened(b, op, /*dynamicShapes=*/true);
  if (!wa || !wb)
    return std::nullopt;
  Type ea = cast<MemRefType>(wa->narrow.getType()).getElementType();
  Type eb = cast<MemRefType>(wb->narrow.getType()).getElementType();
  if (ea != eb)
    return std::nullopt;
  mm.a = *wa;
  mm.b = *wb;
  mm.elementType = ea;
  return mm;
}

/// Shared memory of `stages` (at least one) buffers of A [BM][BK + 8] and
/// B [BN][BK + 8] of 2-byte elements; for wgmma [BK / 8][BM][8] and
/// [BK / 8][BN][8] (no padding: the core matrices are read whole).
static int64_t gemmSharedBytes(const GemmTiling &t, int64_t stages,
                               bool wgmma = false) {
  return std::max<int64_t>(stages, 1) * 2 * (t.blockM() + t.blockN()) *
         (t.bk + (wgmma ? 0 : mlir::attn::kSmemPad));
}

struct AttnGpuMmaMatmulPass
    : public mlir::attn::impl::AttnGpuMmaMatmulBase<AttnGpuMmaMatmulPass> {
  using AttnGpuMmaMatmulBase::AttnGpuMmaMatmulBase;

  /// The staging of one kernel under the pass options. cp.async needs
  /// 4-byte aligned chunks (sources that start at an allocation, K even)
  /// and the same number of chunks for every thread; an operand without
  /// them is staged plainly inside the pipeline, and a kernel where neither
  /// has them keeps plain staging. The pipeline is as deep as `stages`
  /// allows within the k steps and 48 KiB of shared memory.
  /// With `forWgmma` the staging of the wgmma kernel, whose wgmma flag is
  /// set only where it can run: both operands staged by cp.async (the
  /// core-matrix layout has no plain-staging path), the pipeline within
  /// 48 KiB. With `tma` as well, each operand that is a plain row-major
  /// matrix at the start of an allocation with K % 8 == 0 (tmaLoadable) is
  /// loaded by the TMA instead; the others (views with offsets or strides,
  /// gathered or transposed weight bindings, K % 8 != 0) keep cp.async in
  /// the same pipeline.
  Staging chooseStaging(const GemmTiling &t, const MmaMatmul &mm, Value a,
                        Value bNk, bool forWgmma = false) const {
    Staging s;
    s.ldmatrix = ldmatrix && !forWgmma;
    if (staging != "cp-async")
      return s;
    if (startsAtAllocation(a))
      s.chunkA =
          mlir::attn::asyncCopyChunk(t.blockM(), t.bk, mm.k, t.threads());
    if (startsAtAllocation(bNk))
      s.chunkB =
          mlir::attn::asyncCopyChunk(t.blockN(), t.bk, mm.k, t.threads());
    if (!s.chunkA && !s.chunkB)
      return s;
    if (forWgmma && (!s.chunkA || !s.chunkB))
      return s;
    int64_t kSteps = llvm::divideCeil(mm.k, t.bk);
    s.stages = std::max<int64_t>(2, std::min<int64_t>(stages, kSteps));
    while (s.stages > 2 && gemmSharedBytes(t, s.stages, forWgmma) >
                               mlir::attn::kMaxStaticSharedBytes)
      --s.stages;
    s.wgmma = forWgmma && gemmSharedBytes(t, s.stages, true) <=
                              mlir::attn::kMaxStaticSharedBytes;
    // TMA where the operand allows it and the mbarriers (8 bytes per stage)
    // and the 128-byte alignment of the tiles still fit.
    if (s.wgmma && tma &&
        gemmSharedBytes(t, s.stages, true) + 8 * s.stages +
                2 * kTmaSharedAlignment <=
            mlir::attn::kMaxStaticSharedBytes) {
      s.tmaA = tmaLoadable(a, t.blockM(), t.bk);
      s.tmaB = tmaLoadable(bNk, t.blockN(), t.bk);
    }
    return s;
  }

  void runOnOperation() override {
    if (warpNTiles < 1) {
      getOperation().emitError(
          "attn-gpu-mma-matmul: warp-n-tiles must be >= 1");
      return signalPassFailure();
    }
    if (failed(attn::checkStagingOption(getOperation(), "attn-gpu-mma-matmul",
                                        staging)))
      return signalPassFailure();
    if (stages < 2) {
      getOperation().emitError("attn-gpu-mma-matmul: stages must be >= 2");
      return signalPassFailure();
    }
    // Run-time sizes read off the widened copies and f32 results would keep
    // them alive (no-op for static shapes).
    mlir::attn::resolveReshapeDims(getOperation());
    SmallVector<MmaMatmul, 4> matches;
    getOperation().walk([&](linalg::GenericOp op) {
      if (auto mm = matchMmaMatmul(op))
        matches.push_back(*mm);
    });
    mlir::attn::WidenedCopies widened;
    for (MmaMatmul &mm : matches) {
      widened.add(mm.a, mm.op);
      widened.add(mm.b, mm.op);
      mm.zeroInit = mlir::attn::findZeroInit(mm.contraction);
      if (fuseEpilogues)
        mm.epilogue = mlir::attn::findMatmulEpilogue(mm.contraction);
      SmallVector<Operation *> writers;
      if (mm.zeroInit)
        writers.push_back(mm.zeroInit);
      writers.push_back(mm.op);
      if (mm.epilogue) {
        writers.push_back(mm.epilogue);
        for (Value input : mm.epilogue.getDpsInputs()) {
          if (input == mm.c)
            continue;
          if (auto w = traceWidened(input, mm.epilogue,
                                    /*dynamicShapes=*/true)) {
            widened.add(*w, mm.epilogue);
            mm.narrowInputs.push_back({input, *w});
          }
        }
      }
      mm.narrowed = mlir::attn::traceNarrowed(
          mm.epilogue ? mm.epilogue.getDpsInits()[0] : mm.c, writers,
          /*dynamicShapes=*/true);
    }
    widened.findDead();
    for (MmaMatmul &mm : matches) {
      OpBuilder b(mm.op);
      Location loc = mm.op.getLoc();
      // attn-tile's choice for this contraction wins over the option.
      int64_t nt = warpNTiles;
      if (auto tile = mlir::attn::TileAttr::lookup(mm.op))
        nt = tile.getWarpNTiles().value_or(nt);
      Operation *zeroInit = mm.zeroInit;
      linalg::GenericOp epilogue = mm.epilogue;
      Value a = narrowOperand(b, loc, mm.a);
      Value bNk = mm.b.view == mm.a.view && mm.b.narrow == mm.a.narrow
                      ? a
                      : narrowOperand(b, loc, mm.b);
      GemmTiling tiling = mlir::attn::chooseMmaGemmTiling(mm.m, mm.n, mm.k, nt);
      Staging kernelStaging = chooseStaging(tiling, mm, a, bNk);
      if (wgmma) {
        // Shapes the wgmma kernel does not take keep mma.sync.
        GemmTiling wgTiling =
            mlir::attn::chooseWgmmaGemmTiling(mm.m, mm.n, mm.k, nt);
        Staging wgStaging = chooseStaging(wgTiling, mm, a, bNk, true);
        if (wgStaging.wgmma) {
          tiling = wgTiling;
          kernelStaging = wgStaging;
        }
      }
      KernelBuilder kernel(b, loc, mm, a, bNk, tiling, epilogue,
                           zeroInit != nullptr, kernelStaging);
      for (auto &[input, w] : mm.narrowInputs)
        kernel.narrowInputs[input] = narrowOperand(b, loc, w);
      if (mm.narrowed)
        kernel.narrowOut = mlir::attn::narrowResultView(b, loc, *mm.narrowed);
      kernel.emit();
      if (mm.narrowed)
        mm.narrowed->trunc.erase();
      if (epilogue)
        epilogue.erase();
      // The kernel writes every element of C (or, with an epilogue writing
      // elsewhere, nothing reads C): the zeroing is dead.
      if (zeroInit)
        mlir::attn::eraseZeroInit(zeroInit);
      mm.op.erase();
      // Stored narrow: the f32 result is not needed any more.
      if (mm.narrowed)
        mlir::attn::eraseAllocIfUnused(mm.narrowed->wide);
    }
    widened.eraseDead();
  }
};

} // namespace
