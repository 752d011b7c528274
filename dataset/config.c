/* The dataset config (docs/dataset.md, "Config"): YAML read with libyaml's
 * document API. Unknown keys are errors, so a misspelt option is never
 * silently ignored. Defaults are the reference pipeline's
 * (pipeline-reference.md §2.3, §4). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ds.h"
#include "error.h"
#include "input.h"

/* The deepest a config nests (root, filter, multi, a rule, its strategies:
 * 5), with room to spare. */
#define CONFIG_MAX_DEPTH 16
/* Bounds on the counts that size a build, checked before anything is
 * allocated: a walk step lists every candidate of a state (walks grow
 * programs), and every state of a unit is kept until the unit is written. */
#define MAX_WALKS 10000
#define MAX_WALK_DEPTH 100
#define MAX_WALK_STEPS 100000 /* count x depth: the states one unit may hold */
#define MAX_RANDOM_SHAPES 100000
#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct cctx {
  yaml_document_t doc;
  leir_status st;
  const char *base;
  /* the test fraction may come from split.test or (older configs) eval.fraction */
  const yaml_node_t *split_test, *eval_fraction;
  int split_seed_set;
} cctx;

static leir_status cerr(cctx *c, const yaml_node_t *at, const char *fmt, const char *arg) {
  if (c->st == LEIR_OK)
    c->st = leir__error(LEIR_ERR_PARSE, "dataset.config", NULL,
                        at ? (uint32_t)at->start_mark.line + 1 : 0,
                        at ? (uint32_t)at->start_mark.column + 1 : 0, fmt, arg);
  return c->st;
}

static yaml_node_t *node(cctx *c, int id) { return yaml_document_get_node(&c->doc, id); }

static const char *scal(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static char *dup_str(cctx *c, const yaml_node_t *n, const char *what) {
  const char *s = scal(n);
  if (!s || strlen(s) != n->data.scalar.length) {
    cerr(c, n, "%s must be a string", what);
    return NULL;
  }
  char *d = strdup(s);
  if (!d) c->st = leir__error_nomem();
  return d;
}

static int get_u64(cctx *c, const yaml_node_t *n, const char *what, uint64_t *out) {
  const char *s = scal(n);
  char *end = NULL;
  if (!s || !*s || *s == '-') return cerr(c, n, "%s must be a non-negative integer", what), 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end) return cerr(c, n, "%s must be a non-negative integer", what), 0;
  *out = v;
  return 1;
}

static int get_u32(cctx *c, const yaml_node_t *n, const char *what, uint32_t *out) {
  uint64_t v;
  if (!get_u64(c, n, what, &v)) return 0;
  if (v > UINT32_MAX) return cerr(c, n, "%s is too large", what), 0;
  *out = (uint32_t)v;
  return 1;
}

static int get_prob(cctx *c, const yaml_node_t *n, const char *what, double *out) {
  const char *s = scal(n);
  char *end = NULL;
  double v = s ? strtod(s, &end) : -1;
  if (!s || !*s || *end || !(v >= 0 && v <= 1)) return cerr(c, n, "%s must be a number in [0, 1]", what), 0;
  *out = v;
  return 1;
}

static int get_bool(cctx *c, const yaml_node_t *n, const char *what, int *out) {
  const char *s = scal(n);
  if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))) return *out = 1, 1;
  if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))) return *out = 0, 1;
  return cerr(c, n, "%s must be true or false", what), 0;
}

/* A string or a list of strings. */
static int get_strs(cctx *c, const yaml_node_t *n, const char *what, char ***out, size_t *count) {
  if (n && n->type == YAML_SCALAR_NODE) {
    char **v = calloc(1, sizeof *v);
    if (!v || !(v[0] = dup_str(c, n, what))) return free(v), 0;
    *out = v;
    *count = 1;
    return 1;
  }
  if (!n || n->type != YAML_SEQUENCE_NODE) return cerr(c, n, "%s must be a list of strings", what), 0;
  size_t k = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
  char **v = calloc(k ? k : 1, sizeof *v);
  if (!v) return c->st = leir__error_nomem(), 0;
  *out = v;
  *count = 0;
  for (size_t i = 0; i < k; i++) {
    if (!(v[i] = dup_str(c, node(c, n->data.sequence.items.start[i]), what))) return 0;
    *count = i + 1;
  }
  return 1;
}

static int get_default_list(char ***out, size_t *n, const char *value) {
  char **v = calloc(1, sizeof *v);
  if (!v || !(v[0] = strdup(value))) return free(v), 0;
  *out = v;
  *n = 1;
  return 1;
}

static void free_strs(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

static char *resolve(cctx *c, const char *path) {
  if (!path) return NULL;
  char *r;
  if (path[0] == '/' || !c->base || !*c->base) {
    r = strdup(path);
  } else {
    r = malloc(strlen(c->base) + strlen(path) + 2);
    if (r) sprintf(r, "%s/%s", c->base, path);
  }
  if (!r) c->st = leir__error_nomem();
  return r;
}

#define FOR_PAIRS(c, map, pr) \
  for (yaml_node_pair_t *pr = (map)->data.mapping.pairs.start; pr < (map)->data.mapping.pairs.top; pr++)

/* A key given twice would silently keep one of the values (unknown keys are
 * errors for the same reason): refused. */
static int dup_key(cctx *c, const yaml_node_t *map, const yaml_node_pair_t *pr, const char *where) {
  const char *k = scal(node(c, pr->key));
  for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; k && q < pr; q++) {
    const char *e = scal(node(c, q->key));
    if (e && !strcmp(e, k)) {
      if (c->st == LEIR_OK)
        c->st = leir__error(LEIR_ERR_PARSE, "dataset.config", NULL,
                            (uint32_t)node(c, pr->key)->start_mark.line + 1,
                            (uint32_t)node(c, pr->key)->start_mark.column + 1,
                            "key '%s' given twice%s%s (line %u)", k, where[0] ? " in " : "", where,
                            (unsigned)node(c, q->key)->start_mark.line + 1);
      return 1;
    }
  }
  return 0;
}

static int expect_map(cctx *c, const yaml_node_t *n, const char *what) {
  if (!n || n->type != YAML_MAPPING_NODE) return cerr(c, n, "%s must be a mapping", what), 0;
  return 1;
}

static int strategy_list(cctx *c, const yaml_node_t *n, int *idx, size_t *count, size_t cap) {
  char **names = NULL;
  size_t k = 0;
  if (!get_strs(c, n, "strategies", &names, &k)) return free_strs(names, k), 0;
  *count = 0;
  for (size_t i = 0; i < k && c->st == LEIR_OK; i++) {
    size_t s;
    if (leir_strategy_find(names[i], &s) != LEIR_OK) {
      cerr(c, n, "unknown strategy '%s'", names[i]);
    } else if (*count < cap) {
      idx[(*count)++] = (int)s;
    }
  }
  free_strs(names, k);
  return c->st == LEIR_OK;
}

static void rule_set(leir__ds_rule *r, const char *const *names, double keep, uint64_t cap) {
  r->n = 0;
  for (size_t i = 0; names[i]; i++) {
    size_t s;
    if (leir_strategy_find(names[i], &s) == LEIR_OK) r->strategies[r->n++] = (int)s;
  }
  r->keep = keep;
  r->cap = cap;
}

static const char *const group_m_forward[] = {"operator_fission", "factorization", "cancellation",
                                              "powsimp", "logsimp", "collect", NULL};
static const char *const group_m_inverse[] = {"expand_factorization", "expand_cancellation", "apart",
                                              "together", "expand_powsimp", "expand_log",
                                              "expand_collect", NULL};
static const char *const group_m[] = {"operator_fission", "factorization", "expand_factorization",
                                      "cancellation", "expand_cancellation", "apart", "together",
                                      "powsimp", "expand_powsimp", "logsimp", "expand_log",
                                      "collect", "expand_collect", NULL};
static const char *const group_f[] = {"operator_fusion", "compute_inline", "expression_splitting",
                                      "expression_reorder", "loop_reorder", "loop_unrolling",
                                      "loop_parallelization", "loop_vectorization", "loop_binding",
                                      "set_storage_layout", "exponential_split",
                                      "multiplicative_split", "additive_split", NULL};

static void defaults(leir__ds_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->seed = 42;
  cfg->random_shapes = 1;
  cfg->max_source_evaluations = (uint64_t)1 << 32;
  for (size_t i = 0; i < leir_strategy_count() && i < 256; i++)
    cfg->enabled[i] = leir_strategy_info_at(i)->implemented;
  cfg->walks = 0;
  cfg->depth = 0;
  cfg->per_strategy = 0;
  cfg->per_state = 0;
  cfg->interp_max_evaluations = 2000000;
  cfg->verify_threads = 1;
  cfg->verify_seed = 1;
  cfg->input_sets = 3;
  cfg->keep_close = 1;
  cfg->single_cap = 250;
  rule_set(&cfg->single_rules[0], group_m_forward, 0.5, 50);
  rule_set(&cfg->single_rules[1], group_m_inverse, 0.3, 10);
  cfg->n_single_rules = 2;
  rule_set(&cfg->multi_rules[0], group_m, 0.0, 0);
  rule_set(&cfg->multi_rules[1], group_f, 0.5, 2000);
  cfg->n_multi_rules = 2;
  cfg->multi_min_items = 2;
  cfg->multi_enabled = 1;
  cfg->multi_max_items = 19;
  cfg->split_by = LEIR__SPLIT_BY_PROGRAM;
  cfg->split_test = 0.2;
  cfg->split_validation = 0.1;
  cfg->measure_min_runs = 5;
  cfg->measure_max_seconds = 2;
}

static void read_rules(cctx *c, const yaml_node_t *n, leir__ds_rule *rules, size_t *count,
                       const char *what) {
  if (!n || n->type != YAML_SEQUENCE_NODE) {
    cerr(c, n, "%s must be a list of {strategies, keep, cap}", what);
    return;
  }
  *count = 0;
  for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
    yaml_node_t *r = node(c, *it);
    if (!expect_map(c, r, what)) return;
    if (*count >= 8) {
      cerr(c, r, "%s: at most 8 rules", what);
      return;
    }
    leir__ds_rule *rule = &rules[(*count)++];
    memset(rule, 0, sizeof *rule);
    rule->keep = 1;
    rule->cap = UINT64_MAX;
    FOR_PAIRS(c, r, pr) {
      const char *k = scal(node(c, pr->key));
      yaml_node_t *v = node(c, pr->value);
      if (dup_key(c, r, pr, what)) return;
      if (!k) {
        cerr(c, v, "%s: keys must be strings", what);
      } else if (!strcmp(k, "strategies")) {
        strategy_list(c, v, rule->strategies, &rule->n, 64);
      } else if (!strcmp(k, "keep")) {
        get_prob(c, v, "keep", &rule->keep);
      } else if (!strcmp(k, "cap")) {
        get_u64(c, v, "cap", &rule->cap);
      } else {
        cerr(c, node(c, pr->key), "unknown key '%s' in a rule", k);
      }
      if (c->st != LEIR_OK) return;
    }
  }
}

static void read_section(cctx *c, leir__ds_config *cfg, const char *sec, yaml_node_t *m) {
  if (!expect_map(c, m, sec)) return;
  FOR_PAIRS(c, m, pr) {
    const char *k = scal(node(c, pr->key));
    yaml_node_t *v = node(c, pr->value);
    if (dup_key(c, m, pr, sec)) return;
    if (!k) {
      cerr(c, v, "keys must be strings%s", "");
      return;
    }
    int ok = 1;
    if (!strcmp(sec, "sources")) {
      if (!strcmp(k, "workloads")) {
        const char *s = scal(v);
        if (s && !strcmp(s, "all")) {
          cfg->all_workloads = 1;
        } else if (s && (!strcmp(s, "level1") || !strcmp(s, "level2"))) {
          cfg->all_workloads = 1;
          cfg->level = s[5] - '0';
        } else {
          ok = get_strs(c, v, "sources.workloads", &cfg->workloads, &cfg->n_workloads);
        }
      } else if (!strcmp(k, "shapes")) {
        ok = get_strs(c, v, "sources.shapes", &cfg->shapes, &cfg->n_shapes);
        for (size_t i = 0; ok && i < cfg->n_shapes; i++)
          if (strcmp(cfg->shapes[i], "small") && strcmp(cfg->shapes[i], "default") &&
              strcmp(cfg->shapes[i], "random"))
            ok = !cerr(c, v, "unknown shape '%s' (small, default or random)", cfg->shapes[i]);
      } else if (!strcmp(k, "random_shapes")) {
        ok = get_u32(c, v, "sources.random_shapes", &cfg->random_shapes);
        if (ok && (cfg->random_shapes < 1 || cfg->random_shapes > MAX_RANDOM_SHAPES))
          ok = !cerr(c, v, "sources.random_shapes must be 1..%s", STR(MAX_RANDOM_SHAPES));
      } else if (!strcmp(k, "dtypes")) {
        ok = get_strs(c, v, "sources.dtypes", &cfg->dtypes, &cfg->n_dtypes);
        for (size_t i = 0; ok && i < cfg->n_dtypes; i++) {
          leir_dtype d;
          if (leir_dtype_from_name(cfg->dtypes[i], &d) != LEIR_OK)
            ok = !cerr(c, v, "unknown dtype '%s'", cfg->dtypes[i]);
        }
      } else if (!strcmp(k, "programs")) {
        char *p = dup_str(c, v, "sources.programs");
        cfg->programs = resolve(c, p);
        free(p);
      } else if (!strcmp(k, "workloads_dir")) {
        char *p = dup_str(c, v, "sources.workloads_dir");
        cfg->workloads_dir = resolve(c, p);
        free(p);
      } else if (!strcmp(k, "max_evaluations")) {
        ok = get_u64(c, v, "sources.max_evaluations", &cfg->max_source_evaluations);
      } else {
        cerr(c, node(c, pr->key), "unknown key '%s' in sources", k);
      }
    } else if (!strcmp(sec, "walks")) {
      if (!strcmp(k, "count")) {
        ok = get_u32(c, v, "walks.count", &cfg->walks);
        if (ok && cfg->walks > MAX_WALKS) ok = !cerr(c, v, "walks.count must be at most %s", STR(MAX_WALKS));
      } else if (!strcmp(k, "depth")) {
        ok = get_u32(c, v, "walks.depth", &cfg->depth);
        if (ok && cfg->depth > MAX_WALK_DEPTH)
          ok = !cerr(c, v, "walks.depth must be at most %s", STR(MAX_WALK_DEPTH));
      }
      else cerr(c, node(c, pr->key), "unknown key '%s' in walks", k);
    } else if (!strcmp(sec, "sampling")) {
      if (!strcmp(k, "per_strategy")) ok = get_u32(c, v, "sampling.per_strategy", &cfg->per_strategy);
      else if (!strcmp(k, "per_state")) ok = get_u32(c, v, "sampling.per_state", &cfg->per_state);
      else cerr(c, node(c, pr->key), "unknown key '%s' in sampling", k);
    } else if (!strcmp(sec, "verify")) {
      if (!strcmp(k, "backend")) {
        free(cfg->backend);
        cfg->backend = dup_str(c, v, "verify.backend");
        if (cfg->backend && strcmp(cfg->backend, "auto") && strcmp(cfg->backend, "interp") &&
            strcmp(cfg->backend, "cpu") && strcmp(cfg->backend, "cuda"))
          cerr(c, v, "unknown backend '%s' (auto, interp, cpu, cuda)", cfg->backend);
      } else if (!strcmp(k, "interp_max_evaluations")) {
        ok = get_u64(c, v, "verify.interp_max_evaluations", &cfg->interp_max_evaluations);
      } else if (!strcmp(k, "threads")) {
        ok = get_u32(c, v, "verify.threads", &cfg->verify_threads);
      } else if (!strcmp(k, "seed")) {
        ok = get_u64(c, v, "verify.seed", &cfg->verify_seed);
      } else if (!strcmp(k, "input_sets")) {
        ok = get_u32(c, v, "verify.input_sets", &cfg->input_sets);
        if (ok && (cfg->input_sets < 1 || cfg->input_sets > 64))
          cerr(c, v, "verify.input_sets must be 1..64%s", "");
      } else if (!strcmp(k, "keep_close")) {
        ok = get_bool(c, v, "verify.keep_close", &cfg->keep_close);
      } else {
        cerr(c, node(c, pr->key), "unknown key '%s' in verify", k);
      }
    } else if (!strcmp(sec, "filter")) {
      if (!strcmp(k, "single_cap")) ok = get_u64(c, v, "filter.single_cap", &cfg->single_cap);
      else if (!strcmp(k, "single")) read_rules(c, v, cfg->single_rules, &cfg->n_single_rules, "filter.single");
      else if (!strcmp(k, "multi")) read_rules(c, v, cfg->multi_rules, &cfg->n_multi_rules, "filter.multi");
      else if (!strcmp(k, "multi_min_items")) ok = get_u32(c, v, "filter.multi_min_items", &cfg->multi_min_items);
      else cerr(c, node(c, pr->key), "unknown key '%s' in filter", k);
    } else if (!strcmp(sec, "multi")) {
      if (!strcmp(k, "enabled")) ok = get_bool(c, v, "multi.enabled", &cfg->multi_enabled);
      else if (!strcmp(k, "max_items")) ok = get_u32(c, v, "multi.max_items", &cfg->multi_max_items);
      else cerr(c, node(c, pr->key), "unknown key '%s' in multi", k);
    } else if (!strcmp(sec, "measure")) {
      if (!strcmp(k, "enabled")) {
        ok = get_bool(c, v, "measure.enabled", &cfg->measure);
      } else if (!strcmp(k, "backend")) {
        free(cfg->measure_backend);
        cfg->measure_backend = dup_str(c, v, "measure.backend");
        if (cfg->measure_backend && strcmp(cfg->measure_backend, "interp") &&
            strcmp(cfg->measure_backend, "cpu") && strcmp(cfg->measure_backend, "cuda"))
          cerr(c, v, "unknown backend '%s' (interp, cpu, cuda)", cfg->measure_backend);
      } else if (!strcmp(k, "min_runs")) {
        ok = get_u32(c, v, "measure.min_runs", &cfg->measure_min_runs);
      } else if (!strcmp(k, "max_seconds")) {
        uint64_t secs = 0;
        ok = get_u64(c, v, "measure.max_seconds", &secs);
        cfg->measure_max_seconds = (double)secs;
      } else {
        cerr(c, node(c, pr->key), "unknown key '%s' in measure", k);
      }
    } else if (!strcmp(sec, "split")) {
      if (!strcmp(k, "by")) {
        const char *s = scal(v);
        if (s && !strcmp(s, "program")) cfg->split_by = LEIR__SPLIT_BY_PROGRAM;
        else if (s && !strcmp(s, "workload")) cfg->split_by = LEIR__SPLIT_BY_WORKLOAD;
        else cerr(c, v, "split.by must be program or workload%s", "");
      } else if (!strcmp(k, "test")) {
        ok = get_prob(c, v, "split.test", &cfg->split_test);
        c->split_test = v;
      } else if (!strcmp(k, "validation")) {
        ok = get_prob(c, v, "split.validation", &cfg->split_validation);
      } else if (!strcmp(k, "seed")) {
        ok = get_u64(c, v, "split.seed", &cfg->split_seed);
        c->split_seed_set = ok;
      } else {
        cerr(c, node(c, pr->key), "unknown key '%s' in split", k);
      }
    } else if (!strcmp(sec, "eval")) {
      /* the configs before splits by program: eval.fraction is split.test */
      if (!strcmp(k, "fraction")) {
        ok = get_prob(c, v, "eval.fraction", &cfg->split_test);
        c->eval_fraction = v;
      } else {
        cerr(c, node(c, pr->key), "unknown key '%s' in eval (eval.fraction is split.test)", k);
      }
    }
    (void)ok;
    if (c->st != LEIR_OK) return;
  }
}

leir_status leir__ds_config_read(leir__ds_config *cfg, const char *text, size_t len,
                                 const char *base_dir) {
  defaults(cfg);
  cctx c;
  memset(&c, 0, sizeof c);
  c.base = base_dir;
  /* deep flow collections are quadratic in libyaml's scanner; a second
   * document would be ignored (lib/input.h) */
  if (memchr(text, '\0', len))
    return leir__error(LEIR_ERR_PARSE, "dataset.config", NULL, 0, 0,
                       "a dataset config cannot contain NUL bytes");
  leir_status gst = leir__yaml_guard(text, len, CONFIG_MAX_DEPTH, "a dataset config");
  if (gst != LEIR_OK) return gst;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return leir__error_nomem();
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, &c.doc)) {
    leir_status st = leir__error(LEIR_ERR_PARSE, "dataset.config", NULL,
                                 (uint32_t)parser.problem_mark.line + 1,
                                 (uint32_t)parser.problem_mark.column + 1, "YAML: %s",
                                 parser.problem ? parser.problem : "malformed");
    yaml_parser_delete(&parser);
    return st;
  }
  yaml_parser_delete(&parser);
  yaml_node_t *root = yaml_document_get_root_node(&c.doc);
  if (!root) {
    cerr(&c, NULL, "the config is empty (give at least sources: {workloads: ...} or {programs: ...})%s", "");
    goto done;
  }
  if (!expect_map(&c, root, "the config")) goto done;
  FOR_PAIRS(&c, root, pr) {
    const char *k = scal(node(&c, pr->key));
    yaml_node_t *v = node(&c, pr->value);
    if (dup_key(&c, root, pr, "")) break;
    if (!k) {
      cerr(&c, v, "keys must be strings%s", "");
    } else if (!strcmp(k, "name")) {
      free(cfg->name);
      cfg->name = dup_str(&c, v, "name");
    } else if (!strcmp(k, "seed")) {
      get_u64(&c, v, "seed", &cfg->seed);
    } else if (!strcmp(k, "system_prompt")) {
      free(cfg->system_prompt);
      cfg->system_prompt = dup_str(&c, v, "system_prompt");
    } else if (!strcmp(k, "strategies")) {
      const char *s = scal(v);
      if (!(s && !strcmp(s, "all"))) {
        int idx[256];
        size_t n = 0;
        if (strategy_list(&c, v, idx, &n, 256)) {
          memset(cfg->enabled, 0, sizeof cfg->enabled);
          for (size_t i = 0; i < n; i++) {
            if (!leir_strategy_info_at((size_t)idx[i])->implemented)
              cerr(&c, v, "strategy '%s' is not implemented in this build",
                   leir_strategy_info_at((size_t)idx[i])->name);
            cfg->enabled[idx[i]] = 1;
          }
        }
      }
    } else if (!strcmp(k, "sources") || !strcmp(k, "walks") || !strcmp(k, "sampling") ||
               !strcmp(k, "verify") || !strcmp(k, "filter") || !strcmp(k, "multi") ||
               !strcmp(k, "eval") || !strcmp(k, "split") || !strcmp(k, "measure")) {
      read_section(&c, cfg, k, v);
    } else {
      cerr(&c, node(&c, pr->key), "unknown key '%s'", k);
    }
    if (c.st != LEIR_OK) break;
  }
  if (c.st == LEIR_OK && (uint64_t)cfg->walks * cfg->depth > MAX_WALK_STEPS)
    cerr(&c, root, "walks.count x walks.depth must be at most %s (the states of one unit)",
         STR(MAX_WALK_STEPS));
  if (c.st == LEIR_OK && !cfg->all_workloads && cfg->n_workloads == 0 && !cfg->programs)
    cerr(&c, root, "sources: give workloads and/or programs%s", "");
  if (c.st == LEIR_OK && c.split_test && c.eval_fraction)
    cerr(&c, c.eval_fraction, "eval.fraction is split.test: give one of them%s", "");
  if (c.st == LEIR_OK && cfg->split_test + cfg->split_validation > 1 + 1e-12)
    cerr(&c, c.split_test ? c.split_test : c.eval_fraction ? c.eval_fraction : root,
         "split.test + split.validation must be at most 1%s", "");
  if (c.st == LEIR_OK && !c.split_seed_set) cfg->split_seed = cfg->seed;
done:
  yaml_document_delete(&c.doc);
  if (c.st == LEIR_OK) {
    if (!cfg->name && !(cfg->name = strdup("leir-dataset"))) c.st = leir__error_nomem();
    if (!cfg->backend && !(cfg->backend = strdup("auto"))) c.st = leir__error_nomem();
    if (cfg->n_shapes == 0 && !(get_default_list(&cfg->shapes, &cfg->n_shapes, "small")))
      c.st = leir__error_nomem();
  }
  if (c.st != LEIR_OK) leir__ds_config_free(cfg);
  return c.st;
}

void leir__ds_config_free(leir__ds_config *cfg) {
  free(cfg->name);
  free_strs(cfg->workloads, cfg->n_workloads);
  free_strs(cfg->shapes, cfg->n_shapes);
  free_strs(cfg->dtypes, cfg->n_dtypes);
  free(cfg->programs);
  free(cfg->workloads_dir);
  free(cfg->backend);
  free(cfg->system_prompt);
  free(cfg->measure_backend);
  memset(cfg, 0, sizeof *cfg);
}

static void put_rules(leir__strbuf *b, const leir__ds_rule *r, size_t n) {
  leir__sb_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    leir__sb_printf(b, "%s{\"keep\":%.17g,\"cap\":%llu,\"strategies\":[", i ? "," : "", r[i].keep,
                    (unsigned long long)r[i].cap);
    for (size_t k = 0; k < r[i].n; k++) leir__sb_printf(b, "%s%d", k ? "," : "", r[i].strategies[k]);
    leir__sb_puts(b, "]}");
  }
  leir__sb_putc(b, ']');
}

static void put_list(leir__strbuf *b, char **v, size_t n) {
  leir__sb_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i) leir__sb_putc(b, ',');
    leir__ds_put_str(b, v[i]);
  }
  leir__sb_putc(b, ']');
}

/* Everything that changes what is built, and nothing else (not the paths of
 * the catalogue or the programs file, only their names). */
void leir__ds_config_canonical(const leir__ds_config *cfg, leir__strbuf *b) {
  leir__sb_printf(b, "{\"schema\":%d,\"name\":", LEIR__DATASET_SCHEMA);
  leir__ds_put_str(b, cfg->name);
  leir__sb_printf(b, ",\"seed\":%llu,\"all\":%d,\"level\":%d,\"workloads\":",
                  (unsigned long long)cfg->seed, cfg->all_workloads, cfg->level);
  put_list(b, cfg->workloads, cfg->n_workloads);
  leir__sb_puts(b, ",\"shapes\":");
  put_list(b, cfg->shapes, cfg->n_shapes);
  leir__sb_printf(b, ",\"random_shapes\":%u,\"dtypes\":", cfg->random_shapes);
  put_list(b, cfg->dtypes, cfg->n_dtypes);
  const char *prog = cfg->programs ? strrchr(cfg->programs, '/') : NULL;
  leir__sb_puts(b, ",\"programs\":");
  leir__ds_put_str(b, prog ? prog + 1 : cfg->programs ? cfg->programs : "");
  leir__sb_printf(b, ",\"max_evaluations\":%llu,\"enabled\":\"",
                  (unsigned long long)cfg->max_source_evaluations);
  for (size_t i = 0; i < leir_strategy_count() && i < 256; i++) leir__sb_putc(b, cfg->enabled[i] ? '1' : '0');
  leir__sb_printf(b, "\",\"walks\":%u,\"depth\":%u,\"per_strategy\":%u,\"per_state\":%u,",
                  cfg->walks, cfg->depth, cfg->per_strategy, cfg->per_state);
  leir__sb_puts(b, "\"backend\":");
  leir__ds_put_str(b, cfg->backend);
  leir__sb_printf(b, ",\"interp_max\":%llu,\"verify_seed\":%llu,\"input_sets\":%u,\"keep_close\":%d,",
                  (unsigned long long)cfg->interp_max_evaluations,
                  (unsigned long long)cfg->verify_seed, cfg->input_sets, cfg->keep_close);
  leir__sb_printf(b, "\"single_cap\":%llu,\"single\":", (unsigned long long)cfg->single_cap);
  put_rules(b, cfg->single_rules, cfg->n_single_rules);
  leir__sb_puts(b, ",\"multi\":");
  put_rules(b, cfg->multi_rules, cfg->n_multi_rules);
  leir__sb_printf(b, ",\"multi_min\":%u,\"multi_enabled\":%d,\"multi_max\":%u,",
                  cfg->multi_min_items, cfg->multi_enabled, cfg->multi_max_items);
  leir__sb_printf(b, "\"split\":{\"by\":%d,\"test\":%.17g,\"validation\":%.17g,\"seed\":%llu},",
                  cfg->split_by, cfg->split_test, cfg->split_validation,
                  (unsigned long long)cfg->split_seed);
  leir__sb_puts(b, "\"system\":");
  leir__ds_put_str(b, cfg->system_prompt ? cfg->system_prompt : "");
  leir__sb_printf(b, ",\"measure\":%d,\"measure_backend\":", cfg->measure);
  leir__ds_put_str(b, cfg->measure_backend ? cfg->measure_backend : "cpu");
  leir__sb_printf(b, ",\"min_runs\":%u,\"max_seconds\":%.17g", cfg->measure_min_runs, cfg->measure_max_seconds);
  leir__sb_putc(b, '}');
}
