// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-fold-transposes))" \
// RUN:   | FileCheck %s
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-fold-transposes{fold-reads=false}))" \
// RUN:   | FileCheck %s --check-prefix=WRITES

// Head split: the row and key-block slices of the [B, H, S, D] transpose
// read the [B, S, H, D] projection directly (offsets, sizes and strides
// permuted, result types unchanged); the transpose is then dead.

// CHECK-LABEL: func.func @head_split(
// WRITES-LABEL: func.func @head_split(
// WRITES:         %[[T:.*]] = linalg.transpose
// WRITES:         tensor.extract_slice %[[T]][0, %{{.*}}, %{{.*}}, 0] [1, 1, 1, 16]
// WRITES:         tensor.extract_slice %[[T]][0, %{{.*}}, %{{.*}}, 0] [1, 1, 4, 16]
// CHECK-SAME:      %[[X:[^:]+]]: tensor<1x8x2x16xf32>, %[[H:[^:]+]]: index, %[[S:[^:]+]]: index
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[ROW:.*]] = tensor.extract_slice %[[X]][0, %[[S]], %[[H]], 0] [1, 1, 1, 16] [1, 1, 1, 1] : tensor<1x8x2x16xf32> to tensor<1x1x16xf32>
// CHECK:         %[[BLOCK:.*]] = tensor.extract_slice %[[X]][0, %[[S]], %[[H]], 0] [1, 4, 1, 16] [1, 1, 1, 1] : tensor<1x8x2x16xf32> to tensor<4x16xf32>
// CHECK:         return %[[ROW]], %[[BLOCK]]
func.func @head_split(%x: tensor<1x8x2x16xf32>, %h: index, %s: index)
    -> (tensor<1x1x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %t = linalg.transpose ins(%x : tensor<1x8x2x16xf32>)
      outs(%e : tensor<1x2x8x16xf32>) permutation = [0, 2, 1, 3]
  %row = tensor.extract_slice %t[0, %h, %s, 0] [1, 1, 1, 16] [1, 1, 1, 1]
      : tensor<1x2x8x16xf32> to tensor<1x1x16xf32>
  %block = tensor.extract_slice %t[0, %h, %s, 0] [1, 1, 4, 16] [1, 1, 1, 1]
      : tensor<1x2x8x16xf32> to tensor<4x16xf32>
  return %row, %block : tensor<1x1x16xf32>, tensor<4x16xf32>
}

// -----

// Dynamic sizes count as non-unit: a slice of ? rows keeps its order and
// folds, with the size operand moved along.

// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<1x?x2x16xf32>, %[[H:[^:]+]]: index, %[[N:[^:]+]]: index
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[R:.*]] = tensor.extract_slice %[[X]][0, 0, %[[H]], 0] [1, %[[N]], 1, 16] [1, 1, 1, 1] : tensor<1x?x2x16xf32> to tensor<?x16xf32>
// CHECK:         return %[[R]]
func.func @dynamic_rows(%x: tensor<1x?x2x16xf32>, %h: index, %n: index)
    -> tensor<?x16xf32> {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %x, %c1 : tensor<1x?x2x16xf32>
  %e = tensor.empty(%s) : tensor<1x2x?x16xf32>
  %t = linalg.transpose ins(%x : tensor<1x?x2x16xf32>)
      outs(%e : tensor<1x2x?x16xf32>) permutation = [0, 2, 1, 3]
  %r = tensor.extract_slice %t[0, %h, 0, 0] [1, 1, %n, 16] [1, 1, 1, 1]
      : tensor<1x2x?x16xf32> to tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// A slice over both heads and rows would come out in the other order: it
// stays a slice of the transpose, which stays.

// CHECK-LABEL: func.func @reorders_heads_and_rows(
// CHECK:         %[[T:.*]] = linalg.transpose
// CHECK:         tensor.extract_slice %[[T]][0, 0, 0, 0] [1, 2, 4, 16]
func.func @reorders_heads_and_rows(%x: tensor<1x8x2x16xf32>)
    -> tensor<2x4x16xf32> {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %t = linalg.transpose ins(%x : tensor<1x8x2x16xf32>)
      outs(%e : tensor<1x2x8x16xf32>) permutation = [0, 2, 1, 3]
  %r = tensor.extract_slice %t[0, 0, 0, 0] [1, 2, 4, 16] [1, 1, 1, 1]
      : tensor<1x2x8x16xf32> to tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// Head merge: the forall writes its rows straight into the [B, S, H, D]
// layout the transpose produced; the slices of its shared_out move along,
// the slices of other tensors do not.

// CHECK-LABEL: func.func @head_merge(
// WRITES-LABEL: func.func @head_merge(
// WRITES:         scf.forall {{.*}} -> (tensor<1x8x2x16xf32>)
// WRITES-NOT:     linalg.transpose
// WRITES:         return
// CHECK-SAME:      %[[X:[^:]+]]: tensor<1x2x8x16xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x8x2x16xf32>
// CHECK:         %[[R:.*]] = scf.forall (%[[H:.*]], %[[S:.*]]) in (2, 8) shared_outs(%[[O:.*]] = %[[E]]) -> (tensor<1x8x2x16xf32>)
// CHECK:           tensor.extract_slice %[[X]][0, %[[H]], %[[S]], 0] [1, 1, 1, 16]
// CHECK:           %[[DST:.*]] = tensor.extract_slice %[[O]][0, %[[S]], %[[H]], 0] [1, 1, 1, 16] [1, 1, 1, 1] : tensor<1x8x2x16xf32> to tensor<1x1x16xf32>
// CHECK:           %[[C:.*]] = linalg.copy {{.*}} outs(%[[DST]] :
// CHECK:           tensor.parallel_insert_slice %[[C]] into %[[O]][0, %[[S]], %[[H]], 0] [1, 1, 1, 16] [1, 1, 1, 1] : tensor<1x1x16xf32> into tensor<1x8x2x16xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[R]] : tensor<1x8x2x16xf32>
func.func @head_merge(%x: tensor<1x2x8x16xf32>) -> tensor<1x8x2x16xf32> {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %r = scf.forall (%h, %s) in (2, 8) shared_outs(%o = %e)
      -> (tensor<1x2x8x16xf32>) {
    %row = tensor.extract_slice %x[0, %h, %s, 0] [1, 1, 1, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<1x1x16xf32>
    %dst = tensor.extract_slice %o[0, %h, %s, 0] [1, 1, 1, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<1x1x16xf32>
    %c = linalg.copy ins(%row : tensor<1x1x16xf32>)
        outs(%dst : tensor<1x1x16xf32>) -> tensor<1x1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %c into %o[0, %h, %s, 0] [1, 1, 1, 16]
          [1, 1, 1, 1] : tensor<1x1x16xf32> into tensor<1x2x8x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<1x8x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x8x16xf32>)
      outs(%e2 : tensor<1x8x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x8x2x16xf32>
}

// -----

// Dynamic rows: the new shared_out's size operand is the old one's, moved
// to its dimension in the transposed layout.

// CHECK-LABEL: func.func @head_merge_dynamic(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<1x2x?x16xf32>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]]
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<1x?x2x16xf32>
// CHECK:         %[[R:.*]] = scf.forall ({{.*}}) in (2, %[[N]]) shared_outs(%[[O:.*]] = %[[E]]) -> (tensor<1x?x2x16xf32>)
// CHECK:           tensor.parallel_insert_slice {{.*}} into %[[O]]
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[R]] : tensor<1x?x2x16xf32>
func.func @head_merge_dynamic(%x: tensor<1x2x?x16xf32>)
    -> tensor<1x?x2x16xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %r = scf.forall (%h, %s) in (2, %n) shared_outs(%o = %e)
      -> (tensor<1x2x?x16xf32>) {
    %row = tensor.extract_slice %x[0, %h, %s, 0] [1, 1, 1, 16] [1, 1, 1, 1]
        : tensor<1x2x?x16xf32> to tensor<1x1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %row into %o[0, %h, %s, 0] [1, 1, 1, 16]
          [1, 1, 1, 1] : tensor<1x1x16xf32> into tensor<1x2x?x16xf32>
    }
  }
  %e2 = tensor.empty(%n) : tensor<1x?x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x?x16xf32>)
      outs(%e2 : tensor<1x?x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x?x2x16xf32>
}

// -----

// Not folded: the forall result has another user, which needs its layout.

// CHECK-LABEL: func.func @forall_result_used_twice(
// CHECK:         %[[R:.*]] = scf.forall {{.*}} -> (tensor<1x2x8x16xf32>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[R]]
// CHECK:         return %[[T]], %[[R]]
func.func @forall_result_used_twice(%x: tensor<1x2x8x16xf32>)
    -> (tensor<1x8x2x16xf32>, tensor<1x2x8x16xf32>) {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %r = scf.forall (%h, %s) in (2, 8) shared_outs(%o = %e)
      -> (tensor<1x2x8x16xf32>) {
    %row = tensor.extract_slice %x[0, %h, %s, 0] [1, 1, 1, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<1x1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %row into %o[0, %h, %s, 0] [1, 1, 1, 16]
          [1, 1, 1, 1] : tensor<1x1x16xf32> into tensor<1x2x8x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<1x8x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x8x16xf32>)
      outs(%e2 : tensor<1x8x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t, %r : tensor<1x8x2x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// Not folded: the shared_out starts as a tensor the loop may read (a
// function argument), whose layout the transpose does not change.

// CHECK-LABEL: func.func @shared_out_not_empty(
// CHECK:         %[[R:.*]] = scf.forall {{.*}} -> (tensor<1x2x8x16xf32>)
// CHECK:         linalg.transpose ins(%[[R]]
func.func @shared_out_not_empty(%x: tensor<1x2x8x16xf32>,
                                %init: tensor<1x2x8x16xf32>)
    -> tensor<1x8x2x16xf32> {
  %r = scf.forall (%h, %s) in (2, 8) shared_outs(%o = %init)
      -> (tensor<1x2x8x16xf32>) {
    %row = tensor.extract_slice %x[0, %h, %s, 0] [1, 1, 1, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<1x1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %row into %o[0, %h, %s, 0] [1, 1, 1, 16]
          [1, 1, 1, 1] : tensor<1x1x16xf32> into tensor<1x2x8x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<1x8x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x8x16xf32>)
      outs(%e2 : tensor<1x8x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x8x2x16xf32>
}

// -----

// Not folded: each iteration writes a [2 heads, 2 rows] tile, whose
// elements the transposed layout orders differently.

// CHECK-LABEL: func.func @tile_reorders(
// CHECK:         %[[R:.*]] = scf.forall {{.*}} -> (tensor<1x2x8x16xf32>)
// CHECK:           tensor.parallel_insert_slice {{.*}} [1, 2, 2, 16]
// CHECK:         linalg.transpose ins(%[[R]]
func.func @tile_reorders(%x: tensor<1x2x8x16xf32>) -> tensor<1x8x2x16xf32> {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %r = scf.forall (%s) in (4) shared_outs(%o = %e)
      -> (tensor<1x2x8x16xf32>) {
    %s0 = affine.apply affine_map<(d0) -> (d0 * 2)>(%s)
    %tile = tensor.extract_slice %x[0, 0, %s0, 0] [1, 2, 2, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<2x2x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %tile into %o[0, 0, %s0, 0] [1, 2, 2, 16]
          [1, 1, 1, 1] : tensor<2x2x16xf32> into tensor<1x2x8x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<1x8x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x8x16xf32>)
      outs(%e2 : tensor<1x8x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x8x2x16xf32>
}

// -----

// Not folded: the shared_out is used other than through a slice.

// CHECK-LABEL: func.func @shared_out_other_use(
// CHECK:         %[[R:.*]] = scf.forall {{.*}} -> (tensor<1x2x8x16xf32>)
// CHECK:         linalg.transpose ins(%[[R]]
func.func @shared_out_other_use(%x: tensor<1x2x8x16xf32>)
    -> (tensor<1x8x2x16xf32>) {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %r = scf.forall (%h, %s) in (2, 8) shared_outs(%o = %e)
      -> (tensor<1x2x8x16xf32>) {
    %c0 = arith.constant 0 : index
    %row = tensor.extract_slice %x[0, %h, %s, 0] [1, 1, 1, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<1x1x16xf32>
    %v = tensor.extract %o[%c0, %h, %s, %c0] : tensor<1x2x8x16xf32>
    %row2 = linalg.fill ins(%v : f32) outs(%row : tensor<1x1x16xf32>)
        -> tensor<1x1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %row2 into %o[0, %h, %s, 0] [1, 1, 1, 16]
          [1, 1, 1, 1] : tensor<1x1x16xf32> into tensor<1x2x8x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<1x8x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x8x16xf32>)
      outs(%e2 : tensor<1x8x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x8x2x16xf32>
}

// -----

// Grouped queries: each iteration reads and writes the rows of the G = 2
// query heads of a kv head as a [1, G, 1, D] slice, whose unit dimensions
// the moved sizes [1, 1, G, D] cannot keep in place: the slices take the
// [G, D] type and are reshaped to and from the loop's.

// CHECK-LABEL: func.func @grouped_heads(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<1x8x4x16xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x8x4x16xf32>
// CHECK:         scf.forall (%[[G:.*]], %[[S:.*]]) in (2, 8) shared_outs(%[[O:.*]] = %[[E]]) -> (tensor<1x8x4x16xf32>)
// CHECK:           %[[H:.*]] = affine.apply
// CHECK:           %[[ROWS:.*]] = tensor.extract_slice %[[X]][0, %[[S]], %[[H]], 0] [1, 1, 2, 16] [1, 1, 1, 1] : tensor<1x8x4x16xf32> to tensor<2x16xf32>
// CHECK:           %[[IN:.*]] = tensor.expand_shape %[[ROWS]] {{\[\[}}0, 1], [2, 3]] {{.*}} : tensor<2x16xf32> into tensor<1x2x1x16xf32>
// CHECK:           %[[NEG:.*]] = linalg.negf ins(%[[IN]] {{.*}}) -> tensor<1x2x1x16xf32>
// CHECK:           %[[OUT:.*]] = tensor.collapse_shape %[[NEG]] {{\[\[}}0, 1], [2, 3]] : tensor<1x2x1x16xf32> into tensor<2x16xf32>
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %[[OUT]] into %[[O]][0, %[[S]], %[[H]], 0] [1, 1, 2, 16] [1, 1, 1, 1] : tensor<2x16xf32> into tensor<1x8x4x16xf32>
// CHECK-NOT:     linalg.transpose
func.func @grouped_heads(%x: tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32> {
  %e = tensor.empty() : tensor<1x4x8x16xf32>
  %t = linalg.transpose ins(%x : tensor<1x8x4x16xf32>)
      outs(%e : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %r = scf.forall (%g, %s) in (2, 8) shared_outs(%o = %e)
      -> (tensor<1x4x8x16xf32>) {
    %h = affine.apply affine_map<(d0) -> (d0 * 2)>(%g)
    %rows = tensor.extract_slice %t[0, %h, %s, 0] [1, 2, 1, 16] [1, 1, 1, 1]
        : tensor<1x4x8x16xf32> to tensor<1x2x1x16xf32>
    %dst = tensor.empty() : tensor<1x2x1x16xf32>
    %neg = linalg.negf ins(%rows : tensor<1x2x1x16xf32>)
        outs(%dst : tensor<1x2x1x16xf32>) -> tensor<1x2x1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %neg into %o[0, %h, %s, 0] [1, 2, 1, 16]
          [1, 1, 1, 1] : tensor<1x2x1x16xf32> into tensor<1x4x8x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<1x8x4x16xf32>
  %m = linalg.transpose ins(%r : tensor<1x4x8x16xf32>)
      outs(%e2 : tensor<1x8x4x16xf32>) permutation = [0, 2, 1, 3]
  return %m : tensor<1x8x4x16xf32>
}

// -----

// Blocks of query rows, as the CPU flash loops write them: the [1, 1, 4, D]
// slice of a head's rows is typed [1, 4, D]. Moved to [1, 4, 1, D], that
// type would be the rank reduction dropping the third dimension, not the
// first unit dimensions that tensor's folders infer, so the slices take the
// [4, D] type and are reshaped to and from the loop's.

// CHECK-LABEL: func.func @row_blocks(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x8x2x16xf32>
// CHECK:         scf.forall (%[[H:.*]], %[[B:.*]]) in (2, 2) shared_outs(%[[O:.*]] = %[[E]]) -> (tensor<1x8x2x16xf32>)
// CHECK:           %[[S:.*]] = affine.apply
// CHECK:           %[[DST:.*]] = tensor.extract_slice %[[O]][0, %[[S]], %[[H]], 0] [1, 4, 1, 16] [1, 1, 1, 1] : tensor<1x8x2x16xf32> to tensor<4x16xf32>
// CHECK:           %[[INIT:.*]] = tensor.expand_shape %[[DST]] {{\[\[}}0, 1], [2]] {{.*}} : tensor<4x16xf32> into tensor<1x4x16xf32>
// CHECK:           %[[NEG:.*]] = linalg.negf {{.*}} outs(%[[INIT]] : tensor<1x4x16xf32>)
// CHECK:           %[[OUT:.*]] = tensor.collapse_shape %[[NEG]] {{\[\[}}0, 1], [2]] : tensor<1x4x16xf32> into tensor<4x16xf32>
// CHECK:           tensor.parallel_insert_slice %[[OUT]] into %[[O]][0, %[[S]], %[[H]], 0] [1, 4, 1, 16] [1, 1, 1, 1] : tensor<4x16xf32> into tensor<1x8x2x16xf32>
// CHECK-NOT:     linalg.transpose
// WRITES-LABEL: func.func @row_blocks(
// WRITES:         scf.forall {{.*}} -> (tensor<1x8x2x16xf32>)
// WRITES:           tensor.extract_slice %{{.*}}[0, %{{.*}}, %{{.*}}, 0] [1, 4, 1, 16] [1, 1, 1, 1] : tensor<1x8x2x16xf32> to tensor<4x16xf32>
// WRITES-NOT:     linalg.transpose
func.func @row_blocks(%x: tensor<1x2x8x16xf32>) -> tensor<1x8x2x16xf32> {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %r = scf.forall (%h, %b) in (2, 2) shared_outs(%o = %e)
      -> (tensor<1x2x8x16xf32>) {
    %s = affine.apply affine_map<(d0) -> (d0 * 4)>(%b)
    %rows = tensor.extract_slice %x[0, %h, %s, 0] [1, 1, 4, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<1x4x16xf32>
    %dst = tensor.extract_slice %o[0, %h, %s, 0] [1, 1, 4, 16] [1, 1, 1, 1]
        : tensor<1x2x8x16xf32> to tensor<1x4x16xf32>
    %neg = linalg.negf ins(%rows : tensor<1x4x16xf32>)
        outs(%dst : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %neg into %o[0, %h, %s, 0] [1, 1, 4, 16]
          [1, 1, 1, 1] : tensor<1x4x16xf32> into tensor<1x2x8x16xf32>
    }
  }
  %e2 = tensor.empty() : tensor<1x8x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x8x16xf32>)
      outs(%e2 : tensor<1x8x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x8x2x16xf32>
}

// -----

// Blocks of a run-time row count: on the CPU (fold-reads=false) the
// [1, ?, D]-typed slices move to the [?, D] type and are reshaped, as for
// static sizes (a subview of run-time sizes may otherwise be given the
// other reduction's strides); with fold-reads (the GPU kernels' rows, whose
// run-time sizes differ per thread) they keep the valid rank reduction.

// CHECK-LABEL: func.func @row_blocks_dynamic(
// CHECK:         scf.forall {{.*}} -> (tensor<1x?x2x16xf32>)
// CHECK:           tensor.extract_slice %{{.*}}[0, %{{.*}}, %{{.*}}, 0] [1, %{{.*}}, 1, 16] [1, 1, 1, 1] : tensor<1x?x2x16xf32> to tensor<1x?x16xf32>
// CHECK-NOT:       tensor.expand_shape
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}, %{{.*}}, 0] [1, %{{.*}}, 1, 16] [1, 1, 1, 1] : tensor<1x?x16xf32> into tensor<1x?x2x16xf32>
// WRITES-LABEL: func.func @row_blocks_dynamic(
// WRITES:         scf.forall {{.*}} -> (tensor<1x?x2x16xf32>)
// WRITES:           %[[DST:.*]] = tensor.extract_slice %{{.*}}[0, %{{.*}}, %{{.*}}, 0] [1, %{{.*}}, 1, 16] [1, 1, 1, 1] : tensor<1x?x2x16xf32> to tensor<?x16xf32>
// WRITES:           tensor.expand_shape %[[DST]] {{\[\[}}0, 1], [2]] {{.*}} : tensor<?x16xf32> into tensor<1x?x16xf32>
// WRITES:           %[[OUT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x?x16xf32> into tensor<?x16xf32>
// WRITES:           tensor.parallel_insert_slice %[[OUT]] into %{{.*}}[0, %{{.*}}, %{{.*}}, 0] [1, %{{.*}}, 1, 16] [1, 1, 1, 1] : tensor<?x16xf32> into tensor<1x?x2x16xf32>
func.func @row_blocks_dynamic(%x: tensor<1x2x?x16xf32>, %n: index)
    -> tensor<1x?x2x16xf32> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %x, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%s) : tensor<1x2x?x16xf32>
  %r = scf.forall (%h, %b) in (2, 2) shared_outs(%o = %e)
      -> (tensor<1x2x?x16xf32>) {
    %s0 = affine.apply affine_map<(d0)[s0] -> (d0 * s0)>(%b)[%n]
    %rows = tensor.extract_slice %x[0, %h, %s0, 0] [1, 1, %n, 16] [1, 1, 1, 1]
        : tensor<1x2x?x16xf32> to tensor<1x?x16xf32>
    %dst = tensor.extract_slice %o[0, %h, %s0, 0] [1, 1, %n, 16] [1, 1, 1, 1]
        : tensor<1x2x?x16xf32> to tensor<1x?x16xf32>
    %neg = linalg.negf ins(%rows : tensor<1x?x16xf32>)
        outs(%dst : tensor<1x?x16xf32>) -> tensor<1x?x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %neg into %o[0, %h, %s0, 0] [1, 1, %n, 16]
          [1, 1, 1, 1] : tensor<1x?x16xf32> into tensor<1x2x?x16xf32>
    }
  }
  %e2 = tensor.empty(%s) : tensor<1x?x2x16xf32>
  %t = linalg.transpose ins(%r : tensor<1x2x?x16xf32>)
      outs(%e2 : tensor<1x?x2x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x?x2x16xf32>
}
