// RUN: attn-opt %s --split-input-file --attn-reassociate-reductions | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A reduction generic's float arithmetic may reassociate and contract; the
// flags an op already has stay (a maximum that may ignore NaN and signed
// zeros keeps saying so). Elementwise generics are left alone.
// CHECK-LABEL: func.func @reductions
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:           arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK:           arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,nnan,nsz,contract> : f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:           %[[E:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      linalg.yield %[[E]]
func.func @reductions(%x: memref<8x64xf32>, %y: memref<8xf32>, %m: memref<8xf32>, %o: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %p = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v fastmath<nnan, nsz> : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x64xf32>) outs(%o : memref<8x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %e = arith.mulf %v, %v : f32
    linalg.yield %e : f32
  }
  return
}
