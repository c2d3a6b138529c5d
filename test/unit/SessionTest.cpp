//===- SessionTest.cpp - generation sessions and sampling -----------------===//
//
// A synthetic causal "language model" stands in for compiled code: the
// logits at position t prefer token (ids[t] + 1) % V by a margin, except
// that they also depend on every earlier token (their sum), so reading the
// wrong position or a stale window shows. Sampling is checked against the
// softmax it must follow.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnrt.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace attnrt_test;

namespace {

constexpr int64_t kBatch = 2, kSeq = 8, kVocab = 5;

const char *const kCausalManifest = "attnc-manifest 1\n"
                                    "target cpu\n"
                                    "input ids i64 2x8\n"
                                    "output logits f32 2x8x5 causal\n";

/// Row b, position t: logit v = 3 if v == (ids[t] + 1) % V, and
/// 0.25 * ((prefix sum of ids up to t) % V == v) besides.
void causalInvoke(void **buffers) {
  auto *ids = static_cast<const int64_t *>(buffers[0]);
  auto *logits = static_cast<float *>(buffers[1]);
  for (int64_t b = 0; b < kBatch; ++b) {
    int64_t sum = 0;
    for (int64_t t = 0; t < kSeq; ++t) {
      int64_t id = ids[b * kSeq + t];
      sum += id;
      for (int64_t v = 0; v < kVocab; ++v)
        logits[(b * kSeq + t) * kVocab + v] =
            (v == (id + 1) % kVocab ? 3.0f : 0.0f) +
            (v == sum % kVocab ? 0.25f : 0.0f);
    }
  }
}

/// A model whose logits are given per call: position-independent, so the
/// sampler sees the same distribution at every step.
std::vector<float> gFixedLogits;
/// Writes `row` as the logits of every position of every row.
void fillLogits(void **buffers, const std::vector<float> &row) {
  auto *logits = static_cast<float *>(buffers[1]);
  for (int64_t i = 0; i < kBatch * kSeq; ++i)
    std::memcpy(logits + i * static_cast<int64_t>(row.size()), row.data(),
                row.size() * sizeof(float));
}
void fixedInvoke(void **buffers) { fillLogits(buffers, gFixedLogits); }

struct SessionDeleter {
  void operator()(attnrt_session *s) const { attnrt_session_free(s); }
};
using SessionPtr = std::unique_ptr<attnrt_session, SessionDeleter>;

/// Opens `manifest`, run by `invoke`, into `m` and a session on it into `s`.
void openSession(const char *manifest, void (*invoke)(void **), ModelPtr &m,
                 SessionPtr &s) {
  char err[256];
  m.reset(attnrt_open(manifest, invoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  s.reset(attnrt_session_create(m.get(), 0));
  ASSERT_NE(s.get(), nullptr) << attnrt_last_error(m.get());
}

/// The prompt rows {1, 2} and {2}, padded to 3 tokens.
const int64_t kTwoRowPrompt[] = {1, 2, 9, 2, 0, 0};
const int64_t kTwoRowLengths[] = {2, 1};

/// Each run's token count T, as the step models record it.
std::vector<int64_t> gStepTokens;

/// A model, a session on it and the greedy tokens generated from
/// kTwoRowPrompt.
struct TwoRowGeneration {
  /// Opens `manifest` (run by `invoke`) and a session on it, and generates
  /// `newTokens` tokens per row into `out`; gStepTokens records each run's
  /// token count.
  void run(const char *manifest, void (*invoke)(void **), int64_t newTokens) {
    ASSERT_NO_FATAL_FAILURE(openSession(manifest, invoke, m, s));
    out.assign(static_cast<size_t>(kBatch * newTokens), 0);
    gStepTokens.clear();
    ASSERT_EQ(attnrt_session_generate(s.get(), kTwoRowPrompt, kTwoRowLengths,
                                      kBatch, 3, newTokens, nullptr, -1,
                                      out.data()),
              0)
        << attnrt_last_error(m.get());
  }

  // Declared after the model, the session is freed before it.
  ModelPtr m;
  SessionPtr s;
  std::vector<int64_t> out;
};

TEST(Session, GreedyFollowsTheCausalModel) {
  // Rows of different lengths: the next token is last + 1 (mod V).
  TwoRowGeneration g;
  ASSERT_NO_FATAL_FAILURE(g.run(kCausalManifest, causalInvoke, 4));
  auto &[m, s, out] = g;
  EXPECT_EQ(out, (std::vector<int64_t>{3, 4, 0, 1, 3, 4, 0, 1}));
  int64_t maxBatch = 0, capacity = 0, vocab = 0;
  attnrt_session_shape(s.get(), &maxBatch, &capacity, &vocab);
  EXPECT_EQ(maxBatch, kBatch);
  EXPECT_EQ(capacity, kSeq);
  EXPECT_EQ(vocab, kVocab);
  double prefill = -1, decode = -1;
  int64_t steps = -1;
  attnrt_session_timing(s.get(), &prefill, &decode, &steps);
  EXPECT_EQ(steps, 3);
  EXPECT_GE(prefill, 0);

  // The logits are those of each row's last position.
  ASSERT_EQ(
      attnrt_session_prefill(s.get(), kTwoRowPrompt, kTwoRowLengths, kBatch, 3),
      0);
  const float *logits = attnrt_session_logits(s.get());
  ASSERT_NE(logits, nullptr);
  EXPECT_FLOAT_EQ(logits[3], 3.25f);         // row 0: ids 1, 2 -> 3; sum 3
  EXPECT_FLOAT_EQ(logits[kVocab + 3], 3.0f); // row 1: id 2 -> 3
  EXPECT_FLOAT_EQ(logits[kVocab + 2], 0.25f);

  // eos stops a row and fills the rest with eos.
  std::vector<int64_t> eosOut(kBatch * 5);
  ASSERT_EQ(attnrt_session_generate(s.get(), kTwoRowPrompt, kTwoRowLengths,
                                    kBatch, 3, 5, nullptr, 4, eosOut.data()),
            0);
  EXPECT_EQ(eosOut, (std::vector<int64_t>{3, 4, 4, 4, 4, 3, 4, 4, 4, 4}));
  attnrt_session_timing(s.get(), nullptr, nullptr, &steps);
  EXPECT_EQ(steps, 1); // both rows ended after the second token
}

/// A KV-cache step of a run-time token count T standing in for a compiled
/// --kv-cache model with input_ids [2, ?]: it writes its T tokens into its
/// state (the "cache", one id per position) at positions[b] + t and gives
/// each token logits like causalInvoke's, but over the position-weighted
/// sum of the cache up to it (sum of (j + 1) * id_j), so a wrong start
/// position, a stale cache or a wrong logits column shows. Records each
/// run's T.
/// stepInvoke's manifest.
const char *const kDynamicStepManifest =
    "attnc-manifest 1\n"
    "target cpu\n"
    "input ids i64 2x? dims_from -\n"
    "input positions i64 2 positions 8\n"
    "state cache f32 2x8\n"
    "output logits f32 2x?x5 dims_from 0:1 causal\n";
/// The buffers of a dynamic step (ids, positions, cache, logits) and its
/// run-time token count.
struct StepBuffers {
  explicit StepBuffers(void **buffers)
      : ids(static_cast<const int64_t *>(buffers[0])),
        positions(static_cast<const int64_t *>(buffers[1])),
        cache(static_cast<float *>(buffers[2])),
        logits(static_cast<float *>(buffers[3])),
        tokens(static_cast<const int64_t *>(buffers[4])[0]) {}
  const int64_t *ids, *positions;
  float *cache, *logits;
  int64_t tokens;
};

/// The fake steps' logits for token `id` at position p of a cache row that
/// holds the ids by position: 3.0 at id + 1 and 0.25 at the position-
/// weighted sum of the row's ids up to p (which shows the cache row read).
void fakeLogits(const float *cacheRow, int64_t p, int64_t id, float *logits) {
  int64_t sum = 0;
  for (int64_t j = 0; j <= p; ++j)
    sum += (j + 1) * static_cast<int64_t>(cacheRow[j]);
  for (int64_t v = 0; v < kVocab; ++v)
    logits[v] = (v == (id + 1) % kVocab ? 3.0f : 0.0f) +
                (v == sum % kVocab ? 0.25f : 0.0f);
}

/// attnrt_session_slots_step of `s` (on `m`) with `next` and
/// `maxPromptTokens`, which must succeed and report each slot ready (1) or
/// not (0) as `ready` says.
void slotsStep(const SessionPtr &s, const ModelPtr &m, const int64_t *next,
               int64_t maxPromptTokens, std::array<int64_t, 2> ready) {
  int64_t got[2] = {-1, -1};
  ASSERT_EQ(attnrt_session_slots_step(s.get(), next, maxPromptTokens, got), 0)
      << attnrt_last_error(m.get());
  EXPECT_EQ(got[0], ready[0]);
  EXPECT_EQ(got[1], ready[1]);
}

void stepInvoke(void **buffers) {
  StepBuffers in(buffers);
  gStepTokens.push_back(in.tokens);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t < in.tokens; ++t) {
      int64_t p = in.positions[b] + t, id = in.ids[b * in.tokens + t];
      ASSERT_LT(p, kSeq);
      in.cache[b * kSeq + p] = static_cast<float>(id);
      fakeLogits(in.cache + b * kSeq, p, id,
                 in.logits + (b * in.tokens + t) * kVocab);
    }
}

TEST(Session, DynamicStepPrefillsInOneRun) {
  // The full-sequence model's tokens (GreedyFollowsTheCausalModel), from
  // one prefill run of T = 2 (the longer prompt) and then T = 1 per token.
  TwoRowGeneration g;
  ASSERT_NO_FATAL_FAILURE(g.run(kDynamicStepManifest, stepInvoke, 4));
  auto &[m, s, out] = g;
  EXPECT_EQ(out, (std::vector<int64_t>{3, 4, 0, 1, 3, 4, 0, 1}));
  EXPECT_EQ(gStepTokens, (std::vector<int64_t>{2, 1, 1, 1}));
  int64_t capacity = 0;
  attnrt_session_shape(s.get(), nullptr, &capacity, nullptr);
  EXPECT_EQ(capacity, kSeq);

  // A prefill starts over (the state is reset) and reads each row's logits
  // at its last prompt token, not the padding after it.
  ASSERT_EQ(
      attnrt_session_prefill(s.get(), kTwoRowPrompt, kTwoRowLengths, kBatch, 3),
      0);
  const float *logits = attnrt_session_logits(s.get());
  ASSERT_NE(logits, nullptr);
  EXPECT_FLOAT_EQ(logits[3], 3.0f);          // row 0: ids 1, 2 -> 3
  EXPECT_FLOAT_EQ(logits[0], 0.25f);         // 1 * 1 + 2 * 2 = 5
  EXPECT_FLOAT_EQ(logits[kVocab + 3], 3.0f); // row 1: id 2 -> 3
  EXPECT_FLOAT_EQ(logits[kVocab + 2], 0.25f);
  // Decode continues each row at its own length (row 1 at position 1,
  // over the padding the prefill wrote there: at position 2 its sum would
  // be 2 + 3 * 3 = 11).
  const int64_t next[] = {3, 3};
  ASSERT_EQ(attnrt_session_decode(s.get(), next), 0);
  logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[4], 3.25f);          // row 0: 1 2 3 -> 4; 14 % 5
  EXPECT_FLOAT_EQ(logits[kVocab + 4], 3.0f);  // row 1: 2 3 -> 4
  EXPECT_FLOAT_EQ(logits[kVocab + 3], 0.25f); // 1 * 2 + 2 * 3 = 8
}

TEST(Session, SlotsShareAStepAtTheirOwnPositions) {
  ModelPtr m;
  SessionPtr s;
  ASSERT_NO_FATAL_FAILURE(openSession(kDynamicStepManifest, stepInvoke, m, s));
  gStepTokens.clear();
  int64_t next[2] = {0, 0}, ready[2] = {-1, -1};

  // Slot 0 alone: its prompt in one run; slot 1 (free) is padding.
  const int64_t first[] = {1, 2};
  ASSERT_EQ(attnrt_session_slot_start(s.get(), 0, first, 2), 0)
      << attnrt_last_error(m.get());
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 0, {1, 0}));
  const float *logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[3], 3.0f);  // 2 -> 3
  EXPECT_FLOAT_EQ(logits[0], 0.25f); // 1 * 1 + 2 * 2 = 5

  // Slot 1 starts beside it: its three prompt tokens and slot 0's next
  // token share a run of T = 3, each row's logits at its last real token.
  const int64_t second[] = {4, 1, 3};
  ASSERT_EQ(attnrt_session_slot_start(s.get(), 1, second, 3), 0);
  next[0] = 3;
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 0, {1, 1}));
  logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[4], 3.25f);          // 3 at position 2; 14 % 5
  EXPECT_FLOAT_EQ(logits[kVocab + 4], 3.0f);  // 3 -> 4
  EXPECT_FLOAT_EQ(logits[kVocab + 0], 0.25f); // 4 + 2 * 1 + 3 * 3 = 15

  // Slot 0 leaves; slot 1 goes on at position 3 (slot 0's padding in its
  // own cache never reaches it).
  ASSERT_EQ(attnrt_session_slot_free(s.get(), 0), 0);
  next[1] = 4;
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 0, {0, 1}));
  logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[kVocab + 0], 3.0f);  // 4 -> 0
  EXPECT_FLOAT_EQ(logits[kVocab + 1], 0.25f); // 15 + 4 * 4 = 31

  // A prompt fed one token per run (max_prompt_tokens 1) gives the same
  // logits, ready after its last token.
  ASSERT_EQ(attnrt_session_slot_start(s.get(), 0, first, 2), 0);
  next[1] = 0;
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 1, {0, 1}));
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 1, {1, 1}));
  logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[3], 3.0f);
  EXPECT_FLOAT_EQ(logits[0], 0.25f);
  EXPECT_EQ(gStepTokens, (std::vector<int64_t>{2, 3, 1, 1, 1}));
  EXPECT_NE(attnrt_session_slots_step(s.get(), nullptr, 0, ready), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "slots_step: running slots need next_ids (one token per slot)");
  EXPECT_NE(attnrt_session_slots_step(s.get(), next, -1, ready), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "slots_step: max_prompt_tokens must be >= 0 (0: as many as "
               "fit), got -1");
  ASSERT_EQ(attnrt_session_slot_free(s.get(), 0), 0);

  // Misuse is an error naming what is wrong.
  EXPECT_NE(attnrt_session_slot_start(s.get(), 2, first, 2), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "slot 2: the model has slots 0 to 1");
  EXPECT_NE(attnrt_session_slot_start(s.get(), 1, first, 2), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()), "slot 1 is in use (free it first)");
  const int64_t eight[8] = {};
  EXPECT_NE(attnrt_session_slot_start(s.get(), 0, eight, 8), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "slot 0: a prompt of 8 tokens; it must have 1 to 7 (the "
               "model's 8 positions, one left to generate)");
  EXPECT_NE(attnrt_session_decode(s.get(), next), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "decode: the session runs slots (continue them with "
               "attnrt_session_slots_step)");
  ASSERT_EQ(attnrt_session_slot_free(s.get(), 1), 0);
  EXPECT_NE(attnrt_session_slots_step(s.get(), next, 0, ready), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()), "slots_step: every slot is free");

  // A full-sequence model has no slots.
  ModelPtr full;
  SessionPtr fs;
  ASSERT_NO_FATAL_FAILURE(openSession(kCausalManifest, causalInvoke, full, fs));
  EXPECT_NE(attnrt_session_slot_start(fs.get(), 0, first, 2), 0);
  EXPECT_STREQ(attnrt_last_error(full.get()),
               "slots need a KV-cache step (attn-compile --kv-cache); this "
               "model re-runs its whole window per token");
}

/// stepInvoke's model for one row, with logits for the last token only
/// (attn-compile --input-shape input_ids=1x? --logits=last).
const char *const kOneRowLastManifest = "attnc-manifest 1\n"
                                        "target cpu\n"
                                        "input ids i64 1x? dims_from -\n"
                                        "input positions i64 1 positions 8\n"
                                        "state cache f32 1x8\n"
                                        "output logits f32 1x1x5 causal\n";
std::vector<int64_t> gOneRowTokens;
void oneRowLastInvoke(void **buffers) {
  StepBuffers in(buffers);
  gOneRowTokens.push_back(in.tokens);
  for (int64_t t = 0; t < in.tokens; ++t) {
    int64_t p = in.positions[0] + t;
    ASSERT_LT(p, kSeq);
    in.cache[p] = static_cast<float>(in.ids[t]);
  }
  fakeLogits(in.cache, in.positions[0] + in.tokens - 1, in.ids[in.tokens - 1],
             in.logits);
}

/// A two-slot session of the dynamic step whose prompts run alone through
/// the one-row step (attnrt_session_set_slot_prefill).
class SlotPrefill : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(
        openSession(kDynamicStepManifest, stepInvoke, m, s));
    char err[256];
    one.reset(
        attnrt_open(kOneRowLastManifest, oneRowLastInvoke, err, sizeof(err)));
    ASSERT_NE(one.get(), nullptr) << err;
    ASSERT_EQ(attnrt_session_set_slot_prefill(s.get(), one.get()), 0)
        << attnrt_last_error(m.get());
    gStepTokens.clear();
    gOneRowTokens.clear();
  }

  /// Starts the prompt {1, 3} in slot 1 and steps, then {4, 1, 3} in slot
  /// 0 and steps again (slot 1 running with the next id 3), checking
  /// readiness and the logits after each step: each row reads its own cache
  /// rows, however the prompts were fed.
  void startTwoPrompts(int64_t *next) {
    const int64_t first[] = {1, 3};
    ASSERT_EQ(attnrt_session_slot_start(s.get(), 1, first, 2), 0);
    ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 0, {0, 1}));
    const float *logits = attnrt_session_logits(s.get());
    EXPECT_FLOAT_EQ(logits[kVocab + 4], 3.0f);  // 3 -> 4
    EXPECT_FLOAT_EQ(logits[kVocab + 2], 0.25f); // 1 * 1 + 2 * 3 = 7

    const int64_t second[] = {4, 1, 3};
    ASSERT_EQ(attnrt_session_slot_start(s.get(), 0, second, 3), 0);
    next[1] = 3;
    ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 0, {1, 1}));
    logits = attnrt_session_logits(s.get());
    EXPECT_FLOAT_EQ(logits[kVocab + 4], 3.0f);  // 3 at position 2 -> 4
    EXPECT_FLOAT_EQ(logits[kVocab + 1], 0.25f); // 7 + 3 * 3 = 16
    EXPECT_FLOAT_EQ(logits[4], 3.0f);           // 3 -> 4
    EXPECT_FLOAT_EQ(logits[0], 0.25f);          // 4 + 2 * 1 + 3 * 3 = 15
  }

  // The session, declared last, is destroyed before the models.
  ModelPtr m, one;
  SessionPtr s;
};

TEST_F(SlotPrefill, PromptsRunAloneOverTheirCacheRows) {
  int64_t next[2] = {0, 0};

  // Each prompt runs alone (the one-row step) over its slot's row of the
  // cache, and the two-row step runs only T = 1; the logits read each
  // row's own cache (a prompt written into another row shows).
  startTwoPrompts(next);
  if (HasFatalFailure())
    return;

  // Both running: one run of the two-row step, each at its own position.
  next[0] = 4;
  next[1] = 1;
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 0, {1, 1}));
  const float *logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[0], 3.0f);           // 4 -> 0
  EXPECT_FLOAT_EQ(logits[1], 0.25f);          // 15 + 4 * 4 = 31
  EXPECT_FLOAT_EQ(logits[kVocab + 2], 3.0f);  // 1 -> 2
  EXPECT_FLOAT_EQ(logits[kVocab + 0], 0.25f); // 16 + 4 * 1 = 20

  // A prompt in pieces of max_prompt_tokens, ready after its last.
  ASSERT_EQ(attnrt_session_slot_free(s.get(), 1), 0);
  const int64_t second[] = {4, 1, 3};
  ASSERT_EQ(attnrt_session_slot_start(s.get(), 1, second, 3), 0);
  next[0] = 0;
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 2, {1, 0}));
  ASSERT_NO_FATAL_FAILURE(slotsStep(s, m, next, 2, {1, 1}));
  logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[kVocab + 4], 3.0f);
  EXPECT_FLOAT_EQ(logits[kVocab + 0], 0.25f);
  EXPECT_EQ(gStepTokens, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(gOneRowTokens, (std::vector<int64_t>{2, 3, 2, 1}));

  // The session's own step is not a one-row step.
  EXPECT_NE(attnrt_session_set_slot_prefill(s.get(), m.get()), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "slot prefill: the one-row step does not fit the session's: "
               "it must be a KV-cache step for one row with a run-time token "
               "count (attn-compile --kv-cache N --input-shape "
               "input_ids=1x?)");
  // Freed before the models (SessionPtr); NULL goes back to padded runs.
  EXPECT_EQ(attnrt_session_set_slot_prefill(s.get(), nullptr), 0);
}

TEST_F(SlotPrefill, PadBudgetFeedsShortPromptsInTheStepsRun) {
  // 2 rows x 2 tokens fit a budget of 4; 2 x 3 do not.
  ASSERT_EQ(attnrt_session_set_slot_pad_budget(s.get(), 4), 0);
  int64_t next[2] = {0, 0};

  // The 2-token prompt goes in the two-row step's run (T = 2); the 3-token
  // prompt runs alone (the one-row step), the running slot at T = 1. The
  // logits are those of the one-row step's runs.
  startTwoPrompts(next);
  if (HasFatalFailure())
    return;
  EXPECT_EQ(gStepTokens, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(gOneRowTokens, (std::vector<int64_t>{3}));

  EXPECT_NE(attnrt_session_set_slot_pad_budget(s.get(), -1), 0);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "slot pad budget: must be >= 0 (0: every prompt through the "
               "one-row step), got -1");
}

TEST(Session, RecomputePastReRunsEverySequenceOnce) {
  // Phi-3's LongRoPE mark: when the longest row first grows past 3 tokens,
  // the decode step re-runs every row's whole sequence (prompt and
  // generated tokens) from position 0 over emptied caches, once.
  const char *manifest =
      "attnc-manifest 1\n"
      "target cpu\n"
      "input ids i64 2x? dims_from -\n"
      "input positions i64 2 positions 8\n"
      "state cache f32 2x8\n"
      "output logits f32 2x?x5 dims_from 0:1 causal recompute_past 3\n";
  TwoRowGeneration g;
  ASSERT_NO_FATAL_FAILURE(g.run(manifest, stepInvoke, 5));
  auto &[m, s, out] = g;
  // Prefill (T = 2), a step to lengths 3 and 2, then the re-run of row 0's
  // 1 2 3 4 and row 1's 2 3 4 (T = 4, the longest row past 3), then steps.
  EXPECT_EQ(gStepTokens, (std::vector<int64_t>{2, 1, 4, 1, 1}));
  // The re-run rebuilt the caches from the right tokens at the right
  // positions: the tokens are those of the full-sequence model.
  EXPECT_EQ(out, (std::vector<int64_t>{3, 4, 0, 1, 2, 3, 4, 0, 1, 2}));

  // The re-run's logits are each row's last token's: row 0's 1 2 3 4
  // -> 0 (weighted sum 30), row 1's 2 3 4 -> 0 (sum 20).
  ASSERT_EQ(
      attnrt_session_prefill(s.get(), kTwoRowPrompt, kTwoRowLengths, kBatch, 3),
      0);
  const int64_t steps[][2] = {{3, 3}, {4, 4}};
  for (const int64_t *next : steps)
    ASSERT_EQ(attnrt_session_decode(s.get(), next), 0);
  const float *logits = attnrt_session_logits(s.get());
  EXPECT_FLOAT_EQ(logits[0], 3.25f);
  EXPECT_FLOAT_EQ(logits[kVocab + 0], 3.25f);

  // A prompt already past the length never re-runs (as transformers,
  // whose prefill is the whole prompt anyway).
  const int64_t longPrompt[] = {1, 2, 3, 4, 2, 0, 0, 0};
  const int64_t longLengths[] = {4, 1};
  gStepTokens.clear();
  ASSERT_EQ(attnrt_session_generate(s.get(), longPrompt, longLengths, kBatch, 4,
                                    3, nullptr, -1, out.data()),
            0)
      << attnrt_last_error(m.get());
  EXPECT_EQ(gStepTokens, (std::vector<int64_t>{4, 1, 1}));
}

/// stepInvoke for a step compiled for T = 1 (no run-time sizes).
void stepOneInvoke(void **buffers) {
  int64_t one = 1;
  void *withTokens[] = {buffers[0], buffers[1], buffers[2], buffers[3], &one};
  stepInvoke(withTokens);
}

TEST(Session, RecomputePastIsIgnoredWithoutADynamicStep) {
  // A step of T = 1 takes every token at its own length, so a re-run would
  // change nothing: the mark is accepted and the steps stay one token.
  const char *manifest = "attnc-manifest 1\n"
                         "target cpu\n"
                         "input ids i64 2x1\n"
                         "input positions i64 2 positions 8\n"
                         "state cache f32 2x8\n"
                         "output logits f32 2x1x5 causal recompute_past 2\n";
  TwoRowGeneration g;
  ASSERT_NO_FATAL_FAILURE(g.run(manifest, stepOneInvoke, 4));
  auto &[m, s, out] = g;
  EXPECT_EQ(out, (std::vector<int64_t>{3, 4, 0, 1, 3, 4, 0, 1}));
  EXPECT_EQ(gStepTokens, (std::vector<int64_t>(5, 1)));
}

TEST(Session, DynamicShapesOtherThanTheStepTokensAreRefused) {
  // A dynamic batch (the caches fix it), and a dynamic sequence without a
  // KV cache (a full-sequence model re-runs a fixed window).
  const char *manifests[] = {
      "attnc-manifest 1\ntarget cpu\n"
      "input ids i64 ?x? dims_from -,-\n"
      "input positions i64 2 positions 8\n"
      "state cache f32 2x8\n"
      "output logits f32 ?x?x5 dims_from 0:0,0:1 causal\n",
      "attnc-manifest 1\ntarget cpu\n"
      "input ids i64 2x? dims_from -\n"
      "output logits f32 2x?x5 dims_from 0:1 causal\n"};
  for (const char *manifest : manifests) {
    char err[256];
    ModelPtr m(attnrt_open(manifest, stepInvoke, err, sizeof(err)));
    ASSERT_NE(m.get(), nullptr) << err;
    EXPECT_EQ(attnrt_session_create(m.get(), 0), nullptr);
    EXPECT_NE(std::string(attnrt_last_error(m.get()))
                  .find("generation needs a model compiled with static "
                        "shapes, except the token count of a --kv-cache step"),
              std::string::npos)
        << attnrt_last_error(m.get());
  }
}

TEST(Session, Errors) {
  char err[256];
  ModelPtr plain(attnrt_open(kCpuManifest, cpuInvoke, err, sizeof(err)));
  ASSERT_NE(plain.get(), nullptr) << err;
  EXPECT_EQ(attnrt_session_create(plain.get(), 0), nullptr);
  EXPECT_NE(std::string(attnrt_last_error(plain.get()))
                .find("not a causal language model"),
            std::string::npos);

  ModelPtr m(attnrt_open(kCausalManifest, causalInvoke, err, sizeof(err)));
  SessionPtr s(attnrt_session_create(m.get(), 0));
  ASSERT_NE(s.get(), nullptr);
  const int64_t prompt[] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t len = 8, out[8];
  // Capacity: 8 prompt tokens leave no room.
  EXPECT_NE(
      attnrt_session_generate(s.get(), prompt, &len, 1, 8, 1, nullptr, -1, out),
      0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            "row 0: 8 prompt tokens plus 1 new tokens exceed the model's 8 "
            "positions (compile it for a longer sequence)");
  ASSERT_EQ(attnrt_session_prefill(s.get(), prompt, &len, 1, 8), 0);
  EXPECT_NE(attnrt_session_decode(s.get(), out), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            "decode: row 0 is full: the model was compiled for 8 positions");
  len = 0;
  EXPECT_NE(attnrt_session_prefill(s.get(), prompt, &len, 1, 8), 0);
  EXPECT_NE(attnrt_session_prefill(s.get(), prompt, &len, 3, 8), 0);
  EXPECT_NE(std::string(attnrt_last_error(m.get())).find("1 to 2 rows"),
            std::string::npos);
  // After a failed prefill there is nothing to decode or sample.
  EXPECT_NE(attnrt_session_decode(s.get(), out), 0);
  EXPECT_EQ(attnrt_session_logits(s.get()), nullptr);
  len = 1;
  ASSERT_EQ(attnrt_session_prefill(s.get(), prompt, &len, 1, 8), 0);
  attnrt_sampling bad[] = {{-1.0f, 0, 1.0f},
                           {NAN, 0, 1.0f},
                           {1.0f, -2, 1.0f},
                           {1.0f, 0, 0.0f},
                           {1.0f, 0, 1.5f}};
  for (const attnrt_sampling &o : bad)
    EXPECT_NE(attnrt_session_sample(s.get(), &o, out), 0)
        << o.temperature << " " << o.top_k << " " << o.top_p;
}

/// An encoder-decoder: encoder ids [2, 3] (buffer 0), the decoder stream
/// [2, 8] (buffer 1), logits preferring (ids[t] + enc[0] + enc[2]) % V at
/// position t, so the generated tokens show the encoder input.
const char *const kEncoderDecoderManifest =
    "attnc-manifest 1\n"
    "target cpu\n"
    "input input_ids i64 2x3 ids 10 encoder\n"
    "input decoder_input_ids i64 2x8\n"
    "output logits f32 2x8x5 causal\n";

void encoderDecoderInvoke(void **buffers) {
  auto *enc = static_cast<const int64_t *>(buffers[0]);
  auto *ids = static_cast<const int64_t *>(buffers[1]);
  auto *logits = static_cast<float *>(buffers[2]);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t < kSeq; ++t)
      for (int64_t v = 0; v < kVocab; ++v)
        logits[(b * kSeq + t) * kVocab + v] =
            v == (ids[b * kSeq + t] + enc[b * 3] + enc[b * 3 + 2]) % kVocab
                ? 1.0f
                : 0.0f;
}

TEST(Session, EncoderDecoderGeneratesFromItsEncoderInput) {
  ModelPtr m;
  SessionPtr s;
  ASSERT_NO_FATAL_FAILURE(
      openSession(kEncoderDecoderManifest, encoderDecoderInvoke, m, s));
  const int64_t start[] = {0, 0}, lengths[] = {1, 1};
  int64_t out[2 * 4];
  // Without its encoder input the session cannot start.
  EXPECT_NE(attnrt_session_generate(s.get(), start, lengths, 2, 1, 4, nullptr,
                                    -1, out),
            0);
  EXPECT_NE(std::string(attnrt_last_error(m.get())).find("--encoder-input"),
            std::string::npos);
  const int64_t wide[] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_NE(attnrt_session_set_encoder_input(s.get(), wide, nullptr, 2, 4), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            "encoder input: 4 tokens per row, but the model was compiled for "
            "3 (its input is static; compile it with an attention_mask to "
            "take shorter rows)");
  // Row 0 steps by 1 + 3 = 4, row 1 by 4 + 6 = 10 = 0 (mod 5).
  const int64_t encoder[] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(attnrt_session_set_encoder_input(s.get(), encoder, nullptr, 2, 3),
            0);
  ASSERT_EQ(attnrt_session_generate(s.get(), start, lengths, 2, 1, 4, nullptr,
                                    -1, out),
            0)
      << attnrt_last_error(m.get());
  const int64_t expected[] = {4, 3, 2, 1, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<int64_t>(out, out + 8),
            std::vector<int64_t>(expected, expected + 8));
  // The prefill's batch must be the encoder input's.
  EXPECT_NE(attnrt_session_prefill(s.get(), start, lengths, 1, 1), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            "prefill: 1 rows, but the encoder input has 2");

  // A decoder has no encoder input to set.
  ModelPtr decoder;
  SessionPtr d;
  ASSERT_NO_FATAL_FAILURE(
      openSession(kCausalManifest, causalInvoke, decoder, d));
  EXPECT_NE(attnrt_session_set_encoder_input(d.get(), encoder, nullptr, 2, 3),
            0);
}

/// The same with an encoder mask (buffer 1): the logits prefer (ids[t] +
/// the encoder ids under the mask, summed) % V.
const char *const kMaskedEncoderDecoderManifest =
    "attnc-manifest 1\n"
    "target cpu\n"
    "input input_ids i64 2x3 ids 10 encoder\n"
    "input attention_mask i64 2x3 encoder\n"
    "input decoder_input_ids i64 2x8\n"
    "output logits f32 2x8x5 causal\n";

void maskedEncoderDecoderInvoke(void **buffers) {
  auto *enc = static_cast<const int64_t *>(buffers[0]);
  auto *mask = static_cast<const int64_t *>(buffers[1]);
  auto *ids = static_cast<const int64_t *>(buffers[2]);
  auto *logits = static_cast<float *>(buffers[3]);
  for (int64_t b = 0; b < kBatch; ++b) {
    int64_t sum = 0;
    for (int64_t j = 0; j < 3; ++j)
      sum += mask[b * 3 + j] * enc[b * 3 + j];
    for (int64_t t = 0; t < kSeq; ++t)
      for (int64_t v = 0; v < kVocab; ++v)
        logits[(b * kSeq + t) * kVocab + v] =
            v == (ids[b * kSeq + t] + sum) % kVocab ? 1.0f : 0.0f;
  }
}

TEST(Session, EncoderDecoderMasksShorterEncoderRows) {
  ModelPtr m;
  SessionPtr s;
  ASSERT_NO_FATAL_FAILURE(openSession(kMaskedEncoderDecoderManifest,
                                      maskedEncoderDecoderInvoke, m, s));
  // Rows of width 2 (narrower than the compiled 3): row 0 has 1 token (its
  // 9 must be masked out), row 1 both. Steps: 1 and 3 + 4 = 7 = 2 (mod 5).
  const int64_t encoder[] = {1, 9, 3, 4}, lengths[] = {1, 2};
  ASSERT_EQ(attnrt_session_set_encoder_input(s.get(), encoder, lengths, 2, 2),
            0)
      << attnrt_last_error(m.get());
  const int64_t start[] = {0, 0}, ones[] = {1, 1};
  int64_t out[2 * 3];
  ASSERT_EQ(
      attnrt_session_generate(s.get(), start, ones, 2, 1, 3, nullptr, -1, out),
      0)
      << attnrt_last_error(m.get());
  const int64_t expected[] = {1, 2, 3, 2, 4, 1};
  EXPECT_EQ(std::vector<int64_t>(out, out + 6),
            std::vector<int64_t>(expected, expected + 6));
  const int64_t tooLong[] = {1, 3};
  EXPECT_NE(attnrt_session_set_encoder_input(s.get(), encoder, tooLong, 2, 2),
            0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            "encoder input: row 1 has length 3; lengths must be in [1, 2]");
  const int64_t wide[] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_NE(attnrt_session_set_encoder_input(s.get(), wide, nullptr, 2, 4), 0);
  EXPECT_EQ(std::string(attnrt_last_error(m.get())),
            "encoder input: 4 tokens per row, but the model was compiled for "
            "1 to 3");
}

/// A model with state: each run adds its input to the state and outputs
/// the new state (a running sum), so the state must persist between runs
/// and start zeroed.
void accumulateInvoke(void **buffers) {
  auto *x = static_cast<const float *>(buffers[0]);
  auto *state = static_cast<float *>(buffers[1]);
  auto *y = static_cast<float *>(buffers[2]);
  for (int i = 0; i < 3; ++i)
    y[i] = state[i] += x[i];
}

TEST(State, PersistsAndResets) {
  const char *manifest = "attnc-manifest 1\ntarget cpu\n"
                         "input x f32 3\nstate acc f32 3\noutput y f32 3\n";
  char err[256];
  ModelPtr m(attnrt_open(manifest, accumulateInvoke, err, sizeof(err)));
  ASSERT_NE(m.get(), nullptr) << err;
  EXPECT_EQ(attnrt_num_inputs(m.get()), 1);
  EXPECT_EQ(attnrt_num_states(m.get()), 1);
  EXPECT_STREQ(attnrt_state_name(m.get(), 0), "acc");
  EXPECT_EQ(attnrt_state_dim(m.get(), 0, 0), 3);
  EXPECT_EQ(attnrt_state_name(m.get(), 1), nullptr);
  EXPECT_STREQ(attnrt_last_error(m.get()),
               "attnrt_state_name: state index 1 out of range (the model has "
               "1)");
  const float x[3] = {1, 2, 3};
  float y[3];
  for (int run = 1; run <= 3; ++run) {
    ASSERT_EQ(attnrt_set_input(m.get(), 0, x, sizeof(x)), 0);
    ASSERT_EQ(attnrt_run(m.get()), 0);
    ASSERT_EQ(attnrt_get_output(m.get(), 0, y, sizeof(y)), 0);
    EXPECT_EQ(y[2], 3.0f * run);
  }
  ASSERT_EQ(attnrt_reset_state(m.get()), 0);
  ASSERT_EQ(attnrt_run(m.get()), 0);
  ASSERT_EQ(attnrt_get_output(m.get(), 0, y, sizeof(y)), 0);
  EXPECT_EQ(y[0], 1.0f);
}

/// Draws `n` tokens with `o` and returns their frequencies.
std::vector<double> frequencies(const attnrt_sampling &o, uint64_t seed,
                                int n) {
  char err[256];
  ModelPtr m(attnrt_open(kCausalManifest, fixedInvoke, err, sizeof(err)));
  SessionPtr s(attnrt_session_create(m.get(), seed));
  const int64_t prompt[] = {0};
  const int64_t len = 1;
  EXPECT_EQ(attnrt_session_prefill(s.get(), prompt, &len, 1, 1), 0);
  std::vector<double> freq(kVocab, 0.0);
  for (int i = 0; i < n; ++i) {
    int64_t id = -1;
    EXPECT_EQ(attnrt_session_sample(s.get(), &o, &id), 0);
    EXPECT_TRUE(id >= 0 && id < kVocab);
    freq[static_cast<size_t>(id)] += 1.0 / n;
  }
  return freq;
}

/// softmax(logits / T) over the tokens in `keep`, zero elsewhere.
std::vector<double> expected(double temperature, std::vector<int> keep) {
  std::vector<double> p(kVocab, 0.0);
  double total = 0;
  for (int v : keep)
    total +=
        (p[static_cast<size_t>(v)] = std::exp(gFixedLogits[v] / temperature));
  for (double &x : p)
    x /= total;
  return p;
}

TEST(Session, SamplingFollowsTheDistribution) {
  // Probabilities at T = 1: about 0.47, 0.26, 0.17, 0.064, 0.035.
  gFixedLogits = {2.0f, 1.4f, 1.0f, 0.0f, -0.6f};
  const int n = 40000;
  // With n draws the standard error is below 0.0025; 0.012 is ~5 sigma.
  auto near = [](const std::vector<double> &got,
                 const std::vector<double> &want) {
    for (size_t v = 0; v < want.size(); ++v)
      EXPECT_NEAR(got[v], want[v], 0.012) << "token " << v;
  };
  near(frequencies({1.0f, 0, 1.0f}, 7, n), expected(1.0, {0, 1, 2, 3, 4}));
  near(frequencies({0.5f, 0, 1.0f}, 7, n), expected(0.5, {0, 1, 2, 3, 4}));
  near(frequencies({1.0f, 2, 1.0f}, 7, n), expected(1.0, {0, 1}));
  // top_p 0.8 keeps 0, 1, 2 (0.47 + 0.26 < 0.8 <= 0.47 + 0.26 + 0.17).
  near(frequencies({1.0f, 0, 0.8f}, 7, n), expected(1.0, {0, 1, 2}));
  // Greedy and top_k 1 always give the argmax.
  EXPECT_NEAR(frequencies({0.0f, 0, 1.0f}, 7, 100)[0], 1.0, 1e-9);
  EXPECT_NEAR(frequencies({2.0f, 1, 1.0f}, 7, 100)[0], 1.0, 1e-9);
  // The same seed draws the same tokens; another seed others.
  EXPECT_EQ(frequencies({1.0f, 0, 1.0f}, 3, 500),
            frequencies({1.0f, 0, 1.0f}, 3, 500));
  EXPECT_NE(frequencies({1.0f, 0, 1.0f}, 3, 500),
            frequencies({1.0f, 0, 1.0f}, 4, 500));
}

/// Greedy picks the first index of the largest logit wherever it lies: in
/// the sampler's 16-lane blocks or in the tail after them (37 = 2 * 16 + 5),
/// and a NaN logit is refused with its token.
constexpr int64_t kWideVocab = 37;
std::vector<float> gWideLogits;
void wideInvoke(void **buffers) { fillLogits(buffers, gWideLogits); }

int64_t greedyToken(const std::vector<float> &logits, std::string *error) {
  gWideLogits = logits;
  const char *manifest = "attnc-manifest 1\ntarget cpu\ninput ids i64 2x8\n"
                         "output logits f32 2x8x37 causal\n";
  char err[256];
  ModelPtr m(attnrt_open(manifest, wideInvoke, err, sizeof(err)));
  EXPECT_NE(m.get(), nullptr) << err;
  SessionPtr s(attnrt_session_create(m.get(), 0));
  const int64_t prompt[] = {0};
  const int64_t len = 1;
  if (attnrt_session_prefill(s.get(), prompt, &len, 1, 1)) {
    *error = attnrt_last_error(m.get());
    return -1;
  }
  int64_t id = -1;
  EXPECT_EQ(attnrt_session_sample(s.get(), nullptr, &id), 0);
  return id;
}

TEST(Session, GreedyTakesTheFirstLargestLogit) {
  std::string error;
  auto withPeaks = [](std::vector<std::pair<int, float>> peaks,
                      float base = -1.0f) {
    std::vector<float> logits(kWideVocab, base);
    for (auto [v, x] : peaks)
      logits[static_cast<size_t>(v)] = x;
    return logits;
  };
  EXPECT_EQ(greedyToken(withPeaks({{3, 2.0f}}), &error), 3);
  EXPECT_EQ(greedyToken(withPeaks({{17, 2.0f}, {3, 1.5f}}), &error), 17);
  EXPECT_EQ(greedyToken(withPeaks({{35, 2.0f}, {0, 1.9f}}), &error), 35);
  EXPECT_EQ(greedyToken(withPeaks({{36, 0.5f}}), &error), 36);
  // Ties: the first index, across blocks and into the tail.
  EXPECT_EQ(greedyToken(withPeaks({{20, 2.0f}, {5, 2.0f}}), &error), 5);
  EXPECT_EQ(greedyToken(withPeaks({{33, 2.0f}, {20, 2.0f}}), &error), 20);
  // All equal: token 0; all negative but one less so.
  EXPECT_EQ(greedyToken(withPeaks({}, 0.25f), &error), 0);
  EXPECT_EQ(greedyToken(withPeaks({{30, -3.0f}}, -4.0f), &error), 30);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(greedyToken(withPeaks({{2, 2.0f}, {34, std::nanf("")}}), &error),
            -1);
  EXPECT_NE(error.find("are NaN at token 34"), std::string::npos) << error;
}

} // namespace
