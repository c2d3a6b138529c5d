//===- ConfigReaders.cpp - config.json readers of the HF builders ---------===//
//
// What several architectures read the same way from config.json: head
// counts that must divide the width, the LLaMA-style sizes, the rotary
// settings (rope_theta / rope_scaling in transformers 4, rope_parameters in
// 5, with every scaling type attn implements) and the sliding windows.
// Each reader reports a bad value at its key.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

LogicalResult mlir::attn::hf::checkHeadsDivide(Checkpoint &ckpt,
                                               StringRef widthKey, int64_t d,
                                               StringRef headsKey,
                                               int64_t heads) {
  if (d % heads == 0)
    return success();
  return emitError(ckpt.keyLoc(headsKey))
         << widthKey << " " << d << " is not divisible by " << headsKey << " "
         << heads;
}

LogicalResult mlir::attn::hf::checkKvHeadsDivide(Checkpoint &ckpt,
                                                 int64_t heads,
                                                 StringRef kvHeadsKey,
                                                 int64_t kvHeads) {
  if (heads % kvHeads == 0)
    return success();
  return emitError(ckpt.keyLoc(kvHeadsKey))
         << "num_attention_heads " << heads << " is not a multiple of "
         << kvHeadsKey << " " << kvHeads;
}

FailureOr<int64_t> mlir::attn::hf::rotaryWidth(Checkpoint &ckpt,
                                               int64_t headDim,
                                               const RopeConfig &rope,
                                               StringRef factorKey,
                                               StringRef factorName) {
  int64_t rotaryDim = static_cast<int64_t>(headDim * rope.partialFactor);
  if (rotaryDim < 2 || rotaryDim % 2 != 0)
    return emitError(ckpt.keyLoc(factorKey))
           << "the rotary width " << rotaryDim << " (head width " << headDim
           << " times " << factorName << ") must be even and at least 2";
  if (failed(checkRopeWidth(ckpt, rope, rotaryDim)))
    return failure();
  return rotaryDim;
}

LogicalResult mlir::attn::hf::checkRopeWidth(Checkpoint &ckpt,
                                             const RopeConfig &rope,
                                             int64_t rotaryDim) {
  if (rope.scaling != RopeConfig::Scaling::Dynamic &&
      rope.scaling != RopeConfig::Scaling::LongRope)
    return success();
  // Only readRope sets these types, from one of the two keys.
  StringRef objectKey =
      ckpt.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  if (rope.scaling == RopeConfig::Scaling::Dynamic) {
    if (rotaryDim > 2)
      return success();
    return emitError(ckpt.keyLoc(objectKey))
           << "config.json key \"" << objectKey
           << "\" has rope_type \"dynamic\", whose base grows with exponent "
              "R / (R - 2): the rotary width R must exceed 2, got "
           << rotaryDim;
  }
  for (StringRef key : {"short_factor", "long_factor"}) {
    size_t n =
        (key == "short_factor" ? rope.shortFactor : rope.longFactor).size();
    if (static_cast<int64_t>(n) * 2 != rotaryDim)
      return emitError(ckpt.keyLoc(key))
             << "config.json key \"" << objectKey << "." << key << "\" has "
             << n << " values; the rotary width " << rotaryDim << " needs "
             << rotaryDim / 2 << ", one per pair";
  }
  return success();
}

/// A bound of a config value's range as an error message shows it (0, 1,
/// inf).
static std::string boundText(double v) {
  if (std::isinf(v))
    return "inf";
  std::string text;
  llvm::raw_string_ostream os(text);
  if (v == std::floor(v))
    os << static_cast<long long>(v);
  else
    os << v;
  return text;
}

FailureOr<DecoderSizes> mlir::attn::hf::readDecoderSizes(Checkpoint &c) {
  auto dims =
      c.getPositiveInts({"vocab_size", "hidden_size", "intermediate_size",
                         "num_hidden_layers", "num_attention_heads"});
  if (failed(dims))
    return failure();
  DecoderSizes sizes{(*dims)[0], (*dims)[1], (*dims)[2],
                     (*dims)[3], (*dims)[4], (*dims)[4]};
  FailureOr<int64_t> kvHeads =
      c.getPositiveInt("num_key_value_heads", sizes.heads);
  if (failed(kvHeads))
    return failure();
  sizes.kvHeads = *kvHeads;
  return sizes;
}

FailureOr<RopeConfig> mlir::attn::hf::readRope(Checkpoint &c,
                                               double defaultTheta,
                                               StringRef thetaKey,
                                               StringRef partialKey) {
  RopeConfig rope{defaultTheta};
  // transformers 5 writes "rope_parameters"; transformers 4 wrote the
  // scaling as "rope_scaling" beside a top-level theta.
  StringRef objectKey;
  const llvm::json::Object *params = nullptr;
  for (StringRef key : {"rope_parameters", "rope_scaling"}) {
    const llvm::json::Value *v = c.getValue(key);
    if (!v || v->kind() == llvm::json::Value::Null)
      continue;
    params = v->getAsObject();
    if (!params)
      return emitError(c.keyLoc(key))
             << "config.json key \"" << key
             << "\" must be an object of rotary settings (rope_type, "
                "rope_theta, ...)";
    objectKey = key;
    break;
  }
  bool thetaSet = false, partialSet = false, originalSet = false;
  bool factorSet = false;
  if (params) {
    // The type first (a scaled type explains its other keys), then the
    // keys in order, so that the error is the same whatever the map order.
    // transformers 4 also spelled the type "type".
    StringRef typeKey = params->get("rope_type") ? "rope_type" : "type";
    StringRef type = "default";
    if (const llvm::json::Value *t = params->get(typeKey)) {
      std::optional<StringRef> name = t->getAsString();
      if (!name)
        return emitError(c.keyLoc(typeKey))
               << "config.json key \"" << objectKey << "." << typeKey
               << "\" must be a string";
      type = *name;
    }
    std::optional<RopeConfig::Scaling> scaling =
        llvm::StringSwitch<std::optional<RopeConfig::Scaling>>(type)
            .Case("default", RopeConfig::Scaling::Default)
            .Case("linear", RopeConfig::Scaling::Linear)
            .Case("llama3", RopeConfig::Scaling::Llama3)
            .Case("yarn", RopeConfig::Scaling::Yarn)
            .Case("dynamic", RopeConfig::Scaling::Dynamic)
            .Case("longrope", RopeConfig::Scaling::LongRope)
            .Default(std::nullopt);
    if (!scaling)
      return emitError(c.keyLoc(typeKey))
             << "config.json key \"" << objectKey << ".rope_type\" is \""
             << type
             << "\", which attnc does not know (supported: default, linear, "
                "llama3, yarn, dynamic, longrope)";
    rope.scaling = *scaling;
    SmallVector<StringRef> keys;
    for (const auto &entry : *params)
      keys.push_back(entry.first);
    llvm::sort(keys);
    for (StringRef key : keys) {
      const llvm::json::Value &value = *params->get(key);
      if (key == "rope_type" || key == "type")
        continue;
      auto number = [&](double lo, bool loOpen, double hi,
                        double &out) -> LogicalResult {
        std::optional<double> v = value.getAsNumber();
        if (!v || !std::isfinite(*v) || (loOpen ? *v <= lo : *v < lo) ||
            *v > hi)
          return emitError(c.keyLoc(key))
                 << "config.json key \"" << objectKey << "." << key
                 << "\" must be a number in " << (loOpen ? "(" : "[")
                 << boundText(lo) << ", " << boundText(hi)
                 << (std::isinf(hi) ? ")" : "]");
        out = *v;
        return success();
      };
      const double inf = std::numeric_limits<double>::infinity();
      bool llama3 = rope.scaling == RopeConfig::Scaling::Llama3;
      bool yarn = rope.scaling == RopeConfig::Scaling::Yarn;
      bool longrope = rope.scaling == RopeConfig::Scaling::LongRope;
      LogicalResult ok = success();
      if (key == "rope_theta") {
        ok = number(0.0, true, inf, rope.theta);
        thetaSet = true;
      } else if (key == "partial_rotary_factor" && !partialKey.empty()) {
        ok = number(0.0, true, 1.0, rope.partialFactor);
        partialSet = true;
      } else if (key == "factor" &&
                 rope.scaling != RopeConfig::Scaling::Default) {
        // yarn, longrope: null means max_position_embeddings over the
        // original.
        if (!((yarn || longrope) && value.kind() == llvm::json::Value::Null)) {
          ok = number(0.0, true, inf, rope.factor);
          factorSet = true;
        }
      } else if (key == "original_max_position_embeddings" &&
                 (llama3 || yarn || longrope)) {
        ok = number(0.0, true, inf, rope.originalMaxPositions);
        originalSet = true;
      } else if (llama3 && key == "low_freq_factor") {
        ok = number(0.0, true, inf, rope.lowFreqFactor);
      } else if (llama3 && key == "high_freq_factor") {
        ok = number(0.0, true, inf, rope.highFreqFactor);
      } else if (yarn && (key == "beta_fast" || key == "beta_slow")) {
        // null: the default.
        if (value.kind() != llvm::json::Value::Null)
          ok = number(0.0, true, inf,
                      key == "beta_fast" ? rope.betaFast : rope.betaSlow);
      } else if ((yarn || longrope) && key == "attention_factor" &&
                 value.kind() == llvm::json::Value::Null) {
        // null: from the factor.
      } else if (longrope && key == "attention_factor") {
        // attn.rotary's scale must be positive.
        double v = 0.0;
        ok = number(0.0, true, inf, v);
        rope.attentionFactor = v;
      } else if (longrope && (key == "short_factor" || key == "long_factor")) {
        // One factor per rotary pair, dividing its frequency.
        const llvm::json::Array *list = value.getAsArray();
        SmallVector<double> &out =
            key == "short_factor" ? rope.shortFactor : rope.longFactor;
        if (list)
          for (const llvm::json::Value &item : *list) {
            std::optional<double> v = item.getAsNumber();
            if (!v || !std::isfinite(*v) || *v <= 0.0) {
              list = nullptr;
              break;
            }
            out.push_back(*v);
          }
        if (!list || list->empty())
          return emitError(c.keyLoc(key))
                 << "config.json key \"" << objectKey << "." << key
                 << "\" must be a non-empty list of positive numbers";
      } else if (yarn && (key == "attention_factor" || key == "mscale" ||
                          key == "mscale_all_dim")) {
        if (value.kind() != llvm::json::Value::Null) {
          double v = 0.0;
          ok = number(0.0, key != "attention_factor", inf, v);
          (key == "attention_factor" ? rope.attentionFactor
           : key == "mscale"         ? rope.mscale
                                     : rope.mscaleAllDim) = v;
        }
      } else if (yarn && key == "truncate") {
        std::optional<bool> v = value.getAsBoolean();
        if (!v)
          return emitError(c.keyLoc(key)) << "config.json key \"" << objectKey
                                          << ".truncate\" must "
                                             "be true or false";
        rope.truncate = *v;
      } else {
        return emitError(c.keyLoc(key))
               << "config.json key \"" << objectKey << "." << key
               << "\" is not supported with rope_type \"" << type
               << "\" for this architecture; it would change the rotary "
                  "positions";
      }
      if (failed(ok))
        return failure();
    }
    if ((rope.scaling == RopeConfig::Scaling::Linear ||
         rope.scaling == RopeConfig::Scaling::Llama3 ||
         rope.scaling == RopeConfig::Scaling::Dynamic) &&
        !factorSet)
      return emitError(c.keyLoc(objectKey))
             << "config.json key \"" << objectKey << "\" has rope_type \""
             << type << "\" but no \"factor\"";
    // Equal bands would divide by zero in the smoothing.
    if (rope.scaling == RopeConfig::Scaling::Llama3 &&
        !(rope.highFreqFactor > rope.lowFreqFactor))
      return emitError(c.keyLoc("high_freq_factor"))
             << "config.json key \"" << objectKey
             << ".high_freq_factor\" must exceed low_freq_factor";
    if (rope.scaling == RopeConfig::Scaling::LongRope)
      for (StringRef key : {"short_factor", "long_factor"})
        if (!params->get(key))
          return emitError(c.keyLoc(objectKey))
                 << "config.json key \"" << objectKey
                 << "\" has rope_type \"longrope\" but no \"" << key << "\"";
  }
  if (!thetaSet) {
    FailureOr<double> theta = c.getFloat(thetaKey, defaultTheta);
    if (failed(theta))
      return failure();
    if (*theta <= 0.0)
      return emitError(c.keyLoc(thetaKey))
             << "config.json key \"" << thetaKey << "\" must be positive, got "
             << *theta;
    rope.theta = *theta;
  }
  if (!partialKey.empty() && !partialSet) {
    FailureOr<double> partial = c.getFloat(partialKey, rope.partialFactor);
    if (failed(partial))
      return failure();
    if (*partial <= 0.0 || *partial > 1.0)
      return emitError(c.keyLoc(partialKey))
             << "config.json key \"" << partialKey
             << "\" must be in (0, 1], got " << *partial;
    rope.partialFactor = *partial;
  }
  bool longrope = rope.scaling == RopeConfig::Scaling::LongRope;
  // transformers takes longrope's pre-training context from the top-level
  // key first (Phi-3 keeps it there), over the one in the rotary settings.
  if ((rope.scaling == RopeConfig::Scaling::Llama3 ||
       rope.scaling == RopeConfig::Scaling::Yarn || longrope) &&
      (!originalSet ||
       (longrope && c.has("original_max_position_embeddings")))) {
    // As transformers: the top-level key, else the model's own context.
    StringRef key = c.has("original_max_position_embeddings")
                        ? "original_max_position_embeddings"
                        : "max_position_embeddings";
    FailureOr<double> original = c.getFloat(key);
    if (failed(original))
      return failure();
    if (*original <= 0.0)
      return emitError(c.keyLoc(key))
             << "config.json key \"" << key << "\" must be positive";
    rope.originalMaxPositions = *original;
  }
  if ((rope.scaling == RopeConfig::Scaling::Yarn || longrope) && !factorSet) {
    FailureOr<double> maxPositions = c.getFloat("max_position_embeddings");
    if (failed(maxPositions))
      return failure();
    rope.factor = *maxPositions / rope.originalMaxPositions;
  }
  // The length past which the frequencies change: dynamic grows the base
  // past the model's context, longrope takes its long factors past the
  // pre-training context (a length L exceeds x when it exceeds floor(x)).
  if (rope.scaling == RopeConfig::Scaling::Dynamic) {
    FailureOr<int64_t> maxPositions =
        c.getPositiveInt("max_position_embeddings");
    if (failed(maxPositions))
      return failure();
    rope.lengthThreshold = *maxPositions;
  }
  if (longrope) {
    // A length threshold: a whole number of positions, and one that a
    // sequence can reach.
    const double maxThreshold = 2147483647.0;
    if (rope.originalMaxPositions < 1.0 ||
        rope.originalMaxPositions > maxThreshold)
      return emitError(c.keyLoc("original_max_position_embeddings"))
             << "config.json key \"original_max_position_embeddings\" must "
                "be in [1, 2147483647] for rope_type \"longrope\", got "
             << rope.originalMaxPositions;
    rope.lengthThreshold =
        static_cast<int64_t>(std::floor(rope.originalMaxPositions));
  }
  return rope;
}

SmallVector<double>
RopeConfig::inverseFrequencies(int64_t rotaryDim,
                               ArrayRef<double> extFactors) const {
  if (scaling == Scaling::Default)
    return {};
  // transformers computes these in float32: so does this.
  const double pi = llvm::numbers::pi;
  auto f32 = [](double v) { return static_cast<float>(v); };
  // llama3: long wavelengths interpolated by `factor`, short ones kept, the
  // band between smoothed.
  float lowWavelen = f32(originalMaxPositions / lowFreqFactor);
  float highWavelen = f32(originalMaxPositions / highFreqFactor);
  // yarn: a linear ramp over the pair index between extrapolated (kept)
  // and interpolated (divided by `factor`) frequencies, over [low, high].
  auto correctionDim = [&](double rotations) {
    return (static_cast<double>(rotaryDim) *
            std::log(originalMaxPositions / (rotations * 2.0 * pi))) /
           (2.0 * std::log(theta));
  };
  double low = correctionDim(betaFast), high = correctionDim(betaSlow);
  if (truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(rotaryDim - 1));
  if (low == high)
    high += 0.001;

  int64_t half = rotaryDim / 2;
  SmallVector<double> out(half);
  for (int64_t i = 0; i < half; ++i) {
    // base^(2i / R), whose inverse is the unscaled frequency.
    float wavePower = std::pow(f32(theta), f32(2 * i) / f32(rotaryDim));
    float f = 1.0f / wavePower;
    switch (scaling) {
    case Scaling::Default:
    case Scaling::Dynamic:
      break;
    case Scaling::LongRope:
      f = 1.0f / (f32(extFactors[i]) * wavePower);
      break;
    case Scaling::Linear:
      f /= f32(factor);
      break;
    case Scaling::Llama3: {
      float wavelen = f32(2.0 * pi) / f;
      float scaled = wavelen > lowWavelen ? f / f32(factor) : f;
      if (!(wavelen < highWavelen) && !(wavelen > lowWavelen)) {
        float smooth =
            (f32(originalMaxPositions) / wavelen - f32(lowFreqFactor)) /
            f32(highFreqFactor - lowFreqFactor);
        scaled = (1.0f - smooth) * scaled / f32(factor) + smooth * scaled;
      }
      f = scaled;
      break;
    }
    case Scaling::Yarn: {
      float ramp =
          std::clamp((f32(i) - f32(low)) / f32(high - low), 0.0f, 1.0f);
      float extrapolation = 1.0f - ramp;
      float interpolated = 1.0f / (f32(factor) * wavePower);
      f = interpolated * (1.0f - extrapolation) + f * extrapolation;
      break;
    }
    }
    out[i] = f;
  }
  return out;
}

SmallVector<double> RopeConfig::inverseFrequencies(int64_t rotaryDim) const {
  return inverseFrequencies(rotaryDim, shortFactor);
}

SmallVector<double>
RopeConfig::longInverseFrequencies(int64_t rotaryDim) const {
  if (scaling != Scaling::LongRope)
    return {};
  return inverseFrequencies(rotaryDim, longFactor);
}

double RopeConfig::cosSinScale() const {
  if (scaling == Scaling::LongRope) {
    if (attentionFactor)
      return *attentionFactor;
    // As transformers: sqrt(1 + ln(factor) / ln(original context)).
    if (factor <= 1.0)
      return 1.0;
    return std::sqrt(1.0 + std::log(factor) / std::log(originalMaxPositions));
  }
  if (scaling != Scaling::Yarn)
    return 1.0;
  if (attentionFactor)
    return *attentionFactor;
  auto mscaleOf = [](double scale, double m) {
    return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
  };
  if (mscale && mscaleAllDim)
    return mscaleOf(factor, *mscale) / mscaleOf(factor, *mscaleAllDim);
  return mscaleOf(factor, 1.0);
}

FailureOr<int64_t> mlir::attn::hf::layerWindow(Checkpoint &c, int64_t layer,
                                               int64_t numLayers,
                                               StringRef allLayersKey) {
  auto window = [&](StringRef key) -> FailureOr<int64_t> {
    if (!c.has(key))
      return emitError(c.keyLoc("layer_types"))
             << "config.json key \"layer_types\" makes layer " << layer
             << " sliding-window attention, but \"" << key << "\" is not set";
    return c.getPositiveInt(key);
  };
  if (const llvm::json::Value *types = c.getValue("layer_types");
      types && types->kind() != llvm::json::Value::Null) {
    const llvm::json::Array *list = types->getAsArray();
    if (!list || static_cast<int64_t>(list->size()) != numLayers)
      return emitError(c.keyLoc("layer_types"))
             << "config.json key \"layer_types\" must be a list of "
             << numLayers << " layer types (num_hidden_layers)";
    std::optional<StringRef> type = (*list)[layer].getAsString();
    if (type && *type == "full_attention")
      return 0;
    if (type && *type == "sliding_attention")
      return window("sliding_window");
    return emitError(c.keyLoc("layer_types"))
           << "config.json key \"layer_types\": layer " << layer << " has type "
           << (type ? ("\"" + *type + "\"").str()
                    : std::string("(not a string)"))
           << "; supported: \"full_attention\", \"sliding_attention\"";
  }
  if (allLayersKey.empty() || !c.has(allLayersKey))
    return 0;
  return c.getPositiveInt(allLayersKey);
}
