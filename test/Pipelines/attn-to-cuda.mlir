// REQUIRES: cuda-toolkit
// RUN: attn-opt %s --attn-to-cuda="chip=sm_80 format=isa" \
// RUN:   | FileCheck %s --implicit-check-not=gpu.module --implicit-check-not=memref. \
// RUN:       --implicit-check-not=malloc --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %s --attn-to-cuda="chip=sm_80" | FileCheck %s --check-prefix=CUBIN

// A small model (causal sdpa followed by layer_norm) through the whole CUDA
// pipeline. Serializing the kernels needs the CUDA toolkit (libdevice, and
// ptxas for cubins).
//
// Host side: the entry becomes the internal attn_model_forward; it creates a
// stream, allocates its temporaries on the device (mgpuMemAlloc/MemFree on
// that stream), launches every kernel on the stream (gpu.launch_func ops
// stay in the LLVM dialect; the translation to LLVM IR turns them into
// mgpuModuleLoad/mgpuLaunchKernel calls), then synchronizes. No host
// allocation and no memref op is left, all kernels live in one gpu.binary.

// CHECK:       module attributes {attn.entry = @main, attn.manifest = [{{.*}}], gpu.container_module}
// CHECK-LABEL: llvm.func internal @attn_model_forward(
// CHECK:         %[[STREAM:.*]] = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
// CHECK:         %[[TMP:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM]], %{{.*}}) : (i64, !llvm.ptr, i8) -> !llvm.ptr
// CHECK:         gpu.launch_func <%[[STREAM]] : !llvm.ptr> @main_kernel::@main_kernel blocks in
// CHECK:         gpu.launch_func <%[[STREAM]] : !llvm.ptr> @main_kernel::@main_kernel_0 blocks in
// CHECK:         llvm.call @mgpuMemFree(%[[TMP]], %[[STREAM]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK:         llvm.call @mgpuStreamSynchronize(%[[STREAM]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @mgpuStreamDestroy(%[[STREAM]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }

// Device side: one binary holding PTX (format=isa) for sm_80 with every
// kernel as an entry.
// CHECK:       gpu.binary @main_kernel [#gpu.object<#nvvm.target<{{.*}}chip = "sm_80"{{.*}}>, properties = {{.*}}, assembly = "
// CHECK-SAME:    .target sm_80
// CHECK-SAME:    .visible .entry main_kernel(
// CHECK-SAME:    .visible .entry main_kernel_0(
// CHECK-SAME:    ld.param
// CHECK-SAME:    ret;
// CHECK-NOT:   gpu.binary

// CHECK-DAG:   llvm.func @mgpuStreamCreate() -> !llvm.ptr
// CHECK-DAG:   llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
// CHECK-DAG:   llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
// CHECK-DAG:   llvm.func @mgpuStreamSynchronize(!llvm.ptr)
// CHECK-DAG:   llvm.func @mgpuStreamDestroy(!llvm.ptr)

// The CUDA entry keeps memref descriptors (allocated, aligned, offset,
// sizes, strides) for each of the 6 records; attn_model_invoke builds them
// from the manifest shapes.
// CHECK-LABEL: llvm.func @attn_model_invoke(
// CHECK-SAME:    %[[BUFS:[^:]+]]: !llvm.ptr) {
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S5:.*]] = llvm.getelementptr %[[BUFS]][5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[P5:.*]] = llvm.load %[[S5]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.call @attn_model_forward(%[[P0]], %[[P0]], {{.*}}, %[[P5]], %[[P5]], {{.*}}) :
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.mlir.global external constant @attn_model_manifest("attnc-manifest 1\0Atarget cuda\0Aweight ln.weight f32 8\0Aweight ln.bias f32 8\0Ainput input0 f32 1x2x4x8\0Ainput input1 f32 1x2x4x8\0Ainput input2 f32 1x2x4x8\0Aoutput output0 f32 1x2x4x8\0A\00")

// The default format is a cubin (an ELF image made by ptxas).
// CUBIN:       gpu.binary @main_kernel [#gpu.object<#nvvm.target<{{.*}}chip = "sm_80"{{.*}}>, properties = {{.*}}, bin = "\7FELF
// CUBIN-NOT:   gpu.binary

func.func @main(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %g = attn.weight "ln.weight" : tensor<8xf32>
  %b = attn.weight "ln.bias" : tensor<8xf32>
  %0 = attn.sdpa %q, %k, %v causal : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %1 = attn.layer_norm %0, %g, %b : tensor<1x2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %1 : tensor<1x2x4x8xf32>
}
