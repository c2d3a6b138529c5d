// One attention decode step over a KV cache of 8 positions: the new
// token's keys and values are written into the caches (model state, updated
// in place) at each sequence's position, then the query attends to the first
// `lengths` rows.
func.func @main(%q: tensor<2x2x1x4xf32> {attn.name = "q"},
                %k: tensor<2x2x1x4xf32> {attn.name = "k"},
                %v: tensor<2x2x1x4xf32> {attn.name = "v"},
                %pos: tensor<2xi64> {attn.name = "positions"},
                %lens: tensor<2xi64> {attn.name = "lengths"},
                %kc: tensor<2x2x8x4xf32> {attn.name = "k_cache"},
                %vc: tensor<2x2x8x4xf32> {attn.name = "v_cache"})
    -> (tensor<2x2x1x4xf32> {attn.name = "out"},
        tensor<2x2x8x4xf32> {attn.state_arg = 5 : i64},
        tensor<2x2x8x4xf32> {attn.state_arg = 6 : i64}) {
  %kc2 = attn.cache_write %k into %kc at %pos : tensor<2x2x1x4xf32>, tensor<2x2x8x4xf32>, tensor<2xi64>
  %vc2 = attn.cache_write %v into %vc at %pos : tensor<2x2x1x4xf32>, tensor<2x2x8x4xf32>, tensor<2xi64>
  %o = attn.sdpa %q, %kc2, %vc2 kv_lengths(%lens : tensor<2xi64>) : tensor<2x2x1x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32> -> tensor<2x2x1x4xf32>
  return %o, %kc2, %vc2 : tensor<2x2x1x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>
}
