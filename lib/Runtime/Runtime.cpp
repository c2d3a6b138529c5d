//===- Runtime.cpp - attnrt C API -----------------------------------------===//
//
// Model handles, their description, weight binding, and the model-level run
// API over each thread's implicit context (the contexts are in Context.cpp).
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnrt.h"

#include "Cli.h"
#include "CudaBackend.h"
#include "Manifest.h"
#include "Model.h"
#include "SafeTensors.h"
#include "Support.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>

// The model a program is linked with, if any, and the encoder an
// encoder-decoder's decoder step is linked with (weak: absent -> null).
extern "C" {
extern const char attn_model_manifest[] __attribute__((weak));
void attn_model_invoke(void **) __attribute__((weak));
extern const char attn_encoder_manifest[] __attribute__((weak));
void attn_encoder_invoke(void **) __attribute__((weak));
}

using namespace attnrt;

attnrt_model::~attnrt_model() {
  // Contexts still open (the implicit ones of the model-level API, and any
  // the caller did not free) go with the model.
  {
    std::lock_guard<std::mutex> lock(threadSlots->mu);
    threadSlots->closed = true;
    threadSlots->slots.clear();
  }
  std::set<attnrt_context *> open;
  {
    std::lock_guard<std::mutex> lock(contextsMu);
    open.swap(contexts);
  }
  for (attnrt_context *c : open)
    delete c;
  for (void *p : weightDevice)
    if (p)
      cuda::freeDevice(p);
  delete encoder;
}

const attnrt::Manifest &attnrt::modelManifest(attnrt_model *m) {
  return m->manifest;
}

attnrt_model *attnrt::modelEncoder(attnrt_model *m) { return m->encoder; }

namespace {
/// The models this thread has a slot in; its slots are removed (and their
/// implicit contexts freed) when the thread ends.
struct ThreadExit {
  std::vector<std::weak_ptr<ThreadSlots>> models;
  ~ThreadExit() {
    for (std::weak_ptr<ThreadSlots> &weak : models) {
      std::shared_ptr<ThreadSlots> slots = weak.lock();
      if (!slots)
        continue;
      // Held while the context is freed: a model being closed waits.
      std::lock_guard<std::mutex> lock(slots->mu);
      if (slots->closed)
        continue;
      auto it = slots->slots.find(std::this_thread::get_id());
      if (it == slots->slots.end())
        continue;
      destroyContext(it->second.context);
      slots->slots.erase(it);
    }
  }
};
thread_local ThreadExit tlsThreadExit;
} // namespace

/// This thread's slot of m, created on first use. Only this thread changes
/// it (until attnrt_close).
static ThreadSlot &threadSlot(attnrt_model *m) {
  ThreadSlots &slots = *m->threadSlots;
  std::lock_guard<std::mutex> lock(slots.mu);
  auto [it, added] = slots.slots.try_emplace(std::this_thread::get_id());
  if (added)
    tlsThreadExit.models.push_back(m->threadSlots);
  return it->second;
}

int attnrt::failModel(attnrt_model *m, const std::string &msg) {
  threadSlot(m).error = msg;
  return 1;
}

/// This thread's implicit context of m, which the model-level run API uses;
/// null with the error recorded if it cannot be created.
static attnrt_context *implicitContext(attnrt_model *m) {
  ThreadSlot &slot = threadSlot(m);
  if (!slot.context) {
    std::string err;
    slot.context = createContext(m, err);
    if (!slot.context)
      slot.error = err;
  }
  return slot.context;
}

static thread_local std::string tlsOpenError;

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
  m->invoke = invoke;
  const size_t n = m->manifest.entries.size();
  m->weightBuffers.assign(n, nullptr);
  m->weightHost.resize(n);
  m->weightDevice.assign(n, nullptr);
  for (const ManifestEntry &e : m->manifest.entries)
    m->dynamic = m->dynamic || e.isDynamic();
  if (m->isCuda()) {
    const char *graphs = std::getenv("ATTNRT_CUDA_GRAPHS");
    m->graphsDisabled = graphs && std::strcmp(graphs, "0") == 0;
    std::string reason;
    if (!cuda::ensureInitialized(reason))
      return openFailed("attnrt: this model was compiled for CUDA but " +
                            reason,
                        err, errlen);
  }
  // The opening thread's context now: its buffers are allocated (and a
  // failure reported) at open, as a single-threaded program expects.
  if (!implicitContext(m.get()))
    return openFailed(threadSlot(m.get()).error, err, errlen);
  return m.release();
}

/// Runs `call` on this thread's implicit context of m; its failure is then
/// the thread's last error on m.
template <typename T, typename Call>
static T onImplicit(attnrt_model *m, T failed, Call call) {
  attnrt_context *c = implicitContext(m);
  if (!c)
    return failed;
  T result = call(c);
  if (result == failed)
    threadSlot(m).error = c->error;
  return result;
}

extern "C" int attnrt_reset_state(attnrt_model *m) {
  if (!m)
    return 1;
  return onImplicit(
      m, 1, [](attnrt_context *c) { return attnrt_context_reset_state(c); });
}

extern "C" attnrt_model *attnrt_open_linked(char *err, size_t errlen) {
  if (!attn_model_manifest || !attn_model_invoke)
    return openFailed("attnrt: no compiled model is linked into this program "
                      "(attn_model_manifest / attn_model_invoke are not "
                      "defined)",
                      err, errlen);
  attnrt_model *m =
      attnrt_open(attn_model_manifest, attn_model_invoke, err, errlen);
  if (!m || !attn_encoder_manifest || !attn_encoder_invoke)
    return m;
  // The decoder step's encoder: bound to the same weights, run by
  // generation once per prompt.
  m->encoder =
      attnrt_open(attn_encoder_manifest, attn_encoder_invoke, err, errlen);
  if (!m->encoder) {
    std::string why = tlsOpenError;
    attnrt_close(m);
    return openFailed("attnrt: the linked encoder: " + why, err, errlen);
  }
  return m;
}

extern "C" int attnrt_linked_entry(const char **manifest,
                                   void (**invoke)(void **)) {
  bool linked = attn_model_manifest && attn_model_invoke;
  if (manifest)
    *manifest = linked ? attn_model_manifest : nullptr;
  if (invoke)
    *invoke = linked ? attn_model_invoke : nullptr;
  return linked ? 0 : 1;
}

const char *attnrt::linkedModelManifest() {
  return attn_model_manifest ? attn_model_manifest : nullptr;
}

attnrt::InvokeFn attnrt::linkedModelInvoke() {
  return attn_model_invoke ? attn_model_invoke : nullptr;
}

extern "C" void attnrt_close(attnrt_model *m) { delete m; }

extern "C" const char *attnrt_last_error(attnrt_model *m) {
  return m ? threadSlot(m).error.c_str() : tlsOpenError.c_str();
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

static const ManifestEntry *ioEntry(attnrt_model *m, EntryKind kind, int index,
                                    const char *fn) {
  if (!m)
    return nullptr;
  std::string error;
  int slot = ioSlot(m->manifest, kind, index, fn, error);
  if (slot < 0) {
    failModel(m, error);
    return nullptr;
  }
  return &m->manifest.entries[static_cast<size_t>(slot)];
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
      failModel(m, strFormat("attnrt_" #kind "_dim: axis %d out of range "     \
                             "for rank %zu",                                   \
                             axis, e->dims.size()));                           \
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
    return failModel(m, "attnrt_bind_weights: no weights file given");
  // A decoder step's encoder reads the same checkpoint.
  if (m->encoder && attnrt_bind_weights(m->encoder, safetensors_path))
    return failModel(m, std::string("the encoder's weights: ") +
                            attnrt_last_error(m->encoder));
  // A .safetensors file, or a shard index naming the files.
  std::unique_ptr<SafeTensorsWeights> file(new SafeTensorsWeights());
  std::string err;
  if (!file->open(safetensors_path, err))
    return failModel(m, err);

  // Resolve every weight before changing anything.
  const Manifest &mf = m->manifest;
  std::vector<std::vector<const StTensor *>> parts(mf.weights.size());
  std::set<const StTensor *> touched;
  uint64_t bytesRead = file->headerBytes();
  const uint64_t fileBytes = file->fileSize();
  for (size_t w = 0; w < mf.weights.size(); ++w) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.weights[w])];
    if (!resolveWeight(*file, e, parts[w], err))
      return failModel(m, err);
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
  // Taken to swap the new weights in: runs in flight finish with the old
  // ones first, and the new ones are read before any run waits for them.
  std::unique_lock<std::shared_mutex> lock(m->weightsMu, std::defer_lock);
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
        return failModel(
            m, strFormat("attnrt: out of memory allocating %llu bytes "
                         "for weight '%s'",
                         static_cast<unsigned long long>(e.bytes),
                         e.name.c_str()));
      if (!gatherWeight(*file, e, parts[w], copies[w].data()))
        return failModel(m, "attnrt: out of memory laying out weight '" +
                                e.name + "'");
      newBuffers[w] = copies[w].data();
    }
    lock.lock();
    for (size_t w = 0; w < mf.weights.size(); ++w) {
      size_t slot = static_cast<size_t>(mf.weights[w]);
      m->weightHost[slot] = std::move(copies[w]);
      m->weightBuffers[slot] = newBuffers[w];
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
      std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
      if (!cuda::allocDevice(e.bytes, &newBuffers[w], err)) {
        freeNew();
        return failModel(m, err + " for weight '" + e.name + "'");
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
          return failModel(m, "attnrt: out of memory staging weight '" +
                                  e.name + "'");
        }
        if (!gatherWeight(*file, e, parts[w], staging.data())) {
          freeNew();
          return failModel(m, "attnrt: out of memory laying out weight '" +
                                  e.name + "'");
        }
        ok = cuda::copyToDevice(newBuffers[w], staging.data(), e.bytes, err);
      }
      if (!ok) {
        freeNew();
        return failModel(m, err + " uploading weight '" + e.name + "'");
      }
    }
    lock.lock();
    std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
    {
      // Their graphs name the old weight buffers.
      std::lock_guard<std::mutex> contexts(m->contextsMu);
      for (attnrt_context *c : m->contexts)
        c->dropGraph();
    }
    for (size_t w = 0; w < mf.weights.size(); ++w) {
      size_t slot = static_cast<size_t>(mf.weights[w]);
      if (m->weightDevice[slot])
        cuda::freeDevice(m->weightDevice[slot]);
      m->weightDevice[slot] = newBuffers[w];
      m->weightBuffers[slot] = newBuffers[w];
    }
    m->weightsFile.reset(); // Everything is on the device now.
  }
  m->weightsBound = true;
  m->bytesRead = bytesRead;
  m->fileBytes = fileBytes;
  return 0;
}

//===----------------------------------------------------------------------===//
// The model-level run API: each thread's implicit context.
//===----------------------------------------------------------------------===//

extern "C" int attnrt_set_input(attnrt_model *m, int index, const void *data,
                                size_t bytes) {
  if (!m)
    return 1;
  return onImplicit(m, 1, [&](attnrt_context *c) {
    return attnrt_context_set_input(c, index, data, bytes);
  });
}

extern "C" int attnrt_set_input_shaped(attnrt_model *m, int index,
                                       const void *data, size_t bytes, int rank,
                                       const int64_t *dims) {
  if (!m)
    return 1;
  return onImplicit(m, 1, [&](attnrt_context *c) {
    return attnrt_context_set_input_shaped(c, index, data, bytes, rank, dims);
  });
}

extern "C" const int64_t *attnrt_output_shape(attnrt_model *m, int index) {
  if (!m)
    return nullptr;
  return onImplicit(
      m, static_cast<const int64_t *>(nullptr),
      [&](attnrt_context *c) { return attnrt_context_output_shape(c, index); });
}

extern "C" int attnrt_run(attnrt_model *m) {
  if (!m)
    return 1;
  return onImplicit(m, 1,
                    [](attnrt_context *c) { return attnrt_context_run(c); });
}

extern "C" int attnrt_get_output(attnrt_model *m, int index, void *dst,
                                 size_t bytes) {
  if (!m)
    return 1;
  return onImplicit(m, 1, [&](attnrt_context *c) {
    return attnrt_context_get_output(c, index, dst, bytes);
  });
}

extern "C" double attnrt_last_run_ms(attnrt_model *m) {
  if (!m)
    return 0.0;
  // No context is created for this: a thread that never ran has no time.
  attnrt_context *c = threadSlot(m).context;
  return c ? attnrt_context_last_run_ms(c) : 0.0;
}

extern "C" uint64_t attnrt_weight_bytes_read(attnrt_model *m) {
  if (!m)
    return 0;
  std::shared_lock<std::shared_mutex> lock(m->weightsMu);
  return m->bytesRead;
}

extern "C" uint64_t attnrt_weight_file_bytes(attnrt_model *m) {
  if (!m)
    return 0;
  std::shared_lock<std::shared_mutex> lock(m->weightsMu);
  return m->fileBytes;
}
