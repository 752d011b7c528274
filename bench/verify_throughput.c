/*
 * Verification throughput on the small corpus: pairs (before, after) of
 * conformance/steps-small.jsonl whose programs both run at most 10^6
 * equation evaluations, verified with 3 input sets.
 *
 *   verify_throughput CONFORMANCE_DIR [PAIRS [STRIDE]]
 *
 * takes PAIRS pairs (default 100), every STRIDE-th line (default 1).
 *
 * cold:   cpu backend with LEIR_BACKEND_NO_CACHE (both programs compiled
 *         for every pair);
 * warm:   cpu backend whose memory cache already holds every kernel (a
 *         first, untimed pass fills it);
 * interp: the reference evaluator.
 * Reports pairs per second and the median / 90th percentile per pair.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus_signature.h"
#include "jsonl.h" /* tests/support */
#include "leir/leir.h"

typedef struct pair {
  leir_program *before, *after;
} pair;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void run(const char *label, const char *backend, uint32_t flags, pair *ps, size_t n,
                bool warm_first) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.flags = flags;
  bo.cache_dir = ""; /* memory only, whatever $LEIR_CACHE_DIR says */
  leir_backend *b;
  if (leir_backend_open(&b, backend, &bo) != LEIR_OK) {
    fprintf(stderr, "%s: %s\n", backend, leir_error_last()->message);
    exit(3);
  }
  double *t = malloc(n * sizeof *t);
  int counts[LEIR_VERDICT_COUNT] = {0};
  for (int pass = warm_first ? 0 : 1; pass < 2; pass++) {
    double start = now();
    for (size_t i = 0; i < n; i++) {
      leir_verify_report *r;
      double t0 = now();
      if (leir_verify(b, ps[i].before, ps[i].after, NULL, &r) != LEIR_OK) {
        fprintf(stderr, "no verdict: %s\n", leir_error_last()->message);
        exit(3);
      }
      t[i] = now() - t0;
      if (pass == 1) counts[r->verdict]++;
      leir_verify_report_free(r);
    }
    if (pass == 1) {
      double total = now() - start;
      qsort(t, n, sizeof *t, cmp);
      printf("| %s | %zu | %.1f | %.2f | %.1f | %.1f |", label, n, total, n / total, t[n / 2] * 1e3,
             t[(n * 9) / 10] * 1e3);
      for (int v = 0; v < LEIR_VERDICT_COUNT; v++)
        if (counts[v]) printf(" %s %d", leir_verdict_name((leir_verdict)v), counts[v]);
      printf(" |\n");
    }
  }
  free(t);
  leir_backend_free(b);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFORMANCE_DIR [PAIRS]\n", argv[0]);
    return 2;
  }
  size_t want = argc > 2 ? (size_t)atol(argv[2]) : 100;
  size_t stride = argc > 3 ? (size_t)atol(argv[3]) : 1;
  if (stride < 1) stride = 1;
  char path[4096];
  snprintf(path, sizeof path, "%s/sources-small.jsonl", argv[1]);
  jsonl_file *f = jsonl_open(path);
  if (!f) return 2;
  size_t nsrc = 0, cap = 0;
  char **ids = NULL;
  leir_program **srcs = NULL;
  const jsonl_value *v;
  while ((v = jsonl_next(f))) {
    if (nsrc == cap) {
      cap = cap ? 2 * cap : 128;
      ids = realloc(ids, cap * sizeof *ids);
      srcs = realloc(srcs, cap * sizeof *srcs);
    }
    ids[nsrc] = strdup(jsonl_str(jsonl_get(v, "id")));
    const char *text = jsonl_str(jsonl_get(v, "leir"));
    leir_program_parse(&srcs[nsrc], text, strlen(text), NULL);
    bench_set_signature(srcs[nsrc], jsonl_get(v, "signature"));
    nsrc++;
  }
  jsonl_close(f);
  snprintf(path, sizeof path, "%s/steps-small.jsonl", argv[1]);
  f = jsonl_open(path);
  if (!f) return 2;
  pair *ps = calloc(want, sizeof *ps);
  size_t n = 0;
  while (n < want && (v = jsonl_next(f))) {
    if ((jsonl_line(f) - 1) % stride) continue;
    size_t s = 0;
    while (s < nsrc && strcmp(ids[s], jsonl_str(jsonl_get(v, "id")))) s++;
    const char *before = jsonl_str(jsonl_get(v, "before")), *after = jsonl_str(jsonl_get(v, "after"));
    leir_program *pb = NULL, *pa = NULL;
    leir_program_cost cb, ca;
    bool ok = s < nsrc;
    if (ok && before) {
      ok = leir_program_parse(&pb, before, strlen(before), NULL) == LEIR_OK;
      if (ok) {
        leir_tensor_decl d[64];
        size_t nd = leir_program_signature_count(srcs[s]);
        for (size_t k = 0; k < nd; k++) leir_program_signature_get(srcs[s], k, &d[k]);
        ok = leir_program_set_signature(pb, d, nd) == LEIR_OK;
      }
    } else if (ok) {
      leir_program_clone(&pb, srcs[s]);
    }
    ok = ok && leir_program_parse(&pa, after, strlen(after), NULL) == LEIR_OK;
    ok = ok && leir_program_cost_get(pb, &cb) == LEIR_OK && cb.evaluations <= 1000000;
    if (ok) {
      leir_program *pa_sig;
      leir_program_clone(&pa_sig, pa);
      leir_tensor_decl d[64];
      size_t nd = leir_program_signature_count(pb);
      for (size_t k = 0; k < nd; k++) leir_program_signature_get(pb, k, &d[k]);
      ok = leir_program_set_signature(pa_sig, d, nd) == LEIR_OK &&
           leir_program_cost_get(pa_sig, &ca) == LEIR_OK && ca.evaluations <= 1000000;
      leir_program_free(pa_sig);
    }
    if (ok) {
      ps[n].before = pb;
      ps[n].after = pa;
      n++;
    } else {
      leir_program_free(pb);
      leir_program_free(pa);
    }
  }
  jsonl_close(f);
  printf("%zu pairs (every %zu-th line; each program <= 10^6 evaluations), 3 input sets\n\n", n,
         stride);
  printf("| mode | pairs | seconds | pairs/s | median ms/pair | p90 ms/pair | verdicts |\n"
         "|---|---:|---:|---:|---:|---:|---|\n");
  run("cpu, cold (no cache)", "cpu", LEIR_BACKEND_NO_CACHE, ps, n, false);
  run("cpu, warm (memory cache)", "cpu", 0, ps, n, true);
  run("interp", "interp", 0, ps, n, false);
  return 0;
}
