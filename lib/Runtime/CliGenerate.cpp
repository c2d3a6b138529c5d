//===- CliGenerate.cpp - the `generate` command of the model CLI ----------===//
//
//   model generate --prompt ids.npy --max-new-tokens N [...]
//
// Token generation through a session (attnrt_session_*), for causal
// language models.
//
//===----------------------------------------------------------------------===//

#include "Cli.h"

#include <sys/stat.h>

#include "attnc/Runtime/SafeTensors.h"
#include "attnc/Runtime/attnrt.h"

#include "FileIO.h"
#include "Manifest.h"
#include "Npy.h"
#include "Support.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace attnrt {
namespace {

struct GenerateOptions {
  bool help = false, quiet = false;
  std::string weights, prompt, promptLengths, output, encoderInput,
      encoderLengths;
  long maxNewTokens = -1;
  attnrt_sampling sampling = {0.0f, 0, 1.0f};
  uint64_t seed = 0;
  int64_t eos = -1;
};

void printGenerateUsage(FILE *out, const std::string &prog) {
  std::fprintf(
      out,
      "usage: %s generate --prompt ids.npy --max-new-tokens N\n"
      "       [--prompt-lengths lengths.npy] [--temperature T] [--top-k K]\n"
      "       [--top-p P] [--seed S] [--eos ID] [--output new_ids.npy]\n"
      "       [--encoder-input ids.npy [--encoder-lengths lengths.npy]]\n"
      "       [--weights W.safetensors] [-q]\n"
      "\n"
      "Generates text with a causal language model (a decoder whose logits\n"
      "the manifest marks causal). A step compiled with --kv-cache N runs\n"
      "over its KV cache (prompt plus new tokens up to N): the prompt in one\n"
      "run when its token count is dynamic (input_ids Bx?), else token by\n"
      "token, then one token per sequence per run; a full-sequence model is\n"
      "re-run over its whole window per step (prompt plus new tokens up to\n"
      "its sequence length). An encoder-decoder (T5, BART) generates from\n"
      "--encoder-input; its prompt is the decoder's start (usually\n"
      "[[decoder_start_token_id]] per row).\n"
      "\n"
      "options:\n"
      "  --prompt FILE          token ids, i32/i64 [batch, width] (or "
      "[width])\n"
      "  --prompt-lengths FILE  i32/i64 [batch]: row b is its first "
      "lengths[b]\n"
      "                         ids (default: the whole width)\n"
      "  --max-new-tokens N     tokens to generate per row (>= 1)\n"
      "  --temperature T        0 (default): greedy; > 0: sample from\n"
      "                         softmax(logits / T)\n"
      "  --top-k K              sample among the K most likely (0: all)\n"
      "  --top-p P              and among the most likely reaching P (1: all)\n"
      "  --seed S               random seed for sampling (default 0)\n"
      "  --eos ID               a row stops after ID; the rest of it is ID\n"
      "  --output FILE          write the new ids, i64 [batch, N]\n"
      "  --encoder-input FILE   an encoder-decoder's encoder ids, i32/i64\n"
      "                         [batch, seq] (the prompt's batch)\n"
      "  --encoder-lengths FILE i32/i64 [batch]: encoder row b is its first\n"
      "                         lengths[b] ids (a model compiled with an\n"
      "                         attention_mask masks the rest)\n"
      "  --weights FILE         safetensors file, or the shard index of a\n"
      "                         sharded checkpoint "
      "(model.safetensors.index.json)\n"
      "                         (default: this executable's path + "
      ".safetensors)\n"
      "  -q                     print only the timing\n",
      prog.c_str());
}

/// A decimal float (finite), or false.
bool parseFloat(const std::string &s, double &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end == s.c_str() + s.size() && std::isfinite(out);
}

/// A decimal integer in [lo, hi], or false.
bool parseInt(const std::string &s, long long lo, long long hi,
              long long &out) {
  if (s.empty() || s.size() > 19)
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size() && out >= lo && out <= hi;
}

bool parseGenerateArgs(int argc, char **argv, GenerateOptions &o,
                       std::string &err) {
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i] ? argv[i] : "", value;
    size_t eq = a.find('=');
    bool inlineValue = a.compare(0, 2, "--") == 0 && eq != std::string::npos;
    if (inlineValue) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    if (a == "--help" || a == "-h") {
      o.help = true;
      continue;
    }
    if (a == "-q" || a == "--quiet") {
      o.quiet = true;
      continue;
    }
    static const char *const valued[] = {
        "--weights",     "--prompt", "--prompt-lengths", "--max-new-tokens",
        "--temperature", "--top-k",  "--top-p",          "--seed",
        "--eos",         "--output", "--encoder-input",  "--encoder-lengths"};
    if (std::find(std::begin(valued), std::end(valued), a) ==
        std::end(valued)) {
      err = "generate: unknown argument '" + a + "' (see generate --help)";
      return false;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        err = "generate: " + a + " needs a value";
        return false;
      }
      value = argv[++i] ? argv[i] : "";
    }
    if (value.empty()) {
      err = "generate: " + a + " needs a non-empty value";
      return false;
    }
    auto bad = [&](const char *what) {
      err = "generate: " + a + " expects " + what + ", got '" + value + "'";
      return false;
    };
    long long n;
    double f;
    if (a == "--weights" || a == "--prompt" || a == "--prompt-lengths" ||
        a == "--output" || a == "--encoder-input" || a == "--encoder-lengths") {
      std::string &slot = a == "--weights"           ? o.weights
                          : a == "--prompt"          ? o.prompt
                          : a == "--output"          ? o.output
                          : a == "--encoder-input"   ? o.encoderInput
                          : a == "--encoder-lengths" ? o.encoderLengths
                                                     : o.promptLengths;
      if (!slot.empty()) {
        err = "generate: " + a + " given twice";
        return false;
      }
      slot = value;
    } else if (a == "--max-new-tokens") {
      if (!parseInt(value, 1, 1 << 30, n))
        return bad("a positive integer");
      o.maxNewTokens = static_cast<long>(n);
    } else if (a == "--temperature") {
      if (!parseFloat(value, f) || f < 0)
        return bad("a finite number >= 0");
      o.sampling.temperature = static_cast<float>(f);
    } else if (a == "--top-k") {
      if (!parseInt(value, 0, INT64_MAX, n))
        return bad("an integer >= 0");
      o.sampling.top_k = n;
    } else if (a == "--top-p") {
      if (!parseFloat(value, f) || f <= 0 || f > 1)
        return bad("a number in (0, 1]");
      o.sampling.top_p = static_cast<float>(f);
    } else if (a == "--seed") {
      if (!parseInt(value, 0, INT64_MAX, n))
        return bad("an integer >= 0");
      o.seed = static_cast<uint64_t>(n);
    } else {
      if (!parseInt(value, 0, INT64_MAX, n))
        return bad("a token id >= 0");
      o.eos = n;
    }
  }
  if (o.help)
    return true;
  if (!o.encoderLengths.empty() && o.encoderInput.empty()) {
    err = "generate: --encoder-lengths needs --encoder-input";
    return false;
  }
  if (o.prompt.empty() || o.maxNewTokens < 0) {
    err = "generate: needs --prompt FILE.npy and --max-new-tokens N (see "
          "generate --help)";
    return false;
  }
  return true;
}

/// An i32/i64 .npy of rank `minRank` to 2 as int64 values.
bool readIds(const std::string &path, const char *what, size_t maxRank,
             std::vector<int64_t> &values, std::vector<int64_t> &shape,
             std::string &err) {
  NpyArray a;
  if (!readNpy(path, a, err))
    return false;
  if ((a.descr != "<i8" && a.descr != "<i4") || a.shape.empty() ||
      a.shape.size() > maxRank) {
    err = strFormat("%s: %s must be int32 or int64 of rank 1%s, got '%s' %s",
                    path.c_str(), what, maxRank > 1 ? " or 2" : "",
                    a.descr.c_str(), formatShapeTuple(a.shape).c_str());
    return false;
  }
  shape = a.shape;
  size_t n = a.dataBytes / a.itemSize;
  values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (a.descr == "<i8") {
      std::memcpy(&values[i], a.data() + i * 8, 8);
    } else {
      int32_t v;
      std::memcpy(&v, a.data() + i * 4, 4);
      values[i] = v;
    }
  }
  return true;
}

/// Row lengths, an i32/i64 .npy [rows] (`what` names it, `rowsWhat` the
/// rows in the message when the count differs).
bool readRowLengths(const std::string &path, const char *what, int64_t rows,
                    const char *rowsWhat, std::vector<int64_t> &lengths,
                    std::string &err) {
  std::vector<int64_t> shape;
  if (!readIds(path, what, 1, lengths, shape, err))
    return false;
  if (shape[0] == rows)
    return true;
  err = strFormat("%s: %lld lengths for %lld %s", path.c_str(),
                  static_cast<long long>(shape[0]),
                  static_cast<long long>(rows), rowsWhat);
  return false;
}

struct SessionFreer {
  attnrt_session *s;
  ~SessionFreer() { attnrt_session_free(s); }
};

} // namespace

int runGenerate(int argc, char **argv, const char *manifestText,
                void (*invoke)(void **), FILE *out, FILE *errOut) {
  auto fail = [&](const std::string &msg) {
    return printError(out, errOut, msg);
  };
  GenerateOptions o;
  std::string err;
  if (!parseGenerateArgs(argc, argv, o, err))
    return fail(err);
  if (o.help) {
    printGenerateUsage(out, progName(argv));
    std::fflush(out);
    return 0;
  }
  std::vector<int64_t> prompt, promptShape, lengths;
  if (!readIds(o.prompt, "the prompt", 2, prompt, promptShape, err))
    return fail(err);
  int64_t batch = promptShape.size() == 2 ? promptShape[0] : 1;
  int64_t width = promptShape.back();
  if (batch < 1 || width < 1)
    return fail(o.prompt + ": the prompt " + formatShapeTuple(promptShape) +
                " is empty");
  if (o.promptLengths.empty()) {
    lengths.assign(static_cast<size_t>(batch), width);
  } else if (!readRowLengths(o.promptLengths, "the prompt lengths", batch,
                             "prompt rows", lengths, err)) {
    return fail(err);
  }

  // The program's own model opens with what is linked beside it (an
  // encoder-decoder step's encoder).
  char openErr[1024];
  attnrt_model *m =
      manifestText && invoke
          ? attnrt_open(manifestText, invoke, openErr, sizeof(openErr))
          : attnrt_open_linked(openErr, sizeof(openErr));
  ModelCloser closer{m};
  if (!m)
    return fail(openErr);
  attnrt_session *session = attnrt_session_create(m, o.seed);
  SessionFreer freer{session};
  if (!session)
    return fail(attnrt_last_error(m));

  std::vector<int64_t> encoderIds, encoderShape, encoderLengths;
  if (!o.encoderInput.empty()) {
    if (!readIds(o.encoderInput, "the encoder input", 2, encoderIds,
                 encoderShape, err))
      return fail(err);
    int64_t rows = encoderShape.size() == 2 ? encoderShape[0] : 1;
    if (rows != batch)
      return fail(strFormat(
          "%s: %lld encoder rows for %lld prompt rows", o.encoderInput.c_str(),
          static_cast<long long>(rows), static_cast<long long>(batch)));
    if (!o.encoderLengths.empty() &&
        !readRowLengths(o.encoderLengths, "the encoder lengths", rows,
                        "encoder rows", encoderLengths, err))
      return fail(err);
    if (attnrt_session_set_encoder_input(
            session, encoderIds.data(),
            encoderLengths.empty() ? nullptr : encoderLengths.data(), rows,
            encoderShape.back()))
      return fail(attnrt_last_error(m));
  }
  std::vector<std::string> reads = {o.prompt};
  if (!o.promptLengths.empty())
    reads.push_back(o.promptLengths);
  if (!o.encoderInput.empty())
    reads.push_back(o.encoderInput);
  if (!o.encoderLengths.empty())
    reads.push_back(o.encoderLengths);
  if (attnrt_num_weights(m) > 0 && o.weights.empty()) {
    o.weights = weightsBesideExecutable();
    struct stat st;
    if (o.weights.empty() || ::stat(o.weights.c_str(), &st) != 0)
      return fail("the model has weights: pass --weights FILE.safetensors");
  }
  if (!o.weights.empty())
    for (const std::string &p : weightFilePaths(o.weights)) // and shards
      reads.push_back(p);
  std::vector<std::string> outputs, targets(1);
  std::vector<OutputKind> kinds(1);
  if (!o.output.empty()) {
    outputs.push_back(o.output);
    if (!checkOutputPath(o.output, reads, kinds[0], targets[0], err))
      return fail(err);
  }
  if (!o.weights.empty() && attnrt_bind_weights(m, o.weights.c_str()))
    return fail(attnrt_last_error(m));

  int64_t n = o.maxNewTokens;
  std::vector<int64_t> generated(static_cast<size_t>(batch * n));
  if (attnrt_session_generate(session, prompt.data(), lengths.data(), batch,
                              width, n, &o.sampling, o.eos, generated.data()))
    return fail(attnrt_last_error(m));
  if (!outputs.empty() &&
      !writeNpyOutputs(outputs, kinds, targets,
                       {{"<i8",
                         {batch, n},
                         generated.data(),
                         generated.size() * sizeof(int64_t)}},
                       err))
    return fail(err);

  if (!o.quiet)
    for (int64_t b = 0; b < batch; ++b) {
      std::fprintf(out, "row %lld:", static_cast<long long>(b));
      for (int64_t t = 0; t < n; ++t)
        std::fprintf(out, " %lld",
                     static_cast<long long>(generated[b * n + t]));
      std::fprintf(out, "\n");
    }
  int64_t capacity = 0;
  attnrt_session_shape(session, nullptr, &capacity, nullptr);
  double prefillMs = 0, decodeMs = 0;
  int64_t steps = 0;
  attnrt_session_timing(session, &prefillMs, &decodeMs, &steps);
  std::fprintf(out, "prefill: %.4g ms (%lld rows, capacity %lld tokens)\n",
               prefillMs, static_cast<long long>(batch),
               static_cast<long long>(capacity));
  if (steps > 0)
    std::fprintf(out,
                 "decode: %lld steps, %.4g ms per step, %.4g tokens/s "
                 "(%lld rows)\n",
                 static_cast<long long>(steps),
                 decodeMs / static_cast<double>(steps),
                 static_cast<double>(steps * batch) * 1000.0 / decodeMs,
                 static_cast<long long>(batch));
  std::fflush(out);
  return 0;
}

} // namespace attnrt
