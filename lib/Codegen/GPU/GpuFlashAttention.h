//===- GpuFlashAttention.h - attn-gpu-flash-attention's kernel --*- C++ -*-===//
//
// Private to attn-gpu-flash-attention: the problem one attn.sdpa poses and
// the builder of its kernel (GpuFlashAttentionKernel.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_GPU_GPUFLASHATTENTION_H
#define ATTNC_LIB_CODEGEN_GPU_GPUFLASHATTENTION_H

#include "Codegen/Common/FlashPattern.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::attn::gpu_flash {

/// The static description of one attn.sdpa that becomes a kernel.
struct GpuFlashProblem : SdpaShape {
  int64_t warps, blockQ, blockK;
  /// Fragments from ldmatrix; the cp.async pipeline's depth (0: plain
  /// staging) and elements per cp.async of K and V (0: plain copies into
  /// the pipeline's buffers).
  bool ldmatrix;
  int64_t stages, chunkK, chunkV;
  /// Query row i sits at key position i + alignOffset (Sk - Sq; unused
  /// where Sq or Sk are run-time sizes).
  int64_t alignOffset;
  double scale;
  bool causal;
  Type elementType;
};

/// The run-time sizes of a problem with `?` batch, Sq or Sk (host index
/// values; null where the size is static).
struct RuntimeSizes {
  Value batch, sq, sk;
};

/// Builds the kernel of `p` (a gpu.launch) at `b`'s insertion point: reads
/// Q [B, Hq, Sq, Dk], K [B, Hkv, Sk, Dk], V [B, Hkv, Sk, Dv], the optional
/// kv lengths [B] and additive bias, and writes `out` [B, Hq, Sq, Dv].
void buildFlashKernel(OpBuilder &b, Location loc, const GpuFlashProblem &p,
                      Value q, Value k, Value v, Value lengths, Value bias,
                      Value out, RuntimeSizes sizes = {});

} // namespace mlir::attn::gpu_flash

#endif // ATTNC_LIB_CODEGEN_GPU_GPUFLASHATTENTION_H
