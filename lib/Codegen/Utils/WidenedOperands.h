//===- WidenedOperands.h - matmul operands widened from f16/bf16 -*- C++
//-*-===//
//
// attn.linear on f16/bf16 operands lowers to elementwise `arith.extf`
// generics that widen both operands to f32 before an f32 contraction. The
// matmul kernels of both targets (tensor cores on CUDA, AVX-512 BF16 dot
// products or in-register widening on the CPU) read the narrow buffers
// instead; these helpers find them and remove the widened copies that no
// longer have readers, so that no weight is copied to f32 per run.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_UTILS_WIDENEDOPERANDS_H
#define ATTNC_LIB_CODEGEN_UTILS_WIDENEDOPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace mlir::attn {

/// An f32 operand of a contraction traced back to the narrow buffer it was
/// widened from.
struct WidenedOperand {
  linalg::GenericOp ext;        // the extf generic (or copy) writing `wide`
  Value wide;                   // its f32 output buffer
  memref::CollapseShapeOp view; // optional 2-D view the contraction reads
  Value narrow;                 // the f16/bf16 source of the extf generic
};

/// The f16/bf16 buffer that `operand` of `contraction` (bufferized, same
/// block) holds widened: the last generic writing it before the contraction
/// is a plain extf of that buffer, and neither is written in between.
/// With `dynamicShapes` the buffers may have run-time sizes (the kernel
/// reads the sizes from the narrow buffer).
std::optional<WidenedOperand>
traceWidened(Value operand, Operation *contraction, bool dynamicShapes = false);

/// The column panels [N / W, K, W] that `operand` ([K, N], a collapse of a
/// [K, N / W, W] buffer) of `reader` holds copied back (the form
/// attn-cpu-transpose-weights reads a `panels` weight through): the last
/// generic writing the buffer before `reader` is a plain permuting copy of
/// the panels, W is `width`, and neither is written in between. With
/// `pairs`, the bf16 pair panels [N / W, K / 2, 2 * W] instead, `operand` a
/// collapse of a [K / 2, 2, N / W, W] buffer that the copy writes from
/// panels[p, j, 2 c + t] at (j, t, p, c) (a `panels pairs` weight, which
/// `reader` widens). The result's `ext` is the copy and `narrow` the panels
/// (same element type).
std::optional<WidenedOperand> tracePanels(Value operand, Operation *reader,
                                          int64_t width, bool pairs = false);
/// The narrow source viewed like the operand the contraction read.
Value narrowOperand(OpBuilder &b, Location loc, const WidenedOperand &w);

/// An f32 matmul result that only a truncf generic reads, narrowing it into
/// an f16/bf16 buffer (the f16 model's next matmul operand, say): the kernel
/// that computes the result can store it narrowed itself.
struct NarrowedResult {
  linalg::GenericOp trunc; // the truncf generic reading the result
  memref::AllocOp wide;    // the f32 result's buffer
  Value narrow;            // the truncf generic's output buffer
  // The reassociation that views `narrow` like the f32 result (the truncf
  // generic read an expand_shape of it); empty when the shapes agree.
  SmallVector<ReassociationIndices> collapse;
};

/// The narrowing of `result` (an allocation that the ops in `writers`
/// write, in this order in one block) by a truncf generic after the last
/// writer, when nothing else reads it and nothing in between touches the
/// narrow buffer. Moves the narrow buffer's allocation before the first
/// writer when it comes later (with `dynamicShapes` also one of run-time
/// sizes, computed before the first writer).
std::optional<NarrowedResult> traceNarrowed(Value result,
                                            ArrayRef<Operation *> writers,
                                            bool dynamicShapes = false);

/// The narrow buffer viewed like the f32 result.
Value narrowResultView(OpBuilder &b, Location loc, const NarrowedResult &n);

/// Whether `op` writes every element of `buffer` (its only init, an
/// identity map over parallel loops) without reading it.
bool overwritesAll(linalg::GenericOp op, Value buffer);

/// Replaces the `memref.dim`s of reshapes (`expand_shape`, `collapse_shape`)
/// and allocations under `root` by the sizes they were built from. With
/// run-time sizes, bufferization sizes a matmul's output by a `memref.dim`
/// of its widened operand's 2-D view and a narrowed result by one of the
/// result's expand_shape: such reads of a shape would keep the widened copy
/// alive and the narrow buffer's size unknown before the kernel.
void resolveReshapeDims(Operation *root);

/// Erases `alloc` with its frees and views when nothing else uses it (a
/// buffer that a kernel rewrite left without readers or writers).
void eraseAllocIfUnused(memref::AllocOp alloc);

/// The widened copies behind the contractions a kernel pass rewrites to read
/// narrow sources. Which copies die is decided before the rewrites: a fused
/// consumer may overwrite a dead copy's buffer (bufferization reuses it),
/// and only while that consumer is still a generic can the check see that
/// it reads nothing of it. The copies are erased after the rewrites.
class WidenedCopies {
public:
  /// `reader`, a contraction about to be rewritten, reads `w`.
  void add(const WidenedOperand &w, Operation *reader);
  /// Once everything is added, before any rewrite.
  void findDead();
  /// After the rewrites: erases the views nothing uses any more, the dead
  /// extf generics, and their buffers when nothing else uses them.
  void eraseDead();

private:
  SmallVector<WidenedOperand> operands;
  llvm::SmallPtrSet<Operation *, 8> readers;
  SmallVector<linalg::GenericOp> dead;
};

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_UTILS_WIDENEDOPERANDS_H
