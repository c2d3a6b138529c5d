//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//

#ifndef ATTNC_DIALECT_ATTN_ATTNDIALECT_H
#define ATTNC_DIALECT_ATTN_ATTNDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "attnc/Dialect/Attn/AttnOpsDialect.h.inc"

#endif // ATTNC_DIALECT_ATTN_ATTNDIALECT_H
