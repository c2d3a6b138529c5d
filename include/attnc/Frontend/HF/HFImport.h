//===- HFImport.h - Hugging Face checkpoint import --------------*- C++ -*-===//
//
// Builds attn IR for a Hugging Face checkpoint directory (config.json plus
// model.safetensors or a sharded model.safetensors.index.json). The
// architecture named in config.json selects a builder (BertModel,
// GPT2LMHeadModel, LlamaForCausalLM); the IR binds the checkpoint's tensors
// by their own names through attn.weight views, so no converted copy of the
// checkpoint is needed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_FRONTEND_HF_HFIMPORT_H
#define ATTNC_FRONTEND_HF_HFIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::attn::hf {

struct ImportOptions {
  /// Fixed shapes of the model's inputs by name, e.g. "input_ids" -> {1, 16}
  /// (`--input-shape input_ids=1x16`).
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Decoders: 0 builds the full-sequence model; N > 0 a one-token decode
  /// step over a KV cache of N positions per layer (model state), taking
  /// `input_ids` [B, 1] and `positions` [B] (`--kv-cache N`).
  int64_t kvCache = 0;
};

/// Parses `--input-shape` values of the form `name=d0xd1x...` into
/// `options`; on failure returns false and sets `error`.
bool parseInputShape(llvm::StringRef spec, ImportOptions &options,
                     std::string &error);

/// Imports the checkpoint directory `dir`. Errors (unknown architecture,
/// missing or invalid config keys, missing tensors, shapes that disagree with
/// the config) are emitted as diagnostics located in config.json or the
/// safetensors file and yield a null module.
OwningOpRef<ModuleOp> importCheckpoint(llvm::StringRef dir,
                                       const ImportOptions &options,
                                       MLIRContext *context);

} // namespace mlir::attn::hf

#endif // ATTNC_FRONTEND_HF_HFIMPORT_H
