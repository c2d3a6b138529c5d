// Not a test: input for attn-opt.test. The sdpa below lacks its value operand.
func.func @malformed(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %0 = attn.sdpa %q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}
