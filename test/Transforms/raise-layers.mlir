// RUN: attn-opt %s --split-input-file --attn-raise-layers | FileCheck %s

// Two pre-LN blocks (norm, attention, residual add, FFN, residual add): two
// isolated attn.layer ops, index by depth, each holding its own weights; no
// weight is left outside.

// CHECK-LABEL: func.func @pre_ln
// CHECK-NOT: attn.weight
// CHECK: %[[L0:.*]] = attn.layer index = 0 (%arg0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// CHECK: ^bb0(%[[H0:.*]]: tensor<1x4x8xf32>):
// CHECK: attn.weight "l0.ln.weight"
// CHECK: attn.sdpa
// CHECK: attn.add %[[H0]],
// CHECK: attn.weight "l0.up.weight"
// CHECK: attn.ffn
// CHECK: attn.yield
// CHECK: %[[L1:.*]] = attn.layer index = 1 (%[[L0]]) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// CHECK-DAG: attn.weight "l1.q.weight"
// CHECK: attn.sdpa
// CHECK: attn.yield
// CHECK-NOT: attn.weight
// CHECK: return %[[L1]]
func.func @pre_ln(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %l0g = attn.weight "l0.ln.weight" : tensor<8xf32>
  %l0b = attn.weight "l0.ln.bias" : tensor<8xf32>
  %l0wq = attn.weight "l0.q.weight" : tensor<8x8xf32>
  %l0w1 = attn.weight "l0.up.weight" : tensor<16x8xf32>
  %l0w2 = attn.weight "l0.down.weight" : tensor<8x16xf32>
  %l0n = attn.layer_norm %x, %l0g, %l0b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %l0q = attn.linear %l0n, %l0wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %l0q4 = tensor.expand_shape %l0q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %l0e = tensor.empty() : tensor<1x2x4x4xf32>
  %l0qt = linalg.transpose ins(%l0q4 : tensor<1x4x2x4xf32>) outs(%l0e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %l0o = attn.sdpa %l0qt, %l0qt, %l0qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %l0e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %l0ot = linalg.transpose ins(%l0o : tensor<1x2x4x4xf32>) outs(%l0e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %l0oc = tensor.collapse_shape %l0ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %l0h = attn.add %x, %l0oc : tensor<1x4x8xf32>
  %l0f = attn.ffn %l0h up(%l0w1) down(%l0w2) : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x4x8xf32>
  %l0y = attn.add %l0h, %l0f : tensor<1x4x8xf32>
  %l1g = attn.weight "l1.ln.weight" : tensor<8xf32>
  %l1b = attn.weight "l1.ln.bias" : tensor<8xf32>
  %l1wq = attn.weight "l1.q.weight" : tensor<8x8xf32>
  %l1w1 = attn.weight "l1.up.weight" : tensor<16x8xf32>
  %l1w2 = attn.weight "l1.down.weight" : tensor<8x16xf32>
  %l1n = attn.layer_norm %l0y, %l1g, %l1b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %l1q = attn.linear %l1n, %l1wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %l1q4 = tensor.expand_shape %l1q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %l1e = tensor.empty() : tensor<1x2x4x4xf32>
  %l1qt = linalg.transpose ins(%l1q4 : tensor<1x4x2x4xf32>) outs(%l1e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %l1o = attn.sdpa %l1qt, %l1qt, %l1qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %l1e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %l1ot = linalg.transpose ins(%l1o : tensor<1x2x4x4xf32>) outs(%l1e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %l1oc = tensor.collapse_shape %l1ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %l1h = attn.add %l0y, %l1oc : tensor<1x4x8xf32>
  %l1f = attn.ffn %l1h up(%l1w1) down(%l1w2) : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x4x8xf32>
  %l1y = attn.add %l1h, %l1f : tensor<1x4x8xf32>
  return %l1y : tensor<1x4x8xf32>
}

// -----

// Post-LN: the norm after the second add ends the block.

// CHECK-LABEL: func.func @post_ln
// CHECK: %[[L0:.*]] = attn.layer index = 0 (%arg0)
// CHECK: attn.sdpa
// CHECK: attn.layer_norm
// CHECK: %[[Y:.*]] = attn.add
// CHECK: %[[YN:.*]] = attn.layer_norm %[[Y]]
// CHECK: attn.yield %[[YN]]
// CHECK: return %[[L0]]
func.func @post_ln(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %l0g = attn.weight "l0.ln.weight" : tensor<8xf32>
  %l0b = attn.weight "l0.ln.bias" : tensor<8xf32>
  %l0wq = attn.weight "l0.q.weight" : tensor<8x8xf32>
  %l0w1 = attn.weight "l0.up.weight" : tensor<16x8xf32>
  %l0w2 = attn.weight "l0.down.weight" : tensor<8x16xf32>
  %l0q = attn.linear %x, %l0wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %l0q4 = tensor.expand_shape %l0q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %l0e = tensor.empty() : tensor<1x2x4x4xf32>
  %l0qt = linalg.transpose ins(%l0q4 : tensor<1x4x2x4xf32>) outs(%l0e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %l0o = attn.sdpa %l0qt, %l0qt, %l0qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %l0e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %l0ot = linalg.transpose ins(%l0o : tensor<1x2x4x4xf32>) outs(%l0e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %l0oc = tensor.collapse_shape %l0ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %l0h = attn.add %x, %l0oc : tensor<1x4x8xf32>
  %l0hn = attn.layer_norm %l0h, %l0g, %l0b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %l0f = attn.ffn %l0hn up(%l0w1) down(%l0w2) : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x4x8xf32>
  %l0y = attn.add %l0hn, %l0f : tensor<1x4x8xf32>
  %l0yn = attn.layer_norm %l0y, %l0g, %l0b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %l0yn : tensor<1x4x8xf32>
}

// -----

// Near misses: the first block's intermediate %l0h is also returned, so it
// cannot be isolated, and then no block is grouped (depths must stay the
// checkpoint's).

// CHECK-LABEL: func.func @escaping_value
// CHECK-NOT: attn.layer index
// CHECK: return
func.func @escaping_value(%x: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %l0g = attn.weight "l0.ln.weight" : tensor<8xf32>
  %l0b = attn.weight "l0.ln.bias" : tensor<8xf32>
  %l0wq = attn.weight "l0.q.weight" : tensor<8x8xf32>
  %l0w1 = attn.weight "l0.up.weight" : tensor<16x8xf32>
  %l0w2 = attn.weight "l0.down.weight" : tensor<8x16xf32>
  %l0n = attn.layer_norm %x, %l0g, %l0b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %l0q = attn.linear %l0n, %l0wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %l0q4 = tensor.expand_shape %l0q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %l0e = tensor.empty() : tensor<1x2x4x4xf32>
  %l0qt = linalg.transpose ins(%l0q4 : tensor<1x4x2x4xf32>) outs(%l0e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %l0o = attn.sdpa %l0qt, %l0qt, %l0qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %l0e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %l0ot = linalg.transpose ins(%l0o : tensor<1x2x4x4xf32>) outs(%l0e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %l0oc = tensor.collapse_shape %l0ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %l0h = attn.add %x, %l0oc : tensor<1x4x8xf32>
  %l0f = attn.ffn %l0h up(%l0w1) down(%l0w2) : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x4x8xf32>
  %l0y = attn.add %l0h, %l0f : tensor<1x4x8xf32>
  %l1g = attn.weight "l1.ln.weight" : tensor<8xf32>
  %l1b = attn.weight "l1.ln.bias" : tensor<8xf32>
  %l1wq = attn.weight "l1.q.weight" : tensor<8x8xf32>
  %l1w1 = attn.weight "l1.up.weight" : tensor<16x8xf32>
  %l1w2 = attn.weight "l1.down.weight" : tensor<8x16xf32>
  %l1n = attn.layer_norm %l0y, %l1g, %l1b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %l1q = attn.linear %l1n, %l1wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %l1q4 = tensor.expand_shape %l1q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %l1e = tensor.empty() : tensor<1x2x4x4xf32>
  %l1qt = linalg.transpose ins(%l1q4 : tensor<1x4x2x4xf32>) outs(%l1e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %l1o = attn.sdpa %l1qt, %l1qt, %l1qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %l1e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %l1ot = linalg.transpose ins(%l1o : tensor<1x2x4x4xf32>) outs(%l1e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %l1oc = tensor.collapse_shape %l1ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %l1h = attn.add %l0y, %l1oc : tensor<1x4x8xf32>
  %l1f = attn.ffn %l1h up(%l1w1) down(%l1w2) : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x4x8xf32>
  %l1y = attn.add %l1h, %l1f : tensor<1x4x8xf32>
  return %l1y, %l0h : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// A third add between two attentions (not a plain block) forms no layers.

// CHECK-LABEL: func.func @extra_add
// CHECK-NOT: attn.layer index
// CHECK: return
func.func @extra_add(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %l0g = attn.weight "l0.ln.weight" : tensor<8xf32>
  %l0b = attn.weight "l0.ln.bias" : tensor<8xf32>
  %l0wq = attn.weight "l0.q.weight" : tensor<8x8xf32>
  %l0w1 = attn.weight "l0.up.weight" : tensor<16x8xf32>
  %l0w2 = attn.weight "l0.down.weight" : tensor<8x16xf32>
  %l0n = attn.layer_norm %x, %l0g, %l0b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %l0q = attn.linear %l0n, %l0wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %l0q4 = tensor.expand_shape %l0q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %l0e = tensor.empty() : tensor<1x2x4x4xf32>
  %l0qt = linalg.transpose ins(%l0q4 : tensor<1x4x2x4xf32>) outs(%l0e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %l0o = attn.sdpa %l0qt, %l0qt, %l0qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %l0e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %l0ot = linalg.transpose ins(%l0o : tensor<1x2x4x4xf32>) outs(%l0e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %l0oc = tensor.collapse_shape %l0ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %l0h = attn.add %x, %l0oc : tensor<1x4x8xf32>
  %l0f = attn.ffn %l0h up(%l0w1) down(%l0w2) : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x4x8xf32>
  %l0y = attn.add %l0h, %l0f : tensor<1x4x8xf32>
  %extra = attn.add %l0y, %x : tensor<1x4x8xf32>
  %l1g = attn.weight "l1.ln.weight" : tensor<8xf32>
  %l1b = attn.weight "l1.ln.bias" : tensor<8xf32>
  %l1wq = attn.weight "l1.q.weight" : tensor<8x8xf32>
  %l1w1 = attn.weight "l1.up.weight" : tensor<16x8xf32>
  %l1w2 = attn.weight "l1.down.weight" : tensor<8x16xf32>
  %l1n = attn.layer_norm %extra, %l1g, %l1b : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %l1q = attn.linear %l1n, %l1wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %l1q4 = tensor.expand_shape %l1q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %l1e = tensor.empty() : tensor<1x2x4x4xf32>
  %l1qt = linalg.transpose ins(%l1q4 : tensor<1x4x2x4xf32>) outs(%l1e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %l1o = attn.sdpa %l1qt, %l1qt, %l1qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %l1e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %l1ot = linalg.transpose ins(%l1o : tensor<1x2x4x4xf32>) outs(%l1e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %l1oc = tensor.collapse_shape %l1ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %l1h = attn.add %extra, %l1oc : tensor<1x4x8xf32>
  %l1f = attn.ffn %l1h up(%l1w1) down(%l1w2) : (tensor<1x4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x4x8xf32>
  %l1y = attn.add %l1h, %l1f : tensor<1x4x8xf32>
  return %l1y : tensor<1x4x8xf32>
}

// -----

// A block that flattens the stream to [B*S, D] for its FFN and restores it
// after the second add (as OPT's export does) ends at the restoring
// expand_shape, so the layer keeps the stream's type.

// CHECK-LABEL: func.func @flattened_ffn
// CHECK: %[[L0:.*]] = attn.layer index = 0 (%arg0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
// CHECK: tensor.collapse_shape
// CHECK: attn.ffn
// CHECK: %[[R:.*]] = tensor.expand_shape
// CHECK: attn.yield %[[R]] : tensor<1x4x8xf32>
// CHECK: return %[[L0]]
func.func @flattened_ffn(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %wq = attn.weight "l0.q.weight" : tensor<8x8xf32>
  %w1 = attn.weight "l0.up.weight" : tensor<16x8xf32>
  %w2 = attn.weight "l0.down.weight" : tensor<8x16xf32>
  %q = attn.linear %x, %wq : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 4, 2, 4] : tensor<1x4x8xf32> into tensor<1x4x2x4xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %qt = linalg.transpose ins(%q4 : tensor<1x4x2x4xf32>) outs(%e : tensor<1x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %o = attn.sdpa %qt, %qt, %qt score = dot : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x2x4xf32>
  %ot = linalg.transpose ins(%o : tensor<1x2x4x4xf32>) outs(%e2 : tensor<1x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %oc = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<1x4x2x4xf32> into tensor<1x4x8xf32>
  %h = attn.add %x, %oc : tensor<1x4x8xf32>
  %hf = tensor.collapse_shape %h [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %f = attn.ffn %hf up(%w1) down(%w2) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %y = attn.add %hf, %f : tensor<4x8xf32>
  %ye = tensor.expand_shape %y [[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
  return %ye : tensor<1x4x8xf32>
}
