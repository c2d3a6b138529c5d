// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-approximate-math))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-approximate-math{functions=math.exp}))" | FileCheck %s --check-prefix=EXP

// exp, erf and tanh (scalar and vector f32) become arith-only polynomials
// that LLVM can vectorize; f64 and other functions keep their libm calls.
// CHECK-LABEL: func.func @approximate
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.tanh
// CHECK:         math.log %{{.*}} : f32
// CHECK:         math.exp %{{.*}} : f64
// CHECK:         return
// EXP-LABEL: func.func @approximate
// EXP-NOT:       math.exp %{{.*}} : f32
// EXP-NOT:       math.exp %{{.*}} : vector<16xf32>
// EXP:           math.erf %{{.*}} : f32
// EXP:           math.tanh %{{.*}} : f32
func.func @approximate(%x: f32, %v: vector<16xf32>, %d: f64) -> (f32, vector<16xf32>, f32, f32, f32, f64) {
  %e = math.exp %x : f32
  %ev = math.exp %v : vector<16xf32>
  %r = math.erf %x : f32
  %t = math.tanh %x : f32
  %l = math.log %x : f32
  %ed = math.exp %d : f64
  return %e, %ev, %r, %t, %l, %ed : f32, vector<16xf32>, f32, f32, f32, f64
}
