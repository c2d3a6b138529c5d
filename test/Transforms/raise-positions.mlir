// RUN: attn-opt %s --split-input-file --attn-raise-positions | FileCheck %s

#map = affine_map<(d0) -> (d0)>

// x + wpe[arange(P, P + S)] broadcast over the batch (after a past of P
// positions): learned positions starting at P for every sequence.
// CHECK-LABEL: func.func @after_past
// CHECK: %[[P:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?xi64>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[P]] : i64) outs(%[[E]] : tensor<?xi64>)
// CHECK: %[[R:.*]] = attn.learned_pos %arg0, %arg1 positions(%[[F]] : tensor<?xi64>) : tensor<?x?x8xf32>, tensor<16x8xf32>
// CHECK: return %[[R]]
func.func @after_past(%x: tensor<?x?x8xf32>, %wpe: tensor<16x8xf32>, %past: tensor<?x2x?x4xf32>) -> tensor<?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %p = tensor.dim %past, %c2 : tensor<?x2x?x4xf32>
  %p64 = arith.index_cast %p : index to i64
  %e = tensor.empty(%s) : tensor<?xi64>
  %range = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%e : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %one = arith.constant 1 : i64
    %m = arith.muli %i64, %one : i64
    %v = arith.addi %p64, %m : i64
    linalg.yield %v : i64
  } -> tensor<?xi64>
  %ids = tensor.expand_shape %range [[0, 1]] output_shape [1, %s] : tensor<?xi64> into tensor<1x?xi64>
  %rows = attn.embedding %ids, %wpe : (tensor<1x?xi64>, tensor<16x8xf32>) -> tensor<1x?x8xf32>
  %flat = tensor.collapse_shape %rows [[0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
  %eb = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %bc = linalg.broadcast ins(%flat : tensor<?x8xf32>) outs(%eb : tensor<?x?x8xf32>) dimensions = [0]
  %sum = linalg.add ins(%x, %bc : tensor<?x?x8xf32>, tensor<?x?x8xf32>) outs(%eb : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %sum : tensor<?x?x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// From position 0: no positions operand.
// CHECK-LABEL: func.func @from_zero
// CHECK: %[[R:.*]] = attn.learned_pos %arg0, %arg1 : tensor<2x4x8xf32>, tensor<16x8xf32>
// CHECK: return %[[R]]
func.func @from_zero(%x: tensor<2x4x8xf32>, %wpe: tensor<16x8xf32>) -> tensor<2x4x8xf32> {
  %e = tensor.empty() : tensor<4xi64>
  %range = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%e : tensor<4xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %zero = arith.constant 0 : i64
    %v = arith.addi %zero, %i64 : i64
    linalg.yield %v : i64
  } -> tensor<4xi64>
  %ids = tensor.expand_shape %range [[0, 1]] output_shape [1, 4] : tensor<4xi64> into tensor<1x4xi64>
  %rows = attn.embedding %ids, %wpe : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %flat = tensor.collapse_shape %rows [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %eb = tensor.empty() : tensor<2x4x8xf32>
  %bc = linalg.broadcast ins(%flat : tensor<4x8xf32>) outs(%eb : tensor<2x4x8xf32>) dimensions = [0]
  %sum = linalg.add ins(%bc, %x : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%eb : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %sum : tensor<2x4x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// Ids that are not a range stay a lookup.
// CHECK-LABEL: func.func @not_a_range
// CHECK-NOT: attn.learned_pos
// CHECK: attn.embedding
func.func @not_a_range(%x: tensor<2x4x8xf32>, %wpe: tensor<16x8xf32>, %pos: tensor<4xi64>) -> tensor<2x4x8xf32> {
  %ids = tensor.expand_shape %pos [[0, 1]] output_shape [1, 4] : tensor<4xi64> into tensor<1x4xi64>
  %rows = attn.embedding %ids, %wpe : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %flat = tensor.collapse_shape %rows [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %eb = tensor.empty() : tensor<2x4x8xf32>
  %bc = linalg.broadcast ins(%flat : tensor<4x8xf32>) outs(%eb : tensor<2x4x8xf32>) dimensions = [0]
  %sum = linalg.add ins(%x, %bc : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%eb : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %sum : tensor<2x4x8xf32>
}

// -----

#m1 = affine_map<(d0, d1) -> (d0)>
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Rotary positions as transformers' LLaMA exports them, with position ids
// positions[b] + t (position_ids bound by attn-bind-kv-cache) and inv_freq
// 10000^(-2i/8) folded over the batch: attn.rotary from `positions`.
// CHECK-LABEL: func.func @rotary_from_positions
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x2x?x8xf32>, %[[POS:[^:]*]]: tensor<2xi64>
// CHECK: %[[R:.*]] = attn.rotary %[[X]] positions(%[[POS]] : tensor<2xi64>) : tensor<2x2x?x8xf32>
// CHECK-NOT: math.cos
// CHECK: return %[[R]]
func.func @rotary_from_positions(%x: tensor<2x2x?x8xf32>, %pos: tensor<2xi64>) -> tensor<2x2x?x8xf32> {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %x, %c2 : tensor<2x2x?x8xf32>
  %ie = tensor.empty(%t) : tensor<2x?xi64>
  %ids = linalg.generic {indexing_maps = [#m1, #m2], iterator_types = ["parallel", "parallel"]} ins(%pos : tensor<2xi64>) outs(%ie : tensor<2x?xi64>) {
  ^bb0(%in: i64, %out: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %a = arith.addi %in, %i64 : i64
    linalg.yield %a : i64
  } -> tensor<2x?xi64>
  %ids3 = tensor.expand_shape %ids [[0], [1, 2]] output_shape [2, 1, %t] : tensor<2x?xi64> into tensor<2x1x?xi64>
  %fe = tensor.empty(%t) : tensor<2x1x?xf32>
  %idf = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids3 : tensor<2x1x?xi64>) outs(%fe : tensor<2x1x?xf32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<2x1x?xf32>
  %inv = arith.constant dense<[[[1.0], [0.1], [0.00999999977], [0.001]], [[1.0], [0.1], [0.00999999977], [0.001]]]> : tensor<2x4x1xf32>
  %zero = arith.constant 0.0 : f32
  %me = tensor.empty(%t) : tensor<2x4x?xf32>
  %mz = linalg.fill ins(%zero : f32) outs(%me : tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  %mm = linalg.batch_matmul ins(%inv, %idf : tensor<2x4x1xf32>, tensor<2x1x?xf32>) outs(%mz : tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  %te = tensor.empty(%t) : tensor<2x?x4xf32>
  %freqs = linalg.transpose ins(%mm : tensor<2x4x?xf32>) outs(%te : tensor<2x?x4xf32>) permutation = [0, 2, 1]
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x8xf32>
  %ee = tensor.empty(%t) : tensor<2x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<2x?x8xf32>) outs(%ee : tensor<2x?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<2x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<2x?x8xf32>) outs(%ee : tensor<2x?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<2x?x8xf32>
  %xe = tensor.empty(%t) : tensor<2x2x?x8xf32>
  %cos4 = linalg.broadcast ins(%cos : tensor<2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) dimensions = [1]
  %sin4 = linalg.broadcast ins(%sin : tensor<2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) dimensions = [1]
  %xc = linalg.mul ins(%x, %cos4 : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [2, 2, %t, 4] [1, 1, 1, 1] : tensor<2x2x?x8xf32> to tensor<2x2x?x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [2, 2, %t, 4] [1, 1, 1, 1] : tensor<2x2x?x8xf32> to tensor<2x2x?x4xf32>
  %he = tensor.empty(%t) : tensor<2x2x?x4xf32>
  %neg = linalg.negf ins(%hi : tensor<2x2x?x4xf32>) outs(%he : tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x8xf32>
  %xs = linalg.mul ins(%rot, %sin4 : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %y = attn.add %xc, %xs : tensor<2x2x?x8xf32>
  return %y : tensor<2x2x?x8xf32>
}

// -----

#m1 = affine_map<(d0, d1) -> (d0)>
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Position ids that are an input (any value per token): not start-based,
// left as computed.
// CHECK-LABEL: func.func @rotary_from_position_ids_input
// CHECK-NOT: attn.rotary
// CHECK: math.cos
func.func @rotary_from_position_ids_input(%x: tensor<2x2x?x8xf32>, %pos: tensor<2xi64>, %pids: tensor<2x?xi64>) -> tensor<2x2x?x8xf32> {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %x, %c2 : tensor<2x2x?x8xf32>
  %ie = tensor.empty(%t) : tensor<2x?xi64>
  %ids = linalg.generic {indexing_maps = [#m1, #m2], iterator_types = ["parallel", "parallel"]} ins(%pos : tensor<2xi64>) outs(%ie : tensor<2x?xi64>) {
  ^bb0(%in: i64, %out: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %a = arith.addi %in, %i64 : i64
    linalg.yield %a : i64
  } -> tensor<2x?xi64>
  %ids3 = tensor.expand_shape %pids [[0], [1, 2]] output_shape [2, 1, %t] : tensor<2x?xi64> into tensor<2x1x?xi64>
  %fe = tensor.empty(%t) : tensor<2x1x?xf32>
  %idf = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids3 : tensor<2x1x?xi64>) outs(%fe : tensor<2x1x?xf32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<2x1x?xf32>
  %inv = arith.constant dense<[[[1.0], [0.1], [0.00999999977], [0.001]], [[1.0], [0.1], [0.00999999977], [0.001]]]> : tensor<2x4x1xf32>
  %zero = arith.constant 0.0 : f32
  %me = tensor.empty(%t) : tensor<2x4x?xf32>
  %mz = linalg.fill ins(%zero : f32) outs(%me : tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  %mm = linalg.batch_matmul ins(%inv, %idf : tensor<2x4x1xf32>, tensor<2x1x?xf32>) outs(%mz : tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  %te = tensor.empty(%t) : tensor<2x?x4xf32>
  %freqs = linalg.transpose ins(%mm : tensor<2x4x?xf32>) outs(%te : tensor<2x?x4xf32>) permutation = [0, 2, 1]
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x8xf32>
  %ee = tensor.empty(%t) : tensor<2x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<2x?x8xf32>) outs(%ee : tensor<2x?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<2x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<2x?x8xf32>) outs(%ee : tensor<2x?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<2x?x8xf32>
  %xe = tensor.empty(%t) : tensor<2x2x?x8xf32>
  %cos4 = linalg.broadcast ins(%cos : tensor<2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) dimensions = [1]
  %sin4 = linalg.broadcast ins(%sin : tensor<2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) dimensions = [1]
  %xc = linalg.mul ins(%x, %cos4 : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [2, 2, %t, 4] [1, 1, 1, 1] : tensor<2x2x?x8xf32> to tensor<2x2x?x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [2, 2, %t, 4] [1, 1, 1, 1] : tensor<2x2x?x8xf32> to tensor<2x2x?x4xf32>
  %he = tensor.empty(%t) : tensor<2x2x?x4xf32>
  %neg = linalg.negf ins(%hi : tensor<2x2x?x4xf32>) outs(%he : tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x8xf32>
  %xs = linalg.mul ins(%rot, %sin4 : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %y = attn.add %xc, %xs : tensor<2x2x?x8xf32>
  return %y : tensor<2x2x?x8xf32>
}

// -----

#m1 = affine_map<(d0, d1) -> (d0)>
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// inv_freq not base^(-2i/D): left alone.
// CHECK-LABEL: func.func @rotary_other_frequencies
// CHECK-NOT: attn.rotary
// CHECK: math.cos
func.func @rotary_other_frequencies(%x: tensor<2x2x?x8xf32>, %pos: tensor<2xi64>) -> tensor<2x2x?x8xf32> {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %x, %c2 : tensor<2x2x?x8xf32>
  %ie = tensor.empty(%t) : tensor<2x?xi64>
  %ids = linalg.generic {indexing_maps = [#m1, #m2], iterator_types = ["parallel", "parallel"]} ins(%pos : tensor<2xi64>) outs(%ie : tensor<2x?xi64>) {
  ^bb0(%in: i64, %out: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %a = arith.addi %in, %i64 : i64
    linalg.yield %a : i64
  } -> tensor<2x?xi64>
  %ids3 = tensor.expand_shape %ids [[0], [1, 2]] output_shape [2, 1, %t] : tensor<2x?xi64> into tensor<2x1x?xi64>
  %fe = tensor.empty(%t) : tensor<2x1x?xf32>
  %idf = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids3 : tensor<2x1x?xi64>) outs(%fe : tensor<2x1x?xf32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<2x1x?xf32>
  %inv = arith.constant dense<[[[1.0], [0.1], [0.02], [0.001]], [[1.0], [0.1], [0.02], [0.001]]]> : tensor<2x4x1xf32>
  %zero = arith.constant 0.0 : f32
  %me = tensor.empty(%t) : tensor<2x4x?xf32>
  %mz = linalg.fill ins(%zero : f32) outs(%me : tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  %mm = linalg.batch_matmul ins(%inv, %idf : tensor<2x4x1xf32>, tensor<2x1x?xf32>) outs(%mz : tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  %te = tensor.empty(%t) : tensor<2x?x4xf32>
  %freqs = linalg.transpose ins(%mm : tensor<2x4x?xf32>) outs(%te : tensor<2x?x4xf32>) permutation = [0, 2, 1]
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x8xf32>
  %ee = tensor.empty(%t) : tensor<2x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<2x?x8xf32>) outs(%ee : tensor<2x?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<2x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<2x?x8xf32>) outs(%ee : tensor<2x?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<2x?x8xf32>
  %xe = tensor.empty(%t) : tensor<2x2x?x8xf32>
  %cos4 = linalg.broadcast ins(%cos : tensor<2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) dimensions = [1]
  %sin4 = linalg.broadcast ins(%sin : tensor<2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) dimensions = [1]
  %xc = linalg.mul ins(%x, %cos4 : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [2, 2, %t, 4] [1, 1, 1, 1] : tensor<2x2x?x8xf32> to tensor<2x2x?x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [2, 2, %t, 4] [1, 1, 1, 1] : tensor<2x2x?x8xf32> to tensor<2x2x?x4xf32>
  %he = tensor.empty(%t) : tensor<2x2x?x4xf32>
  %neg = linalg.negf ins(%hi : tensor<2x2x?x4xf32>) outs(%he : tensor<2x2x?x4xf32>) -> tensor<2x2x?x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<2x2x?x4xf32>, tensor<2x2x?x4xf32>) -> tensor<2x2x?x8xf32>
  %xs = linalg.mul ins(%rot, %sin4 : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) outs(%xe : tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %y = attn.add %xc, %xs : tensor<2x2x?x8xf32>
  return %y : tensor<2x2x?x8xf32>
}

// -----

// Rotary tables as today's exporters compute them, from a range of the
// sequence length: freqs = float(range(T))[:, None] * inv_freq, emb =
// concat(freqs, freqs), cos/sin broadcast over batch and heads. Probing
// them on the host shows cos/sin(t * inv_freq) with inv_freq = base^(-2i/D)
// for base 10000: attn.rotary from position 0.
// CHECK-LABEL: func.func @rotary_tables
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x?x8xf32>
// CHECK: %[[R:.*]] = attn.rotary %[[X]] : tensor<2x4x?x8xf32>
// CHECK-NOT: math.cos
// CHECK: return %[[R]]
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @rotary_tables(%x: tensor<2x4x?x8xf32> {attn.dim_symbols = ["", "", "s", ""]}) -> tensor<2x4x?x8xf32> {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %x, %c2 : tensor<2x4x?x8xf32>
  %e = tensor.empty(%t) : tensor<?xf32>
  %range = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?xf32>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e2 = tensor.empty(%t) : tensor<?x4xf32>
  %tb = linalg.broadcast ins(%range : tensor<?xf32>) outs(%e2 : tensor<?x4xf32>) dimensions = [1]
  %fb = linalg.broadcast ins(%inv : tensor<4xf32>) outs(%e2 : tensor<?x4xf32>) dimensions = [0]
  %freqs = linalg.mul ins(%tb, %fb : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %emb = tensor.concat dim(1) %freqs, %freqs : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %e3 = tensor.empty(%t) : tensor<?x8xf32>
  %cos = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%emb : tensor<?x8xf32>) outs(%e3 : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<?x8xf32>
  %sin = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%emb : tensor<?x8xf32>) outs(%e3 : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %e4 = tensor.empty(%t) : tensor<2x4x?x8xf32>
  %cb = linalg.broadcast ins(%cos : tensor<?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) dimensions = [0, 1]
  %sb = linalg.broadcast ins(%sin : tensor<?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) dimensions = [0, 1]
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, %t, 4] [1, 1, 1, 1] : tensor<2x4x?x8xf32> to tensor<2x4x?x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [2, 4, %t, 4] [1, 1, 1, 1] : tensor<2x4x?x8xf32> to tensor<2x4x?x4xf32>
  %e5 = tensor.empty(%t) : tensor<2x4x?x4xf32>
  %neg = linalg.negf ins(%hi : tensor<2x4x?x4xf32>) outs(%e5 : tensor<2x4x?x4xf32>) -> tensor<2x4x?x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<2x4x?x4xf32>, tensor<2x4x?x4xf32>) -> tensor<2x4x?x8xf32>
  %xc = linalg.mul ins(%x, %cb : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32>
  %rs = linalg.mul ins(%rot, %sb : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32>
  %y = linalg.add ins(%xc, %rs : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32>
  return %y : tensor<2x4x?x8xf32>
}

// -----

// The same with tables that are inputs (any values per token): not raised.
// CHECK-LABEL: func.func @rotary_inputs
// CHECK-NOT: attn.rotary
// CHECK: linalg.add
func.func @rotary_inputs(%x: tensor<2x4x?x8xf32> {attn.dim_symbols = ["", "", "s", ""]}, %cb: tensor<2x4x?x8xf32> {attn.dim_symbols = ["", "", "s", ""]}, %sb: tensor<2x4x?x8xf32> {attn.dim_symbols = ["", "", "s", ""]}) -> tensor<2x4x?x8xf32> {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %x, %c2 : tensor<2x4x?x8xf32>
  %e4 = tensor.empty(%t) : tensor<2x4x?x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [2, 4, %t, 4] [1, 1, 1, 1] : tensor<2x4x?x8xf32> to tensor<2x4x?x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [2, 4, %t, 4] [1, 1, 1, 1] : tensor<2x4x?x8xf32> to tensor<2x4x?x4xf32>
  %e5 = tensor.empty(%t) : tensor<2x4x?x4xf32>
  %neg = linalg.negf ins(%hi : tensor<2x4x?x4xf32>) outs(%e5 : tensor<2x4x?x4xf32>) -> tensor<2x4x?x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<2x4x?x4xf32>, tensor<2x4x?x4xf32>) -> tensor<2x4x?x8xf32>
  %xc = linalg.mul ins(%x, %cb : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32>
  %rs = linalg.mul ins(%rot, %sb : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32>
  %y = linalg.add ins(%xc, %rs : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) outs(%e4 : tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32>
  return %y : tensor<2x4x?x8xf32>
}
