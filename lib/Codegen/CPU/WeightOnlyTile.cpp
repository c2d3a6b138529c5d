//===- WeightOnlyTile.cpp - weight-only tiles with float activations ------===//
//
// See WeightOnlyTiles.h.
//
//===----------------------------------------------------------------------===//

#include "WeightOnlyTiles.h"

#include "attnc/Codegen/CPU/WeightOnlyLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Independent FMA chains a tile keeps at least: about the FMA latency
/// times its throughput.
constexpr int64_t kMinChains = 4;
/// How far ahead a decode step's tiles prefetch, into L2. TinyLlama-shaped
/// int8 step at 1 thread: 8192 took 0.87x the time of 4096, 16384 1.02x of
/// 8192.
constexpr int64_t kPrefetchBytes = 8192;
/// A prefetch fetches one line.
constexpr int64_t kCacheLineBytes = 64;

Value cstIdx(OpBuilder &builder, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(builder, loc, v).getResult();
}
} // namespace

void mlir::attn::setUnrollCount(scf::ForOp loop, int64_t count) {
  MLIRContext *ctx = loop.getContext();
  auto unroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/{}, IntegerAttr::get(IntegerType::get(ctx, 32), count),
      /*runtimeDisable=*/{}, /*full=*/{}, {}, {}, {});
  // The SCF and control flow lowerings carry it to the loop's latch,
  // llvm.br's loop_annotation (LLVM's llvm.loop.unroll.count).
  loop->setAttr("loop_annotation", LLVM::LoopAnnotationAttr::get(
                                       ctx, {}, {}, {}, unroll, {}, {}, {}, {},
                                       {}, {}, {}, {}, {}, {}, {}));
}

WeightOnlyTiles::WeightOnlyTiles(Location loc, int64_t vl, int64_t bits,
                                 int64_t group, bool lookup, bool bf16Dot,
                                 int64_t kSize, Value a, Value b, Value scales)
    : loc(loc), vl(vl), bits(bits), group(group), kSize(kSize), a(a), b(b),
      scales(scales) {
  tables = bits == 4 && lookup && vl == 16;
  wide = tables && group % kInt4WideWeights == 0;
  dot = wide && bf16Dot;
}

int64_t WeightOnlyTiles::vectorsPerLoad() const {
  if (wide)
    return kInt4WideWeights / kPerVector();
  return bits == 4 ? 2 : 1;
}

int64_t WeightOnlyTiles::kPerVector() const { return dot ? 2 * vl : vl; }

Type WeightOnlyTiles::preparedType(OpBuilder &builder) const {
  return dot ? Type(builder.getBF16Type()) : Type(builder.getF32Type());
}

void WeightOnlyTiles::allocate(OpBuilder &builder, int64_t rows, int64_t cols) {
  wideRows = {};
  if (wide)
    wideRows = memref::AllocaOp::create(
        builder, loc, MemRefType::get({rows, kSize}, preparedType(builder)),
        ValueRange{}, builder.getI64IntegerAttr(64));
}

// Each run of 128 weights' activations in the order the nibbles look their
// weights up: nibble p of word l is lane l of vector p. With `dot`, the
// words are 16-bit lanes (word j is the low or high half of 32-bit word
// j / 2) and the activations are rounded to bf16 once here.
void WeightOnlyTiles::prepare(OpBuilder &pb, Value m, int64_t rows) {
  if (!wide)
    return;
  SmallVector<int64_t> order;
  int64_t nibbles = vectorsPerLoad(), words = kPerVector();
  for (int64_t nibble = 0; nibble < nibbles; ++nibble)
    for (int64_t word = 0; word < words; ++word)
      order.push_back(
          dot ? mlir::attn::int4WideWeight(word / 2, 4 * (word % 2) + nibble)
              : mlir::attn::int4WideWeight(word, nibble));
  Type elem = cast<MemRefType>(a.getType()).getElementType();
  auto runType = VectorType::get({kInt4WideWeights}, elem);
  auto f32Run = VectorType::get({kInt4WideWeights}, pb.getF32Type());
  auto preparedRun = VectorType::get({kInt4WideWeights}, preparedType(pb));
  for (int64_t i = 0; i < rows; ++i) {
    Value row =
        i == 0 ? m : arith::AddIOp::create(pb, loc, m, cstIdx(pb, loc, i));
    scf::ForOp::create(
        pb, loc, cstIdx(pb, loc, 0), cstIdx(pb, loc, kSize),
        cstIdx(pb, loc, kInt4WideWeights), ValueRange{},
        [&](OpBuilder &rb, Location l, Value k, ValueRange) {
          Value run =
              vector::LoadOp::create(rb, l, runType, a, ValueRange{row, k});
          if (!elem.isF32() && elem != preparedRun.getElementType())
            run = arith::ExtFOp::create(rb, l, f32Run, run);
          if (dot && !elem.isBF16())
            run = arith::TruncFOp::create(rb, l, preparedRun, run);
          vector::StoreOp::create(
              rb, l, vector::ShuffleOp::create(rb, l, run, run, order),
              wideRows, ValueRange{cstIdx(rb, l, i), k});
          scf::YieldOp::create(rb, l);
        });
  }
}

Value WeightOnlyTiles::loadActivations(OpBuilder &builder, Location l,
                                       Value row, Value k) {
  auto vecType = VectorType::get({vl}, builder.getF32Type());
  Type elem = cast<MemRefType>(a.getType()).getElementType();
  Value v = vector::LoadOp::create(builder, l, VectorType::get({vl}, elem), a,
                                   ValueRange{row, k});
  return elem.isF32() ? v : arith::ExtFOp::create(builder, l, vecType, v);
}

SmallVector<Value> WeightOnlyTiles::loadWeights(OpBuilder &lb, Location l,
                                                Value row, Value k,
                                                Value table) {
  Type i32 = lb.getI32Type();
  // int8: word k / 4; int4: block k / 32 is words [4 * (k / 32), + 4).
  Value kWord = arith::DivUIOp::create(
      lb, l, k, arith::ConstantIndexOp::create(lb, l, bits == 4 ? 8 : 4));
  // vpermps: 16 f32 lanes picked by the low 4 bits of each index; vpermw
  // (dot): 32 16-bit lanes by the low 5, from a table of 16 bf16 in both
  // halves.
  auto permute = [&](Value index) {
    return LLVM::CallIntrinsicOp::create(
               lb, l, table.getType(),
               lb.getStringAttr(dot ? "llvm.x86.avx512.permvar.hi.512"
                                    : "llvm.x86.avx512.permvar.sf.512"),
               ValueRange{table, index})
        .getResult(0);
  };
  auto laneType = VectorType::get({vl}, i32);
  auto splat = [&](VectorType type, int64_t v) {
    return arith::ConstantOp::create(
        lb, l, type,
        DenseElementsAttr::get(type,
                               IntegerAttr::get(type.getElementType(), v)));
  };
  if (wide) {
    // The next nibble's bits above the index's do not matter: no masks.
    auto indexType =
        dot ? VectorType::get({2 * vl}, lb.getI16Type()) : laneType;
    Value words =
        vector::LoadOp::create(lb, l, laneType, b, ValueRange{row, kWord});
    if (dot)
      words = vector::BitCastOp::create(lb, l, indexType, words);
    SmallVector<Value> weights;
    for (int64_t nibble = 0; nibble < vectorsPerLoad(); ++nibble) {
      Value weight =
          permute(nibble ? arith::ShRUIOp::create(lb, l, words,
                                                  splat(indexType, 4 * nibble))
                               .getResult()
                         : words);
      if (dot)
        weight = vector::BitCastOp::create(
            lb, l, VectorType::get({2 * vl}, lb.getBF16Type()), weight);
      weights.push_back(weight);
    }
    return weights;
  }
  Value words = vector::LoadOp::create(lb, l, VectorType::get({vl / 4}, i32), b,
                                       ValueRange{row, kWord});
  Value bytes = vector::BitCastOp::create(
      lb, l, VectorType::get({vl}, lb.getI8Type()), words);
  auto vecType = VectorType::get({vl}, lb.getF32Type());
  if (bits == 8)
    return {arith::SIToFPOp::create(lb, l, vecType, bytes)};
  if (!table) {
    Value lanes = arith::ExtSIOp::create(lb, l, laneType, bytes);
    Value up = splat(laneType, 28);
    Value lo = arith::ShRSIOp::create(
        lb, l, arith::ShLIOp::create(lb, l, lanes, up), up);
    Value hi = arith::ShRSIOp::create(lb, l, lanes, splat(laneType, 4));
    return {arith::SIToFPOp::create(lb, l, vecType, lo),
            arith::SIToFPOp::create(lb, l, vecType, hi)};
  }
  Value low = arith::ExtUIOp::create(lb, l, laneType, bytes);
  Value high = arith::ShRUIOp::create(lb, l, low, splat(laneType, 4));
  return {permute(low), permute(high)};
}

SmallVector<Value> WeightOnlyTiles::emitTile(OpBuilder &nb,
                                             ArrayRef<Value> rows,
                                             ArrayRef<Value> cols) {
  int64_t mr = rows.size(), nr = cols.size();
  auto vecType = VectorType::get({vl}, nb.getF32Type());
  Value zero = arith::ConstantOp::create(nb, loc, vecType,
                                         DenseElementsAttr::get(vecType, 0.0f));
  SmallVector<Value> init(mr * nr, zero);
  // A small tile (a decode step's single row) would leave
  // one or two FMA chains, each waiting on the previous FMA's latency:
  // the tile's k steps are then split among `chains` accumulators, so
  // that the weights are still read as one sequential stream.
  //
  // Per group, the products of the unscaled integer weights are summed
  // in the chains, which the group's scale (one per column) multiplies
  // once into the totals; the inner loop is one conversion and one FMA
  // per loaded vector. Except int4 with `int4-lookup`: each group and
  // column looks its weights up, already scaled, in a table of 16
  // values (loadWeights), so the chains run over all of k and are
  // summed once; that took 0.76x the time of a TinyLlama-shaped int4
  // decode step.
  int64_t perLoad = vectorsPerLoad(), loadK = perLoad * kPerVector();
  int64_t tileAccs = mr * nr;
  int64_t wanted = std::max<int64_t>(1, kMinChains / tileAccs);
  int64_t loads = 1;
  while (loads * perLoad < wanted && group % (2 * loads * loadK) == 0)
    loads *= 2;
  int64_t chains = 1;
  while (2 * chains <= std::min(wanted, loads * perLoad))
    chains *= 2;
  // Chain c of output t is slot c * tileAccs + t.
  auto sumChains = [&](OpBuilder &ob, Location l, ValueRange parts) {
    SmallVector<Value> sums(parts);
    for (int64_t width = chains; width > 1; width /= 2)
      for (int64_t c = 0; c < width / 2; ++c)
        for (int64_t t = 0; t < tileAccs; ++t)
          sums[c * tileAccs + t] =
              arith::AddFOp::create(ob, l, sums[c * tileAccs + t],
                                    sums[(c + width / 2) * tileAccs + t]);
    sums.resize(tileAccs);
    return sums;
  };
  // A single-row tile (a decode step's) prefetches the weights
  // kPrefetchBytes ahead, each group's lines before its loads, through
  // a 1-D view of the packed weight (rows are contiguous). Its conversions
  // leave too few loads in flight for the hardware prefetchers to keep up.
  // Prefetches go to L2 (prefetcht1): into L1 they evicted the
  // activation row that every column reads again (K = 5632 rows read
  // at about 60% of the speed of K = 2048 ones): the TinyLlama shape's
  // int8 step took 0.79x the time of the L1 prefetch 4 KiB ahead at 1
  // thread.
  // The distance is clamped once per column, to the last row's start,
  // so that every prefetch stays inside B with no clamp per load. In
  // the group loop rather than next to the loads: 0.97x the int8
  // step's time in both orders. (A group of fewer than 64 bytes still
  // prefetches a line: repeats, which cost a load slot each.)
  SmallVector<Value> prefetchBases(nr);
  Value flatWeights;
  auto weightType = cast<MemRefType>(b.getType());
  if (mr == 1 && weightType.getLayout().isIdentity() &&
      weightType.hasStaticShape()) {
    int64_t rowWords = weightType.getDimSize(1);
    flatWeights = memref::CollapseShapeOp::create(
        nb, loc, b, ArrayRef<ReassociationIndices>{{0, 1}});
    Value lastRowStart =
        cstIdx(nb, loc, weightType.getNumElements() - rowWords);
    for (int64_t j = 0; j < nr; ++j)
      prefetchBases[j] = arith::MinUIOp::create(
          nb, loc,
          arith::AddIOp::create(
              nb, loc,
              arith::MulIOp::create(nb, loc, cols[j],
                                    cstIdx(nb, loc, rowWords)),
              cstIdx(nb, loc, kPrefetchBytes / 4)),
          lastRowStart);
  }
  SmallVector<Value> groupInit(init);
  if (tables)
    groupInit.append((chains - 1) * tileAccs, zero);
  SmallVector<Value> partInit(tileAccs * chains, zero);
  auto groups = scf::ForOp::create(
      nb, loc, cstIdx(nb, loc, 0), cstIdx(nb, loc, kSize),
      cstIdx(nb, loc, group), groupInit,
      [&](OpBuilder &gb, Location l, Value g0, ValueRange accs) {
        Value g1 = arith::AddIOp::create(gb, l, g0, cstIdx(gb, l, group));
        if (flatWeights) {
          // int8: word k / 4; int4: k / 8.
          Value word = arith::DivUIOp::create(gb, l, g0,
                                              cstIdx(gb, l, bits == 4 ? 8 : 4));
          int64_t groupBytes = group * bits / 8;
          for (int64_t j = 0; j < nr; ++j)
            for (int64_t at = 0; at < groupBytes; at += kCacheLineBytes)
              memref::PrefetchOp::create(
                  gb, l, flatWeights,
                  ValueRange{arith::AddIOp::create(
                      gb, l, prefetchBases[j],
                      at == 0 ? word
                              : arith::AddIOp::create(gb, l, word,
                                                      cstIdx(gb, l, at / 4))
                                    .getResult())},
                  /*isWrite=*/false, /*localityHint=*/2,
                  /*isDataCache=*/true);
        }
        Value groupIndex;
        auto scaleOf = [&](Value col) -> Value {
          if (!groupIndex)
            groupIndex =
                arith::DivUIOp::create(gb, l, g0, cstIdx(gb, l, group));
          return vector::BroadcastOp::create(
              gb, l, vecType,
              memref::LoadOp::create(gb, l, scales,
                                     ValueRange{col, groupIndex}));
        };
        SmallVector<Value> columnTables;
        if (tables) {
          // Lane i: the nibble i as a two's complement int4.
          SmallVector<float> values;
          for (int64_t i = 0; i < 16; ++i)
            values.push_back(static_cast<float>(i < 8 ? i : i - 16));
          Value nibbles = arith::ConstantOp::create(
              gb, l, vecType,
              DenseElementsAttr::get(vecType, ArrayRef<float>(values)));
          for (Value col : cols) {
            Value table = arith::MulFOp::create(gb, l, nibbles, scaleOf(col));
            if (dot) {
              // In both halves of vpermw's 32 entries, rounded to bf16:
              // one vcvtne2ps2bf16 of the table twice (LLVM makes a
              // truncation of the table repeated into a vcvtneps2bf16 and
              // an insert).
              table = vector::BitCastOp::create(
                  gb, l, VectorType::get({2 * vl}, gb.getI16Type()),
                  LLVM::CallIntrinsicOp::create(
                      gb, l, VectorType::get({2 * vl}, gb.getBF16Type()),
                      gb.getStringAttr("llvm.x86.avx512bf16.cvtne2ps2bf16.512"),
                      ValueRange{table, table})
                      .getResult(0));
            }
            columnTables.push_back(table);
          }
        }
        auto inner = scf::ForOp::create(
            gb, l, g0, g1, cstIdx(gb, l, loadK * loads),
            tables ? ValueRange(accs) : ValueRange(partInit),
            [&](OpBuilder &lb, Location il, Value k0, ValueRange parts) {
              // Vectors beyond `chains` add into the chains in turn.
              SmallVector<Value> next(parts.begin(), parts.end());
              auto at = [&](int64_t offset) {
                return offset == 0 ? k0
                                   : arith::AddIOp::create(
                                         lb, il, k0, cstIdx(lb, il, offset))
                                         .getResult();
              };
              for (int64_t u = 0; u < loads; ++u) {
                Value kLoad = at(u * loadK);
                SmallVector<SmallVector<Value>> bs;
                for (auto [j, col] : llvm::enumerate(cols))
                  bs.push_back(loadWeights(lb, il, col, kLoad,
                                           tables ? columnTables[j] : Value()));
                for (int64_t p = 0; p < perLoad; ++p) {
                  int64_t chain = (u * perLoad + p) % chains;
                  Value k = p == 0 ? kLoad : at(u * loadK + p * kPerVector());
                  for (int64_t i = 0; i < mr; ++i) {
                    Value av = wideRows ? vector::LoadOp::create(
                                              lb, il,
                                              VectorType::get({kPerVector()},
                                                              preparedType(lb)),
                                              wideRows,
                                              ValueRange{cstIdx(lb, il, i), k})
                                              .getResult()
                                        : loadActivations(lb, il, rows[i], k);
                    for (int64_t j = 0; j < nr; ++j) {
                      int64_t slot = chain * tileAccs + i * nr + j;
                      // vdpbf16ps adds each pair of lanes' products into
                      // one f32 lane: the lane sums are the same.
                      next[slot] =
                          dot ? x86vector::DotBF16Op::create(
                                    lb, il, vecType, next[slot], av, bs[j][p])
                                    .getResult()
                              : vector::FMAOp::create(lb, il, av, bs[j][p],
                                                      next[slot])
                                    .getResult();
                    }
                  }
                }
              }
              scf::YieldOp::create(lb, il, next);
            });
        if (tables) {
          scf::YieldOp::create(gb, l, inner.getResults());
          return;
        }
        SmallVector<Value> sums = sumChains(gb, l, inner.getResults());
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t j = 0; j < nr; ++j) {
          Value scale = scaleOf(cols[j]);
          for (int64_t i = 0; i < mr; ++i)
            next[i * nr + j] = vector::FMAOp::create(gb, l, sums[i * nr + j],
                                                     scale, accs[i * nr + j]);
        }
        scf::YieldOp::create(gb, l, next);
      });
  // As the int8-activation tiles' rows: more than 8 groups unrolled 4 at a
  // time (the TinyLlama shape's int4 step in groups of 128, one zmm each,
  // at 1 thread: 0.96-0.98x the time of LLVM's own unrolling). Larger
  // groups' inner loops are fully unrolled by LLVM first, so the group
  // loop is innermost by then (groups of 256 and 512 compile without a
  // "loop not unrolled" remark).
  if (wide && kSize / group > 8)
    setUnrollCount(groups, 4);
  SmallVector<Value> totals(groups.getResults());
  if (tables)
    totals = sumChains(nb, loc, totals);
  return totals;
}
