//===- Pipelines.cpp - attn-to-cpu and attn-to-cuda -----------------------===//
//
// The pipelines are built from the passes' create functions, so that a
// misspelt pass or option fails to compile and this library links exactly
// the passes it runs. `attn-opt --attn-to-cpu --dump-pass-pipeline` prints
// the pipeline as text, for replaying it stage by stage.
//
//===----------------------------------------------------------------------===//

#include "attnc/Pipelines/Pipelines.h"

#include "attnc/Codegen/CPU/Passes.h"
#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Codegen/GPU/Passes.h"
#include "attnc/Conversion/Passes.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

#include <limits>
#include <memory>
#include <vector>

using namespace mlir;
using attnc::PipelineOptions;
using attnc::Stage;
using attnc::Target;

//===----------------------------------------------------------------------===//
// The switches
//===----------------------------------------------------------------------===//

static const attnc::PipelineSwitch kSwitches[] = {
    {"raise-attention", &PipelineOptions::raiseAttention,
     "Raise unfused attention chains to attn.sdpa",
     "Do not raise unfused attention chains to attn.sdpa", true, true},
    {"pack-qkv", &PipelineOptions::packQKV,
     "Pack projections of one input (QKV) into one matmul",
     "Do not pack projections of one input (Q, K, V) into one matmul", true,
     true},
    {"tile", &PipelineOptions::tile,
     "Choose tile sizes per op for the target (attn-tile)",
     "Use the tiling passes' default tile sizes instead of choosing them per "
     "op for the target (attn-tile)",
     true, true},
    {"flash", &PipelineOptions::flash,
     "Block dot-product attention (attn-flash-attention)",
     "Lower attention unfused (the whole Sq x Sk score matrix) instead of "
     "with attn-flash-attention",
     true, true},
    {"fuse-rows", &PipelineOptions::fuseRows,
     "Fuse residual add + norm into one row loop",
     "Do not fuse residual add + norm into one row loop", true, true},
    {"outline-layers", &PipelineOptions::outlineLayers,
     "Compile each distinct layer body once, as a function called per layer "
     "with that layer's weights (attn-outline-layers)",
     "Inline every layer (code size and compile time grow with depth)", true,
     true},
    {"matmul-kernels", &PipelineOptions::matmulKernels,
     "Register-tiled (CPU) / tensor-core (CUDA) matmul kernels with fused "
     "epilogues",
     "Plain loops instead of the register-tiled (CPU) / tensor-core (CUDA) "
     "matmul kernels with fused epilogues",
     true, true},
    {"wgmma", &PipelineOptions::wgmma,
     "sm_90a: the f16/bf16 GEMM kernels multiply with warpgroup MMA "
     "(wgmma.mma_async) where their shape allows (attn-gpu-mma-matmul{wgmma})",
     "sm_90a: keep mma.sync in the f16/bf16 GEMM kernels instead of "
     "warpgroup MMA (wgmma.mma_async)",
     false, true},
    {"tma", &PipelineOptions::tma,
     "sm_90a: the wgmma GEMM kernels load their A and B tiles with the "
     "Tensor Memory Accelerator (cp.async.bulk.tensor, mbarrier completion) "
     "where the operands allow (attn-gpu-mma-matmul{tma})",
     "sm_90a: stage the wgmma GEMM tiles with cp.async from every thread "
     "instead of TMA",
     false, true},
    {"attention-kernels", &PipelineOptions::attentionKernels,
     "Outer-product vector kernels for the flash attention block "
     "contractions (transposed keys)",
     "CPU: plain loops instead of the outer-product vector kernels for the "
     "flash attention block contractions",
     true, false},
    {"transpose-weights", &PipelineOptions::transposeWeights,
     "Bind projection weights K-major (transposed at bind time) for "
     "outer-product matmul kernels (attn-cpu-transpose-weights; needs "
     "matmul-kernels)",
     "CPU: bind projection weights as stored ([out, in]) for the dot-product "
     "matmul kernels instead of transposed at bind time for the "
     "outer-product ones (attn-compile does so for KV-cache steps, which "
     "decode one row per sequence)",
     true, false},
    {"vectorize-rows", &PipelineOptions::vectorizeRows,
     "Vector loops along the rows of elementwise and row-reduction generics "
     "(attn-cpu-vectorize-rows)",
     "CPU: leave elementwise and row-reduction loops (softmax, epilogues) to "
     "LLVM's vectorizers",
     true, false},
    {"approximate-math", &PipelineOptions::approximateMath,
     "Polynomial f32 exp/erf/tanh (attn-cpu-approximate-math) so that softmax "
     "and GELU loops vectorize",
     "CPU: libm exp/erf/tanh instead of vectorizable polynomial "
     "approximations",
     true, false},
    {"int8-bf16-attention", &PipelineOptions::int8Bf16Attention,
     "With --quantize=int8 on AVX-512 BF16: the flash attention block "
     "products (Q K^T, P V) take bf16 inputs, rounded to nearest even, with "
     "f32 sums (attn-cpu-outer-product-matmul{bf16-dot-rounds-f32})",
     "model.onnx: with --quantize=int8, keep attention's block products in "
     "f32 instead of taking bf16 inputs on AVX-512 BF16 CPUs",
     true, false},
    // Off by default: it adds the activations' rounding error.
    {"int8-activations", &PipelineOptions::int8Activations,
     "With --quantize=int8-weights / int4-weights: also quantize each "
     "activation row to "
     "int8 at run time, one symmetric scale per --quantize-group, so that "
     "the projections sum integer products on AVX-512 VNNI (vpdpbusd; "
     "attn-cpu-quantize-weights{int8-activations}): faster decoding, plus "
     "the activations' rounding error",
     "", true, false},
    // Off by default: it adds the rounding error of bf16 activations.
    {"bf16-activations", &PipelineOptions::bf16Activations,
     "With --quantize=int4-weights in groups of a multiple of 128 on AVX-512 "
     "BF16: the projections round each activation row to bf16 and multiply "
     "it with vdpbf16ps by the weights looked up as bf16, the group's scale "
     "times the nibble (attn-cpu-matmul-kernel{int4-bf16-dot}): faster "
     "decoding, plus the rounding error of bf16 activations and weights",
     "", true, false},
    // Off by default: a debugging aid that costs a bounds check per access.
    {"runtime-checks", &PipelineOptions::runtimeChecks,
     "CPU: check every memory access of the generated code at run time "
     "(generate-runtime-verification); a failed check prints the op's "
     "source location and exits with status 3 (slower; for debugging)",
     "", true, false},
};

ArrayRef<attnc::PipelineSwitch> attnc::getPipelineSwitches() {
  return kSwitches;
}

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

template <typename OpT = func::FuncOp>
static void addNested(OpPassManager &pm, std::unique_ptr<Pass> pass) {
  pm.addNestedPass<OpT>(std::move(pass));
}

/// Whether `chip` has cp.async (sm_80 and later). The tensor-core kernels'
/// mma.sync m16n8k16 needs sm_80 too; on an older chip they would keep
/// plain staging, which needs nothing newer than the mma itself.
static bool hasAsyncCopy(attnc::CudaChip chip) {
  return attnc::smVersion(chip) >= 80;
}

/// attn -> linalg on tensors, weights as entry arguments.
static void addLinalgStage(OpPassManager &pm, const PipelineOptions &options,
                           Target target) {
  bool cuda = target == Target::CUDA;
  // Oversized tensors and inconsistent weight bindings are reported at their
  // ops before anything is lowered.
  pm.addPass(attn::createAttnVerifyModel());
  if (options.raiseAttention)
    addNested(pm, attn::createAttnRaiseAttention());
  if (options.packQKV) {
    pm.addPass(attn::createAttnDecomposeMha());
    addNested(pm, attn::createAttnPackQKV());
  }
  // Before tiling and attention, whose choices depend on the element type
  // (f16/bf16 attention and matmuls take the tensor cores on CUDA).
  if (options.precision != attnc::Precision::F32 ||
      options.ioPrecision != attnc::Precision::F32) {
    attn::AttnConvertPrecisionOptions convert;
    convert.precision = options.precision;
    convert.ioPrecision = options.ioPrecision;
    pm.addPass(attn::createAttnConvertPrecision(convert));
  }
  // After the rewrites that create or reshape projections and attention,
  // before the passes that tile them.
  if (options.tile) {
    // attn-tile asks the target's half of the heuristic, which the target's
    // library registers.
    if (cuda)
      attn::registerCudaTileConfig();
    else
      attn::registerCpuTileConfig();
    attn::AttnTileOptions tile;
    tile.target = target;
    addNested(pm, attn::createAttnTile(tile));
  }
  if (options.flash) {
    attn::AttnFlashAttentionOptions flash;
    if (cuda) {
      // f16/bf16 attention becomes tensor-core flash kernels. What they do
      // not take (f32, window, other scores, odd sizes) is blocked
      // generically: every query block becomes one thread that runs its
      // block serially, so a block is one query row (of the G query heads
      // of a kv head): B * Hkv * Sq threads with a few hundred bytes of
      // local memory each.
      pm.addPass(attn::createAttnDecomposeMha());
      attn::AttnGpuFlashAttentionOptions gpuFlash;
      gpuFlash.staging = hasAsyncCopy(options.chip) ? "cp-async" : "plain";
      addNested(pm, attn::createAttnGpuFlashAttention(gpuFlash));
      flash.blockQ = 1;
    } else {
      // With the CPU attention kernels, K is transposed once per call so
      // that both block contractions are outer products
      // (attn-cpu-outer-product-matmul).
      flash.transposeKeys = options.attentionKernels;
    }
    pm.addPass(attn::createAttnFlashAttention(flash));
  }
  // Embedding ids outside the table fail the run: ids that are model inputs
  // are checked by the runtime on the host (the manifest carries their
  // bound); on the CPU the generated code also checks computed ids.
  attn::AttnMarkTokenIdInputsOptions markIds;
  markIds.warnComputedIds = cuda;
  pm.addPass(attn::createAttnMarkTokenIdInputs(markIds));
  if (!cuda)
    pm.addPass(attn::createAttnCpuCheckTokenIds());
  // KV-cache writes become device kernels that update the cache in place
  // (the CPU lowering's host loop reads `positions` on the host). After
  // attn-mark-token-id-inputs, which bounds positions through them.
  if (cuda)
    addNested(pm, attn::createAttnGpuCacheWrite());
  attn::AttnLowerToLinalgOptions lower;
  lower.inlineLayers = false;
  // On CUDA the layers of a KV-cache step stay inlined (below): inlined
  // before the row fusion, which fuses each layer's elementwise chains as
  // in a model imported without layers; inlined after it, the elementwise
  // fusion would chain every layer's residual stream into one kernel whose
  // parameters grow with depth (past ptxas' 4 KiB on GPT-2-small).
  lower.inlineStateLayers = cuda;
  pm.addPass(attn::createAttnLowerToLinalg(lower));
  // Again on the lowered form, whose temporaries (e.g. unfused attention
  // scores) may be larger than any attn-level tensor.
  pm.addPass(attn::createAttnVerifyModel());
  addNested(pm, attn::createAttnReassociateReductions());
  // Before attn-cpu-transpose-weights, which would bind the f32 weights
  // that the int8 projections no longer read.
  if (!cuda && options.quantizeInt8)
    pm.addPass(attn::createAttnCpuQuantizeInt8());
  if (!cuda && options.quantizeWeightBits) {
    attn::AttnCpuQuantizeWeightsOptions woq;
    woq.bits = options.quantizeWeightBits;
    woq.groupSize = options.quantizeGroup;
    woq.int8Activations = options.int8Activations;
    // AVX-512 VNNI's 16 lanes take 16 interleaved weight rows, a lane per
    // output: half the vector instructions per weight of one row at a time,
    // and no reduction per output (16-token prefills in half the time).
    if (options.int8Activations && options.cpuAvx512 && options.cpuAvx512Vnni)
      woq.interleaveColumns = 16;
    pm.addPass(attn::createAttnCpuQuantizeWeights(woq));
  }
  if (options.fuseRows) {
    // On the CPU the threads share the rows of a static row count of 32 or
    // more; fewer rows, or a count known only at run time (often one token)
    // do not pay for the fork.
    attn::AttnFuseRowsOptions fuse;
    fuse.parallel = true;
    fuse.parallelMinRows = cuda ? 0 : 32;
    // A GPU row kernel keeps each row temporary in per-thread local memory:
    // the conversions of f16/bf16 norms must not add one per step.
    fuse.fuseElementwise = cuda;
    addNested(pm, attn::createAttnFuseRows(fuse));
  }
  // Before hoisting: the manifest records which weights are bound K-major.
  if (!cuda && options.transposeWeights && options.matmulKernels)
    addNested(pm,
              attn::createAttnCpuTransposeWeights(
                  attn::AttnCpuTransposeWeightsOptions{
                      .panelVectors = 4, .pairPanels = options.cpuAvx512Bf16}));
  // After the rewrites that change which weight a layer binds and how
  // (attn-cpu-transpose-weights), so that those stay per-layer attn.weight
  // ops of the caller. Runtime checks name the failing op's location, which
  // must be the layer's own: there every layer stays inlined.
  attn::AttnOutlineLayersOptions outline;
  if (!options.outlineLayers || options.runtimeChecks)
    outline.minGroupSize = std::numeric_limits<int64_t>::max();
  // On CUDA, layers with run-time sizes and layers that update KV caches
  // stay inlined: a body returning a buffer it allocated (moved to the
  // device inside the callee, freed in the caller) and cache-write kernels
  // on a callee's state arguments are not what the device-buffer and
  // async-region passes were checked against.
  outline.dynamicShapes = !cuda;
  outline.cacheWrites = !cuda;
  pm.addPass(attn::createAttnOutlineLayers(outline));
  pm.addPass(attn::createAttnHoistWeights());
  // The head split and merge transposes around the generic flash loops are
  // each a kernel writing a full copy on CUDA; the loops' row slices
  // address the projections' layout directly instead. The CPU flash kernels
  // read whole blocks of Q, K and V, for which the split copies pay, but
  // write each output block once: straight into the merged layout, which
  // saves the merge copy (and, at 2 threads, its reads of blocks the other
  // core wrote).
  addNested(pm, attn::createAttnFoldTransposes(
                    attn::AttnFoldTransposesOptions{.foldReads = cuda}));
  if (cuda) {
    // Chains of elementwise generics (an f16 residual add: widen, widen,
    // add, narrow) would each be a kernel.
    addNested(pm, attn::createAttnGpuFuseElementwise());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // CSE shared one zero fill between projections; bufferized, all but one
  // would copy it and the remaining fill would stay a kernel of its own.
  if (cuda)
    addNested(pm, attn::createAttnSplitSharedFills());
}

/// Tensors -> buffers; results become out-params so the entry takes one
/// buffer per manifest record. (No linalg-fuse-elementwise-ops here: its
/// reshape propagation turns the 2-D projections into 6-D contractions that
/// the matmul kernels no longer recognise; the lowering already emits fused
/// bias + activation generics.)
static void addBufferizeStage(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Model state (KV caches) is updated in place, not returned.
  pm.addPass(attn::createAttnDropStateResults());
  // Two outputs of one value get a buffer each.
  pm.addPass(attn::createAttnDistinctResults());
  addNested(pm, attn::createAttnPromoteLoopBuffers());
  // Out-params wherever the caller can allocate them; a layer body with
  // run-time sizes returns the buffer it allocated, which the deallocation
  // pipeline frees in the caller.
  pm.addPass(attn::createAttnResultsToOutParams());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());
}

/// Buffers -> host code: plain loops for what the kernels did not take,
/// OpenMP for parallel loops, LLVM.
static void addCpuToLLVMStage(OpPassManager &pm,
                              const PipelineOptions &options) {
  addNested(pm, createForallToParallelLoopPass());
  addNested(pm, attn::createAttnCpuLowerStridedCopies());
  addNested(pm, createConvertLinalgToLoopsPass());
  if (options.runtimeChecks) {
    // Every memory access of the loops and kernels is checked against its
    // buffer's bounds (upstream's runtime verification of memref ops); a
    // failure reports the op's source location through libattnrt.
    // Messages name the op's location only (the IR dump of verbose-level=1
    // means nothing to a user); upstream has no options struct constructor.
    std::unique_ptr<Pass> verification =
        createGenerateRuntimeVerificationPass();
    (void)verification->initializeOptions(
        "verbose-level=0", [](const Twine &) { return failure(); });
    pm.addPass(std::move(verification));
  }
  // Also the checks the ONNX importer writes where a position depends on
  // dynamic sizes (a no-op without cf.assert).
  pm.addPass(attn::createAttnLowerRuntimeChecks());
  pm.addPass(createConvertSCFToOpenMPPass());
  // [B * S, N] -> [B, S, N] with dynamic B and S, which
  // expand-strided-metadata cannot take (no-op for static shapes).
  addNested(pm, attn::createAttnExpandDynamicReshapes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Math before vectors: what has no LLVM intrinsic (erf without
  // attn-cpu-approximate-math) becomes libm calls, unrolled on vectors into
  // vector.extract/insert, which vector-to-llvm must still lower.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  if (!options.cpuAvx512Bf16) {
    arith::ArithExpandOpsPassOptions expand;
    expand.includeBf16 = true;
    addNested(pm, arith::createArithExpandOpsPass(expand));
  }
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = options.cpuAvx512Bf16;
  // attn-cpu-vectorize-rows transposes 16 x 16 blocks of keys: shuffles of
  // whole rows, not 256 element moves.
  vectorToLLVM.vectorTransposeLowering =
      vector::VectorTransposeLowering::Shuffle16x16;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  // Before scf-to-cf: memref.alloca_scope (which scf-to-openmp wraps
  // parallel bodies in) must keep a single block until it is lowered. Heap
  // buffers go through _mlir_memref_to_llvm_alloc/free, which libattnrt
  // defines (ModelAlloc.cpp) to keep them mapped across runs.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  // Bare pointers for static models; memref descriptors for models with
  // dynamic sizes.
  pm.addPass(attn::createAttnCpuFuncToLLVM());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

/// Buffers -> one GPU thread per output element (reductions run serially
/// inside the thread); host allocations and copies move to the device;
/// kernels outlined into one gpu.module.
static void addCudaMapStage(OpPassManager &pm) {
  // Before the generic mapping, which would run each fused row serially in
  // one thread.
  addNested(pm, attn::createAttnGpuRowKernels());
  addNested(pm, createForallToParallelLoopPass());
  // Strided host copies as kernels: gpu.memcpy copies one contiguous range.
  addNested(pm, attn::createAttnGpuCopyKernels());
  addNested(pm, createConvertLinalgToParallelLoopsPass());
  addNested(pm, attn::createAttnGpuTileParallelLoops());
  addNested(pm, createGpuMapParallelLoopsPass());
  addNested(pm, createConvertParallelLoopToGpuPass());
  pm.addPass(attn::createAttnGpuDeviceBuffers());
  addNested(pm, createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(attn::createAttnGpuMergeModules());
  addNested(pm, createGpuAsyncRegionPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
}

/// The steps of upstream's gpu-lower-to-nvvm-pipeline (after outlining,
/// which the map stage did), spelled out so that libdevice is linked
/// (math.exp, erf, tanh, rsqrt call __nv_* functions) and the toolkit that
/// serializes the kernels is the one we found.
static void addCudaToNVVMStage(OpPassManager &pm,
                               const PipelineOptions &options) {
  // As on the CPU: [B * S, N] -> [B, S, N] with dynamic B and S in the host
  // functions, before expand-strided-metadata.
  addNested(pm, attn::createAttnExpandDynamicReshapes());
  // The importer's checks of dynamic positions, in host code: a located
  // error and exit status 3 rather than upstream's puts + abort.
  pm.addPass(attn::createAttnLowerRuntimeChecks());
  pm.addPass(attn::createAttnGpuTensorMapParams());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions nvvm;
  nvvm.chip = attnc::stringifyOption(options.chip).str();
  nvvm.features = options.features;
  nvvm.optLevel = 3;
  nvvm.linkLibs.push_back(options.toolkit + "/nvvm/libdevice/libdevice.10.bc");
  pm.addPass(createGpuNVVMAttachTarget(nvvm));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // Launches pass memref descriptors, as the kernels take them
  // (convert-gpu-to-nvvm's default): with bare pointers on the host, every
  // memref argument would be one pointer against the kernel's descriptor
  // parameters, and a dynamic size could not reach the kernel at all.
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// The stages both targets share: linalg, bufferization, then the target's
/// matmul kernels. Returns false when `stopAfter` ends the pipeline here.
static bool addTargetIndependentStages(OpPassManager &pm,
                                       const PipelineOptions &options,
                                       Target target) {
  addLinalgStage(pm, options, target);
  if (options.stopAfter == Stage::Linalg)
    return false;
  addBufferizeStage(pm);
  if (options.stopAfter == Stage::Bufferized)
    return false;
  if (options.matmulKernels) {
    if (target == Target::CUDA) {
      attn::AttnGpuMmaMatmulOptions mma;
      mma.staging = hasAsyncCopy(options.chip) ? "cp-async" : "plain";
      // wgmma needs the architecture-specific features of sm_90a (sm_100a
      // and later dropped it).
      mma.wgmma = options.wgmma && options.chip == attnc::CudaChip::SM90a;
      mma.tma = mma.wgmma && options.tma;
      addNested(pm, attn::createAttnGpuMmaMatmul(mma));
      addNested(pm, attn::createAttnGpuSimtMatmul());
    } else {
      addNested(
          pm, attn::createAttnCpuMatmulKernel(attn::AttnCpuMatmulKernelOptions{
                  .fmaRowTile = options.cpuAvx512 ? 6 : 0,
                  .bf16Dot = options.cpuAvx512Bf16,
                  .int8Dot = options.cpuAvx512Vnni,
                  .int4Lookup = options.cpuAvx512,
                  .int4Bf16Dot =
                      options.cpuAvx512Bf16 && options.bf16Activations}));
    }
  }
  return true;
}

void attnc::buildAttnToCpuPipeline(OpPassManager &pm,
                                   const PipelineOptions &options) {
  if (!addTargetIndependentStages(pm, options, Target::CPU))
    return;
  if (options.attentionKernels)
    addNested(pm, attn::createAttnCpuOuterProductMatmul(
                      attn::AttnCpuOuterProductMatmulOptions{
                          .bf16Dot = options.cpuAvx512Bf16,
                          .bf16DotRoundsF32 = options.cpuAvx512Bf16 &&
                                              options.quantizeInt8 &&
                                              options.int8Bf16Attention}));
  if (options.vectorizeRows)
    addNested(
        pm, attn::createAttnCpuVectorizeRows(attn::AttnCpuVectorizeRowsOptions{
                .parallelMinElements = 32 * 1024}));
  // After the matmul kernels have folded GELU epilogues into their stores,
  // so that those are approximated too (vector math included).
  if (options.approximateMath)
    addNested(pm, attn::createAttnCpuApproximateMath());
  addCpuToLLVMStage(pm, options);
  attn::AttnEmitModelEntryOptions entry;
  entry.target = Target::CPU;
  entry.symbolPrefix = options.entrySymbolPrefix;
  pm.addPass(attn::createAttnEmitModelEntry(entry));
}

void attnc::buildAttnToCudaPipeline(OpPassManager &pm,
                                    const PipelineOptions &options) {
  if (!addTargetIndependentStages(pm, options, Target::CUDA))
    return;
  addCudaMapStage(pm);
  if (options.stopAfter == Stage::GpuMapped)
    return;
  addCudaToNVVMStage(pm, options);
  pm.addPass(createCanonicalizerPass());
  attn::AttnEmitModelEntryOptions entry;
  entry.target = Target::CUDA;
  entry.symbolPrefix = options.entrySymbolPrefix;
  pm.addPass(attn::createAttnEmitModelEntry(entry));
}

void attnc::buildAttnToTargetPipeline(OpPassManager &pm, Target target,
                                      const PipelineOptions &options) {
  if (target == Target::CUDA)
    buildAttnToCudaPipeline(pm, options);
  else
    buildAttnToCpuPipeline(pm, options);
}

//===----------------------------------------------------------------------===//
// attn-opt's pipeline options
//===----------------------------------------------------------------------===//

namespace {
/// attn-opt's --attn-to-cpu / --attn-to-cuda options, generated from
/// PipelineOptions and the switch table.
template <Target target>
struct PipelineCLOptions
    : public PassPipelineOptions<PipelineCLOptions<target>> {
  template <typename T>
  using Option = typename PassPipelineOptions<
      PipelineCLOptions<target>>::template Option<T>;

  Option<Stage> stopAfter{
      *this, "stop-after", llvm::cl::desc("Stop after this stage"),
      llvm::cl::init(Stage::LLVM),
      llvm::cl::values(
          clEnumValN(Stage::Linalg, "linalg",
                     "attn lowered to linalg on tensors, weights hoisted"),
          clEnumValN(Stage::Bufferized, "bufferized",
                     "bufferized, results as out-params"),
          clEnumValN(Stage::GpuMapped, "gpu-mapped",
                     "attn-to-cuda only: kernels outlined, device buffers, "
                     "before the NVVM lowering"),
          clEnumValN(Stage::LLVM, "llvm",
                     "LLVM dialect with the runtime entry points"))};

  PipelineCLOptions() {
    PipelineOptions defaults;
    for (const attnc::PipelineSwitch &s : attnc::getPipelineSwitches())
      if (s.appliesTo(target))
        switches.push_back(
            {&s, std::make_unique<Option<bool>>(
                     *this, s.name, llvm::cl::desc(s.description),
                     llvm::cl::init(defaults.*s.field))});
    auto text = [&](StringRef name, StringRef description,
                    std::string PipelineOptions::*field) {
      strings.push_back({field, std::make_unique<Option<std::string>>(
                                    *this, name, llvm::cl::desc(description),
                                    llvm::cl::init(defaults.*field))});
    };
    auto precisionOption = [&](StringRef name, StringRef description,
                               attnc::Precision value) {
      return std::make_unique<Option<attnc::Precision>>(
          *this, name, llvm::cl::desc(description), llvm::cl::init(value));
    };
    precision = precisionOption("precision",
                                "Compute type of the model's f32 tensors: "
                                "f32, f16 or bf16 (attn-convert-precision)",
                                defaults.precision);
    ioPrecision = precisionOption(
        "io-precision",
        "Type of the model's float inputs and outputs: f32 or the precision",
        defaults.ioPrecision);
    if (target != Target::CUDA) {
      cpuAvx512Bf16 = std::make_unique<Option<bool>>(
          *this, "cpu-avx512bf16",
          llvm::cl::desc("The CPU has AVX-512 BF16: bf16 matmuls on its dot "
                         "products (attn-cpu-matmul-kernel{bf16-dot}) and "
                         "bf16 conversions on its instructions"),
          llvm::cl::init(defaults.cpuAvx512Bf16));
      cpuAvx512 = std::make_unique<Option<bool>>(
          *this, "cpu-avx512",
          llvm::cl::desc("The CPU has AVX-512F (32 vector registers): the "
                         "f32 GEMM tiles of transposed weights hold 6 x 4 "
                         "vector accumulators "
                         "(attn-cpu-matmul-kernel{fma-row-tile=6})"),
          llvm::cl::init(defaults.cpuAvx512));
      return;
    }
    chip = std::make_unique<Option<attnc::CudaChip>>(
        *this, "chip", llvm::cl::desc("CUDA architecture, e.g. sm_80, sm_90a"),
        llvm::cl::init(defaults.chip));
    text("features", "PTX features, e.g. +ptx80", &PipelineOptions::features);
    text("toolkit", "CUDA toolkit root (ptxas, libdevice)",
         &PipelineOptions::toolkit);
    text("format", "Kernel binary format: bin (cubin), isa (PTX) or fatbin",
         &PipelineOptions::format);
  }

  PipelineOptions get() const {
    PipelineOptions options;
    options.stopAfter = stopAfter;
    for (const auto &[s, option] : switches)
      options.*(s->field) = *option;
    for (const auto &[field, option] : strings)
      options.*field = *option;
    options.precision = *precision;
    options.ioPrecision = *ioPrecision;
    if (cpuAvx512Bf16)
      options.cpuAvx512Bf16 = *cpuAvx512Bf16;
    if (cpuAvx512)
      options.cpuAvx512 = *cpuAvx512;
    if (chip)
      options.chip = *chip;
    return options;
  }

private:
  std::vector<
      std::pair<const attnc::PipelineSwitch *, std::unique_ptr<Option<bool>>>>
      switches;
  std::vector<std::pair<std::string PipelineOptions::*,
                        std::unique_ptr<Option<std::string>>>>
      strings;
  std::unique_ptr<Option<attnc::Precision>> precision, ioPrecision;
  std::unique_ptr<Option<bool>> cpuAvx512Bf16, cpuAvx512;
  std::unique_ptr<Option<attnc::CudaChip>> chip;
};
} // namespace

void attnc::registerPipelines() {
  PassPipelineRegistration<PipelineCLOptions<Target::CPU>>(
      "attn-to-cpu",
      "Lower attn to the LLVM dialect for the host CPU (linalg, one-shot "
      "bufferization, loops, LLVM) with the attnrt entry points",
      [](OpPassManager &pm, const PipelineCLOptions<Target::CPU> &cl) {
        buildAttnToCpuPipeline(pm, cl.get());
      });
  PassPipelineRegistration<PipelineCLOptions<Target::CUDA>>(
      "attn-to-cuda",
      "Lower attn to host LLVM dialect plus CUDA kernels through NVVM "
      "(gpu mapping, outlining, gpu-module-to-binary via ptxas)",
      [](OpPassManager &pm, const PipelineCLOptions<Target::CUDA> &cl) {
        buildAttnToCudaPipeline(pm, cl.get());
      });
}
