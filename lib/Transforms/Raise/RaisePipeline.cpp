//===- RaisePipeline.cpp - attn-raise: raise an imported graph ------------===//
//
// The order matters: learned positions are raised first (their addition is
// not a residual); GELU and the norms are recognised on the elementwise
// ops before projections absorb the bias additions next to them; attention
// is raised once its projections are attn.linear, and with them becomes
// attn.mha where the head split allows (and gets one row of a score bias
// that is the same for every query); the FFN needs raised
// projections and activations; the remaining same-shape additions are then
// residual connections, and the blocks they delimit become attn.layer.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::attn::buildRaisePipeline(OpPassManager &pm, bool raiseAttention,
                                    int64_t kvCacheLength) {
  OpPassManager *func = &pm.nest<func::FuncOp>();
  func->addPass(createAttnRaisePositions());
  func->addPass(createAttnRaiseNorms());
  func->addPass(createAttnRaiseGelu());
  func->addPass(createAttnRaiseLinear());
  if (raiseAttention) {
    func->addPass(createAttnRaiseAttention());
    // The KV-cache binding works on attn.sdpa at the function's top level,
    // before attention and blocks are grouped; rotary positions from a bound
    // position_ids input are raised after it.
    if (kvCacheLength > 0) {
      pm.addPass(createAttnBindKVCache(AttnBindKVCacheOptions{kvCacheLength}));
      func = &pm.nest<func::FuncOp>();
      func->addPass(createAttnRaisePositions());
    }
    func->addPass(createAttnRaiseMha());
    func->addPass(createAttnNarrowScoreBias());
  }
  OpPassManager &rest = *func;
  rest.addPass(createAttnRaiseFfn());
  rest.addPass(createAttnRaiseResidual());
  // The projections bind each weight through a new (transposed) view; CSE
  // merges the views of one tensor used twice.
  rest.addPass(createCSEPass());
  rest.addPass(createAttnRaiseLayers());
}

void mlir::attn::registerRaisePipeline() {
  PassPipelineRegistration<>(
      "attn-raise",
      "Raise an imported ONNX graph to attn ops: norms, GELU, projections, "
      "attention with its masks, multi-head attention blocks, FFNs, residual "
      "adds",
      [](OpPassManager &pm) { buildRaisePipeline(pm); });
}
