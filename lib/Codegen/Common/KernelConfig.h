//===- KernelConfig.h - what attn-tile knows of an op -----------*- C++ -*-===//
//
// The shapes attn-tile reads off the attn ops, handed to the target halves
// of the heuristic (Codegen/CPU/KernelConfig.h, Codegen/GPU/KernelConfig.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_COMMON_KERNELCONFIG_H
#define ATTNC_LIB_CODEGEN_COMMON_KERNELCONFIG_H

#include <cstdint>

namespace mlir::attn {

/// One contraction `[m, k] x [k, n]` an op lowers to.
struct MatmulShape {
  int64_t m, n, k;
};

/// One attention (after GQA grouping: `group` query heads per kv head).
struct AttentionShape {
  int64_t batch, hkv, group, sq, sk, dk, dv;
  /// f16/bf16 with a dot-product score, no bias and no window: on CUDA
  /// attn-gpu-flash-attention takes it if the shape fits too.
  bool tensorCoreOperands = false;
};

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_COMMON_KERNELCONFIG_H
