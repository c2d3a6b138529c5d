//===- AttnOps.cpp - attn dialect op verifiers and helpers ----------------===//
//
// Verifiers name the offending operand and dimension so that a user with a
// mis-shaped model sees which weight or input is wrong, not just that one is.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

namespace {
/// A named tensor operand or result, for diagnostics.
struct Named {
  StringRef name;
  RankedTensorType type;
};
} // namespace

static Named named(StringRef name, Value value) {
  return {name, cast<RankedTensorType>(value.getType())};
}

static std::optional<double> toDouble(std::optional<APFloat> value) {
  if (!value)
    return std::nullopt;
  return value->convertToDouble();
}

/// I64Attr getters return uint64_t; attributes here are signed.
static std::optional<int64_t> toSigned(std::optional<uint64_t> value) {
  if (!value)
    return std::nullopt;
  return static_cast<int64_t>(*value);
}

static bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static std::string dimString(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

static LogicalResult verifyRank(Operation *op, Named t, int64_t rank,
                                StringRef layout) {
  if (t.type.getRank() == rank)
    return success();
  return op->emitOpError() << t.name << " must have rank " << rank << " ("
                           << layout << "), got " << t.type;
}

/// Checks `lhs.dim(lhsDim) == expected`, where `expected` comes from a
/// description such as "query dimension 0 (batch)".
static LogicalResult verifyDim(Operation *op, Named t, int64_t dim,
                               int64_t expected, const Twine &meaning) {
  int64_t actual = t.type.getDimSize(dim);
  if (dimsCompatible(actual, expected))
    return success();
  return op->emitOpError() << t.name << " dimension " << dim << " is "
                           << dimString(actual) << " but must be "
                           << dimString(expected) << " (" << meaning << ")";
}

/// An optional per-sequence operand (kv_lengths, positions) is [batch],
/// `batch` being what `batchMeaning` names.
static LogicalResult verifyPerBatch(Operation *op, StringRef name, Value value,
                                    int64_t batch, StringRef batchMeaning) {
  if (!value)
    return success();
  Named v = named(name, value);
  if (failed(verifyRank(op, v, 1, "[batch]")) ||
      failed(verifyDim(op, v, 0, batch, batchMeaning)))
    return failure();
  return success();
}

/// Run-time start positions, when given, are [batch].
static LogicalResult verifyStartPositions(Operation *op, Value positions,
                                          int64_t batch) {
  return verifyPerBatch(op, "positions", positions, batch,
                        "input dimension 0, batch");
}

/// All float tensors an op touches share one element type.
static LogicalResult verifySameFloatElementType(Operation *op) {
  Type expected;
  auto check = [&](Type type, StringRef kind, unsigned idx) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !isa<FloatType>(tensor.getElementType()))
      return success();
    if (!expected) {
      expected = tensor.getElementType();
      return success();
    }
    if (tensor.getElementType() == expected)
      return success();
    return op->emitOpError()
           << kind << " #" << idx << " has element type "
           << tensor.getElementType() << " but expected " << expected
           << " (all float tensors must share one type)";
  };
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (failed(check(v.getType(), "operand", i)))
      return failure();
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    if (failed(check(v.getType(), "result", i)))
      return failure();
  return success();
}

static LogicalResult verifyPositiveFinite(Operation *op, StringRef name,
                                          std::optional<double> value) {
  if (!value)
    return success();
  if (std::isfinite(*value) && *value > 0.0)
    return success();
  return op->emitOpError() << name << " must be a positive finite number, got "
                           << *value;
}

static LogicalResult verifyWindow(Operation *op,
                                  std::optional<int64_t> window) {
  if (window && *window < 0)
    return op->emitOpError() << "window must be >= 0 (0 disables the sliding "
                                "window), got "
                             << *window;
  return success();
}

/// Rejects a static zero size of `t`'s dimension `dim` where the op would be
/// meaningless without elements there (a reduction over nothing, a table
/// with no rows): `meaning` says what the dimension is.
static LogicalResult verifyNonEmptyDim(Operation *op, Named t, int64_t dim,
                                       const Twine &meaning) {
  if (t.type.getDimSize(dim) != 0)
    return success();
  return op->emitOpError() << t.name << " dimension " << dim << " (" << meaning
                           << ") is 0; it must be at least 1";
}

/// `a * b`, or failure with an error naming `what` when it overflows int64.
static FailureOr<int64_t> checkedProduct(Operation *op, int64_t a, int64_t b,
                                         StringRef what) {
  int64_t product;
  if (llvm::MulOverflow(a, b, product))
    return op->emitOpError()
           << what << " (" << a << " * " << b << ") overflows a 64-bit size";
  return product;
}

static LogicalResult verifyNormParam(Operation *op, Named input, Named param) {
  if (input.type.getRank() < 1)
    return op->emitOpError() << input.name << " must have rank >= 1";
  if (failed(verifyNonEmptyDim(op, input, input.type.getRank() - 1,
                               "the normalized last dimension")))
    return failure();
  if (failed(verifyRank(op, param, 1, "[D]")))
    return failure();
  return verifyDim(op, param, 0, input.type.getShape().back(),
                   Twine(input.name) + "'s last dimension");
}

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

/// The first control character in `name` (a newline, a NUL, DEL), if any:
/// weight names are checkpoint keys, printed in messages and the manifest.
static std::optional<size_t> findControlCharacter(StringRef name) {
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = name[i];
    if (c < 0x20 || c == 0x7f)
      return i;
  }
  return std::nullopt;
}

static LogicalResult verifyWeightName(Operation *op, StringRef name) {
  std::optional<size_t> at = findControlCharacter(name);
  if (!at)
    return success();
  std::string code;
  llvm::raw_string_ostream(code)
      << llvm::format_hex_no_prefix(static_cast<unsigned char>(name[*at]), 2);
  return op->emitOpError() << "weight name contains the control character 0x"
                           << code << " at byte " << *at
                           << "; checkpoint names are printable text";
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("weight name must not be empty");
  if (failed(verifyWeightName(*this, getName())))
    return failure();
  if (ArrayAttr parts = getConcatNamesAttr())
    for (Attribute part : parts)
      if (auto text = dyn_cast<StringAttr>(part))
        if (failed(verifyWeightName(*this, text.getValue())))
          return failure();
  RankedTensorType type = getResult().getType();
  if (!type.hasStaticShape())
    return emitOpError() << "weight '" << getName()
                         << "' must have a static shape, got " << type;
  if (llvm::is_contained(type.getShape(), 0))
    return emitOpError() << "weight '" << getName() << "' has type " << type
                         << " with no elements; every dimension must be at "
                            "least 1";
  if (getConvert() && !isa<FloatType>(type.getElementType()))
    return emitOpError() << "weight '" << getName() << "' has type " << type
                         << "; only float weights convert";
  if (getPanels()) {
    if (type.getRank() != 3)
      return emitOpError() << "weight '" << getName()
                           << "' is bound in panels but has type " << type
                           << "; panels are [N / W, K, W] views of a 2-D "
                              "tensor";
    if (type.getDimSize(0) >
        std::numeric_limits<int64_t>::max() / type.getDimSize(2))
      return emitOpError() << "weight '" << getName() << "' has type " << type
                           << ", whose panels hold too many columns";
    if (getPairs() && type.getDimSize(2) % 2 != 0)
      return emitOpError() << "weight '" << getName()
                           << "' is bound in pair panels but has type " << type
                           << "; pair panels are [N / W, K / 2, 2 * W]";
    if (getPairs() &&
        type.getDimSize(1) > std::numeric_limits<int64_t>::max() / 2)
      return emitOpError() << "weight '" << getName() << "' has type " << type
                           << ", whose pair panels hold too many rows";
    // Gather, concat and transpose refer to the [K, N] tensor.
    int64_t rowsPerPanel = getPairs() ? 2 : 1;
    type = RankedTensorType::get(
        {rowsPerPanel * type.getDimSize(1),
         type.getDimSize(0) * type.getDimSize(2) / rowsPerPanel},
        type.getElementType());
  } else if (getPairs()) {
    return emitOpError() << "weight '" << getName()
                         << "' has pairs without panels; pairs lay out "
                            "panels";
  }
  if (getTranspose()) {
    if (type.getRank() != 2)
      return emitOpError() << "weight '" << getName()
                           << "' is transposed but has type " << type
                           << "; only 2-D weights can be transposed";
    // Gather and concat axes refer to the untransposed shape.
    type = RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                                 type.getElementType());
  }
  if (getConcatNamesAttr() || getConcatAxisAttr()) {
    if (!getConcatNamesAttr() || !getConcatAxisAttr())
      return emitOpError("takes concat_names and concat_axis together");
    if (getGatherAxisAttr() || getGatherRangesAttr() || getGatherExtentAttr())
      return emitOpError("cannot both gather and concatenate");
    if (getConcatNamesAttr().size() < 2)
      return emitOpError("concat_names needs at least two tensors");
    int64_t axis = getConcatAxisAttr().getInt();
    if (axis < 0 || axis >= type.getRank())
      return emitOpError() << "concat_axis " << axis << " is out of range for "
                           << type;
    for (Attribute name : getConcatNamesAttr())
      if (cast<StringAttr>(name).getValue().empty())
        return emitOpError("concat_names must not be empty");
    return success();
  }
  int present = static_cast<bool>(getGatherAxisAttr()) +
                static_cast<bool>(getGatherExtentAttr()) +
                static_cast<bool>(getGatherRangesAttr());
  if (present == 0)
    return success();
  if (present != 3)
    return emitOpError("takes gather_axis, gather_extent and gather_ranges "
                       "together");
  int64_t axis = getGatherAxisAttr().getInt();
  int64_t extent = getGatherExtentAttr().getInt();
  ArrayRef<int64_t> ranges = *getGatherRanges();
  if (axis < 0 || axis >= type.getRank())
    return emitOpError() << "gather_axis " << axis << " is out of range for "
                         << type;
  if (extent <= 0)
    return emitOpError() << "gather_extent must be positive, got " << extent;
  if (ranges.empty() || ranges.size() % 2 != 0)
    return emitOpError("gather_ranges must be non-empty (start, length) pairs");
  int64_t total = 0;
  for (size_t i = 0; i < ranges.size(); i += 2) {
    int64_t start = ranges[i], length = ranges[i + 1];
    if (start < 0 || length <= 0 || start >= extent || length > extent - start)
      return emitOpError() << "gather range [" << start << ", "
                           << start + length << ") is not within [0, " << extent
                           << ")";
    total += length;
  }
  if (total != type.getDimSize(axis))
    return emitOpError() << "gather ranges select " << total
                         << " entries but the result has "
                         << type.getDimSize(axis) << " along axis " << axis;
  return success();
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

static bool scoreNeedsEqualHeadDims(ScoreFunction score) {
  return score != ScoreFunction::general && score != ScoreFunction::additive;
}

SdpaShape SdpaOp::getSdpaShape() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType();
  SdpaShape s;
  s.batch = q.getDimSize(0);
  s.hq = q.getDimSize(1);
  s.sq = q.getDimSize(2);
  s.dq = q.getDimSize(3);
  s.hkv = k.getDimSize(1);
  s.sk = k.getDimSize(2);
  s.dk = k.getDimSize(3);
  s.dv = v.getDimSize(3);
  bool grouped = s.hkv > 0 && !ShapedType::isDynamic(s.hq) &&
                 !ShapedType::isDynamic(s.hkv);
  s.group = grouped ? s.hq / s.hkv : 0;
  return s;
}

double SdpaOp::getEffectiveScale() {
  if (std::optional<double> scale = toDouble(getScale()))
    return *scale;
  switch (getScore()) {
  case ScoreFunction::scaled_dot:
  case ScoreFunction::gaussian: {
    int64_t dk = getKey().getType().getDimSize(3);
    return 1.0 / std::sqrt(static_cast<double>(dk));
  }
  default:
    return 1.0;
  }
}

/// An additive score bias: rank 4, each dimension 1 or that of `full`
/// ([batch, heads, q_seq, k_seq]).
static LogicalResult verifyScoreBias(Operation *op, Named b,
                                     ArrayRef<int64_t> full) {
  if (failed(verifyRank(op, b, 4,
                        "broadcastable to [batch, heads, q_seq, k_seq]")))
    return failure();
  for (int64_t d = 0; d < 4; ++d) {
    int64_t size = b.type.getDimSize(d);
    if (size != 1 && !dimsCompatible(size, full[d]))
      return op->emitOpError()
             << b.name << " dimension " << d << " is " << dimString(size)
             << " but must be 1 or " << dimString(full[d]);
  }
  return success();
}

LogicalResult SdpaOp::verify() {
  Operation *op = getOperation();
  Named q = named("query", getQuery()), k = named("key", getKey()),
        v = named("value", getValue()), r = named("result", getResult());
  for (Named t : {q, k, v, r})
    if (failed(verifyRank(op, t, 4, "[batch, heads, seq, head_dim]")))
      return failure();
  if (failed(verifySameFloatElementType(op)))
    return failure();

  int64_t batch = q.type.getDimSize(0), hq = q.type.getDimSize(1),
          sq = q.type.getDimSize(2), dq = q.type.getDimSize(3);
  int64_t hkv = k.type.getDimSize(1), sk = k.type.getDimSize(2),
          dk = k.type.getDimSize(3);
  if (failed(verifyDim(op, k, 0, batch, "query dimension 0, batch")) ||
      failed(verifyDim(op, v, 0, batch, "query dimension 0, batch")) ||
      failed(verifyDim(op, v, 1, hkv, "key dimension 1, kv heads")) ||
      failed(verifyDim(op, v, 2, sk, "key dimension 2, key sequence")))
    return failure();
  // Heads and head sizes of zero make no attention; zero keys would be a
  // softmax over nothing.
  if (failed(verifyNonEmptyDim(op, q, 1, "query heads")) ||
      failed(verifyNonEmptyDim(op, q, 3, "query head size")) ||
      failed(verifyNonEmptyDim(op, k, 1, "key/value heads")) ||
      failed(verifyNonEmptyDim(op, k, 2, "key sequence")) ||
      failed(verifyNonEmptyDim(op, k, 3, "key head size")) ||
      failed(verifyNonEmptyDim(op, v, 3, "value head size")))
    return failure();
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || hq % hkv != 0))
    return emitOpError() << "query heads (" << hq
                         << ") must be a multiple of key/value heads (" << hkv
                         << ")";
  ScoreFunction score = getScore();
  if (scoreNeedsEqualHeadDims(score) &&
      failed(verifyDim(op, k, 3, dq,
                       Twine("query dimension 3: score '") +
                           stringifyScoreFunction(score) +
                           "' needs equal query and key head sizes")))
    return failure();
  if (failed(verifyDim(op, r, 0, batch, "query dimension 0, batch")) ||
      failed(verifyDim(op, r, 1, hq, "query dimension 1, heads")) ||
      failed(verifyDim(op, r, 2, sq, "query dimension 2, query sequence")) ||
      failed(verifyDim(op, r, 3, v.type.getDimSize(3),
                       "value dimension 3, value head size")))
    return failure();

  if (Value bias = getBias();
      bias &&
      failed(verifyScoreBias(op, named("bias", bias), {batch, hq, sq, sk})))
    return failure();
  if (failed(verifyPerBatch(op, "kv_lengths", getKvLengths(), batch,
                            "query dimension 0, batch")) ||
      failed(verifyPerBatch(op, "query_positions", getQueryPositions(), batch,
                            "query dimension 0, batch")))
    return failure();
  // Query positions only place the generated causal and window masks;
  // without either they would silently mean nothing.
  if (getQueryPositions() && !getCausal() &&
      !(getWindow() && *getWindow() != 0))
    return emitOpError() << "has query_positions but neither a causal nor a "
                            "window mask (query_positions only place those "
                            "masks)";

  auto weights = getScoreWeights();
  size_t expectedWeights = score == ScoreFunction::general    ? 1
                           : score == ScoreFunction::additive ? 2
                                                              : 0;
  if (weights.size() != expectedWeights)
    return emitOpError() << "score '" << stringifyScoreFunction(score)
                         << "' takes " << expectedWeights
                         << " score weight(s), got " << weights.size();
  if (score == ScoreFunction::general) {
    Named w = named("general score weight", weights[0]);
    if (failed(verifyRank(op, w, 2, "[query head_dim, key head_dim]")) ||
        failed(verifyDim(op, w, 0, dq, "query dimension 3")) ||
        failed(verifyDim(op, w, 1, dk, "key dimension 3")))
      return failure();
  } else if (score == ScoreFunction::additive) {
    Named w = named("additive score weight W", weights[0]);
    Named va = named("additive score vector v", weights[1]);
    int64_t qk = ShapedType::kDynamic;
    if (!ShapedType::isDynamic(dq) && !ShapedType::isDynamic(dk) &&
        llvm::AddOverflow(dq, dk, qk))
      return emitOpError() << "query head size + key head size overflows a "
                              "64-bit size";
    if (failed(verifyRank(op, w, 2, "[A, q head_dim + k head_dim]")) ||
        failed(verifyDim(op, w, 1, qk, "query head size + key head size")) ||
        failed(verifyRank(op, va, 1, "[A]")) ||
        failed(verifyDim(op, va, 0, w.type.getDimSize(0),
                         "additive score weight W dimension 0")))
      return failure();
  }

  if (failed(verifyPositiveFinite(op, "scale", toDouble(getScale()))) ||
      failed(verifyWindow(op, toSigned(getWindow()))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// MhaOp
//===----------------------------------------------------------------------===//

int64_t MhaOp::getEffectiveHeadDim() {
  if (IntegerAttr dh = getHeadDimAttr())
    return dh.getInt();
  int64_t dm = getQuery().getType().getDimSize(2);
  if (getWide() || ShapedType::isDynamic(dm))
    return dm;
  return dm / getNumHeads();
}

LogicalResult MhaOp::verify() {
  Operation *op = getOperation();
  Named x = named("query", getQuery()), r = named("result", getResult());
  if (failed(verifyRank(op, x, 3, "[batch, seq, d_model]")) ||
      failed(verifySameFloatElementType(op)))
    return failure();
  if (r.type != x.type)
    return emitOpError() << "result type " << r.type
                         << " must equal the query input type " << x.type;
  int64_t batch = x.type.getDimSize(0), dm = x.type.getDimSize(2);
  Named kv = x;
  if (Value keyValue = getKeyValue()) {
    kv = named("key_value", keyValue);
    if (failed(verifyRank(op, kv, 3, "[batch, seq, d_kv]")) ||
        failed(verifyDim(op, kv, 0, batch, "query dimension 0, batch")))
      return failure();
  }
  if (failed(verifyNonEmptyDim(op, x, 2, "d_model")) ||
      failed(verifyNonEmptyDim(op, kv, 1, "key sequence")) ||
      failed(verifyNonEmptyDim(op, kv, 2, "key/value input width")))
    return failure();
  int64_t dkv = kv.type.getDimSize(2);

  int64_t heads = getNumHeads();
  int64_t kvHeads = getKvHeads();
  if (kvHeads <= 0 || heads % kvHeads != 0)
    return emitOpError() << "heads (" << heads
                         << ") must be a positive multiple of kv_heads ("
                         << kvHeads << ")";
  if (getHeadDimAttr()) {
    if (getWide())
      return emitOpError("takes `wide` or `head_dim`, not both");
    if (getHeadDimAttr().getInt() <= 0)
      return emitOpError() << "head_dim must be positive, got "
                           << getHeadDimAttr().getInt();
  } else if (!getWide() && !ShapedType::isDynamic(dm) && dm % heads != 0)
    return emitOpError() << "d_model (query dimension 2) is " << dm
                         << ", which is not divisible by heads = " << heads
                         << "; narrow heads split d_model evenly (use `wide` "
                            "for full-width heads)";
  int64_t dh = getEffectiveHeadDim();
  int64_t headsWidth = ShapedType::kDynamic,
          kvHeadsWidth = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(dh)) {
    FailureOr<int64_t> qWidth =
        checkedProduct(op, heads, dh, "heads * head_dim");
    if (failed(qWidth))
      return failure();
    FailureOr<int64_t> kvWidth =
        checkedProduct(op, kvHeads, dh, "kv_heads * head_dim");
    if (failed(kvWidth))
      return failure();
    headsWidth = *qWidth;
    kvHeadsWidth = *kvWidth;
  }
  Named wq = named("q_weight", getQWeight()),
        wk = named("k_weight", getKWeight()),
        wv = named("v_weight", getVWeight()),
        wo = named("o_weight", getOWeight());
  for (Named w : {wq, wk, wv, wo})
    if (failed(verifyRank(op, w, 2, "[out_features, in_features]")))
      return failure();
  if (failed(verifyDim(op, wq, 0, headsWidth, "heads * head_dim")) ||
      failed(verifyDim(op, wq, 1, dm, "d_model")) ||
      failed(verifyDim(op, wk, 0, kvHeadsWidth, "kv_heads * head_dim")) ||
      failed(verifyDim(op, wk, 1, dkv, "key/value input width")) ||
      failed(verifyDim(op, wv, 0, kvHeadsWidth, "kv_heads * head_dim")) ||
      failed(verifyDim(op, wv, 1, dkv, "key/value input width")) ||
      failed(verifyDim(op, wo, 0, dm, "d_model")) ||
      failed(verifyDim(op, wo, 1, headsWidth, "heads * head_dim")))
    return failure();

  auto biases = getBiases();
  if (!biases.empty()) {
    if (biases.size() != 4)
      return emitOpError() << "takes all four biases (q, k, v, o) or none, got "
                           << biases.size();
    int64_t sizes[4] = {headsWidth, kvHeadsWidth, kvHeadsWidth, dm};
    const char *names[4] = {"q bias", "k bias", "v bias", "o bias"};
    for (int i = 0; i < 4; ++i) {
      Named b = named(names[i], biases[i]);
      if (failed(verifyRank(op, b, 1, "[out_features]")) ||
          failed(
              verifyDim(op, b, 0, sizes[i], "the projection's out_features")))
        return failure();
    }
  }
  if (Value bias = getScoreBias();
      bias && failed(verifyScoreBias(
                  op, named("score_bias", bias),
                  {batch, heads, x.type.getDimSize(1), kv.type.getDimSize(1)})))
    return failure();
  if (failed(verifyPerBatch(op, "kv_lengths", getKvLengths(), batch,
                            "query dimension 0, batch")))
    return failure();
  return failure(
      failed(verifyPositiveFinite(op, "scale", toDouble(getScale()))) ||
      failed(verifyWindow(op, toSigned(getWindow()))));
}

//===----------------------------------------------------------------------===//
// Norms, projections, feed-forward
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  Operation *op = getOperation();
  Named x = named("input", getInput());
  return failure(failed(verifySameFloatElementType(op)) ||
                 failed(verifyNormParam(op, x, named("gamma", getGamma()))) ||
                 failed(verifyNormParam(op, x, named("beta", getBeta()))) ||
                 failed(verifyPositiveFinite(op, "epsilon",
                                             getEpsilon().convertToDouble())));
}

LogicalResult RmsNormOp::verify() {
  Operation *op = getOperation();
  Named x = named("input", getInput());
  return failure(failed(verifySameFloatElementType(op)) ||
                 failed(verifyNormParam(op, x, named("gamma", getGamma()))) ||
                 failed(verifyPositiveFinite(op, "epsilon",
                                             getEpsilon().convertToDouble())));
}

/// Checks `x W^T (+ b)` with `x : [..., K]`, `W : [N, K]`, `b : [N]` and
/// returns N.
static FailureOr<int64_t> verifyProjection(Operation *op, Named x, Named w,
                                           Value bias, StringRef biasName) {
  if (x.type.getRank() < 1)
    return op->emitOpError() << x.name << " must have rank >= 1";
  if (failed(verifyRank(op, w, 2, "[out_features, in_features]")) ||
      failed(verifyDim(op, w, 1, x.type.getShape().back(),
                       Twine(x.name) + "'s last dimension")))
    return failure();
  // A projection from or to zero features is no projection.
  if (failed(verifyNonEmptyDim(op, x, x.type.getRank() - 1, "in_features")) ||
      failed(verifyNonEmptyDim(op, w, 0, "out_features")))
    return failure();
  int64_t n = w.type.getDimSize(0);
  if (bias) {
    Named b = named(biasName, bias);
    if (failed(verifyRank(op, b, 1, "[out_features]")) ||
        failed(verifyDim(op, b, 0, n, Twine(w.name) + " dimension 0")))
      return failure();
  }
  return n;
}

LogicalResult LinearOp::verify() {
  Operation *op = getOperation();
  if (failed(verifySameFloatElementType(op)))
    return failure();
  Named x = named("input", getInput());
  FailureOr<int64_t> n =
      verifyProjection(op, x, named("weight", getWeight()), getBias(), "bias");
  if (failed(n))
    return failure();
  SmallVector<int64_t> expected(x.type.getShape());
  expected.back() = *n;
  auto resultType = getResult().getType();
  if (resultType.getRank() != x.type.getRank())
    return emitOpError() << "result must have the input's rank "
                         << x.type.getRank() << ", got " << resultType;
  for (int64_t d = 0, e = resultType.getRank(); d < e; ++d)
    if (failed(verifyDim(op, named("result", getResult()), d, expected[d],
                         d + 1 == e ? "weight dimension 0, out_features"
                                    : "the input's dimension")))
      return failure();
  return success();
}

LogicalResult FfnOp::verify() {
  Operation *op = getOperation();
  if (failed(verifySameFloatElementType(op)))
    return failure();
  Named x = named("input", getInput());
  FailureOr<int64_t> f = verifyProjection(
      op, x, named("up_weight", getUpWeight()), getUpBias(), "up_bias");
  if (failed(f))
    return failure();
  if (Value gate = getGateWeight()) {
    // The gate multiplies the up projection elementwise: same [F, D].
    FailureOr<int64_t> gateF = verifyProjection(
        op, x, named("gate_weight", gate), getGateBias(), "gate_bias");
    if (failed(gateF))
      return failure();
    if (*gateF != *f)
      return emitOpError() << "gate_weight has " << *gateF
                           << " rows but up_weight has " << *f
                           << "; a gated FFN needs both [d_ff, d_model]";
  } else if (getGateBias()) {
    return emitOpError() << "gate_bias requires gate_weight";
  }
  Named down = named("down_weight", getDownWeight());
  if (failed(verifyRank(op, down, 2, "[d_model, d_ff]")) ||
      failed(verifyDim(op, down, 1, *f, "up_weight dimension 0, d_ff")) ||
      failed(verifyDim(op, down, 0, x.type.getShape().back(),
                       "input's last dimension, d_model")))
    return failure();
  if (Value bias = getDownBias()) {
    Named b = named("down_bias", bias);
    if (failed(verifyRank(op, b, 1, "[d_model]")) ||
        failed(verifyDim(op, b, 0, x.type.getShape().back(), "d_model")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

int64_t SoftmaxOp::getNormalizedDim() {
  int64_t dim = static_cast<int64_t>(getDim());
  return dim < 0 ? dim + getInput().getType().getRank() : dim;
}

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < -rank || dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << rank << " (expected " << -rank << " <= dim < "
                         << rank << ")";
  return verifyNonEmptyDim(*this, named("input", getInput()),
                           getNormalizedDim(), "the softmax dimension");
}

//===----------------------------------------------------------------------===//
// Embeddings and positional encodings
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  Operation *op = getOperation();
  Named table = named("table", getTable()), r = named("result", getResult());
  if (failed(verifyRank(op, table, 2, "[vocab, dim]")) ||
      failed(verifySameFloatElementType(op)))
    return failure();
  // Ids are clamped to [0, vocab - 1]: without rows there is nothing to
  // read.
  if (failed(verifyNonEmptyDim(op, table, 0, "vocab")) ||
      failed(verifyNonEmptyDim(op, table, 1, "embedding width")))
    return failure();
  auto ids = getIds().getType();
  if (r.type.getRank() != ids.getRank() + 1)
    return emitOpError() << "result must have rank " << ids.getRank() + 1
                         << " (ids rank + 1), got " << r.type;
  for (int64_t d = 0; d < ids.getRank(); ++d)
    if (failed(verifyDim(op, r, d, ids.getDimSize(d), "ids dimension")))
      return failure();
  return verifyDim(op, r, ids.getRank(), table.type.getDimSize(1),
                   "table dimension 1");
}

/// A positional op's first position, `offset`, which must not be negative;
/// nullopt after an error.
static std::optional<int64_t> verifyPositionOffset(Operation *op,
                                                   uint64_t attr) {
  int64_t offset = static_cast<int64_t>(attr);
  if (offset < 0) {
    op->emitOpError() << "offset must be >= 0, got " << offset;
    return std::nullopt;
  }
  return offset;
}

/// `x` is `shape` (rank `rank`) with a non-empty last dimension `name`,
/// which must also be even when `pairs` names what its pairs are for;
/// returns that dimension.
static FailureOr<int64_t> verifyPairedLastDim(Operation *op, Named x,
                                              int64_t rank, StringRef shape,
                                              StringRef name, StringRef pairs) {
  if (failed(verifyRank(op, x, rank, shape)) ||
      failed(verifyNonEmptyDim(op, x, rank - 1, name)))
    return failure();
  int64_t d = x.type.getDimSize(rank - 1);
  if (!pairs.empty() && !ShapedType::isDynamic(d) && d % 2 != 0)
    return op->emitOpError()
           << name << " (input dimension " << rank - 1 << ") must be even for "
           << pairs << " pairs, got " << d;
  return d;
}

LogicalResult SinusoidalPosOp::verify() {
  if (failed(verifyPairedLastDim(*this, named("input", getInput()), 3,
                                 "[batch, seq, d_model]", "d_model",
                                 "sin/cos")) ||
      failed(verifyStartPositions(*this, getPositions(),
                                  getInput().getType().getDimSize(0))))
    return failure();
  return success(verifyPositionOffset(*this, getOffset()).has_value());
}

LogicalResult LearnedPosOp::verify() {
  Operation *op = getOperation();
  Named x = named("input", getInput()), table = named("table", getTable());
  if (failed(verifyRank(op, x, 3, "[batch, seq, d_model]")) ||
      failed(verifyRank(op, table, 2, "[max_positions, d_model]")) ||
      failed(verifyDim(op, table, 1, x.type.getDimSize(2),
                       "input dimension 2, d_model")) ||
      failed(verifySameFloatElementType(op)))
    return failure();
  std::optional<int64_t> maybeOffset = verifyPositionOffset(op, getOffset());
  if (!maybeOffset ||
      failed(verifyStartPositions(op, getPositions(), x.type.getDimSize(0))))
    return failure();
  int64_t offset = *maybeOffset;
  if (failed(verifyNonEmptyDim(op, table, 0, "max_positions")) ||
      failed(verifyNonEmptyDim(op, table, 1, "d_model")))
    return failure();
  int64_t s = x.type.getDimSize(1), p = table.type.getDimSize(0);
  if (!ShapedType::isDynamic(s) && !ShapedType::isDynamic(p) &&
      (offset > p || s > p - offset)) {
    int64_t end;
    if (llvm::AddOverflow(offset, s, end))
      return emitOpError() << "positions from " << offset << " for " << s
                           << " rows exceed the table's " << p << " rows";
    return emitOpError() << "positions [" << offset << ", " << end
                         << ") exceed the table's " << p << " rows";
  }
  return success();
}

LogicalResult RotaryOp::verify() {
  // With rotary_dim, only the first rotary_dim lanes pair up.
  std::optional<int64_t> rotary = toSigned(getRotaryDim());
  FailureOr<int64_t> dh = verifyPairedLastDim(
      *this, named("input", getInput()), 4, "[batch, heads, seq, head_dim]",
      "head_dim", rotary ? "" : "rotary");
  if (failed(dh))
    return failure();
  if (rotary && (*rotary <= 0 || *rotary % 2 != 0 ||
                 (!ShapedType::isDynamic(*dh) && *rotary > *dh)))
    return emitOpError() << "rotary_dim must be even and in (0, head_dim = "
                         << dimString(*dh) << "], got " << *rotary;
  if (failed(
          verifyPositiveFinite(*this, "base", getBase().convertToDouble())) ||
      failed(
          verifyPositiveFinite(*this, "scale", getScale().convertToDouble())) ||
      failed(verifyStartPositions(*this, getPositions(),
                                  getInput().getType().getDimSize(0))))
    return failure();
  std::optional<int64_t> r = rotary;
  if (!r && !ShapedType::isDynamic(*dh))
    r = *dh;
  // A table of frequencies, one per rotary pair.
  auto verifyTable =
      [&](StringRef name,
          std::optional<ArrayRef<double>> table) -> LogicalResult {
    if (!table)
      return success();
    if (!r)
      return emitOpError() << name << " needs rotary_dim or a static head_dim";
    if (static_cast<int64_t>(table->size()) * 2 != *r)
      return emitOpError() << name << " has " << table->size()
                           << " values; rotary_dim " << *r << " needs "
                           << *r / 2;
    for (double f : *table)
      if (!std::isfinite(f) || f <= 0.0)
        return emitOpError()
               << name << " values must be positive and finite, got " << f;
    return success();
  };
  if (failed(verifyTable("inv_freq", getInvFreq())) ||
      failed(verifyTable("long_inv_freq", getLongInvFreq())))
    return failure();
  // Past the threshold the frequencies come from exactly one source.
  std::optional<int64_t> threshold = toSigned(getLengthThreshold());
  bool hasLong = getLongInvFreq().has_value();
  std::optional<APFloat> ntk = getNtkFactor();
  if (threshold && hasLong == ntk.has_value())
    return emitOpError() << "length_threshold needs exactly one of "
                            "long_inv_freq and ntk_factor";
  if (!threshold && (hasLong || ntk))
    return emitOpError() << (hasLong ? "long_inv_freq" : "ntk_factor")
                         << " needs length_threshold, the length past which "
                            "it applies";
  if (threshold && *threshold <= 0)
    return emitOpError() << "length_threshold must be positive, got "
                         << *threshold;
  if (ntk) {
    if (failed(
            verifyPositiveFinite(*this, "ntk_factor", ntk->convertToDouble())))
      return failure();
    // The grown base has the exponent R / (R - 2).
    if (r && *r <= 2)
      return emitOpError() << "ntk_factor needs a rotary width above 2, got "
                           << *r;
  }
  return success(verifyPositionOffset(*this, getOffset()).has_value());
}

LogicalResult CacheWriteOp::verify() {
  Operation *op = getOperation();
  Named cache = named("cache", getCache()), rows = named("new", getNewRows());
  if (failed(verifyRank(op, cache, 4, "[batch, heads, length, head_dim]")) ||
      failed(verifyRank(op, rows, 4, "[batch, heads, tokens, head_dim]")) ||
      failed(verifyDim(op, rows, 0, cache.type.getDimSize(0),
                       "cache dimension 0, batch")) ||
      failed(verifyDim(op, rows, 1, cache.type.getDimSize(1),
                       "cache dimension 1, heads")) ||
      failed(verifyDim(op, rows, 3, cache.type.getDimSize(3),
                       "cache dimension 3, head_dim")) ||
      failed(verifySameFloatElementType(op)) ||
      failed(
          verifyStartPositions(op, getPositions(), cache.type.getDimSize(0))))
    return failure();
  int64_t t = rows.type.getDimSize(2), l = cache.type.getDimSize(2);
  if (!ShapedType::isDynamic(t) && !ShapedType::isDynamic(l) && t > l)
    return emitOpError() << "writes " << t << " rows into a cache of length "
                         << l;
  return success();
}

//===----------------------------------------------------------------------===//
// LayerOp
//===----------------------------------------------------------------------===//

LogicalResult LayerOp::verify() {
  if (getInputs().empty() || getResults().empty())
    return emitOpError("needs the residual stream as its first operand and "
                       "first result");
  if (getInputs()[0].getType() != getResult(0).getType())
    return emitOpError() << "first result type " << getResult(0).getType()
                         << " must equal the residual stream (first operand) "
                            "type "
                         << getInputs()[0].getType()
                         << " so that the layer can be dropped";
  if (std::optional<double> score = toDouble(getScore());
      score && !std::isfinite(*score))
    return emitOpError("score must be finite");
  // A layer is one block of the stack: LayerDrop, pruning and outlining
  // take each as a unit, and a layer inside another has no depth of its own.
  if (auto outer = getOperation()->getParentOfType<LayerOp>()) {
    InFlightDiagnostic diag =
        emitOpError("is nested in another attn.layer; layers form one flat "
                    "stack in a function");
    diag.attachNote(outer.getLoc()) << "enclosing attn.layer";
    return diag;
  }
  return verifyUniqueIndices();
}

LogicalResult LayerOp::verifyUniqueIndices() {
  // LayerDrop keep-lists, scores files and search results name layers by
  // index, so two layers of one block must not share one. Only the first
  // layer of a block scans it, which keeps the check linear in the block.
  for (Operation *prev = getOperation()->getPrevNode(); prev;
       prev = prev->getPrevNode())
    if (isa<LayerOp>(prev))
      return success();
  llvm::DenseMap<uint64_t, LayerOp> seen;
  for (Operation &other : *getOperation()->getBlock()) {
    auto layer = dyn_cast<LayerOp>(&other);
    if (!layer)
      continue;
    auto [it, inserted] = seen.try_emplace(layer.getIndex(), layer);
    if (inserted)
      continue;
    InFlightDiagnostic diag = layer.emitOpError()
                              << "index " << layer.getIndex()
                              << " is already used by another layer of this "
                                 "block; layer indices must be unique";
    diag.attachNote(it->second.getLoc())
        << "first layer with index " << layer.getIndex();
    return diag;
  }
  return success();
}

LogicalResult LayerOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments but the layer has "
                         << getInputs().size() << " operands";
  for (auto [i, arg, input] : llvm::enumerate(body.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError() << "body argument #" << i << " has type "
                           << arg.getType() << " but operand #" << i
                           << " has type " << input.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return yield.emitOpError() << "yields (" << yield.getValues().getTypes()
                               << ") but the enclosing attn.layer returns ("
                               << getResultTypes() << ")";
  return success();
}

#define GET_OP_CLASSES
#include "attnc/Dialect/Attn/AttnOps.cpp.inc"

Value mlir::attn::createKeySlopeBias(OpBuilder &b, Location loc,
                                     FloatType elementType,
                                     ArrayRef<double> slopes, int64_t keys) {
  SmallVector<APFloat> values;
  values.reserve(slopes.size() * keys);
  for (double slope : slopes)
    for (int64_t k = 0; k < keys; ++k) {
      APFloat v(static_cast<float>(slope) * static_cast<float>(k));
      bool lost;
      v.convert(elementType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(v);
    }
  auto type = RankedTensorType::get(
      {1, static_cast<int64_t>(slopes.size()), 1, keys}, elementType);
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}
