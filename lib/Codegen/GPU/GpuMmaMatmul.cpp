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
// Kernel: a thread block of WM x WN warps (2 x 2 where M and N allow)
// computes a BM x BN tile of C, each warp MT x NT mma tiles of 16 x 8 (MT =
// 2, NT = warp-n-tiles or attn-tile's choice, halved where the block would
// not divide M or N): 64 x 64 by default. Per k step of BK = 32 (16 when K
// is not a multiple of 32) the block stages its A rows [BM, BK] and B rows
// [BN, BK] in shared memory (16-byte chunks, rows padded by 8 elements so a
// warp's fragment loads hit distinct banks), between two barriers, and each
// warp builds its fragments from there, following the PTX ISA "Matrix
// Fragments for mma.m16n8k16 with floating point type" with lane in
// [0, 32), g = lane / 4, t = lane % 4:
//
//   A (row, vector<4x2>): A[g][k0+2t..+1], A[g+8][k0+2t..+1],
//                         A[g][k0+2t+8..+9], A[g+8][k0+2t+8..+9]
//   B (col, vector<2x2>): B_nk[n0+g][k0+2t..+1], B_nk[n0+g][k0+2t+8..+9]
//                         (the "col" operand is B^T row-major, i.e. [N, K])
//   C/D (vector<2x2xf32>): C[g][n0+2t..+1], C[g+8][n0+2t..+1]
//
// Ragged shapes (M % 16, N % 8 or K % 16 nonzero, e.g. an LM head over a
// vocabulary of 50257) run on the same kernel: the grid covers M and N
// rounded up to the block, the k loop K rounded up to BK, and wherever a
// block does not divide its dimension the staging copies load through
// indices clamped into A and B and select zeros for the rows past M or N and
// the columns past K (element by element when K % 8 != 0), and C's loads
// and stores are masked the same way (element by element when N is odd).
// Shapes the blocks divide get none of these checks.
// A run-time M (A and C with `?` rows: batch * sequence) is a ragged M
// whose edge is known at run time only: the full 64-row block, the grid's
// row tiles a ceil-div of A's memref.dim on the host (passed to the kernel
// with it), and the same clamps, zero fills and guards against that size.
// With TMA, A's tensor map views A with its run-time rows: the runtime
// encodes it from the descriptor's sizes and zero-fills rows past M.
//
// On sm_80+ (staging=cp-async, the default) the staging is asynchronous:
// nvgpu.device_async_copy (cp.async.cg of 16 bytes; 8 or 4 bytes, .ca,
// where K only keeps those aligned) into `stages` (2-3) buffers, the copies
// of k step i + stages - 1 in flight while step i computes. Ragged edges
// keep the same clamped source indices and get their zeros from cp.async's
// zero fill (source size 0). Fragments then come from shared memory by
// ldmatrix (x4 for A; x4 for two n8 tiles of B, x2 for a last odd one):
// lane l gives the row address of row l % 8 of 8x8 matrix l / 8 and
// receives, for matrix i, register i of the layout above, so neither
// operand needs .trans (both are K-contiguous). K odd (rows 2 bytes apart,
// too little for cp.async) keeps plain staging; `staging=plain` and
// `ldmatrix=false` keep the code above for older chips.
//
// With `wgmma` (attn-to-cuda sets it for sm_90a) the kernel multiplies with
// warpgroup MMA instead: one warpgroup (4 warps) per block of 64 x 8 NT'
// (NT' = 2 warp-n-tiles), wgmma.mma_async m64n(8 NT')k16 reading A and B
// from shared memory through matrix descriptors. Its accumulator fragment
// gives warp w rows 16w..16w+15 laid out per n8 column block as mma.sync's
// C fragment, so the tiling is 4 x 1 warps of 1 x NT' mma tiles and the
// accumulator loads, epilogue and masked stores are unchanged. The tiles
// are staged by the cp.async pipeline in the no-swizzle K-major
// core-matrix layout [stage][BK / 8][rows][8] (an 8 x 16-byte core matrix
// is 128 contiguous bytes), which needs no swizzle mode and no shared
// memory alignment beyond 16 bytes. Per k step, after the cp.async wait:
// fence.proxy.async (wgmma reads through the async proxy what the generic
// proxy wrote), the barrier, the prefetch, wgmma.fence (the accumulator
// registers were written by ordinary instructions), BK / 16 chained
// wgmma, commit, wait 0 (the accumulators are read back, and the next
// prefetch into this stage must not overwrite in-flight sources). Shapes
// whose operands cannot both be staged by cp.async keep mma.sync.
//
// With `tma` as well (attn-to-cuda sets it with wgmma) the operands that are
// plain row-major matrices are loaded by the Tensor Memory Accelerator
// instead of cp.async: a tensor map per operand encoded on the host
// (nvgpu.tma.create.descriptor, see tmaDescriptor), thread 0 issuing one
// nvgpu.tma.async.load per operand and k step after an arrive.expect_tx on
// the stage's mbarrier, every thread waiting for the stage's phase parity
// where it waited for its cp.async group (see issueTmaLoads and the loop).
//
// Each A fragment serves NT mma and each B fragment MT, and each staged
// element is read by WN (A) or WM (B) warps instead of from global memory.
// The accumulators start from the current C (the generic accumulates into
// C), or from zero when a zero fill of C (or a copy of a zero-filled buffer
// into C) precedes the contraction, which is then dropped: one kernel and
// one pass over C fewer. They are stored back after the k loop. f16 uses
// nvgpu.mma.sync (lowered by convert-nvgpu-to-nvvm); bf16 uses
// nvvm.mma.sync directly, with the same fragments packed into i32
// registers, because convert-nvgpu-to-nvvm in LLVM 22 cannot deduce PTX
// types for bf16 nvgpu.mma.sync.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/IndexArith.h"
#include "attnc/Codegen/GPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "Codegen/Common/MatmulMatch.h"
#include "Codegen/GPU/MmaSync.h"
#include "Codegen/Utils/WidenedOperands.h"

#include "Codegen/GPU/TensorCoreTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUMMAMATMUL
#include "attnc/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

using mlir::attn::narrowOperand;
using mlir::attn::traceWidened;
using mlir::attn::WidenedOperand;

constexpr int64_t kWarpSize = 32;
constexpr int64_t kTileM = mlir::attn::kMmaM, kTileN = mlir::attn::kMmaN,
                  kTileK = mlir::attn::kMmaK;

/// A matched C[m, n] += sum_k A[m, k] * B[n, k] whose operands are widened
/// f16 or bf16 buffers.
struct MmaMatmul {
  mlir::attn::NTMatmul contraction; // the f32 form that was matched
  linalg::GenericOp op;
  WidenedOperand a, b;
  Value c;
  Type elementType; // f16 or bf16
  int64_t m, n, k;
  // Found before any rewrite (each may move or erase ops around others):
  Operation *zeroInit = nullptr; // C's zero fill, folded into the kernel
  linalg::GenericOp epilogue;    // fused into the stores when set
  // Epilogue inputs widened from f16/bf16 (biases): read narrow.
  SmallVector<std::pair<Value, WidenedOperand>, 2> narrowInputs;
  // The result narrowed by a truncf generic: stored narrow.
  std::optional<mlir::attn::NarrowedResult> narrowed;
};

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

/// Whether `v` is known to start at the base of a buffer of its own (a
/// function argument, which the runtime allocates with cuMemAlloc, or an
/// allocation), possibly through reshapes: then an identity-layout element
/// offset is the only misalignment, and pairs at even offsets are aligned
/// to twice the element size.
static bool startsAtAllocation(Value v) {
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

using GemmTiling = mlir::attn::MmaGemmTiling;

/// How a kernel moves its tiles: the cp.async pipeline's depth (0: plain
/// staging, one buffer between two barriers per k step), the elements per
/// cp.async of A and B (0: that operand is staged by plain loads and stores,
/// inside the pipeline when there is one), and whether the fragments come
/// from ldmatrix.
struct Staging {
  int64_t stages = 0;
  int64_t chunkA = 0, chunkB = 0;
  bool ldmatrix = false;
  /// Multiply with wgmma.mma_async from tiles in the no-swizzle core-matrix
  /// layout (needs the cp.async pipeline for both operands).
  bool wgmma = false;
  /// wgmma only: A (B) is loaded by the Tensor Memory Accelerator instead
  /// of cp.async (its chunk is then unused).
  bool tmaA = false, tmaB = false;
  bool tma() const { return tmaA || tmaB; }
  /// Whether any operand is staged by cp.async (the pipeline then carries
  /// cp.async group tokens).
  bool asyncCopies() const { return (chunkA && !tmaA) || (chunkB && !tmaB); }
};

/// Shared memory of `stages` (at least one) buffers of A [BM][BK + 8] and
/// B [BN][BK + 8] of 2-byte elements; for wgmma [BK / 8][BM][8] and
/// [BK / 8][BN][8] (no padding: the core matrices are read whole).
static int64_t gemmSharedBytes(const GemmTiling &t, int64_t stages,
                               bool wgmma = false) {
  return std::max<int64_t>(stages, 1) * 2 * (t.blockM() + t.blockN()) *
         (t.bk + (wgmma ? 0 : mlir::attn::kSmemPad));
}

/// Bytes of one no-swizzle core matrix of wgmma: 8 rows of 16 bytes.
constexpr int64_t kCoreMatrixBytes = 128;

/// The alignment cp.async.bulk.tensor needs of its shared-memory
/// destination (PTX ISA, "Tensor copy restrictions": 128 bytes without
/// swizzle).
constexpr int64_t kTmaSharedAlignment = 128;

/// The suspend-time hint of each mbarrier.try_wait (upstream's sm90
/// integration tests use the same); the lowering retries until the phase
/// completed.
constexpr int64_t kTryWaitTicks = 10000000;

/// Whether the TMA can load `src` ([rows, K] narrow, read at rows of the
/// tile) with the 3-D tensor map of KernelBuilder::tmaDescriptor: a plain
/// row-major matrix (identity layout) at the start of an allocation (the
/// driver wants a 16-byte aligned global address), whose row pitch is a
/// multiple of 16 bytes (K % 8 == 0), with box sizes within 256. The rows
/// may be a run-time size: the tensor map is encoded from the memref's
/// sizes at run time.
static bool tmaLoadable(Value src, int64_t boxRows, int64_t bk) {
  auto type = dyn_cast<MemRefType>(src.getType());
  if (!type || type.getRank() != 2 || type.isDynamicDim(1) ||
      !type.getLayout().isIdentity() || !startsAtAllocation(src))
    return false;
  int64_t k = type.getDimSize(1);
  return k % 8 == 0 && boxRows <= 256 && bk / 8 <= 256 && bk % 8 == 0;
}

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  MmaMatmul &mm;
  Value a, bNk, c; // [M, K], [N, K] narrow; [M, N] f32
  GemmTiling t;
  linalg::GenericOp epilogue; // fused into the stores when set
  bool zeroInit;              // C was zero-filled: start from zero
  Staging staging;
  // Narrow views of the epilogue's widened inputs, keyed by those inputs.
  llvm::DenseMap<Value, Value> narrowInputs;
  // Where the results go narrowed (f16/bf16 [M, N]) instead of f32.
  Value narrowOut;
  // A run-time M: A's rows, read on the host (the grid's ceil-div) and
  // passed to the kernel, where every row access is bounded by it.
  Value rowsM;
  // TMA: the operands' tensor maps (created on the host, before the launch)
  // and the block's mbarriers, one per pipeline stage.
  Value tmaMapA, tmaMapB, mbarriers;

  KernelBuilder(OpBuilder &b, Location loc, MmaMatmul &mm, Value a, Value bNk,
                GemmTiling t, linalg::GenericOp epilogue, bool zeroInit,
                Staging staging)
      : b(b), loc(loc), mm(mm), a(a), bNk(bNk), c(mm.c), t(t),
        epilogue(epilogue), zeroInit(zeroInit), staging(staging) {}

  Value idx(int64_t v) { return attn::IndexArith(b, loc).cst(v); }
  Value add(Value x, Value y) { return attn::IndexArith(b, loc).add(x, y); }
  Value addc(Value x, int64_t v) { return attn::IndexArith(b, loc).add(x, v); }
  Value mul(Value x, int64_t v) { return attn::IndexArith(b, loc).mul(x, v); }

  /// The alignment an access of `bytes` bytes into `memref` may claim (the
  /// kernel's offsets are multiples of it): `bytes` when the buffer starts
  /// at an allocation, whose identity layout leaves only the element
  /// offset; unknown otherwise.
  llvm::MaybeAlign alignFor(Value memref, int64_t bytes) {
    if (!startsAtAllocation(memref))
      return llvm::MaybeAlign();
    return llvm::MaybeAlign(bytes);
  }

  /// Two consecutive elements memref[row][col .. col+1].
  Value loadPair(Value memref, Value row, Value col, llvm::MaybeAlign align) {
    auto type = cast<MemRefType>(memref.getType());
    auto vecType = VectorType::get({2}, type.getElementType());
    return vector::LoadOp::create(b, loc, vecType, memref, ValueRange{row, col},
                                  /*nontemporal=*/false, align);
  }

  Value less(Value x, int64_t limit) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 idx(limit));
  }
  Value both(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value clamp(Value x, int64_t max) {
    return arith::MinSIOp::create(b, loc, x, idx(max));
  }

  /// Whether C's rows (columns) past M (N) must be masked: the blocks do
  /// not divide them (a run-time M is always masked).
  bool maskRows() const { return t.raggedM(mm.m); }
  bool maskCols() const { return t.raggedN(mm.n); }
  /// Whether C's pairs must be accessed element by element: with N odd a
  /// pair may straddle the end of a row, and rows start at odd offsets.
  bool elementwiseC() const { return mm.n % 2 != 0; }

  /// Whether `row` < M, and `row` clamped to M - 1, for a static or
  /// run-time M.
  Value rowInside(Value row) {
    if (!rowsM)
      return less(row, mm.m);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rowsM);
  }
  Value clampRow(Value row) {
    if (!rowsM)
      return clamp(row, mm.m - 1);
    return arith::MinSIOp::create(b, loc, row,
                                  arith::SubIOp::create(b, loc, rowsM, idx(1)));
  }

  /// Whether C[row][col] lies inside C (null: everywhere).
  Value inC(Value row, Value col) {
    return both(maskRows() ? rowInside(row) : Value(),
                maskCols() ? less(col, mm.n) : Value());
  }

  /// C[row][col .. col+1] where inside C, zeros elsewhere: loads at indices
  /// clamped into C.
  Value loadCPair(Value row, Value col, llvm::MaybeAlign align) {
    if (!maskRows() && !maskCols())
      return loadPair(c, row, col, align);
    Value r = maskRows() ? clampRow(row) : row;
    auto pairType = VectorType::get({2}, b.getF32Type());
    if (!elementwiseC()) {
      // N even, col even: the pair lies inside or outside as a whole.
      Value pair =
          loadPair(c, r, maskCols() ? clamp(col, mm.n - 2) : col, align);
      return arith::SelectOp::create(
          b, loc, inC(row, col), pair,
          arith::ConstantOp::create(b, loc, pairType, b.getZeroAttr(pairType)));
    }
    SmallVector<Value> elems;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    for (int64_t e = 0; e < 2; ++e) {
      Value ce = addc(col, e);
      Value v = memref::LoadOp::create(
          b, loc, c, ValueRange{r, maskCols() ? clamp(ce, mm.n - 1) : ce});
      elems.push_back(arith::SelectOp::create(b, loc, inC(row, ce), v, zero));
    }
    return vector::FromElementsOp::create(b, loc, pairType, elems);
  }

  /// Runs `body` under `cond` (unconditionally when null).
  void guarded(Value cond, function_ref<void()> body) {
    if (!cond)
      return body();
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }

  /// The tensor map (on the host, before the launch) through which the TMA
  /// loads the [BK / 8][rows][8] core-matrix tiles of `src` ([R, K], plain
  /// row-major): `src` viewed as [K / 8][R][8] with strides [8, K, 1]
  /// (expand_shape + transpose, so the encode call receives dims 8, R,
  /// K / 8 and byte strides 2K, 16, innermost first), box [BK / 8, rows, 8].
  /// A box then lands in shared memory in exactly the no-swizzle core-matrix
  /// layout the wgmma descriptors describe, so neither the descriptors nor
  /// the staging layout change, and no swizzle needs modelling: simpler
  /// than the 128-byte swizzle, at the price of the bank conflicts the
  /// cp.async staging has too. Boxes reaching past R or K are zero-filled
  /// by the TMA unit (oob = zero), which zeroes ragged edges. A run-time R
  /// (A's rows) stays dynamic in the view: the runtime encodes the map from
  /// the descriptor's sizes (a new size, a new map).
  Value tmaDescriptor(Value src, int64_t rows) {
    MLIRContext *ctx = b.getContext();
    auto type = cast<MemRefType>(src.getType());
    int64_t r = type.getDimSize(0), k = type.getDimSize(1);
    Type elem = type.getElementType();
    auto chunkedType = MemRefType::get({r, k / 8, 8}, elem);
    SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
    Value chunked =
        ShapedType::isDynamic(r)
            ? memref::ExpandShapeOp::create(
                  b, loc, chunkedType, src, groups,
                  ArrayRef<OpFoldResult>{
                      memref::DimOp::create(b, loc, src, 0).getResult(),
                      b.getIndexAttr(k / 8), b.getIndexAttr(8)})
            : memref::ExpandShapeOp::create(b, loc, chunkedType, src, groups);
    Value kMajor = memref::TransposeOp::create(
        b, loc, chunked,
        AffineMapAttr::get(
            AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0, 2}, ctx)));
    Value unranked = memref::CastOp::create(
        b, loc, UnrankedMemRefType::get(elem, type.getMemorySpace()), kMajor);
    auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto boxType = MemRefType::get({t.bk / 8, rows, 8}, elem,
                                   MemRefLayoutAttrInterface(), space);
    auto mapType = nvgpu::TensorMapDescriptorType::get(
        ctx, boxType, nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE,
        nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
    return nvgpu::TmaCreateDescriptorOp::create(
        b, loc, mapType, unranked,
        ValueRange{idx(t.bk / 8), idx(rows), idx(8)});
  }

  /// Thread 0 (`leader`) starts the TMA loads of the k step at `k0` into
  /// pipeline stage `stage`: arrive.expect_tx on the stage's mbarrier with
  /// the bytes of every box (the only arrival the barrier expects; its
  /// phase completes when those bytes have landed), then one
  /// cp.async.bulk.tensor per TMA operand at coordinates (innermost first)
  /// 0, the tile's first row, its first k chunk.
  void issueTmaLoads(Value leader, Value k0, Value stage, Value aSmem,
                     Value bSmem, Value blockRow, Value blockCol) {
    int64_t bytes = 0;
    if (staging.tmaA)
      bytes += t.bk * t.blockM() * 2;
    if (staging.tmaB)
      bytes += t.bk * t.blockN() * 2;
    guarded(leader, [&] {
      nvgpu::MBarrierArriveExpectTxOp::create(b, loc, mbarriers, idx(bytes),
                                              stage, Value());
      Value kChunk = arith::DivUIOp::create(b, loc, k0, idx(8));
      auto load = [&](Value map, Value smem, int64_t rows, Value row0) {
        SmallVector<OpFoldResult> offsets = {
            stage, b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {
            b.getIndexAttr(1), b.getIndexAttr(t.bk / 8), b.getIndexAttr(rows),
            b.getIndexAttr(8)};
        SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
        auto dstType = memref::SubViewOp::inferRankReducedResultType(
            {t.bk / 8, rows, 8}, cast<MemRefType>(smem.getType()), offsets,
            sizes, strides);
        Value dst = memref::SubViewOp::create(b, loc, dstType, smem, offsets,
                                              sizes, strides);
        nvgpu::TmaAsyncLoadOp::create(b, loc, dst, mbarriers, map,
                                      ValueRange{idx(0), row0, kChunk}, stage,
                                      Value(), Value());
      };
      if (staging.tmaA)
        load(tmaMapA, aSmem, t.blockM(), blockRow);
      if (staging.tmaB)
        load(tmaMapB, bSmem, t.blockN(), blockCol);
    });
  }

  /// The wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format") of
  /// the k16 slice `kk` of a [BK / 8][rows][8] tile in pipeline stage
  /// `stage` whose buffer starts at shared address `base` (i64): start
  /// address >> 4 in bits 0-13, the leading dimension byte offset (between
  /// core matrices adjacent in K: one [rows][8] plane) >> 4 in bits 16-29,
  /// the stride dimension byte offset (between core matrices adjacent in M
  /// or N: 128 bytes) >> 4 in bits 32-45, base offset 0 and swizzle mode 0
  /// (none) in bits 49-51 and 62-63.
  Value descriptor(Value base, Value stage, int64_t rows, int64_t kk) {
    int64_t plane = rows * 8 * 2; // bytes of one [rows][8] k chunk
    Value stageBytes = arith::MulIOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), stage),
        i64(t.bk / 8 * plane));
    Value addr = arith::AddIOp::create(b, loc, base, stageBytes);
    if (kk)
      addr = arith::AddIOp::create(b, loc, addr, i64(2 * kk * plane));
    Value start = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, addr, i64(4)), i64(0x3FFF));
    int64_t offsets = (plane >> 4) << 16 | (kCoreMatrixBytes >> 4) << 32;
    return arith::OrIOp::create(b, loc, start, i64(offsets));
  }

  /// One k step on the warpgroup: wgmma.fence (the accumulators were
  /// written by other instructions since the last wgmma), BK / 16
  /// m64n(BN)k16 with f32 accumulation chained on the same registers,
  /// commit, and a wait for the group (the registers are read back as
  /// mma.sync accumulators, and the next step's copies overwrite this
  /// stage). The accumulator struct is the 4 nt registers of the ISA's
  /// fragment: d[4 j + 2 h + e] = C[16 w + g + 8 h][8 j + 2 t + e], which
  /// is row h, element e of mma tile j's vector<2x2xf32>.
  SmallVector<Value> multiplyWgmma(Value stage, Value aBase, Value bBase,
                                   SmallVector<Value> accs) {
    Type f32 = b.getF32Type();
    auto structType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4 * t.nt, f32));
    Value regs = LLVM::PoisonOp::create(b, loc, structType);
    for (int64_t j = 0; j < t.nt; ++j)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e)
          regs = LLVM::InsertValueOp::create(
              b, loc, regs,
              vector::ExtractOp::create(b, loc, accs[j],
                                        ArrayRef<int64_t>{h, e}),
              ArrayRef<int64_t>{4 * j + 2 * h + e});
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    auto type =
        mm.elementType.isF16() ? NVVM::WGMMATypes::f16 : NVVM::WGMMATypes::bf16;
    auto shape =
        NVVM::MMAShapeAttr::get(b.getContext(), t.blockM(), t.blockN(), kTileK);
    for (int64_t kk = 0; kk < t.bk / kTileK; ++kk) {
      // Separate statements: A's descriptor is emitted first.
      Value descA = descriptor(aBase, stage, t.blockM(), kk);
      Value descB = descriptor(bBase, stage, t.blockN(), kk);
      regs = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, structType, regs, descA, descB, shape, type, type,
          NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          // A [M][K] and B [N][K] are both K-major (no transpose).
          NVVM::MMALayout::row, NVVM::MMALayout::col,
          NVVM::MMAIntOverflowAttr());
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
    auto accType = VectorType::get({2, 2}, f32);
    for (int64_t j = 0; j < t.nt; ++j) {
      SmallVector<Value> d;
      for (int64_t r = 0; r < 4; ++r)
        d.push_back(LLVM::ExtractValueOp::create(b, loc, regs,
                                                 ArrayRef<int64_t>{4 * j + r}));
      accs[j] = vector::FromElementsOp::create(b, loc, accType, d);
    }
    return accs;
  }

  void emit() {
    using mlir::attn::buildFragment;
    using mlir::attn::buildMmaSync;
    using mlir::attn::kSmemPad;
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    // One buffer per pipeline stage (a leading stage index), or the one
    // buffer of plain staging.
    auto smemShape = [&](int64_t rows) {
      SmallVector<int64_t> shape;
      if (staging.stages)
        shape.push_back(staging.stages);
      if (staging.wgmma)
        shape.append({t.bk / 8, rows, 8});
      else
        shape.append({rows, t.bk + kSmemPad});
      return shape;
    };
    auto aSmemType = MemRefType::get(smemShape(t.blockM()), mm.elementType,
                                     MemRefLayoutAttrInterface(), space);
    auto bSmemType = MemRefType::get(smemShape(t.blockN()), mm.elementType,
                                     MemRefLayoutAttrInterface(), space);
    // The tensor maps are encoded on the host (cuTensorMapEncodeTiled
    // through the runtime's mgpuTensorMapEncodeTiledMemref) and passed to
    // the kernel.
    if (staging.tmaA)
      tmaMapA = tmaDescriptor(a, t.blockM());
    if (staging.tmaB)
      tmaMapB = tmaDescriptor(bNk, t.blockN());
    Value one = idx(1);
    Value gridX = idx(llvm::divideCeil(mm.n, t.blockN()));
    Value gridY;
    if (ShapedType::isDynamic(mm.m)) {
      // The row tiles of a run-time M: a ceil-div on the host.
      rowsM = memref::DimOp::create(b, loc, a, 0);
      attn::IndexArith ix(b, loc);
      gridY = ix.divu(ix.add(rowsM, t.blockM() - 1), t.blockM());
    } else {
      gridY = idx(llvm::divideCeil(mm.m, t.blockM()));
    }
    auto launch = gpu::LaunchOp::create(b, loc, gridX, gridY, one,
                                        idx(t.threads()), one, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    // Shared memory as workgroup allocas, like attn-gpu-flash-attention;
    // attn-gpu-device-buffers makes them attributions of the launch.
    // TMA destinations must be 128-byte aligned (the stage and k-chunk
    // strides are multiples of 128 bytes: rows is a multiple of 8).
    IntegerAttr smemAlign;
    if (staging.tma())
      smemAlign = b.getI64IntegerAttr(kTmaSharedAlignment);
    Value aSmem = memref::AllocaOp::create(b, loc, aSmemType, smemAlign);
    Value bSmem = memref::AllocaOp::create(b, loc, bSmemType, smemAlign);

    Value tid = launch.getThreadIds().x;
    // TMA: one mbarrier per stage, initialized by thread 0 for one arrival
    // (its arrive.expect_tx); the barrier publishes the initialization to
    // the other threads' waits (one CTA, no cluster: no
    // fence.mbarrier_init needed).
    Value leader;
    if (staging.tma()) {
      leader =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
      auto groupType = nvgpu::MBarrierGroupType::get(
          b.getContext(), space, /*numBarriers=*/staging.stages);
      mbarriers = nvgpu::MBarrierCreateOp::create(b, loc, groupType);
      guarded(leader, [&] {
        for (int64_t s = 0; s < staging.stages; ++s)
          nvgpu::MBarrierInitOp::create(b, loc, mbarriers, idx(1), idx(s),
                                        Value());
      });
      gpu::BarrierOp::create(b, loc);
    }
    Value lane = arith::RemUIOp::create(b, loc, tid, idx(kWarpSize));
    Value warp = arith::DivUIOp::create(b, loc, tid, idx(kWarpSize));
    Value warpRow = arith::DivUIOp::create(b, loc, warp, idx(t.wn));
    Value warpCol = arith::RemUIOp::create(b, loc, warp, idx(t.wn));
    Value g = arith::DivUIOp::create(b, loc, lane, idx(4));
    Value t2 = mul(arith::RemUIOp::create(b, loc, lane, idx(4)), 2);
    Value blockRow = mul(launch.getBlockIds().y, t.blockM());
    Value blockCol = mul(launch.getBlockIds().x, t.blockN());
    // This warp's rows and columns inside the block tile (shared memory)
    // and in C.
    Value localRow = add(mul(warpRow, kTileM * t.mt), g);
    Value localCol = add(mul(warpCol, kTileN * t.nt), g);
    Value cRow = add(blockRow, localRow);
    Value cCol = add(add(blockCol, mul(warpCol, kTileN * t.nt)), t2);

    // Accumulators: C[row + 16i (+8)][col + 8j ..] for mma tile (i, j),
    // starting from C (the generic accumulates into it), or from zero when
    // C was just zero-filled (the fill, a kernel of its own, then goes).
    auto cAlign = alignFor(c, 8);
    SmallVector<Value> init;
    auto accType = VectorType::get({2, 2}, b.getF32Type());
    for (int64_t i = 0; i < t.mt; ++i)
      for (int64_t j = 0; j < t.nt; ++j) {
        Value r = addc(cRow, kTileM * i), col = addc(cCol, kTileN * j);
        init.push_back(
            zeroInit ? arith::ConstantOp::create(b, loc, accType,
                                                 b.getZeroAttr(accType))
                           .getResult()
                     : buildFragment(b, loc,
                                     {loadCPair(r, col, cAlign),
                                      loadCPair(addc(r, 8), col, cAlign)}));
      }

    // Fragment rows this lane's address names for ldmatrix (PTX: lane l
    // gives row l % 8 of matrix l / 8). A (x4): matrices (rows 0-7, k 0-7),
    // (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15), i.e. the
    // A fragment's registers a0a1, a2a3, a4a5, a6a7. B (x4 for n8 tiles j
    // and j + 1): (j, k 0-7), (j, k 8-15), (j + 1, k 0-7), (j + 1, k 8-15),
    // i.e. b0b1, b2b3 of both tiles; x2 for a last odd tile. B is stored
    // [N][K] (the "col" operand is B^T row-major), so neither needs .trans.
    Value ldA, ldACol, ldB, ldBX2, ldBCol;
    if (staging.ldmatrix) {
      Value warpRowBase = mul(warpRow, kTileM * t.mt);
      Value warpColBase = mul(warpCol, kTileN * t.nt);
      Value lane8 = arith::RemUIOp::create(b, loc, lane, idx(8));
      Value lane16 = arith::DivUIOp::create(b, loc, lane, idx(16));
      ldA = add(warpRowBase, arith::RemUIOp::create(b, loc, lane, idx(16)));
      ldACol = mul(lane16, 8);
      ldBX2 = add(warpColBase, lane8);
      ldB = add(ldBX2, mul(lane16, 8));
      ldBCol =
          mul(arith::RemUIOp::create(
                  b, loc, arith::DivUIOp::create(b, loc, lane, idx(8)), idx(2)),
              8);
    }

    // Edge tiles: A rows past M, B rows past N and columns past K are
    // staged as zeros (the K padding must be zero in both operands, the
    // others only keep the discarded results finite).
    int64_t kLimit = t.raggedK(mm.k) ? mm.k : 0;
    int64_t rowLimitA = !rowsM && t.raggedM(mm.m) ? mm.m : 0;
    int64_t rowLimitB = t.raggedN(mm.n) ? mm.n : 0;
    // Stages the k step at `k0` into buffer `stage` (null: plain staging's
    // one buffer); returns the tokens of its asynchronous copies.
    auto stageTiles = [&](Value k0, Value stage) {
      SmallVector<Value> tokens, prefix;
      if (stage)
        prefix.push_back(stage);
      auto one = [&](Value src, Value row0, int64_t rows, Value dst,
                     int64_t chunk, int64_t rowLimit, Value dynamicRowLimit) {
        if (chunk) {
          llvm::append_range(
              tokens, mlir::attn::buildSharedTileAsyncCopy(
                          b, loc, src, {}, row0, k0, rows, t.bk, dst, prefix,
                          tid, t.threads(), chunk, rowLimit, kLimit,
                          /*coreMatrices=*/staging.wgmma, dynamicRowLimit));
          return;
        }
        mlir::attn::buildSharedTileCopy(
            b, loc, src, {}, row0, k0, rows, t.bk, dst, /*transpose=*/false,
            tid, t.threads(), alignFor(src, 16), rowLimit, kLimit, prefix,
            dynamicRowLimit);
      };
      if (!staging.tmaA)
        one(a, blockRow, t.blockM(), aSmem, staging.chunkA, rowLimitA, rowsM);
      if (!staging.tmaB)
        one(bNk, blockCol, t.blockN(), bSmem, staging.chunkB, rowLimitB,
            Value());
      return tokens;
    };

    // wgmma reads its operands from shared memory through matrix
    // descriptors holding shared-state-space addresses: the tiles' bases.
    Value aBase, bBase;
    if (staging.wgmma) {
      auto base = [&](Value smem) -> Value {
        Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
        return arith::IndexCastOp::create(b, loc, b.getI64Type(), p);
      };
      aBase = base(aSmem);
      bBase = base(bSmem);
    }

    // One k step's mma from the tiles in buffer `stage`.
    auto multiply = [&](Value stage, SmallVector<Value> accs) {
      if (staging.wgmma)
        return multiplyWgmma(stage, aBase, bBase, accs);
      auto at = [&](Value row, Value col) {
        SmallVector<Value> indices;
        if (stage)
          indices.push_back(stage);
        indices.append({row, col});
        return indices;
      };
      llvm::MaybeAlign smemAlign(4);
      for (int64_t kk = 0; kk < t.bk / kTileK; ++kk) {
        SmallVector<Value> aFrags, bFrags;
        if (staging.ldmatrix) {
          for (int64_t i = 0; i < t.mt; ++i)
            aFrags.push_back(mlir::attn::buildLdMatrix(
                b, loc, aSmem,
                at(addc(ldA, kTileM * i), addc(ldACol, kTileK * kk)), 4,
                /*transpose=*/false));
          for (int64_t j = 0; j < t.nt; j += 2) {
            Value col = addc(ldBCol, kTileK * kk);
            if (j + 1 == t.nt) {
              bFrags.push_back(mlir::attn::buildLdMatrix(
                  b, loc, bSmem, at(addc(ldBX2, kTileN * j), col), 2,
                  /*transpose=*/false));
              continue;
            }
            Value both = mlir::attn::buildLdMatrix(
                b, loc, bSmem, at(addc(ldB, kTileN * j), col), 4,
                /*transpose=*/false);
            bFrags.push_back(mlir::attn::fragmentRows(b, loc, both, 0, 2));
            bFrags.push_back(mlir::attn::fragmentRows(b, loc, both, 2, 2));
          }
        } else {
          Value lo = addc(t2, kTileK * kk), hi = addc(lo, 8);
          auto pair = [&](Value mem, Value row, Value col) {
            auto type = cast<MemRefType>(mem.getType());
            return vector::LoadOp::create(
                b, loc, VectorType::get({2}, type.getElementType()), mem,
                at(row, col), /*nontemporal=*/false, smemAlign);
          };
          for (int64_t i = 0; i < t.mt; ++i) {
            Value r = addc(localRow, kTileM * i), r8 = addc(r, 8);
            aFrags.push_back(
                buildFragment(b, loc,
                              {pair(aSmem, r, lo), pair(aSmem, r8, lo),
                               pair(aSmem, r, hi), pair(aSmem, r8, hi)}));
          }
          for (int64_t j = 0; j < t.nt; ++j) {
            Value r = addc(localCol, kTileN * j);
            bFrags.push_back(buildFragment(
                b, loc, {pair(bSmem, r, lo), pair(bSmem, r, hi)}));
          }
        }
        for (int64_t i = 0; i < t.mt; ++i)
          for (int64_t j = 0; j < t.nt; ++j)
            accs[i * t.nt + j] =
                buildMmaSync(b, loc, aFrags[i], bFrags[j], accs[i * t.nt + j]);
      }
      return accs;
    };

    // Ragged K: the last step's columns past K are staged as zeros.
    int64_t kSteps = llvm::divideCeil(mm.k, t.bk);
    int64_t nAcc = init.size();
    auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    int64_t stages = staging.stages;
    // The cp.async pipeline (CUTLASS's multistage): the groups of the first
    // stages - 1 k steps are committed up front, and the loop carries the
    // tokens of the groups still to be waited for, oldest first. Step i
    // waits until its own group has landed for this thread (the groups of
    // the steps after it, at most stages - 2, may stay pending), then one
    // barrier makes every thread's copies visible and ensures everybody
    // finished step i - 1, whose buffer (i + stages - 1) % stages the copies
    // of step i + stages - 1 then reuse. Steps past the last commit nothing
    // (an empty commit would not survive a round trip through the custom
    // assembly format); their place in the token ring holds a token that no
    // wait will use.
    // TMA operands join the same pipeline: thread 0 issues the loads of
    // a step where the cp.async copies of the others are issued, and step i
    // waits for phase i / stages (parity) of its stage's mbarrier as well.
    // Without cp.async operands the loop carries no tokens.
    bool asyncCopies = stages && staging.asyncCopies();
    auto issueTma = [&](Value k0, Value stage) {
      if (staging.tma())
        issueTmaLoads(leader, k0, stage, aSmem, bSmem, blockRow, blockCol);
    };
    if (stages) {
      for (int64_t s = 0; s + 1 < stages; ++s) {
        if (s >= kSteps) {
          if (asyncCopies)
            init.push_back(init[nAcc]);
          continue;
        }
        issueTma(idx(s * t.bk), idx(s));
        SmallVector<Value> tokens = stageTiles(idx(s * t.bk), idx(s));
        if (asyncCopies)
          init.push_back(nvgpu::DeviceAsyncCreateGroupOp::create(
              b, loc, tokenType, tokens));
      }
    }
    auto loop =
        scf::ForOp::create(b, loc, idx(0), idx(kSteps * t.bk), idx(t.bk), init);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value k0 = loop.getInductionVar();
      ValueRange iterArgs = loop.getRegionIterArgs();
      SmallVector<Value> accs(iterArgs.take_front(nAcc));
      if (!stages) {
        // The previous step's fragment loads are done before the tiles are
        // overwritten, and the new tiles are complete before they are read.
        gpu::BarrierOp::create(b, loc);
        stageTiles(k0, Value());
        gpu::BarrierOp::create(b, loc);
        scf::YieldOp::create(b, loc, multiply(Value(), accs));
      } else {
        SmallVector<Value> groups(iterArgs.drop_front(nAcc));
        Value step = arith::DivUIOp::create(b, loc, k0, idx(t.bk));
        // Steps after this one; only deeper pipelines wait on fewer groups
        // near the end.
        if (asyncCopies) {
          Value remaining;
          if (stages > 2)
            remaining = arith::SubIOp::create(b, loc, idx(kSteps - 1), step);
          mlir::attn::buildPipelineWait(b, loc, groups.front(), remaining,
                                        stages);
        }
        // The TMA boxes of step i landed once the phase of use i / stages
        // of its stage's mbarrier completed (the parity of that use; the
        // tick count only bounds each suspended try).
        if (staging.tma()) {
          Value use = arith::DivUIOp::create(b, loc, step, idx(stages));
          Value parity = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ne,
              arith::RemUIOp::create(b, loc, use, idx(2)), idx(0));
          Value waitStage = arith::RemUIOp::create(b, loc, step, idx(stages));
          nvgpu::MBarrierTryWaitParityOp::create(b, loc, mbarriers, parity,
                                                 idx(kTryWaitTicks), waitStage);
        }
        // wgmma reads shared memory through the async proxy: this thread's
        // landed copies (generic proxy) are ordered before it by a proxy
        // fence, and before the other threads' wgmma by the barrier. TMA
        // writes through the async proxy itself: no fence.
        if (staging.wgmma && asyncCopies)
          NVVM::FenceProxyOp::create(
              b, loc, NVVM::ProxyKind::async_shared,
              NVVM::SharedSpaceAttr::get(b.getContext(),
                                         NVVM::SharedSpace::shared_cta));
        gpu::BarrierOp::create(b, loc);
        Value kNext = addc(k0, (stages - 1) * t.bk);
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           kNext, idx(kSteps * t.bk));
        auto prefetch = scf::IfOp::create(
            b, loc, asyncCopies ? TypeRange{tokenType} : TypeRange{}, more,
            /*withElseRegion=*/asyncCopies);
        {
          OpBuilder::InsertionGuard branch(b);
          b.setInsertionPointToStart(prefetch.thenBlock());
          Value next = arith::RemUIOp::create(b, loc, addc(step, stages - 1),
                                              idx(stages));
          issueTma(kNext, next);
          SmallVector<Value> tokens = stageTiles(kNext, next);
          if (asyncCopies) {
            scf::YieldOp::create(b, loc,
                                 nvgpu::DeviceAsyncCreateGroupOp::create(
                                     b, loc, tokenType, tokens)
                                     .getResult());
            b.setInsertionPointToStart(prefetch.elseBlock());
            scf::YieldOp::create(b, loc, groups.front());
          }
        }
        Value stage = arith::RemUIOp::create(b, loc, step, idx(stages));
        SmallVector<Value> next = multiply(stage, accs);
        if (asyncCopies) {
          llvm::append_range(next, llvm::drop_begin(groups));
          next.push_back(prefetch.getResult(0));
        }
        scf::YieldOp::create(b, loc, next);
      }
    }

    // Results: C, or the epilogue's output computed from them in registers;
    // narrowed when what they replace was only read narrowed.
    Value out = epilogue ? epilogue.getDpsInits()[0] : c;
    auto outAlign = alignFor(out, 8);
    if (narrowOut) {
      out = narrowOut;
      outAlign = alignFor(out, 4);
    }
    auto narrowed = [&](Value v) -> Value {
      if (!narrowOut)
        return v;
      Type type = mm.elementType;
      if (auto vec = dyn_cast<VectorType>(v.getType()))
        type = VectorType::get(vec.getShape(), type);
      return arith::TruncFOp::create(b, loc, type, v);
    };
    for (int64_t i = 0; i < t.mt; ++i)
      for (int64_t j = 0; j < t.nt; ++j) {
        Value acc = loop.getResult(i * t.nt + j);
        Value r = addc(cRow, kTileM * i), col = addc(cCol, kTileN * j);
        for (int64_t h = 0; h < 2; ++h) {
          Value row = h ? addc(r, 8) : r;
          Value pair =
              vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{h});
          auto element = [&](int64_t e) -> Value {
            Value v =
                vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{e});
            if (!epilogue)
              return v;
            return mlir::attn::buildEpilogueValue(b, loc, epilogue, c, v, row,
                                                  addc(col, e), &narrowInputs);
          };
          if (elementwiseC() && (maskRows() || maskCols())) {
            // N odd: each element on its own, where it lies inside C.
            for (int64_t e = 0; e < 2; ++e) {
              Value ce = addc(col, e);
              guarded(inC(row, ce), [&] {
                memref::StoreOp::create(b, loc, narrowed(element(e)), out,
                                        ValueRange{row, ce});
              });
            }
            continue;
          }
          // Edge blocks store the pairs inside C (a pair at an even column
          // of an even N lies inside or outside as a whole).
          guarded(inC(row, col), [&] {
            Value v = pair;
            if (epilogue)
              v = vector::FromElementsOp::create(
                  b, loc, VectorType::get({2}, b.getF32Type()),
                  ValueRange{element(0), element(1)});
            vector::StoreOp::create(b, loc, narrowed(v), out,
                                    ValueRange{row, col},
                                    /*nontemporal=*/false, outAlign);
          });
        }
      }
    gpu::TerminatorOp::create(b, loc);
  }
};

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
    if (staging != "cp-async" && staging != "plain") {
      getOperation().emitError("attn-gpu-mma-matmul: staging must be "
                               "cp-async or plain, not '")
          << staging << "'";
      return signalPassFailure();
    }
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
