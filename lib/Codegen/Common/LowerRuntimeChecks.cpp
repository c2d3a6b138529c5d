//===- LowerRuntimeChecks.cpp - failed cf.assert -> libattnrt -------------===//
//
// The run-time checks of attn-compile --runtime-checks are upstream's
// generate-runtime-verification cf.asserts; the ONNX importer writes
// cf.asserts for positions that depend on dynamic sizes. A failed one must
// say which op of the model went wrong on stderr and end the process with
// an error status; it calls libattnrt (RuntimeChecks.cpp) for that.
//
// Checks of the input sizes alone (a condition computed from constants and
// the entry's argument dimensions, in the entry's body: the importer's
// slice bounds and dim_param sums) are preconditions: they move to the
// start of the entry, and a failed one reports to libattnrt
// (attnrt_precondition_failed) and returns before anything runs, so that
// attnrt_run fails with the message (a Python exception, not the end of
// the process).
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Passes.h"

#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERRUNTIMECHECKS
#include "attnc/Codegen/Common/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
constexpr StringLiteral kCheckFailed = "attnrt_runtime_check_failed";
constexpr StringLiteral kPreconditionFailed = "attnrt_precondition_failed";

/// Whether `v` is computed only from constants and dimensions of `entry`'s
/// arguments (arith ops, tensor/memref.dim).
bool isInputSizeValue(Value v, Block &entry) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    Operation *op = x.getDefiningOp();
    if (!op || op->getBlock() != &entry)
      return false;
    if (isa<memref::DimOp, tensor::DimOp>(op)) {
      auto arg = dyn_cast<BlockArgument>(op->getOperand(0));
      if (!arg || arg.getOwner() != &entry)
        return false;
      work.push_back(op->getOperand(1));
      continue;
    }
    if (!isa_and_nonnull<arith::ArithDialect>(op->getDialect()) ||
        op->getNumRegions() != 0 || !isPure(op))
      return false;
    llvm::append_range(work, op->getOperands());
  }
  return true;
}

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

/// Moves the precondition checks among `asserts` (see the file comment) to
/// the start of the model's entry, where a failure reports to libattnrt and
/// returns; returns the other checks.
SmallVector<cf::AssertOp>
hoistPreconditions(ModuleOp module, ArrayRef<cf::AssertOp> asserts,
                   function_ref<Value(cf::AssertOp)> messageGlobal,
                   OpBuilder &builder) {
  FlatSymbolRefAttr entryRef =
      attn::AttnDialect::EntryAttrHelper(module.getContext()).getAttr(module);
  auto entry = entryRef ? module.lookupSymbol<func::FuncOp>(entryRef.getAttr())
                        : nullptr;
  if (!entry || entry.isExternal() || entry.getNumResults() != 0 ||
      !entry.getBody().hasOneBlock())
    return SmallVector<cf::AssertOp>(asserts);
  Block &body = entry.getBody().front();
  SmallVector<cf::AssertOp> hoisted, rest;
  for (cf::AssertOp op : asserts)
    (op->getBlock() == &body && isInputSizeValue(op.getArg(), body) ? hoisted
                                                                    : rest)
        .push_back(op);
  if (hoisted.empty())
    return rest;

  // The conditions' producers, cloned in order at the start.
  llvm::SetVector<Operation *> slice;
  for (cf::AssertOp op : hoisted) {
    SmallVector<Value> work{op.getArg()};
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (def && slice.insert(def))
        llvm::append_range(work, def->getOperands());
    }
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *firstOp = &body.front();
  builder.setInsertionPoint(firstOp);
  IRMapping mapping;
  for (Operation *op : ordered)
    builder.clone(*op, mapping);
  Location loc = entry.getLoc();
  Value one = arith::ConstantIntOp::create(builder, loc, 1, 1);
  Value anyFailed;
  for (cf::AssertOp op : hoisted) {
    Value failed = arith::XOrIOp::create(builder, op.getLoc(),
                                         mapping.lookup(op.getArg()), one);
    anyFailed = anyFailed
                    ? arith::OrIOp::create(builder, loc, anyFailed, failed)
                    : failed;
    auto ifOp = scf::IfOp::create(builder, op.getLoc(), failed);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&ifOp.getThenRegion().front());
    func::CallOp::create(builder, op.getLoc(), kPreconditionFailed, TypeRange(),
                         messageGlobal(op));
  }
  // A failure returns at once; the body runs otherwise.
  Block *run = body.splitBlock(firstOp);
  Block *stop = builder.createBlock(run);
  func::ReturnOp::create(builder, loc);
  builder.setInsertionPointToEnd(&body);
  cf::CondBranchOp::create(builder, loc, anyFailed, stop, run);
  for (cf::AssertOp op : hoisted)
    op.erase();
  return rest;
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
    for (StringLiteral callee : {kCheckFailed, kPreconditionFailed}) {
      if (module.lookupSymbol<func::FuncOp>(callee))
        continue;
      builder.setInsertionPointToEnd(module.getBody());
      auto decl = func::FuncOp::create(builder, module.getLoc(), callee,
                                       builder.getFunctionType({ptrType}, {}));
      decl.setPrivate();
    }
    SymbolTable symbols(module);
    unsigned next = 0;
    auto messageGlobal = [&](cf::AssertOp op) {
      std::string name;
      do
        name = "attn_runtime_check_" + std::to_string(next++);
      while (symbols.lookup(name));
      // createGlobalString stores exactly the bytes given; C wants a NUL.
      std::string message = describeCheck(op);
      message.push_back('\0');
      return LLVM::createGlobalString(op.getLoc(), builder, name, message,
                                      LLVM::Linkage::Internal);
    };
    asserts = hoistPreconditions(module, asserts, messageGlobal, builder);
    for (cf::AssertOp op : asserts) {
      Location loc = op.getLoc();
      builder.setInsertionPoint(op);
      Value one = arith::ConstantIntOp::create(builder, loc, /*value=*/1,
                                               /*width=*/1);
      Value failed = arith::XOrIOp::create(builder, loc, op.getArg(), one);
      auto ifOp = scf::IfOp::create(builder, loc, failed);
      builder.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value text = messageGlobal(op);
      func::CallOp::create(builder, loc, kCheckFailed, TypeRange(), text);
      op.erase();
    }
  }
};
} // namespace
