/*===- attnrt.h - attnc runtime C API ------------------------------*- C -*-===*
 *
 * libattnrt runs models compiled by attnc. A compiled model object file
 * defines two C symbols:
 *
 *   extern const char attn_model_manifest[];   NUL-terminated manifest text
 *   void attn_model_invoke(void **buffers);    computes the model
 *
 * `buffers` holds one pointer per manifest entry, in manifest order (weights,
 * then inputs, then outputs), each to a dense row-major buffer of exactly the
 * described shape and dtype: host pointers for `target cpu`, CUDA device
 * pointers for `target cuda`.
 *
 * Manifest text, one record per line:
 *
 *   attnc-manifest 1
 *   target cpu | target cuda
 *   weight <name> <dtype> <dims>
 *   weight <name> <dtype> <dims> concat <axis> <name1>,<name2>,...
 *   weight <name> <dtype> <dims> gather <axis> <source_extent>
 *          <start>:<length>,<start>:<length>,...      (all on one line)
 *   weight <name> <dtype> <dims> [concat ... | gather ...] transpose
 *   input <name> <dtype> <dims>
 *   output <name> <dtype> <dims>
 *
 * dtype is one of f32 f16 bf16 i32 i64; dims look like `1x128x768`, or
 * `scalar` for rank 0. Blank lines and lines starting with '#' are ignored.
 *
 * A plain weight is the safetensors tensor <name> with exactly that dtype and
 * shape. A concat weight is the concatenation along <axis> of the tensors
 * <name1>, <name2>, ... (<name> only names the buffer). A gather weight (for
 * structurally pruned heads or neuron groups) takes the tensor <name>, whose
 * shape is <dims> except <source_extent> along <axis>, and concatenates along
 * <axis> the slices [start, start + length) in the listed order; lengths are
 * positive, each slice lies within [0, source_extent), slices may overlap or
 * repeat, and the lengths sum to dims[axis]. Input and output names are
 * unique; a weight name may appear in several weight records (e.g. once plain
 * and once gathered), each bound independently into its own buffer.
 * A trailing `transpose` (2-D weights only) binds the transpose: <dims> is
 * then the buffer's shape [d0, d1] and the tensor as assembled from the file
 * (plain, concat or gather, whose axis and shapes refer to this tensor) has
 * shape [d1, d0].
 *
 * Every function returning int returns 0 on success and non-zero on error;
 * the error text is then available from attnrt_last_error(model). A model
 * handle must not be used from two threads at once.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTNC_RUNTIME_ATTNRT_H
#define ATTNC_RUNTIME_ATTNRT_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct attnrt_model attnrt_model;

/* Opens a model from its manifest text and invoke function. On failure
 * returns NULL and writes a NUL-terminated message into err (if err is not
 * NULL and errlen > 0; the message is truncated to fit). For a `target cuda`
 * manifest this loads the CUDA driver and fails if none is usable. */
attnrt_model *attnrt_open(const char *manifest, void (*invoke)(void **),
                          char *err, size_t errlen);

/* Like attnrt_open with the attn_model_manifest / attn_model_invoke symbols
 * linked into the program (weak references: fails if they are absent). */
attnrt_model *attnrt_open_linked(char *err, size_t errlen);

/* Frees the model and everything it owns. NULL is ignored. */
void attnrt_close(attnrt_model *m);

/* The last error recorded on m ("" if none). With m == NULL: the last error
 * of attnrt_open / attnrt_open_linked on this thread. The pointer stays valid
 * until the next call on m. */
const char *attnrt_last_error(attnrt_model *m);

/* ---- Model description (indices are 0-based, in manifest order) -------- */

/* "cpu" or "cuda". */
const char *attnrt_target(attnrt_model *m);
int attnrt_num_weights(attnrt_model *m);
int attnrt_num_inputs(attnrt_model *m);
int attnrt_num_outputs(attnrt_model *m);

/* Name, dtype ("f32", "f16", "bf16", "i32", "i64"), rank, one dimension, all
 * dimensions (an array of rank values, valid while m is open) and total byte
 * size of input/output `index`. Invalid indices give NULL / -1 / 0 and record
 * an error on m. */
const char *attnrt_input_name(attnrt_model *m, int index);
const char *attnrt_input_dtype(attnrt_model *m, int index);
int attnrt_input_rank(attnrt_model *m, int index);
int64_t attnrt_input_dim(attnrt_model *m, int index, int axis);
const int64_t *attnrt_input_dims(attnrt_model *m, int index);
size_t attnrt_input_bytes(attnrt_model *m, int index);

const char *attnrt_output_name(attnrt_model *m, int index);
const char *attnrt_output_dtype(attnrt_model *m, int index);
int attnrt_output_rank(attnrt_model *m, int index);
int64_t attnrt_output_dim(attnrt_model *m, int index, int axis);
const int64_t *attnrt_output_dims(attnrt_model *m, int index);
size_t attnrt_output_bytes(attnrt_model *m, int index);

/* ---- Running ------------------------------------------------------------ */

/* Maps a .safetensors file, validates its header, checks every weight of the
 * manifest against it (name, dtype, shape) and binds them: on the CPU target
 * plain weights in place when 64-byte aligned (the mapping is kept alive),
 * otherwise (and concat, gather and transposed weights always) copied into 64-byte
 * aligned buffers; on CUDA assembled on the host and uploaded to the device
 * once. Tensors the manifest does not reference are never read. Binding
 * again replaces the weights. */
int attnrt_bind_weights(attnrt_model *m, const char *safetensors_path);

/* Copies `bytes` bytes (exactly the input's size) into input `index`. */
int attnrt_set_input(attnrt_model *m, int index, const void *data,
                     size_t bytes);

/* Runs the model (weights bound and all inputs set). On CUDA, inputs are
 * copied to the device before and outputs back after the run. */
int attnrt_run(attnrt_model *m);

/* Copies output `index` (of the last successful run) into dst; `bytes` must
 * be exactly the output's size. */
int attnrt_get_output(attnrt_model *m, int index, void *dst, size_t bytes);

/* Wall time of the last successful attnrt_run's model computation in
 * milliseconds (steady clock; CUDA: invoke plus device synchronization,
 * without the input/output copies). 0 before any run. */
double attnrt_last_run_ms(attnrt_model *m);

/* Bytes of the weights file read by the last successful bind: the
 * safetensors header (8-byte length plus JSON), plus for each gather record
 * the bytes it copies out of the file (its buffer size: only the kept
 * slices; overlapping slices count as often as they are copied, and each
 * gather record counts on its own, even when several gather the same
 * tensor), plus each tensor named by a plain or concat record, whole, once
 * however many plain/concat records use it. A tensor that is both gathered
 * and bound plain is thus counted whole once plus once per gather record.
 * Tensors no record references are not read. */
uint64_t attnrt_weight_bytes_read(attnrt_model *m);

/* Size in bytes of the weights file of the last successful bind. */
uint64_t attnrt_weight_file_bytes(attnrt_model *m);

/* The command-line driver (see `--help`) for the linked model:
 *   model --weights W.safetensors --input x.npy [--input ...]
 *         [--output y.npy ...] [--bench N] [--warmup N] [-q]
 *   model --describe | --help
 * Returns the process exit code (0 or 1). */
int attnrt_main(int argc, char **argv);

/* ---- MLIR GPU runtime entry points (target cuda) -----------------------
 * The functions MLIR's gpu-to-llvm lowering calls, with the signatures of
 * upstream mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp. They report no
 * status: the first failure is recorded and returned by the next attnrt_run,
 * and until then further calls do nothing (allocations return NULL). */
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel, size_t assemblySize);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);

/* ---- MLIR generic allocation functions (target cpu) --------------------
 * What finalize-memref-to-llvm{use-generic-functions} calls for the heap
 * buffers of CPU models. Freed blocks are cached by size (up to 1 GiB in
 * all) and reused, so that a model's working set stays mapped across runs.
 * Blocks are 64-byte aligned at least. */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/* ---- Run-time checks in compiled code (target cpu) ---------------------
 * attn-cpu-check-token-ids calls this for an embedding id outside [0, rows):
 * the attnrt_run in progress on this thread then fails with a message
 * naming the batch, position and id (the first one reported). */
void attnrt_report_token_id(int64_t batch, int64_t position, int64_t id,
                            int64_t rows);

#ifdef __cplusplus
}
#endif

#endif /* ATTNC_RUNTIME_ATTNRT_H */
