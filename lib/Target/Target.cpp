//===- Target.cpp - host object emission and linking ----------------------===//

#include "attnc/Target/Target.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace llvm;

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

static Expected<const Target *> lookupHostTarget(Triple &triple) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  triple = Triple(sys::getDefaultTargetTriple());
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no LLVM target for " + triple.str() + ": " + error);
  return target;
}

/// The CPU name and feature string for `cpu` ("native": this machine, with
/// its features) plus the user's `features`.
static std::pair<std::string, std::string> cpuAndFeatures(StringRef cpu,
                                                          StringRef features) {
  SubtargetFeatures subtarget;
  if (cpu == "native")
    for (auto &feature : sys::getHostCPUFeatures())
      subtarget.AddFeature(feature.first(), feature.second);
  SmallVector<StringRef> extra;
  features.split(extra, ',', -1, /*KeepEmpty=*/false);
  for (StringRef feature : extra)
    subtarget.AddFeature(feature.trim());
  std::string name = cpu == "native" ? sys::getHostCPUName().str() : cpu.str();
  return {name, subtarget.getString()};
}

Error attnc::checkHostCpu(StringRef cpu, StringRef features) {
  Triple triple;
  auto target = lookupHostTarget(triple);
  if (!target)
    return target.takeError();
  auto [name, featureString] = cpuAndFeatures(cpu, features);
  std::unique_ptr<MCSubtargetInfo> info(
      (*target)->createMCSubtargetInfo(triple, name, ""));
  if (!info)
    return makeError("cannot describe the subtargets of " + triple.str());
  // LLVM reports an unknown CPU or feature with a warning and goes on with
  // a generic one, and some combinations end in a fatal error inside the
  // target machine: check both here, where a diagnostic can still be given.
  if (!info->isCPUStringValid(name))
    return makeError("unknown CPU '" + name + "' for " + triple.str() +
                     " (--cpu=help lists the known ones)");
  SmallVector<StringRef> extra;
  features.split(extra, ',', -1, /*KeepEmpty=*/false);
  for (StringRef feature : extra) {
    feature = feature.trim();
    StringRef bare = feature;
    if (!bare.consume_front("+") && !bare.consume_front("-"))
      return makeError("CPU feature '" + feature +
                       "' must start with + (enable) or - (disable)");
    if (!llvm::any_of(
            info->getAllProcessorFeatures(),
            [&](const SubtargetFeatureKV &kv) { return bare == kv.Key; }))
      return makeError("unknown CPU feature '" + bare + "' for " +
                       triple.str() + " (--cpu-features=help lists them)");
  }
  if (triple.getArch() == Triple::x86_64) {
    std::unique_ptr<MCSubtargetInfo> configured(
        (*target)->createMCSubtargetInfo(triple, name, featureString));
    if (!configured || !configured->checkFeatures("+64bit")) {
      std::string what = "CPU '" + name + "'";
      if (!features.empty())
        what += " with features '" + features.str() + "'";
      return makeError(what + " cannot run 64-bit code, which " + triple.str() +
                       " needs");
    }
  }
  return Error::success();
}

void attnc::printHostCpus(raw_ostream &os, bool features) {
  Triple triple;
  auto target = lookupHostTarget(triple);
  if (!target) {
    consumeError(target.takeError());
    return;
  }
  std::unique_ptr<MCSubtargetInfo> info(
      (*target)->createMCSubtargetInfo(triple, "", ""));
  os << (features ? "CPU features" : "CPUs") << " of " << triple.str()
     << " (this machine: " << sys::getHostCPUName() << "):\n";
  if (features)
    for (const SubtargetFeatureKV &kv : info->getAllProcessorFeatures())
      os << "  " << kv.Key << "\n";
  else
    for (const SubtargetSubTypeKV &kv : info->getAllProcessorDescriptions())
      os << "  " << kv.Key << "\n";
}

bool attnc::hostCpuHasFeature(StringRef cpu, StringRef features,
                              StringRef feature) {
  Triple triple;
  auto target = lookupHostTarget(triple);
  if (!target) {
    consumeError(target.takeError());
    return false;
  }
  auto [name, featureString] = cpuAndFeatures(cpu, features);
  std::unique_ptr<MCSubtargetInfo> info(
      (*target)->createMCSubtargetInfo(triple, name, featureString));
  return info && info->isCPUStringValid(name) &&
         info->checkFeatures(("+" + feature).str());
}

static Expected<std::unique_ptr<TargetMachine>>
createHostMachine(StringRef cpu, StringRef features) {
  if (Error err = attnc::checkHostCpu(cpu, features))
    return std::move(err);
  Triple triple;
  auto target = lookupHostTarget(triple);
  if (!target)
    return target.takeError();
  auto [cpuName, featureString] = cpuAndFeatures(cpu, features);
  TargetOptions options;
  std::unique_ptr<TargetMachine> machine((*target)->createTargetMachine(
      triple, cpuName, featureString, options, Reloc::PIC_, std::nullopt,
      CodeGenOptLevel::Aggressive));
  if (!machine)
    return makeError("cannot create a target machine for " + triple.str());
  return machine;
}

Expected<std::unique_ptr<Module>>
attnc::translateToHostLLVMIR(mlir::ModuleOp module, LLVMContext &context,
                             StringRef cpu, StringRef features) {
  std::unique_ptr<Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "attnc-model");
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  auto machine = createHostMachine(cpu, features);
  if (!machine)
    return machine.takeError();
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvmModule->setDataLayout((*machine)->createDataLayout());
  auto optimize = mlir::makeOptimizingTransformer(3, 0, machine->get());
  if (Error err = optimize(llvmModule.get()))
    return std::move(err);
  return llvmModule;
}

Error attnc::emitObjectFile(Module &module, StringRef path, StringRef cpu,
                            StringRef features) {
  auto machine = createHostMachine(cpu, features);
  if (!machine)
    return machine.takeError();
  std::error_code ec;
  raw_fd_ostream out(path, ec, sys::fs::OF_None);
  if (ec)
    return makeError("cannot write " + path + ": " + ec.message());
  legacy::PassManager pm;
  if ((*machine)->addPassesToEmitFile(pm, out, nullptr,
                                      CodeGenFileType::ObjectFile))
    return makeError("the host target cannot emit object files");
  pm.run(module);
  out.flush();
  if (out.has_error())
    return makeError("error writing " + path);
  return Error::success();
}

/// The C API of attnrt.h that a model library exports, in the header's
/// order (two-models.test checks that none is missing).
// clang-format off
static const char *const kExportedApi[] = {
    "attnrt_dtype_name", "attnrt_dtype_size", "attnrt_open",
    "attnrt_open_linked", "attnrt_linked_entry", "attnrt_close", "attnrt_last_error", "attnrt_target",
    "attnrt_num_weights", "attnrt_num_inputs", "attnrt_num_outputs",
    "attnrt_num_states", "attnrt_input_name", "attnrt_input_dtype",
    "attnrt_input_rank", "attnrt_input_dim", "attnrt_input_dims",
    "attnrt_input_bytes", "attnrt_output_name", "attnrt_output_dtype",
    "attnrt_output_rank", "attnrt_output_dim", "attnrt_output_dims",
    "attnrt_output_bytes", "attnrt_state_name", "attnrt_state_dtype",
    "attnrt_state_rank", "attnrt_state_dim", "attnrt_state_dims",
    "attnrt_state_bytes", "attnrt_bind_weights", "attnrt_set_input",
    "attnrt_set_input_shaped", "attnrt_output_shape", "attnrt_run",
    "attnrt_reset_state", "attnrt_get_output", "attnrt_last_run_ms",
    "attnrt_context_create", "attnrt_context_free", "attnrt_context_set_input",
    "attnrt_context_set_input_shaped", "attnrt_context_run",
    "attnrt_context_get_output", "attnrt_context_output_shape",
    "attnrt_context_reset_state", "attnrt_context_last_run_ms",
    "attnrt_context_last_error", "attnrt_weight_bytes_read",
    "attnrt_weight_file_bytes", "attnrt_session_create", "attnrt_session_free",
    "attnrt_session_set_encoder_input",
    "attnrt_session_shape", "attnrt_session_prefill", "attnrt_session_decode",
    "attnrt_session_logits", "attnrt_session_sample", "attnrt_session_generate",
    "attnrt_session_timing", "attnrt_session_slot_start",
    "attnrt_session_slots_step", "attnrt_session_slot_free",
    "attnrt_session_set_slot_prefill", "attnrt_session_set_slot_pad_budget",
    "attnrt_main"};
// clang-format on

std::string attnc::defaultApiPrefix(StringRef outputPath) {
  StringRef stem = sys::path::filename(outputPath);
  stem = stem.take_until([](char c) { return c == '.'; });
  if (stem.starts_with("lib") && stem.size() > 3)
    stem = stem.drop_front(3);
  std::string prefix;
  for (char c : stem)
    prefix.push_back(isAlnum(c) ? c : '_');
  if (prefix.empty() || isDigit(prefix[0]))
    prefix.insert(0, "model_");
  return prefix;
}

Error attnc::linkModel(ArrayRef<std::string> objectPaths, StringRef outputPath,
                       StringRef runtimeDir, bool shared, StringRef apiPrefix) {
  SmallString<256> runtime(runtimeDir), runtimeMain(runtimeDir);
  sys::path::append(runtime, "libattnrt.a");
  sys::path::append(runtimeMain, "libattnrt_main.a");
  if (!sys::fs::exists(runtime))
    return makeError("the attnc runtime library is missing: " + runtime +
                     " (pass --runtime-dir)");
  if (!shared && !sys::fs::exists(runtimeMain))
    return makeError("the attnc runtime entry is missing: " + runtimeMain);
  auto linker = sys::findProgramByName("c++");
  if (!linker)
    linker = sys::findProgramByName("g++");
  if (!linker)
    return makeError("no C++ linker driver (c++ or g++) on PATH");
  SmallVector<std::string> args = {*linker, "-o", outputPath.str()};
  // A sanitized runtime (scripts/test.sh --sanitize) needs the sanitizer
  // runtimes in the model too.
  if (StringRef(ATTNC_MODEL_LINK_FLAGS).size())
    args.push_back(ATTNC_MODEL_LINK_FLAGS);
  std::optional<FileRemover> removeVersionScript;
  if (shared) {
    // Two model libraries in one process must not see each other: only the
    // C API is exported, as attnrt_* (for dlopen/dlsym, which look in the
    // library itself) and as PREFIX_attnrt_* (distinct names for programs
    // that link several models); everything else, the model's own symbols
    // included, is local, and -Bsymbolic binds the library's own calls to
    // its own definitions even when another library exports the same name.
    SmallString<128> script;
    int fd;
    if (std::error_code ec =
            sys::fs::createTemporaryFile("attnc-exports", "map", fd, script))
      return makeError("cannot create a linker version script: " +
                       ec.message());
    removeVersionScript.emplace(script);
    {
      raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << "{\n  global:\n    attnrt_*;\n    " << apiPrefix
         << "_attnrt_*;\n  local: *;\n};\n";
    }
    args.push_back("-shared");
    args.push_back("-Wl,-Bsymbolic");
    args.push_back(("-Wl,--version-script=" + script).str());
    for (const char *fn : kExportedApi)
      args.push_back(("-Wl,--defsym=" + apiPrefix + "_" + fn + "=" + fn).str());
    // Export the whole C API of the runtime from the .so.
    args.push_back("-Wl,--whole-archive");
    args.push_back(std::string(runtime));
    args.push_back("-Wl,--no-whole-archive");
    llvm::append_range(args, objectPaths);
  } else {
    llvm::append_range(args, objectPaths);
    args.push_back(std::string(runtimeMain));
    args.push_back(std::string(runtime));
  }
  // Parallel loops lower to OpenMP; the LLVM OpenMP runtime ships with
  // LLVM 22 (libomp-22-dev).
  std::string ompDir = std::string(ATTNC_OPENMP_LIBDIR);
  args.push_back("-L" + ompDir);
  args.push_back("-Wl,-rpath," + ompDir);
  for (const char *lib : {"-lomp", "-lm", "-ldl", "-lpthread"})
    args.push_back(lib);
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int rc =
      sys::ExecuteAndWait(*linker, argRefs, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return makeError("linking failed (" + *linker + " exited with " +
                     Twine(rc) + (message.empty() ? "" : ": " + message) + ")");
  return Error::success();
}

Expected<std::string> attnc::extractPtx(mlir::ModuleOp module) {
  std::string ptx;
  module.walk([&](mlir::gpu::BinaryOp binary) {
    for (mlir::Attribute attr : binary.getObjects()) {
      auto object = mlir::dyn_cast<mlir::gpu::ObjectAttr>(attr);
      if (object &&
          object.getFormat() == mlir::gpu::CompilationTarget::Assembly) {
        ptx += object.getObject().getValue().str();
        ptx += "\n";
      }
    }
  });
  if (ptx.empty())
    return makeError(
        "no PTX found: the module has no gpu.binary in isa format");
  return ptx;
}

Expected<std::string> attnc::findPtxas() {
  SmallVector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(home) + "/bin/ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string &path : candidates)
    if (sys::fs::can_execute(path))
      return path;
  if (auto onPath = sys::findProgramByName("ptxas"))
    return *onPath;
  return makeError("the cuda target needs the CUDA toolkit, but ptxas was not "
                   "found in $CUDA_HOME/bin, /usr/local/cuda/bin or PATH");
}
