// RUN: not attn-opt %s --attn-tile="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not attn-opt %s --attn-tile="block-q=-1" 2>&1 | FileCheck %s --check-prefix=BLOCKQ
// RUN: not attn-opt %s --attn-tile="vector-width=12" 2>&1 | FileCheck %s --check-prefix=VL
// RUN: not attn-opt %s --attn-tile="simd-width=6" 2>&1 | FileCheck %s --check-prefix=SIMD
// RUN: not attn-opt %s --attn-tile="target=cuda threads=2048" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not attn-opt %s --attn-tile="target=cpu threads=64" 2>&1 | FileCheck %s --check-prefix=CPUTHREADS
// RUN: not attn-opt %s --attn-tile="target=cuda row-tile=4" 2>&1 | FileCheck %s --check-prefix=CUDAROW
// RUN: not attn-opt %s --attn-tile="block-k=1099511627776" 2>&1 | FileCheck %s --check-prefix=BLOCKK
// RUN: not attn-opt %s --attn-tile="row-tile=65" 2>&1 | FileCheck %s --check-prefix=ROW
// RUN: not attn-opt %s --attn-tile="l2-kib=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=L2
// RUN: not attn-opt %s --attn-tile="target=cuda warp-n-tiles=17" 2>&1 | FileCheck %s --check-prefix=WARP

// Invalid options: one error on the function, no IR. 0 means "choose", so
// only negative sizes are invalid; options of the other target are errors
// rather than silently ignored.

// TARGET: attn-opt: for the --target option: unknown target 'tpu' (expected cpu or cuda)
// TARGET-NOT: {{^}}module
// BLOCKQ: attn-tile-invalid-options.mlir:[[@LINE+15]]:1: error: attn-tile: block-q must be >= 0 (0 = choose), got -1
// BLOCKQ-NOT: {{^}}module
// VL: attn-tile-invalid-options.mlir:[[@LINE+13]]:1: error: attn-tile: vector-width must be a power of two, got 12
// VL-NOT: {{^}}module
// SIMD: error: attn-tile: simd-width must be a power of two, got 6
// THREADS: error: attn-tile: threads must be at most 1024, got 2048
// CPUTHREADS: error: attn-tile: warp-n-tiles and threads do not apply to target=cpu
// CUDAROW: error: attn-tile: the CPU matmul and CPU model options do not apply to target=cuda
// Upper bounds: the #attn.tile limits, and for the CPU model sizes no real
// machine reaches (so the cost model's products stay in range).
// BLOCKK: error: attn-tile: block-k must be at most 4096, got 1099511627776
// ROW: error: attn-tile: row-tile must be at most 64, got 65
// L2: error: attn-tile: l2-kib must be at most 1048576, got 9223372036854775807
// WARP: error: attn-tile: warp-n-tiles must be at most 16, got 17

func.func @f(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %y = attn.linear %x, %w : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
