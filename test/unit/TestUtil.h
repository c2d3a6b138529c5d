//===- TestUtil.h - helpers for the attnrt unit tests -----------*- C++ -*-===//

#ifndef ATTNC_TEST_UNIT_TESTUTIL_H
#define ATTNC_TEST_UNIT_TESTUTIL_H

#include "attnc/Runtime/attnrt.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace attnrt_test {

/// A fresh directory under $TMPDIR, removed (with its files) at the end.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }
  /// Names of the entries in the directory, sorted.
  std::vector<std::string> list() const;

private:
  std::string dir;
};

void writeFile(const std::string &path, const std::string &bytes);
std::string readFile(const std::string &path);

struct Tensor {
  std::string name;
  std::string dtype; // safetensors spelling
  std::vector<int64_t> shape;
  std::string bytes;
};

template <typename T> std::string bytesOf(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()),
                     v.size() * sizeof(T));
}

template <typename T> std::vector<T> valuesOf(const void *p, size_t n) {
  std::vector<T> v(n);
  std::memcpy(v.data(), p, n * sizeof(T));
  return v;
}

/// Serializes tensors (laid out back to back, in order) into a safetensors
/// image, with an optional __metadata__ entry.
std::string makeSafetensors(const std::vector<Tensor> &tensors,
                            bool withMetadata = false);
/// A safetensors image with an arbitrary header text and data section.
std::string rawSafetensors(const std::string &header, const std::string &data,
                           uint64_t headerLen = UINT64_MAX);
/// The header length (8 + N) of a safetensors image.
uint64_t headerBytesOf(const std::string &image);

/// Writes the weights the test models use: bias [4], q/k/v [1, 4] plus an
/// unreferenced tensor "unused" [1000]. Returns the file size.
size_t writeTestWeights(const std::string &path);

/// The CPU test model (also linked as attn_model_manifest/invoke):
///   weight bias f32 4; weight qkv f32 3x4 = concat(0: q, k, v)
///   input a f32 2x4; input b f32 2x4
///   output sum f32 2x4 (= a + b + bias); output qkv_out f32 3x4 (= qkv)
extern const char *const kCpuManifest;
void cpuInvoke(void **buffers);

/// A weightless bf16 model: input x bf16 4 -> output y bf16 4 (= x * 2).
extern const char *const kBf16Manifest;
void bf16Invoke(void **buffers);

/// A CUDA-target manifest: weight w f32 4, input a f32 4, output out f32 4.
extern const char *const kCudaManifest;

/// Closes the model it holds when it goes out of scope.
struct ModelPtr {
  attnrt_model *m = nullptr;
  ModelPtr() = default;
  explicit ModelPtr(attnrt_model *m) : m(m) {}
  ModelPtr(const ModelPtr &) = delete;
  ModelPtr &operator=(const ModelPtr &) = delete;
  ~ModelPtr() { attnrt_close(m); }
  void reset(attnrt_model *other) {
    attnrt_close(m);
    m = other;
  }
  attnrt_model *get() const { return m; }
};

std::vector<float> testBias();
std::vector<float> testQ();
std::vector<float> testK();
std::vector<float> testV();

} // namespace attnrt_test

#endif // ATTNC_TEST_UNIT_TESTUTIL_H
