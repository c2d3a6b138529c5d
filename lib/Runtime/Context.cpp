//===- Context.cpp - execution contexts: inputs, runs, outputs ------------===//
//
// One context holds everything a run writes (see Model.h); runs of
// different contexts of one model share only its read-only weights and
// proceed in parallel on the CPU target. The compiled CPU code touches only
// its argument buffers and allocates temporaries through ModelAlloc.cpp,
// which locks; on CUDA the device work of runs is serialized.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnrt_abi.h"

#include "CudaBackend.h"
#include "Model.h"

#include <chrono>
#include <cstring>

using namespace attnrt;

void attnrt_context::dropGraph() {
  std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
  cuda::destroyGraph(graph);
  graph = nullptr;
  if (graphMode == GraphMode::Ready)
    graphMode = GraphMode::Untried;
}

attnrt_context::~attnrt_context() {
  if (!isCuda())
    return;
  std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
  dropGraph();
  for (void *p : device)
    if (p)
      cuda::freeDevice(p);
}

/// The context whose run is executing on this thread: compiled code reports
/// to it (the id checks run on the calling thread).
static thread_local attnrt_context *tlsRunningContext = nullptr;

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
  attnrt_context *c = tlsRunningContext;
  if (!c || !c->tokenIdError.empty())
    return;
  c->tokenIdError = tokenIdMessage(batch, position, id, rows);
}

/// Called by compiled code (attn-lower-runtime-checks) when a check of the
/// input sizes fails at the start of the entry, which then returns without
/// running anything: the run fails with this message (a located
/// diagnostic). The first failure is kept.
extern "C" void attnrt_precondition_failed(const char *message) {
  attnrt_context *c = tlsRunningContext;
  if (!c || !c->preconditionError.empty())
    return;
  c->preconditionError =
      message ? message : "error: run-time check of the input sizes failed";
}

/// Runs the compiled code on this thread with `c` as the context it reports
/// to; false with the message when a precondition failed (nothing ran).
static bool invokeModel(attnrt_context &c, void **args, std::string &failure) {
  c.preconditionError.clear();
  attnrt_context *outer = tlsRunningContext;
  tlsRunningContext = &c;
  c.model->invoke(args);
  tlsRunningContext = outer;
  failure = std::move(c.preconditionError);
  c.preconditionError.clear();
  return failure.empty();
}

/// The ids inputs (`input ... ids <rows>`) checked on the host before any
/// compiled code reads them: on CUDA the device lookup can only clamp, and
/// the check is the same on both targets. Returns the first bad id's
/// message in row-major order, or "".
static std::string checkIdInputs(const attnrt_context &c) {
  const Manifest &mf = c.manifest();
  // A KV-cache step with a run-time token count T (ids [batch, ?]) writes
  // cache rows positions[b] .. positions[b] + T - 1; its `positions` bound
  // is the cache length, so the check adds this run's T. (A static T is
  // already in the bound: cache length - T + 1.)
  int64_t stepTokens = 1;
  for (int slot : mf.inputs) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(slot)];
    const std::vector<int64_t> &dims = c.runDims[static_cast<size_t>(slot)];
    if (e.idBound >= 0 && !e.positions && e.dims.size() >= 2 &&
        e.dims.back() == kDynamicDim && !dims.empty())
      stepTokens = dims.back();
  }
  for (int slot : mf.inputs) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(slot)];
    if (e.idBound < 0)
      continue;
    const auto *data = static_cast<const unsigned char *>(
        c.host[static_cast<size_t>(slot)].data());
    const std::vector<int64_t> &dims = c.runDims[static_cast<size_t>(slot)];
    uint64_t numElements =
        c.runBytes[static_cast<size_t>(slot)] / dtypeSize(e.dtype);
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

/// Zeroes the state buffers, on the host and (CUDA) on the device.
static int resetState(attnrt_context &c) {
  for (int slot : c.manifest().states) {
    size_t bytes = static_cast<size_t>(
        c.manifest().entries[static_cast<size_t>(slot)].bytes);
    void *host = c.host[static_cast<size_t>(slot)].data();
    std::memset(host, 0, bytes);
    if (!c.isCuda())
      continue;
    std::string err;
    std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
    if (!cuda::copyToDevice(c.device[static_cast<size_t>(slot)], host, bytes,
                            err))
      return c.fail("attnrt_reset_state: " + err);
  }
  return 0;
}

attnrt_context *attnrt::createContext(attnrt_model *m, std::string &err) {
  std::unique_ptr<attnrt_context> c(new attnrt_context());
  c->model = m;
  const Manifest &mf = m->manifest;
  const size_t n = mf.entries.size();
  c->buffers.assign(n, nullptr);
  c->host.resize(n);
  c->device.assign(n, nullptr);
  c->deviceBytes.assign(n, 0);
  c->inputSet.assign(n, false);
  c->runDims.resize(n);
  c->runBytes.assign(n, 0);
  if (m->graphsDisabled)
    c->graphMode = attnrt_context::GraphMode::Off;
  for (size_t i = 0; i < n; ++i) {
    const ManifestEntry &e = mf.entries[i];
    if (e.isDynamic())
      continue;
    c->runDims[i] = e.dims;
    c->runBytes[i] = e.bytes;
  }
  for (size_t i = 0; i < n; ++i) {
    const ManifestEntry &e = mf.entries[i];
    // Dynamic inputs and outputs get their storage once their size is known.
    if (e.kind == EntryKind::Weight || e.isDynamic())
      continue;
    if (!c->host[i].allocate(e.bytes)) {
      err = strFormat("attnrt: out of memory allocating %llu bytes for %s '%s'",
                      static_cast<unsigned long long>(e.bytes),
                      entryKindName(e.kind), e.name.c_str());
      return nullptr;
    }
    if (c->isCuda()) {
      std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
      if (!cuda::allocDevice(e.bytes, &c->device[i], err)) {
        err +=
            std::string(" for ") + entryKindName(e.kind) + " '" + e.name + "'";
        return nullptr;
      }
      c->deviceBytes[i] = e.bytes;
      c->buffers[i] = c->device[i];
    } else {
      c->buffers[i] = c->host[i].data();
    }
  }
  // The host buffers are zero-filled already (AlignedBuffer: a large one's
  // pages are faulted in when first written, so that a context that never
  // runs, such as a model's default one beside a session's, costs no
  // memory); a device's state gets those zeros.
  if (c->isCuda() && resetState(*c)) {
    err = c->error;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(m->contextsMu);
  m->contexts.insert(c.get());
  return c.release();
}

void attnrt::destroyContext(attnrt_context *c) {
  if (!c)
    return;
  {
    std::lock_guard<std::mutex> lock(c->model->contextsMu);
    c->model->contexts.erase(c);
  }
  delete c;
}

int attnrt::ioSlot(const Manifest &mf, EntryKind kind, int index,
                   const char *fn, std::string &error) {
  const std::vector<int> &list = kind == EntryKind::Input    ? mf.inputs
                                 : kind == EntryKind::Output ? mf.outputs
                                                             : mf.states;
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    error = strFormat("%s: %s index %d out of range (the model has %zu)", fn,
                      entryKindName(kind), index, list.size());
    return -1;
  }
  return list[static_cast<size_t>(index)];
}

/// Checks a caller's buffer for input or output `index`: its size must be the
/// tensor's and its pointer non-null unless the tensor is empty (an output
/// also needs a successful run). The slot, or -1 with the context's error
/// set.
static int checkIoBuffer(attnrt_context &c, bool input, int index, size_t bytes,
                         const void *data) {
  const char *fn = input ? "attnrt_set_input" : "attnrt_get_output";
  int slot = ioSlot(c.manifest(), input ? EntryKind::Input : EntryKind::Output,
                    index, fn, c.error);
  if (slot < 0)
    return -1;
  const ManifestEntry &e = c.manifest().entries[static_cast<size_t>(slot)];
  if (!input && !c.haveOutputs) {
    c.fail("attnrt_get_output: the model has not run successfully");
    return -1;
  }
  if (input && e.isDynamic()) {
    c.fail(strFormat("%s: input %d '%s' has dynamic dims %s: give its shape "
                     "with attnrt_set_input_shaped",
                     fn, index, e.name.c_str(),
                     formatShapeTuple(e.dims).c_str()));
    return -1;
  }
  // Outputs: the last run's size (dynamic ones vary from run to run).
  uint64_t want = c.runBytes[static_cast<size_t>(slot)];
  const std::vector<int64_t> &dims = c.runDims[static_cast<size_t>(slot)];
  if (bytes != want) {
    std::string given = input ? strFormat("%zu were given", bytes)
                              : strFormat("the destination holds %zu", bytes);
    c.fail(strFormat("%s: %s %d '%s' (%s %s) is %llu bytes but %s", fn,
                     input ? "input" : "output", index, e.name.c_str(),
                     dtypeName(e.dtype), formatShapeTuple(dims).c_str(),
                     static_cast<unsigned long long>(want), given.c_str()));
    return -1;
  }
  if (bytes && !data) {
    c.fail(std::string(fn) + (input ? ": data is NULL" : ": dst is NULL"));
    return -1;
  }
  return slot;
}

/// CUDA: makes the device buffer of entry `slot` (a dynamic input or
/// output) hold at least `bytes`; a larger one replaces it, so the graph
/// recorded with the old one no longer applies.
static bool growDevice(attnrt_context &c, size_t slot, uint64_t bytes,
                       std::string &err) {
  if (c.device[slot] && c.deviceBytes[slot] >= bytes)
    return true;
  std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
  void *bigger = nullptr;
  const ManifestEntry &e = c.manifest().entries[slot];
  if (!cuda::allocDevice(bytes ? bytes : 1, &bigger, err)) {
    err += std::string(" for ") + entryKindName(e.kind) + " '" + e.name + "'";
    return false;
  }
  if (c.device[slot]) {
    c.dropGraph();
    cuda::freeDevice(c.device[slot]);
  }
  c.device[slot] = bigger;
  c.deviceBytes[slot] = bytes;
  c.buffers[slot] = bigger;
  return true;
}

/// Makes the host buffer of entry `slot` (a dynamic input or output) hold at
/// least `bytes` (on the CPU target it is what invoke receives); "" or the
/// error.
static std::string growHost(attnrt_context &c, size_t slot, uint64_t bytes) {
  AlignedBuffer &host = c.host[slot];
  if (host.size() >= bytes && host.data())
    return {};
  AlignedBuffer bigger;
  const ManifestEntry &e = c.manifest().entries[slot];
  if (!bigger.allocate(bytes ? bytes : 1))
    return strFormat("attnrt: out of memory allocating %llu bytes for %s '%s'",
                     static_cast<unsigned long long>(bytes),
                     entryKindName(e.kind), e.name.c_str());
  host = std::move(bigger);
  if (!c.isCuda())
    c.buffers[slot] = host.data();
  return {};
}

static int setInput(attnrt_context &c, int index, const void *data,
                    size_t bytes) {
  int slot = checkIoBuffer(c, true, index, bytes, data);
  if (slot < 0)
    return 1;
  if (bytes)
    std::memcpy(c.host[static_cast<size_t>(slot)].data(), data, bytes);
  c.inputSet[static_cast<size_t>(slot)] = true;
  return 0;
}

static int setInputShaped(attnrt_context &c, int index, const void *data,
                          size_t bytes, int rank, const int64_t *dims) {
  const char *fn = "attnrt_set_input_shaped";
  int slot = ioSlot(c.manifest(), EntryKind::Input, index, fn, c.error);
  if (slot < 0)
    return 1;
  const ManifestEntry &e = c.manifest().entries[static_cast<size_t>(slot)];
  if (rank < 0 || (rank > 0 && !dims))
    return c.fail(strFormat("%s: invalid rank %d or NULL dims", fn, rank));
  std::vector<int64_t> shape(dims, dims + rank);
  if (shape.size() != e.dims.size())
    return c.fail(strFormat("%s: input %d '%s' has rank %d but the model "
                            "takes rank %zu %s",
                            fn, index, e.name.c_str(), rank, e.dims.size(),
                            formatShapeTuple(e.dims).c_str()));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (e.dims[d] != kDynamicDim && shape[d] != e.dims[d])
      return c.fail(strFormat(
          "%s: input %d '%s' has shape %s but the model takes %s: dimension "
          "%zu is %lld, the model's is %lld",
          fn, index, e.name.c_str(), formatShapeTuple(shape).c_str(),
          formatShapeTuple(e.dims).c_str(), d, static_cast<long long>(shape[d]),
          static_cast<long long>(e.dims[d])));
    if (shape[d] < 0)
      return c.fail(strFormat("%s: input %d '%s': dimension %zu is %lld", fn,
                              index, e.name.c_str(), d,
                              static_cast<long long>(shape[d])));
  }
  uint64_t elements;
  if (!numElements(shape, elements) ||
      elements > UINT64_MAX / dtypeSize(e.dtype))
    return c.fail(strFormat("%s: input %d '%s': shape %s is too large", fn,
                            index, e.name.c_str(),
                            formatShapeTuple(shape).c_str()));
  uint64_t want = elements * dtypeSize(e.dtype);
  if (bytes != want)
    return c.fail(strFormat("%s: input %d '%s' (%s %s) is %llu bytes but %zu "
                            "were given",
                            fn, index, e.name.c_str(), dtypeName(e.dtype),
                            formatShapeTuple(shape).c_str(),
                            static_cast<unsigned long long>(want), bytes));
  if (bytes && !data)
    return c.fail(std::string(fn) + ": data is NULL");
  // Dynamic inputs grow their storage to the largest size seen.
  std::string err = growHost(c, static_cast<size_t>(slot), bytes);
  if (!err.empty())
    return c.fail(err);
  if (c.isCuda() && !growDevice(c, static_cast<size_t>(slot), bytes, err))
    return c.fail(err);
  if (bytes)
    std::memcpy(c.host[static_cast<size_t>(slot)].data(), data, bytes);
  c.runDims[static_cast<size_t>(slot)] = shape;
  c.runBytes[static_cast<size_t>(slot)] = want;
  c.inputSet[static_cast<size_t>(slot)] = true;
  return 0;
}

static const int64_t *outputShape(attnrt_context &c, int index) {
  int slot = ioSlot(c.manifest(), EntryKind::Output, index,
                    "attnrt_output_shape", c.error);
  if (slot < 0)
    return nullptr;
  const std::vector<int64_t> &dims = c.runDims[static_cast<size_t>(slot)];
  if (c.manifest().entries[static_cast<size_t>(slot)].isDynamic() &&
      !c.haveOutputs) {
    c.fail("attnrt_output_shape: the model has dynamic shapes and has not "
           "run successfully");
    return nullptr;
  }
  return dims.data();
}

/// Before a run of a model with dynamic sizes: checks the sizes the model
/// needs equal between inputs, sizes the outputs (allocating their storage)
/// and collects every dynamic size, in record order, for invoke. Returns ""
/// or the error.
static std::string prepareDynamicRun(attnrt_context &c) {
  const Manifest &mf = c.manifest();
  auto sizeOf = [&](int input, int axis) {
    return c.runDims[static_cast<size_t>(mf.inputs[input])]
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
      if (input < 0 || sizeOf(input, axis) == c.runDims[slot][d])
        continue;
      const ManifestEntry &src =
          mf.entries[static_cast<size_t>(mf.inputs[input])];
      return strFormat(
          "attnrt_run: input %zu '%s' dimension %zu is %lld but input %d "
          "'%s' dimension %d is %lld; the model needs them equal",
          i, e.name.c_str(), d, static_cast<long long>(c.runDims[slot][d]),
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
    std::string err = growHost(c, slot, bytes);
    if (!err.empty())
      return err;
    if (c.isCuda() && !growDevice(c, slot, bytes, err))
      return err;
    c.runDims[slot] = shape;
    c.runBytes[slot] = bytes;
  }
  c.dynamicSizes.clear();
  for (size_t slot = 0; slot < mf.entries.size(); ++slot)
    for (size_t d = 0; d < mf.entries[slot].dims.size(); ++d)
      if (mf.entries[slot].dims[d] == kDynamicDim) {
        int64_t size = c.runDims[slot][d];
        // An empty grid is an invalid launch (and an empty allocation an
        // invalid one too) for the CUDA driver.
        if (size == 0 && c.isCuda())
          return strFormat("attnrt_run: %s '%s' dimension %zu is 0; a CUDA "
                           "model's dynamic sizes must be at least 1",
                           entryKindName(mf.entries[slot].kind),
                           mf.entries[slot].name.c_str(), d);
        c.dynamicSizes.push_back(size);
      }
  return {};
}

using Clock = std::chrono::steady_clock;

/// The CUDA half of a run (inputs checked, `buffers` complete): copies the
/// inputs in, replays the graph (recording it first if needed) or invokes,
/// synchronizes and copies the outputs back.
static int runCuda(attnrt_context &c, const std::vector<void *> &buffers,
                   void **args) {
  const Manifest &mf = c.manifest();
  std::lock_guard<std::recursive_mutex> deviceLock(cuda::deviceMutex());
  std::string err;
  // A failure recorded before this run (e.g. a module that failed to load
  // in a global constructor) is reported now.
  if (cuda::takePendingError(err))
    return c.fail(err);
  for (int slot : mf.inputs)
    if (!cuda::copyToDevice(c.device[static_cast<size_t>(slot)],
                            c.host[static_cast<size_t>(slot)].data(),
                            c.runBytes[static_cast<size_t>(slot)], err))
      return c.fail(err + " copying input '" +
                    mf.entries[static_cast<size_t>(slot)].name + "'");
  Clock::time_point t0 = Clock::now();
  using GraphMode = attnrt_context::GraphMode;
  bool captureFailed = false;
  if (c.graph && (c.graphSizes != c.dynamicSizes || c.graphBuffers != buffers))
    c.dropGraph();
  if (c.graphMode != GraphMode::Off && !c.graph) {
    // Record the invocation (nothing runs yet); on any failure the capture
    // is discarded and this run is a plain one.
    std::string why;
    if (cuda::beginCapture(why)) {
      std::string precondition;
      bool ran = invokeModel(c, args, precondition);
      std::string invokeErr;
      bool invokeFailed = cuda::takePendingError(invokeErr);
      cuda::Graph *g = cuda::endCapture(why);
      // Nothing was recorded: no graph for these sizes.
      if (!ran) {
        cuda::destroyGraph(g);
        return c.fail(precondition);
      }
      if (g && !invokeFailed) {
        c.graph = g;
        c.graphMode = GraphMode::Ready;
        c.graphSizes = c.dynamicSizes;
        c.graphBuffers = buffers;
      } else {
        cuda::destroyGraph(g);
        captureFailed = true;
      }
    } else {
      captureFailed = true;
    }
  }
  if (c.graph) {
    std::string launchErr;
    if (!cuda::launchGraph(c.graph, launchErr))
      return c.fail(launchErr);
  } else {
    std::string precondition;
    if (!invokeModel(c, args, precondition))
      return c.fail(precondition);
  }
  std::string syncErr;
  bool synced = cuda::synchronize(syncErr);
  Clock::time_point t1 = Clock::now();
  if (cuda::takePendingError(err))
    return c.fail(err);
  if (!synced)
    return c.fail(syncErr);
  for (int slot : mf.outputs)
    if (!cuda::copyFromDevice(c.host[static_cast<size_t>(slot)].data(),
                              c.device[static_cast<size_t>(slot)],
                              c.runBytes[static_cast<size_t>(slot)], err))
      return c.fail(err + " copying output '" +
                    mf.entries[static_cast<size_t>(slot)].name + "'");
  // The plain run worked where the capture did not: this model (or driver)
  // does not capture; stop trying.
  if (captureFailed)
    c.graphMode = GraphMode::Off;
  c.lastMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  c.haveOutputs = true;
  return 0;
}

static int run(attnrt_context &c) {
  attnrt_model &m = *c.model;
  const Manifest &mf = m.manifest;
  c.haveOutputs = false;
  // The weights stay as they are until this run is over.
  std::shared_lock<std::shared_mutex> weights(m.weightsMu);
  if (!mf.weights.empty() && !m.weightsBound)
    return c.fail("attnrt_run: the model's weights are not bound (call "
                  "attnrt_bind_weights first)");
  for (size_t i = 0; i < mf.inputs.size(); ++i) {
    size_t slot = static_cast<size_t>(mf.inputs[i]);
    if (!c.inputSet[slot])
      return c.fail(strFormat("attnrt_run: input %zu '%s' has not been set", i,
                              mf.entries[slot].name.c_str()));
  }
  if (m.dynamic) {
    std::string dynError = prepareDynamicRun(c);
    if (!dynError.empty())
      return c.fail(dynError);
  }
  std::string idError = checkIdInputs(c);
  if (!idError.empty())
    return c.fail(idError);
  std::vector<void *> buffers = c.buffers;
  for (int slot : mf.weights)
    buffers[static_cast<size_t>(slot)] =
        m.weightBuffers[static_cast<size_t>(slot)];
  std::vector<void *> args = buffers;
  // Models with dynamic sizes read them after the buffers (the ABI of
  // attn-emit-model-entry).
  if (m.dynamic)
    args.push_back(c.dynamicSizes.data());
  if (c.isCuda())
    return runCuda(c, buffers, args.data());
  c.tokenIdError.clear();
  std::string precondition;
  Clock::time_point t0 = Clock::now();
  bool ran = invokeModel(c, args.data(), precondition);
  Clock::time_point t1 = Clock::now();
  if (!ran)
    return c.fail(precondition);
  if (!c.tokenIdError.empty())
    return c.fail(c.tokenIdError);
  c.lastMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  c.haveOutputs = true;
  return 0;
}

int attnrt::runOnStateRow(attnrt_context *one, attnrt_context *many,
                          int64_t row, std::string &error) {
  const Manifest &mo = one->manifest(), &mm = many->manifest();
  if (one->isCuda() || many->isCuda()) {
    error = "a one-row step over another context's cache rows runs on the "
            "CPU target only";
    return 1;
  }
  if (mo.states.size() != mm.states.size()) {
    error = strFormat("the one-row step has %zu states, the model %zu",
                      mo.states.size(), mm.states.size());
    return 1;
  }
  std::vector<void *> rows(mo.states.size());
  for (size_t k = 0; k < mo.states.size(); ++k) {
    const ManifestEntry &eo = mo.entries[static_cast<size_t>(mo.states[k])];
    const ManifestEntry &em = mm.entries[static_cast<size_t>(mm.states[k])];
    std::vector<int64_t> want = em.dims;
    if (!want.empty())
      want[0] = 1;
    if (eo.name != em.name || eo.dtype != em.dtype || eo.dims != want ||
        em.dims.empty() || row < 0 || row >= em.dims[0]) {
      error = "state '" + eo.name + "' " + dtypeName(eo.dtype) + " " +
              formatShapeList(eo.dims) + " of the one-row step is not row " +
              std::to_string(row) + " of the model's '" + em.name + "' " +
              dtypeName(em.dtype) + " " + formatShapeList(em.dims);
      return 1;
    }
    rows[k] = static_cast<unsigned char *>(
                  many->host[static_cast<size_t>(mm.states[k])].data()) +
              static_cast<size_t>(row) * eo.bytes;
  }
  std::scoped_lock lock(one->mu, many->mu);
  // The run writes row `row` of `many`'s caches in place; `one`'s own state
  // buffers are put back afterwards, untouched.
  std::vector<void *> own(mo.states.size());
  for (size_t k = 0; k < mo.states.size(); ++k) {
    void *&buffer = one->buffers[static_cast<size_t>(mo.states[k])];
    own[k] = buffer;
    buffer = rows[k];
  }
  int failed = run(*one);
  for (size_t k = 0; k < mo.states.size(); ++k)
    one->buffers[static_cast<size_t>(mo.states[k])] = own[k];
  if (failed)
    error = one->error;
  return failed;
}

static int getOutput(attnrt_context &c, int index, void *dst, size_t bytes) {
  int slot = checkIoBuffer(c, false, index, bytes, dst);
  if (slot < 0)
    return 1;
  if (bytes)
    std::memcpy(dst, c.host[static_cast<size_t>(slot)].data(), bytes);
  return 0;
}

const void *attnrt::contextOutputData(attnrt_context *c, int index,
                                      size_t bytes) {
  std::lock_guard<std::mutex> lock(c->mu);
  // Any non-null destination: nothing is copied.
  int slot = checkIoBuffer(*c, false, index, bytes, c);
  return slot < 0 ? nullptr : c->host[static_cast<size_t>(slot)].data();
}

//===----------------------------------------------------------------------===//
// The context C API. Each call holds the context's lock.
//===----------------------------------------------------------------------===//

using ContextLock = std::lock_guard<std::mutex>;

extern "C" attnrt_context *attnrt_context_create(attnrt_model *m) {
  if (!m)
    return nullptr;
  std::string err;
  attnrt_context *c = createContext(m, err);
  if (!c)
    failModel(m, err);
  return c;
}

extern "C" void attnrt_context_free(attnrt_context *c) { destroyContext(c); }

extern "C" const char *attnrt_context_last_error(attnrt_context *c) {
  // A copy: another thread's call on c may replace the error meanwhile.
  static thread_local std::string copy;
  if (!c)
    return "";
  ContextLock lock(c->mu);
  copy = c->error;
  return copy.c_str();
}

extern "C" int attnrt_context_set_input(attnrt_context *c, int index,
                                        const void *data, size_t bytes) {
  if (!c)
    return 1;
  ContextLock lock(c->mu);
  return setInput(*c, index, data, bytes);
}

extern "C" int attnrt_context_set_input_shaped(attnrt_context *c, int index,
                                               const void *data, size_t bytes,
                                               int rank, const int64_t *dims) {
  if (!c)
    return 1;
  ContextLock lock(c->mu);
  return setInputShaped(*c, index, data, bytes, rank, dims);
}

extern "C" int attnrt_context_run(attnrt_context *c) {
  if (!c)
    return 1;
  ContextLock lock(c->mu);
  return run(*c);
}

extern "C" int attnrt_context_get_output(attnrt_context *c, int index,
                                         void *dst, size_t bytes) {
  if (!c)
    return 1;
  ContextLock lock(c->mu);
  return getOutput(*c, index, dst, bytes);
}

extern "C" const int64_t *attnrt_context_output_shape(attnrt_context *c,
                                                      int index) {
  if (!c)
    return nullptr;
  ContextLock lock(c->mu);
  return outputShape(*c, index);
}

extern "C" int attnrt_context_reset_state(attnrt_context *c) {
  if (!c)
    return 1;
  ContextLock lock(c->mu);
  return resetState(*c);
}

extern "C" double attnrt_context_last_run_ms(attnrt_context *c) {
  if (!c)
    return 0.0;
  ContextLock lock(c->mu);
  return c->lastMs;
}
