// Not a test: input for raise-attention.test. Attention written unfused, as
// a PyTorch export gives it: O = softmax(Q @ K^T / sqrt(8) + M) @ V with
// q, k, v : [4, 16, 8] and the additive mask M : [4, 16, 16]. Everything is
// linalg on tensors except the softmax, which is attn.softmax so that the
// unraised model compiles too (attn-compile has no lowering for
// linalg.softmax; see unfused-attention-linalg-softmax.mlir).
func.func @main(%q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>,
                %v: tensor<4x16x8xf32>, %mask: tensor<4x16x16xf32>)
    -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %sqrt_d = arith.constant 2.8284271247461903 : f32
  %kt_init = tensor.empty() : tensor<4x8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<4x16x8xf32>)
      outs(%kt_init : tensor<4x8x16xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<4x16x16xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scores = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>)
      outs(%s_zero : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %divisor = linalg.fill ins(%sqrt_d : f32) outs(%s_init : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scaled = linalg.div ins(%scores, %divisor : tensor<4x16x16xf32>, tensor<4x16x16xf32>)
      outs(%s_init : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %masked = linalg.add ins(%scaled, %mask : tensor<4x16x16xf32>, tensor<4x16x16xf32>)
      outs(%s_init : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %probs = attn.softmax %masked dim = -1 : tensor<4x16x16xf32>
  %o_init = tensor.empty() : tensor<4x16x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = linalg.batch_matmul ins(%probs, %v : tensor<4x16x16xf32>, tensor<4x16x8xf32>)
      outs(%o_zero : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}
