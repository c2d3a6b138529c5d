//===- GpuMmaMatmul.h - attn-gpu-mma-matmul's kernel builder ----*- C++ -*-===//
//
// Private to attn-gpu-mma-matmul: the matched contraction, how its kernel
// moves tiles, and the builder of the kernel, whose mma.sync path and
// pipeline are in GpuMmaMatmulKernel.cpp and whose wgmma and TMA parts
// (sm_90a) are in GpuMmaMatmulWgmma.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_GPU_GPUMMAMATMUL_H
#define ATTNC_LIB_CODEGEN_GPU_GPUMMAMATMUL_H

#include "Codegen/Common/IndexArith.h"
#include "Codegen/Common/MatmulMatch.h"
#include "Codegen/GPU/MmaSync.h"
#include "Codegen/GPU/TensorCoreTiles.h"
#include "Codegen/Utils/WidenedOperands.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Alignment.h"

#include <optional>

namespace mlir::attn::mma_matmul {

constexpr int64_t kWarpSize = 32;
constexpr int64_t kTileM = kMmaM, kTileN = kMmaN, kTileK = kMmaK;

/// A matched C[m, n] += sum_k A[m, k] * B[n, k] whose operands are widened
/// f16 or bf16 buffers.
struct MmaMatmul {
  mlir::attn::NTMatmul contraction; // the f32 form that was matched
  linalg::GenericOp op;
  WidenedOperand a, b;
  Value c;
  Type elementType; // f16 or bf16
  int64_t m, n, k;
  // Found before any rewrite (each may move or erase ops around others):
  Operation *zeroInit = nullptr; // C's zero fill, folded into the kernel
  linalg::GenericOp epilogue;    // fused into the stores when set
  // Epilogue inputs widened from f16/bf16 (biases): read narrow.
  SmallVector<std::pair<Value, WidenedOperand>, 2> narrowInputs;
  // The result narrowed by a truncf generic: stored narrow.
  std::optional<mlir::attn::NarrowedResult> narrowed;
};

/// Whether `v` is known to start at the base of a buffer of its own (a
/// function argument, which the runtime allocates with cuMemAlloc, or an
/// allocation), possibly through reshapes: then an identity-layout element
/// offset is the only misalignment, and pairs at even offsets are aligned
/// to twice the element size.
bool startsAtAllocation(Value v);

using GemmTiling = mlir::attn::MmaGemmTiling;

/// How a kernel moves its tiles: the cp.async pipeline's depth (0: plain
/// staging, one buffer between two barriers per k step), the elements per
/// cp.async of A and B (0: that operand is staged by plain loads and stores,
/// inside the pipeline when there is one), and whether the fragments come
/// from ldmatrix.
struct Staging {
  int64_t stages = 0;
  int64_t chunkA = 0, chunkB = 0;
  bool ldmatrix = false;
  /// Multiply with wgmma.mma_async from tiles in the no-swizzle core-matrix
  /// layout (needs the cp.async pipeline for both operands).
  bool wgmma = false;
  /// wgmma only: A (B) is loaded by the Tensor Memory Accelerator instead
  /// of cp.async (its chunk is then unused).
  bool tmaA = false, tmaB = false;
  bool tma() const { return tmaA || tmaB; }
  /// Whether any operand is staged by cp.async (the pipeline then carries
  /// cp.async group tokens).
  bool asyncCopies() const { return (chunkA && !tmaA) || (chunkB && !tmaB); }
};

/// The alignment cp.async.bulk.tensor needs of its shared-memory
/// destination (PTX ISA, "Tensor copy restrictions": 128 bytes without
/// swizzle).
constexpr int64_t kTmaSharedAlignment = 128;

/// Whether the TMA can load `src` ([rows, K] narrow, read at rows of the
/// tile) with the 3-D tensor map of KernelBuilder::tmaDescriptor: a plain
/// row-major matrix (identity layout) at the start of an allocation (the
/// driver wants a 16-byte aligned global address), whose row pitch is a
/// multiple of 16 bytes (K % 8 == 0), with box sizes within 256. The rows
/// may be a run-time size: the tensor map is encoded from the memref's
/// sizes at run time.
bool tmaLoadable(Value src, int64_t boxRows, int64_t bk);

/// Builds the gpu.launch of one MmaMatmul in place of the contraction.
/// emit() runs the steps below in order; the steps record what later ones
/// use (the shared tiles, this thread's indices) in the members after them.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  MmaMatmul &mm;
  Value a, bNk, c; // [M, K], [N, K] narrow; [M, N] f32
  GemmTiling t;
  linalg::GenericOp epilogue; // fused into the stores when set
  bool zeroInit;              // C was zero-filled: start from zero
  Staging staging;
  // Narrow views of the epilogue's widened inputs, keyed by those inputs.
  llvm::DenseMap<Value, Value> narrowInputs;
  // Where the results go narrowed (f16/bf16 [M, N]) instead of f32.
  Value narrowOut;
  // A run-time M: A's rows, read on the host (the grid's ceil-div) and
  // passed to the kernel, where every row access is bounded by it.
  Value rowsM;
  // TMA: the operands' tensor maps (created on the host, before the launch)
  // and the block's mbarriers, one per pipeline stage.
  Value tmaMapA, tmaMapB, mbarriers;

  KernelBuilder(OpBuilder &b, Location loc, MmaMatmul &mm, Value a, Value bNk,
                GemmTiling t, linalg::GenericOp epilogue, bool zeroInit,
                Staging staging)
      : b(b), loc(loc), mm(mm), a(a), bNk(bNk), c(mm.c), t(t),
        epilogue(epilogue), zeroInit(zeroInit), staging(staging) {}

  /// Builds the kernel before the contraction.
  void emit();

  //===--------------------------------------------------------------------===//
  // The steps of emit (GpuMmaMatmulKernel.cpp unless marked)
  //===--------------------------------------------------------------------===//

  /// wgmma/TMA: the tensor maps of the TMA operands, on the host.
  void createTensorMaps();
  /// The grid over C's blocks (a ceil-div on the host for a run-time M).
  gpu::LaunchOp createLaunch();
  /// The shared-memory tiles of A and B, one per pipeline stage.
  void allocateSharedTiles();
  /// wgmma/TMA: one mbarrier per stage, initialized by thread 0.
  void initTmaBarriers();
  /// This thread's lane, warp and fragment coordinates in the block and
  /// in C.
  void computeThreadIndices(gpu::LaunchOp launch);
  /// The accumulators' initial values: C's fragments, or zeros.
  SmallVector<Value> loadAccumulators();
  /// The rows this lane addresses for ldmatrix.
  void computeLdMatrixRows();
  /// wgmma: the shared-memory addresses of the tiles.
  void computeWgmmaBases();
  /// The k loop, with the pipeline's prologue before it; its results are
  /// the accumulators.
  scf::ForOp emitKLoop(SmallVector<Value> init);
  /// Stores the accumulators (through the epilogue) into C or the output.
  void storeResults(scf::ForOp loop);

  //===--------------------------------------------------------------------===//
  // The k loop's parts
  //===--------------------------------------------------------------------===//

  /// Stages the k step at `k0` into buffer `stage` (null: plain staging's
  /// one buffer) by cp.async or plain copies; returns the tokens of its
  /// asynchronous copies.
  SmallVector<Value> stageTiles(Value k0, Value stage);
  /// One step of the cp.async/TMA pipeline: waits for its tiles, prefetches
  /// those of step + stages - 1 and multiplies; returns the loop's next
  /// iteration arguments.
  SmallVector<Value> pipelinedStep(Value k0, ValueRange iterArgs,
                                   int64_t kSteps);
  /// One k step's mma from the tiles in buffer `stage`.
  SmallVector<Value> multiply(Value stage, SmallVector<Value> accs);
  /// The same with mma.sync, fragments from ldmatrix or pairwise loads.
  SmallVector<Value> multiplyMmaSync(Value stage, SmallVector<Value> accs);
  /// wgmma/TMA: thread 0 starts the TMA loads of the k step at `k0` into
  /// `stage` (nothing without TMA operands).
  void issueTmaLoads(Value k0, Value stage);
  /// wgmma/TMA: waits until the TMA boxes of step `step` landed.
  void waitTmaLoads(Value step, int64_t stages);
  /// wgmma: orders this thread's landed cp.async copies before wgmma.
  void fenceAsyncProxy();
  /// wgmma: one k step on the warpgroup.
  SmallVector<Value> multiplyWgmma(Value stage, SmallVector<Value> accs);
  /// wgmma: the matrix descriptor of k16 slice `kk` of a staged tile.
  Value descriptor(Value base, Value stage, int64_t rows, int64_t kk);
  /// TMA: the tensor map of `src` for boxes of `rows` rows.
  Value tmaDescriptor(Value src, int64_t rows);

  //===--------------------------------------------------------------------===//
  // Index arithmetic and C's accesses
  //===--------------------------------------------------------------------===//

  Value idx(int64_t v) { return IndexArith(b, loc).cst(v); }
  Value add(Value x, Value y) { return IndexArith(b, loc).add(x, y); }
  Value addc(Value x, int64_t v) { return IndexArith(b, loc).add(x, v); }
  Value mul(Value x, int64_t v) { return IndexArith(b, loc).mul(x, v); }
  Value i64(int64_t v);

  /// The alignment an access of `bytes` bytes into `memref` may claim (the
  /// kernel's offsets are multiples of it): `bytes` when the buffer starts
  /// at an allocation, whose identity layout leaves only the element
  /// offset; unknown otherwise.
  llvm::MaybeAlign alignFor(Value memref, int64_t bytes);
  /// Two consecutive elements memref[row][col .. col+1].
  Value loadPair(Value memref, Value row, Value col, llvm::MaybeAlign align);

  Value less(Value x, int64_t limit);
  Value both(Value x, Value y);
  Value clamp(Value x, int64_t max);

  /// Whether C's rows (columns) past M (N) must be masked: the blocks do
  /// not divide them (a run-time M is always masked).
  bool maskRows() const { return t.raggedM(mm.m); }
  bool maskCols() const { return t.raggedN(mm.n); }
  /// Whether C's pairs must be accessed element by element: with N odd a
  /// pair may straddle the end of a row, and rows start at odd offsets.
  bool elementwiseC() const { return mm.n % 2 != 0; }

  /// Whether `row` < M, and `row` clamped to M - 1, for a static or
  /// run-time M.
  Value rowInside(Value row);
  Value clampRow(Value row);
  /// Whether C[row][col] lies inside C (null: everywhere).
  Value inC(Value row, Value col);
  /// C[row][col .. col+1] where inside C, zeros elsewhere: loads at indices
  /// clamped into C.
  Value loadCPair(Value row, Value col, llvm::MaybeAlign align);
  /// Runs `body` under `cond` (unconditionally when null).
  void guarded(Value cond, function_ref<void()> body);

  //===--------------------------------------------------------------------===//
  // Set by the steps
  //===--------------------------------------------------------------------===//

  // The shared-memory tiles of A and B.
  Value aSmem, bSmem;
  // The thread id, and thread 0's predicate (TMA: it issues the loads).
  Value tid, leader;
  // The lane's fragment coordinates (g = lane / 4, t2 = 2 (lane % 4)), the
  // block's first row and column of C, this warp's rows and columns inside
  // the block tile (shared memory) and in C.
  Value lane, warpRow, warpCol, g, t2, blockRow, blockCol;
  Value localRow, localCol, cRow, cCol;
  // ldmatrix row addresses (computeLdMatrixRows).
  Value ldA, ldACol, ldB, ldBX2, ldBCol;
  // wgmma: the tiles' shared-state-space addresses (i64).
  Value aBase, bBase;
};

} // namespace mlir::attn::mma_matmul

#endif // ATTNC_LIB_CODEGEN_GPU_GPUMMAMATMUL_H
