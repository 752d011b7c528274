/*
 * OpenBLAS sgemm N^3 f32 in a process of its own: the reference that
 * bench/matmul and bench/search compare LEIR's schedules with. Run by them
 * (fork + exec) between their own measurements, so that no OpenMP worker of
 * LEIR's kernel runner spins on a core while sgemm runs, and no OpenBLAS
 * thread pool lingers while LEIR's kernels run.
 *
 *   sgemm N THREADS RUNS   prints RUNS timings in seconds, one per line
 *                          (after 3 untimed warm-ups; 64 MiB touched before
 *                          each timed run, as the cpu backend flushes caches)
 *
 * Exit status 77 when OpenBLAS was not found at build time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: sgemm N THREADS RUNS\n");
    return 2;
  }
  int n = atoi(argv[1]), threads = atoi(argv[2]), runs = atoi(argv[3]);
  if (n < 1 || n > 16384 || threads < 1 || runs < 1 || runs > 100000) {
    fprintf(stderr, "sgemm: N in 1..16384, THREADS >= 1, RUNS in 1..100000\n");
    return 2;
  }
#ifdef HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  size_t nn = (size_t)n * (size_t)n;
  float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4);
  size_t flush_n = (size_t)64 << 20;
  unsigned char *flush = calloc(flush_n, 1);
  if (!A || !B || !C || !flush) return 3;
  for (size_t i = 0; i < nn; i++) A[i] = (float)(i % 13) / 13.0f, B[i] = (float)(i % 7) / 7.0f;
  for (int w = 0; w < 3; w++)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
  for (int r = 0; r < runs; r++) {
    for (size_t i = 0; i < flush_n; i += 64) flush[i]++;
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
    printf("%.9f\n", now() - t0);
  }
  fflush(stdout);
  free(A);
  free(B);
  free(C);
  free(flush);
  return 0;
#else
  (void)threads;
  (void)runs;
  (void)now;
  fprintf(stderr, "sgemm: OpenBLAS was not found at build time\n");
  return 77;
#endif
}
