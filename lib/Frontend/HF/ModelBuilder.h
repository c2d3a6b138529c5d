//===- ModelBuilder.h - shared pieces of the HF model builders --*- C++ -*-===//
//
// What the architecture builders share: binding checkpoint tensors as
// attn.weight ops (plain or as gather/transpose views) after checking their
// dtype and shape against what config.json implies, the model function with
// its input ids (an encoder-decoder's two), the decoder layers (attn.layer
// regions, or inline in a --kv-cache step) and their attention, full-sequence
// multi-head attention (an encoder's, or a decoder's cross-attention over the
// encoder output), relative position biases, and the LayerNorm decoder
// layer.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_FRONTEND_HF_MODELBUILDER_H
#define ATTNC_LIB_FRONTEND_HF_MODELBUILDER_H

#include "Checkpoint.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Frontend/HF/HFImport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <optional>
#include <string>

namespace mlir::attn::hf {

/// A slice view of a checkpoint tensor: the concatenation along `axis` of
/// `ranges` (start, length pairs) of the tensor.
struct GatherView {
  int64_t axis;
  SmallVector<int64_t> ranges;
};

/// A decoder's rotary settings: base, the fraction of each head's channels
/// that rotate, and the scaling of the frequencies (transformers'
/// rope_type "default", "linear", "llama3", "yarn", "dynamic" or
/// "longrope", with its keys).
struct RopeConfig {
  enum class Scaling { Default, Linear, Llama3, Yarn, Dynamic, LongRope };
  double theta;
  double partialFactor = 1.0;
  Scaling scaling = Scaling::Default;
  /// linear, llama3, yarn, dynamic, longrope: the context extension
  /// factor.
  double factor = 1.0;
  /// llama3: the wavelength bands; llama3, yarn and longrope: the
  /// pre-training context (original_max_position_embeddings).
  double lowFreqFactor = 1.0, highFreqFactor = 4.0;
  double originalMaxPositions = 0.0;
  /// yarn: the ramp between interpolated and extrapolated frequencies and
  /// the factor on cos and sin (attention_factor, else from mscale).
  double betaFast = 32.0, betaSlow = 1.0;
  std::optional<double> attentionFactor, mscale, mscaleAllDim;
  bool truncate = true;
  /// longrope: the per-pair divisors of the frequencies at and below the
  /// pre-training context (short) and past it (long).
  SmallVector<double> shortFactor, longFactor;
  /// dynamic, longrope: the run-time length past which the frequencies
  /// change (attn.rotary length_threshold).
  std::optional<int64_t> lengthThreshold;

  /// The inverse frequencies of `rotaryDim` channels as transformers
  /// computes them (in float32), when they are not the default
  /// base^(-2i / rotaryDim); empty otherwise.
  SmallVector<double> inverseFrequencies(int64_t rotaryDim) const;
  /// longrope: the frequencies past lengthThreshold; empty otherwise.
  SmallVector<double> longInverseFrequencies(int64_t rotaryDim) const;
  /// The factor on cos and sin (1 but for yarn and longrope).
  double cosSinScale() const;

private:
  SmallVector<double> inverseFrequencies(int64_t rotaryDim,
                                         ArrayRef<double> extFactors) const;
};

class LayerWeights;

class ModelBuilder {
public:
  ModelBuilder(Checkpoint &ckpt, const ImportOptions &options, ModuleOp module);

  /// Binds tensor `name`, which must have `shape` (described by `dims`, e.g.
  /// "[vocab_size, hidden_size]", for the message when it does not). With
  /// `gather`, binds the slices it names; with `transpose`, the transpose
  /// (of the gathered tensor). One attn.weight per distinct view in the
  /// current scope (the function body or one layer).
  FailureOr<Value> weight(StringRef name, ArrayRef<int64_t> shape,
                          StringRef dims,
                          std::optional<GatherView> gather = std::nullopt,
                          bool transpose = false);

  /// The first of `prefixes` for which `probe` (a tensor name relative to
  /// the prefix) is in the checkpoint; else an error naming the tensor.
  FailureOr<std::string> detectPrefix(ArrayRef<StringRef> prefixes,
                                      StringRef probe);

  /// The shape of input `name` (`--input-shape`), which must have
  /// `rank` dimensions named `dimNames`; an error when it is not given, or
  /// when a dimension other than `dynamicDim` is `?` (ShapedType::kDynamic).
  FailureOr<SmallVector<int64_t>>
  inputShape(StringRef name, ArrayRef<StringRef> dimNames,
             std::optional<unsigned> dynamicDim = std::nullopt);
  /// Errors for --input-shape names the model has no input of.
  LogicalResult checkInputNames(ArrayRef<StringRef> inputNames);
  /// The (batch, sequence) shape of `input_ids`, the models' main input
  /// (`optionalInputs` are the other names --input-shape may give); with
  /// `positionsKey`, the sequence may not exceed that config value
  /// `maxPositions` (the learned position table).
  FailureOr<std::pair<int64_t, int64_t>>
  tokenIdsShape(StringRef positionsKey = {}, int64_t maxPositions = 0,
                ArrayRef<StringRef> optionalInputs = {});

  /// What every builder reads first: the (batch, sequence) shape of
  /// `input_ids` (tokenIdsShape), checked for a --kv-cache decode step
  /// (checkDecodeStep), and the checkpoint's tensor-name prefix
  /// (detectPrefix with `prefixes` and `probe`); then creates @main
  /// (createMain) and returns its ids argument.
  struct ModelStart {
    int64_t batch, seq;
    std::string prefix;
    Value ids;
  };
  FailureOr<ModelStart> start(ArrayRef<StringRef> prefixes, StringRef probe,
                              StringRef positionsKey = {},
                              int64_t maxPositions = 0,
                              ArrayRef<StringRef> optionalInputs = {});

  /// Creates `func.func @main(%input_ids: tensor<BxSxi64>)` (the argument
  /// named "input_ids" by an `attn.name` attribute) with the insertion point
  /// in its body; returns the ids argument.
  Value createMain(ArrayRef<int64_t> idsShape);
  /// The same with a first input `name` of `type` (e.g. a vision model's
  /// pixel_values).
  Value createMain(StringRef name, RankedTensorType type);
  /// Appends an input `name` of `type` to @main; returns its argument.
  Value addInput(StringRef name, RankedTensorType type);
  /// Terminates @main with `result` (named `resultName`, as transformers
  /// names that output) and sets the function's result type.
  /// (With cachedAttention's states, also returns each updated cache tagged
  /// `attn.state_arg` with its argument.)
  void finishMain(Value result, StringRef resultName);
  /// The token embeddings of `ids` by the table `module`.weight [vocab,
  /// width] (`dims` names its dimensions in errors), at `module`'s
  /// location; returns the table and the embeddings.
  FailureOr<std::pair<Value, Value>> embedTokens(Value ids, StringRef module,
                                                 int64_t vocab, int64_t width,
                                                 StringRef dims);
  /// The LayerNorm `module` (`module`.weight and .bias, [width] named `dims`
  /// in errors) of `h` [B, S, width] with epsilon `eps`.
  FailureOr<Value> layerNorm(Location loc, Value h, StringRef module,
                             StringRef dims, double eps);
  /// A causal LM's head on the final hidden states `h` [B, S, D]: logits
  /// against the embedding `table` [V, D] when `tied` (the same
  /// attn.weight, bound once), else against `headName` (`dims` names
  /// its dimensions in errors), plus `headBias` [V] when given, soft-capped
  /// to tanh(logits / softcap) * softcap when `softcap` > 0; finishes @main
  /// with them as "logits".
  LogicalResult finishLmHead(Location loc, Value h, Value table, bool tied,
                             StringRef dims,
                             StringRef headName = "lm_head.weight",
                             Value headBias = Value(), double softcap = 0.0);
  /// finishLmHead after the final LayerNorm `norm` (layerNorm's `module`,
  /// `normDims`, `eps`) of `h`.
  LogicalResult
  finishLmHeadAfterLayerNorm(Location loc, Value h, StringRef norm,
                             StringRef normDims, double eps, Value table,
                             bool tied, StringRef dims,
                             StringRef headName = "lm_head.weight");

  /// `x` times the constant `factor` (e.g. Gemma's embedding scale).
  Value scaleBy(Location loc, Value x, double factor);
  /// `x` + `c` elementwise (e.g. the weight of a (1 + w) RMSNorm).
  Value addConstant(Location loc, Value x, double c);
  /// `x` @ `w`^T + `bias` for `x` [B, S, K] and `w` [N, K].
  Value linear(Location loc, Value x, Value w, Value bias = Value());

  /// `--kv-cache`: the step's `positions` input [batch] (each sequence's
  /// cache length: where its first new token goes), the step's token count
  /// T (the sequence length of the ids `ids` [batch, T]; a run-time value
  /// when T is `?`) and the kv lengths the attention sees (positions + T).
  struct DecodeInputs {
    Value positions, kvLengths;
    OpFoldResult tokens;
  };
  DecodeInputs addDecodeInputs(Value ids);
  /// In a --kv-cache step, addDecodeInputs; returns them, or null when the
  /// model is not a step.
  const DecodeInputs *addStepInputs(Value ids);
  /// A decoder's learned positions: addStepInputs(ids), then `h` plus the
  /// rows of the position table `table` from `offset` on (attn.learned_pos,
  /// at the step's positions in a --kv-cache step). Returns the step's
  /// inputs as addStepInputs does.
  const DecodeInputs *addLearnedPositions(Location l, Value &h, Value table,
                                          Value ids, int64_t offset);
  /// What a decoder builds first: start() (the checkpoint's prefix found
  /// by `embedding`.weight), the token embeddings by that table
  /// (embedTokens) and the step's inputs (addStepInputs).
  struct DecoderStart {
    std::string prefix;
    Value table, h;
    const DecodeInputs *decode;
  };
  FailureOr<DecoderStart> startDecoder(ArrayRef<StringRef> prefixes,
                                       StringRef embedding, int64_t vocab,
                                       int64_t width, StringRef dims);
  /// With `--kv-cache N`: an error unless the step takes one token per
  /// sequence or a run-time number of them (`seq` 1 or dynamic) and N fits
  /// the position table (`positionsKey` = `maxPositions`; no key for rotary
  /// models).
  LogicalResult checkDecodeStep(int64_t seq, StringRef positionsKey = {},
                                int64_t maxPositions = 0);
  /// The projections of one attention block (nn.Linear layout [out, in];
  /// absent biases are null).
  struct AttentionWeights {
    Value wq, bq, wk, bk, wv, bv, wo, bo;
  };
  /// How a decoder's self-attention differs between families.
  struct AttentionOptions {
    /// The score scale (null: 1/sqrt(head_dim)).
    FloatAttr scale;
    /// Rotary positions on the queries and keys (null: none), on the first
    /// `rotaryDim` channels of each head (null: all of them).
    std::optional<RopeConfig> rope;
    std::optional<int64_t> rotaryDim;
    /// Sliding-window attention: a query sees the `window` latest keys
    /// (itself included); 0: no window.
    int64_t window = 0;
    /// Applied to the split queries (`isKey` false) and keys [B, n, T, dh]
    /// before rotation (a per-head norm, e.g. Qwen3's q_norm/k_norm).
    std::function<Value(Value heads, bool isKey)> headNorm;
    /// An additive score bias broadcastable to [B, heads, T, keys] (e.g.
    /// ALiBi), given the number of keys the attention sees: the sequence,
    /// or the cache capacity in a step.
    std::function<Value(int64_t keys)> scoreBias;
  };
  /// One layer's causal self-attention on `x` [B, S, D]: projections,
  /// heads split, headNorm, rotary, attn.sdpa (causal, GQA when kvHeads <
  /// heads, the window), heads merged and projected by `wo`. With `decode`
  /// (a --kv-cache step) as cachedAttention builds it; without, over the
  /// whole sequence.
  FailureOr<Value> attention(int64_t layer, Value x, const DecodeInputs *decode,
                             const AttentionWeights &w, int64_t heads,
                             int64_t kvHeads, int64_t headDim,
                             const AttentionOptions &opts);
  /// One layer's attention for a KV-cache step of T tokens per sequence
  /// (T = 1: decode; T = the prompt: prefill): projections of `x`
  /// [B, T, D] by `wq`/`wk`/`wv` ([out, D], optional biases), heads split,
  /// rotated at the run-time positions (positions[b] + i) when
  /// `rope` is set, the tokens' keys and values written into this
  /// layer's caches at rows positions[b] .. positions[b] + T - 1 (new state
  /// inputs `past_key_values.<layer>.key/value`, [B, kvHeads, L, dh]),
  /// causal attention over the cache with query i of row b at
  /// positions[b] + i, heads merged and projected by `wo`.
  FailureOr<Value>
  cachedAttention(int64_t layer, Value x, const DecodeInputs &decode, Value wq,
                  Value bq, Value wk, Value bk, Value wv, Value bv, Value wo,
                  Value bo, int64_t heads, int64_t kvHeads, int64_t headDim,
                  FloatAttr scale, std::optional<RopeConfig> rope);

  /// What an encoder-decoder builder reads first: the (batch, sequence)
  /// shapes of `input_ids` (the encoder's) and `decoder_input_ids` (both
  /// required, static, the same batch), the sequences no longer than
  /// config value `positionsKey` = `maxPositions` when a key is given (a
  /// learned position table), and the checkpoint's prefix (detectPrefix);
  /// then creates @main with both inputs.
  struct Seq2SeqStart {
    int64_t batch, sourceLen, targetLen;
    std::string prefix;
    Value ids, decoderIds;
    /// With --input-shape attention_mask (the encoder's padding, input_ids'
    /// shape): transformers' additive bias (paddingScoreBias) over the
    /// source, [batch, 1, 1, source]; null otherwise.
    Value sourcePadding;
  };
  /// transformers' extended attention mask for `mask` [B, S] (integer, 1:
  /// attend, 0: padding): (1 - mask) * lowest float, [B, 1, 1, S], added
  /// to every head's scores over those S keys.
  Value paddingScoreBias(Location loc, Value mask);
  /// `a` + `b` for score biases that broadcast along their size-1
  /// dimensions (e.g. a position bias [1, H, Q, K] and a padding bias
  /// [B, 1, 1, K]): the result has the larger size of each dimension.
  Value addScoreBiases(Location loc, Value a, Value b);
  /// With --kv-cache the decoder is a step (decoder_input_ids [batch, 1]
  /// or [batch, ?]) in a model of its own: this creates @encoder (the
  /// encoder's inputs) instead of @main, and leaves `decoderIds` null
  /// (startSeq2SeqStep creates the step).
  FailureOr<Seq2SeqStart> startSeq2Seq(ArrayRef<StringRef> prefixes,
                                       StringRef probe,
                                       StringRef positionsKey = {},
                                       int64_t maxPositions = 0);

  /// An encoder-decoder's --kv-cache build is two functions: @encoder,
  /// run once per prompt, returns every decoder layer's cross-attention
  /// keys and values; @main, the decoder step, takes them as encoder
  /// inputs (bound once per prompt) beside its own KV caches.
  /// The names of layer `layer`'s cross-attention keys and values.
  static std::string crossKeyName(int64_t layer);
  static std::string crossValueName(int64_t layer);
  /// Terminates @encoder with `outputs` (name, value), in order.
  void finishEncoder(ArrayRef<std::pair<std::string, Value>> outputs);
  /// Creates the decoder step @main: decoder_input_ids [batch, T] (T as
  /// startSeq2Seq read it), the step inputs (addStepInputs), the
  /// encoder's attention_mask again when the encoder took one (its
  /// paddingScoreBias is the returned start's sourcePadding), and one
  /// encoder input [batch, heads, source, headDim] per cross key and value
  /// of `layers` layers (`crossKeys`/`crossValues`).
  struct Seq2SeqStep {
    Value decoderIds, sourcePadding;
    const DecodeInputs *decode;
    SmallVector<Value> crossKeys, crossValues;
  };
  FailureOr<Seq2SeqStep> startSeq2SeqStep(const Seq2SeqStart &start,
                                          int64_t layers, int64_t heads,
                                          int64_t headDim);
  /// `memory` [B, S, D] projected by `w` (+ `bias`) and split into `heads`
  /// heads: [B, heads, S, headDim] (the keys or values the encoder hands
  /// a decoder step).
  Value projectHeads(Location loc, Value memory, Value w, Value bias,
                     int64_t heads, int64_t headDim);
  /// Cross-attention in a decoder step: queries from `x` [B, T, D] by
  /// `wq` (+ `bq`) over the encoder's `keys` and `values` [B, heads, S,
  /// headDim], not causal, plus `scoreBias` (broadcastable to [B, heads,
  /// T, S]) when given, scaled by `scale` (null: 1/sqrt(headDim)), heads
  /// merged and projected by `wo` (+ `bo`).
  Value stepCrossAttention(Location loc, Value x, Value keys, Value values,
                           Value wq, Value bq, Value wo, Value bo,
                           int64_t heads, int64_t headDim, Value scoreBias,
                           FloatAttr scale = FloatAttr());
  /// A decoder step's relative position bias (T5's unidirectional
  /// buckets): [B, heads, T, kvCache] with query i of row b at
  /// positions[b] + i and key j at j, looked up in `table` [buckets,
  /// heads].
  Value stepRelativePositionBias(Location loc, Value table,
                                 const DecodeInputs &decode,
                                 int64_t maxDistance);
  /// Full-sequence multi-head attention (attn.mha) of the queries from `x`
  /// [B, T, D] over the keys and values from `memory` [B, S, D] (null:
  /// self-attention on `x`): heads of `headDim` channels, the projections
  /// of `w` (all four biases or none), causal when `causal` (self-attention
  /// only), plus the additive `scoreBias` broadcastable to [B, heads, T, S]
  /// when given, scores scaled by `scale` (null: 1/sqrt(headDim)). An
  /// encoder's self-attention is (x, null, not causal), a decoder's
  /// cross-attention (x, the encoder output, not causal).
  Value multiHeadAttention(Location loc, Value x, Value memory,
                           const AttentionWeights &w, int64_t heads,
                           int64_t headDim, bool causal,
                           Value scoreBias = Value(),
                           FloatAttr scale = FloatAttr());
  /// A learned bias by bucketed relative position (T5, MPNet): rows
  /// relativePositionBucket(j - i, buckets, maxDistance, bidirectional) of
  /// `table` [buckets, heads] for query i < `queries` and key j < `keys`,
  /// as [1, heads, queries, keys] (a constant bucket table, looked up).
  Value relativePositionBias(Location loc, Value table, int64_t queries,
                             int64_t keys, int64_t maxDistance,
                             bool bidirectional);

  /// Where the FFN of a LayerNorm decoder layer reads from.
  enum class FfnInput {
    /// ln2(x + attn): the sequential residual.
    Sequential,
    /// ln2(x): a parallel residual with a LayerNorm of its own.
    Parallel,
    /// ln1(x), the attention's input: a parallel residual with one
    /// LayerNorm.
    SharedNorm,
  };
  /// The norms and FFN of a LayerNorm decoder layer (nn.Linear layout;
  /// absent biases are null; ln2 is null with SharedNorm).
  struct LayerNormLayerWeights {
    Value ln1, ln1Bias, ln2, ln2Bias, up, upBias, down, downBias;
  };
  /// A LayerNorm decoder layer on `x` [B, S, D]: x + attn + ffn(`input`),
  /// attn = `attention`(ln1(x)), the FFN (no gate) with `activation`, both
  /// LayerNorms with epsilon `eps`.
  FailureOr<Value>
  layerNormDecoderLayer(Location loc, Value x, const LayerNormLayerWeights &w,
                        double eps, Activation activation, FfnInput input,
                        function_ref<FailureOr<Value>(Value)> attention);
  /// The same with the decoder self-attention attention(layer, ln1(x),
  /// decode, attn, heads, kvHeads, headDim, opts).
  FailureOr<Value> layerNormDecoderLayer(
      Location loc, Value x, const LayerNormLayerWeights &w, double eps,
      Activation activation, FfnInput input, int64_t layer,
      const DecodeInputs *decode, const AttentionWeights &attn, int64_t heads,
      int64_t kvHeads, int64_t headDim, const AttentionOptions &opts);

  /// Builds layers 0 .. `count` - 1 on the hidden states `h`: layer i is
  /// `buildLayer(i, w, x)` on its input x, with w binding the tensors under
  /// `prefix` + "<i>.". Each is an attn.layer of index `firstIndex` + i
  /// (an encoder-decoder numbers its decoder layers after the encoder's:
  /// one stack), with `extras` as layerExtras(). In a --kv-cache step a
  /// layer also takes its caches and the step inputs, and returns its
  /// updated caches after the hidden states (see layer()).
  FailureOr<Value> decoderLayers(
      Value h, int64_t count, StringRef prefix,
      function_ref<FailureOr<Value>(int64_t, const LayerWeights &, Value)>
          buildLayer,
      ValueRange extras = {}, int64_t firstIndex = 0);

  /// Builds `attn.layer index = i (%h, extras...)` whose body `buildBody`
  /// fills from the block argument (the residual stream) and returns the
  /// yielded value. The body is isolated from above: it sees `extras` (e.g.
  /// an attention mask) as layerExtras(). Values of @main the body reads
  /// otherwise (a --kv-cache step's positions and caches) become further
  /// inputs, and the caches it updates further results, which the model's
  /// state results then are.
  FailureOr<Value> layer(int64_t index, Value h,
                         function_ref<FailureOr<Value>(Value)> buildBody,
                         ValueRange extras = {});
  /// The block arguments for the extras of the layer being built.
  ArrayRef<Value> layerExtras() const { return currentExtras; }

  /// Marks the module `attn.recompute_past = length`: its generation drops
  /// the KV cache and recomputes the whole sequence once, when the sequence
  /// first grows past `length` tokens (transformers' Phi-3 `generate`).
  void setRecomputePast(int64_t length);

  RankedTensorType tensorType(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, elementType);
  }
  Location loc(StringRef name) const;

  Checkpoint &ckpt;
  const ImportOptions &options;
  OpBuilder b;
  Type elementType;

private:
  /// `x` [B, T, D] by `w` (+ `bias`) as [B, n, T, headDim] (T: `tokens`).
  Value splitHeads(Location loc, Value x, Value w, Value bias, int64_t n,
                   int64_t headDim, OpFoldResult tokens);
  /// `o` [B, heads, T, headDim] as [B, T, heads * headDim] projected by `wo`
  /// (+ `bo`) to `xType` [B, T, D].
  Value mergeHeads(Location loc, Value o, Value wo, Value bo,
                   RankedTensorType xType, OpFoldResult tokens);
  /// Creates the public function `name` with a first input `argName` of
  /// `type` as the function being built.
  Value createEntry(StringRef name, StringRef argName, RankedTensorType type);

  ModuleOp module;
  func::FuncOp mainFunc;
  /// A --kv-cache step's inputs (addStepInputs).
  DecodeInputs stepInputs;
  /// Updated caches and the @main arguments they update.
  SmallVector<std::pair<Value, unsigned>> states;
  SmallVector<Value> currentExtras;
  /// attn.weight ops of the current scope by view key.
  llvm::StringMap<Value> weightCache;
};

/// Binds the tensors of one layer, named relative to the layer's prefix
/// (e.g. "model.layers.3.").
class LayerWeights {
public:
  LayerWeights(ModelBuilder &mb, StringRef prefix) : mb(mb), prefix(prefix) {}

  /// ModelBuilder::weight of the tensor `name` of this layer.
  FailureOr<Value> operator()(StringRef name, ArrayRef<int64_t> shape,
                              StringRef dims,
                              std::optional<GatherView> gather = std::nullopt,
                              bool transpose = false) const {
    return mb.weight(prefix + name.str(), shape, dims, gather, transpose);
  }
  /// The same when `present`; else a null value (e.g. a bias the config
  /// turns off).
  FailureOr<Value>
  optional(bool present, StringRef name, ArrayRef<int64_t> shape,
           StringRef dims,
           std::optional<GatherView> gather = std::nullopt) const {
    if (!present)
      return Value();
    return (*this)(name, shape, dims, gather);
  }
  /// The projections of an attention with a fused query/key/value
  /// projection `qkv`: gather views of the rows `partRows(part)` (part 0:
  /// query, 1: key, 2: value) of `qkv`.weight [rows, width] and, with
  /// `bias`, of `qkv`.bias [rows] (`rowsDim` and "hidden_size" name the
  /// dimensions in errors), then the output projection `out`.weight
  /// [width, width] and, with `bias`, `out`.bias. Binds all of them before
  /// failing.
  FailureOr<ModelBuilder::AttentionWeights>
  fusedAttention(StringRef qkv, int64_t rows, int64_t width, StringRef rowsDim,
                 function_ref<GatherView(int64_t)> partRows, StringRef out,
                 bool bias) const;
  /// The layer's location: its prefix without the trailing dot.
  Location loc() const { return mb.loc(StringRef(prefix).drop_back()); }

private:
  ModelBuilder &mb;
  std::string prefix;
};

/// The rows of part `part` (0: query, 1: key, 2: value) of a fused
/// projection that interleaves the heads, as GPT-NeoX's and BLOOM's do:
/// rows [h * 3 * dh, (h + 1) * 3 * dh) hold head h's query, key and value.
GatherView interleavedQkvRows(int64_t heads, int64_t headDim, int64_t part);

/// A tensor.empty of `shape` whose dimension `seqDim` is `tokens` (a
/// run-time size when it is a value).
Value emptyWithTokens(OpBuilder &b, Location l, ArrayRef<int64_t> shape,
                      unsigned seqDim, OpFoldResult tokens, Type elementType);

/// The weights of a decoder layer named as Megatron-style checkpoints
/// (BLOOM, GPT-NeoX) name them: LayerNorms `input_layernorm` and
/// `post_attention_layernorm`, a fused query/key/value projection
/// `<attention>.query_key_value` that interleaves the heads
/// (interleavedQkvRows) with output `<attention>.dense` (biases with
/// `qkvBias`), and the FFN `mlp.dense_h_to_4h` / `mlp.dense_4h_to_h` of `ff`
/// rows, a size that `ffDim` names in errors.
struct MegatronLayerWeights {
  ModelBuilder::LayerNormLayerWeights normsAndFfn;
  ModelBuilder::AttentionWeights attention;
};
FailureOr<MegatronLayerWeights>
readMegatronLayer(const LayerWeights &w, StringRef attention, int64_t width,
                  int64_t ff, StringRef ffDim, int64_t heads, int64_t headDim,
                  bool qkvBias);

/// The architecture builders: they read their config keys, bind the
/// checkpoint's tensors and build @main into the module.
/// The sizes that LLaMA-style configs (LLaMA and its relatives, Phi) name
/// alike.
struct DecoderSizes {
  int64_t vocab, width, ffWidth, layers, heads, kvHeads;
};
/// Reads vocab_size, hidden_size, intermediate_size, num_hidden_layers,
/// num_attention_heads and num_key_value_heads (default: the heads).
FailureOr<DecoderSizes> readDecoderSizes(Checkpoint &ckpt);

/// Whether every tensor lookup in `lookups` succeeded (each failure has
/// been reported at its tensor).
inline bool allFound(ArrayRef<FailureOr<Value>> lookups) {
  return llvm::all_of(lookups,
                      [](const FailureOr<Value> &v) { return succeeded(v); });
}

LogicalResult buildBert(ModelBuilder &mb);
LogicalResult buildGpt2(ModelBuilder &mb);
LogicalResult buildLlama(ModelBuilder &mb);

/// An error at config key `headsKey` unless its value `heads` divides the
/// model width `d` (config key `widthKey`).
LogicalResult checkHeadsDivide(Checkpoint &ckpt, StringRef widthKey, int64_t d,
                               StringRef headsKey, int64_t heads);
/// An error at config key `kvHeadsKey` unless its value `kvHeads` divides
/// the number of query heads `heads` (grouped-query attention).
LogicalResult checkKvHeadsDivide(Checkpoint &ckpt, int64_t heads,
                                 StringRef kvHeadsKey, int64_t kvHeads);
/// The rotary width of heads of `headDim` channels, the first
/// `rope.partialFactor` of them; an error at config key `factorKey` (the
/// factor called `factorName` in the message) unless it is even and at
/// least 2.
FailureOr<int64_t> rotaryWidth(Checkpoint &ckpt, int64_t headDim,
                               const RopeConfig &rope, StringRef factorKey,
                               StringRef factorName);
/// An error at the rotary settings unless they fit a rotary width of
/// `rotaryDim` (longrope's factor lists, one per pair; dynamic's exponent
/// R / (R - 2)). rotaryWidth checks this too.
LogicalResult checkRopeWidth(Checkpoint &ckpt, const RopeConfig &rope,
                             int64_t rotaryDim);

LogicalResult buildOpt(ModelBuilder &mb);
LogicalResult buildGptNeoX(ModelBuilder &mb);
LogicalResult buildPhi(ModelBuilder &mb);
LogicalResult buildBloom(ModelBuilder &mb);
LogicalResult buildFalcon(ModelBuilder &mb);
/// T5ForConditionalGeneration and, with `mt5`, MT5ForConditionalGeneration
/// (no rescale before the LM head).
LogicalResult buildT5(ModelBuilder &mb, bool mt5);
/// BartForConditionalGeneration (post-LN) and, with `preNorm`,
/// MBartForConditionalGeneration (pre-LN, final LayerNorms).
LogicalResult buildBart(ModelBuilder &mb, bool preNorm);
/// ViTModel (last_hidden_state) and, with `classifier`,
/// ViTForImageClassification (logits).
LogicalResult buildViT(ModelBuilder &mb, bool classifier);
/// CLIPVisionModel and CLIPTextModel (pooler_output).
LogicalResult buildClipVision(ModelBuilder &mb);
LogicalResult buildClipText(ModelBuilder &mb);

/// The LLaMA-like decoders buildLlama builds (they differ in options).
enum class LlamaFamily { Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma2, Phi3 };
LogicalResult buildLlamaLike(ModelBuilder &mb, LlamaFamily family);
/// The BERT-like encoders buildBert builds.
enum class BertFamily { Bert, Roberta, DistilBert, Electra, Albert, MPNet };
LogicalResult buildBertLike(ModelBuilder &mb, BertFamily family);

/// Reads a RopeConfig from transformers 4's top-level keys (`thetaKey`, default
/// `defaultTheta`; `partialKey` when the family rotates part of each head;
/// "rope_scaling") or transformers 5's "rope_parameters" object (rope_type,
/// rope_theta, partial_rotary_factor where `partialKey` is set, and the
/// scaling type's own keys). Dynamic NTK and longrope scaling (frequencies
/// that change with the sequence length) and unknown keys are errors at
/// that key.
FailureOr<RopeConfig> readRope(Checkpoint &ckpt, double defaultTheta,
                               StringRef thetaKey = "rope_theta",
                               StringRef partialKey = {});
/// The sliding window of layer `layer`: 0 (full attention) unless the
/// config's "layer_types" says "sliding_attention" there (window
/// `slidingWindow`) or, without layer_types, `allLayersKey`'s window (e.g.
/// Mistral's "sliding_window") applies to every layer. Unknown layer types
/// are errors at "layer_types".
FailureOr<int64_t> layerWindow(Checkpoint &ckpt, int64_t layer,
                               int64_t numLayers, StringRef allLayersKey);

/// transformers' relative_position_bucket (T5, MPNet) of the relative
/// position `relative` (key minus query): with `bidirectional`, half of
/// the `buckets` for keys after the query; distances below half of the
/// (remaining) buckets exact, larger ones in logarithmic buckets up to
/// `maxDistance`, computed in float32 as transformers does.
int64_t relativePositionBucket(int64_t relative, int64_t buckets,
                               int64_t maxDistance, bool bidirectional);

/// The attn activation for transformers' ACT2FN name `value`, if attn has
/// it.
std::optional<Activation> activationByName(StringRef value);
/// The names activationByName knows, for messages.
extern const char *const activationNames;
/// The attn activation for a config's `hidden_act` / `activation_function`
/// value; an error naming `key` otherwise.
FailureOr<Activation> parseActivation(Checkpoint &ckpt, StringRef key,
                                      StringRef value);

} // namespace mlir::attn::hf

#endif // ATTNC_LIB_FRONTEND_HF_MODELBUILDER_H
