//===- Session.cpp - generation sessions over causal language models ------===//
//
// Built on the public model API, for two kinds of causal language model:
//  - a KV-cache step (attn-import --kv-cache): the model takes T tokens per
//    sequence and each sequence's start position, and keeps the keys and
//    values in its state (KV caches, updated in place). When T is dynamic
//    (input_ids [batch, ?]) prefill is one run over the whole prompt (T =
//    the longest prompt; shorter prompts are padded, and each row's logits
//    are read at its last real token) and decode runs T = 1; a step
//    compiled for T = 1 takes the prompt token by token;
//  - a full-sequence model: the session keeps every sequence's tokens in the
//    [batch, seq] id input and re-runs the whole window per step, reading
//    each sequence's logits at its last position. That is exact because the
//    manifest marks the logits `causal` (position t depends only on
//    positions <= t, so the padding after a sequence never reaches it), and
//    costs a full forward pass per step.
// When the manifest gives the logits `recompute_past N` (Phi-3 with
// LongRoPE), a dynamic step follows transformers' `generate`: the decode
// step at which the longest row first grows past N tokens drops the KV
// caches and re-runs every row's whole sequence so far (prompt and
// generated tokens) from position 0 in one run, so that the cached keys
// take the rotation of that length rather than keep the one they were
// written with. transformers pads a batch's rows to one length, so its
// cache is dropped for the whole batch when the longest row passes N. A
// step compiled for T = 1 cannot re-run a sequence at one length (its
// tokens go one by one, each at its own length) and a full-sequence model
// always runs its whole window: both ignore the mark.
// An encoder-decoder has inputs marked `encoder` in the manifest: the
// encoder's token ids and, optionally, their padding mask, set once per
// prompt (attnrt_session_set_encoder_input: the session's context keeps
// them for every run); the generated tokens are the decoder stream (the
// other id input). A decoder step (--kv-cache) takes float `encoder` inputs
// instead of the ids: the outputs of the encoder linked beside it (each
// layer's cross-attention keys and values), which the session computes
// once per prompt by running the encoder on the ids and mask in a context
// of its own, then binds to the step's context with the mask.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace attnrt;

/// A dynamic step's run of every row's first lengths[b] `tokens` (row b at
/// tokens + b * stride) from position 0 over emptied caches. A row shorter
/// than the longest is padded with id 0: its padded tokens write cache rows
/// past its length, which nothing reads (the attention of a later step sees
/// rows below that step's positions + 1) and its decode steps overwrite,
/// since each row continues at its own length.
int attnrt_session::runFromStart(const int64_t *tokens, int64_t stride) {
  if (attnrt_context_reset_state(c))
    return contextFailed();
  std::fill(positions.begin(), positions.end(), 0);
  int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  if (lastOnly) {
    // Logits of the last column only: the shortest row's length in one
    // run, then one token per run; a row whose tokens are done repeats its
    // last token at its last position (the same cache row, rewritten with
    // the same keys and values), so at the last run every row's last
    // column is its last token.
    int64_t shortest = *std::min_element(lengths.begin(), lengths.end());
    setWidth(shortest);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < shortest; ++t)
        setId(b, t, tokens[b * stride + t]);
    // Only the last run's logits are read (row `batch` is none).
    int failed = run(shortest == longest ? -1 : batch);
    setWidth(1);
    for (int64_t t = shortest; !failed && t < longest; ++t) {
      for (int64_t b = 0; b < batch; ++b) {
        int64_t at = std::min(t, lengths[static_cast<size_t>(b)] - 1);
        setStep(b, tokens[b * stride + at], at);
      }
      failed = run(t + 1 == longest ? -1 : batch);
    }
    return failed;
  }
  setWidth(longest);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < lengths[static_cast<size_t>(b)]; ++t)
      setId(b, t, tokens[b * stride + t]);
  int failed = run();
  setWidth(1);
  return failed;
}

/// Runs the model on the current rows and gathers the logits of each row's
/// last token (of row `onlyRow` alone when it is not -1).
int attnrt_session::run(int64_t onlyRow) {
  const int64_t idsShape[2] = {maxBatch, width};
  if ((dynamicTokens
           ? attnrt_context_set_input_shaped(c, idsInput, ids.data(),
                                             ids.size(), 2, idsShape)
           : attnrt_context_set_input(c, idsInput, ids.data(), ids.size())) ||
      (step && attnrt_context_set_input(c, positionsInput, positions.data(),
                                        positions.size())))
    return contextFailed();
  if (stateOwner) {
    std::string error;
    if (runOnStateRow(c, stateOwner, stateRow, error))
      return fail(error);
  } else if (attnrt_context_run(c)) {
    return contextFailed();
  }
  const auto *rawLogits = static_cast<const unsigned char *>(
      attnrt::contextOutputData(c, logitsOutput, rawLogitsBytes));
  if (!rawLogits)
    return contextFailed();
  for (int64_t b = 0; b < batch; ++b) {
    if (onlyRow >= 0 && b != onlyRow)
      continue;
    // A one-token step's logits are its only column; a prompt's (the
    // whole window, or a dynamic step's prefill from position 0) are at
    // the row's last token.
    // A last-only step's logits are its last column's.
    int64_t col = lastOnly               ? 0
                  : !lastColumns.empty() ? lastColumns[static_cast<size_t>(b)]
                  : step && width == 1   ? 0
                                         : lengths[static_cast<size_t>(b)] - 1;
    size_t from = static_cast<size_t>((b * logitColumns() + col) * vocab);
    float *row = logits.data() + b * vocab;
    convertFloats(rawLogits + from * dtypeSize(logitsType), logitsType, row,
                  DType::F32, static_cast<uint64_t>(vocab));
    // One branch-free pass (it vectorizes); the token only on failure.
    bool nan = false;
    for (int64_t v = 0; v < vocab; ++v)
      nan |= row[v] != row[v];
    if (nan) {
      int64_t v = std::find_if(row, row + vocab,
                               [](float x) { return std::isnan(x); }) -
                  row;
      return fail(strFormat("the model's logits for row %lld are NaN at "
                            "token %lld",
                            static_cast<long long>(b),
                            static_cast<long long>(v)));
    }
  }
  return 0;
}

/// splitmix64: small, fast and reproducible across platforms.
static uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

extern "C" attnrt_session *attnrt_session_create(attnrt_model *m,
                                                 uint64_t seed) {
  if (!m)
    return nullptr;
  const Manifest &mf = modelManifest(m);
  int logits = -1;
  for (size_t i = 0; i < mf.outputs.size() && logits < 0; ++i)
    if (mf.entries[static_cast<size_t>(mf.outputs[i])].causal)
      logits = static_cast<int>(i);
  if (logits < 0) {
    failModel(m, "the model is not a causal language model: no output is "
                 "marked causal (import a decoder checkpoint, or mark the "
                 "module attn.causal_lm)");
    return nullptr;
  }
  const ManifestEntry &out =
      mf.entries[static_cast<size_t>(mf.outputs[static_cast<size_t>(logits)])];
  // A decode step (attn-import --kv-cache) also takes the positions.
  bool step = !mf.states.empty();
  // The decoder stream's inputs (ids, then a step's positions) and an
  // encoder-decoder's encoder inputs (token ids, and their mask without an
  // id bound), in manifest order.
  std::vector<int> streamInputs;
  // The encoder's ids and mask inputs (in `encoderModel` when a decoder
  // step's encoder is linked beside it, else in m), the step's own mask,
  // and the step's float encoder inputs with the encoder outputs that fill
  // them.
  attnrt_model *encoderModel = nullptr;
  int encoder = -1, encoderMask = -1, stepMask = -1;
  std::vector<std::pair<int, int>> encoderOutputs;
  auto findEncoderInputs = [&](const Manifest &from, int &ids,
                               int &mask) -> bool {
    for (size_t i = 0; i < from.inputs.size(); ++i) {
      const ManifestEntry &e =
          from.entries[static_cast<size_t>(from.inputs[i])];
      if (!e.encoder || isFloatDType(e.dtype))
        continue;
      int &slot = e.idBound >= 0 ? ids : mask;
      if (slot >= 0) {
        failModel(m, std::string("generation takes one encoder ") +
                         (e.idBound >= 0 ? "ids" : "mask") +
                         " input; this model marks two");
        return false;
      }
      slot = static_cast<int>(i);
    }
    return true;
  };
  for (size_t i = 0; i < mf.inputs.size(); ++i) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.inputs[i])];
    if (!e.encoder)
      streamInputs.push_back(static_cast<int>(i));
    else if (isFloatDType(e.dtype))
      encoderOutputs.push_back({static_cast<int>(i), -1});
  }
  if (!encoderOutputs.empty()) {
    const ManifestEntry &first =
        mf.entries[static_cast<size_t>(mf.inputs[encoderOutputs[0].first])];
    encoderModel = modelEncoder(m);
    if (!encoderModel) {
      failModel(m, "the model takes encoder outputs (input '" + first.name +
                       "'), but no encoder is linked with it");
      return nullptr;
    }
    const Manifest &ef = modelManifest(encoderModel);
    int stepIds = -1;
    if (!findEncoderInputs(mf, stepIds, stepMask) ||
        !findEncoderInputs(ef, encoder, encoderMask))
      return nullptr;
    // Each float encoder input is the encoder output of its name, shape
    // and dtype.
    for (auto &[input, output] : encoderOutputs) {
      const ManifestEntry &e =
          mf.entries[static_cast<size_t>(mf.inputs[input])];
      for (size_t o = 0; o < ef.outputs.size() && output < 0; ++o) {
        const ManifestEntry &eo =
            ef.entries[static_cast<size_t>(ef.outputs[o])];
        if (eo.name == e.name && eo.dtype == e.dtype && eo.dims == e.dims)
          output = static_cast<int>(o);
      }
      if (output < 0) {
        failModel(m, "the linked encoder has no output '" + e.name + "' " +
                         dtypeName(e.dtype) + " " + formatShapeList(e.dims) +
                         " for the decoder step's input of that name");
        return nullptr;
      }
    }
    if (stepIds >= 0 || (stepMask >= 0) != (encoderMask >= 0)) {
      failModel(m, "a decoder step with a linked encoder takes the encoder's "
                   "mask, if the encoder has one, and no encoder ids");
      return nullptr;
    }
    if (stepMask >= 0 &&
        mf.entries[static_cast<size_t>(mf.inputs[stepMask])].dims !=
            ef.entries[static_cast<size_t>(ef.inputs[encoderMask])].dims) {
      failModel(m, "the decoder step's encoder mask and the encoder's differ "
                   "in shape");
      return nullptr;
    }
  } else if (!findEncoderInputs(mf, encoder, encoderMask)) {
    return nullptr;
  }
  if (encoderMask >= 0 && encoder < 0) {
    failModel(m, "the model marks an encoder mask input but no encoder ids");
    return nullptr;
  }
  const Manifest &encoderManifest =
      encoderModel ? modelManifest(encoderModel) : mf;
  size_t wantInputs = step ? 2 : 1;
  if (streamInputs.size() != wantInputs) {
    failModel(m, strFormat("generation needs a model with %s%s, this one has "
                           "%zu",
                           step ? "two inputs (token ids and positions)"
                                : "one input (the token ids)",
                           encoder >= 0 ? " besides the encoder input" : "",
                           streamInputs.size()));
    return nullptr;
  }
  const ManifestEntry &in =
      mf.entries[static_cast<size_t>(mf.inputs[streamInputs[0]])];
  // A KV-cache step may take a run-time number of tokens (prefill in one
  // run); everything else about a generating model is static.
  // Its logits are then [batch, ?, vocab], or [batch, 1, vocab] for the
  // last token of each row only (--logits=last).
  bool dynamicTokens = step && in.dims.size() == 2 && out.dims.size() == 3 &&
                       in.dims[1] == kDynamicDim &&
                       (out.dims[1] == kDynamicDim || out.dims[1] == 1);
  auto staticExcept = [&](const ManifestEntry &e, size_t axis) {
    for (size_t d = 0; d < e.dims.size(); ++d)
      if (e.dims[d] == kDynamicDim && !(dynamicTokens && d == axis))
        return false;
    return true;
  };
  if (!staticExcept(in, 1) || !staticExcept(out, 1)) {
    failModel(m, "generation needs a model compiled with static shapes, "
                 "except the token count of a --kv-cache step; input '" +
                     in.name + "' is " + formatShapeList(in.dims) +
                     " and the logits " + formatShapeList(out.dims));
    return nullptr;
  }
  const ManifestEntry *pos =
      step ? &mf.entries[static_cast<size_t>(mf.inputs[streamInputs[1]])]
           : nullptr;
  if (pos && ((pos->dtype != DType::I32 && pos->dtype != DType::I64) ||
              pos->dims.size() != 1 || pos->dims[0] != out.dims[0] ||
              !pos->positions || pos->idBound < 1)) {
    failModel(m, "a decode step needs positions i32/i64 [batch] with a "
                 "bound (the cache length); input '" +
                     pos->name + "' is " + dtypeName(pos->dtype) + " " +
                     formatShapeList(pos->dims));
    return nullptr;
  }
  if ((in.dtype != DType::I32 && in.dtype != DType::I64) ||
      in.dims.size() != 2 || in.dims[0] != out.dims[0] ||
      (in.dims[1] != out.dims[1] && !dynamicTokens) || in.dims[1] == 0 ||
      (step && in.dims[1] != 1 && !dynamicTokens)) {
    failModel(m, "generation needs token ids i32/i64 [batch, seq] matching "
                 "the logits' " +
                     formatShapeList(out.dims) + "; input '" + in.name +
                     "' is " + dtypeName(in.dtype) + " " +
                     formatShapeList(in.dims));
    return nullptr;
  }
  const ManifestEntry *enc =
      encoder >= 0
          ? &encoderManifest
                 .entries[static_cast<size_t>(encoderManifest.inputs[encoder])]
          : nullptr;
  const ManifestEntry *encMask =
      encoderMask >= 0 ? &encoderManifest.entries[static_cast<size_t>(
                             encoderManifest.inputs[encoderMask])]
                       : nullptr;
  if (encMask && encMask->dims != enc->dims) {
    failModel(m, "the encoder mask input '" + encMask->name + "' is " +
                     formatShapeList(encMask->dims) + ", the encoder ids " +
                     formatShapeList(enc->dims));
    return nullptr;
  }
  if (enc && (enc->dims[0] != out.dims[0] || enc->dims[1] == kDynamicDim)) {
    failModel(m, "generation needs the encoder input [batch, seq] static, "
                 "with the logits' batch; input '" +
                     enc->name + "' is " + formatShapeList(enc->dims) +
                     " and the logits " + formatShapeList(out.dims));
    return nullptr;
  }
  attnrt_context *c = attnrt_context_create(m);
  if (!c)
    return nullptr;
  attnrt_context *ec = nullptr;
  if (encoderModel && !(ec = attnrt_context_create(encoderModel))) {
    failModel(m, std::string("the linked encoder: ") +
                     attnrt_last_error(encoderModel));
    attnrt_context_free(c);
    return nullptr;
  }
  auto *s = new attnrt_session;
  s->m = m;
  s->c = c;
  s->encoderContext = ec;
  s->stepMaskInput = stepMask;
  s->encoderOutputs = std::move(encoderOutputs);
  s->logitsOutput = logits;
  s->idsInput = streamInputs[0];
  s->idsType = in.dtype;
  s->logitsType = out.dtype;
  s->maxBatch = out.dims[0];
  s->width = dynamicTokens ? 1 : out.dims[1];
  s->capacity = step ? pos->idBound : out.dims[1];
  s->vocab = out.dims[2];
  s->step = step;
  s->dynamicTokens = dynamicTokens;
  s->lastOnly = dynamicTokens && out.dims[1] == 1;
  if (enc) {
    s->encoderInput = encoder;
    s->encoderType = enc->dtype;
    s->encoderWidth = enc->dims[1];
    s->encoderBytes = static_cast<size_t>(enc->bytes);
  }
  if (encMask) {
    s->encoderMaskInput = encoderMask;
    s->encoderMaskType = encMask->dtype;
    s->encoderMaskBytes = static_cast<size_t>(encMask->bytes);
  }
  if (step) {
    s->positionsInput = streamInputs[1];
    s->positionsType = pos->dtype;
    s->positions.assign(static_cast<size_t>(pos->bytes), 0);
  }
  if (dynamicTokens && out.recomputePast > 0) {
    s->recomputePast = out.recomputePast;
    s->history.assign(static_cast<size_t>(s->maxBatch * s->capacity), 0);
  }
  s->setWidth(s->width);
  s->rng = seed;
  return s;
}

extern "C" void attnrt_session_free(attnrt_session *s) { delete s; }

extern "C" int attnrt_session_set_encoder_input(attnrt_session *s,
                                                const int64_t *ids,
                                                const int64_t *lengths,
                                                int64_t batch, int64_t width) {
  if (!s)
    return 1;
  if (s->encoderInput < 0)
    return s->fail("the model has no encoder input (it is not an "
                   "encoder-decoder)");
  s->encoderRows = 0;
  if (!ids || batch < 1 || batch > s->maxBatch)
    return s->fail(strFormat("encoder input: %lld rows, but the model was "
                             "compiled for 1 to %lld",
                             static_cast<long long>(batch),
                             static_cast<long long>(s->maxBatch)));
  bool masked = s->encoderMaskInput >= 0;
  if (width < 1 || width > s->encoderWidth ||
      (!masked && width != s->encoderWidth))
    return s->fail(strFormat(
        "encoder input: %lld tokens per row, but the model was compiled for "
        "%s%lld%s",
        static_cast<long long>(width), masked ? "1 to " : "",
        static_cast<long long>(s->encoderWidth),
        masked ? ""
               : " (its input is static; compile it with an "
                 "attention_mask to take shorter rows)"));
  for (int64_t b = 0; lengths && b < batch; ++b)
    if (lengths[b] < 1 || lengths[b] > width ||
        (!masked && lengths[b] != width))
      return s->fail(strFormat(
          "encoder input: row %lld has length %lld; lengths must be in "
          "[%lld, %lld]%s",
          static_cast<long long>(b), static_cast<long long>(lengths[b]),
          static_cast<long long>(masked ? 1 : width),
          static_cast<long long>(width),
          masked ? "" : " (the model has no attention_mask input)"));
  // Zero-padded to the compiled batch and width; the context keeps them
  // for every run of the session.
  std::vector<unsigned char> encoderIds(s->encoderBytes, 0),
      encoderMask(s->encoderMaskBytes, 0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t length = lengths ? lengths[b] : width;
    for (int64_t t = 0; t < length; ++t) {
      size_t at = static_cast<size_t>(b * s->encoderWidth + t);
      attnrt_session::store(encoderIds, s->encoderType, at, ids[b * width + t]);
      if (masked)
        attnrt_session::store(encoderMask, s->encoderMaskType, at, 1);
    }
  }
  attnrt_context *ec = s->encoderContext ? s->encoderContext : s->c;
  if (attnrt_context_set_input(ec, s->encoderInput, encoderIds.data(),
                               encoderIds.size()) ||
      (masked &&
       attnrt_context_set_input(ec, s->encoderMaskInput, encoderMask.data(),
                                encoderMask.size())))
    return s->fail(attnrt_context_last_error(ec));
  if (s->stepMaskInput >= 0 &&
      attnrt_context_set_input(s->c, s->stepMaskInput, encoderMask.data(),
                               encoderMask.size()))
    return s->contextFailed();
  // A linked encoder runs at the next prefill, once the weights are bound.
  s->encoderPending = s->encoderContext != nullptr;
  s->encoderRows = batch;
  return 0;
}

extern "C" void attnrt_session_shape(attnrt_session *s, int64_t *max_batch,
                                     int64_t *capacity, int64_t *vocab) {
  if (!s)
    return;
  if (max_batch)
    *max_batch = s->maxBatch;
  if (capacity)
    *capacity = s->capacity;
  if (vocab)
    *vocab = s->vocab;
}

extern "C" int attnrt_session_prefill(attnrt_session *s, const int64_t *ids,
                                      const int64_t *lengths, int64_t batch,
                                      int64_t stride) {
  if (!s)
    return 1;
  s->batch = 0;
  // A prefill takes the whole session: any slots are dropped.
  s->slots.clear();
  s->lastColumns.clear();
  if (batch < 1 || batch > s->maxBatch)
    return s->fail(strFormat("prefill: batch %lld, but the model was "
                             "compiled for 1 to %lld rows",
                             static_cast<long long>(batch),
                             static_cast<long long>(s->maxBatch)));
  if (!ids || !lengths || stride < 1)
    return s->fail("prefill: needs ids, lengths and a positive stride");
  if (s->encoderInput >= 0 && s->encoderRows != batch)
    return s->fail(
        s->encoderRows == 0
            ? std::string("prefill: the model is an encoder-decoder and "
                          "needs its encoder input first (generate "
                          "--encoder-input, Model.generate's "
                          "encoder_input_ids, "
                          "attnrt_session_set_encoder_input)")
            : strFormat("prefill: %lld rows, but the encoder input has %lld",
                        static_cast<long long>(batch),
                        static_cast<long long>(s->encoderRows)));
  if (s->runEncoder())
    return 1;
  for (int64_t b = 0; b < batch; ++b)
    if (lengths[b] < 1 || lengths[b] > stride || lengths[b] > s->capacity)
      return s->fail(strFormat(
          "prefill: row %lld has length %lld; lengths must be in [1, %lld] "
          "(the prompt width%s)",
          static_cast<long long>(b), static_cast<long long>(lengths[b]),
          static_cast<long long>(std::min(stride, s->capacity)),
          stride > s->capacity ? " capped by the model's capacity" : ""));
  std::fill(s->ids.begin(), s->ids.end(), 0);
  std::fill(s->positions.begin(), s->positions.end(), 0);
  int64_t longest = *std::max_element(lengths, lengths + batch);
  s->lengths.assign(lengths, lengths + batch);
  s->batch = batch;
  s->logits.assign(static_cast<size_t>(batch * s->vocab), 0.0f);
  if (!s->step) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < lengths[b]; ++t)
        s->setId(b, t, ids[b * stride + t]);
    if (s->run()) {
      s->batch = 0;
      return 1;
    }
    return 0;
  }
  if (s->dynamicTokens) {
    // The whole prompt in one run from position 0.
    if (s->recomputePast > 0)
      for (int64_t b = 0; b < batch; ++b)
        std::copy(ids + b * stride, ids + b * stride + lengths[b],
                  s->history.begin() + b * s->capacity);
    int failed = s->runFromStart(ids, stride);
    if (failed)
      s->batch = 0;
    return failed;
  }
  if (attnrt_context_reset_state(s->c)) {
    s->batch = 0;
    return s->contextFailed();
  }
  // One token per step through the cache. A sequence whose prompt is done
  // repeats its last token at its last position, which rewrites the same
  // cache row with the same keys and values, so at the last step every
  // sequence's logits are those of its last prompt token.
  for (int64_t t = 0; t < longest; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      int64_t at = std::min(t, lengths[b] - 1);
      s->setStep(b, ids[b * stride + at], at);
    }
    // Only the last step's logits are read (row `batch` is none).
    if (s->run(t + 1 == longest ? -1 : batch)) {
      s->batch = 0;
      return 1;
    }
  }
  return 0;
}

extern "C" int attnrt_session_decode(attnrt_session *s,
                                     const int64_t *next_ids) {
  if (!s)
    return 1;
  if (s->batch == 0 || !s->slots.empty())
    return s->fail(s->slots.empty()
                       ? "decode: no rows (call attnrt_session_prefill first)"
                       : "decode: the session runs slots (continue them "
                         "with attnrt_session_slots_step)");
  for (int64_t b = 0; b < s->batch; ++b)
    if (s->lengths[static_cast<size_t>(b)] >= s->capacity)
      return s->fail(strFormat("decode: row %lld is full: the model was "
                               "compiled for %lld positions",
                               static_cast<long long>(b),
                               static_cast<long long>(s->capacity)));
  int64_t longest = *std::max_element(s->lengths.begin(), s->lengths.end());
  for (int64_t b = 0; b < s->batch; ++b) {
    int64_t &length = s->lengths[static_cast<size_t>(b)];
    if (s->recomputePast > 0)
      s->history[static_cast<size_t>(b * s->capacity + length)] = next_ids[b];
    if (s->step)
      s->setStep(b, next_ids[b], length);
    else
      s->setId(b, length, next_ids[b]);
    ++length;
  }
  // As transformers' Phi-3 `generate`: when the longest row first grows
  // past recompute_past tokens, every row's whole sequence again over
  // emptied caches, instead of the one-token step.
  if (s->recomputePast > 0 && longest <= s->recomputePast &&
      longest + 1 > s->recomputePast)
    return s->runFromStart(s->history.data(), s->capacity);
  return s->run();
}

extern "C" const float *attnrt_session_logits(attnrt_session *s) {
  return s && s->batch ? s->logits.data() : nullptr;
}

/// The first index of the largest of `row` (no NaN: run() refuses them).
/// The maximum is found first, 16 independent lanes at a time so that the
/// loop vectorizes (a decode step's 32-152 K logits), then its first index.
static int64_t argmax(const float *row, int64_t n) {
  if (n <= 0)
    return 0;
  constexpr int64_t kLanes = 16;
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, row[0]);
  int64_t v = 0;
  for (; v + kLanes <= n; v += kLanes)
    for (int64_t j = 0; j < kLanes; ++j)
      lanes[j] = std::max(lanes[j], row[v + j]);
  float best = *std::max_element(lanes, lanes + kLanes);
  for (; v < n; ++v)
    best = std::max(best, row[v]);
  return std::find(row, row + n, best) - row;
}

/// One token from `row` as `o` says; `scratch` is reused between rows.
static int64_t sampleRow(const float *row, int64_t vocab,
                         const attnrt_sampling &o, uint64_t &rng,
                         std::vector<std::pair<double, int64_t>> &scratch) {
  if (o.temperature == 0.0f || o.top_k == 1)
    return argmax(row, vocab);
  scratch.resize(static_cast<size_t>(vocab));
  for (int64_t v = 0; v < vocab; ++v)
    scratch[static_cast<size_t>(v)] = {
        static_cast<double>(row[v]) / o.temperature, v};
  // Most likely first; equal logits by index, so the draw is reproducible.
  auto byLikelihood = [](const std::pair<double, int64_t> &a,
                         const std::pair<double, int64_t> &b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  size_t keep = o.top_k > 0 ? static_cast<size_t>(std::min(o.top_k, vocab))
                            : scratch.size();
  std::partial_sort(scratch.begin(), scratch.begin() + keep, scratch.end(),
                    byLikelihood);
  double top = scratch[0].first, total = 0;
  for (size_t i = 0; i < keep; ++i)
    total += (scratch[i].first = std::exp(scratch[i].first - top));
  if (o.top_p < 1.0f) {
    double cumulative = 0;
    for (size_t i = 0; i < keep; ++i) {
      cumulative += scratch[i].first / total;
      if (cumulative >= o.top_p) {
        keep = i + 1;
        break;
      }
    }
    total = 0;
    for (size_t i = 0; i < keep; ++i)
      total += scratch[i].first;
  }
  double u = static_cast<double>(nextRandom(rng) >> 11) * 0x1.0p-53 * total;
  for (size_t i = 0; i < keep; ++i) {
    u -= scratch[i].first;
    if (u < 0)
      return scratch[i].second;
  }
  return scratch[keep - 1].second;
}

static constexpr attnrt_sampling kGreedy = {0.0f, 0, 1.0f};

/// Records an error on the model unless `o` is valid.
static int checkSampling(attnrt_session *s, const attnrt_sampling &o) {
  if (!std::isfinite(o.temperature) || o.temperature < 0)
    return s->fail(strFormat("sample: temperature must be finite and >= 0, "
                             "got %g",
                             static_cast<double>(o.temperature)));
  if (o.top_k < 0)
    return s->fail(strFormat("sample: top_k must be >= 0, got %lld",
                             static_cast<long long>(o.top_k)));
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f))
    return s->fail(strFormat("sample: top_p must be in (0, 1], got %g",
                             static_cast<double>(o.top_p)));
  return 0;
}

extern "C" int attnrt_session_sample(attnrt_session *s,
                                     const attnrt_sampling *options,
                                     int64_t *out_ids) {
  if (!s)
    return 1;
  if (s->batch == 0)
    return s->fail("sample: no logits (call attnrt_session_prefill first)");
  attnrt_sampling o = options ? *options : kGreedy;
  if (checkSampling(s, o))
    return 1;
  for (int64_t b = 0; b < s->batch; ++b)
    out_ids[b] = sampleRow(s->logits.data() + b * s->vocab, s->vocab, o, s->rng,
                           s->scratch);
  return 0;
}

extern "C" int attnrt_session_generate(attnrt_session *s, const int64_t *ids,
                                       const int64_t *lengths, int64_t batch,
                                       int64_t stride, int64_t max_new_tokens,
                                       const attnrt_sampling *options,
                                       int64_t eos, int64_t *out_ids) {
  if (!s)
    return 1;
  s->prefillMs = s->decodeMs = 0;
  s->decodeSteps = 0;
  if (max_new_tokens < 1)
    return s->fail(strFormat("max_new_tokens must be >= 1, got %lld",
                             static_cast<long long>(max_new_tokens)));
  // Bad options fail before any model run.
  if (checkSampling(s, options ? *options : kGreedy))
    return 1;
  if (lengths && batch >= 1 && batch <= s->maxBatch)
    for (int64_t b = 0; b < batch; ++b)
      if (lengths[b] > s->capacity - max_new_tokens)
        return s->fail(strFormat(
            "row %lld: %lld prompt tokens plus %lld new tokens exceed the "
            "model's %lld positions (compile it for a longer sequence)",
            static_cast<long long>(b), static_cast<long long>(lengths[b]),
            static_cast<long long>(max_new_tokens),
            static_cast<long long>(s->capacity)));
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  Clock::time_point start = Clock::now();
  if (attnrt_session_prefill(s, ids, lengths, batch, stride))
    return 1;
  s->prefillMs = ms(start, Clock::now());
  std::vector<int64_t> next(static_cast<size_t>(batch));
  std::vector<bool> done(static_cast<size_t>(batch), false);
  start = Clock::now();
  for (int64_t t = 0; t < max_new_tokens; ++t) {
    if (t > 0) {
      if (attnrt_session_decode(s, next.data()))
        return 1;
      ++s->decodeSteps;
    }
    if (attnrt_session_sample(s, options, next.data()))
      return 1;
    bool allDone = true;
    for (int64_t b = 0; b < batch; ++b) {
      size_t r = static_cast<size_t>(b);
      if (done[r])
        next[r] = eos;
      out_ids[b * max_new_tokens + t] = next[r];
      done[r] = done[r] || (eos >= 0 && next[r] == eos);
      allDone = allDone && done[r];
    }
    if (allDone) {
      for (int64_t b = 0; b < batch; ++b)
        std::fill(out_ids + b * max_new_tokens + t + 1,
                  out_ids + (b + 1) * max_new_tokens, eos);
      break;
    }
  }
  s->decodeMs = ms(start, Clock::now());
  return 0;
}

extern "C" void attnrt_session_timing(attnrt_session *s, double *prefill_ms,
                                      double *decode_ms,
                                      int64_t *decode_steps) {
  if (!s)
    return;
  if (prefill_ms)
    *prefill_ms = s->prefillMs;
  if (decode_ms)
    *decode_ms = s->decodeMs;
  if (decode_steps)
    *decode_steps = s->decodeSteps;
}
