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
    and updates every `gpu.launch_func`.
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
    Reductions stay serial inside each thread.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", "128",
           "threads per block along the innermost dimension">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect"];
}

#endif // ATTNC_CONVERSION_PASSES_TD
