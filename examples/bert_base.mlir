// A BERT-base-shaped encoder stack: 12 post-LN layers, d_model 768, 12 heads,
// d_ff 3072, erf GELU, LayerNorm epsilon 1e-12, HF BERT weight names. The input
// is the embedded hidden state (batch 1, seq 128).
func.func @main(%h0: tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  %h1 = attn.layer index = 0 (%h0) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.0.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.0.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.0.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.0.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.0.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.0.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.0.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.0.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.0.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.0.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.0.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.0.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.0.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.0.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.0.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.0.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h2 = attn.layer index = 1 (%h1) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.1.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.1.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.1.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.1.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.1.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.1.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.1.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.1.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.1.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.1.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.1.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.1.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.1.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.1.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.1.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.1.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h3 = attn.layer index = 2 (%h2) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.2.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.2.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.2.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.2.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.2.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.2.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.2.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.2.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.2.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.2.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.2.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.2.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.2.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.2.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.2.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.2.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h4 = attn.layer index = 3 (%h3) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.3.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.3.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.3.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.3.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.3.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.3.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.3.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.3.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.3.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.3.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.3.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.3.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.3.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.3.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.3.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.3.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h5 = attn.layer index = 4 (%h4) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.4.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.4.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.4.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.4.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.4.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.4.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.4.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.4.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.4.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.4.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.4.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.4.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.4.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.4.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.4.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.4.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h6 = attn.layer index = 5 (%h5) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.5.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.5.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.5.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.5.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.5.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.5.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.5.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.5.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.5.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.5.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.5.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.5.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.5.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.5.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.5.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.5.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h7 = attn.layer index = 6 (%h6) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.6.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.6.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.6.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.6.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.6.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.6.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.6.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.6.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.6.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.6.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.6.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.6.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.6.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.6.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.6.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.6.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h8 = attn.layer index = 7 (%h7) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.7.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.7.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.7.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.7.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.7.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.7.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.7.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.7.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.7.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.7.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.7.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.7.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.7.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.7.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.7.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.7.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h9 = attn.layer index = 8 (%h8) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.8.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.8.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.8.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.8.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.8.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.8.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.8.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.8.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.8.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.8.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.8.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.8.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.8.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.8.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.8.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.8.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h10 = attn.layer index = 9 (%h9) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.9.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.9.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.9.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.9.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.9.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.9.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.9.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.9.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.9.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.9.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.9.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.9.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.9.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.9.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.9.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.9.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h11 = attn.layer index = 10 (%h10) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.10.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.10.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.10.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.10.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.10.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.10.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.10.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.10.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.10.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.10.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.10.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.10.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.10.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.10.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.10.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.10.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  %h12 = attn.layer index = 11 (%h11) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%x: tensor<1x128x768xf32>):
    %wq = attn.weight "encoder.layer.11.attention.self.query.weight" : tensor<768x768xf32>
    %bq = attn.weight "encoder.layer.11.attention.self.query.bias" : tensor<768xf32>
    %wk = attn.weight "encoder.layer.11.attention.self.key.weight" : tensor<768x768xf32>
    %bk = attn.weight "encoder.layer.11.attention.self.key.bias" : tensor<768xf32>
    %wv = attn.weight "encoder.layer.11.attention.self.value.weight" : tensor<768x768xf32>
    %bv = attn.weight "encoder.layer.11.attention.self.value.bias" : tensor<768xf32>
    %wo = attn.weight "encoder.layer.11.attention.output.dense.weight" : tensor<768x768xf32>
    %bo = attn.weight "encoder.layer.11.attention.output.dense.bias" : tensor<768xf32>
    %attn = attn.mha %x weights(%wq, %wk, %wv, %wo) biases(%bq, %bk, %bv, %bo) heads = 12 : (tensor<1x128x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res1 = attn.add %x, %attn : tensor<1x128x768xf32>
    %g1 = attn.weight "encoder.layer.11.attention.output.LayerNorm.weight" : tensor<768xf32>
    %be1 = attn.weight "encoder.layer.11.attention.output.LayerNorm.bias" : tensor<768xf32>
    %n1 = attn.layer_norm %res1, %g1, %be1 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    %w1 = attn.weight "encoder.layer.11.intermediate.dense.weight" : tensor<3072x768xf32>
    %b1 = attn.weight "encoder.layer.11.intermediate.dense.bias" : tensor<3072xf32>
    %w2 = attn.weight "encoder.layer.11.output.dense.weight" : tensor<768x3072xf32>
    %b2 = attn.weight "encoder.layer.11.output.dense.bias" : tensor<768xf32>
    %ff = attn.ffn %n1 up(%w1, %b1) down(%w2, %b2) activation = gelu : (tensor<1x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %res2 = attn.add %n1, %ff : tensor<1x128x768xf32>
    %g2 = attn.weight "encoder.layer.11.output.LayerNorm.weight" : tensor<768xf32>
    %be2 = attn.weight "encoder.layer.11.output.LayerNorm.bias" : tensor<768xf32>
    %n2 = attn.layer_norm %res2, %g2, %be2 epsilon = 9.9999999999999998e-13 : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    attn.yield %n2 : tensor<1x128x768xf32>
  }
  return %h12 : tensor<1x128x768xf32>
}
