// RUN: attn-opt %s --split-input-file --attn-raise-attention | FileCheck %s

// Grouped-query attention as exported (repeat_kv: expand [B, Hkv, S, D] to
// [B, Hkv, R, S, D], reshape to [B, Hkv * R, S, D]): attn.sdpa reads the kv
// heads itself.
// CHECK-LABEL: func.func @repeated_kv_heads
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x4x?x8xf32>, %[[K:[^:]*]]: tensor<2x2x?x8xf32>, %[[V:[^:]*]]: tensor<2x2x?x8xf32>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] score = dot causal : tensor<2x4x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>
func.func @repeated_kv_heads(%q: tensor<2x4x?x8xf32>, %k: tensor<2x2x?x8xf32>, %v: tensor<2x2x?x8xf32>) -> tensor<2x4x?x8xf32> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %k, %c2 : tensor<2x2x?x8xf32>
  %ke = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [2, 2, 1, %s, 8] : tensor<2x2x?x8xf32> into tensor<2x2x1x?x8xf32>
  %kc = tensor.collapse_shape %ke [[0], [1], [2, 3], [4]] : tensor<2x2x1x?x8xf32> into tensor<2x2x?x8xf32>
  %e = tensor.empty(%s) : tensor<2x2x2x?x8xf32>
  %kb = linalg.broadcast ins(%kc : tensor<2x2x?x8xf32>) outs(%e : tensor<2x2x2x?x8xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x?x8xf32> into tensor<2x4x?x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<2x2x?x8xf32>) outs(%e : tensor<2x2x2x?x8xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x?x8xf32> into tensor<2x4x?x8xf32>
  %o = attn.sdpa %q, %kr, %vr score = dot causal : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  return %o : tensor<2x4x?x8xf32>
}

// -----

// Heads tiled (broadcast before the kv heads: head h reads kv head h % Hkv),
// and values not repeated like the keys: left alone.
// CHECK-LABEL: func.func @tiled_kv_heads
// CHECK: attn.sdpa {{.*}} : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
func.func @tiled_kv_heads(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
  %e = tensor.empty() : tensor<2x2x2x3x8xf32>
  %kb = linalg.broadcast ins(%k : tensor<2x2x3x8xf32>) outs(%e : tensor<2x2x2x3x8xf32>) dimensions = [1]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x3x8xf32> into tensor<2x4x3x8xf32>
  %o = attn.sdpa %q, %kr, %v score = dot : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32> -> tensor<2x4x3x8xf32>
  return %o : tensor<2x4x3x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// transformers' LLaMA mask after a past of P tokens (_update_causal_mask,
// as the ONNX importer writes it): C = triu(min, 1) * (range(0, P + T)[j] >
// range(P, P + T)[i]), bias = where(C + mask == 0, min, C). C is sdpa's
// causal mask; the bias keeps the padding from the mask with C = 0.
// CHECK-LABEL: func.func @causal_mask_after_past
// CHECK-SAME: %[[MASK:[^:]*]]: tensor<2x1x1x?xf32>
// CHECK-NOT: linalg.mul
// CHECK-NOT: arith.uitofp
// CHECK: %[[MC:.*]] = tensor.collapse_shape %[[MASK]]
// CHECK: %[[MB:.*]] = linalg.broadcast ins(%[[MC]] : tensor<2x1x?xf32>) {{.*}} dimensions = [2]
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x1x?x?xf32>)
// CHECK: %[[SUM:.*]] = linalg.add ins(%[[ZERO]], %[[MB]]
// CHECK: %[[EQ:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %{{.*}})
// CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} ins(%[[EQ]], %{{.*}}, %[[ZERO]] :
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[BIAS]][0, 0, 0, 0]
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} bias(%[[SLICE]] : tensor<2x1x?x?xf32>) score = dot causal
func.func @causal_mask_after_past(%mask: tensor<2x1x1x?xf32>,
    %past: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "past", ""]},
    %q: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "seq", ""]},
    %k: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "seq", ""]},
    %v: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "seq", ""]}) -> tensor<2x2x?x8xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %min = arith.constant -3.40282347E+38 : f32
  %p = tensor.dim %past, %c2 : tensor<2x2x?x8xf32>
  %t = tensor.dim %q, %c2 : tensor<2x2x?x8xf32>
  %l = arith.addi %t, %p : index
  %p64 = arith.index_cast %p : index to i64
  %qe = tensor.empty(%t) : tensor<?xi64>
  %qpos = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%qe : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %one = arith.constant 1 : i64
    %m = arith.muli %i64, %one : i64
    %a = arith.addi %p64, %m : i64
    linalg.yield %a : i64
  } -> tensor<?xi64>
  %ke = tensor.empty(%l) : tensor<?xi64>
  %kpos = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%ke : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %zero = arith.constant 0 : i64
    %a = arith.addi %zero, %i64 : i64
    linalg.yield %a : i64
  } -> tensor<?xi64>
  %fe = tensor.empty(%t, %l) : tensor<?x?xf32>
  %full = linalg.fill ins(%min : f32) outs(%fe : tensor<?x?xf32>) -> tensor<?x?xf32>
  %triu = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%full : tensor<?x?xf32>) outs(%fe : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.subi %j, %i : index
    %c = arith.cmpi sge, %d, %c1 : index
    %z = arith.constant 0.0 : f32
    %s = arith.select %c, %in, %z : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %ie = tensor.empty(%t, %l) : tensor<?x?xi64>
  %kb = linalg.broadcast ins(%kpos : tensor<?xi64>) outs(%ie : tensor<?x?xi64>) dimensions = [0]
  %qx = tensor.expand_shape %qpos [[0, 1]] output_shape [%t, 1] : tensor<?xi64> into tensor<?x1xi64>
  %qc = tensor.collapse_shape %qx [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %qb = linalg.broadcast ins(%qc : tensor<?xi64>) outs(%ie : tensor<?x?xi64>) dimensions = [1]
  %be = tensor.empty(%t, %l) : tensor<?x?xi1>
  %gt = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%kb, %qb : tensor<?x?xi64>, tensor<?x?xi64>) outs(%be : tensor<?x?xi1>) {
  ^bb0(%a: i64, %b: i64, %out: i1):
    %c = arith.cmpi sgt, %a, %b : i64
    linalg.yield %c : i1
  } -> tensor<?x?xi1>
  %gtf = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%gt : tensor<?x?xi1>) outs(%fe : tensor<?x?xf32>) {
  ^bb0(%a: i1, %out: f32):
    %f = arith.uitofp %a : i1 to f32
    linalg.yield %f : f32
  } -> tensor<?x?xf32>
  %causal = linalg.mul ins(%triu, %gtf : tensor<?x?xf32>, tensor<?x?xf32>) outs(%fe : tensor<?x?xf32>) -> tensor<?x?xf32>
  %ce = tensor.expand_shape %causal [[0, 1], [2]] output_shape [1, %t, %l] : tensor<?x?xf32> into tensor<1x?x?xf32>
  %e4 = tensor.empty(%t, %l) : tensor<2x1x?x?xf32>
  %c4 = linalg.broadcast ins(%ce : tensor<1x?x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [0]
  %mc = tensor.collapse_shape %mask [[0], [1], [2, 3]] : tensor<2x1x1x?xf32> into tensor<2x1x?xf32>
  %m4 = linalg.broadcast ins(%mc : tensor<2x1x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [2]
  %sum = linalg.add ins(%c4, %m4 : tensor<2x1x?x?xf32>, tensor<2x1x?x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) -> tensor<2x1x?x?xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %z4 = linalg.broadcast ins(%zero : tensor<f32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [0, 1, 2, 3]
  %eqe = tensor.empty(%t, %l) : tensor<2x1x?x?xi1>
  %eq = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum, %z4 : tensor<2x1x?x?xf32>, tensor<2x1x?x?xf32>) outs(%eqe : tensor<2x1x?x?xi1>) {
  ^bb0(%a: f32, %b: f32, %out: i1):
    %c = arith.cmpf oeq, %a, %b : f32
    linalg.yield %c : i1
  } -> tensor<2x1x?x?xi1>
  %minc = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %min4 = linalg.broadcast ins(%minc : tensor<f32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [0, 1, 2, 3]
  %bias = linalg.generic {indexing_maps = [#map4, #map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%eq, %min4, %c4 : tensor<2x1x?x?xi1>, tensor<2x1x?x?xf32>, tensor<2x1x?x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %out: f32):
    %s = arith.select %c, %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x1x?x?xf32>
  %slice = tensor.extract_slice %bias[0, 0, 0, 0] [2, 1, %t, %l] [1, 1, 1, 1] : tensor<2x1x?x?xf32> to tensor<2x1x?x?xf32>
  %kk = tensor.concat dim(2) %past, %k : (tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %vv = tensor.concat dim(2) %past, %v : (tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %o = attn.sdpa %q, %kk, %vv bias(%slice : tensor<2x1x?x?xf32>) score = dot : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32> -> tensor<2x2x?x8xf32>
  return %o : tensor<2x2x?x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// The query range starts at T, not at the past length P: not the causal
// mask after the past (key j > T + i), left alone.
// CHECK-LABEL: func.func @causal_mask_from_start
// CHECK: linalg.mul
// CHECK: attn.sdpa {{.*}} score = dot :
func.func @causal_mask_from_start(%mask: tensor<2x1x1x?xf32>,
    %past: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "past", ""]},
    %q: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "seq", ""]},
    %k: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "seq", ""]},
    %v: tensor<2x2x?x8xf32> {attn.dim_symbols = ["", "", "seq", ""]}) -> tensor<2x2x?x8xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %min = arith.constant -3.40282347E+38 : f32
  %p = tensor.dim %past, %c2 : tensor<2x2x?x8xf32>
  %t = tensor.dim %q, %c2 : tensor<2x2x?x8xf32>
  %l = arith.addi %t, %p : index
  %t64 = arith.index_cast %t : index to i64
  %qe = tensor.empty(%t) : tensor<?xi64>
  %qpos = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%qe : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %one = arith.constant 1 : i64
    %m = arith.muli %i64, %one : i64
    %a = arith.addi %t64, %m : i64
    linalg.yield %a : i64
  } -> tensor<?xi64>
  %ke = tensor.empty(%l) : tensor<?xi64>
  %kpos = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%ke : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %zero = arith.constant 0 : i64
    %a = arith.addi %zero, %i64 : i64
    linalg.yield %a : i64
  } -> tensor<?xi64>
  %fe = tensor.empty(%t, %l) : tensor<?x?xf32>
  %full = linalg.fill ins(%min : f32) outs(%fe : tensor<?x?xf32>) -> tensor<?x?xf32>
  %triu = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%full : tensor<?x?xf32>) outs(%fe : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.subi %j, %i : index
    %c = arith.cmpi sge, %d, %c1 : index
    %z = arith.constant 0.0 : f32
    %s = arith.select %c, %in, %z : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %ie = tensor.empty(%t, %l) : tensor<?x?xi64>
  %kb = linalg.broadcast ins(%kpos : tensor<?xi64>) outs(%ie : tensor<?x?xi64>) dimensions = [0]
  %qx = tensor.expand_shape %qpos [[0, 1]] output_shape [%t, 1] : tensor<?xi64> into tensor<?x1xi64>
  %qc = tensor.collapse_shape %qx [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %qb = linalg.broadcast ins(%qc : tensor<?xi64>) outs(%ie : tensor<?x?xi64>) dimensions = [1]
  %be = tensor.empty(%t, %l) : tensor<?x?xi1>
  %gt = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%kb, %qb : tensor<?x?xi64>, tensor<?x?xi64>) outs(%be : tensor<?x?xi1>) {
  ^bb0(%a: i64, %b: i64, %out: i1):
    %c = arith.cmpi sgt, %a, %b : i64
    linalg.yield %c : i1
  } -> tensor<?x?xi1>
  %gtf = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%gt : tensor<?x?xi1>) outs(%fe : tensor<?x?xf32>) {
  ^bb0(%a: i1, %out: f32):
    %f = arith.uitofp %a : i1 to f32
    linalg.yield %f : f32
  } -> tensor<?x?xf32>
  %causal = linalg.mul ins(%triu, %gtf : tensor<?x?xf32>, tensor<?x?xf32>) outs(%fe : tensor<?x?xf32>) -> tensor<?x?xf32>
  %ce = tensor.expand_shape %causal [[0, 1], [2]] output_shape [1, %t, %l] : tensor<?x?xf32> into tensor<1x?x?xf32>
  %e4 = tensor.empty(%t, %l) : tensor<2x1x?x?xf32>
  %c4 = linalg.broadcast ins(%ce : tensor<1x?x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [0]
  %mc = tensor.collapse_shape %mask [[0], [1], [2, 3]] : tensor<2x1x1x?xf32> into tensor<2x1x?xf32>
  %m4 = linalg.broadcast ins(%mc : tensor<2x1x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [2]
  %sum = linalg.add ins(%c4, %m4 : tensor<2x1x?x?xf32>, tensor<2x1x?x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) -> tensor<2x1x?x?xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %z4 = linalg.broadcast ins(%zero : tensor<f32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [0, 1, 2, 3]
  %eqe = tensor.empty(%t, %l) : tensor<2x1x?x?xi1>
  %eq = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum, %z4 : tensor<2x1x?x?xf32>, tensor<2x1x?x?xf32>) outs(%eqe : tensor<2x1x?x?xi1>) {
  ^bb0(%a: f32, %b: f32, %out: i1):
    %c = arith.cmpf oeq, %a, %b : f32
    linalg.yield %c : i1
  } -> tensor<2x1x?x?xi1>
  %minc = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %min4 = linalg.broadcast ins(%minc : tensor<f32>) outs(%e4 : tensor<2x1x?x?xf32>) dimensions = [0, 1, 2, 3]
  %bias = linalg.generic {indexing_maps = [#map4, #map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%eq, %min4, %c4 : tensor<2x1x?x?xi1>, tensor<2x1x?x?xf32>, tensor<2x1x?x?xf32>) outs(%e4 : tensor<2x1x?x?xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %out: f32):
    %s = arith.select %c, %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x1x?x?xf32>
  %slice = tensor.extract_slice %bias[0, 0, 0, 0] [2, 1, %t, %l] [1, 1, 1, 1] : tensor<2x1x?x?xf32> to tensor<2x1x?x?xf32>
  %kk = tensor.concat dim(2) %past, %k : (tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %vv = tensor.concat dim(2) %past, %v : (tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>) -> tensor<2x2x?x8xf32>
  %o = attn.sdpa %q, %kk, %vv bias(%slice : tensor<2x1x?x?xf32>) score = dot : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32> -> tensor<2x2x?x8xf32>
  return %o : tensor<2x2x?x8xf32>
}
