/* Multi-step search (include/leir/experimental/search.h): the six
 * algorithms over nodes that verification and timing accepted, the
 * proposal pipeline (resolve, ground, transposition table, measure), the
 * measurement database lookups and the records of the trajectory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#include "backend.h"
#include "error.h"
#include "options.h"
#include "strbuf.h"

typedef struct search_record_store {
  leir_search_record r; /* strings below are owned */
} search_record_store;

typedef struct search_ctx {
  leir_search_options o;
  leir_compare_options cmp;
  leir_verifier_options vopts;
  leir_candidates_options copts;
  leir_backend *backend;
  leir_verifier *verifier;
  char backend_name[128]; /* the database's backend column (leir__backend_key) */
  char machine[64];
  char protocol[256];
  search_node *nodes;
  size_t nnodes, capnodes;
  uint64_t *table; /* open addressing; 0 = empty (a zero hash is stored as 1) */
  size_t tcap, tcount;
  leir_search_record *records;
  size_t nrecords, caprecords;
  uint32_t samples, measured, reused, accepted, rejected;
  uint32_t not_faster; /* measured, verified, not faster: usable answers (expand) */
  uint32_t lookaheads;
  uint64_t lookahead_evals;
  int best;
  double start;
  int stopped_by;
  leir_status fatal; /* a callback's or the backend's failure: stops the search */
  uint64_t rng;
} search_ctx;

struct leir_search_result {
  leir_search_record *records;
  size_t nrecords;
  leir_program *best;
  char *best_steps;
  leir_search_summary summary;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *dup_str(const char *s) { return strdup(s ? s : ""); }

/* ---- names ---------------------------------------------------------------- */

/* The algorithms (algorithms.def): their names and the functions that run them. */
#define LEIR__SEARCH_ALGORITHM(id, name, run) static void run(search_ctx *ctx);
#include "algorithms.def"
#undef LEIR__SEARCH_ALGORITHM
typedef struct search_algorithm {
  const char *name;
  void (*run)(search_ctx *ctx);
} search_algorithm;
static const search_algorithm algorithms[] = {
#define LEIR__SEARCH_ALGORITHM(id, name, run) [id] = {name, run},
#include "algorithms.def"
#undef LEIR__SEARCH_ALGORITHM
};
/* The built-in policies (policies.def): their names and propose functions. */
typedef struct search_policy {
  const char *name;
  leir_search_propose_fn propose;
} search_policy;
static const search_policy policies[] = {
#define LEIR__SEARCH_POLICY(id, name, propose) [id] = {name, propose},
#include "policies.def"
#undef LEIR__SEARCH_POLICY
};
static const char *const reject_names[] = {"accepted", "malformed", "not-one-step",
                                           "not-applicable", "same", "seen", "verdict",
                                           "not-faster", "depth"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* "a, b, c": the names of a table, for a message. */
static const char *names_list(char *buf, size_t cap, const char *(*name)(size_t), size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < cap; i++) {
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", name(i));
    if (w < 0) break;
    len += (size_t)w;
  }
  return buf;
}
static const char *algorithm_at(size_t i) { return algorithms[i].name; }
static const char *policy_at(size_t i) { return policies[i].name; }

const char *leir_search_algorithm_name(leir_search_algorithm a) {
  return (unsigned)a < COUNT(algorithms) ? algorithms[a].name : NULL;
}
leir_status leir_search_algorithm_from_name(const char *name, leir_search_algorithm *out) {
  for (size_t i = 0; name && out && i < COUNT(algorithms); i++)
    if (strcmp(name, algorithms[i].name) == 0) {
      *out = (leir_search_algorithm)i;
      return LEIR_OK;
    }
  char list[256];
  return leir__error_arg(name, "unknown search algorithm '%s' (%s)", name ? name : "(null)",
                         names_list(list, sizeof list, algorithm_at, COUNT(algorithms)));
}
const char *leir_search_policy_name(leir_search_policy p) {
  return (unsigned)p < COUNT(policies) ? policies[p].name : NULL;
}
leir_status leir_search_policy_from_name(const char *name, leir_search_policy *out) {
  for (size_t i = 0; name && out && i < COUNT(policies); i++)
    if (strcmp(name, policies[i].name) == 0) {
      *out = (leir_search_policy)i;
      return LEIR_OK;
    }
  char list[256];
  return leir__error_arg(name, "unknown policy '%s' (%s)", name ? name : "(null)",
                         names_list(list, sizeof list, policy_at, COUNT(policies)));
}
leir_status leir_search_propose_builtin(leir_search_policy policy, const leir_search_query *query,
                                        leir_search_proposals *out) {
  if (!query || !out) return leir__error_arg("query", "the query or the proposals are NULL");
  if ((unsigned)policy >= COUNT(policies))
    return leir__error_arg("policy", "unknown policy %d", (int)policy);
  return policies[policy].propose(NULL, query, out);
}

const char *leir_search_reject_name(leir_search_reject r) {
  return (unsigned)r < COUNT(reject_names) ? reject_names[r] : NULL;
}

leir_status leir_search_options_init(leir_search_options *opts, size_t size) {
  static const leir_search_options defaults = LEIR_SEARCH_OPTIONS_INIT;
  if (!opts) return leir__error_arg("leir_search_options", "leir_search_options is NULL");
  if (size < sizeof(uint32_t) || size > sizeof defaults)
    return leir__error_arg("leir_search_options",
                           "size %zu is not a size of leir_search_options (this library knows %zu bytes)",
                           size, sizeof defaults);
  memcpy(opts, &defaults, size);
  uint32_t sz = (uint32_t)size;
  memcpy(opts, &sz, sizeof sz);
  return LEIR_OK;
}

/* ---- keys: machine fingerprint and protocol --------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h;
}

leir_status leir_search_machine_fingerprint(uint32_t threads, char *buf, size_t cap) {
  if (!buf || cap < 17) return leir__error_arg("buf", "the buffer is NULL or under 17 bytes");
  char model[256] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0 ||
          strncmp(line, "CPU part", 8) == 0) {
        const char *c = strchr(line, ':');
        if (c) {
          snprintf(model, sizeof model, "%s", c + 1);
          break;
        }
      }
    }
    fclose(f);
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  char desc[512];
  snprintf(desc, sizeof desc, "%s|cpus=%ld|threads=%u|%s", model, cpus,
           threads ? threads : (unsigned)cpus,
#if defined(__x86_64__)
           "x86_64"
#elif defined(__aarch64__)
           "aarch64"
#else
           "other"
#endif
  );
  snprintf(buf, cap, "%016llx",
           (unsigned long long)fnv1a(1469598103934665603ull, desc, strlen(desc)));
  return LEIR_OK;
}

leir_status leir_search_protocol(const leir_compare_options *compare,
                                 const leir_verifier_options *verifier, char *buf, size_t cap) {
  if (!buf || cap == 0) return leir__error_arg("buf", "the buffer is NULL or empty");
  leir_compare_options c;
  leir_verifier_options v;
  leir_status st = LEIR__OPTIONS_READ(leir_compare_options, &c, compare, LEIR_COMPARE_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  st = LEIR__OPTIONS_READ(leir_verifier_options, &v, verifier, LEIR_VERIFIER_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  snprintf(buf, cap,
           "compare/w%u/r%u-%u/t%g/c%g/e%g/s%llu/%s;verify/f%u/s%llu/k%u/r%g/a%g/x%g/m%g",
           c.warmup, c.min_rounds, c.max_rounds, c.max_seconds, c.confidence, c.min_effect,
           (unsigned long long)c.seed, (c.flags & LEIR_BENCH_NO_FLUSH) ? "noflush" : "flush",
           v.flags, (unsigned long long)v.seed, v.input_sets, v.rtol, v.atol, v.reassoc_factor,
           v.min_finite_fraction);
  return LEIR_OK;
}

/* ---- transposition table ---------------------------------------------------- */

static uint64_t tkey(uint64_t h) { return h ? h : 1; }

bool leir__search_seen(const search_ctx *ctx, uint64_t h) {
  if (!ctx->tcap) return false;
  uint64_t k = tkey(h);
  for (size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (ctx->tcap - 1);; i = (i + 1) & (ctx->tcap - 1)) {
    if (ctx->table[i] == 0) return false;
    if (ctx->table[i] == k) return true;
  }
}

static bool table_add(search_ctx *ctx, uint64_t h) {
  if ((ctx->tcount + 1) * 2 > ctx->tcap) {
    size_t ncap = ctx->tcap ? ctx->tcap * 2 : 256;
    uint64_t *nt = calloc(ncap, sizeof *nt);
    if (!nt) return false;
    for (size_t j = 0; j < ctx->tcap; j++) {
      uint64_t k = ctx->table[j];
      if (!k) continue;
      size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (ncap - 1);
      while (nt[i]) i = (i + 1) & (ncap - 1);
      nt[i] = k;
    }
    free(ctx->table);
    ctx->table = nt;
    ctx->tcap = ncap;
  }
  uint64_t k = tkey(h);
  size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (ctx->tcap - 1);
  while (ctx->table[i] && ctx->table[i] != k) i = (i + 1) & (ctx->tcap - 1);
  if (!ctx->table[i]) ctx->tcount++;
  ctx->table[i] = k;
  return true;
}

search_node *leir__search_node(search_ctx *ctx, int id) {
  return id >= 0 && (size_t)id < ctx->nnodes ? &ctx->nodes[id] : NULL;
}

/* ---- budgets ---------------------------------------------------------------- */

static bool should_stop(search_ctx *ctx) {
  if (ctx->fatal != LEIR_OK) return true;
  if (ctx->stopped_by) return true;
  if (ctx->o.cancel && *ctx->o.cancel) ctx->stopped_by = 3;
  else if (ctx->o.max_samples && ctx->samples >= ctx->o.max_samples) ctx->stopped_by = 1;
  else if (ctx->o.max_seconds > 0 && now_s() - ctx->start >= ctx->o.max_seconds) ctx->stopped_by = 2;
  return ctx->stopped_by != 0;
}

/* ---- nodes -------------------------------------------------------------------- */

static int node_add(search_ctx *ctx, leir_program *p, uint64_t h, int parent, const char *step,
                    double speedup, double median_s, uint32_t klass) {
  if (ctx->nnodes == ctx->capnodes) {
    size_t ncap = ctx->capnodes ? ctx->capnodes * 2 : 16;
    search_node *nn = realloc(ctx->nodes, ncap * sizeof *nn);
    if (!nn) return -1;
    ctx->nodes = nn;
    ctx->capnodes = ncap;
  }
  if (parent >= 0) {
    search_node *pa = &ctx->nodes[parent];
    int *nc = realloc(pa->children, (pa->nchildren + 1) * sizeof *nc);
    if (!nc) return -1;
    pa->children = nc;
    pa->children[pa->nchildren++] = (int)ctx->nnodes;
  }
  search_node *n = &ctx->nodes[ctx->nnodes];
  memset(n, 0, sizeof *n);
  n->program = p;
  n->hash = h;
  n->parent = parent;
  n->depth = parent >= 0 ? ctx->nodes[parent].depth + 1 : 0;
  n->step = dup_str(step);
  n->speedup = speedup;
  n->median_s = median_s;
  n->klass = klass;
  return (int)ctx->nnodes++;
}

static void node_release(search_node *n) {
  leir_program_free(n->program);
  free(n->step);
  leir_candidates_free(n->cands);
  leir_kernel_free(n->kernel);
  if (n->macro)
    for (size_t i = 0; i < n->norder; i++) free(n->macro[i]);
  free(n->macro);
  free(n->order);
  for (size_t i = 0; i < n->nfb; i++) {
    free((char *)n->fb[i].proposal);
    free((char *)n->fb[i].reason);
  }
  free(n->fb);
  free(n->children);
}

static leir_status node_candidates(search_ctx *ctx, search_node *n) {
  if (n->cands) return LEIR_OK;
  return leir_candidates_list(&n->cands, n->program, &ctx->copts);
}

static void add_feedback(search_node *n, const char *proposal, leir_search_reject rj,
                         leir_verdict v, const char *reason) {
  leir_search_feedback *nf = realloc(n->fb, (n->nfb + 1) * sizeof *nf);
  if (!nf) return;
  n->fb = nf;
  n->fb[n->nfb].proposal = dup_str(proposal);
  n->fb[n->nfb].reject = rj;
  n->fb[n->nfb].verdict = v;
  n->fb[n->nfb].reason = dup_str(reason);
  n->nfb++;
}

/* ---- proposals ---------------------------------------------------------------- */

static leir_status proposals_push(leir_search_proposals *out, int kind, size_t index,
                                  const char *text, size_t len, const char *strategy,
                                  const char *cot) {
  if (!out) return leir__error_arg("out", "the proposals are NULL");
  if (out->n == out->cap) {
    size_t ncap = out->cap ? out->cap * 2 : 8;
    proposal *ni = realloc(out->items, ncap * sizeof *ni);
    if (!ni) return leir__error_nomem();
    out->items = ni;
    out->cap = ncap;
  }
  proposal *p = &out->items[out->n];
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->index = index;
  if (text) {
    p->text = malloc(len + 1);
    if (!p->text) return leir__error_nomem();
    memcpy(p->text, text, len);
    p->text[len] = 0;
  }
  p->strategy = strategy ? strdup(strategy) : NULL;
  p->cot = cot ? strdup(cot) : NULL;
  out->n++;
  return LEIR_OK;
}

leir_status leir_search_propose_candidate(leir_search_proposals *out, size_t index,
                                          const char *cot) {
  return proposals_push(out, 0, index, NULL, 0, NULL, cot);
}
leir_status leir_search_propose_step(leir_search_proposals *out, const char *step, size_t len,
                                     const char *cot) {
  if (!step) return leir__error_arg("step", "the step is NULL");
  return proposals_push(out, 1, 0, step, len, NULL, cot);
}
leir_status leir_search_propose_program(leir_search_proposals *out, const char *text, size_t len,
                                        const char *strategy, const char *cot) {
  if (!text) return leir__error_arg("text", "the program text is NULL");
  return proposals_push(out, 2, 0, text, len, strategy, cot);
}

/* An answer of an external policy that could not be read as a proposal
 * (search/policy_llm.c): recorded as MALFORMED with `reason`, which goes
 * back to the policy like any other rejection. */
leir_status leir__search_propose_unreadable(leir_search_proposals *out, const char *text,
                                            size_t len, const char *reason) {
  if (!text || !reason) return leir__error_arg("text", "the text or reason is NULL");
  return proposals_push(out, 3, 0, text, len, reason, NULL);
}

leir_status leir__search_propose_macro(leir_search_proposals *out, size_t index,
                                       const char *follow) {
  if (!follow) return leir__error_arg("follow", "the follow-up step is NULL");
  return proposals_push(out, 4, index, follow, strlen(follow), NULL, NULL);
}

leir_status leir__search_propose_chain(leir_search_proposals *out, const char *steps) {
  if (!steps) return leir__error_arg("steps", "the steps are NULL");
  return proposals_push(out, 5, 0, steps, strlen(steps), NULL, NULL);
}

const leir_candidates_options *leir__search_copts(const search_ctx *ctx) { return &ctx->copts; }

uint32_t leir__search_model_threads(const search_ctx *ctx) {
  return leir__backend_model_threads(ctx->backend);
}
const leir_search_options *leir__search_opts(const search_ctx *ctx) { return &ctx->o; }

double leir__search_time_left(const search_ctx *ctx) {
  if (!(ctx->o.max_seconds > 0)) return INFINITY;
  double left = ctx->o.max_seconds - (now_s() - ctx->start);
  return left > 0 ? left : 0;
}

bool leir__search_cancelled(const search_ctx *ctx) {
  return ctx->stopped_by == 3 || (ctx->o.cancel && *ctx->o.cancel);
}

void leir__search_lookahead_note(search_ctx *ctx, uint64_t evals) {
  ctx->lookaheads++;
  ctx->lookahead_evals += evals;
}

static void proposals_clear(leir_search_proposals *ps) {
  for (size_t i = 0; i < ps->n; i++) {
    free(ps->items[i].text);
    free(ps->items[i].strategy);
    free(ps->items[i].cot);
  }
  ps->n = 0;
  free(ps->raw);
  ps->raw = NULL;
}

leir_status leir__search_proposals_raw(leir_search_proposals *out, const char *text, size_t len) {
  if (!out || !text) return leir__error_arg("text", "the proposals or text is NULL");
  char *copy = strndup(text, len);
  if (!copy) return leir__error_nomem();
  free(out->raw);
  out->raw = copy;
  return LEIR_OK;
}

/* ---- records ------------------------------------------------------------------ */

static char *program_text(const leir_program *p) {
  char *t = NULL;
  size_t n = 0;
  if (!p || leir_program_print(p, 0, &t, &n) != LEIR_OK) return dup_str("");
  return t;
}

static void record_emit(search_ctx *ctx, leir_search_record *r) {
  r->best_speedup = ctx->nodes[ctx->best].speedup;
  r->elapsed_s = now_s() - ctx->start;
  if (ctx->nrecords == ctx->caprecords) {
    size_t ncap = ctx->caprecords ? ctx->caprecords * 2 : 64;
    leir_search_record *nr = realloc(ctx->records, ncap * sizeof *nr);
    if (!nr) {
      ctx->fatal = leir__error_nomem();
      return;
    }
    ctx->records = nr;
    ctx->caprecords = ncap;
  }
  r->sample = (uint32_t)ctx->nrecords + 1;
  ctx->records[ctx->nrecords++] = *r;
  if (ctx->o.on_record && ctx->o.on_record(ctx->o.record_payload, r) != 0 && !ctx->stopped_by)
    ctx->stopped_by = 3;
}

static void record_free_strings(leir_search_record *r) {
  free((char *)r->step);
  free((char *)r->strategy);
  free((char *)r->cot);
  free((char *)r->program);
  free((char *)r->reason);
  free((char *)r->proposed);
  free((char *)r->raw);
}

/* ---- measuring ---------------------------------------------------------------- */

static leir_status node_kernel(search_ctx *ctx, search_node *n) {
  if (n->kernel) return LEIR_OK;
  return leir_kernel_new(&n->kernel, ctx->backend, n->program);
}

static void mismatch_reason(const leir_verify_report *rep, char *buf, size_t cap) {
  if (rep->verdict == LEIR_VERDICT_MISMATCH && rep->output && *rep->output) {
    char coords[160] = "";
    size_t o = 0;
    for (uint32_t i = 0; i < rep->rank && o + 24 < sizeof coords; i++)
      o += (size_t)snprintf(coords + o, sizeof coords - o, "%s%lld", i ? "," : "",
                            (long long)rep->coords[i]);
    snprintf(buf, cap, "not numerically equivalent: %s[%s] is %.9g, expected %.9g (input set %d)",
             rep->output, coords, rep->actual, rep->expected, rep->set);
  } else if (rep->verdict == LEIR_VERDICT_INVALID && rep->line) {
    snprintf(buf, cap, "invalid at %u:%u: %s", rep->line, rep->column, rep->message);
  } else {
    snprintf(buf, cap, "%s: %s", leir_verdict_name(rep->verdict), rep->message);
  }
}

/* Verifies `cand` against the source and times it against its parent. */
static leir_status measure_real(search_ctx *ctx, search_node *parent, const leir_program *cand,
                                uint32_t klass, leir_search_measurement *m, leir_kernel **kout) {
  leir_verify_report *rep = NULL;
  leir_status st = leir_verifier_judge(ctx->verifier, cand, klass, &rep);
  if (st != LEIR_OK) return st;
  m->verdict = rep->verdict;
  mismatch_reason(rep, m->message, sizeof m->message);
  leir_verify_report_free(rep);
  m->order = LEIR_ORDER_UNDECIDED;
  if (!leir_verdict_passes(m->verdict)) return LEIR_OK;
  leir_kernel *k = NULL;
  st = node_kernel(ctx, parent);
  if (st == LEIR_OK) st = leir_kernel_new(&k, ctx->backend, cand);
  if (st != LEIR_OK) {
    /* verified but cannot be timed: not accepted, with the reason */
    snprintf(m->message, sizeof m->message, "verified, but timing failed: %s",
             leir_error_last()->message);
    leir_kernel_free(k);
    return LEIR_OK;
  }
  leir_comparison c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  st = leir_kernels_compare(k, parent->kernel, &ctx->cmp, &c);
  if (st != LEIR_OK) {
    snprintf(m->message, sizeof m->message, "verified, but timing failed: %s",
             leir_error_last()->message);
    leir_kernel_free(k);
    return LEIR_OK;
  }
  m->order = c.order;
  m->ratio = c.ratio;
  m->ratio_lo = c.ratio_lo;
  m->ratio_hi = c.ratio_hi;
  m->median_s = c.a.median_s;
  m->q1_s = c.a.q1_s;
  m->q3_s = c.a.q3_s;
  m->parent_median_s = c.b.median_s;
  m->rounds = c.rounds;
  *kout = k;
  return LEIR_OK;
}

static void row_from(search_ctx *ctx, leir_db_row *row, uint64_t h, uint64_t base) {
  memset(row, 0, sizeof *row);
  row->size = sizeof *row;
  row->program_hash = h;
  row->baseline_hash = base;
  row->root_hash = ctx->nodes[0].hash;
  row->backend = ctx->backend_name;
  row->machine = ctx->machine;
  row->protocol = ctx->protocol;
}

/* ---- one proposal ------------------------------------------------------------- */

/* Resolves a proposal to a program and its step. On failure *rj and reason
 * say why. */
static leir_program *resolve(search_ctx *ctx, search_node *n, const proposal *p, char **step_text,
                             leir_exactness *ex, leir_search_reject *rj, char *reason,
                             size_t cap) {
  leir_program *out = NULL;
  leir_status st;
  if (p->kind == 0) {
    if (node_candidates(ctx, n) != LEIR_OK || p->index >= leir_candidates_count(n->cands)) {
      *rj = LEIR_REJECT_MALFORMED;
      snprintf(reason, cap, "candidate %zu does not exist (the program has %zu)", p->index,
               leir_candidates_count(n->cands));
      return NULL;
    }
    if (leir_candidates_apply(&out, n->cands, p->index) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      snprintf(reason, cap, "%s", leir_error_last()->message);
      return NULL;
    }
    *ex = leir_candidates_exactness(n->cands, p->index);
    *step_text = dup_str(leir_step_text(leir_candidates_step(n->cands, p->index)));
    return out;
  }
  if (p->kind == 4) {
    /* a macro-step: two enumerated candidates in a row */
    leir_program *mid = NULL;
    if (node_candidates(ctx, n) != LEIR_OK || p->index >= leir_candidates_count(n->cands) ||
        leir_candidates_apply(&mid, n->cands, p->index) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      snprintf(reason, cap, "macro-step: the first step does not apply");
      return NULL;
    }
    leir_exactness e1 = leir_candidates_exactness(n->cands, p->index);
    const char *s1 = leir_step_text(leir_candidates_step(n->cands, p->index));
    leir_candidates *c2 = NULL;
    size_t k = SIZE_MAX;
    if (leir_candidates_list(&c2, mid, &ctx->copts) == LEIR_OK)
      for (size_t i = 0; i < leir_candidates_count(c2); i++)
        if (strcmp(leir_step_text(leir_candidates_step(c2, i)), p->text) == 0) {
          k = i;
          break;
        }
    if (k == SIZE_MAX || leir_candidates_apply(&out, c2, k) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      snprintf(reason, cap, "macro-step: '%s' is not a step of the intermediate program", p->text);
      leir_candidates_free(c2);
      leir_program_free(mid);
      return NULL;
    }
    leir_exactness e2 = leir_candidates_exactness(c2, k);
    *ex = e1 > e2 ? e1 : e2;
    size_t len = strlen(s1) + strlen(p->text) + 4;
    *step_text = malloc(len);
    if (*step_text) snprintf(*step_text, len, "%s ; %s", s1, p->text);
    leir_candidates_free(c2);
    leir_program_free(mid);
    return out;
  }
  if (p->kind == 5) {
    /* a lookahead macro-step: each line one enumerated candidate of the
     * program the previous line gave (the search's candidate options, so
     * that steps outside the reference domain apply, as in the list) */
    leir_program *cur = NULL;
    leir_exactness worst = LEIR_EXACT;
    leir__strbuf b = {0};
    const char *line = p->text;
    size_t part = 0;
    st = leir_program_clone(&cur, n->program);
    if (st != LEIR_OK) {
      ctx->fatal = st;
      return NULL;
    }
    while (line && *line) {
      const char *nl = strchr(line, '\n');
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      leir_candidates *c = NULL;
      size_t k = SIZE_MAX;
      if (leir_candidates_list(&c, cur, &ctx->copts) == LEIR_OK)
        for (size_t i = 0; i < leir_candidates_count(c); i++) {
          const char *t = leir_step_text(leir_candidates_step(c, i));
          if (strlen(t) == len && strncmp(t, line, len) == 0) {
            k = i;
            break;
          }
        }
      leir_program *next = NULL;
      if (k == SIZE_MAX || leir_candidates_apply(&next, c, k) != LEIR_OK) {
        *rj = LEIR_REJECT_NOT_APPLICABLE;
        snprintf(reason, cap, "macro-step: step %zu ('%.*s') is not a step of the program before it",
                 part + 1, (int)(len < 200 ? len : 200), line);
        leir_candidates_free(c);
        leir_program_free(cur);
        free(leir__sb_finish(&b, NULL));
        return NULL;
      }
      leir_exactness e = leir_candidates_exactness(c, k);
      if (e > worst) worst = e;
      leir_candidates_free(c);
      leir_program_free(cur);
      cur = next;
      if (part++) leir__sb_puts(&b, " ; ");
      leir__sb_printf(&b, "%.*s", (int)len, line);
      line = nl ? nl + 1 : NULL;
    }
    *ex = worst;
    *step_text = leir__sb_finish(&b, NULL);
    return cur;
  }
  if (p->kind == 1) {
    leir_step *s = NULL;
    st = leir_step_parse(&s, p->text, strlen(p->text));
    if (st != LEIR_OK) {
      *rj = LEIR_REJECT_MALFORMED;
      snprintf(reason, cap, "not a step: %s", leir_error_last()->message);
      return NULL;
    }
    st = leir_step_apply(&out, n->program, s, ex);
    if (st != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      const leir_error *e = leir_error_last();
      snprintf(reason, cap, "not applicable: %s%s%s%s", e->message, *e->rule ? " [" : "",
               e->rule, *e->rule ? "]" : "");
      leir_step_free(s);
      return NULL;
    }
    *step_text = dup_str(leir_step_text(s));
    leir_step_free(s);
    return out;
  }
  if (p->kind == 3) {
    *rj = LEIR_REJECT_MALFORMED;
    snprintf(reason, cap, "%s", p->strategy ? p->strategy : "unreadable answer");
    return NULL;
  }
  /* a whole program: parse, take the current signature, check, ground */
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  po.flags |= LEIR_PARSE_LENIENT;
  po.max_input_bytes = (uint64_t)16 << 20;
  st = leir_program_parse(&out, p->text, strlen(p->text), &po);
  if (st == LEIR_OK) {
    size_t ns = leir_program_signature_count(n->program);
    leir_tensor_decl *d = calloc(ns ? ns : 1, sizeof *d);
    if (!d) {
      leir_program_free(out);
      ctx->fatal = leir__error_nomem();
      return NULL;
    }
    for (size_t i = 0; i < ns && st == LEIR_OK; i++)
      st = leir_program_signature_get(n->program, i, &d[i]);
    if (st == LEIR_OK) st = leir_program_set_signature(out, d, ns);
    free(d);
    leir_diagnostics *diags = NULL;
    if (st == LEIR_OK) st = leir_program_check(out, NULL, &diags);
    leir_diagnostics_free(diags);
  }
  if (st != LEIR_OK) {
    const leir_error *e = leir_error_last();
    *rj = LEIR_REJECT_MALFORMED;
    if (e->line)
      snprintf(reason, cap, "invalid at %u:%u: %s", e->line, e->column, e->message);
    else
      snprintf(reason, cap, "invalid: %s", e->message);
    leir_program_free(out);
    return NULL;
  }
  /* the current program again (up to fresh names): evaluate() says `same`,
   * which tells a model more than "not one step" would */
  if (leir_program_hash_alpha(out) == n->hash) return out;
  leir_candidates_options go = ctx->copts;
  go.strategy = -1;
  if (p->strategy && *p->strategy) {
    size_t si;
    if (leir_strategy_find(p->strategy, &si) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_ONE_STEP;
      snprintf(reason, cap, "unknown strategy '%s'", p->strategy);
      leir_program_free(out);
      return NULL;
    }
    go.strategy = (int32_t)si;
  }
  leir_candidates *g = NULL;
  st = leir_ground(&g, n->program, out, &go);
  if (st != LEIR_OK || leir_candidates_count(g) == 0) {
    *rj = LEIR_REJECT_NOT_ONE_STEP;
    snprintf(reason, cap, "not one step of %s from the current program",
             p->strategy && *p->strategy ? p->strategy : "any strategy");
    leir_candidates_free(g);
    leir_program_free(out);
    return NULL;
  }
  *ex = leir_candidates_exactness(g, 0);
  *step_text = dup_str(leir_step_text(leir_candidates_step(g, 0)));
  leir_candidates_free(g);
  return out;
}

/* Evaluates one proposal at node `nid`; returns the new node id or -1. */
static int evaluate(search_ctx *ctx, int nid, const proposal *p, const char *raw) {
  search_node *n = &ctx->nodes[nid];
  leir_search_record r;
  memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.node = -1;
  r.parent = nid;
  r.depth = n->depth + 1;
  char reason[512] = "";
  char *step = NULL;
  leir_exactness ex = LEIR_EXACT;
  leir_search_reject rj = LEIR_REJECT_NONE;
  leir_program *cand = resolve(ctx, n, p, &step, &ex, &rj, reason, sizeof reason);
  n = &ctx->nodes[nid];
  uint64_t h = cand ? leir_program_hash_alpha(cand) : 0;
  if (cand && h == n->hash) {
    rj = LEIR_REJECT_SAME;
    snprintf(reason, sizeof reason, "the same program as the current one (up to fresh names)");
  } else if (cand && leir__search_seen(ctx, h)) {
    rj = LEIR_REJECT_SEEN;
    snprintf(reason, sizeof reason, "a program seen before in this search");
  }
  r.step = dup_str(step);
  r.program = p->kind == 2 && !cand ? dup_str(p->text) : program_text(cand);
  /* the proposal as the policy gave it, so that a rejected one still shows
   * what was asked for: a candidate by its step text, else the text */
  if (p->kind == 0) {
    const leir_step *cs = n->cands && p->index < leir_candidates_count(n->cands)
                              ? leir_candidates_step(n->cands, p->index)
                              : NULL;
    r.proposed = dup_str(cs ? leir_step_text(cs) : "");
  } else {
    r.proposed = dup_str(p->text);
  }
  r.raw = dup_str(raw);
  r.hash = h;
  if (step) {
    leir_step *s = NULL;
    if (leir_step_parse(&s, step, strlen(step)) == LEIR_OK) {
      const leir_strategy_info *info = leir_strategy_info_at(leir_step_strategy(s));
      r.strategy = dup_str(info ? info->name : "");
      if (!p->cot) {
        char *c = NULL;
        size_t cl = 0;
        if (leir_step_cot(&c, &cl, n->program, s) == LEIR_OK) r.cot = c;
      }
      leir_step_free(s);
    }
  }
  if (step && (p->kind == 4 || p->kind == 5) && !r.strategy) {
    /* a macro-step: the strategies of its steps, joined by '+' */
    char names[512] = "";
    const char *part = step;
    for (int i = 0; part; i++) {
      const char *sep = strstr(part, " ; ");
      size_t len = sep ? (size_t)(sep - part) : strlen(part);
      leir_step *s = NULL;
      if (leir_step_parse(&s, part, len) == LEIR_OK) {
        const leir_strategy_info *info = leir_strategy_info_at(leir_step_strategy(s));
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i ? "+" : "",
                 info ? info->name : "?");
        leir_step_free(s);
      }
      part = sep ? sep + 3 : NULL;
    }
    r.strategy = dup_str(names);
  }
  if (!r.strategy) r.strategy = dup_str(p->kind == 3 ? "" : p->strategy);
  if (!r.cot) r.cot = dup_str(p->cot);
  int made = -1;
  if (cand && rj == LEIR_REJECT_NONE) {
    if (!table_add(ctx, h)) {
      ctx->fatal = leir__error_nomem();
      leir_program_free(cand);
      free(step);
      record_free_strings(&r);
      return -1;
    }
    uint32_t klass = n->klass;
    uint32_t sk = ex == LEIR_REASSOCIATING ? LEIR_VERIFY_CLASS_REASSOCIATING
                                           : LEIR_VERIFY_CLASS_EXACT;
    if (sk > klass) klass = sk;
    leir_search_measurement m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    leir_kernel *k = NULL;
    leir_db_row key, row;
    row_from(ctx, &key, h, n->hash);
    memset(&row, 0, sizeof row);
    row.size = sizeof row;
    leir_status st = LEIR_ERR_NOT_FOUND;
    if (ctx->o.db) st = leir_db_get(ctx->o.db, &key, &row);
    if (st == LEIR_OK) {
      r.cached = 1;
      m.verdict = row.verdict;
      m.order = row.order;
      m.ratio = row.ratio;
      m.ratio_lo = row.ratio_lo;
      m.ratio_hi = row.ratio_hi;
      m.median_s = row.median_s;
      m.q1_s = row.q1_s;
      m.q3_s = row.q3_s;
      m.parent_median_s = row.baseline_median_s;
      m.rounds = row.rounds;
      snprintf(m.message, sizeof m.message, "%s", row.message);
      ctx->reused++;
    } else if (st != LEIR_ERR_NOT_FOUND) {
      ctx->fatal = st;
    } else {
      if (ctx->o.measure)
        st = ctx->o.measure(ctx->o.measure_payload, ctx->nodes[0].program, n->program, cand,
                            klass, &m);
      else
        st = measure_real(ctx, n, cand, klass, &m, &k);
      n = &ctx->nodes[nid];
      if (st != LEIR_OK) {
        ctx->fatal = st;
      } else {
        ctx->measured++;
        if (ctx->o.db) {
          key.verdict = m.verdict;
          key.order = m.order;
          key.ratio = m.ratio;
          key.ratio_lo = m.ratio_lo;
          key.ratio_hi = m.ratio_hi;
          key.median_s = m.median_s;
          key.q1_s = m.q1_s;
          key.q3_s = m.q3_s;
          key.baseline_median_s = m.parent_median_s;
          key.rounds = m.rounds;
          key.step = step;
          key.program = r.program;
          key.message = m.message;
          st = leir_db_put(ctx->o.db, &key);
          if (st != LEIR_OK) ctx->fatal = st;
        }
      }
    }
    if (ctx->fatal == LEIR_OK) {
      ctx->samples++;
      r.measured = 1;
      r.m = m;
      if (!leir_verdict_passes(m.verdict)) {
        rj = LEIR_REJECT_VERDICT;
        snprintf(reason, sizeof reason, "%s", m.message);
      } else if (m.order != LEIR_ORDER_FASTER) {
        rj = LEIR_REJECT_NOT_FASTER;
        ctx->not_faster++;
        if (m.ratio > 0)
          snprintf(reason, sizeof reason,
                   "verified (%s) but not faster than its parent: %s, time ratio %.3f [%.3f, %.3f]",
                   leir_verdict_name(m.verdict), leir_order_name(m.order), m.ratio, m.ratio_lo,
                   m.ratio_hi);
        else
          snprintf(reason, sizeof reason, "verified (%s) but not timed: %s",
                   leir_verdict_name(m.verdict), m.message);
      } else {
        double sp = n->speedup * m.ratio;
        made = node_add(ctx, cand, h, nid, step, sp, m.median_s, klass);
        if (made < 0) {
          ctx->fatal = leir__error_nomem();
        } else {
          cand = NULL;
          ctx->nodes[made].kernel = k;
          k = NULL;
          r.node = made;
          r.speedup = sp;
          ctx->accepted++;
          if (sp > ctx->nodes[ctx->best].speedup) ctx->best = made;
        }
      }
    }
    leir_kernel_free(k);
  }
  n = &ctx->nodes[nid];
  r.reject = rj;
  r.reason = dup_str(reason);
  if (rj != LEIR_REJECT_NONE) {
    ctx->rejected++;
    add_feedback(n, p->kind == 2 ? p->text : (step ? step : (p->text ? p->text : "")), rj,
                 r.measured ? r.m.verdict : LEIR_VERDICT_INVALID, reason);
  }
  leir_program_free(cand);
  free(step);
  if (ctx->fatal == LEIR_OK || made >= 0 || r.measured)
    record_emit(ctx, &r);
  else
    record_free_strings(&r);
  return made;
}

/* ---- expansion ---------------------------------------------------------------- */

static char *history_json(search_ctx *ctx, int nid) {
  int path[1024];
  int np = 0;
  for (int i = nid; i > 0 && np < 1024; i = ctx->nodes[i].parent) path[np++] = i;
  leir__strbuf b = {0};
  leir__sb_putc(&b, '[');
  for (int j = np - 1; j >= 0; j--) {
    const search_node *x = &ctx->nodes[path[j]];
    leir__sb_puts(&b, j == np - 1 ? "{\"step\":" : ",{\"step\":");
    leir__sb_put_json_string(&b, x->step, strlen(x->step));
    leir__sb_printf(&b, ",\"speedup\":%.6g}", x->speedup);
  }
  leir__sb_putc(&b, ']');
  return leir__sb_finish(&b, NULL);
}

/* Asks the policy for proposals at node `nid` until `min_accept` are
 * accepted, the policy has nothing more, or (an external policy) `retries`
 * calls in a row gave nothing usable (every proposal rejected before it was
 * timed, or by its verdict). The
 * ids of the accepted children are appended to acc. */
static size_t expand(search_ctx *ctx, int nid, uint32_t want, size_t min_accept, int **acc,
                     size_t *nacc) {
  size_t got = 0;
  uint32_t fails = 0;
  leir_search_proposals ps;
  memset(&ps, 0, sizeof ps);
  ps.ctx = ctx;
  ps.node = nid;
  while (!should_stop(ctx)) {
    search_node *n = &ctx->nodes[nid];
    if (n->exhausted || n->depth >= ctx->o.max_depth) {
      n->exhausted = true;
      break;
    }
    leir_status st = node_candidates(ctx, n);
    if (st != LEIR_OK) {
      n->exhausted = true;
      break;
    }
    char *hist = history_json(ctx, nid);
    leir_search_query q;
    memset(&q, 0, sizeof q);
    q.size = sizeof q;
    q.algorithm = ctx->o.algorithm;
    q.program = n->program;
    q.root = ctx->nodes[0].program;
    q.candidates = n->cands;
    q.depth = n->depth;
    q.speedup = n->speedup;
    q.want = want;
    q.attempt = n->attempts;
    q.feedback = n->fb;
    q.nfeedback = n->nfb;
    q.history = hist ? hist : "[]";
    q.seed = ctx->o.seed;
    q.parent = n->parent >= 0 ? ctx->nodes[n->parent].program : NULL;
    q.parent_speedup = n->parent >= 0 ? ctx->nodes[n->parent].speedup : 1.0;
    proposals_clear(&ps);
    /* an external policy and a built-in one are called alike */
    if (ctx->o.propose)
      st = ctx->o.propose(ctx->o.propose_payload, &q, &ps);
    else
      st = policies[ctx->o.policy].propose(NULL, &q, &ps);
    free(hist);
    n = &ctx->nodes[nid];
    n->attempts++;
    if (st != LEIR_OK) {
      ctx->fatal = st;
      break;
    }
    if (ps.n == 0) {
      n->exhausted = true;
      break;
    }
    size_t before = got;
    uint32_t not_faster_before = ctx->not_faster;
    for (size_t i = 0; i < ps.n && !should_stop(ctx); i++) {
      int c = evaluate(ctx, nid, &ps.items[i], ps.raw);
      if (c >= 0) {
        int *na = realloc(*acc, (*nacc + 1) * sizeof *na);
        if (!na) {
          ctx->fatal = leir__error_nomem();
          break;
        }
        *acc = na;
        (*acc)[(*nacc)++] = c;
        got++;
      }
    }
    if (got >= min_accept) break;
    if (got > before) continue; /* some accepted; the algorithm wants more */
    /* a call that gave a verified step that was merely not faster was a
     * usable answer: it breaks the row of failures (the sample budget, not
     * `retries`, bounds those) */
    if (ctx->not_faster > not_faster_before) {
      fails = 0;
      continue;
    }
    /* an external policy (a model) gets `retries` more calls with the
     * reasons; a built-in goes down its list until it has nothing more */
    if (ctx->o.propose && ++fails > ctx->o.retries) {
      ctx->nodes[nid].exhausted = true;
      break;
    }
  }
  proposals_clear(&ps);
  free(ps.items);
  return got;
}

/* ---- algorithms --------------------------------------------------------------- */

static int by_speedup_desc(search_ctx *ctx, int a, int b) {
  double x = ctx->nodes[a].speedup, y = ctx->nodes[b].speedup;
  return x > y ? -1 : x < y ? 1 : a - b;
}

static void sort_ids(search_ctx *ctx, int *ids, size_t n) {
  for (size_t i = 1; i < n; i++) /* insertion sort: lists are short */
    for (size_t j = i; j > 0 && by_speedup_desc(ctx, ids[j - 1], ids[j]) > 0; j--) {
      int t = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = t;
    }
}

static void run_greedy_chain(search_ctx *ctx, bool chain) {
  int cur = 0;
  while (!should_stop(ctx)) {
    int *acc = NULL;
    size_t nacc = 0;
    expand(ctx, cur, chain ? 1 : ctx->o.branching, 1, &acc, &nacc);
    if (!nacc) {
      free(acc);
      break;
    }
    if (chain) {
      cur = acc[nacc - 1];
    } else {
      sort_ids(ctx, acc, nacc);
      cur = acc[0];
    }
    free(acc);
  }
}

static void run_beam(search_ctx *ctx) {
  int *beam = malloc(sizeof *beam);
  size_t nbeam = 1;
  if (!beam) {
    ctx->fatal = leir__error_nomem();
    return;
  }
  beam[0] = 0;
  while (!should_stop(ctx)) {
    int *acc = NULL;
    size_t nacc = 0;
    for (size_t i = 0; i < nbeam && !should_stop(ctx); i++)
      expand(ctx, beam[i], ctx->o.branching, ctx->o.width, &acc, &nacc);
    if (!nacc) {
      free(acc);
      break;
    }
    sort_ids(ctx, acc, nacc);
    free(beam);
    beam = acc;
    nbeam = nacc < ctx->o.width ? nacc : ctx->o.width;
  }
  free(beam);
}

static void run_bfs_dfs(search_ctx *ctx, bool dfs) {
  size_t cap = 64, head = 0, tail = 0;
  int *q = malloc(cap * sizeof *q);
  if (!q) {
    ctx->fatal = leir__error_nomem();
    return;
  }
  q[tail++] = 0;
  while (head < tail && !should_stop(ctx)) {
    int nid = dfs ? q[--tail] : q[head++];
    int *acc = NULL;
    size_t nacc = 0;
    expand(ctx, nid, ctx->o.branching, 1, &acc, &nacc);
    sort_ids(ctx, acc, nacc); /* fastest first: popped first by BFS; pushed last for DFS */
    for (size_t i = 0; i < nacc; i++) {
      if (tail == cap) {
        int *nq = realloc(q, cap * 2 * sizeof *nq);
        if (!nq) {
          ctx->fatal = leir__error_nomem();
          break;
        }
        q = nq;
        cap *= 2;
      }
      q[tail++] = dfs ? acc[nacc - 1 - i] : acc[i];
    }
    free(acc);
  }
  free(q);
}

static double reward_of(const search_ctx *ctx, double speedup) {
  if (ctx->o.reward == LEIR_REWARD_REFERENCE) return (exp(speedup - 1.0) - 1.0) * 10.0;
  return log(speedup > 0 ? speedup : 1e-9);
}

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void run_mcts(search_ctx *ctx) {
  ctx->nodes[0].visits = 1;
  while (!should_stop(ctx) && !ctx->nodes[0].dead) {
    /* selection: widen a node while it has fewer children than
     * ceil(sqrt(visits)) and more to give, else descend by UCT */
    int nid = 0;
    for (;;) {
      search_node *n = &ctx->nodes[nid];
      bool can_expand = !n->exhausted && n->depth < ctx->o.max_depth;
      if (can_expand && (double)n->nchildren < ceil(sqrt((double)n->visits))) break;
      int best = -1;
      double bu = -INFINITY;
      for (size_t i = 0; i < n->nchildren; i++) {
        const search_node *c = &ctx->nodes[n->children[i]];
        if (c->dead) continue;
        double u = c->visits ? c->value / c->visits +
                                   ctx->o.uct_c * sqrt(2.0 * log((double)n->visits) / c->visits)
                             : INFINITY;
        if (u > bu) {
          bu = u;
          best = n->children[i];
        }
      }
      if (best < 0) {
        if (can_expand) break;
        n->dead = true;
        nid = -1;
        break;
      }
      nid = best;
    }
    if (nid < 0) continue; /* a dead end was marked; select again from the root */
    int *acc = NULL;
    size_t nacc = 0;
    expand(ctx, nid, 1, 1, &acc, &nacc);
    if (!nacc) {
      free(acc);
      search_node *n = &ctx->nodes[nid];
      if (n->exhausted && n->nchildren == 0) n->dead = true;
      continue;
    }
    int child = acc[0];
    free(acc);
    double reward = reward_of(ctx, ctx->nodes[child].speedup);
    /* rollouts: random one-step continuations of the new node, measured */
    for (uint32_t r = 0; r < ctx->o.rollouts && !should_stop(ctx); r++) {
      search_node *c = &ctx->nodes[child];
      if (c->depth >= ctx->o.max_depth || node_candidates(ctx, c) != LEIR_OK) break;
      size_t nc = leir_candidates_count(c->cands);
      if (!nc) break;
      proposal p;
      memset(&p, 0, sizeof p);
      p.index = (size_t)(rng_next(&ctx->rng) % nc);
      int g = evaluate(ctx, child, &p, NULL);
      if (g >= 0) {
        double rg = reward_of(ctx, ctx->nodes[g].speedup);
        ctx->nodes[g].visits = 1;
        ctx->nodes[g].value = rg;
        if (rg > reward) reward = rg;
      }
    }
    for (int i = child; i >= 0; i = ctx->nodes[i].parent) {
      ctx->nodes[i].visits++;
      ctx->nodes[i].value += reward;
    }
  }
}

/* The entries of algorithms.def that share a run function. */
static void run_greedy(search_ctx *ctx) { run_greedy_chain(ctx, false); }
static void run_chain(search_ctx *ctx) { run_greedy_chain(ctx, true); }
static void run_bfs(search_ctx *ctx) { run_bfs_dfs(ctx, false); }
static void run_dfs(search_ctx *ctx) { run_bfs_dfs(ctx, true); }

/* ---- running ------------------------------------------------------------------ */

static void ctx_free(search_ctx *ctx) {
  for (size_t i = 0; i < ctx->nnodes; i++) node_release(&ctx->nodes[i]);
  free(ctx->nodes);
  free(ctx->table);
  if (ctx->records)
    for (size_t i = 0; i < ctx->nrecords; i++) record_free_strings(&ctx->records[i]);
  free(ctx->records);
  leir_verifier_free(ctx->verifier);
}

static char *best_steps(search_ctx *ctx) {
  int path[4096];
  int np = 0;
  for (int i = ctx->best; i > 0 && np < 4096; i = ctx->nodes[i].parent) path[np++] = i;
  leir__strbuf b = {0};
  leir__sb_putc(&b, 0);
  b.len = 0;
  for (int j = np - 1; j >= 0; j--) {
    leir__sb_puts(&b, ctx->nodes[path[j]].step);
    leir__sb_putc(&b, '\n');
  }
  return leir__sb_finish(&b, NULL);
}

leir_status leir_search_run(leir_search_result **out, leir_backend *backend,
                            const leir_program *program, const leir_search_options *opts) {
  if (!out) return leir__error_arg("out", "out is NULL");
  *out = NULL;
  if (!program) return leir__error_arg("program", "the program is NULL");
  search_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  leir_status st = LEIR__OPTIONS_READ(leir_search_options, &ctx.o, opts, LEIR_SEARCH_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if ((unsigned)ctx.o.algorithm >= COUNT(algorithms))
    return leir__error_arg("algorithm", "unknown search algorithm %d", (int)ctx.o.algorithm);
  if (!ctx.o.propose && (unsigned)ctx.o.policy >= COUNT(policies))
    return leir__error_arg("policy", "unknown policy %d", (int)ctx.o.policy);
  if (!backend && !ctx.o.measure)
    return leir__error_arg("backend", "a search needs a backend or a measure callback");
  if (ctx.o.width == 0) ctx.o.width = 1;
  if (ctx.o.branching == 0) ctx.o.branching = 1;
  if ((st = LEIR__OPTIONS_READ(leir_compare_options, &ctx.cmp, ctx.o.compare,
                               LEIR_COMPARE_OPTIONS_INIT)) != LEIR_OK ||
      (st = LEIR__OPTIONS_READ(leir_verifier_options, &ctx.vopts, ctx.o.verifier,
                               LEIR_VERIFIER_OPTIONS_INIT)) != LEIR_OK ||
      (st = LEIR__OPTIONS_READ(leir_candidates_options, &ctx.copts, ctx.o.candidates,
                               LEIR_CANDIDATES_OPTIONS_INIT)) != LEIR_OK)
    return st;
  ctx.start = now_s();
  ctx.rng = ctx.o.seed ^ 0x5EA4C4ull;
  ctx.backend = backend;
  if (ctx.o.measure)
    snprintf(ctx.backend_name, sizeof ctx.backend_name, "callback");
  else
    leir__backend_key(backend, ctx.backend_name, sizeof ctx.backend_name);
  if (ctx.o.machine)
    snprintf(ctx.machine, sizeof ctx.machine, "%s", ctx.o.machine);
  else
    leir_search_machine_fingerprint(0, ctx.machine, sizeof ctx.machine);
  leir_search_protocol(&ctx.cmp, &ctx.vopts, ctx.protocol, sizeof ctx.protocol);

  leir_program *root = NULL;
  st = leir_program_clone(&root, program);
  if (st != LEIR_OK) return st;
  if (leir_program_signature_count(root) == 0 && (st = leir_program_infer_signature(root)) != LEIR_OK) {
    leir_program_free(root);
    return st;
  }
  leir_diagnostics *diags = NULL;
  st = leir_program_check(root, NULL, &diags);
  leir_diagnostics_free(diags);
  if (st != LEIR_OK) {
    leir_program_free(root);
    return st;
  }
  uint64_t rh = leir_program_hash_alpha(root);
  if (node_add(&ctx, root, rh, -1, "", 1.0, 0.0, LEIR_VERIFY_CLASS_ANY) != 0 ||
      !table_add(&ctx, rh)) {
    if (!ctx.nnodes) leir_program_free(root);
    ctx_free(&ctx);
    return leir__error_nomem();
  }
  if (!ctx.o.measure) {
    st = leir_verifier_new(&ctx.verifier, backend, root, &ctx.vopts);
    if (st != LEIR_OK) {
      ctx_free(&ctx);
      return st;
    }
  }

  algorithms[ctx.o.algorithm].run(&ctx);
  if (ctx.fatal != LEIR_OK) {
    st = ctx.fatal;
    leir__error_state es;
    leir__error_save(&es);
    ctx_free(&ctx);
    leir__error_restore(&es);
    return st;
  }

  leir_search_result *res = calloc(1, sizeof *res);
  if (!res) {
    ctx_free(&ctx);
    return leir__error_nomem();
  }
  leir_search_summary *s = &res->summary;
  s->size = sizeof *s;
  s->samples = ctx.samples;
  s->measured = ctx.measured;
  s->reused = ctx.reused;
  s->accepted = ctx.accepted;
  s->rejected = ctx.rejected;
  s->best_depth = ctx.nodes[ctx.best].depth;
  s->best_speedup = ctx.nodes[ctx.best].speedup;
  s->final_speedup = s->final_lo = s->final_hi = s->best_speedup;
  s->stopped_by = ctx.stopped_by;
  s->lookaheads = ctx.lookaheads;
  s->lookahead_evals = ctx.lookahead_evals;
  if (ctx.best != 0 && !ctx.o.measure && !(ctx.o.flags & LEIR_SEARCH_NO_FINAL_COMPARE) &&
      ctx.stopped_by != 3) {
    search_node *b = &ctx.nodes[ctx.best], *r0 = &ctx.nodes[0];
    leir_comparison c;
    memset(&c, 0, sizeof c);
    c.size = sizeof c;
    if (node_kernel(&ctx, b) == LEIR_OK && node_kernel(&ctx, r0) == LEIR_OK &&
        leir_kernels_compare(b->kernel, r0->kernel, &ctx.cmp, &c) == LEIR_OK) {
      s->final_speedup = c.ratio;
      s->final_lo = c.ratio_lo;
      s->final_hi = c.ratio_hi;
      s->source_median_s = c.b.median_s;
      s->best_median_s = c.a.median_s;
    }
  }
  s->seconds = now_s() - ctx.start;
  res->records = ctx.records;
  res->nrecords = ctx.nrecords;
  ctx.records = NULL;
  res->best = ctx.nodes[ctx.best].program;
  ctx.nodes[ctx.best].program = NULL;
  res->best_steps = best_steps(&ctx);
  ctx_free(&ctx);
  if (!res->best_steps) {
    leir_search_result_free(res);
    return leir__error_nomem();
  }
  *out = res;
  if (s->stopped_by == 3)
    return leir__error(LEIR_ERR_CANCELLED, "search.cancelled", NULL, 0, 0,
                       "the search was cancelled after %u samples", s->samples);
  return LEIR_OK;
}

void leir_search_result_free(leir_search_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nrecords; i++) record_free_strings(&r->records[i]);
  free(r->records);
  leir_program_free(r->best);
  free(r->best_steps);
  free(r);
}

size_t leir_search_result_record_count(const leir_search_result *r) { return r ? r->nrecords : 0; }

const leir_search_record *leir_search_result_record(const leir_search_result *r, size_t i) {
  return r && i < r->nrecords ? &r->records[i] : NULL;
}

leir_status leir_search_result_summary(const leir_search_result *r, leir_search_summary *out) {
  if (!r || !out) return leir__error_arg("result", "result or out is NULL");
  return leir__struct_write(out, &r->summary, sizeof r->summary, "leir_search_summary");
}

const leir_program *leir_search_result_best(const leir_search_result *r) {
  return r ? r->best : NULL;
}

leir_status leir_search_result_best_steps(const leir_search_result *r, char **out,
                                          size_t *out_len) {
  if (!r || !out) return leir__error_arg("result", "result or out is NULL");
  *out = strdup(r->best_steps);
  if (!*out) return leir__error_nomem();
  if (out_len) *out_len = strlen(*out);
  return LEIR_OK;
}
