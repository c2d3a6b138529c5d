//===- Pipelines.h - attnc's named pass pipelines ---------------*- C++ -*-===//

#ifndef ATTNC_PIPELINES_PIPELINES_H
#define ATTNC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace attnc {

/// Where a pipeline stops. Each stage includes the ones before it.
enum class Stage {
  Linalg,     ///< attn lowered to linalg on tensors, weights hoisted.
  Bufferized, ///< one-shot bufferized, results as out-params.
  LLVM,       ///< LLVM dialect with the runtime entry points.
};

/// The optimizations the default pipelines run; each can be turned off
/// (attn-compile --no-<name>, or the pipelines' options in attn-opt).
struct FusionOptions {
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
  /// attn-cpu-matmul-kernel (CPU) / attn-gpu-mma-matmul (CUDA): register-
  /// tiled or tensor-core matmuls with fused epilogues.
  bool matmulKernels = true;
};

struct CpuPipelineOptions : FusionOptions {
  Stage stopAfter = Stage::LLVM;
  /// attn-flash-attention{transpose-keys} + attn-cpu-outer-product-matmul:
  /// the flash block contractions as outer-product vector kernels.
  bool attentionKernels = true;
  /// attn-cpu-vectorize-rows: elementwise and row-reduction generics (the
  /// online softmax, epilogues) as vector loops along their rows.
  bool vectorizeRows = true;
  /// attn-cpu-transpose-weights: projection weights bound K-major
  /// (transposed by the runtime at bind time) for attn-cpu-matmul-kernel's
  /// outer-product tiles; only with matmulKernels.
  bool transposeWeights = true;
  /// attn-approximate-math: polynomial exp/erf/tanh, so that softmax and
  /// GELU loops vectorize.
  bool approximateMath = true;
  /// generate-runtime-verification: bounds checks on every memory access of
  /// the generated code, reported with the op's location (debugging).
  bool runtimeChecks = false;
};

struct CudaPipelineOptions : FusionOptions {
  Stage stopAfter = Stage::LLVM;
  std::string chip = "sm_90a";
  /// PTX ISA features passed to the NVVM target (e.g. "+ptx80").
  std::string features = "+ptx80";
  /// gpu-module-to-binary format: bin (cubin), isa (PTX text), fatbin.
  std::string format = "bin";
  /// CUDA toolkit root: ptxas for serialization, libdevice for math.
  std::string toolkit = "/usr/local/cuda";
};

/// attn dialect -> LLVM dialect for the host CPU.
llvm::LogicalResult buildAttnToCpuPipeline(mlir::OpPassManager &pm,
                                           const CpuPipelineOptions &options);

/// attn dialect -> host LLVM dialect with embedded CUDA kernels.
llvm::LogicalResult buildAttnToCudaPipeline(mlir::OpPassManager &pm,
                                            const CudaPipelineOptions &options);

/// Parses "linalg", "bufferized" or "llvm".
std::optional<Stage> parseStage(llvm::StringRef name);

/// Registers attn-to-cpu and attn-to-cuda with the pass registry.
void registerPipelines();

} // namespace attnc

#endif // ATTNC_PIPELINES_PIPELINES_H
