//===- Passes.td - attnc conversion passes -----------------*- tablegen -*-===//

#ifndef ATTNC_CONVERSION_PASSES_TD
#define ATTNC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerToLinalg : Pass<"attn-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower attn ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every attn op except `attn.weight` into upstream ops on tensors:
    `attn.layer` bodies are inlined, `attn.mha` becomes projections, head
    reshapes and `attn.sdpa`, and everything else becomes `linalg.generic`
    ops (contractions, reductions, pointwise maps). Masks are computed from
    loop indices inside the score computation, never materialized as
    `Sq x Sk` tensors. f16/bf16 ops compute in f32 and round the result.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def AttnHoistWeights : Pass<"attn-hoist-weights", "::mlir::ModuleOp"> {
  let summary = "Turn attn.weight ops into leading arguments of the model entry";
  let description = [{
    Finds the model entry (`@main`, or the only public function), turns each
    distinct `attn.weight` name used in it into a leading function argument
    tagged `{attn.weight = "name"}`, and records the model's interface as the
    module attribute `attn.manifest` (weights, inputs, outputs with dtype and
    shape) for the runtime. A name used with two different types is an error.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def AttnEmitModelEntry : Pass<"attn-emit-model-entry", "::mlir::ModuleOp"> {
  let summary = "Emit the runtime entry points of a model lowered to LLVM";
  let description = [{
    On a module lowered to the LLVM dialect with the bare-pointer calling
    convention, renames the model entry to `attn_model_forward`, adds
    `void attn_model_invoke(void **buffers)` that calls it with one buffer
    per manifest record, and the NUL-terminated `attn_model_manifest`
    string that libattnrt reads.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "the target recorded in the manifest: cpu or cuda">
  ];
}

def AttnGpuDeviceBuffers : Pass<"attn-gpu-device-buffers", "::mlir::ModuleOp"> {
  let summary = "Move host-side buffer allocation and copies to the GPU";
  let description = [{
    After compute has been mapped into `gpu.launch` regions, the remaining
    host code only allocates, frees and copies buffers. For the CUDA target
    every buffer lives in device memory (the runtime passes device pointers
    for weights, inputs and outputs), so `memref.alloc`, `memref.dealloc`
    and `memref.copy` outside GPU code become `gpu.alloc`, `gpu.dealloc` and
    `gpu.memcpy`.

    Inside a `gpu.launch`, a `memref.alloca` of workgroup memory
    (`#gpu.address_space<workgroup>`, static shape) directly in the body is
    shared memory of the thread block; it becomes a workgroup attribution of
    the launch (kernels built before bufferization use allocas, because
    buffer deallocation does not support memref block arguments there).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnMergeGpuModules : Pass<"attn-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Merge outlined kernels into one gpu.module";
  let description = [{
    Kernel outlining puts every kernel in its own `gpu.module`, which would
    become one cubin (and one module load at run time) per kernel and one
    PTX file per kernel. This pass moves all kernels into the first
    `gpu.module`, renaming them after their old module (which is unique),
    and updates every `gpu.launch_func`. It also gives every workgroup
    attribution of a kernel without one an `llvm.align` of 16 bytes (the
    widest vector access the kernels make on shared memory; otherwise the
    buffer would only be aligned to its element type).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnGpuTileParallelLoops
    : Pass<"attn-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Split outermost scf.parallel loops into blocks x threads";
  let description = [{
    Tiles the innermost dimension of every outermost `scf.parallel` by the
    thread count (or its extent, if smaller), so that
    `gpu-map-parallel-loops` maps the tile loop to threads and the outer
    loop to blocks (dimensions past the third run sequentially in a block).
    Reductions stay serial inside each thread. `scf.parallel` loops nested
    in another one (the per-block code of attn-flash-attention) become
    `scf.for` nests first: they run serially inside one thread.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "128",
           "threads per block along the innermost dimension">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect"];
}

def AttnFlashAttention : Pass<"attn-flash-attention", "::mlir::ModuleOp"> {
  let summary = "Rewrite attn.sdpa into flash-style blocked attention with online softmax";
  let description = [{
    Replaces each eligible `attn.sdpa` by a loop over query blocks and, inside,
    over key/value blocks, keeping a running row max, row sum and rescaled
    output accumulator (online softmax), so the Sq x Sk score matrix is never
    materialized: memory is O(block_q x block_k) per query block. Key blocks
    that the causal or sliding-window mask hides entirely from a query block
    are not visited at all (the loop bounds skip them).
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", "64", "query rows per block">,
    Option<"blockK", "block-k", "int64_t", "64", "key columns per block">,
    Option<"transposeKeys", "transpose-keys", "bool", "false",
           "transpose K to [B, Hkv, Dk, Sk] once, so that both block "
           "contractions (Q K^T and P V) read their right operand "
           "contiguously along the output columns">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
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

def AttnCpuMatmulKernel : Pass<"attn-cpu-matmul-kernel", "::mlir::func::FuncOp"> {
  let summary = "Register-tiled vector kernels for x * W^T contractions on the CPU";
  let description = [{
    Rewrites buffer-level `linalg.generic` contractions
    `C[m, n] += A[m, k] * B[n, k]` (f32, static, contiguous) into loops that
    keep an MR x NR block of vector<VLxf32> partial sums in registers across
    k (both operands are contiguous along k, so the checkpoint weights are
    used as they are), then reduce and store. Column blocks run in parallel
    (scf.parallel). A following elementwise generic that reads the product
    at (m, n) (bias, activation, residual) is fused into the store.

    Contractions with a K-major weight, `C[m, n] += A[m, k] * B[k, n]`
    (attn-cpu-transpose-weights; static, identity layouts, N a multiple of
    VL), get outer-product tiles instead: MR rows x NV vectors of C in
    vector accumulators, per k step NV loads of B's row k and MR broadcasts
    of A, no reductions; the same column blocks in parallel, and the
    epilogue applied to whole vectors before the store.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per accumulator (16 = one AVX-512 register of f32)">,
    Option<"rowTile", "row-tile", "int64_t", "4", "rows of A per tile (MR)">,
    Option<"colTile", "col-tile", "int64_t", "4", "rows of B per tile (NR)">,
    Option<"columnBlock", "column-block", "int64_t", "64",
           "rows of B per parallel block (kept in L2)">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "fold a following elementwise consumer into the store">,
    Option<"outerRowTile", "outer-row-tile", "int64_t", "4",
           "K-major weights: rows of A per outer-product tile (MR)">,
    Option<"outerColVectors", "outer-col-vectors", "int64_t", "4",
           "K-major weights: vectors of output columns per outer-product "
           "tile (NV)">,
    Option<"outerKBlock", "outer-k-block", "int64_t", "0",
           "K-major weights: k steps per block, partial sums through C "
           "between blocks (0 = keep the block of W^T within 256 KiB)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnCpuTransposeWeights
    : Pass<"attn-cpu-transpose-weights", "::mlir::func::FuncOp"> {
  let summary = "Bind projection weights K-major (transposed once at bind time)";
  let description = [{
    Runs on tensors, before attn-hoist-weights. A contraction
    `C[m, n] += A[m, k] * W[n, k]` (the lowering of `x W^T`, f32) whose `W`
    is an `attn.weight` (plain, gathered or concatenated) reads
    `attn.weight {transpose}` (`W^T`, `[k, n]`) instead, indexed `(k, n)`.
    The runtime transposes the tensor once when it binds the weights (the
    manifest record gets `transpose`; the weights file is not rewritten), so
    attn-cpu-matmul-kernel can use outer-product tiles: per k step one
    contiguous row of `W^T` and broadcasts of A, no horizontal reductions.
    Other users of the weight keep the untransposed binding.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AttnCpuOuterProductMatmul
    : Pass<"attn-cpu-outer-product-matmul", "::mlir::func::FuncOp"> {
  let summary = "Outer-product register tiles for C += A * B contractions on the CPU";
  let description = [{
    Rewrites buffer-level `linalg.generic` contractions
    `C[(g,) i, n] += A[(g,) i, k] * B[k, n]` (f32; B and C contiguous along
    n, any strides otherwise, static or dynamic extents) into loops over
    MR x NV tiles of vector<VLxf32> accumulators holding rows of C: per k
    step, NV vector loads of B's row k, MR scalar broadcasts of A and
    MR * NV FMAs, with no horizontal reductions. Edge columns use masked
    one-vector tiles, edge rows one-row tiles. These are the block
    contractions of attn-flash-attention with transpose-keys (Q K^T and
    P V), whose tiles are too small for the reduction form of
    attn-cpu-matmul-kernel.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per accumulator (16 = one AVX-512 register of f32)">,
    Option<"rowTile", "row-tile", "int64_t", "4", "rows of C per tile (MR)">,
    Option<"colVectors", "col-vectors", "int64_t", "4",
           "vectors of C per tile row (NV)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnCpuVectorizeRows
    : Pass<"attn-cpu-vectorize-rows", "::mlir::func::FuncOp"> {
  let summary = "Vector loops along the contiguous innermost dimension of linalg.generic ops";
  let description = [{
    Rewrites buffer-level f32 `linalg.generic` ops whose loops are all
    parallel but possibly the innermost, which every operand that uses it
    stores contiguously (operand maps are ordered projections of the loop
    dims), into scalar loops over the outer dimensions around a
    vector<VLxf32> loop along the innermost one (masked when its extent is
    dynamic or not a multiple of VL). Operands that do not use it are loaded
    once per row and broadcast; `linalg.index` of it becomes a step vector.
    A reduction along it (`yield combiner(out, x)` with maximumf, minimumf,
    or an addf marked reassoc) keeps a vector accumulator per row. Bodies
    may hold arith and math ops only. On the CPU this vectorizes flash
    attention's online softmax (scale and masks, row max, exp, row sum,
    rescaling) and elementwise epilogues along the rows, which LLVM would
    otherwise vectorize across rows with gathers after fully unrolling the
    short row loops.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "lanes per vector (16 = one AVX-512 register of f32)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnApproximateMath
    : Pass<"attn-approximate-math", "::mlir::func::FuncOp"> {
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
  }];
  let options = [
    Option<"rows", "rows", "int64_t", "1", "rows per loop iteration">,
    Option<"parallel", "parallel", "bool", "true",
           "scf.forall (GPU: one kernel over rows) or a sequential scf.for "
           "(CPU: rows are too small to pay for a thread fork each)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnGpuMmaMatmul : Pass<"attn-gpu-mma-matmul", "::mlir::func::FuncOp"> {
  let summary = "Tensor-core (mma.sync m16n8k16) kernels for widened f16/bf16 x * W^T";
  let description = [{
    Rewrites buffer-level `linalg.generic` contractions
    `C[m, n] += A[m, k] * B[n, k]` (f32, static identity-layout memrefs,
    directly in the function body) whose A and B were written earlier in the
    same block by elementwise `arith.extf` generics from f16 (or bf16)
    buffers into a `gpu.launch` that multiplies the narrow buffers on the
    tensor cores: thread blocks of 2 x 2 warps (fewer where M or N is too
    small), each warp computing 2 x NT tiles of 16 x 8 with
    `nvgpu.mma.sync` (f16; `nvvm.mma.sync` for bf16) of shape m16n8k16 and
    f32 accumulators initialized from C; per k step of 32 (or 16) the block
    stages its rows of A and B in padded shared memory. Requires M % 16 == 0,
    N % 8 == 0 and K % 16 == 0. The fragments follow the PTX ISA layout (B
    in [N, K] layout is the "col" operand). An elementwise generic right
    after the contraction that reads C at (m, n) (bias at (n), residual at
    (m, n), an activation in its body) and writes C or another [M, N] f32
    buffer is computed in the kernel's stores and erased (`fuse-epilogues`).
    The extf generics are erased when nothing else reads their outputs.
    Run after bufferization, before the linalg-to-loops GPU mapping.
  }];
  let options = [
    Option<"warpNTiles", "warp-n-tiles", "int64_t", "4",
           "n8 tiles per warp (NT), halved until the block divides N">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "compute an elementwise consumer of the product (bias, "
           "activation, residual) in the kernel's stores">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def AttnGpuFlashAttention
    : Pass<"attn-gpu-flash-attention", "::mlir::func::FuncOp"> {
  let summary = "Tensor-core flash attention kernels for f16/bf16 attn.sdpa (CUDA)";
  let description = [{
    Replaces each eligible `attn.sdpa` (f16 or bf16 query, key, value and
    result; `dot` or `scaled_dot` score; optional bottom-right causal mask
    and `kv_lengths`; no bias, no window; static shapes with Sq and Sk
    multiples of 16, Dk a multiple of 16 and Dv of 8, both at most
    `max-head-dim`) by a `gpu.launch` that computes it flash-style on the
    tensor cores (FlashAttention-2 work split). The launch works on buffers:
    the operands are bridged with `bufferization.to_buffer` (read-only) and
    the result with `bufferization.to_tensor restrict writable` of a fresh
    allocation, so the rest of the function still bufferizes normally.

    Grid: (Sq / block-q, Hq, B); a block has block-q / 16 warps, each owning
    16 query rows whose Q fragments stay in registers. For every key block
    of block-k keys the block stages K [block-k, Dk] and V transposed
    [Dv, block-k] in shared memory (rows padded by 8 elements so that the
    fragment loads of a warp hit distinct banks), then each warp computes
    S = Q K^T with mma.sync m16n8k16 (f32 accumulation), applies scale and
    masks, updates its running row max and sum (quad shuffles), rescales its
    O accumulators and adds P V with mma.sync, P taken straight from the S
    accumulators (the accumulator layout of two n8 tiles is the A-operand
    layout of one k16 step). Key blocks after the last key the causal mask
    or kv_lengths leaves visible to the query block are not visited.
    Everything else is left to attn-flash-attention.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", "64",
           "query rows per thread block (16 per warp); reduced to divide Sq">,
    Option<"blockK", "block-k", "int64_t", "64",
           "keys per shared-memory stage; reduced to divide Sk">,
    Option<"maxHeadDim", "max-head-dim", "int64_t", "128",
           "largest Dk / Dv kept in registers">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
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

def AttnReassociateReductions
    : Pass<"attn-reassociate-reductions", "::mlir::func::FuncOp"> {
  let summary = "Allow reassociation in the bodies of reduction generics";
  let description = [{
    Marks the float arithmetic inside `linalg.generic` ops that have a
    reduction dimension with `fastmath<reassoc, contract>`, so that LLVM can
    vectorize the reduction loops (several partial sums instead of one
    serial chain) and fuse multiply-adds. Sums then round differently, at
    the level of f32 rounding noise; elementwise generics are untouched.
  }];
}

#endif // ATTNC_CONVERSION_PASSES_TD
