//===- RuntimeTest.cpp - attnrt C API tests on the CPU target -------------===//

#include "attnc/Runtime/SafeTensors.h"
#include "attnc/Runtime/attnrt.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace attnrt_test;
using attnrt::weightFilePaths;

namespace {

std::string openError(const char *manifest, void (*invoke)(void **)) {
  char err[512];
  std::memset(err, 'Z', sizeof(err));
  attnrt_model *m = attnrt_open(manifest, invoke, err, sizeof(err));
  EXPECT_EQ(m, nullptr);
  attnrt_close(m);
  EXPECT_STREQ(attnrt_last_error(nullptr), err);
  return err;
}

/// The two outputs of the test model after a run on inputs `a` and `b`:
/// `sum` is a + b + bias, `qkv` the three weights side by side.
void expectTestModelOutputs(attnrt_model *m, const std::vector<float> &a,
                            const std::vector<float> &b) {
  std::vector<float> sum(8), qkv(12);
  ASSERT_EQ(attnrt_get_output(m, 0, sum.data(), 32), 0);
  ASSERT_EQ(attnrt_get_output(m, 1, qkv.data(), 48), 0);
  std::vector<float> bias = testBias();
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(sum[i], a[i] + b[i] + bias[i % 4]) << i;
  EXPECT_EQ(qkv, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
}

TEST(Runtime, OpenErrors) {
  EXPECT_EQ(
      openError("attnc-manifest 1\ntarget cpu\ninput a f31 4\n", cpuInvoke),
      "attnrt: invalid model manifest: manifest line 3: unknown dtype "
      "'f31' (expected f32, f16, bf16, i32 or i64)");
  EXPECT_EQ(openError(nullptr, cpuInvoke), "attnrt: no manifest given");
  EXPECT_EQ(openError(kCpuManifest, nullptr),
            "attnrt: no invoke function given");
  // Truncation keeps the buffer NUL-terminated.
  char small[8];
  EXPECT_EQ(attnrt_open(nullptr, cpuInvoke, small, sizeof(small)), nullptr);
  EXPECT_STREQ(small, "attnrt:");
  EXPECT_EQ(attnrt_open(nullptr, cpuInvoke, nullptr, 0), nullptr);
}

TEST(Runtime, Describe) {
  char err[256];
  ModelPtr m(attnrt_open(kCpuManifest, cpuInvoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  EXPECT_STREQ(attnrt_target(m.get()), "cpu");
  EXPECT_EQ(attnrt_num_weights(m.get()), 2);
  EXPECT_EQ(attnrt_num_inputs(m.get()), 2);
  EXPECT_EQ(attnrt_num_outputs(m.get()), 2);
  EXPECT_STREQ(attnrt_input_name(m.get(), 1), "b");
  EXPECT_EQ(attnrt_input_dtype(m.get(), 0), ATTNRT_F32);
  EXPECT_EQ(attnrt_input_rank(m.get(), 0), 2);
  EXPECT_EQ(attnrt_input_dim(m.get(), 0, 1), 4);
  EXPECT_EQ(attnrt_input_dims(m.get(), 0)[0], 2);
  EXPECT_EQ(attnrt_input_bytes(m.get(), 0), 32u);
  EXPECT_STREQ(attnrt_output_name(m.get(), 1), "qkv_out");
  EXPECT_EQ(attnrt_output_dim(m.get(), 1, 0), 3);
  EXPECT_EQ(attnrt_output_bytes(m.get(), 1), 48u);
  EXPECT_EQ(attnrt_input_name(m.get(), 2), nullptr);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "attnrt_input_name: input index 2 out of range (the model has "
               "2)");
  EXPECT_EQ(attnrt_output_dtype(m.get(), 5), ATTNRT_INVALID_DTYPE);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "attnrt_output_dtype: output index 5 out of range (the model "
               "has 2)");
  EXPECT_EQ(attnrt_output_rank(m.get(), -1), -1);
  EXPECT_EQ(attnrt_output_dim(m.get(), 0, 2), -1);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "attnrt_output_dim: axis 2 out of range for rank 2");
  EXPECT_EQ(attnrt_last_run_ms(m.get()), 0.0);
  EXPECT_EQ(attnrt_weight_bytes_read(m.get()), 0u);
}

// The C API's dtype enum, names and sizes come from the one dtype table.
TEST(Runtime, DTypes) {
  EXPECT_STREQ(attnrt_dtype_name(ATTNRT_F32), "f32");
  EXPECT_STREQ(attnrt_dtype_name(ATTNRT_F16), "f16");
  EXPECT_STREQ(attnrt_dtype_name(ATTNRT_BF16), "bf16");
  EXPECT_STREQ(attnrt_dtype_name(ATTNRT_I32), "i32");
  EXPECT_STREQ(attnrt_dtype_name(ATTNRT_I64), "i64");
  EXPECT_EQ(attnrt_dtype_name(ATTNRT_INVALID_DTYPE), nullptr);
  EXPECT_EQ(attnrt_dtype_name(static_cast<attnrt_dtype>(5)), nullptr);
  EXPECT_EQ(attnrt_dtype_size(ATTNRT_F32), 4u);
  EXPECT_EQ(attnrt_dtype_size(ATTNRT_BF16), 2u);
  EXPECT_EQ(attnrt_dtype_size(ATTNRT_I64), 8u);
  EXPECT_EQ(attnrt_dtype_size(ATTNRT_INVALID_DTYPE), 0u);
}

static void copyWeightToOutput(void **buffers) {
  std::memcpy(buffers[1], buffers[0], 4 * sizeof(uint16_t));
}

// A `convert` weight bound through the C API: the f32 checkpoint tensor is
// converted to the model's f16 even where it could otherwise be bound in
// place (its data 64-byte aligned in the file), and an f16 tensor is bound
// as stored.
TEST(Runtime, ConvertedWeightBinding) {
  TempDir dir;
  std::vector<float> w = {1.0f, 2.5f, -0.1f, 65520.0f};
  std::vector<uint16_t> h = {0x3c00, 0x4100, 0xae66, 0x7c00};
  for (bool f32 : {true, false}) {
    std::string header =
        std::string("{\"w\":{\"dtype\":\"") + (f32 ? "F32" : "F16") +
        "\",\"shape\":[4],\"data_offsets\":[0," + (f32 ? "16" : "8") + "]}}";
    // The data starts at 8 + header length: pad to a multiple of 64.
    while ((8 + header.size()) % 64)
      header += ' ';
    std::string path = dir.file(f32 ? "f32.safetensors" : "f16.safetensors");
    writeFile(path, rawSafetensors(header, f32 ? bytesOf(w) : bytesOf(h)));
    char err[256];
    ModelPtr mp(attnrt_open("attnc-manifest 1\ntarget cpu\n"
                            "weight w f16 4 convert\noutput y f16 4\n",
                            copyWeightToOutput, err, sizeof(err)));
    ASSERT_NE(mp.get(), nullptr) << err;
    ASSERT_EQ(attnrt_bind_weights(mp.get(), path.c_str()), 0)
        << attnrt_last_error(mp.get());
    ASSERT_EQ(attnrt_run(mp.get()), 0) << attnrt_last_error(mp.get());
    std::vector<uint16_t> out(4, 0);
    ASSERT_EQ(attnrt_get_output(mp.get(), 0, out.data(), 8), 0)
        << attnrt_last_error(mp.get());
    EXPECT_EQ(out, h) << (f32 ? "from f32" : "from f16");
  }
}

TEST(Runtime, EndToEndCpu) {
  TempDir dir;
  std::string wpath = dir.file("weights.safetensors");
  size_t fileSize = writeTestWeights(wpath);
  char err[256];
  ModelPtr mp(attnrt_open(kCpuManifest, cpuInvoke, err, sizeof(err)));
  attnrt_model *m = mp.get();
  ASSERT_NE(m, nullptr) << err;

  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> b = {10, 20, 30, 40, 50, 60, 70, 80};
  EXPECT_NE(attnrt_run(m), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_run: the model's weights are not bound (call "
               "attnrt_bind_weights first)");
  ASSERT_EQ(attnrt_bind_weights(m, wpath.c_str()), 0) << attnrt_last_error(m);
  // Only the header and the referenced tensors count: bias (16 bytes) and
  // q, k, v (16 bytes each), not the 4000-byte 'unused' tensor.
  std::string image = readFile(wpath);
  EXPECT_EQ(attnrt_weight_bytes_read(m), headerBytesOf(image) + 16 + 48);
  EXPECT_EQ(attnrt_weight_file_bytes(m), fileSize);

  ASSERT_EQ(attnrt_set_input(m, 0, a.data(), 32), 0);
  EXPECT_NE(attnrt_run(m), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_run: input 1 'b' has not been set");
  EXPECT_NE(attnrt_set_input(m, 1, b.data(), 16), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_set_input: input 1 'b' (f32 (2, 4)) is 32 bytes but 16 "
               "were given");
  EXPECT_NE(attnrt_set_input(m, 2, b.data(), 32), 0);
  EXPECT_STREQ(
      attnrt_last_error(m),
      "attnrt_set_input: input index 2 out of range (the model has 2)");
  ASSERT_EQ(attnrt_set_input(m, 1, b.data(), 32), 0);

  std::vector<float> sum(8), qkv(12);
  EXPECT_NE(attnrt_get_output(m, 0, sum.data(), 32), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_get_output: the model has not run successfully");
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  EXPECT_GE(attnrt_last_run_ms(m), 0.0);
  EXPECT_NE(attnrt_get_output(m, 0, sum.data(), 31), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_get_output: output 0 'sum' (f32 (2, 4)) is 32 bytes "
               "but the destination holds 31");
  expectTestModelOutputs(m, a, b);

  // Inputs persist across runs; a new input changes the result.
  a[0] = 100;
  ASSERT_EQ(attnrt_set_input(m, 0, a.data(), 32), 0);
  ASSERT_EQ(attnrt_run(m), 0);
  ASSERT_EQ(attnrt_get_output(m, 0, sum.data(), 32), 0);
  EXPECT_EQ(sum[0], 100 + 10 + 0.5f);

  // A failed rebind keeps the old weights; the error names both shapes.
  std::string bad = dir.file("bad.safetensors");
  writeFile(bad, makeSafetensors({{"bias", "F32", {5}, std::string(20, 0)},
                                  {"q", "F32", {1, 4}, bytesOf(testQ())},
                                  {"k", "F32", {1, 4}, bytesOf(testK())},
                                  {"v", "F32", {1, 4}, bytesOf(testV())}}));
  EXPECT_NE(attnrt_bind_weights(m, bad.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m)),
            bad + ": tensor 'bias' has shape [5] but the model expects [4]");
  ASSERT_EQ(attnrt_run(m), 0);
  ASSERT_EQ(attnrt_get_output(m, 0, sum.data(), 32), 0);
  EXPECT_EQ(sum[0], 100 + 10 + 0.5f);

  // Rebinding replaces the weights.
  std::vector<float> bias2 = {1, 1, 1, 1};
  std::string w2 = dir.file("w2.safetensors");
  writeFile(w2, makeSafetensors({{"bias", "F32", {4}, bytesOf(bias2)},
                                 {"q", "F32", {1, 4}, bytesOf(testV())},
                                 {"k", "F32", {1, 4}, bytesOf(testK())},
                                 {"v", "F32", {1, 4}, bytesOf(testQ())}}));
  ASSERT_EQ(attnrt_bind_weights(m, w2.c_str()), 0) << attnrt_last_error(m);
  ASSERT_EQ(attnrt_run(m), 0);
  ASSERT_EQ(attnrt_get_output(m, 0, sum.data(), 32), 0);
  ASSERT_EQ(attnrt_get_output(m, 1, qkv.data(), 48), 0);
  EXPECT_EQ(sum[0], 100 + 10 + 1);
  EXPECT_EQ(qkv, (std::vector<float>{9, 10, 11, 12, 5, 6, 7, 8, 1, 2, 3, 4}));
}

TEST(Runtime, InPlaceAndCopiedWeights) {
  // 'al' starts 64-byte aligned in the mapping (used in place), 'un' does
  // not (copied); both must read correctly, with the file mapping alive.
  // (A 4-byte tensor 'pad' between them: tensors tile the data section.)
  TempDir dir;
  std::string header =
      "{\"al\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
      "\"pad\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[16,20]},"
      "\"un\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[20,36]}}";
  while ((8 + header.size()) % 64)
    header += ' ';
  std::vector<float> al = {1, 2, 3, 4}, un = {5, 6, 7, 8};
  std::string data = bytesOf(al) + "pad!" + bytesOf(un);
  std::string path = dir.file("w.safetensors");
  writeFile(path, rawSafetensors(header, data));
  static const char *manifest = "attnc-manifest 1\ntarget cpu\n"
                                "weight al f32 4\nweight un f32 4\n"
                                "output o f32 8\n";
  struct Fn {
    static void invoke(void **bufs) {
      std::memcpy(bufs[2], bufs[0], 16);
      std::memcpy(static_cast<char *>(bufs[2]) + 16, bufs[1], 16);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(bufs[0]) % 64, 0u);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(bufs[1]) % 64, 0u);
    }
  };
  char err[256];
  ModelPtr m(attnrt_open(manifest, Fn::invoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  ASSERT_EQ(attnrt_bind_weights(m.get(), path.c_str()), 0)
      << attnrt_last_error(m.get());
  ASSERT_EQ(attnrt_run(m.get()), 0) << attnrt_last_error(m.get());
  std::vector<float> o(8);
  ASSERT_EQ(attnrt_get_output(m.get(), 0, o.data(), 32), 0);
  EXPECT_EQ(o, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Runtime, BindErrors) {
  TempDir dir;
  char err[256];
  ModelPtr m(attnrt_open(kCpuManifest, cpuInvoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  std::string p = dir.file("w.safetensors");
  writeFile(p, makeSafetensors({{"bias", "F32", {4}, bytesOf(testBias())},
                                {"q", "F32", {1, 4}, bytesOf(testQ())},
                                {"k", "F16", {1, 4}, std::string(8, 0)},
                                {"v", "F32", {1, 4}, bytesOf(testV())}}));
  EXPECT_NE(attnrt_bind_weights(m.get(), p.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            p + ": tensor 'k' has dtype F16 but the model expects F32 (part 2 "
                "of weight 'qkv', concatenated along axis 0)");
  writeFile(p, makeSafetensors({{"q", "F32", {1, 4}, bytesOf(testQ())}}));
  EXPECT_NE(attnrt_bind_weights(m.get(), p.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            p + ": the model needs tensor 'bias' but the file does not "
                "contain it");
  writeFile(p, "xyz");
  EXPECT_NE(attnrt_bind_weights(m.get(), p.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            p + ": file is 3 bytes, too short for a safetensors file (at "
                "least 8 bytes of header length needed)");
  EXPECT_NE(attnrt_bind_weights(m.get(), nullptr), 0);
  // Nothing got bound.
  EXPECT_NE(attnrt_run(m.get()), 0);
  EXPECT_EQ(attnrt_weight_bytes_read(m.get()), 0u);
}

/// A shard index (model.safetensors.index.json) as save_pretrained writes
/// it, with `weightMap` the body of its "weight_map" object.
std::string shardIndex(const std::string &weightMap) {
  return "{\"metadata\": {\"total_size\": 64},\n \"weight_map\": {" +
         weightMap + "}}\n";
}

TEST(Runtime, ShardedWeights) {
  // The concat weight qkv takes q from one shard and k, v from another;
  // the unused tensor sits in a third shard that is mapped but not read.
  TempDir dir;
  std::string s1 = makeSafetensors({{"q", "F32", {1, 4}, bytesOf(testQ())},
                                    {"bias", "F32", {4}, bytesOf(testBias())}});
  std::string s2 = makeSafetensors({{"k", "F32", {1, 4}, bytesOf(testK())},
                                    {"v", "F32", {1, 4}, bytesOf(testV())}});
  std::string s3 = makeSafetensors(
      {{"unused", "F32", {1000}, bytesOf(std::vector<float>(1000, 7.0f))}});
  writeFile(dir.file("model-00001-of-00003.safetensors"), s1);
  writeFile(dir.file("model-00002-of-00003.safetensors"), s2);
  writeFile(dir.file("model-00003-of-00003.safetensors"), s3);
  std::string index = dir.file("model.safetensors.index.json");
  writeFile(index,
            shardIndex("\"q\": \"model-00001-of-00003.safetensors\", "
                       "\"bias\": \"model-00001-of-00003.safetensors\", "
                       "\"k\": \"model-00002-of-00003.safetensors\", "
                       "\"v\": \"model-00002-of-00003.safetensors\", "
                       "\"unused\": \"model-00003-of-00003.safetensors\""));
  char err[256];
  ModelPtr mp(attnrt_open(kCpuManifest, cpuInvoke, err, sizeof(err)));
  attnrt_model *m = mp.get();
  ASSERT_NE(m, nullptr) << err;
  ASSERT_EQ(attnrt_bind_weights(m, index.c_str()), 0) << attnrt_last_error(m);
  // The files a bind reads, for the CLI's check that no output replaces
  // one of them.
  EXPECT_EQ(weightFilePaths(index),
            (std::vector<std::string>{
                index, dir.file("model-00001-of-00003.safetensors"),
                dir.file("model-00002-of-00003.safetensors"),
                dir.file("model-00003-of-00003.safetensors")}));
  EXPECT_EQ(weightFilePaths(dir.file("x.safetensors")),
            (std::vector<std::string>{dir.file("x.safetensors")}));
  // Every shard's header, and the referenced tensors only.
  EXPECT_EQ(attnrt_weight_bytes_read(m), headerBytesOf(s1) + headerBytesOf(s2) +
                                             headerBytesOf(s3) + 16 + 48);
  EXPECT_EQ(attnrt_weight_file_bytes(m), s1.size() + s2.size() + s3.size());
  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> b = {10, 20, 30, 40, 50, 60, 70, 80};
  ASSERT_EQ(attnrt_set_input(m, 0, a.data(), 32), 0);
  ASSERT_EQ(attnrt_set_input(m, 1, b.data(), 32), 0);
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  expectTestModelOutputs(m, a, b);

  // A wrong tensor is reported against the shard that holds it.
  std::string s2bad =
      makeSafetensors({{"k", "F32", {1, 4}, bytesOf(testK())},
                       {"v", "F16", {1, 4}, std::string(8, 0)}});
  writeFile(dir.file("model-00002-of-00003.safetensors"), s2bad);
  EXPECT_NE(attnrt_bind_weights(m, index.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m)),
            dir.file("model-00002-of-00003.safetensors") +
                ": tensor 'v' has dtype F16 but the model expects F32 (part 3 "
                "of weight 'qkv', concatenated along axis 0)");
  // The old weights stay bound.
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  std::vector<float> qkv(12);
  ASSERT_EQ(attnrt_get_output(m, 1, qkv.data(), 48), 0);
  EXPECT_EQ(qkv, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
}

TEST(Runtime, ShardIndexErrors) {
  TempDir dir;
  writeFile(dir.file("a.safetensors"),
            makeSafetensors({{"q", "F32", {1, 4}, bytesOf(testQ())},
                             {"bias", "F32", {4}, bytesOf(testBias())}}));
  writeFile(dir.file("b.safetensors"),
            makeSafetensors({{"k", "F32", {1, 4}, bytesOf(testK())},
                             {"v", "F32", {1, 4}, bytesOf(testV())}}));
  const std::string good = "\"q\": \"a.safetensors\", \"bias\": "
                           "\"a.safetensors\", \"k\": \"b.safetensors\"";
  char err[256];
  ModelPtr mp(attnrt_open(kCpuManifest, cpuInvoke, err, sizeof(err)));
  attnrt_model *m = mp.get();
  ASSERT_NE(m, nullptr) << err;
  std::string index = dir.file("model.safetensors.index.json");
  // The error of binding an index with this text, less "INDEX: " when it
  // starts with that.
  auto bindError = [&](const std::string &text) -> std::string {
    writeFile(index, text);
    if (attnrt_bind_weights(m, index.c_str()) == 0)
      return "bound";
    std::string e = attnrt_last_error(m);
    if (e.compare(0, index.size() + 2, index + ": ") == 0)
      e = e.substr(index.size() + 2);
    return e;
  };
  EXPECT_EQ(bindError("{\"weight_map\": {"),
            "the shard index is not valid JSON: unexpected end of input "
            "(expected a key) at byte 16");
  EXPECT_EQ(bindError("[]"),
            "the shard index is not a JSON object (it is an array)");
  EXPECT_EQ(bindError("{\"metadata\": {}}"),
            "the shard index has no \"weight_map\" object (tensor name -> "
            "shard file)");
  EXPECT_EQ(bindError("{\"weight_map\": [\"a.safetensors\"]}"),
            "the shard index has no \"weight_map\" object (tensor name -> "
            "shard file)");
  EXPECT_EQ(bindError(shardIndex("")), "the shard index's weight_map is empty");
  EXPECT_EQ(bindError(shardIndex("\"q\": 1")),
            "weight_map entry 'q' must name a shard file");
  for (const char *name : {"../a.safetensors", "sub/a.safetensors", "..", ".",
                           "", "a\\\\b.safetensors"})
    EXPECT_EQ(bindError(shardIndex(good + ", \"v\": \"" + name + "\"")),
              "weight_map entry 'v' names shard '" +
                  std::string(name == std::string("a\\\\b.safetensors")
                                  ? "a\\b.safetensors"
                                  : name) +
                  "', which is not a file name in the checkpoint directory");
  EXPECT_EQ(bindError(shardIndex(good + ", \"v\": \"c.safetensors\"")),
            dir.file("c.safetensors") +
                ": cannot open: No such file or directory");
  const std::string subdir = dir.file("d.safetensors");
  ASSERT_EQ(::mkdir(subdir.c_str(), 0700), 0);
  EXPECT_EQ(bindError(shardIndex(good + ", \"v\": \"d.safetensors\"")),
            subdir + ": not a regular file (a directory)");
  ::rmdir(subdir.c_str());
  EXPECT_EQ(bindError(shardIndex(good + ", \"v\": \"a.safetensors\"")),
            "the shard index maps tensor 'v' to a.safetensors, which has no "
            "such tensor");
  // One tensor mapped twice (a duplicate key), or held by two shards.
  const std::string twice =
      shardIndex(good + ", \"v\": \"b.safetensors\", \"q\": \"b.safetensors\"");
  EXPECT_EQ(bindError(twice),
            "the shard index is not valid JSON: duplicate key \"q\" at byte " +
                std::to_string(twice.rfind("\"q\"")));
  writeFile(dir.file("c.safetensors"),
            makeSafetensors({{"q", "F32", {1, 4}, bytesOf(testQ())}}));
  EXPECT_EQ(bindError(shardIndex(good + ", \"v\": \"b.safetensors\", "
                                        "\"w\": \"c.safetensors\"")),
            "tensor 'q' is in two shards, a.safetensors and c.safetensors");
  // A tensor the model needs that no shard holds.
  writeFile(dir.file("k.safetensors"),
            makeSafetensors({{"k", "F32", {1, 4}, bytesOf(testK())}}));
  EXPECT_EQ(
      bindError(shardIndex("\"q\": \"a.safetensors\", \"bias\": "
                           "\"a.safetensors\", \"k\": \"k.safetensors\"")),
      "the model needs tensor 'v' but none of the index's 2 shards "
      "contains it (part 3 of weight 'qkv', concatenated along axis 0)");
  // The weight_map decides: b.safetensors holds v, but the index does not
  // name it.
  EXPECT_EQ(bindError(shardIndex(good)),
            "the model needs tensor 'v' but the index's weight_map does not "
            "name it (" +
                dir.file("b.safetensors") +
                " holds it) (part 3 of weight 'qkv', concatenated along axis "
                "0)");
  // Nothing got bound; then the good index binds.
  EXPECT_NE(attnrt_run(m), 0);
  EXPECT_EQ(bindError(shardIndex(good + ", \"v\": \"b.safetensors\"")),
            "bound");
}

/// A [4, 6] f32 tensor w[r][c] = 10 * r + c, a bias [3] and an unused one.
std::string writeGatherWeights(const TempDir &dir, const std::string &name,
                               float scale = 1) {
  std::vector<float> w(24);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c)
      w[r * 6 + c] = scale * static_cast<float>(10 * r + c);
  std::vector<float> bias = {0.5f, 0.25f, 0.125f};
  std::string path = dir.file(name);
  writeFile(path,
            makeSafetensors({{"unused", "F32", {100}, std::string(400, 0)},
                             {"w", "F32", {4, 6}, bytesOf(w)},
                             {"bias", "F32", {3}, bytesOf(bias)}}));
  return path;
}

// Structured pruning: w [4, 6] is bound three ways at once.
//   weight 0: columns 4..5 then 0 (axis 1)  -> [4, 3]
//   weight 1: rows 3 then 1 (axis 0)        -> [2, 6]
//   weight 2: w itself, plain               -> [4, 6]
//   weight 3: bias [3], plain
// out0 = x @ 1 + (weight 0 + bias) per row; out1 = weight 1; out2 = weight 2.
const char *const kGatherManifest = "attnc-manifest 1\n"
                                    "target cpu\n"
                                    "weight w f32 4x3 gather 1 6 4:2,0:1\n"
                                    "weight w f32 2x6 gather 0 4 3:1,1:1\n"
                                    "weight w f32 4x6\n"
                                    "weight bias f32 3\n"
                                    "input x f32 4\n"
                                    "output y f32 4x3\n"
                                    "output rows f32 2x6\n"
                                    "output whole f32 4x6\n";

void gatherInvoke(void **bufs) {
  const float *cols = static_cast<const float *>(bufs[0]);
  const float *rows = static_cast<const float *>(bufs[1]);
  const float *whole = static_cast<const float *>(bufs[2]);
  const float *bias = static_cast<const float *>(bufs[3]);
  const float *x = static_cast<const float *>(bufs[4]);
  float *y = static_cast<float *>(bufs[5]);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      y[r * 3 + c] = x[r] + cols[r * 3 + c] + bias[c];
  std::memcpy(bufs[6], rows, 2 * 6 * 4);
  std::memcpy(bufs[7], whole, 4 * 6 * 4);
  // Gathered weights live in 64-byte aligned buffers of their own.
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bufs[i]) % 64, 0u) << i;
  EXPECT_NE(bufs[0], bufs[2]);
  EXPECT_NE(bufs[1], bufs[2]);
}

TEST(Runtime, EndToEndCpuGather) {
  TempDir dir;
  std::string wpath = writeGatherWeights(dir, "w.safetensors");
  char err[256];
  ModelPtr mp(attnrt_open(kGatherManifest, gatherInvoke, err, sizeof(err)));
  attnrt_model *m = mp.get();
  ASSERT_NE(m, nullptr) << err;
  EXPECT_EQ(attnrt_num_weights(m), 4);
  ASSERT_EQ(attnrt_bind_weights(m, wpath.c_str()), 0) << attnrt_last_error(m);
  // Header + the gathered records' kept bytes (48 + 48) + w and bias whole
  // once for the plain records (96 + 12); 'unused' is not read.
  std::string image = readFile(wpath);
  EXPECT_EQ(attnrt_weight_bytes_read(m),
            headerBytesOf(image) + 48 + 48 + 96 + 12);
  EXPECT_EQ(attnrt_weight_file_bytes(m), image.size());

  std::vector<float> x = {1000, 2000, 3000, 4000};
  ASSERT_EQ(attnrt_set_input(m, 0, x.data(), 16), 0);
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  std::vector<float> y(12), rows(12), whole(24);
  ASSERT_EQ(attnrt_get_output(m, 0, y.data(), 48), 0);
  ASSERT_EQ(attnrt_get_output(m, 1, rows.data(), 48), 0);
  ASSERT_EQ(attnrt_get_output(m, 2, whole.data(), 96), 0);
  EXPECT_EQ(y, (std::vector<float>{1004.5f, 1005.25f, 1000.125f, //
                                   2014.5f, 2015.25f, 2010.125f, //
                                   3024.5f, 3025.25f, 3020.125f, //
                                   4034.5f, 4035.25f, 4030.125f}));
  EXPECT_EQ(rows, (std::vector<float>{30, 31, 32, 33, 34, 35, 10, 11, 12, 13,
                                      14, 15}));
  for (int i = 0; i < 24; ++i)
    EXPECT_EQ(whole[i], static_cast<float>(10 * (i / 6) + i % 6)) << i;

  // A file whose w has the wrong unpruned shape: clear error, old weights
  // kept.
  std::string bad = dir.file("bad.safetensors");
  writeFile(bad, makeSafetensors({{"w", "F32", {4, 5}, std::string(80, 0)},
                                  {"bias", "F32", {3}, std::string(12, 0)}}));
  EXPECT_NE(attnrt_bind_weights(m, bad.c_str()), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m)),
            bad + ": tensor 'w' has shape [4, 5] but the model expects [4, 6] "
                  "(the source of weight 'w' of shape [4, 3], gathered along "
                  "axis 1 from start:length slices 4:2,0:1)");
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  ASSERT_EQ(attnrt_get_output(m, 1, rows.data(), 48), 0);
  EXPECT_EQ(rows[0], 30);

  // Rebinding replaces the gathered weights.
  std::string w2 = writeGatherWeights(dir, "w2.safetensors", 2);
  ASSERT_EQ(attnrt_bind_weights(m, w2.c_str()), 0) << attnrt_last_error(m);
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  ASSERT_EQ(attnrt_get_output(m, 0, y.data(), 48), 0);
  ASSERT_EQ(attnrt_get_output(m, 1, rows.data(), 48), 0);
  EXPECT_EQ(y[0], 1000 + 8 + 0.5f);
  EXPECT_EQ(y[2], 1000 + 0 + 0.125f);
  EXPECT_EQ(rows, (std::vector<float>{60, 62, 64, 66, 68, 70, 20, 22, 24, 26,
                                      28, 30}));
}

TEST(Runtime, GatherBytesRead) {
  TempDir dir;
  std::string wpath = writeGatherWeights(dir, "w.safetensors");
  const uint64_t header = headerBytesOf(readFile(wpath));
  struct Fn {
    static void invoke(void **) {}
  };
  auto bytesRead = [&](const std::string &records) -> uint64_t {
    std::string manifest = "attnc-manifest 1\ntarget cpu\n" + records;
    char err[256];
    ModelPtr m(attnrt_open(manifest.c_str(), Fn::invoke, err, sizeof(err)));
    EXPECT_NE(m.get(), nullptr) << err;
    if (!m.get())
      return 0;
    EXPECT_EQ(attnrt_bind_weights(m.get(), wpath.c_str()), 0)
        << attnrt_last_error(m.get());
    return attnrt_weight_bytes_read(m.get());
  };
  // Axis 0: only the kept rows (3 of 4, 24 bytes each).
  EXPECT_EQ(bytesRead("weight w f32 3x6 gather 0 4 1:2,3:1\n"), header + 72);
  EXPECT_EQ(bytesRead("weight w f32 1x6 gather 0 4 2:1\n"), header + 24);
  // Axis 1: the kept elements (2 columns of 4 rows).
  EXPECT_EQ(bytesRead("weight w f32 4x2 gather 1 6 1:2\n"), header + 32);
  // Each gather record counts what it copies, overlaps included.
  EXPECT_EQ(bytesRead("weight w f32 2x6 gather 0 4 0:1,0:1\n"
                      "weight w f32 1x6 gather 0 4 0:1\n"),
            header + 48 + 24);
  // Plain records of the same tensor count it whole once; gather records of
  // it still count on their own.
  EXPECT_EQ(bytesRead("weight w f32 4x6\nweight w f32 4x6\n"), header + 96);
  EXPECT_EQ(bytesRead("weight w f32 4x6\n"
                      "weight w f32 1x6 gather 0 4 2:1\n"
                      "weight w f32 4x6\n"),
            header + 96 + 24);
}

TEST(Runtime, OpenLinked) {
  // The test program defines attn_model_manifest / attn_model_invoke.
  char err[256];
  ModelPtr m(attnrt_open_linked(err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  EXPECT_EQ(attnrt_num_inputs(m.get()), 2);
  EXPECT_STREQ(attnrt_output_name(m.get(), 0), "sum");
}

TEST(Runtime, ZeroSizedAndScalar) {
  static const char *manifest = "attnc-manifest 1\ntarget cpu\n"
                                "input e f32 0x3\ninput s i64 scalar\n"
                                "output o i64 scalar\n";
  struct Fn {
    static void invoke(void **bufs) {
      *static_cast<int64_t *>(bufs[2]) = *static_cast<int64_t *>(bufs[1]) + 1;
    }
  };
  char err[256];
  ModelPtr m(attnrt_open(manifest, Fn::invoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  int64_t s = 41, o = 0;
  ASSERT_EQ(attnrt_set_input(m.get(), 0, nullptr, 0), 0);
  ASSERT_EQ(attnrt_set_input(m.get(), 1, &s, 8), 0);
  ASSERT_EQ(attnrt_run(m.get()), 0) << attnrt_last_error(m.get());
  ASSERT_EQ(attnrt_get_output(m.get(), 0, &o, 8), 0);
  EXPECT_EQ(o, 42);
}

// A model with a run-time sequence length: ids [1, ?] choose it, the mask
// must agree, the output [1, ?, 2] follows; invoke receives the sizes after
// the buffers, in record order.
TEST(Runtime, DynamicShapes) {
  static const char *manifest = "attnc-manifest 1\ntarget cpu\n"
                                "input ids i32 1x? dims_from -\n"
                                "input mask f32 1x? dims_from 0:1\n"
                                "output y f32 1x?x2 dims_from 0:1\n";
  struct Fn {
    static void invoke(void **bufs) {
      const auto *sizes = static_cast<const int64_t *>(bufs[3]);
      const auto *ids = static_cast<const int32_t *>(bufs[0]);
      const auto *mask = static_cast<const float *>(bufs[1]);
      auto *y = static_cast<float *>(bufs[2]);
      for (int64_t s = 0; s < sizes[2]; ++s) {
        y[2 * s] = static_cast<float>(ids[s]) + mask[s];
        y[2 * s + 1] = static_cast<float>(sizes[0] + sizes[1]);
      }
    }
  };
  char err[256];
  ModelPtr mp(attnrt_open(manifest, Fn::invoke, err, sizeof(err)));
  attnrt_model *m = mp.get();
  ASSERT_NE(m, nullptr) << err;
  EXPECT_EQ(attnrt_input_dim(m, 0, 0), 1);
  EXPECT_EQ(attnrt_input_dim(m, 0, 1), -1);
  EXPECT_EQ(attnrt_input_bytes(m, 0), 0u);
  EXPECT_EQ(attnrt_output_dim(m, 0, 1), -1);
  EXPECT_EQ(attnrt_output_shape(m, 0), nullptr);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_output_shape: the model has dynamic shapes and has not "
               "run successfully");

  std::vector<int32_t> ids = {1, 2, 3, 4, 5};
  std::vector<float> mask = {0.5f, 0.25f, 0, 0, 0};
  EXPECT_NE(attnrt_set_input(m, 0, ids.data(), 12), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_set_input: input 0 'ids' has dynamic dims (1, ?): give "
               "its shape with attnrt_set_input_shaped");
  int64_t wrongBatch[] = {2, 2};
  EXPECT_NE(attnrt_set_input_shaped(m, 0, ids.data(), 16, 2, wrongBatch), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_set_input_shaped: input 0 'ids' has shape (2, 2) but "
               "the model takes (1, ?): dimension 0 is 2, the model's is 1");
  int64_t rank1[] = {3};
  EXPECT_NE(attnrt_set_input_shaped(m, 0, ids.data(), 12, 1, rank1), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_set_input_shaped: input 0 'ids' has rank 1 but the "
               "model takes rank 2 (1, ?)");
  int64_t three[] = {1, 3}, two[] = {1, 2}, five[] = {1, 5};
  EXPECT_NE(attnrt_set_input_shaped(m, 0, ids.data(), 8, 2, three), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_set_input_shaped: input 0 'ids' (i32 (1, 3)) is 12 "
               "bytes but 8 were given");
  ASSERT_EQ(attnrt_set_input_shaped(m, 0, ids.data(), 12, 2, three), 0)
      << attnrt_last_error(m);
  ASSERT_EQ(attnrt_set_input_shaped(m, 1, mask.data(), 8, 2, two), 0);
  EXPECT_NE(attnrt_run(m), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_run: input 1 'mask' dimension 1 is 2 but input 0 'ids' "
               "dimension 1 is 3; the model needs them equal");
  ASSERT_EQ(attnrt_set_input_shaped(m, 1, mask.data(), 12, 2, three), 0);
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  const int64_t *shape = attnrt_output_shape(m, 0);
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(std::vector<int64_t>(shape, shape + 3),
            (std::vector<int64_t>{1, 3, 2}));
  std::vector<float> y(6);
  EXPECT_NE(attnrt_get_output(m, 0, y.data(), 40), 0);
  EXPECT_STREQ(attnrt_last_error(m),
               "attnrt_get_output: output 0 'y' (f32 (1, 3, 2)) is 24 bytes "
               "but the destination holds 40");
  ASSERT_EQ(attnrt_get_output(m, 0, y.data(), 24), 0);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 6, 2.25f, 6, 3, 6}));

  // A longer sequence grows the buffers; the sizes follow.
  ASSERT_EQ(attnrt_set_input_shaped(m, 0, ids.data(), 20, 2, five), 0);
  ASSERT_EQ(attnrt_set_input_shaped(m, 1, mask.data(), 20, 2, five), 0);
  ASSERT_EQ(attnrt_run(m), 0) << attnrt_last_error(m);
  y.assign(10, 0);
  ASSERT_EQ(attnrt_get_output(m, 0, y.data(), 40), 0);
  EXPECT_EQ(y[8], 5.0f);
  EXPECT_EQ(y[9], 10.0f);
}

TEST(Runtime, DynamicManifestErrors) {
  EXPECT_EQ(
      openError("attnc-manifest 1\ntarget cpu\ninput a f32 1x?\n", cpuInvoke),
      "attnrt: invalid model manifest: manifest line 3: input 'a' has "
      "dynamic dims 1x? but no dims_from");
  EXPECT_EQ(openError("attnc-manifest 1\ntarget cpu\n"
                      "input a f32 ?x? dims_from -\n",
                      cpuInvoke),
            "attnrt: invalid model manifest: manifest line 3: dims_from '-' "
            "of 'a' names 1 sizes but ?x? has 2 '?'");
  EXPECT_EQ(openError("attnc-manifest 1\ntarget cpu\n"
                      "weight w f32 ?x4 dims_from -\n",
                      cpuInvoke),
            "attnrt: invalid model manifest: manifest line 3: weight 'w' has "
            "dynamic dims ?x4; only inputs and outputs may");
  EXPECT_EQ(openError("attnc-manifest 1\ntarget cpu\n"
                      "input a f32 1x? dims_from -\n"
                      "output y f32 ? dims_from -\n",
                      cpuInvoke),
            "attnrt: invalid model manifest: manifest: output 'y' has a "
            "dynamic size that no input gives ('-' in dims_from)");
  EXPECT_EQ(openError("attnc-manifest 1\ntarget cpu\n"
                      "input a f32 1x? dims_from -\n"
                      "output y f32 ? dims_from 0:0\n",
                      cpuInvoke),
            "attnrt: invalid model manifest: manifest: output 'y' takes a "
            "size from input 0 axis 0, which is not a dynamic size chosen by "
            "an earlier input");
}

} // namespace
