/* f32 FMA throughput of this CPU: 16 independent zmm accumulators per thread
 * (enough to cover FMA latency x throughput on current x86 cores), one
 * parallel region for the multi-thread figure.
 *
 *   cc -O3 -march=native -fopenmp bench/fma_peak.c -o fma_peak && ./fma_peak [threads...]
 *
 * Prints one line per thread count:
 *   fma threads=T gflops=G cpu_gflops=C
 * G is FLOPs / wall time of the parallel region, C is the sum over threads of
 * FLOPs / that thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which stays at the
 * hardware's rate when other processes preempt the threads (it does not see
 * two threads sharing one core's FMA units unless they ran at the same time).
 * Both are the best of 40 short trials, so that a busy machine still shows
 * its peak.
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef __AVX512F__
#error "needs AVX-512 (compile with -march=native on an AVX-512 machine)"
#endif

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }

/* 16 accumulators x 16 lanes x 2 flops per iteration. */
static float kernel(long iters, float seed) {
  __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f * seed);
#define DECL(i) __m512 c##i = _mm512_set1_ps(seed + i);
  DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7)
  DECL(8) DECL(9) DECL(10) DECL(11) DECL(12) DECL(13) DECL(14) DECL(15)
  for (long n = 0; n < iters; ++n) {
#define FMA(i) c##i = _mm512_fmadd_ps(c##i, a, b);
    FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7)
    FMA(8) FMA(9) FMA(10) FMA(11) FMA(12) FMA(13) FMA(14) FMA(15)
    __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5),
                     "+v"(c6), "+v"(c7));
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                           _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                                     _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15))));
  return _mm512_reduce_add_ps(s);
}

int main(int argc, char **argv) {
  long iters = 2000000; /* 1.02 GFLOP per thread per trial (~10 ms) */
  int counts[8] = {1, 2}, ncounts = 2;
  if (argc > 1) {
    ncounts = 0;
    for (int i = 1; i < argc && ncounts < 8; ++i) counts[ncounts++] = atoi(argv[i]);
  }
  volatile float sink = 0;
  sink += kernel(iters / 10, 1.0f); /* warm up clocks */
  for (int c = 0; c < ncounts; ++c) {
    int t = counts[c];
    double best = 0, best_cpu = 0, flops = (double)iters * 16 * 16 * 2;
    for (int trial = 0; trial < 40; ++trial) {
      double cpu_rate = 0;
      double t0 = now();
#pragma omp parallel num_threads(t) reduction(+ : sink, cpu_rate)
      {
        double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        sink += kernel(iters, 1.0f + omp_get_thread_num());
        cpu_rate += flops / (clock_s(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e9;
      }
      double dt = now() - t0;
      double gf = t * flops / dt / 1e9;
      if (gf > best) best = gf;
      if (cpu_rate > best_cpu) best_cpu = cpu_rate;
    }
    printf("fma threads=%d gflops=%.1f cpu_gflops=%.1f\n", t, best, best_cpu);
  }
  return sink == 12345.0f; /* keeps the results live */
}
