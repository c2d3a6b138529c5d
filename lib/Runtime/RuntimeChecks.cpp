//===- RuntimeChecks.cpp - failed run-time checks of generated code -------===//
//
// Models compiled with attn-compile --runtime-checks call this when a check
// (an out-of-bounds access, a shape mismatch) fails. The message names the
// op and its location in the model source. The process ends at once: the
// generated code cannot go on past a bad access, and other threads of the
// model may be running, so no exit handlers run.
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstdlib>

extern "C" [[noreturn]] void attnrt_runtime_check_failed(const char *message) {
  // The message is a whole diagnostic: "model.mlir:9:10: error: ...".
  std::fprintf(stderr, "%s\n",
               message ? message : "error: run-time check failed");
  std::fflush(stderr);
  std::_Exit(3);
}
