// Not a test: input for bad-inputs.test. One input, two weights, one output:
// output0 = relu(input0 @ proj.weight^T + proj.bias).
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = attn.weight "proj.weight" : tensor<3x4xf32>
  %b = attn.weight "proj.bias" : tensor<3xf32>
  %y = attn.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = attn.relu %y : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
