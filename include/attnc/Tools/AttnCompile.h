//===- AttnCompile.h - attn-compile as a library ----------------*- C++ -*-===//
//
// The body of attn-compile: a model file -> executable, shared library or
// any intermediate stage (model.mlir, or model.onnx through
// lib/Frontend/ONNX). tools/attn-compile is a thin main over
// runAttnCompileMain.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNCOMPILE_H
#define ATTNC_TOOLS_ATTNCOMPILE_H

#include "attnc/Pipelines/Pipelines.h"

#include <string>
#include <vector>

namespace attnc {

/// What attn-compile does, as its flags say.
struct CompileOptions {
  std::string inputPath;
  std::string outputPath;
  Target target = Target::CPU;
  /// The pipeline's switches and CUDA settings (chip, format, toolkit).
  PipelineOptions pipeline;
  /// Host CPU to generate code for ("native": this machine).
  std::string hostCpu = "native";
  /// LLVM features on top of hostCpu's ("+avx2,-avx512f").
  std::string hostCpuFeatures;
  /// attn (model.onnx after raising), linalg, llvm, llvm-ir, ptx, obj or exe.
  std::string emit = "exe";
  /// A shared library exporting the attnrt C API instead of an executable.
  bool shared = false;
  /// With shared: the C API is also exported as <apiPrefix>_attnrt_*
  /// (default: from the output's file name).
  std::string apiPrefix;
  /// attn-layer-drop's options, or "strategy=search keep=k
  /// [exhaustive-limit=n]" to choose the layers on calibration data.
  std::string layerDrop;
  /// attn-prune-structure's spec file.
  std::string pruneSpec;
  /// With strategy=search: calibration sets (one .npy per model input) and
  /// the model's weights.
  std::vector<std::vector<std::string>> calibration;
  std::string searchWeights;
  /// Directory holding libattnrt.a.
  std::string runtimeDir;
  /// No progress lines on stderr.
  bool quiet = false;
  /// -v: the importer's notes (checks skipped for newer models).
  bool verbose = false;
  /// model.onnx: the graph inputs' shapes ("name=1x128"), and whether to
  /// skip the raising passes.
  std::vector<std::string> inputShapes;
  bool noRaise = false;
  /// Checkpoint directories of decoders: build a one-token decode step over
  /// a KV cache of this many positions (0: the full-sequence model).
  int64_t kvCache = 0;
  /// --logits=last: the LM head computes each row's last token only
  /// (attn-last-token-logits).
  bool lastTokenLogits = false;
  /// Replace a file beside the output that attnc did not write (the
  /// weights of an imported model go to OUT.safetensors).
  bool force = false;
};

/// Compiles as `options` say. Returns the process exit code; errors are
/// printed on stderr.
int compile(const CompileOptions &options);

/// Parses attn-compile's command line into CompileOptions and compiles.
int runAttnCompileMain(int argc, char **argv);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNCOMPILE_H
