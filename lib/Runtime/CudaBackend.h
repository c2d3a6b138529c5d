//===- CudaBackend.h - CUDA driver access for attnrt ------------*- C++ -*-===//
//
// The CUDA driver (libcuda.so.1) is loaded with dlopen on first use; nothing
// links against it. The same state serves the runtime (weight upload, input
// and output copies) and the mgpu* entry points compiled models call.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_CUDABACKEND_H
#define ATTNC_LIB_RUNTIME_CUDABACKEND_H

#include <cstddef>
#include <mutex>
#include <string>

namespace attnrt {
namespace cuda {

/// Loads the driver, initializes it and makes the default device's primary
/// context current on this thread. On failure `reason` completes the
/// sentence "this model was compiled for CUDA but ...", e.g. "no CUDA driver
/// was found (libcuda.so.1: cannot open shared object file: ...)". The
/// outcome of the first attempt is remembered.
bool ensureInitialized(std::string &reason);

/// Device memory owned by the runtime (not pooled). Errors are full messages
/// like "attnrt: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY".
bool allocDevice(size_t bytes, void **out, std::string &err);
void freeDevice(void *ptr);
bool copyToDevice(void *dst, const void *src, size_t bytes, std::string &err);
bool copyFromDevice(void *dst, const void *src, size_t bytes, std::string &err);
/// cuCtxSynchronize; afterwards every pooled block is reusable on any stream.
bool synchronize(std::string &err);

/// Held by the runtime around each context's device work (copies,
/// allocations, a run's capture, launches and synchronization, graph
/// changes): the error slot below, cuCtxSynchronize and stream capture are
/// per process, so runs from different threads take turns on the device.
std::recursive_mutex &deviceMutex();

/// The error slot the mgpu* functions record their first failure in. Returns
/// true (and the message) if an error is pending, and clears it.
bool takePendingError(std::string &msg);

struct PoolStats {
  size_t driverAllocations = 0; ///< cuMemAlloc calls made by mgpuMemAlloc.
  size_t cachedBlocks = 0;      ///< Freed blocks waiting for reuse.
  size_t liveBlocks = 0;        ///< Pooled blocks currently handed out.
};
PoolStats poolStats();

/// The tensor maps mgpuTensorMapEncodeTiledMemref encoded and keeps.
size_t tensorMapCount();

/// CUDA graphs. A model invocation run between beginCapture and endCapture
/// on one thread is recorded, not executed: every stream the mgpu* functions
/// are given (the null stream included) is one capture stream, stream and
/// event synchronization are skipped (one stream orders everything), and
/// pooled blocks freed and modules unloaded stay with the graph, whose fixed
/// addresses they are. beginCapture fails (with why) if the driver lacks the
/// graph API or refuses to capture. endCapture always ends the capture; it
/// returns the instantiated graph, or null (with why) if capture failed.
/// launchGraph enqueues one replay (synchronize() waits for it);
/// destroyGraph waits for it, then releases it and what it kept.
struct Graph;
bool beginCapture(std::string &why);
Graph *endCapture(std::string &why);
bool launchGraph(Graph *g, std::string &err);
void destroyGraph(Graph *g);

/// Tests only: forget the loaded driver, the pool and any pending error, and
/// load `driverPath` (default "libcuda.so.1" when null) on next use. The old
/// library stays loaded and pooled memory is not freed.
void resetForTesting(const char *driverPath);

} // namespace cuda
} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_CUDABACKEND_H
