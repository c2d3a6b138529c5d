//===- IndexArith.h - index arithmetic for the kernel builders --*- C++ -*-===//
//
// The kernel builders (CPU matmul tiles, row vectorization, tensor-core
// GEMM and flash attention, mma.sync staging) compute many index offsets
// from constants; this is their one helper for it. Each builder binds it to
// its builder and location.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_COMMON_INDEXARITH_H
#define ATTNC_LIB_CODEGEN_COMMON_INDEXARITH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// Index constants and arithmetic at one location.
class IndexArith {
public:
  IndexArith(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value cst(int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  /// `x + c`; `x` itself when `c` is 0.
  Value add(Value x, int64_t c) const { return c ? add(x, cst(c)) : x; }
  Value mul(Value x, int64_t c) const {
    return arith::MulIOp::create(b, loc, x, cst(c));
  }
  Value divu(Value x, int64_t c) const {
    return arith::DivUIOp::create(b, loc, x, cst(c));
  }
  Value remu(Value x, int64_t c) const {
    return arith::RemUIOp::create(b, loc, x, cst(c));
  }

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_COMMON_INDEXARITH_H
