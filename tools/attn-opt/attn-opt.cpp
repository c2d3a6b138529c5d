//===- attn-opt.cpp - the attnc optimizer driver ----------------------===//
//
// mlir-opt for attnc: parses IR containing attn ops (and any upstream
// dialect), runs passes and pipelines, prints the result.
//
//===----------------------------------------------------------------------===//

#include "attnc/InitAttnc.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  attnc::registerAllPasses();
  mlir::DialectRegistry registry;
  attnc::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "attn-opt: the attnc optimizer driver.\n\n"
      "Reads MLIR (attn and upstream dialects) from a file or stdin, runs the\n"
      "passes named on the command line in order, and prints the result.\n"
      "attnc's own passes are listed under --attn-*; see README.md for the\n"
      "dialect and the pipelines.\n",
      registry));
}
