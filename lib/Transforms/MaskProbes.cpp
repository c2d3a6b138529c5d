//===- MaskProbes.cpp - masks, rotary tables and ids checked by probing ---===//
//
// The probes of ProbeEvaluation.h: each evaluates a value of the imported
// model on the host at a few chosen sizes (ProbeEvaluator) and checks the
// numbers against the closed form it stands for (the causal mask with a
// window and ALiBi slopes, rotary tables, position ids).
//
//===----------------------------------------------------------------------===//

#include "ProbeEvaluation.h"

#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::walkSources(
    Value root,
    llvm::function_ref<void(Value, SmallVectorImpl<Value> &)> visit) {
  SmallVector<Value> work{root};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (seen.insert(v).second)
      visit(v, work);
  }
}

void mlir::attn::pushOperandsAndCaptures(Operation *op,
                                         SmallVectorImpl<Value> &work) {
  llvm::append_range(work, op->getOperands());
  op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (!op->isAncestor(operand.getParentRegion()->getParentOp()))
        work.push_back(operand);
  });
}

void mlir::attn::collectComputation(Value root,
                                    llvm::SetVector<Operation *> &ops) {
  walkSources(root, [&](Value v, SmallVectorImpl<Value> &work) {
    Operation *op = v.getDefiningOp();
    if (!op || !ops.insert(op))
      return;
    op->walk([&](Operation *inner) {
      if (inner != op)
        ops.insert(inner);
    });
    pushOperandsAndCaptures(op, work);
  });
}

/// Every dimension symbol of the entry arguments gets `length` (a model
/// whose batch is fixed has only sequence symbols left). With a past: its
/// symbol gets `pastLength`, the sequence's `length`, and every other one
/// (the attention mask's, past + sequence) their sum.
static LogicalResult setAllSymbols(ProbeEvaluator &evaluator, Block *entry,
                                   int64_t length,
                                   const PastSymbols *past = nullptr,
                                   int64_t pastLength = 0) {
  llvm::StringMap<int64_t> sizes;
  if (auto func = dyn_cast<func::FuncOp>(entry->getParentOp()))
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto symbols = func.getArgAttrOfType<ArrayAttr>(
              i, AttnDialect::DimSymbolsAttrHelper::getNameStr()))
        for (Attribute symbol : symbols)
          if (auto name = dyn_cast<StringAttr>(symbol);
              name && !name.getValue().empty()) {
            StringRef n = name.getValue();
            sizes[n] = !past                 ? length
                       : n == past->past     ? pastLength
                       : n == past->sequence ? length
                                             : pastLength + length;
          }
  evaluator.reset();
  // A sum of symbols (`past_sequence + sequence`) has no symbol of its own:
  // with a past, it is the mask's length.
  return evaluator.setShapesFromSymbols(
      sizes, past ? std::optional<int64_t>(pastLength + length) : std::nullopt);
}

/// Replaces `values` (probed, so rounded) by the float constant of the
/// computation `slice` that equals them within `rtol`, if there is one.
static void snapToConstant(const llvm::SetVector<Operation *> &slice,
                           SmallVectorImpl<double> &values, double rtol) {
  for (Operation *op : slice) {
    auto constant = dyn_cast<arith::ConstantOp>(op);
    auto dense =
        constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
    if (!dense || dense.getNumElements() != static_cast<int64_t>(values.size()))
      continue;
    SmallVector<double> exact;
    for (const APFloat &f : dense.getValues<APFloat>())
      exact.push_back(f.convertToDouble());
    if (llvm::all_of(llvm::seq<size_t>(0, exact.size()), [&](size_t i) {
          return std::abs(exact[i] - values[i]) <=
                 rtol * std::abs(exact[i]) + 1e-7;
        })) {
      values.assign(exact.begin(), exact.end());
      return;
    }
  }
}

FailureOr<RotaryProbe>
mlir::attn::probeRotaryTables(Value cosTable, Value sinTable, Block *entry,
                              std::string &why, const PastSymbols *past) {
  llvm::SetVector<Operation *> slice;
  collectComputation(cosTable, slice);
  collectComputation(sinTable, slice);
  for (Operation *op : slice)
    if (isa<arith::CmpIOp, arith::CmpFOp, arith::SelectOp, arith::MaxSIOp,
            arith::MinSIOp, arith::MaximumFOp, arith::MinimumFOp>(op)) {
      why = "the tables compare sizes (chosen by length)";
      return failure();
    }
  auto type = cast<ShapedType>(cosTable.getType());
  Type element = type.getElementType();
  double tolerance = element.isF32() || element.isF64() ? 2e-5 : 2e-2;
  int64_t rank = type.getRank();
  RotaryProbe probe;
  SmallVector<std::pair<int64_t, int64_t>> sizes = {{0, 5}, {0, 13}};
  if (past)
    sizes = {{3, 5}, {8, 4}};
  for (auto [pastLength, length] : sizes) {
    ProbeEvaluator evaluator(entry);
    FailureOr<ProbeValue> cosValue, sinValue;
    if (succeeded(setAllSymbols(evaluator, entry, length, past, pastLength))) {
      cosValue = evaluator.evaluate(cosTable);
      if (succeeded(cosValue))
        sinValue = evaluator.evaluate(sinTable);
    }
    if (failed(cosValue) || failed(sinValue)) {
      why = "cannot evaluate the tables: " + evaluator.reason();
      return failure();
    }
    if (rank < 2 || cosValue->shape != sinValue->shape ||
        cosValue->shape[rank - 2] != length ||
        cosValue->shape[rank - 1] % 2 != 0) {
      why = "the tables are not [.., T, R] with T the sequence length";
      return failure();
    }
    int64_t width = cosValue->shape[rank - 1], half = width / 2;
    if (probe.invFreq.empty()) {
      // The scale from token 0's magnitude, the frequencies from the angle
      // between tokens 0 and 1.
      probe.scale = std::hypot(cosValue->at(0), sinValue->at(0));
      if (!(probe.scale > 0.0)) {
        why = "the tables are zero";
        return failure();
      }
      for (int64_t i = 0; i < half; ++i) {
        double c0 = cosValue->at(i), s0 = sinValue->at(i);
        double c1 = cosValue->at(width + i), s1 = sinValue->at(width + i);
        probe.invFreq.push_back(
            std::atan2(s1 * c0 - c1 * s0, c1 * c0 + s1 * s0));
      }
    }
    if (static_cast<int64_t>(probe.invFreq.size()) != half) {
      why = "the tables change width with the length";
      return failure();
    }
    for (int64_t e = 0, n = cosValue->numElements(); e < n; ++e) {
      int64_t t = (e / width) % length, i = e % width;
      double theta = (pastLength + t) * probe.invFreq[i % half];
      if (std::abs(cosValue->at(e) - probe.scale * std::cos(theta)) >
              tolerance * probe.scale ||
          std::abs(sinValue->at(e) - probe.scale * std::sin(theta)) >
              tolerance * probe.scale) {
        why = std::string("the tables differ from cos/sin(") +
              (past ? "(P + t)" : "t") + " * inv_freq) at token " +
              std::to_string(t) + ", channel " + std::to_string(i);
        return failure();
      }
    }
  }
  // Exact frequencies where the computation holds them as a constant.
  snapToConstant(slice, probe.invFreq, 1e-5);
  return probe;
}

/// Gives every mask input all ones at the shapes setAllSymbols gave.
static LogicalResult setMasksToOnes(ProbeEvaluator &evaluator,
                                    ArrayRef<BlockArgument> masks) {
  for (BlockArgument mask : masks) {
    const SmallVector<int64_t> *shape = evaluator.getArgumentShape(mask);
    if (!shape)
      return failure();
    int64_t n = 1;
    for (int64_t d : *shape)
      n *= d;
    evaluator.setArgumentData(mask, std::vector<int64_t>(n, 1));
  }
  return success();
}

FailureOr<int64_t> mlir::attn::probeTokenIndexIds(Value ids, Block *entry,
                                                  ArrayRef<BlockArgument> masks,
                                                  std::string &why,
                                                  const PastSymbols *past) {
  std::optional<int64_t> offset;
  SmallVector<std::pair<int64_t, int64_t>> sizes = {{0, 1}, {0, 4}, {0, 9}};
  if (past)
    sizes = {{2, 1}, {5, 4}, {1, 9}};
  for (auto [pastLength, length] : sizes) {
    ProbeEvaluator evaluator(entry);
    if (failed(setAllSymbols(evaluator, entry, length, past, pastLength)) ||
        failed(setMasksToOnes(evaluator, masks))) {
      why = "cannot size the inputs: " + evaluator.reason();
      return failure();
    }
    FailureOr<ProbeValue> value = evaluator.evaluate(ids);
    if (failed(value) || value->isFloat || value->shape.empty() ||
        value->shape.back() != length) {
      why = failed(value) ? "cannot evaluate the ids: " + evaluator.reason()
                          : "the ids are not [.., T] integers";
      return failure();
    }
    for (int64_t e = 0, n = value->numElements(); e < n; ++e) {
      int64_t c = value->ints[e] - pastLength - e % length;
      if (!offset)
        offset = c;
      if (c != *offset) {
        why = "the ids are not the token index plus a constant";
        return failure();
      }
    }
  }
  return *offset;
}

/// Constants above this are not probed at (a mask of N x N per length).
constexpr int64_t kMaxProbedConstant = 1024;

/// The magnitudes of the integer constants (not i1) of `slice`, scalar or
/// small dense.
static SmallVector<int64_t>
integerConstants(const llvm::SetVector<Operation *> &slice) {
  SmallVector<int64_t> out;
  for (Operation *op : slice) {
    auto constant = dyn_cast<arith::ConstantOp>(op);
    if (!constant || !getElementTypeOrSelf(constant.getType()).isIntOrIndex() ||
        getElementTypeOrSelf(constant.getType()).isInteger(1))
      continue;
    if (auto i = dyn_cast<IntegerAttr>(constant.getValue()))
      out.push_back(std::abs(i.getValue().getSExtValue()));
    else if (auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
             dense && dense.getNumElements() <= 64)
      for (const APInt &x : dense.getValues<APInt>())
        out.push_back(std::abs(x.getSExtValue()));
  }
  return out;
}

/// probeCausalBias with integer constants `standIns` (from -> to)
/// evaluated as their stand-ins.
static FailureOr<CausalBiasProbe>
probeCausalBiasWith(Value bias, Block *entry, ArrayRef<BlockArgument> masks,
                    std::string &why, const PastSymbols *past,
                    const llvm::SetVector<Operation *> &slice,
                    ArrayRef<std::pair<int64_t, int64_t>> standIns) {
  // Lengths: small ones, and around each small constant (a window).
  SmallVector<int64_t> lengths = {1, 2, 3, 6, 11};
  for (int64_t c : integerConstants(slice)) {
    for (auto [from, to] : standIns)
      if (c == from)
        c = to;
    if (c > 2)
      lengths.append({c, c + 1, c + 2});
  }
  llvm::sort(lengths);
  lengths.erase(llvm::unique(lengths), lengths.end());

  // (past, sequence) pairs: without a past only the sequence; with one, a
  // single new token and a few, after pasts of each length.
  SmallVector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t length : llvm::reverse(lengths)) {
    if (!past) {
      sizes.push_back({0, length});
      continue;
    }
    sizes.append({{length, 1}, {length, 3}, {1, length}});
  }
  auto isHiding = [](double x) { return x <= -1e4; };
  Type element = getElementTypeOrSelf(bias.getType());
  double tolerance = element.isF32() || element.isF64() ? 1e-5 : 1e-2;
  std::optional<int64_t> window;
  // Per head: the slope, once a row has shown two visible keys.
  SmallVector<std::optional<double>> slopes;
  // The longest first: it shows the window.
  for (auto [pastLength, length] : sizes) {
    ProbeEvaluator evaluator(entry);
    for (auto [from, to] : standIns)
      evaluator.overrideIntegerConstant(from, to);
    if (failed(setAllSymbols(evaluator, entry, length, past, pastLength)) ||
        failed(setMasksToOnes(evaluator, masks))) {
      why = "cannot size the inputs: " + evaluator.reason();
      return failure();
    }
    FailureOr<ProbeValue> value = evaluator.evaluate(bias);
    if (failed(value)) {
      why = "cannot evaluate the mask: " + evaluator.reason();
      return failure();
    }
    int64_t keys = pastLength + length;
    ArrayRef<int64_t> shape = value->shape;
    if (length > 1 && shape.size() >= 2 && shape[shape.size() - 2] == 1 &&
        shape.back() == keys) {
      why = "the mask is the same for every query (padding only, not causal)";
      return failure();
    }
    if (shape.size() < 2 || shape[shape.size() - 2] != length ||
        shape.back() != keys) {
      why = past ? "the mask is not [.., T, P + T] with T the sequence "
                   "length and P the past's"
                 : "the mask is not [.., T, T] with T the sequence length";
      return failure();
    }
    int64_t heads = shape.size() >= 3 ? shape[shape.size() - 3] : 1;
    if (slopes.empty())
      slopes.resize(heads);
    if (static_cast<int64_t>(slopes.size()) != heads) {
      why = "the mask changes its number of heads with the length";
      return failure();
    }
    // Query q sits at position pastLength + q (bottom-right alignment).
    if (!window) {
      // The nearest masked key on or before a query's position.
      window = 0;
      for (int64_t q = 0; q < length; ++q)
        for (int64_t k = 0; k <= pastLength + q; ++k)
          if (isHiding(value->at(q * keys + k)) &&
              (!*window || pastLength + q - k < *window))
            *window = pastLength + q - k;
      if (*window == 0 && keys > 1 && length > 1 &&
          !isHiding(value->at(pastLength + 1))) {
        why = "the mask does not hide later keys (not causal)";
        return failure();
      }
    }
    auto differs = [&](int64_t q, int64_t k, StringRef what) {
      why =
          ("the mask differs from a causal mask" +
           (*window ? " of window " + std::to_string(*window) : std::string()) +
           " at query " + std::to_string(q) + ", key " + std::to_string(k) +
           " (past " + std::to_string(pastLength) + ", length " +
           std::to_string(length) + ")" + what)
              .str();
      return failure();
    };
    for (int64_t row = 0, rows = value->numElements() / keys; row < rows;
         ++row) {
      int64_t q = row % length, h = (row / length) % heads, p = pastLength + q;
      // The row's first visible key is its reference: what is the same for
      // the whole row cancels in softmax.
      std::optional<int64_t> first;
      for (int64_t k = 0; k < keys; ++k) {
        bool visible = k <= p && (*window == 0 || p - k < *window);
        double x = value->at(row * keys + k);
        if (!visible) {
          if (!isHiding(x))
            return differs(q, k, "");
          continue;
        }
        if (isHiding(x))
          return differs(q, k, "");
        if (!first) {
          first = k;
          continue;
        }
        double x0 = value->at(row * keys + *first);
        double slope = (x - x0) / double(k - *first);
        if (!slopes[h])
          slopes[h] = slope;
        double expected = x0 + *slopes[h] * double(k - *first);
        if (std::abs(x - expected) >
            tolerance * (std::abs(x) + std::abs(x0)) + 1e-6)
          return differs(q, k, ": not a bias linear in the key");
      }
    }
  }
  CausalBiasProbe probe;
  probe.window = *window;
  if (llvm::any_of(slopes,
                   [](std::optional<double> s) { return s && *s != 0.0; })) {
    for (std::optional<double> s : slopes)
      probe.keySlopes.push_back(s.value_or(0.0));
    // Exact slopes where the computation holds them as a constant.
    snapToConstant(slice, probe.keySlopes, 1e-4);
  }
  return probe;
}

FailureOr<CausalBiasProbe>
mlir::attn::probeCausalBias(Value bias, Block *entry,
                            ArrayRef<BlockArgument> masks, std::string &why,
                            const PastSymbols *past) {
  llvm::SetVector<Operation *> slice;
  collectComputation(bias, slice);
  // Constants too large to probe at (a mask of 4096 x 4096 per length).
  SmallVector<int64_t> large;
  for (int64_t c : integerConstants(slice))
    if (c > kMaxProbedConstant && !llvm::is_contained(large, c))
      large.push_back(c);
  if (large.empty())
    return probeCausalBiasWith(bias, entry, masks, why, past, slice, {});
  if (large.size() > 1) {
    why = "the mask computation holds the constants " +
          std::to_string(large[0]) + " and " + std::to_string(large[1]) +
          ", too large to probe";
    return failure();
  }
  // The one large constant through stand-ins: a window must follow them.
  FailureOr<CausalBiasProbe> probe = failure();
  for (int64_t standIn : {5, 9}) {
    std::string standInWhy;
    probe = probeCausalBiasWith(bias, entry, masks, standInWhy, past, slice,
                                {{large[0], standIn}});
    if (failed(probe) || probe->window != standIn) {
      why = "the mask computation holds the constant " +
            std::to_string(large[0]) + ", too large to probe at, and with " +
            std::to_string(standIn) + " in its place the mask is " +
            (failed(probe)
                 ? "not causal: " + standInWhy
                 : "not a sliding window of " + std::to_string(standIn));
      return failure();
    }
  }
  probe->window = large[0];
  return probe;
}
