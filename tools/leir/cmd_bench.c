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

int cmd_bench(int argc, char **argv) {
  run_opts o;
  run_opts_init(&o);
  leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
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
  leir_program *progs[16] = {NULL};
  int rc = EXIT_OK;
  for (size_t i = 0; i < n && rc == EXIT_OK; i++)
    progs[i] = run_load(&o, a.positional[i], true, &rc);
  leir_backend *b = NULL;
  if (rc == EXIT_OK) rc = run_open_backend(&o, &b);
  leir_timing t[16];
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
             "program, caches %s\n"
             "%-3s %-28s %11s %11s %11s %6s %9s %9s %8s\n",
             leir_backend_get_name(b), o.seed, bo.warmup, bo.min_runs, bo.min_seconds,
             bo.flags & LEIR_BENCH_NO_FLUSH ? "not flushed" : "flushed", "#", "program",
             "median ms", "min ms", "max ms", "runs", "GFLOP/s", "GB/s", "speedup");
    for (size_t i = 0; i < n; i++) {
      const char *name = tool_label(a.positional[i]);
      if (o.json) {
        printf("{\"program\":");
        tool_json_string(stdout, name, strlen(name));
        printf(",\"backend\":\"%s\",\"median_s\":%.17g,\"min_s\":%.17g,\"max_s\":%.17g,"
               "\"mean_s\":%.17g,\"runs\":%u,\"flops\":%" PRIu64 ",\"bytes\":%" PRIu64
               ",\"gflops\":%.17g,\"gbytes_per_s\":%.17g,\"speedup\":%.17g}\n",
               leir_backend_get_name(b), t[i].median_s, t[i].min_s, t[i].max_s, t[i].mean_s,
               t[i].runs, t[i].flops, t[i].bytes, t[i].gflops, t[i].gbytes_per_s, t[i].speedup);
      } else {
        size_t len = strlen(name);
        printf("%-3zu %-28s %11.4f %11.4f %11.4f %6u %9.3f %9.3f %7.2fx\n", i + 1,
               len > 28 ? name + len - 28 : name, t[i].median_s * 1e3, t[i].min_s * 1e3,
               t[i].max_s * 1e3, t[i].runs, t[i].gflops, t[i].gbytes_per_s, t[i].speedup);
      }
    }
  }
  leir_backend_free(b);
  for (size_t i = 0; i < n; i++) leir_program_free(progs[i]);
  return rc;
}
