//===- LowerRuntimeChecks.cpp - failed cf.assert -> libattnrt -------------===//
//
// The run-time checks of attn-compile --runtime-checks are upstream's
// generate-runtime-verification cf.asserts; the ONNX importer writes
// cf.asserts for positions that depend on dynamic sizes. A failed one must
// say which op of the model went wrong on stderr and end the process with
// an error status; it calls libattnrt (RuntimeChecks.cpp) for that.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERRUNTIMECHECKS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
constexpr StringLiteral kCheckFailed = "attnrt_runtime_check_failed";

/// "file:line:col: error: run-time check failed: what" from a check's
/// location and upstream's
/// message ("ERROR: Runtime op verification failed\n...^ reason\n
/// Location: ..."), like a compiler diagnostic; the whole message where the
/// location has no file position.
std::string describeCheck(cf::AssertOp op) {
  StringRef message = op.getMsg();
  std::optional<FileLineColLoc> where;
  op.getLoc()->walk([&](Location loc) {
    if (auto file = dyn_cast<FileLineColLoc>(loc)) {
      where = file;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!where)
    return "error: run-time check failed: " + message.str();
  StringRef reason = "check failed";
  SmallVector<StringRef> lines;
  message.split(lines, '\n');
  for (StringRef line : lines)
    if (line.consume_front("^ "))
      reason = line.trim();
  return (where->getFilename().getValue() + ":" + Twine(where->getLine()) +
          ":" + Twine(where->getColumn()) +
          ": error: run-time check failed: " + reason)
      .str();
}

struct AttnLowerRuntimeChecksPass
    : public mlir::attn::impl::AttnLowerRuntimeChecksBase<
          AttnLowerRuntimeChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    // Device code cannot call libattnrt.
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (auto check = dyn_cast<cf::AssertOp>(op))
        asserts.push_back(check);
      return WalkResult::advance();
    });
    if (asserts.empty())
      return;
    MLIRContext *ctx = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    OpBuilder builder(ctx);
    if (!module.lookupSymbol<func::FuncOp>(kCheckFailed)) {
      builder.setInsertionPointToEnd(module.getBody());
      auto decl = func::FuncOp::create(builder, module.getLoc(), kCheckFailed,
                                       builder.getFunctionType({ptrType}, {}));
      decl.setPrivate();
    }
    SymbolTable symbols(module);
    unsigned next = 0;
    for (cf::AssertOp op : asserts) {
      Location loc = op.getLoc();
      builder.setInsertionPoint(op);
      Value one = arith::ConstantIntOp::create(builder, loc, /*value=*/1,
                                               /*width=*/1);
      Value failed = arith::XOrIOp::create(builder, loc, op.getArg(), one);
      auto ifOp = scf::IfOp::create(builder, loc, failed);
      builder.setInsertionPointToStart(&ifOp.getThenRegion().front());
      std::string name;
      do
        name = "attn_runtime_check_" + std::to_string(next++);
      while (symbols.lookup(name));
      // createGlobalString stores exactly the bytes given; C wants a NUL.
      std::string message = describeCheck(op);
      message.push_back('\0');
      Value text = LLVM::createGlobalString(loc, builder, name, message,
                                            LLVM::Linkage::Internal);
      func::CallOp::create(builder, loc, kCheckFailed, TypeRange(), text);
      op.erase();
    }
  }
};
} // namespace
