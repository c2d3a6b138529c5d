//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//

#ifndef ATTNC_DIALECT_ATTN_ATTNOPS_TD
#define ATTNC_DIALECT_ATTN_ATTNOPS_TD

include "attnc/Dialect/Attn/AttnBase.td"
include "attnc/Dialect/Attn/AttnAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Attn_WeightOp : Attn_Op<"weight", [Pure]> {
  let summary = "a named model parameter, bound at run time";
  let description = [{
    `attn.weight` names one tensor of the weights file (e.g. a safetensors
    checkpoint). The compiler never holds its values: the runtime binds the
    tensor with this name when the compiled model is loaded, and checks that
    its dtype and shape match the result type. Weights that no op uses are
    erased as dead code, so a pruned layer's parameters are never loaded.

    ```mlir
    %wq = attn.weight "encoder.layer.0.attention.self.query.weight" : tensor<768x768xf32>
    ```

    Structured pruning binds only part of a checkpoint tensor: with
    `gather_axis`, `gather_extent` and `gather_ranges` (start, length pairs)
    the result is the concatenation along `gather_axis` of the slices
    `[start, start + length)` of the named tensor, whose size along that axis
    is `gather_extent`. The runtime copies just those slices.

    QKV packing binds several checkpoint tensors as one: with `concat_names`
    and `concat_axis` the result is their concatenation along that axis, done
    by the runtime at bind time (the weights file is not rewritten); `name`
    is then only a label.

    ```mlir
    // Heads 0 and 2 of a 4-head query projection (head width 16).
    %wq = attn.weight "layers.0.attn.q.weight" {gather_axis = 0 : i64,
        gather_extent = 64 : i64, gather_ranges = array<i64: 0, 16, 32, 16>}
        : tensor<32x64xf32>
    ```

    With `transpose` (2-D weights only) the result is the transpose of that
    tensor (after any gather or concatenation, whose axes refer to the
    untransposed shape): the runtime transposes it once at bind time, so
    that a CPU projection `x W^T` can read `W^T` along its output columns.

    ```mlir
    // W^T of a [3072, 768] checkpoint tensor.
    %wt = attn.weight "layers.0.ffn.up.weight" {transpose} : tensor<768x3072xf32>
    ```

    With `panels` the result is that 2-D tensor [K, N] (after any
    transpose) cut into column panels of W: a 3-D result [N / W, K, W] with
    `result[p, k, c] = tensor[k, p * W + c]`. The runtime lays it out once at
    bind time, so that the CPU matmul kernel's tiles read W output columns of
    consecutive k as one contiguous run instead of rows N elements apart.

    ```mlir
    // W^T of a [3072, 768] checkpoint tensor in panels of 64 columns.
    %wp = attn.weight "layers.0.ffn.up.weight" {transpose, panels} : tensor<48x768x64xf32>
    ```

    With `pairs` as well, the panels hold pairs of consecutive k side by
    side in each column, the operand layout of AVX-512 BF16's dot products:
    a 3-D result [N / W, K / 2, 2 * W] with
    `result[p, j, 2 * c + t] = tensor[2 * j + t, p * W + c]` (K even).

    ```mlir
    // The same weight in bf16 pair panels of 64 columns.
    %wq = attn.weight "layers.0.ffn.up.weight" {transpose, panels, pairs} : tensor<48x384x128xbf16>
    ```

    With `convert` the checkpoint may hold the tensor in any float type (f32,
    f16, bf16): the runtime converts it to the result's element type once,
    at bind time (attn-convert-precision sets it when it changes a weight's
    type, so that an f32 checkpoint serves an f16 or bf16 model).

    An `i32` weight holds integers as stored (no `convert`): the s8 weights
    of attn-cpu-quantize-int8, four per i32, which attn-compile writes into
    the weights file under names derived from the f32 weight's.
  }];
  let arguments = (ins StrAttr:$name,
                   OptionalAttr<I64Attr>:$gather_axis,
                   OptionalAttr<I64Attr>:$gather_extent,
                   OptionalAttr<DenseI64ArrayAttr>:$gather_ranges,
                   OptionalAttr<StrArrayAttr>:$concat_names,
                   OptionalAttr<I64Attr>:$concat_axis,
                   UnitAttr:$transpose,
                   UnitAttr:$panels,
                   UnitAttr:$pairs,
                   UnitAttr:$convert);
  let results = (outs RankedTensorOf<[F32, F16, BF16, I32]>:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_Op<"sdpa", [Pure, AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention (and other score functions)";
  let description = [{
    Computes `softmax(score(q, k) + bias + mask) @ v` per batch and head.

    Shapes: query `[B, Hq, Sq, Dq]`, key `[B, Hkv, Sk, Dk]`, value
    `[B, Hkv, Sk, Dv]`, result `[B, Hq, Sq, Dv]`. `Hq` must be a multiple of
    `Hkv`; query head `h` reads kv head `h / (Hq / Hkv)` (GQA; MQA when
    `Hkv == 1`).

    Score functions (`s` is `scale`):
    - `dot`: `s * q.k` (default s = 1), needs Dq == Dk;
    - `scaled_dot`: `s * q.k` (default s = 1/sqrt(Dk)), needs Dq == Dk;
    - `general` (bilinear, Luong): `s * q^T W k`, one score weight
      `W : [Dq, Dk]` (default s = 1);
    - `additive` (Bahdanau): `s * v^T tanh(W [q; k])`, score weights
      `W : [A, Dq + Dk]` and `v : [A]` (default s = 1);
    - `cosine`: `s * q.k / (max(|q|, 1e-6) * max(|k|, 1e-6))` (default
      s = 1), needs Dq == Dk;
    - `gaussian` (RBF kernel): `-0.5 * s * |q - k|^2` (default s =
      1/sqrt(Dk)), needs Dq == Dk.

    Masks are generated, never passed as `Sq x Sk` tensors. Query row `i`
    sits at absolute position `p = i + Sk - Sq` (bottom-right alignment, so
    a single decode-step query sees the whole cache), or, with
    `query_positions` (`[B]`, integer), at `p = query_positions[b] + i`:
    each batch row's queries are aligned to that row's own start (a KV-cache
    step of `Sq` tokens per row written at the row's cache length, where
    rows have different lengths). Key `j` is visible when
    - `causal` is set: `j <= p`;
    - `window = W` (W > 0) is set: `|p - j| < W` (W = 0 means no window);
    - `kv_lengths` (`[B]`, integer) is given: `j < kv_lengths[b]`.
    The optional additive `bias` is broadcastable to `[B, Hq, Sq, Sk]` (each
    dimension 1 or full). A row with no visible key yields zeros.
  }];
  let arguments = (ins
    Attn_FloatTensor:$query,
    Attn_FloatTensor:$key,
    Attn_FloatTensor:$value,
    Optional<Attn_FloatTensor>:$bias,
    Optional<Attn_IndexTensor>:$kv_lengths,
    Optional<Attn_IndexTensor>:$query_positions,
    Variadic<Attn_FloatTensor>:$score_weights,
    DefaultValuedAttr<Attn_ScoreFunction,
                      "::mlir::attn::ScoreFunction::scaled_dot">:$score,
    OptionalAttr<F64Attr>:$scale,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`kv_lengths` `(` $kv_lengths^ `:` type($kv_lengths) `)`)?
    (`query_positions` `(` $query_positions^ `:` type($query_positions) `)`)?
    (`score_weights` `(` $score_weights^ `:` type($score_weights) `)`)?
    (`score` `=` $score^)?
    (`causal` $causal^)?
    (`window` `=` $window^)?
    (`scale` `=` $scale^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, or the score function's
    /// default.
    double getEffectiveScale();
    /// The extents of the operands (dynamic ones as ShapedType::kDynamic;
    /// group 0 without kv heads).
    SdpaShape getSdpaShape();
  }];
}

def Attn_MhaOp : Attn_Op<"mha", [Pure, AttrSizedOperandSegments]> {
  let summary = "multi-head attention with input and output projections";
  let description = [{
    `attn.mha` projects the query input `[B, Sq, Dm]` and the key/value input
    `[B, Sk, Dkv]` (absent: self-attention on the query input) into heads,
    runs `attn.sdpa` (scaled_dot) per head and projects back to `Dm`.

    Head width `dh`: narrow heads (default) split the model width,
    `dh = Dm / heads`, which requires `Dm % heads == 0`; `wide` heads give
    each head the full width, `dh = Dm`.

    Weights use the PyTorch `nn.Linear` layout (`[out, in]`):
    `q_weight : [heads*dh, Dm]`, `k_weight`, `v_weight : [kv_heads*dh, Dkv]`,
    `o_weight : [Dm, heads*dh]`; optional biases (all four or none):
    `[heads*dh]`, `[kv_heads*dh]`, `[kv_heads*dh]`, `[Dm]`. `kv_heads`
    (default `heads`) must divide `heads` (GQA/MQA). `causal`, `window`,
    `scale` and `kv_lengths` mean what they mean on `attn.sdpa`, and so does
    the optional additive `score_bias` (`attn.sdpa`'s `bias`, broadcastable
    to `[B, heads, Sq, Sk]`), e.g. a padding mask built from an
    `attention_mask` input.
  }];
  let arguments = (ins
    Attn_FloatTensor:$query,
    Optional<Attn_FloatTensor>:$key_value,
    Attn_FloatTensor:$q_weight,
    Attn_FloatTensor:$k_weight,
    Attn_FloatTensor:$v_weight,
    Attn_FloatTensor:$o_weight,
    Variadic<Attn_FloatTensor>:$biases,
    Optional<Attn_FloatTensor>:$score_bias,
    Optional<Attn_IndexTensor>:$kv_lengths,
    ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
    OptionalAttr<I64Attr>:$num_kv_heads,
    OptionalAttr<I64Attr>:$head_dim,
    UnitAttr:$wide,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window,
    OptionalAttr<F64Attr>:$scale
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query (`,` $key_value^)?
    `weights` `(` $q_weight `,` $k_weight `,` $v_weight `,` $o_weight `)`
    (`biases` `(` $biases^ `)`)?
    (`score_bias` `(` $score_bias^ `)`)?
    (`kv_lengths` `(` $kv_lengths^ `)`)?
    `heads` `=` $num_heads
    (`kv_heads` `=` $num_kv_heads^)?
    (`head_dim` `=` $head_dim^)?
    (`wide` $wide^)?
    (`causal` $causal^)?
    (`window` `=` $window^)?
    (`scale` `=` $scale^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getKvHeads() { return getNumKvHeads().value_or(getNumHeads()); }
    /// Width of one head (head_dim if set; narrow: Dm / heads; wide: Dm).
    int64_t getEffectiveHeadDim();
  }];
}

//===----------------------------------------------------------------------===//
// Norms, projections, feed-forward
//===----------------------------------------------------------------------===//

def Attn_LayerNormOp : Attn_Op<"layer_norm",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * gamma + beta` over the last
    dimension `D` of `x`; `gamma` and `beta` are `[D]`; `var` is the biased
    (population) variance.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$gamma,
                   Attn_FloatTensor:$beta,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta (`epsilon` `=` $epsilon^)? attr-dict
    `:` type($input) `,` type($gamma) `,` type($beta)
  }];
  let hasVerifier = 1;
}

def Attn_RmsNormOp : Attn_Op<"rms_norm",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `y = x / sqrt(mean(x^2) + epsilon) * gamma` over the last dimension `D`;
    `gamma` is `[D]`.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-6">:$epsilon);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma (`epsilon` `=` $epsilon^)? attr-dict
    `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Attn_LinearOp : Attn_Op<"linear", [Pure]> {
  let summary = "affine projection x W^T + b";
  let description = [{
    `x : [..., K]`, `weight : [N, K]` (PyTorch `nn.Linear` layout), optional
    `bias : [N]`; the result is `[..., N]`.
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$weight,
                   Optional<Attn_FloatTensor>:$bias);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_FfnOp : Attn_Op<"ffn", [Pure, AttrSizedOperandSegments,
                                 AllTypesMatch<["input", "result"]>]> {
  let summary = "position-wise feed-forward block, plain or gated";
  let description = [{
    Plain: `y = act(x W1^T + b1) W2^T + b2` with `x : [..., D]`,
    `up_weight : [F, D]`, optional `up_bias : [F]`, `down_weight : [D, F]`,
    optional `down_bias : [D]`.

    Gated (GLU family, e.g. SwiGLU with `activation = silu`): with
    `gate_weight : [F, D]` (and optional `gate_bias : [F]`) the activation
    applies to the gate projection and multiplies the up projection:
    `y = (act(x Wg^T + bg) * (x W1^T + b1)) W2^T + b2`.

    ```mlir
    %y = attn.ffn %x gate(%wg) up(%wu) down(%wd) activation = silu
        : (tensor<1x16x64xf32>, tensor<172x64xf32>, tensor<172x64xf32>,
           tensor<64x172xf32>) -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input,
                   Optional<Attn_FloatTensor>:$gate_weight,
                   Optional<Attn_FloatTensor>:$gate_bias,
                   Attn_FloatTensor:$up_weight,
                   Optional<Attn_FloatTensor>:$up_bias,
                   Attn_FloatTensor:$down_weight,
                   Optional<Attn_FloatTensor>:$down_bias,
                   DefaultValuedAttr<Attn_Activation,
                       "::mlir::attn::Activation::relu">:$activation);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`gate` `(` $gate_weight^ `)`)? (`gate_bias` `(` $gate_bias^ `)`)?
    `up` `(` $up_weight (`,` $up_bias^)? `)`
    `down` `(` $down_weight (`,` $down_bias^)? `)`
    (`activation` `=` $activation^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isGated() { return static_cast<bool>(getGateWeight()); }
  }];
}

//===----------------------------------------------------------------------===//
// Pointwise ops
//===----------------------------------------------------------------------===//

class Attn_UnaryPointwiseOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType],
                                   traits)> {
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Attn_ReluOp : Attn_UnaryPointwiseOp<"relu"> {
  let summary = "max(x, 0)";
}

def Attn_SiluOp : Attn_UnaryPointwiseOp<"silu"> {
  let summary = "x * sigmoid(x)";
}

def Attn_GeluOp : Attn_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none`: `0.5 x (1 + erf(x / sqrt(2)))`;
    `approximate = tanh`: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
  }];
  let arguments = (ins Attn_FloatTensor:$input,
                   DefaultValuedAttr<Attn_GeluApproximation,
                       "::mlir::attn::GeluApproximation::none">:$approximate);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`approximate` `=` $approximate^)? attr-dict `:` type($result)
  }];
}

def Attn_AddOp : Attn_Op<"add", [Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "elementwise sum (residual connections)";
  let arguments = (ins Attn_FloatTensor:$lhs, Attn_FloatTensor:$rhs);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Attn_SoftmaxOp : Attn_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one dimension";
  let arguments = (ins Attn_FloatTensor:$input,
                   DefaultValuedAttr<I64Attr, "-1">:$dim);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`dim` `=` $dim^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `dim` with negative values counted from the back.
    int64_t getNormalizedDim();
  }];
}

//===----------------------------------------------------------------------===//
// Embeddings and positional encodings
//===----------------------------------------------------------------------===//

def Attn_EmbeddingOp : Attn_Op<"embedding", [Pure]> {
  let summary = "table lookup: ids [...] into table [V, D] gives [..., D]";
  let arguments = (ins Attn_IndexTensor:$ids, Attn_FloatTensor:$table);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_SinusoidalPosOp : Attn_Op<"sinusoidal_pos",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "adds the sinusoidal positional encoding of Vaswani et al.";
  let description = [{
    `x : [B, S, D]` (D even). For position `p = offset + s` and `i < D/2`:
    `PE[p, 2i] = sin(p / 10000^(2i/D))`, `PE[p, 2i+1] = cos(p / 10000^(2i/D))`;
    the result is `x + PE`. With `positions : [B]` (run-time start
    positions, e.g. a KV-cache step's cache lengths), row `s` of batch `b`
    sits at `p = offset + positions[b] + s`.
  }];
  let arguments = (ins Attn_FloatTensor:$input,
                   Optional<Attn_IndexTensor>:$positions,
                   DefaultValuedAttr<I64Attr, "0">:$offset);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`offset` `=` $offset^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Attn_LearnedPosOp : Attn_Op<"learned_pos",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "adds rows [offset, offset + S) of a learned position table";
  let description = [{
    `x : [B, S, D]`, `table : [P, D]` with `offset + S <= P`. With
    `positions : [B]` (run-time start positions, e.g. a decode step's cache
    length), row `s` of batch `b` adds table row `offset + positions[b] + s`;
    a row past the table is clamped to its last row (the runtime checks
    position inputs against their bound before a run).
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$table,
                   Optional<Attn_IndexTensor>:$positions,
                   DefaultValuedAttr<I64Attr, "0">:$offset);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $table (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`offset` `=` $offset^)? attr-dict `:` type($input) `,` type($table)
  }];
  let hasVerifier = 1;
}

def Attn_RotaryOp : Attn_Op<"rotary",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding (RoPE), rotate-half convention";
  let description = [{
    `x : [B, H, S, Dh]`. With `R = rotary_dim` (default Dh, even),
    `half = R / 2`, position `p = offset + s`, and for `i < half`:
    `theta_i = p * base^(-2i / R)`,
    `y[i] = x[i] cos(theta_i) - x[i + half] sin(theta_i)`,
    `y[i + half] = x[i + half] cos(theta_i) + x[i] sin(theta_i)`;
    channels `>= R` pass through (GPT-NeoX / Llama layout). With
    `positions : [B]` (run-time start positions), `p = offset +
    positions[b] + s`.

    Scaled rotary positions (linear, llama3, YaRN context extension) change
    the frequencies: `inv_freq` (R / 2 positive values) replaces
    `base^(-2i / R)` with `inv_freq[i]` (`base` is then unused), and `scale`
    multiplies `cos` and `sin` (YaRN's attention factor; default 1).

    Frequencies chosen by the run-time length (transformers' `longrope` and
    `dynamic` types, which choose per forward call from the largest position
    plus one): with `length_threshold = N`, row `b`'s length is
    `L = offset + positions[b] + S` (its last position plus one; `offset +
    S` without `positions`). Rows with `L <= N` use the frequencies above;
    rows with `L > N` use `long_inv_freq[i]` (R / 2 positive values,
    LongRoPE's long factors), or with `ntk_factor = f` (dynamic NTK) the
    frequencies `base_L^(-2i / R)` of the grown base
    `base_L = base * (f * L / N - (f - 1))^(R / (R - 2))`, computed in
    float32 at run time. Exactly one of `long_inv_freq` and `ntk_factor`
    goes with `length_threshold`. The length is per row, so a row's result
    does not depend on the other rows of the batch.
  }];
  let arguments = (ins Attn_FloatTensor:$input,
                   Optional<Attn_IndexTensor>:$positions,
                   DefaultValuedAttr<F64Attr, "10000.0">:$base,
                   DefaultValuedAttr<I64Attr, "0">:$offset,
                   OptionalAttr<I64Attr>:$rotary_dim,
                   OptionalAttr<DenseF64ArrayAttr>:$inv_freq,
                   DefaultValuedAttr<F64Attr, "1.0">:$scale,
                   OptionalAttr<I64Attr>:$length_threshold,
                   OptionalAttr<DenseF64ArrayAttr>:$long_inv_freq,
                   OptionalAttr<F64Attr>:$ntk_factor);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`base` `=` $base^)? (`offset` `=` $offset^)?
    (`rotary_dim` `=` $rotary_dim^)? (`inv_freq` `=` $inv_freq^)?
    (`scale` `=` $scale^)? (`length_threshold` `=` $length_threshold^)?
    (`long_inv_freq` `=` $long_inv_freq^)? (`ntk_factor` `=` $ntk_factor^)?
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KV cache
//===----------------------------------------------------------------------===//

def Attn_CacheWriteOp : Attn_Op<"cache_write",
    [Pure, AllTypesMatch<["cache", "result"]>]> {
  let summary = "writes new keys or values into a KV cache at run-time positions";
  let description = [{
    `cache : [B, H, L, D]`, `new : [B, H, T, D]` (`T <= L`), `positions : [B]`:
    the result is `cache` with rows `[positions[b], positions[b] + T)` of
    batch `b` replaced by `new[b]`. A decode step writes its token's keys and
    values this way and then attends over the cache with `kv_lengths`
    (`positions + T`). When the cache is the model's state (an entry
    argument whose result is tied to it with `attn.state_arg`), the write
    happens in place: a step costs O(T), not a copy of the cache. Positions
    outside `[0, L - T]` are clamped into it (never a write out of bounds;
    the runtime checks position inputs against their bound before a run).
  }];
  let arguments = (ins Attn_FloatTensor:$cache, Attn_FloatTensor:$new_rows,
                   Attn_IndexTensor:$positions);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $new_rows `into` $cache `at` $positions attr-dict `:` type($new_rows)
    `,` type($cache) `,` type($positions)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

def Attn_LayerOp : Attn_Op<"layer", [RecursiveMemoryEffects,
    IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "one transformer block of a stack";
  let description = [{
    A region holding one transformer block. The first operand is the
    residual stream, and the first result its updated value (same type), so
    that dropping the layer (LayerDrop) is the identity on the stream. Other
    operands (e.g. encoder output, padding lengths) are passed in as further
    block arguments. `index` is the depth in the original stack (0-based),
    unique among the layers of a block;
    `score` is the optional LayerDrop keep score learned for this layer.
    The body is isolated from above: the block's weights are `attn.weight`
    ops inside it, so removing the layer removes its parameters too.

    ```mlir
    %y = attn.layer index = 3 score = 0.9 (%x)
        : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
    ^bb0(%h: tensor<1x128x768xf32>):
      ...
      attn.yield %out : tensor<1x128x768xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$index,
                   OptionalAttr<F64Attr>:$score);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `index` `=` $index (`score` `=` $score^)? ` ` `(` $inputs `)` attr-dict
    `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// Fails when two layers of this layer's block share an index.
    ::llvm::LogicalResult verifyUniqueIndices();
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
                                     HasParent<"LayerOp">]> {
  let summary = "terminates an attn.layer body";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* no values */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // ATTNC_DIALECT_ATTN_ATTNOPS_TD
