//===- attn-compile.cpp - compile an attn model to a native binary --------===//
//
// attn-compile MODEL.mlir --target=cpu|cuda -o OUT. The driver lives in
// lib/Tools (attnc::runAttnCompileMain), so that front ends and tests can
// reuse it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Tools/AttnCompile.h"

int main(int argc, char **argv) {
  return attnc::runAttnCompileMain(argc, argv);
}
