//===- WeightOnlyTiles.h - tiles of weight-only contractions ----*- C++ -*-===//
//
// The dot-product tiles of attn-cpu-matmul-kernel for the weight-only
// contractions of attn-cpu-quantize-weights: with f32 activations (or
// bf16-rounded ones against int4), the packed int8 / int4 weights widened
// in registers (WeightOnlyTile.cpp);
// with int8 activations, each group's integer products summed exactly by
// AVX-512 VNNI (Int8ActivationTile.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_CPU_WEIGHTONLYTILES_H
#define ATTNC_LIB_CODEGEN_CPU_WEIGHTONLYTILES_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::attn {

/// Asks LLVM to unroll `loop` `count` iterations at a time
/// (llvm.loop.unroll.count on its latch); it must be innermost by then.
void setUnrollCount(scf::ForOp loop, int64_t count);

/// The tiles of one weight-only contraction. The kernel allocates each
/// column block's scratch, prepares each row tile's activations once for
/// all its columns, and stores the lane sums of each tile.
class WeightOnlyTileKernel {
public:
  virtual ~WeightOnlyTileKernel() = default;

  /// Scratch for a row tile of `rows` rows and a rows x cols tile, at
  /// `builder` (outside the row loop).
  virtual void allocate(OpBuilder &builder, int64_t rows, int64_t cols) = 0;

  /// Prepares rows [m, m + rows) of A into the scratch.
  virtual void prepare(OpBuilder &builder, Value m, int64_t rows) = 0;

  /// The rows x cols tile's accumulators (row-major): vectors whose lanes
  /// add up to each output (LaneSums.h). With interleaved columns, `cols`
  /// is the first of kInterleavedColumns columns and there is one vector
  /// per row, lane j holding output column cols[0] + j.
  virtual SmallVector<Value> emitTile(OpBuilder &builder, ArrayRef<Value> rows,
                                      ArrayRef<Value> cols) = 0;

  /// Whether the weights are interleaved 16 rows at a time
  /// (WeightOnlyLayout.h), each tile 16 columns wide.
  virtual bool interleavedColumns() const { return false; }
};

/// Tiles of C[m, n] += sum_k A[m, k] * Wq[n, k] * S[n, k / group], over A
/// f32 (or a narrow float widened on load) [M, K], the packed weight words
/// B [N, words] (int8 or int4, WeightOnlyLayout.h) and the scales S f32
/// [N, K / group].
///
/// int8, and int4 without `lookup`: the weights are converted unscaled,
/// each group's products summed and scaled once per group. int4 with
/// `lookup` (16 lanes, AVX-512's vpermps): per group and column, a table
/// of the scale times the 16 values of a nibble; a block's 16 bytes
/// zero-extended index it for the low nibbles, shifted down by 4 for the
/// high ones. In groups of a multiple of 128, a load is a zmm of four
/// blocks instead, whose words' eight nibbles index the table after a
/// shift each (int4WideWeight), against the row tile's activations copied
/// once into that order (prepare): one shuffle per 16 weights instead of
/// 1.5, 0.84x the time in a C model of the TinyLlama shape's GEMV in L1.
///
/// With `bf16Dot` as well (AVX-512 BF16), those zmm loads are 32 16-bit
/// lanes of four nibbles each: the group's table is rounded to bf16 and
/// looked up by vpermw, and vdpbf16ps multiplies 32 weights at a time with
/// the prepared activations, rounded to bf16 once per row tile. Half the
/// shuffles and multiplications of f32, for the rounding error of bf16
/// activations and scaled weights: the TinyLlama shape's int4 step took
/// 0.74x the time at 1 thread.
class WeightOnlyTiles : public WeightOnlyTileKernel {
public:
  WeightOnlyTiles(Location loc, int64_t vl, int64_t bits, int64_t group,
                  bool lookup, bool bf16Dot, int64_t kSize, Value a, Value b,
                  Value scales);

  /// The prepared rows (none unless int4 loads whole zmms).
  void allocate(OpBuilder &builder, int64_t rows, int64_t cols) override;
  void prepare(OpBuilder &builder, Value m, int64_t rows) override;
  SmallVector<Value> emitTile(OpBuilder &builder, ArrayRef<Value> rows,
                              ArrayRef<Value> cols) override;

private:
  /// Vectors of k one load yields: int8 one (vl bytes), int4 two (a whole
  /// block of 2 * vl = 32 weights in vl bytes), int4 a zmm at a time
  /// eight (four of bf16).
  int64_t vectorsPerLoad() const;
  /// Weights per vector: vl, or 2 * vl of bf16.
  int64_t kPerVector() const;
  /// The prepared activations' element type: f32, or bf16 with `dot`.
  Type preparedType(OpBuilder &builder) const;

  /// Weights [k, k + kPerVector() * vectorsPerLoad()) of row `row` of B, as
  /// f32 vectors (bf16 with `dot`) in k order (a zmm at a time: in the
  /// nibbles' order), from
  /// one load. int8: the bytes, unscaled. int4 (k starts a block): a
  /// byte's low nibble is weight k + lane and its high nibble weight k +
  /// vl + lane. Without `table`, the bytes sign-extended to i32 lanes,
  /// split by two shifts and converted, unscaled. With it (16 lanes: the
  /// group's scale times the 16 values a nibble stands for), scaled by
  /// vpermps, which picks a lane's entry by the low 4 bits of its index.
  SmallVector<Value> loadWeights(OpBuilder &builder, Location loc, Value row,
                                 Value k, Value table);

  /// A's vector at (row, k) in f32.
  Value loadActivations(OpBuilder &builder, Location loc, Value row, Value k);

  Location loc;
  int64_t vl, bits, group, kSize;
  Value a, b, scales;
  /// int4 looked up in per-group tables; `wide`: a zmm of four blocks
  /// per load; `dot`: wide, looked up as bf16 and multiplied by vdpbf16ps.
  bool tables = false, wide = false, dot = false;
  /// wide: [row tile, K] f32 (bf16 with `dot`), the row tile's activations
  /// in the order of the nibbles.
  Value wideRows;
};

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
///
/// With `interleaved` weights and scales (16 lanes; B i32 [ceil(N / 16),
/// words, 16], S f32 [ceil(N / 16), K / group, 16]), a tile is a row tile
/// times 16 columns: a zmm load is a word of each of 16 weight rows, its
/// unsigned bytes (int4: the low and the high nibbles, two operands) one
/// vpdpbusd per row against the row's next 4 activation bytes broadcast,
/// so each lane sums one output and the group's scales are one vector:
/// about 6 instead of 12 vector instructions per 128 int4 weights and no
/// reduction per output. The activation bytes are read from A in place
/// (k order); prepare only computes the offsets.
class Int8ActivationTiles : public WeightOnlyTileKernel {
public:
  Int8ActivationTiles(Location loc, int64_t vl, int64_t bits, int64_t group,
                      int64_t k, Value a, Value b, Value scale, Value rowScale,
                      bool interleaved = false);

  /// The prepared rows and offsets, and the scale products of a tile (the
  /// offsets alone over interleaved weights).
  void allocate(OpBuilder &builder, int64_t rows, int64_t cols) override;
  void prepare(OpBuilder &builder, Value m, int64_t rows) override;
  SmallVector<Value> emitTile(OpBuilder &builder, ArrayRef<Value> rows,
                              ArrayRef<Value> cols) override;
  bool interleavedColumns() const override { return interleaved; }

private:
  /// emitTile over interleaved weights.
  SmallVector<Value> emitInterleavedTile(OpBuilder &builder,
                                         ArrayRef<Value> rows, Value col);

  Value cst(OpBuilder &builder, int64_t v);
  Value splat(OpBuilder &builder, VectorType type, Attribute v);
  /// The unsigned weights of step k of row `col` of B, in `parts`
  /// vpdpbusd operands.
  SmallVector<Value> loadWeights(OpBuilder &builder, Value col, Value k);

  Location loc;
  int64_t bits, group, k, lanes;
  bool interleaved;
  /// vpdpbusd operands per step and column (2: int4 steps of 128 weights,
  /// one zmm of packed bytes).
  int64_t parts;
  Value a, b, scale, rowScale;
  VectorType bytesType, wordsType, floatsType;
  /// int4 steps of several blocks: the activation bytes' order (the
  /// weights' low halves block by block, then the high halves).
  SmallVector<int64_t> blockOrder;
  /// [rows, K] i8 (none over interleaved weights) and [rows, groups
  /// rounded up to lanes] f32.
  Value preparedRows, preparedOffsets;
  /// [rows * cols, groups rounded up to lanes] f32: a tile's S[n, g] *
  /// R[m, g], computed a vector at a time before its group loop, so that
  /// each group broadcasts one value from memory instead of loading and
  /// multiplying two scalars: fewer instructions per weight byte, which a
  /// memory-bound decode step needs to keep enough loads in flight.
  Value scaleProducts;
};

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_CPU_WEIGHTONLYTILES_H
