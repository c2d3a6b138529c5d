//===- GpuMmaMatmulWgmma.cpp - wgmma and TMA in attn-gpu-mma-matmul -------===//
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
// where it waited for its cp.async group (see issueTmaLoads and waitTmaLoads).
//
//===----------------------------------------------------------------------===//

#include "Codegen/GPU/GpuMmaMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::mma_matmul;

/// Bytes of one no-swizzle core matrix of wgmma: 8 rows of 16 bytes.
constexpr int64_t kCoreMatrixBytes = 128;

/// The suspend-time hint of each mbarrier.try_wait (upstream's sm90
/// integration tests use the same); the lowering retries until the phase
/// completed.
constexpr int64_t kTryWaitTicks = 10000000;

bool mlir::attn::mma_matmul::tmaLoadable(Value src, int64_t boxRows,
                                         int64_t bk) {
  auto type = dyn_cast<MemRefType>(src.getType());
  if (!type || type.getRank() != 2 || type.isDynamicDim(1) ||
      !type.getLayout().isIdentity() || !startsAtAllocation(src))
    return false;
  int64_t k = type.getDimSize(1);
  return k % 8 == 0 && boxRows <= 256 && bk / 8 <= 256 && bk % 8 == 0;
}

Value KernelBuilder::i64(int64_t v) {
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
Value KernelBuilder::tmaDescriptor(Value src, int64_t rows) {
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
      b, loc, mapType, unranked, ValueRange{idx(t.bk / 8), idx(rows), idx(8)});
}

void KernelBuilder::createTensorMaps() {
  // The tensor maps are encoded on the host (cuTensorMapEncodeTiled
  // through the runtime's mgpuTensorMapEncodeTiledMemref) and passed to
  // the kernel.
  if (staging.tmaA)
    tmaMapA = tmaDescriptor(a, t.blockM());
  if (staging.tmaB)
    tmaMapB = tmaDescriptor(bNk, t.blockN());
}

void KernelBuilder::initTmaBarriers() {
  // One mbarrier per stage, initialized by thread 0 for one arrival (its
  // arrive.expect_tx); the barrier publishes the initialization to the
  // other threads' waits (one CTA, no cluster: no fence.mbarrier_init
  // needed).
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
  auto groupType = nvgpu::MBarrierGroupType::get(
      b.getContext(), space, /*numBarriers=*/staging.stages);
  mbarriers = nvgpu::MBarrierCreateOp::create(b, loc, groupType);
  guarded(leader, [&] {
    for (int64_t s = 0; s < staging.stages; ++s)
      nvgpu::MBarrierInitOp::create(b, loc, mbarriers, idx(1), idx(s), Value());
  });
  gpu::BarrierOp::create(b, loc);
}

/// Thread 0 (`leader`) starts the TMA loads of the k step at `k0` into
/// pipeline stage `stage`: arrive.expect_tx on the stage's mbarrier with
/// the bytes of every box (the only arrival the barrier expects; its
/// phase completes when those bytes have landed), then one
/// cp.async.bulk.tensor per TMA operand at coordinates (innermost first)
/// 0, the tile's first row, its first k chunk.
void KernelBuilder::issueTmaLoads(Value k0, Value stage) {
  if (!staging.tma())
    return;
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
          {t.bk / 8, rows, 8}, cast<MemRefType>(smem.getType()), offsets, sizes,
          strides);
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

void KernelBuilder::waitTmaLoads(Value step, int64_t stages) {
  // The TMA boxes of step i landed once the phase of use i / stages of its
  // stage's mbarrier completed (the parity of that use; the tick count only
  // bounds each suspended try).
  Value use = arith::DivUIOp::create(b, loc, step, idx(stages));
  Value parity = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::RemUIOp::create(b, loc, use, idx(2)), idx(0));
  Value waitStage = arith::RemUIOp::create(b, loc, step, idx(stages));
  nvgpu::MBarrierTryWaitParityOp::create(b, loc, mbarriers, parity,
                                         idx(kTryWaitTicks), waitStage);
}

void KernelBuilder::fenceAsyncProxy() {
  // wgmma reads shared memory through the async proxy: this thread's
  // landed copies (generic proxy) are ordered before it by a proxy fence,
  // and before the other threads' wgmma by the barrier that follows. TMA
  // writes through the async proxy itself: no fence.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void KernelBuilder::computeWgmmaBases() {
  // wgmma reads its operands from shared memory through matrix
  // descriptors holding shared-state-space addresses: the tiles' bases.
  auto base = [&](Value smem) -> Value {
    Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), p);
  };
  aBase = base(aSmem);
  bBase = base(bSmem);
}

/// The wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format") of
/// the k16 slice `kk` of a [BK / 8][rows][8] tile in pipeline stage
/// `stage` whose buffer starts at shared address `base` (i64): start
/// address >> 4 in bits 0-13, the leading dimension byte offset (between
/// core matrices adjacent in K: one [rows][8] plane) >> 4 in bits 16-29,
/// the stride dimension byte offset (between core matrices adjacent in M
/// or N: 128 bytes) >> 4 in bits 32-45, base offset 0 and swizzle mode 0
/// (none) in bits 49-51 and 62-63.
Value KernelBuilder::descriptor(Value base, Value stage, int64_t rows,
                                int64_t kk) {
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
SmallVector<Value> KernelBuilder::multiplyWgmma(Value stage,
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
            vector::ExtractOp::create(b, loc, accs[j], ArrayRef<int64_t>{h, e}),
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
        NVVM::MMALayout::row, NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
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
