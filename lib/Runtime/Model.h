//===- Model.h - model handles and execution contexts -----------*- C++ -*-===//
//
// What a model shares between its runs (the manifest, the invoke function,
// the bound weights) and what one run owns (an execution context: inputs,
// outputs, state, the run-time sizes, the CUDA buffers and graph, errors).
//
// Locks, always taken in this order:
//  - attnrt_context::mu: one call on the context at a time;
//  - attnrt_model::weightsMu: shared by runs, exclusive for rebinding;
//  - cuda::deviceMutex(): every device operation of a context (copies,
//    allocations, capture, launch, synchronization) and every access to a
//    context's graph, so the driver's one error slot, whole-context
//    synchronization and stream capture never see two runs at once;
//  - attnrt_model::contextsMu: the list of contexts.
// ThreadSlots::mu (the model-level API's per-thread state) is taken before
// any of them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_MODEL_H
#define ATTNC_LIB_RUNTIME_MODEL_H

#include "attnc/Runtime/attnrt.h"

#include "CudaBackend.h"
#include "Manifest.h"
#include "SafeTensors.h"
#include "Support.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace attnrt {

/// The model-level API's state for one thread: the last error it recorded
/// on the model and its implicit context (created on its first run-related
/// call; the one of the thread that opened the model at attnrt_open).
struct ThreadSlot {
  std::string error;
  attnrt_context *context = nullptr;
};

/// The per-thread slots of one model. Shared with the threads that have
/// one, so that a thread ending after the model was closed finds it empty.
struct ThreadSlots {
  std::mutex mu;
  bool closed = false;
  std::map<std::thread::id, ThreadSlot> slots;
};

} // namespace attnrt

struct attnrt_model {
  attnrt::Manifest manifest;
  void (*invoke)(void **) = nullptr;
  bool dynamic = false;
  /// ATTNRT_CUDA_GRAPHS=0 at attnrt_open.
  bool graphsDisabled = false;

  /// Shared by every run, exclusive while weights are rebound.
  std::shared_mutex weightsMu;
  bool weightsBound = false;
  /// Per manifest entry: the bound weight (host or device pointer; null for
  /// other entries), the host copies that own CPU weights not used in place
  /// and the device allocations of CUDA weights.
  std::vector<void *> weightBuffers;
  std::vector<attnrt::AlignedBuffer> weightHost;
  std::vector<void *> weightDevice;
  /// Kept alive while CPU weights point into its file(s).
  std::unique_ptr<attnrt::SafeTensorsWeights> weightsFile;
  uint64_t bytesRead = 0, fileBytes = 0;

  /// Every context open on the model, and each thread's slot.
  std::mutex contextsMu;
  std::set<attnrt_context *> contexts;
  std::shared_ptr<attnrt::ThreadSlots> threadSlots =
      std::make_shared<attnrt::ThreadSlots>();

  /// An encoder-decoder's decoder step: the encoder linked beside it
  /// (owned; bound to the same weights), which generation runs once per
  /// prompt. Null otherwise.
  attnrt_model *encoder = nullptr;
  bool isCuda() const { return manifest.target == attnrt::Target::CUDA; }
  ~attnrt_model();
};

struct attnrt_context {
  attnrt_model *model = nullptr;
  /// Held by every call on the context.
  std::mutex mu;
  std::string error;
  /// What invoke receives: one pointer per manifest entry (weights are
  /// filled in from the model at each run).
  std::vector<void *> buffers;
  /// Per entry: host storage for inputs, outputs and states.
  std::vector<attnrt::AlignedBuffer> host;
  /// Per entry (CUDA): device allocations owned by the context, and their
  /// sizes (dynamic inputs and outputs grow theirs to the largest run).
  std::vector<void *> device;
  std::vector<uint64_t> deviceBytes;
  std::vector<bool> inputSet;
  /// Per entry: the shape and byte size of the current run (the manifest's
  /// for static entries; set by set_input_shaped for dynamic inputs and by
  /// the run for dynamic outputs, empty until then).
  std::vector<std::vector<int64_t>> runDims;
  std::vector<uint64_t> runBytes;
  /// The run-time sizes invoke receives after the buffers (see
  /// ManifestSchema.h).
  std::vector<int64_t> dynamicSizes;
  bool haveOutputs = false;
  double lastMs = 0;
  /// The first bad token id the model reported during the current run.
  std::string tokenIdError;
  /// A failed check of the input sizes (attnrt_precondition_failed).
  std::string preconditionError;

  /// CUDA: the first run records the invocation into a graph (stream
  /// capture) and every run replays it. The buffers it names are the
  /// context's own device buffers (inputs are copied into them) and the
  /// model's weights, so their addresses are fixed; rebinding weights drops
  /// the graph. Off with ATTNRT_CUDA_GRAPHS=0, or once a capture failed
  /// where the plain run then succeeded. Guarded by cuda::deviceMutex().
  enum class GraphMode { Untried, Ready, Off };
  GraphMode graphMode = GraphMode::Untried;
  attnrt::cuda::Graph *graph = nullptr;
  /// A model with dynamic sizes records its grids and allocation sizes from
  /// the run-time sizes, and its dynamic buffers move when they grow: the
  /// graph replays only for the sizes and buffers it was recorded with.
  std::vector<int64_t> graphSizes;
  std::vector<void *> graphBuffers;
  void dropGraph();

  const attnrt::Manifest &manifest() const { return model->manifest; }
  bool isCuda() const { return model->isCuda(); }
  int fail(const std::string &msg) {
    error = msg;
    return 1;
  }
  ~attnrt_context();
};

namespace attnrt {

/// A new context of m with its static buffers allocated and its state
/// zeroed, registered with the model; null with the message in `err`.
attnrt_context *createContext(attnrt_model *m, std::string &err);
/// Unregisters c from its model and frees it.
void destroyContext(attnrt_context *c);

/// The manifest entry index of input/output/state `index`, or -1 with
/// `error` set.
int ioSlot(const Manifest &mf, EntryKind kind, int index, const char *fn,
           std::string &error);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_MODEL_H
