//===- OuterProductTile.cpp - MR x NV outer-product register tiles --------===//

#include "OuterProductTile.h"

#include "Codegen/Common/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;

SmallVector<Value> OuterProductOperands::indices(Value row, Value col) const {
  if (batch)
    return {batch, row, col};
  return {row, col};
}

/// The tile's rows and columns, and in `bCols` the B column of each of its
/// vectors.
static OuterProductTile placeTile(IndexArith &ix,
                                  const OuterProductOperands &operands,
                                  int64_t vl, Value m0, Value n0, int64_t mr,
                                  int64_t nv, SmallVectorImpl<Value> &bCols) {
  OuterProductTile tile;
  for (int64_t r = 0; r < mr; ++r)
    tile.rows.push_back(ix.add(m0, r));
  for (int64_t v = 0; v < nv; ++v) {
    tile.cols.push_back(ix.add(n0, v * vl));
    bCols.push_back(operands.bColumn ? ix.add(operands.bColumn, v * vl)
                                     : tile.cols.back());
  }
  return tile;
}

/// C's vectors under the tile (masked where `mask` is given), or zeros.
static SmallVector<Value> loadAccumulators(OpBuilder &b, Location loc,
                                           const OuterProductOperands &operands,
                                           const OuterProductTile &tile,
                                           Value zero, bool zeroInit,
                                           Value mask) {
  auto type = cast<VectorType>(zero.getType());
  SmallVector<Value> init;
  for (Value row : tile.rows)
    for (Value col : tile.cols) {
      if (zeroInit) {
        init.push_back(zero);
        continue;
      }
      SmallVector<Value> indices = operands.indices(row, col);
      if (mask)
        init.push_back(vector::MaskedLoadOp::create(b, loc, type, operands.c,
                                                    indices, mask, zero));
      else
        init.push_back(
            vector::LoadOp::create(b, loc, type, operands.c, indices));
    }
  return init;
}

Value mlir::attn::createVnniDotProduct(OpBuilder &b, Location loc, Value acc,
                                       Value unsignedBytes, Value signedBytes) {
  int64_t lanes = cast<VectorType>(acc.getType()).getNumElements();
  return LLVM::CallIntrinsicOp::create(
             b, loc, acc.getType(),
             b.getStringAttr("llvm.x86.avx512.vpdpbusd." +
                             std::to_string(lanes * 32)),
             ValueRange{acc, unsignedBytes, signedBytes})
      .getResult(0);
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
  SmallVector<Value> bCols;
  OuterProductTile tile = placeTile(ix, operands, vl, m0, n0, mr, nv, bCols);
  auto load = [&](OpBuilder &lb, Value base, ValueRange indices) -> Value {
    if (mask)
      return vector::MaskedLoadOp::create(lb, loc, vecType, base, indices, mask,
                                          zero);
    return vector::LoadOp::create(lb, loc, vecType, base, indices);
  };
  // B may be f16/bf16: its vectors are loaded narrow (half the bytes) and
  // widened in registers, so the FMAs stay f32.
  Type bElem = cast<MemRefType>(operands.b.getType()).getElementType();
  auto loadB = [&](OpBuilder &lb, ValueRange indices) -> Value {
    if (bElem.isF32() || int8)
      return load(lb, operands.b, indices);
    auto narrowType = VectorType::get({vl}, bElem);
    Value v;
    if (mask) {
      Value pass = arith::ConstantOp::create(
          lb, loc, narrowType,
          DenseElementsAttr::get(narrowType,
                                 lb.getFloatAttr(bElem, 0.0).getValue()));
      v = vector::MaskedLoadOp::create(lb, loc, narrowType, operands.b, indices,
                                       mask, pass);
    } else {
      v = vector::LoadOp::create(lb, loc, narrowType, operands.b, indices);
    }
    return arith::ExtFOp::create(lb, loc, vecType, v);
  };
  SmallVector<Value> init =
      loadAccumulators(b, loc, operands, tile, zero, zeroInit, mask);
  Value step = ix.cst(1);
  Value upper = getValueOrCreateConstantIndexOp(b, loc, kEnd);
  Value lower = getValueOrCreateConstantIndexOp(b, loc, kBegin);
  auto kLoop = scf::ForOp::create(
      b, loc, lower, upper, step, init,
      [&](OpBuilder &lb, Location, Value k, ValueRange accs) {
        SmallVector<Value> bs;
        for (Value col : bCols)
          bs.push_back(loadB(lb, ValueRange{k, col}));
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
                createVnniDotProduct(lb, loc, next[r * nv + v], splat, w);
          }
        }
        for (int64_t r = 0; r < mr && !int8; ++r) {
          Value a = memref::LoadOp::create(lb, loc, operands.a,
                                           operands.indices(tile.rows[r], k));
          if (!a.getType().isF32())
            a = arith::ExtFOp::create(lb, loc, lb.getF32Type(), a);
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

OuterProductTile mlir::attn::emitOuterProductDotTile(
    OpBuilder &b, Location loc, const OuterProductOperands &operands,
    int64_t vl, Value m0, Value n0, int64_t mr, int64_t nv, int64_t kBegin,
    int64_t kEnd, bool zeroInit, Value mask) {
  IndexArith ix(b, loc);
  auto accType = VectorType::get({vl}, b.getF32Type());
  Type bf16 = b.getBF16Type();
  auto pairsType = VectorType::get({2 * vl}, bf16);
  auto lanesType = VectorType::get({vl}, b.getI32Type());
  Type aElem = cast<MemRefType>(operands.a.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, accType,
                                         DenseElementsAttr::get(accType, 0.0f));
  // B holds k in pairs: its column index is twice the tile's.
  SmallVector<Value> bCols;
  OuterProductTile tile = placeTile(ix, operands, vl, m0, n0, mr, nv, bCols);
  for (Value &col : bCols)
    col = arith::MulIOp::create(b, loc, col, ix.cst(2));
  SmallVector<Value> init =
      loadAccumulators(b, loc, operands, tile, zero, zeroInit, mask);
  auto kLoop = scf::ForOp::create(
      b, loc, ix.cst(kBegin / 2), ix.cst(kEnd / 2), ix.cst(1), init,
      [&](OpBuilder &lb, Location, Value j, ValueRange accs) {
        IndexArith lx(lb, loc);
        SmallVector<Value> bs;
        for (Value col : bCols)
          bs.push_back(vector::LoadOp::create(lb, loc, pairsType, operands.b,
                                              ValueRange{j, col}));
        Value k = arith::MulIOp::create(lb, loc, j, lx.cst(2));
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t r = 0; r < mr; ++r) {
          Value pair = vector::LoadOp::create(
              lb, loc, VectorType::get({2}, aElem), operands.a,
              operands.indices(tile.rows[r], k));
          if (!aElem.isBF16())
            pair = arith::TruncFOp::create(lb, loc, VectorType::get({2}, bf16),
                                           pair);
          Value bits = vector::BitCastOp::create(
              lb, loc, VectorType::get({1}, lb.getI32Type()), pair);
          Value lane = vector::ExtractOp::create(lb, loc, bits, 0);
          Value splat = vector::BitCastOp::create(
              lb, loc, pairsType,
              vector::BroadcastOp::create(lb, loc, lanesType, lane));
          for (int64_t v = 0; v < nv; ++v)
            next[r * nv + v] = x86vector::DotBF16Op::create(
                lb, loc, accType, next[r * nv + v], splat, bs[v]);
        }
        scf::YieldOp::create(lb, loc, next);
      });
  tile.accs.assign(kLoop.getResults().begin(), kLoop.getResults().end());
  return tile;
}

bool mlir::attn::isVectorizableEpilogue(linalg::GenericOp epilogue) {
  Block &body = epilogue.getRegion().front();
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0 || op.getNumResults() != 1)
      return false;
    Type type = op.getResult(0).getType();
    if (!type.isF32() && !type.isInteger(1))
      return false;
    if (isa<arith::ConstantOp>(op))
      continue;
    if (!op.hasTrait<OpTrait::Elementwise>() || !isPure(&op))
      return false;
    for (Value operand : op.getOperands())
      if (!operand.getType().isIntOrFloat())
        return false;
  }
  return true;
}

Value mlir::attn::cloneEpilogueOnVectors(OpBuilder &b, Location loc,
                                         linalg::GenericOp epilogue,
                                         IRMapping &map, int64_t vl) {
  Block &body = epilogue.getRegion().front();
  for (Operation &op : body.without_terminator()) {
    Type scalar = op.getResult(0).getType();
    auto resultType = VectorType::get({vl}, scalar);
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = DenseElementsAttr::get(resultType, cst.getValue());
      map.map(op.getResult(0),
              arith::ConstantOp::create(b, loc, resultType, attr));
      continue;
    }
    for (Value operand : op.getOperands())
      if (!map.contains(operand))
        map.map(operand,
                vector::BroadcastOp::create(
                    b, loc, VectorType::get({vl}, operand.getType()), operand));
    Operation *clone = b.clone(op, map);
    clone->getResult(0).setType(resultType);
  }
  return map.lookup(cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}
