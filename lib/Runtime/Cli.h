//===- Cli.h - the compiled-model command line ------------------*- C++ -*-===//

#ifndef ATTNC_LIB_RUNTIME_CLI_H
#define ATTNC_LIB_RUNTIME_CLI_H

#include <cstdio>

namespace attnrt {

/// The driver behind attnrt_main. With manifest == nullptr it runs the
/// linked model (attnrt_open_linked), otherwise the given one. Normal output
/// goes to `out`, "error: ..." messages to `err`. Returns the exit code.
int runCli(int argc, char **argv, const char *manifest, void (*invoke)(void **),
           FILE *out, FILE *err);

/// The attn_model_manifest / attn_model_invoke linked into the program, or
/// null (defined in Runtime.cpp, which holds the weak references).
const char *linkedModelManifest();
using InvokeFn = void (*)(void **);
InvokeFn linkedModelInvoke();

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_CLI_H
