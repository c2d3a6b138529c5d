//===- TensorIO.h - tensor files and elements -------------------*- C++ -*-===//
//
// The parts of libattnrt that tools linking it use directly (the layer
// search feeds calibration .npy files through a model and compares its
// outputs): .npy reading and writing and element conversion. Plain C++17,
// no LLVM.
//
// Reads NPY format versions 1.0, 2.0 and 3.0 (C order, little-endian) and
// writes version 1.0 (2.0 only if the header does not fit). bfloat16 is not a
// numpy dtype: bf16 tensors travel as '<u2' holding the raw bits.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_RUNTIME_TENSORIO_H
#define ATTNC_RUNTIME_TENSORIO_H

#include "attnc/Runtime/ManifestSchema.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnrt {

struct NpyArray {
  int major = 0, minor = 0;
  /// Normalized descr, e.g. "<f4" ('=' is rewritten to '<').
  std::string descr;
  size_t itemSize = 0;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  /// The whole file; the array data is file[dataOffset, dataOffset+dataBytes).
  std::vector<unsigned char> file;
  size_t dataOffset = 0;
  size_t dataBytes = 0;
  const unsigned char *data() const { return file.data() + dataOffset; }
};

/// Parses an in-memory .npy image (takes ownership of `bytes`). `name` is
/// used as the error prefix. Rejects Fortran order, big-endian and
/// structured dtypes, and a data size that does not match the header.
bool parseNpy(std::vector<unsigned char> bytes, const std::string &name,
              NpyArray &out, std::string &err);
bool readNpy(const std::string &path, NpyArray &out, std::string &err);

/// The complete .npy preamble (magic, version, header) for an array.
std::string npyHeader(const char *descr, const std::vector<int64_t> &shape);

/// Writes a .npy file to a fresh temporary file next to `path` and returns
/// its name in tmpPath; commitFile renames it into place. writeNpy does both.
bool writeNpyTemp(const std::string &path, const char *descr,
                  const std::vector<int64_t> &shape, const void *data,
                  size_t bytes, std::string &tmpPath, std::string &err);
bool commitFile(const std::string &tmpPath, const std::string &path,
                std::string &err);
bool writeNpy(const std::string &path, const char *descr,
              const std::vector<int64_t> &shape, const void *data, size_t bytes,
              std::string &err);

/// Converts element i of a buffer of dtype t to double.
double elementAsDouble(const void *data, DType t, size_t i);

} // namespace attnrt

#endif // ATTNC_RUNTIME_TENSORIO_H
