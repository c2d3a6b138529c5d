//===- TileConfig.h - the target halves of attn-tile ------------*- C++ -*-===//
//
// attn-tile reads the shapes off the attn ops and records the tiles as
// #attn.tile; what to choose for a shape depends on the target, and lives
// with it (Codegen/CPU, Codegen/GPU) behind the interface below. Each
// target's library registers its configuration, so that the target-
// independent codegen depends on no target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CODEGEN_COMMON_TILECONFIG_H
#define ATTNC_CODEGEN_COMMON_TILECONFIG_H

#include "attnc/Codegen/Common/Passes.h"
#include "attnc/Support/CodegenOptions.h"

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace mlir::attn {

/// One contraction `[m, k] x [k, n]` an op lowers to.
struct MatmulShape {
  int64_t m, n, k;
};

/// One attention (after GQA grouping: `group` query heads per kv head).
struct AttentionShape {
  int64_t batch, hkv, group, sq, sk, dk, dv;
  /// f16/bf16 with a dot-product score, no bias and no window: on CUDA
  /// attn-gpu-flash-attention takes it if the shape fits too.
  bool tensorCoreOperands = false;
};

/// The #attn.tile fields a target chooses for one op; unset ones stay
/// unset.
struct TileChoice {
  std::optional<int64_t> blockQ, blockK, vectorWidth, rowTile, colTile,
      columnBlock, warpNTiles;
};

/// One target's half of attn-tile's heuristic, made from the pass's options
/// for one function (the rules are in docs/passes.md, "Tile sizes").
class TileConfig {
public:
  virtual ~TileConfig();

  /// The options set that this target does not use, as a phrase ("warp-n-
  /// tiles and threads"), or "" when there are none: attn-tile refuses them
  /// rather than ignoring them.
  virtual StringRef unusedOptionsSet() const = 0;

  /// The matmul kernel fields of an op whose contractions are `shapes` (all
  /// sizes positive; possibly none); `narrow`: f16/bf16.
  virtual void chooseMatmul(ArrayRef<MatmulShape> shapes, bool narrow,
                            TileChoice &choice) const = 0;

  /// The flash attention blocks of `attention`.
  virtual void chooseFlash(const AttentionShape &attention,
                           TileChoice &choice) const = 0;

  /// Threads per block of a function whose largest attn result has
  /// `largestResult` elements, for targets that run thread blocks.
  virtual std::optional<int64_t> chooseThreads(int64_t largestResult) const = 0;
};

/// Makes one target's TileConfig from attn-tile's options.
using TileConfigFactory =
    std::unique_ptr<TileConfig> (*)(const AttnTileOptions &options);

/// Makes `factory` attn-tile's configuration of `target` (the last
/// registration wins). Thread-safe.
void registerTileConfig(attnc::Target target, TileConfigFactory factory);

} // namespace mlir::attn

#endif // ATTNC_CODEGEN_COMMON_TILECONFIG_H
