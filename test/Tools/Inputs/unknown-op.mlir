// Not a test: input for attn-opt.test. attn has no such op.
func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = attn.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
