/* Search quality: every algorithm with the cost-model policy on workloads of
 * the catalogue (default shapes), each from its naive LEIR, on the CPU
 * backend; the mean and peak speedup over the source program (measured
 * side by side at the end of each search).
 *
 *   bench/search [--workloads N] [--samples N] [--shape default|small]
 *                [--rounds N] [--max-rounds N] [--compare-time S] [--threads N]
 *                [--db FILE] [--time S] [--algorithms greedy,beam,...] [--max-evals N]
 *
 * Workloads are taken evenly across the catalogue (LEIR_WORKLOADS_DIR);
 * those whose naive program does more than --max-evals equation evaluations
 * (default 2^28) are skipped, with the reason, so one slow workload cannot
 * take the whole run.
 *
 * What makes 20 workloads x 6 algorithms x 100 samples feasible on a small
 * machine: every algorithm shares one measurement database (--db; default a
 * fresh file bench-search.db in the working directory), so a (program,
 * parent) pair one algorithm measured is reused by the next with the same
 * decision; the backend runs kernels and verification on --threads 1 (the
 * default: parallel kernels on a shared machine mostly measure OpenMP
 * threads waiting for a core); and each comparison is at least --rounds 5
 * and at most --max-rounds 50 paired rounds or --compare-time 2 s (the
 * library's default, 10 to 400 rounds or 20 s, is for a quiet machine).
 * --time S caps one search's wall time (default: none). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"
#include "leir/experimental/workload.h"
#include "leir/leir.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  unsigned nwork = 20, samples = 100, rounds = 5, max_rounds = 50, threads = 1;
  double compare_time = 2, max_evals = (double)(1ull << 28), search_time = 0;
  const char *shape = "default", *db_path = "bench-search.db", *algs = "greedy,beam,bfs,dfs,mcts,chain";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--workloads")) nwork = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--samples")) samples = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--max-rounds")) max_rounds = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--time")) search_time = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads")) threads = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--compare-time")) compare_time = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--max-evals")) max_evals = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--shape")) shape = argv[i + 1];
    else if (!strcmp(argv[i], "--db")) db_path = argv[i + 1];
    else if (!strcmp(argv[i], "--algorithms")) algs = argv[i + 1];
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  leir_catalog *cat = NULL;
  if (leir_catalog_open(&cat, NULL) != LEIR_OK) {
    fprintf(stderr, "catalogue: %s (set LEIR_WORKLOADS_DIR)\n", leir_error_last()->message);
    return 1;
  }
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = threads;
  leir_backend *b = NULL;
  if (leir_backend_open(&b, "cpu", &bo) != LEIR_OK) {
    fprintf(stderr, "cpu backend: %s\n", leir_error_last()->message);
    return 1;
  }
  leir_db *db = NULL;
  if (*db_path && leir_db_open(&db, db_path) != LEIR_OK) {
    fprintf(stderr, "db: %s\n", leir_error_last()->message);
    return 1;
  }
  leir_search_algorithm alist[6];
  size_t nalg = 0;
  char abuf[128];
  snprintf(abuf, sizeof abuf, "%s", algs);
  for (char *t = strtok(abuf, ","); t && nalg < 6; t = strtok(NULL, ","))
    if (leir_search_algorithm_from_name(t, &alist[nalg]) == LEIR_OK) nalg++;
  size_t count = leir_catalog_count(cat);
  double sum[6] = {0}, logsum[6] = {0}, peak[6] = {0}, secs[6] = {0};
  unsigned done[6] = {0}, accepted_runs[6] = {0};
  unsigned long measured[6] = {0}, evaluated[6] = {0};
  double load0[3] = {0}, t_start = now_s();
  FILE *lf = fopen("/proc/loadavg", "r");
  if (lf) {
    if (fscanf(lf, "%lf %lf %lf", &load0[0], &load0[1], &load0[2]) != 3) load0[0] = -1;
    fclose(lf);
  }
  printf("# search benchmark: %u workloads (shape %s), %u samples each, cost policy, cpu backend "
         "(%u threads), compare %u-%u rounds / %g s, db %s, load %.2f %.2f %.2f\n", nwork, shape,
         samples, threads, rounds, max_rounds, compare_time, *db_path ? db_path : "(none)",
         load0[0], load0[1], load0[2]);
  printf("%-52s", "workload");
  for (size_t a = 0; a < nalg; a++) printf(" %9s", leir_search_algorithm_name(alist[a]));
  printf("\n");
  unsigned used = 0;
  for (size_t k = 0; k < count && used < nwork; k++) {
    /* evenly across the catalogue, then the rest in order */
    size_t idx = (k * 7919) % count;
    const leir_workload *w = leir_catalog_get(cat, idx);
    leir_emit_options eo = LEIR_EMIT_OPTIONS_INIT;
    eo.shape = strcmp(shape, "small") == 0 ? LEIR_SHAPE_SMALL : LEIR_SHAPE_DEFAULT;
    leir_program *p = NULL;
    if (leir_workload_emit(w, &eo, NULL, &p, NULL, 0) != LEIR_OK) continue;
    leir_program_cost c;
    if (leir_program_cost_get(p, &c) != LEIR_OK || (double)c.evaluations > max_evals) {
      printf("# skipped %s: %.3g evaluations\n", leir_workload_name(w), (double)c.evaluations);
      leir_program_free(p);
      continue;
    }
    used++;
    printf("%-52s", leir_workload_name(w));
    fflush(stdout);
    for (size_t a = 0; a < nalg; a++) {
      leir_compare_options co = LEIR_COMPARE_OPTIONS_INIT;
      co.min_rounds = rounds;
      co.max_rounds = max_rounds > rounds ? max_rounds : rounds;
      co.max_seconds = compare_time;
      leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
      o.algorithm = alist[a];
      o.policy = LEIR_POLICY_COST;
      o.max_samples = samples;
      o.max_seconds = search_time;
      o.compare = &co;
      o.db = db;
      leir_search_result *r = NULL;
      double t0 = now_s();
      leir_status st = leir_search_run(&r, b, p, &o);
      secs[a] += now_s() - t0;
      if (st != LEIR_OK) {
        printf(" %9s", "error");
        fprintf(stderr, "%s %s: %s\n", leir_workload_name(w),
                leir_search_algorithm_name(alist[a]), leir_error_last()->message);
        leir_search_result_free(r);
        continue;
      }
      leir_search_summary s = {.size = sizeof s};
      leir_search_result_summary(r, &s);
      double sp = s.final_speedup > 0 ? s.final_speedup : 1.0;
      printf(" %8.2fx", sp);
      fflush(stdout);
      sum[a] += sp;
      logsum[a] += log(sp);
      if (sp > peak[a]) peak[a] = sp;
      if (s.accepted) accepted_runs[a]++;
      measured[a] += s.measured;
      evaluated[a] += s.samples;
      done[a]++;
      leir_search_result_free(r);
    }
    printf("\n");
    leir_program_free(p);
  }
  printf("\n%-12s %10s %10s %10s %12s %10s %10s %10s\n", "algorithm", "mean", "geomean", "peak",
         "improved", "samples", "measured", "seconds");
  for (size_t a = 0; a < nalg; a++)
    printf("%-12s %9.2fx %9.2fx %9.2fx %6u/%-5u %10lu %10lu %10.0f\n",
           leir_search_algorithm_name(alist[a]), done[a] ? sum[a] / done[a] : 0,
           done[a] ? exp(logsum[a] / done[a]) : 0, peak[a], accepted_runs[a], done[a],
           evaluated[a], measured[a], secs[a]);
  double load1[3] = {0};
  lf = fopen("/proc/loadavg", "r");
  if (lf) {
    if (fscanf(lf, "%lf %lf %lf", &load1[0], &load1[1], &load1[2]) != 3) load1[0] = -1;
    fclose(lf);
  }
  printf("# samples: proposals evaluated; measured: of those, measured now (the rest came from "
         "the database)\n# wall %.0f s, load at the end %.2f %.2f %.2f\n", now_s() - t_start,
         load1[0], load1[1], load1[2]);
  leir_db_free(db);
  leir_backend_free(b);
  leir_catalog_free(cat);
  return 0;
}
