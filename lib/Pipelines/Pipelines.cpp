//===- Pipelines.cpp - attn-to-cpu and attn-to-cuda -----------------------===//
//
// The pipelines are spelled as textual pass pipelines, stage by stage, so
// that what attn-compile runs is exactly what a user can replay with
// attn-opt --pass-pipeline=... (see README.md).
//
//===----------------------------------------------------------------------===//

#include "attnc/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace {
/// attn -> linalg on tensors, weights as entry arguments.
constexpr llvm::StringLiteral kLinalgStage =
    "attn-hoist-weights,canonicalize,cse";

/// Runs in the linalg stage unless disabled: dot-product attention becomes
/// blocked loops that never hold the Sq x Sk scores. On the CPU a query
/// block of 64 rows keeps a 64 x 64 score tile in cache.
constexpr llvm::StringLiteral kCpuFlashAttention = "attn-flash-attention";
/// With the CPU attention kernels, K is transposed once per call so that
/// both block contractions are outer products (attn-cpu-outer-product-matmul).
constexpr llvm::StringLiteral kCpuFlashAttentionKernels =
    "attn-flash-attention{transpose-keys=1}";
/// On the GPU, f16/bf16 attention becomes tensor-core flash kernels
/// (attn-gpu-flash-attention). What they do not take (f32, bias, window,
/// other scores, odd sizes) is blocked generically: every query block becomes
/// one thread that runs its block serially, so a block is one query row (of
/// the G query heads of a kv head): B * Hkv * Sq threads with a few hundred
/// bytes of local memory each.
constexpr llvm::StringLiteral kCudaFlashAttention =
    "attn-decompose-mha,func.func(attn-gpu-flash-attention),"
    "attn-flash-attention{block-q=1}";

/// Tensors -> buffers; results become out-params so the entry takes one
/// buffer per manifest record. (No linalg-fuse-elementwise-ops here: its
/// reshape propagation turns the 2-D projections into 6-D contractions that
/// the matmul kernels no longer recognise; the lowering already emits fused
/// bias + activation generics.)
constexpr llvm::StringLiteral kBufferizeStage =
    "canonicalize,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(attn-promote-loop-buffers),"
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},"
    "buffer-deallocation-pipeline,canonicalize";

/// Buffers -> host code: register-tiled kernels for the projections (with
/// their epilogues), plain loops for the rest, OpenMP for parallel loops.
constexpr llvm::StringLiteral kCpuLoopsStage =
    "func.func(scf-forall-to-parallel),"
    "func.func(convert-linalg-to-loops)";
/// With runtime-checks: every memory access of the loops and kernels is
/// checked against its buffer's bounds (upstream's runtime verification of
/// memref ops); a failure reports the op's source location through
/// libattnrt.
constexpr llvm::StringLiteral kCpuRuntimeChecks =
    "generate-runtime-verification{verbose-level=0},"
    "attn-cpu-lower-runtime-checks";
constexpr llvm::StringLiteral kCpuToLLVMStage =
    "convert-scf-to-openmp,expand-strided-metadata,lower-affine,"
    // Math first: what has no LLVM intrinsic (erf without
    // attn-approximate-math) becomes libm calls, unrolled on vectors into
    // vector.extract/insert, which vector-to-llvm must still lower.
    "convert-math-to-llvm,convert-math-to-libm,convert-vector-to-llvm,"
    // Before scf-to-cf: memref.alloca_scope (which scf-to-openmp wraps
    // parallel bodies in) must keep a single block until it is lowered.
    // Heap buffers go through _mlir_memref_to_llvm_alloc/free, which
    // libattnrt defines (ModelAlloc.cpp) to keep them mapped across runs.
    "finalize-memref-to-llvm{use-generic-functions=1},convert-scf-to-cf,"
    "convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "convert-openmp-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts,"
    "canonicalize,attn-emit-model-entry{target=cpu}";

/// Buffers -> one GPU thread per output element (reductions run serially
/// inside the thread); host allocations and copies move to the device.
constexpr llvm::StringLiteral kCudaMapStage =
    "func.func(scf-forall-to-parallel),"
    "func.func(convert-linalg-to-parallel-loops),"
    "func.func(attn-gpu-tile-parallel-loops),func.func(gpu-map-parallel-loops),"
    "func.func(convert-parallel-loops-to-gpu),"
    "attn-gpu-device-buffers,func.func(gpu-launch-sink-index-computations),"
    "gpu-kernel-outlining,attn-merge-gpu-modules,"
    "func.func(gpu-async-region),lower-affine,canonicalize";

/// Options both pipelines take: where to stop and which optimizations run.
template <typename Derived>
struct CommonPipelineCLOptions : public PassPipelineOptions<Derived> {
  template <typename T>
  using Option = typename PassPipelineOptions<Derived>::template Option<T>;

  Option<attnc::Stage> stopAfter{
      *this, "stop-after", llvm::cl::desc("Stop after this stage"),
      llvm::cl::init(attnc::Stage::LLVM),
      llvm::cl::values(
          clEnumValN(attnc::Stage::Linalg, "linalg",
                     "attn lowered to linalg on tensors, weights hoisted"),
          clEnumValN(attnc::Stage::Bufferized, "bufferized",
                     "bufferized, results as out-params"),
          clEnumValN(attnc::Stage::LLVM, "llvm",
                     "LLVM dialect with the runtime entry points"))};
  Option<bool> tile{*this, "tile",
                    llvm::cl::desc("Choose tile sizes per op for the target "
                                   "(attn-tile)"),
                    llvm::cl::init(true)};
  Option<bool> flash{*this, "flash",
                     llvm::cl::desc("Block dot-product attention "
                                    "(attn-flash-attention)"),
                     llvm::cl::init(true)};
  Option<bool> raise{
      *this, "raise-attention",
      llvm::cl::desc("Raise unfused attention chains to attn.sdpa"),
      llvm::cl::init(true)};
  Option<bool> packQKV{
      *this, "pack-qkv",
      llvm::cl::desc("Pack projections of one input (QKV) into one matmul"),
      llvm::cl::init(true)};
  Option<bool> fuseRows{
      *this, "fuse-rows",
      llvm::cl::desc("Fuse residual add + norm into one row loop"),
      llvm::cl::init(true)};
  Option<bool> matmulKernels{
      *this, "matmul-kernels",
      llvm::cl::desc("Register-tiled (CPU) / tensor-core (CUDA) matmul kernels "
                     "with fused epilogues"),
      llvm::cl::init(true)};

  void applyTo(attnc::FusionOptions &fusion, attnc::Stage &stage) const {
    stage = stopAfter;
    fusion.tile = tile;
    fusion.flash = flash;
    fusion.raiseAttention = raise;
    fusion.packQKV = packQKV;
    fusion.fuseRows = fuseRows;
    fusion.matmulKernels = matmulKernels;
  }
};

struct CpuPipelineCLOptions
    : public CommonPipelineCLOptions<CpuPipelineCLOptions> {
  template <typename T>
  using Option =
      typename PassPipelineOptions<CpuPipelineCLOptions>::template Option<T>;

  Option<bool> attentionKernels{
      *this, "attention-kernels",
      llvm::cl::desc("Outer-product vector kernels for the flash attention "
                     "block contractions (transposed keys)"),
      llvm::cl::init(true)};
  Option<bool> transposeWeights{
      *this, "transpose-weights",
      llvm::cl::desc("Bind projection weights K-major (transposed at bind "
                     "time) for outer-product matmul kernels "
                     "(attn-cpu-transpose-weights; needs matmul-kernels)"),
      llvm::cl::init(true)};
  Option<bool> vectorizeRows{
      *this, "vectorize-rows",
      llvm::cl::desc("Vector loops along the rows of elementwise and "
                     "row-reduction generics (attn-cpu-vectorize-rows)"),
      llvm::cl::init(true)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Polynomial f32 exp/erf/tanh (attn-approximate-math) so "
                     "that softmax and GELU loops vectorize"),
      llvm::cl::init(true)};
  Option<bool> runtimeChecks{
      *this, "runtime-checks",
      llvm::cl::desc("Check every memory access of the generated code at run "
                     "time (generate-runtime-verification); a failed check "
                     "names the op's location"),
      llvm::cl::init(false)};
};

struct CudaPipelineCLOptions
    : public CommonPipelineCLOptions<CudaPipelineCLOptions> {
  template <typename T>
  using Option =
      typename PassPipelineOptions<CudaPipelineCLOptions>::template Option<T>;

  Option<std::string> chip{
      *this, "chip", llvm::cl::desc("CUDA architecture, e.g. sm_80, sm_90a"),
      llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features, e.g. +ptx80"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> toolkit{
      *this, "toolkit", llvm::cl::desc("CUDA toolkit root (ptxas, libdevice)"),
      llvm::cl::init("/usr/local/cuda")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary format: bin (cubin), isa (PTX) or fatbin"),
      llvm::cl::init("bin")};
};
} // namespace

std::optional<attnc::Stage> attnc::parseStage(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Stage>>(name)
      .Case("linalg", Stage::Linalg)
      .Case("bufferized", Stage::Bufferized)
      .Case("llvm", Stage::LLVM)
      .Default(std::nullopt);
}

static LogicalResult addStage(OpPassManager &pm, llvm::StringRef text) {
  return parsePassPipeline(text, pm, llvm::errs());
}

static LogicalResult addLinalgStage(OpPassManager &pm,
                                    const attnc::FusionOptions &options,
                                    bool gpu, llvm::StringRef flashStage,
                                    bool transposeWeights) {
  // Oversized tensors and inconsistent weight bindings are reported at
  // their ops before anything is lowered.
  if (failed(addStage(pm, "attn-verify-model")))
    return failure();
  if (options.raiseAttention &&
      failed(addStage(pm, "func.func(attn-raise-attention)")))
    return failure();
  if (options.packQKV &&
      failed(addStage(pm, "attn-decompose-mha,func.func(attn-pack-qkv)")))
    return failure();
  // After the rewrites that create or reshape projections and attention,
  // before the passes that tile them.
  if (options.tile &&
      failed(addStage(pm, gpu ? "func.func(attn-tile{target=cuda})"
                              : "func.func(attn-tile{target=cpu})")))
    return failure();
  if (options.flash && failed(addStage(pm, flashStage)))
    return failure();
  // Embedding ids outside the table fail the run (the check reads the ids
  // on the host, so CPU only).
  if (!gpu && failed(addStage(pm, "attn-check-token-ids")))
    return failure();
  // Again on the lowered form, whose temporaries (e.g. unfused attention
  // scores) may be larger than any attn-level tensor.
  if (failed(addStage(pm, "attn-lower-to-linalg,attn-verify-model,"
                          "func.func(attn-reassociate-reductions)")))
    return failure();
  if (options.fuseRows &&
      failed(addStage(pm, gpu ? "func.func(attn-fuse-rows)"
                              : "func.func(attn-fuse-rows{parallel=0})")))
    return failure();
  // Before hoisting: the manifest records which weights are bound K-major.
  if (transposeWeights &&
      failed(addStage(pm, "func.func(attn-cpu-transpose-weights)")))
    return failure();
  return addStage(pm, kLinalgStage);
}

/// The stages both targets share: linalg, bufferization, then the target's
/// matmul kernels. Sets `done` when `stopAfter` ends the pipeline here.
static LogicalResult addTargetIndependentStages(
    OpPassManager &pm, const attnc::FusionOptions &options,
    attnc::Stage stopAfter, bool gpu, llvm::StringRef flashStage, bool &done,
    bool transposeWeights = false) {
  done = true;
  if (failed(addLinalgStage(pm, options, gpu, flashStage, transposeWeights)))
    return failure();
  if (stopAfter == attnc::Stage::Linalg)
    return success();
  if (failed(addStage(pm, kBufferizeStage)))
    return failure();
  if (stopAfter == attnc::Stage::Bufferized)
    return success();
  done = false;
  if (!options.matmulKernels)
    return success();
  return addStage(pm, gpu ? "func.func(attn-gpu-mma-matmul)"
                          : "func.func(attn-cpu-matmul-kernel)");
}

LogicalResult attnc::buildAttnToCpuPipeline(OpPassManager &pm,
                                            const CpuPipelineOptions &options) {
  bool done = false;
  if (failed(addTargetIndependentStages(
          pm, options, options.stopAfter, /*gpu=*/false,
          options.attentionKernels ? kCpuFlashAttentionKernels
                                   : kCpuFlashAttention,
          done,
          /*transposeWeights=*/options.transposeWeights &&
              options.matmulKernels)))
    return failure();
  if (done)
    return success();
  if (options.attentionKernels &&
      failed(addStage(pm, "func.func(attn-cpu-outer-product-matmul)")))
    return failure();
  if (options.vectorizeRows &&
      failed(addStage(pm, "func.func(attn-cpu-vectorize-rows)")))
    return failure();
  // After the matmul kernels have folded GELU epilogues into their stores,
  // so that those are approximated too (vector math included).
  if (options.approximateMath &&
      failed(addStage(pm, "func.func(attn-approximate-math)")))
    return failure();
  if (failed(addStage(pm, kCpuLoopsStage)))
    return failure();
  if (options.runtimeChecks && failed(addStage(pm, kCpuRuntimeChecks)))
    return failure();
  return addStage(pm, kCpuToLLVMStage);
}

LogicalResult
attnc::buildAttnToCudaPipeline(OpPassManager &pm,
                               const CudaPipelineOptions &options) {
  bool done = false;
  if (failed(addTargetIndependentStages(pm, options, options.stopAfter,
                                        /*gpu=*/true, kCudaFlashAttention,
                                        done)))
    return failure();
  if (done)
    return success();
  if (failed(addStage(pm, kCudaMapStage)))
    return failure();
  // The steps of upstream's gpu-lower-to-nvvm-pipeline, spelled out so that
  // libdevice is linked (math.exp, erf, tanh, rsqrt call __nv_* functions)
  // and the toolkit that serializes the kernels is the one we found.
  std::string libdevice = options.toolkit + "/nvvm/libdevice/libdevice.10.bc";
  std::string nvvm =
      "convert-nvgpu-to-nvvm,gpu-kernel-outlining,convert-vector-to-scf,"
      "convert-scf-to-cf,convert-nvvm-to-llvm,convert-func-to-llvm,"
      "expand-strided-metadata,"
      "nvvm-attach-target{chip=" +
      options.chip + " features=" + options.features + " O=3 l=" + libdevice +
      "},"
      "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,canonicalize,"
      "cse,gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
      "reconcile-unrealized-casts),"
      "gpu-to-llvm{use-bare-pointers-for-host=1},"
      "gpu-module-to-binary{format=" +
      options.format + " toolkit=" + options.toolkit +
      "},"
      "convert-math-to-llvm,canonicalize,cse,reconcile-unrealized-casts";
  if (failed(addStage(pm, nvvm)))
    return failure();
  return addStage(pm, "canonicalize,attn-emit-model-entry{target=cuda}");
}

void attnc::registerPipelines() {
  PassPipelineRegistration<CpuPipelineCLOptions>(
      "attn-to-cpu",
      "Lower attn to the LLVM dialect for the host CPU (linalg, one-shot "
      "bufferization, loops, LLVM) with the attnrt entry points",
      [](OpPassManager &pm, const CpuPipelineCLOptions &cl) {
        CpuPipelineOptions options;
        cl.applyTo(options, options.stopAfter);
        options.attentionKernels = cl.attentionKernels;
        options.vectorizeRows = cl.vectorizeRows;
        options.transposeWeights = cl.transposeWeights;
        options.approximateMath = cl.approximateMath;
        options.runtimeChecks = cl.runtimeChecks;
        (void)buildAttnToCpuPipeline(pm, options);
      });
  PassPipelineRegistration<CudaPipelineCLOptions>(
      "attn-to-cuda",
      "Lower attn to host LLVM dialect plus CUDA kernels through NVVM "
      "(gpu mapping, outlining, gpu-module-to-binary via ptxas)",
      [](OpPassManager &pm, const CudaPipelineCLOptions &cl) {
        CudaPipelineOptions options;
        cl.applyTo(options, options.stopAfter);
        options.chip = cl.chip;
        options.features = cl.features;
        options.format = cl.format;
        options.toolkit = cl.toolkit;
        (void)buildAttnToCudaPipeline(pm, options);
      });
}
