// A deliberately bad kernel: out[0, j] = table[ids[0, j]] with the ids used
// as indices unchecked (attn.embedding clamps them; this does not).
func.func @main(%ids: tensor<1x4xi32>) -> tensor<1x4xf32> {
  %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %init = tensor.empty() : tensor<1x4xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<1x4xi32>) outs(%init : tensor<1x4xf32>) {
  ^bb0(%id: i32, %o: f32):
    %i = arith.index_cast %id : i32 to index
    %v = tensor.extract %table[%i] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<1x4xf32>
  return %out : tensor<1x4xf32>
}
