//===- Passes.td - GPU codegen passes ----------------------*- tablegen -*-===//

#ifndef ATTNC_CODEGEN_GPU_PASSES_TD
#define ATTNC_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnGpuFlashAttention
    : Pass<"attn-gpu-flash-attention", "::mlir::func::FuncOp"> {
  let summary = "Tensor-core flash attention kernels for f16/bf16 attn.sdpa (CUDA)";
  let description = [{
    Replaces each eligible `attn.sdpa` (f16 or bf16 query, key, value and
    result; `dot` or `scaled_dot` score; optional bottom-right causal mask,
    `kv_lengths` and additive `bias` (e.g. the key-padding mask of an
    `attention_mask`); no window; any Sq and Sk, static heads, Dk and Dv
    multiples of 8, both at most `max-head-dim`) by a `gpu.launch` that computes it flash-style on the
    tensor cores (FlashAttention-2 work split). The launch works on buffers:
    the operands are bridged with `bufferization.to_buffer` (read-only) and
    the result with `bufferization.to_tensor restrict writable` of a fresh
    allocation, so the rest of the function still bufferizes normally.

    Grid: (Sq / block-q, Hq, B); a block has block-q / 16 warps, each owning
    16 query rows whose Q fragments stay in registers. For every key block
    of block-k keys the block stages K [block-k, Dk] and V transposed
    [Dv, block-k] in shared memory (rows padded by 8 elements so that the
    fragment loads of a warp hit distinct banks), then each warp computes
    S = Q K^T with mma.sync m16n8k16 (f32 accumulation), applies scale,
    bias (read from global memory) and masks, updates its running row max
    and sum (quad shuffles), rescales its O accumulators and adds P V with mma.sync, P taken straight from the S
    accumulators (the accumulator layout of two n8 tiles is the A-operand
    layout of one k16 step). Key blocks after the last key the causal mask
    or kv_lengths leaves visible to the query block are not visited.
    Run-time batch, Sq and Sk (`?`, read off Q and K on the host): the grid
    is (ceil(Sq / block-q), Hq, B), Q rows past Sq are read clamped and not
    stored, K and V rows past Sk are staged as zeros and their keys masked.
    Static Sq and Sk that are not multiples of 16 take the same path.
    Everything else is left to attn-flash-attention.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", "64",
           "query rows per thread block (16 per warp); reduced to divide Sq">,
    Option<"blockK", "block-k", "int64_t", "64",
           "keys per shared-memory stage; reduced to divide Sk">,
    Option<"maxHeadDim", "max-head-dim", "int64_t", "128",
           "largest Dk / Dv kept in registers">,
    Option<"staging", "staging", "std::string", "\"cp-async\"",
           "K/V staging: cp-async (sm_80+: a two-stage pipeline of "
           "nvgpu.device_async_copy groups, V kept [key][d] and read with "
           "ldmatrix.trans; needs ldmatrix) or plain (loads and stores, V "
           "transposed, between two barriers per key block)">,
    Option<"ldmatrix", "ldmatrix", "bool", "true",
           "load the K and V fragments from shared memory with "
           "nvgpu.ldmatrix (else with pairs of 2-element loads)">
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

def AttnGpuCacheWrite : Pass<"attn-gpu-cache-write", "::mlir::func::FuncOp"> {
  let summary = "KV-cache writes as device kernels that update the cache in place (CUDA)";
  let description = [{
    Replaces each `attn.cache_write` by a `gpu.launch` with
    one thread per element of the new rows `[B, H, T, D]`: grid
    (ceil(T * D / threads), H, B), `threads` = min(T * D, `block-threads`).
    Each thread reads `positions[b]` from device memory, clamps it into
    `[0, L - T]` exactly as the CPU lowering does, and stores
    `new[b, h, t, d]` into `cache[b, h, pos + t, d]`; consecutive threads
    write consecutive elements of a row.

    The launch works on buffers bridged like attn-gpu-flash-attention's:
    `new` and `positions` with `bufferization.to_buffer read_only`, the
    cache with a writable `bufferization.to_buffer` (which One-Shot
    Bufferize counts as a write of the cache tensor, in place unless the old
    value is read later, in which case it copies first), and the result is
    `bufferization.to_tensor restrict writable` of that same buffer. A cache
    that is model state therefore stays the entry argument's buffer
    (attn-drop-state-results checks it). Run before attn-lower-to-linalg,
    whose host loop (which reads `positions` on the host) then has nothing
    left to lower. The cache (model state) and positions are static; the
    token count T may be dynamic (a step of a run-time length): then
    `threads` = `block-threads`, the grid's x extent is computed on the host,
    every thread checks that it has an element, and a row that would pass
    the cache's end (T > L) is dropped. Other dynamic sizes and grids over
    65535 blocks in y or z are errors.
  }];
  let options = [
    Option<"blockThreads", "block-threads", "int64_t", "128",
           "most threads per block">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
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
    stages its rows of A and B in padded shared memory: with
    `staging=cp-async` (the default) asynchronously (nvgpu.device_async_copy,
    zero-filling the ragged edges) in a pipeline of `stages` buffers, with
    `staging=plain` by loads and stores between barriers; fragments come
    from shared memory by nvgpu.ldmatrix (`ldmatrix=false`: pairwise loads).
    Ragged M, N and K (not multiples of 16, 8, 16) run with masked edge
    blocks. M may be dynamic (A and C `?` rows: batch * sequence at run
    time): the kernel takes the full 64-row block, its grid's row tiles are
    a ceil-div of A's run-time rows on the host, and the A staging, C loads
    and stores are bounded by that run-time size (TMA: the tensor map is
    encoded from the memref's run-time sizes, rows past M zero-filled).
    The fragments follow the PTX ISA layout (B
    in [N, K] layout is the "col" operand). An elementwise generic right
    after the contraction that reads C at (m, n) (bias at (n), residual at
    (m, n), an activation in its body) and writes C or another [M, N] f32
    buffer is computed in the kernel's stores and erased (`fuse-epilogues`).
    The extf generics are erased when nothing else reads their outputs.
    With `wgmma` (sm_90a) the kernels use warpgroup MMA instead of
    mma.sync: one warpgroup per 64-row block, `nvvm.wgmma.mma_async`
    m64nNk16 on tiles staged by cp.async in the no-swizzle K-major
    core-matrix layout, read through shared-memory matrix descriptors
    (`wgmma.fence`, `fence.proxy.async`, commit and wait per k step); shapes
    whose operands cannot both be staged by cp.async keep mma.sync.
    With `tma` as well, operands that are plain row-major matrices in
    global memory are loaded by the Tensor Memory Accelerator instead of
    cp.async: a 3-D tensor map per operand (8 elements, rows, K / 8; row
    pitch and 16-byte strides) whose box lands in shared memory already in
    the core-matrix layout, one thread issuing `nvgpu.tma.async.load` per
    stage, completion tracked by `nvgpu.mbarrier` expect_tx / try_wait
    parity; out-of-bounds rows and k chunks of ragged edges are zero-filled
    by the TMA unit.
    Run after bufferization, before the linalg-to-loops GPU mapping.
  }];
  let options = [
    Option<"warpNTiles", "warp-n-tiles", "int64_t", "4",
           "n8 tiles per warp (NT), halved until the block divides N">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "compute an elementwise consumer of the product (bias, "
           "activation, residual) in the kernel's stores">,
    Option<"staging", "staging", "std::string", "\"cp-async\"",
           "global->shared staging: cp-async (sm_80+: a multi-stage "
           "pipeline of nvgpu.device_async_copy groups) or plain (loads and "
           "stores between two barriers per k step)">,
    Option<"stages", "stages", "int64_t", "3",
           "shared-memory stages of the cp-async pipeline (>= 2); fewer "
           "where K has fewer k steps or 48 KiB would not hold them">,
    Option<"ldmatrix", "ldmatrix", "bool", "true",
           "load the mma fragments from shared memory with nvgpu.ldmatrix "
           "(else with pairs of 2-element loads)">,
    Option<"wgmma", "wgmma", "bool", "false",
           "sm_90a: multiply with warpgroup MMA (nvvm.wgmma.mma_async "
           "m64nNk16 from shared-memory descriptors, one warpgroup per "
           "64-row block) where both operands can be staged by cp.async; "
           "other shapes (and wgmma=false) keep mma.sync">,
    Option<"tma", "tma", "bool", "false",
           "sm_90a, with wgmma: load the A and B tiles of plain row-major "
           "operands (identity layout at the start of an allocation, K a "
           "multiple of 8) with the Tensor Memory Accelerator "
           "(nvgpu.tma.async.load issued by one thread, completion on an "
           "mbarrier per stage; tensor maps from nvgpu.tma.create.descriptor "
           "on the host); other operands keep cp.async">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def AttnGpuSimtMatmul : Pass<"attn-gpu-simt-matmul", "::mlir::func::FuncOp"> {
  let summary = "f32 x * W^T contractions as one parallel loop with their zero fill and epilogue";
  let description = [{
    For the f32 contractions `C[m, n] += A[m, k] * B[n, k]` that
    attn-gpu-mma-matmul leaves (f16/bf16 go to the tensor cores) at the top
    level of a function: linalg's parallel loops would launch one kernel
    for the zero fill of C, one for the contraction and one for an
    elementwise consumer (bias, activation, residual). This pass writes the
    three as one `scf.parallel` over (m, n) whose body runs the k loop in a
    register (from zero when C was zero-filled, else from C) and stores
    through the consumer's body, so attn-gpu-tile-parallel-loops maps one
    kernel. The consumer is the one attn-gpu-mma-matmul fuses: the next op,
    elementwise, reading C at (m, n) and other inputs at (m, n), (m) or (n).
    M may be dynamic (rows of a dynamic batch or sequence): the loop then
    runs over A's run-time rows. Run after bufferization, after
    attn-gpu-mma-matmul.
  }];
  let options = [
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "compute an elementwise consumer of the product (bias, "
           "activation, residual) in the loop's store">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def AttnGpuFuseElementwise
    : Pass<"attn-gpu-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise generics (conversions, residual adds) into one";
  let description = [{
    An f16/bf16 model lowers a residual add as widen, widen, add, narrow:
    four elementwise generics, and on CUDA four kernels with three
    temporaries. This pass fuses producer-consumer chains of elementwise
    generics at the top level of a function (linalg's elementwise fusion,
    without its reshape propagation, which turns projections into
    contractions the matmul kernels do not take), so that such a chain is
    one kernel; every op keeps its rounding. Generics that read a
    contraction's result (matmul epilogues) or feed one (operand widening)
    stay as they are: attn-gpu-mma-matmul and attn-gpu-simt-matmul fold
    them into the matmul kernels (with the f16 bias widening and result
    narrowing around them). Run on tensors, after attn-lower-to-linalg.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AttnGpuRowKernels : Pass<"attn-gpu-row-kernels", "::mlir::func::FuncOp"> {
  let summary = "Run every row of a fused row loop on a thread block of its own";
  let description = [{
    attn-fuse-rows leaves each row-wise chain (residual add + layer norm,
    RMS norm) as an `scf.forall` over rows whose body reduces the row into
    scalars and then writes it elementwise. Mapped as a parallel loop, every
    row runs serially in one thread (a BERT-base layer norm: one block of
    128 threads, each making three passes over 768 elements). This pass
    turns such a forall into a `gpu.launch` with one block per row: the
    elementwise row loops are strided over the block's threads (coalesced
    accesses), a reduction combines the threads' partials with warp
    shuffles and one shared-memory slot per warp, and the row's scalars
    (statistics, copies, fills of stack scalars) are computed by every
    thread in its own registers. Each element of a row belongs to the same
    thread in every loop, so the loops need no barrier between them.

    A forall is taken when its body holds only views, stack scalars (allocas
    of unit shape), their fills and copies, side-effect-free scalar ops, and
    linalg generics whose loops are all 1 but at most one, of the same size
    N for the whole body: elementwise over it, a sum or max reduction over it
    into a stack scalar (f32), or scalar. The forall's extents (the rows)
    may be dynamic: the grid is then their product computed on the host.
    Anything else stays for the generic parallel-loop mapping. Run after
    bufferization and the matmul
    kernels, before attn-gpu-tile-parallel-loops.
  }];
  let options = [
    Option<"maxThreads", "max-threads", "int64_t", "256",
           "threads per block (a multiple of 32); a row of N elements "
           "uses N rounded up to 32 if that is fewer">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def AttnGpuTileParallelLoops
    : Pass<"attn-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Split outermost scf.parallel loops into blocks x threads";
  let description = [{
    Tiles the innermost dimension of every outermost `scf.parallel` by the
    thread count (or its extent, if smaller), so that
    `gpu-map-parallel-loops` maps the tile loop to threads and the outer
    loop to blocks. A run-time extent is tiled by the thread count with a
    partial last tile (min bound; the mapped kernel guards it). A loop of more than two dimensions first gets its
    leading dimensions collapsed into one: the grid has three (a fourth
    would run sequentially in a block and leave the tile loop unmapped), and
    a third would put the threads on z, which allows only 64 per block.
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

def AttnGpuCopyKernels
    : Pass<"attn-gpu-copy-kernels", "::mlir::func::FuncOp"> {
  let summary = "Copies between strided views become kernels";
  let description = [{
    A `memref.copy` in host code becomes a `gpu.memcpy`
    (`attn-gpu-device-buffers`), which the runtime performs as one
    contiguous byte copy from each view's first element, and which the
    GPU-to-LLVM lowering takes for identity layouts only. A copy whose source
    or target has any other layout (a slice of a concatenated output, a row
    or column block of a buffer) becomes a `linalg.copy` instead, which the
    GPU mapping turns into an element-wise copy kernel. Copies between
    identity-layout buffers stay `memref.copy`; copies inside GPU code are
    left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AttnGpuDeviceBuffers : Pass<"attn-gpu-device-buffers", "::mlir::ModuleOp"> {
  let summary = "Move host-side buffer allocation and copies to the GPU";
  let description = [{
    After compute has been mapped into `gpu.launch` regions, the remaining
    host code only allocates, frees and copies buffers. For the CUDA target
    every buffer lives in device memory (the runtime passes device pointers
    for weights, inputs and outputs), so `memref.alloc`, `memref.dealloc`
    and `memref.copy` outside GPU code become `gpu.alloc`, `gpu.dealloc` and
    `gpu.memcpy`. Constants of the host module (`memref.get_global`, which
    bufferization makes of dense tensor constants) are copied into a device
    buffer where the host takes them, freed at the end of that block: a
    kernel never reads host memory.

    Inside a `gpu.launch`, a `memref.alloca` of workgroup memory
    (`#gpu.address_space<workgroup>`, static shape) directly in the body is
    shared memory of the thread block; it becomes a workgroup attribution of
    the launch (kernels built before bufferization use allocas, because
    buffer deallocation does not support memref block arguments there).
    A thread-private `memref.alloca` of static shape that only `scf.if`s
    separate from the launch body (the guard of a partial block) moves to
    the start of the body, where LLVM promotes it instead of adjusting the
    stack inside the branch.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnGpuMergeModules : Pass<"attn-gpu-merge-modules", "::mlir::ModuleOp"> {
  let summary = "Merge outlined kernels into one gpu.module";
  let description = [{
    Kernel outlining puts every kernel in its own `gpu.module`, which would
    become one cubin (and one module load at run time) per kernel and one
    PTX file per kernel. This pass moves all kernels into the first
    `gpu.module`, renaming them after their old module (which is unique),
    and updates every `gpu.launch_func`. It also gives every workgroup
    attribution of a kernel without one an `llvm.align` of 16 bytes (the
    widest vector access the kernels make on shared memory; otherwise the
    buffer would only be aligned to its element type), 128 bytes in kernels
    that issue TMA loads (`nvgpu.tma.async.load` destinations).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnGpuTensorMapParams : Pass<"attn-gpu-tensormap-params", "::mlir::ModuleOp"> {
  let summary = "Pass TMA tensor maps to outlined kernels as pointers";
  let description = [{
    A tensor map (`!nvgpu.tensormap.descriptor`) created on the host by
    `nvgpu.tma.create.descriptor` reaches an outlined kernel as an argument
    of that type. `convert-nvgpu-to-nvvm` lowers the map to the device
    address of the encoded 128-byte CUtensorMap (an `!llvm.ptr` returned by
    `mgpuTensorMapEncodeTiledMemref`), but neither the GPU-to-NVVM signature
    conversion of `gpu.func` nor `gpu-to-llvm`'s conversion of
    `gpu.launch_func` operands knows the type (upstream's pipeline lowers
    nvgpu before outlining; this one outlines first). This pass makes such
    kernel arguments `!llvm.ptr`, with an `unrealized_conversion_cast` back
    to the map type at the kernel's entry and one to the pointer before each
    launch; both fold away with the casts of the NVGPU lowering. Run right
    before `convert-nvgpu-to-nvvm`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // ATTNC_CODEGEN_GPU_PASSES_TD
