//===- LaneSums.cpp - lane sums of several dot-product accumulators -------===//

#include "LaneSums.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

/// Masks over the concatenation of `x` and `y` (each `columns` outputs of
/// `parts` contiguous partial sums; `y` absent when `pair` is false) that
/// pick the first and the second half of every output's partial sums, in
/// output order: their sum holds each output in parts / 2 partial sums.
static void halvesMasks(int64_t columns, int64_t parts, int64_t width,
                        bool pair, SmallVector<int64_t> &low,
                        SmallVector<int64_t> &high) {
  int64_t half = parts / 2;
  for (int64_t v = 0; v < (pair ? 2 : 1); ++v)
    for (int64_t c = 0; c < columns; ++c)
      for (int64_t e = 0; e < half; ++e) {
        low.push_back(v * width + c * parts + e);
        high.push_back(v * width + c * parts + half + e);
      }
}

Value mlir::attn::emitLaneSums(OpBuilder &b, Location loc,
                               ArrayRef<Value> accs) {
  auto type = cast<VectorType>(accs.front().getType());
  int64_t width = type.getNumElements();
  assert(llvm::isPowerOf2_64(accs.size()) &&
         static_cast<int64_t>(accs.size()) <= width &&
         "a power of two of accumulators, at most one per lane");
  // `y` null: the halves of `x` alone.
  auto addHalves = [&](Value x, Value y, int64_t columns, int64_t parts,
                       int64_t xWidth) {
    SmallVector<int64_t> low, high;
    halvesMasks(columns, parts, xWidth, /*pair=*/y != nullptr, low, high);
    if (!y)
      y = x;
    Value lo = vector::ShuffleOp::create(b, loc, x, y, low);
    Value hi = vector::ShuffleOp::create(b, loc, x, y, high);
    return arith::AddFOp::create(b, loc, lo, hi).getResult();
  };
  // Pairs of neighbouring vectors, each of `columns` outputs of `parts`
  // partial sums, become one vector of twice the outputs.
  SmallVector<Value> level(accs);
  int64_t parts = width;
  while (level.size() > 1) {
    int64_t columns = width / parts;
    SmallVector<Value> next;
    for (size_t i = 0; i < level.size(); i += 2)
      next.push_back(addHalves(level[i], level[i + 1], columns, parts, width));
    level = std::move(next);
    parts /= 2;
  }
  // One vector of all the outputs: halve their partial sums in place.
  Value sums = level.front();
  int64_t columns = accs.size();
  while (parts > 1) {
    sums = addHalves(sums, Value(), columns, parts, columns * parts);
    parts /= 2;
  }
  return sums;
}
