// Not a test: input for attn-opt.test. It parses, but 8 query heads are not
// a multiple of 3 key/value heads.
func.func @gqa(%q: tensor<1x8x4x16xf32>, %kv: tensor<1x3x4x16xf32>) -> tensor<1x8x4x16xf32> {
  %0 = attn.sdpa %q, %kv, %kv : tensor<1x8x4x16xf32>, tensor<1x3x4x16xf32>, tensor<1x3x4x16xf32> -> tensor<1x8x4x16xf32>
  return %0 : tensor<1x8x4x16xf32>
}
