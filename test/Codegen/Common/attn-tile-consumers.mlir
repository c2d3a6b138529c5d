// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-tile{target=cpu simd-width=16 vector-registers=32 l1-kib=32 l2-kib=1024 cores=2 row-tile=2 col-tile=3 column-block=24 block-q=16 block-k=32}),attn-flash-attention,attn-lower-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(attn-cpu-matmul-kernel),canonicalize)" | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-tile{target=cuda}),attn-flash-attention,attn-lower-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(attn-gpu-mma-matmul))" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --split-input-file --attn-to-cpu="stop-after=bufferized" | FileCheck %s --check-prefix=PIPELINE
// RUN: attn-opt %s --split-input-file --attn-to-cpu="stop-after=bufferized tile=0" | FileCheck %s --check-prefix=NOTILE

// The tiles attn-tile chooses reach the passes that tile: through
// attn-lower-to-linalg onto the contraction generic, through one-shot
// bufferization, to attn-cpu-matmul-kernel (2 x 3 register tiles, column
// blocks of 24 instead of its 4 x 4 and 64), and to attn-gpu-mma-matmul
// (32 x 48 gives too few thread blocks for 4 n8 tiles per warp, so one,
// instead of its 4: 2 mma.sync per warp and k step of 32).

// CPU-LABEL: func.func @linear
// CPU-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CPU-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CPU-DAG:     %[[C24:.*]] = arith.constant 24 : index
// CPU:         scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[C2]]) step
// CPU:           arith.muli %[[B]], %[[C24]] : index
// CPU:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C2]] {
// CPU:             scf.for %{{.*}} = %{{.*}} to %[[C24]] step %[[C3]] {
// CPU:               scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CPU-COUNT-6:         vector.fma
// CPU-NOT:     linalg.generic {{.*}}"reduction"
// MMA-LABEL:   func.func @linear
// MMA:           gpu.launch
// MMA:             scf.for
// MMA-COUNT-2:       nvgpu.mma.sync
// MMA-NOT:           nvgpu.mma.sync
// MMA:             gpu.terminator
// The default pipeline's bufferization keeps the attribute.
// PIPELINE-LABEL: func.func @linear
// PIPELINE:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} attrs = {attn.tile = #attn.tile<vector_width = {{[0-9]+}}, row_tile = {{[0-9]+}}, col_tile = {{[0-9]+}}, column_block = {{[0-9]+}}>}
// NOTILE-LABEL:   func.func @linear
// NOTILE-NOT:     attn.tile
func.func @linear(%x: tensor<32x64xf16>, %w: tensor<48x64xf16>) -> tensor<32x48xf16> {
  %y = attn.linear %x, %w : (tensor<32x64xf16>, tensor<48x64xf16>) -> tensor<32x48xf16>
  return %y : tensor<32x48xf16>
}

// -----

// attn-flash-attention blocks by the attribute: 4 query blocks of 16 rows,
// key blocks of 32 (its defaults are 64 x 64); attn.mha hands the
// attribute to the projections and the attention it decomposes into.
// CPU-LABEL: func.func @mha
// CPU:         scf.parallel
// CPU:           arith.muli %{{.*}}, %c24{{(_[0-9]+)?}} : index
// CPU:         scf.forall (%{{.*}}, %{{.*}}) in (4, 4)
// CPU:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32{{(_[0-9]+)?}} {
// CPU:         scf.parallel
// CPU:           arith.muli %{{.*}}, %c24{{(_[0-9]+)?}} : index
func.func @mha(%x: tensor<1x64x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<1x64x64xf32> {
  %y = attn.mha %x weights(%wq, %wk, %wv, %wo) heads = 4 : (tensor<1x64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
  return %y : tensor<1x64x64xf32>
}
