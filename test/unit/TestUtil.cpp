//===- TestUtil.cpp - helpers for the attnrt unit tests -------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace attnrt_test {

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(base && *base ? base : "/tmp") + "/attnrt-unittest-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw std::runtime_error("mkdtemp failed");
  dir = buf.data();
}

TempDir::~TempDir() {
  for (const std::string &name : list())
    ::unlink(file(name).c_str());
  ::rmdir(dir.c_str());
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..")
        names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f)
    throw std::runtime_error("cannot write " + path);
}

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

static std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::string makeSafetensors(const std::vector<Tensor> &tensors,
                            bool withMetadata) {
  std::string header = "{";
  if (withMetadata)
    header += "\"__metadata__\":{\"format\":\"pt\"},";
  std::string data;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    if (i)
      header += ",";
    header += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d)
      header += (d ? "," : "") + std::to_string(t.shape[d]);
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  while (header.size() % 8)
    header += ' ';
  return le64(header.size()) + header + data;
}

std::string rawSafetensors(const std::string &header, const std::string &data,
                           uint64_t headerLen) {
  return le64(headerLen == UINT64_MAX ? header.size() : headerLen) + header +
         data;
}

uint64_t headerBytesOf(const std::string &image) {
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k)
    n = (n << 8) | static_cast<unsigned char>(image[static_cast<size_t>(k)]);
  return 8 + n;
}

std::vector<float> testBias() { return {0.5f, -1.0f, 2.0f, 10.0f}; }
std::vector<float> testQ() { return {1, 2, 3, 4}; }
std::vector<float> testK() { return {5, 6, 7, 8}; }
std::vector<float> testV() { return {9, 10, 11, 12}; }

size_t writeTestWeights(const std::string &path) {
  std::vector<float> unused(1000, 7.0f);
  std::string image =
      makeSafetensors({{"q", "F32", {1, 4}, bytesOf(testQ())},
                       {"unused", "F32", {1000}, bytesOf(unused)},
                       {"bias", "F32", {4}, bytesOf(testBias())},
                       {"k", "F32", {1, 4}, bytesOf(testK())},
                       {"v", "F32", {1, 4}, bytesOf(testV())}},
                      /*withMetadata=*/true);
  writeFile(path, image);
  return image.size();
}

#define CPU_MANIFEST                                                           \
  "attnc-manifest 1\n"                                                         \
  "target cpu\n"                                                               \
  "weight bias f32 4\n"                                                        \
  "weight qkv f32 3x4 concat 0 q,k,v\n"                                        \
  "input a f32 2x4\n"                                                          \
  "input b f32 2x4\n"                                                          \
  "output sum f32 2x4\n"                                                       \
  "output qkv_out f32 3x4\n"

const char *const kCpuManifest = CPU_MANIFEST;

void cpuInvoke(void **buffers) {
  const float *bias = static_cast<const float *>(buffers[0]);
  const float *qkv = static_cast<const float *>(buffers[1]);
  const float *a = static_cast<const float *>(buffers[2]);
  const float *b = static_cast<const float *>(buffers[3]);
  float *sum = static_cast<float *>(buffers[4]);
  float *qkvOut = static_cast<float *>(buffers[5]);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      sum[i * 4 + j] = a[i * 4 + j] + b[i * 4 + j] + bias[j];
  for (int i = 0; i < 12; ++i)
    qkvOut[i] = qkv[i];
}

const char *const kBf16Manifest = "attnc-manifest 1\n"
                                  "target cpu\n"
                                  "input x bf16 4\n"
                                  "output y bf16 4\n";

void bf16Invoke(void **buffers) {
  const uint16_t *x = static_cast<const uint16_t *>(buffers[0]);
  uint16_t *y = static_cast<uint16_t *>(buffers[1]);
  for (int i = 0; i < 4; ++i) {
    uint32_t bits = static_cast<uint32_t>(x[i]) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    f *= 2;
    std::memcpy(&bits, &f, 4);
    y[i] = static_cast<uint16_t>(bits >> 16); // exact for these test values
  }
}

const char *const kCudaManifest = "attnc-manifest 1\n"
                                  "target cuda\n"
                                  "weight w f32 4\n"
                                  "input a f32 4\n"
                                  "output out f32 4\n";

} // namespace attnrt_test

// The model "linked into" the test program, for attnrt_open_linked and
// attnrt_main.
extern "C" const char attn_model_manifest[] = CPU_MANIFEST;
extern "C" void attn_model_invoke(void **buffers) {
  attnrt_test::cpuInvoke(buffers);
}
