//===- BindKVCache.cpp - past key/value inputs -> KV-cache model state ----===//
//
// An exported decoder with past key/values is a function of the past: it
// takes `past [B, H, P, D]` per layer, concatenates the step's keys and
// values on the sequence axis, attends over `P + T` keys (with an attention
// mask input over them) and returns the concatenation as `present`. Every
// step copies the whole cache in and out. This pass binds such a model to
// KV-cache state instead (the form attn-import --hf --kv-cache builds):
//
//   - each past input becomes a cache `[B, H, N, D]` (N: cache-length),
//     written in place by `attn.cache_write` at run-time `positions [B]`
//     (a new input: each sequence's past length, so sequences of different
//     lengths share a run), its `present` result the cache's new value
//     (`attn.state_arg`);
//   - attention over the concatenation attends over the cache with
//     `kv_lengths = positions + T` and, when causal, `query_positions`;
//   - learned positions after the past start at `positions`;
//   - the attention mask input is dropped: the bound step is the model run
//     per sequence with its own past and a mask of ones, which is what
//     generation feeds (padding is carried by each sequence's length).
//
// Whatever else depends on the past length or the mask cannot be expressed
// per sequence and is a located error, as are inputs of other forms.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "ProbeEvaluation.h"
#include "Raise/RaiseMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBINDKVCACHE
#include "attnc/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A past input and the concatenation that extends it.
struct PastPair {
  BlockArgument past;
  tensor::ConcatOp concat;
  CacheWriteOp write;
};

/// The entry block's arguments that the values of `root` depend on (through
/// operands and values that nested regions capture; not through sizes,
/// which the binding changes anyway).
static void collectArgSources(Value root, Block *entry,
                              llvm::SetVector<BlockArgument> &args,
                              bool throughSizes = true) {
  walkSources(root, [&](Value v, SmallVectorImpl<Value> &work) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == entry)
        args.insert(arg);
      return;
    }
    Operation *op = v.getDefiningOp();
    if (isa<tensor::EmptyOp>(op) || (!throughSizes && isa<tensor::DimOp>(op)))
      return;
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      work.push_back(expand.getSrc());
      return;
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      work.push_back(slice.getSource());
      llvm::append_range(work, slice.getOffsets());
      return;
    }
    pushOperandsAndCaptures(op, work);
  });
}

/// Whether `op` computes values from the loop index alone (a Range, an index
/// grid): token indices 0..T-1 in a stateless model.
static bool isTokenIndexOp(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 0)
    return false;
  return !generic.getBody()->getOps<linalg::IndexOp>().empty();
}

/// Whether `root` is computed from token indices (isTokenIndexOp).
static bool dependsOnTokenIndex(Value root) {
  llvm::SetVector<Operation *> computation;
  collectComputation(root, computation);
  return llvm::any_of(computation, isTokenIndexOp);
}

/// Whether `v` is (a cast of) the index value `length`.
static bool isCastOf(Value v, Value length) {
  while (v != length) {
    Operation *op = v.getDefiningOp();
    if (!op || !isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(op))
      return false;
    v = op->getOperand(0);
  }
  return true;
}

/// `positions[b] + t + offset` as `type` ([B, T] integers), T = `steps`
/// where it is dynamic.
static Value buildPositionIds(OpBuilder &b, Location loc, RankedTensorType type,
                              Value positions, Value steps, int64_t offset) {
  auto element = cast<IntegerType>(type.getElementType());
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element,
                                        type.isDynamicDim(1) ? ValueRange{steps}
                                                             : ValueRange{});
  MLIRContext *ctx = b.getContext();
  auto ids = linalg::GenericOp::create(
      b, loc, type, ValueRange{positions}, ValueRange{empty},
      ArrayRef<AffineMap>{AffineMap::get(2, 0, getAffineDimExpr(0, ctx)),
                          b.getMultiDimIdentityMap(2)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value t = linalg::IndexOp::create(nb, l, 1);
        t = arith::IndexCastOp::create(nb, l, nb.getI64Type(), t);
        Value id = arith::AddIOp::create(nb, l, args[0], t);
        if (offset)
          id = arith::AddIOp::create(
              nb, l, id,
              arith::ConstantIntOp::create(nb, l, nb.getI64Type(), offset));
        if (element.getWidth() < 64)
          id = arith::TruncIOp::create(nb, l, element, id);
        linalg::YieldOp::create(nb, l, id);
      });
  return ids.getResult(0);
}

/// Inserts the input `positions [batch]` (i64): right after the token ids
/// (the argument an attn.embedding looks up), where generation expects it;
/// after the first argument otherwise.
static FailureOr<Value> insertPositions(func::FuncOp entry, int64_t batch) {
  Block &body = entry.getBody().front();
  Builder b(entry.getContext());
  auto type = RankedTensorType::get({batch}, b.getI64Type());
  unsigned index = body.getNumArguments() > 0 ? 1 : 0;
  for (BlockArgument arg : body.getArguments())
    if (llvm::any_of(arg.getUsers(), [&](Operation *user) {
          auto lookup = dyn_cast<EmbeddingOp>(user);
          return lookup && lookup.getIds() == arg;
        })) {
      index = arg.getArgNumber() + 1;
      break;
    }
  if (failed(
          entry.insertArgument(index, type,
                               b.getDictionaryAttr(b.getNamedAttr(
                                   "attn.name", b.getStringAttr("positions"))),
                               entry.getLoc())))
    return failure();
  return Value(body.getArgument(index));
}

/// `positions + T` ([B] i64), T the new rows' length (axis 2).
static Value kvLengthsAfter(OpBuilder &b, Location loc, Value positions,
                            Value newRows) {
  auto type = cast<RankedTensorType>(positions.getType());
  Value steps = tensor::DimOp::create(b, loc, newRows, 2);
  steps = arith::IndexCastOp::create(b, loc, b.getI64Type(), steps);
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), b.getI64Type());
  Value filled = linalg::FillOp::create(b, loc, steps, empty).result();
  return linalg::AddOp::create(b, loc, ValueRange{positions, filled},
                               ValueRange{empty})
      ->getResult(0);
}

/// Erases what the binding left unused: region DCE, then ops that dead ops'
/// bodies captured (their terminators count as live for region DCE, e.g. a
/// Range's start).
static void eraseDeadOps(func::FuncOp entry) {
  IRRewriter rewriter(entry.getContext());
  (void)runRegionDCE(rewriter, entry.getBody());
  Block &body = entry.getBody().front();
  for (bool erased = true; erased;) {
    SmallVector<Operation *> dead;
    for (Operation &op : body.without_terminator())
      if (isOpTriviallyDead(&op))
        dead.push_back(&op);
    for (Operation *op : dead)
      rewriter.eraseOp(op);
    erased = !dead.empty();
  }
}

/// Ties each returned cache write to its cache argument (attn.state_arg),
/// updates the function type, and marks a module whose every attention is
/// causal as a causal language model (it generates).
static void finishState(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Builder b(entry.getContext());
  for (auto [i, operand] : llvm::enumerate(ret.getOperands())) {
    auto write = operand.getDefiningOp<CacheWriteOp>();
    auto cache = write ? dyn_cast<BlockArgument>(write.getCache()) : nullptr;
    if (!cache || cache.getOwner() != &body)
      continue;
    entry.removeResultAttr(i, b.getStringAttr("attn.name"));
    entry.setResultAttr(i, AttnDialect::StateArgAttrHelper::getNameStr(),
                        b.getI64IntegerAttr(cache.getArgNumber()));
  }
  entry.setFunctionType(FunctionType::get(
      entry.getContext(), body.getArgumentTypes(), ret.getOperandTypes()));
  bool causal = true;
  entry->getParentOp()->walk([&](SdpaOp sdpa) { causal &= sdpa.getCausal(); });
  if (causal)
    AttnDialect::CausalLmAttrHelper(entry.getContext())
        .setAttr(entry->getParentOp(), UnitAttr::get(entry.getContext()));
}

struct AttnBindKVCachePass
    : public attn::impl::AttnBindKVCacheBase<AttnBindKVCachePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp entry;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && (!entry || func.getName() == "main"))
        entry = func;
    if (!entry) {
      module.emitError("attn-bind-kv-cache: no function to bind");
      return signalPassFailure();
    }
    if (cacheLength <= 0) {
      entry.emitError("attn-bind-kv-cache: cache-length must be positive");
      return signalPassFailure();
    }
    if (failed(bind(entry)))
      signalPassFailure();
  }

  /// Replaces the input `position_ids` [B, T] by `positions[b] + t`. T is
  /// its static size, or the size of another input's dimension with the
  /// same dimension symbol (input_ids' sequence).
  LogicalResult bindPositionIds(func::FuncOp entry, BlockArgument positionIds,
                                Value positions, ArrayRef<PastPair> pairs) {
    Block &body = entry.getBody().front();
    auto positionsType = cast<RankedTensorType>(positions.getType());
    auto type = dyn_cast<RankedTensorType>(positionIds.getType());
    auto element =
        type ? dyn_cast<IntegerType>(type.getElementType()) : nullptr;
    if (!type || type.getRank() != 2 || !element || element.getWidth() > 64 ||
        type.getDimSize(0) != positionsType.getDimSize(0))
      return emitError(positionIds.getLoc())
             << "input 'position_ids' has type " << positionIds.getType()
             << "; attn-bind-kv-cache replaces position ids ["
             << positionsType.getDimSize(0)
             << ", T] (integers, the batch of the caches) by positions[b] + t";
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    Location loc = positionIds.getLoc();
    OpFoldResult steps;
    if (!type.isDynamicDim(1)) {
      steps = b.getIndexAttr(type.getDimSize(1));
    } else {
      StringRef symbolsName = AttnDialect::DimSymbolsAttrHelper::getNameStr();
      auto symbolOf = [&](BlockArgument arg, int64_t d) -> StringRef {
        auto symbols =
            entry.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), symbolsName);
        if (!symbols || static_cast<int64_t>(symbols.size()) <= d)
          return {};
        auto symbol = dyn_cast<StringAttr>(symbols[d]);
        return symbol ? symbol.getValue() : StringRef();
      };
      StringRef symbol = symbolOf(positionIds, 1);
      for (BlockArgument arg : body.getArguments()) {
        if (steps || symbol.empty() || arg == positionIds ||
            llvm::any_of(pairs,
                         [&](const PastPair &p) { return p.past == arg; }))
          continue;
        auto argType = dyn_cast<RankedTensorType>(arg.getType());
        for (int64_t d = 0; argType && d < argType.getRank() && !steps; ++d)
          if (symbolOf(arg, d) == symbol)
            steps = tensor::DimOp::create(b, loc, arg, d).getResult();
      }
      if (!steps)
        return emitError(loc)
               << "input 'position_ids' has a run-time length that no other "
                  "input shares (dimension symbols); attn-bind-kv-cache "
                  "replaces it by positions[b] + t";
    }
    Value stepsValue = isa<Value>(steps) ? cast<Value>(steps) : Value();
    Value ids = buildPositionIds(b, loc, type, positions, stepsValue,
                                 /*offset=*/0);
    positionIds.replaceAllUsesWith(ids);
    return success();
  }

  /// Slopes of a bias linear in the key's position (ALiBi) are one per head
  /// of `sdpa`, or one for all.
  LogicalResult checkKeySlopes(SdpaOp sdpa, ArrayRef<double> keySlopes) {
    int64_t heads =
        cast<RankedTensorType>(sdpa.getQuery().getType()).getDimSize(1);
    if (keySlopes.empty() || keySlopes.size() == 1 ||
        static_cast<int64_t>(keySlopes.size()) == heads)
      return success();
    return sdpa.emitOpError()
           << "has a score bias linear in the key's position with "
           << keySlopes.size() << " slopes for " << heads << " heads";
  }

  /// The bias `keySlopes[h] * row` over the cache's rows: the probed bias
  /// with a mask of ones, up to what is the same for a whole softmax row,
  /// since a sequence's keys sit at rows 0, 1, ... of its cache.
  Value keySlopeBias(OpBuilder &b, SdpaOp sdpa, ArrayRef<double> keySlopes) {
    auto type = cast<RankedTensorType>(sdpa.getQuery().getType());
    return createKeySlopeBias(b, sdpa.getLoc(),
                              cast<FloatType>(type.getElementType()), keySlopes,
                              cacheLength);
  }

  /// A stateless causal decoder (exported without past key/values): every
  /// attention's keys and values are written into a new cache at
  /// `positions` and read from it, as a past-kv export binds. The mask
  /// bias goes where probing shows it is, with a mask of ones, the causal
  /// mask (with a sliding window if any): the step is then the model run
  /// per sequence over its cached tokens. Positions that started at 0
  /// start at `positions`.
  LogicalResult deriveCaches(func::FuncOp entry) {
    Block &body = entry.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<SdpaOp> attentions(body.getOps<SdpaOp>());
    if (attentions.empty()) {
      bool nested = false;
      entry.walk([&](Operation *op) { nested |= isa<SdpaOp, MhaOp>(op); });
      return entry.emitError()
             << "attn-bind-kv-cache: the model has neither past key/value "
                "inputs (an input concatenated with the new keys or values "
                "on axis 2 whose concatenation is returned) nor "
             << (nested ? "attention at the top level of the function (run "
                          "it before attn-raise-mha and attn-raise-layers)"
                        : "raised attention to derive a cache from");
    }

    // Each attention's mask: causal (window, ALiBi slopes) as probed, from
    // which inputs.
    llvm::SetVector<BlockArgument> maskArgs;
    SmallVector<int64_t> windows;
    SmallVector<SmallVector<double>> slopes;
    int64_t batch = ShapedType::kDynamic;
    for (SdpaOp sdpa : attentions) {
      if (sdpa.getKvLengths() || sdpa.getQueryPositions())
        return sdpa.emitOpError("already has kv_lengths or query_positions; "
                                "attn-bind-kv-cache sets them");
      int64_t window = sdpa.getWindow().value_or(0);
      if (Value bias = sdpa.getBias()) {
        llvm::SetVector<BlockArgument> sources;
        collectArgSources(bias, &body, sources, /*throughSizes=*/false);
        std::string why;
        FailureOr<CausalBiasProbe> probed =
            probeCausalBias(bias, &body, sources.getArrayRef(), why);
        if (failed(probed))
          return sdpa.emitOpError()
                 << "has an attention mask attn-bind-kv-cache cannot bind to "
                    "a KV cache: "
                 << why;
        if (sdpa.getCausal() && window && probed->window &&
            window != probed->window)
          return sdpa.emitOpError("has a window and a mask of another one");
        if (failed(checkKeySlopes(sdpa, probed->keySlopes)))
          return failure();
        window = window ? window : probed->window;
        slopes.push_back(probed->keySlopes);
        maskArgs.insert(sources.begin(), sources.end());
      } else if (!sdpa.getCausal()) {
        return sdpa.emitOpError("is not causal; attn-bind-kv-cache derives "
                                "a KV cache only for causal attention");
      } else {
        slopes.push_back({});
      }
      windows.push_back(window);
      for (Value kv : {sdpa.getKey(), sdpa.getValue()}) {
        auto type = cast<RankedTensorType>(kv.getType());
        if (type.isDynamicDim(0) || type.isDynamicDim(1) ||
            type.isDynamicDim(3) ||
            (!ShapedType::isDynamic(batch) && batch != type.getDimSize(0)))
          return sdpa.emitOpError()
                 << "has keys or values of type " << type
                 << "; a KV cache needs static batch, heads and head width "
                    "(fix the batch with --input-shape, e.g. input_ids=1x?)";
        batch = type.getDimSize(0);
      }
    }

    FailureOr<Value> maybePositions = insertPositions(entry, batch);
    if (failed(maybePositions))
      return failure();
    Value positions = *maybePositions;
    OpBuilder b(entry.getContext());
    SmallVector<Value> results(ret.getOperands());
    for (auto [layer, sdpa, window, keySlopes] :
         llvm::zip_equal(llvm::seq<int64_t>(0, attentions.size()), attentions,
                         windows, slopes)) {
      b.setInsertionPoint(sdpa);
      Location loc = sdpa.getLoc();
      for (auto [kind, operand] :
           {std::make_pair("key", &sdpa.getKeyMutable()),
            std::make_pair("value", &sdpa.getValueMutable())}) {
        Value rows = operand->get();
        auto type = cast<RankedTensorType>(rows.getType());
        auto cacheType = RankedTensorType::get(
            {batch, type.getDimSize(1), cacheLength, type.getDimSize(3)},
            type.getElementType());
        std::string name =
            "past_key_values." + std::to_string(layer) + "." + kind;
        unsigned index = body.getNumArguments();
        if (failed(
                entry.insertArgument(index, cacheType,
                                     b.getDictionaryAttr(b.getNamedAttr(
                                         "attn.name", b.getStringAttr(name))),
                                     loc)))
          return failure();
        Value write = CacheWriteOp::create(
            b, loc, cacheType, body.getArgument(index), rows, positions);
        operand->set(write);
        results.push_back(write);
      }
      Value newKeys =
          cast<CacheWriteOp>(sdpa.getKey().getDefiningOp()).getNewRows();
      sdpa.getKvLengthsMutable().assign(
          kvLengthsAfter(b, loc, positions, newKeys));
      sdpa.getQueryPositionsMutable().assign(positions);
      sdpa.getBiasMutable().clear();
      if (!keySlopes.empty())
        sdpa.getBiasMutable().assign(keySlopeBias(b, sdpa, keySlopes));
      sdpa.setCausal(true);
      if (window)
        sdpa.setWindowAttr(b.getI64IntegerAttr(window));
    }
    // The caches' new values are results (attn.state_arg, finishState).
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < entry.getNumResults(); ++i)
      resultAttrs.push_back(entry.getResultAttrDict(i));
    resultAttrs.resize(results.size(), b.getDictionaryAttr({}));
    ret->setOperands(results);
    entry.setFunctionType(FunctionType::get(
        entry.getContext(), body.getArgumentTypes(), ret.getOperandTypes()));
    entry.setAllResultAttrs(resultAttrs);

    if (failed(bindComputedPositionIds(entry, positions, batch, maskArgs,
                                       /*past=*/nullptr)))
      return failure();

    // Positions from 0 start at each sequence's position.
    WalkResult walk = entry.walk([&](Operation *op) -> WalkResult {
      if (auto rotary = dyn_cast<RotaryOp>(op)) {
        if (rotary.getPositions())
          return rotary.emitOpError(
              "has run-time positions; attn-bind-kv-cache binds rotary "
              "positions that start at 0");
        rotary.getPositionsMutable().assign(positions);
      } else if (auto learned = dyn_cast<LearnedPosOp>(op)) {
        if (learned.getPositions())
          return learned.emitOpError(
              "has run-time positions; attn-bind-kv-cache binds learned "
              "positions that start at 0");
        int64_t rows =
            cast<RankedTensorType>(learned.getTable().getType()).getDimSize(0);
        if (static_cast<int64_t>(learned.getOffset()) + cacheLength > rows)
          return learned.emitOpError()
                 << "adds learned positions from a table of " << rows
                 << " rows: the cache length is at most "
                 << rows - learned.getOffset();
        learned.getPositionsMutable().assign(positions);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // The masks' inputs go with the masks; checks of their sizes too, and
    // checks of index grids over token indices 0..T-1, which the step does
    // not have (what still uses such indices is refused below).
    SmallVector<cf::AssertOp> checks;
    entry.walk([&](cf::AssertOp check) {
      llvm::SetVector<BlockArgument> sources;
      collectArgSources(check.getArg(), &body, sources);
      if (llvm::any_of(sources,
                       [&](BlockArgument a) { return maskArgs.contains(a); }) ||
          dependsOnTokenIndex(check.getArg()))
        checks.push_back(check);
    });
    for (cf::AssertOp check : checks)
      check.erase();
    eraseDeadOps(entry);

    // Anything still computing positions from the token index would see
    // 0..T-1 in every step: refuse rather than decode wrongly.
    Operation *indexUser = nullptr;
    entry.walk([&](linalg::GenericOp generic) {
      if (!indexUser && isTokenIndexOp(generic))
        indexUser = generic;
    });
    if (indexUser)
      return indexUser->emitOpError()
             << "computes values from the token index (positions not raised "
                "to attn.rotary or attn.learned_pos); a KV-cache step has "
                "them per sequence, so attn-bind-kv-cache cannot derive it";

    llvm::BitVector erase(body.getNumArguments());
    for (BlockArgument mask : maskArgs) {
      if (!mask.use_empty())
        return (*mask.getUsers().begin())->emitOpError()
               << "uses the attention mask input " << mask.getArgNumber()
               << " outside attention, which a KV-cache step cannot bind";
      erase.set(mask.getArgNumber());
    }
    if (failed(entry.eraseArguments(erase)))
      return failure();
    finishState(entry);
    return success();
  }

  /// Position ids computed from sizes and the mask inputs (with a mask of
  /// ones: the token index + c after the past, as OPT's cumulative sum or
  /// GPT-2's range from the past length compute them) become positions[b] +
  /// t + c. A lookup of ids [1, T] broadcast over the batch is looked up
  /// per row.
  LogicalResult
  bindComputedPositionIds(func::FuncOp entry, Value positions, int64_t batch,
                          const llvm::SetVector<BlockArgument> &maskArgs,
                          const PastSymbols *past) {
    Block &body = entry.getBody().front();
    OpBuilder b(entry.getContext());
    BlockArgument tokenIds;
    for (auto lookup : body.getOps<EmbeddingOp>())
      if (auto arg = dyn_cast<BlockArgument>(lookup.getIds());
          arg && arg.getOwner() == &body)
        tokenIds = arg;
    for (auto lookup : llvm::make_early_inc_range(body.getOps<EmbeddingOp>())) {
      Value ids = lookup.getIds();
      llvm::SetVector<BlockArgument> sources;
      collectArgSources(ids, &body, sources, /*throughSizes=*/false);
      if (isa<BlockArgument>(ids) ||
          llvm::any_of(sources,
                       [&](BlockArgument a) { return !maskArgs.contains(a); }))
        continue;
      std::string why;
      FailureOr<int64_t> offset =
          probeTokenIndexIds(ids, &body, sources.getArrayRef(), why, past);
      auto type = cast<RankedTensorType>(ids.getType());
      // Ids [1, T] looked up and broadcast over the batch: the broadcast
      // is replaced by a lookup per row.
      Value rows = lookup.getResult();
      Operation *broadcastOp = nullptr;
      if (type.getRank() == 2 && type.getDimSize(0) == 1 && batch != 1) {
        Value v = rows;
        while (v.hasOneUse() &&
               isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                   *v.getUsers().begin()))
          v = v.getUsers().begin()->getResult(0);
        auto broadcast =
            v.hasOneUse() ? dyn_cast<linalg::BroadcastOp>(*v.getUsers().begin())
                          : nullptr;
        auto resultType =
            broadcast
                ? dyn_cast<RankedTensorType>(broadcast->getResult(0).getType())
                : nullptr;
        if (broadcast && broadcast.getDimensions() == ArrayRef<int64_t>{0} &&
            resultType && resultType.getRank() == 3 &&
            resultType.getDimSize(0) == batch)
          broadcastOp = broadcast;
      }
      if (failed(offset) || !tokenIds || type.getRank() != 2 ||
          (type.getDimSize(0) != batch && !broadcastOp))
        return lookup.emitOpError()
               << "looks up ids computed from the attention mask or the "
                  "sizes that attn-bind-kv-cache cannot bind to positions"
               << (failed(offset) ? ": " + why : std::string());
      int64_t tableRows =
          cast<RankedTensorType>(lookup.getTable().getType()).getDimSize(0);
      if (cacheLength + *offset > tableRows)
        return lookup.emitOpError()
               << "looks up positions up to " << cacheLength + *offset - 1
               << " in a table of " << tableRows
               << " rows: the cache length is at most " << tableRows - *offset;
      b.setInsertionPoint(broadcastOp ? broadcastOp : lookup.getOperation());
      Location loc = lookup.getLoc();
      auto idsType = RankedTensorType::get({batch, type.getDimSize(1)},
                                           type.getElementType());
      Value steps = tensor::DimOp::create(b, loc, tokenIds, 1);
      Value positionIds =
          buildPositionIds(b, loc, idsType, positions, steps, *offset);
      if (!broadcastOp) {
        lookup.getIdsMutable().assign(positionIds);
        continue;
      }
      Value perRow =
          EmbeddingOp::create(b, loc, broadcastOp->getResult(0).getType(),
                              positionIds, lookup.getTable());
      broadcastOp->getResult(0).replaceAllUsesWith(perRow);
    }
    return success();
  }

  /// Rotary tables of positions P..P+T-1 after a past of P (computed from
  /// the sizes, as today's exporters compute cache positions): attn.rotary
  /// from `positions`.
  void raiseRotaryAfterPast(func::FuncOp entry, Value positions,
                            const PastSymbols &past) {
    Block &body = entry.getBody().front();
    SmallVector<Operation *> adds;
    for (Operation &op : body)
      if (isa<AddOp, linalg::AddOp>(op))
        adds.push_back(&op);
    for (Operation *add : adds) {
      for (const raise::RotaryTerms &terms : raise::matchRotaryTerms(add)) {
        std::string why;
        FailureOr<RotaryProbe> probe = probeRotaryTables(
            terms.cosTable, terms.sinTable, &body, why, &past);
        if (failed(probe))
          continue;
        OpBuilder b(add);
        auto rotary = RotaryOp::create(
            b, add->getLoc(), add->getResult(0).getType(), terms.x, positions,
            b.getF64FloatAttr(10000.0), b.getI64IntegerAttr(0),
            /*rotary_dim=*/IntegerAttr(),
            b.getDenseF64ArrayAttr(probe->invFreq),
            b.getF64FloatAttr(probe->scale), /*length_threshold=*/IntegerAttr(),
            /*long_inv_freq=*/DenseF64ArrayAttr(), /*ntk_factor=*/FloatAttr());
        add->getResult(0).replaceAllUsesWith(rotary.getResult());
        add->erase();
        break;
      }
    }
  }

  LogicalResult bind(func::FuncOp entry) {
    Block &body = entry.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    auto argName = [&](BlockArgument arg) {
      auto name =
          entry.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "attn.name");
      return name ? name.getValue().str()
                  : "argument " + std::to_string(arg.getArgNumber());
    };

    // The past inputs: concatenated with new keys/values on axis 2, the
    // concatenation returned (present).
    SmallVector<PastPair> pairs;
    for (BlockArgument arg : body.getArguments()) {
      tensor::ConcatOp concat;
      for (Operation *user : arg.getUsers()) {
        auto c = dyn_cast<tensor::ConcatOp>(user);
        if (c && c.getDim() == 2 && c.getInputs().size() == 2 &&
            c.getInputs()[0] == arg &&
            llvm::is_contained(ret.getOperands(), c.getResult()))
          concat = c;
      }
      if (!concat)
        continue;
      for (Operation *user : arg.getUsers())
        if (user != concat.getOperation() && !isa<tensor::DimOp>(user))
          return user->emitOpError()
                 << "uses the past key/value input '" << argName(arg)
                 << "'; attn-bind-kv-cache binds a past only through its "
                    "concatenation with the new keys or values";
      auto type = cast<RankedTensorType>(arg.getType());
      if (type.getRank() != 4 || type.isDynamicDim(0) || type.isDynamicDim(1) ||
          type.isDynamicDim(3))
        return emitError(arg.getLoc())
               << "past key/value input '" << argName(arg) << "' has type "
               << type
               << "; a KV cache needs static batch, heads and head width "
                  "(fix the batch with --input-shape, e.g. input_ids=1x?)";
      if (!pairs.empty() &&
          cast<RankedTensorType>(pairs[0].past.getType()).getDimSize(0) !=
              type.getDimSize(0))
        return emitError(arg.getLoc()) << "past inputs of different batches";
      pairs.push_back({arg, concat, nullptr});
    }
    if (pairs.empty())
      return deriveCaches(entry);
    int64_t batch =
        cast<RankedTensorType>(pairs[0].past.getType()).getDimSize(0);

    // Attention over a past whose bias is the causal mask computed from
    // sizes and the mask inputs (as today's exporters write it) is causal:
    // probed while the pasts still have their run-time length.
    auto symbolOf = [&](BlockArgument arg, int64_t d) -> StringRef {
      auto symbols = entry.getArgAttrOfType<ArrayAttr>(
          arg.getArgNumber(), AttnDialect::DimSymbolsAttrHelper::getNameStr());
      auto symbol = symbols && static_cast<int64_t>(symbols.size()) > d
                        ? dyn_cast<StringAttr>(symbols[d])
                        : StringAttr();
      return symbol ? symbol.getValue() : StringRef();
    };
    PastSymbols pastSymbols{symbolOf(pairs[0].past, 2), StringRef()};
    for (auto lookup : body.getOps<EmbeddingOp>())
      if (auto ids = dyn_cast<BlockArgument>(lookup.getIds());
          ids && ids.getOwner() == &body)
        pastSymbols.sequence = symbolOf(ids, 1);
    llvm::SetVector<BlockArgument> probedMaskArgs;
    DenseMap<Operation *, SmallVector<double>> pastSlopes;
    for (PastPair &pair : pairs)
      for (Operation *user : pair.concat->getUsers()) {
        auto sdpa = dyn_cast<SdpaOp>(user);
        if (!sdpa || sdpa.getCausal() || !sdpa.getBias() ||
            sdpa.getKey() != pair.concat.getResult())
          continue;
        llvm::SetVector<BlockArgument> sources;
        collectArgSources(sdpa.getBias(), &body, sources,
                          /*throughSizes=*/false);
        probedMaskArgs.insert(sources.begin(), sources.end());
        std::string why;
        FailureOr<CausalBiasProbe> probed =
            pastSymbols.past.empty() || pastSymbols.sequence.empty()
                ? FailureOr<CausalBiasProbe>(failure())
                : probeCausalBias(sdpa.getBias(), &body, sources.getArrayRef(),
                                  why, &pastSymbols);
        if (failed(probed))
          return sdpa.emitOpError()
                 << "has an attention mask attn-bind-kv-cache cannot bind to "
                    "a KV cache: "
                 << (why.empty() ? "the past or the token ids have no "
                                   "dimension symbol to probe it with"
                                 : why);
        if (failed(checkKeySlopes(sdpa, probed->keySlopes)))
          return failure();
        sdpa.setCausal(true);
        if (probed->window)
          sdpa.setWindowAttr(OpBuilder(sdpa).getI64IntegerAttr(probed->window));
        if (!probed->keySlopes.empty())
          pastSlopes[sdpa] = probed->keySlopes;
      }

    // `positions [B]`: each sequence's past length.
    OpBuilder b(entry.getContext());
    FailureOr<Value> maybePositions = insertPositions(entry, batch);
    if (failed(maybePositions))
      return failure();
    Value positions = *maybePositions;
    // Positions the exporter computed from the past length (cache
    // positions): rotary tables and looked-up position ids.
    if (!pastSymbols.past.empty() && !pastSymbols.sequence.empty()) {
      raiseRotaryAfterPast(entry, positions, pastSymbols);
      if (failed(bindComputedPositionIds(entry, positions, batch,
                                         probedMaskArgs, &pastSymbols)))
        return failure();
    }

    // position_ids [B, T] (as optimum exports decoders; rotary positions
    // are computed from it): token t of sequence b sits at positions[b] + t.
    BlockArgument positionIds;
    for (BlockArgument arg : body.getArguments())
      if (argName(arg) == "position_ids")
        positionIds = arg;
    if (positionIds) {
      if (failed(bindPositionIds(entry, positionIds, positions, pairs)))
        return failure();
    }

    // Writes into the caches; attention reads them.
    llvm::SetVector<SdpaOp> attentions;
    DenseMap<Value, unsigned> stateOf; // cache write -> returned slot
    for (PastPair &pair : pairs) {
      auto pastType = cast<RankedTensorType>(pair.past.getType());
      auto cacheType = RankedTensorType::get(
          {batch, pastType.getDimSize(1), cacheLength, pastType.getDimSize(3)},
          pastType.getElementType());
      pair.past.setType(cacheType);
      b.setInsertionPoint(pair.concat);
      pair.write =
          CacheWriteOp::create(b, pair.concat.getLoc(), cacheType, pair.past,
                               pair.concat.getInputs()[1], positions);
      for (OpOperand &use :
           llvm::make_early_inc_range(pair.concat.getResult().getUses())) {
        Operation *user = use.getOwner();
        if (auto sdpa = dyn_cast<SdpaOp>(user);
            sdpa &&
            (use.get() == sdpa.getKey() || use.get() == sdpa.getValue()) &&
            use.get() != sdpa.getQuery()) {
          attentions.insert(sdpa);
          use.set(pair.write);
          continue;
        }
        if (isa<func::ReturnOp>(user)) {
          use.set(pair.write);
          continue;
        }
        return user->emitOpError()
               << "uses the keys or values after the past of '"
               << argName(pair.past)
               << "'; attn-bind-kv-cache binds them only as the keys or "
                  "values of attn.sdpa (raise the attention first)";
      }
      pair.concat.erase();
    }

    // Attention over the caches: up to each sequence's length, causal from
    // each sequence's own start; the mask input's bias goes.
    llvm::SetVector<BlockArgument> maskArgs;
    for (SdpaOp sdpa : attentions) {
      if (!sdpa.getKey().getDefiningOp<CacheWriteOp>() ||
          !sdpa.getValue().getDefiningOp<CacheWriteOp>())
        return sdpa.emitOpError("attends over a past for only one of its "
                                "keys and values");
      if (sdpa.getKvLengths() || sdpa.getQueryPositions())
        return sdpa.emitOpError("already has kv_lengths or query_positions; "
                                "attn-bind-kv-cache sets them");
      if (Value bias = sdpa.getBias()) {
        llvm::SetVector<BlockArgument> sources;
        collectArgSources(bias, &body, sources, /*throughSizes=*/false);
        for (BlockArgument source : sources)
          if (llvm::any_of(
                  pairs, [&](const PastPair &p) { return p.past == source; }) ||
              source == positions)
            return sdpa.emitOpError()
                   << "has an attention bias that depends on the past; only "
                      "a bias from attention-mask inputs can be bound (it is "
                      "dropped)";
        maskArgs.insert(sources.begin(), sources.end());
        sdpa.getBiasMutable().clear();
      }
      b.setInsertionPoint(sdpa);
      if (auto it = pastSlopes.find(sdpa); it != pastSlopes.end())
        sdpa.getBiasMutable().assign(keySlopeBias(b, sdpa, it->second));
      Location l = sdpa.getLoc();
      Value newKeys =
          cast<CacheWriteOp>(sdpa.getKey().getDefiningOp()).getNewRows();
      Value lengths = kvLengthsAfter(b, l, positions, newKeys);
      sdpa.getKvLengthsMutable().assign(lengths);
      if (sdpa.getCausal())
        sdpa.getQueryPositionsMutable().assign(positions);
    }

    // The past length P (tensor.dim of a past on axis 2), and the mask
    // inputs, are gone from attention; learned positions that started at P
    // start at each sequence's position; checks of the stateless shapes
    // (the mask's length, buffer windows at P) go with them.
    SmallVector<Value> pastLengths;
    for (PastPair &pair : pairs)
      for (Operation *user : pair.past.getUsers())
        if (auto dim = dyn_cast<tensor::DimOp>(user))
          if (dim.getConstantIndex() == std::optional<int64_t>(2))
            pastLengths.push_back(dim.getResult());
    entry.walk([&](LearnedPosOp pos) {
      auto fill = pos.getPositions()
                      ? pos.getPositions().getDefiningOp<linalg::FillOp>()
                      : nullptr;
      if (fill && llvm::any_of(pastLengths, [&](Value p) {
            return isCastOf(fill.getInputs()[0], p);
          }))
        pos.getPositionsMutable().assign(positions);
    });
    auto dependsOnRemoved = [&](Value v) {
      llvm::SetVector<BlockArgument> sources;
      collectArgSources(v, &body, sources);
      return llvm::any_of(sources, [&](BlockArgument a) {
        return maskArgs.contains(a) || a == positionIds ||
               llvm::any_of(pairs,
                            [&](const PastPair &p) { return p.past == a; });
      });
    };
    SmallVector<cf::AssertOp> checks;
    entry.walk([&](cf::AssertOp check) {
      if (dependsOnRemoved(check.getArg()))
        checks.push_back(check);
    });
    for (cf::AssertOp check : checks)
      check.erase();
    eraseDeadOps(entry);

    // Nothing else may still read the past length or a mask.
    for (PastPair &pair : pairs)
      for (Operation *user : pair.past.getUsers())
        if (auto dim = dyn_cast<tensor::DimOp>(user);
            dim && dim.getConstantIndex() == std::optional<int64_t>(2))
          for (Operation *reader : dim->getUsers())
            return reader->emitOpError()
                   << "uses the past length of '" << argName(pair.past)
                   << "', which a KV-cache step has per sequence "
                      "(`positions`); attn-bind-kv-cache binds it only in "
                      "attention and learned positions";
    llvm::BitVector erase(body.getNumArguments());
    if (positionIds) {
      assert(positionIds.use_empty() && "uses replaced by bindPositionIds");
      erase.set(positionIds.getArgNumber());
    }
    for (BlockArgument mask : maskArgs) {
      if (!mask.use_empty())
        return (*mask.getUsers().begin())->emitOpError()
               << "uses the attention mask '" << argName(mask)
               << "' outside attention, which a KV-cache step cannot bind";
      erase.set(mask.getArgNumber());
    }
    if (failed(entry.eraseArguments(erase)))
      return failure();
    for (PastPair &pair : pairs)
      entry.removeArgAttr(pair.past.getArgNumber(),
                          AttnDialect::DimSymbolsAttrHelper::getNameStr());

    // The present results are the caches' new values.
    finishState(entry);
    return success();
  }
};

} // namespace
