//===- attn-hf-import.cpp - test driver for the HF checkpoint importer ----===//
//
// Runs lib/Frontend/HF on a checkpoint directory and prints or writes the
// attn IR: the lit tests' entry to the importer until `attn-import --hf`
// (tools/attn-import) exists.
//
//   attn-hf-import [--hf] DIR --input-shape input_ids=1x16 [-o model.mlir]
//
//===----------------------------------------------------------------------===//

#include "attnc/Frontend/HF/HFImport.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::opt<std::string> dirArg(cl::Positional, cl::Optional,
                              cl::desc("<checkpoint directory>"));
  // attn-import's spelling, so that the corpus cases run unchanged.
  cl::opt<std::string> hfDir("hf", cl::desc("checkpoint directory"),
                             cl::value_desc("dir"));
  cl::opt<std::string> output("o", cl::desc("output file (default: stdout)"),
                              cl::value_desc("file"), cl::init("-"));
  cl::list<std::string> inputShapes(
      "input-shape",
      cl::desc("fixed shape of an input, e.g. input_ids=1x16 (repeatable)"),
      cl::value_desc("name=d0xd1"));
  cl::ParseCommandLineOptions(argc, argv, "attn HF checkpoint importer\n");
  if (dirArg.empty() == hfDir.empty()) {
    llvm::errs() << "error: give the checkpoint directory once, as DIR or "
                    "--hf DIR\n";
    return 1;
  }
  std::string dir = hfDir.empty() ? dirArg : hfDir;

  attn::hf::ImportOptions options;
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (!attn::hf::parseInputShape(spec, options, error)) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
  }
  // The importer loads the dialects it builds.
  MLIRContext context;
  // Diagnostics as file:line:col: error: ..., with the config.json line.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      attn::hf::importCheckpoint(dir, options, &context);
  if (!module)
    return 1;
  // Opened only now: a failed import leaves no output file behind.
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  module->print(out->os());
  out->os().flush();
  if (out->os().has_error()) {
    llvm::errs() << "error: cannot write " << output << "\n";
    out->os().clear_error();
    return 1;
  }
  out->keep();
  return 0;
}
