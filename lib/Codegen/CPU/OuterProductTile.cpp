//===- OuterProductTile.cpp - MR x NV outer-product register tiles --------===//

#include "OuterProductTile.h"

#include "Codegen/Common/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

SmallVector<Value> OuterProductOperands::indices(Value row, Value col) const {
  if (batch)
    return {batch, row, col};
  return {row, col};
}

OuterProductTile mlir::attn::emitOuterProductTile(
    OpBuilder &b, Location loc, const OuterProductOperands &operands,
    int64_t vl, Value m0, Value n0, int64_t mr, int64_t nv, OpFoldResult kBegin,
    OpFoldResult kEnd, bool zeroInit, Value mask) {
  IndexArith ix(b, loc);
  bool int8 = operands.int8;
  auto vecType =
      VectorType::get({vl}, int8 ? Type(b.getI32Type()) : Type(b.getF32Type()));
  auto bytesType = VectorType::get({4 * vl}, b.getI8Type());
  Value zero = arith::ConstantOp::create(
      b, loc, vecType, cast<TypedAttr>(b.getZeroAttr(vecType)));
  OuterProductTile tile;
  for (int64_t r = 0; r < mr; ++r)
    tile.rows.push_back(ix.add(m0, r));
  SmallVector<Value> bCols;
  for (int64_t v = 0; v < nv; ++v) {
    tile.cols.push_back(ix.add(n0, v * vl));
    bCols.push_back(operands.bColumn ? ix.add(operands.bColumn, v * vl)
                                     : tile.cols.back());
  }
  auto load = [&](OpBuilder &lb, Value base, ValueRange indices) -> Value {
    if (mask)
      return vector::MaskedLoadOp::create(lb, loc, vecType, base, indices, mask,
                                          zero);
    return vector::LoadOp::create(lb, loc, vecType, base, indices);
  };
  SmallVector<Value> init;
  for (Value row : tile.rows)
    for (Value col : tile.cols)
      init.push_back(
          zeroInit ? zero : load(b, operands.c, operands.indices(row, col)));
  Value step = ix.cst(1);
  Value upper = getValueOrCreateConstantIndexOp(b, loc, kEnd);
  Value lower = getValueOrCreateConstantIndexOp(b, loc, kBegin);
  auto kLoop = scf::ForOp::create(
      b, loc, lower, upper, step, init,
      [&](OpBuilder &lb, Location, Value k, ValueRange accs) {
        SmallVector<Value> bs;
        for (Value col : bCols)
          bs.push_back(load(lb, operands.b, ValueRange{k, col}));
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t r = 0; r < mr && int8; ++r) {
          // A's 4 bytes of word k, in every lane.
          Value k4 = arith::MulIOp::create(
              lb, loc, k, arith::ConstantIndexOp::create(lb, loc, 4));
          Value word = vector::LoadOp::create(
              lb, loc, VectorType::get({4}, lb.getI8Type()), operands.a,
              operands.indices(tile.rows[r], k4));
          word = vector::BitCastOp::create(
              lb, loc, VectorType::get({1}, lb.getI32Type()), word);
          Value splat = vector::BroadcastOp::create(
              lb, loc, vecType,
              vector::ExtractOp::create(lb, loc, word, ArrayRef<int64_t>{0}));
          splat = vector::BitCastOp::create(lb, loc, bytesType, splat);
          for (int64_t v = 0; v < nv; ++v) {
            Value w = vector::BitCastOp::create(lb, loc, bytesType, bs[v]);
            next[r * nv + v] =
                LLVM::CallIntrinsicOp::create(
                    lb, loc, vecType,
                    lb.getStringAttr("llvm.x86.avx512.vpdpbusd." +
                                     std::to_string(vl * 32)),
                    ValueRange{next[r * nv + v], splat, w})
                    .getResult(0);
          }
        }
        for (int64_t r = 0; r < mr && !int8; ++r) {
          Value a = memref::LoadOp::create(lb, loc, operands.a,
                                           operands.indices(tile.rows[r], k));
          Value splat = vector::BroadcastOp::create(lb, loc, vecType, a);
          for (int64_t v = 0; v < nv; ++v)
            next[r * nv + v] =
                vector::FMAOp::create(lb, loc, splat, bs[v], next[r * nv + v]);
        }
        scf::YieldOp::create(lb, loc, next);
      });
  tile.accs.assign(kLoop.getResults().begin(), kLoop.getResults().end());
  return tile;
}
