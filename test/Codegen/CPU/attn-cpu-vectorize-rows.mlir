// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-vectorize-rows,cse))" | FileCheck %s
// RUN: not attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-vectorize-rows{vector-width=0}))" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-cpu-vectorize-rows: vector-width must be >= 1

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>

// Flash attention's row max and P = exp(S - m) on a [1, 64, 64] tile:
// loops over (g, i), a vector loop along j; the row operand is loaded once
// per row and broadcast; the max keeps a vector accumulator (from -inf)
// reduced once per row into the old value.
// CHECK-LABEL: func.func @row_max_and_exp
// CHECK:         scf.for %[[G:.*]] = %c0 to %c1 step %c1
// CHECK:           scf.for %[[I:.*]] = %c0 to %c64 step %c1
// CHECK:             %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK:             %[[ACC:.*]] = scf.for %[[J:.*]] = %c0 to %c64 step %c16 iter_args(%[[A:.*]] = %[[NEGINF]]) -> (vector<16xf32>)
// CHECK:               %[[X:.*]] = vector.load %{{.*}}[%[[G]], %[[I]], %[[J]]] : memref<1x64x64xf32>, vector<16xf32>
// CHECK:               %[[MX:.*]] = arith.maximumf %[[A]], %[[X]] : vector<16xf32>
// CHECK:               scf.yield %[[MX]]
// CHECK:             %[[R:.*]] = vector.reduction <maximumf>, %[[ACC]] : vector<16xf32> into f32
// CHECK:             %[[OLD:.*]] = memref.load %{{.*}}[%[[G]], %[[I]]] : memref<1x64xf32>
// CHECK:             %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[R]] : f32
// CHECK:             memref.store %[[NEW]], %{{.*}}[%[[G]], %[[I]]]
// CHECK:         scf.for
// CHECK:           scf.for %[[I2:.*]] = %c0 to %c64 step %c1
// CHECK:             %[[M:.*]] = memref.load %{{.*}} : memref<1x64xf32>
// CHECK:             scf.for %[[J2:.*]] = %c0 to %c64 step %c16
// CHECK:               %[[S:.*]] = vector.load
// CHECK:               %[[MB:.*]] = vector.broadcast %[[M]] : f32 to vector<16xf32>
// CHECK:               %[[D:.*]] = arith.subf %[[S]], %[[MB]] : vector<16xf32>
// CHECK:               %[[E:.*]] = math.exp %[[D]] : vector<16xf32>
// CHECK:               vector.store %[[E]]
// CHECK-NOT:     linalg.generic
func.func @row_max_and_exp(%s: memref<1x64x64xf32>, %m: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : memref<1x64x64xf32>) outs(%m : memref<1x64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : memref<1x64xf32>) outs(%s : memref<1x64x64xf32>) {
  ^bb0(%mx: f32, %x: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>

// A partial key block (dynamic row length): masked loads and stores; the
// causal mask's key index is a step vector; a reassoc sum ignores the lanes
// past the row end.
// CHECK-LABEL: func.func @masked_rows
// CHECK:         %[[N:.*]] = memref.dim %{{.*}}, %c2
// CHECK:         scf.for %[[J:.*]] = %c0 to %[[N]] step %c16
// CHECK:           %[[LEFT:.*]] = arith.subi %[[N]], %[[J]]
// CHECK:           %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<16xi1>
// CHECK:           %[[X:.*]] = vector.maskedload %{{.*}}, %[[MASK]]
// CHECK:           %[[STEP:.*]] = vector.step : vector<16xindex>
// CHECK:           %[[JB:.*]] = vector.broadcast %[[J]] : index to vector<16xindex>
// CHECK:           %[[JV:.*]] = arith.addi %[[JB]], %[[STEP]] : vector<16xindex>
// CHECK:           arith.cmpi sle, %[[JV]], %{{.*}} : vector<16xindex>
// CHECK:           vector.maskedstore %{{.*}}, %[[MASK]]
// CHECK:         scf.for %{{.*}} = %c0 to %[[N]] step %c16 iter_args(%[[A:.*]] = %{{.*}}) -> (vector<16xf32>)
// CHECK:           %[[SUM:.*]] = arith.addf %[[A]], %{{.*}} fastmath<reassoc,contract> : vector<16xf32>
// CHECK:           %[[KEEP:.*]] = arith.select %{{.*}}, %[[SUM]], %[[A]] : vector<16xi1>, vector<16xf32>
// CHECK:           scf.yield %[[KEEP]]
// CHECK:         vector.reduction <add>, %{{.*}} fastmath<reassoc,contract> : vector<16xf32> into f32
func.func @masked_rows(%s: memref<1x?x?xf32, strided<[4096, 64, 1]>>, %l: memref<1x?xf32, strided<[64, 1]>>, %q0: index) {
  %neg = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel"]} outs(%s : memref<1x?x?xf32, strided<[4096, 64, 1]>>) {
  ^bb0(%x: f32):
    %j = linalg.index 2 : index
    %i = linalg.index 1 : index
    %p = arith.addi %i, %q0 : index
    %vis = arith.cmpi sle, %j, %p : index
    %r = arith.select %vis, %x, %neg : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : memref<1x?x?xf32, strided<[4096, 64, 1]>>) outs(%l : memref<1x?xf32, strided<[64, 1]>>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x fastmath<reassoc, contract> : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>

// The lanes are combined with the combiner's flags: a maximum that may
// ignore NaN and signed zeros (flash attention's) stays one instruction per
// step on a CPU.
// CHECK-LABEL: func.func @row_max_flags
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : vector<16xf32>
// CHECK:         vector.reduction <maximumf>, %{{.*}} fastmath<nnan,nsz> : vector<16xf32> into f32
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32
func.func @row_max_flags(%s: memref<1x64x64xf32>, %m: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : memref<1x64x64xf32>) outs(%m : memref<1x64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x fastmath<nnan, nsz> : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#c = affine_map<(d0, d1) -> (0, d1)>

// Left alone: a sum that may not be reassociated, a transposed operand, a
// constant index in a map, f16.
// CHECK-LABEL: func.func @near_misses
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     vector
func.func @near_misses(%x: memref<8x64xf32>, %y: memref<8xf32>, %xt: memref<64x8xf32>, %o: memref<8x64xf32>, %b: memref<1x64xf32>, %h: memref<8x64xf16>) {
  linalg.generic {indexing_maps = [#a, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#t, #a], iterator_types = ["parallel", "parallel"]} ins(%xt : memref<64x8xf32>) outs(%o : memref<8x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#c, #a], iterator_types = ["parallel", "parallel"]} ins(%b : memref<1x64xf32>) outs(%o : memref<8x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#a], iterator_types = ["parallel", "parallel"]} outs(%h : memref<8x64xf16>) {
  ^bb0(%v: f16):
    %r = arith.addf %v, %v : f16
    linalg.yield %r : f16
  }
  return
}
