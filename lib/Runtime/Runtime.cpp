//===- Runtime.cpp - attnrt C API -----------------------------------------===//
//
// Model handles, weight binding and the CPU/CUDA run paths.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnrt.h"
#include "attnc/Runtime/attnrt_abi.h"

#include "Cli.h"
#include "CudaBackend.h"
#include "Manifest.h"
#include "SafeTensors.h"
#include "Support.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>

// The model a program is linked with, if any (weak: absent -> null).
extern "C" {
extern const char attn_model_manifest[] __attribute__((weak));
void attn_model_invoke(void **) __attribute__((weak));
}

using namespace attnrt;

struct attnrt_model {
  Manifest manifest;
  void (*invoke)(void **) = nullptr;
  std::string error;
  /// What invoke receives: one pointer per manifest entry.
  std::vector<void *> buffers;
  /// Per entry: host storage for inputs and outputs (both targets) and for
  /// CPU weights that could not be used in place.
  std::vector<AlignedBuffer> host;
  /// Per entry (CUDA): device allocations owned by the model, and their
  /// sizes (dynamic inputs and outputs grow theirs to the largest run).
  std::vector<void *> device;
  std::vector<uint64_t> deviceBytes;
  std::vector<bool> inputSet;
  /// Per entry: the shape and byte size of the current run (the manifest's
  /// for static entries; set by attnrt_set_input_shaped for dynamic inputs
  /// and by attnrt_run for dynamic outputs, empty until then).
  std::vector<std::vector<int64_t>> runDims;
  std::vector<uint64_t> runBytes;
  /// Whether any entry has a dynamic size: invoke then also receives the
  /// run-time sizes (see ManifestSchema.h).
  bool dynamic = false;
  std::vector<int64_t> dynamicSizes;
  bool weightsBound = false;
  bool haveOutputs = false;
  /// Kept alive while CPU weights point into it.
  std::unique_ptr<SafeTensorsFile> weightsFile;
  double lastMs = 0;
  uint64_t bytesRead = 0, fileBytes = 0;
  /// The first bad token id the model reported during the current run.
  std::string tokenIdError;
  /// A failed check of the input sizes (attnrt_precondition_failed).
  std::string preconditionError;

  /// CUDA: the first run records the invocation into a graph (stream
  /// capture) and every run replays it. The buffers it names are the
  /// model's own device buffers (inputs are copied into them), so their
  /// addresses are fixed; rebinding weights replaces them and drops the
  /// graph. Off with ATTNRT_CUDA_GRAPHS=0, or once a capture failed where
  /// the plain run then succeeded.
  enum class GraphMode { Untried, Ready, Off };
  GraphMode graphMode = GraphMode::Untried;
  cuda::Graph *graph = nullptr;
  /// A model with dynamic sizes records its grids and allocation sizes from
  /// the run-time sizes, and its dynamic buffers move when they grow: the
  /// graph replays only for the sizes and buffers it was recorded with.
  std::vector<int64_t> graphSizes;
  std::vector<void *> graphBuffers;
  void dropGraph() {
    cuda::destroyGraph(graph);
    graph = nullptr;
    if (graphMode == GraphMode::Ready)
      graphMode = GraphMode::Untried;
  }

  bool isCuda() const { return manifest.target == Target::CUDA; }
  int fail(const std::string &msg) {
    error = msg;
    return 1;
  }
  ~attnrt_model() {
    dropGraph();
    for (void *p : device)
      if (p)
        cuda::freeDevice(p);
  }
};

const attnrt::Manifest &attnrt::modelManifest(attnrt_model *m) {
  return m->manifest;
}

int attnrt::failModel(attnrt_model *m, const std::string &msg) {
  return m->fail(msg);
}

static thread_local std::string tlsOpenError;

/// The model whose attnrt_run is executing on this thread: compiled code
/// reports to it (the id checks run on the calling thread).
static thread_local attnrt_model *tlsRunningModel = nullptr;

/// PyTorch's "index out of range" for embeddings, with the offending place.
static std::string tokenIdMessage(int64_t batch, int64_t position, int64_t id,
                                  int64_t rows) {
  return strFormat(
      "attnrt_run: token id %lld at batch %lld, position %lld is out of "
      "range for the embedding table of %lld rows (valid ids are 0..%lld)",
      static_cast<long long>(id), static_cast<long long>(batch),
      static_cast<long long>(position), static_cast<long long>(rows),
      static_cast<long long>(rows - 1));
}

/// Called by compiled code (attn-cpu-check-token-ids) for an embedding id
/// outside [0, rows): the run then fails with this message. The first bad id
/// is kept.
extern "C" void attnrt_report_token_id(int64_t batch, int64_t position,
                                       int64_t id, int64_t rows) {
  attnrt_model *m = tlsRunningModel;
  if (!m || !m->tokenIdError.empty())
    return;
  m->tokenIdError = tokenIdMessage(batch, position, id, rows);
}

/// Called by compiled code (attn-lower-runtime-checks) when a check of the
/// input sizes fails at the start of the entry, which then returns without
/// running anything: the run fails with this message (a located
/// diagnostic). The first failure is kept.
extern "C" void attnrt_precondition_failed(const char *message) {
  attnrt_model *m = tlsRunningModel;
  if (!m || !m->preconditionError.empty())
    return;
  m->preconditionError =
      message ? message : "error: run-time check of the input sizes failed";
}

/// Runs the compiled code on this thread with `m` as the model it reports
/// to; false with the message when a precondition failed (nothing ran).
static bool invokeModel(attnrt_model *m, void **args, std::string &failure) {
  m->preconditionError.clear();
  attnrt_model *outer = tlsRunningModel;
  tlsRunningModel = m;
  m->invoke(args);
  tlsRunningModel = outer;
  failure = std::move(m->preconditionError);
  m->preconditionError.clear();
  return failure.empty();
}

/// The ids inputs (`input ... ids <rows>`) checked on the host before any
/// compiled code reads them: on CUDA the device lookup can only clamp, and
/// the check is the same on both targets. Returns the first bad id's
/// message in row-major order, or "".
static std::string checkIdInputs(const attnrt_model &m) {
  // A KV-cache step with a run-time token count T (ids [batch, ?]) writes
  // cache rows positions[b] .. positions[b] + T - 1; its `positions` bound
  // is the cache length, so the check adds this run's T. (A static T is
  // already in the bound: cache length - T + 1.)
  int64_t stepTokens = 1;
  for (int slot : m.manifest.inputs) {
    const ManifestEntry &e = m.manifest.entries[static_cast<size_t>(slot)];
    const std::vector<int64_t> &dims = m.runDims[static_cast<size_t>(slot)];
    if (e.idBound >= 0 && !e.positions && e.dims.size() >= 2 &&
        e.dims.back() == kDynamicDim && !dims.empty())
      stepTokens = dims.back();
  }
  for (int slot : m.manifest.inputs) {
    const ManifestEntry &e = m.manifest.entries[static_cast<size_t>(slot)];
    if (e.idBound < 0)
      continue;
    const auto *data = static_cast<const unsigned char *>(
        m.host[static_cast<size_t>(slot)].data());
    const std::vector<int64_t> &dims = m.runDims[static_cast<size_t>(slot)];
    uint64_t numElements =
        m.runBytes[static_cast<size_t>(slot)] / dtypeSize(e.dtype);
    uint64_t last = dims.empty() ? 1 : static_cast<uint64_t>(dims.back());
    for (uint64_t i = 0; i < numElements; ++i) {
      int64_t id;
      if (e.dtype == DType::I32) {
        int32_t v;
        std::memcpy(&v, data + i * sizeof v, sizeof v);
        id = v;
      } else {
        std::memcpy(&id, data + i * sizeof id, sizeof id);
      }
      if ((id < 0 || id >= e.idBound) && e.positions)
        return strFormat("attnrt_run: input '%s' gives sequence %llu position "
                         "%lld, outside [0, %lld) (the KV cache or position "
                         "table length)",
                         e.name.c_str(), static_cast<unsigned long long>(i),
                         static_cast<long long>(id),
                         static_cast<long long>(e.idBound));
      if (e.positions && id > e.idBound - stepTokens)
        return strFormat("attnrt_run: input '%s' gives sequence %llu position "
                         "%lld, but %lld tokens from there pass the end of "
                         "the KV cache (%lld positions)",
                         e.name.c_str(), static_cast<unsigned long long>(i),
                         static_cast<long long>(id),
                         static_cast<long long>(stepTokens),
                         static_cast<long long>(e.idBound));
      if (id < 0 || id >= e.idBound)
        return tokenIdMessage(static_cast<int64_t>(i / last),
                              static_cast<int64_t>(i % last), id, e.idBound);
    }
  }
  return {};
}

static attnrt_model *openFailed(const std::string &msg, char *err,
                                size_t errlen) {
  tlsOpenError = msg;
  if (err && errlen) {
    size_t n = msg.size() < errlen - 1 ? msg.size() : errlen - 1;
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return nullptr;
}

extern "C" attnrt_model *attnrt_open(const char *manifestText,
                                     void (*invoke)(void **), char *err,
                                     size_t errlen) {
  if (err && errlen)
    err[0] = '\0';
  tlsOpenError.clear();
  std::unique_ptr<attnrt_model> m(new attnrt_model());
  std::string perr;
  if (!manifestText)
    return openFailed("attnrt: no manifest given", err, errlen);
  if (!invoke)
    return openFailed("attnrt: no invoke function given", err, errlen);
  if (!parseManifest(manifestText, m->manifest, perr))
    return openFailed("attnrt: invalid model manifest: " + perr, err, errlen);
  m->invoke = invoke;
  const size_t n = m->manifest.entries.size();
  m->buffers.assign(n, nullptr);
  m->host.resize(n);
  m->device.assign(n, nullptr);
  m->deviceBytes.assign(n, 0);
  m->inputSet.assign(n, false);
  m->runDims.resize(n);
  m->runBytes.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const ManifestEntry &e = m->manifest.entries[i];
    if (e.isDynamic()) {
      m->dynamic = true;
      continue;
    }
    m->runDims[i] = e.dims;
    m->runBytes[i] = e.bytes;
  }
  if (m->isCuda()) {
    const char *graphs = std::getenv("ATTNRT_CUDA_GRAPHS");
    if (graphs && std::strcmp(graphs, "0") == 0)
      m->graphMode = attnrt_model::GraphMode::Off;
    std::string reason;
    if (!cuda::ensureInitialized(reason))
      return openFailed("attnrt: this model was compiled for CUDA but " +
                            reason,
                        err, errlen);
  }
  for (size_t i = 0; i < n; ++i) {
    const ManifestEntry &e = m->manifest.entries[i];
    // Dynamic inputs and outputs get their storage once their size is known.
    if (e.kind == EntryKind::Weight || e.isDynamic())
      continue;
    if (!m->host[i].allocate(e.bytes))
      return openFailed(strFormat("attnrt: out of memory allocating %llu "
                                  "bytes for %s '%s'",
                                  static_cast<unsigned long long>(e.bytes),
                                  entryKindName(e.kind), e.name.c_str()),
                        err, errlen);
    if (m->isCuda()) {
      std::string aerr;
      if (!cuda::allocDevice(e.bytes, &m->device[i], aerr))
        return openFailed(aerr + " for " + entryKindName(e.kind) + " '" +
                              e.name + "'",
                          err, errlen);
      m->deviceBytes[i] = e.bytes;
      m->buffers[i] = m->device[i];
    } else {
      m->buffers[i] = m->host[i].data();
    }
  }
  if (attnrt_reset_state(m.get()))
    return openFailed(m->error, err, errlen);
  return m.release();
}

extern "C" int attnrt_reset_state(attnrt_model *m) {
  if (!m)
    return 1;
  for (int slot : m->manifest.states) {
    size_t bytes = static_cast<size_t>(
        m->manifest.entries[static_cast<size_t>(slot)].bytes);
    void *host = m->host[static_cast<size_t>(slot)].data();
    std::memset(host, 0, bytes);
    std::string err;
    if (m->isCuda() && !cuda::copyToDevice(m->device[static_cast<size_t>(slot)],
                                           host, bytes, err))
      return m->fail("attnrt_reset_state: " + err);
  }
  return 0;
}

extern "C" attnrt_model *attnrt_open_linked(char *err, size_t errlen) {
  if (!attn_model_manifest || !attn_model_invoke)
    return openFailed("attnrt: no compiled model is linked into this program "
                      "(attn_model_manifest / attn_model_invoke are not "
                      "defined)",
                      err, errlen);
  return attnrt_open(attn_model_manifest, attn_model_invoke, err, errlen);
}

const char *attnrt::linkedModelManifest() {
  return attn_model_manifest ? attn_model_manifest : nullptr;
}

attnrt::InvokeFn attnrt::linkedModelInvoke() {
  return attn_model_invoke ? attn_model_invoke : nullptr;
}

extern "C" void attnrt_close(attnrt_model *m) { delete m; }

extern "C" const char *attnrt_last_error(attnrt_model *m) {
  return m ? m->error.c_str() : tlsOpenError.c_str();
}

extern "C" const char *attnrt_target(attnrt_model *m) {
  if (!m)
    return nullptr;
  return targetName(m->manifest.target);
}

extern "C" int attnrt_num_weights(attnrt_model *m) {
  return m ? static_cast<int>(m->manifest.weights.size()) : -1;
}
extern "C" int attnrt_num_inputs(attnrt_model *m) {
  return m ? static_cast<int>(m->manifest.inputs.size()) : -1;
}
extern "C" int attnrt_num_outputs(attnrt_model *m) {
  return m ? static_cast<int>(m->manifest.outputs.size()) : -1;
}
extern "C" int attnrt_num_states(attnrt_model *m) {
  return m ? static_cast<int>(m->manifest.states.size()) : -1;
}

/// The inputs, outputs or states, in manifest order.
static const std::vector<int> &entriesOf(const Manifest &mf, EntryKind kind) {
  return kind == EntryKind::Input    ? mf.inputs
         : kind == EntryKind::Output ? mf.outputs
                                     : mf.states;
}

/// The manifest entry index of input/output/state `index`, or -1 (error
/// recorded).
static int ioSlot(attnrt_model *m, EntryKind kind, int index, const char *fn) {
  if (!m)
    return -1;
  const std::vector<int> &list = entriesOf(m->manifest, kind);
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    m->error = strFormat("%s: %s index %d out of range (the model has %zu)", fn,
                         entryKindName(kind), index, list.size());
    return -1;
  }
  return list[static_cast<size_t>(index)];
}

static const ManifestEntry *ioEntry(attnrt_model *m, EntryKind kind, int index,
                                    const char *fn) {
  int slot = ioSlot(m, kind, index, fn);
  return slot < 0 ? nullptr : &m->manifest.entries[static_cast<size_t>(slot)];
}

static bool isDType(attnrt_dtype t) {
  return t >= 0 && static_cast<size_t>(t) < std::size(kDTypes);
}

extern "C" const char *attnrt_dtype_name(attnrt_dtype t) {
  return isDType(t) ? dtypeName(static_cast<DType>(t)) : nullptr;
}

extern "C" size_t attnrt_dtype_size(attnrt_dtype t) {
  return isDType(t) ? dtypeSize(static_cast<DType>(t)) : 0;
}

// attnrt_<kind>_<what>(m, index): `value` (an expression of the entry e) or
// `invalid` when index does not name such an entry.
#define ATTNRT_IO_GETTER(kind, entryKind, type, what, value, invalid)          \
  extern "C" type attnrt_##kind##_##what(attnrt_model *m, int index) {         \
    const ManifestEntry *e =                                                   \
        ioEntry(m, entryKind, index, "attnrt_" #kind "_" #what);               \
    return e ? (value) : (invalid);                                            \
  }

#define ATTNRT_IO_GETTERS(kind, entryKind)                                     \
  ATTNRT_IO_GETTER(kind, entryKind, const char *, name, e->name.c_str(),       \
                   nullptr)                                                    \
  ATTNRT_IO_GETTER(kind, entryKind, attnrt_dtype, dtype,                       \
                   static_cast<attnrt_dtype>(e->dtype), ATTNRT_INVALID_DTYPE)  \
  ATTNRT_IO_GETTER(kind, entryKind, int, rank,                                 \
                   static_cast<int>(e->dims.size()), -1)                       \
  ATTNRT_IO_GETTER(kind, entryKind, const int64_t *, dims, e->dims.data(),     \
                   nullptr)                                                    \
  ATTNRT_IO_GETTER(kind, entryKind, size_t, bytes,                             \
                   e->isDynamic() ? 0 : static_cast<size_t>(e->bytes), 0)      \
  extern "C" int64_t attnrt_##kind##_dim(attnrt_model *m, int index,           \
                                         int axis) {                           \
    const ManifestEntry *e =                                                   \
        ioEntry(m, entryKind, index, "attnrt_" #kind "_dim");                  \
    if (!e)                                                                    \
      return -1;                                                               \
    if (axis < 0 || static_cast<size_t>(axis) >= e->dims.size()) {             \
      m->error = strFormat("attnrt_" #kind "_dim: axis %d out of range for "   \
                           "rank %zu",                                         \
                           axis, e->dims.size());                              \
      return -1;                                                               \
    }                                                                          \
    return e->dims[static_cast<size_t>(axis)];                                 \
  }

ATTNRT_IO_GETTERS(input, EntryKind::Input)
ATTNRT_IO_GETTERS(output, EntryKind::Output)
ATTNRT_IO_GETTERS(state, EntryKind::State)
#undef ATTNRT_IO_GETTERS
#undef ATTNRT_IO_GETTER

extern "C" int attnrt_bind_weights(attnrt_model *m,
                                   const char *safetensors_path) {
  if (!m)
    return 1;
  if (!safetensors_path)
    return m->fail("attnrt_bind_weights: no weights file given");
  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  std::string err;
  if (!file->open(safetensors_path, err))
    return m->fail(err);

  // Resolve every weight before changing anything.
  const Manifest &mf = m->manifest;
  std::vector<std::vector<const StTensor *>> parts(mf.weights.size());
  std::set<const StTensor *> touched;
  uint64_t bytesRead = file->headerBytes();
  const uint64_t fileBytes = file->fileSize();
  for (size_t w = 0; w < mf.weights.size(); ++w) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.weights[w])];
    if (!resolveWeight(*file, e, parts[w], err))
      return m->fail(err);
    // See attnrt_weight_bytes_read: a gather record reads exactly the bytes
    // it copies (its buffer size), every time; plain and concat records
    // read each tensor they name whole, once per bind.
    if (e.isGather()) {
      bytesRead += e.bytes;
      continue;
    }
    for (const StTensor *t : parts[w])
      if (touched.insert(t).second)
        bytesRead += t->bytes();
  }

  std::vector<void *> newBuffers(mf.weights.size(), nullptr);
  if (!m->isCuda()) {
    std::vector<AlignedBuffer> copies(mf.weights.size());
    bool anyInPlace = false;
    for (size_t w = 0; w < mf.weights.size(); ++w) {
      const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.weights[w])];
      if (bindsAsStored(e, parts[w])) {
        const unsigned char *src = file->tensorData(*parts[w][0]);
        if (reinterpret_cast<uintptr_t>(src) % kAlignment == 0) {
          newBuffers[w] = const_cast<unsigned char *>(src);
          anyInPlace = true;
          continue;
        }
      }
      if (!copies[w].allocate(e.bytes))
        return m->fail(strFormat("attnrt: out of memory allocating %llu bytes "
                                 "for weight '%s'",
                                 static_cast<unsigned long long>(e.bytes),
                                 e.name.c_str()));
      if (!gatherWeight(*file, e, parts[w], copies[w].data()))
        return m->fail("attnrt: out of memory transposing weight '" + e.name +
                       "'");
      newBuffers[w] = copies[w].data();
    }
    for (size_t w = 0; w < mf.weights.size(); ++w) {
      size_t slot = static_cast<size_t>(mf.weights[w]);
      m->host[slot] = std::move(copies[w]);
      m->buffers[slot] = newBuffers[w];
    }
    if (anyInPlace)
      m->weightsFile = std::move(file);
    else
      m->weightsFile.reset();
  } else {
    auto freeNew = [&]() {
      for (void *p : newBuffers)
        if (p)
          cuda::freeDevice(p);
    };
    for (size_t w = 0; w < mf.weights.size(); ++w) {
      const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.weights[w])];
      if (!cuda::allocDevice(e.bytes, &newBuffers[w], err)) {
        freeNew();
        return m->fail(err + " for weight '" + e.name + "'");
      }
      bool ok;
      if (bindsAsStored(e, parts[w])) {
        ok = cuda::copyToDevice(newBuffers[w], file->tensorData(*parts[w][0]),
                                e.bytes, err);
      } else {
        // Concat, gather, transposed and converted weights are assembled on
        // the host and uploaded in one copy.
        AlignedBuffer staging;
        if (!staging.allocate(e.bytes)) {
          freeNew();
          return m->fail("attnrt: out of memory staging weight '" + e.name +
                         "'");
        }
        if (!gatherWeight(*file, e, parts[w], staging.data())) {
          freeNew();
          return m->fail("attnrt: out of memory transposing weight '" + e.name +
                         "'");
        }
        ok = cuda::copyToDevice(newBuffers[w], staging.data(), e.bytes, err);
      }
      if (!ok) {
        freeNew();
        return m->fail(err + " uploading weight '" + e.name + "'");
      }
    }
    m->dropGraph(); // it names the old weight buffers
    for (size_t w = 0; w < mf.weights.size(); ++w) {
      size_t slot = static_cast<size_t>(mf.weights[w]);
      if (m->device[slot])
        cuda::freeDevice(m->device[slot]);
      m->device[slot] = newBuffers[w];
      m->buffers[slot] = newBuffers[w];
    }
    m->weightsFile.reset(); // Everything is on the device now.
  }
  m->weightsBound = true;
  m->bytesRead = bytesRead;
  m->fileBytes = fileBytes;
  return 0;
}

/// Checks a caller's buffer for input or output `index`: its size must be the
/// tensor's and its pointer non-null unless the tensor is empty (an output
/// also needs a successful run). The slot, or -1 with the model's error set.
static int checkIoBuffer(attnrt_model *m, bool input, int index, size_t bytes,
                         const void *data) {
  const char *fn = input ? "attnrt_set_input" : "attnrt_get_output";
  int slot = ioSlot(m, input ? EntryKind::Input : EntryKind::Output, index, fn);
  if (slot < 0)
    return -1;
  const ManifestEntry &e = m->manifest.entries[static_cast<size_t>(slot)];
  if (!input && !m->haveOutputs) {
    m->fail("attnrt_get_output: the model has not run successfully");
    return -1;
  }
  if (input && e.isDynamic()) {
    m->fail(strFormat("%s: input %d '%s' has dynamic dims %s: give its shape "
                      "with attnrt_set_input_shaped",
                      fn, index, e.name.c_str(),
                      formatShapeTuple(e.dims).c_str()));
    return -1;
  }
  // Outputs: the last run's size (dynamic ones vary from run to run).
  uint64_t want = m->runBytes[static_cast<size_t>(slot)];
  const std::vector<int64_t> &dims = m->runDims[static_cast<size_t>(slot)];
  if (bytes != want) {
    std::string given = input ? strFormat("%zu were given", bytes)
                              : strFormat("the destination holds %zu", bytes);
    m->fail(strFormat("%s: %s %d '%s' (%s %s) is %llu bytes but %s", fn,
                      input ? "input" : "output", index, e.name.c_str(),
                      dtypeName(e.dtype), formatShapeTuple(dims).c_str(),
                      static_cast<unsigned long long>(want), given.c_str()));
    return -1;
  }
  if (bytes && !data) {
    m->fail(std::string(fn) + (input ? ": data is NULL" : ": dst is NULL"));
    return -1;
  }
  return slot;
}

extern "C" int attnrt_set_input(attnrt_model *m, int index, const void *data,
                                size_t bytes) {
  int slot = checkIoBuffer(m, true, index, bytes, data);
  if (slot < 0)
    return 1;
  if (bytes)
    std::memcpy(m->host[static_cast<size_t>(slot)].data(), data, bytes);
  m->inputSet[static_cast<size_t>(slot)] = true;
  return 0;
}

/// CUDA: makes the device buffer of entry `slot` (a dynamic input or
/// output) hold at least `bytes`; a larger one replaces it, so the graph
/// recorded with the old one no longer applies.
static bool growDevice(attnrt_model *m, size_t slot, uint64_t bytes,
                       std::string &err) {
  if (m->device[slot] && m->deviceBytes[slot] >= bytes)
    return true;
  void *bigger = nullptr;
  const ManifestEntry &e = m->manifest.entries[slot];
  if (!cuda::allocDevice(bytes ? bytes : 1, &bigger, err)) {
    err += std::string(" for ") + entryKindName(e.kind) + " '" + e.name + "'";
    return false;
  }
  if (m->device[slot]) {
    m->dropGraph();
    cuda::freeDevice(m->device[slot]);
  }
  m->device[slot] = bigger;
  m->deviceBytes[slot] = bytes;
  m->buffers[slot] = bigger;
  return true;
}

extern "C" int attnrt_set_input_shaped(attnrt_model *m, int index,
                                       const void *data, size_t bytes, int rank,
                                       const int64_t *dims) {
  const char *fn = "attnrt_set_input_shaped";
  int slot = ioSlot(m, EntryKind::Input, index, fn);
  if (slot < 0)
    return 1;
  const ManifestEntry &e = m->manifest.entries[static_cast<size_t>(slot)];
  if (rank < 0 || (rank > 0 && !dims))
    return m->fail(strFormat("%s: invalid rank %d or NULL dims", fn, rank));
  std::vector<int64_t> shape(dims, dims + rank);
  if (shape.size() != e.dims.size())
    return m->fail(strFormat("%s: input %d '%s' has rank %d but the model "
                             "takes rank %zu %s",
                             fn, index, e.name.c_str(), rank, e.dims.size(),
                             formatShapeTuple(e.dims).c_str()));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (e.dims[d] != kDynamicDim && shape[d] != e.dims[d])
      return m->fail(strFormat(
          "%s: input %d '%s' has shape %s but the model takes %s: dimension "
          "%zu is %lld, the model's is %lld",
          fn, index, e.name.c_str(), formatShapeTuple(shape).c_str(),
          formatShapeTuple(e.dims).c_str(), d, static_cast<long long>(shape[d]),
          static_cast<long long>(e.dims[d])));
    if (shape[d] < 0)
      return m->fail(strFormat("%s: input %d '%s': dimension %zu is %lld", fn,
                               index, e.name.c_str(), d,
                               static_cast<long long>(shape[d])));
  }
  uint64_t elements;
  if (!numElements(shape, elements) ||
      elements > UINT64_MAX / dtypeSize(e.dtype))
    return m->fail(strFormat("%s: input %d '%s': shape %s is too large", fn,
                             index, e.name.c_str(),
                             formatShapeTuple(shape).c_str()));
  uint64_t want = elements * dtypeSize(e.dtype);
  if (bytes != want)
    return m->fail(strFormat("%s: input %d '%s' (%s %s) is %llu bytes but %zu "
                             "were given",
                             fn, index, e.name.c_str(), dtypeName(e.dtype),
                             formatShapeTuple(shape).c_str(),
                             static_cast<unsigned long long>(want), bytes));
  if (bytes && !data)
    return m->fail(std::string(fn) + ": data is NULL");
  AlignedBuffer &host = m->host[static_cast<size_t>(slot)];
  // Dynamic inputs grow their storage to the largest size seen.
  if (host.size() < bytes || !host.data()) {
    AlignedBuffer bigger;
    if (!bigger.allocate(bytes ? bytes : 1))
      return m->fail(strFormat("attnrt: out of memory allocating %llu bytes "
                               "for input '%s'",
                               static_cast<unsigned long long>(bytes),
                               e.name.c_str()));
    host = std::move(bigger);
    if (!m->isCuda())
      m->buffers[static_cast<size_t>(slot)] = host.data();
  }
  if (m->isCuda()) {
    std::string err;
    if (!growDevice(m, static_cast<size_t>(slot), bytes, err))
      return m->fail(err);
  }
  if (bytes)
    std::memcpy(host.data(), data, bytes);
  m->runDims[static_cast<size_t>(slot)] = shape;
  m->runBytes[static_cast<size_t>(slot)] = want;
  m->inputSet[static_cast<size_t>(slot)] = true;
  return 0;
}

extern "C" const int64_t *attnrt_output_shape(attnrt_model *m, int index) {
  int slot = ioSlot(m, EntryKind::Output, index, "attnrt_output_shape");
  if (slot < 0)
    return nullptr;
  const std::vector<int64_t> &dims = m->runDims[static_cast<size_t>(slot)];
  if (m->manifest.entries[static_cast<size_t>(slot)].isDynamic() &&
      !m->haveOutputs) {
    m->fail("attnrt_output_shape: the model has dynamic shapes and has not "
            "run successfully");
    return nullptr;
  }
  return dims.data();
}

/// Before a run of a model with dynamic sizes: checks the sizes the model
/// needs equal between inputs, sizes the outputs (allocating their storage)
/// and collects every dynamic size, in record order, for invoke. Returns ""
/// or the error.
static std::string prepareDynamicRun(attnrt_model *m) {
  const Manifest &mf = m->manifest;
  auto sizeOf = [&](int input, int axis) {
    return m->runDims[static_cast<size_t>(mf.inputs[input])]
                     [static_cast<size_t>(axis)];
  };
  for (size_t i = 0; i < mf.inputs.size(); ++i) {
    size_t slot = static_cast<size_t>(mf.inputs[i]);
    const ManifestEntry &e = mf.entries[slot];
    size_t k = 0;
    for (size_t d = 0; d < e.dims.size(); ++d) {
      if (e.dims[d] != kDynamicDim)
        continue;
      auto [input, axis] = e.dimsFrom[k++];
      if (input < 0 || sizeOf(input, axis) == m->runDims[slot][d])
        continue;
      const ManifestEntry &src =
          mf.entries[static_cast<size_t>(mf.inputs[input])];
      return strFormat(
          "attnrt_run: input %zu '%s' dimension %zu is %lld but input %d "
          "'%s' dimension %d is %lld; the model needs them equal",
          i, e.name.c_str(), d, static_cast<long long>(m->runDims[slot][d]),
          input, src.name.c_str(), axis,
          static_cast<long long>(sizeOf(input, axis)));
    }
  }
  for (size_t i = 0; i < mf.outputs.size(); ++i) {
    size_t slot = static_cast<size_t>(mf.outputs[i]);
    const ManifestEntry &e = mf.entries[slot];
    if (!e.isDynamic())
      continue;
    std::vector<int64_t> shape = e.dims;
    size_t k = 0;
    for (int64_t &d : shape)
      if (d == kDynamicDim) {
        auto [input, axis] = e.dimsFrom[k++];
        d = sizeOf(input, axis);
      }
    uint64_t elements;
    if (!numElements(shape, elements) ||
        elements > UINT64_MAX / dtypeSize(e.dtype))
      return strFormat("attnrt_run: output '%s' of shape %s is too large",
                       e.name.c_str(), formatShapeTuple(shape).c_str());
    uint64_t bytes = elements * dtypeSize(e.dtype);
    AlignedBuffer &host = m->host[slot];
    if (host.size() < bytes || !host.data()) {
      AlignedBuffer bigger;
      if (!bigger.allocate(bytes ? bytes : 1))
        return strFormat("attnrt: out of memory allocating %llu bytes for "
                         "output '%s'",
                         static_cast<unsigned long long>(bytes),
                         e.name.c_str());
      host = std::move(bigger);
      if (!m->isCuda())
        m->buffers[slot] = host.data();
    }
    std::string err;
    if (m->isCuda() && !growDevice(m, slot, bytes, err))
      return err;
    m->runDims[slot] = shape;
    m->runBytes[slot] = bytes;
  }
  m->dynamicSizes.clear();
  for (size_t slot = 0; slot < mf.entries.size(); ++slot)
    for (size_t d = 0; d < mf.entries[slot].dims.size(); ++d)
      if (mf.entries[slot].dims[d] == kDynamicDim) {
        int64_t size = m->runDims[slot][d];
        // An empty grid is an invalid launch (and an empty allocation an
        // invalid one too) for the CUDA driver.
        if (size == 0 && m->isCuda())
          return strFormat("attnrt_run: %s '%s' dimension %zu is 0; a CUDA "
                           "model's dynamic sizes must be at least 1",
                           entryKindName(mf.entries[slot].kind),
                           mf.entries[slot].name.c_str(), d);
        m->dynamicSizes.push_back(size);
      }
  return {};
}

extern "C" int attnrt_run(attnrt_model *m) {
  if (!m)
    return 1;
  const Manifest &mf = m->manifest;
  m->haveOutputs = false;
  if (!mf.weights.empty() && !m->weightsBound)
    return m->fail("attnrt_run: the model's weights are not bound (call "
                   "attnrt_bind_weights first)");
  for (size_t i = 0; i < mf.inputs.size(); ++i) {
    size_t slot = static_cast<size_t>(mf.inputs[i]);
    if (!m->inputSet[slot])
      return m->fail(strFormat("attnrt_run: input %zu '%s' has not been set", i,
                               mf.entries[slot].name.c_str()));
  }
  if (m->dynamic) {
    std::string dynError = prepareDynamicRun(m);
    if (!dynError.empty())
      return m->fail(dynError);
  }
  std::string idError = checkIdInputs(*m);
  if (!idError.empty())
    return m->fail(idError);
  std::vector<void *> args = m->buffers;
  // Models with dynamic sizes read them after the buffers (the ABI of
  // attn-emit-model-entry).
  if (m->dynamic)
    args.push_back(m->dynamicSizes.data());
  using Clock = std::chrono::steady_clock;
  if (!m->isCuda()) {
    m->tokenIdError.clear();
    std::string precondition;
    Clock::time_point t0 = Clock::now();
    bool ran = invokeModel(m, args.data(), precondition);
    Clock::time_point t1 = Clock::now();
    if (!ran)
      return m->fail(precondition);
    if (!m->tokenIdError.empty())
      return m->fail(m->tokenIdError);
    m->lastMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
    m->haveOutputs = true;
    return 0;
  }

  std::string err;
  // A failure recorded before this run (e.g. a module that failed to load
  // in a global constructor) is reported now.
  if (cuda::takePendingError(err))
    return m->fail(err);
  for (int slot : mf.inputs)
    if (!cuda::copyToDevice(m->device[static_cast<size_t>(slot)],
                            m->host[static_cast<size_t>(slot)].data(),
                            m->runBytes[static_cast<size_t>(slot)], err))
      return m->fail(err + " copying input '" +
                     mf.entries[static_cast<size_t>(slot)].name + "'");
  Clock::time_point t0 = Clock::now();
  using GraphMode = attnrt_model::GraphMode;
  bool captureFailed = false;
  if (m->graph && m->dynamic &&
      (m->graphSizes != m->dynamicSizes || m->graphBuffers != m->buffers))
    m->dropGraph();
  if (m->graphMode != GraphMode::Off && !m->graph) {
    // Record the invocation (nothing runs yet); on any failure the capture
    // is discarded and this run is a plain one.
    std::string why;
    if (cuda::beginCapture(why)) {
      std::string precondition;
      bool ran = invokeModel(m, args.data(), precondition);
      std::string invokeErr;
      bool invokeFailed = cuda::takePendingError(invokeErr);
      cuda::Graph *g = cuda::endCapture(why);
      // Nothing was recorded: no graph for these sizes.
      if (!ran) {
        cuda::destroyGraph(g);
        return m->fail(precondition);
      }
      if (g && !invokeFailed) {
        m->graph = g;
        m->graphMode = GraphMode::Ready;
        m->graphSizes = m->dynamicSizes;
        m->graphBuffers = m->buffers;
      } else {
        cuda::destroyGraph(g);
        captureFailed = true;
      }
    } else {
      captureFailed = true;
    }
  }
  if (m->graph) {
    std::string launchErr;
    if (!cuda::launchGraph(m->graph, launchErr))
      return m->fail(launchErr);
  } else {
    std::string precondition;
    if (!invokeModel(m, args.data(), precondition))
      return m->fail(precondition);
  }
  std::string syncErr;
  bool synced = cuda::synchronize(syncErr);
  Clock::time_point t1 = Clock::now();
  if (cuda::takePendingError(err))
    return m->fail(err);
  if (!synced)
    return m->fail(syncErr);
  for (int slot : mf.outputs)
    if (!cuda::copyFromDevice(m->host[static_cast<size_t>(slot)].data(),
                              m->device[static_cast<size_t>(slot)],
                              m->runBytes[static_cast<size_t>(slot)], err))
      return m->fail(err + " copying output '" +
                     mf.entries[static_cast<size_t>(slot)].name + "'");
  // The plain run worked where the capture did not: this model (or driver)
  // does not capture; stop trying.
  if (captureFailed)
    m->graphMode = GraphMode::Off;
  m->lastMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  m->haveOutputs = true;
  return 0;
}

extern "C" int attnrt_get_output(attnrt_model *m, int index, void *dst,
                                 size_t bytes) {
  int slot = checkIoBuffer(m, false, index, bytes, dst);
  if (slot < 0)
    return 1;
  if (bytes)
    std::memcpy(dst, m->host[static_cast<size_t>(slot)].data(), bytes);
  return 0;
}

extern "C" double attnrt_last_run_ms(attnrt_model *m) {
  return m ? m->lastMs : 0.0;
}

extern "C" uint64_t attnrt_weight_bytes_read(attnrt_model *m) {
  return m ? m->bytesRead : 0;
}

extern "C" uint64_t attnrt_weight_file_bytes(attnrt_model *m) {
  return m ? m->fileBytes : 0;
}
