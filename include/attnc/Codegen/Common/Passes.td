//===- Passes.td - target-independent codegen passes -------*- tablegen -*-===//

#ifndef ATTNC_CODEGEN_COMMON_PASSES_TD
#define ATTNC_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnTile : Pass<"attn-tile", "::mlir::func::FuncOp"> {
  let summary = "Choose tile sizes per target and attach them as #attn.tile";
  let description = [{
    Chooses the tile sizes of every op that is tiled downstream and attaches
    them as the discardable attribute `attn.tile = #attn.tile<...>`:
    `attn.sdpa` (flash blocks), `attn.linear`, `attn.ffn`, `attn.mha`
    (matmul kernel tiles; `attn.mha` also its flash blocks), and on CUDA the
    function (threads per block). The consumers (attn-flash-attention,
    attn-cpu-matmul-kernel, attn-gpu-mma-matmul,
    attn-gpu-tile-parallel-loops) use the attribute instead of their own
    options; attn-lower-to-linalg carries it to the contraction generics.
    Every size can be fixed with the option of the same name (0 = choose).
    Ops that already carry `attn.tile` keep it. An op that lowers to
    several contractions (`attn.ffn`, `attn.mha`) gets one configuration
    for all of them: on the CPU the one with the least total modelled time
    (VL dividing every K, the column block fitting for the largest K), on
    CUDA the smallest warp tile chosen for any of them.

    CPU (machine model from the host, each part overridable:
    `simd-width`, `vector-registers`, `l1-kib`, `l2-kib`, `cores`):
    - vector width VL: the register's f32 lanes (16 with AVX-512, 8 with
      AVX/AVX2, else 4), halved down to 4 while it does not divide K (the
      kernel needs K % VL == 0).
    - MR x NR register tile and column block NB (weight rows per parallel
      block): the combination with the smallest modelled time, where a
      tile's k step costs max((MR+NR)/2 loads, MR*NR/2 FMAs, 4 cycles of
      FMA latency) + 1 cycle (2 loads and 2 FMAs per cycle), the kernel's
      edge tiles (MR x 1, 1 x 1) are counted, full column blocks run
      `cores` at a time and the remainder block after them. Constraints:
      MR*NR accumulators + MR + NR operands fit the vector registers (32
      with AVX-512, else 16), MR <= 8, NR <= 16, NB*K*4 bytes fit half of
      L2. Times within 1% are ties, which go to the larger NB, then to
      fewer loads per FMA, then to the larger MR.
    - flash block-q x block-k from {16,...,256} (clamped to Sq, Sk): the
      [G, bq, bk] f32 score tile fits half of L1 and the per-block working
      set (Q block, K and V blocks, accumulator) half of L2; minimizes
      1/bq + 1/bk (K/V re-reads and rescales); keeps B*Hkv*ceil(Sq/bq) >=
      cores when it can.

    CUDA:
    - tensor-core flash (what attn-gpu-flash-attention takes: f16/bf16,
      dot-product score, no bias or window, Sq, Sk, Dk multiples of 16, Dv
      of 8, head dims <= 128): block-q (16 query rows per warp) the largest
      of 64, 32, 16 dividing Sq whose grid B*Hq*Sq/block-q still has a
      thread block for each of 132 SMs, else 16; block-k 64, or the largest
      of 32, 16 dividing Sk.
    - other flash attention: block-q = 1: each query block is one thread that runs it
      serially, so one row per block gives the most threads; block-k: the
      largest of 64, 32, 16, 8 whose per-thread temporaries (score row,
      accumulator, row state of the G heads: 4*G*(bk+Dv+4) bytes) fit 1
      KiB of local memory, else 8.
    - warp-n-tiles (f16/bf16 linear): the largest NT in {4, 2} that the
      kernel can use (its blocks of 2 x 2 warps, each 2 x NT mma tiles,
      divide N) and whose grid still has a thread block for each of 132 SMs
      (H100), else 1 (the most blocks).
    - threads per block: the largest of 128, 64, 32 that still gives the
      largest attn result in the function at least 132 blocks, else 32.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
  let options = [
    Option<"target", "target", "::attnc::Target", "::attnc::Target::CPU",
           "cpu or cuda">,
    Option<"blockQ", "block-q", "int64_t", "0",
           "flash attention query rows per block (0 = choose)">,
    Option<"blockK", "block-k", "int64_t", "0",
           "flash attention key columns per block (0 = choose)">,
    Option<"vectorWidth", "vector-width", "int64_t", "0",
           "CPU matmul f32 lanes per accumulator, a power of two (0 = from "
           "the host and K)">,
    Option<"rowTile", "row-tile", "int64_t", "0",
           "CPU matmul rows of x per register tile, MR (0 = choose)">,
    Option<"colTile", "col-tile", "int64_t", "0",
           "CPU matmul weight rows per register tile, NR (0 = choose)">,
    Option<"columnBlock", "column-block", "int64_t", "0",
           "CPU matmul weight rows per parallel block (0 = choose)">,
    Option<"warpNTiles", "warp-n-tiles", "int64_t", "0",
           "CUDA mma n8 subtiles per warp (0 = choose)">,
    Option<"threads", "threads", "int64_t", "0",
           "CUDA threads per block, at most 1024 (0 = choose)">,
    Option<"simdWidth", "simd-width", "int64_t", "0",
           "CPU model: f32 lanes of one vector register, a power of two (0 = "
           "host: 16 with AVX-512, 8 with AVX/AVX2, else 4)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", "0",
           "CPU model: vector registers (0 = host: 32 with AVX-512, else 16)">,
    Option<"l1KiB", "l1-kib", "int64_t", "0",
           "CPU model: L1 data cache per core in KiB (0 = host)">,
    Option<"l2KiB", "l2-kib", "int64_t", "0",
           "CPU model: L2 cache per core in KiB (0 = host)">,
    Option<"cores", "cores", "int64_t", "0",
           "CPU model: cores that run parallel loops (0 = host)">
  ];
}

def AttnFlashAttention : Pass<"attn-flash-attention", "::mlir::ModuleOp"> {
  let summary = "Rewrite attn.sdpa into flash-style blocked attention with online softmax";
  let description = [{
    Replaces each eligible `attn.sdpa` by a loop over query blocks and, inside,
    over key/value blocks, keeping a running row max, row sum and rescaled
    output accumulator (online softmax), so the Sq x Sk score matrix is never
    materialized: memory is O(block_q x block_k) per query block. Key blocks
    that the causal or sliding-window mask hides entirely from a query block
    are not visited at all (the loop bounds skip them). Batch and sequence
    lengths may be dynamic (CPU): the loops then run over the run-time batch
    and ceil(S / block) blocks, every block may be partial, and the causal
    alignment Sk - Sq is a run-time value.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", "64", "query rows per block">,
    Option<"blockK", "block-k", "int64_t", "64", "key columns per block">,
    Option<"transposeKeys", "transpose-keys", "bool", "false",
           "transpose K to [B, Hkv, Dk, Sk] once, so that both block "
           "contractions (Q K^T and P V) read their right operand "
           "contiguously along the output columns (not for keys with "
           "kv_lengths: a KV cache is read only up to each row's length)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def AttnFoldTransposes : Pass<"attn-fold-transposes", "::mlir::func::FuncOp"> {
  let summary = "Fold layout transposes into the slices that read and write them";
  let description = [{
    Removes layout copies (the head split and merge transposes around
    attention, [B, S, H, D] <-> [B, H, S, D]) where loops only touch them
    through slices:

    - `tensor.extract_slice` of a `linalg.transpose` becomes a slice of the
      transpose's input with permuted offsets, sizes and strides;
    - a `linalg.transpose` of an `scf.forall` result, whose `shared_outs`
      init is a `tensor.empty` and whose block argument is only used by
      `tensor.parallel_insert_slice` / `tensor.extract_slice`, becomes the
      forall writing the transposed layout directly.

    Both need the permutation to keep the relative order of the slice's
    non-unit (or dynamic) dimensions: the slice then holds the same elements
    in the same order, and its type is unchanged. Anything else is left as
    it is. On CUDA every such transpose is a kernel writing a full copy.

    With `fold-reads=false` only the second rewrite runs: the CPU flash
    kernels read whole blocks of Q, K and V, which pay for their split copy,
    but write each output block once, so the merge copy is pure overhead.
  }];
  let options = [
    Option<"foldReads", "fold-reads", "bool", /*default=*/"true",
           "Also fold the transposes that slices read (the head split)">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def AttnFuseRows : Pass<"attn-fuse-rows", "::mlir::func::FuncOp"> {
  let summary = "Fuse row-wise epilogue chains (residual add + layer norm) into one loop";
  let description = [{
    Tiles each `linalg.generic` marked `attn.fuse_rows` (the normalization
    step of a layer or RMS norm) along all but its last dimension with
    `scf.forall`, one row (or `rows` rows) per iteration, and fuses its
    producers into the loop: the mean and variance reductions and the
    residual `attn.add` before the norm, so that residual add + norm is one
    loop nest (one kernel on the GPU) that reads each row once.
    Contractions are never fused (they keep their own matmul kernels).

    With `fuse-elementwise`, the elementwise generics inside each row loop
    are then fused into their single consumer (upstream's elementwise
    fusion, without its reshape propagation): the dtype conversions of an
    f16/bf16 norm (extf of the inputs and of gamma/beta, truncf of the sum)
    no longer materialize one row temporary each, which on the GPU is
    per-thread local memory. The elementwise generic that is a norm's only
    use (the truncf of an f16/bf16 norm) is then tiled in its place, so the
    conversion joins the row loop instead of a loop (kernel) of its own.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", "1", "rows per loop iteration">,
    Option<"parallel", "parallel", "bool", "true",
           "scf.forall (GPU: one kernel over rows; CPU: the threads share "
           "the rows) or a sequential scf.for">,
    Option<"parallelMinRows", "parallel-min-rows", "int64_t", "0",
           "with parallel: a sequential scf.for where the row count is "
           "below this or known only at run time (0: always scf.forall)">,
    Option<"fuseElementwise", "fuse-elementwise", "bool", "false",
           "fuse single-use elementwise generics in the row loops into "
           "their consumers">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnReassociateReductions
    : Pass<"attn-reassociate-reductions", "::mlir::func::FuncOp"> {
  let summary = "Allow reassociation in the bodies of reduction generics";
  let description = [{
    Adds `fastmath<reassoc, contract>` to the flags of the float arithmetic
    inside `linalg.generic` ops that have a reduction dimension (flags an op
    already has stay), so that LLVM can
    vectorize the reduction loops (several partial sums instead of one
    serial chain) and fuse multiply-adds. Sums then round differently, at
    the level of f32 rounding noise; elementwise generics are untouched.
  }];
}

def AttnSplitSharedFills
    : Pass<"attn-split-shared-fills", "::mlir::func::FuncOp"> {
  let summary = "Give every consumer of a shared tensor fill its own fill";
  let description = [{
    CSE merges identical `linalg.fill`s of `tensor.empty` (the zero
    accumulators of several projections), and one-shot bufferization then
    fills one buffer once and copies it for all but one consumer, which
    leaves that fill far from the matmul it initializes. Cloning the fill
    (and its empty init) before every consumer in the same block keeps each
    accumulator's zeroing next to its contraction, where the kernel passes
    (attn-gpu-simt-matmul, attn-gpu-mma-matmul) fold it into the kernel.
    Consumers in nested regions keep the original fill, which is not
    repeated per loop iteration. Run it after the last CSE and before
    bufferization.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def AttnPromoteLoopBuffers
    : Pass<"attn-promote-loop-buffers", "::mlir::func::FuncOp"> {
  let summary = "Give each scf.forall iteration its temporaries on the stack";
  let description = [{
    After bufferization, a `memref.alloc` inside an `scf.forall` body is a
    temporary of one iteration (e.g. the running max, sum, accumulator and
    score tile of an attn-flash-attention query block). This pass turns each
    such allocation with a static shape of at most `max-bytes` into a
    `memref.alloca` and wraps the body in `memref.alloca_scope`, so that the
    stack is released after every iteration. Nothing is then allocated on
    the heap per iteration, and in GPU kernels (where the forall becomes
    blocks x threads) the temporaries are per-thread local memory instead
    of device-side malloc. Run it after one-shot-bufferize and before
    buffer deallocation.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", "262144",
           "largest allocation moved to the stack, in bytes">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnMarkTokenIdInputs
    : Pass<"attn-mark-token-id-inputs", "::mlir::ModuleOp"> {
  let summary = "Record on each function argument of embedding ids its table's row count";
  let description = [{
    For every `attn.embedding` whose ids are a function argument (directly,
    through shape-only ops such as `tensor.reshape`, `tensor.collapse_shape`,
    `tensor.expand_shape` and `tensor.cast`, or through `attn.layer` block
    arguments), sets the argument attribute `attn.id_bound` to the table's
    row count (the smallest one when an argument feeds several tables).
    attn-hoist-weights copies it into the input's manifest record, and
    libattnrt then fails a run whose ids fall outside [0, rows) on the host,
    before any compiled code reads them: the only check a CUDA model gets,
    since the device lookup can only clamp.

    With `warn-computed-ids`, an embedding whose ids are computed inside the
    model from its inputs (so cannot be checked on the host) gets a warning
    at its location; ids computed from constants alone (e.g. learned
    positions over a static sequence) are in range by construction.
  }];
  let options = [
    Option<"warnComputedIds", "warn-computed-ids", "bool", "false",
           "warn at embeddings whose ids are computed inside the model">,
  ];
}

def AttnDropStateResults
    : Pass<"attn-drop-state-results", "::mlir::ModuleOp"> {
  let summary = "Update model state (a KV cache) in place: drop its results from the bufferized entry";
  let description = [{
    Runs after One-Shot Bufferize. A model entry result tagged
    `attn.state_arg = i` (see attn-hoist-weights) is the new value of
    argument `i`, a state buffer the runtime owns; when bufferization wrote
    it in place, the result is the argument's own buffer (once loops that
    carry it are folded and outlined layer bodies that return it are
    rewritten), and this pass removes it, so the
    compiled code updates the state in place and nothing copies it. A state
    result that is not the argument's buffer (the old value is still read
    after the update, so bufferization made a copy) is an error naming it.
    Modules without state are left unchanged.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def AttnDistinctResults
    : Pass<"attn-distinct-results", "::mlir::ModuleOp"> {
  let summary = "Return a copy for every repeat of a returned buffer";
  let description = [{
    Runs after One-Shot Bufferize, before buffer-results-to-out-params. Two
    graph outputs can be one value (an exporter's `Identity`, or two equal
    computations that CSE merged); each result becomes an output buffer of
    its own, and one buffer cannot be two of them, so the second and later
    occurrences of a value in a `func.return` become a fresh `memref.alloc`
    filled by `memref.copy`. A repeated buffer without the identity layout
    is an error.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnResultsToOutParams
    : Pass<"attn-results-to-out-params", "::mlir::ModuleOp"> {
  let summary = "Buffer results become out-params, except dynamically sized "
                "results of private functions";
  let description = [{
    Runs after One-Shot Bufferize and attn-drop-state-results, before the
    buffer deallocation pipeline. Upstream's buffer-results-to-out-params
    (with `hoist-static-allocs`, on public functions too, so that the model
    entry takes one buffer per output record), except that a private
    function with a dynamically shaped memref result (an outlined layer
    body of a model with a run-time batch or sequence) keeps returning its
    buffers: its callers cannot allocate a buffer whose size only the
    callee computes. The ownership-based deallocation that follows frees
    such a buffer in the caller after its last use; the callee allocated it,
    so nothing is copied.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnHoistWeights : Pass<"attn-hoist-weights", "::mlir::ModuleOp"> {
  let summary = "Turn attn.weight ops into leading arguments of the model entry";
  let description = [{
    Finds the model entry (`@main`, or the only public function), turns each
    distinct `attn.weight` name used in it into a leading function argument
    tagged `{attn.weight = "name"}`, and records the model's interface as the
    module attribute `attn.manifest`: one dictionary per runtime buffer
    (weights, inputs, outputs) with its kind, name and tensor type, plus a
    weight's concat, gather and transpose attributes (see
    attnc/Codegen/Common/Manifest.h). A name used with two different types is
    an error. Inputs and outputs may have dynamic (batch, sequence) sizes:
    their records get `dims_from`, per dynamic dimension the input and axis
    whose size it equals or (-1, -1) for one the caller chooses, derived
    from the size equalities the IR on tensors states (linalg loops shared
    by operands, tensor.empty sized by tensor.dim, destinations, calls); an
    output size that follows from no input is an error, as is dynamic
    model state.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def AttnExpandDynamicReshapes
    : Pass<"attn-expand-dynamic-reshapes", "::mlir::func::FuncOp"> {
  let summary = "memref.expand_shape splitting one size into several dynamic "
                "ones becomes memref.reinterpret_cast";
  let description = [{
    With dynamic batch and sequence, the rows of a projection ([B * S, N])
    are split back into [B, S, N] by a memref.expand_shape whose group holds
    two dynamic sizes. Upstream's expand-strided-metadata (LLVM 22) crashes
    on such a group; on a contiguous (identity layout) source the expansion
    is a plain memref.reinterpret_cast with the output sizes and their
    row-major strides, which this pass writes instead. Run it before
    expand-strided-metadata (both targets' host code); every other
    expand_shape (all of those of static models) is left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnLowerRuntimeChecks
    : Pass<"attn-lower-runtime-checks", "::mlir::ModuleOp"> {
  let summary = "Failed run-time checks (cf.assert) call libattnrt";
  let description = [{
    `generate-runtime-verification` (attn-compile --runtime-checks, CPU)
    guards memory accesses with `cf.assert`s whose messages name the op and
    its source location, and the ONNX importer checks positions that depend
    on dynamic sizes the same way (both targets, host code). Upstream lowers a failed assert to `puts` and `abort`,
    which loses the message when stdout is a buffered pipe and leaves a
    core dump. Each `cf.assert` becomes instead an `scf.if` on the failed
    condition that calls `attnrt_runtime_check_failed(message)`: libattnrt
    prints it on stderr as a located error
    (`model.mlir:9:10: error: run-time check failed: out-of-bounds access`)
    and exits with status 3. Asserts inside a `gpu.module` (device code,
    which cannot call the host library) are left to the GPU lowering.
    Asserts in the model entry's body whose condition is computed only
    from constants and the entry's argument dimensions (checks of the input
    sizes: the importer's slice bounds, dim_param sums) are preconditions
    instead: they are evaluated first thing in the entry, and a failed one
    calls `attnrt_precondition_failed(message)` and returns before anything
    runs; attnrt_run then fails with the message (the CLI's error, a Python
    exception), and the process goes on.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnEmitModelEntry : Pass<"attn-emit-model-entry", "::mlir::ModuleOp"> {
  let summary = "Emit the runtime entry points of a model lowered to LLVM";
  let description = [{
    On a module lowered to the LLVM dialect with the bare-pointer calling
    convention, renames the model entry to `attn_model_forward`, adds
    `void attn_model_invoke(void **buffers)` that calls it with one buffer
    per manifest record, and the NUL-terminated `attn_model_manifest`
    string that libattnrt reads, written from `attn.manifest` by the writer
    libattnrt's parser shares (attnc/Runtime/ManifestSchema.h). A model with
    dynamic sizes uses memref descriptors: `buffers[records]`
    points to the run-time sizes, one int64_t per `?` in record order, from
    which the descriptors' sizes and row-major strides are built.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"target", "target", "::attnc::Target", "::attnc::Target::CPU",
           "the target recorded in the manifest: cpu or cuda">,
    Option<"symbolPrefix", "symbol-prefix", "std::string", "\"attn_model\"",
           "the prefix of the entry symbols (PREFIX_invoke, "
           "PREFIX_manifest, PREFIX_forward): attn_model for the model a "
           "program runs, attn_encoder for an encoder-decoder's encoder "
           "linked beside its decoder step">
  ];
}

#endif // ATTNC_CODEGEN_COMMON_PASSES_TD
