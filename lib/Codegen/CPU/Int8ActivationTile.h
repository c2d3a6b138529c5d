//===- Int8ActivationTile.h - VNNI tiles for int8 activations --*- C++ -*-===//
//
// The dot-product tiles of attn-cpu-matmul-kernel for the weight-only
// contractions whose activations attn-cpu-quantize-weights{int8-activations}
// quantized: each group's integer products summed exactly by AVX-512 VNNI.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_CPU_INT8ACTIVATIONTILE_H
#define ATTNC_LIB_CODEGEN_CPU_INT8ACTIVATIONTILE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::attn {

/// Tiles of C[m, n] += sum_k A[m, k] * Wq[n, k] * (S[n, g] * R[m, g]), g =
/// k / group, over A i8 [M, K], the packed weight words B [N, words] (int8
/// or int4, WeightOnlyLayout.h), S f32 [N, K / group] and R f32
/// [M, K / group].
///
/// vpdpbusd multiplies unsigned bytes by signed ones and adds each 4
/// products into an i32 lane. The weights are made unsigned by flipping
/// their sign bits (int8: w + 128; int4 nibbles: w + 8), so a lane also
/// holds 128 (or 8) times the sum of its activation bytes. Before the
/// column loop, each row of a row tile is prepared once: its bytes copied
/// in the order the weights unpack to, and per group the offset -(128 or
/// 8) * sum(q) (vpdpbusd against bytes of 1, summed across the lanes), in
/// f32. A tile sums each group's integer products exactly from zero,
/// converts and scales them once per group; its accumulators start at the
/// offsets times the same scales, a vector of groups at a time, since
/// their lanes are summed in the end.
///
/// A step is 4 * `lanes` bytes of k: lanes is the widest of 16, 8 and 4
/// (zmm, ymm, xmm) not above VL whose steps tile a group (int4: at least
/// 8, whole blocks of 32 weights). int4 groups of a multiple of 128 at 16
/// lanes take steps of 128 weights: one zmm of packed bytes, whose low and
/// high nibbles are two operands.
class Int8ActivationTiles {
public:
  Int8ActivationTiles(Location loc, int64_t vl, int64_t bits, int64_t group,
                      int64_t k, Value a, Value b, Value scale, Value rowScale);

  /// Scratch for the prepared rows of a row tile of `rows` rows, and for the
  /// scale products of a rows x cols tile, at `builder` (outside the row
  /// loop).
  void allocate(OpBuilder &builder, int64_t rows, int64_t cols);

  /// Prepares rows [m, m + rows) of A into the scratch.
  void prepare(OpBuilder &builder, Value m, int64_t rows);

  /// The rows x cols tile's accumulators (row-major), from the prepared
  /// rows: vectors whose lanes add up to each output (LaneSums.h).
  SmallVector<Value> emitTile(OpBuilder &builder, ArrayRef<Value> rows,
                              ArrayRef<Value> cols);

private:
  Value cst(OpBuilder &builder, int64_t v);
  Value splat(OpBuilder &builder, VectorType type, Attribute v);
  /// The unsigned weights of step k of row `col` of B, in `parts`
  /// vpdpbusd operands.
  SmallVector<Value> loadWeights(OpBuilder &builder, Value col, Value k);

  Location loc;
  int64_t bits, group, k, lanes;
  /// vpdpbusd operands per step and column (2: int4 steps of 128 weights,
  /// one zmm of packed bytes).
  int64_t parts;
  Value a, b, scale, rowScale;
  VectorType bytesType, wordsType, floatsType;
  /// int4 steps of several blocks: the activation bytes' order (the
  /// weights' low halves block by block, then the high halves).
  SmallVector<int64_t> blockOrder;
  /// [rows, K] i8 and [rows, groups rounded up to lanes] f32.
  Value preparedRows, preparedOffsets;
  /// [rows * cols, groups rounded up to lanes] f32: a tile's S[n, g] *
  /// R[m, g], computed a vector at a time before its group loop, so that
  /// each group broadcasts one value from memory instead of loading and
  /// multiplying two scalars: fewer instructions per weight byte, which a
  /// memory-bound decode step needs to keep enough loads in flight.
  Value scaleProducts;
};

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_CPU_INT8ACTIVATIONTILE_H
