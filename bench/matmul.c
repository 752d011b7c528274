/*
 * matmul 512x512x512 f32 on the CPU backend: naive LEIR, hand-scheduled
 * LEIR variants (reordered, tiled, parallel, vectorized), and OpenBLAS
 * sgemm when it was found at build time, in GFLOP/s side by side.
 *
 *   matmul [N [THREADS]]   (N = 512 by default, a multiple of 32; THREADS: the
 *                          cpu backend's and OpenBLAS's, default the backend's)
 *
 * The LEIR variants are timed together with leir_bench (alternating
 * rounds, caches flushed, median); each is first verified against the
 * naive program (they are exact schedules: the verdict must be EQUAL).
 * sgemm is timed in-process with the same protocol (3 warm-ups, >= 10 runs
 * and >= 50 ms, median).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leir/leir.h"
#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 512;
  if (n < 32 || n % 32) {
    fprintf(stderr, "N must be a positive multiple of 32\n");
    return 2;
  }
  int t = n / 32;
  enum { NP = 9 };
  char text[NP][1024];
  const char *names[NP] = {"naive (a,c,d)", "reordered (a,d,c)", "tiled 32x32x32",
                           "tiled + P outer", "tiled + P + V inner", "reordered + P outer",
                           "register tile 8x16 (P,L,L,U,V)", "register tile 8x32 (P,L,L,U,V)",
                           "register tile 4x64 (P,L,L,U,V)"};
#define BODY(a, c, d) "[D^{f32,g}_{" a "," c "}=D^{f32,g}_{" a "," c "}+A^{f32,g}_{" a "," d "}*C^{f32,g}_{" d "," c "};];"
  snprintf(text[0], 1024, "L^{%d}_{a=0}L^{%d}_{c=0}L^{%d}_{d=0}" BODY("a", "c", "d"), n, n, n);
  snprintf(text[1], 1024, "L^{%d}_{a=0}L^{%d}_{d=0}L^{%d}_{c=0}" BODY("a", "c", "d"), n, n, n);
  snprintf(text[2], 1024,
           "L^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{i=0}L^{32}_{a=0}L^{32}_{d=0}L^{32}_{c=0}" BODY(
               "g*32+a", "h*32+c", "i*32+d"),
           t, t, t);
  snprintf(text[3], 1024,
           "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{i=0}L^{32}_{a=0}L^{32}_{d=0}L^{32}_{c=0}" BODY(
               "g*32+a", "h*32+c", "i*32+d"),
           t, t, t);
  snprintf(text[4], 1024,
           "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{i=0}L^{32}_{a=0}L^{32}_{d=0}V^{32}_{c=0}" BODY(
               "g*32+a", "h*32+c", "i*32+d"),
           t, t, t);
  snprintf(text[5], 1024, "P^{%d}_{a=0}L^{%d}_{d=0}L^{%d}_{c=0}" BODY("a", "c", "d"), n, n, n);
  /* register tiles: rows of A and columns of D in U x V, the reduction loop
   * outside them (the C backend keeps the D tile in registers: scalar
   * replacement), P over row blocks */
  snprintf(text[6], 1024,
           "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" BODY("g*8+a", "h*16+c", "d"),
           n / 8, n / 16, n);
  snprintf(text[7], 1024,
           "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}U^{8}_{a=0}V^{32}_{c=0}" BODY("g*8+a", "h*32+c", "d"),
           n / 8, n / 32, n);
  snprintf(text[8], 1024,
           "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}U^{4}_{a=0}V^{64}_{c=0}" BODY("g*4+a", "h*64+c", "d"),
           n / 4, n / 64, n);
  leir_program *p[NP];
  for (int i = 0; i < NP; i++)
    if (leir_program_parse(&p[i], text[i], strlen(text[i]), NULL) != LEIR_OK) {
      fprintf(stderr, "%s: %s\n", names[i], leir_error_last()->message);
      return 1;
    }
  int threads = argc > 2 ? atoi(argv[2]) : 0;
  leir_backend_options bopts = LEIR_BACKEND_OPTIONS_INIT;
  bopts.threads = threads > 0 ? (uint32_t)threads : 0;
  leir_backend *b;
  if (leir_backend_open(&b, "cpu", &bopts) != LEIR_OK) {
    fprintf(stderr, "cpu backend: %s\n", leir_error_last()->message);
    return 3;
  }
  printf("matmul %dx%dx%d f32, cpu backend, %s\n", n, n, n,
         getenv("LEIR_CFLAGS") ? getenv("LEIR_CFLAGS") : "-O3 -march=native -fopenmp");
  for (int i = 1; i < NP; i++) {
    leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
    vo.input_sets = 1;
    leir_verify_report *r;
    if (leir_verify(b, p[0], p[i], &vo, &r) != LEIR_OK) {
      fprintf(stderr, "verify: %s\n", leir_error_last()->message);
      return 3;
    }
    printf("  verify %-22s %s\n", names[i], leir_verdict_name(r->verdict));
    leir_verify_report_free(r);
  }
  leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
  leir_timing tm[NP];
  if (leir_bench(b, (const leir_program *const *)p, NP, &bo, tm) != LEIR_OK) {
    fprintf(stderr, "bench: %s\n", leir_error_last()->message);
    return 3;
  }
  printf("\n| variant | median ms | min-max ms | runs | GFLOP/s | speedup vs naive |\n"
         "|---|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < NP; i++)
    printf("| %s | %.2f | %.2f-%.2f | %u | %.2f | %.2fx |\n", names[i], tm[i].median_s * 1e3,
           tm[i].min_s * 1e3, tm[i].max_s * 1e3, tm[i].runs, tm[i].gflops, tm[i].speedup);
#ifdef HAVE_OPENBLAS
  openblas_set_num_threads((int)tm[0].threads);
  size_t nn = (size_t)n * n;
  float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4);
  for (size_t i = 0; i < nn; i++) A[i] = (float)(i % 13) / 13.0f, B[i] = (float)(i % 7) / 7.0f;
  double samples[10000];
  int runs = 0;
  for (int w = 0; w < 3; w++)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
  double total = 0;
  size_t flush_n = (size_t)64 << 20; /* as the cpu backend: 64 MiB touched between runs */
  unsigned char *flush = calloc(flush_n, 1);
  while (runs < 10000 && (runs < 10 || total < 0.05)) {
    for (size_t i = 0; i < flush_n; i += 64) flush[i]++;
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
    samples[runs] = now() - t0;
    total += samples[runs++];
  }
  qsort(samples, runs, sizeof *samples, cmp);
  double med = runs % 2 ? samples[runs / 2] : 0.5 * (samples[runs / 2 - 1] + samples[runs / 2]);
  printf("| OpenBLAS sgemm (%d threads) | %.2f | %.2f-%.2f | %d | %.2f | %.2fx |\n",
         openblas_get_num_threads(), med * 1e3, samples[0] * 1e3, samples[runs - 1] * 1e3, runs,
         2.0 * n * n * n / med * 1e-9, tm[0].median_s / med);
  free(A);
  free(B);
  free(C);
  free(flush);
#else
  printf("| OpenBLAS sgemm | (not found at build time) | | | | |\n");
#endif
  for (int i = 0; i < NP; i++) leir_program_free(p[i]);
  leir_backend_free(b);
  return 0;
}
