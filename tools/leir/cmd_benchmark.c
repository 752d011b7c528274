/* leir benchmark CONFIG.yaml [--out DIR]: every search algorithm over a set
 * of programs with one policy and a per-program budget, as Step-TP's
 * multi-step experiment (docs/benchmark.md). Each (program, algorithm) run
 * appends one record to DIR/runs.jsonl when it ends, with its trajectory in
 * DIR/trajectories/ and its measurements in DIR/dbs/ (merged into
 * DIR/measurements.db); a run already recorded is skipped, so a killed
 * benchmark resumes, and Ray workers (python/leir/benchmark_ray.py) each
 * run one pair with --only and --algorithms. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "cmd_benchmark.h"
#include "leir/experimental/llm.h"
#include "cmd_benchmark_records.h"
#include "run_opts.h"

static volatile int cancel_flag;
static void on_signal(int sig) {
  if (cancel_flag) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
  cancel_flag = 1;
}

/* A file name for a run: the program id with unsafe bytes replaced, a hash
 * of the id (two ids that map to the same name stay apart) and the
 * algorithm. */
static void run_name(const char *id, const char *algo, char *out, size_t cap) {
  char safe[96];
  size_t k = 0;
  for (const char *p = id; *p && k + 1 < sizeof safe; p++)
    safe[k++] = (isalnum((unsigned char)*p) || *p == '.' || *p == '-') ? *p : '_';
  safe[k] = '\0';
  snprintf(out, cap, "%s-%08x~%s", safe, (unsigned)(XXH64(id, strlen(id), 0) & 0xffffffffu), algo);
}

static void remove_db(const char *path) {
  char p[8192];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

typedef struct traj_state {
  FILE *f;
  bool failed;
} traj_state;

static int on_record(void *payload, const leir_search_record *r) {
  traj_state *t = payload;
  char *j = NULL;
  size_t jl = 0;
  if (t->f && leir_search_record_json(r, &j, &jl) == LEIR_OK) {
    if (fwrite(j, 1, jl, t->f) != jl || fputc('\n', t->f) == EOF) t->failed = true;
  }
  leir_free(j);
  return cancel_flag != 0;
}

/* The run's record: numbers first, then strings (the reader looks fields
 * up by name). */
static char *record_line(const char *id, const char *algo, const char *policy, uint64_t seed,
                         leir_status st, const leir_search_result *res, size_t *len) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return NULL;
  leir_search_summary s = {.size = sizeof s};
  bool ok = st == LEIR_OK && res;
  if (res) leir_search_result_summary(res, &s);
  /* the speedup over the source: measured side by side at the end, else
   * the path product */
  double speedup = !ok ? 1.0 : s.best_median_s > 0 ? s.final_speedup : s.best_speedup;
  if (!(speedup > 0) || !isfinite(speedup)) speedup = 1.0;
  uint32_t to_best = 0;
  double best = 0;
  for (size_t i = 0; res && i < leir_search_result_record_count(res); i++) {
    const leir_search_record *r = leir_search_result_record(res, i);
    if (r->node > 0 && r->speedup > best) best = r->speedup, to_best = r->sample;
  }
  static const char *const why[] = {"exhausted", "samples", "time", "cancelled"};
  fprintf(f, "{\"program\":");
  tool_json_string(f, id, strlen(id));
  fprintf(f, ",\"algorithm\":\"%s\",\"policy\":\"%s\",\"status\":\"%s\",\"seed\":%llu,"
             "\"speedup\":%.9g,\"best_speedup\":%.9g,\"final_lo\":%.9g,\"final_hi\":%.9g,"
             "\"source_median_s\":%.9g,\"best_median_s\":%.9g,\"best_depth\":%u,\"samples\":%u,"
             "\"measured\":%u,\"reused\":%u,\"accepted\":%u,\"rejected\":%u,"
             "\"samples_to_best\":%u,\"samples_to_95\":%u,\"seconds\":%.3f,"
             "\"compile_s\":%.6f,\"verify_s\":%.6f,\"time_s\":%.6f,\"final_compare_s\":%.6f,"
             "\"stopped_by\":\"%s\",\"steps\":[",
          algo, policy, ok ? "ok" : "error", (unsigned long long)seed, speedup,
          ok ? s.best_speedup : 1.0, ok ? s.final_lo : 1.0, ok ? s.final_hi : 1.0,
          s.source_median_s, s.best_median_s, ok ? s.best_depth : 0, s.samples, s.measured,
          s.reused, s.accepted, s.rejected, ok ? to_best : 0, ok ? s.samples_to_95 : 0,
          s.seconds, s.compile_s, s.verify_s, s.time_s, s.final_compare_s,
          why[s.stopped_by & 3]);
  char *steps = NULL;
  if (ok && leir_search_result_best_steps(res, &steps, NULL) == LEIR_OK && steps) {
    bool first = true;
    for (char *l = steps; *l;) {
      char *nl = strchr(l, '\n');
      size_t ll = nl ? (size_t)(nl - l) : strlen(l);
      if (ll) {
        fprintf(f, "%s", first ? "" : ",");
        tool_json_string(f, l, ll);
        first = false;
      }
      if (!nl) break;
      l = nl + 1;
    }
  }
  leir_free(steps);
  fprintf(f, "],\"error\":");
  const char *msg = ok ? "" : leir_error_last()->message;
  tool_json_string(f, msg, strlen(msg));
  fprintf(f, ",\"best_program\":");
  char *text = NULL;
  size_t tl = 0;
  if (ok && leir_program_print(leir_search_result_best(res), 0, &text, &tl) == LEIR_OK)
    tool_json_string(f, text, tl);
  else
    fprintf(f, "\"\"");
  leir_free(text);
  fprintf(f, "}");
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

typedef struct bench_cli {
  const char *out, *db, *workloads_dir, *endpoint, *llm_command, *model, *api_key_env;
  const char *only[64];
  size_t nonly;
  const char *algorithms, *policy;
  uint32_t samples, depth;
  double seconds;
  bool samples_set, depth_set, seconds_set, list, quiet;
} bench_cli;

static bool is(const char *opt, const char *name) {
  size_t n = strlen(name);
  return strncmp(opt, name, n) == 0 && (opt[n] == '\0' || opt[n] == '=');
}

static int parse_cli(bench_cli *c, run_opts *o, tool_args *a) {
  const char *opt, *v;
  while ((opt = tool_args_next(a))) {
    int r = run_option(o, a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--list") == 0) { c->list = true; continue; }
    if (strcmp(opt, "--quiet") == 0) { c->quiet = true; continue; }
    if (!(v = tool_args_value(a, opt))) return EXIT_USAGE;
    char *end;
    errno = 0;
    if (is(opt, "--out")) c->out = v;
    else if (is(opt, "--db")) c->db = v;
    else if (is(opt, "--workloads-dir")) c->workloads_dir = v;
    else if (is(opt, "--endpoint")) c->endpoint = v;
    else if (is(opt, "--llm-command")) c->llm_command = v;
    else if (is(opt, "--model")) c->model = v;
    else if (is(opt, "--api-key-env")) c->api_key_env = v;
    else if (is(opt, "--algorithms")) c->algorithms = v;
    else if (is(opt, "--policy")) c->policy = v;
    else if (is(opt, "--only")) {
      if (c->nonly == 64) return tool_usage_error("benchmark", "--only: at most 64");
      c->only[c->nonly++] = v;
    } else if (is(opt, "--samples") || is(opt, "--depth")) {
      unsigned long x = strtoul(v, &end, 10);
      if (errno || end == v || *end || v[0] == '-' || x > 100000000)
        return tool_usage_error("benchmark", "%s needs a count, got '%s'", opt, v);
      if (is(opt, "--samples")) c->samples = (uint32_t)x, c->samples_set = true;
      else c->depth = (uint32_t)x, c->depth_set = true;
    } else if (is(opt, "--time")) {
      double x = strtod(v, &end);
      if (errno || end == v || *end || !(x >= 0) || !isfinite(x))
        return tool_usage_error("benchmark", "--time needs a number >= 0, got '%s'", v);
      c->seconds = x, c->seconds_set = true;
    } else {
      return tool_usage_error("benchmark", "unknown option %s", opt);
    }
  }
  if (a->npositional != 1) return tool_usage_error("benchmark", "expected one CONFIG.yaml");
  if (c->endpoint && c->llm_command)
    return tool_usage_error("benchmark", "--endpoint and --llm-command exclude each other");
  return EXIT_OK;
}

/* Command-line settings over the config's. */
static int apply_cli(bench_config *cfg, const bench_cli *c) {
  if (c->samples_set) cfg->samples = c->samples;
  if (c->depth_set) cfg->depth = c->depth;
  if (c->seconds_set) cfg->seconds = c->seconds;
  if (c->endpoint || c->llm_command) {
    free(cfg->endpoint);
    free(cfg->llm_command);
    cfg->endpoint = c->endpoint ? strdup(c->endpoint) : NULL;
    cfg->llm_command = c->llm_command ? strdup(c->llm_command) : NULL;
  }
  if (c->model) free(cfg->model), cfg->model = strdup(c->model);
  if (c->api_key_env) free(cfg->api_key_env), cfg->api_key_env = strdup(c->api_key_env);
  if (c->policy) {
    if (strcmp(c->policy, "llm") == 0) {
      if (!cfg->endpoint && !cfg->llm_command)
        return tool_usage_error("benchmark", "--policy llm needs --endpoint or --llm-command");
    } else {
      if (leir_search_policy_from_name(c->policy, &cfg->policy) != LEIR_OK)
        return tool_usage_error("benchmark", "unknown --policy '%s' (cost, exhaustive, random, llm)",
                                c->policy);
      /* a built-in policy named on the command line replaces the config's model */
      if (!c->endpoint && !c->llm_command) {
        free(cfg->endpoint), free(cfg->llm_command);
        cfg->endpoint = cfg->llm_command = NULL;
      }
    }
  }
  if (c->algorithms) {
    cfg->nalgorithms = 0;
    char *list = strdup(c->algorithms);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      leir_search_algorithm al;
      if (leir_search_algorithm_from_name(t, &al) != LEIR_OK) {
        int rc = tool_usage_error("benchmark", "unknown algorithm '%s' (greedy, beam, bfs, dfs, mcts, chain)", t);
        free(list);
        return rc;
      }
      bool dup = false;
      for (size_t j = 0; j < cfg->nalgorithms; j++) dup |= cfg->algorithms[j] == al;
      if (!dup && cfg->nalgorithms < BENCH_MAX_ALGOS) cfg->algorithms[cfg->nalgorithms++] = al;
    }
    free(list);
    if (!cfg->nalgorithms) return tool_usage_error("benchmark", "--algorithms is empty");
  }
  for (size_t i = 0; i < c->nonly; i++) {
    bool found = false;
    for (size_t p = 0; p < cfg->nprograms; p++) found |= strcmp(cfg->programs[p].id, c->only[i]) == 0;
    if (!found) return tool_usage_error("benchmark", "--only '%s' is not a program of the config (--list lists them)", c->only[i]);
  }
  return EXIT_OK;
}

static bool selected(const bench_cli *c, const char *id) {
  if (!c->nonly) return true;
  for (size_t i = 0; i < c->nonly; i++)
    if (strcmp(c->only[i], id) == 0) return true;
  return false;
}

static int make_dir(const char *p) {
  if (mkdir(p, 0755) == 0 || errno == EEXIST) return 0;
  fprintf(stderr, "leir benchmark: error: cannot create %s: %s\n", p, strerror(errno));
  return -1;
}

/* Everything a run needs that does not change between runs. */
typedef struct bench_ctx {
  const bench_config *cfg;
  const bench_cli *cli;
  leir_backend *backend;
  leir_llm *llm;
  leir_db *shared_db;
  const char *policy_label;
  char machine[512];
  char out[4096];
} bench_ctx;

/* One (program, algorithm) run; appends its record. 0, 1 (an error that
 * was recorded, or a program that could not be loaded), 2 cancelled, 3
 * cannot write. */
static int run_one(bench_ctx *x, size_t p, leir_search_algorithm algo, size_t k, size_t total) {
  const bench_config *cfg = x->cfg;
  const char *id = cfg->programs[p].id, *an = leir_search_algorithm_name(algo);
  char name[160], traj[4400], traj_tmp[4500], dbp[4400], runs[4200];
  run_name(id, an, name, sizeof name);
  snprintf(traj, sizeof traj, "%s/trajectories/%s.jsonl", x->out, name);
  snprintf(traj_tmp, sizeof traj_tmp, "%s.tmp", traj);
  snprintf(dbp, sizeof dbp, "%s/dbs/%s.db", x->out, name);
  snprintf(runs, sizeof runs, "%s/runs.jsonl", x->out);
  char err[512];
  leir_program *prog = bench_program_load(cfg, p, err, sizeof err);
  if (!prog) {
    fprintf(stderr, "leir benchmark: error: %s\n", err);
    return 1;
  }
  leir_search_options so = LEIR_SEARCH_OPTIONS_INIT;
  leir_compare_options co = LEIR_COMPARE_OPTIONS_INIT;
  leir_verifier_options vo = LEIR_VERIFIER_OPTIONS_INIT;
  so.algorithm = algo;
  so.policy = cfg->policy;
  so.max_samples = cfg->samples;
  so.max_seconds = cfg->seconds;
  so.max_depth = cfg->depth;
  so.width = cfg->width;
  so.branching = cfg->branching;
  so.retries = cfg->retries;
  so.rollouts = cfg->rollouts;
  so.seed = cfg->seed;
  co.min_rounds = cfg->rounds;
  co.max_rounds = cfg->max_rounds < cfg->rounds ? cfg->rounds : cfg->max_rounds;
  co.max_seconds = cfg->compare_seconds;
  co.confidence = cfg->confidence;
  co.seed = cfg->seed;
  vo.input_sets = cfg->sets;
  vo.seed = cfg->seed;
  so.compare = &co;
  so.verifier = &vo;
  so.cancel = &cancel_flag;
  so.machine = x->machine;
  if (x->llm) {
    so.propose = leir_search_propose_llm;
    so.propose_payload = x->llm;
  }
  /* each run its own database (merged at the end), so that a run measures
   * what it would measure alone, in one process or on a Ray worker */
  leir_db *db = x->shared_db;
  if (!db) {
    remove_db(dbp);
    if (leir_db_open(&db, dbp) != LEIR_OK) {
      fprintf(stderr, "leir benchmark: error: %s\n", leir_error_last()->message);
      leir_program_free(prog);
      return 3;
    }
  }
  so.db = db;
  traj_state ts = {fopen(traj_tmp, "w"), false};
  so.on_record = on_record;
  so.record_payload = &ts;
  if (!x->cli->quiet && !tool_json_mode) {
    printf("[%zu/%zu] %s %s ...", k, total, id, an);
    fflush(stdout);
  }
  leir_search_result *res = NULL;
  leir_status st = leir_search_run(&res, x->backend, prog, &so);
  if (db != x->shared_db) leir_db_free(db);
  if (ts.f && fclose(ts.f) != 0) ts.failed = true;
  int rc = 0;
  if (st == LEIR_ERR_CANCELLED || cancel_flag) {
    /* not recorded: the run is redone from the start on resume */
    unlink(traj_tmp);
    if (!x->shared_db) remove_db(dbp);
    if (!x->cli->quiet && !tool_json_mode) printf(" interrupted\n");
    rc = 2;
  } else {
    size_t len = 0;
    char *line = record_line(id, an, x->policy_label, cfg->seed, st, res, &len);
    if (!line || ts.failed || rename(traj_tmp, traj) != 0 || bench_append_line(runs, line, len) != 0) {
      fprintf(stderr, "leir benchmark: error: cannot write the record of %s %s in %s\n", id, an, x->out);
      rc = 3;
    } else if (st != LEIR_OK) {
      fprintf(stderr, "%sleir benchmark: %s %s failed: %s\n", x->cli->quiet || tool_json_mode ? "" : "\n",
              id, an, leir_error_last()->message);
      rc = 1;
    }
    if (tool_json_mode && line) printf("%s\n", line);
    else if (!x->cli->quiet && rc == 0) {
      leir_search_summary s = {.size = sizeof s};
      leir_search_result_summary(res, &s);
      bench_run r;
      if (bench_run_parse(line, &r)) {
        printf(" %.3fx (%u step%s, %u samples, %.1f s)\n", r.speedup, r.best_depth,
               r.best_depth == 1 ? "" : "s", s.samples, s.seconds);
        bench_run_free(&r);
      } else {
        printf("\n");
      }
    }
    fflush(stdout);
    free(line);
  }
  leir_search_result_free(res);
  leir_program_free(prog);
  return rc;
}

/* Merges DIR/dbs/<run>.db of the recorded runs into DIR/measurements.db. */
static int merge_dbs(const bench_ctx *x, const bench_run *runs, size_t nruns) {
  char into[4200];
  snprintf(into, sizeof into, "%s/measurements.db", x->out);
  leir_db *db = NULL;
  if (leir_db_open(&db, into) != LEIR_OK) {
    fprintf(stderr, "leir benchmark: error: %s\n", leir_error_last()->message);
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < nruns; i++) {
    char name[160], p[4400];
    run_name(runs[i].program, runs[i].algorithm, name, sizeof name);
    snprintf(p, sizeof p, "%s/dbs/%s.db", x->out, name);
    if (access(p, R_OK) != 0) continue;
    if (leir_db_merge(db, p, NULL, NULL) != LEIR_OK) {
      fprintf(stderr, "leir benchmark: error: merging %s: %s\n", p, leir_error_last()->message);
      rc = -1;
    }
  }
  leir_db_free(db);
  return rc;
}

int cmd_benchmark(int argc, char **argv) {
  run_opts o;
  run_opts_init(&o);
  o.backend = NULL; /* the config's unless --backend */
  bench_cli cli = {0};
  tool_args a;
  tool_args_init(&a, "benchmark", argc, argv);
  int rc = parse_cli(&cli, &o, &a);
  if (rc != EXIT_OK) return rc;
  const char *config = a.positional[0];
  bench_config cfg;
  rc = bench_config_load(&cfg, config, cli.workloads_dir);
  if (rc != EXIT_OK) return rc;
  rc = apply_cli(&cfg, &cli);
  if (rc != EXIT_OK) {
    bench_config_free(&cfg);
    return rc;
  }
  if (cli.list) {
    for (size_t p = 0; p < cfg.nprograms; p++) {
      if (!selected(&cli, cfg.programs[p].id)) continue;
      for (size_t k = 0; k < cfg.nalgorithms; k++) {
        printf("{\"program\":");
        tool_json_string(stdout, cfg.programs[p].id, strlen(cfg.programs[p].id));
        printf(",\"algorithm\":\"%s\"}\n", leir_search_algorithm_name(cfg.algorithms[k]));
      }
    }
    bench_config_free(&cfg);
    return EXIT_OK;
  }
  bench_ctx x = {.cfg = &cfg, .cli = &cli};
  if (cli.out) {
    snprintf(x.out, sizeof x.out, "%s", cli.out);
  } else {
    size_t n = strlen(config);
    if (n > 5 && strcmp(config + n - 5, ".yaml") == 0) n -= 5;
    else if (n > 4 && strcmp(config + n - 4, ".yml") == 0) n -= 4;
    snprintf(x.out, sizeof x.out, "%.*s%s", (int)n, config, n == strlen(config) ? ".out" : "");
  }
  char sub[4200];
  rc = EXIT_OK;
  if (make_dir(x.out)) rc = EXIT_INVALID;
  snprintf(sub, sizeof sub, "%s/trajectories", x.out);
  if (!rc && make_dir(sub)) rc = EXIT_INVALID;
  snprintf(sub, sizeof sub, "%s/dbs", x.out);
  if (!rc && !cli.db && make_dir(sub)) rc = EXIT_INVALID;
  if (rc) {
    bench_config_free(&cfg);
    return rc;
  }
  if (!o.backend) o.backend = cfg.backend ? cfg.backend : "cpu";
  if (cfg.endpoint || cfg.llm_command) {
    leir_llm_options lo = LEIR_LLM_OPTIONS_INIT;
    lo.model = cfg.model;
    lo.api_key_env = cfg.api_key_env;
    lo.timeout_s = cfg.llm_timeout > 0 ? cfg.llm_timeout : 300;
    lo.temperature = cfg.temperature;
    lo.max_tokens = cfg.max_tokens;
    const char *cargv[] = {"/bin/sh", "-c", cfg.llm_command, NULL};
    leir_status ls = cfg.endpoint ? leir_llm_new_endpoint(&x.llm, cfg.endpoint, &lo)
                                  : leir_llm_new_command(&x.llm, cargv, &lo);
    if (ls != LEIR_OK) {
      fprintf(stderr, "leir benchmark: error: %s\n", leir_error_last()->message);
      bench_config_free(&cfg);
      return tool_exit_for(ls);
    }
  }
  x.policy_label = x.llm ? "llm" : leir_search_policy_name(cfg.policy);
  rc = run_open_backend(&o, &x.backend);
  if (rc == EXIT_OK && cli.db && leir_db_open(&x.shared_db, cli.db) != LEIR_OK) {
    fprintf(stderr, "leir benchmark: error: %s\n", leir_error_last()->message);
    rc = EXIT_INVALID;
  }
  if (rc != EXIT_OK) {
    leir_backend_free(x.backend);
    leir_llm_free(x.llm);
    bench_config_free(&cfg);
    return rc;
  }
  char fp[32];
  leir_search_machine_fingerprint(o.bo.threads, fp, sizeof fp);
  snprintf(x.machine, sizeof x.machine, "%s%s%s%s%s", fp, o.bo.compiler ? "|cc=" : "",
           o.bo.compiler ? o.bo.compiler : "", o.bo.compiler_flags ? "|cflags=" : "",
           o.bo.compiler_flags ? o.bo.compiler_flags : "");

  /* every program loads before anything runs: a typo in the config is
   * found now, not after hours of searches */
  for (size_t p = 0; p < cfg.nprograms && rc == EXIT_OK; p++) {
    if (!selected(&cli, cfg.programs[p].id)) continue;
    char err[512];
    leir_program *prog = bench_program_load(&cfg, p, err, sizeof err);
    if (!prog) {
      fprintf(stderr, "leir benchmark: error: %s\n", err);
      rc = EXIT_INVALID;
    } else if (leir_program_check(prog, NULL, NULL) != LEIR_OK) {
      fprintf(stderr, "leir benchmark: error: %s: %s\n", cfg.programs[p].id,
              leir_error_last()->message);
      rc = EXIT_INVALID;
    }
    leir_program_free(prog);
  }
  char runs_path[4200];
  snprintf(runs_path, sizeof runs_path, "%s/runs.jsonl", x.out);
  bench_run *runs = NULL;
  size_t nruns = 0;
  if (bench_runs_load(runs_path, &runs, &nruns) != 0) {
    fprintf(stderr, "leir benchmark: error: cannot read %s: %s\n", runs_path, strerror(errno));
    rc = EXIT_INVALID;
  }
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  size_t total = 0, k = 0, skipped = 0;
  for (size_t p = 0; p < cfg.nprograms; p++)
    if (selected(&cli, cfg.programs[p].id)) total += cfg.nalgorithms;
  if (!rc && !cli.quiet && !tool_json_mode) {
    printf("benchmark %s: %zu programs x %zu algorithms, policy %s, backend %s, budget %u samples%s "
           "per run, into %s\n", cfg.name, cfg.nprograms, cfg.nalgorithms, x.policy_label,
           leir_backend_get_name(x.backend), cfg.samples, cfg.seconds > 0 ? " (and a time limit)" : "",
           x.out);
    fflush(stdout);
  }
  bool failed = false, cancelled = false;
  for (size_t p = 0; p < cfg.nprograms && !rc && !cancelled; p++) {
    if (!selected(&cli, cfg.programs[p].id)) continue;
    for (size_t al = 0; al < cfg.nalgorithms && !rc; al++) {
      k++;
      const char *an = leir_search_algorithm_name(cfg.algorithms[al]);
      if (bench_runs_find(runs, nruns, cfg.programs[p].id, an)) {
        skipped++;
        continue;
      }
      int r = run_one(&x, p, cfg.algorithms[al], k, total);
      if (r == 1) failed = true;
      else if (r == 2) cancelled = true;
      else if (r == 3) rc = EXIT_INVALID;
      if (cancelled) break;
    }
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (!rc && skipped && !cli.quiet && !tool_json_mode)
    printf("%zu run%s already recorded in %s (skipped)\n", skipped, skipped == 1 ? "" : "s", runs_path);
  /* read the records back (this process's and earlier ones'), in config order */
  for (size_t i = 0; i < nruns; i++) bench_run_free(&runs[i]);
  free(runs);
  runs = NULL;
  nruns = 0;
  if (!rc && bench_runs_load(runs_path, &runs, &nruns) != 0) rc = EXIT_INVALID;
  if (!rc && !cli.db && merge_dbs(&x, runs, nruns) != 0) rc = EXIT_INVALID;
  if (!rc) {
    const char **pn = calloc(cfg.nprograms + 1, sizeof *pn);
    const char *an[BENCH_MAX_ALGOS];
    for (size_t p = 0; pn && p < cfg.nprograms; p++) pn[p] = cfg.programs[p].id;
    for (size_t al = 0; al < cfg.nalgorithms; al++) an[al] = leir_search_algorithm_name(cfg.algorithms[al]);
    bench_summary_in in = {cfg.name, x.policy_label, leir_backend_get_name(x.backend), pn,
                           cfg.nprograms, an, cfg.nalgorithms, runs, nruns};
    if (!cli.quiet && !tool_json_mode) printf("\n");
    if (!pn || bench_summary_write(&in, x.out, stdout, cli.quiet || tool_json_mode) != 0) {
      fprintf(stderr, "leir benchmark: error: cannot write the summary in %s\n", x.out);
      rc = EXIT_INVALID;
    }
    free(pn);
    if (!rc && !cli.quiet && !tool_json_mode)
      printf("\n%-14s %s (one record per run), %s/summary.json, %s/summary.md\n%-14s %s/trajectories/\n"
             "%-14s %s%s%s\n", "records", runs_path, x.out, x.out, "trajectories", x.out,
             "measurements", cli.db ? cli.db : x.out, cli.db ? "" : "/measurements.db (merged from ",
             cli.db ? "" : "dbs/)");
  }
  for (size_t i = 0; i < nruns; i++) bench_run_free(&runs[i]);
  free(runs);
  leir_db_free(x.shared_db);
  leir_backend_free(x.backend);
  leir_llm_free(x.llm);
  bench_config_free(&cfg);
  if (!rc && (failed || cancelled)) rc = EXIT_INVALID;
  return rc;
}
