/*
 * Row softmax and layernorm, N x N f32 on the CPU backend, against a copy
 * kernel measured in the same run (issue 15.8): achieved GB/s, counting
 * the bytes of the known variables (input + output, and layernorm's gain
 * and bias), the figure leir_timing.gbytes_per_s reports.
 *
 *   softmax [N]      (N = 4096 by default; a multiple of 64)
 *
 * Programs: the copy (P rows, V columns); softmax and layernorm as
 * written naively (one L nest per pass); and hand schedules of the kind the
 * strategies write: one parallel nest over rows holding the passes, each
 * reduction factored into 16 partial accumulators over a V loop (a vector
 * of partial maxima/sums that the C backend keeps in registers, in a local
 * buffer of 16 elements per row), and V on the elementwise pass.
 * Online softmax: the online_softmax strategy's rewrite of the naive
 * program (one nest per row: a running max and a rescaled running sum in
 * f64, then the normalizing pass), as it comes and with P on the rows and V
 * on the normalizing pass; and its `acc=native lanes=8` form (8 interleaved
 * lanes on a V loop, each with its own f32 running max and sum, combined
 * per row), as it comes and with P rows and V on the normalizing pass.
 * f32 exp goes through libleir's leir_exp_f32 (backends/leir_math.h), which
 * the compiler vectorizes (in float since 2026-12-03: 16 lanes a step on
 * AVX-512); docs/verification.md, "Elementwise math".
 * Each schedule is verified against its naive form first (a reassociating
 * candidate: CLOSE or EQUAL is expected), then everything is timed
 * together with leir_bench (alternating rounds, caches flushed, median).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leir/leir.h"

#define NP 10

static leir_program *rewrite(const leir_program *p, const char *step_text) {
  leir_step *s = NULL;
  leir_program *q = NULL;
  if (leir_step_parse(&s, step_text, strlen(step_text)) != LEIR_OK ||
      leir_step_apply(&q, p, s, NULL) != LEIR_OK) {
    fprintf(stderr, "%s: %s\n", step_text, leir_error_last()->message);
    exit(1);
  }
  leir_step_free(s);
  return q;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  if (n < 64 || n % 64) {
    fprintf(stderr, "N must be a positive multiple of 64\n");
    return 2;
  }
  int q = n / 16;
  static char text[NP][4096];
  const char *names[NP] = {"copy (P rows, V columns)", "softmax, naive", "softmax, scheduled",
                           "layernorm, naive", "layernorm, scheduled", "softmax, online",
                           "softmax, online, P rows + V", "softmax, scheduled, exp stored",
                           "softmax, online f32, 8 lanes", "softmax, online f32, 8 lanes, P + V"};
  snprintf(text[0], sizeof text[0], "P^{%d}_{a=0}V^{%d}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c};];", n,
           n);
  snprintf(text[1], sizeof text[1],
           "L^{%d}_{a=0}L^{%d}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];"
           "L^{%d}_{a=0}L^{%d}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+exp(A^{f32,g}_{a,c}-D^{f32,g}_{a});];"
           "L^{%d}_{a=0}L^{%d}_{c=0}[C^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c}-D^{f32,g}_{a})/E^{f32,g}_{a};];",
           n, n, n, n, n, n);
  snprintf(text[2], sizeof text[2],
           "P^{%d}_{a=0}["
           "L^{%d}_{c=0}V^{16}_{d=0}[X^{f32,l}_{a,d}=max(X^{f32,l}_{a,d},A^{f32,g}_{a,c*16+d});];"
           "L^{16}_{d=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},X^{f32,l}_{a,d});];"
           "L^{%d}_{c=0}V^{16}_{d=0}[Y^{f32,l}_{a,d}=Y^{f32,l}_{a,d}+exp(A^{f32,g}_{a,c*16+d}-D^{f32,g}_{a});];"
           "L^{16}_{d=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+Y^{f32,l}_{a,d};];"
           "V^{%d}_{c=0}[C^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c}-D^{f32,g}_{a})/E^{f32,g}_{a};];];",
           n, q, q, n);
#define LN_OUT "(A^{f32,g}_{a,c}-M^{f32,g}_{a}/%d)/sqrt(R^{f32,g}_{a}/%d+0.00001)*G^{f32,g}_{c}+H^{f32,g}_{c}"
  snprintf(text[3], sizeof text[3],
           "L^{%d}_{a=0}L^{%d}_{c=0}[M^{f32,g}_{a}=M^{f32,g}_{a}+A^{f32,g}_{a,c};];"
           "L^{%d}_{a=0}L^{%d}_{c=0}[R^{f32,g}_{a}=R^{f32,g}_{a}+(A^{f32,g}_{a,c}-M^{f32,g}_{a}/%d)*"
           "(A^{f32,g}_{a,c}-M^{f32,g}_{a}/%d);];"
           "L^{%d}_{a=0}L^{%d}_{c=0}[C^{f32,g}_{a,c}=" LN_OUT ";];",
           n, n, n, n, n, n, n, n, n, n);
  snprintf(text[4], sizeof text[4],
           "P^{%d}_{a=0}["
           "L^{%d}_{c=0}V^{16}_{d=0}[S^{f32,l}_{a,d}=S^{f32,l}_{a,d}+A^{f32,g}_{a,c*16+d};];"
           "L^{16}_{d=0}[M^{f32,g}_{a}=M^{f32,g}_{a}+S^{f32,l}_{a,d};];"
           "L^{%d}_{c=0}V^{16}_{d=0}[Q^{f32,l}_{a,d}=Q^{f32,l}_{a,d}+(A^{f32,g}_{a,c*16+d}-M^{f32,g}_{a}/%d)*"
           "(A^{f32,g}_{a,c*16+d}-M^{f32,g}_{a}/%d);];"
           "L^{16}_{d=0}[R^{f32,g}_{a}=R^{f32,g}_{a}+Q^{f32,l}_{a,d};];"
           "V^{%d}_{c=0}[C^{f32,g}_{a,c}=" LN_OUT ";];];",
           n, q, q, n, n, n, n, n);
  /* online softmax: the strategy's own rewrite of the naive program (#5),
   * and the same with P on the rows and V on the normalizing pass (#6; the
   * online pass itself is a recurrence over the row: no V there) */
  snprintf(text[6], sizeof text[6],
           "P^{%d}_{a=0}[D^{f32,g}_{a}=-inf;H^{f64,g}_{a}=0;"
           "L^{%d}_{c=0}[F^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});"
           "G^{f32,g}_{a}=if_then_else(F^{f32,g}_{a}==-inf,0,exp(A^{f32,g}_{a,c}-F^{f32,g}_{a}));"
           "H^{f64,g}_{a}=if_then_else(F^{f32,g}_{a}==D^{f32,g}_{a},H^{f64,g}_{a}+G^{f32,g}_{a},"
           "H^{f64,g}_{a}*exp(D^{f32,g}_{a}-F^{f32,g}_{a})+G^{f32,g}_{a});D^{f32,g}_{a}=F^{f32,g}_{a};];"
           "E^{f32,g}_{a}=H^{f64,g}_{a};"
           "V^{%d}_{c=0}[C^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c}-D^{f32,g}_{a})/E^{f32,g}_{a};];];",
           n, n, n);
  /* #7: #2 with exp(A-D) stored in C by the sum pass and divided in place
   * by the last one (one exp per element instead of two; bitwise the same
   * quotients) */
  snprintf(text[7], sizeof text[7],
           "P^{%d}_{a=0}["
           "L^{%d}_{c=0}V^{16}_{d=0}[X^{f32,l}_{a,d}=max(X^{f32,l}_{a,d},A^{f32,g}_{a,c*16+d});];"
           "L^{16}_{d=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},X^{f32,l}_{a,d});];"
           "L^{%d}_{c=0}V^{16}_{d=0}[C^{f32,g}_{a,c*16+d}=exp(A^{f32,g}_{a,c*16+d}-D^{f32,g}_{a});"
           "Y^{f32,l}_{a,d}=Y^{f32,l}_{a,d}+C^{f32,g}_{a,c*16+d};];"
           "L^{16}_{d=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+Y^{f32,l}_{a,d};];"
           "V^{%d}_{c=0}[C^{f32,g}_{a,c}=C^{f32,g}_{a,c}/E^{f32,g}_{a};];];",
           n, q, q, n);
  leir_program *p[NP];
  for (int i = 0; i < NP; i++) {
    if (i == 5 || i >= 8) continue;
    if (leir_program_parse(&p[i], text[i], strlen(text[i]), NULL) != LEIR_OK ||
        leir_program_infer_signature(p[i]) != LEIR_OK) {
      fprintf(stderr, "%s: %s\n", names[i], leir_error_last()->message);
      return 1;
    }
  }
  p[5] = rewrite(p[1], "online_softmax nest=0");
  if (leir_program_infer_signature(p[5]) != LEIR_OK) {
    fprintf(stderr, "%s: %s\n", names[5], leir_error_last()->message);
    return 1;
  }
  p[8] = rewrite(p[1], "online_softmax nest=0 acc=native lanes=8");
  {
    /* #9: #8 with P on the rows and V on the normalizing pass, as #6 */
    char *t = NULL;
    if (leir_program_print(p[8], 0, &t, NULL) != LEIR_OK) {
      fprintf(stderr, "print: %s\n", leir_error_last()->message);
      return 1;
    }
    char rows[64], norm[64];
    snprintf(rows, sizeof rows, "L^{%d}_{a=0}[", n);
    snprintf(norm, sizeof norm, "L^{%d}_{c=0}[C^", n);
    char *r = strstr(t, rows), *c = strstr(t, norm);
    if (r != t || !c) {
      fprintf(stderr, "unexpected lanes form: %.200s\n", t);
      return 1;
    }
    r[0] = 'P';
    c[0] = 'V';
    if (leir_program_parse(&p[9], t, strlen(t), NULL) != LEIR_OK) {
      fprintf(stderr, "%s: %s\n", names[9], leir_error_last()->message);
      return 1;
    }
    leir_free(t);
  }
  for (int i = 8; i < NP; i++)
    if (leir_program_infer_signature(p[i]) != LEIR_OK) {
      fprintf(stderr, "%s: %s\n", names[i], leir_error_last()->message);
      return 1;
    }
  leir_backend *b;
  if (leir_backend_open(&b, "cpu", NULL) != LEIR_OK) {
    fprintf(stderr, "cpu backend: %s\n", leir_error_last()->message);
    return 3;
  }
  printf("softmax and layernorm %dx%d f32, cpu backend, %s\n", n, n,
         getenv("LEIR_CFLAGS") ? getenv("LEIR_CFLAGS") : "the backend's default flags");
  static const int cand[] = {2, 4, 5, 6, 7, 8, 9}, ref[] = {1, 3, 1, 1, 1, 1, 1};
  for (int j = 0; j < 7; j++) {
    int i = cand[j];
    leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
    vo.input_sets = 1;
    vo.candidate_class = LEIR_VERIFY_CLASS_REASSOCIATING;
    leir_verify_report *r;
    if (leir_verify(b, p[ref[j]], p[i], &vo, &r) != LEIR_OK) {
      fprintf(stderr, "verify: %s\n", leir_error_last()->message);
      return 3;
    }
    printf("  verify %-28s %s\n", names[i], leir_verdict_name(r->verdict));
    leir_verify_report_free(r);
  }
  leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
  leir_timing tm[NP];
  if (leir_bench(b, (const leir_program *const *)p, NP, &bo, tm) != LEIR_OK) {
    fprintf(stderr, "bench: %s\n", leir_error_last()->message);
    return 3;
  }
  printf("\n| program | median ms | min-max ms | runs | threads | GB/s | of copy |\n"
         "|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < NP; i++)
    printf("| %s | %.2f | %.2f-%.2f | %u | %u | %.2f | %.0f%% |\n", names[i], tm[i].median_s * 1e3,
           tm[i].min_s * 1e3, tm[i].max_s * 1e3, tm[i].runs, tm[i].threads, tm[i].gbytes_per_s,
           100 * tm[i].gbytes_per_s / tm[0].gbytes_per_s);
  for (int i = 0; i < NP; i++) leir_program_free(p[i]);
  leir_backend_free(b);
  return 0;
}
