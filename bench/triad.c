/* The memory bandwidth a decode step can hope for, with N OpenMP threads
 * over arrays far larger than the caches; best of R repetitions in GB/s
 * (10^9 bytes):
 *   triad  STREAM's a[i] = b[i] + s * c[i], counting 24 bytes per element
 *          (two reads, one write), as STREAM does;
 *   read   sums of the three arrays, one after the other, 8 bytes per
 *          element: a decode step reads its weights, one tensor after
 *          another, and writes almost nothing, so this is its bound (the
 *          triad's stores also cost a read for ownership that STREAM does
 *          not count). One stream at a time, as a step reads: summing the
 *          three arrays in one loop read about 7% less at 1 thread.
 *
 * The arrays take transparent huge pages where the kernel grants them on
 * advice, as attnc's runtime asks for its weights and buffers: with 4 KiB
 * pages, TLB misses cost a streaming read about a fifth of its bandwidth.
 *
 *   cc -O3 -march=native -fopenmp bench/triad.c -o triad
 *   OMP_NUM_THREADS=1 ./triad [elements] [repetitions]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE (2L << 20)

/* n doubles at a huge page boundary, advised for huge pages. */
static double *allocateArray(long n) {
  size_t bytes = (n * sizeof(double) + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  double *p = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
  if (p)
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1L << 26; /* 512 MiB per array */
  int reps = argc > 2 ? atoi(argv[2]) : 7;
  if (n <= 0 || reps <= 0) {
    fprintf(stderr, "triad: elements and repetitions must be positive\n");
    return 1;
  }
  double *a = allocateArray(n), *b = allocateArray(n), *c = allocateArray(n);
  if (!a || !b || !c) {
    fprintf(stderr, "triad: cannot allocate 3 x %ld doubles\n", n);
    return 1;
  }
  /* First touch by the threads that later stream the same pages. */
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  const double s = 3.0;
  double best = 0.0;
  for (int r = 0; r < reps; ++r) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + s * c[i];
    double dt = omp_get_wtime() - t0;
    double gbs = 24.0 * (double)n / dt / 1e9;
    if (gbs > best)
      best = gbs;
  }
  double bestRead = 0.0, sum = 0.0;
  for (int r = 0; r < reps; ++r) {
    double t0 = omp_get_wtime();
    double s0 = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : s0)
    for (long i = 0; i < n; ++i)
      s0 += a[i];
#pragma omp parallel for simd schedule(static) reduction(+ : s0)
    for (long i = 0; i < n; ++i)
      s0 += b[i];
#pragma omp parallel for simd schedule(static) reduction(+ : s0)
    for (long i = 0; i < n; ++i)
      s0 += c[i];
    double dt = omp_get_wtime() - t0;
    double gbs = 24.0 * (double)n / dt / 1e9;
    if (gbs > bestRead)
      bestRead = gbs;
    sum = s0;
  }
  /* Checking the results keeps the loops from being optimized away. */
  if (a[n / 2] != 7.0 || sum != 10.0 * (double)n) {
    fprintf(stderr, "triad: wrong result %g, %g\n", a[n / 2], sum);
    return 1;
  }
  printf("%d threads: triad %.2f GB/s, read %.2f GB/s\n",
         omp_get_max_threads(), best, bestRead);
  free(a);
  free(b);
  free(c);
  return 0;
}
