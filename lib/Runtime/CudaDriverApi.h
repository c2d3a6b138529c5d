//===- CudaDriverApi.h - the CUDA driver API subset attnrt uses -*- C++ -*-===//
//
// Shared by the runtime (CudaBackend.cpp, which dlopen()s libcuda.so.1 and
// looks these functions up) and the fake driver of the unit tests
// (test/unit/FakeCuda.cpp, which defines them): one list, so the two cannot
// drift apart.
//
// Types and enum values come from <cuda.h> when the toolkit was found at
// build time (and ATTNRT_NO_CUDA_H is not defined); otherwise from the
// ABI-identical subset below.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_CUDADRIVERAPI_H
#define ATTNC_LIB_RUNTIME_CUDADRIVERAPI_H

#include <cstddef>

#if defined(__has_include) && !defined(ATTNRT_NO_CUDA_H)
#if __has_include(<cuda.h>)
#include <cuda.h>
#define ATTNRT_HAVE_CUDA_H 1
#endif
#endif

#ifndef ATTNRT_HAVE_CUDA_H
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;
typedef int CUjit_option;
typedef int CUfunction_attribute;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef int CUstreamCaptureMode;
typedef unsigned int cuuint32_t;
typedef unsigned long long cuuint64_t;
typedef struct CUtensorMap_st {
  alignas(64) cuuint64_t opaque[16];
} CUtensorMap;
typedef int CUtensorMapDataType;
typedef int CUtensorMapInterleave;
typedef int CUtensorMapSwizzle;
typedef int CUtensorMapL2promotion;
typedef int CUtensorMapFloatOOBfill;
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DISABLE_TIMING = 2,
  CU_MEM_ATTACH_GLOBAL = 1,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};
#endif

// X(field, symbol, parameter list) for every driver function attnrt needs;
// each returns CUresult. `symbol` is the exported name (the _v2 ones where
// cuda.h maps the plain name to them).
#define ATTNRT_CUDA_FUNCTIONS(X)                                               \
  X(Init, cuInit, (unsigned))                                                  \
  X(GetErrorName, cuGetErrorName, (CUresult, const char **))                   \
  X(DeviceGetCount, cuDeviceGetCount, (int *))                                 \
  X(DeviceGet, cuDeviceGet, (CUdevice *, int))                                 \
  X(PrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))       \
  X(CtxSetCurrent, cuCtxSetCurrent, (CUcontext))                               \
  X(CtxSynchronize, cuCtxSynchronize, (void))                                  \
  X(ModuleLoadData, cuModuleLoadData, (CUmodule *, const void *))              \
  X(ModuleLoadDataEx, cuModuleLoadDataEx,                                      \
    (CUmodule *, const void *, unsigned, CUjit_option *, void **))             \
  X(ModuleUnload, cuModuleUnload, (CUmodule))                                  \
  X(ModuleGetFunction, cuModuleGetFunction,                                    \
    (CUfunction *, CUmodule, const char *))                                    \
  X(LaunchKernel, cuLaunchKernel,                                              \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(FuncSetAttribute, cuFuncSetAttribute,                                      \
    (CUfunction, CUfunction_attribute, int))                                   \
  X(StreamCreate, cuStreamCreate, (CUstream *, unsigned))                      \
  X(StreamSynchronize, cuStreamSynchronize, (CUstream))                        \
  X(StreamDestroy, cuStreamDestroy_v2, (CUstream))                             \
  X(StreamWaitEvent, cuStreamWaitEvent, (CUstream, CUevent, unsigned))         \
  X(EventCreate, cuEventCreate, (CUevent *, unsigned))                         \
  X(EventDestroy, cuEventDestroy_v2, (CUevent))                                \
  X(EventSynchronize, cuEventSynchronize, (CUevent))                           \
  X(EventRecord, cuEventRecord, (CUevent, CUstream))                           \
  X(MemAlloc, cuMemAlloc_v2, (CUdeviceptr *, size_t))                          \
  X(MemAllocManaged, cuMemAllocManaged, (CUdeviceptr *, size_t, unsigned))     \
  X(MemFree, cuMemFree_v2, (CUdeviceptr))                                      \
  X(MemcpyAsync, cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream))  \
  X(MemcpyHtoD, cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))          \
  X(MemcpyDtoH, cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                \
  X(MemsetD32Async, cuMemsetD32Async,                                          \
    (CUdeviceptr, unsigned, size_t, CUstream))                                 \
  X(MemsetD16Async, cuMemsetD16Async,                                          \
    (CUdeviceptr, unsigned short, size_t, CUstream))

// The CUDA graph functions (stream capture and replay). Optional: a driver
// without them still runs models, with plain launches.
#define ATTNRT_CUDA_GRAPH_FUNCTIONS(X)                                         \
  X(StreamBeginCapture, cuStreamBeginCapture_v2,                               \
    (CUstream, CUstreamCaptureMode))                                           \
  X(StreamEndCapture, cuStreamEndCapture, (CUstream, CUgraph *))               \
  X(GraphInstantiate, cuGraphInstantiateWithFlags,                             \
    (CUgraphExec *, CUgraph, unsigned long long))                              \
  X(GraphLaunch, cuGraphLaunch, (CUgraphExec, CUstream))                       \
  X(GraphExecDestroy, cuGraphExecDestroy, (CUgraphExec))                       \
  X(GraphDestroy, cuGraphDestroy, (CUgraph))

// The Tensor Memory Accelerator's tensor maps (CUDA 12+). Optional: a driver
// without it runs every model that does not use TMA (sm_90a kernels compiled
// with --no-tma).
#define ATTNRT_CUDA_TMA_FUNCTIONS(X)                                           \
  X(TensorMapEncodeTiled, cuTensorMapEncodeTiled,                              \
    (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,                   \
     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,               \
     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,            \
     CUtensorMapL2promotion, CUtensorMapFloatOOBfill))

#endif // ATTNC_LIB_RUNTIME_CUDADRIVERAPI_H
