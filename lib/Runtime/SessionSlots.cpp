//===- SessionSlots.cpp - sequences that join and leave a session --------===//
//
// Continuous batching over a KV-cache step: each row of the step is a slot
// that a sequence takes (attnrt_session_slot_start) and gives back
// (attnrt_session_slot_free) between decode steps. A step feeds each
// occupied slot its next token, or the next piece of its prompt, so prompts
// are prefilled while the other slots decode.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace attnrt;

/// After a step that fed `feed[b]` tokens to each slot: the slots' lengths,
/// prompts that are now fed whole, and which rows have a next token.
static void advanceSlots(attnrt_session *s, const std::vector<int64_t> &feed,
                         int64_t *ready) {
  using Kind = attnrt_session::Slot::Kind;
  for (size_t b = 0; b < s->slots.size(); ++b) {
    attnrt_session::Slot &sl = s->slots[b];
    s->lengths[b] += feed[b];
    bool fresh = sl.kind == Kind::Running;
    if (sl.kind == Kind::Prompt) {
      sl.fed += static_cast<size_t>(feed[b]);
      if (sl.fed == sl.prompt.size()) {
        sl.kind = Kind::Running;
        fresh = true;
      }
    }
    if (ready)
      ready[b] = fresh ? 1 : 0;
  }
}

static int checkSlots(attnrt_session *s) {
  if (!s->step)
    return s->fail("slots need a KV-cache step (attn-compile --kv-cache); "
                   "this model re-runs its whole window per token");
  if (s->encoderInput >= 0)
    return s->fail("slots do not take encoder-decoders yet: their encoder "
                   "input is one per batch (use attnrt_session_generate)");
  if (s->recomputePast > 0)
    return s->fail("slots do not take a model whose cache is recomputed "
                   "past a length (recompute_past); use "
                   "attnrt_session_generate");
  return 0;
}

extern "C" int attnrt_session_slot_start(attnrt_session *s, int64_t slot,
                                         const int64_t *ids, int64_t length) {
  if (!s)
    return 1;
  if (checkSlots(s))
    return 1;
  if (slot < 0 || slot >= s->maxBatch)
    return s->fail(strFormat("slot %lld: the model has slots 0 to %lld",
                             static_cast<long long>(slot),
                             static_cast<long long>(s->maxBatch - 1)));
  if (!ids || length < 1 || length >= s->capacity)
    return s->fail(strFormat("slot %lld: a prompt of %lld tokens; it must "
                             "have 1 to %lld (the model's %lld positions, "
                             "one left to generate)",
                             static_cast<long long>(slot),
                             static_cast<long long>(length),
                             static_cast<long long>(s->capacity - 1),
                             static_cast<long long>(s->capacity)));
  if (s->slots.empty()) {
    // The session turns to slots: every row free, at position 0.
    s->slots.assign(static_cast<size_t>(s->maxBatch), {});
    s->lengths.assign(static_cast<size_t>(s->maxBatch), 0);
    s->batch = s->maxBatch;
    s->logits.assign(static_cast<size_t>(s->maxBatch * s->vocab), 0.0f);
  }
  attnrt_session::Slot &sl = s->slots[static_cast<size_t>(slot)];
  if (sl.kind != attnrt_session::Slot::Kind::Free)
    return s->fail(strFormat("slot %lld is in use (free it first)",
                             static_cast<long long>(slot)));
  // The new sequence writes its cache from row 0; rows its predecessor
  // left above are never read (a query sees rows up to its own position)
  // and are overwritten as it grows.
  sl.kind = attnrt_session::Slot::Kind::Prompt;
  sl.prompt.assign(ids, ids + length);
  sl.fed = 0;
  s->lengths[static_cast<size_t>(slot)] = 0;
  return 0;
}

extern "C" int attnrt_session_slot_free(attnrt_session *s, int64_t slot) {
  if (!s)
    return 1;
  if (slot < 0 || static_cast<size_t>(slot) >= s->slots.size())
    return s->fail(strFormat("slot %lld: no such slot in use",
                             static_cast<long long>(slot)));
  s->slots[static_cast<size_t>(slot)] = {};
  s->lengths[static_cast<size_t>(slot)] = 0;
  return 0;
}

/// One run of the session's step over all slot rows at width `tokens`: row
/// b feeds feed[b] tokens, a running slot's next id or, where prompts[b],
/// the next tokens of its prompt; padding elsewhere (a free row's cache is
/// not read, and a prompt's next run overwrites the padded positions of its
/// cache row before anything reads them). Row b's logits are read at
/// column feed[b] - 1.
static int runSlotRows(attnrt_session *s, const int64_t *next_ids,
                       const std::vector<int64_t> &feed,
                       const std::vector<bool> &prompts, int64_t tokens) {
  using Kind = attnrt_session::Slot::Kind;
  s->setWidth(tokens);
  s->lastColumns.assign(s->slots.size(), 0);
  for (size_t b = 0; b < s->slots.size(); ++b) {
    const attnrt_session::Slot &sl = s->slots[b];
    int64_t row = static_cast<int64_t>(b);
    s->store(s->positions, s->positionsType, b, s->lengths[b]);
    s->setId(row, 0, sl.kind == Kind::Running ? next_ids[b] : 0);
    for (int64_t t = 0; prompts[b] && t < feed[b]; ++t)
      s->setId(row, t, sl.prompt[sl.fed + static_cast<size_t>(t)]);
    s->lastColumns[b] = std::max<int64_t>(feed[b] - 1, 0);
  }
  int failed = s->run();
  s->lastColumns.clear();
  s->setWidth(1);
  return failed;
}

/// attnrt_session_slots_step with a one-row step for the prompts: the
/// running slots take one token each in a run of the session's step at
/// T = 1, then each slot with a prompt feeds it in a run of the one-row
/// step alone over that slot's cache rows. A prompt short enough for the
/// pad budget (maxBatch x its tokens <= slotPadBudget) is fed in the
/// session's run instead, beside the running slots' tokens, which are
/// padded to its length: that run then computes at most the budget's token
/// rows, while a one-row run costs a pass over all the weights of its own.
static int slotsStepUnpadded(attnrt_session *s, const int64_t *next_ids,
                             int64_t max_prompt_tokens, int64_t *ready,
                             int64_t room) {
  using Kind = attnrt_session::Slot::Kind;
  std::vector<int64_t> feed(s->slots.size(), 0);
  // Which prompts go in the session's run (padded), and how many tokens.
  std::vector<bool> padded(s->slots.size(), false);
  bool anyRunning = false, anyPadded = false;
  int64_t tokens = 1;
  for (size_t b = 0; b < s->slots.size(); ++b) {
    const attnrt_session::Slot &sl = s->slots[b];
    anyRunning = anyRunning || sl.kind == Kind::Running;
    if (sl.kind != Kind::Prompt || !s->dynamicTokens || s->lastOnly)
      continue;
    int64_t left = static_cast<int64_t>(sl.prompt.size() - sl.fed);
    int64_t n =
        max_prompt_tokens > 0 ? std::min(left, max_prompt_tokens) : left;
    if (n <= room && s->maxBatch * n <= s->slotPadBudget) {
      padded[b] = anyPadded = true;
      feed[b] = n;
      tokens = std::max(tokens, n);
    }
  }
  if (anyRunning || anyPadded) {
    // The other rows feed padding (runSlotRows); a prompt fed below, in
    // its one-row run, overwrites its row's padded positions.
    for (size_t b = 0; b < s->slots.size(); ++b)
      if (s->slots[b].kind == Kind::Running)
        feed[b] = 1;
    if (runSlotRows(s, next_ids, feed, padded, tokens))
      return 1;
  }
  attnrt_session &p = *s->slotPrefill;
  for (size_t b = 0; b < s->slots.size(); ++b) {
    attnrt_session::Slot &sl = s->slots[b];
    if (sl.kind != Kind::Prompt || padded[b])
      continue;
    int64_t left = static_cast<int64_t>(sl.prompt.size() - sl.fed);
    int64_t n =
        max_prompt_tokens > 0 ? std::min(left, max_prompt_tokens) : left;
    p.setWidth(n);
    for (int64_t t = 0; t < n; ++t)
      p.setId(0, t, sl.prompt[sl.fed + static_cast<size_t>(t)]);
    attnrt_session::store(p.positions, p.positionsType, 0, s->lengths[b]);
    p.lastColumns.assign(1, n - 1);
    p.stateOwner = s->c;
    p.stateRow = static_cast<int64_t>(b);
    int failed = p.run();
    p.stateOwner = nullptr;
    p.setWidth(1);
    if (failed)
      return s->fail(std::string("the one-row step: ") +
                     attnrt_last_error(p.m));
    std::copy(p.logits.begin(), p.logits.end(),
              s->logits.begin() + static_cast<int64_t>(b) * s->vocab);
    feed[b] = n;
  }
  advanceSlots(s, feed, ready);
  return 0;
}

extern "C" int attnrt_session_set_slot_pad_budget(attnrt_session *s,
                                                  int64_t max_tokens) {
  if (!s)
    return 1;
  if (max_tokens < 0)
    return s->fail(strFormat("slot pad budget: must be >= 0 (0: every "
                             "prompt through the one-row step), got %lld",
                             static_cast<long long>(max_tokens)));
  s->slotPadBudget = max_tokens;
  return 0;
}

extern "C" int attnrt_session_set_slot_prefill(attnrt_session *s,
                                               attnrt_model *one_row) {
  if (!s)
    return 1;
  delete s->slotPrefill;
  s->slotPrefill = nullptr;
  if (!one_row)
    return 0;
  if (checkSlots(s))
    return 1;
  const Manifest &mm = modelManifest(s->m), &mo = modelManifest(one_row);
  if (mm.target != Target::CPU || mo.target != Target::CPU)
    return s->fail("slot prefill: a one-row step over a slot's cache rows "
                   "runs on the CPU target only");
  attnrt_session *p = attnrt_session_create(one_row, 0);
  if (!p)
    return s->fail(std::string("slot prefill: the one-row step: ") +
                   attnrt_last_error(one_row));
  std::string why;
  if (!p->step || !p->dynamicTokens || p->maxBatch != 1 ||
      p->encoderInput >= 0 || p->recomputePast > 0)
    why = "it must be a KV-cache step for one row with a run-time token "
          "count (attn-compile --kv-cache N --input-shape input_ids=1x?)";
  else if (p->capacity != s->capacity || p->vocab != s->vocab)
    why = strFormat(
        "it holds %lld positions and %lld logits, the session's "
        "step %lld and %lld",
        static_cast<long long>(p->capacity), static_cast<long long>(p->vocab),
        static_cast<long long>(s->capacity), static_cast<long long>(s->vocab));
  else if (mo.states.size() != mm.states.size())
    why = strFormat("it has %zu caches, the session's step %zu",
                    mo.states.size(), mm.states.size());
  for (size_t k = 0; why.empty() && k < mo.states.size(); ++k) {
    const ManifestEntry &eo = mo.entries[static_cast<size_t>(mo.states[k])];
    const ManifestEntry &em = mm.entries[static_cast<size_t>(mm.states[k])];
    std::vector<int64_t> want = em.dims;
    want[0] = 1;
    if (eo.name != em.name || eo.dtype != em.dtype || eo.dims != want)
      why = "its cache '" + eo.name + "' " + dtypeName(eo.dtype) + " " +
            formatShapeList(eo.dims) + " is not one row of the session's '" +
            em.name + "' " + dtypeName(em.dtype) + " " +
            formatShapeList(em.dims);
  }
  if (!why.empty()) {
    delete p;
    return s->fail("slot prefill: the one-row step does not fit the "
                   "session's: " +
                   why);
  }
  p->batch = 1;
  p->lengths.assign(1, 0);
  p->logits.assign(static_cast<size_t>(p->vocab), 0.0f);
  s->slotPrefill = p;
  return 0;
}

extern "C" int attnrt_session_slots_step(attnrt_session *s,
                                         const int64_t *next_ids,
                                         int64_t max_prompt_tokens,
                                         int64_t *ready) {
  using Kind = attnrt_session::Slot::Kind;
  if (!s)
    return 1;
  if (s->slots.empty())
    return s->fail("slots_step: no slot started (attnrt_session_slot_start)");
  if (max_prompt_tokens < 0)
    return s->fail(strFormat("slots_step: max_prompt_tokens must be >= 0 "
                             "(0: as many as fit), got %lld",
                             static_cast<long long>(max_prompt_tokens)));
  // Every row takes T tokens this run: a running slot its next token, a
  // slot with a prompt as much of it as fits (all of it, or one token of a
  // step compiled for T = 1), a free slot padding. A running row's padding
  // writes cache rows above its length that no query reads and its next
  // tokens overwrite, as in a padded prefill; so T is bounded by the room
  // left in the fullest active row.
  int64_t room = s->capacity, anyActive = 0;
  for (size_t b = 0; b < s->slots.size(); ++b) {
    if (s->slots[b].kind == Kind::Free)
      continue;
    anyActive = 1;
    if (s->slots[b].kind == Kind::Running && !next_ids)
      return s->fail("slots_step: running slots need next_ids (one token "
                     "per slot)");
    if (s->lengths[b] >= s->capacity)
      return s->fail(strFormat("slot %lld is full: the model was compiled "
                               "for %lld positions",
                               static_cast<long long>(b),
                               static_cast<long long>(s->capacity)));
    room = std::min(room, s->capacity - s->lengths[b]);
  }
  if (!anyActive)
    return s->fail("slots_step: every slot is free");
  if (s->slotPrefill)
    return slotsStepUnpadded(s, next_ids, max_prompt_tokens, ready, room);
  int64_t tokens = 1;
  std::vector<int64_t> feed(s->slots.size(), 0);
  for (size_t b = 0; b < s->slots.size(); ++b) {
    const attnrt_session::Slot &sl = s->slots[b];
    if (sl.kind == Kind::Running)
      feed[b] = 1;
    else if (sl.kind == Kind::Prompt)
      feed[b] =
          s->dynamicTokens
              ? std::min<int64_t>(
                    static_cast<int64_t>(sl.prompt.size() - sl.fed),
                    max_prompt_tokens > 0 ? std::min(room, max_prompt_tokens)
                                          : room)
              : 1;
    tokens = std::max(tokens, feed[b]);
  }
  // A last-only step reads every row's logits in the run's last column:
  // every prompt fed takes the run's token count, one beside running slots.
  if (s->lastOnly) {
    bool anyRunning = false;
    int64_t shortest = tokens;
    for (size_t b = 0; b < s->slots.size(); ++b) {
      anyRunning = anyRunning || s->slots[b].kind == Kind::Running;
      if (s->slots[b].kind == Kind::Prompt)
        shortest = std::min(shortest, feed[b]);
    }
    tokens = anyRunning ? 1 : shortest;
    for (size_t b = 0; b < s->slots.size(); ++b)
      if (s->slots[b].kind == Kind::Prompt)
        feed[b] = tokens;
  }
  std::vector<bool> prompts(s->slots.size());
  for (size_t b = 0; b < s->slots.size(); ++b)
    prompts[b] = s->slots[b].kind == Kind::Prompt;
  if (runSlotRows(s, next_ids, feed, prompts, tokens))
    return 1;
  advanceSlots(s, feed, ready);
  return 0;
}
