//===- Int8ActivationTile.cpp - VNNI tiles for int8 activations -----------===//
//
// See WeightOnlyTiles.h.
//
//===----------------------------------------------------------------------===//

#include "OuterProductTile.h"
#include "WeightOnlyTiles.h"
#include "attnc/Codegen/CPU/WeightOnlyLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

Int8ActivationTiles::Int8ActivationTiles(Location loc, int64_t vl, int64_t bits,
                                         int64_t group, int64_t k, Value a,
                                         Value b, Value scale, Value rowScale,
                                         bool interleaved)
    : loc(loc), bits(bits), group(group), k(k), lanes(vl),
      interleaved(interleaved), a(a), b(b), scale(scale), rowScale(rowScale) {
  while (group % (4 * lanes) != 0)
    lanes /= 2;
  // int4 in groups of 128 with 16 lanes: a step is one zmm of packed
  // bytes, 4 blocks, whose low and high nibbles are two vpdpbusd operands.
  // Interleaved weights read the activations in k order.
  parts = !interleaved && bits == 4 && lanes == 16 && group % 128 == 0 ? 2 : 1;
  MLIRContext *ctx = a.getContext();
  bytesType = VectorType::get({4 * lanes}, IntegerType::get(ctx, 8));
  wordsType = VectorType::get({lanes}, IntegerType::get(ctx, 32));
  floatsType = VectorType::get({lanes}, Float32Type::get(ctx));
  int64_t blocks = parts * lanes / 8;
  if (bits == 4 && blocks > 1 && !interleaved)
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t block = 0; block < blocks; ++block)
        for (int64_t j = 0; j < 16; ++j)
          blockOrder.push_back(block * 32 + half * 16 + j);
}

Value Int8ActivationTiles::cst(OpBuilder &builder, int64_t v) {
  return arith::ConstantIndexOp::create(builder, loc, v);
}

Value Int8ActivationTiles::splat(OpBuilder &builder, VectorType type,
                                 Attribute v) {
  return arith::ConstantOp::create(builder, loc, type,
                                   DenseElementsAttr::get(type, v));
}

SmallVector<Value> Int8ActivationTiles::loadWeights(OpBuilder &builder,
                                                    Value col, Value kStep) {
  Value word = arith::DivUIOp::create(builder, loc, kStep,
                                      cst(builder, bits == 4 ? 8 : 4));
  Value signBits =
      splat(builder, bytesType, builder.getI8IntegerAttr(bits == 4 ? 8 : -128));
  if (bits == 8) {
    Value words = vector::LoadOp::create(builder, loc, wordsType, b,
                                         ValueRange{col, word});
    return {arith::XOrIOp::create(
        builder, loc, vector::BitCastOp::create(builder, loc, bytesType, words),
        signBits)};
  }
  // int4: the step's blocks in 2 * parts * lanes bytes; the bytes and the
  // bytes shifted down by 4 (as i16 lanes), masked to their low nibbles,
  // are the weights block by block: low halves, then high halves. One part:
  // the two concatenated; two parts: each one operand.
  int64_t bytes = 2 * parts * lanes;
  auto packedType = VectorType::get({bytes}, builder.getI8Type());
  auto shortsType = VectorType::get({bytes / 2}, builder.getI16Type());
  Value words = vector::LoadOp::create(
      builder, loc, VectorType::get({bytes / 4}, builder.getI32Type()), b,
      ValueRange{col, word});
  Value low = vector::BitCastOp::create(builder, loc, packedType, words);
  Value high = vector::BitCastOp::create(
      builder, loc, packedType,
      arith::ShRUIOp::create(
          builder, loc,
          vector::BitCastOp::create(builder, loc, shortsType, words),
          splat(builder, shortsType, builder.getI16IntegerAttr(4))));
  SmallVector<Value> halves = {low, high};
  if (parts == 1) {
    SmallVector<int64_t> concat;
    for (int64_t i = 0; i < 4 * lanes; ++i)
      concat.push_back(i);
    halves = {vector::ShuffleOp::create(builder, loc, low, high, concat)};
  }
  Value nibble = splat(builder, bytesType, builder.getI8IntegerAttr(0x0F));
  SmallVector<Value> unsignedWeights;
  for (Value half : halves)
    unsignedWeights.push_back(arith::XOrIOp::create(
        builder, loc, arith::AndIOp::create(builder, loc, half, nibble),
        signBits));
  return unsignedWeights;
}

void Int8ActivationTiles::allocate(OpBuilder &builder, int64_t rows,
                                   int64_t cols) {
  // Whole vectors are stored and loaded: 64-byte alignment.
  IntegerAttr alignment = builder.getI64IntegerAttr(64);
  if (!interleaved)
    scaleProducts = memref::AllocaOp::create(
        builder, loc,
        MemRefType::get({rows * cols,
                         static_cast<int64_t>(llvm::alignTo(k / group, lanes))},
                        builder.getF32Type()),
        ValueRange{}, alignment);
  // Interleaved tiles read A's rows in place: they take them in k order.
  if (!interleaved)
    preparedRows = memref::AllocaOp::create(
        builder, loc, MemRefType::get({rows, k}, builder.getI8Type()),
        ValueRange{}, alignment);
  preparedOffsets = memref::AllocaOp::create(
      builder, loc,
      MemRefType::get(
          {rows, static_cast<int64_t>(llvm::alignTo(k / group, lanes))},
          builder.getF32Type()),
      ValueRange{}, alignment);
}

void Int8ActivationTiles::prepare(OpBuilder &builder, Value m, int64_t rows) {
  Value ones = splat(builder, bytesType, builder.getI8IntegerAttr(1));
  Value zero = splat(builder, wordsType, builder.getI32IntegerAttr(0));
  for (int64_t i = 0; i < rows; ++i) {
    Value row = arith::AddIOp::create(builder, loc, m, cst(builder, i));
    Value local = cst(builder, i);
    scf::ForOp::create(
        builder, loc, cst(builder, 0), cst(builder, k), cst(builder, group),
        ValueRange{}, [&](OpBuilder &gb, Location l, Value g0, ValueRange) {
          Value g1 = arith::AddIOp::create(gb, l, g0, cst(gb, group));
          auto sums = scf::ForOp::create(
              gb, l, g0, g1, cst(gb, parts * 4 * lanes), ValueRange{zero},
              [&](OpBuilder &sb, Location sl, Value kStep, ValueRange acc) {
                Value bytes = vector::LoadOp::create(
                    sb, sl,
                    VectorType::get({parts * 4 * lanes}, sb.getI8Type()), a,
                    ValueRange{row, kStep});
                if (!blockOrder.empty())
                  bytes = vector::ShuffleOp::create(sb, sl, bytes, bytes,
                                                    blockOrder);
                if (preparedRows)
                  vector::StoreOp::create(sb, sl, bytes, preparedRows,
                                          ValueRange{local, kStep});
                Value sum = acc[0];
                for (int64_t p = 0; p < parts; ++p) {
                  Value part = bytes;
                  if (parts > 1)
                    part = vector::ExtractStridedSliceOp::create(
                        sb, sl, bytes, {p * 4 * lanes}, {4 * lanes}, {1});
                  sum = createVnniDotProduct(sb, sl, sum, ones, part);
                }
                scf::YieldOp::create(sb, sl, ValueRange{sum});
              });
          // The group's offset: minus 8 or 128 times the sum of its bytes;
          // exact in f32 for groups up to 1024 (|offset| < 128 * 128 *
          // group).
          Value sum = vector::ReductionOp::create(
              gb, l, vector::CombiningKind::ADD, sums.getResult(0));
          Value offset = arith::SIToFPOp::create(
              gb, l, gb.getF32Type(),
              arith::SubIOp::create(
                  gb, l, arith::ConstantIntOp::create(gb, l, 0, 32),
                  arith::ShLIOp::create(gb, l, sum,
                                        arith::ConstantIntOp::create(
                                            gb, l, bits == 4 ? 3 : 7, 32))));
          memref::StoreOp::create(
              gb, l, offset, preparedOffsets,
              ValueRange{local,
                         arith::DivUIOp::create(gb, l, g0, cst(gb, group))});
          scf::YieldOp::create(gb, l);
        });
  }
}

SmallVector<Value>
Int8ActivationTiles::emitInterleavedTile(OpBuilder &builder,
                                         ArrayRef<Value> rows, Value col) {
  int64_t mr = rows.size();
  auto words = VectorType::get({kInterleavedColumns}, builder.getI32Type());
  auto bytes = VectorType::get({4 * kInterleavedColumns}, builder.getI8Type());
  auto floats = VectorType::get({kInterleavedColumns}, builder.getF32Type());
  auto word = [&](OpBuilder &wb, uint32_t v) {
    return splat(wb, words, wb.getI32IntegerAttr(static_cast<int32_t>(v)));
  };
  Value block = arith::DivUIOp::create(builder, loc, col,
                                       cst(builder, kInterleavedColumns));
  // Weights per i32 word.
  int64_t perWord = 32 / bits;
  SmallVector<Value> init(
      mr, splat(builder, floats, builder.getF32FloatAttr(0.0f)));
  auto groups = scf::ForOp::create(
      builder, loc, cst(builder, 0), cst(builder, k), cst(builder, group), init,
      [&](OpBuilder &gb, Location l, Value g0, ValueRange accs) {
        Value g = arith::DivUIOp::create(gb, l, g0, cst(gb, group));
        Value w0 = arith::DivUIOp::create(gb, l, g0, cst(gb, perWord));
        Value w1 = arith::AddIOp::create(gb, l, w0, cst(gb, group / perWord));
        SmallVector<Value> zeros(mr, word(gb, 0));
        auto inner = scf::ForOp::create(
            gb, l, w0, w1, cst(gb, 1), zeros,
            [&](OpBuilder &wb, Location il, Value w, ValueRange sums) {
              Value packed = vector::LoadOp::create(
                  wb, il, words, b, ValueRange{block, w, cst(wb, 0)});
              // The unsigned weights (sign bits flipped: w + 8 or w + 128),
              // with the offset of their activation bytes from the word's
              // first k: int4's low nibbles are k..k+3, its high ones
              // k+4..k+7.
              SmallVector<std::pair<Value, int64_t>> operands;
              if (bits == 8) {
                operands.push_back({arith::XOrIOp::create(
                                        wb, il, packed, word(wb, 0x80808080u)),
                                    0});
              } else {
                Value high =
                    arith::ShRUIOp::create(wb, il, packed, word(wb, 4));
                for (auto [v, offset] :
                     {std::pair{packed, int64_t(0)}, {high, int64_t(4)}})
                  operands.push_back({arith::XOrIOp::create(
                                          wb, il,
                                          arith::AndIOp::create(
                                              wb, il, v, word(wb, 0x0F0F0F0Fu)),
                                          word(wb, 0x08080808u)),
                                      offset});
              }
              SmallVector<Value> next(sums.begin(), sums.end());
              Value k0 = arith::MulIOp::create(wb, il, w, cst(wb, perWord));
              for (auto [unsignedWords, byteOffset] : operands) {
                Value weights =
                    vector::BitCastOp::create(wb, il, bytes, unsignedWords);
                Value at = byteOffset == 0
                               ? k0
                               : arith::AddIOp::create(wb, il, k0,
                                                       cst(wb, byteOffset));
                for (int64_t i = 0; i < mr; ++i) {
                  // The row's 4 activation bytes, in every lane.
                  Value four = vector::LoadOp::create(
                      wb, il, VectorType::get({4}, wb.getI8Type()), a,
                      ValueRange{rows[i], at});
                  Value x = vector::BitCastOp::create(
                      wb, il, bytes,
                      vector::BroadcastOp::create(
                          wb, il, words,
                          vector::ExtractOp::create(
                              wb, il,
                              vector::BitCastOp::create(
                                  wb, il, VectorType::get({1}, wb.getI32Type()),
                                  four),
                              0)));
                  next[i] = createVnniDotProduct(wb, il, next[i], weights, x);
                }
              }
              scf::YieldOp::create(wb, il, next);
            });
        // Each lane's exact sum plus the group's offset, times the column's
        // scale and the row's.
        Value s = vector::LoadOp::create(gb, l, floats, scale,
                                         ValueRange{block, g, cst(gb, 0)});
        SmallVector<Value> next;
        for (int64_t i = 0; i < mr; ++i) {
          Value r =
              memref::LoadOp::create(gb, l, rowScale, ValueRange{rows[i], g});
          Value offset = memref::LoadOp::create(gb, l, preparedOffsets,
                                                ValueRange{cst(gb, i), g});
          Value sum = arith::AddFOp::create(
              gb, l, arith::SIToFPOp::create(gb, l, floats, inner.getResult(i)),
              vector::BroadcastOp::create(gb, l, floats, offset));
          Value both = arith::MulFOp::create(
              gb, l, s, vector::BroadcastOp::create(gb, l, floats, r));
          next.push_back(vector::FMAOp::create(gb, l, sum, both, accs[i]));
        }
        scf::YieldOp::create(gb, l, next);
      });
  return SmallVector<Value>(groups.getResults());
}

SmallVector<Value> Int8ActivationTiles::emitTile(OpBuilder &builder,
                                                 ArrayRef<Value> rows,
                                                 ArrayRef<Value> cols) {
  if (interleaved)
    return emitInterleavedTile(builder, rows, cols.front());
  int64_t mr = rows.size(), nr = cols.size();
  Value zeros = splat(builder, floatsType, builder.getF32FloatAttr(0));
  // S[n, g] * R[m, g] of every output, all groups a vector at a time; the
  // last vector of a row masked where the groups do not fill it.
  int64_t groupCount = k / group;
  // Each output's accumulator starts at the scaled offsets of its groups,
  // lane l holding those of groups l, l + lanes, ...: the lanes are summed
  // in the end, so the integer sums start at zero instead of loading their
  // offsets once per group and column.
  SmallVector<Value> init(mr * nr);
  for (int64_t c = 0; c < groupCount; c += lanes) {
    Value at = cst(builder, c);
    Value mask;
    if (groupCount - c < lanes)
      mask = vector::ConstantMaskOp::create(
          builder, loc, VectorType::get({lanes}, builder.getI1Type()),
          ArrayRef<int64_t>{groupCount - c});
    auto load = [&](Value source, Value index) -> Value {
      if (mask)
        return vector::MaskedLoadOp::create(builder, loc, floatsType, source,
                                            ValueRange{index, at}, mask, zeros);
      return vector::LoadOp::create(builder, loc, floatsType, source,
                                    ValueRange{index, at});
    };
    SmallVector<Value> rowScales, rowOffsets;
    for (int64_t i = 0; i < mr; ++i) {
      rowScales.push_back(load(rowScale, rows[i]));
      rowOffsets.push_back(load(preparedOffsets, cst(builder, i)));
    }
    for (int64_t j = 0; j < nr; ++j) {
      Value s = load(scale, cols[j]);
      for (int64_t i = 0; i < mr; ++i) {
        Value product = arith::MulFOp::create(builder, loc, s, rowScales[i]);
        vector::StoreOp::create(builder, loc, product, scaleProducts,
                                ValueRange{cst(builder, i * nr + j), at});
        Value &start = init[i * nr + j];
        start = c == 0 ? Value(arith::MulFOp::create(builder, loc, product,
                                                     rowOffsets[i]))
                       : Value(vector::FMAOp::create(builder, loc, product,
                                                     rowOffsets[i], start));
      }
    }
  }
  auto groups = scf::ForOp::create(
      builder, loc, cst(builder, 0), cst(builder, k), cst(builder, group), init,
      [&](OpBuilder &gb, Location l, Value g0, ValueRange accs) {
        Value g = arith::DivUIOp::create(gb, l, g0, cst(gb, group));
        SmallVector<Value> partInit(
            mr * nr, splat(gb, wordsType, gb.getI32IntegerAttr(0)));
        Value g1 = arith::AddIOp::create(gb, l, g0, cst(gb, group));
        auto inner = scf::ForOp::create(
            gb, l, g0, g1, cst(gb, parts * 4 * lanes), partInit,
            [&](OpBuilder &lb, Location il, Value kStep, ValueRange sums) {
              SmallVector<Value> next(sums.begin(), sums.end());
              // as[i * parts + p]: part p of row i's prepared bytes.
              SmallVector<Value> as;
              for (int64_t i = 0; i < mr; ++i)
                for (int64_t p = 0; p < parts; ++p) {
                  Value at = kStep;
                  if (p > 0)
                    at = arith::AddIOp::create(lb, il, kStep,
                                               cst(lb, p * 4 * lanes));
                  as.push_back(
                      vector::LoadOp::create(lb, il, bytesType, preparedRows,
                                             ValueRange{cst(lb, i), at}));
                }
              for (int64_t j = 0; j < nr; ++j) {
                SmallVector<Value> w = loadWeights(lb, cols[j], kStep);
                for (int64_t i = 0; i < mr; ++i)
                  for (int64_t p = 0; p < parts; ++p)
                    next[i * nr + j] = createVnniDotProduct(
                        lb, il, next[i * nr + j], w[p], as[i * parts + p]);
              }
              scf::YieldOp::create(lb, il, next);
            });
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t j = 0; j < nr; ++j) {
          for (int64_t i = 0; i < mr; ++i) {
            Value both = vector::BroadcastOp::create(
                gb, l, floatsType,
                memref::LoadOp::create(gb, l, scaleProducts,
                                       ValueRange{cst(gb, i * nr + j), g}));
            next[i * nr + j] = vector::FMAOp::create(
                gb, l,
                arith::SIToFPOp::create(gb, l, floatsType,
                                        inner.getResult(i * nr + j)),
                both, accs[i * nr + j]);
          }
        }
        scf::YieldOp::create(gb, l, next);
      });
  // A row of more than 8 groups is unrolled 4 groups at a time rather than
  // fully (LLVM's choice for 16 groups): the fully unrolled column body of
  // 16 groups (K = 2048) took 1.1x the time of a TinyLlama-shaped int4a or
  // int8a decode step, at 1 and 2 threads. Up to 8 groups stay LLVM's (4
  // at a time made GPT-2-small's rows of 6 groups 1.1x slower).
  if (groupCount > 8)
    setUnrollCount(groups, 4);
  return SmallVector<Value>(groups.getResults());
}
