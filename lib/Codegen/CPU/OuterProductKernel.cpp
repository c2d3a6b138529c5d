//===- OuterProductKernel.cpp - x*W^T kernels over K-major weights --------===//
//
// The outer-product tiles of attn-cpu-matmul-kernel (OuterProductKernel.h):
// per k block, optional packing of W^T's columns into contiguous panels,
// then row tiles over column tiles, the epilogue applied on the last block.
//
//===----------------------------------------------------------------------===//

#include "OuterProductKernel.h"

#include "OuterProductTile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::storeVectorEpilogue(OpBuilder &nb, Location loc,
                                     linalg::GenericOp epilogue, Value c,
                                     Value v, Value m, Value n, int64_t vl) {
  VectorType vt = VectorType::get({vl}, nb.getF32Type());
  IRMapping map =
      attn::mapEpilogueInputs(epilogue, c, v, [&](OpOperand *input) -> Value {
        AffineMap indexing = epilogue.getMatchingIndexingMap(input);
        if (indexing.getNumResults() == 1 &&
            cast<AffineDimExpr>(indexing.getResult(0)).getPosition() == 0) {
          // Indexed by the row only: one scalar for the whole vector.
          Value s =
              memref::LoadOp::create(nb, loc, input->get(), ValueRange{m});
          return vector::BroadcastOp::create(nb, loc, vt, s);
        }
        return vector::LoadOp::create(
            nb, loc, vt, input->get(),
            attn::epilogueIndices(epilogue, input, m, n));
      });
  Value result = cloneEpilogueOnVectors(nb, loc, epilogue, map, vl);
  vector::StoreOp::create(nb, loc, result, epilogue.getDpsInits()[0],
                          ValueRange{m, n});
}

void OuterProductKernelBuilder::store(OpBuilder &nb, Value v, Value m,
                                      Value n) {
  if (!epilogue) {
    vector::StoreOp::create(nb, loc, v, mm.c, ValueRange{m, n});
    return;
  }
  storeVectorEpilogue(nb, loc, epilogue, mm.c, v, m, n, vl);
}

void OuterProductKernelBuilder::emitTile(OpBuilder &nb, Value m0, Value n0,
                                         int64_t mr, int64_t nv, Value panel) {
  attn::OuterProductOperands operands{a, b, mm.c, Value()};
  operands.int8 = int8;
  if (panel) {
    // The panel as a [K, width] matrix whose column 0 is C's column n0.
    auto type = cast<MemRefType>(panels.getType());
    int64_t k = type.getDimSize(1), width = type.getDimSize(2);
    SmallVector<OpFoldResult> offsets = {panel, nb.getIndexAttr(0),
                                         nb.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {nb.getIndexAttr(1), nb.getIndexAttr(k),
                                       nb.getIndexAttr(width)};
    SmallVector<OpFoldResult> strides(3, nb.getIndexAttr(1));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        {k, width}, type, offsets, sizes, strides);
    operands.b = memref::SubViewOp::create(nb, loc, cast<MemRefType>(viewType),
                                           panels, offsets, sizes, strides);
    operands.bColumn = idx(nb, 0);
  }
  attn::OuterProductTile tile =
      dot ? attn::emitOuterProductDotTile(nb, loc, operands, vl, m0, n0, mr, nv,
                                          kBegin, kEnd,
                                          /*zeroInit=*/zeroInit && firstK)
          : attn::emitOuterProductTile(nb, loc, operands, vl, m0, n0, mr, nv,
                                       nb.getIndexAttr(kBegin),
                                       nb.getIndexAttr(kEnd),
                                       /*zeroInit=*/zeroInit && firstK);
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t v = 0; v < nv; ++v) {
      Value acc = tile.acc(r, v);
      if (lastK)
        store(nb, acc, tile.rows[r], tile.cols[v]);
      else
        vector::StoreOp::create(nb, loc, acc, mm.c,
                                ValueRange{tile.rows[r], tile.cols[v]});
    }
}

void OuterProductKernelBuilder::emitRegion(OpBuilder &nb, Value nStart,
                                           int64_t nExtent, int64_t kBlock) {
  int64_t width = nvMax * vl;
  int64_t nPanels = nExtent / width;
  panels = boundPanels;
  if (!boundPanels && packPanels && nPanels > 0) {
    Type elem = cast<MemRefType>(b.getType()).getElementType();
    auto type = dot ? MemRefType::get({nPanels, mm.k / 2, 2 * width}, elem)
                    : MemRefType::get({nPanels, mm.k, width}, elem);
    panels = memref::AllocOp::create(nb, loc, type, nb.getI64IntegerAttr(64));
  }
  for (int64_t k0 = 0; k0 < mm.k; k0 += kBlock) {
    kBegin = k0;
    kEnd = std::min(mm.k, k0 + kBlock);
    firstK = k0 == 0;
    lastK = kEnd == mm.k;
    if (panels && !boundPanels)
      emitPack(nb, nStart, nPanels);
    emitKBlock(nb, nStart, nExtent);
  }
  if (panels && !boundPanels)
    memref::DeallocOp::create(nb, loc, panels);
}

void OuterProductKernelBuilder::emitPack(OpBuilder &nb, Value nStart,
                                         int64_t nPanels) {
  int64_t width = nvMax * vl;
  auto rowType =
      VectorType::get({vl}, cast<MemRefType>(b.getType()).getElementType());
  loop(nb, 0, nPanels, 1, [&](OpBuilder &pb, Value p) {
    Value col0 = arith::AddIOp::create(
        pb, loc, nStart, arith::MulIOp::create(pb, loc, p, idx(pb, width)));
    if (dot) {
      loop(pb, kBegin / 2, kEnd / 2, 1, [&](OpBuilder &kb, Value j) {
        Value k = arith::MulIOp::create(kb, loc, j, idx(kb, 2));
        Value k1 = add(kb, k, 1);
        for (int64_t v = 0; v < nvMax; ++v) {
          Value col = add(kb, col0, v * vl);
          Value even =
              vector::LoadOp::create(kb, loc, rowType, b, ValueRange{k, col});
          Value odd =
              vector::LoadOp::create(kb, loc, rowType, b, ValueRange{k1, col});
          Value pairs = vector::InterleaveOp::create(kb, loc, even, odd);
          vector::StoreOp::create(kb, loc, pairs, panels,
                                  ValueRange{p, j, idx(kb, 2 * v * vl)});
        }
      });
      return;
    }
    loop(pb, kBegin, kEnd, 1, [&](OpBuilder &kb, Value k) {
      for (int64_t v = 0; v < nvMax; ++v) {
        Value x = vector::LoadOp::create(kb, loc, rowType, b,
                                         ValueRange{k, add(kb, col0, v * vl)});
        vector::StoreOp::create(kb, loc, x, panels,
                                ValueRange{p, k, idx(kb, v * vl)});
      }
    });
  });
}

void OuterProductKernelBuilder::emitKBlock(OpBuilder &nb, Value nStart,
                                           int64_t nExtent) {
  int64_t width = nvMax * vl;
  int64_t nMain = nExtent / width * width;
  auto rowTiles = [&](OpBuilder &rb, Value m0, int64_t mr) {
    loop(rb, 0, nMain, width, [&](OpBuilder &tb, Value n) {
      Value panel;
      if (panels) {
        // Bound panels cover all of N; packed ones this column block.
        Value column =
            boundPanels ? arith::AddIOp::create(tb, loc, nStart, n) : n;
        panel = arith::DivUIOp::create(tb, loc, column, idx(tb, width));
      }
      emitTile(tb, m0, arith::AddIOp::create(tb, loc, nStart, n), mr, nvMax,
               panel);
    });
    if (int64_t rest = nExtent - nMain)
      emitTile(rb, m0, add(rb, nStart, nMain), mr, rest / vl);
  };
  if (mSize) {
    // Dynamic M: MR-row tiles up to the last multiple of MR, then single
    // rows.
    Value mrValue = idx(nb, mrMax);
    Value mMain = arith::MulIOp::create(
        nb, loc, arith::DivUIOp::create(nb, loc, mSize, mrValue), mrValue);
    auto rows = [&](Value lb, Value ub, int64_t step, int64_t mr) {
      scf::ForOp::create(nb, loc, lb, ub, idx(nb, step), ValueRange{},
                         [&](OpBuilder &bb, Location, Value m0, ValueRange) {
                           rowTiles(bb, m0, mr);
                           scf::YieldOp::create(bb, loc);
                         });
    };
    rows(idx(nb, 0), mMain, mrMax, mrMax);
    rows(mMain, mSize, 1, 1);
    return;
  }
  int64_t mMain = mm.m / mrMax * mrMax;
  loop(nb, 0, mMain, mrMax,
       [&](OpBuilder &tb, Value m0) { rowTiles(tb, m0, mrMax); });
  if (int64_t rest = mm.m - mMain)
    rowTiles(nb, idx(nb, mMain), rest);
}
