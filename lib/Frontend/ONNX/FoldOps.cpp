//===- FoldOps.cpp - host evaluation of mask and indexing ops -------------===//
//
// Masks and position ids that depend only on sizes (a causal mask built by
// CumSum, Mod, And/Or, a padding ScatterND, ...) are computed on the host
// like the rest of ConstantFolding.cpp, so that no run-time work is left for
// them. Elements are doubles (floats) or int64 (integers and bool).
//
//===----------------------------------------------------------------------===//

#include "FoldUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace attnc::onnx_frontend;
using namespace attnc::onnx_frontend::fold;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

namespace {
/// Steps `idx` to the next row-major position of `shape`.
void advance(SmallVector<int64_t> &idx, ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++idx[d] < shape[d])
      return;
    idx[d] = 0;
  }
}

int64_t flatOf(ArrayRef<int64_t> idx, ArrayRef<int64_t> strides) {
  int64_t f = 0;
  for (size_t d = 0; d < idx.size(); ++d)
    f += idx[d] * strides[d];
  return f;
}

std::string stringAttr(const onnx::NodeProto &node, StringRef name,
                       StringRef dflt) {
  const onnx::AttributeProto *a = findAttribute(node, name);
  return a ? a->s() : dflt.str();
}
} // namespace

bool attnc::onnx_frontend::foldTransformerOps(
    const onnx::NodeProto &node, int opset, ArrayRef<const HostTensor *> inputs,
    FoldResult &result, std::string &error) {
  StringRef op = node.op_type();
  fold::FoldArgs args{inputs, result, error};
  auto [in, done, need] = args.accessors();

  using Fn = std::function<double(ArrayRef<double>)>;
  if (op == "Xor" || op == "Mod") {
    auto shape = args.binaryShape();
    if (!shape)
      return false;
    if (op == "Xor")
      return done(elementwise({in(0), in(1)}, in(0)->dtype, *shape,
                              [](ArrayRef<double> a) {
                                return double((a[0] != 0) != (a[1] != 0));
                              }));
    bool fmod = getIntAttr(node, "fmod", 0) != 0;
    if (in(0)->isFloat() && !fmod) {
      error = "fmod must be 1 for floating-point operands";
      return false;
    }
    bool isInt = !in(0)->isFloat();
    bool zeroDivisor = false;
    HostTensor out = elementwise(
        {in(0), in(1)}, in(0)->dtype, *shape, [&](ArrayRef<double> a) {
          if (isInt && a[1] == 0) {
            zeroDivisor = true;
            return 0.0;
          }
          double r = std::fmod(a[0], a[1]);
          if (!fmod && r != 0 && ((r < 0) != (a[1] < 0)))
            r += a[1];
          return r;
        });
    if (zeroDivisor) {
      error = "divides by zero";
      return false;
    }
    return done(std::move(out));
  }
  if (op == "IsNaN" || op == "IsInf") {
    if (!need(1))
      return false;
    bool neg = getIntAttr(node, "detect_negative", 1) != 0,
         pos = getIntAttr(node, "detect_positive", 1) != 0;
    bool isNaN = op == "IsNaN";
    return done(elementwise({in(0)}, onnx::TensorProto::BOOL, in(0)->shape,
                            [&](ArrayRef<double> a) {
                              if (isNaN)
                                return double(std::isnan(a[0]));
                              return double(
                                  std::isinf(a[0]) &&
                                  ((a[0] > 0 && pos) || (a[0] < 0 && neg)));
                            }));
  }
  if (op == "Clip") {
    if (!need(1))
      return false;
    double lo =
        in(1) ? in(1)->asDouble(0) : -std::numeric_limits<double>::infinity();
    double hi =
        in(2) ? in(2)->asDouble(0) : std::numeric_limits<double>::infinity();
    return done(elementwise(
        {in(0)}, in(0)->dtype, in(0)->shape, [&](ArrayRef<double> a) {
          return std::isnan(a[0]) ? a[0] : std::min(std::max(a[0], lo), hi);
        }));
  }
  if (op == "CumSum") {
    if (!need(2))
      return false;
    int64_t rank = static_cast<int64_t>(in(0)->shape.size());
    int64_t axis = in(1)->asInt(0);
    if (!normalizeAxis(axis, rank, error))
      return false;
    bool exclusive = getIntAttr(node, "exclusive", 0) != 0,
         reverse = getIntAttr(node, "reverse", 0) != 0;
    const HostTensor &x = *in(0);
    HostTensor out = HostTensor::zeros(x.dtype, x.shape);
    SmallVector<int64_t> strides = stridesOf(x.shape);
    int64_t n = x.shape[axis], step = strides[axis];
    for (int64_t base = 0, e = x.numElements(); base < e; ++base) {
      if ((base / step) % n != 0)
        continue; // not the first element of its line
      double sumF = 0;
      int64_t sumI = 0;
      for (int64_t t = 0; t < n; ++t) {
        int64_t k = reverse ? n - 1 - t : t;
        int64_t at = base + k * step;
        if (exclusive)
          out.isFloat() ? void(out.floats[at] = sumF)
                        : void(out.ints[at] = sumI);
        if (x.isFloat())
          sumF += x.floats[at];
        else
          sumI += x.ints[at];
        if (!exclusive)
          out.isFloat() ? void(out.floats[at] = sumF)
                        : void(out.ints[at] = sumI);
      }
    }
    return done(std::move(out));
  }
  if (op == "Tile") {
    if (!need(2))
      return false;
    const HostTensor &x = *in(0);
    std::vector<int64_t> reps = in(1)->toInts();
    if (reps.size() != x.shape.size() ||
        llvm::any_of(reps, [](int64_t r) { return r < 0; })) {
      error = "repeats must have one non-negative entry per dimension";
      return false;
    }
    SmallVector<int64_t> shape;
    for (size_t d = 0; d < reps.size(); ++d)
      shape.push_back(x.shape[d] * reps[d]);
    HostTensor out = HostTensor::zeros(x.dtype, shape);
    SmallVector<int64_t> idx(shape.size(), 0), src(shape.size());
    SmallVector<int64_t> strides = stridesOf(x.shape);
    for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
      for (size_t d = 0; d < shape.size(); ++d)
        src[d] = idx[d] % x.shape[d];
      out.copyFrom(i, x, flatOf(src, strides));
      advance(idx, shape);
    }
    return done(std::move(out));
  }
  if (op == "Pad") {
    if (!need(2))
      return false;
    std::string mode = stringAttr(node, "mode", "constant");
    if (mode != "constant" && mode != "edge" && mode != "reflect" &&
        (mode != "wrap" || opset < 19)) {
      error = "mode '" + mode + "' is not supported (constant, edge, reflect" +
              (opset >= 19 ? ", wrap" : "") + ")";
      return false;
    }
    const HostTensor &x = *in(0);
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> pads = in(1)->toInts(), axes;
    if (opset >= 18 && in(3))
      axes = in(3)->toInts();
    else
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    if (pads.size() != 2 * axes.size()) {
      error = "pads has the wrong length";
      return false;
    }
    SmallVector<int64_t> low(rank, 0), shape = x.shape;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (!normalizeAxis(a, rank, error))
        return false;
      if (pads[i] < 0 || pads[i + axes.size()] < 0) {
        error = "negative pads are not supported";
        return false;
      }
      low[a] += pads[i];
      shape[a] += pads[i] + pads[i + axes.size()];
    }
    HostTensor out = HostTensor::zeros(x.dtype, shape);
    double value = in(2) ? in(2)->asDouble(0) : 0.0;
    if (mode != "constant" && x.numElements() == 0) {
      error = "pads an empty input in mode '" + mode + "'";
      return false;
    }
    // Each output element reads input index o - low folded into [0, n) as
    // Importer::padByIndex does, or (constant) the value outside.
    SmallVector<int64_t> idx(rank, 0), src(rank);
    SmallVector<int64_t> inStrides = stridesOf(x.shape);
    for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
      bool inside = true;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t n = x.shape[d], j = idx[d] - low[d];
        if (mode == "constant") {
          inside &= j >= 0 && j < n;
        } else if (mode == "edge") {
          j = std::clamp<int64_t>(j, 0, n - 1);
        } else if (mode == "wrap") {
          j = ((j % n) + n) % n;
        } else {
          int64_t period = std::max<int64_t>(2 * (n - 1), 1);
          int64_t m = ((j % period) + period) % period;
          j = std::min(m < n ? m : period - m, n - 1);
        }
        src[d] = j;
      }
      if (inside)
        out.copyFrom(i, x, flatOf(src, inStrides));
      else
        out.set(i, value);
      advance(idx, shape);
    }
    return done(std::move(out));
  }
  if (op == "GatherElements" || op == "ScatterElements") {
    bool scatter = op == "ScatterElements";
    if (!need(scatter ? 3 : 2))
      return false;
    const HostTensor &data = *in(0), &indices = *in(1);
    int64_t rank = static_cast<int64_t>(data.shape.size());
    int64_t axis = getIntAttr(node, "axis", 0);
    if (!normalizeAxis(axis, rank, error))
      return false;
    if (indices.shape.size() != data.shape.size() ||
        (scatter && in(2)->shape != indices.shape)) {
      error = "indices (and updates) must have data's rank (and one shape)";
      return false;
    }
    std::string reduction = stringAttr(node, "reduction", "none");
    HostTensor out =
        scatter ? data : HostTensor::zeros(data.dtype, indices.shape);
    SmallVector<int64_t> strides = stridesOf(data.shape);
    SmallVector<int64_t> idx(rank, 0);
    std::vector<int64_t> flat = indices.toInts();
    for (int64_t i = 0, e = indices.numElements(); i < e; ++i) {
      SmallVector<int64_t> at(idx);
      at[axis] = flat[i];
      if (!wrapIndex(at[axis], data.shape[axis], error))
        return false;
      int64_t target = flatOf(at, strides);
      if (!scatter) {
        out.copyFrom(i, data, target);
      } else if (reduction == "none") {
        out.copyFrom(target, *in(2), i);
      } else {
        double o = out.asDouble(target), u = in(2)->asDouble(i);
        double v = reduction == "add"   ? o + u
                   : reduction == "mul" ? o * u
                   : reduction == "max" ? std::max(o, u)
                                        : std::min(o, u);
        out.set(target, v);
      }
      advance(idx, indices.shape);
    }
    return done(std::move(out));
  }
  if (op == "GatherND" || op == "ScatterND") {
    bool scatter = op == "ScatterND";
    if (!need(scatter ? 3 : 2))
      return false;
    const HostTensor &data = *in(0), &indices = *in(1);
    int64_t r = static_cast<int64_t>(data.shape.size());
    int64_t q = static_cast<int64_t>(indices.shape.size());
    int64_t batch = scatter ? 0 : getIntAttr(node, "batch_dims", 0);
    if (q < 1 || batch < 0 || batch >= std::min(q, r) ||
        batch + indices.shape.back() > r) {
      error = "indices do not fit data";
      return false;
    }
    int64_t k = indices.shape.back();
    // Each index tuple addresses a slice of data.shape[batch + k:].
    int64_t slice = 1;
    for (int64_t d = batch + k; d < r; ++d)
      slice *= data.shape[d];
    SmallVector<int64_t> strides = stridesOf(data.shape);
    std::vector<int64_t> flat = indices.toInts();
    int64_t tuples = k ? indices.numElements() / k : 0;
    int64_t perBatch = 1;
    for (int64_t d = batch; d < q - 1; ++d)
      perBatch *= indices.shape[d];
    SmallVector<int64_t> outShape(indices.shape.begin(),
                                  indices.shape.end() - 1);
    outShape.append(data.shape.begin() + batch + k, data.shape.end());
    if (scatter && in(2)->shape != outShape) {
      error = "updates do not have the shape indices and data give";
      return false;
    }
    std::string reduction = stringAttr(node, "reduction", "none");
    HostTensor out = scatter ? data : HostTensor::zeros(data.dtype, outShape);
    for (int64_t t = 0; t < tuples; ++t) {
      SmallVector<int64_t> at(r, 0);
      // The batch coordinates of tuple t.
      int64_t b = perBatch ? t / perBatch : 0;
      for (int64_t d = batch - 1; d >= 0; --d) {
        at[d] = b % data.shape[d];
        b /= data.shape[d];
      }
      for (int64_t j = 0; j < k; ++j) {
        at[batch + j] = flat[t * k + j];
        if (!wrapIndex(at[batch + j], data.shape[batch + j], error))
          return false;
      }
      int64_t base = flatOf(at, strides);
      for (int64_t s = 0; s < slice; ++s) {
        if (!scatter) {
          out.copyFrom(t * slice + s, data, base + s);
        } else if (reduction == "none") {
          out.copyFrom(base + s, *in(2), t * slice + s);
        } else {
          double o = out.asDouble(base + s), u = in(2)->asDouble(t * slice + s);
          out.set(base + s, reduction == "add"   ? o + u
                            : reduction == "mul" ? o * u
                            : reduction == "max" ? std::max(o, u)
                                                 : std::min(o, u));
        }
      }
    }
    return done(std::move(out));
  }
  if (op == "ReduceSum" || op == "ReduceMax") {
    if (!need(1))
      return false;
    const HostTensor &x = *in(0);
    int64_t rank = static_cast<int64_t>(x.shape.size());
    bool fromInput = op == "ReduceSum" || opset >= 18;
    std::vector<int64_t> axes;
    if (fromInput && in(1))
      axes = in(1)->toInts();
    else if (!fromInput)
      if (auto a = getIntsAttr(node, "axes"))
        axes = *a;
    if (axes.empty()) {
      if (fromInput && getIntAttr(node, "noop_with_empty_axes", 0))
        return done(x);
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    }
    SmallVector<bool> reduced(rank, false);
    for (int64_t a : axes) {
      if (!normalizeAxis(a, rank, error))
        return false;
      reduced[a] = true;
    }
    bool keep = getIntAttr(node, "keepdims", 1) != 0;
    SmallVector<int64_t> keptShape, outShape;
    for (int64_t d = 0; d < rank; ++d) {
      keptShape.push_back(reduced[d] ? 1 : x.shape[d]);
      if (!reduced[d] || keep)
        outShape.push_back(keptShape.back());
    }
    bool isMax = op == "ReduceMax";
    HostTensor out = HostTensor::zeros(x.dtype, outShape);
    int64_t n = out.numElements();
    std::vector<bool> seen(n, false);
    SmallVector<int64_t> keptStrides = stridesOf(keptShape);
    SmallVector<int64_t> idx(rank, 0), to(rank);
    for (int64_t i = 0, e = x.numElements(); i < e; ++i) {
      for (int64_t d = 0; d < rank; ++d)
        to[d] = reduced[d] ? 0 : idx[d];
      int64_t o = flatOf(to, keptStrides);
      if (x.isFloat()) {
        double v = x.floats[i];
        out.floats[o] = !seen[o] ? v
                        : isMax  ? std::max(out.floats[o], v)
                                 : out.floats[o] + v;
      } else {
        int64_t v = x.ints[i];
        out.ints[o] = !seen[o] ? v
                      : isMax  ? std::max(out.ints[o], v)
                               : out.ints[o] + v;
      }
      seen[o] = true;
      advance(idx, x.shape);
    }
    if (n && llvm::is_contained(seen, false)) {
      error = "reduces over an empty dimension";
      return false;
    }
    return done(std::move(out));
  }
  return true;
}
