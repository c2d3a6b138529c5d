// RUN: attn-opt %s --attn-to-cuda="stop-after=gpu-mapped chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-to-cuda="stop-after=gpu-mapped chip=sm_90a wgmma=false" | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-to-cuda="stop-after=gpu-mapped chip=sm_90a tma=false" | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s --attn-to-cuda="stop-after=gpu-mapped chip=sm_90a" | FileCheck %s --check-prefix=TMA
// RUN: not attn-opt %s --attn-to-cuda="stop-after=gpu-mapped chip=sm_75" 2>&1 | FileCheck %s --check-prefix=SM75

// attn-to-cuda picks the tensor-core kernels' staging from the chip: cp.async
// (nvgpu.device_async_copy groups, sm_80 and later) for both the GEMM
// (attn-gpu-mma-matmul) and the flash kernel (attn-gpu-flash-attention);
// the kernels' mma.sync m16n8k16 needs sm_80 too, so an older chip is
// refused (the passes' staging=plain remains). Fragments come from ldmatrix. On sm_90a (unless wgmma=false) the GEMM multiplies with warpgroup
// MMA from tiles the same cp.async pipeline stages (tma=false) or, by
// default, that TMA loads (tensor maps created on the host and passed to
// the kernel, mbarrier waits instead of cp.async waits, no proxy fence);
// the flash kernel keeps mma.sync and cp.async.

// SM80:      gpu.module
// SM80:        gpu.func @{{.*}}(
// SM80:          nvgpu.device_async_copy
// SM80:          nvgpu.device_async_wait
// SM80:          nvgpu.ldmatrix
// SM80:          nvgpu.mma.sync
// SM80:        gpu.func @{{.*}}(
// SM80:          nvgpu.device_async_copy
// SM80:          nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// SM90:      gpu.module
// SM90:        gpu.func @{{.*}}(
// SM90-NOT:      nvgpu.ldmatrix
// SM90:          nvgpu.device_async_copy
// SM90:          nvgpu.device_async_wait
// SM90:          nvvm.fence.proxy
// SM90:          nvvm.wgmma.fence.aligned
// SM90:          nvvm.wgmma.mma_async
// SM90-NOT:      nvgpu.mma.sync
// SM90:        gpu.func @{{.*}}(
// SM90:          nvgpu.device_async_copy
// SM90:          nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// SM90:          nvgpu.mma.sync
// TMA:       func.func
// TMA:         nvgpu.tma.create.descriptor
// TMA:         nvgpu.tma.create.descriptor
// TMA:         gpu.launch_func
// TMA-SAME:      args(%{{.*}} : !nvgpu.tensormap.descriptor<{{.*}}>, %{{.*}} : !nvgpu.tensormap.descriptor<{{.*}}>,
// TMA:       gpu.module
// TMA:         gpu.func @{{.*}}(
// TMA-NOT:       nvgpu.device_async
// TMA:           nvgpu.mbarrier.create
// TMA:           nvgpu.tma.async.load
// TMA:           nvgpu.mbarrier.try_wait.parity
// TMA-NOT:       nvvm.fence.proxy
// TMA:           nvvm.wgmma.mma_async
// TMA:        gpu.func @{{.*}}(
// TMA:          nvgpu.device_async_copy
// TMA:          nvgpu.mma.sync
// SM75: attn-opt: for the --chip option: unknown CUDA chip 'sm_75' (expected sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a)

func.func @main(%x: tensor<1x16x32xf16>, %q: tensor<1x2x16x16xf16>, %k: tensor<1x2x16x16xf16>, %v: tensor<1x2x16x16xf16>) -> (tensor<1x16x64xf16>, tensor<1x2x16x16xf16>) {
  %w = attn.weight "proj.weight" : tensor<64x32xf16>
  %0 = attn.linear %x, %w : (tensor<1x16x32xf16>, tensor<64x32xf16>) -> tensor<1x16x64xf16>
  %1 = attn.sdpa %q, %k, %v : tensor<1x2x16x16xf16>, tensor<1x2x16x16xf16>, tensor<1x2x16x16xf16> -> tensor<1x2x16x16xf16>
  return %0, %1 : tensor<1x16x64xf16>, tensor<1x2x16x16xf16>
}
