//===- ApproximateMath.cpp - vectorizable exp/erf/tanh for the CPU --------===//
//
// math.exp, math.erf and math.tanh become calls to libm (expf, erff, tanhf)
// on the CPU, and LLVM has no vector library configured, so the loops that
// contain them (the online softmax of flash attention, GELU epilogues)
// stay scalar. Upstream's polynomial approximations are plain arith on f32
// (within a few ulp), which LLVM's vectorizers turn into vector code.
//
//===----------------------------------------------------------------------===//

#include "attnc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUAPPROXIMATEMATH
#include "attnc/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnCpuApproximateMathPass
    : public mlir::attn::impl::AttnCpuApproximateMathBase<
          AttnCpuApproximateMathPass> {
  using AttnCpuApproximateMathBase::AttnCpuApproximateMathBase;

  void runOnOperation() override {
    auto bare = [](StringRef name) {
      name.consume_front("math.");
      return name;
    };
    llvm::StringSet<> names;
    for (const std::string &name : functions)
      names.insert(bare(name));
    if (names.empty())
      for (StringRef name : {"exp", "erf", "tanh"})
        names.insert(name);
    RewritePatternSet patterns(&getContext());
    // The approximations apply to f32 (vectors included); the lowering
    // computes f16/bf16 math in f32 already.
    populateMathPolynomialApproximationPatterns(
        patterns, [&](StringRef name) { return names.contains(bare(name)); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
