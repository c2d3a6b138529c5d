// RUN: attn-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-cache-write))"

// A cache write the pass cannot make a kernel of is an error at the op (it
// would otherwise fall to the CPU lowering's host loop).
func.func @dynamic_length(%cache: tensor<1x2x?x8xf32>, %new: tensor<1x2x1x8xf32>,
                          %pos: tensor<1xi64>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{'attn.cache_write' op cannot be lowered for CUDA: only the token count of the new rows may be dynamic}}
  %0 = attn.cache_write %new into %cache at %pos : tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1xi64>
  return %0 : tensor<1x2x?x8xf32>
}

// -----

func.func @too_many_heads(%cache: tensor<1x65536x4x1xf32>, %new: tensor<1x65536x1x1xf32>,
                          %pos: tensor<1xi64>) -> tensor<1x65536x4x1xf32> {
  // expected-error @+1 {{'attn.cache_write' op cannot be lowered for CUDA: batch and heads must be at most 65535 (grid z and y)}}
  %0 = attn.cache_write %new into %cache at %pos : tensor<1x65536x1x1xf32>, tensor<1x65536x4x1xf32>, tensor<1xi64>
  return %0 : tensor<1x65536x4x1xf32>
}
