// A small encoder in the style of the base Transformer (Vaswani et al.):
// token embedding + sinusoidal positions, 2 post-LN layers,
// d_model 64, 4 heads, d_ff 256, ReLU. Weights: scripts/make_weights.py small_encoder.
func.func @main(%ids: tensor<1x16xi32>) -> tensor<1x16x64xf32> {
  %table = attn.weight "embed.weight" : tensor<100x64xf32>
  %emb = attn.embedding %ids, %table : (tensor<1x16xi32>, tensor<100x64xf32>) -> tensor<1x16x64xf32>
  %h0 = attn.sinusoidal_pos %emb : tensor<1x16x64xf32>
  %h1 = attn.layer index = 0 (%h0) : (tensor<1x16x64xf32>) -> tensor<1x16x64xf32> {
  ^bb0(%x: tensor<1x16x64xf32>):
    %wq = attn.weight "layers.0.attn.q.weight" : tensor<64x64xf32>
    %bq = attn.weight "layers.0.attn.q.bias" : tensor<64xf32>
    %wk = attn.weight "layers.0.attn.k.weight" : tensor<64x64xf32>
    %bk = attn.weight "layers.0.attn.k.bias" : tensor<64xf32>
    %wv = attn.weight "layers.0.attn.v.weight" : tensor<64x64xf32>
    %bv = attn.weight "layers.0.attn.v.bias" : tensor<64xf32>
    %wo = attn.weight "layers.0.attn.o.weight" : tensor<64x64xf32>
    %bo = attn.weight "layers.0.attn.o.bias" : tensor<64xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 4 : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %res1 = attn.add %x, %attn : tensor<1x16x64xf32>
    %g1 = attn.weight "layers.0.ln1.weight" : tensor<64xf32>
    %be1 = attn.weight "layers.0.ln1.bias" : tensor<64xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 1.0e-05 : tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>
    %w1 = attn.weight "layers.0.ffn.up.weight" : tensor<256x64xf32>
    %b1 = attn.weight "layers.0.ffn.up.bias" : tensor<256xf32>
    %w2 = attn.weight "layers.0.ffn.down.weight" : tensor<64x256xf32>
    %b2 = attn.weight "layers.0.ffn.down.bias" : tensor<64xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = relu : (tensor<1x16x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %res2 = attn.add %n1, %ff : tensor<1x16x64xf32>
    %g2 = attn.weight "layers.0.ln2.weight" : tensor<64xf32>
    %be2 = attn.weight "layers.0.ln2.bias" : tensor<64xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 1.0e-05 : tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>
    attn.yield %n2 : tensor<1x16x64xf32>
  }
  %h2 = attn.layer index = 1 (%h1) : (tensor<1x16x64xf32>) -> tensor<1x16x64xf32> {
  ^bb0(%x: tensor<1x16x64xf32>):
    %wq = attn.weight "layers.1.attn.q.weight" : tensor<64x64xf32>
    %bq = attn.weight "layers.1.attn.q.bias" : tensor<64xf32>
    %wk = attn.weight "layers.1.attn.k.weight" : tensor<64x64xf32>
    %bk = attn.weight "layers.1.attn.k.bias" : tensor<64xf32>
    %wv = attn.weight "layers.1.attn.v.weight" : tensor<64x64xf32>
    %bv = attn.weight "layers.1.attn.v.bias" : tensor<64xf32>
    %wo = attn.weight "layers.1.attn.o.weight" : tensor<64x64xf32>
    %bo = attn.weight "layers.1.attn.o.bias" : tensor<64xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 4 : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %res1 = attn.add %x, %attn : tensor<1x16x64xf32>
    %g1 = attn.weight "layers.1.ln1.weight" : tensor<64xf32>
    %be1 = attn.weight "layers.1.ln1.bias" : tensor<64xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 1.0e-05 : tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>
    %w1 = attn.weight "layers.1.ffn.up.weight" : tensor<256x64xf32>
    %b1 = attn.weight "layers.1.ffn.up.bias" : tensor<256xf32>
    %w2 = attn.weight "layers.1.ffn.down.weight" : tensor<64x256xf32>
    %b2 = attn.weight "layers.1.ffn.down.bias" : tensor<64xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = relu : (tensor<1x16x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %res2 = attn.add %n1, %ff : tensor<1x16x64xf32>
    %g2 = attn.weight "layers.1.ln2.weight" : tensor<64xf32>
    %be2 = attn.weight "layers.1.ln2.bias" : tensor<64xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 1.0e-05 : tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>
    attn.yield %n2 : tensor<1x16x64xf32>
  }
  return %h2 : tensor<1x16x64xf32>
}
