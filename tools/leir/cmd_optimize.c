/* leir optimize: multi-step search (include/leir/experimental/search.h)
 * from a program; prints the trajectory, a summary and the best program. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/llm.h"
#include "leir/experimental/search.h"

#include "commands.h"
#include "llm_opts.h"
#include "run_opts.h"

static bool is(const char *opt, const char *name) {
  size_t n = strlen(name);
  return strncmp(opt, name, n) == 0 && (opt[n] == '\0' || opt[n] == '=');
}

static int count(const char *opt, const char *v, uint32_t *out) {
  char *end;
  errno = 0;
  unsigned long x = strtoul(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || x > 100000000)
    return tool_usage_error("optimize", "%s needs a count, got '%s'", opt, v);
  *out = (uint32_t)x;
  return 0;
}

static int real(const char *opt, const char *v, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= 0) || !isfinite(x))
    return tool_usage_error("optimize", "%s needs a number >= 0, got '%s'", opt, v);
  *out = x;
  return 0;
}

/* "greedy, beam, ...": the algorithms (or policies) the library knows, in
 * order, for a usage message (search/algorithms.def, policies.def). */
static const char *known_names(char *buf, size_t cap, bool policies) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; len < cap; i++) {
    const char *n = policies ? leir_search_policy_name((leir_search_policy)i)
                             : leir_search_algorithm_name((leir_search_algorithm)i);
    if (!n) break;
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", n);
    if (w < 0) break;
    len += (size_t)w;
  }
  return buf;
}

static volatile int cancel_flag;
static void on_sigint(int sig) {
  (void)sig;
  cancel_flag = 1;
}

typedef struct out_state {
  bool json, quiet, cot, bar;
  FILE *traj;
  uint32_t max_samples;
  uint32_t measured;
} out_state;

static void clear_bar(out_state *s) {
  if (s->bar) fprintf(stderr, "\r\033[K");
}

static int on_record(void *payload, const leir_search_record *r) {
  out_state *s = payload;
  if (r->measured) s->measured++;
  char *j = NULL;
  size_t jl = 0;
  if ((s->traj || s->json) && leir_search_record_json(r, &j, &jl) != LEIR_OK) return 1;
  if (s->traj) {
    fwrite(j, 1, jl, s->traj);
    fputc('\n', s->traj);
    fflush(s->traj);
  }
  clear_bar(s);
  if (s->json) {
    printf("%s\n", j);
  } else if (!s->quiet) {
    if (r->node >= 0)
      printf("%4u d%u  %-44s %-5s %.3fx [%.3f, %.3f]  speedup %.3fx  best %.3fx\n", r->sample,
             r->depth, r->step, leir_verdict_name(r->m.verdict), r->m.ratio, r->m.ratio_lo,
             r->m.ratio_hi, r->speedup, r->best_speedup);
    else
      printf("%4u d%u  %-44s rejected (%s): %s\n", r->sample, r->depth,
             *r->step ? r->step : "(no step)", leir_search_reject_name(r->reject), r->reason);
    if (s->cot && r->node >= 0 && *r->cot) printf("       %s\n", r->cot);
  }
  fflush(stdout);
  free(j);
  if (s->bar) {
    uint32_t tot = s->max_samples ? s->max_samples : s->measured;
    int w = 30, fill = tot ? (int)((double)w * s->measured / tot) : 0;
    if (fill > w) fill = w;
    fprintf(stderr, "[%.*s%*s] %u/%u samples, best %.3fx", fill,
            "##############################", w - fill, "", s->measured, tot, r->best_speedup);
    fflush(stderr);
  }
  return cancel_flag != 0;
}

static int write_file(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "w");
  if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
    fprintf(stderr, "leir optimize: error: cannot write %s: %s\n", path, strerror(errno));
    if (f) fclose(f);
    return EXIT_INVALID;
  }
  return EXIT_OK;
}

/* The steps from the source to the best program as a table: each step's
 * time ratio over its parent (with its interval) and the speedup so far. */
static void print_path(const leir_search_result *res) {
  size_t n = leir_search_result_record_count(res);
  const leir_search_record *best = NULL;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *r = leir_search_result_record(res, i);
    if (r->node >= 0 && (!best || r->speedup > best->speedup)) best = r;
  }
  if (!best) return;
  const leir_search_record *path[256];
  size_t np = 0;
  for (const leir_search_record *r = best; r && np < 256;) {
    path[np++] = r;
    const leir_search_record *up = NULL;
    for (size_t i = 0; i < n && r->parent > 0; i++) {
      const leir_search_record *x = leir_search_result_record(res, i);
      if (x->node == r->parent) up = x;
    }
    r = up;
  }
  printf("\n%-4s %-46s %9s %21s %9s\n", "", "step", "ratio", "interval", "speedup");
  for (size_t k = np; k-- > 0;) {
    const leir_search_record *r = path[k];
    printf("%3zu. %-46s %8.3fx [%8.3f, %8.3f] %8.3fx\n", np - k, r->step, r->m.ratio,
           r->m.ratio_lo, r->m.ratio_hi, r->speedup);
  }
}

/* The default database: $LEIR_DB, else $XDG_CACHE_HOME/leir/measurements.db,
 * else ~/.cache/leir/measurements.db. */
static char *default_db(void) {
  const char *e = getenv("LEIR_DB");
  if (e && *e) return strdup(e);
  const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  char dir[4096];
  if (x && *x)
    snprintf(dir, sizeof dir, "%s/leir", x);
  else if (h && *h)
    snprintf(dir, sizeof dir, "%s/.cache/leir", h);
  else
    return NULL;
  char parent[4096];
  snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(dir, '/') - dir), dir);
  mkdir(parent, 0755);
  mkdir(dir, 0755);
  size_t n = strlen(dir) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/measurements.db", dir);
  return p;
}

int cmd_optimize(int argc, char **argv) {
  run_opts o;
  run_opts_init(&o);
  leir_search_options so = LEIR_SEARCH_OPTIONS_INIT;
  leir_compare_options co = LEIR_COMPARE_OPTIONS_INIT;
  leir_verifier_options vo = LEIR_VERIFIER_OPTIONS_INIT;
  leir_candidates_options cand = LEIR_CANDIDATES_OPTIONS_INIT;
  const char *db_path = NULL, *traj_path = NULL, *out_path = NULL, *plot_path = NULL;
  bool no_db = false, quiet = false, cot = false, no_final = false, progress = true;
  /* the LLM policy: an endpoint or a command, its sampling and prompt
   * (llm_opts.c, shared with leir eval; leir_search_propose_llm_with) */
  llm_opts m;
  llm_opts_init(&m, "optimize");
  leir_search_llm_options slo = LEIR_SEARCH_LLM_OPTIONS_INIT;
  tool_args a;
  tool_args_init(&a, "optimize", argc, argv);
  const char *opt, *v;
  while ((opt = tool_args_next(&a))) {
    int r = run_option(&o, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if ((r = llm_opts_option(&m, &a, opt)) < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--no-db") == 0) { no_db = true; continue; }
    if (strcmp(opt, "--quiet") == 0) { quiet = true; continue; }
    if (strcmp(opt, "--cot") == 0) { cot = true; continue; }
    if (strcmp(opt, "--no-progress") == 0) { progress = false; continue; }
    if (strcmp(opt, "--no-final-compare") == 0) { no_final = true; continue; }
    if (strcmp(opt, "--no-flush") == 0) { co.flags |= LEIR_BENCH_NO_FLUSH; continue; }
    if (strcmp(opt, "--all-divisors") == 0) { cand.flags |= LEIR_CANDIDATES_ALL_DIVISORS; continue; }
    if (strcmp(opt, "--partial-fusion") == 0) { cand.flags |= LEIR_CANDIDATES_PARTIAL_FUSION; continue; }
    if (strcmp(opt, "--reduction-lanes") == 0) { cand.flags |= LEIR_CANDIDATES_REDUCTION_LANES; continue; }
    if (!(v = tool_args_value(&a, opt))) return EXIT_USAGE;
    int bad = 0;
    if (is(opt, "--search")) {
      char names[256];
      if (leir_search_algorithm_from_name(v, &so.algorithm) != LEIR_OK)
        return tool_usage_error("optimize", "unknown --search '%s' (%s)", v,
                                known_names(names, sizeof names, false));
    } else if (is(opt, "--policy")) {
      char names[256];
      if (leir_search_policy_from_name(v, &so.policy) != LEIR_OK)
        return tool_usage_error("optimize", "unknown --policy '%s' (%s)", v,
                                known_names(names, sizeof names, true));
    } else if (is(opt, "--reward")) {
      if (strcmp(v, "log") == 0) so.reward = LEIR_REWARD_LOG_SPEEDUP;
      else if (strcmp(v, "reference") == 0) so.reward = LEIR_REWARD_REFERENCE;
      else return tool_usage_error("optimize", "unknown --reward '%s' (log, reference)", v);
    } else if (is(opt, "--samples")) bad = count(opt, v, &so.max_samples);
    else if (is(opt, "--time")) bad = real(opt, v, &so.max_seconds);
    else if (is(opt, "--depth")) bad = count(opt, v, &so.max_depth);
    else if (is(opt, "--width")) bad = count(opt, v, &so.width);
    else if (is(opt, "--branching")) bad = count(opt, v, &so.branching);
    else if (is(opt, "--retries")) bad = count(opt, v, &so.retries);
    else if (is(opt, "--rollouts")) bad = count(opt, v, &so.rollouts);
    else if (is(opt, "--uct")) bad = real(opt, v, &so.uct_c);
    else if (is(opt, "--lookahead")) bad = count(opt, v, &so.lookahead_depth);
    else if (is(opt, "--lookahead-width")) bad = count(opt, v, &so.lookahead_width);
    else if (is(opt, "--lookahead-time")) bad = real(opt, v, &so.lookahead_seconds);
    else if (is(opt, "--lookahead-evals")) {
      uint32_t n = 0;
      bad = count(opt, v, &n);
      so.lookahead_evals = n;
    }
    else if (is(opt, "--policy-seed")) {
      char *end;
      errno = 0;
      so.seed = strtoull(v, &end, 10);
      if (errno || end == v || *end) return tool_usage_error("optimize", "--policy-seed needs an integer");
    } else if (is(opt, "--rounds")) bad = count(opt, v, &co.min_rounds);
    else if (is(opt, "--max-rounds")) bad = count(opt, v, &co.max_rounds);
    else if (is(opt, "--compare-time")) bad = real(opt, v, &co.max_seconds);
    else if (is(opt, "--confidence")) bad = real(opt, v, &co.confidence);
    else if (is(opt, "--min-effect")) bad = real(opt, v, &co.min_effect);
    else if (is(opt, "--sets")) bad = count(opt, v, &vo.input_sets);
    else if (is(opt, "--db")) db_path = v;
    else if (is(opt, "--vector-width")) {
      bad = count(opt, v, &cand.vector_width);
      if (!bad && (cand.vector_width < 1 || cand.vector_width > 1024))
        return tool_usage_error("optimize", "--vector-width takes 1..1024");
    }
    else if (is(opt, "--irs-per-call")) {
      uint64_t n = 0;
      bad = llm_opts_unsigned("optimize", opt, v, 1, 16, &n) != 0;
      slo.irs_per_call = (uint32_t)n;
      llm_opts_note(&m, "--irs-per-call");
    }
    else if (is(opt, "--trajectory")) traj_path = v;
    else if (is(opt, "--out")) out_path = v;
    else if (is(opt, "--plot")) plot_path = v;
    else return tool_usage_error("optimize", "unknown option %s", opt);
    if (bad) return EXIT_USAGE;
  }
  if (a.npositional != 1) return tool_usage_error("optimize", "expected one program");
  /* the reference's search: temperature 0.3, 40960 new tokens, its
   * hardware block for the H20-3e */
  int urc = llm_opts_finish(&m, 0.3, 40960);
  if (urc != EXIT_OK) return urc;
  if (!llm_opts_wanted(&m) && llm_opts_check_unused(&m) != EXIT_OK) return EXIT_USAGE;
  slo.hardware = llm_opts_hardware(&m, "H20-3e");
  slo.system_prompt = m.lo.system_prompt;
  if (co.max_rounds < co.min_rounds) co.max_rounds = co.min_rounds;
  if (!(co.confidence > 0.5 && co.confidence < 1))
    return tool_usage_error("optimize", "--confidence must be in (0.5, 1)");
  co.seed = o.seed;
  vo.seed = o.seed;
  so.compare = &co;
  so.verifier = &vo;
  so.candidates = &cand;
  so.cancel = &cancel_flag;
  if (no_final) so.flags |= LEIR_SEARCH_NO_FINAL_COMPARE;

  int rc = EXIT_OK;
  leir_program *prog = run_load(&o, a.positional[0], true, &rc);
  if (!prog) return rc;
  leir_llm *llm = NULL;
  if ((rc = llm_opts_client(&m, &llm)) != EXIT_OK) {
    leir_program_free(prog);
    return rc;
  }
  if (llm) {
    slo.llm = llm;
    so.propose = leir_search_propose_llm_with;
    so.propose_payload = &slo;
  }
  const char *policy_label = llm ? "llm" : leir_search_policy_name(so.policy);
  leir_backend *b = NULL;
  rc = run_open_backend(&o, &b);
  if (rc != EXIT_OK) {
    leir_llm_free(llm);
    leir_program_free(prog);
    return rc;
  }
  leir_db *db = NULL;
  char *dbp = no_db ? NULL : db_path ? strdup(db_path) : default_db();
  if (dbp && leir_db_open(&db, dbp) != LEIR_OK) {
    fprintf(stderr, "leir optimize: error: %s\n", leir_error_last()->message);
    free(dbp);
    leir_backend_free(b);
    leir_llm_free(llm);
    leir_program_free(prog);
    return EXIT_INVALID;
  }
  so.db = db;
  /* the database key's machine part: the CPU, the thread count, and the
   * compiler and flags when given (they change the timings) */
  char fp[32], machine[512];
  leir_search_machine_fingerprint(o.bo.threads, fp, sizeof fp);
  snprintf(machine, sizeof machine, "%s%s%s%s%s", fp, o.bo.compiler ? "|cc=" : "",
           o.bo.compiler ? o.bo.compiler : "", o.bo.compiler_flags ? "|cflags=" : "",
           o.bo.compiler_flags ? o.bo.compiler_flags : "");
  so.machine = machine;
  out_state st_out = {.json = o.json, .quiet = quiet, .cot = cot,
                      .bar = progress && !o.json && isatty(2), .max_samples = so.max_samples};
  if (traj_path) {
    st_out.traj = strcmp(traj_path, "-") == 0 ? stdout : fopen(traj_path, "w");
    if (!st_out.traj) {
      fprintf(stderr, "leir optimize: error: cannot write %s: %s\n", traj_path, strerror(errno));
      leir_db_free(db);
      free(dbp);
      leir_backend_free(b);
      leir_program_free(prog);
      return EXIT_INVALID;
    }
  }
  so.on_record = on_record;
  so.record_payload = &st_out;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);

  if (!o.json && !quiet) {
    printf("optimize %s: search %s, policy %s, backend %s, budget %u samples%s, database %s\n",
           tool_label(a.positional[0]), leir_search_algorithm_name(so.algorithm),
           policy_label, leir_backend_get_name(b), so.max_samples,
           so.max_seconds > 0 ? " (and a time limit)" : "", dbp ? dbp : "none");
    fflush(stdout);
  }
  leir_search_result *res = NULL;
  leir_status st = leir_search_run(&res, b, prog, &so);
  sigaction(SIGINT, &old, NULL);
  clear_bar(&st_out);
  if (st != LEIR_OK && !(st == LEIR_ERR_CANCELLED && res)) {
    fprintf(stderr, "leir optimize: error: %s\n", leir_error_last()->message);
    if (st == LEIR_ERR_COMPILE) fprintf(stderr, "%s\n", leir_backend_compile_log(b));
    rc = tool_exit_for(st);
  }
  if (res) {
    leir_search_summary sum = {.size = sizeof sum};
    leir_search_result_summary(res, &sum);
    const leir_program *best = leir_search_result_best(res);
    char *steps = NULL, *text = NULL;
    size_t tl = 0;
    leir_search_result_best_steps(res, &steps, NULL);
    leir_program_print(best, LEIR_PRINT_PRETTY, &text, &tl);
    static const char *const why[] = {"the policy had nothing more", "sample budget",
                                      "time budget", "cancelled"};
    if (sum.db_unsaved)
      fprintf(stderr,
              "leir optimize: warning: the measurement database could not keep %u "
              "measurement%s (a write failed: another process held its lock past the busy "
              "timeout, or the disk; written again when the search ended, it failed again); "
              "the results below are complete\n",
              sum.db_unsaved, sum.db_unsaved == 1 ? "" : "s");
    if (o.json) {
      printf("{\"summary\":{\"algorithm\":\"%s\",\"policy\":\"%s\",\"backend\":\"%s\","
             "\"samples\":%u,\"measured\":%u,\"reused\":%u,\"accepted\":%u,\"rejected\":%u,"
             "\"best_depth\":%u,\"best_speedup\":%.6g,\"final_speedup\":%.6g,\"final_lo\":%.6g,"
             "\"final_hi\":%.6g,\"source_median_s\":%.9g,\"best_median_s\":%.9g,"
             "\"seconds\":%.3f,\"stopped_by\":\"%s\",\"steps\":",
             leir_search_algorithm_name(so.algorithm), policy_label,
             leir_backend_get_name(b), sum.samples, sum.measured, sum.reused, sum.accepted,
             sum.rejected, sum.best_depth, sum.best_speedup, sum.final_speedup, sum.final_lo,
             sum.final_hi, sum.source_median_s, sum.best_median_s, sum.seconds,
             why[sum.stopped_by & 3]);
      tool_json_string(stdout, steps ? steps : "", steps ? strlen(steps) : 0);
      if (so.lookahead_depth)
        printf(",\"lookaheads\":%u,\"lookahead_evals\":%llu", sum.lookaheads,
               (unsigned long long)sum.lookahead_evals);
      /* the cost of a measured sample, by phase (docs/search.md "Cost per
       * sample"); "search" is the rest: policy, cost model, records */
      double per = sum.measured ? 1.0 / sum.measured : 0.0;
      printf(",\"cost\":{\"compile_s\":%.6f,\"verify_s\":%.6f,\"time_s\":%.6f,"
             "\"final_compare_s\":%.6f,\"setup_s\":%.6f,\"search_s\":%.6f,\"per_sample_s\":%.6f,"
             "\"compile_per_sample_s\":%.6f,\"verify_per_sample_s\":%.6f,"
             "\"time_per_sample_s\":%.6f},\"samples_to_95\":%u,\"seconds_to_95\":%.3f",
             sum.compile_s, sum.verify_s, sum.time_s, sum.final_compare_s, sum.setup_s,
             sum.seconds - sum.setup_s - sum.compile_s - sum.verify_s - sum.time_s -
                 sum.final_compare_s,
             (sum.compile_s + sum.verify_s + sum.time_s) * per, sum.compile_s * per,
             sum.verify_s * per, sum.time_s * per, sum.samples_to_95, sum.seconds_to_95);
      printf(",\"program\":");
      tool_json_string(stdout, text ? text : "", tl);
      printf("}}\n");
    } else {
      printf("\n%-22s %s\n%-22s %u (measured %u, from the database %u)\n%-22s %u accepted, %u rejected\n",
             "stopped by", why[sum.stopped_by & 3], "samples", sum.samples, sum.measured,
             sum.reused, "proposals", sum.accepted, sum.rejected);
      printf("%-22s %u step%s, %.3fx (product of the paired ratios along the path)\n",
             "best program", sum.best_depth, sum.best_depth == 1 ? "" : "s", sum.best_speedup);
      if (sum.best_median_s > 0)
        printf("%-22s %.3fx [%.3f, %.3f] (source %.4g ms, best %.4g ms)\n",
               "side by side", sum.final_speedup, sum.final_lo, sum.final_hi,
               sum.source_median_s * 1e3, sum.best_median_s * 1e3);
      printf("%-22s %.1f s\n", "search time", sum.seconds);
      if (sum.measured)
        printf("%-22s %.2f s: compile %.2f, verify %.2f, time %.2f (all samples: %.1f, %.1f, "
               "%.1f s; set-up %.1f s, final comparison %.1f s)\n",
               "cost per sample", (sum.compile_s + sum.verify_s + sum.time_s) / sum.measured,
               sum.compile_s / sum.measured, sum.verify_s / sum.measured,
               sum.time_s / sum.measured, sum.compile_s, sum.verify_s, sum.time_s,
               sum.setup_s, sum.final_compare_s);
      if (sum.samples_to_95)
        printf("%-22s sample %u (%.1f s)\n", "95% of the best at", sum.samples_to_95,
               sum.seconds_to_95);
      if (so.lookahead_depth)
        printf("%-22s %u, %llu cost-model evaluations\n", "lookaheads", sum.lookaheads,
               (unsigned long long)sum.lookahead_evals);
      print_path(res);
      if (!quiet) {
        size_t tl = text ? strlen(text) : 0;
        printf("best program:\n%s%s", text ? text : "", tl && text[tl - 1] == '\n' ? "" : "\n");
      }
    }
    if (out_path && rc == EXIT_OK) {
      size_t ol = strlen(out_path);
      char *yaml = NULL;
      size_t yl = 0;
      if (ol > 5 && (strcmp(out_path + ol - 5, ".yaml") == 0 || strcmp(out_path + ol - 4, ".yml") == 0) &&
          leir_program_to_yaml(best, &yaml, &yl) == LEIR_OK) {
        rc = write_file(out_path, yaml, yl);
      } else {
        char *plain = NULL;
        size_t pl = 0;
        if (leir_program_print(best, 0, &plain, &pl) == LEIR_OK) {
          rc = write_file(out_path, plain, pl);
          if (rc == EXIT_OK) {
            FILE *f = fopen(out_path, "a");
            if (f) { fputc('\n', f); fclose(f); }
          }
        }
        leir_free(plain);
      }
      leir_free(yaml);
    }
    if (plot_path && rc == EXIT_OK) {
      char *svg = NULL;
      size_t sl = 0;
      if (leir_search_result_plot_svg(res, &svg, &sl) == LEIR_OK) rc = write_file(plot_path, svg, sl);
      leir_free(svg);
    }
    if (!o.json && rc == EXIT_OK) {
      /* where everything went, so that a first run tells a new user */
      printf("\n");
      if (traj_path && strcmp(traj_path, "-") != 0)
        printf("%-22s %s (JSONL, one object per proposal)\n", "trajectory", traj_path);
      if (plot_path) printf("%-22s %s (best speedup against samples, SVG)\n", "plot", plot_path);
      if (out_path) printf("%-22s %s\n", "best program file", out_path);
      if (dbp && *dbp)
        printf("%-22s %s (measurements kept; the next run reuses them)\n", "database", dbp);
      else if (dbp)
        printf("%-22s in memory (--db ''): nothing kept\n", "database");
      else
        printf("%-22s none (--no-db: nothing kept)\n", "database");
    }
    leir_free(steps);
    leir_free(text);
    leir_search_result_free(res);
    if (st == LEIR_ERR_CANCELLED && rc == EXIT_OK) rc = EXIT_INVALID;
  }
  if (st_out.traj && st_out.traj != stdout) fclose(st_out.traj);
  leir_db_free(db);
  free(dbp);
  leir_backend_free(b);
  leir_llm_free(llm);
  leir_program_free(prog);
  return rc;
}
