// RUN: attn-opt %s --pass-pipeline="builtin.module(attn-lower-to-linalg,func.func(attn-fuse-rows{fuse-elementwise=true}))" | FileCheck %s

// A decode step's embedding and learned positions read linalg.index; fusing
// them into the three row generics of the layer norm remaps the indices
// through affine.apply of each producer's indexing map. Those projections
// are forwarded as they appear (no canonicalization runs here), so no chain
// of them is left to grow with every fusion.
// CHECK-LABEL: func.func @embed_positions_norm(
// CHECK-NOT:     affine.apply #{{.*}}(%{{[^,)]*}}, %{{[^,)]*}}, %{{[^,)]*}})
// CHECK:         scf.forall
// CHECK-NOT:     affine.apply #{{.*}}(%{{[^,)]*}}, %{{[^,)]*}}, %{{[^,)]*}})
// CHECK:         scf.forall.in_parallel
// CHECK-NOT:     affine.apply #{{.*}}(%{{[^,)]*}}, %{{[^,)]*}}, %{{[^,)]*}})
// CHECK:         return
func.func @embed_positions_norm(%ids: tensor<2x1xi64>, %pos: tensor<2xi64>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<2x1x8xf16> {
  %wte = attn.weight "wte" : tensor<10x8xf16>
  %wpe = attn.weight "wpe" : tensor<16x8xf16>
  %e = attn.embedding %ids, %wte : (tensor<2x1xi64>, tensor<10x8xf16>) -> tensor<2x1x8xf16>
  %h = attn.learned_pos %e, %wpe positions(%pos : tensor<2xi64>) offset = 0 : tensor<2x1x8xf16>, tensor<16x8xf16>
  %y = attn.layer_norm %h, %g, %b : tensor<2x1x8xf16>, tensor<8xf16>, tensor<8xf16>
  return %y : tensor<2x1x8xf16>
}
