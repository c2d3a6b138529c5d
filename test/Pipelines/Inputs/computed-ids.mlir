// Embedding ids sliced out of the input: computed inside the model, so the
// runtime cannot check them before the run.
func.func @main(%ids: tensor<1x6xi64>) -> tensor<1x4x8xf32> {
  %t = attn.weight "t" : tensor<16x8xf32>
  %s = tensor.extract_slice %ids[0, 2] [1, 4] [1, 1]
      : tensor<1x6xi64> to tensor<1x4xi64>
  %e = attn.embedding %s, %t : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  return %e : tensor<1x4x8xf32>
}
