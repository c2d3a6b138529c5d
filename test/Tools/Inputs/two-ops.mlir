// Not a test: input for attn-compile.test. Two ops and one weight:
// output0 = relu(input0 + bias).
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = attn.weight "bias" : tensor<2x4xf32>
  %0 = attn.add %x, %w : tensor<2x4xf32>
  %1 = attn.relu %0 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
