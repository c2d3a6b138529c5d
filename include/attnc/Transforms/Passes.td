//===- Passes.td - attnc transformation passes -------------*- tablegen -*-===//

#ifndef ATTNC_TRANSFORMS_PASSES_TD
#define ATTNC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnVerifyModel : Pass<"attn-verify-model", "::mlir::ModuleOp"> {
  let summary = "Reject models a target cannot hold: oversized tensors, "
                "inconsistent weight bindings";
  let description = [{
    Checks what no single op verifier can see, before the pipelines spend
    time on a model that cannot work:
    - every statically shaped tensor or memref (operands, results and block
      arguments of every op) holds at most `max-tensor-bytes` bytes, and its
      byte size does not overflow 64 bits. The pipelines pass what the
      target can address (2^47 bytes: x86-64's and CUDA's user virtual
      address space); a dimension such as 2^40 or INT64_MAX is reported at
      the op that uses it rather than failing at run time or in LLVM.
    - all `attn.weight` ops of the module that bind one checkpoint name
      agree on its element type and, where the op determines it (plain,
      transposed and gathered views), on its shape in the checkpoint.
  }];
  let options = [
    Option<"maxTensorBytes", "max-tensor-bytes", "int64_t",
           "int64_t(1) << 47",
           "largest byte size of one tensor or buffer">
  ];
}

def AttnLayerDrop : Pass<"attn-layer-drop", "::mlir::ModuleOp"> {
  let summary = "Prune transformer depth at compile time (LayerDrop)";
  let description = [{
    Chooses a shallower sub-network of the `attn.layer` stack in each
    function of the module, after Fan et al., "Reducing Transformer Depth on Demand with
    Structured Dropout" (ICLR 2020). A dropped layer becomes the identity on
    the residual stream and its body (weights included) is erased; the
    surviving layers are renumbered 0..k-1 and remember their checkpoint
    depth in `attn.original_index`, and their `attn.weight` names are left
    untouched so one weights file serves every depth.

    Strategies:
    - `every-other` with `rate=p`: drop the layers at depth d (from 1) with
      d = 0 (mod floor(1/p)); p = 0.5 on 12 layers keeps 0,2,4,6,8,10.
    - `top-k` with `keep=k`: keep the k layers with the highest `score`
      (ties go to the shallower layer), in their original order. Scores come
      from each `attn.layer`'s `score` or from `scores-file=path.json`.
    - `keep-list` with `layers=i,j,...`: keep exactly these 0-based depths
      (fairseq's `--encoder-layers-to-keep`).
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
  let options = [
    Option<"strategy", "strategy", "std::string", "\"every-other\"",
           "every-other | top-k | keep-list">,
    Option<"rate", "rate", "double", "0.5",
           "every-other: the LayerDrop rate p, in (0, 1)">,
    Option<"keep", "keep", "int64_t", "-1",
           "top-k: how many layers to keep">,
    ListOption<"layers", "layers", "int64_t",
               "keep-list: the 0-based depths to keep">,
    Option<"scoresFile", "scores-file", "std::string", "\"\"",
           "top-k: JSON file with one keep score per layer (an array by depth, "
           "{\"scores\": [...]}, or {\"<depth>\": score, ...}); overrides "
           "the scores on attn.layer">,
    Option<"report", "report", "bool", "false",
           "emit a remark listing the kept and dropped layers with scores">
  ];
}

def AttnPruneStructure : Pass<"attn-prune-structure", "::mlir::ModuleOp"> {
  let summary = "Prune attention heads and FFN neuron groups of attn.layer ops";
  let description = [{
    Structured pruning inside layers, as a compile-time decision like
    LayerDrop. `spec-file` is JSON:

    ```json
    {"ffn_group_size": 64,
     "layers": {"0": {"heads": [0, 2, 3], "ffn_groups": [0, 1, 5]},
                "1": {"head_scores": [0.9, 0.1, 0.5, 0.7], "keep_heads": 2,
                      "ffn_scores": [...], "keep_ffn_groups": 3}}}
    ```

    Layers are named by their checkpoint depth (`attn.original_index` when
    LayerDrop renumbered them). For each `attn.mha` (multi-head, not
    grouped) the kept heads' rows of the q/k/v projections and columns of the
    output projection are bound with `attn.weight` gathers, and the op gets
    `heads` = kept heads and an explicit `head_dim`; for each `attn.ffn` the
    kept groups of `ffn_group_size` hidden units keep their rows of
    `up_weight`/`up_bias` and columns of `down_weight`. The remaining
    matmuls are smaller and the runtime reads only the kept slices.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
  let options = [
    Option<"specFile", "spec-file", "std::string", "\"\"",
           "JSON file naming the heads / FFN groups to keep per layer">,
    Option<"report", "report", "bool", "false",
           "emit a remark per pruned op">
  ];
}

def AttnRaiseAttention : Pass<"attn-raise-attention", "::mlir::func::FuncOp"> {
  let summary = "Raise unfused matmul/scale/mask/softmax/matmul chains to attn.sdpa";
  let description = [{
    Recognises attention written with primitive ops (linalg.matmul /
    linalg.batch_matmul, linalg.transpose, a scale by mul or div, an additive
    mask, softmax as linalg.softmax or attn.softmax, and the final matmul)
    and rewrites it to one attn.sdpa, so that every later attention
    optimization (flash attention, tiling) applies. Chains that do not match
    exactly (other softmax dimension, non-constant scale, extra uses of an
    intermediate) are left alone.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnRaiseLinear : Pass<"attn-raise-linear", "::mlir::func::FuncOp"> {
  let summary = "Raise imported MatMul/Gemm projections (+ bias) to attn.linear";
  let description = [{
    `linalg.matmul(x, W)` into zeros, with `W : [K, N]` an `attn.weight`
    (ONNX MatMul against an initializer), or `W` a `linalg.transpose` of an
    `[N, K]` tensor (Gemm with transB), becomes `attn.linear`. A `[K, N]`
    weight is bound as the same `attn.weight` with `transpose` flipped, so
    the checkpoint tensor keeps its ONNX name and layout and the runtime
    transposes it at bind time. When x was collapsed from `[..., M, K]` and
    the product expanded back, the projection applies to the original
    tensor. A following `linalg.add` of a broadcast `[N]` vector becomes the
    bias. Gemm with alpha/beta != 1, matmuls of two activations and
    non-weight right operands stay as they are.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnRaiseNorms : Pass<"attn-raise-norms", "::mlir::func::FuncOp"> {
  let summary = "Raise decomposed layer norms and RMS norms";
  let description = [{
    `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)` becomes
    `attn.layer_norm`, `x / sqrt(mean(x^2) + eps)` and
    `x * (1 / sqrt(mean(x^2) + eps))` become `attn.rms_norm` (means over the
    last dimension as imported: `linalg.reduce` + division by the count;
    `^2` as `linalg.powf` by 2 or `x * x`). A following multiplication by a
    broadcast `[D]` vector becomes gamma, an addition of one beta.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnRaiseGelu : Pass<"attn-raise-gelu", "::mlir::func::FuncOp"> {
  let summary = "Raise GELU formulas (erf and tanh) to attn.gelu";
  let description = [{
    `0.5 * x * (1 + erf(x / sqrt(2)))` becomes `attn.gelu`, and
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` becomes
    `attn.gelu approximate = tanh`, for any grouping of the products and
    constants within a relative 1e-5 of the formula's.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnRaiseMha : Pass<"attn-raise-mha", "::mlir::func::FuncOp"> {
  let summary = "Raise projections + head split + attn.sdpa + head merge to attn.mha";
  let description = [{
    An `attn.sdpa` (dot or scaled_dot; a bias tensor becomes attn.mha's
    `score_bias`) whose query, key and
    value are head splits (`[B, H, S, dh]` through expand/collapse_shape,
    linalg.transpose and extract_slice) of `attn.linear` projections, and
    whose result is merged back (`[..., H * dh]`) into one `attn.linear`,
    becomes `attn.mha` (with `key_value` when the keys come from another
    input). Every element is followed through the views: element
    `(b, h, s, c)` must read column `offset + h * dh + c` of the row of
    `(b, s)`, rows in batch-major or position-major (PyTorch's sequence-first
    `nn.MultiheadAttention`) order. A projection packed for Q, K and V (one
    `in_proj` matmul sliced three ways) is bound as gathers of its weight,
    which attn-pack-qkv packs back into one binding. Causal, window,
    kv_lengths and scale carry over. Operands above 2^26 elements are not
    checked and stay attn.sdpa.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnNarrowScoreBias
    : Pass<"attn-narrow-score-bias", "::mlir::func::FuncOp"> {
  let summary = "Give attention a score bias that is the same for every "
                "query as one row";
  let description = [{
    An `attn.sdpa` `bias` or `attn.mha` `score_bias` of static shape
    `[B, H, Sq, Sk]` with `Sq > 1` whose value provably does not depend on
    the query position is replaced by its first query row,
    `tensor.extract_slice` `[B, H, 1, Sk]`, which the attention broadcasts.
    Exporters build a padding mask `[B, 1, 1, Sk]` and then expand it to
    `[B, 1, Sq, Sk]` (transformers' 4-D masks, an `And` with a splat); the
    attention would read the whole `Sq x Sk` bias per head and layer where
    one row of `Sk` holds the same information.

    The proof follows the bias through splat constants and fills (the same
    everywhere), `linalg.broadcast` (a broadcast query dimension, or one
    taken from its input), `tensor.expand_shape` / `tensor.collapse_shape`
    whose other dimensions in the query dimension's group are 1, and
    elementwise linalg ops (all loops parallel, projected permutation maps,
    an identity output, no `linalg.index`): each input that reads the query
    dimension must be invariant along it. Anything else (a function
    argument, a causal mask from `linalg.index`) is not narrowed.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def AttnRaiseFfn : Pass<"attn-raise-ffn", "::mlir::func::FuncOp"> {
  let summary = "Raise linear-activation-linear chains to attn.ffn";
  let description = [{
    `attn.linear` -> `attn.relu` / `attn.gelu` / `attn.silu` -> `attn.linear`
    with single-use intermediates, whose output width equals its input
    width, becomes one `attn.ffn`.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnBindKVCache : Pass<"attn-bind-kv-cache", "::mlir::ModuleOp"> {
  let summary = "Bind an exported decoder to KV-cache model state";
  let description = [{
    For a raised decoder exported with past key/values (`past [B, H, P, D]`
    inputs concatenated with the step's keys/values into `present` results):
    every past becomes a cache `[B, H, cache-length, D]` that
    `attn.cache_write` updates at a new input `positions [B]` (each
    sequence's past length) and whose new value is the present result
    (`attn.state_arg`); attention reads the cache with
    `kv_lengths = positions + T` (and `query_positions` when causal);
    learned positions start at `positions`; the attention-mask inputs are
    dropped (the step equals the model run per sequence with a mask of
    ones).

    For a stateless causal decoder (no past inputs) every top-level
    `attn.sdpa` gets such a cache for its keys and values, and rotary and
    learned positions from 0 start at `positions`.

    An attention bias is dropped only where it is (or, evaluated on the
    host with a mask of ones at probed lengths, equals) the causal mask;
    its sliding window becomes `window`. A bias whose visible part is
    `slope_h * k` for key `k` (ALiBi, plus what is the same for a whole
    row) becomes the constant `slope_h * row` over the cache's rows.
    Other uses of the past, its length
    or the mask, and positions computed from the token index that no op
    binds, are located errors. Marks the module `attn.causal_lm` when every
    attention is causal.
  }];
  let options = [
    Option<"cacheLength", "cache-length", "int64_t", "0",
           "The cache's length in positions (N)">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnRaisePositions : Pass<"attn-raise-positions", "::mlir::func::FuncOp"> {
  let summary = "Raise learned and rotary position embeddings";
  let description = [{
    `x + broadcast(attn.embedding(range(start, start + S), table))` with `x`
    `[B, S, D]` becomes `attn.learned_pos x, table`, with run-time
    `positions` (the start, for every sequence) where the start is not the
    constant 0 (positions after a past of run-time length).

    Rotary positions as transformers' LLaMA exports them, `x * cos(emb) +
    rotate_half(x) * sin(emb)` with `emb = concat(f, f)`, `f = inv_freq x
    float(ids)`, `inv_freq = base^(-2i / D)` a constant and the position ids
    `positions[b] + t` (as attn-bind-kv-cache binds an input `position_ids`),
    become `attn.rotary x positions(positions) base = base`. Position ids
    that are an input (any value per token) stay as computed.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnRaiseResidual : Pass<"attn-raise-residual", "::mlir::func::FuncOp"> {
  let summary = "Raise residual additions to attn.add";
  let description = [{
    `linalg.add` of two same-typed float tensors of rank >= 2, neither a
    broadcast, a fill, a weight nor a constant, becomes `attn.add`.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnRaiseLayers : Pass<"attn-raise-layers", "::mlir::func::FuncOp"> {
  let summary = "Group raised transformer blocks into attn.layer";
  let description = [{
    Each attention (`attn.sdpa` / `attn.mha`) followed by exactly two
    residual `attn.add`s before the next attention is a block: from the
    residual stream entering the first add (the operand that does not depend
    on the attention) to the second add, or to the norm after it when the
    first add's only user is a norm (post-LN). The ops that depend on the
    stream and that the block's end depends on move into an isolated
    `attn.layer` with `index` = depth; the weights and constants they read
    are cloned into it, other values from outside (a padding mask) become
    further operands. If any block cannot be isolated (an intermediate used
    outside, another add between blocks), no layer is formed, so depths stay
    the checkpoint's. Functions that already hold attn.layer ops are left
    alone.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnPackQKV : Pass<"attn-pack-qkv", "::mlir::func::FuncOp"> {
  let summary = "Pack projections of the same input into one matmul";
  let description = [{
    Two or more `attn.linear` ops on the same input whose weights are plain
    `attn.weight` tensors with the same input width and element type (and
    all with biases, or none) become one `attn.linear` against the weights
    concatenated along the output dimension, followed by slices of its
    result. The concatenation is an `attn.weight` with `concat_names`: the
    runtime concatenates the named checkpoint tensors when it binds them;
    the weights file is not rewritten. For self-attention this packs Q, K
    and V into one QKV projection.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnConvertPrecision
    : Pass<"attn-convert-precision", "::mlir::ModuleOp"> {
  let summary = "Compute an f32 model in f16 or bf16";
  let description = [{
    Every f32 tensor that an attn op produces or a layer body receives
    becomes `precision` (f16 or bf16); the lowering of those ops keeps
    accumulations, norm and softmax statistics in f32 and rounds their
    results. Weights whose type changes get `convert`: the runtime converts
    the checkpoint's tensors (f32, f16 or bf16) once, at bind time. Where a
    value crosses between attn ops and other ops (constants, tensor and
    linalg ops an importer left, function arguments and results), an
    elementwise `linalg.generic` converts it, so that other ops see the
    types they were written for. With `io-precision` equal to `precision`
    the model's float inputs and outputs take that type too; by default
    (`io-precision=f32`) they stay f32 and are converted inside the model.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"precision", "precision", "::attnc::Precision",
           "::attnc::Precision::F32",
           "Compute type of the model's f32 tensors: f32 (no change), f16 or "
           "bf16">,
    Option<"ioPrecision", "io-precision", "::attnc::Precision",
           "::attnc::Precision::F32",
           "Type of the model's float inputs and outputs: f32, or the same as "
           "precision">
  ];
}

def AttnDecomposeMha : Pass<"attn-decompose-mha", "::mlir::ModuleOp"> {
  let summary = "Split attn.mha into projections, head reshapes and attn.sdpa";
  let description = [{
    Rewrites each `attn.mha` into `attn.linear` projections, the
    expand/transpose that splits heads, one `attn.sdpa`, the merge and the
    output `attn.linear` (what attn-lower-to-linalg does to it), so that
    passes working on projections and attention (attn-pack-qkv,
    attn-flash-attention) see them.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnLastTokenLogits
    : Pass<"attn-last-token-logits", "::mlir::ModuleOp"> {
  let summary = "Compute a causal language model's logits for each row's "
                "last token only";
  let description = [{
    Generation reads one column of the logits per row: the distribution of
    the next token after the last one the run took. For a KV-cache step
    over T tokens (a prompt) the LM head otherwise computes all T columns,
    T x vocab outputs per row, of which T - 1 are discarded. This pass
    slices the final hidden state `[B, T, C]` to its last position
    `[B, 1, C]` (T - 1; for a run-time T, the run's) before the LM head, so
    that the logits result becomes `[B, 1, vocab]`.

    Applies to every public function of a module marked `attn.causal_lm`:
    each float `[B, T, V]` result that is not model state (`attn.state_arg`)
    must be an `attn.linear` of the hidden state. Every row must then end
    its tokens in the run's last column: generation feeds a row's prompt
    in runs that end at it (attn-compile --logits=last).
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnOutlineLayers : Pass<"attn-outline-layers", "::mlir::ModuleOp"> {
  let summary = "Compile each distinct attn.layer body once: one function "
                "called per layer with that layer's weights";
  let description = [{
    Groups the `attn.layer` ops of the module whose bodies are the same
    computation on the same types: the same ops with the same attributes,
    operands and result types, in the same order, where the top-level
    `attn.weight` ops of the bodies only have to agree on their result types
    (their names, gathers, concatenations and `transpose` say which tensor
    is bound, not what the body computes). Each group of `min-group-size` or
    more layers becomes one private `func.func @attn_layer_body_N` whose
    arguments are the layer's inputs followed by its weights (in body
    order); each layer of the group becomes its own `attn.weight` ops,
    cloned into the parent block, and a `func.call`. Every other layer is
    inlined in place, so that no `attn.layer` is left. Weights that nothing
    in a body reads are dropped first, so that a pruned weight is never
    bound.

    The contents of the bodies are not otherwise interpreted: the pass runs
    on attn ops (before attn-lower-to-linalg) as well as on layers whose
    bodies were already lowered (the pipelines run it on linalg, after
    attn-cpu-transpose-weights, so that weight rewrites happen while
    weights are still `attn.weight` ops).

    Layers with dynamically shaped results (a KV-cache decode step with a
    run-time number of new tokens) are outlined too, unless
    `dynamic-shapes=false`: after bufferization such a body returns the
    buffer it allocated (see attn-results-to-out-params), while the model
    state it updates (`attn.cache_write` on a cache argument) stays the
    caller's buffer, updated in place.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let options = [
    Option<"minGroupSize", "min-group-size", "int64_t", "2",
           "outline groups of at least this many identical layers (>= 1); "
           "smaller groups are inlined">,
    Option<"dynamicShapes", "dynamic-shapes", "bool", "true",
           "outline layers with dynamically shaped results (a run-time "
           "batch or sequence) too; when false they are inlined">,
    Option<"cacheWrites", "cache-writes", "bool", "true",
           "outline layers that update a KV cache (holding attn.cache_write, "
           "or returning more than the residual stream) too; when false "
           "they are inlined">
  ];
  let statistics = [
    Statistic<"numFunctions", "num-functions", "Layer body functions created">,
    Statistic<"numCalls", "num-calls", "Layers replaced by calls">,
    Statistic<"numInlined", "num-inlined", "Layers inlined in place">
  ];
}

#endif // ATTNC_TRANSFORMS_PASSES_TD
