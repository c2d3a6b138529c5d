//===- GpuMmaMatmulKernel.cpp - attn-gpu-mma-matmul's kernel --------------===//
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
// The wgmma and TMA parts (sm_90a) are in GpuMmaMatmulWgmma.cpp.
//
//===----------------------------------------------------------------------===//

#include "Codegen/GPU/GpuMmaMatmul.h"
#include "Codegen/GPU/MmaSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::mma_matmul;

void KernelBuilder::emit() {
  createTensorMaps();
  gpu::LaunchOp launch = createLaunch();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  allocateSharedTiles();
  tid = launch.getThreadIds().x;
  if (staging.tma())
    initTmaBarriers();
  computeThreadIndices(launch);
  SmallVector<Value> init = loadAccumulators();
  if (staging.ldmatrix)
    computeLdMatrixRows();
  if (staging.wgmma)
    computeWgmmaBases();
  scf::ForOp loop = emitKLoop(std::move(init));
  storeResults(loop);
  gpu::TerminatorOp::create(b, loc);
}

gpu::LaunchOp KernelBuilder::createLaunch() {
  Value one = idx(1);
  Value gridX = idx(llvm::divideCeil(mm.n, t.blockN()));
  Value gridY;
  if (ShapedType::isDynamic(mm.m)) {
    // The row tiles of a run-time M: a ceil-div on the host.
    rowsM = memref::DimOp::create(b, loc, a, 0);
    IndexArith ix(b, loc);
    gridY = ix.divu(ix.add(rowsM, t.blockM() - 1), t.blockM());
  } else {
    gridY = idx(llvm::divideCeil(mm.m, t.blockM()));
  }
  return gpu::LaunchOp::create(b, loc, gridX, gridY, one, idx(t.threads()), one,
                               one);
}

void KernelBuilder::allocateSharedTiles() {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
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
  // Shared memory as workgroup allocas, like attn-gpu-flash-attention;
  // attn-gpu-device-buffers makes them attributions of the launch.
  // TMA destinations must be 128-byte aligned (the stage and k-chunk
  // strides are multiples of 128 bytes: rows is a multiple of 8).
  IntegerAttr smemAlign;
  if (staging.tma())
    smemAlign = b.getI64IntegerAttr(kTmaSharedAlignment);
  aSmem = memref::AllocaOp::create(b, loc, aSmemType, smemAlign);
  bSmem = memref::AllocaOp::create(b, loc, bSmemType, smemAlign);
}

void KernelBuilder::computeThreadIndices(gpu::LaunchOp launch) {
  lane = arith::RemUIOp::create(b, loc, tid, idx(kWarpSize));
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(kWarpSize));
  warpRow = arith::DivUIOp::create(b, loc, warp, idx(t.wn));
  warpCol = arith::RemUIOp::create(b, loc, warp, idx(t.wn));
  g = arith::DivUIOp::create(b, loc, lane, idx(4));
  t2 = mul(arith::RemUIOp::create(b, loc, lane, idx(4)), 2);
  blockRow = mul(launch.getBlockIds().y, t.blockM());
  blockCol = mul(launch.getBlockIds().x, t.blockN());
  localRow = add(mul(warpRow, kTileM * t.mt), g);
  localCol = add(mul(warpCol, kTileN * t.nt), g);
  cRow = add(blockRow, localRow);
  cCol = add(add(blockCol, mul(warpCol, kTileN * t.nt)), t2);
}

SmallVector<Value> KernelBuilder::loadAccumulators() {
  // Accumulators: C[row + 16i (+8)][col + 8j ..] for mma tile (i, j),
  // starting from C (the generic accumulates into it), or from zero when
  // C was just zero-filled (the fill, a kernel of its own, then goes).
  auto cAlign = alignFor(c, 8);
  SmallVector<Value> init;
  auto accType = VectorType::get({2, 2}, b.getF32Type());
  for (int64_t i = 0; i < t.mt; ++i)
    for (int64_t j = 0; j < t.nt; ++j) {
      Value r = addc(cRow, kTileM * i), col = addc(cCol, kTileN * j);
      init.push_back(zeroInit
                         ? arith::ConstantOp::create(b, loc, accType,
                                                     b.getZeroAttr(accType))
                               .getResult()
                         : buildFragment(b, loc,
                                         {loadCPair(r, col, cAlign),
                                          loadCPair(addc(r, 8), col, cAlign)}));
    }
  return init;
}

void KernelBuilder::computeLdMatrixRows() {
  // Fragment rows this lane's address names for ldmatrix (PTX: lane l
  // gives row l % 8 of matrix l / 8). A (x4): matrices (rows 0-7, k 0-7),
  // (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15), i.e. the
  // A fragment's registers a0a1, a2a3, a4a5, a6a7. B (x4 for n8 tiles j
  // and j + 1): (j, k 0-7), (j, k 8-15), (j + 1, k 0-7), (j + 1, k 8-15),
  // i.e. b0b1, b2b3 of both tiles; x2 for a last odd tile. B is stored
  // [N][K] (the "col" operand is B^T row-major), so neither needs .trans.
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

SmallVector<Value> KernelBuilder::stageTiles(Value k0, Value stage) {
  // Edge tiles: A rows past M, B rows past N and columns past K are
  // staged as zeros (the K padding must be zero in both operands, the
  // others only keep the discarded results finite).
  int64_t kLimit = t.raggedK(mm.k) ? mm.k : 0;
  int64_t rowLimitA = !rowsM && t.raggedM(mm.m) ? mm.m : 0;
  int64_t rowLimitB = t.raggedN(mm.n) ? mm.n : 0;
  SmallVector<Value> tokens, prefix;
  if (stage)
    prefix.push_back(stage);
  auto one = [&](Value src, Value row0, int64_t rows, Value dst, int64_t chunk,
                 int64_t rowLimit, Value dynamicRowLimit) {
    if (chunk) {
      llvm::append_range(tokens,
                         buildSharedTileAsyncCopy(
                             b, loc, src, {}, row0, k0, rows, t.bk, dst, prefix,
                             tid, t.threads(), chunk, rowLimit, kLimit,
                             /*coreMatrices=*/staging.wgmma, dynamicRowLimit));
      return;
    }
    buildSharedTileCopy(b, loc, src, {}, row0, k0, rows, t.bk, dst,
                        /*transpose=*/false, tid, t.threads(),
                        alignFor(src, 16), rowLimit, kLimit, prefix,
                        dynamicRowLimit);
  };
  if (!staging.tmaA)
    one(a, blockRow, t.blockM(), aSmem, staging.chunkA, rowLimitA, rowsM);
  if (!staging.tmaB)
    one(bNk, blockCol, t.blockN(), bSmem, staging.chunkB, rowLimitB, Value());
  return tokens;
}

SmallVector<Value> KernelBuilder::multiply(Value stage,
                                           SmallVector<Value> accs) {
  if (staging.wgmma)
    return multiplyWgmma(stage, accs);
  return multiplyMmaSync(stage, accs);
}

SmallVector<Value> KernelBuilder::multiplyMmaSync(Value stage,
                                                  SmallVector<Value> accs) {
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
        aFrags.push_back(buildLdMatrix(
            b, loc, aSmem, at(addc(ldA, kTileM * i), addc(ldACol, kTileK * kk)),
            4, /*transpose=*/false));
      for (int64_t j = 0; j < t.nt; j += 2) {
        Value col = addc(ldBCol, kTileK * kk);
        if (j + 1 == t.nt) {
          bFrags.push_back(buildLdMatrix(b, loc, bSmem,
                                         at(addc(ldBX2, kTileN * j), col), 2,
                                         /*transpose=*/false));
          continue;
        }
        Value both =
            buildLdMatrix(b, loc, bSmem, at(addc(ldB, kTileN * j), col), 4,
                          /*transpose=*/false);
        bFrags.push_back(fragmentRows(b, loc, both, 0, 2));
        bFrags.push_back(fragmentRows(b, loc, both, 2, 2));
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
        bFrags.push_back(
            buildFragment(b, loc, {pair(bSmem, r, lo), pair(bSmem, r, hi)}));
      }
    }
    for (int64_t i = 0; i < t.mt; ++i)
      for (int64_t j = 0; j < t.nt; ++j)
        accs[i * t.nt + j] =
            buildMmaSync(b, loc, aFrags[i], bFrags[j], accs[i * t.nt + j]);
  }
  return accs;
}

scf::ForOp KernelBuilder::emitKLoop(SmallVector<Value> init) {
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
  if (stages) {
    for (int64_t s = 0; s + 1 < stages; ++s) {
      if (s >= kSteps) {
        if (asyncCopies)
          init.push_back(init[nAcc]);
        continue;
      }
      issueTmaLoads(idx(s * t.bk), idx(s));
      SmallVector<Value> tokens = stageTiles(idx(s * t.bk), idx(s));
      if (asyncCopies)
        init.push_back(
            nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens));
    }
  }
  auto loop =
      scf::ForOp::create(b, loc, idx(0), idx(kSteps * t.bk), idx(t.bk), init);
  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(loop.getBody());
  Value k0 = loop.getInductionVar();
  ValueRange iterArgs = loop.getRegionIterArgs();
  if (stages) {
    scf::YieldOp::create(b, loc, pipelinedStep(k0, iterArgs, kSteps));
    return loop;
  }
  // Plain staging: the previous step's fragment loads are done before the
  // tiles are overwritten, and the new tiles are complete before they are
  // read.
  SmallVector<Value> accs(iterArgs.take_front(nAcc));
  gpu::BarrierOp::create(b, loc);
  stageTiles(k0, Value());
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, multiply(Value(), accs));
  return loop;
}

SmallVector<Value> KernelBuilder::pipelinedStep(Value k0, ValueRange iterArgs,
                                                int64_t kSteps) {
  int64_t nAcc = t.mt * t.nt;
  int64_t stages = staging.stages;
  bool asyncCopies = staging.asyncCopies();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  SmallVector<Value> accs(iterArgs.take_front(nAcc));
  SmallVector<Value> groups(iterArgs.drop_front(nAcc));
  Value step = arith::DivUIOp::create(b, loc, k0, idx(t.bk));
  // Steps after this one; only deeper pipelines wait on fewer groups
  // near the end.
  if (asyncCopies) {
    Value remaining;
    if (stages > 2)
      remaining = arith::SubIOp::create(b, loc, idx(kSteps - 1), step);
    buildPipelineWait(b, loc, groups.front(), remaining, stages);
  }
  if (staging.tma())
    waitTmaLoads(step, stages);
  if (staging.wgmma && asyncCopies)
    fenceAsyncProxy();
  gpu::BarrierOp::create(b, loc);
  Value kNext = addc(k0, (stages - 1) * t.bk);
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kNext,
                                     idx(kSteps * t.bk));
  auto prefetch = scf::IfOp::create(
      b, loc, asyncCopies ? TypeRange{tokenType} : TypeRange{}, more,
      /*withElseRegion=*/asyncCopies);
  {
    OpBuilder::InsertionGuard branch(b);
    b.setInsertionPointToStart(prefetch.thenBlock());
    Value next =
        arith::RemUIOp::create(b, loc, addc(step, stages - 1), idx(stages));
    issueTmaLoads(kNext, next);
    SmallVector<Value> tokens = stageTiles(kNext, next);
    if (asyncCopies) {
      scf::YieldOp::create(
          b, loc,
          nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens)
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
  return next;
}

void KernelBuilder::storeResults(scf::ForOp loop) {
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
          return buildEpilogueValue(b, loc, epilogue, c, v, row, addc(col, e),
                                    &narrowInputs);
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
}

llvm::MaybeAlign KernelBuilder::alignFor(Value memref, int64_t bytes) {
  if (!startsAtAllocation(memref))
    return llvm::MaybeAlign();
  return llvm::MaybeAlign(bytes);
}

Value KernelBuilder::loadPair(Value memref, Value row, Value col,
                              llvm::MaybeAlign align) {
  auto type = cast<MemRefType>(memref.getType());
  auto vecType = VectorType::get({2}, type.getElementType());
  return vector::LoadOp::create(b, loc, vecType, memref, ValueRange{row, col},
                                /*nontemporal=*/false, align);
}

Value KernelBuilder::less(Value x, int64_t limit) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                               idx(limit));
}

Value KernelBuilder::both(Value x, Value y) {
  if (!x || !y)
    return x ? x : y;
  return arith::AndIOp::create(b, loc, x, y);
}

Value KernelBuilder::clamp(Value x, int64_t max) {
  return arith::MinSIOp::create(b, loc, x, idx(max));
}

Value KernelBuilder::rowInside(Value row) {
  if (!rowsM)
    return less(row, mm.m);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rowsM);
}

Value KernelBuilder::clampRow(Value row) {
  if (!rowsM)
    return clamp(row, mm.m - 1);
  return arith::MinSIOp::create(b, loc, row,
                                arith::SubIOp::create(b, loc, rowsM, idx(1)));
}

Value KernelBuilder::inC(Value row, Value col) {
  return both(maskRows() ? rowInside(row) : Value(),
              maskCols() ? less(col, mm.n) : Value());
}

Value KernelBuilder::loadCPair(Value row, Value col, llvm::MaybeAlign align) {
  if (!maskRows() && !maskCols())
    return loadPair(c, row, col, align);
  Value r = maskRows() ? clampRow(row) : row;
  auto pairType = VectorType::get({2}, b.getF32Type());
  if (!elementwiseC()) {
    // N even, col even: the pair lies inside or outside as a whole.
    Value pair = loadPair(c, r, maskCols() ? clamp(col, mm.n - 2) : col, align);
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

void KernelBuilder::guarded(Value cond, function_ref<void()> body) {
  if (!cond)
    return body();
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}
