/*
 * matmul 512x512x512 f32 on the CPU backend: naive LEIR, hand-scheduled
 * LEIR variants (reordered, tiled, parallel, vectorized), and OpenBLAS
 * sgemm when it was found at build time, in GFLOP/s side by side.
 *
 *   matmul [N [THREADS [ROUNDS]]]   (N = 512 by default, a multiple of 32;
 *                          THREADS: the cpu backend's and OpenBLAS's, default
 *                          the backend's; ROUNDS = 7)
 *
 * Each variant is first verified against the naive program (they are exact
 * schedules: the verdict must be EQUAL). Then ROUNDS rounds alternate: the
 * LEIR variants timed together with leir_bench (alternating, caches
 * flushed; 3 runs each, their median), then OpenBLAS sgemm in a process of
 * its own (bench/sgemm, 5 runs, their median; started after a pause, so
 * that the LEIR runner's OpenMP workers have stopped spinning). Reported:
 * the median and interquartile range of the round medians, the best run,
 * and the load average before and after.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leir/leir.h"
#include "sgemm_child.h"

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
  int rounds = argc > 3 ? atoi(argv[3]) : 7;
  if (rounds < 1 || rounds > 64) {
    fprintf(stderr, "ROUNDS must be in 1..64\n");
    return 2;
  }
  leir_backend_options bopts = LEIR_BACKEND_OPTIONS_INIT;
  bopts.threads = threads > 0 ? (uint32_t)threads : 0;
  leir_backend *b;
  if (leir_backend_open(&b, "cpu", &bopts) != LEIR_OK) {
    fprintf(stderr, "cpu backend: %s\n", leir_error_last()->message);
    return 3;
  }
  printf("matmul %dx%dx%d f32, cpu backend, %s\n", n, n, n,
         getenv("LEIR_CFLAGS") ? getenv("LEIR_CFLAGS") : "the backend's default flags");
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
  /* R rounds; in each, every LEIR variant is timed (leir_bench: alternating,
   * caches flushed, its median of the round), then OpenBLAS sgemm in a
   * process of its own (bench/sgemm) with the same thread count. The
   * figures are the median and interquartile range of the round medians. */
  enum { MAXR = 64 };
  static double rm[NP + 1][MAXR], best[NP + 1];
  char load0[64], load1[64];
  bench_load(load0, sizeof load0);
  uint32_t nthreads = 0;
  int sg_ok = 1;
  for (int i = 0; i <= NP; i++) best[i] = 1e30;
  for (int r = 0; r < rounds; r++) {
    leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
    bo.warmup = r == 0 ? 3 : 1;
    bo.min_runs = 3;
    bo.min_seconds = 0;
    leir_timing tm[NP];
    if (leir_bench(b, (const leir_program *const *)p, NP, &bo, tm) != LEIR_OK) {
      fprintf(stderr, "bench: %s\n", leir_error_last()->message);
      return 3;
    }
    nthreads = tm[0].threads;
    for (int i = 0; i < NP; i++) {
      rm[i][r] = tm[i].median_s;
      if (tm[i].min_s < best[i]) best[i] = tm[i].min_s;
    }
    if (sg_ok) {
      double t[16];
      bench_settle();
      int got = bench_sgemm_run(n, (int)nthreads, 5, t, 16);
      if (got <= 0) {
        sg_ok = 0;
      } else {
        for (int k = 0; k < got; k++)
          if (t[k] < best[NP]) best[NP] = t[k];
        rm[NP][r] = bench_quantile(t, (size_t)got, 0.5);
      }
      bench_settle();
    }
  }
  bench_load(load1, sizeof load1);
  double flop = 2.0 * n * n * n;
  double med[NP + 1], q1[NP + 1], q3[NP + 1];
  for (int i = 0; i <= NP; i++) {
    med[i] = bench_quantile(rm[i], (size_t)rounds, 0.5);
    q1[i] = bench_quantile(rm[i], (size_t)rounds, 0.25);
    q3[i] = bench_quantile(rm[i], (size_t)rounds, 0.75);
  }
  printf("\n%d rounds, %u threads; load average before %s, after %s\n", rounds, nthreads, load0,
         load1);
  printf("\n| variant | median ms | IQR ms | best ms | GFLOP/s (median) | GFLOP/s (best) | of OpenBLAS |\n"
         "|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i <= NP; i++) {
    if (i == NP && !sg_ok) {
      printf("| OpenBLAS sgemm | (bench/sgemm missing or OpenBLAS not found at build time) |||||\n");
      break;
    }
    char label[96];
    if (i == NP) snprintf(label, sizeof label, "OpenBLAS sgemm (%u threads, own process)", nthreads);
    char of[32] = "";
    if (sg_ok) snprintf(of, sizeof of, "%.0f%%", 100 * med[NP] / med[i]);
    printf("| %s | %.2f | %.2f-%.2f | %.2f | %.2f | %.2f | %s |\n", i == NP ? label : names[i],
           med[i] * 1e3, q1[i] * 1e3, q3[i] * 1e3, best[i] * 1e3, flop / med[i] * 1e-9,
           flop / best[i] * 1e-9, of);
  }
  if (sg_ok) {
    int bi = 1;
    for (int i = 1; i < NP; i++)
      if (med[i] < med[bi]) bi = i;
    printf("\nbest LEIR schedule (median): %s, %.1f%% of OpenBLAS's median GFLOP/s\n", names[bi],
           100 * med[NP] / med[bi]);
  }
  for (int i = 0; i < NP; i++) leir_program_free(p[i]);
  leir_backend_free(b);
  return 0;
}
