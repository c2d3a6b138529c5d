//===- FakeCuda.cpp - a host-only stand-in for libcuda.so.1 ---------------===//
//
// Implements the driver API subset attnrt loads, with "device memory" in host
// memory and kernels as host functions, so the CUDA backend's logic (driver
// loading, uploads, the mgpu* entry points, the allocation pool, error
// reporting) can be tested on machines without a GPU. Modules are accepted
// if their image starts with "FAKECUBIN"; the only kernel is
//   add_f32(const float *a, const float *b, float *c, int64_t n)
// Tests steer it through the fake_cuda_* functions.
//
//===----------------------------------------------------------------------===//

#define ATTNRT_NO_CUDA_H 1 // the fake defines what it is, not what cuda.h says
#include "CudaDriverApi.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

extern "C" {

// Every function the runtime looks up, declared from the shared list: a
// definition below with other parameters does not compile.
#define FAKE_DECLARE(field, symbol, params) CUresult symbol params;
ATTNRT_CUDA_FUNCTIONS(FAKE_DECLARE)
ATTNRT_CUDA_GRAPH_FUNCTIONS(FAKE_DECLARE)
#ifndef FAKE_CUDA_NO_TMA
ATTNRT_CUDA_TMA_FUNCTIONS(FAKE_DECLARE)
#endif
#undef FAKE_DECLARE

enum {
  kSuccess = CUDA_SUCCESS,
  kInvalidValue = CUDA_ERROR_INVALID_VALUE,
  kOutOfMemory = CUDA_ERROR_OUT_OF_MEMORY,
  kNotInitialized = CUDA_ERROR_NOT_INITIALIZED,
  kInvalidImage = CUDA_ERROR_INVALID_IMAGE,
  kNotFound = CUDA_ERROR_NOT_FOUND,
  kCaptureUnsupported = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
};

struct Kernel;
/// A captured operation: a launch (with its parameter values copied, as the
/// driver does), a copy or a memset.
struct Op {
  enum Kind { Launch, Copy, Set32, Set16 } kind;
  Kernel *kernel = nullptr;
  std::vector<uint64_t> params;
  CUdeviceptr dst = 0, src = 0;
  size_t n = 0;
  unsigned value = 0;
};
/// A graph and an executable graph alike: the captured operations.
struct FakeGraph {
  std::vector<Op> ops;
};

struct FakeState {
  bool graphSupport = true;
  CUstream capturing = nullptr;
  std::vector<Op> captured;
  std::set<FakeGraph *> graphs; // CUgraph and CUgraphExec objects alive
  long launchCalls = 0;
  long capturedLaunches = 0;
  long graphLaunches = 0;
  int initResult = 0;
  int deviceCount = 1;
  bool initialized = false;
  int failNextLaunch = 0;
  long allocCalls = 0;
  long launches = 0;
  std::set<void *> allocations;
  long tensorMapEncodes = 0;
};

static FakeState &fake() {
  static FakeState *s = new FakeState;
  return *s;
}

// ---- Test controls ------------------------------------------------------

void fake_cuda_reset(int initResult, int deviceCount) {
  for (void *p : fake().allocations)
    std::free(p);
  for (FakeGraph *g : fake().graphs)
    delete g;
  fake() = FakeState();
  fake().initResult = initResult;
  fake().deviceCount = deviceCount;
}
long fake_cuda_alloc_calls(void) { return fake().allocCalls; }
long fake_cuda_live_allocations(void) {
  return static_cast<long>(fake().allocations.size());
}
long fake_cuda_launches(void) { return fake().launches; }
long fake_cuda_launch_calls(void) { return fake().launchCalls; }
long fake_cuda_captured_launches(void) { return fake().capturedLaunches; }
long fake_cuda_graph_launches(void) { return fake().graphLaunches; }
long fake_cuda_live_graphs(void) {
  return static_cast<long>(fake().graphs.size());
}
void fake_cuda_set_graph_support(int on) { fake().graphSupport = on != 0; }
void fake_cuda_fail_next_launch(int result) { fake().failNextLaunch = result; }
long fake_cuda_tensor_map_encodes(void) { return fake().tensorMapEncodes; }

// ---- Driver API -----------------------------------------------------------

CUresult cuGetErrorName(CUresult r, const char **name) {
#define FAKE_NAME(e)                                                           \
  { e, #e }
  static const struct {
    CUresult code;
    const char *name;
  } names[] = {
      FAKE_NAME(CUDA_SUCCESS),
      FAKE_NAME(CUDA_ERROR_INVALID_VALUE),
      FAKE_NAME(CUDA_ERROR_OUT_OF_MEMORY),
      FAKE_NAME(CUDA_ERROR_NOT_INITIALIZED),
      FAKE_NAME(CUDA_ERROR_NO_DEVICE),
      FAKE_NAME(CUDA_ERROR_INVALID_IMAGE),
      FAKE_NAME(CUDA_ERROR_NOT_FOUND),
      FAKE_NAME(CUDA_ERROR_LAUNCH_FAILED),
      FAKE_NAME(CUDA_ERROR_NOT_SUPPORTED),
      FAKE_NAME(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
      FAKE_NAME(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
  };
#undef FAKE_NAME
  for (const auto &n : names) {
    if (n.code == r) {
      *name = n.name;
      return kSuccess;
    }
  }
  *name = nullptr;
  return kInvalidValue;
}

CUresult cuInit(unsigned) {
  if (fake().initResult)
    return fake().initResult;
  fake().initialized = true;
  return kSuccess;
}

#define REQUIRE_INIT                                                           \
  if (!fake().initialized)                                                     \
    return kNotInitialized;

CUresult cuDeviceGetCount(int *count) {
  REQUIRE_INIT
  *count = fake().deviceCount;
  return kSuccess;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  REQUIRE_INIT
  if (ordinal < 0 || ordinal >= fake().deviceCount)
    return kInvalidValue;
  *device = ordinal;
  return kSuccess;
}

static int contextToken;
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  REQUIRE_INIT
  *ctx = reinterpret_cast<CUcontext>(&contextToken);
  return kSuccess;
}
CUresult cuCtxSetCurrent(CUcontext ctx) {
  REQUIRE_INIT
  return ctx == reinterpret_cast<CUcontext>(&contextToken) ? kSuccess
                                                           : kInvalidValue;
}
CUresult cuCtxSynchronize(void) {
  return fake().capturing ? kCaptureUnsupported : kSuccess;
}

static int moduleToken;
static CUmodule theModule() { return reinterpret_cast<CUmodule>(&moduleToken); }
static bool validImage(const void *image) {
  return image &&
         std::strncmp(static_cast<const char *>(image), "FAKECUBIN", 9) == 0;
}
CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  REQUIRE_INIT
  if (!validImage(image))
    return kInvalidImage;
  *module = theModule();
  return kSuccess;
}
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned numOptions, CUjit_option *options,
                            void **values) {
  REQUIRE_INIT
  if (validImage(image)) {
    *module = theModule();
    return kSuccess;
  }
  char *log = nullptr;
  size_t logSize = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = static_cast<char *>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      logSize = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (log && logSize > 40)
    std::strcpy(log, "ptxas fatal: fake syntax error\n");
  return kInvalidImage;
}
CUresult cuModuleUnload(CUmodule module) {
  return module == theModule() ? kSuccess : kInvalidValue;
}

typedef void (*KernelFn)(void **params);
static void addF32(void **params) {
  const float *a = *static_cast<const float **>(params[0]);
  const float *b = *static_cast<const float **>(params[1]);
  float *c = *static_cast<float **>(params[2]);
  int64_t n = *static_cast<int64_t *>(params[3]);
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}
struct Kernel {
  KernelFn fn;
  int numParams; // each 8 bytes (pointers, int64)
};
static Kernel addKernel = {addF32, 4};

/// Runs `op` now: "kernel execution" (counted in fake_cuda_launches), where
/// fake_cuda_fail_next_launch strikes.
static CUresult execute(const Op &op);

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module,
                             const char *name) {
  if (module != theModule())
    return kInvalidValue;
  if (std::strcmp(name, "add_f32") != 0)
    return kNotFound;
  *fn = reinterpret_cast<CUfunction>(&addKernel);
  return kSuccess;
}

CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  return kSuccess;
}

CUresult cuLaunchKernel(CUfunction f, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, CUstream stream,
                        void **params, void **) {
  ++fake().launchCalls;
  if (!f || !params)
    return kInvalidValue;
  Op op{Op::Launch};
  op.kernel = reinterpret_cast<Kernel *>(f);
  for (int i = 0; i < op.kernel->numParams; ++i) {
    uint64_t v;
    std::memcpy(&v, params[i], sizeof(v));
    op.params.push_back(v);
  }
  if (stream && stream == fake().capturing) {
    fake().captured.push_back(op);
    ++fake().capturedLaunches;
    return kSuccess;
  }
  return execute(op);
}

CUresult cuStreamCreate(CUstream *stream, unsigned) {
  *stream = reinterpret_cast<CUstream>(new int(0));
  return kSuccess;
}
CUresult cuStreamSynchronize(CUstream stream) {
  return stream && stream == fake().capturing ? kCaptureUnsupported : kSuccess;
}
CUresult cuStreamDestroy_v2(CUstream stream) {
  delete reinterpret_cast<int *>(stream);
  return kSuccess;
}
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned) { return kSuccess; }
CUresult cuEventCreate(CUevent *event, unsigned) {
  *event = reinterpret_cast<CUevent>(new int(0));
  return kSuccess;
}
CUresult cuEventDestroy_v2(CUevent event) {
  delete reinterpret_cast<int *>(event);
  return kSuccess;
}
CUresult cuEventSynchronize(CUevent) { return kSuccess; }
CUresult cuEventRecord(CUevent, CUstream) { return kSuccess; }

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  REQUIRE_INIT
  void *m = std::calloc(1, bytes ? bytes : 1);
  if (!m)
    return kOutOfMemory;
  fake().allocations.insert(m);
  ++fake().allocCalls;
  *p = reinterpret_cast<uintptr_t>(m);
  return kSuccess;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned) {
  return cuMemAlloc_v2(p, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  void *m = reinterpret_cast<void *>(static_cast<uintptr_t>(p));
  if (!fake().allocations.erase(m))
    return kInvalidValue;
  std::free(m);
  return kSuccess;
}

static void *ptr(CUdeviceptr p) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
}
/// Records `op` if `stream` is capturing, else runs it.
static CUresult enqueue(const Op &op, CUstream stream) {
  if (stream && stream == fake().capturing) {
    fake().captured.push_back(op);
    return kSuccess;
  }
  return execute(op);
}
/// A copy or memset of `n` elements at `dst`, run now or captured.
static CUresult enqueueMemOp(Op::Kind kind, CUdeviceptr dst, CUdeviceptr src,
                             unsigned value, size_t n, CUstream stream) {
  Op op{kind};
  op.dst = dst;
  op.src = src;
  op.value = value;
  op.n = n;
  return enqueue(op, stream);
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
                       CUstream stream) {
  return enqueueMemOp(Op::Copy, dst, src, 0, n, stream);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  std::memcpy(ptr(dst), src, n);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  std::memcpy(dst, ptr(src), n);
  return kSuccess;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n,
                          CUstream stream) {
  return enqueueMemOp(Op::Set32, dst, 0, v, n, stream);
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n,
                          CUstream stream) {
  return enqueueMemOp(Op::Set16, dst, 0, v, n, stream);
}

static CUresult execute(const Op &op) {
  switch (op.kind) {
  case Op::Launch: {
    if (fake().failNextLaunch) {
      int r = fake().failNextLaunch;
      fake().failNextLaunch = 0;
      return r;
    }
    std::vector<uint64_t> values = op.params;
    std::vector<void *> params;
    for (uint64_t &v : values)
      params.push_back(&v);
    op.kernel->fn(params.data());
    ++fake().launches;
    return kSuccess;
  }
  case Op::Copy:
    std::memmove(ptr(op.dst), ptr(op.src), op.n);
    return kSuccess;
  case Op::Set32: {
    unsigned *d = static_cast<unsigned *>(ptr(op.dst));
    for (size_t i = 0; i < op.n; ++i)
      d[i] = op.value;
    return kSuccess;
  }
  case Op::Set16: {
    unsigned short *d = static_cast<unsigned short *>(ptr(op.dst));
    for (size_t i = 0; i < op.n; ++i)
      d[i] = static_cast<unsigned short>(op.value);
    return kSuccess;
  }
  }
  return kInvalidValue;
}

// ---- Graphs: capture records, a graph launch re-runs the records ----------

CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode) {
  if (!fake().graphSupport)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (!stream || fake().capturing)
    return kInvalidValue;
  fake().capturing = stream;
  fake().captured.clear();
  return kSuccess;
}
CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  if (!stream || stream != fake().capturing)
    return kInvalidValue;
  FakeGraph *g = new FakeGraph{fake().captured};
  fake().graphs.insert(g);
  fake().capturing = nullptr;
  fake().captured.clear();
  *graph = reinterpret_cast<CUgraph>(g);
  return kSuccess;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                     unsigned long long) {
  FakeGraph *g = reinterpret_cast<FakeGraph *>(graph);
  if (!fake().graphs.count(g))
    return kInvalidValue;
  FakeGraph *e = new FakeGraph{g->ops};
  fake().graphs.insert(e);
  *exec = reinterpret_cast<CUgraphExec>(e);
  return kSuccess;
}
CUresult cuGraphLaunch(CUgraphExec exec, CUstream) {
  FakeGraph *e = reinterpret_cast<FakeGraph *>(exec);
  if (!fake().graphs.count(e))
    return kInvalidValue;
  ++fake().graphLaunches;
  for (const Op &op : e->ops)
    if (CUresult r = execute(op))
      return r;
  return kSuccess;
}
static CUresult destroyGraph(void *p) {
  FakeGraph *g = static_cast<FakeGraph *>(p);
  if (!fake().graphs.erase(g))
    return kInvalidValue;
  delete g;
  return kSuccess;
}
CUresult cuGraphExecDestroy(CUgraphExec exec) { return destroyGraph(exec); }
CUresult cuGraphDestroy(CUgraph graph) { return destroyGraph(graph); }

} // extern "C"

// ---- Tensor maps ------------------------------------------------------------

#ifndef FAKE_CUDA_NO_TMA
/// What the fake writes into a CUtensorMap (the real one is opaque): the
/// arguments, innermost dimension first, for the tests to read back.
struct FakeTensorMap {
  uint32_t magic, rank, dataType, flags; // flags: interleave | swizzle << 8 |
                                         // l2 << 16 | oob << 24
  uint64_t address;
  uint64_t dims[5];
  uint64_t strides[4];
  uint32_t box[5];
  uint32_t pad;
};
static_assert(sizeof(FakeTensorMap) <= sizeof(CUtensorMap), "fits the map");

/// Validates the arguments as the driver documents them
/// (cuTensorMapEncodeTiled): tensorMap 64-byte aligned, rank 1..5, a known
/// 1-8 byte data type, globalAddress 16-byte aligned, dims in [1, 2^32],
/// strides multiples of 16 below 2^40, box sizes in [1, 256] with the
/// inner box a multiple of 16 bytes (no interleave), element strides in
/// [1, 8], enums in range; CUDA_ERROR_INVALID_VALUE otherwise.
CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oob) {
  REQUIRE_INIT
  static const int bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (!map || reinterpret_cast<uintptr_t>(map) % 64 || rank < 1 || rank > 5 ||
      type < 0 || type > 12 || !dims || !box || !elementStrides ||
      (rank > 1 && !strides))
    return kInvalidValue;
  if (reinterpret_cast<uintptr_t>(address) % 16)
    return kInvalidValue;
  if (interleave < 0 || interleave > 2 || swizzle < 0 || swizzle > 6 ||
      l2 < 0 || l2 > 3 || oob < 0 || oob > 1 || (interleave && rank < 3))
    return kInvalidValue;
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32) || box[i] == 0 || box[i] > 256 ||
        elementStrides[i] == 0 || elementStrides[i] > 8)
      return kInvalidValue;
  }
  for (cuuint32_t i = 0; i + 1 < rank; ++i)
    if (strides[i] % 16 || strides[i] >= (1ull << 40))
      return kInvalidValue;
  if (!interleave && (box[0] * bytes[type]) % 16)
    return kInvalidValue;
  FakeTensorMap f{};
  f.magic = 0x544d4150; // "TMAP"
  f.rank = rank;
  f.dataType = static_cast<uint32_t>(type);
  f.flags =
      static_cast<uint32_t>(interleave | swizzle << 8 | l2 << 16 | oob << 24);
  f.address = reinterpret_cast<uintptr_t>(address);
  for (cuuint32_t i = 0; i < rank; ++i) {
    f.dims[i] = dims[i];
    f.box[i] = box[i];
    if (i + 1 < rank)
      f.strides[i] = strides[i];
  }
  std::memset(map, 0, sizeof(CUtensorMap));
  std::memcpy(map, &f, sizeof(f));
  ++fake().tensorMapEncodes;
  return kSuccess;
}
#endif
