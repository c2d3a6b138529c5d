//===- CudaState.h - the CUDA backend's shared state ------------*- C++ -*-===//
//
// What the parts of the CUDA backend share: the loaded driver API, the
// context, the error slot, the device memory pool and tensor map cache
// (CudaBackend.cpp), the stream capture in progress on a thread (used by
// the mgpu* entry points, CudaMgpu.cpp, and the graphs, CudaGraphs.cpp).
// Private to libattnrt.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_CUDASTATE_H
#define ATTNC_LIB_RUNTIME_CUDASTATE_H

#include "CudaDriverApi.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

static_assert(sizeof(CUdeviceptr) == sizeof(void *),
              "device pointers travel as void*");

namespace attnrt {
namespace cuda {

struct Api {
#define ATTNRT_DECLARE(field, symbol, params) CUresult(*field) params = nullptr;
  ATTNRT_CUDA_FUNCTIONS(ATTNRT_DECLARE)
  ATTNRT_CUDA_GRAPH_FUNCTIONS(ATTNRT_DECLARE)
  ATTNRT_CUDA_TMA_FUNCTIONS(ATTNRT_DECLARE)
#undef ATTNRT_DECLARE
  bool hasGraphs() const {
    return StreamBeginCapture && StreamEndCapture && GraphInstantiate &&
           GraphLaunch && GraphExecDestroy && GraphDestroy;
  }
};

/// Pool granularity: allocations are rounded up to this and bucketed by size.
constexpr size_t kPoolGranule = 512;

struct Block {
  CUdeviceptr ptr;
  /// The stream the block was freed on; null once that stream's work is
  /// known to be complete (the block is then reusable on any stream).
  CUstream stream;
};

struct State {
  // Driver and context; written once under initMu, read-only afterwards.
  std::mutex initMu;
  std::atomic<bool> initOk{false};
  bool initAttempted = false;
  std::string initFailure;
  std::string driverPath = "libcuda.so.1";
  Api api;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  int defaultDevice = 0;

  // Error slot.
  std::mutex errMu;
  std::atomic<bool> hasError{false};
  std::string error;
  /// The last module load failure; repeated when a null module is used.
  std::string moduleLoadError;

  // Size-bucketed free-list pool for mgpuMemAlloc.
  std::mutex poolMu;
  std::map<size_t, std::vector<Block>> freeBlocks;
  std::map<CUdeviceptr, size_t> liveBlocks;
  size_t driverAllocations = 0;

  // TMA tensor maps in device memory, by every argument of their encoding:
  // a map only describes an address range, so one encoded for the same
  // arguments is the same map. Encoded once (a model's later runs and its
  // CUDA graph's replays reuse the device copy the first run's launches
  // were given) and kept until the process ends (a captured graph may
  // replay launches that read them at any time).
  std::mutex tensorMapMu;
  std::map<std::vector<uint64_t>, CUdeviceptr> tensorMaps;
};

/// The process's driver state (heap-allocated on first use, never
/// destroyed; see CudaBackend.cpp).
State &state();
/// The driver's name for r, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
std::string errorName(CUresult r);
/// "attnrt: <call> failed: <error name>".
std::string callFailed(const char *call, CUresult r);
/// Records msg in the error slot unless an error is pending.
void recordError(const std::string &msg);
/// Records a failed call; true if r is success.
bool check(CUresult r, const char *call);
/// Initializes if needed and makes the context current on this thread.
bool makeCurrent(std::string &err);
/// Entry of an mgpu* function: false (do nothing) if an error is pending or
/// CUDA cannot be used (which is then recorded).
bool enter();
/// Entry of an mgpu* function releasing a resource: runs even while an error
/// is pending, but only if CUDA was initialized.
bool enterRelease();
/// Marks blocks freed on `stream` (all blocks if null) as reusable anywhere.
void markStreamIdle(CUstream stream, bool all);

/// The stream capture in progress on this thread (see beginCapture): every
/// stream the compiled code names, the null stream included, is the capture
/// stream; pooled blocks it frees and modules it unloads stay with the graph.
struct Capture {
  CUstream stream = nullptr;
  std::vector<void *> allocs;
  std::vector<CUmodule> modules;
};
extern thread_local Capture *tlsCapture;

inline CUstream asStream(void *p) {
  return tlsCapture ? tlsCapture->stream : static_cast<CUstream>(p);
}
inline CUdeviceptr asDevPtr(const void *p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}
inline void *asVoidPtr(CUdeviceptr p) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
}

} // namespace cuda
} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_CUDASTATE_H
