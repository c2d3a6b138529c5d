//===- CudaBackend.cpp - CUDA driver access and mgpu* entry points --------===//
//
// libcuda.so.1 is dlopen'ed on first use; <cuda.h> (when the toolkit is
// present at build time) only supplies types and enum values. The mgpu*
// functions have the signatures of upstream MLIR's CudaRuntimeWrappers.cpp,
// which is what the gpu-to-llvm lowering emits calls to. They cannot return a
// status, so the first failure goes into an error slot that attnrt_run reads
// after invoking the model; while an error is pending, further mgpu calls do
// nothing (releases are still attempted, silently).
//
// Compiled models may load their GPU modules from global constructors (that
// is how gpu.binary is lowered), i.e. before main: all state here is
// heap-allocated on first use and never destroyed, so it is usable from
// constructors and destructors of any order.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaDriverApi.h"

#include "attnc/Runtime/attnrt.h"
#include "attnc/Runtime/attnrt_abi.h"

#include <atomic>
#include <cstdint>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <vector>

static_assert(sizeof(CUdeviceptr) == sizeof(void *),
              "device pointers travel as void*");

namespace attnrt {
namespace cuda {
namespace {

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

/// The stream capture in progress on this thread (see beginCapture): every
/// stream the compiled code names, the null stream included, is the capture
/// stream; pooled blocks it frees and modules it unloads stay with the graph.
struct Capture {
  CUstream stream = nullptr;
  std::vector<void *> allocs;
  std::vector<CUmodule> modules;
};
thread_local Capture *tlsCapture = nullptr;

CUstream asStream(void *p) {
  return tlsCapture ? tlsCapture->stream : static_cast<CUstream>(p);
}
CUdeviceptr asDevPtr(const void *p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}
void *asVoidPtr(CUdeviceptr p) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
}

} // namespace

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

//===----------------------------------------------------------------------===//
// MLIR GPU runtime entry points.
//===----------------------------------------------------------------------===//

using namespace attnrt::cuda;

static void recordModuleLoadError(const std::string &msg) {
  State &s = state();
  recordError(msg);
  std::lock_guard<std::mutex> lock(s.errMu);
  s.moduleLoadError = msg;
}

/// Records why a null module/function reached a call.
static void recordMissing(const std::string &what) {
  State &s = state();
  std::string loadErr;
  {
    std::lock_guard<std::mutex> lock(s.errMu);
    loadErr = s.moduleLoadError;
  }
  recordError(!loadErr.empty()
                  ? loadErr
                  : "attnrt: " + what + " (an earlier CUDA call failed)");
}

extern "C" void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  (void)gpuBlobSize;
  if (!enter())
    return nullptr;
  CUmodule module = nullptr;
  CUresult r = state().api.ModuleLoadData(&module, data);
  if (r != CUDA_SUCCESS) {
    recordModuleLoadError(callFailed("cuModuleLoadData", r));
    return nullptr;
  }
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel,
                                   size_t assemblySize) {
  (void)assemblySize;
  if (!enter())
    return nullptr;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  CUmodule module = nullptr;
  CUresult r = state().api.ModuleLoadDataEx(&module, data, 3, options, values);
  if (r != CUDA_SUCCESS) {
    std::string msg = callFailed("cuModuleLoadDataEx", r);
    std::string text(log);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    if (!text.empty())
      msg += ": " + text;
    recordModuleLoadError(msg);
    return nullptr;
  }
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  if (module && tlsCapture) {
    // The graph's kernels live in it: unloaded with the graph.
    tlsCapture->modules.push_back(static_cast<CUmodule>(module));
    return;
  }
  if (module && enterRelease())
    check(state().api.ModuleUnload(static_cast<CUmodule>(module)),
          "cuModuleUnload");
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!enter())
    return nullptr;
  if (!module) {
    recordMissing(std::string("mgpuModuleGetFunction('") + (name ? name : "") +
                  "'): no GPU module");
    return nullptr;
  }
  CUfunction fn = nullptr;
  CUresult r =
      state().api.ModuleGetFunction(&fn, static_cast<CUmodule>(module), name);
  if (r != CUDA_SUCCESS) {
    recordError(std::string("attnrt: cuModuleGetFunction('") +
                (name ? name : "") + "') failed: " + errorName(r));
    return nullptr;
  }
  return fn;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t paramsCount) {
  (void)paramsCount;
  if (!enter())
    return;
  if (!function) {
    recordMissing("mgpuLaunchKernel: no kernel function");
    return;
  }
  State &s = state();
  CUfunction fn = static_cast<CUfunction>(function);
  if (smem > 48 * 1024 &&
      !check(s.api.FuncSetAttribute(
                 fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
             "cuFuncSetAttribute"))
    return;
  check(s.api.LaunchKernel(
            fn, static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
            static_cast<unsigned>(gridZ), static_cast<unsigned>(blockX),
            static_cast<unsigned>(blockY), static_cast<unsigned>(blockZ),
            static_cast<unsigned>(smem), asStream(stream), params, extra),
        "cuLaunchKernel");
}

extern "C" void *mgpuStreamCreate(void) {
  if (!enter())
    return nullptr;
  if (tlsCapture)
    return tlsCapture->stream;
  CUstream stream = nullptr;
  if (!check(state().api.StreamCreate(&stream, CU_STREAM_NON_BLOCKING),
             "cuStreamCreate"))
    return nullptr;
  return stream;
}

extern "C" void mgpuStreamDestroy(void *stream) {
  if (!stream || tlsCapture || !enterRelease())
    return;
  // Blocks freed on this stream become reusable anywhere once its work is
  // done; the handle may be reused by a later cuStreamCreate.
  State &s = state();
  if (s.api.StreamSynchronize(asStream(stream)) == CUDA_SUCCESS)
    markStreamIdle(asStream(stream), false);
  check(s.api.StreamDestroy(asStream(stream)), "cuStreamDestroy");
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  // Under capture nothing runs yet, and one stream orders all work.
  if (tlsCapture || !enter())
    return;
  if (check(state().api.StreamSynchronize(asStream(stream)),
            "cuStreamSynchronize"))
    markStreamIdle(asStream(stream), stream == nullptr);
}

extern "C" void mgpuStreamWaitEvent(void *stream, void *event) {
  if (!enter())
    return;
  check(state().api.StreamWaitEvent(asStream(stream),
                                    static_cast<CUevent>(event), 0),
        "cuStreamWaitEvent");
}

extern "C" void *mgpuEventCreate(void) {
  if (!enter())
    return nullptr;
  CUevent event = nullptr;
  if (!check(state().api.EventCreate(&event, CU_EVENT_DISABLE_TIMING),
             "cuEventCreate"))
    return nullptr;
  return event;
}

extern "C" void mgpuEventDestroy(void *event) {
  if (event && enterRelease())
    check(state().api.EventDestroy(static_cast<CUevent>(event)),
          "cuEventDestroy");
}

extern "C" void mgpuEventSynchronize(void *event) {
  if (tlsCapture || !enter())
    return;
  check(state().api.EventSynchronize(static_cast<CUevent>(event)),
        "cuEventSynchronize");
}

extern "C" void mgpuEventRecord(void *event, void *stream) {
  if (!enter())
    return;
  check(state().api.EventRecord(static_cast<CUevent>(event), asStream(stream)),
        "cuEventRecord");
}

static void *allocPooled(uint64_t sizeBytes, void *stream, bool isHostShared);

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                              bool isHostShared) {
  if (sizeBytes == 0 || !enter())
    return nullptr;
  void *p = allocPooled(sizeBytes, stream, isHostShared);
  // A graph replays fixed addresses: what its capture allocates is its own
  // until it is destroyed (mgpuMemFree under capture keeps it).
  if (p && tlsCapture)
    tlsCapture->allocs.push_back(p);
  return p;
}

static void *allocPooled(uint64_t sizeBytes, void *stream, bool isHostShared) {
  State &s = state();
  if (isHostShared) {
    CUdeviceptr p = 0;
    if (!check(s.api.MemAllocManaged(&p, sizeBytes, CU_MEM_ATTACH_GLOBAL),
               "cuMemAllocManaged"))
      return nullptr;
    return asVoidPtr(p);
  }
  if (sizeBytes > SIZE_MAX - kPoolGranule) {
    recordError("attnrt: mgpuMemAlloc: size too large");
    return nullptr;
  }
  size_t bucket = (sizeBytes + kPoolGranule - 1) / kPoolGranule * kPoolGranule;
  CUstream want = asStream(stream);
  std::lock_guard<std::mutex> lock(s.poolMu);
  auto it = s.freeBlocks.find(bucket);
  if (it != s.freeBlocks.end()) {
    std::vector<Block> &blocks = it->second;
    // Reuse a block that is idle or was freed on this very stream (stream
    // order then guarantees its earlier users have finished).
    for (size_t k = blocks.size(); k-- > 0;) {
      if (blocks[k].stream == nullptr || blocks[k].stream == want) {
        CUdeviceptr p = blocks[k].ptr;
        blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(k));
        s.liveBlocks[p] = bucket;
        return asVoidPtr(p);
      }
    }
  }
  CUdeviceptr p = 0;
  CUresult r = s.api.MemAlloc(&p, bucket);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // Give idle cached blocks back to the driver and try once more.
    for (auto &b : s.freeBlocks) {
      std::vector<Block> keep;
      for (const Block &blk : b.second) {
        if (blk.stream == nullptr)
          s.api.MemFree(blk.ptr);
        else
          keep.push_back(blk);
      }
      b.second.swap(keep);
    }
    r = s.api.MemAlloc(&p, bucket);
  }
  if (r != CUDA_SUCCESS) {
    recordError(callFailed("cuMemAlloc", r) + " (" + std::to_string(sizeBytes) +
                " bytes)");
    return nullptr;
  }
  ++s.driverAllocations;
  s.liveBlocks[p] = bucket;
  return asVoidPtr(p);
}

extern "C" void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr || !enterRelease())
    return;
  if (tlsCapture) {
    bool own = false;
    for (void *a : tlsCapture->allocs)
      own = own || a == ptr;
    if (!own)
      tlsCapture->allocs.push_back(ptr);
    return;
  }
  State &s = state();
  CUdeviceptr p = asDevPtr(ptr);
  bool pooled = false;
  size_t bucket = 0;
  {
    std::lock_guard<std::mutex> lock(s.poolMu);
    auto it = s.liveBlocks.find(p);
    if (it != s.liveBlocks.end()) {
      pooled = true;
      bucket = it->second;
      s.liveBlocks.erase(it);
    }
  }
  if (!pooled) {
    // Managed memory, or memory the pool did not hand out.
    check(s.api.MemFree(p), "cuMemFree");
    return;
  }
  CUstream tag = asStream(stream);
  if (!tag) {
    // Freed outside any stream: wait for all work so the block is idle.
    if (s.api.CtxSynchronize() != CUDA_SUCCESS) {
      // The context is broken; do not reuse the block.
      s.api.MemFree(p);
      return;
    }
  }
  std::lock_guard<std::mutex> lock(s.poolMu);
  s.freeBlocks[bucket].push_back(Block{p, tag});
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  if (!sizeBytes || !enter())
    return;
  check(state().api.MemcpyAsync(asDevPtr(dst), asDevPtr(src), sizeBytes,
                                asStream(stream)),
        "cuMemcpyAsync");
}

extern "C" void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  if (!count || !enter())
    return;
  check(
      state().api.MemsetD32Async(asDevPtr(dst), value, count, asStream(stream)),
      "cuMemsetD32Async");
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  if (!count || !enter())
    return;
  check(
      state().api.MemsetD16Async(asDevPtr(dst), value, count, asStream(stream)),
      "cuMemsetD16Async");
}

/// Bytes per element of the CUtensorMapDataType values up to TFLOAT32_FTZ
/// (the packed sub-byte types are not used by compiled models).
static int64_t tensorMapElementBytes(int64_t dataType) {
  static const int64_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (dataType < 0 || dataType >= 13)
    return 0;
  return bytes[dataType];
}

/// What nvgpu.tma.create.descriptor lowers to (upstream MLIR's
/// CudaRuntimeWrappers.cpp signature; the enums arrive as i64): encodes a
/// tiled tensor map of the memref whose ranked descriptor (allocated and
/// aligned pointers, offset, sizes, strides) `descriptor` points to, with
/// box `boxDims` (memref order, outermost first), and returns the device
/// address of a copy of it, which the kernel receives. The driver wants the
/// innermost dimension first: dims and box are reversed, and the byte
/// strides of the outer rank - 1 dimensions follow. Unlike upstream the
/// memref's offset is honoured. Failures (no cuTensorMapEncodeTiled in the
/// driver, arguments it rejects) are recorded like every mgpu* error and
/// return null (the launches after them do nothing).
extern "C" void *mgpuTensorMapEncodeTiledMemref(
    int64_t tensorRank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  if (!enter())
    return nullptr;
  const char *fn = "attnrt: mgpuTensorMapEncodeTiledMemref: ";
  State &s = state();
  if (!s.api.TensorMapEncodeTiled) {
    recordError(std::string(fn) + "the CUDA driver " + s.driverPath +
                " lacks cuTensorMapEncodeTiled (TMA needs CUDA 12 and an "
                "sm_90 GPU; compile with --no-tma to stage tiles with "
                "cp.async instead)");
    return nullptr;
  }
  if (tensorRank < 1 || tensorRank > 5 || !descriptor || !boxDims) {
    recordError(std::string(fn) + "bad tensor rank " +
                std::to_string(tensorRank) +
                " or null descriptor/box "
                "(ranks 1 to 5 are supported)");
    return nullptr;
  }
  int64_t elemBytes = tensorMapElementBytes(dataType);
  if (!elemBytes) {
    recordError(std::string(fn) + "unknown tensor map data type " +
                std::to_string(dataType));
    return nullptr;
  }
  // The ranked memref descriptor: {allocated, aligned, offset, sizes[rank],
  // strides[rank]}.
  auto *words = static_cast<int64_t *>(descriptor);
  char *aligned = reinterpret_cast<char **>(descriptor)[1];
  int64_t offset = words[2];
  const int64_t *sizes = words + 3, *strides = words + 3 + tensorRank;
  int64_t rank = tensorRank;
  if (strides[rank - 1] != 1) {
    recordError(std::string(fn) +
                "the innermost dimension must be "
                "contiguous (stride " +
                std::to_string(strides[rank - 1]) + ")");
    return nullptr;
  }
  cuuint64_t dims[5] = {1, 1, 1, 1, 1}, byteStrides[4] = {0, 0, 0, 0};
  cuuint32_t box[5] = {1, 1, 1, 1, 1}, elementStrides[5] = {1, 1, 1, 1, 1};
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = static_cast<cuuint64_t>(sizes[rank - 1 - i]);
    box[i] = static_cast<cuuint32_t>(boxDims[rank - 1 - i]);
  }
  for (int64_t i = 0; i + 1 < rank; ++i)
    byteStrides[i] = static_cast<cuuint64_t>(strides[rank - 2 - i] * elemBytes);
  char *address = aligned + offset * elemBytes;

  std::vector<uint64_t> key = {
      reinterpret_cast<uint64_t>(address), static_cast<uint64_t>(rank),
      static_cast<uint64_t>(dataType),     static_cast<uint64_t>(interleave),
      static_cast<uint64_t>(swizzle),      static_cast<uint64_t>(l2Promotion),
      static_cast<uint64_t>(oobFill)};
  key.insert(key.end(), dims, dims + rank);
  key.insert(key.end(), byteStrides, byteStrides + rank - 1);
  key.insert(key.end(), box, box + rank);
  std::lock_guard<std::mutex> lock(s.tensorMapMu);
  auto it = s.tensorMaps.find(key);
  if (it != s.tensorMaps.end())
    return asVoidPtr(it->second);

  CUtensorMap map;
  CUresult r = s.api.TensorMapEncodeTiled(
      &map, static_cast<CUtensorMapDataType>(dataType),
      static_cast<cuuint32_t>(rank), address, dims, byteStrides, box,
      elementStrides, static_cast<CUtensorMapInterleave>(interleave),
      static_cast<CUtensorMapSwizzle>(swizzle),
      static_cast<CUtensorMapL2promotion>(l2Promotion),
      static_cast<CUtensorMapFloatOOBfill>(oobFill));
  if (r != CUDA_SUCCESS) {
    std::string what = callFailed("cuTensorMapEncodeTiled", r) + " (rank " +
                       std::to_string(rank) + ", dims";
    for (int64_t i = 0; i < rank; ++i)
      what += " " + std::to_string(dims[i]);
    what += ", byte strides";
    for (int64_t i = 0; i + 1 < rank; ++i)
      what += " " + std::to_string(byteStrides[i]);
    what += ", box";
    for (int64_t i = 0; i < rank; ++i)
      what += " " + std::to_string(box[i]);
    recordError(what + ", innermost first)");
    return nullptr;
  }
  // The kernel reads the map through a generic pointer into global memory
  // (PTX allows .param, .const or .global tensor maps); a synchronous copy
  // on the null stream completes before any later launch. Not a pooled
  // block: the map outlives runs and graphs (see State::tensorMaps).
  CUdeviceptr dev = 0;
  if (!check(s.api.MemAlloc(&dev, sizeof(CUtensorMap)), "cuMemAlloc"))
    return nullptr;
  if (!check(s.api.MemcpyHtoD(dev, &map, sizeof(CUtensorMap)),
             "cuMemcpyHtoD")) {
    s.api.MemFree(dev);
    return nullptr;
  }
  s.tensorMaps[key] = dev;
  return asVoidPtr(dev);
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.initMu);
  if (s.initOk.load() && device != s.defaultDevice) {
    recordError("attnrt: mgpuSetDefaultDevice(" + std::to_string(device) +
                ") after CUDA was initialized on device " +
                std::to_string(s.defaultDevice) + " is not supported");
    return;
  }
  s.defaultDevice = device;
}

//===----------------------------------------------------------------------===//
// CUDA graphs.
//===----------------------------------------------------------------------===//

namespace attnrt {
namespace cuda {

struct Graph {
  CUstream stream = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::vector<void *> allocs;
  std::vector<CUmodule> modules;
};

bool beginCapture(std::string &why) {
  if (tlsCapture) {
    why = "a capture is already in progress on this thread";
    return false;
  }
  if (!makeCurrent(why))
    return false;
  State &s = state();
  if (!s.api.hasGraphs()) {
    why = "the CUDA driver " + s.driverPath +
          " lacks the graph API (cuStreamBeginCapture_v2, cuGraphLaunch, ...)";
    return false;
  }
  CUstream stream = nullptr;
  CUresult r = s.api.StreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    why = callFailed("cuStreamCreate", r);
    return false;
  }
  // Relaxed: the compiled code may allocate (cuMemAlloc) while capturing.
  r = s.api.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  if (r != CUDA_SUCCESS) {
    s.api.StreamDestroy(stream);
    why = callFailed("cuStreamBeginCapture", r);
    return false;
  }
  tlsCapture = new Capture;
  tlsCapture->stream = stream;
  return true;
}

Graph *endCapture(std::string &why) {
  Capture *c = tlsCapture;
  if (!c) {
    why = "no capture is in progress on this thread";
    return nullptr;
  }
  tlsCapture = nullptr;
  Graph *g = new Graph;
  g->stream = c->stream;
  g->allocs = std::move(c->allocs);
  g->modules = std::move(c->modules);
  delete c;
  State &s = state();
  CUresult r = s.api.StreamEndCapture(g->stream, &g->graph);
  if (r == CUDA_SUCCESS && !g->graph)
    r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (r != CUDA_SUCCESS) {
    why = callFailed("cuStreamEndCapture", r);
    destroyGraph(g);
    return nullptr;
  }
  r = s.api.GraphInstantiate(&g->exec, g->graph, 0);
  if (r != CUDA_SUCCESS) {
    why = callFailed("cuGraphInstantiate", r);
    destroyGraph(g);
    return nullptr;
  }
  return g;
}

bool launchGraph(Graph *g, std::string &err) {
  if (!makeCurrent(err))
    return false;
  CUresult r = state().api.GraphLaunch(g->exec, g->stream);
  if (r != CUDA_SUCCESS) {
    err = callFailed("cuGraphLaunch", r);
    return false;
  }
  return true;
}

void destroyGraph(Graph *g) {
  if (!g)
    return;
  std::string err;
  if (state().initOk.load() && makeCurrent(err)) {
    State &s = state();
    s.api.StreamSynchronize(g->stream); // no replay is still running
    if (g->exec)
      s.api.GraphExecDestroy(g->exec);
    if (g->graph)
      s.api.GraphDestroy(g->graph);
    for (void *p : g->allocs)
      mgpuMemFree(p, nullptr); // back to the pool (or the driver)
    for (CUmodule mod : g->modules)
      s.api.ModuleUnload(mod);
    s.api.StreamDestroy(g->stream);
  }
  delete g;
}

} // namespace cuda
} // namespace attnrt
