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
// Built with FAKE_CUDA_DRY (libcuda.so.1 of the GPU check's dry run,
// scripts/gpu/run.sh --dry), it also accepts real cubins: it reads each
// kernel's parameters and resources from the ELF (.nv.info attributes,
// .nv.shared sections), and every launch is validated as the driver would
// (grid and block limits, registers and shared memory per block, the
// dynamic shared memory attribute, parameter pointers, no device pointer
// that is a host address) but not executed. Copies and memsets run. Each
// rejected call prints one "fake-cuda(dry):" line on stderr; a summary line
// goes to $FAKE_CUDA_DRY_LOG at exit.
//
//===----------------------------------------------------------------------===//

#define ATTNRT_NO_CUDA_H 1 // the fake defines what it is, not what cuda.h says
#include "CudaDriverApi.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
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

typedef void (*KernelFn)(void **params);
struct Kernel {
  KernelFn fn;   // null: a kernel of a real cubin (dry: validated only)
  int numParams; // each 8 bytes (pointers, int64), unless paramSizes is set
  // A real cubin's kernel, as its .nv.info describes it.
  std::string name;
  std::vector<uint32_t> paramSizes; // by ordinal
  uint32_t maxThreads = 1024;       // .maxntid / __launch_bounds__
  uint32_t registers = 0;
  uint32_t staticSmem = 0;
  int maxDynamicSmem = -1; // cuFuncSetAttribute; -1: never set
};
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
  std::map<void *, size_t> allocations; // base -> bytes
  long tensorMapEncodes = 0;
};

static FakeState &fake() {
  static FakeState *s = new FakeState;
  return *s;
}

// ---- Test controls ------------------------------------------------------

void fake_cuda_reset(int initResult, int deviceCount) {
  for (auto &a : fake().allocations)
    std::free(a.first);
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
  {                                                                            \
    e, #e                                                                      \
  }
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

#ifdef FAKE_CUDA_DRY
/// A loaded cubin: its kernels by name.
struct DryModule {
  std::map<std::string, Kernel *> kernels;
  ~DryModule() {
    for (auto &k : kernels)
      delete k.second;
  }
};
static std::set<DryModule *> &dryModules() {
  static auto *m = new std::set<DryModule *>;
  return *m;
}
static long dryLaunches = 0, dryModuleLoads = 0, dryKernelsResolved = 0,
            dryRejected = 0;
static int dryChip = 0; // sm_XX of the last cubin loaded

static void dryReject(const std::string &what) {
  ++dryRejected;
  std::fprintf(stderr, "fake-cuda(dry): %s\n", what.c_str());
}

static void dryReport() {
  const char *path = std::getenv("FAKE_CUDA_DRY_LOG");
  if (!path)
    return;
  if (FILE *f = std::fopen(path, "a")) {
    std::fprintf(f,
                 "{\"modules\": %ld, \"kernels\": %ld, \"launches\": %ld, "
                 "\"graph_launches\": %ld, \"tensor_maps\": %ld, "
                 "\"rejected\": %ld, \"chip\": %d}\n",
                 dryModuleLoads, dryKernelsResolved, dryLaunches,
                 fake().graphLaunches, fake().tensorMapEncodes, dryRejected,
                 dryChip);
    std::fclose(f);
  }
}

static bool readBytes(const std::string &d, size_t off, void *v, size_t n) {
  if (off > d.size() || d.size() - off < n)
    return false;
  std::memcpy(v, d.data() + off, n);
  return true;
}
#define readAt(d, off, v) readBytes(d, off, &(v), sizeof(v))

/// Parses a CUDA ELF (a cubin as ptxas writes it) into `m`; the reason on
/// failure. The size of the image is not passed to cuModuleLoadData: the
/// ELF header's section table gives it.
static bool parseCubin(const void *image, DryModule &m, std::string &why) {
  const unsigned char *p = static_cast<const unsigned char *>(image);
  if (std::memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 || p[5] != 1) {
    why = "not a 64-bit little-endian ELF";
    return false;
  }
  uint16_t machine, shentsize, shnum, shstrndx;
  uint64_t shoff;
  uint32_t flags;
  std::memcpy(&machine, p + 0x12, 2);
  std::memcpy(&shoff, p + 0x28, 8);
  std::memcpy(&flags, p + 0x30, 4);
  std::memcpy(&shentsize, p + 0x3a, 2);
  std::memcpy(&shnum, p + 0x3c, 2);
  std::memcpy(&shstrndx, p + 0x3e, 2);
  if (machine != 190) { // EM_CUDA
    why = "ELF machine " + std::to_string(machine) + " is not EM_CUDA (190)";
    return false;
  }
  if (shentsize != 64 || shnum == 0 || shstrndx >= shnum) {
    why = "bad ELF section table";
    return false;
  }
  // The image ends at the end of its section table or of its last section.
  size_t size = shoff + size_t(shnum) * shentsize;
  struct Sec {
    uint32_t name, type, link, info;
    uint64_t off, size;
  };
  std::vector<Sec> secs(shnum);
  for (unsigned i = 0; i < shnum; ++i) {
    const unsigned char *h = p + shoff + size_t(i) * shentsize;
    std::memcpy(&secs[i].name, h, 4);
    std::memcpy(&secs[i].type, h + 4, 4);
    std::memcpy(&secs[i].off, h + 0x18, 8);
    std::memcpy(&secs[i].size, h + 0x20, 8);
    std::memcpy(&secs[i].link, h + 0x28, 4);
    std::memcpy(&secs[i].info, h + 0x2c, 4);
    if (secs[i].type != 8 /*NOBITS*/ && secs[i].off + secs[i].size > size)
      size = secs[i].off + secs[i].size;
  }
  std::string d(reinterpret_cast<const char *>(p), size);
  auto cstr = [&](const Sec &strtab, uint32_t off) {
    size_t at = strtab.off + off;
    if (at >= d.size())
      return std::string();
    return std::string(d.c_str() + at);
  };
  // ABI version >= 8 (CUDA 12.8+) moved the SM number to bits 8-15.
  dryChip = p[8] >= 8 ? int((flags >> 8) & 0xff) : int(flags & 0xff);
  // Kernels: global functions of the symbol table.
  std::map<unsigned, Kernel *> bySymbol;
  for (const Sec &s : secs) {
    if (s.type != 2 /*SYMTAB*/ || s.link >= shnum)
      continue;
    for (uint64_t o = 0; o + 24 <= s.size; o += 24) {
      uint32_t nameOff;
      unsigned char info;
      readAt(d, s.off + o, nameOff);
      readAt(d, s.off + o + 4, info);
      if ((info & 0xf) != 2 /*FUNC*/ || (info >> 4) == 0 /*LOCAL*/)
        continue;
      Kernel *k = new Kernel{nullptr, 0};
      k->name = cstr(secs[s.link], nameOff);
      m.kernels[k->name] = k;
      bySymbol[unsigned(o / 24)] = k;
    }
  }
  // sm_90 cubins place the 1 KiB the system reserves per block at the
  // start of each kernel's .nv.shared section (.nv.shared.reserved.0 marks
  // it); the driver's limits count only the kernel's own shared memory.
  uint32_t reserved = 0;
  for (const Sec &s : secs)
    if (cstr(secs[shstrndx], s.name) == ".nv.shared.reserved.0")
      reserved = 1024;
  for (const Sec &s : secs) {
    std::string name = cstr(secs[shstrndx], s.name);
    if (name.rfind(".nv.shared.", 0) == 0) {
      auto it = m.kernels.find(name.substr(11));
      if (it != m.kernels.end())
        it->second->staticSmem =
            uint32_t(s.size >= reserved ? s.size - reserved : s.size);
      continue;
    }
    bool global = name == ".nv.info";
    if (!global && name.rfind(".nv.info.", 0) != 0)
      continue;
    Kernel *k = nullptr;
    if (!global) {
      auto it = m.kernels.find(name.substr(9));
      if (it == m.kernels.end())
        continue;
      k = it->second;
    }
    // Attributes: format (1 none, 2 byte, 3 half, 4 sized), attribute id.
    for (uint64_t o = s.off; o + 4 <= s.off + s.size;) {
      unsigned char fmt = static_cast<unsigned char>(d[o]);
      unsigned char attr = static_cast<unsigned char>(d[o + 1]);
      uint16_t len = 0;
      uint64_t val = o + 2;
      if (fmt == 4) {
        readAt(d, o + 2, len);
        val = o + 4;
        o = val + len;
      } else {
        o += 4;
      }
      if (attr == 0x17 && k && fmt == 4 && len >= 12) { // EIATTR_KPARAM_INFO
        uint16_t ordinal;
        uint32_t bits;
        readAt(d, val + 4, ordinal);
        readAt(d, val + 8, bits);
        if (k->paramSizes.size() <= ordinal)
          k->paramSizes.resize(ordinal + 1, 0);
        k->paramSizes[ordinal] = bits >> 18;
      } else if (attr == 0x05 && k && fmt == 4 && len >= 12) { // MAX_THREADS
        uint32_t x, y, z;
        readAt(d, val, x);
        readAt(d, val + 4, y);
        readAt(d, val + 8, z);
        k->maxThreads = x * y * z;
      } else if (attr == 0x2f && global && fmt == 4 && len >= 8) { // REGCOUNT
        uint32_t sym, regs;
        readAt(d, val, sym);
        readAt(d, val + 4, regs);
        auto it = bySymbol.find(sym);
        if (it != bySymbol.end())
          it->second->registers = regs;
      }
    }
  }
  for (auto &kv : m.kernels) {
    Kernel *k = kv.second;
    k->numParams = int(k->paramSizes.size());
    for (size_t i = 0; i < k->paramSizes.size(); ++i)
      if (k->paramSizes[i] == 0) {
        why = "kernel " + k->name + ": no size for parameter " +
              std::to_string(i);
        return false;
      }
  }
  if (m.kernels.empty()) {
    why = "no kernels in the cubin";
    return false;
  }
  return true;
}

static CUresult dryLoad(CUmodule *module, const void *image) {
  DryModule *m = new DryModule;
  std::string why;
  if (!parseCubin(image, *m, why)) {
    delete m;
    dryReject("cuModuleLoadData: " + why);
    return kInvalidImage;
  }
  static bool reported = (std::atexit(dryReport), true);
  (void)reported;
  ++dryModuleLoads;
  dryModules().insert(m);
  *module = reinterpret_cast<CUmodule>(m);
  return kSuccess;
}

/// A host address that is not device memory: inside a mapping of this
/// process (/proc/self/maps) but outside every allocation. Only asked
/// about values that are no allocation's.
static bool isHostAddress(uint64_t v) {
  FILE *f = std::fopen("/proc/self/maps", "r");
  if (!f)
    return false;
  unsigned long long lo, hi;
  bool found = false;
  char line[512];
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "%llx-%llx", &lo, &hi) == 2 && v >= lo && v < hi) {
      found = true;
      break;
    }
  std::fclose(f);
  return found;
}

/// Inside (or one past the end of) a live allocation.
static bool isDeviceAddress(uint64_t v) {
  auto &a = fake().allocations;
  auto it = a.upper_bound(reinterpret_cast<void *>(v));
  if (it == a.begin())
    return false;
  --it;
  uint64_t base = reinterpret_cast<uintptr_t>(it->first);
  return v >= base && v <= base + it->second;
}

/// The driver's checks of a launch of a real cubin's kernel.
static CUresult dryValidateLaunch(Kernel *k, unsigned gx, unsigned gy,
                                  unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned smem, void **params,
                                  void **extra) {
  auto bad = [&](const std::string &what, CUresult r) {
    dryReject("launch of " + k->name + " (grid " + std::to_string(gx) + "x" +
              std::to_string(gy) + "x" + std::to_string(gz) + ", block " +
              std::to_string(bx) + "x" + std::to_string(by) + "x" +
              std::to_string(bz) + ", " + std::to_string(smem) +
              " B dynamic shared memory): " + what);
    return r;
  };
  if (extra)
    return bad("kernel arguments passed in `extra`", kInvalidValue);
  if (!gx || !gy || !gz || gy > 65535 || gz > 65535 || gx > 0x7fffffffu)
    return bad("grid out of range", kInvalidValue);
  unsigned long long threads = 1ull * bx * by * bz;
  if (!bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 || threads > 1024)
    return bad("block out of range", kInvalidValue);
  if (threads > k->maxThreads)
    return bad("block of " + std::to_string(threads) +
                   " threads exceeds the kernel's .maxntid " +
                   std::to_string(k->maxThreads),
               kInvalidValue);
  // sm_90: 64K registers per SM, allocated per warp in units of 256.
  unsigned long long warps = (threads + 31) / 32;
  unsigned long long regsPerWarp = ((k->registers * 32ull) + 255) / 256 * 256;
  if (warps * regsPerWarp > 65536)
    return bad(std::to_string(k->registers) + " registers x " +
                   std::to_string(threads) +
                   " threads exceed the 64K registers of an SM "
                   "(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)",
               kInvalidValue);
  long dynLimit = k->maxDynamicSmem >= 0 ? k->maxDynamicSmem
                                         : 48 * 1024 - long(k->staticSmem);
  if (long(smem) > dynLimit)
    return bad("dynamic shared memory above the kernel's limit of " +
                   std::to_string(dynLimit) + " B (static " +
                   std::to_string(k->staticSmem) + " B" +
                   (k->maxDynamicSmem >= 0
                        ? ", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"
                        : ", the attribute never set") +
                   ")",
               kInvalidValue);
  if (!params && k->numParams)
    return bad("no kernelParams", kInvalidValue);
  for (int i = 0; i < k->numParams; ++i) {
    if (!params[i])
      return bad("kernelParams[" + std::to_string(i) + "] is null",
                 kInvalidValue);
    if (k->paramSizes[i] != 8)
      continue;
    uint64_t v;
    std::memcpy(&v, params[i], 8);
    if (v && !isDeviceAddress(v) && isHostAddress(v)) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)v);
      return bad("parameter " + std::to_string(i) + " = " + hex +
                     " is a host address, not device memory",
                 kInvalidValue);
    }
  }
  return kSuccess;
}
#endif // FAKE_CUDA_DRY

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  REQUIRE_INIT
#ifdef FAKE_CUDA_DRY
  if (image && !validImage(image))
    return dryLoad(module, image);
#endif
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
#ifdef FAKE_CUDA_DRY
  if (image && std::memcmp(image, "\177ELF", 4) == 0)
    return dryLoad(module, image);
#endif
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
#ifdef FAKE_CUDA_DRY
  DryModule *m = reinterpret_cast<DryModule *>(module);
  if (dryModules().erase(m)) {
    delete m;
    return kSuccess;
  }
#endif
  return module == theModule() ? kSuccess : kInvalidValue;
}

static void addF32(void **params) {
  const float *a = *static_cast<const float **>(params[0]);
  const float *b = *static_cast<const float **>(params[1]);
  float *c = *static_cast<float **>(params[2]);
  int64_t n = *static_cast<int64_t *>(params[3]);
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}
static Kernel addKernel = {addF32, 4, "add_f32", {}};

/// Runs `op` now: "kernel execution" (counted in fake_cuda_launches), where
/// fake_cuda_fail_next_launch strikes.
static CUresult execute(const Op &op);
/// Records `op` if `stream` is capturing, else runs it.
static CUresult enqueue(const Op &op, CUstream stream);

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module,
                             const char *name) {
#ifdef FAKE_CUDA_DRY
  DryModule *m = reinterpret_cast<DryModule *>(module);
  if (dryModules().count(m)) {
    auto it = m->kernels.find(name ? name : "");
    if (it == m->kernels.end()) {
      dryReject(std::string("cuModuleGetFunction: no kernel '") +
                (name ? name : "") + "' in the cubin");
      return kNotFound;
    }
    ++dryKernelsResolved;
    *fn = reinterpret_cast<CUfunction>(it->second);
    return kSuccess;
  }
#endif
  if (module != theModule())
    return kInvalidValue;
  if (std::strcmp(name, "add_f32") != 0)
    return kNotFound;
  *fn = reinterpret_cast<CUfunction>(&addKernel);
  return kSuccess;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attr,
                            int value) {
#ifdef FAKE_CUDA_DRY
  Kernel *k = reinterpret_cast<Kernel *>(f);
  if (k && !k->fn && attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    // sm_90: 227 KiB of shared memory per block, static included.
    if (value < 0 || long(value) + long(k->staticSmem) > 227 * 1024) {
      dryReject("cuFuncSetAttribute(" + k->name +
                ", MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(value) +
                "): with " + std::to_string(k->staticSmem) +
                " B static, above the 227 KiB per block of sm_90");
      return kInvalidValue;
    }
    k->maxDynamicSmem = value;
  }
#else
  (void)f;
  (void)attr;
  (void)value;
#endif
  return kSuccess;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        CUstream stream, void **params, void **extra) {
  ++fake().launchCalls;
#ifdef FAKE_CUDA_DRY
  if (f && !reinterpret_cast<Kernel *>(f)->fn) {
    if (CUresult r = dryValidateLaunch(reinterpret_cast<Kernel *>(f), gx, gy,
                                       gz, bx, by, bz, smem, params, extra))
      return r;
    ++dryLaunches;
    Op op{Op::Launch};
    op.kernel = reinterpret_cast<Kernel *>(f);
    return enqueue(op, stream);
  }
#else
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem;
  (void)extra;
#endif
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
  fake().allocations[m] = bytes;
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
    ++fake().launches;
    if (!op.kernel->fn) // a real cubin's kernel: validated, not run
      return kSuccess;
    std::vector<uint64_t> values = op.params;
    std::vector<void *> params;
    for (uint64_t &v : values)
      params.push_back(&v);
    op.kernel->fn(params.data());
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
