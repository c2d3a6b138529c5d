// RUN: attn-opt %s --split-input-file --attn-gpu-tensormap-params | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-tensormap-params --convert-nvgpu-to-nvvm --canonicalize | FileCheck %s --check-prefix=LOWER
// RUN: attn-opt %s --split-input-file --attn-gpu-merge-modules | FileCheck %s --check-prefix=ALIGN

// A tensor map created on the host reaches the outlined kernel as an
// argument of type !nvgpu.tensormap.descriptor, which neither GPU-to-NVVM's
// gpu.func signature conversion nor gpu-to-llvm's launch conversion knows:
// the kernel takes an !llvm.ptr (the device address of the CUtensorMap
// mgpuTensorMapEncodeTiledMemref returns) cast back at its entry, and each
// launch passes the map cast to the pointer. After convert-nvgpu-to-nvvm
// the casts fold: the host passes the encode call's result, the kernel's
// cp.async.bulk.tensor reads its pointer argument (LOWER).
// attn-gpu-merge-modules gives the shared buffers of a kernel that issues
// TMA loads 128-byte alignment (cp.async.bulk.tensor's destination), those
// of other kernels 16 (ALIGN).

!map = !nvgpu.tensormap.descriptor<tensor = memref<4x64x8xf16, #gpu.address_space<workgroup>>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>

// CHECK-LABEL: func.func @host(
// CHECK:         %[[MAP:.*]] = nvgpu.tma.create.descriptor
// CHECK:         %[[PTR:.*]] = builtin.unrealized_conversion_cast %[[MAP]] : !nvgpu.tensormap.descriptor<{{.*}}> to !llvm.ptr
// CHECK:         gpu.launch_func @kernels::@tma blocks in ({{.*}}) threads in ({{.*}}) args(%[[PTR]] : !llvm.ptr, %{{.*}} : index)
// CHECK:       gpu.func @tma(%[[ARG:.*]]: !llvm.ptr, %{{.*}}: index) workgroup(%{{.*}} : memref<4x64x8xf16, #gpu.address_space<workgroup>>) kernel
// CHECK-NEXT:    %[[BACK:.*]] = builtin.unrealized_conversion_cast %[[ARG]] : !llvm.ptr to !nvgpu.tensormap.descriptor<{{.*}}>
// CHECK:         nvgpu.tma.async.load %[[BACK]]
// CHECK:       gpu.func @plain(%{{.*}}: memref<4xf32>) workgroup

// LOWER-LABEL: func.func @host(
// LOWER:         %[[CALL:.*]] = llvm.call @mgpuTensorMapEncodeTiledMemref(
// LOWER-NOT:     unrealized_conversion_cast
// LOWER:         gpu.launch_func @kernels::@tma {{.*}} args(%[[CALL]] : !llvm.ptr,
// LOWER:       gpu.func @tma(%[[ARG:.*]]: !llvm.ptr,
// LOWER:         nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[ARG]],

// ALIGN-LABEL: gpu.func @tma(
// ALIGN-SAME:    workgroup(%{{.*}} : memref<4x64x8xf16, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// ALIGN-LABEL: gpu.func @plain(
// ALIGN-SAME:    workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})

module attributes {gpu.container_module} {
  func.func @host(%a: memref<64x64xf16>, %b: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %e = memref.expand_shape %a [[0], [1, 2]] output_shape [64, 8, 8] : memref<64x64xf16> into memref<64x8x8xf16>
    %t = memref.transpose %e (d0, d1, d2) -> (d1, d0, d2) : memref<64x8x8xf16> to memref<8x64x8xf16, strided<[8, 64, 1]>>
    %u = memref.cast %t : memref<8x64x8xf16, strided<[8, 64, 1]>> to memref<*xf16>
    %map = nvgpu.tma.create.descriptor %u box[%c4, %c64, %c8] : memref<*xf16> -> !map
    gpu.launch_func @kernels::@tma blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%map : !map, %c1 : index)
    gpu.launch_func @kernels::@plain blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%b : memref<4xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @tma(%map: !map, %k: index) workgroup(%smem : memref<4x64x8xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bars = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %bars[%c0], %c1 : !bars
      nvgpu.tma.async.load %map[%c0, %c0, %k], %bars[%c0] to %smem : !map, !bars -> memref<4x64x8xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
    gpu.func @plain(%b: memref<4xf32>) workgroup(%s : memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
