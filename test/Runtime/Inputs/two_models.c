/* Not a test: driver for two-models.test. Runs two different compiled model
 * libraries in one process and prints each one's output:
 *
 *   two_models dlopen-local|dlopen-global LIB_A W_A LIB_B W_B
 *   two_models linked W_A W_B      (built with -DLINKED against both)
 *
 * Both models take one f32 input whose element i is (i % 7) * 0.5 - 1.5
 * (check_two_models.py computes the same). With dlopen, each library's API
 * is found by dlsym on its own handle; when linked, through the
 * per-library names a_attnrt_* and b_attnrt_*. */
#include "attnc/Runtime/attnrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef LINKED
#include <dlfcn.h>
#endif

struct api {
  attnrt_model *(*open_linked)(char *, size_t);
  int (*bind_weights)(attnrt_model *, const char *);
  size_t (*input_bytes)(attnrt_model *, int);
  size_t (*output_bytes)(attnrt_model *, int);
  int (*set_input)(attnrt_model *, int, const void *, size_t);
  int (*run)(attnrt_model *);
  int (*get_output)(attnrt_model *, int, void *, size_t);
  const char *(*last_error)(attnrt_model *);
  void (*close)(attnrt_model *);
};

#ifdef LINKED
#define DECLARE(p)                                                             \
  attnrt_model *p##_attnrt_open_linked(char *, size_t);                        \
  int p##_attnrt_bind_weights(attnrt_model *, const char *);                   \
  size_t p##_attnrt_input_bytes(attnrt_model *, int);                          \
  size_t p##_attnrt_output_bytes(attnrt_model *, int);                         \
  int p##_attnrt_set_input(attnrt_model *, int, const void *, size_t);         \
  int p##_attnrt_run(attnrt_model *);                                          \
  int p##_attnrt_get_output(attnrt_model *, int, void *, size_t);              \
  const char *p##_attnrt_last_error(attnrt_model *);                           \
  void p##_attnrt_close(attnrt_model *);                                       \
  static const struct api api_##p = {                                          \
      p##_attnrt_open_linked, p##_attnrt_bind_weights,                         \
      p##_attnrt_input_bytes, p##_attnrt_output_bytes,                         \
      p##_attnrt_set_input,   p##_attnrt_run,                                  \
      p##_attnrt_get_output,  p##_attnrt_last_error,                           \
      p##_attnrt_close};
DECLARE(a)
DECLARE(b)
#else
static void *sym(void *handle, const char *name) {
  void *p = dlsym(handle, name);
  if (!p) {
    fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
    exit(1);
  }
  return p;
}

static struct api load(const char *path, int global) {
  void *h = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    exit(1);
  }
  struct api a;
  *(void **)&a.open_linked = sym(h, "attnrt_open_linked");
  *(void **)&a.bind_weights = sym(h, "attnrt_bind_weights");
  *(void **)&a.input_bytes = sym(h, "attnrt_input_bytes");
  *(void **)&a.output_bytes = sym(h, "attnrt_output_bytes");
  *(void **)&a.set_input = sym(h, "attnrt_set_input");
  *(void **)&a.run = sym(h, "attnrt_run");
  *(void **)&a.get_output = sym(h, "attnrt_get_output");
  *(void **)&a.last_error = sym(h, "attnrt_last_error");
  *(void **)&a.close = sym(h, "attnrt_close");
  return a;
}
#endif

static void check(int failed, const struct api *a, attnrt_model *m,
                  const char *what) {
  if (failed) {
    fprintf(stderr, "%s: %s\n", what, a->last_error(m));
    exit(1);
  }
}

/* Opens both models first, then runs them interleaved. */
static void runBoth(const struct api *apis[2], const char *weights[2]) {
  attnrt_model *models[2];
  for (int k = 0; k < 2; ++k) {
    char err[512];
    models[k] = apis[k]->open_linked(err, sizeof(err));
    if (!models[k]) {
      fprintf(stderr, "open model %c: %s\n", 'a' + k, err);
      exit(1);
    }
    check(apis[k]->bind_weights(models[k], weights[k]), apis[k], models[k],
          "bind_weights");
  }
  for (int k = 0; k < 2; ++k) {
    const struct api *a = apis[k];
    size_t inBytes = a->input_bytes(models[k], 0);
    size_t outBytes = a->output_bytes(models[k], 0);
    float *x = malloc(inBytes), *y = malloc(outBytes);
    for (size_t i = 0; i < inBytes / sizeof(float); ++i)
      x[i] = (float)(i % 7) * 0.5f - 1.5f;
    check(a->set_input(models[k], 0, x, inBytes), a, models[k], "set_input");
    check(a->run(models[k]), a, models[k], "run");
    check(a->get_output(models[k], 0, y, outBytes), a, models[k],
          "get_output");
    printf("model %c:", 'a' + k);
    for (size_t i = 0; i < outBytes / sizeof(float); ++i)
      printf(" %.9g", y[i]);
    printf("\n");
    free(x);
    free(y);
  }
  for (int k = 0; k < 2; ++k)
    apis[k]->close(models[k]);
}

int main(int argc, char **argv) {
#ifdef LINKED
  if (argc != 3) {
    fprintf(stderr, "usage: two_models W_A W_B\n");
    return 2;
  }
  const struct api *apis[2] = {&api_a, &api_b};
  const char *weights[2] = {argv[1], argv[2]};
#else
  if (argc != 6) {
    fprintf(stderr, "usage: two_models dlopen-local|dlopen-global A WA B WB\n");
    return 2;
  }
  int global = strcmp(argv[1], "dlopen-global") == 0;
  struct api a = load(argv[2], global), b = load(argv[4], global);
  const struct api *apis[2] = {&a, &b};
  const char *weights[2] = {argv[3], argv[5]};
#endif
  runBoth(apis, weights);
  return 0;
}
