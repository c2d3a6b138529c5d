//===- WeightOnlyLayout.h - packed int8 / int4 weight rows ------*- C++ -*-===//
//
// The layout of a weight-only quantized row, shared by the pass that
// rewrites the contraction (attn-cpu-quantize-weights), the kernel that
// reads it (attn-cpu-matmul-kernel) and the tool that writes the weights
// file (attn-compile). A row of K weights is a run of little-endian i32
// words, two's complement:
//
// - int8: weight k is byte k (word k / 4, bits 8 * (k mod 4) and up);
// - int4: blocks of 32 weights in 16 bytes (4 words); byte j of block b
//   holds weight 32b + j in its low nibble and weight 32b + 16 + j in its
//   high nibble, zero past K. A 16-lane vector then splits a block into
//   two vectors already in k order with two shifts, no interleave.
//
// With int8 activations on AVX-512 the rows are interleaved instead, 16 at
// a time (kInterleavedColumns): a [ceil(N / 16), words, 16] tensor whose
// word (b, w, j) holds weights of row 16b + j (zero past N), so that one
// zmm load gives 16 rows' next weights and each i32 lane is one row's
// vpdpbusd operand. A lane word holds 4 weights of int8 (k = 4w + byte) or
// 8 of int4 (the low nibbles k = 8w + byte, the high nibbles k = 8w + 4 +
// byte). The scales are [ceil(N / 16), K / group, 16] the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CODEGEN_CPU_WEIGHTONLYLAYOUT_H
#define ATTNC_CODEGEN_CPU_WEIGHTONLYLAYOUT_H

#include <cstdint>

namespace mlir::attn {

/// Weights per int4 block (16 bytes).
constexpr int64_t kInt4BlockWeights = 32;

/// i32 words per packed row of `k` weights of `bits` (8 or 4).
inline int64_t packedWeightWords(int64_t k, int64_t bits) {
  if (bits == 8)
    return (k + 3) / 4;
  return (k + kInt4BlockWeights - 1) / kInt4BlockWeights * 4;
}

/// Where weight `k` of a packed row lives: its word and the bit its field
/// starts at.
struct PackedWeightField {
  int64_t word, shift;
};
inline PackedWeightField packedWeightField(int64_t k, int64_t bits) {
  if (bits == 8)
    return {k / 4, 8 * (k % 4)};
  int64_t inBlock = k % kInt4BlockWeights, byte = inBlock % 16;
  return {k / kInt4BlockWeights * 4 + byte / 4,
          8 * (byte % 4) + 4 * (inBlock / 16)};
}

/// Weights per zmm of int4 blocks (64 bytes, 16 words).
constexpr int64_t kInt4WideWeights = 4 * kInt4BlockWeights;

/// The weight, counted from the start of its 128-weight run, that nibble
/// `nibble` (bits 4 * nibble and up) of word `word` of the run holds: word
/// l holds bytes 4l..4l+3, of block l / 4.
inline int64_t int4WideWeight(int64_t word, int64_t nibble) {
  return kInt4BlockWeights * (word / 4) + 16 * (nibble % 2) + 4 * (word % 4) +
         nibble / 2;
}

/// Rows per interleaved block, the lanes of a zmm of i32.
constexpr int64_t kInterleavedColumns = 16;

/// i32 words of one row's `k` weights of `bits` (8 or 4), interleaved.
inline int64_t interleavedWeightWords(int64_t k, int64_t bits) {
  int64_t perWord = 32 / bits;
  return (k + perWord - 1) / perWord;
}

/// Where weight `k` of a row lives in its interleaved lane: the word (the
/// middle index) and the bit its field starts at.
inline PackedWeightField interleavedWeightField(int64_t k, int64_t bits) {
  if (bits == 8)
    return {k / 4, 8 * (k % 4)};
  return {k / 8, 8 * (k % 4) + 4 * (k % 8 / 4)};
}

} // namespace mlir::attn

#endif // ATTNC_CODEGEN_CPU_WEIGHTONLYLAYOUT_H
