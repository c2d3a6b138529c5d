//===- SafeTensors.h - safetensors reader -----------------------*- C++ -*-===//
//
// Maps a .safetensors file (8-byte little-endian header length N, N bytes of
// JSON header, then the data section) and validates the header strictly.
// Tensor data is only touched when a caller asks for it. Part of libattnrt
// (plain C++17, no LLVM); the Hugging Face importer reads checkpoint headers
// with it, so that the importer and the runtime share one parser.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_RUNTIME_SAFETENSORS_H
#define ATTNC_RUNTIME_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnrt {

struct StTensor {
  std::string name;
  /// safetensors dtype spelling ("F32", "BF16", ...).
  std::string dtype;
  size_t elemSize = 0;
  std::vector<int64_t> shape;
  /// Offsets relative to the start of the data section.
  uint64_t begin = 0, end = 0;
  uint64_t bytes() const { return end - begin; }
};

class SafeTensorsFile {
public:
  SafeTensorsFile() = default;
  ~SafeTensorsFile();
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;

  /// Maps and validates `path`. Errors are prefixed with the path.
  bool open(const std::string &path, std::string &err);
  void close();

  const std::string &path() const { return filePath; }
  const StTensor *find(const std::string &name) const;
  const std::vector<StTensor> &tensors() const { return all; }
  const unsigned char *tensorData(const StTensor &t) const {
    return dataBase + t.begin;
  }
  /// 8 + N: the bytes that make up the header.
  uint64_t headerBytes() const { return headerSize; }
  uint64_t fileSize() const { return size; }

private:
  std::string filePath;
  void *mapping = nullptr;
  size_t size = 0;
  uint64_t headerSize = 0;
  const unsigned char *dataBase = nullptr;
  std::vector<StTensor> all;
  std::map<std::string, size_t> index;
};

/// Byte size of a safetensors dtype, 0 if unknown.
size_t safetensorsDTypeSize(const std::string &dtype);

} // namespace attnrt

#endif // ATTNC_RUNTIME_SAFETENSORS_H
