//===- AttnOps.h - attn dialect operations ----------------------*- C++ -*-===//

#ifndef ATTNC_DIALECT_ATTN_ATTNOPS_H
#define ATTNC_DIALECT_ATTN_ATTNOPS_H

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attnc/Dialect/Attn/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attn/AttnAttrs.h.inc"

namespace mlir::attn {
/// The extents of an attn.sdpa (SdpaOp::getSdpaShape): query
/// [batch, hq, sq, dq], key [batch, hkv, sk, dk], value [batch, hkv, sk, dv];
/// query head h reads kv head h / group.
struct SdpaShape {
  int64_t batch, hq, hkv, group, sq, sk, dq, dk, dv;
};
} // namespace mlir::attn

#define GET_OP_CLASSES
#include "attnc/Dialect/Attn/AttnOps.h.inc"

namespace mlir::attn {
/// An attn.sdpa score bias adding `slopes[h] * k` to head h's score of key
/// k (ALiBi without the query's part, which is the same for a whole softmax
/// row): a constant [1, heads, 1, keys], heads = slopes.size(), each value
/// computed in f32 (as transformers does) and rounded to `elementType`.
Value createKeySlopeBias(OpBuilder &b, Location loc, FloatType elementType,
                         ArrayRef<double> slopes, int64_t keys);
} // namespace mlir::attn

#endif // ATTNC_DIALECT_ATTN_ATTNOPS_H
