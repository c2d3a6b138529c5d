//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//

#ifndef ATTNC_DIALECT_ATTN_ATTNDIALECT_H
#define ATTNC_DIALECT_ATTN_ATTNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "attnc/Dialect/Attn/AttnOpsDialect.h.inc"

#endif // ATTNC_DIALECT_ATTN_ATTNDIALECT_H
