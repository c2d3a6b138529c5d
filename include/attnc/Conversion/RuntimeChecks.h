//===- RuntimeChecks.h - passes that insert run-time checks -----*- C++ -*-===//

#ifndef ATTNC_CONVERSION_RUNTIMECHECKS_H
#define ATTNC_CONVERSION_RUNTIMECHECKS_H

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attnc/Conversion/RuntimeChecks.h.inc"

#define GEN_PASS_REGISTRATION
#include "attnc/Conversion/RuntimeChecks.h.inc"

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_RUNTIMECHECKS_H
