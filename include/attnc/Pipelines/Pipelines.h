//===- Pipelines.h - attnc's pass pipelines ---------------------*- C++ -*-===//
//
// attn-to-cpu and attn-to-cuda, built in C++ from the passes' create
// functions. One options struct, PipelineOptions, serves both pipelines,
// attn-opt's pipeline options and attn-compile's flags: the optimizations
// that can be turned off are listed once, in getPipelineSwitches(), and both
// tools generate their options from that list.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_PIPELINES_PIPELINES_H
#define ATTNC_PIPELINES_PIPELINES_H

#include "attnc/Support/CodegenOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace attnc {

/// Where a pipeline stops. Each stage includes the ones before it.
enum class Stage {
  Linalg,     ///< attn lowered to linalg on tensors, weights hoisted.
  Bufferized, ///< one-shot bufferized, results as out-params.
  /// CUDA only: after the map stage (kernels outlined, device buffers,
  /// async copies), before the NVVM lowering; what the GPU-kernel emulator
  /// runs (test/Integration/GPU/model-emulation.test). The CPU pipeline runs
  /// to LLVM.
  GpuMapped,
  LLVM, ///< LLVM dialect with the runtime entry points.
};

/// Everything the default pipelines take.
struct PipelineOptions {
  Stage stopAfter = Stage::LLVM;

  // Optimizations; each is one row of getPipelineSwitches().
  /// attn-raise-attention: unfused matmul/softmax chains -> attn.sdpa.
  bool raiseAttention = true;
  /// attn-decompose-mha + attn-pack-qkv: one QKV projection.
  bool packQKV = true;
  /// attn-tile: per-op tile sizes for the target (otherwise the tiling
  /// passes' own defaults).
  bool tile = true;
  /// attn-flash-attention: blocked online-softmax attention.
  bool flash = true;
  /// attn-fuse-rows: residual add + norm in one row loop.
  bool fuseRows = true;
  /// attn-outline-layers: identical attn.layer bodies become one function
  /// called per layer, so that code size and compile time do not grow with
  /// depth.
  bool outlineLayers = true;
  /// attn-cpu-matmul-kernel (CPU) / attn-gpu-mma-matmul (CUDA): register-
  /// tiled or tensor-core matmuls with fused epilogues.
  bool matmulKernels = true;
  /// CUDA sm_90a: attn-gpu-mma-matmul multiplies with warpgroup MMA
  /// (wgmma.mma_async) where the shape allows.
  bool wgmma = true;
  /// CUDA sm_90a: the wgmma kernels load their tiles with TMA
  /// (cp.async.bulk.tensor) where the operands allow.
  bool tma = true;
  /// CPU: attn-flash-attention{transpose-keys} +
  /// attn-cpu-outer-product-matmul: the flash block contractions as
  /// outer-product vector kernels.
  bool attentionKernels = true;
  /// CPU: attn-cpu-vectorize-rows: elementwise and row-reduction generics
  /// (the online softmax, epilogues) as vector loops along their rows.
  bool vectorizeRows = true;
  /// CPU: attn-cpu-transpose-weights: projection weights bound K-major
  /// (transposed by the runtime at bind time) for attn-cpu-matmul-kernel's
  /// outer-product tiles; only with matmulKernels.
  bool transposeWeights = true;
  /// CPU: attn-cpu-approximate-math: polynomial exp/erf/tanh, so that softmax
  /// and GELU loops vectorize.
  bool approximateMath = true;
  /// CPU: generate-runtime-verification: bounds checks on every memory
  /// access of the generated code, reported with the op's location
  /// (debugging).
  bool runtimeChecks = false;
  /// attn-convert-precision: the compute type of the model's f32 tensors
  /// (f32, f16, bf16) and of its float inputs and outputs (f32 or the
  /// same).
  Precision precision = Precision::F32;
  Precision ioPrecision = Precision::F32;

  // CPU code generation.
  /// The CPU the code is for has AVX-512 BF16 (attn-compile sets it from
  /// --cpu / --cpu-features): bf16 matmuls on its dot products
  /// (attn-cpu-matmul-kernel{bf16-dot}) and f32 -> bf16 conversions on its
  /// instructions. Without it the conversions are expanded into integer
  /// arithmetic (LLVM would call __truncsfbf2, which GCC 12's libgcc lacks).
  bool cpuAvx512Bf16 = false;
  /// The CPU the code is for has AVX-512F (attn-compile sets it from --cpu
  /// / --cpu-features): 32 vector registers, which the f32 GEMM tiles of
  /// transposed weights fill with 6 x 4 vector accumulators
  /// (attn-cpu-matmul-kernel{fma-row-tile=6}).
  bool cpuAvx512 = false;
  /// Dynamic int8 projections (attn-cpu-quantize-int8): u8 activations per
  /// row, s8 weights per column, whose quantized tensors attn-compile
  /// writes into the weights file.
  bool quantizeInt8 = false;
  /// With quantizeInt8 and cpuAvx512Bf16: attention's block products round
  /// their f32 inputs to bf16 and multiply them on vdpbf16ps
  /// (attn-cpu-outer-product-matmul{bf16-dot-rounds-f32}), as a bf16
  /// model's do; the projections' int8 error dominates.
  bool int8Bf16Attention = true;
  /// Weight-only projections (attn-cpu-quantize-weights): 8 or 4 bits per
  /// weight with one f32 scale per `quantizeGroup` weights along K, whose
  /// quantized tensors attn-compile writes into the weights file; 0: off.
  int64_t quantizeWeightBits = 0;
  int64_t quantizeGroup = 128;
  /// With quantizeWeightBits: the activation rows are quantized to int8
  /// per group at run time too, and the projections sum integer products
  /// (attn-cpu-quantize-weights{int8-activations}).
  bool int8Activations = false;
  /// With quantizeWeightBits 4 in groups of a multiple of 128 and
  /// cpuAvx512Bf16: the projections multiply bf16-rounded activations by
  /// the weights looked up as bf16 on vdpbf16ps
  /// (attn-cpu-matmul-kernel{int4-bf16-dot}).
  bool bf16Activations = false;
  /// The CPU the code is for has AVX-512 VNNI (attn-compile sets it from
  /// --cpu / --cpu-features): the int8 contractions run on vpdpbusd
  /// (attn-cpu-matmul-kernel{int8-dot}); without it they stay scalar loops.
  bool cpuAvx512Vnni = false;
  /// The prefix of the model's entry symbols (attn-emit-model-entry
  /// symbol-prefix): attn_model, or attn_encoder for an encoder-decoder's
  /// encoder linked beside its decoder step.
  std::string entrySymbolPrefix = "attn_model";

  // CUDA code generation.
  CudaChip chip = CudaChip::SM90a;
  /// PTX ISA features passed to the NVVM target (e.g. "+ptx80").
  std::string features = "+ptx80";
  /// gpu-module-to-binary format: bin (cubin), isa (PTX text), fatbin.
  std::string format = "bin";
  /// CUDA toolkit root: ptxas for serialization, libdevice for math.
  std::string toolkit = "/usr/local/cuda";
};

/// A boolean choice of the pipelines: attn-opt's pipeline option
/// `<name>=0|1` and attn-compile's `--no-<name>` (or `--<name>` when the
/// default is off). A new choice is a field of PipelineOptions plus a row
/// of getPipelineSwitches().
struct PipelineSwitch {
  llvm::StringLiteral name;
  bool PipelineOptions::*field;
  /// What it does (attn-opt's option help).
  llvm::StringLiteral description;
  /// What turning it off does (attn-compile's --no-<name> help; unused
  /// when the default is off).
  llvm::StringLiteral offDescription;
  /// The targets whose pipeline runs it.
  bool cpu, cuda;

  bool appliesTo(Target target) const {
    return target == Target::CPU ? cpu : cuda;
  }
};

/// Every optimization switch, in the order the tools list them.
llvm::ArrayRef<PipelineSwitch> getPipelineSwitches();

/// attn dialect -> LLVM dialect for the host CPU.
void buildAttnToCpuPipeline(mlir::OpPassManager &pm,
                            const PipelineOptions &options);

/// attn dialect -> host LLVM dialect with embedded CUDA kernels.
void buildAttnToCudaPipeline(mlir::OpPassManager &pm,
                             const PipelineOptions &options);

/// The pipeline of `target`.
void buildAttnToTargetPipeline(mlir::OpPassManager &pm, Target target,
                               const PipelineOptions &options);

/// Registers attn-to-cpu and attn-to-cuda with the pass registry.
void registerPipelines();

} // namespace attnc

#endif // ATTNC_PIPELINES_PIPELINES_H
