/*
 * Candidates judged per second against one baseline (issue 10.6): for the
 * programs of the small corpus (at most 10^6 evaluations), K candidates of
 * each (every strategy, spread over the list), judged
 *
 *   verify:   leir_verify(reference, candidate) per candidate (the reference
 *             is checked, compiled and run again every time);
 *   verifier: leir_verifier_new once per program, then
 *             leir_verifier_judge_batch over its candidates.
 *
 * Warm: a first, untimed pass fills the cpu backend's kernel cache, so
 * both sides measure judging, not compiling. Verdict counts must be equal.
 *
 *   verifier_throughput CONFORMANCE_DIR [BACKEND [PROGRAMS [K [THREADS]]]]
 *   (defaults: interp, 40 programs, 16 candidates each, the backend's
 *   default thread count; the load average is printed with the table)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonl.h" /* tests/support */
#include "leir/leir.h"
#include "corpus_signature.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct item {
  leir_program *ref;
  leir_program **cands;
  uint32_t *classes;
  size_t n;
} item;


int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFORMANCE_DIR [BACKEND [PROGRAMS [K [THREADS]]]]\n", argv[0]);
    return 2;
  }
  const char *backend = argc > 2 ? argv[2] : "interp";
  size_t want = argc > 3 ? (size_t)atol(argv[3]) : 40;
  size_t k = argc > 4 ? (size_t)atol(argv[4]) : 16;
  char path[4096];
  snprintf(path, sizeof path, "%s/sources-small.jsonl", argv[1]);
  jsonl_file *f = jsonl_open(path);
  if (!f) return 2;
  item *items = calloc(want, sizeof *items);
  size_t n = 0, total = 0;
  const jsonl_value *v;
  while (n < want && (v = jsonl_next(f))) {
    const char *text = jsonl_str(jsonl_get(v, "leir"));
    leir_program *p = NULL;
    if (leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK) continue;
    bench_set_signature(p, jsonl_get(v, "signature"));
    leir_program_cost c;
    leir_candidates *cl = NULL;
    if (leir_program_cost_get(p, &c) != LEIR_OK || c.evaluations > 1000000 ||
        leir_candidates_list(&cl, p, NULL) != LEIR_OK || leir_candidates_count(cl) == 0) {
      leir_candidates_free(cl);
      leir_program_free(p);
      continue;
    }
    size_t nc = leir_candidates_count(cl), m = nc < k ? nc : k;
    item *it = &items[n++];
    it->ref = p;
    it->cands = calloc(m, sizeof *it->cands);
    it->classes = calloc(m, sizeof *it->classes);
    for (size_t i = 0; i < m; i++) {
      size_t j = i * nc / m;
      if (leir_candidates_apply(&it->cands[it->n], cl, j) != LEIR_OK) continue;
      it->classes[it->n++] = (uint32_t)leir_candidates_exactness(cl, j) + 1;
    }
    total += it->n;
    leir_candidates_free(cl);
  }
  jsonl_close(f);
  leir_backend *b = NULL;
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  if (argc > 5) bo.threads = (uint32_t)atol(argv[5]);
  if (leir_backend_open(&b, backend, &bo) != LEIR_OK) {
    fprintf(stderr, "%s: %s\n", backend, leir_error_last()->message);
    return 3;
  }
  int counts[2][LEIR_VERDICT_COUNT] = {{0}};
  double secs[2] = {0, 0};
  for (int pass = 0; pass < 2; pass++) { /* pass 0 warms the kernel cache */
    for (int mode = 0; mode < 2; mode++) {
      double t0 = now();
      for (size_t i = 0; i < n; i++) {
        item *it = &items[i];
        if (mode == 0) {
          for (size_t c = 0; c < it->n; c++) {
            leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
            o.candidate_class = it->classes[c];
            leir_verify_report *r = NULL;
            if (leir_verify(b, it->ref, it->cands[c], &o, &r) != LEIR_OK) return 4;
            if (pass) counts[0][r->verdict]++;
            leir_verify_report_free(r);
          }
        } else {
          leir_verifier *ver = NULL;
          if (leir_verifier_new(&ver, b, it->ref, NULL) != LEIR_OK) return 4;
          leir_verify_report **rs = calloc(it->n + 1, sizeof *rs);
          if (leir_verifier_judge_batch(ver, (const leir_program *const *)it->cands, it->classes,
                                        it->n, rs) != LEIR_OK)
            return 4;
          for (size_t c = 0; c < it->n; c++) {
            if (pass) counts[1][rs[c]->verdict]++;
            leir_verify_report_free(rs[c]);
          }
          free(rs);
          leir_verifier_free(ver);
        }
      }
      if (pass) secs[mode] = now() - t0;
    }
  }
  double load[3] = {0, 0, 0};
  FILE *la = fopen("/proc/loadavg", "r");
  if (la) {
    if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    fclose(la);
  }
  printf("| backend | threads | programs | candidates | leir_verify cand/s | verifier cand/s | speedup |\n");
  printf("| %s | %s | %zu | %zu | %.1f | %.1f | %.2fx |\n", backend, argc > 5 ? argv[5] : "default",
         n, total, total / secs[0], total / secs[1], secs[0] / secs[1]);
  printf("load average %.2f %.2f %.2f (after the run)\n", load[0], load[1], load[2]);
  bool same = memcmp(counts[0], counts[1], sizeof counts[0]) == 0;
  printf("verdicts%s:", same ? " (identical counts)" : " DIFFER");
  for (int x = 0; x < LEIR_VERDICT_COUNT; x++)
    if (counts[1][x]) printf(" %s %d", leir_verdict_name((leir_verdict)x), counts[1][x]);
  printf("\n");
  leir_backend_free(b);
  for (size_t i = 0; i < n; i++) {
    for (size_t c = 0; c < items[i].n; c++) leir_program_free(items[i].cands[c]);
    free(items[i].cands);
    free(items[i].classes);
    leir_program_free(items[i].ref);
  }
  free(items);
  return same ? 0 : 1;
}
