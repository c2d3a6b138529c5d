//===- Target.h - object emission and linking -------------------*- C++ -*-===//

#ifndef ATTNC_TARGET_TARGET_H
#define ATTNC_TARGET_TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class raw_ostream;
} // namespace llvm

namespace attnc {

/// Checks that `cpu` ("native" = this machine) is a CPU of the host's
/// target triple that can run its code, and that `features` (comma-
/// separated "+name"/"-name") are features of that target.
llvm::Error checkHostCpu(llvm::StringRef cpu, llvm::StringRef features = "");

/// Lists the host target's CPU names (or, with `features`, its features).
void printHostCpus(llvm::raw_ostream &os, bool features);

/// Translates an LLVM-dialect module (with any embedded GPU binaries) to
/// LLVM IR for the host, optimized at -O3 for `cpu` ("native" = this
/// machine) with extra `features`.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToHostLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                      llvm::StringRef cpu, llvm::StringRef features = "");

/// Whether code for `cpu` ("native" = this machine) with extra `features`
/// may use `feature` (e.g. "avx512bf16"); false when the CPU is unknown.
bool hostCpuHasFeature(llvm::StringRef cpu, llvm::StringRef features,
                       llvm::StringRef feature);

/// Writes `module` as a host object file for `cpu` to `path`.
llvm::Error emitObjectFile(llvm::Module &module, llvm::StringRef path,
                           llvm::StringRef cpu, llvm::StringRef features = "");

/// Links `objectPaths` (the model's object, and an encoder-decoder's
/// encoder object beside it) with libattnrt into an executable (or a shared
/// library) at `outputPath`. `runtimeDir` holds libattnrt.a and
/// libattnrt_main.a. A shared library exports only the C API, under its
/// own names and as `apiPrefix`_attnrt_* (so that a program can link two
/// models); all else is local to it.
llvm::Error linkModel(llvm::ArrayRef<std::string> objectPaths,
                      llvm::StringRef outputPath, llvm::StringRef runtimeDir,
                      bool shared, llvm::StringRef apiPrefix = "model");

/// The default API prefix of a model library: its file name without "lib"
/// and extensions, other characters than [A-Za-z0-9] as '_'
/// ("libbert-base.so" -> "bert_base").
std::string defaultApiPrefix(llvm::StringRef outputPath);

/// The PTX of the first gpu.binary object in `module` (format isa).
llvm::Expected<std::string> extractPtx(mlir::ModuleOp module);

/// Where ptxas is, or an error saying where it was looked for.
llvm::Expected<std::string> findPtxas();

} // namespace attnc

#endif // ATTNC_TARGET_TARGET_H
