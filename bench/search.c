/* Search quality: every algorithm with the cost-model policy on workloads of
 * the catalogue (default shapes), each from its naive LEIR, on the CPU
 * backend; the mean and peak speedup over the source program (measured
 * side by side at the end of each search).
 *
 *   bench/search [--workloads N] [--samples N] [--shape default|small]
 *                [--rounds N] [--max-rounds N] [--compare-time S] [--threads N]
 *                [--db FILE] [--time S] [--algorithms greedy,beam,...] [--max-evals N]
 *                [--from K] [--fp-contract 0|1]
 *
 * Workloads are taken evenly across the catalogue (LEIR_WORKLOADS_DIR);
 * those whose naive program does more than --max-evals equation evaluations
 * (default 2^28) are skipped, with the reason, so one slow workload cannot
 * take the whole run. --from K skips the first K of those N workloads, so
 * that a long run can be continued in another invocation (with the same
 * --db, the workloads already done are not measured again anyway).
 *
 *   bench/search --matmul N [--samples 200] [--threads T] [--algorithms A]
 *                [--lookahead D[,D...]] [--trajectory F.jsonl] [--rounds R]
 *                [--compare-time S] [--time S] [--db FILE|''] [--partial-fusion 0|1]
 *                [--reduction-lanes 0|1] [--lookahead-width W] [--lookahead-evals N]
 *                [--fp-contract 0|1]
 *   bench/search --softmax N [same options]
 *   bench/search --layernorm N [same options]
 *
 * The matmul benchmark of issue 15: the search (each algorithm of
 * --algorithms, each lookahead depth of --lookahead (default 0: none; "6,0"
 * runs the search with a 6-step lookahead in the cost model, then without),
 * cost policy, every divisor for splits and tilings, vector width 16) from
 * the naive N^3 f32 matmul within --samples measured samples; then every
 * best program found, timed side by side with the source in 7 alternating
 * rounds, each followed by OpenBLAS sgemm in a process of its own
 * (bench/sgemm, same thread count): median and IQR GFLOP/s, the share of
 * OpenBLAS's median, and the load. --softmax N does the same from the
 * naive softmax of the catalogue (workload softmax, batch_size = dim = N,
 * f32; needs LEIR_WORKLOADS_DIR) against a copy kernel (P rows, V columns)
 * timed in the same rounds, in GB/s of input and output; --layernorm N
 * from bench/softmax's naive row layernorm (N x N f32, gain and bias per
 * column; three L nests: mean, variance, output), counting the gain and
 * bias too. In these modes
 * the database is off unless --db names one (--db '' : none), and
 * operator_fusion also offers fusions over leading loops only and
 * reduction_factorization its lanes form (LEIR_CANDIDATES_PARTIAL_FUSION,
 * LEIR_CANDIDATES_REDUCTION_LANES; --partial-fusion 0, --reduction-lanes 0
 * turn them off). --lookahead-width and --lookahead-evals set the
 * lookahead's beam width and model evaluations per node (the library's
 * defaults otherwise: 32 and 200000). --fp-contract 1 (any mode) opens the
 * backend with LEIR_BACKEND_FP_CONTRACT: fused multiply-add, as OpenBLAS.
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

#include "sgemm_child.h"

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"
#include "leir/experimental/workload.h"
#include "leir/leir.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct traj_out {
  FILE *f;
} traj_out;

static int on_record(void *payload, const leir_search_record *r) {
  traj_out *t = payload;
  printf("  %3u d%u %-60.60s %s", r->sample, r->depth, r->step,
         r->node >= 0 ? "accepted" : leir_search_reject_name(r->reject));
  if (r->measured && r->m.ratio > 0) printf(" ratio %.3f", r->m.ratio);
  if (r->node >= 0) printf(" speedup %.2fx", r->speedup);
  printf("\n");
  fflush(stdout);
  if (t->f) {
    char *line = NULL;
    size_t len = 0;
    if (leir_search_record_json(r, &line, &len) == LEIR_OK) fprintf(t->f, "%s\n", line);
    leir_free(line);
  }
  return 0;
}

/* Times the programs `ps` (the source first) in `rounds` alternating
 * rounds (leir_bench: caches flushed, median per round); with sgemm_n > 0
 * each round is followed by OpenBLAS sgemm (n = sgemm_n) in its own process
 * (bench/sgemm, same thread count), the reference of the last column; else
 * the reference is program `ref` of `ps` (a copy kernel). `work` is the
 * FLOP (unit "GFLOP/s") or bytes (unit "GB/s") of one run. */
#define MAXP 8
static int compare_table(leir_backend *b, const leir_program *const *ps, const char *const *names,
                         int np, int rounds, int sgemm_n, int ref, double work, const char *unit) {
  enum { MAXR = 32 };
  double rm[MAXP + 1][MAXR], bestrun[MAXP + 1];
  uint32_t threads = 1;
  int sg_ok = sgemm_n > 0;
  char load0[64], load1[64];
  if (rounds > MAXR) rounds = MAXR;
  for (int i = 0; i <= MAXP; i++) bestrun[i] = 1e30;
  bench_load(load0, sizeof load0);
  for (int r = 0; r < rounds; r++) {
    leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
    bo.warmup = r == 0 ? 3 : 1;
    bo.min_runs = 3;
    bo.min_seconds = 0;
    leir_timing tm[MAXP];
    if (leir_bench(b, ps, (size_t)np, &bo, tm) != LEIR_OK) {
      fprintf(stderr, "bench: %s\n", leir_error_last()->message);
      return 1;
    }
    threads = tm[0].threads;
    for (int i = 0; i < np; i++) {
      rm[i][r] = tm[i].median_s;
      if (tm[i].min_s < bestrun[i]) bestrun[i] = tm[i].min_s;
    }
    if (sg_ok) {
      double t[16];
      bench_settle();
      int got = bench_sgemm_run(sgemm_n, (int)threads, 5, t, 16);
      if (got <= 0) sg_ok = 0;
      else {
        for (int k = 0; k < got; k++)
          if (t[k] < bestrun[np]) bestrun[np] = t[k];
        rm[np][r] = bench_quantile(t, (size_t)got, 0.5);
      }
      bench_settle();
    }
  }
  bench_load(load1, sizeof load1);
  int nrow = np + (sg_ok ? 1 : 0), refrow = sgemm_n > 0 ? (sg_ok ? np : -1) : ref;
  printf("\n%d rounds, %u threads; load average before %s, after %s\n\n", rounds, threads, load0,
         load1);
  printf("| program | median ms | IQR ms | best ms | %s (median) | of the reference |\n"
         "|---|---:|---:|---:|---:|---:|\n", unit);
  double refmed = refrow >= 0 ? bench_quantile(rm[refrow], (size_t)rounds, 0.5) : 0;
  for (int i = 0; i < nrow; i++) {
    double med = bench_quantile(rm[i], (size_t)rounds, 0.5);
    double q1 = bench_quantile(rm[i], (size_t)rounds, 0.25),
           q3 = bench_quantile(rm[i], (size_t)rounds, 0.75);
    char of[32] = "";
    if (refrow >= 0) snprintf(of, sizeof of, "%.0f%%", 100 * refmed / med);
    printf("| %s | %.2f | %.2f-%.2f | %.2f | %.2f | %s |\n",
           i < np ? names[i] : "OpenBLAS sgemm (own process)", med * 1e3, q1 * 1e3, q3 * 1e3,
           bestrun[i] * 1e3, work / med * 1e-9, of);
  }
  if (sgemm_n > 0 && !sg_ok)
    printf("| OpenBLAS sgemm | (bench/sgemm missing or OpenBLAS not found) |||||\n");
  return 0;
}

/* Runs the searches of issue 15 from `p` (each algorithm of `algs`, each
 * lookahead depth of `lookaheads`: "0" is the plain cost policy), then
 * times every best program side by side with the source and the
 * reference (OpenBLAS for the matmul, `extra` for softmax). */
/* LEIR_CANDIDATES_* flags of the --matmul and --softmax searches beyond
 * every divisor (--partial-fusion, --reduction-lanes). */
static uint32_t kernel_search_flags =
    LEIR_CANDIDATES_PARTIAL_FUSION | LEIR_CANDIDATES_REDUCTION_LANES;
/* the lookahead's beam width and model evaluations per node (0: the
 * library's defaults, 32 and 200000; --lookahead-width, --lookahead-evals) */
static uint32_t lookahead_width;
static double lookahead_evals;
/* LEIR_BACKEND_* flags of every backend opened (--fp-contract 1:
 * LEIR_BACKEND_FP_CONTRACT, fused multiply-add as OpenBLAS uses) */
static uint32_t backend_flags;

static int run_workload(const char *what, leir_program *p, unsigned samples, unsigned threads,
                        unsigned rounds, double compare_time, double max_time, const char *algs,
                        const char *lookaheads, const char *traj, leir_db *db, int sgemm_n,
                        const leir_program *extra, const char *extra_name, double work,
                        const char *unit) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = threads;
  bo.flags |= backend_flags;
  leir_backend *b = NULL;
  if (leir_backend_open(&b, "cpu", &bo) != LEIR_OK) {
    fprintf(stderr, "cpu backend: %s\n", leir_error_last()->message);
    return 1;
  }
  traj_out t = {NULL};
  if (traj && !(t.f = fopen(traj, "w"))) {
    fprintf(stderr, "cannot write %s\n", traj);
    leir_backend_free(b);
    return 1;
  }
  const leir_program *ps[MAXP];
  static char names[MAXP][160];
  const char *pn[MAXP];
  leir_search_result *results[MAXP];
  int np = 0, nres = 0, rc = 0;
  ps[np] = p;
  snprintf(names[np], sizeof names[np], "naive LEIR (source)");
  pn[np] = names[np];
  np++;
  if (extra) {
    ps[np] = extra;
    snprintf(names[np], sizeof names[np], "%s", extra_name);
    pn[np] = names[np];
    np++;
  }
  char abuf[128];
  snprintf(abuf, sizeof abuf, "%s", algs);
  char *asave = NULL;
  for (char *a = strtok_r(abuf, ",", &asave); a && !rc; a = strtok_r(NULL, ",", &asave)) {
    leir_search_algorithm alg;
    if (leir_search_algorithm_from_name(a, &alg) != LEIR_OK) continue;
    char lbuf[128];
    snprintf(lbuf, sizeof lbuf, "%s", lookaheads);
    char *lsave = NULL;
    for (char *d = strtok_r(lbuf, ",", &lsave); d && !rc && np < MAXP;
         d = strtok_r(NULL, ",", &lsave)) {
      unsigned depth = (unsigned)atoi(d);
      leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
      co.flags |= LEIR_CANDIDATES_ALL_DIVISORS | kernel_search_flags;
      co.vector_width = 16;
      leir_compare_options cmp = LEIR_COMPARE_OPTIONS_INIT;
      cmp.min_rounds = rounds;
      cmp.max_seconds = compare_time;
      leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
      o.algorithm = alg;
      o.policy = LEIR_POLICY_COST;
      o.max_samples = samples;
      o.max_seconds = max_time;
      o.candidates = &co;
      o.compare = &cmp;
      o.db = db;
      o.flags |= LEIR_SEARCH_NO_FINAL_COMPARE;
      o.on_record = on_record;
      o.record_payload = &t;
      o.lookahead_depth = depth;
      if (lookahead_width) o.lookahead_width = lookahead_width;
      if (lookahead_evals > 0) o.lookahead_evals = (uint64_t)lookahead_evals;
      char lb0[64];
      bench_load(lb0, sizeof lb0);
      printf("# %s: %s search, cost policy, lookahead %u (width %u, %llu evaluations), all "
             "divisors%s%s, vector width 16, %u samples, %g s%s; load %s\n",
             what, a, depth, o.lookahead_width, (unsigned long long)o.lookahead_evals,
             kernel_search_flags & LEIR_CANDIDATES_PARTIAL_FUSION ? ", partial fusion" : "",
             kernel_search_flags & LEIR_CANDIDATES_REDUCTION_LANES ? ", reduction lanes" : "",
             samples, max_time,
             backend_flags & LEIR_BACKEND_FP_CONTRACT ? ", fused multiply-add (--fp-contract)" : "",
             lb0);
      double t0 = now_s();
      leir_search_result *r = NULL;
      if (leir_search_run(&r, b, p, &o) != LEIR_OK) {
        fprintf(stderr, "search: %s\n", leir_error_last()->message);
        rc = 1;
        break;
      }
      leir_search_summary s = {.size = sizeof s};
      leir_search_result_summary(r, &s);
      char *steps = NULL;
      size_t sl = 0;
      leir_search_result_best_steps(r, &steps, &sl);
      char *bt = NULL;
      size_t bl = 0;
      leir_program_print(leir_search_result_best(r), 0, &bt, &bl);
      printf("\n%s, lookahead %u: %u samples (%u measured) in %.0f s, %u lookahead(s) with %llu "
             "model evaluations; best path %.2fx over the source in %u step(s):\n%s\nbest "
             "program: %s\n\n",
             a, depth, s.samples, s.measured, now_s() - t0, s.lookaheads,
             (unsigned long long)s.lookahead_evals, s.best_speedup, s.best_depth,
             steps ? steps : "", bt ? bt : "");
      free(steps);
      free(bt);
      results[nres++] = r;
      ps[np] = leir_search_result_best(r);
      snprintf(names[np], sizeof names[np], "best of %s, lookahead %u (%u step(s))", a, depth,
               s.best_depth);
      pn[np] = names[np];
      np++;
    }
  }
  if (!rc) rc = compare_table(b, ps, pn, np, 7, sgemm_n, extra ? 1 : -1, work, unit);
  for (int i = 0; i < nres; i++) leir_search_result_free(results[i]);
  if (t.f) fclose(t.f);
  leir_backend_free(b);
  return rc;
}

static int run_matmul(int n, unsigned samples, unsigned threads, unsigned rounds,
                      double compare_time, double max_time, const char *algs,
                      const char *lookaheads, const char *traj, leir_db *db) {
  char text[512];
  snprintf(text, sizeof text,
           "L^{%d}_{a=0}L^{%d}_{c=0}L^{%d}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
           "C^{f32,g}_{d,c};];",
           n, n, n);
  leir_program *p = NULL;
  if (leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK ||
      leir_program_infer_signature(p) != LEIR_OK) {
    fprintf(stderr, "matmul: %s\n", leir_error_last()->message);
    leir_program_free(p);
    return 1;
  }
  char what[64];
  snprintf(what, sizeof what, "matmul %d^3 f32", n);
  int rc = run_workload(what, p, samples, threads, rounds, compare_time, max_time, algs,
                        lookaheads, traj, db, n, NULL, NULL, 2.0 * n * n * n, "GFLOP/s");
  leir_program_free(p);
  return rc;
}

/* A search from p (rows of an n x n f32 input) against the copy kernel
 * (P rows, V columns) timed in the same rounds; `bytes` per run for GB/s. */
static int run_rows(const char *what, leir_program *p, int n, double bytes,
                    unsigned samples, unsigned threads, unsigned rounds, double compare_time,
                    double max_time, const char *algs, const char *lookaheads, const char *traj,
                    leir_db *db) {
  char text[256];
  snprintf(text, sizeof text, "P^{%d}_{a=0}V^{%d}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c};];", n, n);
  leir_program *copy = NULL;
  if (leir_program_parse(&copy, text, strlen(text), NULL) != LEIR_OK ||
      leir_program_infer_signature(copy) != LEIR_OK) {
    fprintf(stderr, "copy: %s\n", leir_error_last()->message);
    leir_program_free(copy);
    return 1;
  }
  int rc = run_workload(what, p, samples, threads, rounds, compare_time,
                        max_time, algs, lookaheads, traj, db, 0, copy,
                        "copy (P rows, V columns)", bytes, "GB/s");
  leir_program_free(copy);
  return rc;
}

/* The naive softmax of the catalogue (workloads/level1_softmax.yaml) at
 * batch_size = dim = n, f32, against a copy kernel (P rows, V columns) in
 * the same rounds; GB/s counts the input and the output. */
static int run_softmax(int n, unsigned samples, unsigned threads, unsigned rounds,
                       double compare_time, double max_time, const char *algs,
                       const char *lookaheads, const char *traj, leir_db *db) {
  leir_catalog *cat = NULL;
  if (leir_catalog_open(&cat, NULL) != LEIR_OK) {
    fprintf(stderr, "catalogue: %s (set LEIR_WORKLOADS_DIR)\n", leir_error_last()->message);
    return 1;
  }
  const leir_workload *w = NULL;
  for (size_t i = 0; i < leir_catalog_count(cat) && !w; i++)
    if (strcmp(leir_workload_name(leir_catalog_get(cat, i)), "softmax") == 0)
      w = leir_catalog_get(cat, i);
  leir_program *p = NULL;
  double args[2] = {n, n};
  leir_emit_options eo = LEIR_EMIT_OPTIONS_INIT;
  eo.args = args;
  eo.nargs = 2;
  eo.dtype = "f32";
  if (!w || leir_workload_emit(w, &eo, NULL, &p, NULL, 0) != LEIR_OK) {
    fprintf(stderr, "softmax workload: %s\n", w ? leir_error_last()->message : "not in the catalogue");
    leir_catalog_free(cat);
    return 1;
  }
  char what[64];
  snprintf(what, sizeof what, "softmax %d x %d f32 (workload softmax)", n, n);
  int rc = run_rows(what, p, n, 2.0 * 4.0 * n * n, samples, threads, rounds, compare_time,
                    max_time, algs, lookaheads, traj, db);
  leir_program_free(p);
  leir_catalog_free(cat);
  return rc;
}

/* bench/softmax's naive row layernorm, n x n f32, against the copy kernel;
 * GB/s counts the input, the output, the gain and the bias. */
static int run_layernorm(int n, unsigned samples, unsigned threads, unsigned rounds,
                         double compare_time, double max_time, const char *algs,
                         const char *lookaheads, const char *traj, leir_db *db) {
  char text[2048];
#define LN_MEAN "M^{f32,g}_{a}/%d"
  snprintf(text, sizeof text,
           "L^{%d}_{a=0}L^{%d}_{c=0}[M^{f32,g}_{a}=M^{f32,g}_{a}+A^{f32,g}_{a,c};];"
           "L^{%d}_{a=0}L^{%d}_{c=0}[R^{f32,g}_{a}=R^{f32,g}_{a}+(A^{f32,g}_{a,c}-" LN_MEAN ")*"
           "(A^{f32,g}_{a,c}-" LN_MEAN ");];"
           "L^{%d}_{a=0}L^{%d}_{c=0}[C^{f32,g}_{a,c}=(A^{f32,g}_{a,c}-" LN_MEAN
           ")/sqrt(R^{f32,g}_{a}/%d+0.00001)*G^{f32,g}_{c}+H^{f32,g}_{c};];",
           n, n, n, n, n, n, n, n, n, n);
#undef LN_MEAN
  leir_program *p = NULL;
  if (leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK ||
      leir_program_infer_signature(p) != LEIR_OK) {
    fprintf(stderr, "layernorm: %s\n", leir_error_last()->message);
    leir_program_free(p);
    return 1;
  }
  char what[64];
  snprintf(what, sizeof what, "layernorm %d x %d f32", n, n);
  int rc = run_rows(what, p, n, 4.0 * (2.0 * n * n + 2.0 * n), samples, threads, rounds,
                    compare_time, max_time, algs, lookaheads, traj, db);
  leir_program_free(p);
  return rc;
}

int main(int argc, char **argv) {
  /* 0: the default of the mode (the workloads run or --matmul) */
  unsigned nwork = 20, samples = 0, rounds = 0, max_rounds = 50, threads = 0, from = 0;
  double compare_time = 0, max_evals = (double)(1ull << 28), search_time = 0;
  const char *shape = "default", *db_path = NULL, *algs = NULL, *traj = NULL;
  const char *lookaheads = "0";
  int matmul_n = 0, softmax_n = 0, layernorm_n = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--workloads")) nwork = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--from")) from = (unsigned)atoi(argv[i + 1]);
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
    else if (!strcmp(argv[i], "--matmul")) matmul_n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--softmax")) softmax_n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--layernorm")) layernorm_n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--lookahead")) lookaheads = argv[i + 1];
    else if (!strcmp(argv[i], "--lookahead-width")) lookahead_width = (uint32_t)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--lookahead-evals")) lookahead_evals = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--trajectory")) traj = argv[i + 1];
    else if (!strcmp(argv[i], "--fp-contract"))
      backend_flags = atoi(argv[i + 1]) ? backend_flags | LEIR_BACKEND_FP_CONTRACT
                                        : backend_flags & ~LEIR_BACKEND_FP_CONTRACT;
    else if (!strcmp(argv[i], "--partial-fusion"))
      kernel_search_flags = atoi(argv[i + 1]) ? kernel_search_flags | LEIR_CANDIDATES_PARTIAL_FUSION
                                              : kernel_search_flags & ~LEIR_CANDIDATES_PARTIAL_FUSION;
    else if (!strcmp(argv[i], "--reduction-lanes"))
      kernel_search_flags = atoi(argv[i + 1])
                                ? kernel_search_flags | LEIR_CANDIDATES_REDUCTION_LANES
                                : kernel_search_flags & ~LEIR_CANDIDATES_REDUCTION_LANES;
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  bool kernel = matmul_n > 0 || softmax_n > 0 || layernorm_n > 0;
  if (!samples) samples = kernel ? 200 : 100;
  if (kernel) {
    if (!rounds) rounds = 10;
    if (!compare_time) compare_time = 20;
    leir_db *mdb = NULL;
    if (db_path && *db_path && leir_db_open(&mdb, db_path) != LEIR_OK) {
      fprintf(stderr, "db: %s\n", leir_error_last()->message);
      return 1;
    }
    int rc = matmul_n > 0
                 ? run_matmul(matmul_n, samples, threads, rounds, compare_time, search_time,
                              algs ? algs : "greedy", lookaheads, traj, mdb)
                 : softmax_n > 0
                 ? run_softmax(softmax_n, samples, threads, rounds, compare_time, search_time,
                               algs ? algs : "greedy", lookaheads, traj, mdb)
                 : run_layernorm(layernorm_n, samples, threads, rounds, compare_time, search_time,
                                 algs ? algs : "greedy", lookaheads, traj, mdb);
    leir_db_free(mdb);
    return rc;
  }
  if (!algs) algs = "greedy,beam,bfs,dfs,mcts,chain";
  if (!rounds) rounds = 5;
  if (!compare_time) compare_time = 2;
  if (!threads) threads = 1;
  if (!db_path) db_path = "bench-search.db";
  leir_catalog *cat = NULL;
  if (leir_catalog_open(&cat, NULL) != LEIR_OK) {
    fprintf(stderr, "catalogue: %s (set LEIR_WORKLOADS_DIR)\n", leir_error_last()->message);
    return 1;
  }
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = threads;
  bo.flags |= backend_flags;
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
         "(%u threads%s), compare %u-%u rounds / %g s, db %s, load %.2f %.2f %.2f\n", nwork,
         shape, samples, threads, backend_flags & LEIR_BACKEND_FP_CONTRACT ? ", fp-contract" : "",
         rounds, max_rounds, compare_time, *db_path ? db_path : "(none)", load0[0], load0[1],
         load0[2]);
  if (from > 0) printf("# --from %u: workloads %u to %u of the %u\n", from, from + 1, nwork, nwork);
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
    if (used++ < from) { /* run by an earlier invocation (--from) */
      leir_program_free(p);
      continue;
    }
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
