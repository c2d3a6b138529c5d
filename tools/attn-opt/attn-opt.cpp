//===- attn-opt.cpp - the attnc optimizer driver ----------------------===//
//
// mlir-opt for attnc: parses IR containing attn ops (and any upstream
// dialect), runs passes and pipelines, prints the result.
//
// Unlike upstream's driver, the input must be a regular file (or stdin) and
// nest no deeper than the parser's stack allows, and the output is written
// only when everything succeeded: a failed run leaves an existing output
// (and an input named as the output) untouched, and devices stay devices.
//
//===----------------------------------------------------------------------===//

#include "attnc/InitAttnc.h"
#include "attnc/Support/BytecodeNesting.h"
#include "attnc/Support/SafeFiles.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static int fail(const Twine &message) {
  WithColor::error(errs(), "attn-opt") << message << "\n";
  return 1;
}

/// Paths that passes read (scores-file=, spec-file=) named in the options:
/// the output must not be one of them either.
static std::vector<std::string> fileOptionValues(int argc, char **argv) {
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    for (StringRef key : {"scores-file=", "spec-file="}) {
      size_t at = arg.find(key);
      if (at == StringRef::npos)
        continue;
      StringRef value = arg.drop_front(at + key.size());
      value = value.take_until([](char c) { return c == ' ' || c == '}'; });
      paths.push_back(value.trim("'\"").str());
    }
  }
  return paths;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  attnc::registerAllPasses();
  mlir::DialectRegistry registry;
  attnc::registerAllDialects(registry);
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "attn-opt: the attnc optimizer driver.\n\n"
      "Reads MLIR (attn and upstream dialects) from a file or stdin, runs the\n"
      "passes named on the command line in order, and prints the result.\n"
      "attnc's own passes are listed under --attn-*; docs/dialect.md and\n"
      "docs/passes.md describe the dialect and the pipelines.\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // Listings read no input; upstream's driver prints them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::vector<std::string> inputs = fileOptionValues(argc, argv);
  inputs.push_back(inputFile);
  if (Error err = attnc::checkOutputIsNotAnInput(outputFile, inputs))
    return fail(toString(std::move(err)));
  auto buffer = attnc::readRegularFile(inputFile, "input file");
  if (!buffer)
    return fail(toString(buffer.takeError()));
  StringRef text = (*buffer)->getBuffer();
  if (auto at =
          attnc::findExcessiveMlirNesting(text, attnc::kMaxNestingDepth)) {
    // Without the source line: it may be megabytes long.
    errs() << (*buffer)->getBufferIdentifier() << ":"
           << attnc::lineColumn(text, *at) << ": error: nesting deeper than "
           << attnc::kMaxNestingDepth
           << " levels of (), [], {} or <>; attn-opt does not parse IR nested "
              "this deeply\n";
    return 1;
  }
  if (Error err = attnc::checkBytecodeNesting(
          (*buffer)->getMemBufferRef(), registry,
          config.shouldAllowUnregisteredDialects(), attnc::kMaxNestingDepth))
    return fail(toString(std::move(err)));

  // Everything is printed into memory and written out only on success.
  std::string result;
  raw_string_ostream os(result);
  if (failed(mlir::MlirOptMain(os, std::move(*buffer), registry, config)))
    return 1;
  if (Error err = attnc::writeFileSafely(outputFile, result, inputs))
    return fail(toString(std::move(err)));
  return 0;
}
