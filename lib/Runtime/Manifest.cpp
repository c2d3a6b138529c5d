//===- Manifest.cpp - compiled-model manifest -----------------------------===//

#include "Manifest.h"

#include <set>

namespace attnrt {

std::vector<int64_t> ManifestEntry::gatherSourceDims() const {
  std::vector<int64_t> src = dims;
  if (isGather())
    src[static_cast<size_t>(gatherAxis)] = gatherSourceExtent;
  return src;
}

ManifestEntry ManifestEntry::unpaneled() const {
  ManifestEntry e = *this;
  if (e.panels) {
    const int64_t rows = e.pairs ? 2 : 1;
    e.panels = e.pairs = false;
    e.dims = {rows * dims[1], dims[0] * dims[2] / rows};
  }
  return e;
}

ManifestEntry ManifestEntry::untransposed() const {
  ManifestEntry e = unpaneled();
  if (e.transpose) {
    e.transpose = false;
    std::swap(e.dims[0], e.dims[1]);
  }
  return e;
}

static std::vector<std::string> splitWhitespace(const std::string &line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t')
      ++i;
    if (i > start)
      out.push_back(line.substr(start, i - start));
  }
  return out;
}

/// The `sep`-separated fields of s, empty ones included ("" gives {""}).
static std::vector<std::string> splitList(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos
                                                           : end - start));
    if (end == std::string::npos)
      return out;
    start = end + 1;
  }
}

static bool parseDims(const std::string &s, std::vector<int64_t> &dims,
                      std::string &err) {
  dims.clear();
  if (s == kScalarDims)
    return true;
  for (const std::string &part : splitList(s, 'x')) {
    if (part == "?") {
      dims.push_back(kDynamicDim);
      continue;
    }
    uint64_t v;
    if (!parseDecimal(part, INT64_MAX, v)) {
      err = "invalid dims '" + s +
            "' (expected sizes joined by 'x' like 1x128x768, or 'scalar')";
      return false;
    }
    dims.push_back(static_cast<int64_t>(v));
  }
  return true;
}

/// A concat or gather axis: a dimension of `dims`.
static bool parseAxis(const std::string &s, const std::vector<int64_t> &dims,
                      uint64_t &axis) {
  return parseDecimal(s, 1u << 20, axis) && axis < dims.size();
}

static std::string axisError(const char *keyword, const std::string &axis,
                             const ManifestEntry &e) {
  return std::string(keyword) + " axis '" + axis + "' of weight '" + e.name +
         "' is not a dimension of its shape " + formatShapeList(e.dims);
}

/// The `dims_from <from>,...` of a record with dynamic dims `dimsText`:
/// one `-` (a size chosen by this input) or <input>:<axis> per `?`; "" or
/// the error.
static std::string parseDimsFrom(const std::string &dimsFromText,
                                 const std::string &dimsText,
                                 ManifestEntry &e) {
  for (const std::string &part : splitList(dimsFromText, ',')) {
    if (part == "-") {
      e.dimsFrom.push_back({-1, -1});
      continue;
    }
    size_t colon = part.find(':');
    uint64_t input, axis;
    if (colon == std::string::npos ||
        !parseDecimal(part.substr(0, colon), 1u << 20, input) ||
        !parseDecimal(part.substr(colon + 1), 1u << 20, axis))
      return "invalid " + std::string(kDimsFromKeyword) + " '" + part +
             "' of '" + e.name + "' (expected '-' or <input>:<axis>)";
    e.dimsFrom.push_back({static_cast<int>(input), static_cast<int>(axis)});
  }
  size_t numDynamic = 0;
  for (int64_t d : e.dims)
    numDynamic += d == kDynamicDim;
  if (e.dimsFrom.size() != numDynamic)
    return std::string(kDimsFromKeyword) + " '" + dimsFromText + "' of '" +
           e.name + "' names " + std::to_string(e.dimsFrom.size()) +
           " sizes but " + dimsText + " has " + std::to_string(numDynamic) +
           " '?'";
  return {};
}

/// `concat <axis> <name>,<name>,...` of a weight record (tok[5], tok[6]),
/// against the untransposed shape; "" or the error.
static std::string parseConcat(const std::vector<std::string> &tok,
                               ManifestEntry &e) {
  uint64_t axis;
  if (!parseAxis(tok[5], e.dims, axis))
    return axisError(kConcatKeyword, tok[5], e);
  e.concatAxis = static_cast<int>(axis);
  const std::string &list = tok[6];
  for (std::string &part : splitList(list, ',')) {
    if (part.empty())
      return "empty tensor name in concat list '" + list + "' of weight '" +
             e.name + "'";
    e.concatParts.push_back(std::move(part));
  }
  return {};
}

/// `gather <axis> <source_extent> <start>:<length>,...` of a weight record
/// (tok[5..7]), against the untransposed shape; "" or the error.
static std::string parseGather(const std::vector<std::string> &tok,
                               ManifestEntry &e) {
  const std::string what = "weight '" + e.name + "'";
  uint64_t axis;
  if (!parseAxis(tok[5], e.dims, axis))
    return axisError(kGatherKeyword, tok[5], e);
  e.gatherAxis = static_cast<int>(axis);
  uint64_t extent;
  if (!parseDecimal(tok[6], INT64_MAX, extent) || extent == 0)
    return "invalid gather source extent '" + tok[6] + "' of " + what +
           " (expected the positive size of the source tensor "
           "along axis " +
           std::to_string(axis) + ")";
  e.gatherSourceExtent = static_cast<int64_t>(extent);
  std::vector<int64_t> srcDims = e.gatherSourceDims();
  uint64_t srcElems;
  if (!numElements(srcDims, srcElems) ||
      srcElems > UINT64_MAX / dtypeSize(e.dtype))
    return "gather source shape " + formatShapeList(srcDims) + " of " + what +
           " is too large";
  const std::string &list = tok[7];
  uint64_t total = 0;
  for (const std::string &part : splitList(list, ',')) {
    size_t colon = part.find(':');
    uint64_t first, length;
    if (colon == std::string::npos ||
        !parseDecimal(part.substr(0, colon), INT64_MAX, first) ||
        !parseDecimal(part.substr(colon + 1), INT64_MAX, length))
      return "invalid gather range '" + part + "' in '" + list + "' of " +
             what +
             " (expected <start>:<length> with non-negative "
             "integers, ranges separated by ',')";
    if (length == 0)
      return "gather range '" + part + "' of " + what + " has zero length";
    if (first >= extent || length > extent - first)
      return "gather range '" + part + "' of " + what + " selects [" +
             std::to_string(first) + ", " + std::to_string(first + length) +
             ") along axis " + std::to_string(axis) +
             ", outside the source extent [0, " + std::to_string(extent) + ")";
    total = length > UINT64_MAX - total ? UINT64_MAX : total + length;
    e.gatherRanges.push_back(
        {static_cast<int64_t>(first), static_cast<int64_t>(length)});
  }
  if (total != static_cast<uint64_t>(e.dims[axis]))
    return "gather ranges '" + list + "' of " + what + " select " +
           std::to_string(total) + " along axis " + std::to_string(axis) +
           " but its shape " + formatShapeList(e.dims) + " has " +
           std::to_string(e.dims[axis]);
  return {};
}

/// `ids <rows>` or `positions <bound>` of an input record (tok[4], tok[5]);
/// "" or the error.
static std::string parseIdBound(const std::vector<std::string> &tok,
                                ManifestEntry &e) {
  e.positions = tok[4] == kPositionsKeyword;
  if (e.dtype != DType::I32 && e.dtype != DType::I64)
    return "input '" + e.name + "' has " + tok[4] + " but dtype " + tok[2] +
           " (" + tok[4] + " are i32 or i64)";
  uint64_t rows;
  if (!parseDecimal(tok[5], INT64_MAX, rows) || rows == 0)
    return "invalid " + std::string(e.positions ? "position" : "id") +
           " bound '" + tok[5] + "' of input '" + e.name +
           (e.positions ? "' (expected the positive number of "
                          "positions)"
                        : "' (expected the positive row count of its "
                          "table)");
  e.idBound = static_cast<int64_t>(rows);
  return {};
}

/// Every dims_from names a chosen (`-`) size of an input, one that comes
/// before it for inputs.
static bool checkDimsFrom(const Manifest &out, std::string &err) {
  for (size_t k = 0; k < out.entries.size(); ++k) {
    const ManifestEntry &e = out.entries[k];
    int ordinal = -1;
    if (e.kind == EntryKind::Input)
      for (size_t i = 0; i < out.inputs.size(); ++i)
        if (out.inputs[i] == static_cast<int>(k))
          ordinal = static_cast<int>(i);
    for (const auto &[input, axis] : e.dimsFrom) {
      if (input < 0) {
        if (e.kind != EntryKind::Input) {
          err = "manifest: output '" + e.name +
                "' has a dynamic size that no input gives ('-' in " +
                kDimsFromKeyword + ")";
          return false;
        }
        continue;
      }
      bool ok = static_cast<size_t>(input) < out.inputs.size() &&
                (e.kind != EntryKind::Input || input < ordinal);
      if (ok) {
        const ManifestEntry &src =
            out.entries[static_cast<size_t>(out.inputs[input])];
        ok = static_cast<size_t>(axis) < src.dims.size() &&
             src.dims[axis] == kDynamicDim;
        if (ok) {
          size_t which = 0;
          for (int a = 0; a < axis; ++a)
            which += src.dims[a] == kDynamicDim;
          ok = src.dimsFrom[which].first < 0;
        }
      }
      if (!ok) {
        err = "manifest: " + std::string(entryKindName(e.kind)) + " '" +
              e.name + "' takes a size from input " + std::to_string(input) +
              " axis " + std::to_string(axis) +
              ", which is not a dynamic size chosen by an earlier input";
        return false;
      }
    }
  }
  return true;
}

bool parseManifest(const char *text, Manifest &out, std::string &err) {
  out = Manifest();
  if (!text) {
    err = "manifest: no manifest text";
    return false;
  }
  std::string all(text);
  bool sawHeader = false, sawTarget = false;
  std::set<std::string> weightNames, ioNames;
  size_t pos = 0;
  int lineNo = 0;
  auto fail = [&](const std::string &msg) {
    err = "manifest line " + std::to_string(lineNo) + ": " + msg;
    return false;
  };
  while (pos < all.size()) {
    size_t nl = all.find('\n', pos);
    std::string line =
        all.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? all.size() : nl + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    std::vector<std::string> tok = splitWhitespace(line);
    if (tok.empty() || tok[0][0] == '#')
      continue;
    if (!sawHeader) {
      const std::string version = std::to_string(kManifestVersion);
      if (tok[0] != kManifestMagic || tok.size() != 2)
        return fail(std::string("expected '") + kManifestMagic + " " + version +
                    "' as the first record, got '" + line + "'");
      if (tok[1] != version)
        return fail("unsupported manifest version '" + tok[1] +
                    "' (this runtime supports version " + version + ")");
      out.version = kManifestVersion;
      sawHeader = true;
      continue;
    }
    const std::string &kw = tok[0];
    if (kw == kTargetKeyword) {
      if (sawTarget)
        return fail("duplicate 'target' record");
      if (tok.size() != 2)
        return fail("expected 'target cpu' or 'target cuda'");
      std::optional<Target> target = lookupTarget(tok[1]);
      if (!target)
        return fail("unknown target '" + tok[1] +
                    "' (expected 'cpu' or 'cuda')");
      out.target = *target;
      sawTarget = true;
      continue;
    }
    ManifestEntry e;
    std::optional<EntryKind> kind = lookupEntryKind(kw);
    if (!kind)
      return fail("unknown record '" + kw +
                  "' (expected target, weight, input, output or state)");
    e.kind = *kind;
    // `dims_from <from>,...` follows the dims of a dynamic record; the
    // other trailing keywords are parsed as for static records.
    std::string dimsFromText;
    if (tok.size() >= 6 && tok[4] == kDimsFromKeyword) {
      dimsFromText = tok[5];
      tok.erase(tok.begin() + 4, tok.begin() + 6);
    }
    bool isWeight = e.kind == EntryKind::Weight;
    bool isConvert =
        isWeight && tok.size() > 4 && tok.back() == kConvertKeyword;
    if (isConvert)
      tok.pop_back();
    bool isPairs = isWeight && tok.size() > 4 && tok.back() == kPairsKeyword;
    if (isPairs)
      tok.pop_back();
    bool isPanels = isWeight && tok.size() > 4 && tok.back() == kPanelsKeyword;
    if (isPanels)
      tok.pop_back();
    bool isTranspose =
        isWeight && tok.size() > 4 && tok.back() == kTransposeKeyword;
    if (isTranspose)
      tok.pop_back();
    bool isEncoder = e.kind == EntryKind::Input && tok.size() > 4 &&
                     tok.back() == kEncoderKeyword;
    if (isEncoder)
      tok.pop_back();
    bool isConcat = isWeight && tok.size() == 7 && tok[4] == kConcatKeyword;
    bool isGather = isWeight && tok.size() == 8 && tok[4] == kGatherKeyword;
    bool isIds = e.kind == EntryKind::Input && tok.size() == 6 &&
                 (tok[4] == kIdsKeyword || tok[4] == kPositionsKeyword);
    // `causal recompute_past <length>` after the dims of causal logits.
    std::string recomputeText;
    if (e.kind == EntryKind::Output && tok.size() == 7 &&
        tok[4] == kCausalKeyword && tok[5] == kRecomputePastKeyword) {
      recomputeText = tok[6];
      tok.resize(5);
    }
    bool isCausal = e.kind == EntryKind::Output && tok.size() == 5 &&
                    tok[4] == kCausalKeyword;
    if (tok.size() != 4 && !isConcat && !isGather && !isIds && !isCausal) {
      if (isWeight)
        return fail(
            "expected 'weight <name> <dtype> <dims> [concat <axis> "
            "<name>,<name>,... | gather <axis> <source_extent> "
            "<start>:<length>,<start>:<length>,...] [transpose] [panels "
            "[pairs]] [convert]'");
      if (e.kind == EntryKind::Input)
        return fail("expected 'input <name> <dtype> <dims> [ids <rows> "
                    "[encoder] | positions <bound>]'");
      if (e.kind == EntryKind::Output)
        return fail("expected 'output <name> <dtype> <dims> [causal "
                    "[recompute_past <length>]]'");
      return fail(std::string("expected '") + kw + " <name> <dtype> <dims>'");
    }
    e.name = tok[1];
    // Weight records may share a name (each binds independently); inputs
    // and outputs may not share a name with anything.
    if (ioNames.count(e.name) || (!isWeight && weightNames.count(e.name)))
      return fail("duplicate name '" + e.name + "'");
    (isWeight ? weightNames : ioNames).insert(e.name);
    const DTypeInfo *dtype = lookupDType(tok[2]);
    if (!dtype)
      return fail("unknown dtype '" + tok[2] + "' (expected " +
                  dtypeNameList() + ")");
    e.dtype = dtype->dtype;
    std::string dimErr;
    if (!parseDims(tok[3], e.dims, dimErr))
      return fail(dimErr);
    if (e.isDynamic() || !dimsFromText.empty()) {
      if (e.kind != EntryKind::Input && e.kind != EntryKind::Output)
        return fail(std::string(entryKindName(e.kind)) + " '" + e.name +
                    "' has dynamic dims " + tok[3] +
                    "; only inputs and outputs may");
      if (dimsFromText.empty())
        return fail(std::string(entryKindName(e.kind)) + " '" + e.name +
                    "' has dynamic dims " + tok[3] + " but no " +
                    kDimsFromKeyword);
      std::string dimsErr = parseDimsFrom(dimsFromText, tok[3], e);
      if (!dimsErr.empty())
        return fail(dimsErr);
      // Sizes are known per run; the entry's own ones stay 0.
    } else if (!numElements(e.dims, e.numElements) ||
               e.numElements > UINT64_MAX / dtypeSize(e.dtype))
      return fail("shape " + formatShapeList(e.dims) + " of '" + e.name +
                  "' is too large");
    e.bytes = e.numElements * dtypeSize(e.dtype);
    // Concat, gather and transpose describe the 2-D tensor that panels lay
    // out: validate them against its shape, then restore the buffer's.
    const std::vector<int64_t> bufferDims = e.dims;
    if (isPairs && !isPanels)
      return fail("weight '" + e.name +
                  "' is marked pairs without panels (expected 'panels "
                  "pairs')");
    if (isPanels) {
      if (e.dims.size() != 3)
        return fail("weight '" + e.name + "' is marked panels but has shape " +
                    formatShapeList(e.dims) +
                    "; panels are 3-D ([P, K, W] of a [K, P * W] tensor)");
      if (isPairs && (e.dims[2] % 2 != 0 || e.dims[1] > INT64_MAX / 2))
        return fail("weight '" + e.name + "' is marked pairs but has shape " +
                    formatShapeList(e.dims) +
                    "; pair panels are [P, K / 2, 2 * W] of a [K, P * W] "
                    "tensor");
      const int64_t rows = isPairs ? 2 : 1;
      e.dims = {rows * bufferDims[1], bufferDims[0] * bufferDims[2] / rows};
    }
    if (isTranspose) {
      if (e.dims.size() != 2)
        return fail(
            "weight '" + e.name + "' is marked transpose but has shape " +
            formatShapeList(e.dims) + "; only 2-D weights can be transposed");
      // Concat and gather describe the untransposed tensor: validate them
      // against its shape, then restore the buffer's.
      std::swap(e.dims[0], e.dims[1]);
    }
    if (isConcat) {
      std::string concatErr = parseConcat(tok, e);
      if (!concatErr.empty())
        return fail(concatErr);
    }
    if (isGather) {
      std::string gatherErr = parseGather(tok, e);
      if (!gatherErr.empty())
        return fail(gatherErr);
    }
    if (isTranspose) {
      std::swap(e.dims[0], e.dims[1]);
      e.transpose = true;
    }
    if (isPanels) {
      e.dims = bufferDims;
      e.panels = true;
      e.pairs = isPairs;
    }
    if (isConvert) {
      if (!isFloatDType(e.dtype))
        return fail("weight '" + e.name + "' is marked convert but has dtype " +
                    tok[2] + "; only float weights (f32, f16, bf16) convert");
      e.convert = true;
    }
    if (isIds) {
      std::string idsErr = parseIdBound(tok, e);
      if (!idsErr.empty())
        return fail(idsErr);
    }
    if (isEncoder) {
      bool ids = (e.dtype == DType::I32 || e.dtype == DType::I64) &&
                 e.dims.size() == 2;
      if (e.positions ||
          (!ids && (!isFloatDType(e.dtype) || e.isDynamic() || e.dims.empty())))
        return fail("input '" + e.name + "' is marked encoder but is neither " +
                    "i32/i64 [batch, seq] (token ids or their mask) nor a " +
                    "static float [batch, ...] (an encoder output)");
      e.encoder = true;
    }
    if (isCausal) {
      if (!isFloatDType(e.dtype) || e.dims.size() != 3 || e.dims[2] == 0)
        return fail(
            "output '" + e.name + "' is marked causal but is " + tok[2] + " " +
            formatShapeList(e.dims) +
            " (causal logits are float [batch, seq, vocab], vocab > 0)");
      e.causal = true;
    }
    if (!recomputeText.empty()) {
      uint64_t length;
      if (!parseDecimal(recomputeText, INT64_MAX, length) || length == 0)
        return fail("invalid recompute_past length '" + recomputeText +
                    "' of output '" + e.name +
                    "' (expected the positive token count past which "
                    "generation recomputes the sequence)");
      e.recomputePast = static_cast<int64_t>(length);
    }
    int index = static_cast<int>(out.entries.size());
    if (e.kind == EntryKind::Weight)
      out.weights.push_back(index);
    else if (e.kind == EntryKind::Input)
      out.inputs.push_back(index);
    else if (e.kind == EntryKind::State)
      out.states.push_back(index);
    else
      out.outputs.push_back(index);
    out.entries.push_back(std::move(e));
  }
  if (!checkDimsFrom(out, err))
    return false;
  if (!sawHeader) {
    err = "manifest: empty (expected 'attnc-manifest 1')";
    return false;
  }
  if (!sawTarget) {
    err = "manifest: missing 'target cpu' or 'target cuda' record";
    return false;
  }
  return true;
}

} // namespace attnrt
