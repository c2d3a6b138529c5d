// RUN: attn-opt %s --attn-to-cpu="cpu-avx512=1" --mlir-print-ir-after=attn-cpu-matmul-kernel -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --attn-to-cpu --mlir-print-ir-after=attn-cpu-matmul-kernel -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT

// With cpu-avx512 (attn-compile sets it on hosts with avx512f), the f32
// GEMM tiles of the transposed weights hold 6 rows x 4 vectors (24 of
// AVX-512's 32 registers): the 12 rows are two 6-row tiles. Without it,
// 4-row tiles (16 accumulators).
// AVX512-LABEL: IR Dump After AttnCpuMatmulKernel
// AVX512:         scf.for %{{.*}} = %c0{{[_0-9]*}} to %c12{{[_0-9]*}} step %c6
// AVX512:           scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// DEFAULT-LABEL: IR Dump After AttnCpuMatmulKernel
// DEFAULT:         scf.for %{{.*}} = %c0{{[_0-9]*}} to %c12{{[_0-9]*}} step %c4
// DEFAULT:           scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
func.func @ffn(%x: tensor<12x64xf32>) -> tensor<12x64xf32> {
  %up = attn.weight "up" : tensor<128x64xf32>
  %down = attn.weight "down" : tensor<64x128xf32>
  %y = attn.ffn %x up(%up) down(%down) activation = relu : (tensor<12x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<12x64xf32>
  return %y : tensor<12x64xf32>
}
