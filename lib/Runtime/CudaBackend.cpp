//===- CudaBackend.cpp - CUDA driver state --------------------------------===//
//
// libcuda.so.1 is dlopen'ed on first use; <cuda.h> (when the toolkit is
// present at build time) only supplies types and enum values. Here: loading
// and initializing the driver, the error slot, and the device calls of the
// runtime itself (CudaBackend.h). The mgpu* entry points compiled models
// call are in CudaMgpu.cpp, CUDA graphs in CudaGraphs.cpp; the state they
// share is in CudaState.h.
//
// Compiled models may load their GPU modules from global constructors (that
// is how gpu.binary is lowered), i.e. before main: all state here is
// heap-allocated on first use and never destroyed, so it is usable from
// constructors and destructors of any order.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaState.h"

#include <dlfcn.h>

namespace attnrt {
namespace cuda {

thread_local Capture *tlsCapture = nullptr;

State &state() {
  static State *s = new State; // Never destroyed, see the file comment.
  return *s;
}

std::string errorName(CUresult r) {
  State &s = state();
  const char *name = nullptr;
  if (s.api.GetErrorName && s.api.GetErrorName(r, &name) == CUDA_SUCCESS &&
      name)
    return name;
  return "CUDA error " + std::to_string(static_cast<int>(r));
}

std::string callFailed(const char *call, CUresult r) {
  return std::string("attnrt: ") + call + " failed: " + errorName(r);
}

void recordError(const std::string &msg) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.errMu);
  if (!s.hasError.load()) {
    s.error = msg;
    s.hasError.store(true);
  }
}

/// Records a failed call; true if r is success.
bool check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS)
    return true;
  recordError(callFailed(call, r));
  return false;
}

namespace {

bool initLocked(State &s, std::string &reason) {
  if (s.initAttempted) {
    reason = s.initFailure;
    return s.initOk.load();
  }
  s.initAttempted = true;
  auto fail = [&](const std::string &why) {
    s.initFailure = why;
    reason = why;
    return false;
  };
  dlerror();
  void *lib = ::dlopen(s.driverPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    return fail("no CUDA driver was found (" +
                std::string(e ? e : s.driverPath.c_str()) + ")");
  }
  Api api;
#define ATTNRT_LOAD(field, symbol, params)                                     \
  api.field = reinterpret_cast<decltype(api.field)>(::dlsym(lib, #symbol));    \
  if (!api.field)                                                              \
    return fail("the CUDA driver " + s.driverPath +                            \
                " lacks " #symbol " (driver too old?)");
  ATTNRT_CUDA_FUNCTIONS(ATTNRT_LOAD)
#undef ATTNRT_LOAD
  // Optional: without them models run with plain launches.
#define ATTNRT_LOAD_OPTIONAL(field, symbol, params)                            \
  api.field = reinterpret_cast<decltype(api.field)>(::dlsym(lib, #symbol));
  ATTNRT_CUDA_GRAPH_FUNCTIONS(ATTNRT_LOAD_OPTIONAL)
  ATTNRT_CUDA_TMA_FUNCTIONS(ATTNRT_LOAD_OPTIONAL)
#undef ATTNRT_LOAD_OPTIONAL
  s.api = api;
  CUresult r = s.api.Init(0);
  if (r == CUDA_ERROR_NO_DEVICE)
    return fail("no CUDA device was found (cuInit failed: " + errorName(r) +
                ")");
  if (r != CUDA_SUCCESS)
    return fail("the CUDA driver failed to initialize (cuInit failed: " +
                errorName(r) + ")");
  int count = 0;
  r = s.api.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS)
    return fail("the CUDA driver failed to initialize (cuDeviceGetCount "
                "failed: " +
                errorName(r) + ")");
  if (count <= 0)
    return fail("no CUDA device was found");
  if (s.defaultDevice < 0 || s.defaultDevice >= count)
    return fail("CUDA device " + std::to_string(s.defaultDevice) +
                " does not exist (" + std::to_string(count) +
                " device(s) found)");
  r = s.api.DeviceGet(&s.device, s.defaultDevice);
  if (r != CUDA_SUCCESS)
    return fail("cuDeviceGet failed: " + errorName(r));
  r = s.api.PrimaryCtxRetain(&s.ctx, s.device);
  if (r != CUDA_SUCCESS)
    return fail("cuDevicePrimaryCtxRetain failed: " + errorName(r));
  r = s.api.CtxSetCurrent(s.ctx);
  if (r != CUDA_SUCCESS)
    return fail("cuCtxSetCurrent failed: " + errorName(r));
  s.initOk.store(true);
  return true;
}

} // namespace

/// Initializes if needed and makes the context current on this thread.
bool makeCurrent(std::string &err) {
  State &s = state();
  if (!s.initOk.load()) {
    std::lock_guard<std::mutex> lock(s.initMu);
    std::string reason;
    if (!initLocked(s, reason)) {
      err = "attnrt: CUDA is unavailable: " + reason;
      return false;
    }
  }
  CUresult r = s.api.CtxSetCurrent(s.ctx);
  if (r != CUDA_SUCCESS) {
    err = callFailed("cuCtxSetCurrent", r);
    return false;
  }
  return true;
}

/// Entry of an mgpu* function: false (do nothing) if an error is pending or
/// CUDA cannot be used (which is then recorded).
bool enter() {
  if (state().hasError.load())
    return false;
  std::string err;
  if (!makeCurrent(err)) {
    recordError(err);
    return false;
  }
  return true;
}

/// Entry of an mgpu* function releasing a resource: runs even while an error
/// is pending, but only if CUDA was initialized.
bool enterRelease() {
  if (!state().initOk.load())
    return false;
  std::string err;
  return makeCurrent(err);
}

/// Marks blocks freed on `stream` (all blocks if null) as reusable anywhere.
void markStreamIdle(CUstream stream, bool all) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.poolMu);
  for (auto &bucket : s.freeBlocks)
    for (Block &b : bucket.second)
      if (all || b.stream == stream)
        b.stream = nullptr;
}

std::recursive_mutex &deviceMutex() {
  static std::recursive_mutex *mu = new std::recursive_mutex; // never destroyed
  return *mu;
}

bool ensureInitialized(std::string &reason) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.initMu);
  if (!initLocked(s, reason))
    return false;
  CUresult r = s.api.CtxSetCurrent(s.ctx);
  if (r != CUDA_SUCCESS) {
    reason = "cuCtxSetCurrent failed: " + errorName(r);
    return false;
  }
  return true;
}

bool allocDevice(size_t bytes, void **out, std::string &err) {
  *out = nullptr;
  if (!makeCurrent(err))
    return false;
  CUdeviceptr p = 0;
  CUresult r = state().api.MemAlloc(&p, bytes ? bytes : 1);
  if (r != CUDA_SUCCESS) {
    err =
        callFailed("cuMemAlloc", r) + " (" + std::to_string(bytes) + " bytes)";
    return false;
  }
  *out = asVoidPtr(p);
  return true;
}

void freeDevice(void *ptr) {
  std::string err;
  if (ptr && state().initOk.load() && makeCurrent(err))
    state().api.MemFree(asDevPtr(ptr));
}

bool copyToDevice(void *dst, const void *src, size_t bytes, std::string &err) {
  if (!bytes)
    return true;
  if (!makeCurrent(err))
    return false;
  CUresult r = state().api.MemcpyHtoD(asDevPtr(dst), src, bytes);
  if (r != CUDA_SUCCESS) {
    err = callFailed("cuMemcpyHtoD", r);
    return false;
  }
  return true;
}

bool copyFromDevice(void *dst, const void *src, size_t bytes,
                    std::string &err) {
  if (!bytes)
    return true;
  if (!makeCurrent(err))
    return false;
  CUresult r = state().api.MemcpyDtoH(dst, asDevPtr(src), bytes);
  if (r != CUDA_SUCCESS) {
    err = callFailed("cuMemcpyDtoH", r);
    return false;
  }
  return true;
}

bool synchronize(std::string &err) {
  if (!makeCurrent(err))
    return false;
  CUresult r = state().api.CtxSynchronize();
  if (r != CUDA_SUCCESS) {
    err = callFailed("cuCtxSynchronize", r);
    return false;
  }
  markStreamIdle(nullptr, /*all=*/true);
  return true;
}

bool takePendingError(std::string &msg) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.errMu);
  if (!s.hasError.load())
    return false;
  msg = s.error;
  s.error.clear();
  s.hasError.store(false);
  return true;
}

PoolStats poolStats() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.poolMu);
  PoolStats st;
  st.driverAllocations = s.driverAllocations;
  for (auto &bucket : s.freeBlocks)
    st.cachedBlocks += bucket.second.size();
  st.liveBlocks = s.liveBlocks.size();
  return st;
}

void resetForTesting(const char *driverPath) {
  State &s = state();
  std::lock_guard<std::mutex> initLock(s.initMu);
  std::lock_guard<std::mutex> errLock(s.errMu);
  std::lock_guard<std::mutex> poolLock(s.poolMu);
  s.initOk.store(false);
  s.initAttempted = false;
  s.initFailure.clear();
  s.driverPath = driverPath ? driverPath : "libcuda.so.1";
  s.api = Api();
  s.ctx = nullptr;
  s.defaultDevice = 0;
  s.hasError.store(false);
  s.error.clear();
  s.moduleLoadError.clear();
  s.freeBlocks.clear();
  s.liveBlocks.clear();
  s.driverAllocations = 0;
  std::lock_guard<std::mutex> mapLock(s.tensorMapMu);
  s.tensorMaps.clear(); // the test's fake driver was reset with them
}

size_t tensorMapCount() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.tensorMapMu);
  return s.tensorMaps.size();
}

} // namespace cuda
} // namespace attnrt
