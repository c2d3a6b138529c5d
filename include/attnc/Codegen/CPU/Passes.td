//===- Passes.td - CPU codegen passes ----------------------*- tablegen -*-===//

#ifndef ATTNC_CODEGEN_CPU_PASSES_TD
#define ATTNC_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnCpuTransposeWeights
    : Pass<"attn-cpu-transpose-weights", "::mlir::func::FuncOp"> {
  let summary = "Bind projection weights K-major (transposed once at bind time)";
  let description = [{
    Runs on tensors, before attn-hoist-weights. A contraction
    `C[m, n] += A[m, k] * W[n, k]` (the lowering of `x W^T`, f32) whose `W`
    is an `attn.weight` (plain, gathered or concatenated; f32, or f16/bf16
    widened by a 2-D `arith.extf` generic that only this contraction reads,
    which then follows the transposed weight) reads
    `attn.weight {transpose}` (`W^T`, `[k, n]`) instead, indexed `(k, n)`.
    The runtime transposes the tensor once when it binds the weights (the
    manifest record gets `transpose`; the weights file is not rewritten), so
    attn-cpu-matmul-kernel can use outer-product tiles: per k step one
    contiguous row of `W^T` and broadcasts of A, no horizontal reductions.
    A binding that another op also reads (a tied LM head and its embedding
    table) is left as it is, so that the tensor is held once; that
    projection keeps the dot-product kernel.

    With `panel-vectors` = NV > 0, an f32 `W^T` whose N is a multiple of
    W = NV * VL (VL: the contraction's `attn.tile` vector width, else
    `vector-width`) and larger than W is bound in column panels instead,
    `attn.weight {transpose, panels} : tensor<N/W x K x W>` (the runtime
    lays them out at bind time), and read through a copy back to `[k, n]`
    (a permuting `linalg.generic` and a `tensor.collapse_shape`), so that
    the IR stays exact. attn-cpu-matmul-kernel, whose outer-product tiles
    are NV vectors wide, reads the panels directly and drops the copy: per
    k step one contiguous run of W columns instead of a row of `W^T`, whose
    rows lie N floats apart (at N = 3072 every row of a tile column falls
    into the same few cache sets).

    With `pair-panels` as well, a bf16 weight widened for the contraction
    (K even, N as above; transposed, or K-major already) is bound in pair
    panels,
    `attn.weight {transpose, panels, pairs} : tensor<N/W x K/2 x 2W x bf16>`:
    pairs of consecutive k side by side in each column, the operand layout
    of AVX-512 BF16's `vdpbf16ps`. It is read back through a copy to
    `[k, n]` that the widening then reads, and attn-cpu-matmul-kernel's
    bf16 dot-product tiles read the pairs in place instead of interleaving
    them per run. The s8 words of attn-cpu-quantize-int8 (`[K/4, N]` i32,
    the weight of a contraction marked `attn.int8_matmul`) are bound in
    panels `tensor<N/W x K/4 x W x i32>` the same way, and its VNNI tiles
    read them in place.
  }];
  let options = [
    Option<"panelVectors", "panel-vectors", "int64_t", "0",
           "bind f32 K-major weights in column panels of this many vectors "
           "(0 = no panels)">,
    Option<"pairPanels", "pair-panels", "bool", "false",
           "with panel-vectors: bind widened bf16 weights in pair panels "
           "(for AVX-512 BF16 dot products)">,
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per vector where the contraction has no attn.tile">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnCpuQuantizeInt8 : Pass<"attn-cpu-quantize-int8", "::mlir::ModuleOp"> {
  let summary = "Dynamic int8 projections: u8 activations per row, s8 weights per column";
  let description = [{
    Runs on tensors right after attn-lower-to-linalg, before
    attn-cpu-transpose-weights and attn-hoist-weights. Each contraction
    `C[m, n] += A[m, k] * W[n, k]` (f32) whose `W` is a 2-D `attn.weight`
    (plain, transposed or concatenated; not gathered) with K a multiple of 4
    becomes:

    - per row m of A: `lo = min(0, min_k A)`, `hi = max(0, max_k A)`,
      `s = (hi - lo) / 255` (1 when the row is all zeros),
      `z = roundeven(-lo / s)`, and the row quantized to u8
      `q = clamp(roundeven(A / s) + z, 0, 255)` (asymmetric, so that the
      post-GELU rows of an FFN keep their resolution);
    - an integer contraction `P[m, n] = sum_k q[m, k] * Wq[n, k]` (u8 x s8
      -> i32) whose weight is `attn.weight "<name>.int8"`,
      `tensor<K/4 x N x i32>`: the s8 weight quantized symmetrically per
      output column, K-major, 4 consecutive k bytes per i32 (little-endian:
      what one AVX-512 VNNI `vpdpbusd` lane multiplies);
    - the dequantization `(P - z * colsum[n]) * s * scale[n]`, with
      `attn.weight "<name>.int8_scale"` and `"<name>.int8_colsum"` (both
      `tensor<N x f32>`), merged into the contraction's elementwise consumer
      (bias, activation, residual) when it has one.

    The compiler never sees weight values: the module records, in the
    `attn.int8_weights` dictionary (derived name -> the original
    `attn.weight` attributes), which f32 bindings attn-compile must
    quantize into the weights file it writes. Per column n of the bound
    weight `W[n, :]`: `scale = max|W[n, :]| / 127` (1 for a zero column),
    `Wq = clamp(roundeven(W / scale), -127, 127)`,
    `colsum = sum_k Wq[n, k]`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnCpuQuantizeWeights
    : Pass<"attn-cpu-quantize-weights", "::mlir::ModuleOp"> {
  let summary = "Weight-only int8 / int4 projections: f32 activations, "
                "grouped symmetric weights";
  let description = [{
    Runs on tensors right after attn-lower-to-linalg, before
    attn-cpu-transpose-weights and attn-hoist-weights. Each contraction
    `C[m, n] += A[m, k] * W[n, k]` (f32) whose `W` is a 2-D f32
    `attn.weight` (plain, gathered, concatenated or transposed) becomes a
    contraction that reads

    - `attn.weight "<name>.q8"` (bits=8), `tensor<N x K/4 x i32>`, or
      `attn.weight "<name>.q4"` (bits=4), `tensor<N x 4*ceil(K/32) x i32>`:
      row n holds `Wq[n, :]` in little-endian i32 words, two's complement
      (WeightOnlyLayout.h). int8 is one weight per byte in k order; int4
      is blocks of 32 weights in 16 bytes, byte j of a block holding
      weight j in its low nibble and weight 16 + j in its high nibble
      (zero past K), so that a 16-lane vector splits a block into its two
      halves without an interleave;
    - `attn.weight "<name>.q8_scale"` / `"<name>.q4_scale"`,
      `tensor<N x K/G x f32>`: one scale per group of G = group-size
      consecutive k of a row,

    and computes `C[m, n] += A[m, k] * (Wq[n, k] * scale[n, k / G])` in
    f32: the weight is dequantized where it is read (in registers, by
    attn-cpu-matmul-kernel), never into an f32 copy. The contraction is
    marked `attn.woq_matmul {bits, group}`.

    The compiler never sees weight values: the module records, in the
    `attn.woq_weights` dictionary (derived name -> the original
    `attn.weight` attributes, shape, bits and group), which f32 bindings
    attn-compile must quantize into the weights file it writes, and in
    `attn.woq_replaced` the checkpoint tensors no binding reads any more
    (which it leaves out of that file). Symmetric, per group:
    `scale = max|W[n, group]| / (2^(b-1) - 1)` (1 for an all-zero group),
    `Wq = clamp(roundeven(W / scale), -(2^(b-1) - 1), 2^(b-1) - 1)`.

    K must be a multiple of group-size (an error names the weight); the
    group size is a multiple of 8, so that no word straddles two groups.

    With `int8-activations` the activation rows are quantized
    too, at run time, in the same groups: per row m and group g,
    `ascale[m, g] = max|A[m, group]| / 127` (1 for an all-zero group) and
    `Aq = clamp(roundeven(A / ascale), -127, 127)` as i8. The contraction
    then reads `Aq` and the scales,
    `C[m, n] += Aq[m, k] * Wq[n, k] * (scale[n, k / G] * ascale[m, k / G])`,
    so that attn-cpu-matmul-kernel can sum each group's integer products
    (int8 or int4 weights) exactly with AVX-512 VNNI (`vpdpbusd`) and scale
    the sum once. The
    contraction is marked `attn.woq_matmul {bits, group, activations = 8}`.

    With `interleave-columns=16` as well (AVX-512 VNNI), the weights are
    `tensor<ceil(N/16) x words x 16 x i32>` and the scales
    `tensor<ceil(N/16) x K/G x 16 x f32>`: 16 rows of W interleaved a word
    at a time (4 int8 weights, or 8 int4 ones: low nibbles k..k+3, high
    nibbles k+4..k+7, zero past N), so that each i32 lane of a vpdpbusd
    is one output and the activations are broadcast: about half the
    instructions per weight of one row at a time. The contraction's mark
    and the `attn.woq_weights` entries carry `interleave = 16`.
  }];
  let options = [
    Option<"bits", "bits", "int64_t", "8", "weight width: 8 or 4">,
    Option<"groupSize", "group-size", "int64_t", "128",
           "consecutive k per scale (a multiple of 8 dividing every K)">,
    Option<"int8Activations", "int8-activations", "bool", "false",
           "also quantize the activation rows to int8 per group at run "
           "time">,
    Option<"interleaveColumns", "interleave-columns", "int64_t", "0",
           "with int8-activations: 16 interleaves the weight rows 16 at a "
           "time (AVX-512 VNNI's lanes); 0 keeps them apart">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnCpuMatmulKernel : Pass<"attn-cpu-matmul-kernel", "::mlir::func::FuncOp"> {
  let summary = "Register-tiled vector kernels for x * W^T contractions on the CPU";
  let description = [{
    Rewrites buffer-level `linalg.generic` contractions
    `C[m, n] += A[m, k] * B[n, k]` (f32, static, contiguous) into loops that
    keep an MR x NR block of vector<VLxf32> partial sums in registers across
    k (both operands are contiguous along k, so the checkpoint weights are
    used as they are), then reduce and store. The lane sums of a row's
    neighbouring outputs are taken together (a tree of shuffles and adds
    that pairs their accumulators, powers of two at a time) and update C
    as one vector, instead of one horizontal reduction per output. The
    rows after the last whole row tile (all of a decode step's single row)
    take 1 x 1 tiles, which read one weight row at a time. Column blocks
    run in parallel
    (scf.parallel). A following elementwise generic that reads the product
    at (m, n) (bias, activation, residual) is fused: on vectors over each
    finished column block when its body is elementwise f32 arithmetic (the
    tiles then store the plain sums), else into each scalar store.

    An operand that attn-convert-precision widened from f16/bf16 (an
    `arith.extf` generic writing it; A may have run-time rows, as a
    KV-cache step's activations have) is read from the narrow buffer and
    widened in registers, or, with `bf16-dot` and both operands bf16,
    multiplied pairwise by AVX-512 BF16 dot products (vdpbf16ps, f32
    accumulation); the widened copies are removed when nothing else reads
    them, so no weight is copied to f32 per run.

    Contractions with a K-major weight, `C[m, n] += A[m, k] * B[k, n]`
    (attn-cpu-transpose-weights; static, identity layouts, N a multiple of
    VL), get outer-product tiles instead: MR rows x NV vectors of C in
    vector accumulators, per k step NV loads of B's row k and MR broadcasts
    of A, no reductions; the same column blocks in parallel, and the
    epilogue applied to whole vectors before the store. With
    `pack-min-rows` set and at least that many rows, each column block
    first copies its k block of W^T into contiguous [kc, NV * VL] panels
    (W^T's rows are N floats apart, which maps a tile column's rows onto
    few cache sets); off by default, since on AMD Zen 4 it measured no
    faster (BERT shapes, 1 thread: 88-98% of the FMA peak either way).
    Widened f16/bf16 operands are read narrow here too (B's vectors widened
    in registers); with `bf16-dot`, both operands bf16 and N a multiple of
    NV * VL, the panels are always packed, with pairs of k interleaved per
    column, and the tiles multiply them with vdpbf16ps against A's pairs
    broadcast as 32-bit lanes.

    Weight-only contractions (`attn.woq_matmul`, from
    attn-cpu-quantize-weights) take the dot-product tiles with the packed
    weight read as stored: each load of 16 bytes is widened to f32 in
    registers: int4 with `int4-lookup` is looked up already scaled in a
    per-group table with vpermps (in groups of a multiple of 128, a load is
    64 bytes whose words' eight nibbles index the table after a shift each,
    against the row tile's activations copied once into the nibbles'
    order); otherwise the weights are converted
    (int4: sign-extended and split by shifts first) and the group's scale
    multiplies the group's sums. A single-row tile (a decode step's)
    prefetches its weights 8 KiB ahead into L2, each group's lines at the
    group's start.
    With `int8-dot` and int8 activations, VNNI tiles sum each group's
    integer products instead.

    The rows M (batch times sequence) may be dynamic (a model compiled for
    run-time lengths): the row loops then run to the run-time M, MR rows at
    a time up to its last multiple of MR and one row at a time after it;
    N and K (the weight's) stay static. Static M keeps its static loops.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per accumulator (16 = one AVX-512 register of f32)">,
    Option<"rowTile", "row-tile", "int64_t", "4",
           "rows of A per tile (MR), in both forms (#attn.tile's row_tile "
           "sets it for the reduction form only)">,
    Option<"fmaRowTile", "fma-row-tile", "int64_t", "0",
           "K-major weights: rows per outer-product tile of f32 FMAs (0 = "
           "row-tile); 6 with 4 column vectors fills AVX-512's 32 "
           "registers. The bf16 and int8 dot-product tiles keep row-tile">,
    Option<"colTile", "col-tile", "int64_t", "4", "rows of B per tile (NR)">,
    Option<"columnBlock", "column-block", "int64_t", "64",
           "rows of B per parallel block (kept in L2)">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "fold a following elementwise consumer into the store">,
    Option<"colVectors", "col-vectors", "int64_t", "4",
           "K-major weights: vectors of output columns per outer-product "
           "tile (NV)">,
    Option<"kBlock", "k-block", "int64_t", "0",
           "K-major weights: k steps per block, partial sums through C "
           "between blocks (0 = keep the block of W^T within 256 KiB)">,
    Option<"bf16Dot", "bf16-dot", "bool", "false",
           "multiply bf16 operands with AVX-512 BF16 dot products "
           "(vdpbf16ps; the host must have avx512bf16); otherwise narrow "
           "operands are widened in registers">,
    Option<"int8Dot", "int8-dot", "bool", "false",
           "rewrite the u8 x s8 contractions of attn-cpu-quantize-int8 into "
           "outer-product tiles of AVX-512 VNNI dot products (vpdpbusd: 4 "
           "bytes of a row of A broadcast against a row of B's words, N a "
           "multiple of VL; the host must have avx512vnni), and the "
           "weight-only contractions with int8 activations into dot-product "
           "tiles that sum each group's products with vpdpbusd (groups of a "
           "multiple of 16, int4: of 32); otherwise they stay generic loops">,
    Option<"int4Lookup", "int4-lookup", "bool", "false",
           "weight-only int4 (f32 activations): look each nibble's weight "
           "up, already scaled, in a per-group table with AVX-512's vpermps "
           "(the host must have avx512f); otherwise each weight is sign "
           "extended, shifted and converted, and the group's scale "
           "multiplies its sums">,
    Option<"int4Bf16Dot", "int4-bf16-dot", "bool", "false",
           "with int4-lookup, int4 groups of a multiple of 128: round the "
           "activations to bf16 once per row tile, look the weights up as "
           "bf16 (vpermw) and multiply them with vdpbf16ps (the host must "
           "have avx512bf16)">,
    Option<"packMinRows", "pack-min-rows", "int64_t", "0",
           "K-major weights: copy each k block of a column block of W^T "
           "into contiguous per-tile panels first when C has at least this "
           "many rows (0 = never, the default: no gain measured on AMD "
           "Zen 4; few rows never repay the copy)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::x86vector::X86VectorDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def AttnCpuOuterProductMatmul
    : Pass<"attn-cpu-outer-product-matmul", "::mlir::func::FuncOp"> {
  let summary = "Outer-product register tiles for C += A * B contractions on the CPU";
  let description = [{
    Rewrites buffer-level `linalg.generic` contractions
    `C[(g,) i, n] += A[(g,) i, k] * B[k, n]` (C f32; A and B f32, or f16/bf16
    widened to f32 by `arith.extf` in the body, which the tiles do in
    registers after narrow loads; B and C contiguous along n, any strides
    otherwise, static or dynamic extents) into loops over
    MR x NV tiles of vector<VLxf32> accumulators holding rows of C: per k
    step, NV vector loads of B's row k, MR scalar broadcasts of A and
    MR * NV FMAs, with no horizontal reductions. Edge columns use masked
    one-vector tiles, edge rows one-row tiles. These are the block
    contractions of attn-flash-attention with transpose-keys (Q K^T and
    P V), whose tiles are too small for the reduction form of
    attn-cpu-matmul-kernel.

    `C[(g,) i, n] += A[(g,) i, k] * B[n, k]` with A and B contiguous along
    k and a static K that is a multiple of VL (Q K^T over a KV cache, whose
    keys are not transposed) gets dot-product tiles instead: MR rows x
    dot-columns outputs as vector accumulators of partial sums along k, per
    k step dot-columns loads of B's rows, MR of A's and MR * dot-columns
    FMAs; at the end each tile row's accumulators are summed across their
    lanes by one shuffle tree into a vector of dot-columns outputs that
    updates C (masked at a ragged right edge, where B's last row is read
    again for the missing ones). One `vector.reduction` per output, as the
    loops of attn-cpu-vectorize-rows would do, costs about twice the FMAs
    in shuffles. The rows left over from the MR-row tiles (a decode step's
    single query row, or heads beyond a multiple of MR when the heads are
    the rows, see below) take one output at a time, reading B's rows in
    address order: without rows to share B's loads, interleaving several
    keys' rows only slowed a KV cache that streams from memory. A zero
    fill of C before it is folded in as for the outer products; an
    epilogue stays its own loop.

    A batched contraction with at least MR heads g (static) and no fused
    epilogue takes its tile rows from the heads instead of the query rows,
    one query row i at a time on the rank-reduced views `A[:, i, :]` and
    `C[:, i, :]`: the G query heads that share a KV head (GQA) read the
    same K and V blocks, so each key's vectors are loaded once for MR heads
    even when a decode step has a single query row. A contraction whose B
    is packed for `bf16-dot` keeps its query-row tiles (the panel is
    packed once per call).

    With fuse-epilogues, an elementwise generic right after the contraction
    that updates C in place (its other inputs f32, indexed like C or
    broadcast along some dimensions, contiguous along the last unless
    broadcast there; a body of elementwise arith/math on f32 and i1, no
    `linalg.index`) runs on the accumulators before they are stored, and
    goes away: the scale and bias of the attention scores cost no pass of
    their own over the tile.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per accumulator (16 = one AVX-512 register of f32)">,
    Option<"rowTile", "row-tile", "int64_t", "4", "rows of C per tile (MR)">,
    Option<"colVectors", "col-vectors", "int64_t", "4",
           "vectors of C per tile row (NV)">,
    Option<"dotColumns", "dot-columns", "int64_t", "4",
           "outputs per row of a dot-product tile (a B [n, k]): a power of "
           "two no larger than vector-width, else those stay generic">,
    Option<"bf16Dot", "bf16-dot", "bool", "false",
           "AVX-512 BF16: a bf16 B with static extents is packed into pairs "
           "of k per column and multiplied with vdpbf16ps "
           "(x86vector.avx512.dot), A rounded to bf16 when it is f32">,
    Option<"bf16DotRoundsF32", "bf16-dot-rounds-f32", "bool", "false",
           "with bf16-dot, an f32 B too: rounded to bf16 (to nearest even) "
           "when it is packed, as a bf16 model's K and V are">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "apply an in-place elementwise update of C that follows the "
           "contraction to the accumulators before they are stored">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def AttnCpuVectorizeRows
    : Pass<"attn-cpu-vectorize-rows", "::mlir::func::FuncOp"> {
  let summary = "Vector loops along the contiguous innermost dimension of linalg.generic ops";
  let description = [{
    Rewrites buffer-level f32 `linalg.generic` ops whose loops are all
    parallel but possibly the innermost, which every operand that uses it
    stores contiguously (operand maps select distinct loop dims, the
    innermost one last), into scalar loops over the outer dimensions around
    a vector<VLxf32> loop along the innermost one (masked when its extent is
    dynamic or not a multiple of VL). Operands that do not use it are loaded
    once per row and broadcast; `linalg.index` of it becomes a step vector.
    A reduction along it (`yield combiner(out, x)` with maximumf, minimumf,
    or an addf marked reassoc) keeps a vector accumulator per row. Bodies
    may hold arith and math ops only; reductions are f32, elementwise ops
    may also read and write integers of whole bytes (a quantization's f32
    rows to i8) and f16/bf16 when the body only converts them (a bf16
    model's narrowed activations), never i1 buffers (a vector of i1 is
    stored as bits). Reduction
    loops right before a parallel innermost loop (a running minimum and
    maximum over 16 lanes of each row) reduce each lane on its own: the
    outputs are held in vectors across the reduction loops, in the
    generic's order, whatever the body. `linalg.transpose` ops that keep the
    innermost dimension innermost (attention's head split and merge) are
    generalized first and copied the same way; those that move it (keys
    transposed for Q K^T), with both swapped extents multiples of VL, go by
    VL x VL blocks: VL rows loaded, a `vector.transpose` (which the CPU
    pipeline lowers to shuffles), VL rows stored. On the CPU this vectorizes
    flash attention's online softmax (scale and masks, row max, exp, row
    sum, rescaling) and elementwise epilogues along the rows, which LLVM
    would otherwise vectorize across rows with gathers after fully unrolling
    the short row loops.

    With `parallel-min-elements`, a large op outside every parallel loop
    gets its first outer loop of more than one iteration as `scf.parallel`,
    so that the threads share it instead of one running it while the others
    wait at the next parallel loop.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per vector (16 = one AVX-512 register of f32)">,
    Option<"parallelMinElements", "parallel-min-elements", "int64_t", "0",
           "split the first outer loop of more than one iteration among "
           "threads (scf.parallel) when the op is outside every parallel "
           "loop, its sizes are static and it has at least this many "
           "elements (0: never)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnCpuApproximateMath
    : Pass<"attn-cpu-approximate-math", "::mlir::func::FuncOp"> {
  let summary = "Polynomial approximations of f32 exp, erf and tanh";
  let description = [{
    Replaces the listed f32 math functions by upstream's polynomial
    approximations (populateMathPolynomialApproximationPatterns): arith ops
    only, so loops containing them vectorize, where libm calls (expf, erff,
    tanhf) keep them scalar. Used on the CPU for the online softmax of flash
    attention and GELU epilogues.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "math op names to approximate (default: exp, erf, tanh)",
               "llvm::cl::ZeroOrMore">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnCpuLowerStridedCopies
    : Pass<"attn-cpu-lower-strided-copies", "::mlir::func::FuncOp"> {
  let summary = "memref.copy between non-contiguous buffers as linalg.copy";
  let description = [{
    A memref.copy that is not one contiguous block on both sides (a KV
    cache's rows written into a strided view of the cache) lowers to a call
    of the runtime library's generic `memrefCopy`, which moves one element
    per `memcpy`. Where both innermost dimensions are contiguous and of the
    same static size, the copy becomes loops over the outer dimensions of
    vector loads and stores (up to 64 bytes) along the innermost one;
    otherwise linalg.copy, whose loops convert-linalg-to-loops writes.
    Copies that finalize-memref-to-llvm turns into one `llvm.memcpy`
    (identity layouts, or static contiguous shapes on both sides) stay as
    they are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnCpuCheckTokenIds : Pass<"attn-cpu-check-token-ids", "::mlir::ModuleOp"> {
  let summary = "Report token ids outside the embedding table at run time";
  let description = [{
    Before each `attn.embedding`, inserts a loop over its ids that calls the
    runtime's `attnrt_report_token_id(batch, position, id, rows)` for an id
    outside `[0, rows)`. The runtime then fails the run with a message
    naming the batch, the position and the id (the lookup itself still
    clamps, so nothing is read out of bounds). `batch` is the row-major
    index over all id dimensions but the last, `position` the index in the
    last. The loop reads the ids on the host, hence CPU only; it runs on
    attn IR, before attn-lower-to-linalg. Its cost is one compare per id.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def AttnCpuFuncToLLVM : Pass<"attn-cpu-func-to-llvm", "::mlir::ModuleOp"> {
  let summary = "convert-func-to-llvm with bare pointers where shapes are static";
  let description = [{
    Runs upstream's convert-func-to-llvm. A module whose functions take or
    return only statically shaped memrefs uses the bare-pointer calling
    convention (one pointer per buffer, as attn-emit-model-entry and
    libattnrt call a static model). A memref with a dynamic size (a batch or
    sequence chosen at run time) cannot travel as a bare pointer: then the
    whole module uses memref descriptors (pointers, offset, sizes, strides),
    which attn-emit-model-entry fills from the run-time sizes.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ATTNC_CODEGEN_CPU_PASSES_TD
