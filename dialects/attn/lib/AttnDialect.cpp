//===- AttnDialect.cpp - attn dialect registration ------------------------===//

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

#include "attnc/Dialect/Attn/AttnEnums.cpp.inc"
#include "attnc/Dialect/Attn/AttnOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attn/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attnc/Dialect/Attn/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attnc/Dialect/Attn/AttnAttrs.cpp.inc"
      >();
}

int64_t TileAttr::maxValue(StringRef field) {
  return llvm::StringSwitch<int64_t>(field)
      .Cases({"block_q", "block_k"}, 4096)
      .Cases({"vector_width", "row_tile", "col_tile"}, 64)
      .Case("column_block", 65536)
      .Case("warp_n_tiles", 16)
      .Case("threads", 1024)
      .Default(std::numeric_limits<int64_t>::max());
}

LogicalResult TileAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, std::optional<int64_t> blockQ,
    std::optional<int64_t> blockK, std::optional<int64_t> vectorWidth,
    std::optional<int64_t> rowTile, std::optional<int64_t> colTile,
    std::optional<int64_t> columnBlock, std::optional<int64_t> warpNTiles,
    std::optional<int64_t> threads) {
  std::pair<StringLiteral, std::optional<int64_t>> fields[] = {
      {"block_q", blockQ},           {"block_k", blockK},
      {"vector_width", vectorWidth}, {"row_tile", rowTile},
      {"col_tile", colTile},         {"column_block", columnBlock},
      {"warp_n_tiles", warpNTiles},  {"threads", threads}};
  for (auto [name, value] : fields) {
    if (value && *value < 1)
      return emitError() << "#attn.tile: " << name << " must be >= 1, got "
                         << *value;
    if (value && *value > maxValue(name))
      return emitError() << "#attn.tile: " << name << " must be at most "
                         << maxValue(name) << ", got " << *value;
  }
  // The CPU kernel's accumulators are vector<VLxf32>, which LLVM lowers to
  // whole registers only for powers of two.
  if (vectorWidth && !llvm::isPowerOf2_64(*vectorWidth))
    return emitError() << "#attn.tile: vector_width must be a power of two, "
                          "got "
                       << *vectorWidth;
  return success();
}

LogicalResult AttnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == TileAttr::kAttrName && !isa<TileAttr>(attr.getValue()))
    return op->emitError() << "'" << TileAttr::kAttrName
                           << "' must be a #attn.tile attribute, got "
                           << attr.getValue();
  if (attr.getName() == CausalLmAttrHelper::getNameStr()) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be a unit attribute on a module";
    // Generation relies on the claim: an attention that sees later
    // positions would make every generated token wrong.
    WalkResult walk = op->walk([&](Operation *inner) {
      bool causal = true;
      if (auto sdpa = dyn_cast<SdpaOp>(inner))
        causal = sdpa.getCausal();
      else if (auto mha = dyn_cast<MhaOp>(inner))
        causal = mha.getCausal();
      if (causal)
        return WalkResult::advance();
      inner->emitOpError() << "is not causal, but the module is marked '"
                           << attr.getName().getValue()
                           << "' (a causal language model)";
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }
  return success();
}
