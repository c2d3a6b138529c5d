//===- AttnDialect.cpp - attn dialect registration ------------------------===//

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Dialect/Attn/GenerationAttrs.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

/// Adds the results of `op` to `stream` when they depend on a value in it;
/// see collectDecoderStreamValues.
static void collectStreamValues(Operation *op, DenseSet<Value> &stream) {
  auto inStream = [&](Value v) { return stream.contains(v); };
  bool depends = llvm::any_of(op->getOperands(), inStream);
  for (Region &region : op->getRegions()) {
    for (Block &block : region) {
      bool positional =
          isa<LayerOp>(op) && block.getNumArguments() == op->getNumOperands();
      for (BlockArgument arg : block.getArguments())
        if (positional ? inStream(op->getOperand(arg.getArgNumber())) : depends)
          stream.insert(arg);
      for (Operation &inner : block)
        collectStreamValues(&inner, stream);
    }
    // The results also depend on what the body computes from the stream.
    region.walk([&](Operation *inner) {
      depends = depends || llvm::any_of(inner->getOperands(), inStream);
    });
  }
  if (depends)
    stream.insert(op->result_begin(), op->result_end());
}

/// The values of `module` that depend on a function argument not marked
/// attn.encoder_input (the decoder stream of an encoder-decoder; every input
/// of a decoder). They flow into attn.layer bodies argument by argument, so
/// that a decoder layer's encoder extra stays out, and through other regions
/// as a whole.
static DenseSet<Value> collectDecoderStreamValues(Operation *module) {
  DenseSet<Value> stream;
  module->walk([&](FunctionOpInterface func) {
    if (func.isExternal())
      return;
    for (BlockArgument arg : func.getArguments())
      if (!func.getArgAttr(arg.getArgNumber(),
                           AttnDialect::EncoderInputAttrHelper::getNameStr()))
        stream.insert(arg);
    for (Block &block : func.getFunctionBody())
      for (Operation &op : block)
        collectStreamValues(&op, stream);
  });
  return stream;
}

LogicalResult AttnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == TileAttr::kAttrName && !isa<TileAttr>(attr.getValue()))
    return op->emitError() << "'" << TileAttr::kAttrName
                           << "' must be a #attn.tile attribute, got "
                           << attr.getValue();
  if (attr.getName() == kRecomputePastAttrName) {
    auto length = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !length || length.getValue().isNonPositive())
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be a positive integer on a module";
    return success();
  }
  if (attr.getName() == CausalLmAttrHelper::getNameStr()) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be a unit attribute on a module";
    // Generation relies on the claim: an attention that sees later
    // positions would make every generated token wrong. An encoder-decoder
    // may attend without a mask where that cannot happen: to keys and
    // values (and biases, lengths) of the encoder alone, whether the
    // queries are the encoder's (its self-attention) or the decoder
    // stream's (cross-attention).
    DenseSet<Value> streamValues = collectDecoderStreamValues(op);
    auto fromStream = [&](ValueRange values) {
      return llvm::any_of(values,
                          [&](Value v) { return streamValues.contains(v); });
    };
    WalkResult walk = op->walk([&](Operation *inner) {
      bool allowed = true;
      // Everything but the query is what the attention reads across
      // positions (mha without key_value reads its query that way too).
      if (auto sdpa = dyn_cast<SdpaOp>(inner))
        allowed =
            sdpa.getCausal() || !fromStream(inner->getOperands().drop_front());
      else if (auto mha = dyn_cast<MhaOp>(inner))
        allowed =
            mha.getCausal() || !fromStream(inner->getOperands().drop_front(
                                   mha.getKeyValue() ? 1 : 0));
      if (allowed)
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
