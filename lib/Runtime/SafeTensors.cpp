//===- SafeTensors.cpp - safetensors reader -------------------------------===//

#include "SafeTensors.h"
#include "FileIO.h"
#include "Json.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnrt {

static constexpr uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;

size_t safetensorsDTypeSize(const std::string &d) {
  struct Entry {
    const char *name;
    size_t size;
  };
  static const Entry table[] = {
      {"F64", 8},         {"F32", 4},         {"F16", 2},     {"BF16", 2},
      {"I64", 8},         {"I32", 4},         {"I16", 2},     {"I8", 1},
      {"U64", 8},         {"U32", 4},         {"U16", 2},     {"U8", 1},
      {"BOOL", 1},        {"F8_E4M3", 1},     {"F8_E5M2", 1}, {"F8_E8M0", 1},
      {"F8_E4M3FNUZ", 1}, {"F8_E5M2FNUZ", 1}, {"C64", 8},
  };
  for (const Entry &e : table)
    if (d == e.name)
      return e.size;
  return 0;
}

SafeTensorsFile::~SafeTensorsFile() { close(); }

void SafeTensorsFile::close() {
  if (mapping)
    ::munmap(mapping, size);
  mapping = nullptr;
  size = 0;
  headerSize = 0;
  dataBase = nullptr;
  all.clear();
  index.clear();
}

const StTensor *SafeTensorsFile::find(const std::string &name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &all[it->second];
}

static bool readDims(const JsonValue &v, std::vector<int64_t> &out) {
  if (v.kind != JsonValue::Array)
    return false;
  out.clear();
  for (const JsonValue &d : v.items) {
    uint64_t x;
    if (!d.asU64(x) || x > static_cast<uint64_t>(INT64_MAX))
      return false;
    out.push_back(static_cast<int64_t>(x));
  }
  return true;
}

/// The offset of the first byte that does not continue a valid UTF-8
/// sequence (overlong forms and surrogates included), or n.
static size_t firstInvalidUtf8(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (len > n - i)
      return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80)
        return i;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    static const uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minimum[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += len;
  }
  return n;
}

bool SafeTensorsFile::open(const std::string &path, std::string &err) {
  close();
  filePath = path;
  const std::string pfx = path + ": ";
  // Without blocking on a FIFO; a device or directory is refused.
  uint64_t fsize;
  int fd = openRegularFile(path, fsize, err);
  if (fd < 0)
    return false;
  if (fsize < 8) {
    err = pfx + strFormat("file is %llu bytes, too short for a safetensors "
                          "file (at least 8 bytes of header length needed)",
                          static_cast<unsigned long long>(fsize));
    ::close(fd);
    return false;
  }
  // Read-only: weights used in place are never written by compiled code, and
  // a read-only mapping costs no commit charge however large the file is.
  void *m = ::mmap(nullptr, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
  int mmapErrno = errno;
  ::close(fd);
  if (m == MAP_FAILED) {
    err = pfx + "cannot mmap: " + std::strerror(mmapErrno);
    return false;
  }
#ifdef MADV_HUGEPAGE
  // Pages read from disk from now on come in huge folios, mapped as huge
  // pages: weights read in place stream with fewer TLB misses. Advice only.
  ::madvise(m, fsize, MADV_HUGEPAGE);
#endif
  mapping = m;
  size = fsize;
  const unsigned char *base = static_cast<const unsigned char *>(m);
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k)
    n = (n << 8) | base[k];
  auto fail = [&](const std::string &msg) {
    err = pfx + msg;
    close();
    return false;
  };
  if (n > fsize - 8)
    return fail(strFormat("header length %llu is beyond the end of the file "
                          "(%llu bytes)",
                          static_cast<unsigned long long>(n),
                          static_cast<unsigned long long>(fsize)));
  if (n > kMaxHeaderBytes)
    return fail(strFormat("header length %llu is absurd (limit is %llu bytes)",
                          static_cast<unsigned long long>(n),
                          static_cast<unsigned long long>(kMaxHeaderBytes)));
  headerSize = 8 + n;
  dataBase = base + headerSize;
  uint64_t dataSize = fsize - headerSize;

  // The format's header is UTF-8 JSON; names are compared byte for byte.
  if (size_t bad = firstInvalidUtf8(base + 8, n); bad != n)
    return fail(strFormat("header is not valid UTF-8 (at byte %zu)", bad));
  JsonValue root;
  std::string jerr;
  if (!parseJson(reinterpret_cast<const char *>(base + 8), n, root, jerr))
    return fail("header is not valid JSON: " + jerr);
  if (root.kind != JsonValue::Object)
    return fail(std::string("header is not a JSON object (it is ") +
                jsonKindName(root.kind) + ")");

  for (size_t k = 0; k < root.keys.size(); ++k) {
    const std::string &name = root.keys[k];
    const JsonValue &v = root.items[k];
    if (name == "__metadata__") {
      if (v.kind != JsonValue::Object)
        return fail("'__metadata__' is not an object");
      // The format's metadata maps strings to strings.
      for (size_t m = 0; m < v.keys.size(); ++m)
        if (v.items[m].kind != JsonValue::String)
          return fail("'__metadata__' value '" + v.keys[m] +
                      "' is not a string");
      continue;
    }
    const std::string tp = "tensor '" + name + "': ";
    if (v.kind != JsonValue::Object)
      return fail(tp + "entry is not an object");
    const JsonValue *dt = v.get("dtype");
    const JsonValue *sh = v.get("shape");
    const JsonValue *off = v.get("data_offsets");
    if (!dt)
      return fail(tp + "missing 'dtype'");
    if (!sh)
      return fail(tp + "missing 'shape'");
    if (!off)
      return fail(tp + "missing 'data_offsets'");
    StTensor t;
    t.name = name;
    if (dt->kind != JsonValue::String)
      return fail(tp + "'dtype' is not a string");
    t.dtype = dt->text;
    t.elemSize = safetensorsDTypeSize(t.dtype);
    if (!t.elemSize)
      return fail(tp + "unknown dtype '" + t.dtype + "'");
    if (!readDims(*sh, t.shape))
      return fail(tp + "'shape' is not an array of non-negative integers");
    if (off->kind != JsonValue::Array || off->items.size() != 2 ||
        !off->items[0].asU64(t.begin) || !off->items[1].asU64(t.end))
      return fail(tp + "'data_offsets' is not a pair of non-negative "
                       "integers");
    if (t.begin > t.end)
      return fail(tp + strFormat("data_offsets [%llu, %llu] begin is after "
                                 "end",
                                 static_cast<unsigned long long>(t.begin),
                                 static_cast<unsigned long long>(t.end)));
    if (t.end > dataSize)
      return fail(tp + strFormat("data_offsets [%llu, %llu] end is beyond "
                                 "the data section (%llu bytes)",
                                 static_cast<unsigned long long>(t.begin),
                                 static_cast<unsigned long long>(t.end),
                                 static_cast<unsigned long long>(dataSize)));
    uint64_t elems;
    if (!numElements(t.shape, elems) || elems > UINT64_MAX / t.elemSize)
      return fail(tp + "shape " + formatShapeList(t.shape) + " is too large");
    if (elems * t.elemSize != t.end - t.begin)
      return fail(
          tp + strFormat("data_offsets [%llu, %llu] span %llu bytes but "
                         "shape %s with dtype %s needs %llu",
                         static_cast<unsigned long long>(t.begin),
                         static_cast<unsigned long long>(t.end),
                         static_cast<unsigned long long>(t.end - t.begin),
                         formatShapeList(t.shape).c_str(), t.dtype.c_str(),
                         static_cast<unsigned long long>(elems * t.elemSize)));
    index[name] = all.size();
    all.push_back(std::move(t));
  }
  // The format requires the tensors to tile the data section: no byte
  // shared by two tensors (one write would show through the other) and no
  // byte that belongs to none.
  std::vector<const StTensor *> byOffset;
  for (const StTensor &t : all)
    byOffset.push_back(&t);
  std::stable_sort(byOffset.begin(), byOffset.end(),
                   [](const StTensor *a, const StTensor *b) {
                     return a->begin != b->begin ? a->begin < b->begin
                                                 : a->end < b->end;
                   });
  uint64_t covered = 0;
  const StTensor *previous = nullptr;
  auto range = [](const StTensor *t) {
    return strFormat("[%llu, %llu]", static_cast<unsigned long long>(t->begin),
                     static_cast<unsigned long long>(t->end));
  };
  for (const StTensor *t : byOffset) {
    if (t->begin < covered)
      return fail("tensor '" + t->name + "': data_offsets " + range(t) +
                  " overlap tensor '" + previous->name + "' at " +
                  range(previous));
    if (t->begin > covered)
      return fail("tensor '" + t->name + "': data_offsets " + range(t) +
                  strFormat(" leave bytes [%llu, %llu) of the data section "
                            "unused (tensors must tile it without holes)",
                            static_cast<unsigned long long>(covered),
                            static_cast<unsigned long long>(t->begin)));
    covered = t->end;
    previous = t;
  }
  if (covered != dataSize)
    return fail(strFormat("the tensors cover %llu bytes of the %llu-byte data "
                          "section; the rest is unused (tensors must tile it "
                          "without holes)",
                          static_cast<unsigned long long>(covered),
                          static_cast<unsigned long long>(dataSize)));
  return true;
}

//===----------------------------------------------------------------------===//
// SafeTensorsWeights: one file or the shards of an index
//===----------------------------------------------------------------------===//

/// Far larger than any real shard index (a few hundred bytes per tensor).
static constexpr uint64_t kMaxIndexBytes = 64ull << 20;

static bool endsWithJson(const std::string &path) {
  static const std::string kJson = ".json";
  return path.size() >= kJson.size() &&
         path.compare(path.size() - kJson.size(), kJson.size(), kJson) == 0;
}

/// The directory part of `path`, with its trailing '/' ("" for none).
static std::string dirOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

/// Whether a weight_map value names a file beside the index: a path could
/// reach outside the checkpoint directory.
static bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
}

void SafeTensorsWeights::close() {
  shards.clear();
  shardOf.clear();
  held.clear();
  sharded = false;
}

bool SafeTensorsWeights::open(const std::string &path, std::string &err) {
  close();
  weightsPath = path;
  if (endsWithJson(path)) {
    sharded = true;
    if (openIndex(path, err))
      return true;
    close();
    return false;
  }
  auto file = std::make_unique<SafeTensorsFile>();
  if (!file->open(path, err))
    return false;
  for (const StTensor &t : file->tensors())
    shardOf[t.name] = 0;
  shards.push_back(std::move(file));
  return true;
}

bool readShardIndex(const std::string &path,
                    std::vector<std::pair<std::string, std::string>> &entries,
                    std::string &err) {
  entries.clear();
  const std::string pfx = path + ": ";
  uint64_t size;
  int fd = openRegularFile(path, size, err);
  if (fd < 0)
    return false;
  ::close(fd);
  if (size > kMaxIndexBytes) {
    err = pfx + strFormat("the shard index is %llu bytes, more than the %llu "
                          "a shard index may have",
                          static_cast<unsigned long long>(size),
                          static_cast<unsigned long long>(kMaxIndexBytes));
    return false;
  }
  std::vector<unsigned char> text;
  if (!readRegularFile(path, text, err))
    return false;
  if (size_t bad = firstInvalidUtf8(text.data(), text.size());
      bad != text.size()) {
    err = pfx +
          strFormat("the shard index is not valid UTF-8 (at byte %zu)", bad);
    return false;
  }
  JsonValue root;
  std::string jerr;
  if (!parseJson(reinterpret_cast<const char *>(text.data()), text.size(), root,
                 jerr)) {
    // Duplicate keys are refused here: one tensor mapped to two shards.
    err = pfx + "the shard index is not valid JSON: " + jerr;
    return false;
  }
  if (root.kind != JsonValue::Object) {
    err = pfx + "the shard index is not a JSON object (it is " +
          jsonKindName(root.kind) + ")";
    return false;
  }
  const JsonValue *weightMap = root.get("weight_map");
  if (!weightMap || weightMap->kind != JsonValue::Object) {
    err = pfx + "the shard index has no \"weight_map\" object (tensor name "
                "-> shard file)";
    return false;
  }
  for (size_t k = 0; k < weightMap->keys.size(); ++k) {
    const std::string &name = weightMap->keys[k];
    const JsonValue &v = weightMap->items[k];
    if (v.kind != JsonValue::String) {
      err = pfx + "weight_map entry '" + name + "' must name a shard file";
      return false;
    }
    if (!isPlainFileName(v.text)) {
      err = pfx + "weight_map entry '" + name + "' names shard '" + v.text +
            "', which is not a file name in the checkpoint directory";
      return false;
    }
    entries.emplace_back(name, v.text);
  }
  if (entries.empty()) {
    err = pfx + "the shard index's weight_map is empty";
    return false;
  }
  return true;
}

std::vector<std::string> weightFilePaths(const std::string &path) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string err;
  if (!endsWithJson(path) || !readShardIndex(path, entries, err))
    return {path};
  std::vector<std::string> paths = {path};
  for (const auto &entry : entries)
    paths.push_back(dirOf(path) + entry.second);
  std::sort(paths.begin() + 1, paths.end());
  paths.erase(std::unique(paths.begin() + 1, paths.end()), paths.end());
  return paths;
}

bool SafeTensorsWeights::openIndex(const std::string &path, std::string &err) {
  const std::string pfx = path + ": ";
  std::vector<std::pair<std::string, std::string>> entries;
  if (!readShardIndex(path, entries, err))
    return false;
  std::vector<std::string> files;
  for (const auto &entry : entries)
    files.push_back(entry.second);
  // Each shard once, in a fixed order (the importer takes the checkpoint's
  // precision from the first float tensor).
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  const std::string dir = dirOf(path);
  for (const std::string &f : files) {
    auto shard = std::make_unique<SafeTensorsFile>();
    // Refuses a missing file, a directory or a FIFO (without waiting).
    if (!shard->open(dir + f, err))
      return false;
    shards.push_back(std::move(shard));
  }
  // A tensor in two shards would make the weights depend on which one a
  // loader reads.
  for (size_t i = 0; i < shards.size(); ++i)
    for (const StTensor &t : shards[i]->tensors()) {
      auto [it, inserted] = held.emplace(t.name, i);
      if (!inserted) {
        err = pfx + "tensor '" + t.name + "' is in two shards, " +
              files[it->second] + " and " + files[i];
        return false;
      }
    }
  // The weight_map decides what the checkpoint holds; each entry must be
  // true of its shard.
  for (const auto &[name, file] : entries) {
    auto it = held.find(name);
    if (it == held.end() || files[it->second] != file) {
      err = pfx + "the shard index maps tensor '" + name + "' to " + file +
            ", which has no such tensor";
      return false;
    }
    shardOf[name] = it->second;
  }
  return true;
}

const SafeTensorsFile *
SafeTensorsWeights::fileOf(const std::string &name) const {
  auto it = shardOf.find(name);
  return it == shardOf.end() ? nullptr : shards[it->second].get();
}

const StTensor *SafeTensorsWeights::find(const std::string &name) const {
  const SafeTensorsFile *file = fileOf(name);
  return file ? file->find(name) : nullptr;
}

std::string SafeTensorsWeights::missingReason(const std::string &name) const {
  if (!sharded)
    return "the file does not contain it";
  auto it = held.find(name);
  if (it != held.end())
    return "the index's weight_map does not name it (" +
           files()[it->second]->path() + " holds it)";
  return strFormat("none of the index's %zu shard%s contains it", shards.size(),
                   shards.size() == 1 ? "" : "s");
}

uint64_t SafeTensorsWeights::headerBytes() const {
  uint64_t n = 0;
  for (const auto &f : shards)
    n += f->headerBytes();
  return n;
}

uint64_t SafeTensorsWeights::fileSize() const {
  uint64_t n = 0;
  for (const auto &f : shards)
    n += f->fileSize();
  return n;
}

/// For a `convert` weight whose file holds another float dtype (that of the
/// first tensor it names): the record as stored, which the parts are checked
/// and assembled against before the conversion to `w.dtype`.
static std::optional<ManifestEntry> storedAs(const SafeTensorsWeights &file,
                                             const ManifestEntry &w) {
  if (!w.convert)
    return std::nullopt;
  const StTensor *first =
      file.find(w.isConcat() ? w.concatParts.front() : w.name);
  const DTypeInfo *info =
      first ? lookupSafetensorsDType(first->dtype) : nullptr;
  if (!info || !isFloatDType(info->dtype) || info->dtype == w.dtype)
    return std::nullopt;
  ManifestEntry stored = w;
  stored.dtype = info->dtype;
  stored.convert = false;
  stored.bytes = w.numElements * dtypeSize(info->dtype);
  return stored;
}

bool resolveWeight(const SafeTensorsWeights &file, const ManifestEntry &w,
                   std::vector<const StTensor *> &parts, std::string &err) {
  if (std::optional<ManifestEntry> stored = storedAs(file, w))
    return resolveWeight(file, *stored, parts, err);
  if (w.transpose || w.panels)
    return resolveWeight(file, w.untransposed(), parts, err);
  parts.clear();
  // A missing tensor is the index's (or the file's) fault; a wrong one is
  // the fault of the file that holds it.
  const std::string pfx = file.path() + ": ";
  auto at = [&](const std::string &name) {
    const SafeTensorsFile *holder = file.fileOf(name);
    return (holder ? holder->path() : file.path()) + ": ";
  };
  const char *want = dtypeInfo(w.dtype).safetensorsName;
  if (w.isGather()) {
    const std::vector<int64_t> srcDims = w.gatherSourceDims();
    const std::string role = strFormat(
        " (the source of weight '%s' of shape %s, gathered along axis %d "
        "from start:length slices %s)",
        w.name.c_str(), formatShapeList(w.dims).c_str(), w.gatherAxis,
        w.gatherRangesText().c_str());
    const StTensor *t = file.find(w.name);
    if (!t) {
      err = pfx + "the model needs tensor '" + w.name + "' but " +
            file.missingReason(w.name) + role;
      return false;
    }
    if (t->dtype != want) {
      err = at(w.name) + "tensor '" + w.name + "' has dtype " + t->dtype +
            " but the model expects " + want + role;
      return false;
    }
    if (t->shape != srcDims) {
      err = at(w.name) + "tensor '" + w.name + "' has shape " +
            formatShapeList(t->shape) + " but the model expects " +
            formatShapeList(srcDims) + role;
      return false;
    }
    parts.push_back(t);
    return true;
  }
  if (w.concatParts.empty()) {
    const StTensor *t = file.find(w.name);
    if (!t) {
      err = pfx + "the model needs tensor '" + w.name + "' but " +
            file.missingReason(w.name);
      return false;
    }
    if (t->dtype != want) {
      err = at(w.name) + "tensor '" + w.name + "' has dtype " + t->dtype +
            " but the model expects " + want;
      return false;
    }
    if (t->shape != w.dims) {
      err = at(w.name) + "tensor '" + w.name + "' has shape " +
            formatShapeList(t->shape) + " but the model expects " +
            formatShapeList(w.dims);
      return false;
    }
    parts.push_back(t);
    return true;
  }

  size_t axis = static_cast<size_t>(w.concatAxis);
  std::string expectPart = "[";
  for (size_t d = 0; d < w.dims.size(); ++d) {
    if (d)
      expectPart += ", ";
    expectPart += d == axis ? std::string("*") : std::to_string(w.dims[d]);
  }
  expectPart += "]";
  int64_t total = 0;
  std::string names;
  for (size_t k = 0; k < w.concatParts.size(); ++k) {
    const std::string &pn = w.concatParts[k];
    const std::string role =
        strFormat(" (part %zu of weight '%s', concatenated along axis %d)",
                  k + 1, w.name.c_str(), w.concatAxis);
    const StTensor *t = file.find(pn);
    if (!t) {
      err = pfx + "the model needs tensor '" + pn + "' but " +
            file.missingReason(pn) + role;
      return false;
    }
    if (t->dtype != want) {
      err = at(pn) + "tensor '" + pn + "' has dtype " + t->dtype +
            " but the model expects " + want + role;
      return false;
    }
    bool ok = t->shape.size() == w.dims.size();
    for (size_t d = 0; ok && d < w.dims.size(); ++d)
      if (d != axis && t->shape[d] != w.dims[d])
        ok = false;
    if (!ok) {
      err = at(pn) + "tensor '" + pn + "' has shape " +
            formatShapeList(t->shape) + " but the model expects " + expectPart +
            role;
      return false;
    }
    total += t->shape[axis];
    if (k)
      names += ", ";
    names += pn;
    parts.push_back(t);
  }
  if (total != w.dims[axis]) {
    std::vector<int64_t> got = w.dims;
    got[axis] = total;
    err = pfx + "tensors " + names + " concatenated along axis " +
          std::to_string(axis) + " give shape " + formatShapeList(got) +
          " but the model's weight '" + w.name + "' expects " +
          formatShapeList(w.dims);
    parts.clear();
    return false;
  }
  return true;
}

/// dst[j][i] = src[i][j] for a rows x cols source of `es`-byte elements, in
/// tiles so that both sides stay in cache.
static void transpose2D(const unsigned char *src, unsigned char *dst,
                        uint64_t rows, uint64_t cols, size_t es) {
  constexpr uint64_t kTile = 32;
  for (uint64_t i0 = 0; i0 < rows; i0 += kTile)
    for (uint64_t j0 = 0; j0 < cols; j0 += kTile) {
      uint64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      for (uint64_t j = j0; j < j1; ++j)
        for (uint64_t i = i0; i < i1; ++i)
          std::memcpy(dst + (j * rows + i) * es, src + (i * cols + j) * es, es);
    }
}

static void assembleWeight(const SafeTensorsWeights &file,
                           const ManifestEntry &w,
                           const std::vector<const StTensor *> &parts,
                           void *dst);

bool bindsAsStored(const ManifestEntry &w,
                   const std::vector<const StTensor *> &parts) {
  return w.isPlainWeight() && parts.size() == 1 &&
         parts[0]->dtype == dtypeInfo(w.dtype).safetensorsName;
}

bool gatherWeight(const SafeTensorsWeights &file, const ManifestEntry &w,
                  const std::vector<const StTensor *> &parts, void *dst) {
  if (std::optional<ManifestEntry> stored = storedAs(file, w)) {
    // One stored tensor as it is, other than its dtype: converted straight
    // from the file, without a staging copy.
    if (stored->isPlainWeight() && parts.size() == 1) {
      convertFloats(file.tensorData(*parts[0]), stored->dtype, dst, w.dtype,
                    w.numElements);
      return true;
    }
    AlignedBuffer staging;
    if (!staging.allocate(stored->bytes) ||
        !gatherWeight(file, *stored, parts, staging.data()))
      return false;
    convertFloats(staging.data(), stored->dtype, dst, w.dtype, w.numElements);
    return true;
  }
  if (w.panels) {
    // The 2-D tensor [K, N] first, then its column panels [N / W, K, W];
    // with pairs, [N / W, K / 2, 2 * W] holding rows 2j and 2j + 1 of each
    // column side by side.
    ManifestEntry flat = w.unpaneled();
    AlignedBuffer staging;
    if (!staging.allocate(w.bytes) ||
        !gatherWeight(file, flat, parts, staging.data()))
      return false;
    const size_t es = dtypeSize(w.dtype);
    const uint64_t k = static_cast<uint64_t>(flat.dims[0]),
                   n = static_cast<uint64_t>(flat.dims[1]),
                   width = n / static_cast<uint64_t>(w.dims[0]);
    const unsigned char *src =
        static_cast<const unsigned char *>(staging.data());
    unsigned char *out = static_cast<unsigned char *>(dst);
    for (uint64_t p = 0; p < n / width; ++p)
      for (uint64_t r = 0; r < k; ++r) {
        const unsigned char *row = src + (r * n + p * width) * es;
        if (!w.pairs) {
          std::memcpy(out + ((p * k + r) * width) * es, row, width * es);
          continue;
        }
        unsigned char *pairRow = out + ((p * (k / 2) + r / 2) * 2 * width) * es;
        for (uint64_t c = 0; c < width; ++c)
          std::memcpy(pairRow + (2 * c + r % 2) * es, row + c * es, es);
      }
    return true;
  }
  if (!w.transpose) {
    assembleWeight(file, w, parts, dst);
    return true;
  }
  ManifestEntry src = w.untransposed();
  const size_t es = dtypeSize(w.dtype);
  uint64_t rows = static_cast<uint64_t>(src.dims[0]),
           cols = static_cast<uint64_t>(src.dims[1]);
  unsigned char *out = static_cast<unsigned char *>(dst);
  if (src.isPlainWeight()) {
    transpose2D(file.tensorData(*parts[0]), out, rows, cols, es);
    return true;
  }
  AlignedBuffer staging;
  if (!staging.allocate(w.bytes))
    return false;
  assembleWeight(file, src, parts, staging.data());
  transpose2D(static_cast<const unsigned char *>(staging.data()), out, rows,
              cols, es);
  return true;
}

/// The products of `dims` before and after `axis`: a tensor is `outer` slabs
/// of dims[axis] x `inner` elements.
static void splitAtAxis(const std::vector<int64_t> &dims, size_t axis,
                        uint64_t &outer, uint64_t &inner) {
  outer = inner = 1;
  for (size_t d = 0; d < axis; ++d)
    outer *= static_cast<uint64_t>(dims[d]);
  for (size_t d = axis + 1; d < dims.size(); ++d)
    inner *= static_cast<uint64_t>(dims[d]);
}

static void assembleWeight(const SafeTensorsWeights &file,
                           const ManifestEntry &w,
                           const std::vector<const StTensor *> &parts,
                           void *dst) {
  unsigned char *out = static_cast<unsigned char *>(dst);
  if (w.isGather()) {
    uint64_t outer, inner;
    splitAtAxis(w.dims, static_cast<size_t>(w.gatherAxis), outer, inner);
    const uint64_t slab = inner * dtypeSize(w.dtype);
    const uint64_t srcStride =
        static_cast<uint64_t>(w.gatherSourceExtent) * slab;
    const unsigned char *src = file.tensorData(*parts[0]);
    for (uint64_t o = 0; o < outer; ++o) {
      for (const GatherRange &r : w.gatherRanges) {
        size_t chunk =
            static_cast<size_t>(static_cast<uint64_t>(r.length) * slab);
        if (chunk)
          std::memcpy(
              out, src + o * srcStride + static_cast<uint64_t>(r.start) * slab,
              chunk);
        out += chunk;
      }
    }
    return;
  }
  if (w.concatParts.empty()) {
    if (w.bytes)
      std::memcpy(out, file.tensorData(*parts[0]), w.bytes);
    return;
  }
  size_t axis = static_cast<size_t>(w.concatAxis);
  uint64_t outer, inner;
  splitAtAxis(w.dims, axis, outer, inner);
  const size_t es = dtypeSize(w.dtype);
  for (uint64_t o = 0; o < outer; ++o) {
    for (const StTensor *t : parts) {
      size_t chunk = static_cast<size_t>(t->shape[axis] * inner * es);
      if (chunk)
        std::memcpy(out, file.tensorData(*t) + o * chunk, chunk);
      out += chunk;
    }
  }
}

} // namespace attnrt
