// A GPT-style causal decoder block: pre-LN, causal multi-head self-attention,
// tanh-GELU MLP; d_model 256, 8 heads, d_ff 1024, seq 64.
func.func @main(%h0: tensor<1x64x256xf32>) -> tensor<1x64x256xf32> {
  %h1 = attn.layer index = 0 (%h0) : (tensor<1x64x256xf32>) -> tensor<1x64x256xf32> {
  ^bb0(%x: tensor<1x64x256xf32>):
    %g1 = attn.weight "h.0.ln_1.weight" : tensor<256xf32>
    %be1 = attn.weight "h.0.ln_1.bias" : tensor<256xf32>
    %n1 = attn.layer_norm %x, %g1, %be1 : tensor<1x64x256xf32>, tensor<256xf32>, tensor<256xf32>
    %wq = attn.weight "h.0.attn.q.weight" : tensor<256x256xf32>
    %bq = attn.weight "h.0.attn.q.bias" : tensor<256xf32>
    %wk = attn.weight "h.0.attn.k.weight" : tensor<256x256xf32>
    %bk = attn.weight "h.0.attn.k.bias" : tensor<256xf32>
    %wv = attn.weight "h.0.attn.v.weight" : tensor<256x256xf32>
    %bv = attn.weight "h.0.attn.v.bias" : tensor<256xf32>
    %wo = attn.weight "h.0.attn.o.weight" : tensor<256x256xf32>
    %bo = attn.weight "h.0.attn.o.bias" : tensor<256xf32>
    %attn = attn.mha %n1 weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 8 causal : (tensor<1x64x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1x64x256xf32>
    %res1 = attn.add %x, %attn : tensor<1x64x256xf32>
    %g2 = attn.weight "h.0.ln_2.weight" : tensor<256xf32>
    %be2 = attn.weight "h.0.ln_2.bias" : tensor<256xf32>
    %n2 = attn.layer_norm %res1, %g2, %be2 : tensor<1x64x256xf32>, tensor<256xf32>, tensor<256xf32>
    %w1 = attn.weight "h.0.mlp.up.weight" : tensor<1024x256xf32>
    %b1 = attn.weight "h.0.mlp.up.bias" : tensor<1024xf32>
    %w2 = attn.weight "h.0.mlp.down.weight" : tensor<256x1024xf32>
    %b2 = attn.weight "h.0.mlp.down.bias" : tensor<256xf32>
    %ff = attn.ffn %n2 up(%w1, %b1) down(%w2, %b2) activation = gelu_tanh : (tensor<1x64x256xf32>, tensor<1024x256xf32>, tensor<1024xf32>, tensor<256x1024xf32>, tensor<256xf32>) -> tensor<1x64x256xf32>
    %res2 = attn.add %res1, %ff : tensor<1x64x256xf32>
    attn.yield %res2 : tensor<1x64x256xf32>
  }
  return %h1 : tensor<1x64x256xf32>
}
