/*
 * Candidates per second: enumerate + apply + print, over a corpus of
 * programs (by default the default-shape corpus; they are transformed,
 * never run), per implemented strategy and in total.
 *
 *   bench_candidates [--repeat N] [--strategy S] SOURCES.jsonl
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sources.h"

/* CPU time of this process: the machines these run on are shared, and
 * wall time would measure the neighbours. */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Enumerates strategy s on every program, applies and prints every
 * candidate; returns the number of candidates. */
static size_t sweep(const source *src, size_t n, int s, size_t *bytes) {
  size_t count = 0;
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  o.strategy = s;
  for (size_t i = 0; i < n; i++) {
    leir_candidates *c = NULL;
    if (leir_candidates_list(&c, src[i].program, &o) != LEIR_OK) {
      fprintf(stderr, "%s: %s\n", src[i].id, leir_error_last()->message);
      continue;
    }
    size_t m = leir_candidates_count(c);
    for (size_t k = 0; k < m; k++) {
      leir_program *q = NULL;
      char *text = NULL;
      size_t len = 0;
      if (leir_candidates_apply(&q, c, k) != LEIR_OK || leir_program_print(q, 0, &text, &len) != LEIR_OK) {
        fprintf(stderr, "%s: %s: %s\n", src[i].id, leir_step_text(leir_candidates_step(c, k)),
                leir_error_last()->message);
        exit(3);
      }
      *bytes += len;
      leir_free(text);
      leir_program_free(q);
    }
    count += m;
    leir_candidates_free(c);
  }
  return count;
}

int main(int argc, char **argv) {
  int repeat = 3;
  const char *path = NULL, *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = atoi(argv[++i]);
    else if (strcmp(argv[i], "--strategy") == 0 && i + 1 < argc)
      only = argv[++i];
    else
      path = argv[i];
  }
  if (!path || repeat < 1) {
    fprintf(stderr, "usage: bench_candidates [--repeat N] [--strategy S] SOURCES.jsonl\n");
    return 2;
  }
  source *src;
  size_t n = load_sources(path, &src);
  if (!n) return 1;
  printf("%zu programs from %s, best of %d runs, CPU seconds (one thread)\n\n", n, path, repeat);
  printf("%-26s %10s %10s %14s\n", "strategy", "candidates", "seconds", "candidates/s");
  size_t total = 0;
  double total_s = 0;
  for (size_t s = 0; s < leir_strategy_count(); s++) {
    leir_strategy_info info = *leir_strategy_info_at(s);
    if (!info.implemented || (only && strcmp(only, info.name) != 0)) continue;
    double best = 1e30;
    size_t count = 0, bytes = 0;
    for (int r = 0; r < repeat; r++) {
      double t0 = now();
      count = sweep(src, n, (int)s, &bytes);
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    printf("%-26s %10zu %10.3f %14.0f\n", info.name, count, best, count / best);
    total += count;
    total_s += best;
  }
  printf("%-26s %10zu %10.3f %14.0f\n", "sum of the above", total, total_s, total / total_s);
  if (!only) {
    /* one listing of every strategy per program: what a search does */
    double best = 1e30;
    size_t count = 0, bytes = 0;
    for (int r = 0; r < repeat; r++) {
      double t0 = now();
      count = sweep(src, n, -1, &bytes);
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    printf("%-26s %10zu %10.3f %14.0f\n", "all, one listing", count, best, count / best);
    printf("(%.1f MB of program text printed per sweep)\n", (double)bytes / (double)repeat / 1e6);
  }
  free_sources(src, n);
  return 0;
}
