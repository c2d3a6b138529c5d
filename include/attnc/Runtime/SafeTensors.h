//===- SafeTensors.h - safetensors reader -----------------------*- C++ -*-===//
//
// Maps a .safetensors file (8-byte little-endian header length N, N bytes of
// JSON header, then the data section) and validates the header strictly.
// Tensor data is only touched when a caller asks for it. SafeTensorsWeights
// adds sharded checkpoints: a shard index (model.safetensors.index.json)
// whose weight_map names the files that hold the tensors. Part of libattnrt
// (plain C++17, no LLVM); the Hugging Face importer reads checkpoint headers
// and shard indexes with it, so that the importer and the runtime share one
// parser.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_RUNTIME_SAFETENSORS_H
#define ATTNC_RUNTIME_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
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

/// A model's weights: one safetensors file, or the shards a shard index
/// names. Tensors are found by name in whichever file holds them.
class SafeTensorsWeights {
public:
  /// Opens `path`: a shard index when its name ends in ".json", otherwise
  /// one safetensors file. The index must be a JSON object whose
  /// "weight_map" object maps tensor names to file names in the index's
  /// directory (no paths). Every shard it names is opened; each must hold
  /// the tensors mapped to it, and no tensor may be in two shards. Only the
  /// tensors the weight_map names are found. Errors are prefixed with the
  /// path they concern (the index or a shard).
  bool open(const std::string &path, std::string &err);
  void close();

  /// The index, or the one safetensors file.
  const std::string &path() const { return weightsPath; }
  bool isSharded() const { return sharded; }
  /// The shards, sorted by file name, or the one file.
  const std::vector<std::unique_ptr<SafeTensorsFile>> &files() const {
    return shards;
  }
  /// The tensor `name` in whichever file holds it, or null.
  const StTensor *find(const std::string &name) const;
  /// The file that holds tensor `name`, or null.
  const SafeTensorsFile *fileOf(const std::string &name) const;
  /// The data of a tensor that find() returned.
  const unsigned char *tensorData(const StTensor &t) const {
    return fileOf(t.name)->tensorData(t);
  }
  /// Why tensor `name`, which find() does not know, is missing, for
  /// errors: "the file does not contain it", "the index's weight_map does
  /// not name it (SHARD holds it)" or "none of the index's N shards
  /// contains it".
  std::string missingReason(const std::string &name) const;
  /// The header bytes and sizes of all files together.
  uint64_t headerBytes() const;
  uint64_t fileSize() const;

private:
  bool openIndex(const std::string &path, std::string &err);

  std::string weightsPath;
  bool sharded = false;
  std::vector<std::unique_ptr<SafeTensorsFile>> shards;
  /// Tensor name -> index into shards: of the weight_map's tensors (all of
  /// the one file's), and of every tensor the shards hold.
  std::map<std::string, size_t> shardOf, held;
};

/// Reads a shard index: its weight_map's entries (tensor name, shard file
/// name), in file order, checked as SafeTensorsWeights::open checks them;
/// no shard is opened. Errors are prefixed with the path.
bool readShardIndex(const std::string &path,
                    std::vector<std::pair<std::string, std::string>> &entries,
                    std::string &err);

/// The files that SafeTensorsWeights::open(path) reads: the path, and for a
/// readable shard index the shards it names (errors are left to open).
std::vector<std::string> weightFilePaths(const std::string &path);

/// Byte size of a safetensors dtype, 0 if unknown.
size_t safetensorsDTypeSize(const std::string &dtype);

} // namespace attnrt

#endif // ATTNC_RUNTIME_SAFETENSORS_H
