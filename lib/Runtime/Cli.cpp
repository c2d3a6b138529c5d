//===- Cli.cpp - the compiled-model command line --------------------------===//
//
//   model [run] --weights W.safetensors|INDEX.json --input x.npy [...]
//         [--output y.npy ...] [--bench N] [--warmup N] [-q]
//   model generate ...                   (CliGenerate.cpp)
//   model --describe | --help
//
//===----------------------------------------------------------------------===//

#include "Cli.h"

#include <sys/stat.h>
#include <unistd.h>

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

struct Options {
  bool help = false, describe = false, quiet = false;
  std::string weights;
  std::vector<std::string> inputs, outputs;
  long bench = 0;   // 0: a single plain run.
  long warmup = -1; // -1: default (1 with --bench, else 0).
};

bool parseCount(const std::string &s, long &out) {
  if (s.empty() || s.size() > 9 ||
      s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::strtol(s.c_str(), nullptr, 10);
  return true;
}

bool parseArgs(int argc, char **argv, Options &o, std::string &err) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i] ? argv[i] : "";
    std::string value;
    bool hasInlineValue = false;
    if (a.compare(0, 2, "--") == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        hasInlineValue = true;
      }
    }
    if (a == "--help" || a == "-h") {
      o.help = true;
      continue;
    }
    if (a == "--describe") {
      o.describe = true;
      continue;
    }
    if (a == "-q" || a == "--quiet") {
      o.quiet = true;
      continue;
    }
    bool takesValue = a == "--weights" || a == "--input" || a == "--output" ||
                      a == "--bench" || a == "--warmup";
    if (!takesValue) {
      err = "unknown argument '" + a + "' (see --help)";
      return false;
    }
    if (!hasInlineValue) {
      if (i + 1 >= argc) {
        err = a + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (value.empty()) {
      err = a + " needs a non-empty value";
      return false;
    }
    if (a == "--weights") {
      if (!o.weights.empty()) {
        err = "--weights given twice";
        return false;
      }
      o.weights = value;
    } else if (a == "--input") {
      o.inputs.push_back(value);
    } else if (a == "--output") {
      o.outputs.push_back(value);
    } else {
      long n;
      if (!parseCount(value, n) || (a == "--bench" && n < 1)) {
        err = a + " expects a " +
              std::string(a == "--bench" ? "positive" : "non-negative") +
              " integer, got '" + value + "'";
        return false;
      }
      (a == "--bench" ? o.bench : o.warmup) = n;
    }
  }
  return true;
}

void printIOList(FILE *out, const Manifest &mf) {
  auto list = [&](const char *kind, const std::vector<int> &indices) {
    std::fprintf(out, "%ss (pass --%s in this order):\n", kind, kind);
    for (size_t i = 0; i < indices.size(); ++i) {
      const ManifestEntry &e = mf.entries[static_cast<size_t>(indices[i])];
      std::fprintf(out, "  %zu '%s' %s %s\n", i, e.name.c_str(),
                   dtypeName(e.dtype), formatShapeTuple(e.dims).c_str());
    }
    if (indices.empty())
      std::fprintf(out, "  (none)\n");
  };
  list("input", mf.inputs);
  list("output", mf.outputs);
}

void printUsage(FILE *out, const std::string &prog) {
  std::fprintf(
      out,
      "usage: %s --weights W.safetensors --input x.npy [--input ...]\n"
      "       %*s [--output y.npy ...] [--bench N] [--warmup N] [-q]\n"
      "       %s generate --prompt ids.npy --max-new-tokens N ... (see "
      "generate --help)\n"
      "       %s --describe | --help\n"
      "\n"
      "Runs a model compiled by attnc on .npy inputs ('run' may be given as\n"
      "the first argument), or generates text with a causal language model.\n"
      "\n"
      "options:\n"
      "  --weights FILE  safetensors file with the model's weights, or the\n"
      "                  shard index of a sharded checkpoint\n"
      "                  (model.safetensors.index.json; the shards beside it)\n"
      "                  (default: this executable's path + .safetensors)\n"
      "  --input FILE    .npy input, one per model input, in order, or\n"
      "  --input NAME=FILE  by the input's name, in any order\n"
      "  --output FILE   .npy file to write, one per model output, in order\n"
      "                  (optional: without it outputs are only summarized)\n"
      "  --bench N       run N timed iterations and report latency\n"
      "  --warmup N      untimed runs first (default 1 with --bench, else 0)\n"
      "  -q              print no output summary\n"
      "  --describe      print the model's manifest summary\n"
      "  --help          this text\n"
      "bf16 tensors are read and written as '<u2' .npy arrays of raw bits.\n",
      prog.c_str(), static_cast<int>(prog.size()), "", prog.c_str(),
      prog.c_str());
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void printDescription(FILE *out, const Manifest &mf) {
  std::fprintf(out, "attnc model (manifest version %d)\n", mf.version);
  std::fprintf(out, "target: %s\n", targetName(mf.target));
  uint64_t total = 0;
  for (int w : mf.weights)
    total += mf.entries[static_cast<size_t>(w)].bytes;
  std::fprintf(out, "weights: %s, %llu bytes\n",
               plural(mf.weights.size(), "tensor").c_str(),
               static_cast<unsigned long long>(total));
  int counts[std::size(kEntryKindNames)] = {};
  for (const ManifestEntry &e : mf.entries) {
    int k = static_cast<int>(e.kind);
    std::fprintf(out, "  %-6s %d '%s' %s %s", entryKindName(e.kind),
                 counts[k]++, e.name.c_str(), dtypeName(e.dtype),
                 formatShapeTuple(e.dims).c_str());
    // Transpose describes the tensor that panels lay out; concat and gather
    // the untransposed one.
    const ManifestEntry flat = e.unpaneled();
    const ManifestEntry src = e.untransposed();
    const char *equals = " = ";
    if (e.panels) {
      std::fprintf(out, " = %s of %s", e.pairs ? "pair panels" : "panels",
                   flat.isPlainWeight() ? formatShapeTuple(flat.dims).c_str()
                                        : "");
      equals = "";
    }
    if (e.transpose) {
      std::fprintf(out, "%stranspose of %s", equals,
                   src.isPlainWeight() ? formatShapeTuple(src.dims).c_str()
                                       : "");
      equals = "";
    }
    if (!src.concatParts.empty()) {
      std::string parts;
      for (size_t p = 0; p < src.concatParts.size(); ++p)
        parts += (p ? ", " : "") + src.concatParts[p];
      std::fprintf(out, "%sconcat(axis %d: %s)", equals, src.concatAxis,
                   parts.c_str());
    }
    if (src.isGather())
      std::fprintf(out, "%sgather(axis %d of %s: %s)", equals, src.gatherAxis,
                   formatShapeTuple(src.gatherSourceDims()).c_str(),
                   src.gatherRangesText().c_str());
    if (e.convert)
      std::fprintf(out, ", converted from the file's float type");
    if (e.idBound >= 0)
      std::fprintf(out, ", %s in [0, %lld)",
                   e.positions ? "run-time positions" : "embedding ids",
                   static_cast<long long>(e.idBound));
    if (e.causal)
      std::fprintf(out, ", causal language-model logits (generate)");
    if (e.recomputePast >= 0)
      std::fprintf(out,
                   ", generation recomputes the sequence once past %lld "
                   "tokens",
                   static_cast<long long>(e.recomputePast));
    if (!e.dimsFrom.empty()) {
      // Where each `?` comes from: the caller, or an earlier input.
      std::string from;
      for (size_t d = 0; d < e.dimsFrom.size(); ++d) {
        auto [input, axis] = e.dimsFrom[d];
        from += d ? ", " : "";
        from += input < 0 ? std::string("chosen per run")
                          : strFormat("input %d dimension %d", input, axis);
      }
      std::fprintf(out, ", dynamic sizes: %s", from.c_str());
    }
    std::fprintf(out, "\n");
  }
}

std::string formatValue(double v, DType t) {
  if (t == DType::I32 || t == DType::I64)
    return strFormat("%lld", static_cast<long long>(v));
  return strFormat("%.6g", v);
}

void printSummary(FILE *out, int index, const ManifestEntry &e,
                  const std::vector<int64_t> &dims,
                  const std::vector<unsigned char> &data) {
  uint64_t n = data.size() / dtypeSize(e.dtype);
  std::fprintf(out, "output %d '%s': %s %s", index, e.name.c_str(),
               dtypeName(e.dtype), formatShapeTuple(dims).c_str());
  if (n == 0) {
    std::fprintf(out, " (empty)\n");
    return;
  }
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  uint64_t nan = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double v = elementAsDouble(data.data(), e.dtype, static_cast<size_t>(i));
    if (std::isnan(v)) {
      ++nan;
      continue;
    }
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    sum += v;
  }
  if (nan == n) {
    std::fprintf(out, " all %llu values are NaN\n",
                 static_cast<unsigned long long>(n));
  } else {
    std::fprintf(
        out, " min %s max %s mean %.6g", formatValue(mn, e.dtype).c_str(),
        formatValue(mx, e.dtype).c_str(), sum / static_cast<double>(n - nan));
    if (nan)
      std::fprintf(out, " (%llu NaN)", static_cast<unsigned long long>(nan));
    std::fprintf(out, "\n");
  }
  const uint64_t shown = std::min<uint64_t>(n, 8);
  std::fprintf(out, "  values: [");
  for (uint64_t i = 0; i < shown; ++i)
    std::fprintf(out, "%s%s", i ? ", " : "",
                 formatValue(elementAsDouble(data.data(), e.dtype,
                                             static_cast<size_t>(i)),
                             e.dtype)
                     .c_str());
  std::fprintf(out, "%s]\n", shown < n ? ", ..." : "");
}

std::string nameList(const Manifest &mf, const std::vector<int> &list) {
  std::string s;
  for (size_t i = 0; i < list.size(); ++i)
    s += (i ? ", " : "") + mf.entries[static_cast<size_t>(list[i])].name;
  return s;
}

/// `--input name=file.npy` values (all named, each input once) reordered
/// into manifest order; positional values are left as they are. A value is
/// named when its text before the first '=' is one of the model's inputs.
bool resolveNamedInputs(const Manifest &mf, std::vector<std::string> &inputs,
                        std::string &err) {
  auto inputIndex = [&](const std::string &v) -> int {
    size_t eq = v.find('=');
    if (eq == std::string::npos)
      return -1;
    std::string name = v.substr(0, eq);
    for (size_t i = 0; i < mf.inputs.size(); ++i)
      if (mf.entries[static_cast<size_t>(mf.inputs[i])].name == name)
        return static_cast<int>(i);
    return -1;
  };
  size_t named = 0;
  for (const std::string &v : inputs)
    named += inputIndex(v) >= 0;
  if (named == 0)
    return true;
  if (named != inputs.size()) {
    err = "give every --input as name=file.npy or none of them (the model's "
          "inputs: " +
          nameList(mf, mf.inputs) + ")";
    return false;
  }
  std::vector<std::string> ordered(mf.inputs.size());
  for (const std::string &v : inputs) {
    int i = inputIndex(v);
    if (!ordered[static_cast<size_t>(i)].empty()) {
      err = "--input " + v.substr(0, v.find('=')) + " given twice";
      return false;
    }
    ordered[static_cast<size_t>(i)] = v.substr(v.find('=') + 1);
    if (ordered[static_cast<size_t>(i)].empty()) {
      err = "--input " + v + " needs a file after '='";
      return false;
    }
  }
  for (size_t i = 0; i < ordered.size(); ++i)
    if (ordered[i].empty()) {
      err = "no --input " + mf.entries[static_cast<size_t>(mf.inputs[i])].name +
            "=FILE.npy given (the model's inputs: " + nameList(mf, mf.inputs) +
            ")";
      return false;
    }
  inputs = std::move(ordered);
  return true;
}

} // namespace

std::string progName(char **argv) {
  std::string p = argv && argv[0] ? argv[0] : "model";
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

/// The path of this executable plus ".safetensors", or "" if unknown.
std::string weightsBesideExecutable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "";
  return std::string(buf, static_cast<size_t>(n)) + ".safetensors";
}

/// Writes `arrays[i]` to `paths[i]` (checked by checkOutputPath into
/// `kinds` and `targets`): every file to a temporary file first, then the
/// devices in place, then the renames, so that a failure leaves no
/// partially written file behind.
bool writeNpyOutputs(const std::vector<std::string> &paths,
                     const std::vector<OutputKind> &kinds,
                     const std::vector<std::string> &targets,
                     const std::vector<NpyOut> &arrays, std::string &err) {
  std::vector<std::string> temps(paths.size());
  auto removeTemps = [&] {
    for (const std::string &t : temps)
      if (!t.empty())
        std::remove(t.c_str());
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    if (kinds[i] != OutputKind::File)
      continue;
    const NpyOut &a = arrays[i];
    if (!writeNpyTemp(targets[i], a.descr, a.dims, a.data, a.bytes, temps[i],
                      err)) {
      removeTemps();
      if (paths[i] != targets[i])
        err = paths[i] + " (" + err + ")";
      return false;
    }
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (kinds[i] != OutputKind::Device)
      continue;
    const NpyOut &a = arrays[i];
    std::string header = npyHeader(a.descr, a.dims);
    if (!writeInPlace(paths[i],
                      {{header.data(), header.size()}, {a.data, a.bytes}},
                      err)) {
      removeTemps();
      return false;
    }
  }
  // Undo the renames of new files if a later one still fails.
  std::vector<bool> existed(temps.size(), false);
  for (size_t i = 0; i < temps.size(); ++i) {
    struct stat st;
    existed[i] = ::stat(targets[i].c_str(), &st) == 0;
  }
  for (size_t i = 0; i < temps.size(); ++i) {
    if (temps[i].empty())
      continue;
    if (!commitFile(temps[i], targets[i], err)) {
      temps[i].clear();
      removeTemps();
      for (size_t k = 0; k < i; ++k)
        if (!existed[k] && kinds[k] == OutputKind::File)
          std::remove(targets[k].c_str());
      return false;
    }
    temps[i].clear();
  }
  return true;
}

/// "error: <msg>" on errOut after everything written to out; returns the
/// exit code 1.
int printError(FILE *out, FILE *errOut, const std::string &msg) {
  std::fflush(out);
  std::fprintf(errOut, "error: %s\n", msg.c_str());
  std::fflush(errOut);
  return 1;
}

int runCli(int argc, char **argv, const char *manifestText,
           void (*invoke)(void **), FILE *out, FILE *errOut) {
  auto fail = [&](const std::string &msg) {
    return printError(out, errOut, msg);
  };
  // `model generate ...`; `model run ...` is the plain form.
  std::string command = argc > 1 && argv[1] ? argv[1] : "";
  if (command == "generate")
    return runGenerate(argc, argv, manifestText, invoke, out, errOut);
  std::vector<char *> args(argv, argv + argc);
  if (command == "run")
    args.erase(args.begin() + 1);
  argc = static_cast<int>(args.size());
  argv = args.data();
  Options o;
  std::string err;
  if (!parseArgs(argc, argv, o, err))
    return fail(err);

  if (!manifestText) {
    manifestText = linkedModelManifest();
    invoke = linkedModelInvoke();
  }
  // --help and --describe only need the manifest (no driver, no weights).
  Manifest mf;
  std::string manifestErr;
  bool manifestOk = false;
  if (!manifestText || !invoke) {
    char buf[512];
    attnrt_close(attnrt_open_linked(buf, sizeof(buf)));
    manifestErr = buf;
  } else if (parseManifest(manifestText, mf, manifestErr)) {
    manifestOk = true;
  } else {
    manifestErr = "attnrt: invalid model manifest: " + manifestErr;
  }
  if (o.help) {
    printUsage(out, progName(argv));
    std::fprintf(out, "\n");
    if (manifestOk) {
      std::fprintf(out, "this model: target %s, %s\n", targetName(mf.target),
                   plural(mf.weights.size(), "weight").c_str());
      printIOList(out, mf);
    } else {
      std::fprintf(out, "(no usable model: %s)\n", manifestErr.c_str());
    }
    std::fflush(out);
    return 0;
  }
  if (!manifestOk)
    return fail(manifestErr);
  if (o.describe) {
    printDescription(out, mf);
    std::fflush(out);
    return 0;
  }

  // Inputs by name (`--input input_ids=ids.npy`, any order) or, without
  // names, one per model input in order.
  if (!resolveNamedInputs(mf, o.inputs, err))
    return fail(err);
  // Check the command line against the model before doing any work.
  // "the model takes 2 inputs (a, b) but 1 --input was given".
  auto countMismatch = [&](const char *verb, const std::string &kind,
                           const std::vector<int> &entries, size_t given) {
    std::string flags =
        std::to_string(given) + " --" + kind + (given == 1 ? " was" : " were");
    return fail(strFormat("the model %s %s (%s) but %s given", verb,
                          plural(entries.size(), kind.c_str()).c_str(),
                          nameList(mf, entries).c_str(), flags.c_str()));
  };
  if (o.inputs.size() != mf.inputs.size())
    return countMismatch("takes", "input", mf.inputs, o.inputs.size());
  if (!o.outputs.empty() && o.outputs.size() != mf.outputs.size())
    return countMismatch("has", "output", mf.outputs, o.outputs.size());
  // Without --weights, the weights attn-compile wrote beside the
  // executable (model -> model.safetensors).
  std::string besideWeights;
  if (!mf.weights.empty() && o.weights.empty()) {
    besideWeights = weightsBesideExecutable();
    struct stat st;
    if (besideWeights.empty() || ::stat(besideWeights.c_str(), &st) != 0)
      return fail("the model has " + plural(mf.weights.size(), "weight") +
                  ": pass --weights FILE.safetensors");
    o.weights = besideWeights;
  }

  // Outputs are checked before anything is read or computed: never an
  // input (or another output), never a directory; devices and FIFOs are
  // written in place, regular files through a temporary file and a rename.
  std::vector<std::string> readPaths = o.inputs;
  if (!o.weights.empty())
    for (const std::string &p : weightFilePaths(o.weights)) // and shards
      readPaths.push_back(p);
  std::vector<OutputKind> outputKinds(o.outputs.size());
  std::vector<std::string> outputTargets(o.outputs.size());
  for (size_t i = 0; i < o.outputs.size(); ++i) {
    std::vector<std::string> others = readPaths;
    others.insert(others.end(), o.outputs.begin(), o.outputs.begin() + i);
    if (!checkOutputPath(o.outputs[i], others, outputKinds[i], outputTargets[i],
                         err))
      return fail(err);
  }

  char openErr[1024];
  attnrt_model *m = attnrt_open(manifestText, invoke, openErr, sizeof(openErr));
  ModelCloser closer{m};
  if (!m)
    return fail(openErr);
  if (!o.weights.empty() && attnrt_bind_weights(m, o.weights.c_str()))
    return fail(attnrt_last_error(m));

  for (size_t i = 0; i < mf.inputs.size(); ++i) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.inputs[i])];
    NpyArray a;
    if (!readNpy(o.inputs[i], a, err) ||
        !checkNpyForInput(o.inputs[i], a, static_cast<int>(i), e, err))
      return fail(err);
    // The .npy file's shape, which dynamic inputs take from it.
    if (attnrt_set_input_shaped(m, static_cast<int>(i), a.data(), a.dataBytes,
                                static_cast<int>(a.shape.size()),
                                a.shape.data()))
      return fail(attnrt_last_error(m));
  }

  long warmup = o.warmup >= 0 ? o.warmup : (o.bench ? 1 : 0);
  long runs = o.bench ? o.bench : 1;
  std::vector<double> times;
  for (long r = 0; r < warmup + runs; ++r) {
    if (attnrt_run(m))
      return fail(attnrt_last_error(m));
    if (r >= warmup)
      times.push_back(attnrt_last_run_ms(m));
  }

  std::vector<std::vector<unsigned char>> results(mf.outputs.size());
  // This run's output shapes (dynamic ones follow the inputs).
  std::vector<std::vector<int64_t>> shapes(mf.outputs.size());
  for (size_t i = 0; i < mf.outputs.size(); ++i) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.outputs[i])];
    const int64_t *dims = attnrt_output_shape(m, static_cast<int>(i));
    if (!dims)
      return fail(attnrt_last_error(m));
    shapes[i].assign(dims, dims + e.dims.size());
    uint64_t elements = 0;
    numElements(shapes[i], elements);
    results[i].resize(static_cast<size_t>(elements * dtypeSize(e.dtype)));
    if (attnrt_get_output(m, static_cast<int>(i), results[i].data(),
                          results[i].size()))
      return fail(attnrt_last_error(m));
  }
  std::vector<NpyOut> arrays;
  for (size_t i = 0; i < o.outputs.size(); ++i) {
    const ManifestEntry &e = mf.entries[static_cast<size_t>(mf.outputs[i])];
    arrays.push_back({dtypeInfo(e.dtype).npyDescr, shapes[i], results[i].data(),
                      results[i].size()});
  }
  if (!writeNpyOutputs(o.outputs, outputKinds, outputTargets, arrays, err))
    return fail(err);

  if (!o.quiet) {
    if (!o.weights.empty())
      std::fprintf(
          out, "weights: read %llu bytes of %llu-byte file\n",
          static_cast<unsigned long long>(attnrt_weight_bytes_read(m)),
          static_cast<unsigned long long>(attnrt_weight_file_bytes(m)));
    for (size_t i = 0; i < mf.outputs.size(); ++i)
      printSummary(out, static_cast<int>(i),
                   mf.entries[static_cast<size_t>(mf.outputs[i])], shapes[i],
                   results[i]);
    if (!o.bench)
      std::fprintf(out, "time: %.4g ms\n", times.back());
  }
  if (o.bench) {
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (double t : times)
      sum += t;
    size_t k = sorted.size();
    double median =
        k % 2 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2;
    std::fprintf(out,
                 "latency: mean %.4g ms, median %.4g ms, min %.4g ms over %zu "
                 "runs\n",
                 sum / static_cast<double>(k), median, sorted.front(), k);
  }
  std::fflush(out);
  return 0;
}

} // namespace attnrt

extern "C" int attnrt_main(int argc, char **argv) {
  return attnrt::runCli(argc, argv, nullptr, nullptr, stdout, stderr);
}
