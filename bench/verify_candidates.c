/*
 * Verifies candidates on a backend: every candidate, or a seeded sample of
 * K per (program, strategy), of the selected strategies on every program of
 * a sources-*.jsonl file. Exact candidates must verify EQUAL, reassociating
 * ones EQUAL or CLOSE; P/V/B loops must be independent
 * (LEIR_VERIFY_STRICT_PARALLEL) unless the source already breaks that rule. Prints every failure and a summary.
 *
 *   verify_candidates [--backend B] [--per K] [--seed N] [--strategy S]
 *                     [--max-evaluations N] [--id ID] SOURCES.jsonl
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sources.h"

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *backend = "interp", *path = NULL, *only = NULL, *only_id = NULL;
  long per = 0;
  uint64_t seed = 1, max_evals = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) backend = argv[++i];
    else if (strcmp(argv[i], "--per") == 0 && i + 1 < argc) per = atol(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--strategy") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--id") == 0 && i + 1 < argc) only_id = argv[++i];
    else if (strcmp(argv[i], "--max-evaluations") == 0 && i + 1 < argc)
      max_evals = strtoull(argv[++i], NULL, 10);
    else path = argv[i];
  }
  if (!path) {
    fprintf(stderr, "usage: verify_candidates [--backend B] [--per K] [--seed N] [--strategy S] "
                    "[--max-evaluations N] [--id ID] SOURCES.jsonl\n");
    return 2;
  }
  source *src;
  size_t n = load_sources(path, &src);
  leir_backend *b;
  if (!n || leir_backend_open(&b, backend, NULL) != LEIR_OK) {
    fprintf(stderr, "cannot start: %s\n", leir_error_last()->message);
    return 3;
  }
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.flags |= LEIR_VERIFY_STRICT_PARALLEL;
  size_t checked[LEIR_STRATEGY_COUNT] = {0}, failed[LEIR_STRATEGY_COUNT] = {0};
  size_t close_n = 0, total_bad = 0, total = 0;
  double t0 = now();
  for (size_t i = 0; i < n; i++) {
    if (only_id && strcmp(only_id, src[i].id) != 0) continue;
    /* P/V/B loops must stay legal: strict when the source itself is legal
     * under the strict rule (some sources bind reduction loops) */
    leir_verify_options use = vo;
    {
      leir_verify_report *r0 = NULL;
      if (leir_verify(b, src[i].program, src[i].program, &vo, &r0) == LEIR_OK &&
          r0->verdict == LEIR_VERDICT_INVALID)
        use.flags &= ~LEIR_VERIFY_STRICT_PARALLEL;
      leir_verify_report_free(r0);
    }
    leir_program_cost cost;
    if (max_evals && leir_program_cost_get(src[i].program, &cost) == LEIR_OK &&
        cost.evaluations > max_evals)
      continue;
    for (size_t s = 0; s < leir_strategy_count(); s++) {
      leir_strategy_info info = *leir_strategy_info_at(s);
      if (!info.implemented || (only && strcmp(only, info.name) != 0)) continue;
      leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
      o.strategy = (int32_t)s;
      leir_candidates *c;
      if (leir_candidates_list(&c, src[i].program, &o) != LEIR_OK) {
        printf("LIST-ERROR %s: %s\n", src[i].id, leir_error_last()->message);
        total_bad++;
        continue;
      }
      size_t m = leir_candidates_count(c);
      size_t take = per > 0 && (size_t)per < m ? (size_t)per : m;
      for (size_t t = 0; t < take; t++) {
        /* a seeded sample without repetition: stride through a shuffled start */
        size_t k = per > 0 && (size_t)per < m
                       ? (size_t)((mix(seed ^ (i * 1000003u) ^ (s << 40)) + t * (m / take)) % m)
                       : t;
        leir_program *q = NULL;
        leir_verify_report *r = NULL;
        const leir_step *st = leir_candidates_step(c, k);
        bool exact = leir_candidates_exactness(c, k) == LEIR_EXACT;
        if (leir_candidates_apply(&q, c, k) != LEIR_OK ||
            leir_verify(b, src[i].program, q, &use, &r) != LEIR_OK) {
          printf("ERROR %s %s: %s\n", src[i].id, leir_step_text(st), leir_error_last()->message);
          total_bad++;
          failed[s]++;
        } else {
          bool ok = exact ? r->verdict == LEIR_VERDICT_EQUAL : leir_verdict_passes(r->verdict);
          if (r->verdict == LEIR_VERDICT_CLOSE) close_n++;
          if (!ok) {
            printf("FAIL %s %s %s: %s %s\n", src[i].id, leir_step_text(st), exact ? "exact" : "reassociating",
                   leir_verdict_name(r->verdict), r->message);
            failed[s]++;
            total_bad++;
          }
        }
        checked[s]++;
        total++;
        leir_verify_report_free(r);
        leir_program_free(q);
      }
      leir_candidates_free(c);
      fflush(stdout);
    }
  }
  printf("\n%-26s %9s %7s\n", "strategy", "verified", "failed");
  for (size_t s = 0; s < LEIR_STRATEGY_COUNT; s++) {
    if (!checked[s]) continue;
    leir_strategy_info info = *leir_strategy_info_at(s);
    printf("%-26s %9zu %7zu\n", info.name, checked[s], failed[s]);
  }
  printf("%zu candidates verified on %s in %.1fs: %zu failed, %zu CLOSE\n", total, backend,
         now() - t0, total_bad, close_n);
  leir_backend_free(b);
  free_sources(src, n);
  return total_bad ? 1 : 0;
}
