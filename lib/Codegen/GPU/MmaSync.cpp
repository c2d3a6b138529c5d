//===- MmaSync.cpp - mma.sync m16n8k16 fragments for the GPU kernels ------===//

#include "Codegen/GPU/MmaSync.h"
#include "Codegen/Common/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;

Value mlir::attn::buildFragment(OpBuilder &b, Location loc,
                                ArrayRef<Value> pairs) {
  auto pairType = cast<VectorType>(pairs.front().getType());
  auto type = VectorType::get({static_cast<int64_t>(pairs.size()), 2},
                              pairType.getElementType());
  Value frag = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  for (auto [i, pair] : llvm::enumerate(pairs))
    frag = vector::InsertOp::create(b, loc, pair, frag,
                                    ArrayRef<int64_t>{int64_t(i)});
  return frag;
}

/// Row `row` of a fragment as the i32 register nvvm.mma.sync takes (element
/// 0 in the low half, as in a .bf16x2 register).
static Value packedRow(OpBuilder &b, Location loc, Value frag, int64_t row) {
  Value pair = vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{row});
  auto i32x1 = VectorType::get({1}, b.getI32Type());
  Value cast = vector::BitCastOp::create(b, loc, i32x1, pair);
  return vector::ExtractOp::create(b, loc, cast, ArrayRef<int64_t>{0});
}

Value mlir::attn::buildMmaSync(OpBuilder &b, Location loc, Value a, Value bFrag,
                               Value acc) {
  Type elt = cast<VectorType>(a.getType()).getElementType();
  if (elt.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK});
  SmallVector<Value> regsA, regsB, regsC;
  for (int64_t r = 0; r < 4; ++r)
    regsA.push_back(packedRow(b, loc, a, r));
  for (int64_t r = 0; r < 2; ++r)
    regsB.push_back(packedRow(b, loc, bFrag, r));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      regsC.push_back(
          vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{i, j}));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, regsA, regsB, regsC,
      ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(),
                                             ArrayRef<int64_t>{i}));
  return vector::FromElementsOp::create(b, loc, VectorType::get({2, 2}, f32),
                                        d);
}

void mlir::attn::buildSharedTileCopy(
    OpBuilder &b, Location loc, Value src, ValueRange prefix, Value row0,
    Value col0, int64_t rows, int64_t width, Value dst, bool transpose,
    Value tid, int64_t threads, llvm::MaybeAlign srcAlign, int64_t rowLimit,
    int64_t colLimit, ValueRange dstPrefix, Value dynamicRowLimit) {
  constexpr int64_t kChunk = 8;
  Type elt = cast<MemRefType>(src.getType()).getElementType();
  auto chunkType = VectorType::get({kChunk}, elt);
  auto pairType = VectorType::get({2}, elt);
  attn::IndexArith ix(b, loc);
  auto idx = [&](int64_t c) { return ix.cst(c); };
  auto add = [&](Value x, Value y) { return ix.add(x, y); };
  auto less = [&](Value x, int64_t limit) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 idx(limit));
  };
  auto both = [&](Value x, Value y) -> Value {
    if (!x || !y)
      return x ? x : y;
    return arith::AndIOp::create(b, loc, x, y);
  };
  auto clamp = [&](Value x, int64_t max) -> Value {
    return arith::MinSIOp::create(b, loc, x, idx(max));
  };
  auto dstIndices = [&](Value row, Value col) {
    SmallVector<Value> indices(dstPrefix.begin(), dstPrefix.end());
    indices.push_back(row);
    indices.push_back(col);
    return indices;
  };
  auto loadChunk = [&](Value row, Value col) -> Value {
    SmallVector<Value> indices(prefix.begin(), prefix.end());
    Value r = add(row0, row), c = add(col0, col);
    if (!rowLimit && !colLimit && !dynamicRowLimit) {
      indices.push_back(r);
      indices.push_back(c);
      return vector::LoadOp::create(b, loc, chunkType, src, indices,
                                    /*nontemporal=*/false, srcAlign);
    }
    // Bounds-checked: loads at indices clamped into the source, zeros
    // selected where the element lies past its extent.
    Value rowIn = rowLimit ? less(r, rowLimit) : Value();
    if (dynamicRowLimit) {
      rowIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r,
                                    dynamicRowLimit);
      indices.push_back(arith::MinSIOp::create(
          b, loc, r, arith::SubIOp::create(b, loc, dynamicRowLimit, idx(1))));
    } else {
      indices.push_back(rowLimit ? clamp(r, rowLimit - 1) : r);
    }
    if (colLimit % kChunk == 0) {
      // Whole chunks lie inside or outside: one load, one select.
      Value in = both(rowIn, colLimit ? less(c, colLimit) : Value());
      indices.push_back(colLimit ? clamp(c, colLimit - kChunk) : c);
      Value chunk = vector::LoadOp::create(b, loc, chunkType, src, indices,
                                           /*nontemporal=*/false, srcAlign);
      Value zeros = arith::ConstantOp::create(b, loc, chunkType,
                                              b.getZeroAttr(chunkType));
      return arith::SelectOp::create(b, loc, in, chunk, zeros);
    }
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
    SmallVector<Value> elems;
    for (int64_t e = 0; e < kChunk; ++e) {
      Value ce = e ? add(c, idx(e)) : c;
      Value in = both(rowIn, less(ce, colLimit));
      indices.push_back(clamp(ce, colLimit - 1));
      Value v = memref::LoadOp::create(b, loc, src, indices);
      indices.pop_back();
      elems.push_back(arith::SelectOp::create(b, loc, in, v, zero));
    }
    return vector::FromElementsOp::create(b, loc, chunkType, elems);
  };
  // A unit of work is one 16-byte chunk, or for the transposed copy the
  // chunks of two consecutive rows, stored as 4-byte pairs dst[c][r..r+1].
  // Consecutive threads take consecutive chunks of a row (coalesced loads,
  // consecutive 16-byte stores); transposed, consecutive row pairs, so that
  // their pair stores hit consecutive banks.
  int64_t perRow = width / kChunk;
  int64_t units = transpose ? rows / 2 * perRow : rows * perRow;
  for (int64_t it = 0; it * threads < units; ++it) {
    Value u = it ? add(tid, idx(it * threads)) : tid;
    auto copyUnit = [&]() {
      if (!transpose) {
        Value row = arith::DivUIOp::create(b, loc, u, idx(perRow));
        Value col = arith::MulIOp::create(
            b, loc, arith::RemUIOp::create(b, loc, u, idx(perRow)),
            idx(kChunk));
        vector::StoreOp::create(b, loc, loadChunk(row, col), dst,
                                dstIndices(row, col),
                                /*nontemporal=*/false, llvm::MaybeAlign(16));
        return;
      }
      Value row = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, u, idx(rows / 2)), idx(2));
      Value col = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, u, idx(rows / 2)),
          idx(kChunk));
      Value lo = loadChunk(row, col), hi = loadChunk(add(row, idx(1)), col);
      for (int64_t e = 0; e < kChunk; ++e) {
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType,
            ValueRange{
                vector::ExtractOp::create(b, loc, lo, ArrayRef<int64_t>{e}),
                vector::ExtractOp::create(b, loc, hi, ArrayRef<int64_t>{e})});
        vector::StoreOp::create(b, loc, pair, dst,
                                dstIndices(e ? add(col, idx(e)) : col, row),
                                /*nontemporal=*/false, llvm::MaybeAlign(4));
      }
    };
    if ((it + 1) * threads <= units) {
      copyUnit();
      continue;
    }
    // A last, partial round: only the first threads have a unit.
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, u, idx(units));
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    copyUnit();
  }
}

int64_t mlir::attn::asyncCopyChunk(int64_t rows, int64_t width,
                                   int64_t srcRowLength, int64_t threads) {
  for (int64_t chunk : {8, 4, 2})
    if (width % chunk == 0 && srcRowLength % chunk == 0 &&
        (rows * width / chunk) % threads == 0)
      return chunk;
  return 0;
}

SmallVector<Value> mlir::attn::buildSharedTileAsyncCopy(
    OpBuilder &b, Location loc, Value src, ValueRange prefix, Value row0,
    Value col0, int64_t rows, int64_t width, Value dst, ValueRange dstPrefix,
    Value tid, int64_t threads, int64_t chunk, int64_t rowLimit,
    int64_t colLimit, bool coreMatrices, Value dynamicRowLimit) {
  attn::IndexArith ix(b, loc);
  auto less = [&](Value x, int64_t limit) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 ix.cst(limit));
  };
  auto clamp = [&](Value x, int64_t max) -> Value {
    return arith::MinSIOp::create(b, loc, x, ix.cst(max));
  };
  int64_t bytes =
      chunk * cast<MemRefType>(src.getType()).getElementTypeBitWidth() / 8;
  // Consecutive threads take consecutive chunks of a row: coalesced global
  // reads, and the 16-byte shared writes of a quarter warp cover 8 rows'
  // padded starts or one row's consecutive chunks, both conflict-free.
  int64_t perRow = width / chunk;
  int64_t units = rows * perRow;
  SmallVector<Value> tokens;
  for (int64_t it = 0; it * threads < units; ++it) {
    Value u = it ? ix.add(tid, it * threads) : tid;
    Value row = arith::DivUIOp::create(b, loc, u, ix.cst(perRow));
    Value col = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, u, ix.cst(perRow)),
        ix.cst(chunk));
    Value r = ix.add(row0, row), c = ix.add(col0, col);
    SmallVector<Value> srcIndices(prefix.begin(), prefix.end());
    Value inside;
    if (dynamicRowLimit) {
      inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r,
                                     dynamicRowLimit);
      r = arith::MinSIOp::create(
          b, loc, r, arith::SubIOp::create(b, loc, dynamicRowLimit, ix.cst(1)));
    } else if (rowLimit) {
      inside = less(r, rowLimit);
      r = clamp(r, rowLimit - 1);
    }
    if (colLimit) {
      Value in = less(c, colLimit);
      inside =
          inside ? arith::AndIOp::create(b, loc, inside, in).getResult() : in;
      c = clamp(c, colLimit - chunk);
    }
    srcIndices.push_back(r);
    srcIndices.push_back(c);
    SmallVector<Value> dstIndices(dstPrefix.begin(), dstPrefix.end());
    if (coreMatrices) {
      dstIndices.push_back(arith::DivUIOp::create(b, loc, col, ix.cst(8)));
      dstIndices.push_back(row);
      dstIndices.push_back(arith::RemUIOp::create(b, loc, col, ix.cst(8)));
    } else {
      dstIndices.push_back(row);
      dstIndices.push_back(col);
    }
    // A chunk past the edge reads nothing (source size 0) and zero-fills
    // its destination: the K padding must be zero in both operands.
    Value srcElements;
    if (inside)
      srcElements =
          arith::SelectOp::create(b, loc, inside, ix.cst(chunk), ix.cst(0));
    auto copy = nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        dstIndices, src, srcIndices, b.getIndexAttr(chunk), srcElements,
        bytes == 16 ? b.getUnitAttr() : UnitAttr());
    tokens.push_back(copy.getAsyncToken());
  }
  return tokens;
}

void mlir::attn::buildPipelineWait(OpBuilder &b, Location loc, Value group,
                                   Value remaining, int64_t stages) {
  // wait(d) when remaining == d, for d < stages - 2; else wait(stages - 2).
  std::function<void(int64_t)> emit = [&](int64_t d) {
    if (d >= stages - 2) {
      nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                       b.getI32IntegerAttr(stages - 2));
      return;
    }
    Value last =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, remaining,
                              attn::IndexArith(b, loc).cst(d));
    auto ifOp = scf::IfOp::create(b, loc, last, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    nvgpu::DeviceAsyncWaitOp::create(b, loc, group, b.getI32IntegerAttr(d));
    b.setInsertionPointToStart(ifOp.elseBlock());
    emit(d + 1);
  };
  emit(0);
}

Value mlir::attn::buildLdMatrix(OpBuilder &b, Location loc, Value smem,
                                ValueRange indices, int64_t numTiles,
                                bool transpose) {
  Type elt = cast<MemRefType>(smem.getType()).getElementType();
  auto type = VectorType::get({numTiles, 2}, elt);
  return nvgpu::LdMatrixOp::create(b, loc, type, smem, indices, transpose,
                                   numTiles);
}

Value mlir::attn::fragmentRows(OpBuilder &b, Location loc, Value frag,
                               int64_t first, int64_t count) {
  SmallVector<Value> rows;
  for (int64_t r = first; r < first + count; ++r)
    rows.push_back(
        vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{r}));
  return buildFragment(b, loc, rows);
}
