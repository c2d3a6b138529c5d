// RUN: attn-opt %s --attn-to-cpu=stop-after=linalg | FileCheck %s
// RUN: attn-opt %s --attn-to-cuda=stop-after=linalg | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu="stop-after=linalg outline-layers=false" | FileCheck %s --check-prefix=INLINED
// RUN: attn-opt %s --attn-to-cpu="stop-after=linalg runtime-checks=true" | FileCheck %s --check-prefix=INLINED
// RUN: attn-opt %s --attn-to-cpu | FileCheck %s --check-prefix=LLVM

// Two identical layers on their own weights, compiled once: the entry binds
// each layer's weights (its own manifest records, hoisted as entry
// arguments) and calls one body function per layer. Without outlining, or
// with runtime checks (whose messages must name the layer's own ops), both
// bodies are inlined.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[W0:[^:]+]]: tensor<{{.*}}> {attn.weight = "layers.0.w"}
// CHECK-SAME:    %[[B0:[^:]+]]: tensor<{{.*}}> {attn.weight = "layers.0.b"}
// CHECK-SAME:    %[[W1:[^:]+]]: tensor<{{.*}}> {attn.weight = "layers.1.w"}
// CHECK-SAME:    %[[B1:[^:]+]]: tensor<{{.*}}> {attn.weight = "layers.1.b"}
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x4x8xf32>
// CHECK-NEXT:    %[[H0:.*]] = call @attn_layer_body_0(%[[X]], %[[W0]], %[[B0]])
// CHECK-NEXT:    %[[H1:.*]] = call @attn_layer_body_0(%[[H0]], %[[W1]], %[[B1]])
// CHECK-NEXT:    return %[[H1]]
// CHECK-LABEL: func.func private @attn_layer_body_0(
// CHECK:         linalg.generic
// CHECK-NOT:   func.func
// INLINED-LABEL: func.func @main(
// INLINED-NOT:   call
// INLINED-COUNT-2: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// INLINED-NOT:   func.func
// The body function is internal; only the runtime's entry points are
// exported.
// LLVM-DAG:    llvm.func internal @attn_layer_body_0(
// LLVM-DAG:    llvm.func internal @attn_model_forward(
// LLVM-DAG:    llvm.func @attn_model_invoke(
func.func @main(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %0 = attn.layer index = 0 (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layers.0.w" : tensor<8x8xf32>
    %b = attn.weight "layers.0.b" : tensor<8xf32>
    %p = attn.linear %h, %w, %b : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
    %g = attn.gelu %p : tensor<1x4x8xf32>
    %a = attn.add %h, %g : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  %1 = attn.layer index = 1 (%0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%h: tensor<1x4x8xf32>):
    %w = attn.weight "layers.1.w" : tensor<8x8xf32>
    %b = attn.weight "layers.1.b" : tensor<8xf32>
    %p = attn.linear %h, %w, %b : (tensor<1x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
    %g = attn.gelu %p : tensor<1x4x8xf32>
    %a = attn.add %h, %g : tensor<1x4x8xf32>
    attn.yield %a : tensor<1x4x8xf32>
  }
  return %1 : tensor<1x4x8xf32>
}
