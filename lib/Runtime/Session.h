//===- Session.h - The state of a generation session ------------*- C++ -*-===//
//
// Private to the runtime. A session's state, shared by Session.cpp (prefill,
// decode, sampling and whole-batch generation) and SessionSlots.cpp (slots
// that sequences join and leave between decode steps).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_SESSION_H
#define ATTNC_LIB_RUNTIME_SESSION_H

#include "attnc/Runtime/TensorIO.h"
#include "attnc/Runtime/attnrt.h"

#include "Manifest.h"
#include "Support.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

struct attnrt_session {
  attnrt_model *m = nullptr;
  /// The session's own inputs, logits and KV caches.
  attnrt_context *c = nullptr;
  int idsInput = 0, logitsOutput = 0;
  attnrt::DType idsType = attnrt::DType::I64, logitsType = attnrt::DType::F32;
  int64_t maxBatch = 0, capacity = 0, vocab = 0;
  /// A step over a KV cache (model state): tokens per sequence from
  /// `positions` on; otherwise the whole window is re-run per step.
  bool step = false;
  /// A step whose token count is chosen per run (input_ids [batch, ?]).
  bool dynamicTokens = false;
  /// Such a step's logits are [batch, 1, vocab]: each row's last token
  /// only (attn-compile --logits=last), so every row of a run must end
  /// its tokens in the run's last column.
  bool lastOnly = false;
  int positionsInput = -1;
  attnrt::DType positionsType = attnrt::DType::I64;
  /// An encoder-decoder's encoder ids input (-1: none) and its padding
  /// mask input (-1: none), their dtypes and bytes, their width, and the
  /// rows last set (attnrt_session_set_encoder_input).
  int encoderInput = -1, encoderMaskInput = -1;
  attnrt::DType encoderType = attnrt::DType::I64,
                encoderMaskType = attnrt::DType::I64;
  size_t encoderBytes = 0, encoderMaskBytes = 0;
  int64_t encoderWidth = 0, encoderRows = 0;
  /// A decoder step's linked encoder: its context (which the ids and mask
  /// inputs above index), the step's own mask input (-1: none) and, per
  /// float encoder input of the step, the encoder output it takes.
  attnrt_context *encoderContext = nullptr;
  int stepMaskInput = -1;
  std::vector<std::pair<int, int>> encoderOutputs;
  /// The encoder has new inputs it has not run on yet.
  bool encoderPending = false;

  /// Runs the linked encoder once for the prompt, if it has not yet; the
  /// step keeps its outputs for every run until the next prompt.
  int runEncoder() {
    if (!encoderPending)
      return 0;
    if (attnrt_context_run(encoderContext))
      return fail(std::string("the encoder: ") +
                  attnrt_context_last_error(encoderContext));
    const attnrt::Manifest &mf = attnrt::modelManifest(m);
    std::vector<unsigned char> buffer;
    for (auto [input, output] : encoderOutputs) {
      buffer.resize(static_cast<size_t>(
          mf.entries[static_cast<size_t>(mf.inputs[input])].bytes));
      if (attnrt_context_get_output(encoderContext, output, buffer.data(),
                                    buffer.size()))
        return fail(std::string("the encoder: ") +
                    attnrt_context_last_error(encoderContext));
      if (attnrt_context_set_input(c, input, buffer.data(), buffer.size()))
        return contextFailed();
    }
    encoderPending = false;
    return 0;
  }
  /// Tokens per sequence the model takes in the next run: capacity for a
  /// full-sequence model, 1 for a step (the prompt length while a dynamic
  /// step prefills).
  int64_t width = 0;
  /// Rows started by the last prefill, and each row's token count.
  int64_t batch = 0;
  std::vector<int64_t> lengths;
  /// A dynamic step's `recompute_past` length (-1: none) and, with one,
  /// every row's tokens so far (maxBatch x capacity), to re-run them.
  int64_t recomputePast = -1;
  std::vector<int64_t> history;
  /// The id input as the model takes it (maxBatch x width, zero-padded),
  /// and a step's positions (maxBatch).
  std::vector<unsigned char> ids, positions;
  /// The size of the model's logits output for the current width; a run's
  /// are read in place from the context.
  size_t rawLogitsBytes = 0;
  /// batch x vocab, each row's last position.
  std::vector<float> logits;
  uint64_t rng = 0;
  std::vector<std::pair<double, int64_t>> scratch;
  double prefillMs = 0, decodeMs = 0;
  int64_t decodeSteps = 0;

  /// Continuous batching (attnrt_session_slot_*): each of the model's rows
  /// is a slot holding one sequence at a time. A slot is free, feeding its
  /// prompt (`prompt`, of which `fed` tokens are in its cache) or running
  /// (it takes its sampled tokens); `lengths` holds every slot's cache
  /// length. Empty until the first attnrt_session_slot_start.
  struct Slot {
    enum class Kind { Free, Prompt, Running };
    Kind kind = Kind::Free;
    std::vector<int64_t> prompt;
    size_t fed = 0;
  };
  std::vector<Slot> slots;
  /// Per row: the column of the run's logits to read (the row's last real
  /// token); empty: as run() decides for prefill and decode.
  std::vector<int64_t> lastColumns;
  /// attnrt_session_set_slot_prefill: a session over the one-row step that
  /// feeds slot prompts (owned). In that session, the context whose cache
  /// row `stateRow` its runs read and write instead of its own caches.
  attnrt_session *slotPrefill = nullptr;
  /// attnrt_session_set_slot_pad_budget: with slotPrefill, a prompt whose
  /// padded run computes at most this many token rows (maxBatch x its
  /// tokens) is fed in the session's own run instead (0: none is).
  int64_t slotPadBudget = 0;
  attnrt_context *stateOwner = nullptr;
  int64_t stateRow = 0;

  int fail(const std::string &msg) { return attnrt::failModel(m, msg); }
  /// A failed call on the context: its error becomes the model's.
  int contextFailed() { return fail(attnrt_context_last_error(c)); }
  ~attnrt_session() {
    delete slotPrefill;
    attnrt_context_free(c);
    attnrt_context_free(encoderContext);
  }
  static void store(std::vector<unsigned char> &buffer, attnrt::DType type,
                    size_t at, int64_t value) {
    if (type == attnrt::DType::I32) {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(buffer.data() + at * 4, &v, 4);
    } else {
      std::memcpy(buffer.data() + at * 8, &value, 8);
    }
  }
  /// Columns of the logits output in a run of `width` tokens per row.
  int64_t logitColumns() const { return lastOnly ? 1 : width; }
  void setId(int64_t row, int64_t col, int64_t id) {
    store(ids, idsType, static_cast<size_t>(row * width + col), id);
  }
  /// Zeroed id and logit buffers for runs of `tokens` tokens per sequence.
  void setWidth(int64_t tokens) {
    width = tokens;
    ids.assign(
        static_cast<size_t>(maxBatch * width) * attnrt::dtypeSize(idsType), 0);
    rawLogitsBytes = static_cast<size_t>(maxBatch * logitColumns() * vocab) *
                     attnrt::dtypeSize(logitsType);
  }
  /// A step's token for `row`: `id` at position `pos`.
  void setStep(int64_t row, int64_t id, int64_t pos) {
    setId(row, 0, id);
    store(positions, positionsType, static_cast<size_t>(row), pos);
  }
  int run(int64_t onlyRow = -1);
  int runFromStart(const int64_t *tokens, int64_t stride);
};

#endif // ATTNC_LIB_RUNTIME_SESSION_H
