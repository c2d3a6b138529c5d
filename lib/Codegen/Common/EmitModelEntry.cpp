//===- EmitModelEntry.cpp - runtime entry points of a compiled model ------===//
//
// libattnrt calls every compiled model the same way, whatever its
// signature: `attn_model_invoke(void **buffers)` with one buffer per record
// of `attn_model_manifest`. This pass writes both on the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/Common/Manifest.h"
#include "attnc/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMITMODELENTRY
#include "attnc/Codegen/Common/Passes.h.inc"
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
    FlatSymbolRefAttr entryRef =
        AttnDialect::EntryAttrHelper(ctx).getAttr(module);
    if (!module->hasAttr(kManifestAttrName) || !entryRef) {
      module.emitError("attn-emit-model-entry: no model manifest; run "
                       "attn-hoist-weights first");
      return signalPassFailure();
    }
    FailureOr<std::vector<attnrt::ManifestRecord>> records =
        getManifestRecords(module);
    if (failed(records))
      return signalPassFailure();
    auto forward = module.lookupSymbol<LLVM::LLVMFuncOp>(entryRef.getAttr());
    if (!forward) {
      module.emitError("attn-emit-model-entry: the entry @")
          << entryRef.getValue() << " is not an llvm.func yet";
      return signalPassFailure();
    }
    size_t numRecords = records->size();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64Type = IntegerType::get(ctx, 64);
    ArrayRef<Type> params = forward.getFunctionType().getParams();
    // Bare pointers: one ptr per record. Descriptors: per record
    // (allocated, aligned, offset, sizes..., strides...).
    size_t descriptorArgs = 0;
    for (const attnrt::ManifestRecord &record : *records)
      descriptorArgs += 3 + 2 * record.dims.size();
    // Dynamic sizes (inputs and outputs only) come at run time, after the
    // buffers: buffers[numRecords] points to them, in record order.
    bool dynamic = llvm::any_of(*records, [](const attnrt::ManifestRecord &r) {
      return r.isDynamic();
    });
    bool bare = !dynamic && params.size() == numRecords &&
                llvm::all_of(params, [&](Type t) { return t == ptrType; });
    bool descriptors = !bare && params.size() == descriptorArgs;
    if ((!bare && !descriptors) ||
        !isa<LLVM::LLVMVoidType>(forward.getFunctionType().getReturnType())) {
      forward.emitOpError("expected a void function taking one memref per "
                          "manifest record (")
          << numRecords << "), got " << forward.getFunctionType();
      return signalPassFailure();
    }

    // The user's `main` must not clash with the executable's own main.
    StringAttr forwardName =
        StringAttr::get(ctx, symbolPrefix.getValue() + "_forward");
    if (failed(SymbolTable::replaceAllSymbolUses(forward, forwardName, module)))
      return signalPassFailure();
    forward.setSymName(forwardName);
    // The weight names live in the manifest; LLVM has no use for them.
    forward.removeArgAttrsAttr();
    forward.setLinkage(LLVM::Linkage::Internal);
    // So are the functions it calls (attn-outline-layers' layer bodies):
    // only the entry points below are exported, so that several models link
    // into one program.
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (!func.isExternal())
        func.setLinkage(LLVM::Linkage::Internal);

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = forward.getLoc();
    auto invokeType =
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrType});
    auto invoke = LLVM::LLVMFuncOp::create(
        b, loc, symbolPrefix.getValue() + "_invoke", invokeType);
    Block *block = invoke.addEntryBlock(b);
    b.setInsertionPointToStart(block);
    SmallVector<Value> args;
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64Type, b.getI64IntegerAttr(v));
    };
    auto loadPointer = [&](int32_t i) -> Value {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptrType, ptrType, block->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{i});
      return LLVM::LoadOp::create(b, loc, ptrType, slot);
    };
    Value dynamicSizes =
        dynamic ? loadPointer(static_cast<int32_t>(numRecords)) : Value();
    int32_t nextDynamic = 0;
    for (unsigned i = 0; i < numRecords; ++i) {
      Value buffer = loadPointer(static_cast<int32_t>(i));
      if (bare) {
        args.push_back(buffer);
        continue;
      }
      // A dense row-major descriptor of the record's shape: static sizes are
      // constants, dynamic ones the next run-time size.
      ArrayRef<int64_t> shape = (*records)[i].dims;
      if (!(*records)[i].isDynamic()) {
        args.append({buffer, buffer, constant(0)});
        for (int64_t size : shape)
          args.push_back(constant(size));
        SmallVector<int64_t> strides(shape.size(), 1);
        for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
          strides[d] = strides[d + 1] * shape[d + 1];
        for (int64_t stride : strides)
          args.push_back(constant(stride));
        continue;
      }
      Value zero = constant(0);
      SmallVector<Value> sizes;
      for (int64_t size : shape) {
        if (size != attnrt::kDynamicDim) {
          sizes.push_back(constant(size));
          continue;
        }
        Value at = LLVM::GEPOp::create(b, loc, ptrType, i64Type, dynamicSizes,
                                       ArrayRef<LLVM::GEPArg>{nextDynamic++});
        sizes.push_back(LLVM::LoadOp::create(b, loc, i64Type, at));
      }
      args.append({buffer, buffer, zero});
      args.append(sizes);
      SmallVector<Value> strides(shape.size());
      SmallVector<int64_t> staticStrides(shape.size(), 1);
      bool staticSoFar = true;
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
        if (d == static_cast<int64_t>(shape.size()) - 1) {
          strides[d] = constant(1);
          continue;
        }
        staticSoFar = staticSoFar && shape[d + 1] != attnrt::kDynamicDim;
        if (staticSoFar) {
          staticStrides[d] = staticStrides[d + 1] * shape[d + 1];
          strides[d] = constant(staticStrides[d]);
        } else {
          strides[d] =
              LLVM::MulOp::create(b, loc, strides[d + 1], sizes[d + 1]);
        }
      }
      args.append(strides);
    }
    LLVM::CallOp::create(b, loc, forward, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    // The runtime reads the manifest as a C string.
    std::string text = attnrt::writeManifest(target, *records);
    text.push_back('\0');
    b.setInsertionPointToEnd(module.getBody());
    auto arrayType =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
    LLVM::GlobalOp::create(
        b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::External,
        symbolPrefix.getValue() + "_manifest", b.getStringAttr(text));
  }
};
} // namespace
