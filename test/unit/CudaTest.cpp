//===- CudaTest.cpp - CUDA backend tests (no GPU needed) ------------------===//
//
// Without a driver: the clean failure of CUDA models and of the mgpu* entry
// points. With the fake driver (FakeCuda.cpp): the whole CUDA path.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnrt.h"
#include "attnc/Runtime/attnrt_abi.h"

#include "CudaBackend.h"
#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cstring>
#include <dlfcn.h>
#include <thread>

using namespace attnrt;
using namespace attnrt_test;

namespace {

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string openCudaError() {
  char err[512];
  attnrt_model *m = attnrt_open(kCudaManifest, cpuInvoke, err, sizeof(err));
  EXPECT_EQ(m, nullptr);
  attnrt_close(m);
  return err;
}

TEST(CudaNoDriver, OpenFailsCleanly) {
  cuda::resetForTesting("libattnrt-no-such-driver.so.1");
  std::string err = openCudaError();
  EXPECT_TRUE(startsWith(
      err, "attnrt: this model was compiled for CUDA but no CUDA driver was "
           "found (libattnrt-no-such-driver.so.1: cannot open shared object "
           "file"))
      << err;
  EXPECT_EQ(err.back(), ')') << err;
  // The failure is remembered, not retried differently.
  EXPECT_EQ(openCudaError(), err);
  cuda::resetForTesting(nullptr);
}

TEST(CudaNoDriver, RealDriverNameOnThisMachine) {
  cuda::resetForTesting(nullptr);
  char err[512];
  ModelPtr m(attnrt_open(kCudaManifest, cpuInvoke, err, sizeof(err)));
  if (m.get())
    GTEST_SKIP() << "a CUDA driver and device are present";
  std::string e = err;
  EXPECT_TRUE(startsWith(e, "attnrt: this model was compiled for CUDA but "))
      << e;
  if (e.find("no CUDA driver was found") != std::string::npos) {
    EXPECT_NE(e.find("(libcuda.so.1: cannot open shared object file"),
              std::string::npos)
        << e;
  }
}

TEST(CudaNoDriver, MgpuCallsAreNoOps) {
  cuda::resetForTesting("libattnrt-no-such-driver.so.1");
  static const char image[] = "FAKECUBIN";
  EXPECT_EQ(mgpuModuleLoad(const_cast<char *>(image), sizeof(image)), nullptr);
  std::string msg;
  ASSERT_TRUE(cuda::takePendingError(msg));
  EXPECT_TRUE(startsWith(msg, "attnrt: CUDA is unavailable: no CUDA driver was "
                              "found (libattnrt-no-such-driver.so.1"))
      << msg;
  EXPECT_FALSE(cuda::takePendingError(msg));
  // Nothing crashes; the first error is kept.
  EXPECT_EQ(mgpuMemAlloc(64, nullptr, false), nullptr);
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(mgpuModuleGetFunction(nullptr, "k"), nullptr);
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  mgpuMemcpy(nullptr, nullptr, 16, nullptr);
  mgpuMemset32(nullptr, 0, 4, nullptr);
  mgpuMemFree(reinterpret_cast<void *>(0x1000), nullptr);
  mgpuStreamDestroy(reinterpret_cast<void *>(0x1000));
  mgpuEventDestroy(reinterpret_cast<void *>(0x1000));
  mgpuModuleUnload(reinterpret_cast<void *>(0x1000));
  ASSERT_TRUE(cuda::takePendingError(msg));
  EXPECT_TRUE(startsWith(msg, "attnrt: CUDA is unavailable: ")) << msg;
  EXPECT_FALSE(cuda::takePendingError(msg));
  cuda::resetForTesting(nullptr);
}

// ---- With the fake driver ------------------------------------------------

struct FakeControls {
  void (*reset)(int, int);
  long (*allocCalls)();
  long (*liveAllocations)();
  long (*launches)();
  void (*failNextLaunch)(int);
  long (*launchCalls)();
  long (*capturedLaunches)();
  long (*graphLaunches)();
  long (*liveGraphs)();
  void (*setGraphSupport)(int);
};

FakeControls &controls() {
  static FakeControls c = [] {
    FakeControls f{};
    void *h = dlopen(ATTNRT_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!h)
      return f;
    f.reset = reinterpret_cast<void (*)(int, int)>(dlsym(h, "fake_cuda_reset"));
    f.allocCalls =
        reinterpret_cast<long (*)()>(dlsym(h, "fake_cuda_alloc_calls"));
    f.liveAllocations =
        reinterpret_cast<long (*)()>(dlsym(h, "fake_cuda_live_allocations"));
    f.launches = reinterpret_cast<long (*)()>(dlsym(h, "fake_cuda_launches"));
    f.failNextLaunch =
        reinterpret_cast<void (*)(int)>(dlsym(h, "fake_cuda_fail_next_launch"));
    auto counter = [&](const char *name) {
      return reinterpret_cast<long (*)()>(dlsym(h, name));
    };
    f.launchCalls = counter("fake_cuda_launch_calls");
    f.capturedLaunches = counter("fake_cuda_captured_launches");
    f.graphLaunches = counter("fake_cuda_graph_launches");
    f.liveGraphs = counter("fake_cuda_live_graphs");
    f.setGraphSupport = reinterpret_cast<void (*)(int)>(
        dlsym(h, "fake_cuda_set_graph_support"));
    return f;
  }();
  return c;
}

const char *gImage = "FAKECUBIN";
const char *gKernel = "add_f32";
void *gStartupModule = nullptr;

/// out = 2 * (a + w), through two launches, a pooled temporary, a device to
/// device copy, a memset and an event.
void cudaInvoke(void **bufs) {
  void *module = gStartupModule
                     ? gStartupModule
                     : mgpuModuleLoad(const_cast<char *>(gImage), 10);
  void *fn = mgpuModuleGetFunction(module, gKernel);
  void *stream = mgpuStreamCreate();
  void *event = mgpuEventCreate();
  void *tmp = mgpuMemAlloc(16, stream, false);
  void *tmp2 = mgpuMemAlloc(16, stream, false);
  mgpuMemset32(tmp2, 0x7f7f7f7f, 4, stream);
  int64_t n = 4;
  void *a = bufs[1], *w = bufs[0], *out = bufs[2];
  void *p1[] = {&a, &w, &tmp, &n};
  mgpuLaunchKernel(fn, 1, 1, 1, 4, 1, 1, 0, stream, p1, nullptr, 4);
  mgpuMemcpy(tmp2, tmp, 16, stream);
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  mgpuEventSynchronize(event);
  void *p2[] = {&tmp, &tmp2, &out, &n};
  mgpuLaunchKernel(fn, 1, 1, 1, 4, 1, 1, 64 * 1024, stream, p2, nullptr, 4);
  mgpuMemFree(tmp, stream);
  mgpuMemFree(tmp2, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mgpuEventDestroy(event);
  if (!gStartupModule)
    mgpuModuleUnload(module);
}

/// Runs m and returns its output 0 (4 floats).
std::vector<float> runOutput(attnrt_model *m) {
  std::vector<float> out(4, -1);
  EXPECT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  EXPECT_EQ(attnrt_get_output(m, 0, out.data(), 16), 0);
  return out;
}

class CudaFake : public ::testing::Test {
protected:
  TempDir dir;
  std::string weights;

  void SetUp() override {
    ASSERT_NE(controls().reset, nullptr)
        << "cannot load " ATTNRT_FAKE_CUDA_PATH ": " << dlerror();
    controls().reset(0, 1);
    cuda::resetForTesting(ATTNRT_FAKE_CUDA_PATH);
    // The tests of the plain launch path; the graph tests turn graphs on.
    setenv("ATTNRT_CUDA_GRAPHS", "0", 1);
    gImage = "FAKECUBIN";
    gKernel = "add_f32";
    gStartupModule = nullptr;
    weights = dir.file("w.safetensors");
    std::vector<float> w = {10, 20, 30, 40};
    writeFile(weights,
              makeSafetensors({{"w", "F32", {4}, bytesOf(w)},
                               {"big", "F32", {256}, std::string(1024, 0)}}));
  }
  void TearDown() override {
    unsetenv("ATTNRT_CUDA_GRAPHS");
    cuda::resetForTesting(nullptr);
  }

  /// Opens `manifest` (the CUDA test model by default) run by `invoke`,
  /// with the weights of `weightsPath` (the fixture's when empty) bound and
  /// input a = {1,2,3,4}.
  attnrt_model *openReady(const char *manifest = kCudaManifest,
                          void (*invoke)(void **) = cudaInvoke,
                          const std::string &weightsPath = "") {
    char err[512];
    attnrt_model *m = attnrt_open(manifest, invoke, err, sizeof(err));
    EXPECT_NE(m, nullptr) << err;
    if (!m)
      return nullptr;
    const std::string &path = weightsPath.empty() ? weights : weightsPath;
    EXPECT_EQ(attnrt_bind_weights(m, path.c_str()), 0) << attnrt_last_error(m);
    std::vector<float> a = {1, 2, 3, 4};
    EXPECT_EQ(attnrt_set_input(m, 0, a.data(), 16), 0);
    return m;
  }

  /// The error of a run of m, which must fail.
  static std::string runError(attnrt_model *m) {
    EXPECT_NE(attnrt_run(m), 0);
    const char *e = attnrt_last_error(m);
    return e ? e : "";
  }
};

TEST_F(CudaFake, InitFailures) {
  controls().reset(100, 1);
  cuda::resetForTesting(ATTNRT_FAKE_CUDA_PATH);
  EXPECT_EQ(openCudaError(), "attnrt: this model was compiled for CUDA but no "
                             "CUDA device was found (cuInit failed: "
                             "CUDA_ERROR_NO_DEVICE)");
  controls().reset(3, 1);
  cuda::resetForTesting(ATTNRT_FAKE_CUDA_PATH);
  EXPECT_EQ(openCudaError(), "attnrt: this model was compiled for CUDA but the "
                             "CUDA driver failed to initialize (cuInit failed: "
                             "CUDA_ERROR_NOT_INITIALIZED)");
  controls().reset(0, 0);
  cuda::resetForTesting(ATTNRT_FAKE_CUDA_PATH);
  EXPECT_EQ(openCudaError(), "attnrt: this model was compiled for CUDA but no "
                             "CUDA device was found");
}

TEST_F(CudaFake, EndToEndWithPool) {
  ModelPtr m(openReady());
  ASSERT_NE(m.get(), nullptr);
  EXPECT_STREQ(attnrt_target(m.get()), "cuda");
  // Only the header and 'w' were read, not 'big'.
  EXPECT_EQ(attnrt_weight_bytes_read(m.get()),
            headerBytesOf(readFile(weights)) + 16);
  // Input, output and weight buffers live on the "device".
  EXPECT_EQ(controls().liveAllocations(), 3);
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(runOutput(m.get()), (std::vector<float>{22, 44, 66, 88}));
    // The two temporaries were allocated once and are reused by later runs.
    EXPECT_EQ(controls().allocCalls(), 3 + 2) << "run " << run;
    cuda::PoolStats st = cuda::poolStats();
    EXPECT_EQ(st.driverAllocations, 2u);
    EXPECT_EQ(st.cachedBlocks, 2u);
    EXPECT_EQ(st.liveBlocks, 0u);
  }
  EXPECT_EQ(controls().launches(), 6);
  // New input, same model.
  std::vector<float> a = {0, 0, 0, 1};
  ASSERT_EQ(attnrt_set_input(m.get(), 0, a.data(), 16), 0);
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{20, 40, 60, 82}));
  // Closing frees the model's device buffers (pooled blocks stay cached).
  attnrt_close(m.m);
  m.m = nullptr;
  EXPECT_EQ(controls().liveAllocations(), 2);
}

TEST_F(CudaFake, InvalidImage) {
  gImage = "NOT A CUBIN";
  ModelPtr m(openReady());
  ASSERT_NE(m.get(), nullptr);
  EXPECT_EQ(runError(m.get()),
            "attnrt: cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE");
  EXPECT_EQ(controls().launches(), 0);
  // The error does not stick to later runs once the cause is gone.
  gImage = "FAKECUBIN";
  EXPECT_EQ(runOutput(m.get())[0], 22);
}

TEST_F(CudaFake, StartupModuleLoadFailure) {
  // As if a global constructor had loaded the module before main.
  static const char bad[] = "garbage";
  EXPECT_EQ(mgpuModuleLoad(const_cast<char *>(bad), sizeof(bad)), nullptr);
  gStartupModule = nullptr;
  struct Fn {
    static void invoke(void **bufs) {
      void *fn = mgpuModuleGetFunction(nullptr, "add_f32");
      int64_t n = 4;
      void *p[] = {&bufs[1], &bufs[0], &bufs[2], &n};
      mgpuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, p, nullptr, 4);
    }
  };
  ModelPtr m(openReady(kCudaManifest, Fn::invoke));
  ASSERT_NE(m.get(), nullptr);
  for (int run = 0; run < 2; ++run) {
    EXPECT_EQ(runError(m.get()),
              "attnrt: cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE")
        << "run " << run;
  }
  EXPECT_EQ(controls().launches(), 0);
}

TEST_F(CudaFake, MissingKernelAndLaunchFailure) {
  gKernel = "softmax_kernel";
  ModelPtr m(openReady());
  ASSERT_NE(m.get(), nullptr);
  EXPECT_EQ(runError(m.get()),
            "attnrt: cuModuleGetFunction('softmax_kernel') failed: "
            "CUDA_ERROR_NOT_FOUND");
  std::vector<float> out(4);
  EXPECT_NE(attnrt_get_output(m.get(), 0, out.data(), 16), 0);
  gKernel = "add_f32";
  controls().failNextLaunch(719);
  EXPECT_EQ(runError(m.get()),
            "attnrt: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED");
  // After the failure the remaining calls of that run were no-ops; the
  // temporaries were still released to the pool.
  EXPECT_EQ(cuda::poolStats().liveBlocks, 0u);
  controls().failNextLaunch(12345);
  EXPECT_EQ(runError(m.get()),
            "attnrt: cuLaunchKernel failed: CUDA error 12345");
  EXPECT_EQ(runOutput(m.get())[3], 88);
}

TEST_F(CudaFake, JitLoadReportsLog) {
  std::string reason;
  ASSERT_TRUE(cuda::ensureInitialized(reason)) << reason;
  static const char ptx[] = "// not ptx";
  EXPECT_EQ(mgpuModuleLoadJIT(const_cast<char *>(ptx), 2, sizeof(ptx)),
            nullptr);
  std::string msg;
  ASSERT_TRUE(cuda::takePendingError(msg));
  EXPECT_EQ(msg, "attnrt: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_IMAGE: "
                 "ptxas fatal: fake syntax error");
  static const char good[] = "FAKECUBIN ptx";
  void *module = mgpuModuleLoadJIT(const_cast<char *>(good), 2, sizeof(good));
  EXPECT_NE(module, nullptr);
  mgpuModuleUnload(module);
  EXPECT_FALSE(cuda::takePendingError(msg)) << msg;
}

TEST_F(CudaFake, DirectMgpuCalls) {
  // Managed memory is host-visible (and here simply host memory).
  uint16_t *p = static_cast<uint16_t *>(mgpuMemAlloc(8, nullptr, true));
  ASSERT_NE(p, nullptr);
  mgpuMemset16(p, 0xabcd, 4, nullptr);
  EXPECT_EQ(p[0], 0xabcd);
  EXPECT_EQ(p[3], 0xabcd);
  mgpuMemFree(p, nullptr);
  EXPECT_EQ(mgpuMemAlloc(0, nullptr, false), nullptr);
  // A block freed on one stream is not handed to another stream until that
  // stream has been synchronized.
  void *s1 = mgpuStreamCreate();
  void *s2 = mgpuStreamCreate();
  void *b1 = mgpuMemAlloc(100, s1, false);
  mgpuMemFree(b1, s1);
  void *b2 = mgpuMemAlloc(100, s2, false);
  EXPECT_NE(b2, b1);
  void *b3 = mgpuMemAlloc(100, s1, false);
  EXPECT_EQ(b3, b1); // same stream: reuse is ordered
  mgpuMemFree(b3, s1);
  mgpuStreamSynchronize(s1);
  void *b4 = mgpuMemAlloc(512, s2, false); // same 512-byte bucket
  EXPECT_EQ(b4, b1);
  mgpuMemFree(b2, s2);
  mgpuMemFree(b4, s2);
  mgpuStreamDestroy(s1);
  mgpuStreamDestroy(s2);
  EXPECT_EQ(cuda::poolStats().cachedBlocks, 2u);
  EXPECT_EQ(cuda::poolStats().driverAllocations, 2u);
  mgpuSetDefaultDevice(0);
  std::string msg;
  EXPECT_FALSE(cuda::takePendingError(msg)) << msg;
  mgpuSetDefaultDevice(1);
  ASSERT_TRUE(cuda::takePendingError(msg));
  EXPECT_EQ(msg, "attnrt: mgpuSetDefaultDevice(1) after CUDA was initialized "
                 "on device 0 is not supported");
}

TEST_F(CudaFake, BindErrorsAndRebind) {
  char err[512];
  ModelPtr m(attnrt_open(kCudaManifest, cudaInvoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  std::string bad = dir.file("bad.safetensors");
  writeFile(bad, makeSafetensors({{"w", "F32", {2, 2}, std::string(16, 0)}}));
  EXPECT_NE(attnrt_bind_weights(m.get(), bad.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            bad + ": tensor 'w' has shape [2, 2] but the model expects [4]");
  EXPECT_EQ(controls().liveAllocations(), 2); // input and output only
  ASSERT_EQ(attnrt_bind_weights(m.get(), weights.c_str()), 0);
  ASSERT_EQ(attnrt_bind_weights(m.get(), weights.c_str()), 0);
  EXPECT_EQ(controls().liveAllocations(), 3); // the old weight was freed
}

TEST_F(CudaFake, GatheredWeight) {
  // w is gathered on the host from elements 6..7 then 0..1 of an [8] tensor
  // and uploaded once.
  static const char *manifest = "attnc-manifest 1\n"
                                "target cuda\n"
                                "weight w f32 4 gather 0 8 6:2,0:2\n"
                                "input a f32 4\n"
                                "output out f32 4\n";
  std::string path = dir.file("g.safetensors");
  std::vector<float> w = {10, 20, 30, 40, 50, 60, 70, 80};
  writeFile(path, makeSafetensors({{"big", "F32", {256}, std::string(1024, 0)},
                                   {"w", "F32", {8}, bytesOf(w)}}));
  ModelPtr m(openReady(manifest, cudaInvoke, path));
  ASSERT_NE(m.get(), nullptr);
  EXPECT_EQ(attnrt_weight_bytes_read(m.get()),
            headerBytesOf(readFile(path)) + 16);
  EXPECT_EQ(controls().liveAllocations(), 3);
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{142, 164, 26, 48}));
  // The fixture's file has w [4]: the source shape does not match.
  EXPECT_NE(attnrt_bind_weights(m.get(), weights.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            weights + ": tensor 'w' has shape [4] but the model expects [8] "
                      "(the source of weight 'w' of shape [4], gathered along "
                      "axis 0 from start:length slices 6:2,0:2)");
  // Nothing was allocated for the failed bind (3 model buffers + 2 pooled
  // temporaries of the run).
  EXPECT_EQ(controls().liveAllocations(), 5);
}

TEST_F(CudaFake, ShardedWeights) {
  // The gather source sits in the second shard of an index; the weight is
  // gathered on the host from it and uploaded once.
  static const char *manifest = "attnc-manifest 1\n"
                                "target cuda\n"
                                "weight w f32 4 gather 0 8 6:2,0:2\n"
                                "input a f32 4\n"
                                "output out f32 4\n";
  std::vector<float> w = {10, 20, 30, 40, 50, 60, 70, 80};
  std::string s1 =
      makeSafetensors({{"big", "F32", {256}, std::string(1024, 0)}});
  std::string s2 = makeSafetensors({{"w", "F32", {8}, bytesOf(w)}});
  writeFile(dir.file("s1.safetensors"), s1);
  writeFile(dir.file("s2.safetensors"), s2);
  std::string index = dir.file("model.safetensors.index.json");
  writeFile(index, "{\"weight_map\": {\"big\": \"s1.safetensors\", "
                   "\"w\": \"s2.safetensors\"}}");
  ModelPtr m(openReady(manifest, cudaInvoke, index));
  ASSERT_NE(m.get(), nullptr);
  EXPECT_EQ(attnrt_weight_bytes_read(m.get()),
            headerBytesOf(s1) + headerBytesOf(s2) + 16);
  EXPECT_EQ(attnrt_weight_file_bytes(m.get()), s1.size() + s2.size());
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{142, 164, 26, 48}));
}

TEST_F(CudaFake, TokenIdsCheckedOnTheHost) {
  // The device lookup can only clamp: ids outside [0, rows) fail the run on
  // the host, before anything is uploaded or launched, naming the first bad
  // one in row-major order. (The ids buffer follows the three that
  // cudaInvoke uses.)
  static const char *manifest = "attnc-manifest 1\n"
                                "target cuda\n"
                                "weight w f32 4\n"
                                "input a f32 4\n"
                                "output out f32 4\n"
                                "input ids i64 2x3 ids 10\n"
                                "input tt i32 3 ids 2\n";
  ModelPtr m(openReady(manifest));
  ASSERT_NE(m.get(), nullptr);
  std::vector<int32_t> tt = {0, 1, 1};
  ASSERT_EQ(attnrt_set_input(m.get(), 2, tt.data(), 12), 0);
  struct Case {
    std::vector<int64_t> ids;
    const char *message;
  };
  const Case bad[] = {
      {{0, 1, 2, 3, 4, 10},
       "attnrt_run: token id 10 at batch 1, position 2 is out of range for "
       "the embedding table of 10 rows (valid ids are 0..9)"},
      {{0, -1, 2, 30522, 4, 5},
       "attnrt_run: token id -1 at batch 0, position 1 is out of range for "
       "the embedding table of 10 rows (valid ids are 0..9)"},
      {{INT64_MIN, 0, 0, 0, 0, 0},
       "attnrt_run: token id -9223372036854775808 at batch 0, position 0 is "
       "out of range for the embedding table of 10 rows (valid ids are "
       "0..9)"},
  };
  for (const Case &c : bad) {
    ASSERT_EQ(attnrt_set_input(m.get(), 1, c.ids.data(), 48), 0);
    EXPECT_EQ(runError(m.get()), c.message);
    EXPECT_EQ(controls().launches(), 0);
    std::vector<float> out(4);
    EXPECT_NE(attnrt_get_output(m.get(), 0, out.data(), 16), 0);
  }
  // The edges of the table run.
  std::vector<int64_t> ids = {0, 9, 9, 0, 5, 9};
  ASSERT_EQ(attnrt_set_input(m.get(), 1, ids.data(), 48), 0);
  ASSERT_EQ(attnrt_run(m.get()), 0) << attnrt_last_error(m.get());
  EXPECT_EQ(controls().launches(), 2);
  // An i32 ids input is checked too.
  tt[2] = 2;
  ASSERT_EQ(attnrt_set_input(m.get(), 2, tt.data(), 12), 0);
  EXPECT_EQ(runError(m.get()),
            "attnrt_run: token id 2 at batch 0, position 2 is out of range for "
            "the embedding table of 2 rows (valid ids are 0..1)");
}

// ---- Model state
// --------------------------------------------------------------

const char *const kStateManifest = "attnc-manifest 1\n"
                                   "target cuda\n"
                                   "weight w f32 4\n"
                                   "input a f32 4\n"
                                   "output out f32 4\n"
                                   "state acc f32 4\n";

/// A decode step's shape of work on state: acc += a in place (the kernel
/// reads and writes the state buffer, as attn-gpu-cache-write's does), then
/// out = acc + w.
void stateInvoke(void **bufs) {
  void *module = mgpuModuleLoad(const_cast<char *>(gImage), 10);
  void *fn = mgpuModuleGetFunction(module, gKernel);
  void *stream = mgpuStreamCreate();
  int64_t n = 4;
  void *w = bufs[0], *a = bufs[1], *out = bufs[2], *acc = bufs[3];
  void *p1[] = {&acc, &a, &acc, &n};
  mgpuLaunchKernel(fn, 1, 1, 1, 4, 1, 1, 0, stream, p1, nullptr, 4);
  void *p2[] = {&acc, &w, &out, &n};
  mgpuLaunchKernel(fn, 1, 1, 1, 4, 1, 1, 0, stream, p2, nullptr, 4);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
}

/// State buffers of a CUDA model live on the device, start zeroed, are
/// updated in place by every run (with and without CUDA graphs: the replay
/// sees the same buffer) and are zeroed again by attnrt_reset_state.
void checkStateRuns(const std::string &weights, bool graphs) {
  if (graphs)
    unsetenv("ATTNRT_CUDA_GRAPHS");
  char err[512];
  ModelPtr m(attnrt_open(kStateManifest, stateInvoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  ASSERT_EQ(attnrt_num_states(m.get()), 1);
  EXPECT_STREQ(attnrt_state_name(m.get(), 0), "acc");
  // Input, output and state buffers are device allocations, then the
  // weight's when it is bound.
  EXPECT_EQ(controls().liveAllocations(), 3);
  ASSERT_EQ(attnrt_bind_weights(m.get(), weights.c_str()), 0)
      << attnrt_last_error(m.get());
  EXPECT_EQ(controls().liveAllocations(), 4);
  std::vector<float> a = {1, 2, 3, 4};
  ASSERT_EQ(attnrt_set_input(m.get(), 0, a.data(), 16), 0);
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{12, 24, 36, 48}));
  a = {0, 0, 0, 10};
  ASSERT_EQ(attnrt_set_input(m.get(), 0, a.data(), 16), 0);
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{12, 24, 36, 58}));
  ASSERT_EQ(attnrt_reset_state(m.get()), 0) << attnrt_last_error(m.get());
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{10, 20, 30, 50}));
  EXPECT_EQ(controls().graphLaunches(), graphs ? 4 : 0);
  EXPECT_EQ(controls().launches(), 8);
}

TEST_F(CudaFake, StateUpdatedInPlaceOnTheDevice) {
  checkStateRuns(weights, /*graphs=*/false);
}

TEST_F(CudaFake, StateUpdatedInPlaceUnderGraphReplay) {
  checkStateRuns(weights, /*graphs=*/true);
}

// ---- CUDA graphs ------------------------------------------------------------

TEST_F(CudaFake, GraphCapturedOnceThenReplayed) {
  // The plain path's results, for comparison.
  ModelPtr plain(openReady());
  ASSERT_NE(plain.get(), nullptr);
  std::vector<float> want = runOutput(plain.get());
  EXPECT_EQ(want, (std::vector<float>{22, 44, 66, 88}));
  EXPECT_EQ(controls().graphLaunches(), 0);
  long calls = controls().launchCalls();

  unsetenv("ATTNRT_CUDA_GRAPHS");
  ModelPtr m(openReady());
  ASSERT_NE(m.get(), nullptr);
  // First run: the two launches are captured (not run), then one replay.
  EXPECT_EQ(runOutput(m.get()), want);
  EXPECT_EQ(controls().capturedLaunches(), 2);
  EXPECT_EQ(controls().launchCalls(), calls + 2);
  EXPECT_EQ(controls().graphLaunches(), 1);
  EXPECT_EQ(controls().liveGraphs(), 2); // the graph and its instantiation
  long executed = controls().launches();
  // Later runs: one graph launch each, no kernel launch calls, the same
  // kernels executed.
  for (int run = 0; run < 2; ++run) {
    EXPECT_EQ(runOutput(m.get()), want) << "run " << run;
    EXPECT_EQ(controls().launchCalls(), calls + 2);
    EXPECT_EQ(controls().capturedLaunches(), 2);
    EXPECT_EQ(controls().graphLaunches(), 2 + run);
    EXPECT_EQ(controls().launches(), executed + 2 * (run + 1));
  }
  // A new input reaches the replay (it is copied into the same buffer).
  std::vector<float> a = {0, 0, 0, 1};
  ASSERT_EQ(attnrt_set_input(m.get(), 0, a.data(), 16), 0);
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{20, 40, 60, 82}));
  ASSERT_EQ(attnrt_set_input(plain.get(), 0, a.data(), 16), 0);
  EXPECT_EQ(runOutput(plain.get()), (std::vector<float>{20, 40, 60, 82}));
  EXPECT_EQ(controls().graphLaunches(), 4);
  // Closing the model releases the graph and what it kept.
  attnrt_close(m.m);
  m.m = nullptr;
  EXPECT_EQ(controls().liveGraphs(), 0);
  EXPECT_EQ(cuda::poolStats().liveBlocks, 0u);
}

/// Contexts of one CUDA model run from several threads: each records and
/// replays its own graph over its own device buffers (their device work
/// takes turns), the outputs are each context's, and rebinding the weights
/// drops every context's graph.
TEST_F(CudaFake, ContextsRunFromThreads) {
  unsetenv("ATTNRT_CUDA_GRAPHS");
  ModelPtr m(openReady());
  ASSERT_NE(m.get(), nullptr);
  constexpr int kThreads = 4, kRuns = 25;
  std::vector<attnrt_context *> contexts(kThreads);
  for (attnrt_context *&c : contexts) {
    c = attnrt_context_create(m.get());
    ASSERT_NE(c, nullptr) << attnrt_last_error(m.get());
  }
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      attnrt_context *c = contexts[static_cast<size_t>(t)];
      // out = 2 * (a + w) with w = {10, 20, 30, 40}.
      std::vector<float> a(4, static_cast<float>(t)), out(4);
      for (int run = 0; run < kRuns; ++run) {
        a[3] = static_cast<float>(run);
        if (attnrt_context_set_input(c, 0, a.data(), 16) ||
            attnrt_context_run(c) ||
            attnrt_context_get_output(c, 0, out.data(), 16) ||
            out != std::vector<float>{2.0f * (t + 10), 2.0f * (t + 20),
                                      2.0f * (t + 30), 2.0f * (run + 40)})
          ++wrong[static_cast<size_t>(t)];
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong, std::vector<int>(kThreads, 0));
  // One capture (two launches) per context, then replays only.
  EXPECT_EQ(controls().capturedLaunches(), 2 * kThreads);
  EXPECT_EQ(controls().graphLaunches(), kThreads * kRuns);
  EXPECT_EQ(controls().liveGraphs(), 2 * kThreads);
  ASSERT_EQ(attnrt_bind_weights(m.get(), weights.c_str()), 0)
      << attnrt_last_error(m.get());
  EXPECT_EQ(controls().liveGraphs(), 0);
  for (attnrt_context *c : contexts)
    attnrt_context_free(c);
}

TEST_F(CudaFake, GraphDroppedWhenWeightsAreRebound) {
  unsetenv("ATTNRT_CUDA_GRAPHS");
  ModelPtr m(openReady());
  ASSERT_NE(m.get(), nullptr);
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{22, 44, 66, 88}));
  std::vector<float> w = {1, 1, 1, 1};
  writeFile(weights,
            makeSafetensors({{"w", "F32", {4}, bytesOf(w)},
                             {"big", "F32", {256}, std::string(1024, 0)}}));
  ASSERT_EQ(attnrt_bind_weights(m.get(), weights.c_str()), 0)
      << attnrt_last_error(m.get());
  EXPECT_EQ(controls().liveGraphs(), 0);
  // Captured again, against the new weight buffer.
  EXPECT_EQ(runOutput(m.get()), (std::vector<float>{4, 6, 8, 10}));
  EXPECT_EQ(controls().capturedLaunches(), 4);
  EXPECT_EQ(controls().graphLaunches(), 2);
}

/// A model of a run-time length n: out[0..n) = 2 * (a + a) through one
/// launch of n threads (the ABI of attn-emit-model-entry: the dynamic sizes
/// follow the buffers).
void dynamicInvoke(void **bufs) {
  void *module = mgpuModuleLoad(const_cast<char *>(gImage), 10);
  void *fn = mgpuModuleGetFunction(module, gKernel);
  void *stream = mgpuStreamCreate();
  int64_t n = static_cast<int64_t *>(bufs[2])[0];
  void *tmp = mgpuMemAlloc(static_cast<uint64_t>(n) * 4, stream, false);
  void *a = bufs[0], *out = bufs[1];
  void *p1[] = {&a, &a, &tmp, &n};
  mgpuLaunchKernel(fn, 1, 1, 1, n, 1, 1, 0, stream, p1, nullptr, 4);
  void *p2[] = {&tmp, &tmp, &out, &n};
  mgpuLaunchKernel(fn, 1, 1, 1, n, 1, 1, 0, stream, p2, nullptr, 4);
  mgpuMemFree(tmp, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
}

const char *const kDynamicCudaManifest = "attnc-manifest 1\n"
                                         "target cuda\n"
                                         "input a f32 ? dims_from -\n"
                                         "output out f32 ? dims_from 0:0\n";

/// Runs the dynamic model on `a`; its output (sized by attnrt_output_shape).
std::vector<float> runDynamic(attnrt_model *m, const std::vector<float> &a) {
  int64_t n = static_cast<int64_t>(a.size());
  EXPECT_EQ(attnrt_set_input_shaped(m, 0, a.data(), a.size() * 4, 1, &n), 0)
      << attnrt_last_error(m);
  EXPECT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  const int64_t *shape = attnrt_output_shape(m, 0);
  EXPECT_NE(shape, nullptr);
  if (!shape)
    return {};
  std::vector<float> out(static_cast<size_t>(shape[0]));
  EXPECT_EQ(attnrt_get_output(m, 0, out.data(), out.size() * 4), 0)
      << attnrt_last_error(m);
  return out;
}

TEST_F(CudaFake, DynamicShapes) {
  for (bool graphs : {false, true}) {
    if (graphs)
      unsetenv("ATTNRT_CUDA_GRAPHS");
    controls().reset(0, 1);
    cuda::resetForTesting(ATTNRT_FAKE_CUDA_PATH);
    char err[512];
    ModelPtr m(
        attnrt_open(kDynamicCudaManifest, dynamicInvoke, err, sizeof(err)));
    ASSERT_NE(m.get(), nullptr) << err;
    // Nothing is allocated before a size is known.
    EXPECT_EQ(controls().liveAllocations(), 0);
    EXPECT_EQ(runDynamic(m.get(), {1, 2}), (std::vector<float>{4, 8}));
    // A longer run grows the input and output buffers (a new graph for
    // the new sizes and buffers); a shorter one reuses them.
    EXPECT_EQ(runDynamic(m.get(), {1, 2, 3, 4, 5}),
              (std::vector<float>{4, 8, 12, 16, 20}));
    EXPECT_EQ(runDynamic(m.get(), {3, 1, 2}), (std::vector<float>{12, 4, 8}));
    EXPECT_EQ(runDynamic(m.get(), {3, 1, 2}), (std::vector<float>{12, 4, 8}));
    EXPECT_EQ(controls().launches(), 8) << "graphs " << graphs;
    if (graphs) {
      // Recorded for 2, 5 and 3 elements; the repeated size replays.
      EXPECT_EQ(controls().capturedLaunches(), 6);
      EXPECT_EQ(controls().graphLaunches(), 4);
    } else {
      EXPECT_EQ(controls().graphLaunches(), 0);
    }
    // A size of 0 would be an empty grid: a clear error instead.
    int64_t zero = 0;
    ASSERT_EQ(attnrt_set_input_shaped(m.get(), 0, nullptr, 0, 1, &zero), 0);
    EXPECT_EQ(runError(m.get()),
              "attnrt_run: input 'a' dimension 0 is 0; a CUDA model's dynamic "
              "sizes must be at least 1");
  }
}

TEST_F(CudaFake, GraphFallbackWhenCaptureIsUnavailable) {
  unsetenv("ATTNRT_CUDA_GRAPHS");
  controls().setGraphSupport(0); // cuStreamBeginCapture fails
  ModelPtr m(openReady());
  ASSERT_NE(m.get(), nullptr);
  for (int run = 0; run < 2; ++run)
    EXPECT_EQ(runOutput(m.get()), (std::vector<float>{22, 44, 66, 88}));
  EXPECT_EQ(controls().graphLaunches(), 0);
  EXPECT_EQ(controls().launchCalls(), 4);
  EXPECT_EQ(controls().launches(), 4);
  EXPECT_EQ(controls().liveGraphs(), 0);
}

} // namespace

// ---- TMA tensor maps (mgpuTensorMapEncodeTiledMemref) ----------------------

namespace {
/// The ranked memref descriptor the lowering of nvgpu.tma.create.descriptor
/// passes (through the unranked memref): a rank-3 view.
struct Memref3 {
  void *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
};

/// What the fake driver writes into a CUtensorMap (FakeCuda.cpp).
struct FakeTensorMap {
  uint32_t magic, rank, dataType, flags;
  uint64_t address;
  uint64_t dims[5];
  uint64_t strides[4];
  uint32_t box[5];
  uint32_t pad;
};

constexpr int64_t kF16 = 6; // CU_TENSOR_MAP_DATA_TYPE_FLOAT16

/// The core-matrix view attn-gpu-mma-matmul describes A [rows, k] by:
/// [k / 8][rows][8] with strides [8, k, 1].
Memref3 coreMatrixView(void *base, int64_t rows, int64_t k,
                       int64_t offset = 0) {
  return Memref3{base, base, offset, {k / 8, rows, 8}, {8, k, 1}};
}

void *encode(Memref3 &m, std::vector<int64_t> box, int64_t type = kF16,
             int64_t rank = 3) {
  return mgpuTensorMapEncodeTiledMemref(rank, &m, type, 0, 0, 0, 0, box.data());
}
} // namespace

TEST_F(CudaFake, TensorMapEncodedOnceIntoDeviceMemory) {
  void *a = mgpuMemAlloc(64 * 64 * 2, nullptr, false);
  ASSERT_NE(a, nullptr);
  Memref3 view = coreMatrixView(a, 64, 64);
  void *map = encode(view, {4, 64, 8});
  std::string msg;
  ASSERT_FALSE(cuda::takePendingError(msg)) << msg;
  ASSERT_NE(map, nullptr);
  // The device copy (host memory in the fake) holds what the driver was
  // given: innermost dimension first, byte strides of the outer ones.
  FakeTensorMap f;
  std::memcpy(&f, map, sizeof(f));
  EXPECT_EQ(f.magic, 0x544d4150u);
  EXPECT_EQ(f.rank, 3u);
  EXPECT_EQ(f.dataType, 6u);
  EXPECT_EQ(f.flags, 0u); // no interleave/swizzle/L2 promotion, zero fill
  EXPECT_EQ(f.address, reinterpret_cast<uint64_t>(a));
  EXPECT_EQ(std::vector<uint64_t>(f.dims, f.dims + 3),
            (std::vector<uint64_t>{8, 64, 8}));
  EXPECT_EQ(std::vector<uint64_t>(f.strides, f.strides + 2),
            (std::vector<uint64_t>{128, 16}));
  EXPECT_EQ(std::vector<uint32_t>(f.box, f.box + 3),
            (std::vector<uint32_t>{8, 64, 4}));
  // Encoded once: the same arguments (a later run, a graph's capture) get
  // the same device copy.
  long allocs = controls().allocCalls();
  EXPECT_EQ(encode(view, {4, 64, 8}), map);
  EXPECT_EQ(controls().allocCalls(), allocs);
  EXPECT_EQ(cuda::tensorMapCount(), 1u);
  // Another box or another start (the memref's offset counts) is another
  // map.
  EXPECT_NE(encode(view, {4, 32, 8}), map);
  Memref3 shifted = coreMatrixView(a, 32, 64, /*offset=*/64 * 8);
  void *map2 = encode(shifted, {4, 32, 8});
  ASSERT_NE(map2, nullptr);
  std::memcpy(&f, map2, sizeof(f));
  EXPECT_EQ(f.address, reinterpret_cast<uint64_t>(a) + 64 * 8 * 2);
  EXPECT_EQ(cuda::tensorMapCount(), 3u);
  EXPECT_FALSE(cuda::takePendingError(msg)) << msg;
  mgpuMemFree(a, nullptr);
}

TEST_F(CudaFake, TensorMapBadArgumentsAreReported) {
  void *a = mgpuMemAlloc(64 * 64 * 2, nullptr, false);
  ASSERT_NE(a, nullptr);
  std::string msg;
  auto fails = [&](Memref3 view, std::vector<int64_t> box, int64_t type = kF16,
                   int64_t rank = 3) {
    EXPECT_EQ(encode(view, box, type, rank), nullptr);
    EXPECT_TRUE(cuda::takePendingError(msg));
    return msg;
  };
  // Rows of 60 elements: a 120-byte stride is not a multiple of 16.
  EXPECT_EQ(fails(coreMatrixView(a, 64, 60), {4, 64, 8}),
            "attnrt: cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE "
            "(rank 3, dims 8 64 7, byte strides 120 16, box 8 64 4, "
            "innermost first)");
  // A box of more than 256 rows.
  EXPECT_EQ(fails(coreMatrixView(a, 64, 64), {4, 512, 8}),
            "attnrt: cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE "
            "(rank 3, dims 8 64 8, byte strides 128 16, box 8 512 4, "
            "innermost first)");
  // A start 2 bytes into the buffer: not 16-byte aligned.
  EXPECT_NE(fails(coreMatrixView(a, 32, 64, /*offset=*/1), {4, 32, 8})
                .find("CUDA_ERROR_INVALID_VALUE"),
            std::string::npos);
  // An inner box of 4 f16 (8 bytes).
  EXPECT_NE(fails(coreMatrixView(a, 64, 64), {4, 64, 4})
                .find("CUDA_ERROR_INVALID_VALUE"),
            std::string::npos);
  // Caught before the driver.
  EXPECT_EQ(fails(coreMatrixView(a, 64, 64), {4, 64, 8}, kF16, 0),
            "attnrt: mgpuTensorMapEncodeTiledMemref: bad tensor rank 0 or "
            "null descriptor/box (ranks 1 to 5 are supported)");
  EXPECT_EQ(fails(coreMatrixView(a, 64, 64), {4, 64, 8}, 99),
            "attnrt: mgpuTensorMapEncodeTiledMemref: unknown tensor map data "
            "type 99");
  Memref3 strided = coreMatrixView(a, 64, 64);
  strided.strides[2] = 2;
  EXPECT_EQ(fails(strided, {4, 64, 8}),
            "attnrt: mgpuTensorMapEncodeTiledMemref: the innermost dimension "
            "must be contiguous (stride 2)");
  EXPECT_EQ(cuda::tensorMapCount(), 0u);
  // While an error is pending nothing is encoded (like every mgpu* call).
  Memref3 bad = coreMatrixView(a, 64, 60);
  Memref3 good = coreMatrixView(a, 64, 64);
  EXPECT_EQ(encode(bad, {4, 64, 8}), nullptr);
  EXPECT_EQ(encode(good, {4, 64, 8}), nullptr);
  ASSERT_TRUE(cuda::takePendingError(msg));
  EXPECT_NE(msg.find("byte strides 120 16"), std::string::npos) << msg;
  EXPECT_NE(encode(good, {4, 64, 8}), nullptr);
  EXPECT_FALSE(cuda::takePendingError(msg)) << msg;
  mgpuMemFree(a, nullptr);
}

TEST_F(CudaFake, TensorMapWithoutDriverSupport) {
  // A driver older than CUDA 12: no cuTensorMapEncodeTiled. Everything
  // else still works; the encode reports what is missing.
  cuda::resetForTesting(ATTNRT_FAKE_CUDA_NO_TMA_PATH);
  void *a = mgpuMemAlloc(64 * 64 * 2, nullptr, false);
  ASSERT_NE(a, nullptr);
  Memref3 view = coreMatrixView(a, 64, 64);
  EXPECT_EQ(encode(view, {4, 64, 8}), nullptr);
  std::string msg;
  ASSERT_TRUE(cuda::takePendingError(msg));
  EXPECT_EQ(msg, std::string("attnrt: mgpuTensorMapEncodeTiledMemref: the "
                             "CUDA driver ") +
                     ATTNRT_FAKE_CUDA_NO_TMA_PATH +
                     " lacks cuTensorMapEncodeTiled (TMA needs CUDA 12 and "
                     "an sm_90 GPU; compile with --no-tma to stage tiles "
                     "with cp.async instead)");
  mgpuMemFree(a, nullptr);
}
