/* Not a test: driver for threads.test. Runs one compiled model library from
 * several threads at once and checks every output bit-equal to a
 * sequential run of the same inputs:
 *
 *   threads LIB WEIGHTS VOCAB THREADS RUNS
 *
 * The model's dynamic dims are axis 0 (batch) and 1 (sequence) of its
 * inputs. Integer inputs named *mask* get 0/1 values, other integer inputs
 * token ids in [0, VOCAB) (one case an id out of range, which must fail
 * with its own message), float inputs values in [-1, 1]. Even threads run
 * through the model-level API (their implicit contexts), odd ones through
 * a context of their own; meanwhile another thread rebinds the weights (the
 * same file) and two threads share one context that only runs. */
#define _POSIX_C_SOURCE 200809L
#include "attnc/Runtime/attnrt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_IO 8
#define NUM_CASES 13
#define BAD_CASE 12

static struct {
  attnrt_model *(*open_linked)(char *, size_t);
  void (*close)(attnrt_model *);
  int (*bind_weights)(attnrt_model *, const char *);
  const char *(*last_error)(attnrt_model *);
  int (*num_inputs)(attnrt_model *);
  int (*num_outputs)(attnrt_model *);
  const char *(*input_name)(attnrt_model *, int);
  attnrt_dtype (*input_dtype)(attnrt_model *, int);
  int (*input_rank)(attnrt_model *, int);
  const int64_t *(*input_dims)(attnrt_model *, int);
  attnrt_dtype (*output_dtype)(attnrt_model *, int);
  int (*output_rank)(attnrt_model *, int);
  size_t (*dtype_size)(attnrt_dtype);
  int (*set_input_shaped)(attnrt_model *, int, const void *, size_t, int,
                          const int64_t *);
  int (*run)(attnrt_model *);
  const int64_t *(*output_shape)(attnrt_model *, int);
  int (*get_output)(attnrt_model *, int, void *, size_t);
  attnrt_context *(*context_create)(attnrt_model *);
  void (*context_free)(attnrt_context *);
  int (*context_set_input_shaped)(attnrt_context *, int, const void *, size_t,
                                  int, const int64_t *);
  int (*context_run)(attnrt_context *);
  const int64_t *(*context_output_shape)(attnrt_context *, int);
  int (*context_get_output)(attnrt_context *, int, void *, size_t);
  const char *(*context_last_error)(attnrt_context *);
} api;

static attnrt_model *model;
static const char *weightsPath;
static int numInputs, numOutputs, runsPerThread;

struct tensor {
  int rank;
  int64_t dims[8];
  size_t bytes;
  unsigned char *data;
};

/* Inputs of each case, and the outputs of its sequential run. */
static struct tensor inputs[NUM_CASES][MAX_IO], expected[NUM_CASES][MAX_IO];

static void fail(const char *what, const char *message) {
  fprintf(stderr, "error: %s: %s\n", what, message);
  exit(1);
}

static void *sym(void *handle, const char *name) {
  void *p = dlsym(handle, name);
  if (!p)
    fail("dlsym", name);
  return p;
}

static uint64_t nextRandom(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static void makeCase(int k, int64_t vocab) {
  static const int64_t shapes[NUM_CASES][2] = {
      {1, 1}, {1, 5}, {2, 5}, {1, 16}, {3, 8},  {2, 11}, {2, 16},
      {1, 3}, {3, 1}, {2, 2}, {1, 9},  {3, 16}, {2, 7}};
  uint64_t rng = 1000 + (uint64_t)k;
  for (int i = 0; i < numInputs; ++i) {
    struct tensor *t = &inputs[k][i];
    attnrt_dtype dtype = api.input_dtype(model, i);
    const int64_t *dims = api.input_dims(model, i);
    t->rank = api.input_rank(model, i);
    size_t n = 1;
    for (int a = 0; a < t->rank; ++a) {
      t->dims[a] = dims[a] >= 0 ? dims[a] : shapes[k][a < 2 ? a : 1];
      n *= (size_t)t->dims[a];
    }
    t->bytes = n * api.dtype_size(dtype);
    t->data = malloc(t->bytes ? t->bytes : 1);
    int isMask = strstr(api.input_name(model, i), "mask") != NULL;
    for (size_t e = 0; e < n; ++e) {
      uint64_t r = nextRandom(&rng);
      int64_t last = t->dims[t->rank - 1];
      int64_t v = isMask ? (e % (size_t)last == 0 || r % 4 != 0)
                         : (int64_t)(r % (uint64_t)vocab);
      if (k == BAD_CASE && !isMask && e == n - 1)
        v = vocab + 5;
      if (dtype == ATTNRT_I64) {
        memcpy(t->data + e * 8, &v, 8);
      } else if (dtype == ATTNRT_I32) {
        int32_t w = (int32_t)v;
        memcpy(t->data + e * 4, &w, 4);
      } else if (dtype == ATTNRT_F32) {
        float f = (float)((double)(r >> 11) / 9007199254740992.0 * 2 - 1);
        memcpy(t->data + e * 4, &f, 4);
      } else {
        fail("inputs", "only f32, i32 and i64 inputs are supported");
      }
    }
  }
}

/* One run of case k through the model-level API (c == NULL) or context c:
 * its outputs into out (allocated). Returns 0, or 1 with the error. */
static int runCase(attnrt_context *c, int k, struct tensor *out,
                   const char **error) {
  for (int i = 0; i < numInputs; ++i) {
    const struct tensor *t = &inputs[k][i];
    if (c ? api.context_set_input_shaped(c, i, t->data, t->bytes, t->rank,
                                         t->dims)
          : api.set_input_shaped(model, i, t->data, t->bytes, t->rank, t->dims))
      goto failed;
  }
  if (c ? api.context_run(c) : api.run(model))
    goto failed;
  for (int o = 0; o < numOutputs; ++o) {
    const int64_t *shape =
        c ? api.context_output_shape(c, o) : api.output_shape(model, o);
    if (!shape)
      goto failed;
    struct tensor *t = &out[o];
    t->rank = api.output_rank(model, o);
    size_t n = 1;
    for (int a = 0; a < t->rank; ++a)
      n *= (size_t)(t->dims[a] = shape[a]);
    t->bytes = n * api.dtype_size(api.output_dtype(model, o));
    t->data = malloc(t->bytes ? t->bytes : 1);
    if (c ? api.context_get_output(c, o, t->data, t->bytes)
          : api.get_output(model, o, t->data, t->bytes))
      goto failed;
  }
  return 0;
failed:
  *error = c ? api.context_last_error(c) : api.last_error(model);
  return 1;
}

/* Whether out equals case k's sequential outputs, bit for bit. */
static int matches(int k, struct tensor *out) {
  int same = 1;
  for (int o = 0; o < numOutputs; ++o) {
    const struct tensor *want = &expected[k][o];
    same = same && out[o].rank == want->rank &&
           memcmp(out[o].dims, want->dims, sizeof(int64_t) * want->rank) == 0 &&
           out[o].bytes == want->bytes &&
           memcmp(out[o].data, want->data, want->bytes) == 0;
    free(out[o].data);
    out[o].data = NULL;
  }
  return same;
}

static pthread_mutex_t countsMu = PTHREAD_MUTEX_INITIALIZER;
static long mismatches, unexpectedErrors, badIdErrors, runsDone;

/* Checks one run's outcome against case k's. */
static void check(int k, int rc, const char *error, struct tensor *out) {
  int ok, badId = 0;
  if (k == BAD_CASE) {
    badId = rc != 0 && strstr(error, "out of range for the embedding table");
    ok = badId;
  } else {
    ok = rc == 0 && matches(k, out);
  }
  pthread_mutex_lock(&countsMu);
  ++runsDone;
  badIdErrors += badId;
  if (!ok && rc)
    ++unexpectedErrors;
  else if (!ok)
    ++mismatches;
  if (!ok && unexpectedErrors + mismatches <= 5)
    fprintf(stderr, "case %d: %s\n", k, rc ? error : "outputs differ");
  pthread_mutex_unlock(&countsMu);
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  attnrt_context *c = NULL;
  if (t % 2 && !(c = api.context_create(model)))
    fail("attnrt_context_create", api.last_error(model));
  for (int i = 0; i < runsPerThread; ++i) {
    int k = (t * 5 + i * 7) % NUM_CASES;
    struct tensor out[MAX_IO];
    memset(out, 0, sizeof out);
    const char *error = "";
    int rc = runCase(c, k, out, &error);
    check(k, rc, error, out);
    for (int o = 0; o < numOutputs; ++o)
      free(out[o].data);
  }
  api.context_free(c);
  return NULL;
}

static atomic_int stopRebinding;

static void *rebinder(void *arg) {
  (void)arg;
  int binds = 0;
  do {
    if (api.bind_weights(model, weightsPath))
      fail("attnrt_bind_weights", api.last_error(model));
    ++binds;
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
  } while (!atomic_load(&stopRebinding));
  return (void *)(intptr_t)binds;
}

/* Two threads calling run and get_output on one context whose inputs are
 * set: the calls take turns, every output is the case's. */
static attnrt_context *shared;
static int sharedCase = 2;

static void *sharedWorker(void *arg) {
  (void)arg;
  for (int i = 0; i < runsPerThread / 2; ++i) {
    struct tensor out[MAX_IO];
    memset(out, 0, sizeof out);
    int rc = api.context_run(shared);
    for (int o = 0; rc == 0 && o < numOutputs; ++o) {
      const struct tensor *want = &expected[sharedCase][o];
      out[o] = *want;
      out[o].data = malloc(want->bytes ? want->bytes : 1);
      rc = api.context_get_output(shared, o, out[o].data, want->bytes);
    }
    check(sharedCase, rc, rc ? api.context_last_error(shared) : "", out);
    for (int o = 0; o < numOutputs; ++o)
      free(out[o].data);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: threads LIB WEIGHTS VOCAB THREADS RUNS\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    fail("dlopen", dlerror());
#define LOAD(field, name) *(void **)&api.field = sym(lib, name)
  LOAD(open_linked, "attnrt_open_linked");
  LOAD(close, "attnrt_close");
  LOAD(bind_weights, "attnrt_bind_weights");
  LOAD(last_error, "attnrt_last_error");
  LOAD(num_inputs, "attnrt_num_inputs");
  LOAD(num_outputs, "attnrt_num_outputs");
  LOAD(input_name, "attnrt_input_name");
  LOAD(input_dtype, "attnrt_input_dtype");
  LOAD(input_rank, "attnrt_input_rank");
  LOAD(input_dims, "attnrt_input_dims");
  LOAD(output_dtype, "attnrt_output_dtype");
  LOAD(output_rank, "attnrt_output_rank");
  LOAD(dtype_size, "attnrt_dtype_size");
  LOAD(set_input_shaped, "attnrt_set_input_shaped");
  LOAD(run, "attnrt_run");
  LOAD(output_shape, "attnrt_output_shape");
  LOAD(get_output, "attnrt_get_output");
  LOAD(context_create, "attnrt_context_create");
  LOAD(context_free, "attnrt_context_free");
  LOAD(context_set_input_shaped, "attnrt_context_set_input_shaped");
  LOAD(context_run, "attnrt_context_run");
  LOAD(context_output_shape, "attnrt_context_output_shape");
  LOAD(context_get_output, "attnrt_context_get_output");
  LOAD(context_last_error, "attnrt_context_last_error");
#undef LOAD
  char err[1024];
  model = api.open_linked(err, sizeof err);
  if (!model)
    fail("attnrt_open_linked", err);
  weightsPath = argv[2];
  if (api.bind_weights(model, weightsPath))
    fail("attnrt_bind_weights", api.last_error(model));
  int64_t vocab = atoll(argv[3]);
  int numThreads = atoi(argv[4]);
  runsPerThread = atoi(argv[5]);
  numInputs = api.num_inputs(model);
  numOutputs = api.num_outputs(model);
  if (numInputs > MAX_IO || numOutputs > MAX_IO)
    fail("model", "too many inputs or outputs");

  /* The sequential runs, on this thread's implicit context. */
  for (int k = 0; k < NUM_CASES; ++k) {
    makeCase(k, vocab);
    const char *error = "";
    int rc = runCase(NULL, k, expected[k], &error);
    if (k == BAD_CASE ? rc == 0 : rc != 0)
      fail("sequential run", rc ? error : "the bad token id ran");
  }

  shared = api.context_create(model);
  if (!shared)
    fail("attnrt_context_create", api.last_error(model));
  for (int i = 0; i < numInputs; ++i) {
    const struct tensor *t = &inputs[sharedCase][i];
    if (api.context_set_input_shaped(shared, i, t->data, t->bytes, t->rank,
                                     t->dims))
      fail("set_input_shaped", api.context_last_error(shared));
  }

  pthread_t threads[64], rebind, sharers[2];
  if (numThreads > 64)
    numThreads = 64;
  pthread_create(&rebind, NULL, rebinder, NULL);
  for (int t = 0; t < numThreads; ++t)
    pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t);
  for (int s = 0; s < 2; ++s)
    pthread_create(&sharers[s], NULL, sharedWorker, NULL);
  for (int t = 0; t < numThreads; ++t)
    pthread_join(threads[t], NULL);
  for (int s = 0; s < 2; ++s)
    pthread_join(sharers[s], NULL);
  atomic_store(&stopRebinding, 1);
  void *binds;
  pthread_join(rebind, &binds);
  api.context_free(shared);

  printf("%d threads x %d runs and 2 x %d on a shared context: %ld runs, "
         "%ld outputs differ, %ld unexpected errors, %ld bad ids refused\n",
         numThreads, runsPerThread, runsPerThread / 2, runsDone, mismatches,
         unexpectedErrors, badIdErrors);
  printf("weights rebound %s while running\n",
         (intptr_t)binds > 0 ? "at least once" : "never");
  for (int k = 0; k < NUM_CASES; ++k)
    for (int i = 0; i < MAX_IO; ++i) {
      free(inputs[k][i].data);
      free(expected[k][i].data);
    }
  api.close(model);
  int ok = mismatches == 0 && unexpectedErrors == 0;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
