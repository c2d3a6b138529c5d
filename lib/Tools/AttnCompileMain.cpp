//===- AttnCompileMain.cpp - attn-compile's command line -----------------===//
//
// The options of attn-compile, parsed into attnc::CompileOptions for
// attnc::compile.
//
//===----------------------------------------------------------------------===//

#include "Compilation.h"

#include "attnc/Target/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using attnc::CompileOptions;
using attnc::CudaChip;
using attnc::Precision;
using attnc::Target;

//===----------------------------------------------------------------------===//
// The command line
//===----------------------------------------------------------------------===//

int attnc::runAttnCompileMain(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // The lists need no model or output, which the parser would require.
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    arg.consume_front("-");
    arg.consume_front("-");
    if (arg == "cpu=help" || arg == "cpu-features=help") {
      printHostCpus(outs(), /*features=*/arg == "cpu-features=help");
      return 0;
    }
  }
  cl::OptionCategory category("attn-compile options");
  cl::opt<std::string> inputFile(cl::Positional,
                                 cl::desc("<model.mlir | model.onnx | "
                                          "checkpoint directory>"),
                                 cl::Required, cl::cat(category));
  cl::opt<std::string> outputFile("o", cl::desc("Output path"),
                                  cl::value_desc("path"), cl::Required,
                                  cl::cat(category));
  // The enums' parsers (CodegenOptions.h) refuse unknown values.
  cl::opt<Target> target("target", cl::desc("Target: cpu (the host) or cuda"),
                         cl::init(Target::CPU), cl::cat(category));
  cl::opt<CudaChip> chip("chip",
                         cl::desc("CUDA architecture for --target=cuda: "
                                  "sm_80, sm_86, sm_87, sm_89, sm_90, "
                                  "sm_90a"),
                         cl::init(CudaChip::SM90a), cl::cat(category));
  cl::opt<Precision> precision(
      "precision",
      cl::desc("Compute the model's f32 tensors in f32, f16 or bf16 (f32 "
               "accumulation, norms and softmax statistics); the runtime "
               "converts the checkpoint's tensors once when it binds them"),
      cl::init(Precision::F32), cl::cat(category));
  cl::opt<std::string> quantize(
      "quantize",
      cl::desc("none; int8: projections with constant weights as u8 x s8 "
               "contractions (activations quantized per row at run time, "
               "weights per output column at compile time into the weights "
               "file; CPU, model.onnx encoders); int8-weights / "
               "int4-weights: weight-only, for checkpoint directories "
               "(decoders, --kv-cache steps included): the projections and "
               "the LM head read int8 or packed int4 weights (two per byte: "
               "a block of 32 weights in 16 bytes, byte j holding weights j "
               "and 16 + j) with one f32 "
               "scale per --quantize-group weights along K, dequantized in "
               "registers; activations stay f32. The quantized weights go "
               "into OUT.safetensors (run the model with --weights "
               "OUT.safetensors); CPU only"),
      cl::init("none"), cl::cat(category));
  cl::opt<int64_t> quantizeGroup(
      "quantize-group",
      cl::desc("With --quantize=int8-weights / int4-weights: weights per "
               "scale along K (a multiple of 8 dividing every projection's "
               "input size; default 128: one 4-byte scale per 128 weights "
               "adds 0.25 bits per weight, and 128 divides the hidden and "
               "FFN sizes of common decoders; smaller groups, e.g. 32, "
               "follow outliers more closely at 1 bit per weight)"),
      cl::value_desc("G"), cl::init(128), cl::cat(category));
  cl::opt<Precision> ioPrecision(
      "io-precision",
      cl::desc("Type of the model's float inputs and outputs: f32 (default; "
               "converted inside the model) or the --precision"),
      cl::init(Precision::F32), cl::cat(category));
  cl::opt<std::string> hostCpu("cpu",
                               cl::desc("Host CPU to generate code for "
                                        "(default: this machine; help lists "
                                        "the known ones)"),
                               cl::init("native"), cl::cat(category));
  cl::opt<std::string> hostCpuFeatures(
      "cpu-features",
      cl::desc("Host CPU features to enable or disable on top of --cpu's, "
               "e.g. +avx2,-avx512f (help lists them)"),
      cl::init(""), cl::cat(category));
  cl::opt<std::string> emit(
      "emit",
      cl::desc("Stop at a stage and write it: attn (an imported model "
               "after raising), linalg (MLIR on tensors), llvm (LLVM "
               "dialect), llvm-ir, ptx (cuda only), obj, exe"),
      cl::init("exe"), cl::cat(category));
  cl::opt<bool> shared("shared",
                       cl::desc("Write a shared library exporting the "
                                "attnrt C API instead of an executable"),
                       cl::init(false), cl::cat(category));
  cl::opt<std::string> apiPrefix(
      "api-prefix",
      cl::desc("With --shared: also export the C API as NAME_attnrt_* "
               "(default: the output's file name without lib and extensions), "
               "so that one program can link several models"),
      cl::value_desc("NAME"), cl::init(""), cl::cat(category));
  cl::opt<std::string> layerDrop(
      "layer-drop",
      cl::desc("Run attn-layer-drop first with these options, e.g. "
               "--layer-drop='strategy=every-other rate=0.5'"),
      cl::init(""), cl::cat(category));
  cl::opt<std::string> pruneSpec(
      "prune",
      cl::desc("Prune attention heads / FFN neuron groups as this JSON "
               "spec says (attn-prune-structure spec-file)"),
      cl::value_desc("spec.json"), cl::init(""), cl::cat(category));
  cl::list<std::string> calibration(
      "calibration",
      cl::desc("With --layer-drop='strategy=search keep=k': one calibration "
               "set, a comma-separated .npy per model input (repeat for more "
               "sets)"),
      cl::cat(category));
  cl::opt<std::string> searchWeights(
      "weights",
      cl::desc("With strategy=search: the model's safetensors weights, used "
               "to run the candidates"),
      cl::init(""), cl::cat(category));
  cl::opt<std::string> runtimeDir(
      "runtime-dir",
      cl::desc("Directory holding libattnrt.a (default: ../lib next to "
               "attn-compile)"),
      cl::init(""), cl::cat(category));
  cl::opt<bool> quiet("q", cl::desc("No progress lines on stderr"),
                      cl::init(false), cl::cat(category));
  cl::opt<bool> verbose("v",
                        cl::desc("model.onnx: notes on stderr about what "
                                 "the import did not check (e.g. libonnx's "
                                 "checker on a model newer than it)"),
                        cl::init(false), cl::cat(category));
  cl::list<std::string> inputShapes(
      "input-shape",
      cl::desc("model.onnx or checkpoint directory: fix an input's shape, "
               "e.g. --input-shape input_ids=1x128 (repeatable; `?` keeps a "
               "dimension dynamic; an ONNX model's unfixed symbolic "
               "dimensions stay dynamic)"),
      cl::value_desc("name=AxB..."), cl::cat(category));
  cl::opt<int64_t> kvCache(
      "kv-cache",
      cl::desc("A decoder (checkpoint directory, or a causal model.onnx "
               "exported with or without past key/values): compile a step "
               "over a KV cache of N positions (inputs input_ids [B, T] and "
               "positions [B]; the caches are model state, updated in "
               "place; an ONNX model's past inputs become the caches, or "
               "each causal attention of a stateless export gets one, and "
               "its attention mask input is dropped); with "
               "--input-shape input_ids=Bx? T is chosen per run: "
               "`model generate` prefills in one run, then decodes a token "
               "per run; with Bx1, a one-token step"),
      cl::value_desc("N"), cl::init(0), cl::cat(category));
  cl::opt<std::string> logits(
      "logits",
      cl::desc("With --kv-cache: `all` (default) computes the logits of "
               "every token a run takes ([B, T, vocab]); `last` only each "
               "row's last token's ([B, 1, vocab]), which is all generation "
               "reads: a prompt's run skips T - 1 columns of the LM head "
               "(generation then feeds each row's prompt in runs that end "
               "at it)"),
      cl::value_desc("all|last"), cl::init("all"), cl::cat(category));
  cl::opt<bool> noRaise("no-raise",
                        cl::desc("model.onnx: compile the imported graph as "
                                 "it is, without the raising passes (implies "
                                 "--no-raise-attention)"),
                        cl::init(false), cl::cat(category));
  cl::opt<bool> force(
      "force",
      cl::desc("model.onnx: replace the weights file beside the output "
               "(OUT.safetensors) even if attnc did not write it; without "
               "it such a file is never replaced"),
      cl::init(false), cl::cat(category));
  // A flag for every switch of the pipelines: --no-<name> for what runs by
  // default, --<name> for what does not.
  BumpPtrAllocator allocator;
  StringSaver saver(allocator);
  const PipelineOptions defaults;
  std::vector<std::pair<const PipelineSwitch *, std::unique_ptr<cl::opt<bool>>>>
      switches;
  for (const PipelineSwitch &s : getPipelineSwitches()) {
    bool on = defaults.*(s.field);
    switches.emplace_back(
        &s, std::make_unique<cl::opt<bool>>(
                on ? saver.save("no-" + s.name) : StringRef(s.name),
                cl::desc(on ? s.offDescription : s.description),
                cl::init(false), cl::cat(category)));
  }

  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile an attn model to a native binary.\n\n"
      "  attn-compile model.mlir --target=cpu -o model\n"
      "  ./model --weights model.safetensors --input x.npy --output y.npy\n\n"
      "The executable links libattnrt: it binds the model's attn.weight\n"
      "tensors by name from a safetensors file and runs on .npy inputs.\n");

  CompileOptions options;
  options.target = target;
  options.inputPath = inputFile;
  options.outputPath = outputFile;
  options.hostCpu = hostCpu;
  options.hostCpuFeatures = hostCpuFeatures;
  options.apiPrefix = apiPrefix;
  options.emit = emit;
  options.shared = shared;
  options.layerDrop = layerDrop;
  options.pruneSpec = pruneSpec;
  for (const std::string &set : calibration) {
    SmallVector<StringRef> files;
    StringRef(set).split(files, ',', -1, false);
    options.calibration.emplace_back(files.begin(), files.end());
  }
  options.searchWeights = searchWeights;
  options.runtimeDir = runtimeDir;
  options.quiet = quiet;
  options.verbose = verbose;
  options.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  options.kvCache = kvCache;
  if (logits != "all" && logits != "last") {
    errs() << "attn-compile: --logits must be all or last, got '" << logits
           << "'\n";
    return 1;
  }
  options.lastTokenLogits = logits == "last";
  options.noRaise = noRaise;
  options.force = force;
  options.pipeline.chip = chip;
  options.pipeline.precision = precision;
  options.pipeline.ioPrecision = ioPrecision;
  if (quantize != "none" && quantize != "int8" && quantize != "int8-weights" &&
      quantize != "int4-weights") {
    (void)fail("unknown --quantize '" + quantize +
               "' (expected none, int8, int8-weights or int4-weights)");
    return 1;
  }
  options.pipeline.quantizeInt8 = quantize == "int8";
  options.pipeline.quantizeWeightBits = quantize == "int8-weights"   ? 8
                                        : quantize == "int4-weights" ? 4
                                                                     : 0;
  if (quantizeGroup.getNumOccurrences() &&
      !options.pipeline.quantizeWeightBits) {
    (void)fail("--quantize-group is for --quantize=int8-weights or "
               "int4-weights");
    return 1;
  }
  if (quantizeGroup < 8 || quantizeGroup % 8 != 0) {
    (void)fail("--quantize-group must be a positive multiple of 8, got " +
               Twine(quantizeGroup.getValue()));
    return 1;
  }
  options.pipeline.quantizeGroup = quantizeGroup;
  for (const auto &[s, flag] : switches)
    if (*flag)
      options.pipeline.*(s->field) = !(defaults.*(s->field));
  return compile(options);
}
