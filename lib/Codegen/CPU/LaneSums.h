//===- LaneSums.h - lane sums of dot-product accumulators -------*- C++ -*-===//
//
// The dot-product tiles of attn-cpu-matmul-kernel (projections) and of
// attn-cpu-outer-product-matmul (Q K^T over a KV cache) end with one vector
// accumulator per output whose lanes hold partial sums of k. Reducing each
// accumulator on its own costs log2(VL) shuffle-add levels per output;
// summing the accumulators of a tile row's neighbouring outputs together
// shares the shuffles.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_CPU_LANESUMS_H
#define ATTNC_LIB_CODEGEN_CPU_LANESUMS_H

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// The lane sums of `accs` (n vectors of the same f32 vector type, n a
/// power of two no larger than their lane count) as one vector<n x f32>:
/// element j is the sum of the lanes of accs[j]. A tree: each level adds
/// the two halves of every output's partial sums, pairing neighbouring
/// vectors while there are several, about 3 (n - 1) + 3 log2(VL / n)
/// shuffles and adds instead of n reductions of log2(VL) levels each.
Value emitLaneSums(OpBuilder &b, Location loc, ArrayRef<Value> accs);

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_CPU_LANESUMS_H
