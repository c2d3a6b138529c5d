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
 * pointers for `target cuda`. A model with dynamic (`?`) sizes (CPU only)
 * reads one more pointer after them: the run's sizes, one int64_t per `?`
 * in manifest order.
 *
 * The manifest text format is defined in attnc/Runtime/ManifestSchema.h.
 * The entry points compiled code itself calls (MLIR's GPU runtime and
 * allocation functions, run-time checks) are in attnc/Runtime/attnrt_abi.h;
 * they are not part of this API.
 *
 * Every function returning int returns 0 on success and non-zero on error;
 * the error text is then available from attnrt_last_error(model) (for
 * attnrt_context_* functions, attnrt_context_last_error(context)).
 *
 * Threads. A model holds what its runs share: the manifest and the bound
 * weights (read-only while runs are in flight). What a run writes (its
 * inputs, outputs, state, run-time sizes and errors) lives in an execution
 * context. Several threads may run one model at once, each through its own
 * context:
 *  - the attnrt_context_* functions run on an explicit context; calls on
 *    different contexts may be made concurrently from any threads, calls on
 *    one context are serialized (each is atomic, so threads sharing one
 *    must still order their set_input / run / get_output sequences);
 *  - the model-level functions (attnrt_set_input, attnrt_run,
 *    attnrt_get_output, ...) use the calling thread's implicit context of
 *    the model, created on the thread's first such call (the opening
 *    thread's at attnrt_open) and freed when the thread ends or the model
 *    is closed; they may be called concurrently from several threads, and
 *    attnrt_last_error(m) is the calling thread's last error on m;
 *  - the description functions (attnrt_num_inputs, attnrt_input_name, ...)
 *    may be called concurrently with anything but attnrt_close;
 *  - attnrt_bind_weights may be called concurrently with runs: it reads the
 *    file first, then waits for the runs in flight and swaps the weights in
 *    before the next run starts;
 *  - attnrt_open and attnrt_close: a model must not be closed while another
 *    thread uses it or any of its contexts or sessions;
 *  - sessions (attnrt_session_*): see attnrt_session_create;
 *  - attnrt_dtype_name and attnrt_dtype_size: any thread, any time.
 * On the CPU target runs of different contexts proceed in parallel (the
 * compiled code touches only its own buffers). On CUDA their device work
 * (copies, the graph launch or kernel launches, synchronization) takes turns:
 * the driver's context is synchronized as a whole after each run. Each
 * context costs its own input, output and state buffers (on CUDA device
 * buffers and its own recorded graph, with the temporaries it keeps).
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTNC_RUNTIME_ATTNRT_H
#define ATTNC_RUNTIME_ATTNRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct attnrt_model attnrt_model;
typedef struct attnrt_context attnrt_context;

/* The element type of a model buffer. */
typedef enum attnrt_dtype {
  ATTNRT_INVALID_DTYPE = -1, /* returned for an invalid index */
  ATTNRT_F32 = 0,
  ATTNRT_F16 = 1,
  ATTNRT_BF16 = 2, /* .npy files carry bfloat16 as '<u2' raw bits */
  ATTNRT_I32 = 3,
  ATTNRT_I64 = 4
} attnrt_dtype;

/* "f32", "f16", "bf16", "i32", "i64" (the manifest spelling); NULL for
 * anything else. */
const char *attnrt_dtype_name(attnrt_dtype dtype);

/* Size of one element in bytes; 0 for an invalid dtype. */
size_t attnrt_dtype_size(attnrt_dtype dtype);

/* Opens a model from its manifest text and invoke function. On failure
 * returns NULL and writes a NUL-terminated message into err (if err is not
 * NULL and errlen > 0; the message is truncated to fit). For a `target cuda`
 * manifest this loads the CUDA driver and fails if none is usable. */
attnrt_model *attnrt_open(const char *manifest, void (*invoke)(void **),
                          char *err, size_t errlen);

/* Like attnrt_open with the attn_model_manifest / attn_model_invoke symbols
 * linked into the program (weak references: fails if they are absent). */
attnrt_model *attnrt_open_linked(char *err, size_t errlen);

/* The manifest text and invoke function linked into this program or
 * library (both NULL, and 1 returned, if none). Another library's runtime
 * can open the same compiled code with its own attnrt_open, e.g. a one-row
 * step for attnrt_session_set_slot_prefill. */
int attnrt_linked_entry(const char **manifest, void (**invoke)(void **));

/* Frees the model and everything it owns. NULL is ignored. */
void attnrt_close(attnrt_model *m);

/* The last error recorded on m by the calling thread ("" if none). With
 * m == NULL: the last error of attnrt_open / attnrt_open_linked on this
 * thread. The pointer stays valid until this thread's next call on m. */
const char *attnrt_last_error(attnrt_model *m);

/* ---- Model description (indices are 0-based, in manifest order) -------- */

/* "cpu" or "cuda". */
const char *attnrt_target(attnrt_model *m);
int attnrt_num_weights(attnrt_model *m);
int attnrt_num_inputs(attnrt_model *m);
int attnrt_num_outputs(attnrt_model *m);
/* State buffers (`state` records: a decode step's KV caches), one set per
 * context, updated in place by every run; see attnrt_reset_state. */
int attnrt_num_states(attnrt_model *m);

/* Name, dtype, rank, one dimension, all dimensions (an array of rank values,
 * valid while m is open) and total byte size of input/output/state `index`.
 * Invalid indices give NULL / ATTNRT_INVALID_DTYPE / -1 / 0 and record an
 * error on m. A dynamic dimension (batch or sequence chosen at run time) is
 * -1, and the byte size of a tensor with one is 0. */
const char *attnrt_input_name(attnrt_model *m, int index);
attnrt_dtype attnrt_input_dtype(attnrt_model *m, int index);
int attnrt_input_rank(attnrt_model *m, int index);
int64_t attnrt_input_dim(attnrt_model *m, int index, int axis);
const int64_t *attnrt_input_dims(attnrt_model *m, int index);
size_t attnrt_input_bytes(attnrt_model *m, int index);

const char *attnrt_output_name(attnrt_model *m, int index);
attnrt_dtype attnrt_output_dtype(attnrt_model *m, int index);
int attnrt_output_rank(attnrt_model *m, int index);
int64_t attnrt_output_dim(attnrt_model *m, int index, int axis);
const int64_t *attnrt_output_dims(attnrt_model *m, int index);
size_t attnrt_output_bytes(attnrt_model *m, int index);

const char *attnrt_state_name(attnrt_model *m, int index);
attnrt_dtype attnrt_state_dtype(attnrt_model *m, int index);
int attnrt_state_rank(attnrt_model *m, int index);
int64_t attnrt_state_dim(attnrt_model *m, int index, int axis);
const int64_t *attnrt_state_dims(attnrt_model *m, int index);
size_t attnrt_state_bytes(attnrt_model *m, int index);

/* ---- Running ------------------------------------------------------------ */

/* Maps a .safetensors file, validates its header, checks every weight of the
 * manifest against it (name, dtype, shape) and binds them. A path ending in
 * ".json" is a Hugging Face shard index (model.safetensors.index.json): every
 * shard its weight_map names (files beside the index) is mapped and
 * validated, and each tensor is taken from the shard that holds it. On the
 * CPU target plain weights are bound in place when 64-byte aligned (the
 * mappings are kept alive), otherwise (and concat, gather and transposed
 * weights always) copied into 64-byte aligned buffers; on CUDA assembled on
 * the host and uploaded to the device once. Tensors the manifest does not
 * reference are never read. Binding again replaces the weights of every
 * context; runs in flight finish with the old ones. */
int attnrt_bind_weights(attnrt_model *m, const char *safetensors_path);

/* Copies `bytes` bytes (exactly the input's size) into input `index`. An
 * input with dynamic dims (attnrt_input_dim gives -1 for them) needs its
 * shape: use attnrt_set_input_shaped. */
int attnrt_set_input(attnrt_model *m, int index, const void *data,
                     size_t bytes);

/* Like attnrt_set_input for an input of shape dims[0..rank): the rank and
 * every static dim must be the model's (the error names the input and the
 * dimension); dynamic dims take any size. Sizes that the model needs equal
 * between inputs (the same sequence length of ids and mask) are checked by
 * attnrt_run, which then sizes the outputs from them. */
int attnrt_set_input_shaped(attnrt_model *m, int index, const void *data,
                            size_t bytes, int rank, const int64_t *dims);

/* The shape of output `index` in the last successful run (rank
 * attnrt_output_rank); for outputs without dynamic dims, their dims. NULL
 * (error recorded) for a dynamic output before any run. */
const int64_t *attnrt_output_shape(attnrt_model *m, int index);

/* Runs the model (weights bound and all inputs set). On CUDA, inputs are
 * copied to the device before and outputs back after the run. */
int attnrt_run(attnrt_model *m);

/* Zeroes the state buffers (`state` manifest records, e.g. a decode step's
 * KV cache, which the compiled code updates in place and which persist
 * between runs) of this thread's context; contexts start with them zeroed. */
int attnrt_reset_state(attnrt_model *m);

/* Copies output `index` (of the last successful run) into dst; `bytes` must
 * be exactly the output's size (for dynamic outputs, that of
 * attnrt_output_shape). */
int attnrt_get_output(attnrt_model *m, int index, void *dst, size_t bytes);

/* Wall time of this thread's last successful attnrt_run's model computation
 * in milliseconds (steady clock; CUDA: invoke plus device synchronization,
 * without the input/output copies). 0 before any run. */
double attnrt_last_run_ms(attnrt_model *m);

/* ---- Execution contexts ------------------------------------------------- */

/* A new context of m: its own inputs, outputs, state (zeroed) and errors,
 * sharing m's weights. NULL on failure (the error is this thread's
 * attnrt_last_error(m)). May be called from any thread. Free every context
 * before closing m. */
attnrt_context *attnrt_context_create(attnrt_model *m);

/* Frees c (NULL is ignored). No other call on c may be in flight. */
void attnrt_context_free(attnrt_context *c);

/* The model-level functions of the same names, on context c. */
int attnrt_context_set_input(attnrt_context *c, int index, const void *data,
                             size_t bytes);
int attnrt_context_set_input_shaped(attnrt_context *c, int index,
                                    const void *data, size_t bytes, int rank,
                                    const int64_t *dims);
int attnrt_context_run(attnrt_context *c);
int attnrt_context_get_output(attnrt_context *c, int index, void *dst,
                              size_t bytes);
/* Valid until the next call on c. */
const int64_t *attnrt_context_output_shape(attnrt_context *c, int index);
int attnrt_context_reset_state(attnrt_context *c);
double attnrt_context_last_run_ms(attnrt_context *c);

/* The last error recorded on c ("" if none), copied: the pointer stays
 * valid until this thread's next attnrt_context_last_error. */
const char *attnrt_context_last_error(attnrt_context *c);

/* Bytes of the weights file read by the last successful bind: the
 * safetensors header (8-byte length plus JSON; of every shard of an index),
 * plus for each gather record
 * the bytes it copies out of the file (its buffer size: only the kept
 * slices; overlapping slices count as often as they are copied, and each
 * gather record counts on its own, even when several gather the same
 * tensor), plus each tensor named by a plain or concat record, whole, once
 * however many plain/concat records use it. A tensor that is both gathered
 * and bound plain is thus counted whole once plus once per gather record.
 * Tensors no record references are not read. */
uint64_t attnrt_weight_bytes_read(attnrt_model *m);

/* Size in bytes of the weights file of the last successful bind (of all
 * the shards of an index together, the index itself not counted). */
uint64_t attnrt_weight_file_bytes(attnrt_model *m);

/* ---- Generation (causal language models) ------------------------------- */

/* A generation session over a model whose manifest marks an output `causal`
 * (float [batch, seq, vocab] logits of a decoder; attn-import marks GPT-2
 * and LLaMA checkpoints) and whose first input holds the token ids, i32 or
 * i64 [batch, seq]. The compiled batch is the most rows a session holds.
 *
 * A step compiled with a KV cache (attn-import / attn-compile --kv-cache N:
 * inputs token ids [batch, T] and positions [batch], the caches as model
 * state) holds N tokens per sequence. With a dynamic T (input_ids
 * [batch, ?]) prefill is one run over the prompts (padded to the longest)
 * and decode runs T = 1; a step compiled for T = 1 takes the prompt one
 * token per run. A full-sequence model is re-run over its whole
 * window at every step instead (exact for a causal model: later, padded
 * positions do not influence earlier ones), a full forward pass per step.
 * When the logits are marked `causal recompute_past N` (Phi-3 with
 * LongRoPE), a dynamic step follows transformers' `generate`: the decode
 * at which the longest row first grows past N tokens re-runs every row's
 * whole sequence so far from position 0 over emptied caches instead of a
 * one-token step.
 *
 * An encoder-decoder (an input marked `encoder` in the manifest: T5, BART)
 * generates its decoder stream from an encoder input that stays fixed per
 * prompt: attnrt_session_set_encoder_input before prefill; the prompt is
 * then the decoder's start (e.g. its decoder_start_token_id). */
typedef struct attnrt_session attnrt_session;

/* How the next token is chosen from a row's logits. temperature 0 (or
 * top_k 1) is greedy: the lowest index of the largest logit. Otherwise the
 * token is drawn from softmax(logits / temperature) restricted to the top_k
 * most likely tokens (0: all) and then to the smallest set of most likely
 * tokens whose probability reaches top_p (1: all). temperature must be
 * finite and >= 0, top_k >= 0, top_p in (0, 1]. */
typedef struct attnrt_sampling {
  float temperature;
  int64_t top_k;
  float top_p;
} attnrt_sampling;

/* Opens a session on m (weights must be bound before the first prefill);
 * `seed` starts its random number generator. NULL (error on m) if m is not
 * a causal language model. The session must be freed before m is closed.
 * A session runs the model in a context of its own (its KV caches are the
 * context's state): sessions may be used concurrently from different
 * threads, one session from one thread at a time. Errors of the session
 * functions are the calling thread's attnrt_last_error(m). */
attnrt_session *attnrt_session_create(attnrt_model *m, uint64_t seed);
void attnrt_session_free(attnrt_session *s);

/* The most rows a session holds, the capacity in tokens per row and the
 * vocabulary size (any pointer may be NULL). */
void attnrt_session_shape(attnrt_session *s, int64_t *max_batch,
                          int64_t *capacity, int64_t *vocab);

/* An encoder-decoder's encoder input for the next prefill: row b is
 * ids[b * width, b * width + lengths[b]) (lengths NULL: whole rows). The
 * batch must be the prefill's. A model with an encoder mask input
 * (attention_mask) takes rows up to its compiled width, padded and masked;
 * one without takes exactly that width. An error for other models. */
int attnrt_session_set_encoder_input(attnrt_session *s, const int64_t *ids,
                                     const int64_t *lengths, int64_t batch,
                                     int64_t width);

/* Starts `batch` rows: row b is ids[b * stride, b * stride + lengths[b]),
 * 1 <= lengths[b] <= min(stride, capacity). Runs the model. */
int attnrt_session_prefill(attnrt_session *s, const int64_t *ids,
                           const int64_t *lengths, int64_t batch,
                           int64_t stride);

/* Appends next_ids[b] to every row (a full row is an error) and runs. */
int attnrt_session_decode(attnrt_session *s, const int64_t *next_ids);

/* The logits of each row's last token after the last prefill/decode:
 * batch x vocab floats, valid until the next call on s. */
const float *attnrt_session_logits(attnrt_session *s);

/* Chooses one token per row from attnrt_session_logits (NULL options:
 * greedy) into out_ids[batch]. */
int attnrt_session_sample(attnrt_session *s, const attnrt_sampling *options,
                          int64_t *out_ids);

/* Prefill, then up to max_new_tokens sampled tokens per row into
 * out_ids[batch * max_new_tokens] (row-major). With eos >= 0 a row stops
 * after producing eos and the rest of its row is filled with eos; the
 * session stops when every row has. Errors if a prompt plus max_new_tokens
 * exceeds the capacity. */
int attnrt_session_generate(attnrt_session *s, const int64_t *ids,
                            const int64_t *lengths, int64_t batch,
                            int64_t stride, int64_t max_new_tokens,
                            const attnrt_sampling *options, int64_t eos,
                            int64_t *out_ids);

/* Continuous batching over a KV-cache step: each of the model's rows is a
 * slot that holds one sequence at a time, each at its own position, so a
 * finished sequence's slot takes a waiting one between steps without
 * recompiling. (A prefill drops the slots; decode does not run them.)
 *
 * attnrt_session_slot_start: slot `slot` (a free one) takes the prompt
 * ids[0, length), 1 <= length < capacity, fed at the next steps.
 * attnrt_session_slots_step: runs the model once: a slot with a prompt
 * feeds the next max_prompt_tokens of it (0: as many as fit, all of it with
 * a run-time token count; one token per run for a step compiled for T = 1),
 * a running slot appends
 * next_ids[slot] (its token sampled from the last logits), a free slot
 * feeds padding. ready[slot] (max_batch entries; may be NULL) is then 1
 * where attnrt_session_logits' row `slot` is the distribution of the
 * slot's next token (its prompt done, or it ran), else 0. A full slot is an
 * error. A step whose logits are each row's last token only (logits
 * [batch, 1, vocab], attn-compile --logits=last) feeds every prompt of a
 * run the same count of tokens, and one beside running slots; its prefill
 * runs every row up to the shortest prompt, then a token per run.
 * attnrt_session_sample draws one token per row (max_batch rows).
 * attnrt_session_slot_free: the slot becomes free. Models that re-run
 * their whole window, encoder-decoders and `recompute_past` models do not
 * run slots. */
int attnrt_session_slot_start(attnrt_session *s, int64_t slot,
                              const int64_t *ids, int64_t length);
int attnrt_session_slots_step(attnrt_session *s, const int64_t *next_ids,
                              int64_t max_prompt_tokens, int64_t *ready);
int attnrt_session_slot_free(attnrt_session *s, int64_t slot);

/* Feeds slot prompts through `one_row` instead of padding them into the
 * session's runs: a KV-cache step of the same model (weights bound) for
 * one row with a run-time token count (input_ids=1x?), the same cache
 * length, caches and vocabulary; the session's own step may take T = 1.
 * attnrt_session_slots_step then runs the session's step once at T = 1
 * over the running slots (if any), and each slot with a prompt in a run of
 * `one_row` alone over that slot's rows of the caches: the next
 * max_prompt_tokens of the prompt (0: all of it). No row computes padding
 * for another's prompt. CPU target only; NULL goes back to padded runs.
 * The session keeps a context of one_row: free the session before closing
 * one_row. */
int attnrt_session_set_slot_prefill(attnrt_session *s, attnrt_model *one_row);

/* A cost rule between the two ways of feeding a prompt, with a one-row
 * step set (attnrt_session_set_slot_prefill): a prompt of n tokens (the
 * next max_prompt_tokens of it) with max_batch * n <= max_tokens is fed
 * in the session's own run beside the running slots' tokens, which are
 * padded to its length, instead of in a run of the one-row step; longer
 * ones still run alone. A one-row run reads all the weights once more,
 * which a short prompt's padding costs less than. Needs a session step
 * with a run-time token count and every column's logits (not
 * --logits=last); otherwise every prompt takes the one-row step. 0 (the
 * default): every prompt does. The tokens are the same either way. */
int attnrt_session_set_slot_pad_budget(attnrt_session *s, int64_t max_tokens);

/* Wall time of the last attnrt_session_generate: its prefill (one model
 * run) and its decode steps (run plus sampling), in milliseconds, and the
 * number of decode steps. */
void attnrt_session_timing(attnrt_session *s, double *prefill_ms,
                           double *decode_ms, int64_t *decode_steps);

/* The command-line driver (see `--help`) for the linked model:
 *   model --weights W.safetensors|INDEX.json --input x.npy [--input ...]
 *         [--output y.npy ...] [--bench N] [--warmup N] [-q]
 *   model generate --prompt ids.npy --max-new-tokens N [...]
 *   model --describe | --help
 * Returns the process exit code (0 or 1). */
int attnrt_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* ATTNC_RUNTIME_ATTNRT_H */
