// Not a test: input for raise-attention.test. The same attention as
// unfused-attention.mlir, all in linalg: the scale is a multiplication by
// 1/sqrt(8) in a linalg.generic, the mask is added first, and the softmax is
// linalg.softmax. Compiled only after attn-raise-attention.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>,
                %v: tensor<4x16x8xf32>, %mask: tensor<4x16x16xf32>)
    -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv_sqrt_d = arith.constant 0.35355339059327373 : f32
  %kt_init = tensor.empty() : tensor<4x8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<4x16x8xf32>)
      outs(%kt_init : tensor<4x8x16xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<4x16x16xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scores = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>)
      outs(%s_zero : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id],
                            iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scores : tensor<4x16x16xf32>) outs(%s_init : tensor<4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %inv_sqrt_d : f32
    linalg.yield %m : f32
  } -> tensor<4x16x16xf32>
  %masked = linalg.add ins(%mask, %scaled : tensor<4x16x16xf32>, tensor<4x16x16xf32>)
      outs(%s_init : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %probs = linalg.softmax dimension(2) ins(%masked : tensor<4x16x16xf32>)
      outs(%s_init : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %o_init = tensor.empty() : tensor<4x16x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = linalg.batch_matmul ins(%probs, %v : tensor<4x16x16xf32>, tensor<4x16x8xf32>)
      outs(%o_zero : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}
