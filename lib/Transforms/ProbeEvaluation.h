//===- ProbeEvaluation.h - size-only values at chosen sizes ----*- C++ -*-===//
//
// Exporters compute attention masks and rotary tables at run time from the
// sequence length alone (index grids, comparisons, `cos(t * inv_freq)`),
// in a different graph for every exporter and version. Rather than match
// each graph, the raising and KV-cache passes evaluate such a value on the
// host at a few chosen input sizes (and chosen data for inputs like the
// attention mask) and check the numbers against the closed form they stand
// for. The evaluator interprets the tensor-level ops the ONNX importer
// writes (linalg structured ops with arith/math bodies, tensor reshapes,
// slices, concatenations, extracts); anything else, or data it was not
// given, makes the evaluation fail, never guess.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TRANSFORMS_PROBEEVALUATION_H
#define ATTNC_LIB_TRANSFORMS_PROBEEVALUATION_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

/// A concrete tensor or scalar. Integers (and i1, as 0/1) are held as
/// int64, floats as double rounded to their element type after each op.
struct ProbeValue {
  SmallVector<int64_t> shape;
  bool isTensor = false;
  bool isFloat = false;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  int64_t numElements() const;
  /// Element `i` (row-major) as a double.
  double at(int64_t i) const { return isFloat ? floats[i] : ints[i]; }
};

class ProbeEvaluator {
public:
  /// Evaluates values of the function whose entry block is `entry`.
  explicit ProbeEvaluator(Block *entry) : entry(entry) {}

  /// The concrete shape of an entry argument (its static dimensions must
  /// agree).
  void setArgumentShape(BlockArgument arg, ArrayRef<int64_t> shape);
  /// The shape given to an entry argument, or null.
  const SmallVector<int64_t> *getArgumentShape(BlockArgument arg) const {
    auto it = argShapes.find(arg);
    return it == argShapes.end() ? nullptr : &it->second;
  }
  /// The data of an integer entry argument (row-major).
  void setArgumentData(BlockArgument arg, std::vector<int64_t> data);
  /// Sets every entry argument's shape from the sizes of its dimension
  /// symbols (attn.dim_symbols): each symbol in `sizes` gets that size, and
  /// static dimensions keep theirs. Fails for a dynamic dimension without a
  /// listed symbol, unless `otherSize` is given for such dimensions.
  LogicalResult
  setShapesFromSymbols(const llvm::StringMap<int64_t> &sizes,
                       std::optional<int64_t> otherSize = std::nullopt);

  /// The value of `v`; failure (with reason()) if it needs an op the
  /// evaluator does not know, argument data it was not given, or more than
  /// its element budget.
  FailureOr<ProbeValue> evaluate(Value v);
  /// Evaluates every integer constant (not i1) equal to `from` as `to`
  /// instead (and `-from` as `-to`): a stand-in for a constant too large to
  /// probe at.
  void overrideIntegerConstant(int64_t from, int64_t to) {
    intOverrides[from] = to;
    intOverrides[-from] = -to;
  }
  /// Drops the computed values (after changing shapes or data).
  void reset() { values.clear(); }
  const std::string &reason() const { return failureReason; }

private:
  FailureOr<ProbeValue> evaluateOp(Operation *op, unsigned resultNumber);
  FailureOr<int64_t> evaluateIndex(Value v);
  FailureOr<int64_t> evaluateDim(Value v, int64_t d);
  LogicalResult fail(const Twine &why);

  Block *entry;
  llvm::DenseMap<Value, SmallVector<int64_t>> argShapes;
  llvm::DenseMap<Value, std::vector<int64_t>> argData;
  llvm::DenseMap<Value, ProbeValue> values;
  llvm::DenseMap<int64_t, int64_t> intOverrides;
  std::string failureReason;
};

/// Visits `root` and the values it is computed from, each once: `visit`
/// pushes onto its worklist the values to visit next (e.g. with
/// pushOperandsAndCaptures).
void walkSources(
    Value root,
    llvm::function_ref<void(Value, SmallVectorImpl<Value> &)> visit);

/// Pushes `op`'s operands and the values its regions capture from above.
void pushOperandsAndCaptures(Operation *op, SmallVectorImpl<Value> &work);

/// The ops `root` is computed from, nested body ops and the values bodies
/// capture included (what a probe of `root` evaluates).
void collectComputation(Value root, llvm::SetVector<Operation *> &ops);

/// The dimension symbols of a decoder with past inputs: the past's length
/// and the new tokens' (any other symbol is taken as their sum, e.g. the
/// attention mask's length).
struct PastSymbols {
  StringRef past, sequence;
};

/// Rotary tables as probed: `cos = scale * cos(t * invFreq[i % half])` and
/// the same with `sin`, for token index `t` and channel `i`.
struct RotaryProbe {
  SmallVector<double> invFreq;
  double scale = 1.0;
};

/// If `cosTable` and `sinTable` (broadcastable to `[.., T, R]`, R even)
/// depend only on the sequence length T and are the rotary tables of token
/// indices 0..T-1 at every probed length: their frequencies and scale.
/// Tables with comparisons (dynamic rope scaling, chosen by length) are
/// refused. `why` says what did not hold. With `past`, token `t` sits at
/// position `P + t` after a past of P.
FailureOr<RotaryProbe> probeRotaryTables(Value cosTable, Value sinTable,
                                         Block *entry, std::string &why,
                                         const PastSymbols *past = nullptr);

/// A mask bias as probed: the causal mask, a sliding window, and a score
/// bias linear in the key's position (ALiBi).
struct CausalBiasProbe {
  /// The window (0 for none).
  int64_t window = 0;
  /// Per head (the bias's dimension -3, or one for all heads), the slope
  /// `s` of a bias `s * k` for key `k` on the visible keys, plus what is
  /// the same for a whole row (which softmax ignores); empty when the
  /// visible part is zero.
  SmallVector<double> keySlopes;
};

/// If `bias` (broadcastable to `[B, H, T, T]`), computed from sizes and the
/// attention-mask inputs `masks`, is with every mask input all ones the
/// causal mask at every probed length (at most -1e4 where key `k > q` or
/// `q - k >= window`), and elsewhere `keySlopes[h] * k` plus a constant per
/// row: the window and slopes. The probed lengths include each small
/// integer constant of the computation, so a sliding window shows. One
/// constant too large to probe at (a real model's window, 4096) is probed
/// through small stand-ins: the window must be each stand-in, and is then
/// the constant; more than one such constant refuses. With `past`, the bias is
/// `[.., T, P
/// + T]` after a past of P keys, query `q` at position `P + q`.
FailureOr<CausalBiasProbe> probeCausalBias(Value bias, Block *entry,
                                           ArrayRef<BlockArgument> masks,
                                           std::string &why,
                                           const PastSymbols *past = nullptr);

/// If the integer tensor `ids` (last axis the sequence), computed from
/// sizes and the attention-mask inputs `masks`, is with every mask input all
/// ones `t + c` for token index `t` at every probed length (position ids
/// derived from the mask, as OPT computes them): `c`. With `past`, `P + t +
/// c` after a past of P.
FailureOr<int64_t> probeTokenIndexIds(Value ids, Block *entry,
                                      ArrayRef<BlockArgument> masks,
                                      std::string &why,
                                      const PastSymbols *past = nullptr);

} // namespace mlir::attn

#endif // ATTNC_LIB_TRANSFORMS_PROBEEVALUATION_H
