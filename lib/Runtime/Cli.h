//===- Cli.h - the compiled-model command line ------------------*- C++ -*-===//

#ifndef ATTNC_LIB_RUNTIME_CLI_H
#define ATTNC_LIB_RUNTIME_CLI_H

#include "attnc/Runtime/attnrt.h"

#include "FileIO.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

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

// Shared by the commands (Cli.cpp: run, describe, help; CliGenerate.cpp:
// generate).

/// `model generate ...`.
int runGenerate(int argc, char **argv, const char *manifest,
                void (*invoke)(void **), FILE *out, FILE *err);

/// Closes the model at the end of a command.
struct ModelCloser {
  attnrt_model *m;
  ~ModelCloser() { attnrt_close(m); }
};

/// One .npy array to write.
struct NpyOut {
  const char *descr;
  std::vector<int64_t> dims;
  const void *data;
  size_t bytes;
};

/// The program name for usage lines: argv[0] without its directory.
std::string progName(char **argv);
/// The path of this executable plus ".safetensors", or "" if unknown.
std::string weightsBesideExecutable();
/// Writes `arrays[i]` to `paths[i]` (checked by checkOutputPath into
/// `kinds` and `targets`), leaving no partially written file on failure.
bool writeNpyOutputs(const std::vector<std::string> &paths,
                     const std::vector<OutputKind> &kinds,
                     const std::vector<std::string> &targets,
                     const std::vector<NpyOut> &arrays, std::string &err);
/// "error: <msg>" on errOut after everything written to out; returns the
/// exit code 1.
int printError(FILE *out, FILE *errOut, const std::string &msg);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_CLI_H
