/* leir bench: the timing protocol of verification.md §4 over several
 * programs, measured in alternation; speedups against the first. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "run_opts.h"

static bool is(const char *opt, const char *name) {
  size_t n = strlen(name);
  return strncmp(opt, name, n) == 0 && (opt[n] == '\0' || opt[n] == '=');
}

static int count(const char *opt, const char *v, uint32_t *out) {
  char *end;
  errno = 0;
  unsigned long x = strtoul(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || x > 1000000)
    return tool_usage_error("bench", "%s needs a count in 0..1000000, got '%s'", opt, v);
  *out = (uint32_t)x;
  return 0;
}

static int seconds(const char *opt, const char *v, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= 0))
    return tool_usage_error("bench", "%s needs seconds, got '%s'", opt, v);
  *out = x;
  return 0;
}

/* --compare: is the first program faster than the second, with confidence? */
static int run_compare(leir_backend *b, leir_program *const *progs, const run_opts *o,
                       const leir_bench_options *bo, char *const *names) {
  leir_kernel *k[2] = {NULL, NULL};
  leir_status st = LEIR_OK;
  for (int i = 0; i < 2 && st == LEIR_OK; i++) st = leir_kernel_new(&k[i], b, progs[i]);
  leir_comparison c = {.size = sizeof c};
  if (st == LEIR_OK) {
    leir_compare_options co = LEIR_COMPARE_OPTIONS_INIT;
    co.flags = bo->flags;
    co.warmup = bo->warmup;
    co.min_rounds = bo->min_runs;
    if (co.max_rounds < co.min_rounds) co.max_rounds = co.min_rounds;
    co.seed = bo->seed;
    st = leir_kernels_compare(k[0], k[1], &co, &c);
  }
  leir_kernel_free(k[0]);
  leir_kernel_free(k[1]);
  if (st != LEIR_OK) {
    fprintf(stderr, "leir bench: error: %s\n", leir_error_last()->message);
    return st == LEIR_ERR_RUNTIME || st == LEIR_ERR_TIMEOUT || st == LEIR_ERR_COMPILE
               ? EXIT_INVALID
               : tool_exit_for(st);
  }
  const char *na = tool_label(names[0]), *nb = tool_label(names[1]);
  if (o->json) {
    printf("{\"backend\":\"%s\",\"order\":\"%s\",\"ratio\":%.6g,\"ratio_lo\":%.6g,"
           "\"ratio_hi\":%.6g,\"confidence\":%.6g,\"rounds\":%u,\"threads\":%u,"
           "\"median_a_s\":%.9g,\"median_b_s\":%.9g,\"spread_a\":%.6g,\"spread_b\":%.6g}\n",
           leir_backend_get_name(b), leir_order_name(c.order), c.ratio, c.ratio_lo, c.ratio_hi,
           c.confidence, c.rounds, c.threads, c.a.median_s, c.b.median_s, c.a.spread,
           c.b.spread);
  } else {
    printf("%s is %s than %s", na,
           c.order == LEIR_ORDER_FASTER   ? "faster"
           : c.order == LEIR_ORDER_SLOWER ? "slower"
           : c.order == LEIR_ORDER_SAME   ? "as fast (within 2%)"
                                          : "undecided (neither faster nor slower)",
           nb);
    printf(": time(B)/time(A) median %.3f, %.1f%% interval [%.3f, %.3f], %u rounds, %u thread%s\n",
           c.ratio, 100.0 * c.confidence, c.ratio_lo, c.ratio_hi, c.rounds, c.threads,
           c.threads == 1 ? "" : "s");
    printf("  A %.4f ms (IQR %.1f%%), B %.4f ms (IQR %.1f%%)\n", c.a.median_s * 1e3,
           100.0 * c.a.spread, c.b.median_s * 1e3, 100.0 * c.b.spread);
  }
  return EXIT_OK;
}

int cmd_bench(int argc, char **argv) {
  run_opts o;
  run_opts_init(&o);
  leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
  bool compare = false;
  tool_args a;
  tool_args_init(&a, "bench", argc, argv);
  const char *opt, *v;
  while ((opt = tool_args_next(&a))) {
    int r = run_option(&o, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--no-flush") == 0) {
      bo.flags |= LEIR_BENCH_NO_FLUSH;
      continue;
    }
    if (strcmp(opt, "--compare") == 0) {
      compare = true;
      continue;
    }
    if (!is(opt, "--warmup") && !is(opt, "--runs") && !is(opt, "--max-runs") &&
        !is(opt, "--min-time") && !is(opt, "--max-time"))
      return tool_usage_error("bench", "unknown option %s", opt);
    if (!(v = tool_args_value(&a, opt))) return EXIT_USAGE;
    int bad = is(opt, "--warmup")     ? count("--warmup", v, &bo.warmup)
              : is(opt, "--runs")     ? count("--runs", v, &bo.min_runs)
              : is(opt, "--max-runs") ? count("--max-runs", v, &bo.max_runs)
              : is(opt, "--min-time") ? seconds("--min-time", v, &bo.min_seconds)
                                      : seconds("--max-time", v, &bo.max_seconds);
    if (bad) return EXIT_USAGE;
  }
  if (a.npositional < 1) return tool_usage_error("bench", "expected one or more programs");
  if (bo.min_runs < 1 || bo.max_runs < bo.min_runs)
    return tool_usage_error("bench", "need 1 <= --runs <= --max-runs");
  bo.seed = o.seed;
  size_t n = (size_t)a.npositional;
  if (n > 16) return tool_usage_error("bench", "at most 16 programs");
  if (compare && n != 2) return tool_usage_error("bench", "--compare needs exactly two programs");
  leir_program *progs[16] = {NULL};
  int rc = EXIT_OK;
  for (size_t i = 0; i < n && rc == EXIT_OK; i++)
    progs[i] = run_load(&o, a.positional[i], true, &rc);
  leir_backend *b = NULL;
  if (rc == EXIT_OK) rc = run_open_backend(&o, &b);
  leir_timing t[16];
  if (rc == EXIT_OK && compare) {
    rc = run_compare(b, progs, &o, &bo, a.positional);
    leir_backend_free(b);
    for (size_t i = 0; i < n; i++) leir_program_free(progs[i]);
    return rc;
  }
  if (rc == EXIT_OK) {
    leir_status st = leir_bench(b, (const leir_program *const *)progs, n, &bo, t);
    if (st != LEIR_OK) {
      const leir_error *e = leir_error_last();
      fprintf(stderr, "leir bench: error: %s\n", e->message);
      if (st == LEIR_ERR_COMPILE) fprintf(stderr, "%s\n", leir_backend_compile_log(b));
      rc = st == LEIR_ERR_RUNTIME || st == LEIR_ERR_TIMEOUT || st == LEIR_ERR_COMPILE
               ? EXIT_INVALID
               : tool_exit_for(st);
    }
  }
  if (rc == EXIT_OK) {
    if (!o.json)
      printf("backend %s, seed %" PRIu64 ", %u warm-up runs, >= %u runs and >= %g s per "
             "program, caches %s, %u thread%s\n"
             "%-3s %-28s %11s %11s %11s %7s %6s %9s %9s %8s\n",
             leir_backend_get_name(b), o.seed, bo.warmup, bo.min_runs, bo.min_seconds,
             bo.flags & LEIR_BENCH_NO_FLUSH ? "not flushed" : "flushed", t[0].threads,
             t[0].threads == 1 ? "" : "s", "#", "program", "median ms", "min ms", "max ms",
             "IQR %", "runs", "GFLOP/s", "GB/s", "speedup");
    for (size_t i = 0; i < n; i++) {
      const char *name = tool_label(a.positional[i]);
      if (o.json) {
        printf("{\"program\":");
        tool_json_string(stdout, name, strlen(name));
        printf(",\"backend\":\"%s\",\"median_s\":%.17g,\"min_s\":%.17g,\"max_s\":%.17g,"
               "\"mean_s\":%.17g,\"q1_s\":%.17g,\"q3_s\":%.17g,\"spread\":%.17g,\"noisy\":%s,"
               "\"threads\":%u,\"runs\":%u,\"flops\":%" PRIu64 ",\"bytes\":%" PRIu64
               ",\"gflops\":%.17g,\"gbytes_per_s\":%.17g,\"speedup\":%.17g}\n",
               leir_backend_get_name(b), t[i].median_s, t[i].min_s, t[i].max_s, t[i].mean_s,
               t[i].q1_s, t[i].q3_s, t[i].spread, t[i].noisy ? "true" : "false", t[i].threads,
               t[i].runs, t[i].flops, t[i].bytes, t[i].gflops, t[i].gbytes_per_s, t[i].speedup);
      } else {
        size_t len = strlen(name);
        printf("%-3zu %-28s %11.4f %11.4f %11.4f %6.1f%s %6u %9.3f %9.3f %7.2fx\n", i + 1,
               len > 28 ? name + len - 28 : name, t[i].median_s * 1e3, t[i].min_s * 1e3,
               t[i].max_s * 1e3, 100.0 * t[i].spread, t[i].noisy ? "!" : " ", t[i].runs,
               t[i].gflops, t[i].gbytes_per_s, t[i].speedup);
      }
    }
  }
  leir_backend_free(b);
  for (size_t i = 0; i < n; i++) leir_program_free(progs[i]);
  return rc;
}
