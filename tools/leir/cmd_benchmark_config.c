/* The config of leir benchmark (docs/benchmark.md): a YAML mapping of
 * programs (files, directories, catalogue workloads), algorithms, the
 * policy, the per-program budget and the measuring options. Unknown keys
 * are errors, so that a misspelt budget does not silently run with the
 * default. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "cmd_benchmark.h"

typedef struct cfg_ctx {
  yaml_document_t *doc;
  const char *file;
  const char *base; /* the config's directory, for relative paths */
} cfg_ctx;

static int cfg_error(const cfg_ctx *x, const yaml_node_t *n, const char *fmt, const char *what) {
  fprintf(stderr, "%s:%lu: error: ", x->file, n ? (unsigned long)n->start_mark.line + 1 : 0UL);
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  return EXIT_INVALID;
}

static const char *scalar(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_string(const cfg_ctx *x, const yaml_node_t *n, const char *key, char **out) {
  const char *s = scalar(n);
  if (!s) return cfg_error(x, n, "'%s' must be a string", key);
  free(*out);
  *out = strdup(s);
  return *out ? 0 : EXIT_INTERNAL;
}

static int get_count(const cfg_ctx *x, const yaml_node_t *n, const char *key, uint32_t *out) {
  const char *s = scalar(n);
  char *end;
  errno = 0;
  unsigned long long v = s ? strtoull(s, &end, 10) : 0;
  if (!s || errno || end == s || *end || s[0] == '-' || v > 100000000ULL)
    return cfg_error(x, n, "'%s' must be a count (0 .. 100000000)", key);
  *out = (uint32_t)v;
  return 0;
}

static int get_u64(const cfg_ctx *x, const yaml_node_t *n, const char *key, uint64_t *out) {
  const char *s = scalar(n);
  char *end;
  errno = 0;
  unsigned long long v = s ? strtoull(s, &end, 10) : 0;
  if (!s || errno || end == s || *end || s[0] == '-')
    return cfg_error(x, n, "'%s' must be a non-negative integer", key);
  *out = v;
  return 0;
}

static int get_real(const cfg_ctx *x, const yaml_node_t *n, const char *key, double *out) {
  const char *s = scalar(n);
  char *end;
  errno = 0;
  double v = s ? strtod(s, &end) : 0;
  if (!s || errno || end == s || *end || !isfinite(v) || v < 0)
    return cfg_error(x, n, "'%s' must be a number >= 0", key);
  *out = v;
  return 0;
}

/* A scalar or a sequence of scalars, as a list of strings. */
static int get_list(const cfg_ctx *x, yaml_node_t *n, const char *key, char ***out, size_t *nout) {
  size_t cap = n->type == YAML_SEQUENCE_NODE
                   ? (size_t)(n->data.sequence.items.top - n->data.sequence.items.start)
                   : 1;
  char **v = calloc(cap + 1, sizeof *v);
  if (!v) return EXIT_INTERNAL;
  size_t k = 0;
  if (n->type == YAML_SCALAR_NODE) {
    v[k++] = strdup(scalar(n));
  } else if (n->type == YAML_SEQUENCE_NODE) {
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
      const char *s = scalar(yaml_document_get_node(x->doc, *it));
      if (!s) {
        for (size_t i = 0; i < k; i++) free(v[i]);
        free(v);
        return cfg_error(x, n, "'%s' must be a list of strings", key);
      }
      v[k++] = strdup(s);
    }
  } else {
    free(v);
    return cfg_error(x, n, "'%s' must be a string or a list of strings", key);
  }
  *out = v;
  *nout = k;
  return 0;
}

static void free_list(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

static char *join(const char *base, const char *p) {
  size_t n = strlen(base) + strlen(p) + 2;
  char *s = malloc(n);
  if (!s) return NULL;
  if (p[0] == '/' || !*base) snprintf(s, n, "%s", p);
  else snprintf(s, n, "%s/%s", base, p);
  return s;
}

static int add_program(bench_config *c, const char *id, const char *path, const leir_workload *w) {
  for (size_t i = 0; i < c->nprograms; i++)
    if (strcmp(c->programs[i].id, id) == 0) return 0; /* listed twice: run once */
  bench_program *p = realloc(c->programs, (c->nprograms + 1) * sizeof *p);
  if (!p) return EXIT_INTERNAL;
  c->programs = p;
  p[c->nprograms].id = strdup(id);
  p[c->nprograms].path = path ? strdup(path) : NULL;
  p[c->nprograms].workload = w;
  c->nprograms++;
  return 0;
}

static bool is_program_file(const char *name) {
  size_t n = strlen(name);
  return (n > 5 && strcmp(name + n - 5, ".leir") == 0) ||
         (n > 10 && strcmp(name + n - 10, ".leir.yaml") == 0);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A file, or every *.leir and *.leir.yaml of a directory in name order. */
static int add_path(bench_config *c, const cfg_ctx *x, const yaml_node_t *n, const char *given) {
  char *full = join(x->base, given);
  if (!full) return EXIT_INTERNAL;
  struct stat sb;
  int rc = 0;
  if (stat(full, &sb) != 0) {
    rc = cfg_error(x, n, "no such program file or directory: %s", given);
  } else if (S_ISDIR(sb.st_mode)) {
    DIR *d = opendir(full);
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (!is_program_file(e->d_name)) continue;
      char **g = realloc(names, (nn + 1) * sizeof *g);
      if (!g) break;
      names = g;
      names[nn++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(names, nn, sizeof *names, cmp_str);
    if (nn == 0) rc = cfg_error(x, n, "no *.leir or *.leir.yaml file in %s", given);
    for (size_t i = 0; i < nn && rc == 0; i++) {
      size_t l = strlen(given) + strlen(names[i]) + 2;
      char *id = malloc(l), *p = join(full, names[i]);
      snprintf(id, l, "%s%s%s", given, given[strlen(given) - 1] == '/' ? "" : "/", names[i]);
      rc = add_program(c, id, p, NULL);
      free(id);
      free(p);
    }
    free_list(names, nn);
  } else {
    rc = add_program(c, given, full, NULL);
  }
  free(full);
  return rc;
}

static int parse_programs(bench_config *c, const cfg_ctx *x, yaml_node_t *m,
                          const char *workloads_dir) {
  if (m->type != YAML_MAPPING_NODE) return cfg_error(x, m, "'%s' must be a mapping", "programs");
  char **files = NULL, **wls = NULL, *dir = NULL, *shape = NULL;
  size_t nfiles = 0, nwls = 0;
  const yaml_node_t *files_node = NULL, *wls_node = NULL;
  int rc = 0;
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top && !rc; p++) {
    yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
    yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
    const char *key = scalar(k);
    if (!key) rc = cfg_error(x, k, "%s: keys must be strings", "programs");
    else if (strcmp(key, "files") == 0) rc = get_list(x, v, key, &files, &nfiles), files_node = v;
    else if (strcmp(key, "workloads") == 0) rc = get_list(x, v, key, &wls, &nwls), wls_node = v;
    else if (strcmp(key, "workloads_dir") == 0) rc = get_string(x, v, key, &dir);
    else if (strcmp(key, "shape") == 0) rc = get_string(x, v, key, &shape);
    else if (strcmp(key, "seed") == 0) rc = get_u64(x, v, key, &c->shape_seed);
    else if (strcmp(key, "dtype") == 0) rc = get_string(x, v, key, &c->dtype);
    else rc = cfg_error(x, k, "unknown key 'programs.%s' (files, workloads, workloads_dir, shape, seed, dtype)", key);
  }
  if (!rc && shape) {
    if (strcmp(shape, "default") == 0) c->shape = LEIR_SHAPE_DEFAULT;
    else if (strcmp(shape, "small") == 0) c->shape = LEIR_SHAPE_SMALL;
    else if (strcmp(shape, "random") == 0) c->shape = LEIR_SHAPE_RANDOM;
    else rc = cfg_error(x, m, "unknown programs.shape '%s' (default, small, random)", shape);
  }
  if (!rc && nwls) {
    leir_catalog_options co = LEIR_CATALOG_OPTIONS_INIT;
    char *d = workloads_dir ? strdup(workloads_dir) : dir ? join(x->base, dir) : NULL;
    co.dir = d;
    if (leir_catalog_open(&c->catalog, &co) != LEIR_OK) {
      fprintf(stderr, "%s: error: the workload catalogue: %s\n", x->file, leir_error_last()->message);
      rc = EXIT_INVALID;
    }
    free(d);
    for (size_t i = 0; i < nwls && !rc; i++) {
      if (strcmp(wls[i], "all") == 0 || strcmp(wls[i], "level1") == 0 || strcmp(wls[i], "level2") == 0) {
        int level = wls[i][0] == 'a' ? 0 : wls[i][5] - '0';
        for (size_t j = 0; j < leir_catalog_count(c->catalog) && !rc; j++) {
          const leir_workload *w = leir_catalog_get(c->catalog, j);
          if (level && leir_workload_level(w) != level) continue;
          char id[256];
          snprintf(id, sizeof id, "level%d/%s", leir_workload_level(w), leir_workload_name(w));
          rc = add_program(c, id, NULL, w);
        }
        continue;
      }
      const leir_workload *w = leir_catalog_find(c->catalog, wls[i]);
      if (!w) {
        rc = cfg_error(x, wls_node, "no workload '%s' in the catalogue ('leir workloads list')", wls[i]);
        break;
      }
      char id[256];
      snprintf(id, sizeof id, "level%d/%s", leir_workload_level(w), leir_workload_name(w));
      rc = add_program(c, id, NULL, w);
    }
  }
  for (size_t i = 0; i < nfiles && !rc; i++) rc = add_path(c, x, files_node, files[i]);
  free_list(files, nfiles);
  free_list(wls, nwls);
  free(dir);
  free(shape);
  return rc;
}

static int parse_map(bench_config *c, const cfg_ctx *x, yaml_node_t *m, const char *section) {
  if (m->type != YAML_MAPPING_NODE) return cfg_error(x, m, "'%s' must be a mapping", section);
  int rc = 0;
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top && !rc; p++) {
    yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
    yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
    const char *key = scalar(k);
    if (!key) return cfg_error(x, k, "%s: keys must be strings", section);
    if (strcmp(section, "budget") == 0) {
      if (strcmp(key, "samples") == 0) rc = get_count(x, v, key, &c->samples);
      else if (strcmp(key, "time") == 0) rc = get_real(x, v, key, &c->seconds);
      else if (strcmp(key, "depth") == 0) rc = get_count(x, v, key, &c->depth);
      else rc = cfg_error(x, k, "unknown key 'budget.%s' (samples, time, depth)", key);
    } else if (strcmp(section, "search") == 0) {
      if (strcmp(key, "width") == 0) rc = get_count(x, v, key, &c->width);
      else if (strcmp(key, "branching") == 0) rc = get_count(x, v, key, &c->branching);
      else if (strcmp(key, "retries") == 0) rc = get_count(x, v, key, &c->retries);
      else if (strcmp(key, "rollouts") == 0) rc = get_count(x, v, key, &c->rollouts);
      else if (strcmp(key, "seed") == 0) rc = get_u64(x, v, key, &c->seed);
      else rc = cfg_error(x, k, "unknown key 'search.%s' (width, branching, retries, rollouts, seed)", key);
    } else if (strcmp(section, "llm") == 0) {
      if (strcmp(key, "endpoint") == 0) rc = get_string(x, v, key, &c->endpoint);
      else if (strcmp(key, "model") == 0) rc = get_string(x, v, key, &c->model);
      else if (strcmp(key, "api_key_env") == 0) rc = get_string(x, v, key, &c->api_key_env);
      else if (strcmp(key, "command") == 0) rc = get_string(x, v, key, &c->llm_command);
      else if (strcmp(key, "timeout") == 0) rc = get_real(x, v, key, &c->llm_timeout);
      else if (strcmp(key, "temperature") == 0) rc = get_real(x, v, key, &c->temperature);
      else if (strcmp(key, "max_tokens") == 0) rc = get_count(x, v, key, &c->max_tokens);
      else rc = cfg_error(x, k, "unknown key 'llm.%s' (endpoint, model, api_key_env, command, timeout, temperature, max_tokens)", key);
    } else { /* measure */
      if (strcmp(key, "backend") == 0) rc = get_string(x, v, key, &c->backend);
      else if (strcmp(key, "rounds") == 0) rc = get_count(x, v, key, &c->rounds);
      else if (strcmp(key, "max_rounds") == 0) rc = get_count(x, v, key, &c->max_rounds);
      else if (strcmp(key, "time") == 0) rc = get_real(x, v, key, &c->compare_seconds);
      else if (strcmp(key, "confidence") == 0) rc = get_real(x, v, key, &c->confidence);
      else if (strcmp(key, "sets") == 0) rc = get_count(x, v, key, &c->sets);
      else rc = cfg_error(x, k, "unknown key 'measure.%s' (backend, rounds, max_rounds, time, confidence, sets)", key);
    }
  }
  return rc;
}

static int parse_algorithms(bench_config *c, const cfg_ctx *x, yaml_node_t *v) {
  char **names = NULL;
  size_t n = 0;
  int rc = get_list(x, v, "algorithms", &names, &n);
  if (rc) return rc;
  c->nalgorithms = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    leir_search_algorithm a;
    if (leir_search_algorithm_from_name(names[i], &a) != LEIR_OK) {
      rc = cfg_error(x, v, "unknown algorithm '%s' (greedy, beam, bfs, dfs, mcts, chain)", names[i]);
      break;
    }
    bool dup = false;
    for (size_t j = 0; j < c->nalgorithms; j++) dup |= c->algorithms[j] == a;
    if (!dup) c->algorithms[c->nalgorithms++] = a;
  }
  if (!rc && c->nalgorithms == 0) rc = cfg_error(x, v, "'%s' is empty", "algorithms");
  free_list(names, n);
  return rc;
}

static void defaults(bench_config *c) {
  memset(c, 0, sizeof *c);
  leir_search_options so = LEIR_SEARCH_OPTIONS_INIT;
  leir_compare_options co = LEIR_COMPARE_OPTIONS_INIT;
  leir_verifier_options vo = LEIR_VERIFIER_OPTIONS_INIT;
  for (int a = LEIR_SEARCH_GREEDY; a <= LEIR_SEARCH_CHAIN; a++)
    c->algorithms[c->nalgorithms++] = (leir_search_algorithm)a;
  c->shape = LEIR_SHAPE_DEFAULT;
  c->policy = LEIR_POLICY_COST;
  c->llm_timeout = 300;
  c->temperature = -1;
  c->samples = so.max_samples;
  c->depth = so.max_depth;
  c->width = so.width;
  c->branching = so.branching;
  c->retries = so.retries;
  c->rollouts = so.rollouts;
  c->seed = so.seed;
  c->rounds = co.min_rounds;
  c->max_rounds = co.max_rounds;
  c->compare_seconds = co.max_seconds;
  c->confidence = co.confidence;
  c->sets = vo.input_sets;
}

int bench_config_load(bench_config *c, const char *path, const char *workloads_dir) {
  defaults(c);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: error: cannot read: %s\n", path, strerror(errno));
    return EXIT_INVALID;
  }
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, f);
  if (!yaml_parser_load(&parser, &doc)) {
    fprintf(stderr, "%s:%lu: error: %s\n", path, (unsigned long)parser.problem_mark.line + 1,
            parser.problem ? parser.problem : "malformed YAML");
    yaml_parser_delete(&parser);
    fclose(f);
    return EXIT_INVALID;
  }
  yaml_parser_delete(&parser);
  fclose(f);
  char *base = strdup(path);
  char *slash = base ? strrchr(base, '/') : NULL;
  if (slash) *slash = '\0';
  else if (base) base[0] = '\0';
  cfg_ctx x = {&doc, path, base ? base : ""};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  int rc = 0;
  yaml_node_t *programs = NULL;
  char *policy = NULL;
  if (!root || root->type != YAML_MAPPING_NODE) {
    rc = cfg_error(&x, root, "%s", "the config must be a mapping");
  } else {
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top && !rc; p++) {
      yaml_node_t *k = yaml_document_get_node(&doc, p->key);
      yaml_node_t *v = yaml_document_get_node(&doc, p->value);
      const char *key = scalar(k);
      if (!key) rc = cfg_error(&x, k, "%s", "keys must be strings");
      else if (strcmp(key, "name") == 0) rc = get_string(&x, v, key, &c->name);
      else if (strcmp(key, "programs") == 0) programs = v;
      else if (strcmp(key, "algorithms") == 0) rc = parse_algorithms(c, &x, v);
      else if (strcmp(key, "policy") == 0) rc = get_string(&x, v, key, &policy);
      else if (strcmp(key, "budget") == 0 || strcmp(key, "search") == 0 ||
               strcmp(key, "llm") == 0 || strcmp(key, "measure") == 0)
        rc = parse_map(c, &x, v, key);
      else
        rc = cfg_error(&x, k, "unknown key '%s' (name, programs, algorithms, policy, budget, search, llm, measure)", key);
    }
  }
  if (!rc && policy && strcmp(policy, "llm") != 0 &&
      leir_search_policy_from_name(policy, &c->policy) != LEIR_OK)
    rc = cfg_error(&x, root, "unknown policy '%s' (cost, exhaustive, random, llm)", policy);
  if (!rc && policy && strcmp(policy, "llm") == 0 && !c->endpoint && !c->llm_command)
    rc = cfg_error(&x, root, "%s", "policy llm needs llm.endpoint or llm.command");
  if (!rc && c->endpoint && c->llm_command)
    rc = cfg_error(&x, root, "%s", "llm.endpoint and llm.command exclude each other");
  if (!rc && !programs) rc = cfg_error(&x, root, "%s", "no 'programs' (files, workloads)");
  if (!rc) rc = parse_programs(c, &x, programs, workloads_dir);
  if (!rc && c->nprograms == 0) rc = cfg_error(&x, programs, "%s", "'programs' lists no program");
  if (!rc && !(c->confidence > 0.5 && c->confidence < 1))
    rc = cfg_error(&x, root, "%s", "measure.confidence must be in (0.5, 1)");
  if (!rc && !c->name) {
    const char *b = strrchr(path, '/');
    c->name = strdup(b ? b + 1 : path);
  }
  free(policy);
  free(base);
  yaml_document_delete(&doc);
  if (rc) bench_config_free(c);
  return rc;
}

void bench_config_free(bench_config *c) {
  for (size_t i = 0; i < c->nprograms; i++) {
    free(c->programs[i].id);
    free(c->programs[i].path);
  }
  free(c->programs);
  leir_catalog_free(c->catalog);
  free(c->name);
  free(c->dtype);
  free(c->endpoint);
  free(c->model);
  free(c->api_key_env);
  free(c->llm_command);
  free(c->backend);
  memset(c, 0, sizeof *c);
}

leir_program *bench_program_load(const bench_config *c, size_t i, char *err, size_t cap) {
  const bench_program *p = &c->programs[i];
  leir_program *prog = NULL;
  if (p->workload) {
    leir_emit_options eo = LEIR_EMIT_OPTIONS_INIT;
    eo.shape = c->shape;
    eo.seed = c->shape_seed;
    eo.dtype = c->dtype;
    if (leir_workload_emit(p->workload, &eo, NULL, &prog, NULL, 0) != LEIR_OK) {
      snprintf(err, cap, "%s: %s", p->id, leir_error_last()->message);
      return NULL;
    }
    return prog;
  }
  /* as every command reads a file (lenient text, or a program file);
   * it prints the diagnostic */
  int rc = 0;
  prog = tool_load_program(p->path, &rc);
  if (!prog) snprintf(err, cap, "%s: cannot be loaded", p->id);
  return prog;
}
