// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-cache-write))" \
// RUN:   | FileCheck %s
// RUN: attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-cache-write{block-threads=32}))" \
// RUN:   | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-gpu-cache-write{block-threads=0}))" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD

// attn.cache_write becomes one gpu.launch on buffers, one thread per element
// of the new rows: grid (ceil(T * D / threads), H, B). Each thread reads its
// sequence's position on the device, clamps it into [0, L - T] and stores
// its element into the cache buffer, which is the cache tensor's own buffer
// (a writable to_buffer) and the result (to_tensor restrict of it). Numerics:
// test/Integration/GPU/cache-write-emulation.test.

// A decode step: T = 1, D = 64, L = 16: 64 threads, one block per (h, b).
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[CACHE:[^:]+]]: tensor<2x4x16x64xf32>, %[[NEW:[^:]+]]: tensor<2x4x1x64xf32>, %[[POS:[^:]+]]: tensor<2xi64>)
// CHECK-NOT:     attn.cache_write
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C15:.*]] = arith.constant 15 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[NB:.*]] = bufferization.to_buffer %[[NEW]] read_only : tensor<2x4x1x64xf32> to memref<2x4x1x64xf32>
// CHECK:         %[[PB:.*]] = bufferization.to_buffer %[[POS]] read_only : tensor<2xi64> to memref<2xi64>
// CHECK:         %[[CB:.*]] = bufferization.to_buffer %[[CACHE]] : tensor<2x4x16x64xf32> to memref<2x4x16x64xf32>
// CHECK:         gpu.launch blocks(%[[BX:.*]], %[[HEAD:.*]], %[[SEQ:.*]]) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C4]], %{{.*}} = %[[C2]]) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C64]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:           %[[BASE:.*]] = arith.muli %[[BX]], %[[C64]]
// CHECK:           %[[FLAT:.*]] = arith.addi %[[BASE]], %[[TID]]
// CHECK:           %[[T:.*]] = arith.divui %[[FLAT]], %[[C64]]
// CHECK:           %[[D:.*]] = arith.remui %[[FLAT]], %[[C64]]
// CHECK:           %[[P64:.*]] = memref.load %[[PB]][%[[SEQ]]] : memref<2xi64>
// CHECK:           %[[P:.*]] = arith.index_cast %[[P64]] : i64 to index
// CHECK:           %[[PLO:.*]] = arith.maxsi %[[P]], %[[C0]]
// CHECK:           %[[PC:.*]] = arith.minsi %[[PLO]], %[[C15]]
// CHECK:           %[[X:.*]] = memref.load %[[NB]][%[[SEQ]], %[[HEAD]], %[[T]], %[[D]]]
// CHECK:           %[[ROW:.*]] = arith.addi %[[PC]], %[[T]]
// CHECK:           memref.store %[[X]], %[[CB]][%[[SEQ]], %[[HEAD]], %[[ROW]], %[[D]]]
// CHECK-NOT:       scf.if
// CHECK:           gpu.terminator
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[CB]] restrict writable : memref<2x4x16x64xf32> to tensor<2x4x16x64xf32>
// CHECK:         return %[[R]]
// SMALL-LABEL: func.func @decode(
// SMALL:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c4, %{{.*}} = %c2) threads({{.*}}) in (%{{.*}} = %c32, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
func.func @decode(%cache: tensor<2x4x16x64xf32>, %new: tensor<2x4x1x64xf32>,
                  %pos: tensor<2xi64>) -> tensor<2x4x16x64xf32> {
  %0 = attn.cache_write %new into %cache at %pos : tensor<2x4x1x64xf32>, tensor<2x4x16x64xf32>, tensor<2xi64>
  return %0 : tensor<2x4x16x64xf32>
}

// -----

// Several tokens whose T * D (3 * 24 = 72) the block (32 threads with
// block-threads=32) does not divide: the last block's extra threads store
// nothing. f16, i32 positions; clamped into [0, 8 - 3].
// CHECK-LABEL: func.func @prefill_f16(
// CHECK:         gpu.launch
// CHECK:           memref.load %{{.*}} : memref<1xi32>
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           arith.minsi %{{.*}}, %c5
// CHECK-NOT:       scf.if
// CHECK:           memref.store %{{.*}} : memref<1x2x8x24xf16>
// SMALL-LABEL: func.func @prefill_f16(
// SMALL:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c3, %{{.*}} = %c2, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c32,
// SMALL:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c72
// SMALL:           scf.if %[[IN]] {
// SMALL:             memref.store
// SMALL:           }
// SMALL:           gpu.terminator
func.func @prefill_f16(%cache: tensor<1x2x8x24xf16>, %new: tensor<1x2x3x24xf16>,
                       %pos: tensor<1xi32>) -> tensor<1x2x8x24xf16> {
  %0 = attn.cache_write %new into %cache at %pos : tensor<1x2x3x24xf16>, tensor<1x2x8x24xf16>, tensor<1xi32>
  return %0 : tensor<1x2x8x24xf16>
}

// -----

// Other ops are left alone.
// CHECK-LABEL: func.func @no_cache_write(
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @no_cache_write(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// BAD: attn-gpu-cache-write: block-threads must be in [1, 1024]

// -----

// A step of a run-time token count T (the one-run prefill): the grid's x
// extent ceil(T * 64 / 128) is computed on the host from the rows' run-time
// size, every thread checks that it has an element, the position is clamped
// into [0, L - T] and a row past the cache's end (T > L) is dropped.
// CHECK-LABEL: func.func @dynamic_tokens(
// CHECK-SAME:    %[[CACHE:[^:]+]]: tensor<2x4x16x64xf32>, %[[NEW:[^:]+]]: tensor<2x4x?x64xf32>, %[[POS:[^:]+]]: tensor<2xi64>)
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C127:.*]] = arith.constant 127 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK:         %[[NB:.*]] = bufferization.to_buffer %[[NEW]] read_only : tensor<2x4x?x64xf32> to memref<2x4x?x64xf32>
// CHECK:         %[[CB:.*]] = bufferization.to_buffer %[[CACHE]] : tensor<2x4x16x64xf32> to memref<2x4x16x64xf32>
// CHECK:         %[[T:.*]] = memref.dim %[[NB]], %[[C2]] : memref<2x4x?x64xf32>
// CHECK:         %[[N:.*]] = arith.muli %[[T]], %[[C64]]
// CHECK:         %[[UP:.*]] = arith.addi %[[N]], %[[C127]]
// CHECK:         %[[GRID:.*]] = arith.divui %[[UP]], %[[C128]]
// CHECK:         gpu.launch blocks(%[[BX:.*]], %[[HEAD:.*]], %[[SEQ:.*]]) in (%{{.*}} = %[[GRID]], {{.*}} threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]],
// CHECK:           %[[FLAT:.*]] = arith.addi
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[FLAT]], %[[N]]
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[PLO:.*]] = arith.maxsi
// CHECK:             %[[LAST:.*]] = arith.subi %[[C16]], %[[T]]
// CHECK:             %[[PC:.*]] = arith.minsi %[[PLO]], %[[LAST]]
// CHECK:             %[[ROW:.*]] = arith.addi %[[PC]],
// CHECK:             %[[FITS:.*]] = arith.cmpi ult, %[[ROW]], %[[C16]]
// CHECK:             scf.if %[[FITS]] {
// CHECK:               memref.load %[[NB]]
// CHECK:               memref.store {{.*}}, %[[CB]]
// CHECK:         bufferization.to_tensor %[[CB]] restrict writable
func.func @dynamic_tokens(%cache: tensor<2x4x16x64xf32>, %new: tensor<2x4x?x64xf32>,
                          %pos: tensor<2xi64>) -> tensor<2x4x16x64xf32> {
  %0 = attn.cache_write %new into %cache at %pos : tensor<2x4x?x64xf32>, tensor<2x4x16x64xf32>, tensor<2xi64>
  return %0 : tensor<2x4x16x64xf32>
}
