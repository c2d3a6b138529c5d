//===- GpuFlashAttentionKernel.cpp - tensor-core flash attention kernel ---===//
//
// f16/bf16 attn.sdpa becomes one gpu.launch in the FlashAttention-2 work
// split (Dao, 2023): a thread block owns block-q query rows of one (batch,
// query head), each of its warps 16 of them, and walks the key blocks with
// an online softmax. Both contractions run on the tensor cores with
// mma.sync.m16n8k16 (f32 accumulation):
//
//   S[16, bk] = Q[16, Dk] K^T    A = Q fragments (registers, loaded once),
//                                B = K rows in shared memory ("col" operand
//                                is K itself, [key, d] row-major);
//   O[16, Dv] += P[16, bk] V     A = P, straight from the S accumulators,
//                                B = V^T in shared memory ([d, key]).
//
// Fragment layout (PTX ISA, "Matrix Fragments for mma.m16n8k16"), lane in
// [0, 32), g = lane / 4, t = lane % 4: C/D of an n8 tile holds rows g and
// g + 8, columns 2t, 2t + 1; A of a k16 step holds rows g, g + 8 at columns
// 2t, 2t + 1 and 2t + 8, 2t + 9. So the accumulators of S tiles 2kk and
// 2kk + 1 (rows g, g + 8; keys 16kk + 2t.. and 16kk + 8 + 2t..) are exactly
// the A fragment of PV step kk, once rounded to f16/bf16. Each thread keeps
// the running max and sum of its two rows; the max is completed across the
// four lanes of a row (shuffle xor 1, 2) every step, the sum only at the end.
//
// Shared memory holds one key block: K as [bk][Dk + 8] and V transposed as
// [Dv][bk + 8]. The padding of 8 elements (16 bytes) shifts consecutive rows
// by 4 banks, so the eight rows g = 0..7 a warp reads at once land in
// distinct banks. All threads of the block stage the tiles with 16-byte
// loads, between two barriers; V^T is written as pairs of consecutive keys,
// consecutive threads taking consecutive key pairs, so those 4-byte stores
// hit distinct banks too. Blocks are clamped to the kernel's limits (1024
// threads, 48 KiB of static shared memory, a register budget for the S
// accumulators; TensorCoreTiles.h).
//
// On sm_80+ (staging=cp-async, with ldmatrix) K and V move by cp.async
// instead, in two stages: while the warps compute on key block i, the
// copies of block i + 1 are in flight into the other buffer (one commit
// group per block, wait_group 0 and one barrier at the start of each
// block). cp.async cannot transpose, so V stays [key][d] ([bk][Dv + 8]) and
// its B fragments come from ldmatrix.trans; K's come from ldmatrix (K
// [key][d] is the "col" operand as it is). Plain staging keeps V^T, read by
// ldmatrix without .trans or pairwise loads.
//
// The masks are applied per element on the S fragments (bottom-right
// causal: key j visible to query row i iff j <= i + Sk - Sq; kv_lengths:
// j < len[b]); the key loop stops after the last block any row of the thread
// block can see, so fully hidden blocks cost nothing. Rows that see no key
// produce 0, as in attn-flash-attention. An additive bias (broadcastable to
// [B, Hq, Sq, Sk], e.g. a key-padding mask [B, 1, 1, Sk] of 0 and -inf or a
// large negative value) is added to the scaled scores before the masks,
// read from global memory per fragment element: pairs of keys 2t, 2t + 1 in
// one load, one load for both rows where it does not vary along the
// queries, and once per kernel where it does not vary along the keys.
//
// Run-time batch, Sq and Sk (`?` dims, read off Q and K on the host): the
// grid has ceil(Sq / bq) query blocks; rows of the last one past Sq load Q
// row Sq - 1 and store nothing; K and V rows past Sk are staged as zeros
// (never loaded), and keys past Sk are masked like kv_lengths, so the
// padded keys of the last block add nothing to the softmax or P V. Static
// Sq and Sk that are not multiples of 16 take the same path, as constants.
//
//===----------------------------------------------------------------------===//

#include "Codegen/GPU/GpuFlashAttention.h"
#include "Codegen/GPU/MmaSync.h"

#include "Codegen/Common/IndexArith.h"
#include "Codegen/GPU/TensorCoreTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_flash;

namespace {

constexpr int64_t kWarpSize = 32;

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const GpuFlashProblem &p, Value q,
                Value k, Value v, Value lengths, Value bias, Value out,
                RuntimeSizes sizes = {})
      : b(b), loc(loc), p(p), q(q), k(k), v(v), lengths(lengths), bias(bias),
        out(out), sizes(sizes) {}

  void emit();

private:
  Value idx(int64_t c) { return IndexArith(b, loc).cst(c); }
  Value f32(double c) {
    return arith::ConstantOp::create(b, loc,
                                     b.getF32FloatAttr(static_cast<float>(c)));
  }
  Value add(Value x, Value y) { return IndexArith(b, loc).add(x, y); }
  Value addc(Value x, int64_t c) { return IndexArith(b, loc).add(x, c); }
  Value mulc(Value x, int64_t c) { return IndexArith(b, loc).mul(x, c); }
  Value divc(Value x, int64_t c) { return IndexArith(b, loc).divu(x, c); }
  Value remc(Value x, int64_t c) { return IndexArith(b, loc).remu(x, c); }
  Value maxF(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value isNegInf(Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                 f32(-std::numeric_limits<double>::infinity()));
  }

  /// Two consecutive elements mem[indices..., col .. col + 1].
  Value loadPair(Value mem, ValueRange indices) {
    Type elt = cast<MemRefType>(mem.getType()).getElementType();
    return vector::LoadOp::create(b, loc, VectorType::get({2}, elt), mem,
                                  indices, /*nontemporal=*/false,
                                  llvm::MaybeAlign(4));
  }

  /// A pair of zero elements (the missing half of a fragment).
  Value zeroPair() {
    auto type = VectorType::get({2}, p.elementType);
    return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  }

  /// x summed or maxed over the four lanes that share a row.
  Value quadReduce(Value x, bool isMax) {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, x, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = isMax ? maxF(x, other)
                : arith::AddFOp::create(b, loc, x, other).getResult();
    }
    return x;
  }

  /// Copies key block [k0, k0 + bk) of K and V into shared memory (V
  /// transposed), all threads of the block cooperating; with the cp.async
  /// pipeline into buffer `stage`, V as it is, returning the copies'
  /// tokens.
  SmallVector<Value> stageKeyBlock(Value k0, Value stage = Value());

  /// One key block: returns the new (m_A, m_B, l_A, l_B, O tiles...).
  /// `stage` is the pipeline buffer holding it (null: plain staging, which
  /// this step does itself).
  /// `afterScores` runs once S = Q K^T is computed (the pipeline issues
  /// its prefetch there).
  SmallVector<Value> keyStep(Value k0, ValueRange state, Value stage,
                             function_ref<void()> afterScores = {});

  /// Whether dimension `d` of the bias is full (not broadcast).
  bool biasFull(int64_t d) {
    return cast<MemRefType>(bias.getType()).getDimSize(d) != 1;
  }

  /// bias[b, h, row, key] and bias[b, h, row, key + 1] (key even) in f32;
  /// `row` is a Q row inside the problem. Keys past a run-time Sk read the
  /// last key's bias instead (their scores are masked anyway).
  std::array<Value, 2> biasPair(Value row, Value key);

  /// Indices into a staged tile: the stage first, if any.
  SmallVector<Value> smemAt(Value stage, Value row, Value col) {
    SmallVector<Value> indices;
    if (stage)
      indices.push_back(stage);
    indices.append({row, col});
    return indices;
  }

  OpBuilder &b;
  Location loc;
  const GpuFlashProblem &p;
  Value q, k, v, lengths, bias, out;
  RuntimeSizes sizes;
  // Key position of query row 0 (Sk - Sq) where a length is a run-time size.
  Value alignValue;
  // Set by emit() inside the kernel.
  Value tid, g, t2, batchIv, headIv, kvHeadIv, rowA, rowB, length;
  // The Q rows this thread reads (rowA, rowB clamped to a run-time Sq).
  Value qRowA, qRowB;
  // A bias that does not vary along the keys, per row (loaded once).
  std::array<Value, 2> rowBias;
  // ldmatrix row addresses of this lane (PTX: lane l gives row l % 8 of
  // matrix l / 8): lane % 8 + 8 (lane / 16), 8 ((lane / 8) % 2), lane % 8.
  Value ldRow16, ldHalf, ldRow8, ldHalf16;
  Value kSmem, vtSmem;
  SmallVector<Value> qFrags;
};

SmallVector<Value> KernelBuilder::stageKeyBlock(Value k0, Value stage) {
  int64_t threads = p.warps * kWarpSize;
  Value zero = idx(0);
  // A run-time Sk: keys at or past it are staged as zeros (never loaded),
  // so that P V adds nothing from them (their scores are masked).
  Value keyLimit = sizes.sk;
  if (!p.stages) {
    buildSharedTileCopy(b, loc, k, {batchIv, kvHeadIv}, k0, zero, p.blockK,
                        p.dk, kSmem, /*transpose=*/false, tid, threads,
                        llvm::MaybeAlign(16), 0, 0, {}, keyLimit);
    buildSharedTileCopy(b, loc, v, {batchIv, kvHeadIv}, k0, zero, p.blockK,
                        p.dv, vtSmem, /*transpose=*/true, tid, threads,
                        llvm::MaybeAlign(16), 0, 0, {}, keyLimit);
    return {};
  }
  // Whole tiles (Sk is a multiple of bk): no edges to zero-fill.
  SmallVector<Value> tokens;
  auto one = [&](Value src, int64_t width, Value dst, int64_t chunk) {
    if (chunk) {
      llvm::append_range(
          tokens, buildSharedTileAsyncCopy(b, loc, src, {batchIv, kvHeadIv}, k0,
                                           zero, p.blockK, width, dst, stage,
                                           tid, threads, chunk, 0, 0,
                                           /*coreMatrices=*/false, keyLimit));
      return;
    }
    buildSharedTileCopy(b, loc, src, {batchIv, kvHeadIv}, k0, zero, p.blockK,
                        width, dst, /*transpose=*/false, tid, threads,
                        llvm::MaybeAlign(16), 0, 0, stage, keyLimit);
  };
  one(k, p.dk, kSmem, p.chunkK);
  one(v, p.dv, vtSmem, p.chunkV);
  return tokens;
}

std::array<Value, 2> KernelBuilder::biasPair(Value row, Value key) {
  auto type = cast<MemRefType>(bias.getType());
  Type elt = type.getElementType();
  Value zero = idx(0);
  SmallVector<Value> indices = {biasFull(0) ? batchIv : zero,
                                biasFull(1) ? headIv : zero,
                                biasFull(2) ? row : zero, zero};
  auto widen = [&](Value x) -> Value {
    return elt.isF32() ? x : arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  };
  if (!biasFull(3)) {
    Value x = widen(memref::LoadOp::create(b, loc, bias, indices));
    return {x, x};
  }
  int64_t keys = type.getDimSize(3);
  if (!sizes.sk && !ShapedType::isDynamic(keys) && keys % 2 == 0) {
    // Static Sk (a multiple of 16): every row of the identity-layout
    // buffer starts at an even element, so the two keys are one aligned
    // load.
    indices.back() = key;
    int64_t bytes = 2 * elt.getIntOrFloatBitWidth() / 8;
    Value pair =
        vector::LoadOp::create(b, loc, VectorType::get({2}, elt), bias, indices,
                               /*nontemporal=*/false, llvm::MaybeAlign(bytes));
    std::array<Value, 2> result;
    for (int64_t e = 0; e < 2; ++e)
      result[e] =
          widen(vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{e}));
    return result;
  }
  Value last =
      arith::SubIOp::create(b, loc, sizes.sk ? sizes.sk : idx(p.sk), idx(1));
  std::array<Value, 2> result;
  for (int64_t e = 0; e < 2; ++e) {
    indices.back() = arith::MinSIOp::create(b, loc, addc(key, e), last);
    result[e] = widen(memref::LoadOp::create(b, loc, bias, indices));
  }
  return result;
}

SmallVector<Value> KernelBuilder::keyStep(Value k0, ValueRange state,
                                          Value stage,
                                          function_ref<void()> afterScores) {
  if (!stage) {
    // The previous step's reads of the tiles are done before they are
    // overwritten, and the new tiles are complete before they are read.
    gpu::BarrierOp::create(b, loc);
    stageKeyBlock(k0);
    gpu::BarrierOp::create(b, loc);
  }

  Type f32Type = b.getF32Type();
  auto accType = VectorType::get({2, 2}, f32Type);
  Value zeroAcc =
      arith::ConstantOp::create(b, loc, accType, b.getZeroAttr(accType));
  int64_t nTiles = p.blockK / kMmaN;

  // S = Q K^T, one n8 tile of keys at a time: B fragment rows are
  // K[8j + g][16kk + 2t ..] and K[8j + g][16kk + 8 + 2t ..].
  // s[j][r][e]: row (g, g + 8)[r], key k0 + 8j + 2t + e.
  SmallVector<std::array<std::array<Value, 2>, 2>> s(nTiles);
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value scale = f32(p.scale);
  Value posA = alignValue ? add(rowA, alignValue) : addc(rowA, p.alignOffset);
  Value posB = alignValue ? add(rowB, alignValue) : addc(rowB, p.alignOffset);
  SmallVector<Value> sAcc(nTiles, zeroAcc);
  int64_t kSteps = llvm::divideCeil(p.dk, kMmaK);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    // Dk % 16 == 8: the last k16 step has only its low 8 columns; the high
    // halves of its A and B fragments are zeros (never loaded).
    bool half = kk + 1 == kSteps && p.dk % kMmaK != 0;
    for (int64_t j = 0; j < nTiles; ++j) {
      Value bFrag;
      if (p.ldmatrix && half) {
        // One x2 of the low halves of n8 tiles j and j + 1 (lanes 0-7 and
        // 8-15 give their rows).
        if (j % 2)
          continue;
        Value both =
            buildLdMatrix(b, loc, kSmem,
                          smemAt(stage, addc(add(ldRow8, ldHalf), kMmaN * j),
                                 idx(kMmaK * kk)),
                          2, /*transpose=*/false);
        for (int64_t i = 0; i < 2; ++i) {
          Value low =
              vector::ExtractOp::create(b, loc, both, ArrayRef<int64_t>{i});
          sAcc[j + i] = buildMmaSync(b, loc, qFrags[kk],
                                     buildFragment(b, loc, {low, zeroPair()}),
                                     sAcc[j + i]);
        }
        continue;
      }
      if (p.ldmatrix) {
        // K is [key][d], the "col" operand: no .trans; one x4 serves n8
        // tiles j and j + 1 (bk is a multiple of 16).
        if (j % 2)
          continue;
        Value both = buildLdMatrix(
            b, loc, kSmem,
            smemAt(stage, addc(ldRow16, kMmaN * j), addc(ldHalf, kMmaK * kk)),
            4, /*transpose=*/false);
        sAcc[j] = buildMmaSync(b, loc, qFrags[kk],
                               fragmentRows(b, loc, both, 0, 2), sAcc[j]);
        sAcc[j + 1] = buildMmaSync(
            b, loc, qFrags[kk], fragmentRows(b, loc, both, 2, 2), sAcc[j + 1]);
        continue;
      }
      Value keyRow = addc(g, kMmaN * j);
      Value col = addc(t2, kMmaK * kk);
      bFrag = buildFragment(
          b, loc,
          {loadPair(kSmem, smemAt(stage, keyRow, col)),
           half ? zeroPair()
                : loadPair(kSmem, smemAt(stage, keyRow, addc(col, 8)))});
      sAcc[j] = buildMmaSync(b, loc, qFrags[kk], bFrag, sAcc[j]);
    }
  }
  for (int64_t j = 0; j < nTiles; ++j) {
    Value acc = sAcc[j];
    // The bias of rows (g, g + 8) at keys k0 + 8j + 2t + (0, 1); one load
    // serves both rows where the bias does not vary along the queries (a
    // key-padding mask, [B, 1, 1, Sk]).
    std::array<std::array<Value, 2>, 2> biasOf;
    if (bias) {
      for (int64_t r = 0; r < 2; ++r) {
        if (!biasFull(3))
          biasOf[r] = {rowBias[r], rowBias[r]};
        else if (r == 1 && !biasFull(2))
          biasOf[1] = biasOf[0];
        else
          biasOf[r] =
              biasPair(r == 0 ? qRowA : qRowB, add(k0, addc(t2, kMmaN * j)));
      }
    }
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        Value x =
            vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{r, e});
        x = arith::MulFOp::create(b, loc, x, scale);
        if (bias)
          x = arith::AddFOp::create(b, loc, x, biasOf[r][e]);
        Value visible;
        Value key;
        if (p.causal || length)
          key = add(k0, addc(t2, kMmaN * j + e));
        auto andWith = [&](Value cond) {
          visible =
              visible ? arith::AndIOp::create(b, loc, visible, cond).getResult()
                      : cond;
        };
        if (p.causal)
          andWith(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, key,
                                        r == 0 ? posA : posB));
        if (length)
          andWith(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, key,
                                        length));
        if (visible)
          x = arith::SelectOp::create(b, loc, visible, x, negInf);
        s[j][r][e] = x;
      }
  }

  if (afterScores)
    afterScores();

  // Online softmax per row r: m_new = max(m, rowmax(S)), alpha = exp(m -
  // m_new) (1 while the row has seen only hidden keys: both are -inf),
  // P = exp(S - m_new) (0 for hidden keys), l = l * alpha + rowsum(P).
  SmallVector<Value> next(state.begin(), state.end());
  std::array<Value, 2> alpha, mNew;
  for (int64_t r = 0; r < 2; ++r) {
    Value tileMax = negInf;
    for (int64_t j = 0; j < nTiles; ++j)
      for (int64_t e = 0; e < 2; ++e)
        tileMax = maxF(tileMax, s[j][r][e]);
    tileMax = quadReduce(tileMax, /*isMax=*/true);
    Value m = state[r];
    mNew[r] = maxF(m, tileMax);
    Value e =
        math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, mNew[r]));
    alpha[r] = arith::SelectOp::create(b, loc, isNegInf(mNew[r]), f32(1.0), e);
    Value rowSum = f32(0.0);
    for (int64_t j = 0; j < nTiles; ++j)
      for (int64_t c = 0; c < 2; ++c) {
        Value x = s[j][r][c];
        Value ex = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, x, mNew[r]));
        x = arith::SelectOp::create(b, loc, isNegInf(x), f32(0.0), ex);
        s[j][r][c] = x;
        rowSum = arith::AddFOp::create(b, loc, rowSum, x);
      }
    next[r] = mNew[r];
    next[2 + r] = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, state[2 + r], alpha[r]), rowSum);
  }

  // O = O * alpha (row g: alpha_A, row g + 8: alpha_B) + P V.
  Value alphaTile = vector::FromElementsOp::create(
      b, loc, accType, ValueRange{alpha[0], alpha[0], alpha[1], alpha[1]});
  int64_t oTiles = p.dv / kMmaN;
  SmallVector<Value> o;
  for (int64_t n = 0; n < oTiles; ++n)
    o.push_back(arith::MulFOp::create(b, loc, state[4 + n], alphaTile));
  auto pairType = VectorType::get({2}, p.elementType);
  auto narrowPair = [&](int64_t j, int64_t r) -> Value {
    Value pair =
        vector::FromElementsOp::create(b, loc, VectorType::get({2}, f32Type),
                                       ValueRange{s[j][r][0], s[j][r][1]});
    return arith::TruncFOp::create(b, loc, pairType, pair);
  };
  for (int64_t kk = 0; kk < p.blockK / kMmaK; ++kk) {
    Value aFrag =
        buildFragment(b, loc,
                      {narrowPair(2 * kk, 0), narrowPair(2 * kk, 1),
                       narrowPair(2 * kk + 1, 0), narrowPair(2 * kk + 1, 1)});
    Value col = addc(t2, kMmaK * kk);
    for (int64_t n = 0; n < oTiles; ++n) {
      if (p.ldmatrix) {
        // Pipelined, V is [key][d]: B = V (k = key, n = d) needs .trans,
        // matrices (keys lo, n), (keys hi, n), (keys lo, n + 1), (keys hi,
        // n + 1). Plain staging keeps V^T [d][key], read like K.
        if (n % 2)
          continue;
        int64_t tiles = n + 1 < oTiles ? 4 : 2;
        Value frag;
        if (p.stages)
          frag = buildLdMatrix(
              b, loc, vtSmem,
              smemAt(stage, add(ldRow8, addc(ldHalf, kMmaK * kk)),
                     tiles == 4 ? addc(ldHalf16, kMmaN * n) : idx(kMmaN * n)),
              tiles, /*transpose=*/true);
        else
          frag = buildLdMatrix(
              b, loc, vtSmem,
              smemAt(stage, addc(tiles == 4 ? ldRow16 : ldRow8, kMmaN * n),
                     addc(ldHalf, kMmaK * kk)),
              tiles, /*transpose=*/false);
        o[n] =
            buildMmaSync(b, loc, aFrag, fragmentRows(b, loc, frag, 0, 2), o[n]);
        if (tiles == 4)
          o[n + 1] = buildMmaSync(b, loc, aFrag,
                                  fragmentRows(b, loc, frag, 2, 2), o[n + 1]);
        continue;
      }
      Value vRow = addc(g, kMmaN * n);
      Value bFrag =
          buildFragment(b, loc,
                        {loadPair(vtSmem, smemAt(stage, vRow, col)),
                         loadPair(vtSmem, smemAt(stage, vRow, addc(col, 8)))});
      o[n] = buildMmaSync(b, loc, aFrag, bFrag, o[n]);
    }
  }
  for (int64_t n = 0; n < oTiles; ++n)
    next[4 + n] = o[n];
  return next;
}

void KernelBuilder::emit() {
  auto smemSpace =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  // Plain staging: K [bk][Dk + 8] and V^T [Dv][bk + 8]. The cp.async
  // pipeline cannot transpose: `stages` buffers of K [bk][Dk + 8] and
  // V [bk][Dv + 8], V read with ldmatrix.trans.
  SmallVector<int64_t> kShape = {p.blockK, p.dk + kSmemPad};
  SmallVector<int64_t> vShape = {p.dv, p.blockK + kSmemPad};
  if (p.stages) {
    kShape.insert(kShape.begin(), p.stages);
    vShape = {p.stages, p.blockK, p.dv + kSmemPad};
  }
  auto kSmemType = MemRefType::get(kShape, p.elementType,
                                   MemRefLayoutAttrInterface(), smemSpace);
  auto vtSmemType = MemRefType::get(vShape, p.elementType,
                                    MemRefLayoutAttrInterface(), smemSpace);
  Value one = idx(1);
  // Run-time Sq: ceil(Sq / bq) query blocks, the last one partial.
  // Static sizes that are not multiples of 16 come as constants: their
  // grid and alignment are constants too.
  auto known = [](Value size, int64_t staticSize) -> std::optional<int64_t> {
    return size ? getConstantIntValue(size) : staticSize;
  };
  std::optional<int64_t> knownSq = known(sizes.sq, p.sq),
                         knownSk = known(sizes.sk, p.sk);
  Value queryBlocks;
  if (sizes.sq)
    queryBlocks = knownSq ? idx(llvm::divideCeil(*knownSq, p.blockQ))
                          : divc(addc(sizes.sq, p.blockQ - 1), p.blockQ);
  if (sizes.sq || sizes.sk)
    alignValue =
        knownSq && knownSk
            ? idx(*knownSk - *knownSq)
            : arith::SubIOp::create(b, loc, sizes.sk ? sizes.sk : idx(p.sk),
                                    sizes.sq ? sizes.sq : idx(p.sq))
                  .getResult();
  auto launch = gpu::LaunchOp::create(
      b, loc, queryBlocks ? queryBlocks : idx(p.sq / p.blockQ), idx(p.hq),
      sizes.batch ? sizes.batch : idx(p.batch), idx(p.warps * kWarpSize), one,
      one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  // Workgroup allocas rather than workgroup attributions: bufferization's
  // deallocation runs after this pass and would give memref block arguments
  // ownership flags; attn-gpu-device-buffers turns them into attributions.
  kSmem = memref::AllocaOp::create(b, loc, kSmemType);
  vtSmem = memref::AllocaOp::create(b, loc, vtSmemType);

  tid = launch.getThreadIds().x;
  Value lane = remc(tid, kWarpSize);
  Value warp = divc(tid, kWarpSize);
  g = divc(lane, 4);
  t2 = mulc(remc(lane, 4), 2);
  if (p.ldmatrix) {
    ldRow8 = remc(lane, 8);
    ldHalf = mulc(remc(divc(lane, 8), 2), 8);
    ldHalf16 = mulc(divc(lane, 16), 8);
    ldRow16 = add(ldRow8, ldHalf16);
  }
  Value qBlock = launch.getBlockIds().x;
  headIv = launch.getBlockIds().y;
  batchIv = launch.getBlockIds().z;
  kvHeadIv = divc(headIv, p.group);
  Value q0 = mulc(qBlock, p.blockQ);
  rowA = add(add(q0, mulc(warp, kMmaM)), g);
  rowB = addc(rowA, 8);

  // This warp's Q rows as A fragments, one per k16 step of Dk. Rows past a
  // run-time Sq read row Sq - 1 instead (their results are not stored).
  qRowA = rowA;
  qRowB = rowB;
  if (sizes.sq) {
    Value last = arith::SubIOp::create(b, loc, sizes.sq, idx(1));
    qRowA = arith::MinSIOp::create(b, loc, rowA, last);
    qRowB = arith::MinSIOp::create(b, loc, rowB, last);
  }
  int64_t kSteps = llvm::divideCeil(p.dk, kMmaK);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    Value lo = addc(t2, kMmaK * kk), hi = addc(lo, 8);
    auto at = [&](Value row, Value col) {
      return loadPair(q, {batchIv, headIv, row, col});
    };
    // Columns past Dk (Dk % 16 == 8) are zeros.
    bool half = kMmaK * (kk + 1) > p.dk;
    qFrags.push_back(buildFragment(b, loc,
                                   {at(qRowA, lo), at(qRowB, lo),
                                    half ? zeroPair() : at(qRowA, hi),
                                    half ? zeroPair() : at(qRowB, hi)}));
  }
  if (bias && !biasFull(3))
    for (int64_t r = 0; r < 2; ++r)
      rowBias[r] = biasPair(r == 0 ? qRowA : qRowB, idx(0))[0];

  // Keys [0, hi): hi is the end of the block holding the last key any row
  // of this thread block may see (rounded up, so K/V tiles are whole). A
  // run-time Sk rounds up to whole blocks and masks keys past it like
  // kv_lengths.
  Value hi = sizes.sk
                 ? mulc(divc(addc(sizes.sk, p.blockK - 1), p.blockK), p.blockK)
                 : idx(p.sk);
  auto roundUpMin = [&](Value last) {
    // min(Sk, ceil(max(last, 0) / bk) * bk)
    Value clamped = arith::MaxSIOp::create(b, loc, last, idx(0));
    Value blocks = divc(addc(clamped, p.blockK - 1), p.blockK);
    return arith::MinSIOp::create(b, loc, mulc(blocks, p.blockK), hi)
        .getResult();
  };
  if (p.causal)
    hi = roundUpMin(alignValue ? add(addc(q0, p.blockQ), alignValue)
                               : addc(q0, p.blockQ + p.alignOffset));
  if (sizes.sk)
    length = sizes.sk;
  if (lengths) {
    Value len = memref::LoadOp::create(b, loc, lengths, ValueRange{batchIv});
    length = arith::IndexCastOp::create(b, loc, b.getIndexType(), len);
    if (sizes.sk)
      length = arith::MinSIOp::create(b, loc, length, sizes.sk);
    hi = roundUpMin(length);
  }

  Type f32Type = b.getF32Type();
  auto accType = VectorType::get({2, 2}, f32Type);
  SmallVector<Value> init = {f32(-std::numeric_limits<double>::infinity()),
                             f32(-std::numeric_limits<double>::infinity()),
                             f32(0.0), f32(0.0)};
  Value zeroAcc =
      arith::ConstantOp::create(b, loc, accType, b.getZeroAttr(accType));
  init.append(p.dv / kMmaN, zeroAcc);
  size_t nState = init.size();
  // The cp.async pipeline (as in attn-gpu-mma-matmul): the groups of the
  // first stages - 1 key blocks up front, the loop carrying the tokens of
  // the groups still to be waited for; block i waits until its own group
  // has landed (the later blocks' groups may stay pending), one barrier
  // publishes every thread's copies and retires block i - 1's reads of the
  // buffer that the prefetch of block i + stages - 1 then overwrites.
  // Blocks past the last one the causal mask or kv_lengths leave commit
  // nothing; their place in the token ring holds a token no wait will use.
  // Block 0 is always staged (Sk >= bk), even where no block is visited,
  // and a final wait retires its copies there.
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  Value firstGroup;
  auto prefetch = [&](Value kNext, Value stage, Value placeholder) -> Value {
    Value more =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kNext, hi);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{tokenType}, more,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard branch(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> tokens = stageKeyBlock(kNext, stage);
    scf::YieldOp::create(
        b, loc,
        nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens)
            .getResult());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, placeholder);
    return ifOp.getResult(0);
  };
  if (p.stages) {
    firstGroup = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, tokenType, stageKeyBlock(idx(0), idx(0)));
    init.push_back(firstGroup);
  }
  for (int64_t s = 1; s + 1 < p.stages; ++s)
    init.push_back(prefetch(idx(s * p.blockK), idx(s), firstGroup));
  auto loop = scf::ForOp::create(b, loc, idx(0), hi, idx(p.blockK), init);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 = loop.getInductionVar();
    ValueRange iterArgs = loop.getRegionIterArgs();
    if (!p.stages) {
      scf::YieldOp::create(b, loc, keyStep(k0, iterArgs, Value()));
    } else {
      SmallVector<Value> groups(iterArgs.drop_front(nState));
      Value step = divc(k0, p.blockK);
      // Blocks after this one: (hi - k0) / bk - 1 (hi is a multiple of
      // bk); only deeper pipelines wait on fewer groups near the end.
      Value remaining;
      if (p.stages > 2)
        remaining = arith::SubIOp::create(
            b, loc, divc(arith::SubIOp::create(b, loc, hi, k0), p.blockK),
            idx(1));
      buildPipelineWait(b, loc, groups.front(), remaining, p.stages);
      gpu::BarrierOp::create(b, loc);
      // The prefetch goes after the K fragment loads: its address
      // arithmetic is then not live across S = Q K^T (bf16 at head dim 64
      // spilled with it at the top of the step), and its copies still
      // overlap the softmax and P V.
      Value next;
      SmallVector<Value> results =
          keyStep(k0, iterArgs.take_front(nState), remc(step, p.stages), [&] {
            next = prefetch(addc(k0, (p.stages - 1) * p.blockK),
                            remc(addc(step, p.stages - 1), p.stages),
                            groups.front());
          });
      llvm::append_range(results, llvm::drop_begin(groups));
      results.push_back(next);
      scf::YieldOp::create(b, loc, results);
    }
  }

  // Block 0's copies where the loop visited no block (nothing else is
  // pending after the loop): no cp.async outlives the kernel.
  if (p.stages)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResults().back(),
                                     b.getI32IntegerAttr(0));

  // out = O * (1 / l) with l summed over the row's four lanes (one division
  // per row); 0 for rows that saw no key (l = 0).
  std::array<Value, 2> rows = {rowA, rowB};
  std::array<Value, 2> scales;
  for (int64_t r = 0; r < 2; ++r) {
    Value sum = quadReduce(loop.getResult(2 + r), /*isMax=*/false);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sum, f32(0.0));
    Value inverse = arith::DivFOp::create(b, loc, f32(1.0), sum);
    scales[r] = arith::SelectOp::create(b, loc, positive, inverse, f32(0.0));
  }
  auto f32Pair = VectorType::get({2}, f32Type);
  auto pairType = VectorType::get({2}, p.elementType);
  for (int64_t n = 0; n < p.dv / kMmaN; ++n) {
    Value acc = loop.getResult(4 + n);
    Value col = addc(t2, kMmaN * n);
    for (int64_t r = 0; r < 2; ++r) {
      Value row = vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{r});
      Value scale = vector::BroadcastOp::create(b, loc, f32Pair, scales[r]);
      Value pair = arith::MulFOp::create(b, loc, row, scale);
      pair = arith::TruncFOp::create(b, loc, pairType, pair);
      // Rows past a run-time Sq are not stored.
      std::optional<OpBuilder::InsertionGuard> guarded;
      if (sizes.sq) {
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             rows[r], sizes.sq);
        auto ifOp = scf::IfOp::create(b, loc, inside);
        guarded.emplace(b);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      }
      vector::StoreOp::create(b, loc, pair, out,
                              ValueRange{batchIv, headIv, rows[r], col},
                              /*nontemporal=*/false, llvm::MaybeAlign(4));
    }
  }
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

void mlir::attn::gpu_flash::buildFlashKernel(OpBuilder &b, Location loc,
                                             const GpuFlashProblem &p, Value q,
                                             Value k, Value v, Value lengths,
                                             Value bias, Value out,
                                             RuntimeSizes sizes) {
  KernelBuilder(b, loc, p, q, k, v, lengths, bias, out, sizes).emit();
}
