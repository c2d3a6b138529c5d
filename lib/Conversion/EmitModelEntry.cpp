//===- EmitModelEntry.cpp - runtime entry points of a compiled model ------===//
//
// libattnrt calls every compiled model the same way, whatever its
// signature: `attn_model_invoke(void **buffers)` with one buffer per record
// of `attn_model_manifest`. This pass writes both on the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMITMODELENTRY
#include "attnc/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnEmitModelEntryPass
    : public mlir::attn::impl::AttnEmitModelEntryBase<AttnEmitModelEntryPass> {
  using AttnEmitModelEntryBase::AttnEmitModelEntryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto manifest = module->getAttrOfType<StringAttr>(kManifestAttrName);
    auto entryRef = module->getAttrOfType<FlatSymbolRefAttr>("attn.entry");
    if (!manifest || !entryRef) {
      module.emitError("attn-emit-model-entry: no model manifest; run "
                       "attn-hoist-weights first");
      return signalPassFailure();
    }
    if (target != "cpu" && target != "cuda") {
      module.emitError("attn-emit-model-entry: unknown target '")
          << target << "' (expected cpu or cuda)";
      return signalPassFailure();
    }
    auto forward = module.lookupSymbol<LLVM::LLVMFuncOp>(entryRef.getAttr());
    if (!forward) {
      module.emitError("attn-emit-model-entry: the entry @")
          << entryRef.getValue() << " is not an llvm.func yet";
      return signalPassFailure();
    }
    StringRef records = manifest.getValue();
    size_t numRecords = records.count('\n');
    if (forward.getNumArguments() != numRecords ||
        !isa<LLVM::LLVMVoidType>(forward.getFunctionType().getReturnType())) {
      forward.emitOpError("expected a void function of ")
          << numRecords
          << " bare pointers (one per manifest record), got "
          << forward.getFunctionType();
      return signalPassFailure();
    }
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    for (Type argType : forward.getFunctionType().getParams())
      if (argType != ptrType) {
        forward.emitOpError("expected bare pointer arguments, got ")
            << argType;
        return signalPassFailure();
      }

    // The user's `main` must not clash with the executable's own main.
    StringAttr forwardName = StringAttr::get(ctx, "attn_model_forward");
    if (failed(SymbolTable::replaceAllSymbolUses(forward, forwardName,
                                                 module)))
      return signalPassFailure();
    forward.setSymName(forwardName);
    // The weight names live in the manifest; LLVM has no use for them.
    forward.removeArgAttrsAttr();
    forward.setLinkage(LLVM::Linkage::Internal);

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = forward.getLoc();
    auto invokeType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                                  {ptrType});
    auto invoke =
        LLVM::LLVMFuncOp::create(b, loc, "attn_model_invoke", invokeType);
    Block *block = invoke.addEntryBlock(b);
    b.setInsertionPointToStart(block);
    SmallVector<Value> args;
    for (unsigned i = 0; i < numRecords; ++i) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrType, ptrType, block->getArgument(0),
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot));
    }
    LLVM::CallOp::create(b, loc, forward, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    std::string text = "attnc-manifest 1\ntarget " + target + "\n";
    text += records.str();
    text.push_back('\0');
    b.setInsertionPointToEnd(module.getBody());
    auto arrayType =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
    LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                           LLVM::Linkage::External, "attn_model_manifest",
                           b.getStringAttr(text));
  }
};
} // namespace
