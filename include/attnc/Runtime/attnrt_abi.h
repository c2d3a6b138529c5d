/*===- attnrt_abi.h - symbols compiled models call ----------------*- C -*-===*
 *
 * The C entry points that code compiled by attnc calls and libattnrt
 * defines. They are the runtime's side of the compiler's lowering, not an
 * API for programs that embed models (that is attnrt.h): their signatures
 * are fixed by upstream MLIR's lowerings or by attnc's own passes. Only the
 * runtime, its tests and the compiler's in-process JIT (the layer search,
 * which must hand them to the execution engine) include this header.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTNC_RUNTIME_ATTNRT_ABI_H
#define ATTNC_RUNTIME_ATTNRT_ABI_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- MLIR GPU runtime entry points (target cuda) -----------------------
 * The functions MLIR's gpu-to-llvm lowering calls, with the signatures of
 * upstream mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp. They report no
 * status: the first failure is recorded and returned by the next attnrt_run,
 * and until then further calls do nothing (allocations return NULL). */
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel, size_t assemblySize);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);
/* nvgpu.tma.create.descriptor (sm_90a TMA): `descriptor` is the ranked
 * memref descriptor of the global tensor; returns the device address of the
 * encoded CUtensorMap (cached per argument set, kept for the process). */
void *mgpuTensorMapEncodeTiledMemref(int64_t tensorRank, void *descriptor,
                                     int64_t dataType, int64_t interleave,
                                     int64_t swizzle, int64_t l2Promotion,
                                     int64_t oobFill, int64_t *boxDims);

/* ---- MLIR generic allocation functions (target cpu) --------------------
 * What finalize-memref-to-llvm{use-generic-functions} calls for the heap
 * buffers of CPU models. Freed blocks are cached by size (up to 1 GiB in
 * all) and reused, so that a model's working set stays mapped across runs.
 * Blocks are 64-byte aligned at least. */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/* ---- Run-time checks in compiled code (target cpu) ---------------------
 * attn-cpu-check-token-ids calls this for an embedding id outside [0, rows):
 * the attnrt_run in progress on this thread then fails with a message
 * naming the batch, position and id (the first one reported). */
void attnrt_report_token_id(int64_t batch, int64_t position, int64_t id,
                            int64_t rows);

#ifdef __cplusplus
}
#endif

#endif /* ATTNC_RUNTIME_ATTNRT_ABI_H */
