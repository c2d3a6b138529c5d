// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{int8-dot=true}))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s --check-prefix=NOVNNI
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{int8-dot=true}),convert-scf-to-cf)" | FileCheck %s --check-prefix=LATCH

// Weight-only int8 contractions with int8 activations, as
// attn-cpu-quantize-weights{int8-activations} leaves them (here
// bufferized): A i8 [M, K], the packed weight words [N, K / 4], the weight
// scales [N, K / G] and the row scales [M, K / G]. With VNNI, each row tile
// is prepared once before its columns: its bytes copied into a scratch row
// and, per group, -128 times their sum (vpdpbusd against bytes of 1, summed
// across the lanes, a shift by 7) stored as the group's offset in f32. A
// column's group sums the weight bytes with their sign bits flipped (u8 = w
// + 128) times the prepared bytes on vpdpbusd from zero; the exact sums are
// converted and scaled once by the product of the two scales. The products
// of a tile's outputs are computed before its group loop, a vector of
// groups at a time (masked where the groups do not fill it), into a scratch
// that each group reads one value of; their products with the offsets start
// the output's accumulator. A group of 64 is one zmm step (16 i32 lanes), a
// group of 32 one ymm step (8 lanes).
// Without VNNI the generic stays.

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 64)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 64)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @groups_of_64(
// CHECK-SAME:      %[[A:[^:]+]]: memref<2x128xi8>, %[[W:[^:]+]]: memref<16x32xi32>, %[[S:[^:]+]]: memref<16x2xf32>, %[[R:[^:]+]]: memref<2x2xf32>
// CHECK:         scf.parallel
// CHECK:           %[[PRODS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x16xf32>
// CHECK:           %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x128xi8>
// CHECK:           %[[OFFS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x16xf32>
// CHECK:           scf.for %[[M:.*]] = %{{.*}} to %c2{{[_0-9]*}} step %c1{{[_0-9]*}} {
// CHECK-DAG:         %[[ONES:.*]] = arith.constant dense<1> : vector<64xi8>
// CHECK-DAG:         %[[ZERO:.*]] = arith.constant dense<0> : vector<16xi32>
// CHECK:             scf.for %[[PG:.*]] = %{{.*}} to %c128{{[_0-9]*}} step %c64{{[_0-9]*}} {
// CHECK:               %[[QS:.*]] = scf.for %[[PK:.*]] = %[[PG]] to %{{.*}} step %c64{{[_0-9]*}} iter_args(%[[QACC:.*]] = %[[ZERO]])
// CHECK:                 %[[AV:.*]] = vector.load %[[A]][%{{.*}}, %[[PK]]] : memref<2x128xi8>, vector<64xi8>
// CHECK:                 vector.store %[[AV]], %[[ROWS]][%{{.*}}, %[[PK]]]
// CHECK:                 llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[QACC]], %[[ONES]], %[[AV]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK:               %[[QSUM:.*]] = vector.reduction <add>, %[[QS]] : vector<16xi32> into i32
// CHECK:               %[[SH:.*]] = arith.shli %[[QSUM]], %c7_i32 : i32
// CHECK:               %[[NEG:.*]] = arith.subi %c0_i32, %[[SH]] : i32
// CHECK:               %[[OFF:.*]] = arith.sitofp %[[NEG]] : i32 to f32
// CHECK:               %[[PGI:.*]] = arith.divui %[[PG]], %c64{{[_0-9]*}}
// CHECK:               memref.store %[[OFF]], %[[OFFS]][%{{.*}}, %[[PGI]]] : memref<1x16xf32>
// CHECK:             scf.for %[[N:.*]] = %{{.*}} to %c16{{[_0-9]*}} step %c1{{[_0-9]*}} {
// CHECK:               %[[TWO:.*]] = vector.constant_mask [2] : vector<16xi1>
// CHECK:               %[[RV:.*]] = vector.maskedload %[[R]][%[[M]], %[[C0:.*]]], %[[TWO]], %{{.*}} : memref<2x2xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:               %[[OV:.*]] = vector.maskedload %[[OFFS]][%{{.*}}, %[[C0]]], %[[TWO]], %{{.*}} : memref<1x16xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:               %[[SV:.*]] = vector.maskedload %[[S]][%{{.*}}, %[[C0]]], %[[TWO]], %{{.*}} : memref<16x2xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:               %[[PROD:.*]] = arith.mulf %[[SV]], %[[RV]] : vector<16xf32>
// CHECK:               vector.store %[[PROD]], %[[PRODS]][%{{.*}}, %[[C0]]] : memref<1x16xf32>, vector<16xf32>
// CHECK:               %[[FSTART:.*]] = arith.mulf %[[PROD]], %[[OV]] : vector<16xf32>
// CHECK:               scf.for %[[G:.*]] = %{{.*}} to %c128{{[_0-9]*}} step %c64{{[_0-9]*}} iter_args(%{{.*}} = %[[FSTART]])
// CHECK:                 %[[GI:.*]] = arith.divui %[[G]], %c64{{[_0-9]*}}
// CHECK:                 %[[START:.*]] = arith.constant dense<0> : vector<16xi32>
// CHECK:                 %[[SUM:.*]] = scf.for %[[K:.*]] = %[[G]] to %{{.*}} step %c64{{[_0-9]*}} iter_args(%[[IACC:.*]] = %[[START]])
// CHECK:                   %[[P:.*]] = vector.load %[[ROWS]][%{{.*}}, %[[K]]] : memref<1x128xi8>, vector<64xi8>
// CHECK:                   %[[KW:.*]] = arith.divui %[[K]], %c4{{[_0-9]*}}
// CHECK:                   %[[WV:.*]] = vector.load %[[W]][%{{.*}}, %[[KW]]] : memref<16x32xi32>, vector<16xi32>
// CHECK:                   %[[WB:.*]] = vector.bitcast %[[WV]] : vector<16xi32> to vector<64xi8>
// CHECK:                   %[[WU:.*]] = arith.xori %[[WB]], %{{.*}} : vector<64xi8>
// CHECK:                   llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[IACC]], %[[WU]], %[[P]])
// CHECK-NOT:             memref.load %[[S]]
// CHECK:                 %[[BOTH:.*]] = memref.load %[[PRODS]][%{{.*}}, %[[GI]]] : memref<1x16xf32>
// CHECK:                 %[[SPLAT:.*]] = vector.broadcast %[[BOTH]] : f32 to vector<16xf32>
// CHECK:                 %[[F:.*]] = arith.sitofp %[[SUM]] : vector<16xi32> to vector<16xf32>
// CHECK:                 vector.fma %[[F]], %[[SPLAT]], %{{.*}} : vector<16xf32>
// CHECK:               vector.reduction <add>
// CHECK-NOT:     linalg.generic
// NOVNNI-LABEL: func.func @groups_of_64(
// NOVNNI:         linalg.generic {{.*}}attn.woq_matmul
// NOVNNI-NOT:     vpdpbusd
func.func @groups_of_64(%a: memref<2x128xi8>, %w: memref<16x32xi32>, %s: memref<16x2xf32>, %r: memref<2x2xf32>, %c: memref<2x16xf32>) {
  linalg.generic {indexing_maps = [#map, #map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w, %s, %r : memref<2x128xi8>, memref<16x32xi32>, memref<16x2xf32>, memref<2x2xf32>) outs(%c : memref<2x16xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 8 : i64, group = 64 : i64}} {
  ^bb0(%in: i8, %in_0: i32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %1 = arith.remui %0, %c4 : index
    %c8 = arith.constant 8 : index
    %2 = arith.muli %c8, %1 : index
    %3 = arith.index_cast %2 : index to i32
    %c24_i32 = arith.constant 24 : i32
    %4 = arith.subi %c24_i32, %3 : i32
    %5 = arith.shli %in_0, %4 : i32
    %6 = arith.shrsi %5, %c24_i32 : i32
    %7 = arith.sitofp %6 : i32 to f32
    %8 = arith.sitofp %in : i8 to f32
    %9 = arith.mulf %in_1, %in_2 : f32
    %10 = arith.mulf %8, %7 : f32
    %11 = arith.mulf %10, %9 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  }
  return
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 32)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @groups_of_32(
// CHECK:         vector.load %{{.*}} : memref<1x64xi8>, vector<32xi8>
// CHECK:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"({{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// CHECK:         scf.for %{{.*}} step %c32{{[_0-9]*}} iter_args
// CHECK:           llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"({{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// CHECK:         arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// NOVNNI-LABEL: func.func @groups_of_32(
// NOVNNI:         linalg.generic
func.func @groups_of_32(%a: memref<1x64xi8>, %w: memref<8x16xi32>, %s: memref<8x2xf32>, %r: memref<1x2xf32>, %c: memref<1x8xf32>) {
  linalg.generic {indexing_maps = [#map, #map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w, %s, %r : memref<1x64xi8>, memref<8x16xi32>, memref<8x2xf32>, memref<1x2xf32>) outs(%c : memref<1x8xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 8 : i64, group = 32 : i64}} {
  ^bb0(%in: i8, %in_0: i32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %1 = arith.remui %0, %c4 : index
    %c8 = arith.constant 8 : index
    %2 = arith.muli %c8, %1 : index
    %3 = arith.index_cast %2 : index to i32
    %c24_i32 = arith.constant 24 : i32
    %4 = arith.subi %c24_i32, %3 : i32
    %5 = arith.shli %in_0, %4 : i32
    %6 = arith.shrsi %5, %c24_i32 : i32
    %7 = arith.sitofp %6 : i32 to f32
    %8 = arith.sitofp %in : i8 to f32
    %9 = arith.mulf %in_1, %in_2 : f32
    %10 = arith.mulf %8, %7 : f32
    %11 = arith.mulf %10, %9 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  }
  return
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, (d2 floordiv 32) * 4 + (d2 mod 16) floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 64)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 64)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>

// int4, groups of 64: a zmm step is two blocks of 32 weights, 32 bytes of
// words [k / 8, + 8). The prepared row holds the activation bytes shuffled
// into the order the weights unpack to, the offsets 8 times the sums (a
// shift by 3). Per column, the bytes and the bytes shifted down by 4 (as i16
// lanes) concatenated and masked to their low nibbles hold the weights block
// by block, low halves first; their sign bits flipped (u = w + 8).
// CHECK-LABEL: func.func @int4_groups_of_64(
// CHECK-SAME:      %[[A:[^:]+]]: memref<2x128xi8>, %[[W:[^:]+]]: memref<16x16xi32>
// CHECK:         %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x128xi8>
// CHECK:         %[[AV:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] : memref<2x128xi8>, vector<64xi8>
// CHECK:         %[[AS:.*]] = vector.shuffle %[[AV]], %[[AV]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]
// CHECK:         vector.store %[[AS]], %[[ROWS]]
// CHECK:         %[[QSUM:.*]] = vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// CHECK:         arith.shli %[[QSUM]], %c3_i32 : i32
// CHECK:         scf.for %[[G:.*]] = %{{.*}} step %c64{{[_0-9]*}} iter_args
// CHECK:           scf.for %[[K:.*]] = %[[G]] to %{{.*}} step %c64{{[_0-9]*}} iter_args
// CHECK:           %[[P:.*]] = vector.load %[[ROWS]][%{{.*}}, %[[K]]] : memref<1x128xi8>, vector<64xi8>
// CHECK:           %[[KW:.*]] = arith.divui %[[K]], %c8{{[_0-9]*}}
// CHECK:           %[[WV:.*]] = vector.load %[[W]][%{{.*}}, %[[KW]]] : memref<16x16xi32>, vector<8xi32>
// CHECK:           %[[LO:.*]] = vector.bitcast %[[WV]] : vector<8xi32> to vector<32xi8>
// CHECK:           %[[H16:.*]] = vector.bitcast %[[WV]] : vector<8xi32> to vector<16xi16>
// CHECK:           %[[SH:.*]] = arith.shrui %[[H16]], %{{.*}} : vector<16xi16>
// CHECK:           %[[HI:.*]] = vector.bitcast %[[SH]] : vector<16xi16> to vector<32xi8>
// CHECK:           %[[BOTH:.*]] = vector.shuffle %[[LO]], %[[HI]] [0, 1, {{.*}}, 62, 63] : vector<32xi8>, vector<32xi8>
// CHECK:           %[[NIB:.*]] = arith.andi %[[BOTH]], %{{.*}} : vector<64xi8>
// CHECK:           %[[U:.*]] = arith.xori %[[NIB]], %{{.*}} : vector<64xi8>
// CHECK:           llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[U]], %[[P]])
// NOVNNI-LABEL: func.func @int4_groups_of_64(
// NOVNNI:         linalg.generic
func.func @int4_groups_of_64(%a: memref<2x128xi8>, %w: memref<16x16xi32>, %s: memref<16x2xf32>, %r: memref<2x2xf32>, %c: memref<2x16xf32>) {
  linalg.generic {indexing_maps = [#map, #map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w, %s, %r : memref<2x128xi8>, memref<16x16xi32>, memref<16x2xf32>, memref<2x2xf32>) outs(%c : memref<2x16xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 4 : i64, group = 64 : i64}} {
  ^bb0(%in: i8, %in_0: i32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %1 = arith.remui %0, %c4 : index
    %c8 = arith.constant 8 : index
    %2 = arith.muli %c8, %1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %3 = arith.remui %0, %c32 : index
    %4 = arith.divui %3, %c16 : index
    %5 = arith.muli %c4, %4 : index
    %6 = arith.addi %2, %5 : index
    %7 = arith.index_cast %6 : index to i32
    %c28_i32 = arith.constant 28 : i32
    %8 = arith.subi %c28_i32, %7 : i32
    %9 = arith.shli %in_0, %8 : i32
    %10 = arith.shrsi %9, %c28_i32 : i32
    %11 = arith.sitofp %10 : i32 to f32
    %12 = arith.sitofp %in : i8 to f32
    %13 = arith.mulf %in_1, %in_2 : f32
    %14 = arith.mulf %12, %11 : f32
    %15 = arith.mulf %14, %13 : f32
    %16 = arith.addf %out, %15 : f32
    linalg.yield %16 : f32
  }
  return
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, (d2 floordiv 32) * 4 + (d2 mod 16) floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 128)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 128)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>

// int4, groups of 128: a step is four blocks, one zmm of packed bytes
// (words [k / 8, + 16)); its low nibbles and its high nibbles (the bytes
// shifted down by 4 as i16 lanes) are each a vpdpbusd operand, against the
// two halves of the prepared 128 activation bytes (low halves of the four
// blocks, then high halves).
// CHECK-LABEL: func.func @int4_groups_of_128(
// CHECK-SAME:      %[[A:[^:]+]]: memref<1x128xi8>, %[[W:[^:]+]]: memref<8x16xi32>
// CHECK:         %[[AV:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] : memref<1x128xi8>, vector<128xi8>
// CHECK:         %[[AS:.*]] = vector.shuffle %[[AV]], %[[AV]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32, {{.*}}, 111, 16, 17, {{.*}}, 126, 127] : vector<128xi8>, vector<128xi8>
// CHECK:         vector.extract_strided_slice %[[AS]] {offsets = [0], sizes = [64], strides = [1]}
// CHECK:         vector.extract_strided_slice %[[AS]] {offsets = [64], sizes = [64], strides = [1]}
// CHECK:         scf.for %[[G:.*]] = %{{.*}} step %c128{{[_0-9]*}} iter_args
// CHECK:           scf.for %[[K:.*]] = %[[G]] to %{{.*}} step %c128{{[_0-9]*}} iter_args
// CHECK:             %[[P0:.*]] = vector.load %{{.*}}[%{{.*}}, %[[K]]] : memref<1x128xi8>, vector<64xi8>
// CHECK:             %[[K64:.*]] = arith.addi %[[K]], %c64{{[_0-9]*}}
// CHECK:             %[[P1:.*]] = vector.load %{{.*}}[%{{.*}}, %[[K64]]] : memref<1x128xi8>, vector<64xi8>
// CHECK:             %[[WV:.*]] = vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<8x16xi32>, vector<16xi32>
// CHECK:             %[[LO:.*]] = vector.bitcast %[[WV]] : vector<16xi32> to vector<64xi8>
// CHECK:             %[[SH:.*]] = arith.shrui %{{.*}}, %{{.*}} : vector<32xi16>
// CHECK:             %[[HI:.*]] = vector.bitcast %[[SH]] : vector<32xi16> to vector<64xi8>
// CHECK:             %[[LN:.*]] = arith.andi %[[LO]], %{{.*}} : vector<64xi8>
// CHECK:             %[[LU:.*]] = arith.xori %[[LN]], %{{.*}} : vector<64xi8>
// CHECK:             %[[HN:.*]] = arith.andi %[[HI]], %{{.*}} : vector<64xi8>
// CHECK:             %[[HU:.*]] = arith.xori %[[HN]], %{{.*}} : vector<64xi8>
// CHECK:             %[[D0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[LU]], %[[P0]])
// CHECK:             llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[D0]], %[[HU]], %[[P1]])
// NOVNNI-LABEL: func.func @int4_groups_of_128(
// NOVNNI:         linalg.generic
func.func @int4_groups_of_128(%a: memref<1x128xi8>, %w: memref<8x16xi32>, %s: memref<8x1xf32>, %r: memref<1x1xf32>, %c: memref<1x8xf32>) {
  linalg.generic {indexing_maps = [#map, #map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w, %s, %r : memref<1x128xi8>, memref<8x16xi32>, memref<8x1xf32>, memref<1x1xf32>) outs(%c : memref<1x8xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 4 : i64, group = 128 : i64}} {
  ^bb0(%in: i8, %in_0: i32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %1 = arith.remui %0, %c4 : index
    %c8 = arith.constant 8 : index
    %2 = arith.muli %c8, %1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %3 = arith.remui %0, %c32 : index
    %4 = arith.divui %3, %c16 : index
    %5 = arith.muli %c4, %4 : index
    %6 = arith.addi %2, %5 : index
    %7 = arith.index_cast %6 : index to i32
    %c28_i32 = arith.constant 28 : i32
    %8 = arith.subi %c28_i32, %7 : i32
    %9 = arith.shli %in_0, %8 : i32
    %10 = arith.shrsi %9, %c28_i32 : i32
    %11 = arith.sitofp %10 : i32 to f32
    %12 = arith.sitofp %in : i8 to f32
    %13 = arith.mulf %in_1, %in_2 : f32
    %14 = arith.mulf %12, %11 : f32
    %15 = arith.mulf %14, %13 : f32
    %16 = arith.addf %out, %15 : f32
    linalg.yield %16 : f32
  }
  return
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2 floordiv 8, d1 mod 16)>
#map2 = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2 floordiv 32, d1 mod 16)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 32)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>

// Interleaved int4 (attn-cpu-quantize-weights{interleave-columns=16}): a
// tile is a row tile times 16 columns (N = 20: one whole block, then 4
// columns of the second). The row tile's bytes are read from A in place
// (k order: no copy, no shuffle); only the offsets are prepared. A word of
// 16 weight rows at a time: its low nibbles and its
// nibbles shifted down by 4 (as i32 lanes), masked and with their sign
// bits flipped, are two vpdpbusd operands against the row's 4 activation
// bytes at k and k + 4, broadcast to every lane, into the row's integer
// sum. Per group: the 16 columns' scales, one vector, times the row scale;
// the sum converted and offset, then one FMA. A whole tile adds its vectors to C's rows; the last tile stores its
// 4 columns one at a time.
// CHECK-LABEL: func.func @interleaved_int4(
// CHECK-SAME:      %[[A:[^:]+]]: memref<5x64xi8>, %[[W:[^:]+]]: memref<2x8x16xi32>, %[[S:[^:]+]]: memref<2x2x16xf32>, %[[R:[^:]+]]: memref<5x2xf32>, %[[C:[^:]+]]: memref<5x20xf32>
// CHECK-NOT:     memref.alloca() {{.*}} : memref<4x64xi8>
// CHECK-NOT:     vector.shuffle
// CHECK:         %[[OFFS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK-NOT:     vector.store
// CHECK:         memref.store %{{.*}}, %[[OFFS]]
// CHECK:         scf.for %[[WI:.*]] = %{{.*}} to %{{.*}} step %c1{{[_0-9]*}} iter_args({{.*}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:           %[[PW:.*]] = vector.load %[[W]][%{{.*}}, %[[WI]], %{{.*}}] : memref<2x8x16xi32>, vector<16xi32>
// CHECK:           %[[HIW:.*]] = arith.shrui %[[PW]], %{{.*}} : vector<16xi32>
// CHECK:           %[[LN:.*]] = arith.andi %[[PW]], %{{.*}} : vector<16xi32>
// CHECK:           %[[LU:.*]] = arith.xori %[[LN]], %{{.*}} : vector<16xi32>
// CHECK:           %[[HN:.*]] = arith.andi %[[HIW]], %{{.*}} : vector<16xi32>
// CHECK:           %[[HU:.*]] = arith.xori %[[HN]], %{{.*}} : vector<16xi32>
// CHECK:           %[[K0:.*]] = arith.muli %[[WI]], %c8{{[_0-9]*}}
// CHECK:           %[[LB:.*]] = vector.bitcast %[[LU]] : vector<16xi32> to vector<64xi8>
// CHECK:           %[[X4:.*]] = vector.load %[[A]][%{{.*}}, %[[K0]]] : memref<5x64xi8>, vector<4xi8>
// CHECK:           vector.bitcast %[[X4]] : vector<4xi8> to vector<1xi32>
// CHECK:           %[[XB:.*]] = vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK:           %[[XBB:.*]] = vector.bitcast %[[XB]] : vector<16xi32> to vector<64xi8>
// CHECK:           llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[LB]], %[[XBB]])
// CHECK:           %[[HB:.*]] = vector.bitcast %[[HU]] : vector<16xi32> to vector<64xi8>
// CHECK:           %[[K4:.*]] = arith.addi %[[K0]], %c4{{[_0-9]*}}
// CHECK:           vector.load %[[A]][%{{.*}}, %[[K4]]] : memref<5x64xi8>, vector<4xi8>
// CHECK:           llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[HB]], %{{.*}})
// CHECK:         %[[SV:.*]] = vector.load %[[S]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x2x16xf32>, vector<16xf32>
// CHECK:         %[[RS:.*]] = memref.load %[[R]][%{{.*}}, %{{.*}}] : memref<5x2xf32>
// CHECK:         %[[F:.*]] = arith.sitofp %{{.*}}#0 : vector<16xi32> to vector<16xf32>
// CHECK:         %[[OFFSET:.*]] = arith.addf %[[F]], %{{.*}} : vector<16xf32>
// CHECK:         %[[RV:.*]] = vector.broadcast %[[RS]] : f32 to vector<16xf32>
// CHECK:         %[[SR:.*]] = arith.mulf %[[SV]], %[[RV]] : vector<16xf32>
// CHECK:         vector.fma %[[OFFSET]], %[[SR]], %{{.*}} : vector<16xf32>
// CHECK:       %[[OLD:.*]] = vector.load %[[C]][%{{.*}}, %{{.*}}] : memref<5x20xf32>, vector<16xf32>
// CHECK:       %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : vector<16xf32>
// CHECK:       vector.store %[[NEW]], %[[C]][%{{.*}}, %{{.*}}] : memref<5x20xf32>, vector<16xf32>
// CHECK:       vector.extract %{{.*}}[3] : f32 from vector<16xf32>
// CHECK:       memref.store %{{.*}}, %[[C]]
// CHECK-NOT:   vector.extract %{{.*}}[4] : f32 from vector<16xf32>
// CHECK:       return
// NOVNNI-LABEL: func.func @interleaved_int4(
// NOVNNI:         linalg.generic
func.func @interleaved_int4(%a: memref<5x64xi8>, %w: memref<2x8x16xi32>, %s: memref<2x2x16xf32>, %r: memref<5x2xf32>, %c: memref<5x20xf32>) {
  linalg.generic {indexing_maps = [#map, #map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w, %s, %r : memref<5x64xi8>, memref<2x8x16xi32>, memref<2x2x16xf32>, memref<5x2xf32>) outs(%c : memref<5x20xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 4 : i64, group = 32 : i64, interleave = 16 : i64}} {
  ^bb0(%in: i8, %in_0: i32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %1 = arith.remui %0, %c4 : index
    %c8 = arith.constant 8 : index
    %2 = arith.muli %c8, %1 : index
    %3 = arith.remui %0, %c8 : index
    %4 = arith.divui %3, %c4 : index
    %5 = arith.muli %c4, %4 : index
    %6 = arith.addi %2, %5 : index
    %7 = arith.index_cast %6 : index to i32
    %c28_i32 = arith.constant 28 : i32
    %8 = arith.subi %c28_i32, %7 : i32
    %9 = arith.shli %in_0, %8 : i32
    %10 = arith.shrsi %9, %c28_i32 : i32
    %11 = arith.sitofp %10 : i32 to f32
    %12 = arith.sitofp %in : i8 to f32
    %13 = arith.mulf %in_1, %in_2 : f32
    %14 = arith.mulf %12, %11 : f32
    %15 = arith.mulf %14, %13 : f32
    %16 = arith.addf %out, %15 : f32
    linalg.yield %16 : f32
  }
  return
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 64)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 64)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>

// A row of more than 8 groups (here 10): the group loop asks LLVM to unroll
// it 4 groups at a time instead of fully; up to 8 groups it carries no
// annotation.
// CHECK: #[[UNROLL:.+]] = #llvm.loop_unroll<count = 4 : i32>
// CHECK: #[[ANN:.+]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @ten_groups(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c640{{[_0-9]*}} step %c64{{[_0-9]*}} iter_args
// CHECK:           llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK:         } {loop_annotation = #[[ANN]]}
// The annotation reaches the loop's latch when the loops become branches.
// LATCH: #[[LANN:.+]] = #llvm.loop_annotation<unroll = #{{.*}}>
// LATCH-LABEL: func.func @ten_groups(
// LATCH:         cf.br ^{{.*}} {loop_annotation = #[[LANN]]}
// CHECK-LABEL: func.func @eight_groups(
// CHECK-NOT:     loop_annotation
// CHECK:         return
// NOVNNI-LABEL: func.func @ten_groups(
// NOVNNI:         linalg.generic
func.func @ten_groups(%a: memref<1x640xi8>, %w: memref<8x160xi32>, %s: memref<8x10xf32>, %r: memref<1x10xf32>, %c: memref<1x8xf32>) {
  linalg.generic {indexing_maps = [#map, #map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w, %s, %r : memref<1x640xi8>, memref<8x160xi32>, memref<8x10xf32>, memref<1x10xf32>) outs(%c : memref<1x8xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 8 : i64, group = 64 : i64}} {
  ^bb0(%in: i8, %in_0: i32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %1 = arith.remui %0, %c4 : index
    %c8 = arith.constant 8 : index
    %2 = arith.muli %c8, %1 : index
    %3 = arith.index_cast %2 : index to i32
    %c24_i32 = arith.constant 24 : i32
    %4 = arith.subi %c24_i32, %3 : i32
    %5 = arith.shli %in_0, %4 : i32
    %6 = arith.shrsi %5, %c24_i32 : i32
    %7 = arith.sitofp %6 : i32 to f32
    %8 = arith.sitofp %in : i8 to f32
    %9 = arith.mulf %in_1, %in_2 : f32
    %10 = arith.mulf %8, %7 : f32
    %11 = arith.mulf %10, %9 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  }
  return
}

func.func @eight_groups(%a: memref<1x512xi8>, %w: memref<8x128xi32>, %s: memref<8x8xf32>, %r: memref<1x8xf32>, %c: memref<1x8xf32>) {
  linalg.generic {indexing_maps = [#map, #map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w, %s, %r : memref<1x512xi8>, memref<8x128xi32>, memref<8x8xf32>, memref<1x8xf32>) outs(%c : memref<1x8xf32>) attrs =  {attn.woq_matmul = {activations = 8 : i64, bits = 8 : i64, group = 64 : i64}} {
  ^bb0(%in: i8, %in_0: i32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = linalg.index 2 : index
    %c4 = arith.constant 4 : index
    %1 = arith.remui %0, %c4 : index
    %c8 = arith.constant 8 : index
    %2 = arith.muli %c8, %1 : index
    %3 = arith.index_cast %2 : index to i32
    %c24_i32 = arith.constant 24 : i32
    %4 = arith.subi %c24_i32, %3 : i32
    %5 = arith.shli %in_0, %4 : i32
    %6 = arith.shrsi %5, %c24_i32 : i32
    %7 = arith.sitofp %6 : i32 to f32
    %8 = arith.sitofp %in : i8 to f32
    %9 = arith.mulf %in_1, %in_2 : f32
    %10 = arith.mulf %8, %7 : f32
    %11 = arith.mulf %10, %9 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  }
  return
}
