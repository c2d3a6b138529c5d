//===- OuterProductTile.h - MR x NV outer-product register tiles -*- C++
//-*-===//
//
// The one tile emitter behind both CPU GEMM passes that keep rows of C in
// vector accumulators: attn-cpu-matmul-kernel's K-major path (projections
// with transposed weights) and attn-cpu-outer-product-matmul (the flash
// attention block contractions). The passes differ only in how they walk
// the tiles and in what they do with the accumulators afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_CPU_OUTERPRODUCTTILE_H
#define ATTNC_LIB_CODEGEN_CPU_OUTERPRODUCTTILE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::attn {

/// C[(g,) m, n] += sum_k A[(g,) m, k] * B[k, n] with C f32 and A, B f32 or
/// f16/bf16 (widened to f32 in registers), B and C contiguous along n.
struct OuterProductOperands {
  Value a, b, c;
  /// The leading index of A and C when they are batched, else null.
  Value batch;
  /// B's column that holds C's column n0 of the tile (B a packed panel);
  /// null when B and C share column indices.
  Value bColumn;
  /// u8 x s8 -> i32 (attn-cpu-quantize-int8): A is u8 [M, K] (held as i8),
  /// B is [K/4, N] i32 words of 4 consecutive k (s8), C is i32, and the k
  /// range counts words; each step broadcasts 4 bytes of A's row and issues
  /// AVX-512 VNNI vpdpbusd instead of FMAs.
  bool int8 = false;

  /// Indices of A or C at (row, col), behind the batch index if any.
  SmallVector<Value> indices(Value row, Value col) const;
};

/// One MR x NV tile after its k loop: accumulator (r, v) holds C's row
/// rows[r] at columns [cols[v], cols[v] + VL).
struct OuterProductTile {
  SmallVector<Value> rows, cols;
  SmallVector<Value> accs;

  Value acc(int64_t r, int64_t v) const { return accs[r * cols.size() + v]; }
};

/// AVX-512 VNNI's vpdpbusd: `acc` (i32 lanes) plus, per lane, the products
/// of its 4 unsigned bytes of `unsignedBytes` and 4 signed bytes of
/// `signedBytes` (zmm, ymm or xmm by the lane count).
Value createVnniDotProduct(OpBuilder &b, Location loc, Value acc,
                           Value unsignedBytes, Value signedBytes);

/// Emits the tile of `mr` rows from `m0` and `nv` vectors of `vl` lanes from
/// `n0`: accumulators start at zero when `zeroInit`, else at C; each k step
/// in [kBegin, kEnd) loads NV vectors of B's row k, broadcasts MR scalars of
/// A's column k and issues MR * NV FMAs. `mask`, when set, masks the loads
/// of B and C (the one vector column at a ragged right edge). The caller
/// stores the accumulators.
OuterProductTile emitOuterProductTile(OpBuilder &b, Location loc,
                                      const OuterProductOperands &operands,
                                      int64_t vl, Value m0, Value n0,
                                      int64_t mr, int64_t nv,
                                      OpFoldResult kBegin, OpFoldResult kEnd,
                                      bool zeroInit, Value mask = {});

/// The tile on AVX-512 BF16 (vdpbf16ps): `operands.b` is a panel of pairs
/// of k interleaved per column, [K / 2, 2 * columns] bf16, where C's column
/// n (or bColumn + (n - n0)) is read at 2 * n; A is bf16 or f32 (rounded to
/// bf16 in registers). Each step over a pair of k in [kBegin, kEnd) (both
/// even) loads NV vectors of VL column pairs, broadcasts MR pairs of A as
/// one 32-bit lane each and issues MR * NV vdpbf16ps into the f32
/// accumulators. `mask` masks C's loads only (the panel is padded).
OuterProductTile emitOuterProductDotTile(OpBuilder &b, Location loc,
                                         const OuterProductOperands &operands,
                                         int64_t vl, Value m0, Value n0,
                                         int64_t mr, int64_t nv, int64_t kBegin,
                                         int64_t kEnd, bool zeroInit,
                                         Value mask = {});

/// Whether an epilogue's body can run on vectors: elementwise ops (and
/// scalar constants) on f32 / i1 values only.
bool isVectorizableEpilogue(linalg::GenericOp epilogue);

/// Clones the body of `epilogue` (isVectorizableEpilogue) on vectors of
/// `vl` lanes, its block arguments already mapped to vectors in `map`;
/// scalars from outside the body are broadcast. Returns the yielded vector.
Value cloneEpilogueOnVectors(OpBuilder &b, Location loc,
                             linalg::GenericOp epilogue, IRMapping &map,
                             int64_t vl);

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_CPU_OUTERPRODUCTTILE_H
