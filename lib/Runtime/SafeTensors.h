//===- SafeTensors.h - safetensors reader -----------------------*- C++ -*-===//
//
// Maps a .safetensors file (8-byte little-endian header length N, N bytes of
// JSON header, then the data section) and validates the header strictly.
// Tensor data is only touched when a caller asks for it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_SAFETENSORS_H
#define ATTNC_LIB_RUNTIME_SAFETENSORS_H

#include "Manifest.h"

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

/// Checks that the tensor(s) a manifest weight refers to exist in the file
/// with the manifest's dtype and shape (for concat weights: compatible parts
/// whose concatenation has the manifest's shape; for gather weights: the
/// tensor `weight.name` with weight.gatherSourceDims()); for `transpose`
/// weights all of this for weight.untransposed(). On success `parts`
/// holds the source tensors in order (one for plain and gather weights).
bool resolveWeight(const SafeTensorsFile &file, const ManifestEntry &weight,
                   std::vector<const StTensor *> &parts, std::string &err);

/// Whether weight `w`, resolved to `parts`, is its file tensor byte for byte
/// (a plain weight stored in its own dtype), so that it can be bound in
/// place; otherwise gatherWeight assembles (and converts) it.
bool bindsAsStored(const ManifestEntry &w,
                   const std::vector<const StTensor *> &parts);

/// Writes the weight's bytes (the concatenation of `parts` along the
/// manifest's axis, the gathered slices of the single source tensor, or the
/// single tensor) into dst, which holds weight.bytes bytes. Only the bytes
/// that end up in dst are read from the file. A `transpose` weight is
/// assembled first (directly from the file when plain, else in a temporary
/// buffer) and written transposed. False only when that temporary buffer
/// cannot be allocated.
bool gatherWeight(const SafeTensorsFile &file, const ManifestEntry &weight,
                  const std::vector<const StTensor *> &parts, void *dst);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_SAFETENSORS_H
