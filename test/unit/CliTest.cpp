//===- CliTest.cpp - tests of the compiled-model command line -------------===//

#include "attnc/Runtime/attnrt.h"

#include "Cli.h"
#include "CudaBackend.h"
#include "Npy.h"
#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>

using namespace attnrt;
using namespace attnrt_test;

namespace {

struct CliResult {
  int code;
  std::string out, err;
};

CliResult runWith(std::vector<std::string> args, const char *manifest,
                  void (*invoke)(void **)) {
  args.insert(args.begin(), "/path/to/model");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(&a[0]);
  argv.push_back(nullptr);
  char *outBuf = nullptr, *errBuf = nullptr;
  size_t outLen = 0, errLen = 0;
  FILE *out = open_memstream(&outBuf, &outLen);
  FILE *err = open_memstream(&errBuf, &errLen);
  CliResult r;
  r.code = runCli(static_cast<int>(args.size()), argv.data(), manifest, invoke,
                  out, err);
  std::fclose(out);
  std::fclose(err);
  r.out.assign(outBuf, outLen);
  r.err.assign(errBuf, errLen);
  std::free(outBuf);
  std::free(errBuf);
  return r;
}

CliResult run(std::vector<std::string> args) {
  return runWith(std::move(args), kCpuManifest, cpuInvoke);
}

bool contains(const std::string &s, const std::string &sub) {
  return s.find(sub) != std::string::npos;
}

class CliTest : public ::testing::Test {
protected:
  TempDir dir;
  std::string weights, a, b, o1, o2;
  size_t weightsSize = 0;

  void SetUp() override {
    weights = dir.file("weights.safetensors");
    weightsSize = writeTestWeights(weights);
    a = dir.file("a.npy");
    b = dir.file("b.npy");
    o1 = dir.file("o1.npy");
    o2 = dir.file("o2.npy");
    std::vector<float> av = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<float> bv = {0, 0, 0, 0, -1, -1, -1, -1};
    std::string err;
    ASSERT_TRUE(writeNpy(a, "<f4", {2, 4}, av.data(), 32, err)) << err;
    ASSERT_TRUE(writeNpy(b, "<f4", {2, 4}, bv.data(), 32, err)) << err;
  }
};

TEST_F(CliTest, Help) {
  CliResult r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "usage: model --weights W.safetensors --input "
                              "x.npy [--input ...]"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "this model: target cpu, 2 weights\n"
                              "inputs (pass --input in this order):\n"
                              "  0 'a' f32 (2, 4)\n"
                              "  1 'b' f32 (2, 4)\n"
                              "outputs (pass --output in this order):\n"
                              "  0 'sum' f32 (2, 4)\n"
                              "  1 'qkv_out' f32 (3, 4)\n"))
      << r.out;
}

TEST_F(CliTest, Describe) {
  CliResult r = run({"--describe"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "attnc model (manifest version 1)\n"
                   "target: cpu\n"
                   "weights: 2 tensors, 64 bytes\n"
                   "  weight 0 'bias' f32 (4,)\n"
                   "  weight 1 'qkv' f32 (3, 4) = concat(axis 0: q, k, v)\n"
                   "  input  0 'a' f32 (2, 4)\n"
                   "  input  1 'b' f32 (2, 4)\n"
                   "  output 0 'sum' f32 (2, 4)\n"
                   "  output 1 'qkv_out' f32 (3, 4)\n");
}

TEST_F(CliTest, DescribeGather) {
  CliResult r = runWith({"--describe"},
                        "attnc-manifest 1\ntarget cpu\n"
                        "weight w f32 4x6\n"
                        "weight w f32 4x3 gather 1 6 4:2,0:1\n"
                        "output o f32 4\n",
                        cpuInvoke);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "attnc model (manifest version 1)\n"
                   "target: cpu\n"
                   "weights: 2 tensors, 144 bytes\n"
                   "  weight 0 'w' f32 (4, 6)\n"
                   "  weight 1 'w' f32 (4, 3) = gather(axis 1 of (4, 6): "
                   "4:2,0:1)\n"
                   "  output 0 'o' f32 (4,)\n");
}

TEST_F(CliTest, RunWritesOutputs) {
  CliResult r = run({"--weights", weights, "--input", a, "--input=" + b,
                     "--output", o1, "--output", o2});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  uint64_t expectRead = headerBytesOf(readFile(weights)) + 64;
  EXPECT_TRUE(contains(r.out, "weights: read " + std::to_string(expectRead) +
                                  " bytes of " + std::to_string(weightsSize) +
                                  "-byte file\n"))
      << r.out;
  // sum = a + b + bias, bias = {0.5, -1, 2, 10}
  EXPECT_TRUE(contains(r.out, "output 0 'sum': f32 (2, 4) min 1 max 17 "
                              "mean 6.875\n"
                              "  values: [1.5, 1, 5, 14, 4.5, 4, 8, 17]\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "output 1 'qkv_out': f32 (3, 4) min 1 max 12 "
                              "mean 6.5\n"
                              "  values: [1, 2, 3, 4, 5, 6, 7, 8, ...]\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "time: ")) << r.out;
  NpyArray arr;
  std::string err;
  ASSERT_TRUE(readNpy(o1, arr, err)) << err;
  EXPECT_EQ(arr.descr, "<f4");
  EXPECT_EQ(arr.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(valuesOf<float>(arr.data(), 8),
            (std::vector<float>{1.5, 1, 5, 14, 4.5, 4, 8, 17}));
  ASSERT_TRUE(readNpy(o2, arr, err)) << err;
  EXPECT_EQ(arr.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(valuesOf<float>(arr.data(), 12)[11], 12.0f);
}

TEST_F(CliTest, BenchAndQuiet) {
  CliResult r = run({"--weights", weights, "--input", a, "--input", b,
                     "--bench", "5", "--warmup", "2", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "output 0")) << r.out;
  EXPECT_FALSE(contains(r.out, "weights:")) << r.out;
  EXPECT_EQ(r.out.compare(0, 14, "latency: mean "), 0) << r.out;
  EXPECT_TRUE(contains(r.out, " ms over 5 runs\n")) << r.out;
  EXPECT_TRUE(contains(r.out, " ms, median ")) << r.out;
  EXPECT_TRUE(contains(r.out, " ms, min ")) << r.out;
  EXPECT_EQ(dir.list().size(), 3u); // no outputs written
}

TEST_F(CliTest, ArgumentErrors) {
  CliResult r = run({"--frobnicate"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: unknown argument '--frobnicate' (see --help)\n");
  EXPECT_EQ(r.out, "");
  r = run({"--input"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: --input needs a value\n");
  r = run({"--bench", "0"});
  EXPECT_EQ(r.err, "error: --bench expects a positive integer, got '0'\n");
  r = run({"--warmup", "x"});
  EXPECT_EQ(r.err, "error: --warmup expects a non-negative integer, got 'x'\n");
  r = run({"--weights", weights, "--input", a});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: the model takes 2 inputs (a, b) but 1 --input was "
                   "given\n");
  r = run({"--weights", weights, "--input", a, "--input", b, "--output", o1});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: the model has 2 outputs (sum, qkv_out) but 1 "
                   "--output was given\n");
  r = run({"--input", a, "--input", b});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: the model has 2 weights: pass --weights "
                   "FILE.safetensors\n");
}

TEST_F(CliTest, InputAndWeightErrors) {
  std::vector<float> small(4, 0);
  std::string c = dir.file("c.npy"), err;
  ASSERT_TRUE(writeNpy(c, "<f4", {1, 4}, small.data(), 16, err));
  CliResult r = run({"--weights", weights, "--input", a, "--input", c});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: " + c +
                       ": shape (1, 4) but the model's input 1 "
                       "'b' expects (2, 4)\n");
  std::vector<int32_t> ints(8, 0);
  ASSERT_TRUE(writeNpy(c, "<i4", {2, 4}, ints.data(), 32, err));
  r = run({"--weights", weights, "--input", c, "--input", b});
  EXPECT_EQ(r.err, "error: " + c +
                       ": dtype '<i4' (int32) but the model's "
                       "input 0 'a' expects f32 ('<f4')\n");
  writeFile(c, readFile(a).substr(0, 128 + 6));
  r = run({"--weights", weights, "--input", c, "--input", b});
  EXPECT_EQ(r.err, "error: " + c +
                       ": truncated data: shape (2, 4) with dtype "
                       "'<f4' needs 32 bytes but the file has "
                       "6\n");
  r = run(
      {"--weights", dir.file("none.safetensors"), "--input", a, "--input", b});
  EXPECT_EQ(r.err, "error: " + dir.file("none.safetensors") +
                       ": cannot open: No such file or directory\n");
  std::string w = dir.file("w.safetensors");
  writeFile(w, makeSafetensors({{"bias", "F32", {2, 2}, bytesOf(testBias())}}));
  r = run({"--weights", w, "--input", a, "--input", b});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: " + w +
                       ": tensor 'bias' has shape [2, 2] but the "
                       "model expects [4]\n");
}

TEST_F(CliTest, NoPartialOutputs) {
  writeFile(o1, "old contents");
  std::string bad = dir.file("missing-dir/o2.npy");
  CliResult r = run({"--weights", weights, "--input", a, "--input", b,
                     "--output", o1, "--output", bad});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "error: " + bad +
                                  ": cannot create a temporary "
                                  "file in '"))
      << r.err;
  EXPECT_EQ(readFile(o1), "old contents");
  // No temporary files left next to o1.
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"a.npy", "b.npy", "o1.npy",
                                                  "weights.safetensors"}));
}

TEST_F(CliTest, Bf16Model) {
  std::string x = dir.file("x.npy"), y = dir.file("y.npy"), err;
  std::vector<uint16_t> xv = {0x3f80, 0xc000, 0x4040, 0x0000}; // 1 -2 3 0
  ASSERT_TRUE(writeNpy(x, "<u2", {4}, xv.data(), 8, err));
  CliResult r =
      runWith({"--input", x, "--output", y}, kBf16Manifest, bf16Invoke);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "output 0 'y': bf16 (4,) min -4 max 6 mean 1\n"
                              "  values: [2, -4, 6, 0]\n"))
      << r.out;
  NpyArray arr;
  ASSERT_TRUE(readNpy(y, arr, err)) << err;
  EXPECT_EQ(arr.descr, "<u2");
  EXPECT_EQ(valuesOf<uint16_t>(arr.data(), 4),
            (std::vector<uint16_t>{0x4000, 0xc080, 0x40c0, 0x0000}));
  std::vector<float> f(4, 1.0f);
  ASSERT_TRUE(writeNpy(x, "<f4", {4}, f.data(), 16, err));
  r = runWith({"--input", x}, kBf16Manifest, bf16Invoke);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: " + x +
                       ": dtype '<f4' (float32) but the model's "
                       "input 0 'x' expects bf16 (stored as "
                       "'<u2' raw bits)\n");
}

TEST_F(CliTest, CudaModelWithoutDriver) {
  cuda::resetForTesting("libattnrt-no-such-driver.so.1");
  CliResult r =
      runWith({"--weights", weights, "--input", a}, kCudaManifest, cpuInvoke);
  EXPECT_EQ(r.code, 1);
  const std::string prefix =
      "error: attnrt: this model was compiled for CUDA but no CUDA driver was "
      "found (libattnrt-no-such-driver.so.1: cannot open shared object file";
  EXPECT_EQ(r.err.compare(0, prefix.size(), prefix), 0) << r.err;
  // Describing the model needs no driver.
  r = runWith({"--describe"}, kCudaManifest, cpuInvoke);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "target: cuda\n")) << r.out;
  r = runWith({"--help"}, kCudaManifest, cpuInvoke);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "this model: target cuda, 1 weight\n")) << r.out;
  cuda::resetForTesting(nullptr);
}

TEST_F(CliTest, BadManifest) {
  CliResult r = runWith({"--describe"}, "attnc-manifest 1\n", cpuInvoke);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: attnrt: invalid model manifest: manifest: missing "
                   "'target cpu' or 'target cuda' record\n");
  r = runWith({"--help"}, "attnc-manifest 1\n", cpuInvoke);
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "(no usable model: attnrt: invalid model "
                              "manifest: manifest: missing"))
      << r.out;
}

TEST_F(CliTest, AttnrtMainUsesLinkedModel) {
  std::string o = dir.file("linked.npy");
  std::vector<std::string> args = {"model", "--weights", weights, "--input",
                                   a,       "--input",   b,       "--output",
                                   o1,      "--output",  o2,      "-q"};
  std::vector<char *> argv;
  for (std::string &s : args)
    argv.push_back(&s[0]);
  testing::internal::CaptureStdout();
  int code = attnrt_main(static_cast<int>(argv.size()), argv.data());
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, "");
  NpyArray arr;
  std::string err;
  ASSERT_TRUE(readNpy(o1, arr, err)) << err;
  EXPECT_EQ(valuesOf<float>(arr.data(), 8)[7], 17.0f);

  std::vector<std::string> bad = {"model", "--input", a};
  std::vector<char *> badv;
  for (std::string &s : bad)
    badv.push_back(&s[0]);
  testing::internal::CaptureStderr();
  code = attnrt_main(static_cast<int>(badv.size()), badv.data());
  std::string errOut = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1);
  EXPECT_EQ(errOut, "error: the model takes 2 inputs (a, b) but 1 --input was "
                    "given\n");
}

} // namespace
