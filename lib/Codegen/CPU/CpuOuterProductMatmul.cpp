//===- CpuOuterProductMatmul.cpp - register-tiled A*B kernels for the CPU -===//
//
// The block contractions of flash attention, S = Q K^T (with K transposed
// once per call, see attn-flash-attention's transpose-keys) and O += P V,
// are C[g, i, n] += A[g, i, k] * B[k, n] with B and C contiguous along n.
// Their extents are small (a 64 x 64 tile, k = 64), so the reduction form
// of attn-cpu-matmul-kernel (vector partial sums along k, reduced at the
// end) would spend more on horizontal reductions than on FMAs. The outer-
// product form needs none: per k step it loads NV vectors of B's row k,
// broadcasts MR scalars of A's column k, and issues MR * NV FMAs into an
// MR x NV block of vector<VLxf32> accumulators that hold C's rows, which
// are loaded before the k loop and stored after it.
//
// A and B may be f16/bf16 (an f16/bf16 model's Q, K and V, which
// attn-flash-attention widens inside the contraction body): B's vectors are
// loaded narrow and widened in registers, A's scalars widened before the
// broadcast; the accumulators stay f32. With bf16-dot (AVX-512 BF16), a
// bf16 B with static extents is first packed with pairs of k interleaved
// per column into a panel on the stack, and the tiles multiply it with
// vdpbf16ps against A's pairs broadcast as 32-bit lanes: half the steps of
// the FMA form. A is then bf16 (Q in Q K^T) or f32 rounded to bf16 in
// registers (the probabilities P in P V, as bf16 flash kernels keep them);
// the sums stay f32.
//
// Extents may be dynamic (partial last query or key blocks): rows beyond a
// multiple of MR get one-row tiles, and columns beyond a multiple of NV * VL
// get one-vector tiles whose loads and stores are masked.
//
//===----------------------------------------------------------------------===//

#include "Codegen/Common/IndexArith.h"
#include "attnc/Codegen/CPU/Passes.h"

#include "Codegen/Common/MatmulMatch.h"
#include "LaneSums.h"
#include "OuterProductTile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUOUTERPRODUCTMATMUL
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// A matched C[(g,) i, n] += sum_k A[(g,) i, k] * B[k, n] (or, with
/// `keysMajor`, B[n, k]) with C f32 and A, B f32 or f16/bf16 (widened in
/// registers), C with unit stride along n, B along n (along k with
/// `keysMajor`, and A then along k too).
struct BlockMatmul {
  linalg::GenericOp op;
  Value a, b, c;
  bool batched;
  /// B is [n, k]: the keys of a flash attention's Q K^T that were not
  /// transposed (a KV cache), for the dot-product tiles.
  bool keysMajor;
  /// A zero fill of C right before the contraction: the accumulators start
  /// at zero instead of reading C, and the fill goes away (the kernel
  /// writes every element of C).
  linalg::FillOp zeroFill;
  /// An elementwise update of C right after the contraction, applied to
  /// the accumulators before they are stored (findInPlaceEpilogue).
  linalg::GenericOp epilogue;
};

/// A memref of f32 (or, with `narrow`, also f16/bf16) elements with unit
/// stride along its last dimension.
static bool isFloatWithUnitInnerStride(Value v, bool narrow) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || type.getRank() == 0)
    return false;
  Type elem = type.getElementType();
  if (!elem.isF32() && !(narrow && (elem.isF16() || elem.isBF16())))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The body is `out + widen(a) * widen(b)` (the product in either order)
/// and nothing else, where widen is an `arith.extf` to f32 of the input or
/// nothing: attn-flash-attention widens f16/bf16 Q, K and V inside its
/// block contractions, and the tiles widen them in registers alike.
static bool isWideningMulAddBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1)
    return false;
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  BlockArgument a = body.getArgument(0), b = body.getArgument(1),
                out = body.getArgument(2);
  if (!add || !add.getType().isF32())
    return false;
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  unsigned widened = 0;
  auto source = [&](Value v) -> Value {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
      ++widened;
      return ext.getIn();
    }
    return v;
  };
  Value x = source(mul.getLhs()), y = source(mul.getRhs());
  if (!((x == a && y == b) || (x == b && y == a)))
    return false;
  // Nothing but the widenings, the product and the sum.
  return body.getOperations().size() == 3 + widened;
}

/// An elementwise generic right after the contraction that updates C in
/// place (C its only output, identity-indexed, read through its block
/// argument or not at all), whose other inputs are f32 memrefs of C's rank
/// indexed by C's own indices or broadcast along some of them (each map
/// result d_i or 0), contiguous along the last dimension unless broadcast
/// there: flash attention's scale and bias of the scores. Running its body
/// on the accumulators before they are stored saves a pass over C. No input
/// may view C's buffer: the tiles run the body while other tiles of C are
/// still unwritten or already updated.
static linalg::GenericOp findInPlaceEpilogue(linalg::GenericOp op, Value c) {
  auto next = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode());
  unsigned rank = cast<MemRefType>(c.getType()).getRank();
  if (!next || !next.hasPureBufferSemantics() || next.getNumDpsInits() != 1 ||
      next.getDpsInits()[0] != c || next.getNumReductionLoops() != 0 ||
      next.getNumLoops() != rank ||
      !next.getMatchingIndexingMap(next.getDpsInitOperand(0)).isIdentity() ||
      !attn::isVectorizableEpilogue(next))
    return {};
  for (OpOperand *input : next.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || type.getRank() != rank || !type.getElementType().isF32() ||
        attn::mayViewBuffer(input->get(), attn::getViewedBuffer(c)))
      return {};
    AffineMap map = next.getMatchingIndexingMap(input);
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      auto cst = dyn_cast<AffineConstantExpr>(e);
      if (!(dim && dim.getPosition() == i) && !(cst && cst.getValue() == 0))
        return {};
    }
    if (isa<AffineDimExpr>(map.getResults().back()) &&
        !isFloatWithUnitInnerStride(input->get(), /*narrow=*/false))
      return {};
  }
  return next;
}

static std::optional<BlockMatmul> matchBlockMatmul(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (loops != 3 && loops != 4)
    return std::nullopt;
  bool batched = loops == 4;
  MLIRContext *ctx = op.getContext();
  // Dims ((g,) i, n, k).
  unsigned lead = batched ? 1 : 0;
  auto dims = [&](ArrayRef<unsigned> positions) {
    SmallVector<AffineExpr> exprs;
    for (unsigned pos : positions)
      exprs.push_back(getAffineDimExpr(pos, ctx));
    return AffineMap::get(loops, 0, exprs, ctx);
  };
  unsigned i = lead, n = lead + 1, k = lead + 2;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<AffineMap> expected =
      batched
          ? SmallVector<AffineMap>{dims({0, i, k}), maps[1], dims({0, i, n})}
          : SmallVector<AffineMap>{dims({i, k}), maps[1], dims({i, n})};
  bool keysMajor = maps[1] == dims({n, k});
  // The batch index g is an m dimension to linalg (B does not use it).
  FailureOr<linalg::ContractionDimensions> contraction =
      linalg::inferContractionDims(op);
  if (maps != expected || (!keysMajor && maps[1] != dims({k, n})) ||
      failed(contraction) || !contraction->batch.empty() ||
      contraction->k.size() != 1 || !isWideningMulAddBody(op))
    return std::nullopt;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  auto aType = dyn_cast<MemRefType>(a.getType());
  Type aElem = aType ? aType.getElementType() : Type();
  if (!aElem || !(aElem.isF32() || aElem.isF16() || aElem.isBF16()) ||
      (keysMajor && !isFloatWithUnitInnerStride(a, /*narrow=*/true)) ||
      !isFloatWithUnitInnerStride(b, /*narrow=*/true) ||
      !isFloatWithUnitInnerStride(c, /*narrow=*/false))
    return std::nullopt;
  linalg::FillOp zeroFill;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
      fill && fill.hasPureBufferSemantics() && fill.getDpsInits()[0] == c)
    if (matchPattern(fill.getInputs()[0], m_PosZeroFloat()))
      zeroFill = fill;
  return BlockMatmul{op, a, b, c, batched, keysMajor, zeroFill, {}};
}

/// The loops both tile forms share: over g (when batched), then rows of C
/// in steps of MR, the rows left over one at a time.
struct TileLoops {
  TileLoops(OpBuilder &b, const BlockMatmul &mm, int64_t vl, int64_t mrMax)
      : b(b), loc(mm.op->getLoc()), mm(mm), vl(vl), mrMax(mrMax) {}

  OpBuilder &b;
  Location loc;
  const BlockMatmul &mm;
  int64_t vl, mrMax;
  Value g; // Batch index when batched.

  Value idx(OpBuilder &nb, int64_t v) {
    return attn::IndexArith(nb, loc).cst(v);
  }
  Value add(OpBuilder &nb, Value x, int64_t c) {
    return attn::IndexArith(nb, loc).add(x, c);
  }

  /// `x - x mod step`: the end of the part of [0, x) covered by full steps.
  Value roundDown(OpBuilder &nb, Value x, int64_t step) {
    if (step == 1)
      return x;
    if (std::optional<int64_t> c = getConstantIntValue(x))
      return idx(nb, *c / step * step);
    return arith::SubIOp::create(
        nb, loc, x, arith::RemUIOp::create(nb, loc, x, idx(nb, step)));
  }

  /// scf.for over [lb, ub) with `step` and no results.
  template <typename Fn>
  void loop(OpBuilder &nb, Value lb, Value ub, int64_t step, Fn body) {
    scf::ForOp::create(nb, loc, lb, ub, idx(nb, step), ValueRange{},
                       [&](OpBuilder &bb, Location, Value iv, ValueRange) {
                         body(bb, iv);
                         scf::YieldOp::create(bb, loc);
                       });
  }

  Value dim(OpBuilder &nb, Value v, int64_t d) {
    return getValueOrCreateConstantIndexOp(nb, loc,
                                           memref::getMixedSize(nb, loc, v, d));
  }

  /// Calls `rowTiles(builder, i0, mr)` for every block of rows of C: mr =
  /// MR, then 1 for the rows left over; inside the loop over g.
  void
  forEachRowBlock(function_ref<void(OpBuilder &, Value, int64_t)> rowTiles) {
    int64_t rank = cast<MemRefType>(mm.c.getType()).getRank();
    Value iExtent = dim(b, mm.c, rank - 2);
    auto rowsOf = [&](OpBuilder &nb) {
      Value iMain = roundDown(nb, iExtent, mrMax);
      loop(nb, idx(nb, 0), iMain, mrMax,
           [&](OpBuilder &tb, Value i0) { rowTiles(tb, i0, mrMax); });
      if (std::optional<int64_t> i = getConstantIntValue(iExtent);
          i && *i % mrMax == 0)
        return;
      loop(nb, iMain, iExtent, 1,
           [&](OpBuilder &tb, Value i0) { rowTiles(tb, i0, 1); });
    };
    if (!mm.batched)
      return rowsOf(b);
    loop(b, idx(b, 0), dim(b, mm.c, 0), 1, [&](OpBuilder &tb, Value gIv) {
      g = gIv;
      rowsOf(tb);
    });
  }

  /// The indices of element (i, n) of C (or A, with n = k), under g.
  SmallVector<Value> at(Value i, Value n) const {
    if (mm.batched)
      return {g, i, n};
    return {i, n};
  }
};

struct OuterProductBuilder : TileLoops {
  OuterProductBuilder(OpBuilder &b, const BlockMatmul &mm, int64_t vl,
                      int64_t mrMax, int64_t nvMax)
      : TileLoops(b, mm, vl, mrMax), nvMax(nvMax) {}

  int64_t nvMax;
  /// B's pairs of k interleaved per column ([K / 2, 2 * N padded to VL]
  /// bf16, on the stack) for vdpbf16ps tiles; null for the FMA tiles.
  Value panel;

  /// An mr x nv-vector tile of C at (i0, n0); `mask`, when set, masks the
  /// single vector column (nv = 1) at the right edge.
  void emitTile(OpBuilder &nb, Value i0, Value n0, Value kExtent, int64_t mr,
                int64_t nv, Value mask) {
    attn::OuterProductOperands operands{mm.a, mm.b, mm.c,
                                        mm.batched ? g : Value()};
    attn::OuterProductTile tile;
    if (panel) {
      operands.b = panel;
      tile = attn::emitOuterProductDotTile(
          nb, loc, operands, vl, i0, n0, mr, nv, 0,
          *getConstantIntValue(kExtent), /*zeroInit=*/bool(mm.zeroFill), mask);
    } else {
      tile = attn::emitOuterProductTile(nb, loc, operands, vl, i0, n0, mr, nv,
                                        nb.getIndexAttr(0), kExtent,
                                        /*zeroInit=*/bool(mm.zeroFill), mask);
    }
    for (int64_t r = 0; r < mr; ++r)
      for (int64_t v = 0; v < nv; ++v) {
        Value acc = tile.acc(r, v);
        SmallVector<Value> indices =
            operands.indices(tile.rows[r], tile.cols[v]);
        if (mm.epilogue)
          acc = applyEpilogue(nb, acc, indices, mask);
        if (mask)
          vector::MaskedStoreOp::create(nb, loc, mm.c, indices, mask, acc);
        else
          vector::StoreOp::create(nb, loc, acc, mm.c, indices);
      }
  }

  /// The epilogue's value for the accumulator `acc` of C at `indices` (a
  /// vector along the last one; `mask` masks the loads of a ragged edge):
  /// its inputs loaded at those indices, 0 along their broadcast
  /// dimensions (one scalar broadcast when broadcast along the last).
  Value applyEpilogue(OpBuilder &nb, Value acc, ArrayRef<Value> indices,
                      Value mask) {
    linalg::GenericOp epilogue = mm.epilogue;
    Block &body = epilogue.getRegion().front();
    auto vecType = VectorType::get({vl}, nb.getF32Type());
    IRMapping map;
    map.map(body.getArgument(epilogue.getNumDpsInputs()), acc);
    for (OpOperand *input : epilogue.getDpsInputOperands()) {
      AffineMap indexing = epilogue.getMatchingIndexingMap(input);
      SmallVector<Value> at;
      for (auto [i, e] : llvm::enumerate(indexing.getResults()))
        at.push_back(isa<AffineDimExpr>(e) ? indices[i] : idx(nb, 0));
      Value loaded;
      if (!isa<AffineDimExpr>(indexing.getResults().back())) {
        loaded = vector::BroadcastOp::create(
            nb, loc, vecType,
            memref::LoadOp::create(nb, loc, input->get(), at));
      } else if (mask) {
        Value zero = arith::ConstantOp::create(
            nb, loc, vecType, DenseElementsAttr::get(vecType, 0.0f));
        loaded = vector::MaskedLoadOp::create(nb, loc, vecType, input->get(),
                                              at, mask, zero);
      } else {
        loaded = vector::LoadOp::create(nb, loc, vecType, input->get(), at);
      }
      map.map(body.getArgument(input->getOperandNumber()), loaded);
    }
    return attn::cloneEpilogueOnVectors(nb, loc, epilogue, map, vl);
  }

  /// All column tiles of rows [i0, i0 + mr).
  void emitRowTiles(OpBuilder &nb, Value i0, int64_t mr, Value nExtent,
                    Value kExtent) {
    // With a static width narrower than NV vectors, use as many full
    // vectors as fit instead of one-vector tiles.
    int64_t nv = nvMax;
    if (std::optional<int64_t> n = getConstantIntValue(nExtent))
      nv = std::max<int64_t>(1, std::min(nvMax, *n / vl));
    Value nMain = roundDown(nb, nExtent, nv * vl);
    loop(nb, idx(nb, 0), nMain, nv * vl, [&](OpBuilder &tb, Value n0) {
      emitTile(tb, i0, n0, kExtent, mr, nv, Value());
    });
    if (std::optional<int64_t> n = getConstantIntValue(nExtent);
        n && *n % (nv * vl) == 0)
      return;
    loop(nb, nMain, nExtent, vl, [&](OpBuilder &tb, Value n0) {
      auto maskType = VectorType::get({vl}, tb.getI1Type());
      Value left = arith::SubIOp::create(tb, loc, nExtent, n0);
      Value mask = vector::CreateMaskOp::create(tb, loc, maskType, left);
      emitTile(tb, i0, n0, kExtent, mr, 1, mask);
    });
  }

  /// Whether the tiles can multiply bf16 pairs: B bf16 (or, `roundsF32`,
  /// f32 rounded to bf16 when packed; A bf16, or f32 rounded to bf16 in
  /// registers) with static, even K and static N.
  bool canDot(bool roundsF32) const {
    auto bType = cast<MemRefType>(mm.b.getType());
    auto cType = cast<MemRefType>(mm.c.getType());
    int64_t k = bType.getDimSize(0), n = cType.getDimSize(cType.getRank() - 1);
    Type aElem = cast<MemRefType>(mm.a.getType()).getElementType();
    Type bElem = bType.getElementType();
    if (!(bElem.isBF16() || (roundsF32 && bElem.isF32())) ||
        !(aElem.isBF16() || aElem.isF32()) || ShapedType::isDynamic(k) ||
        k % 2 != 0 || ShapedType::isDynamic(n))
      return false;
    // Packing B costs about one tile row's multiplications: with a few rows
    // of A (a decode step's single query row) it would cost as much as it
    // saves.
    int64_t rows = 1;
    for (int64_t d : cType.getShape().drop_back()) {
      if (ShapedType::isDynamic(d))
        return false;
      rows *= d;
    }
    if (rows < 2 * mrMax)
      return false;
    return panelScope() != nullptr;
  }

  /// The op at whose body's entry the panel is allocated, or null: the
  /// nearest parallel loop (the flash query blocks' scf.forall: one panel
  /// per iteration, which the OpenMP lowering scopes per iteration like the
  /// blocks' other buffers, see attn-promote-loop-buffers), allocation
  /// scope or function. Not merely the nearest automatic allocation scope:
  /// scf.for is one, but its lowering frees nothing per iteration, so an
  /// alloca in the flash key loop would grow the stack with every key block.
  Operation *panelScope() const {
    for (Operation *p = mm.op->getParentOp(); p; p = p->getParentOp())
      if (isa<scf::ForallOp, scf::ParallelOp, memref::AllocaScopeOp,
              FunctionOpInterface>(p))
        return p->getNumRegions() == 1 && !p->getRegion(0).empty() ? p
                                                                   : nullptr;
    return nullptr;
  }

  /// panel[j, 2 c + t] = B[2 j + t, c] (an f32 B rounded to bf16), zero
  /// beyond N.
  void emitPack(OpBuilder &nb) {
    auto bType = cast<MemRefType>(mm.b.getType());
    int64_t k = bType.getDimSize(0), n = bType.getDimSize(1);
    int64_t padded = llvm::divideCeil(n, vl) * vl;
    auto ab = OpBuilder::atBlockBegin(&panelScope()->getRegion(0).front());
    panel = memref::AllocaOp::create(
        ab, loc, MemRefType::get({k / 2, 2 * padded}, nb.getBF16Type()),
        nb.getI64IntegerAttr(64));
    Type bElem = bType.getElementType();
    auto rowType = VectorType::get({vl}, bElem);
    auto pairType = VectorType::get({vl}, nb.getBF16Type());
    Value zeros = arith::ConstantOp::create(
        nb, loc, rowType,
        DenseElementsAttr::get(rowType,
                               nb.getFloatAttr(bElem, 0.0).getValue()));
    loop(nb, idx(nb, 0), idx(nb, k / 2), 1, [&](OpBuilder &kb, Value j) {
      Value even = arith::MulIOp::create(kb, loc, j, idx(kb, 2));
      Value odd = add(kb, even, 1);
      auto pack = [&](OpBuilder &cb, Value col, Value mask) {
        auto row = [&](Value r) -> Value {
          Value v = mask ? vector::MaskedLoadOp::create(cb, loc, rowType, mm.b,
                                                        ValueRange{r, col},
                                                        mask, zeros)
                               .getResult()
                         : vector::LoadOp::create(cb, loc, rowType, mm.b,
                                                  ValueRange{r, col})
                               .getResult();
          if (v.getType() != pairType)
            v = arith::TruncFOp::create(cb, loc, pairType, v);
          return v;
        };
        Value pairs =
            vector::InterleaveOp::create(cb, loc, row(even), row(odd));
        Value at = arith::MulIOp::create(cb, loc, col, idx(cb, 2));
        vector::StoreOp::create(cb, loc, pairs, panel, ValueRange{j, at});
      };
      int64_t full = n / vl * vl;
      loop(kb, idx(kb, 0), idx(kb, full), vl,
           [&](OpBuilder &cb, Value col) { pack(cb, col, Value()); });
      if (full < n) {
        Value mask = vector::CreateMaskOp::create(
            kb, loc, VectorType::get({vl}, kb.getI1Type()),
            ValueRange{idx(kb, n - full)});
        pack(kb, idx(kb, full), mask);
      }
    });
  }

  void emit() {
    if (dot)
      emitPack(b);
    emitTiles(b);
  }

  /// Use vdpbf16ps tiles on a packed panel (canDot).
  bool dot = false;

  void emitTiles(OpBuilder &b) {
    int64_t rank = cast<MemRefType>(mm.c.getType()).getRank();
    Value nExtent = dim(b, mm.c, rank - 1), kExtent = dim(b, mm.b, 0);
    forEachRowBlock([&](OpBuilder &tb, Value i0, int64_t mr) {
      emitRowTiles(tb, i0, mr, nExtent, kExtent);
    });
  }
};

/// Dot-product tiles for a B [n, k] (keysMajor): MR rows x NJ columns of
/// C as MR * NJ vector accumulators of partial sums along k. Per k step:
/// NJ vector loads of B's rows, MR of A's, MR * NJ FMAs. At the end each
/// row's NJ accumulators are summed across their lanes by one shuffle tree
/// (emitLaneSums) into a vector<NJ> that updates C. This is Q K^T over a
/// KV cache, whose keys are not transposed: one vector.reduction per score
/// (the loops attn-cpu-vectorize-rows would write) costs twice the FMAs in
/// shuffles and a scalar update of C per key.
///
/// The rows left over (a decode step's single query row, or the heads
/// beyond a multiple of MR when the heads are the rows) take one column
/// at a time: with no row to share B's loads with, NJ columns would only
/// interleave the loads of NJ keys' rows, and a KV cache that streams from
/// memory was read more slowly that way (a 4-key one-row tile made such a
/// decode step's attention about 1.2x slower) than in address order.
struct DotProductBuilder : TileLoops {
  DotProductBuilder(OpBuilder &b, const BlockMatmul &mm, int64_t vl,
                    int64_t mrMax, int64_t nj)
      : TileLoops(b, mm, vl, mrMax), nj(nj) {}

  int64_t nj;

  /// Whether the tiles apply: a static K that is a multiple of VL (the k
  /// loop has no ragged step), VL a power of two no smaller than NJ (the
  /// shuffle tree halves the lanes).
  static bool applies(const BlockMatmul &mm, int64_t vl, int64_t nj) {
    int64_t k = cast<MemRefType>(mm.b.getType()).getDimSize(1);
    return mm.keysMajor && !ShapedType::isDynamic(k) && k % vl == 0 &&
           llvm::isPowerOf2_64(vl) && nj <= vl;
  }

  /// vector<VL x f32> of `mem` at `indices`, widened from f16/bf16.
  Value loadF32(OpBuilder &nb, Value mem, ValueRange indices) {
    Type elem = cast<MemRefType>(mem.getType()).getElementType();
    Value v = vector::LoadOp::create(nb, loc, VectorType::get({vl}, elem), mem,
                                     indices);
    if (!elem.isF32())
      v = arith::ExtFOp::create(nb, loc, VectorType::get({vl}, nb.getF32Type()),
                                v);
    return v;
  }

  /// The tile of rows [i0, i0 + mr) and columns [n0, n0 + nc). With `mask`
  /// (the ragged right edge, nLast = N - 1) B's rows beyond N are read as
  /// row N - 1 and their sums are not stored.
  void emitTile(OpBuilder &nb, Value i0, Value n0, int64_t mr, int64_t nc,
                Value nLast, Value mask) {
    int64_t k = cast<MemRefType>(mm.b.getType()).getDimSize(1);
    auto accType = VectorType::get({vl}, nb.getF32Type());
    Value zero = arith::ConstantOp::create(
        nb, loc, accType, DenseElementsAttr::get(accType, 0.0f));
    SmallVector<Value> rows, cols;
    for (int64_t r = 0; r < mr; ++r)
      rows.push_back(add(nb, i0, r));
    for (int64_t t = 0; t < nc; ++t) {
      Value n = add(nb, n0, t);
      cols.push_back(mask ? arith::MinUIOp::create(nb, loc, n, nLast) : n);
    }
    auto kLoop = scf::ForOp::create(
        nb, loc, idx(nb, 0), idx(nb, k), idx(nb, vl),
        SmallVector<Value>(mr * nc, zero),
        [&](OpBuilder &lb, Location, Value kIv, ValueRange accs) {
          SmallVector<Value> bs, next(accs);
          for (Value n : cols)
            bs.push_back(loadF32(lb, mm.b, {n, kIv}));
          for (int64_t r = 0; r < mr; ++r) {
            Value a = loadF32(lb, mm.a, at(rows[r], kIv));
            for (int64_t t = 0; t < nc; ++t)
              next[r * nc + t] =
                  vector::FMAOp::create(lb, loc, a, bs[t], next[r * nc + t]);
          }
          scf::YieldOp::create(lb, loc, next);
        });
    SmallVector<Value> accs(kLoop.getResults());
    auto sumType = VectorType::get({nc}, nb.getF32Type());
    for (int64_t r = 0; r < mr; ++r) {
      Value sums =
          attn::emitLaneSums(nb, loc, ArrayRef(accs).slice(r * nc, nc));
      SmallVector<Value> indices = at(rows[r], n0);
      if (!mm.zeroFill) {
        Value old =
            mask ? vector::MaskedLoadOp::create(
                       nb, loc, sumType, mm.c, indices, mask,
                       arith::ConstantOp::create(
                           nb, loc, sumType,
                           DenseElementsAttr::get(sumType, 0.0f)))
                       .getResult()
                 : vector::LoadOp::create(nb, loc, sumType, mm.c, indices)
                       .getResult();
        sums = arith::AddFOp::create(nb, loc, old, sums);
      }
      if (mask)
        vector::MaskedStoreOp::create(nb, loc, mm.c, indices, mask, sums);
      else
        vector::StoreOp::create(nb, loc, sums, mm.c, indices);
    }
  }

  void emit() {
    int64_t rank = cast<MemRefType>(mm.c.getType()).getRank();
    Value nExtent = dim(b, mm.c, rank - 1);
    forEachRowBlock([&](OpBuilder &tb, Value i0, int64_t mr) {
      int64_t nc = mr == 1 ? 1 : nj;
      Value nMain = roundDown(tb, nExtent, nc);
      loop(tb, idx(tb, 0), nMain, nc, [&](OpBuilder &cb, Value n0) {
        emitTile(cb, i0, n0, mr, nc, Value(), Value());
      });
      if (std::optional<int64_t> n = getConstantIntValue(nExtent);
          nc == 1 || (n && *n % nc == 0))
        return;
      Value ragged = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult,
                                           nMain, nExtent);
      scf::IfOp::create(tb, loc, ragged, [&](OpBuilder &cb, Location) {
        Value left = arith::SubIOp::create(cb, loc, nExtent, nMain);
        Value mask = vector::CreateMaskOp::create(
            cb, loc, VectorType::get({nc}, cb.getI1Type()), left);
        emitTile(cb, i0, nMain, mr, nc,
                 arith::SubIOp::create(cb, loc, nExtent, idx(cb, 1)), mask);
        scf::YieldOp::create(cb, loc);
      });
    });
  }
};

/// Whether the tiles should take their rows from the heads g rather than
/// from the query rows i: G (static) fills at least one MR-row tile, and
/// no epilogue is fused (its inputs are indexed like C). The G query heads
/// that share a KV head read the same K and V blocks; a decode step has
/// one query row per head, so tiles over i would hold one row and load
/// each key G times.
static bool headsAsRows(const BlockMatmul &mm, int64_t mrMax) {
  if (!mm.batched || mm.epilogue)
    return false;
  int64_t heads = cast<MemRefType>(mm.c.getType()).getDimSize(0);
  return !ShapedType::isDynamic(heads) && heads >= mrMax;
}

/// Calls `emitTiles` on the unbatched contraction C[:, i, :] +=
/// A[:, i, :] * B of each query row i (rank-reduced views: the heads are
/// their rows).
static void forEachQueryRow(
    OpBuilder &b, const BlockMatmul &mm,
    function_ref<void(OpBuilder &, const BlockMatmul &)> emitTiles) {
  Location loc = mm.op->getLoc();
  attn::IndexArith ix(b, loc);
  auto sizeOf = [&](OpBuilder &nb, Value v, int64_t d) {
    return memref::getMixedSize(nb, loc, v, d);
  };
  Value rows = getValueOrCreateConstantIndexOp(b, loc, sizeOf(b, mm.c, 1));
  scf::ForOp::create(
      b, loc, ix.cst(0), rows, ix.cst(1), ValueRange{},
      [&](OpBuilder &rb, Location, Value i, ValueRange) {
        // [G, I, X] at row i -> [G, X].
        auto rowView = [&](Value m) -> Value {
          auto type = cast<MemRefType>(m.getType());
          SmallVector<OpFoldResult> offsets = {rb.getIndexAttr(0), i,
                                               rb.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes = {
              sizeOf(rb, m, 0), rb.getIndexAttr(1), sizeOf(rb, m, 2)};
          SmallVector<OpFoldResult> strides(3, rb.getIndexAttr(1));
          MemRefType viewType = memref::SubViewOp::inferRankReducedResultType(
              {type.getDimSize(0), type.getDimSize(2)}, type, offsets, sizes,
              strides);
          return memref::SubViewOp::create(rb, loc, viewType, m, offsets, sizes,
                                           strides);
        };
        BlockMatmul row = mm;
        row.a = rowView(mm.a);
        row.c = rowView(mm.c);
        row.batched = false;
        emitTiles(rb, row);
        scf::YieldOp::create(rb, loc);
      });
}

struct AttnCpuOuterProductMatmulPass
    : public mlir::attn::impl::AttnCpuOuterProductMatmulBase<
          AttnCpuOuterProductMatmulPass> {
  using AttnCpuOuterProductMatmulBase::AttnCpuOuterProductMatmulBase;

  void runOnOperation() override {
    if (vectorWidth < 1 || rowTile < 1 || colVectors < 1 ||
        !llvm::isPowerOf2_64(dotColumns)) {
      getOperation().emitError(
          "attn-cpu-outer-product-matmul: vector-width, row-tile and "
          "col-vectors must be >= 1, dot-columns a power of two");
      return signalPassFailure();
    }
    SmallVector<BlockMatmul> matches;
    getOperation().walk([&](linalg::GenericOp op) {
      std::optional<BlockMatmul> mm = matchBlockMatmul(op);
      if (!mm || (mm->keysMajor &&
                  !DotProductBuilder::applies(*mm, vectorWidth, dotColumns)))
        return;
      // The dot-product tiles' sums are vector<NJ>, not rows of VL lanes:
      // an epilogue stays its own loop there.
      if (fuseEpilogues && !mm->keysMajor)
        mm->epilogue = findInPlaceEpilogue(op, mm->c);
      matches.push_back(*mm);
    });
    for (BlockMatmul &mm : matches) {
      OpBuilder b(mm.op);
      // A B packed for vdpbf16ps is packed once per call: such a
      // contraction keeps its tiles over the query rows (per query row,
      // the views would pack it again for each).
      bool packs = !mm.keysMajor && bf16Dot &&
                   OuterProductBuilder(b, mm, vectorWidth, rowTile, colVectors)
                       .canDot(bf16DotRoundsF32);
      auto emitTiles = [&](OpBuilder &tb, const BlockMatmul &tiled) {
        if (tiled.keysMajor) {
          DotProductBuilder(tb, tiled, vectorWidth, rowTile, dotColumns).emit();
          return;
        }
        OuterProductBuilder builder(tb, tiled, vectorWidth, rowTile,
                                    colVectors);
        builder.dot = packs;
        builder.emit();
      };
      if (headsAsRows(mm, rowTile) && !packs)
        forEachQueryRow(b, mm, emitTiles);
      else
        emitTiles(b, mm);
      mm.op.erase();
      if (mm.zeroFill)
        mm.zeroFill.erase();
      if (mm.epilogue)
        mm.epilogue.erase();
    }
  }
};

} // namespace
