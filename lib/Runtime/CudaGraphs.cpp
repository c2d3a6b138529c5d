//===- CudaGraphs.cpp - CUDA graphs by stream capture ---------------------===//
//
// See CudaBackend.h: a model invocation between beginCapture and endCapture
// is recorded into a graph that launchGraph replays.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaState.h"

#include "attnc/Runtime/attnrt_abi.h"

namespace attnrt {
namespace cuda {

struct Graph {
  CUstream stream = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::vector<void *> allocs;
  std::vector<CUmodule> modules;
};

bool beginCapture(std::string &why) {
  if (tlsCapture) {
    why = "a capture is already in progress on this thread";
    return false;
  }
  if (!makeCurrent(why))
    return false;
  State &s = state();
  if (!s.api.hasGraphs()) {
    why = "the CUDA driver " + s.driverPath +
          " lacks the graph API (cuStreamBeginCapture_v2, cuGraphLaunch, ...)";
    return false;
  }
  CUstream stream = nullptr;
  CUresult r = s.api.StreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    why = callFailed("cuStreamCreate", r);
    return false;
  }
  // Relaxed: the compiled code may allocate (cuMemAlloc) while capturing.
  r = s.api.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  if (r != CUDA_SUCCESS) {
    s.api.StreamDestroy(stream);
    why = callFailed("cuStreamBeginCapture", r);
    return false;
  }
  tlsCapture = new Capture;
  tlsCapture->stream = stream;
  return true;
}

Graph *endCapture(std::string &why) {
  Capture *c = tlsCapture;
  if (!c) {
    why = "no capture is in progress on this thread";
    return nullptr;
  }
  tlsCapture = nullptr;
  Graph *g = new Graph;
  g->stream = c->stream;
  g->allocs = std::move(c->allocs);
  g->modules = std::move(c->modules);
  delete c;
  State &s = state();
  CUresult r = s.api.StreamEndCapture(g->stream, &g->graph);
  if (r == CUDA_SUCCESS && !g->graph)
    r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (r != CUDA_SUCCESS) {
    why = callFailed("cuStreamEndCapture", r);
    destroyGraph(g);
    return nullptr;
  }
  r = s.api.GraphInstantiate(&g->exec, g->graph, 0);
  if (r != CUDA_SUCCESS) {
    why = callFailed("cuGraphInstantiate", r);
    destroyGraph(g);
    return nullptr;
  }
  return g;
}

bool launchGraph(Graph *g, std::string &err) {
  if (!makeCurrent(err))
    return false;
  CUresult r = state().api.GraphLaunch(g->exec, g->stream);
  if (r != CUDA_SUCCESS) {
    err = callFailed("cuGraphLaunch", r);
    return false;
  }
  return true;
}

void destroyGraph(Graph *g) {
  if (!g)
    return;
  std::string err;
  if (state().initOk.load() && makeCurrent(err)) {
    State &s = state();
    s.api.StreamSynchronize(g->stream); // no replay is still running
    if (g->exec)
      s.api.GraphExecDestroy(g->exec);
    if (g->graph)
      s.api.GraphDestroy(g->graph);
    for (void *p : g->allocs)
      mgpuMemFree(p, nullptr); // back to the pool (or the driver)
    for (CUmodule mod : g->modules)
      s.api.ModuleUnload(mod);
    s.api.StreamDestroy(g->stream);
  }
  delete g;
}

} // namespace cuda
} // namespace attnrt
