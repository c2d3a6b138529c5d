//===- AttnDialect.cpp - attn dialect registration ------------------------===//

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "attnc/Dialect/Attn/AttnEnums.cpp.inc"
#include "attnc/Dialect/Attn/AttnOpsDialect.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attnc/Dialect/Attn/AttnOps.cpp.inc"
      >();
}
