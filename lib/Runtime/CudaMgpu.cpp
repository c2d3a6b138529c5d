//===- CudaMgpu.cpp - the MLIR GPU runtime entry points -------------------===//
//
// The mgpu* functions compiled CUDA models call, with the signatures of
// upstream MLIR's CudaRuntimeWrappers.cpp (what the gpu-to-llvm lowering
// emits calls to). They cannot return a status, so the first failure goes
// into the error slot (CudaState.h) that a run reads after invoking the
// model; while an error is pending, further mgpu calls do nothing (releases
// are still attempted, silently). Under a stream capture (CudaGraphs.cpp)
// every stream is the capture stream.
//
//===----------------------------------------------------------------------===//

#include "CudaState.h"

#include "attnc/Runtime/attnrt_abi.h"

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
