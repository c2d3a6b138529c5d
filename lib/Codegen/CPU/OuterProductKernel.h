//===- OuterProductKernel.h - x*W^T kernels over K-major weights -*- C++
//-*-===//
//
// Private to Codegen/CPU. The kernel attn-cpu-matmul-kernel emits for a
// projection whose weight is bound K-major (W^T [k, n]): MR rows x NV
// vectors of C in vector accumulators, each k step loading NV vectors of
// W^T's row k and broadcasting MR scalars of x, so that no horizontal
// reductions are needed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_CPU_OUTERPRODUCTKERNEL_H
#define ATTNC_LIB_CODEGEN_CPU_OUTERPRODUCTKERNEL_H

#include "Codegen/Common/IndexArith.h"
#include "Codegen/Common/MatmulMatch.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// Stores the epilogue's value for the vector `v` of C's row m at columns
/// [n, n + vl) into the epilogue's output: its other inputs loaded as
/// vectors (or one scalar broadcast when indexed by the row only) and its
/// body cloned on vectors (isVectorizableEpilogue).
void storeVectorEpilogue(OpBuilder &nb, Location loc,
                         linalg::GenericOp epilogue, Value c, Value v, Value m,
                         Value n, int64_t vl);

/// Emits the outer-product tiles of one K-major contraction `mm`, column
/// block by column block (emitRegion); the pass fills in the fields.
struct OuterProductKernelBuilder {
  Location loc;
  NTMatmul &mm;
  linalg::GenericOp epilogue;
  int64_t vl, mrMax, nvMax;
  /// C starts at zero (its zero fill was dropped) instead of being loaded.
  bool zeroInit;
  /// The run-time row count when M is dynamic (else null).
  Value mSize = {};

  VectorType vecType() const {
    return VectorType::get({vl}, Float32Type::get(mm.op.getContext()));
  }
  Value idx(OpBuilder &nb, int64_t v) {
    return attn::IndexArith(nb, loc).cst(v);
  }
  Value add(OpBuilder &nb, Value x, int64_t c) {
    return attn::IndexArith(nb, loc).add(x, c);
  }

  /// Stores the vector `v` of C's row m at columns [n, n + vl): through the
  /// epilogue's body on vectors when there is one.
  void store(OpBuilder &nb, Value v, Value m, Value n);

  /// The k range [kBegin, kEnd) of the current k block; the first block
  /// starts from zero when zeroInit (else from C), later ones from the
  /// partial sums in C; only the last one applies the epilogue.
  int64_t kBegin = 0, kEnd = 0;
  bool firstK = true, lastK = true;

  /// What the tiles read: mm.a / mm.b, or the f16/bf16 buffers they were
  /// widened from (B's vectors and A's scalars are then widened in
  /// registers).
  Value a, b;
  /// Both narrow operands bf16 on AVX-512 BF16: the panels hold pairs of k
  /// interleaved per column (see emitPack) and the tiles multiply them with
  /// vdpbf16ps (emitOuterProductDotTile).
  bool dot = false;
  /// The u8 x s8 contraction of attn-cpu-quantize-int8 (mm.k counts i32
  /// words of 4 k bytes).
  bool int8 = false;

  /// Whether each column block copies its [kc, width] slices of W^T into
  /// contiguous panels before the row tiles read them (see emitRegion).
  bool packPanels = false;
  /// The current column block's panels, [nMain / width, K, width], or null.
  Value panels;
  /// A weight bound in panels, [N / width, K, width] (attn-cpu-transpose-
  /// weights{panel-vectors}): every tile reads its panel in place and
  /// nothing is packed per run.
  Value boundPanels;

  /// One mr x nv-vector tile of C at (m0, n0). With panels, `panel` is the
  /// tile's panel index and B's columns are read from it.
  void emitTile(OpBuilder &nb, Value m0, Value n0, int64_t mr, int64_t nv,
                Value panel = {});

  template <typename Fn>
  void loop(OpBuilder &nb, int64_t lb, int64_t ub, int64_t step, Fn body) {
    if (ub <= lb)
      return;
    scf::ForOp::create(nb, loc, idx(nb, lb), idx(nb, ub), idx(nb, step),
                       ValueRange{},
                       [&](OpBuilder &bb, Location, Value iv, ValueRange) {
                         body(bb, iv);
                         scf::YieldOp::create(bb, loc);
                       });
  }

  /// Columns [nStart, nStart + nExtent) of all rows, k in blocks of kBlock
  /// (so that the block of W^T the row tiles share stays in L2; partial
  /// sums go through C between blocks).
  ///
  /// With packPanels, the whole tiles' columns of each k block are first
  /// copied into panels, one contiguous [kc, width] run per tile column: read
  /// in place, W^T's rows are N floats apart, and at N = 3072 (12 KiB) every
  /// row of a tile column falls into the same few cache sets, so the block
  /// the row tiles share does not stay in L1/L2. The copy is one read of the
  /// block, which the first row tile would do anyway.
  void emitRegion(OpBuilder &nb, Value nStart, int64_t nExtent, int64_t kBlock);

  /// panels[p, k, :] = B[k, nStart + p * width + (0 .. width)] for the
  /// current k block. With `dot`, pairs of k are interleaved per column
  /// instead (the layout vdpbf16ps multiplies, "VNNI"):
  /// panels[p, j, 2 c + t] = B[2 j + t, nStart + p * width + c].
  void emitPack(OpBuilder &nb, Value nStart, int64_t nPanels);

  /// Columns [nStart, nStart + nExtent) of all rows (nExtent a multiple of
  /// vl) for the current k block: rows in steps of MR outside, column tiles
  /// of NV vectors inside.
  void emitKBlock(OpBuilder &nb, Value nStart, int64_t nExtent);
};

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_CPU_OUTERPRODUCTKERNEL_H
