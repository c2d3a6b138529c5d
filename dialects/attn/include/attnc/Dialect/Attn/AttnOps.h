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

#endif // ATTNC_DIALECT_ATTN_ATTNOPS_H
