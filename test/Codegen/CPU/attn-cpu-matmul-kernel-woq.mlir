// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel))" | FileCheck %s
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{int4-lookup=true}))" | FileCheck %s --check-prefix=LOOKUP
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-cpu-matmul-kernel{int4-lookup=true int4-bf16-dot=true}))" | FileCheck %s --check-prefix=BF16

// Weight-only projections as attn-cpu-quantize-weights leaves them (here
// bufferized): the contraction's body unpacks the i32 words of W [N, K]
// (int4: blocks of 32 weights in 16 bytes, byte j holding weight j in its
// low nibble and 16 + j in its high one; int8: one per byte), scales by
// the group's scale and accumulates in f32. The kernel loads the packed
// words as vectors, widens them to f32 in registers, sums each group and
// applies the group's scale once per group; no f32 copy of the weight and
// no scalar loop remain.

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, (d2 floordiv 32) * 4 + (d2 mod 16) floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>

// int4: one load of a block's 16 bytes, sign-extended to 16 i32 lanes; the
// low nibbles (shifted up and back) are weights k .. k + 15, the high
// nibbles (shifted down) k + 16 .. k + 31: no interleave.
// CHECK-LABEL: func.func @int4_groups
// CHECK:         scf.parallel
// CHECK:           scf.for %[[G:.*]] = %{{.*}} to %c64{{[_0-9]*}} step %c32{{[_0-9]*}} iter_args
// CHECK:             scf.for %[[K:.*]] = %[[G]] to %{{.*}} step %c32{{[_0-9]*}} iter_args
// CHECK:               %[[W:.*]] = arith.divui %[[K]], %c8{{[_0-9]*}}
// CHECK:               %[[Q:.*]] = vector.load %arg0[%{{.*}}, %[[W]]] : memref<16x8xi32>, vector<4xi32>
// CHECK:               %[[B:.*]] = vector.bitcast %[[Q]] : vector<4xi32> to vector<16xi8>
// CHECK:               %[[L:.*]] = arith.extsi %[[B]] : vector<16xi8> to vector<16xi32>
// CHECK:               %[[UP:.*]] = arith.shli %[[L]], %[[C28:.*]] : vector<16xi32>
// CHECK:               %[[LO:.*]] = arith.shrsi %[[UP]], %[[C28]] : vector<16xi32>
// CHECK:               %[[HI:.*]] = arith.shrsi %[[L]], %{{.*}} : vector<16xi32>
// CHECK:               %[[FLO:.*]] = arith.sitofp %[[LO]] : vector<16xi32> to vector<16xf32>
// CHECK:               %[[FHI:.*]] = arith.sitofp %[[HI]] : vector<16xi32> to vector<16xf32>
// CHECK:               vector.load %arg2[%{{.*}}, %[[K]]] : memref<2x64xf32>, vector<16xf32>
// CHECK:               vector.fma %{{.*}}, %[[FLO]], %{{.*}} : vector<16xf32>
// CHECK:               %[[K16:.*]] = arith.addi %[[K]], %c16
// CHECK:               vector.load %arg2[%{{.*}}, %[[K16]]] : memref<2x64xf32>, vector<16xf32>
// CHECK:               vector.fma %{{.*}}, %[[FHI]], %{{.*}} : vector<16xf32>
// CHECK:             %[[SI:.*]] = arith.divui %[[G]], %c32{{[_0-9]*}}
// CHECK:             %[[S:.*]] = memref.load %arg1[%{{.*}}, %[[SI]]] : memref<16x2xf32>
// CHECK:             %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK:             vector.fma %{{.*}}, %[[SV]], %{{.*}} : vector<16xf32>
// CHECK:           vector.reduction <add>
// CHECK-NOT:     linalg.generic
// CHECK:         return
// With int4-lookup, each group's scale times the 16 values of a nibble is
// a table; the zero-extended bytes and the bytes shifted down by 4 index
// it (vpermps reads an index's low 4 bits), giving the scaled weights k ..
// k + 15 and k + 16 .. k + 31. The chains run over all groups and are
// summed once, with no scale after the group.
// LOOKUP-LABEL: func.func @int4_groups
// LOOKUP:           scf.for %[[G:.*]] = %{{.*}} to %c64{{[_0-9]*}} step %c32{{[_0-9]*}} iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}})
// LOOKUP:             %[[NIB:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, -8.000000e+00, -7.000000e+00, -6.000000e+00, -5.000000e+00, -4.000000e+00, -3.000000e+00, -2.000000e+00, -1.000000e+00]> : vector<16xf32>
// LOOKUP:             %[[SI:.*]] = arith.divui %[[G]], %c32{{[_0-9]*}}
// LOOKUP:             %[[S:.*]] = memref.load %arg1[%{{.*}}, %[[SI]]] : memref<16x2xf32>
// LOOKUP:             %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// LOOKUP:             %[[T:.*]] = arith.mulf %[[NIB]], %[[SV]] : vector<16xf32>
// LOOKUP:             %[[IN:.*]]:2 = scf.for %[[K:.*]] = %[[G]] to %{{.*}} step %c32{{[_0-9]*}} iter_args(%{{.*}} = %[[A0]], %{{.*}} = %[[A1]])
// LOOKUP:               %[[Q:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<16x8xi32>, vector<4xi32>
// LOOKUP:               %[[B:.*]] = vector.bitcast %[[Q]] : vector<4xi32> to vector<16xi8>
// LOOKUP:               %[[L:.*]] = arith.extui %[[B]] : vector<16xi8> to vector<16xi32>
// LOOKUP:               %[[H:.*]] = arith.shrui %[[L]], %{{.*}} : vector<16xi32>
// LOOKUP:               %[[WLO:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[T]], %[[L]])
// LOOKUP:               %[[WHI:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[T]], %[[H]])
// LOOKUP:               vector.load %arg2[%{{.*}}, %[[K]]] : memref<2x64xf32>, vector<16xf32>
// LOOKUP:               vector.fma %{{.*}}, %[[WLO]], %{{.*}} : vector<16xf32>
// LOOKUP:               vector.fma %{{.*}}, %[[WHI]], %{{.*}} : vector<16xf32>
// LOOKUP:             scf.yield %[[IN]]#0, %[[IN]]#1
// LOOKUP:           %[[SUM:.*]] = arith.addf %{{.*}}#0, %{{.*}}#1 : vector<16xf32>
// LOOKUP:           vector.reduction <add>, %[[SUM]]
// LOOKUP-NOT:     linalg.generic
// LOOKUP:         return
  func.func @int4_groups(%arg0: memref<16x8xi32>, %arg1: memref<16x2xf32>, %arg2: memref<2x64xf32>, %arg3: memref<2x16xf32>) -> memref<2x16xf32> {
    linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg0, %arg1 : memref<2x64xf32>, memref<16x8xi32>, memref<16x2xf32>) outs(%arg3 : memref<2x16xf32>) attrs =  {attn.woq_matmul = {bits = 4 : i64, group = 32 : i64}} {
    ^bb0(%in: f32, %in_0: i32, %in_1: f32, %out: f32):
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
      %12 = arith.mulf %11, %in_1 : f32
      %13 = arith.mulf %in, %12 : f32
      %14 = arith.addf %out, %13 : f32
      linalg.yield %14 : f32
    }
    return %arg3 : memref<2x16xf32>
  }

  // An int4 group of 16 splits a block: the contraction stays a loop nest.
  // CHECK-LABEL: func.func @int4_group_splits_block
  // CHECK:         linalg.generic
  // LOOKUP-LABEL: func.func @int4_group_splits_block
  // LOOKUP:         linalg.generic
  func.func @int4_group_splits_block(%arg0: memref<16x8xi32>, %arg1: memref<16x4xf32>, %arg2: memref<2x64xf32>, %arg3: memref<2x16xf32>) -> memref<2x16xf32> {
    linalg.generic {indexing_maps = [#map, #map1, affine_map<(d0, d1, d2) -> (d1, d2 floordiv 16)>, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg0, %arg1 : memref<2x64xf32>, memref<16x8xi32>, memref<16x4xf32>) outs(%arg3 : memref<2x16xf32>) attrs =  {attn.woq_matmul = {bits = 4 : i64, group = 16 : i64}} {
    ^bb0(%in: f32, %in_0: i32, %in_1: f32, %out: f32):
      %0 = arith.sitofp %in_0 : i32 to f32
      %1 = arith.mulf %0, %in_1 : f32
      %2 = arith.mulf %in, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    return %arg3 : memref<2x16xf32>
  }

// -----

// int4 in groups of 128 with int4-lookup: a load is a zmm of four blocks
// (16 words, 128 weights); nibble p of word l (bits 4p and up, reached by
// a shift, which vpermps then reads the low 4 bits of) is weight
// 32 * (l / 4) + 16 * (p mod 2) + 4 * (l mod 4) + p / 2, lane l of vector
// p. Each row tile first copies its activations into a scratch in that
// order, once for all its columns; the tiles' FMAs read the scratch. The
// 4-row tiles and the single rows after them (M is dynamic) each get one.
// Without int4-lookup the block-per-load kernel stays.
// CHECK-LABEL: func.func @int4_wide_rows
// CHECK-NOT:     memref.alloca
// CHECK:         vector.load %arg0[%{{.*}}, %{{.*}}] : memref<16x32xi32>, vector<4xi32>
// CHECK-NOT:     memref.alloca
// CHECK:         return
// LOOKUP-LABEL: func.func @int4_wide_rows
// LOOKUP:         scf.parallel
// LOOKUP:           %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x256xf32>
// LOOKUP:           scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step %c4
// LOOKUP:             scf.for %[[K:.*]] = %{{.*}} to %c256{{[_0-9]*}} step %c128
// LOOKUP:               %[[ACTS:.*]] = vector.load %arg2[%[[M]], %[[K]]] : memref<?x256xf32>, vector<128xf32>
// LOOKUP:               %[[P:.*]] = vector.shuffle %[[ACTS]], %[[ACTS]] [0, 4, 8, 12, 32, 36, 40, 44, 64, 68, 72, 76, 96, 100, 104, 108, 16, 20, 24, 28, 48, 52, 56, 60, 80, 84, 88, 92, 112, 116, 120, 124, 1, 5, 9, 13, 33, 37, 41, 45, 65, 69, 73, 77, 97, 101, 105, 109, 17, 21, 25, 29, 49, 53, 57, 61, 81, 85, 89, 93, 113, 117, 121, 125, 2, 6, 10, 14, 34, 38, 42, 46, 66, 70, 74, 78, 98, 102, 106, 110, 18, 22, 26, 30, 50, 54, 58, 62, 82, 86, 90, 94, 114, 118, 122, 126, 3, 7, 11, 15, 35, 39, 43, 47, 67, 71, 75, 79, 99, 103, 107, 111, 19, 23, 27, 31, 51, 55, 59, 63, 83, 87, 91, 95, 115, 119, 123, 127] : vector<128xf32>, vector<128xf32>
// LOOKUP:               vector.store %[[P]], %[[ROWS]][%c0{{[_0-9]*}}, %[[K]]] : memref<4x256xf32>, vector<128xf32>
// LOOKUP-COUNT-3:     vector.store %{{.*}}, %[[ROWS]]
// LOOKUP:             scf.for %{{.*}} = %{{.*}} to %c256{{[_0-9]*}} step %c128{{[_0-9]*}} iter_args
// LOOKUP:               %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// LOOKUP:               scf.for %[[KI:.*]] = %{{.*}} to %{{.*}} step %c128{{[_0-9]*}} iter_args
// LOOKUP:                 %[[W:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<16x32xi32>, vector<16xi32>
// LOOKUP-NEXT:            %[[W0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[T]], %[[W]])
// LOOKUP-NEXT:            %[[C4:.*]] = arith.constant dense<4> : vector<16xi32>
// LOOKUP-NEXT:            %[[S1:.*]] = arith.shrui %[[W]], %[[C4]] : vector<16xi32>
// LOOKUP-NEXT:            %[[W1:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[T]], %[[S1]])
// LOOKUP:                 %[[C28:.*]] = arith.constant dense<28> : vector<16xi32>
// LOOKUP-NEXT:            arith.shrui %[[W]], %[[C28]] : vector<16xi32>
// LOOKUP:                 %[[A0:.*]] = vector.load %[[ROWS]][%c0{{[_0-9]*}}, %[[KI]]] : memref<4x256xf32>, vector<16xf32>
// LOOKUP-NEXT:            vector.fma %[[A0]], %[[W0]], %{{.*}} : vector<16xf32>
// LOOKUP:                 %[[K16:.*]] = arith.addi %[[KI]], %c16
// LOOKUP:                 %[[A1:.*]] = vector.load %[[ROWS]][%c0{{[_0-9]*}}, %[[K16]]] : memref<4x256xf32>, vector<16xf32>
// LOOKUP-NEXT:            vector.fma %[[A1]], %[[W1]], %{{.*}} : vector<16xf32>
// LOOKUP:           %[[ROW:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x256xf32>
// LOOKUP:             vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12, 32, 36, 40, 44, 64, 68, 72, 76, 96, 100, 104, 108, 16, 20, 24, 28, 48, 52, 56, 60, 80, 84, 88, 92, 112, 116, 120, 124, 1, 5, 9, 13, 33, 37, 41, 45, 65, 69, 73, 77, 97, 101, 105, 109, 17, 21, 25, 29, 49, 53, 57, 61, 81, 85, 89, 93, 113, 117, 121, 125, 2, 6, 10, 14, 34, 38, 42, 46, 66, 70, 74, 78, 98, 102, 106, 110, 18, 22, 26, 30, 50, 54, 58, 62, 82, 86, 90, 94, 114, 118, 122, 126, 3, 7, 11, 15, 35, 39, 43, 47, 67, 71, 75, 79, 99, 103, 107, 111, 19, 23, 27, 31, 51, 55, 59, 63, 83, 87, 91, 95, 115, 119, 123, 127] : vector<128xf32>, vector<128xf32>
// LOOKUP:             vector.store %{{.*}}, %[[ROW]][%c0{{[_0-9]*}}, %{{.*}}] : memref<1x256xf32>, vector<128xf32>
// LOOKUP:             vector.load %[[ROW]]
// LOOKUP-NOT:     loop_annotation
// LOOKUP-NOT:     linalg.generic
// LOOKUP:         return
// With int4-bf16-dot as well: the rows are rounded to bf16 and copied in
// the order of the 16-bit lanes' nibbles (lane j of vector p: nibble
// 4 * (j mod 2) + p of word j / 2); each column's table is rounded to
// bf16 into both halves of vpermw's 32 entries (vcvtne2ps2bf16 of it
// twice); a zmm of words is 32 16-bit indices, shifted by 4 for each
// next nibble; vdpbf16ps multiplies 32 weights at a time.
// BF16-LABEL: func.func @int4_wide_rows
// BF16:         %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x256xbf16>
// BF16:           %[[ACTS:.*]] = vector.load %arg2[%{{.*}}, %[[K:.*]]] : memref<?x256xf32>, vector<128xf32>
// BF16-NEXT:      %[[R:.*]] = arith.truncf %[[ACTS]] : vector<128xf32> to vector<128xbf16>
// BF16:           %[[P:.*]] = vector.shuffle %[[R]], %[[R]] [0, 2, 4, 6, 8, 10, 12, 14, 32, 34, 36, 38, 40, 42, 44, 46, 64, 66, 68, 70, 72, 74, 76, 78, 96, 98, 100, 102, 104, 106, 108, 110, 16, 18, 20, 22, 24, 26, 28, 30, 48, 50, 52, 54, 56, 58, 60, 62, 80, 82, 84, 86, 88, 90, 92, 94, 112, 114, 116, 118, 120, 122, 124, 126, 1, 3, 5, 7, 9, 11, 13, 15, 33, 35, 37, 39, 41, 43, 45, 47, 65, 67, 69, 71, 73, 75, 77, 79, 97, 99, 101, 103, 105, 107, 109, 111, 17, 19, 21, 23, 25, 27, 29, 31, 49, 51, 53, 55, 57, 59, 61, 63, 81, 83, 85, 87, 89, 91, 93, 95, 113, 115, 117, 119, 121, 123, 125, 127] : vector<128xbf16>, vector<128xbf16>
// BF16-NEXT:      vector.store %[[P]], %[[ROWS]][%c0{{[_0-9]*}}, %[[K]]] : memref<4x256xbf16>, vector<128xbf16>
// BF16:           %[[T32:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// BF16-NEXT:      %[[T16:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[T32]], %[[T32]]) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
// BF16-NEXT:      %[[T:.*]] = vector.bitcast %[[T16]] : vector<32xbf16> to vector<32xi16>
// BF16:           scf.for %[[KI:.*]] = %{{.*}} to %{{.*}} step %c128{{[_0-9]*}} iter_args
// BF16:             %[[W:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] : memref<16x32xi32>, vector<16xi32>
// BF16-NEXT:        %[[WI:.*]] = vector.bitcast %[[W]] : vector<16xi32> to vector<32xi16>
// BF16-NEXT:        %[[L0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"(%[[T]], %[[WI]]) : (vector<32xi16>, vector<32xi16>) -> vector<32xi16>
// BF16-NEXT:        %[[W0:.*]] = vector.bitcast %[[L0]] : vector<32xi16> to vector<32xbf16>
// BF16-NEXT:        %[[C4:.*]] = arith.constant dense<4> : vector<32xi16>
// BF16-NEXT:        %[[S1:.*]] = arith.shrui %[[WI]], %[[C4]] : vector<32xi16>
// BF16-NEXT:        %[[L1:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"(%[[T]], %[[S1]])
// BF16-NEXT:        %[[W1:.*]] = vector.bitcast %[[L1]] : vector<32xi16> to vector<32xbf16>
// BF16:             %[[C12:.*]] = arith.constant dense<12> : vector<32xi16>
// BF16-NEXT:        arith.shrui %[[WI]], %[[C12]] : vector<32xi16>
// BF16:             %[[A0:.*]] = vector.load %[[ROWS]][%c0{{[_0-9]*}}, %[[KI]]] : memref<4x256xbf16>, vector<32xbf16>
// BF16-NEXT:        x86vector.avx512.dot %{{.*}}, %[[A0]], %[[W0]] : vector<32xbf16> -> vector<16xf32>
// BF16:             %[[K32:.*]] = arith.addi %[[KI]], %c32
// BF16:             %[[A1:.*]] = vector.load %[[ROWS]][%c0{{[_0-9]*}}, %[[K32]]] : memref<4x256xbf16>, vector<32xbf16>
// BF16-NEXT:        x86vector.avx512.dot %{{.*}}, %[[A1]], %[[W1]] : vector<32xbf16> -> vector<16xf32>
// BF16-NOT:     vector.fma
// BF16:         return
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, (d2 floordiv 32) * 4 + (d2 mod 16) floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 128)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>
  func.func @int4_wide_rows(%arg0: memref<16x32xi32>, %arg1: memref<16x2xf32>, %arg2: memref<?x256xf32>, %arg3: memref<?x16xf32>) -> memref<?x16xf32> {
    linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg0, %arg1 : memref<?x256xf32>, memref<16x32xi32>, memref<16x2xf32>) outs(%arg3 : memref<?x16xf32>) attrs =  {attn.woq_matmul = {bits = 4 : i64, group = 128 : i64}} {
    ^bb0(%in: f32, %in_0: i32, %in_1: f32, %out: f32):
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
      %12 = arith.mulf %11, %in_1 : f32
      %13 = arith.mulf %in, %12 : f32
      %14 = arith.addf %out, %13 : f32
      linalg.yield %14 : f32
    }
    return %arg3 : memref<?x16xf32>
  }

// -----

// A row of more than 8 groups of 128 (here 10), one zmm load each: the
// group loop asks LLVM to unroll it 4 groups at a time. The block-per-load
// kernel leaves it to LLVM.
// CHECK-LABEL: func.func @int4_wide_ten_groups
// CHECK-NOT:     loop_annotation
// CHECK:         return
// LOOKUP: #[[UNROLL:.+]] = #llvm.loop_unroll<count = 4 : i32>
// LOOKUP: #[[ANN:.+]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// LOOKUP-LABEL: func.func @int4_wide_ten_groups
// LOOKUP:         scf.for %{{.*}} = %{{.*}} to %c1280{{[_0-9]*}} step %c128{{[_0-9]*}} iter_args
// LOOKUP:           llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// LOOKUP:         } {loop_annotation = #[[ANN]]}
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, (d2 floordiv 32) * 4 + (d2 mod 16) floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 128)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>
  func.func @int4_wide_ten_groups(%arg0: memref<16x160xi32>, %arg1: memref<16x10xf32>, %arg2: memref<1x1280xf32>, %arg3: memref<1x16xf32>) -> memref<1x16xf32> {
    linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg0, %arg1 : memref<1x1280xf32>, memref<16x160xi32>, memref<16x10xf32>) outs(%arg3 : memref<1x16xf32>) attrs =  {attn.woq_matmul = {bits = 4 : i64, group = 128 : i64}} {
    ^bb0(%in: f32, %in_0: i32, %in_1: f32, %out: f32):
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
      %12 = arith.mulf %11, %in_1 : f32
      %13 = arith.mulf %in, %12 : f32
      %14 = arith.addf %out, %13 : f32
      linalg.yield %14 : f32
    }
    return %arg3 : memref<1x16xf32>
  }

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 16)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>

// int8 weights are converted as without int4-lookup.
// LOOKUP-LABEL: func.func @int8_groups
// LOOKUP-NOT:     permvar
// LOOKUP:           arith.sitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// LOOKUP-NOT:     permvar
// LOOKUP:         return
// CHECK-LABEL: func.func @int8_groups
// CHECK:           scf.for %[[G:.*]] = %{{.*}} to %c32{{[_0-9]*}} step %c16{{[_0-9]*}} iter_args
// CHECK:             scf.for %[[K:.*]] = %[[G]] to %{{.*}} step %c16{{[_0-9]*}} iter_args
// CHECK:               %[[W:.*]] = arith.divui %[[K]], %c4{{[_0-9]*}}
// CHECK:               %[[Q:.*]] = vector.load %arg0[%{{.*}}, %[[W]]] : memref<16x8xi32>, vector<4xi32>
// CHECK:               %[[B:.*]] = vector.bitcast %[[Q]] : vector<4xi32> to vector<16xi8>
// CHECK:               %[[F:.*]] = arith.sitofp %[[B]] : vector<16xi8> to vector<16xf32>
// CHECK:               vector.fma %{{.*}}, %[[F]], %{{.*}} : vector<16xf32>
// CHECK:             memref.load %arg1[
// CHECK-NOT:     linalg.generic
// CHECK:         return
  func.func @int8_groups(%arg0: memref<16x8xi32>, %arg1: memref<16x2xf32>, %arg2: memref<2x32xf32>, %arg3: memref<2x16xf32>) -> memref<2x16xf32> {
    linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg0, %arg1 : memref<2x32xf32>, memref<16x8xi32>, memref<16x2xf32>) outs(%arg3 : memref<2x16xf32>) attrs =  {attn.woq_matmul = {bits = 8 : i64, group = 16 : i64}} {
    ^bb0(%in: f32, %in_0: i32, %in_1: f32, %out: f32):
      %c4 = arith.constant 4 : index
      %0 = linalg.index 2 : index
      %1 = arith.remui %0, %c4 : index
      %2 = arith.index_cast %1 : index to i32
      %c8_i32 = arith.constant 8 : i32
      %3 = arith.muli %2, %c8_i32 : i32
      %c24_i32 = arith.constant 24 : i32
      %4 = arith.subi %c24_i32, %3 : i32
      %c24_i32_2 = arith.constant 24 : i32
      %5 = arith.shli %in_0, %4 : i32
      %6 = arith.shrsi %5, %c24_i32_2 : i32
      %7 = arith.sitofp %6 : i32 to f32
      %8 = arith.mulf %7, %in_1 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.addf %out, %9 : f32
      linalg.yield %10 : f32
    }
    return %arg3 : memref<2x16xf32>
  }


// -----

// A decode step: one row at run time (M dynamic) leaves 1 x 1 tiles. Their
// k steps are split among four partial accumulators (four independent FMA
// chains over one sequential read of the weight row), summed pairwise
// before the group's scale; the lanes are summed as a tree (reassoc).

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 64)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @int8_decode_chains
// The 4 x 4 tiles for whole blocks of 4 rows come first, with no
// prefetches; then the rows left over, whose tiles prefetch 8192 bytes
// (2048 words) further in a 1-D view of the weight, clamped once per
// column to the last row's start (word 480) so that no load needs a clamp,
// into L2 (locality<2>): each group's one 64-byte line at the group's
// start, none in the k loop.
// CHECK-NOT:     memref.prefetch
// CHECK:             %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<16x32xi32> into memref<512xi32>
// CHECK:             %[[AHEAD:.*]] = arith.addi %{{.*}}, %c2048{{[_0-9]*}} : index
// CHECK:             %[[BASE:.*]] = arith.minui %[[AHEAD]], %c480{{[_0-9]*}} : index
// CHECK:             scf.for %[[G:.*]] = %{{.*}} to %c128{{[_0-9]*}} step %c64{{[_0-9]*}} iter_args
// CHECK:               %[[GW:.*]] = arith.divui %[[G]], %c4{{[_0-9]*}} : index
// CHECK-NEXT:          %[[PA:.*]] = arith.addi %[[BASE]], %[[GW]] : index
// CHECK-NEXT:          memref.prefetch %[[FLAT]][%[[PA]]], read, locality<2>, data : memref<512xi32>
// CHECK-NOT:           memref.prefetch
// CHECK:               %[[IN:.*]]:4 = scf.for %[[K:.*]] = %[[G]] to %{{.*}} step %c64{{[_0-9]*}} iter_args(%[[P0:.*]] = %{{.*}}, %[[P1:.*]] = %{{.*}}, %[[P2:.*]] = %{{.*}}, %[[P3:.*]] = %{{.*}})
// CHECK:               %[[W0:.*]] = arith.divui %[[K]], %c4{{[_0-9]*}}
// CHECK:               vector.load %arg0[%{{.*}}, %[[W0]]] : memref<16x32xi32>, vector<4xi32>
// CHECK-NOT:           memref.prefetch
// CHECK:               %[[F0:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[P0]] : vector<16xf32>
// CHECK-NOT:           memref.prefetch
// CHECK:               %[[K1:.*]] = arith.addi %[[K]], %c16
// CHECK-NOT:           memref.prefetch
// CHECK:               vector.load %arg2[%{{.*}}, %[[K1]]]
// CHECK-NOT:           memref.prefetch
// CHECK:               %[[F1:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[P1]] : vector<16xf32>
// CHECK-NOT:           memref.prefetch
// CHECK:               %[[F2:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[P2]] : vector<16xf32>
// CHECK-NOT:           memref.prefetch
// CHECK:               %[[F3:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[P3]] : vector<16xf32>
// CHECK-NOT:           memref.prefetch
// CHECK:               scf.yield %[[F0]], %[[F1]], %[[F2]], %[[F3]]
// CHECK:             %[[S02:.*]] = arith.addf %[[IN]]#0, %[[IN]]#2
// CHECK:             %[[S13:.*]] = arith.addf %[[IN]]#1, %[[IN]]#3
// CHECK:             %[[S:.*]] = arith.addf %[[S02]], %[[S13]]
// CHECK:             vector.fma %[[S]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:           vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK-NOT:     linalg.generic
// CHECK:         return
  func.func @int8_decode_chains(%arg0: memref<16x32xi32>, %arg1: memref<16x2xf32>, %arg2: memref<?x128xf32>, %arg3: memref<?x16xf32>) -> memref<?x16xf32> {
    linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg0, %arg1 : memref<?x128xf32>, memref<16x32xi32>, memref<16x2xf32>) outs(%arg3 : memref<?x16xf32>) attrs =  {attn.woq_matmul = {bits = 8 : i64, group = 64 : i64}} {
    ^bb0(%in: f32, %in_0: i32, %in_1: f32, %out: f32):
      %c4 = arith.constant 4 : index
      %0 = linalg.index 2 : index
      %1 = arith.remui %0, %c4 : index
      %2 = arith.index_cast %1 : index to i32
      %c8_i32 = arith.constant 8 : i32
      %3 = arith.muli %2, %c8_i32 : i32
      %c24_i32 = arith.constant 24 : i32
      %4 = arith.subi %c24_i32, %3 : i32
      %c24_i32_2 = arith.constant 24 : i32
      %5 = arith.shli %in_0, %4 : i32
      %6 = arith.shrsi %5, %c24_i32_2 : i32
      %7 = arith.sitofp %6 : i32 to f32
      %8 = arith.mulf %7, %in_1 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.addf %out, %9 : f32
      linalg.yield %10 : f32
    }
    return %arg3 : memref<?x16xf32>
  }

// -----

// Groups of 128 int8 weights are two 64-byte lines: a decode tile
// prefetches both at each group's start, 16 words apart.

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 4)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 128)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @int8_decode_two_lines_per_group
// CHECK-NOT:     memref.prefetch
// CHECK:             %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<16x64xi32> into memref<1024xi32>
// CHECK:             %[[AHEAD:.*]] = arith.addi %{{.*}}, %c2048{{[_0-9]*}} : index
// CHECK:             %[[BASE:.*]] = arith.minui %[[AHEAD]], %c960{{[_0-9]*}} : index
// CHECK:             scf.for %[[G:.*]] = %{{.*}} to %c256{{[_0-9]*}} step %c128{{[_0-9]*}} iter_args
// CHECK:               %[[GW:.*]] = arith.divui %[[G]], %c4{{[_0-9]*}} : index
// CHECK-NEXT:          %[[PA:.*]] = arith.addi %[[BASE]], %[[GW]] : index
// CHECK-NEXT:          memref.prefetch %[[FLAT]][%[[PA]]], read, locality<2>, data : memref<1024xi32>
// CHECK:               %[[GW16:.*]] = arith.addi %[[GW]], %c16{{[_0-9]*}} : index
// CHECK-NEXT:          %[[PB:.*]] = arith.addi %[[BASE]], %[[GW16]] : index
// CHECK-NEXT:          memref.prefetch %[[FLAT]][%[[PB]]], read, locality<2>, data : memref<1024xi32>
// CHECK-NOT:           memref.prefetch
// CHECK:               scf.for %{{.*}} = %[[G]] to %{{.*}} step %c64{{[_0-9]*}} iter_args
// CHECK-NOT:     memref.prefetch
// CHECK:         return
  func.func @int8_decode_two_lines_per_group(%arg0: memref<16x64xi32>, %arg1: memref<16x2xf32>, %arg2: memref<?x256xf32>, %arg3: memref<?x16xf32>) -> memref<?x16xf32> {
    linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg0, %arg1 : memref<?x256xf32>, memref<16x64xi32>, memref<16x2xf32>) outs(%arg3 : memref<?x16xf32>) attrs =  {attn.woq_matmul = {bits = 8 : i64, group = 128 : i64}} {
    ^bb0(%in: f32, %in_0: i32, %in_1: f32, %out: f32):
      %c4 = arith.constant 4 : index
      %0 = linalg.index 2 : index
      %1 = arith.remui %0, %c4 : index
      %2 = arith.index_cast %1 : index to i32
      %c8_i32 = arith.constant 8 : i32
      %3 = arith.muli %2, %c8_i32 : i32
      %c24_i32 = arith.constant 24 : i32
      %4 = arith.subi %c24_i32, %3 : i32
      %c24_i32_2 = arith.constant 24 : i32
      %5 = arith.shli %in_0, %4 : i32
      %6 = arith.shrsi %5, %c24_i32_2 : i32
      %7 = arith.sitofp %6 : i32 to f32
      %8 = arith.mulf %7, %in_1 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.addf %out, %9 : f32
      linalg.yield %10 : f32
    }
    return %arg3 : memref<?x16xf32>
  }
