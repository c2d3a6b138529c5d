//===- CpuMatmulKernel.cpp - register-tiled x*W^T kernels for the CPU -----===//
//
// Every projection in a transformer is x W^T with W in the checkpoint's
// [out, in] layout, so both operands are contiguous along the reduction
// dimension k. This pass rewrites such contractions (after bufferization)
// into a register-tiled loop nest that keeps an MR x NR block of partial
// dot products in vector<VLxf32> accumulators across the whole k loop and
// reduces them once at the end: per k step it issues MR + NR loads for
// MR * NR FMAs, needs no packing or transposition of the weights, and
// leaves the lane-wise reductions out of the inner loop.
//
// Loop order: column blocks of NB weight rows (kept hot in L2) are
// distributed over threads (scf.parallel, lowered to OpenMP), then rows of
// x in steps of MR, then NR-wide tiles inside the column block. Edge tiles
// use the same code with smaller MR/NR.
//
// An elementwise consumer of the product that reads it only at the same
// (m, n) (a bias add, an activation, a residual add: an "epilogue") is
// folded into the store, so linear + bias + activation is one loop nest.
//
// A projection whose weight is bound K-major (W^T [k, n], transposed once at
// bind time, see attn-cpu-transpose-weights) gets outer-product tiles
// instead: MR rows x NV vectors of C live in vector accumulators, each k
// step loads NV vectors of W^T's row k and broadcasts MR scalars of x, and
// no horizontal reductions are needed. The same column blocks run in
// parallel, and the epilogue is applied to whole vectors before the store.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/IndexArith.h"
#include "attnc/Codegen/CPU/Passes.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "Codegen/Common/MatmulMatch.h"
#include "Codegen/Utils/WidenedOperands.h"
#include "LaneSums.h"
#include "OuterProductKernel.h"
#include "OuterProductTile.h"
#include "WeightOnlyTiles.h"
#include "attnc/Codegen/CPU/WeightOnlyLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUMATMULKERNEL
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

using mlir::attn::cloneEpilogueOnVectors;
using mlir::attn::isVectorizableEpilogue;
using mlir::attn::matchKMajorMatmul;
using mlir::attn::matchNTMatmul;
using mlir::attn::narrowOperand;
using mlir::attn::NTMatmul;
using mlir::attn::OuterProductKernelBuilder;
using mlir::attn::storeVectorEpilogue;
using mlir::attn::tracePanels;
using mlir::attn::traceWidened;
using mlir::attn::WidenedOperand;

/// How the reduction kernel reads A and B.
enum class Operands {
  /// Both f32 (the contraction's own operands).
  F32,
  /// Either may be the f16/bf16 buffer it was widened from, loaded as
  /// narrow vectors and widened in registers.
  Widen,
  /// Both bf16: pairs of k multiplied and added by AVX-512 BF16's
  /// vdpbf16ps (x86vector.avx512.dot), 2 * VL k per step.
  Bf16Dot,
};

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  NTMatmul &mm;
  linalg::GenericOp epilogue;
  int64_t vl;
  /// What the tiles load: mm.a / mm.b, or their narrow sources.
  Value a, bNk;
  Operands mode = Operands::F32;
  /// The run-time row count when M is dynamic (else null).
  Value mSize = {};
  /// A weight-only contraction's tiles (attn-cpu-quantize-weights): with
  /// f32 activations, the packed weights widened in registers; with int8
  /// activations, VNNI dot products (A is i8 [M, K]).
  std::unique_ptr<mlir::attn::WeightOnlyTileKernel> woqTiles;
  Value idx(int64_t v) { return attn::IndexArith(b, loc).cst(v); }
  /// Columns per tile over interleaved weights.
  static constexpr int64_t kColumns = mlir::attn::kInterleavedColumns;
  bool interleaved() const {
    return woqTiles && woqTiles->interleavedColumns();
  }

  /// The epilogue runs on vectors over each finished column block
  /// (emitDeferredEpilogue) instead of per element in the tile stores,
  /// which leave the plain sums in C.
  bool deferEpilogue = false;

  /// Stores value `v` of output (m, n): through the epilogue when present
  /// and not deferred.
  void store(OpBuilder &nb, Value v, Value m, Value n) {
    if (!epilogue || deferEpilogue) {
      memref::StoreOp::create(nb, loc, v, mm.c, ValueRange{m, n});
      return;
    }
    Value result =
        mlir::attn::buildEpilogueValue(nb, loc, epilogue, mm.c, v, m, n);
    memref::StoreOp::create(nb, loc, result, epilogue.getDpsInits()[0],
                            ValueRange{m, n});
  }

  /// Adds the lane sums of a tile's accumulators (accs[i * nr + j] for
  /// output (rows[i], cols[j])) to C's initial values, as the generic
  /// accumulated, and stores them. The lanes hold partial sums of k in
  /// another order than the generic's anyway, so the neighbouring outputs
  /// of a row are summed together (emitLaneSums, the most a power of two
  /// allows) and, where C's rows are contiguous and the epilogue is not in
  /// the store, update C as one vector. A single output (a 1 x 1 tile's,
  /// or the last of an odd row) is one vector.reduction.
  void storeLaneSums(OpBuilder &nb, ArrayRef<Value> rows, ArrayRef<Value> cols,
                     ValueRange accs) {
    int64_t nr = cols.size();
    int64_t lanes = cast<VectorType>(accs.front().getType()).getNumElements();
    auto cType = cast<MemRefType>(mm.c.getType());
    bool vectorC = (!epilogue || deferEpilogue) && cType.isLastDimUnitStride();
    for (auto [i, row] : llvm::enumerate(rows))
      for (int64_t j = 0; j < nr;) {
        int64_t n = static_cast<int64_t>(llvm::bit_floor(
            static_cast<uint64_t>(std::min<int64_t>(nr - j, lanes))));
        SmallVector<Value> group(accs.begin() + i * nr + j,
                                 accs.begin() + i * nr + j + n);
        if (n == 1) {
          // One output alone: LLVM's own lowering of the reduction.
          Value sum = vector::ReductionOp::create(
              nb, loc, vector::CombiningKind::ADD, group.front(),
              arith::FastMathFlags::reassoc);
          Value initC =
              memref::LoadOp::create(nb, loc, mm.c, ValueRange{row, cols[j]});
          store(nb, arith::AddFOp::create(nb, loc, initC, sum), row, cols[j]);
          ++j;
          continue;
        }
        Value sums = mlir::attn::emitLaneSums(nb, loc, group);
        if (vectorC) {
          Value initC = vector::LoadOp::create(nb, loc, sums.getType(), mm.c,
                                               ValueRange{row, cols[j]});
          vector::StoreOp::create(nb, loc,
                                  arith::AddFOp::create(nb, loc, initC, sums),
                                  mm.c, ValueRange{row, cols[j]});
        } else {
          for (int64_t e = 0; e < n; ++e) {
            Value sum = vector::ExtractOp::create(nb, loc, sums, e);
            Value initC = memref::LoadOp::create(nb, loc, mm.c,
                                                 ValueRange{row, cols[j + e]});
            store(nb, arith::AddFOp::create(nb, loc, initC, sum), row,
                  cols[j + e]);
          }
        }
        j += n;
      }
  }

  /// Adds `accs` (one vector per row, lane j output column n0 + j) to C's
  /// initial values and stores the first `valid` lanes of each.
  void storeColumnVectors(OpBuilder &nb, ArrayRef<Value> rows, Value n0,
                          int64_t valid, ValueRange accs) {
    auto cType = cast<MemRefType>(mm.c.getType());
    bool vectorC = (!epilogue || deferEpilogue) && cType.isLastDimUnitStride();
    for (auto [row, acc] : llvm::zip(rows, accs)) {
      auto type = cast<VectorType>(acc.getType());
      if (vectorC && valid == type.getNumElements()) {
        Value initC =
            vector::LoadOp::create(nb, loc, type, mm.c, ValueRange{row, n0});
        vector::StoreOp::create(nb, loc,
                                arith::AddFOp::create(nb, loc, initC, acc),
                                mm.c, ValueRange{row, n0});
        continue;
      }
      for (int64_t e = 0; e < valid; ++e) {
        Value col = arith::AddIOp::create(
            nb, loc, n0, arith::ConstantIndexOp::create(nb, loc, e));
        Value initC =
            memref::LoadOp::create(nb, loc, mm.c, ValueRange{row, col});
        store(nb,
              arith::AddFOp::create(nb, loc, initC,
                                    vector::ExtractOp::create(nb, loc, acc, e)),
              row, col);
      }
    }
  }

  /// One MR x NR tile at (m0, n0): vector accumulators over k, then a
  /// reduction and the store of each output. Over interleaved weights
  /// (woqTiles), NR is how many of the 16 columns from n0 are stored.
  void emitTile(OpBuilder &nb, Value m0, Value n0, int64_t mr, int64_t nr) {
    SmallVector<Value> rows, cols;
    for (int64_t i = 0; i < mr; ++i)
      rows.push_back(i == 0 ? m0
                            : arith::AddIOp::create(
                                  nb, loc, m0,
                                  arith::ConstantIndexOp::create(nb, loc, i)));
    if (interleaved()) {
      storeColumnVectors(nb, rows, n0, nr, woqTiles->emitTile(nb, rows, {n0}));
      return;
    }
    auto vecType = VectorType::get({vl}, nb.getF32Type());
    Value zero = arith::ConstantOp::create(
        nb, loc, vecType, DenseElementsAttr::get(vecType, 0.0f));
    SmallVector<Value> init(mr * nr, zero);
    for (int64_t j = 0; j < nr; ++j)
      cols.push_back(j == 0 ? n0
                            : arith::AddIOp::create(
                                  nb, loc, n0,
                                  arith::ConstantIndexOp::create(nb, loc, j)));
    bool dot = mode == Operands::Bf16Dot;
    // vdpbf16ps adds the products of k pairs (2 * VL bf16 per operand) into
    // VL f32 lanes; the lane sums below are the same dot products.
    int64_t kStep = dot ? 2 * vl : vl;
    auto load = [&](OpBuilder &lb, Location l, Value src, Value row,
                    Value k) -> Value {
      Type elem = cast<MemRefType>(src.getType()).getElementType();
      auto type = VectorType::get({kStep}, elem);
      Value v = vector::LoadOp::create(lb, l, type, src, ValueRange{row, k});
      if (dot || elem.isF32())
        return v;
      return arith::ExtFOp::create(lb, l, vecType, v);
    };
    if (woqTiles) {
      storeLaneSums(nb, rows, cols, woqTiles->emitTile(nb, rows, cols));
      return;
    }
    auto loop = scf::ForOp::create(
        nb, loc, arith::ConstantIndexOp::create(nb, loc, 0),
        arith::ConstantIndexOp::create(nb, loc, mm.k),
        arith::ConstantIndexOp::create(nb, loc, kStep), init,
        [&](OpBuilder &lb, Location l, Value k, ValueRange accs) {
          SmallVector<Value> as, bs;
          for (Value r : rows)
            as.push_back(load(lb, l, a, r, k));
          for (Value c : cols)
            bs.push_back(load(lb, l, bNk, c, k));
          SmallVector<Value> next;
          for (int64_t i = 0; i < mr; ++i)
            for (int64_t j = 0; j < nr; ++j)
              next.push_back(
                  dot ? x86vector::DotBF16Op::create(
                            lb, l, vecType, accs[i * nr + j], as[i], bs[j])
                            .getResult()
                      : vector::FMAOp::create(lb, l, as[i], bs[j],
                                              accs[i * nr + j])
                            .getResult());
          scf::YieldOp::create(lb, l, next);
        });
    storeLaneSums(nb, rows, cols, loop.getResults());
  }

  /// The epilogue over rows [0, M) and columns [nStart, nStart + nExtent)
  /// of C, which the tiles have finished: VL-wide vectors, then single
  /// elements for the columns beyond the last multiple of VL. The tiles'
  /// stores reduce one sum per element, and the epilogue per element would
  /// be scalar code (a GELU's polynomial per output); the block is still in
  /// cache when this reads it back.
  void emitDeferredEpilogue(OpBuilder &nb, Value nStart, int64_t nExtent) {
    // Constants at `nb` (inside the parallel column loop), not at `b`.
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(nb, loc, v);
    };
    Value rows = mSize ? mSize : cst(mm.m);
    int64_t nVec = nExtent / vl * vl;
    scf::ForOp::create(
        nb, loc, cst(0), rows, cst(1), ValueRange{},
        [&](OpBuilder &rb, Location l, Value m, ValueRange) {
          auto columns = [&](int64_t n0, int64_t n1, int64_t step, auto fn) {
            if (n1 <= n0)
              return;
            scf::ForOp::create(
                rb, l, arith::ConstantIndexOp::create(rb, l, n0),
                arith::ConstantIndexOp::create(rb, l, n1),
                arith::ConstantIndexOp::create(rb, l, step), ValueRange{},
                [&](OpBuilder &cb, Location cl, Value n, ValueRange) {
                  fn(cb, arith::AddIOp::create(cb, cl, nStart, n));
                  scf::YieldOp::create(cb, cl);
                });
          };
          columns(0, nVec, vl, [&](OpBuilder &cb, Value n) {
            auto vt = VectorType::get({vl}, cb.getF32Type());
            Value v =
                vector::LoadOp::create(cb, loc, vt, mm.c, ValueRange{m, n});
            storeVectorEpilogue(cb, loc, epilogue, mm.c, v, m, n, vl);
          });
          columns(nVec, nExtent, 1, [&](OpBuilder &cb, Value n) {
            Value v = memref::LoadOp::create(cb, loc, mm.c, ValueRange{m, n});
            Value result = mlir::attn::buildEpilogueValue(cb, loc, epilogue,
                                                          mm.c, v, m, n);
            memref::StoreOp::create(cb, loc, result, epilogue.getDpsInits()[0],
                                    ValueRange{m, n});
          });
          scf::YieldOp::create(rb, l);
        });
  }

  /// Tiles of tm x tn over rows [m0, m1) and the block's columns [n0, n1)
  /// (from nStart).
  void emitTiles(OpBuilder &nb, Value nStart, Value m0, Value m1, int64_t tm,
                 int64_t n0, int64_t n1, int64_t tn) {
    if (woqTiles)
      woqTiles->allocate(nb, tm, tn);
    scf::ForOp::create(
        nb, loc, m0, m1, arith::ConstantIndexOp::create(nb, loc, tm),
        ValueRange{}, [&](OpBuilder &mb, Location l, Value m, ValueRange) {
          // The row tile's activations, prepared once for all its columns.
          if (woqTiles)
            woqTiles->prepare(mb, m, tm);
          scf::ForOp::create(
              mb, l, arith::ConstantIndexOp::create(mb, l, n0),
              arith::ConstantIndexOp::create(mb, l, n1),
              arith::ConstantIndexOp::create(mb, l, tn), ValueRange{},
              [&](OpBuilder &tb, Location tl, Value n, ValueRange) {
                Value col = arith::AddIOp::create(tb, tl, nStart, n);
                emitTile(tb, m, col, tm, tn);
                scf::YieldOp::create(tb, tl);
              });
          scf::YieldOp::create(mb, l);
        });
  }

  /// The tiles of rows [m0, mMain) (MR at a time) and [mMain, m1) (one at
  /// a time) over nExtent columns: MR x NR tiles and 1-column ones after
  /// the last multiple of NR, or over interleaved weights 16 columns at a
  /// time, the last tile storing the rest. `tiles(m0, m1, tm, n0, n1, tn)`
  /// emits one range's tiles.
  template <typename EmitTiles, typename Bound>
  void emitRowRanges(EmitTiles tiles, Bound m0, Bound mMain, Bound m1,
                     int64_t mr, int64_t nr, int64_t nExtent) {
    if (interleaved()) {
      int64_t whole = nExtent / kColumns * kColumns;
      for (auto [lo, hi, tm] :
           {std::tuple{m0, mMain, mr}, std::tuple{mMain, m1, int64_t(1)}}) {
        tiles(lo, hi, tm, 0, whole, kColumns);
        tiles(lo, hi, tm, whole, nExtent, nExtent - whole);
      }
      return;
    }
    int64_t nMain = nExtent / nr * nr;
    tiles(m0, mMain, mr, 0, nMain, nr);
    tiles(m0, mMain, mr, nMain, nExtent, 1);
    tiles(mMain, m1, 1, 0, nExtent, 1);
  }

  /// Tiles over [mBegin, mEnd) x [nBegin, nEnd) (static extents).
  void emitRegion(OpBuilder &nb, int64_t mBegin, int64_t mEnd, Value nStart,
                  int64_t nExtent, int64_t mr, int64_t nr) {
    if (mEnd <= mBegin || nExtent <= 0)
      return;
    int64_t mMain = mBegin + (mEnd - mBegin) / mr * mr;
    auto tiles = [&](int64_t m0, int64_t m1, int64_t tm, int64_t n0, int64_t n1,
                     int64_t tn) {
      if (m1 <= m0 || n1 <= n0)
        return;
      emitTiles(nb, nStart, arith::ConstantIndexOp::create(nb, loc, m0),
                arith::ConstantIndexOp::create(nb, loc, m1), tm, n0, n1, tn);
    };
    emitRowRanges(tiles, mBegin, mMain, mEnd, mr, nr, nExtent);
  }

  /// emitRegion for all mSize rows (dynamic M): MR-row tiles up to the
  /// last multiple of MR, then single rows.
  ///
  /// Single rows (a decode step's GEMVs) take 1 x 1 tiles, which read each
  /// weight row from start to end before the next: 1 x NR tiles, which read
  /// NR rows a vector of each at a time, made GPT-2-small's decode steps
  /// take 1.1-1.8x the time at NR = 2-4 (f32, int4, int4 with int8
  /// activations; AMD Zen 4), although they share the lane sums. Tiles
  /// that sum their NR rows one after another took 0.93x the time of
  /// GPT-2-small's int4 step with int8 activations at NR = 4, but 1.06x
  /// its int8 one, 1.12x at NR = 8, and 1.8x a TinyLlama-shaped int4 step.
  void emitDynamicRegion(OpBuilder &nb, Value nStart, int64_t nExtent,
                         int64_t mr, int64_t nr) {
    if (nExtent <= 0)
      return;
    Value mrValue = arith::ConstantIndexOp::create(nb, loc, mr);
    Value mMain = arith::MulIOp::create(
        nb, loc, arith::DivUIOp::create(nb, loc, mSize, mrValue), mrValue);
    auto tiles = [&](Value m0, Value m1, int64_t tm, int64_t n0, int64_t n1,
                     int64_t tn) {
      if (n1 > n0)
        emitTiles(nb, nStart, m0, m1, tm, n0, n1, tn);
    };
    Value zero = arith::ConstantIndexOp::create(nb, loc, 0);
    emitRowRanges(tiles, zero, mMain, mSize, mr, nr, nExtent);
  }
};

/// Outer-product tiles for C[m, n] += A[m, k] * B[k, n] (B K-major).

/// The u8 x s8 contraction of attn-cpu-quantize-int8 on buffers:
/// C[m, n] += A[m, kq, j] * byte_j(B[kq, n]) with A the [M, K/4, 4] view
/// of a contiguous i8 [M, K] buffer, B i32 [K/4, N], C i32 [M, N] (M may be
/// dynamic). `a` is the [M, K] buffer, `k` is K/4 (words).
static std::optional<NTMatmul> matchInt8Matmul(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  auto expand = op.getDpsInputs()[0].getDefiningOp<memref::ExpandShapeOp>();
  if (!expand)
    return std::nullopt;
  auto aType = cast<MemRefType>(expand.getSrc().getType());
  auto bType = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto cType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  auto contiguous = [](MemRefType type, Type elem, bool dynamicRows) {
    return type && type.getRank() == 2 && type.getLayout().isIdentity() &&
           type.getElementType() == elem && !type.isDynamicDim(1) &&
           (dynamicRows || !type.isDynamicDim(0));
  };
  MLIRContext *ctx = op.getContext();
  Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
  if (!contiguous(aType, i8, true) || !contiguous(bType, i32, false) ||
      !contiguous(cType, i32, true) ||
      aType.getDimSize(1) != 4 * bType.getDimSize(0) ||
      cType.getDimSize(1) != bType.getDimSize(1))
    return std::nullopt;
  return NTMatmul{op,
                  expand.getSrc(),
                  op.getDpsInputs()[1],
                  op.getDpsInits()[0],
                  aType.getDimSize(0),
                  bType.getDimSize(1),
                  bType.getDimSize(0)};
}

/// The operands of a weight-only contraction: the matmul (mm.b = B, mm.k =
/// K), the weight scales and, with int8 activations, the row scales.
struct WeightOnlyOperands {
  NTMatmul mm;
  Value scale, rowScale;
};

/// The weight-only contraction of attn-cpu-quantize-weights on buffers:
/// C[m, n] += A[m, k] * (q_k(B[n, :]) * S[n, k / group]), A f32 [M, K] (M
/// may be dynamic), B i32 [N, packedWords(K, bits)], S f32, C f32 [M, N],
/// all contiguous. With int8 `activations`, A is i8 and a fourth input R f32
/// [M, K / group] holds its row scales. `interleaved`: B i32 [ceil(N / 16),
/// words, 16] and S f32 [ceil(N / 16), K / group, 16] (WeightOnlyLayout.h).
static std::optional<WeightOnlyOperands>
matchWeightOnlyMatmul(linalg::GenericOp op, int64_t bits, int64_t group,
                      bool int8Activations, bool interleaved) {
  int64_t inputs = int8Activations ? 4 : 3;
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != inputs ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  auto type = [&](Value v) { return dyn_cast<MemRefType>(v.getType()); };
  MemRefType aType = type(op.getDpsInputs()[0]),
             bType = type(op.getDpsInputs()[1]),
             sType = type(op.getDpsInputs()[2]),
             cType = type(op.getDpsInits()[0]);
  auto contiguous = [](MemRefType t, bool dynamicRows, int64_t rank = 2) {
    return t && t.getRank() == rank && t.getLayout().isIdentity() &&
           (dynamicRows ? !t.isDynamicDim(1) : t.hasStaticShape());
  };
  Type aElem = int8Activations ? Type(IntegerType::get(op.getContext(), 8))
                               : Type(Float32Type::get(op.getContext()));
  int64_t weightRank = interleaved ? 3 : 2;
  if (!contiguous(aType, true) || !contiguous(bType, false, weightRank) ||
      !contiguous(sType, false, weightRank) || !contiguous(cType, true) ||
      aType.getElementType() != aElem ||
      !bType.getElementType().isInteger(32) ||
      !sType.getElementType().isF32() || !cType.getElementType().isF32())
    return std::nullopt;
  int64_t k = aType.getDimSize(1), n = cType.getDimSize(1);
  constexpr int64_t lanes = mlir::attn::kInterleavedColumns;
  int64_t weightRows = interleaved ? llvm::divideCeil(n, lanes) : n;
  int64_t words = interleaved ? mlir::attn::interleavedWeightWords(k, bits)
                              : mlir::attn::packedWeightWords(k, bits);
  if (bType.getDimSize(0) != weightRows || bType.getDimSize(1) != words ||
      sType.getDimSize(0) != weightRows || sType.getDimSize(1) * group != k ||
      (interleaved &&
       (bType.getDimSize(2) != lanes || sType.getDimSize(2) != lanes)))
    return std::nullopt;
  Value rowScale;
  if (int8Activations) {
    rowScale = op.getDpsInputs()[3];
    MemRefType rType = type(rowScale);
    if (!contiguous(rType, true) || !rType.getElementType().isF32() ||
        rType.getDimSize(1) * group != k)
      return std::nullopt;
  }
  return WeightOnlyOperands{NTMatmul{op, op.getDpsInputs()[0],
                                     op.getDpsInputs()[1], op.getDpsInits()[0],
                                     aType.getDimSize(0), n, k},
                            op.getDpsInputs()[2], rowScale};
}

struct AttnCpuMatmulKernelPass
    : public mlir::attn::impl::AttnCpuMatmulKernelBase<
          AttnCpuMatmulKernelPass> {
  using AttnCpuMatmulKernelBase::AttnCpuMatmulKernelBase;

  /// The options, overridden by the contraction's #attn.tile (attn-tile).
  struct Tiles {
    int64_t vl, mr, nr, nb;
  };
  Tiles tilesFor(linalg::GenericOp op) {
    Tiles t{vectorWidth, rowTile, colTile, columnBlock};
    if (auto tile = mlir::attn::TileAttr::lookup(op)) {
      t.vl = tile.getVectorWidth().value_or(t.vl);
      t.mr = tile.getRowTile().value_or(t.mr);
      t.nr = tile.getColTile().value_or(t.nr);
      t.nb = tile.getColumnBlock().value_or(t.nb);
    }
    return t;
  }

  /// Whether the K-major kernel multiplies with AVX-512 BF16 dot products:
  /// both operands widened from bf16, pairs of k that do not straddle a k
  /// block, and whole tiles in every column block (every column is read
  /// from a panel of `width`).
  bool usesBf16Dot(const NTMatmul &mm, const std::optional<WidenedOperand> &wa,
                   const std::optional<WidenedOperand> &wb,
                   int64_t width) const {
    auto isBf16 = [](const std::optional<WidenedOperand> &w) {
      return w &&
             cast<MemRefType>(w->narrow.getType()).getElementType().isBF16();
    };
    return bf16Dot && isBf16(wa) && isBf16(wb) && mm.k % 2 == 0 &&
           mm.n % width == 0;
  }

  /// Outer-product tiles for a K-major weight, in parallel column blocks
  /// (with `int8`, the u8 x s8 contraction of attn-cpu-quantize-int8).
  /// `wa` / `wb`: the operands' f16/bf16 sources, when they were widened.
  /// `panels`: B's column panels, when B is their copy (tracePanels), or
  /// its bf16 pair panels, when B is widened from their copy
  /// (tracePanels with pairs; bf16 dot products only).
  void rewriteKMajor(NTMatmul &mm, Tiles t,
                     const std::optional<WidenedOperand> &wa,
                     const std::optional<WidenedOperand> &wb,
                     const std::optional<WidenedOperand> &panels,
                     bool int8 = false) {
    OpBuilder b(mm.op);
    Location loc = mm.op.getLoc();
    linalg::GenericOp epilogue =
        fuseEpilogues ? mlir::attn::findMatmulEpilogue(mm) : nullptr;
    if (epilogue && !isVectorizableEpilogue(epilogue))
      epilogue = nullptr;
    Operation *zeroInit = mlir::attn::findZeroInit(mm);
    OuterProductKernelBuilder kb{loc,
                                 mm,
                                 epilogue,
                                 t.vl,
                                 /*mrMax=*/rowTile,
                                 /*nvMax=*/colVectors,
                                 /*zeroInit=*/zeroInit != nullptr};
    kb.a = wa ? mlir::attn::narrowOperand(b, loc, *wa) : mm.a;
    kb.b = wb ? mlir::attn::narrowOperand(b, loc, *wb) : mm.b;
    if (panels)
      kb.boundPanels = panels->narrow;
    int64_t width = colVectors * t.vl;
    kb.dot = usesBf16Dot(mm, wa, wb, width);
    // The FMA tiles take more rows where the registers allow; the dot
    // product tiles measured no faster with them.
    if (!int8 && !kb.dot && fmaRowTile > 0)
      kb.mrMax = fmaRowTile;
    // Dynamic M: the row count is read once, before the column blocks; the
    // panels pay off for many rows, which a dynamic M may not have. The
    // bf16 dot products read nothing but panels.
    kb.int8 = int8;
    kb.packPanels =
        !int8 && (kb.dot || (packMinRows > 0 && !ShapedType::isDynamic(mm.m) &&
                             mm.m >= packMinRows));
    if (ShapedType::isDynamic(mm.m))
      kb.mSize = memref::DimOp::create(b, loc, mm.c, 0);
    // Column blocks: whole tiles, about as many weight columns as the
    // reduction kernel's block of weight rows.
    int64_t nb = std::max<int64_t>(1, t.nb / width) * width;
    if (nb >= mm.n)
      nb = mm.n;
    // k blocks: the [kc, nb] block of W^T that every row tile reads stays
    // within about a quarter of L2 (256 KiB), in equal parts.
    int64_t kc = kBlock;
    if (kc <= 0) {
      int64_t elementBytes =
          cast<MemRefType>(kb.b.getType()).getElementTypeBitWidth() / 8;
      int64_t bytes = mm.k * nb * elementBytes, budget = 256 * 1024;
      int64_t parts = std::max<int64_t>(1, (bytes + budget - 1) / budget);
      kc = (mm.k + parts - 1) / parts;
    }
    if (kb.dot)
      kc += kc % 2;
    int64_t blocks = mm.n / nb;
    if (blocks > 0) {
      auto par = scf::ParallelOp::create(b, loc, ValueRange{kb.idx(b, 0)},
                                         ValueRange{kb.idx(b, blocks)},
                                         ValueRange{kb.idx(b, 1)});
      OpBuilder pb = OpBuilder::atBlockBegin(par.getBody());
      Value nStart = arith::MulIOp::create(pb, loc, par.getInductionVars()[0],
                                           kb.idx(pb, nb));
      kb.emitRegion(pb, nStart, nb, kc);
    }
    if (int64_t rest = mm.n - blocks * nb)
      kb.emitRegion(b, kb.idx(b, blocks * nb), rest, kc);
    if (epilogue)
      epilogue.erase();
    mm.op.erase();
    if (zeroInit)
      mlir::attn::eraseZeroInit(zeroInit);
  }

  /// Dot-product tiles for a weight read as stored ([N, K]), in parallel
  /// column blocks. `wa` / `wb`: the operands' f16/bf16 sources, when they
  /// were widened; `scale` (with bits and group): B is the packed weight of
  /// a weight-only contraction (attn-cpu-quantize-weights).
  void rewriteDot(NTMatmul &mm, Tiles t,
                  const std::optional<WidenedOperand> &wa,
                  const std::optional<WidenedOperand> &wb, Value scale = {},
                  int64_t bits = 0, int64_t group = 0, Value rowScale = {},
                  bool interleaved = false) {
    OpBuilder b(mm.op);
    Location loc = mm.op.getLoc();
    linalg::GenericOp epilogue =
        fuseEpilogues ? mlir::attn::findMatmulEpilogue(mm) : nullptr;
    KernelBuilder kb{b, loc, mm, epilogue, t.vl, mm.a, mm.b};
    auto isBf16 = [](const std::optional<WidenedOperand> &w) {
      return w &&
             cast<MemRefType>(w->narrow.getType()).getElementType().isBF16();
    };
    if (wa || wb) {
      kb.mode = bf16Dot && isBf16(wa) && isBf16(wb) && mm.k % (2 * t.vl) == 0
                    ? Operands::Bf16Dot
                    : Operands::Widen;
      for (auto [w, operand] : {std::pair{&wa, &kb.a}, {&wb, &kb.bNk}})
        if (*w)
          *operand = narrowOperand(b, loc, **w);
    }
    if (rowScale)
      kb.woqTiles = std::make_unique<mlir::attn::Int8ActivationTiles>(
          loc, t.vl, bits, group, mm.k, mm.a, mm.b, scale, rowScale,
          interleaved);
    else if (bits)
      kb.woqTiles = std::make_unique<mlir::attn::WeightOnlyTiles>(
          loc, t.vl, bits, group, int4Lookup, int4Bf16Dot, mm.k, kb.a, kb.bNk,
          scale);
    if (ShapedType::isDynamic(mm.m))
      kb.mSize = memref::DimOp::create(b, loc, mm.c, 0);
    kb.deferEpilogue = epilogue && isVectorizableEpilogue(epilogue);
    auto region = [&](OpBuilder &rb, Value nStart, int64_t nExtent) {
      if (kb.mSize)
        kb.emitDynamicRegion(rb, nStart, nExtent, t.mr, t.nr);
      else
        kb.emitRegion(rb, 0, mm.m, nStart, nExtent, t.mr, t.nr);
      if (kb.deferEpilogue)
        kb.emitDeferredEpilogue(rb, nStart, nExtent);
    };
    // Interleaved weights: blocks start at a multiple of 16 columns.
    int64_t nb = std::min<int64_t>(
        interleaved ? llvm::alignTo(t.nb, KernelBuilder::kColumns) : t.nb,
        mm.n);
    int64_t blocks = mm.n / nb;
    // Full column blocks in parallel; the remainder block after them.
    if (blocks > 0) {
      auto par = scf::ParallelOp::create(b, loc, ValueRange{kb.idx(0)},
                                         ValueRange{kb.idx(blocks)},
                                         ValueRange{kb.idx(1)});
      OpBuilder pb = OpBuilder::atBlockBegin(par.getBody());
      Value nStart =
          arith::MulIOp::create(pb, loc, par.getInductionVars()[0],
                                arith::ConstantIndexOp::create(pb, loc, nb));
      region(pb, nStart, nb);
    }
    if (int64_t rest = mm.n - blocks * nb)
      region(b, kb.idx(blocks * nb), rest);
    if (epilogue)
      epilogue.erase();
    mm.op.erase();
  }

  void runOnOperation() override {
    if (rowTile < 1 || colVectors < 1 || fmaRowTile < 0) {
      getOperation().emitError("attn-cpu-matmul-kernel: row-tile and "
                               "col-vectors must be >= 1, fma-row-tile >= 0");
      return signalPassFailure();
    }
    SmallVector<std::pair<NTMatmul, Tiles>> matches, kMajor, int8;
    struct WeightOnly {
      WeightOnlyOperands operands;
      Tiles t;
      int64_t bits, group;
      bool interleaved;
    };
    SmallVector<WeightOnly> weightOnly;
    getOperation().walk([&](linalg::GenericOp op) {
      if (auto woq = op->getAttrOfType<DictionaryAttr>("attn.woq_matmul")) {
        // A load of k lies in one group and is whole i32 words (int4: one
        // block of 32 weights in 16 bytes, which the kernel reads as 16
        // lanes); else the contraction stays a loop nest
        // (convert-linalg-to-loops).
        auto bits = woq.getAs<IntegerAttr>("bits");
        auto group = woq.getAs<IntegerAttr>("group");
        bool int8Activations = woq.get("activations") != nullptr;
        bool interleaved = woq.get("interleave") != nullptr;
        if (!bits || !group || (bits.getInt() != 8 && bits.getInt() != 4) ||
            group.getInt() <= 0 || (interleaved && !int8Activations))
          return;
        auto match = matchWeightOnlyMatmul(op, bits.getInt(), group.getInt(),
                                           int8Activations, interleaved);
        Tiles t = tilesFor(op);
        // int8 activations: VNNI steps of 16, 32 or 64 bytes within a
        // group (int4: whole blocks of 32 weights, 8 or 16 lanes).
        bool fits =
            int8Activations
                ? int8Dot && (t.vl == 4 || t.vl == 8 || t.vl == 16) &&
                      group.getInt() % (bits.getInt() == 8 ? 16 : 32) == 0 &&
                      (bits.getInt() == 8 || t.vl >= 8)
            : bits.getInt() == 8 ? t.vl % 4 == 0 && group.getInt() % t.vl == 0
                                 : t.vl == 16 && group.getInt() % 32 == 0;
        // Interleaved: 16 lanes, words whole within a group.
        if (interleaved)
          fits = int8Dot && t.vl == mlir::attn::kInterleavedColumns &&
                 group.getInt() % (32 / bits.getInt()) == 0;
        if (match && fits)
          weightOnly.push_back(
              {*match, t, bits.getInt(), group.getInt(), interleaved});
        return;
      }
      if (op->hasAttr("attn.int8_matmul")) {
        // VNNI's 4 * VL bytes per operand; N whole vectors.
        if (std::optional<NTMatmul> mm = matchInt8Matmul(op)) {
          Tiles t = tilesFor(op);
          if (int8Dot && (t.vl == 4 || t.vl == 8 || t.vl == 16) &&
              mm->n % t.vl == 0)
            int8.push_back({*mm, t});
        }
        return;
      }
      // M (batch x sequence) may be dynamic; N and K are the weight's.
      if (auto mm = matchNTMatmul(op, /*dynamicM=*/true)) {
        Tiles t = tilesFor(op);
        if (mm->k % t.vl == 0)
          matches.push_back({*mm, t});
      } else if (auto kmm = matchKMajorMatmul(op, /*dynamicM=*/true)) {
        // The vector width must divide the columns (else
        // attn-cpu-outer-product-matmul's masked tiles take it).
        Tiles t = tilesFor(op);
        if (kmm->n % t.vl == 0)
          kMajor.push_back({*kmm, t});
      }
    });
    for (WeightOnly &w : weightOnly)
      rewriteDot(w.operands.mm, w.t, std::nullopt, std::nullopt,
                 w.operands.scale, w.bits, w.group, w.operands.rowScale,
                 w.interleaved);
    // Operands widened from f16/bf16 (attn-convert-precision) are read
    // narrow: no f32 copy of a weight is made per run.
    mlir::attn::WidenedCopies widened;
    // The int8 words bound in panels are read in place too.
    SmallVector<std::optional<WidenedOperand>> panelsInt8;
    for (auto &[mm, t] : int8) {
      panelsInt8.push_back(tracePanels(mm.b, mm.op, colVectors * t.vl));
      if (panelsInt8.back())
        widened.add(*panelsInt8.back(), mm.op);
    }
    SmallVector<
        std::pair<std::optional<WidenedOperand>, std::optional<WidenedOperand>>>
        traced, tracedKMajor;
    // K-major weights bound in panels (f32, or bf16 pairs for the dot
    // products) are read in place; their copies back to [K, N] die like the
    // widened ones.
    SmallVector<std::optional<WidenedOperand>> panelsKMajor;
    for (auto &[mm, t] : kMajor) {
      std::optional<WidenedOperand> wa = traceWidened(mm.a, mm.op),
                                    wb = traceWidened(mm.b, mm.op);
      tracedKMajor.push_back({wa, wb});
      int64_t width = colVectors * t.vl;
      if (!wb)
        panelsKMajor.push_back(tracePanels(mm.b, mm.op, width));
      else if (usesBf16Dot(mm, wa, wb, width))
        panelsKMajor.push_back(
            tracePanels(wb->narrow, wb->ext, width, /*pairs=*/true));
      else
        panelsKMajor.push_back(std::nullopt);
      for (const std::optional<WidenedOperand> &w :
           {tracedKMajor.back().first, tracedKMajor.back().second,
            panelsKMajor.back()})
        if (w)
          widened.add(*w, mm.op);
    }
    for (auto &[mm, t] : matches) {
      // A's rows may be dynamic (a KV-cache step's activations): the tiles
      // read the narrow buffer's rows as they read the widened one's.
      traced.push_back({traceWidened(mm.a, mm.op, /*dynamicShapes=*/true),
                        traceWidened(mm.b, mm.op)});
      for (const std::optional<WidenedOperand> &w :
           {traced.back().first, traced.back().second})
        if (w)
          widened.add(*w, mm.op);
    }
    widened.findDead();
    for (auto [match, panels] : llvm::zip(int8, panelsInt8))
      rewriteKMajor(match.first, match.second, std::nullopt, std::nullopt,
                    panels, /*int8=*/true);
    for (auto [match, operands, panels] :
         llvm::zip(kMajor, tracedKMajor, panelsKMajor))
      rewriteKMajor(match.first, match.second, operands.first, operands.second,
                    panels);
    for (auto [match, operands] : llvm::zip(matches, traced))
      rewriteDot(match.first, match.second, operands.first, operands.second);
    widened.eraseDead();
  }
};

} // namespace
