// Not a test: input for attn-opt.test. Valid IR without any attn.layer.
func.func @no_layers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = attn.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
