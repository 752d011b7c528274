/*
 * leir_verify and leir_verifier (verification.md §2): check both programs,
 * compile them, run them on the same seeded input sets, compare their
 * outputs, and turn the first failure into a verdict with its details.
 *
 * Everything goes through a verifier: it runs the reference once (static
 * checks, compilation, every input set) and remembers the first failure of
 * each stage; a judgement then walks the same stages for the candidate, so
 * a reference failure is reported exactly where leir_verify of the pair
 * would report it (reference before candidate within a stage).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compare.h"
#include "error.h"
#include "options.h"
#include "ir.h"
#include "semantics.h"

/* The report and the memory behind its strings. */
/* Per-output figures while judging: the public leir_output_report (which
 * never grows: callers index it) and the 0.2 additions of
 * leir_output_detail, published as two parallel arrays (publish_outputs). */
typedef struct outrep {
  const char *name;
  leir_dtype dtype;
  uint64_t elements, differing, outside;
  double max_abs_err, max_rel_err;
  uint64_t max_ulp;
  double mse, rtol, atol;
  double finite_min, finite_max;
  const double *finite_fraction;
  double reference_err, candidate_err;
} outrep;

typedef struct report {
  leir_verify_report pub;
  leir__arena arena;
  outrep *outs;
} report;

static const char *const verdict_names[] = {
#define LEIR__VERDICT_NAME(name, msg) #name,
    LEIR_VERDICT_TABLE(LEIR__VERDICT_NAME)
#undef LEIR__VERDICT_NAME
};

static const char *const verdict_messages[] = {
#define LEIR__VERDICT_MSG(name, msg) msg,
    LEIR_VERDICT_TABLE(LEIR__VERDICT_MSG)
#undef LEIR__VERDICT_MSG
};

const char *leir_verdict_name(leir_verdict v) {
  return (unsigned)v < LEIR_VERDICT_COUNT ? verdict_names[v] : "UNKNOWN";
}

const char *leir_verdict_message(leir_verdict v) {
  return (unsigned)v < LEIR_VERDICT_COUNT ? verdict_messages[v] : "unknown verdict";
}

leir_status leir_verdict_from_name(const char *name, leir_verdict *out) {
  if (!name || !out) return LEIR_ERR_ARGUMENT;
  for (int v = 0; v < LEIR_VERDICT_COUNT; v++)
    if (strcmp(verdict_names[v], name) == 0) {
      *out = (leir_verdict)v;
      return LEIR_OK;
    }
  return LEIR_ERR_ARGUMENT;
}

int leir_verdict_passes(leir_verdict v) {
  return v == LEIR_VERDICT_EQUAL || v == LEIR_VERDICT_CLOSE;
}

static const char *keep(report *r, const char *s) {
  if (!s) return "";
  char *copy = leir__arena_strndup(&r->arena, s, strlen(s));
  return copy ? copy : "";
}

static report *report_new(const leir_backend *b, uint64_t seed, uint32_t sets) {
  report *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  leir__arena_init(&r->arena, 2048);
  leir_verify_report *p = &r->pub;
  p->size = sizeof *p;
  p->verdict = LEIR_VERDICT_EQUAL;
  p->seed = seed;
  p->input_sets = sets;
  p->backend = b->ops->name;
  p->program = -1;
  p->set = -1;
  p->output = p->rule = p->message = p->log = p->notes = "";
  p->judged_by = "";
  return r;
}

void leir_verify_report_free(leir_verify_report *pub) {
  if (!pub) return;
  report *r = (report *)pub;
  free(r->outs);
  leir__arena_release(&r->arena);
  free(r);
}

/* A verdict about one program from the last error (static checks). */
static void set_failure(report *r, leir_verdict v, int program, const leir_error *e) {
  leir_verify_report *p = &r->pub;
  p->verdict = v;
  p->program = program;
  p->rule = keep(r, e->rule);
  p->line = e->line;
  p->column = e->column;
  char msg[1400];
  snprintf(msg, sizeof msg, "%s: %s", program == 0 ? "reference" : "candidate", e->message);
  p->message = keep(r, msg);
}

static leir_verdict verdict_of_status(leir_status st) {
  switch (st) {
    case LEIR_ERR_COMPILE: return LEIR_VERDICT_COMPILE_ERROR;
    case LEIR_ERR_TIMEOUT: return LEIR_VERDICT_TIMEOUT;
    case LEIR_ERR_RUNTIME: return LEIR_VERDICT_RUNTIME_ERROR;
    default: return LEIR_VERDICT_INVALID;
  }
}

/* Statuses that are verdicts about a program rather than failures of the
 * library or the backend. */
static bool is_program_status(leir_status st) {
  return st == LEIR_ERR_PARSE || st == LEIR_ERR_INVALID || st == LEIR_ERR_LIMIT ||
         st == LEIR_ERR_SIGNATURE || st == LEIR_ERR_COMPILE || st == LEIR_ERR_RUNTIME ||
         st == LEIR_ERR_TIMEOUT;
}


static const char *const class_names[] = {"any", "exact", "reassociating"};

const char *leir_verify_class_name(uint32_t c) { return c < 3 ? class_names[c] : NULL; }

leir_status leir_verify_class_from_name(const char *name, uint32_t *out) {
  if (!name || !out) return LEIR_ERR_ARGUMENT;
  for (uint32_t c = 0; c < 3; c++)
    if (strcmp(name, class_names[c]) == 0) {
      *out = c;
      return LEIR_OK;
    }
  return leir__error_arg(name, "unknown candidate class '%s' (any, exact, reassociating)", name);
}

/* Stages of a verification; a failure of the reference is remembered with
 * the stage where it happened. */
enum { STAGE_NONE = 0, STAGE_STATIC, STAGE_PARALLEL, STAGE_COMPILE, STAGE_RUN };

/* Candidate outputs of all sets are allocated together (one execution for
 * every set) up to this many bytes; above it the candidate runs set by set
 * on one reused set of output buffers. */
#define ALL_SETS_BYTES ((uint64_t)64 << 20)

/* Threads of every execution of a verification (reference, candidates,
 * truth): results never depend on the thread count (only provably
 * independent loops run in parallel), and on a busy machine a parallel
 * region's threads mostly wait at its barriers for a descheduled partner. */
#define VERIFY_THREADS 1u

struct leir_verifier {
  leir_backend *b;
  leir_verify_options o;
  leir_kernel *k0;
  /* the reference's failure, if any */
  int fail_stage;
  leir_verdict fail_verdict;
  leir_error fail;       /* strings below */
  char *fail_rule, *fail_message, *fail_log;
  int32_t fail_set;
  /* buffers: slot = set * nknown + i; inputs in `in`, outputs in `out` */
  uint32_t nsets, nknown, nout;
  void **in, **out;
  double *finite;        /* [output * nsets + set] */
  /* the truth (REASSOCIATING): f64 outputs per slot, computed once */
  int truth_state;       /* 0 not yet, 1 ready, -1 unavailable (truth_why) */
  double **truth;
  bool truth_is_orig;    /* f64 program: the truth is the original itself */
  /* inputs of all sets above ALL_SETS_BYTES: one set of input buffers
   * (every set's slots point at it), refilled before each set runs */
  bool stream;
  uint32_t filled;       /* the set the shared inputs hold (stream) */
  char truth_why[400];
  double nred;           /* longest reduction: max evaluations per element written */
  /* the backend fuses products into sums (LEIR_BACKEND_FP_CONTRACT on cpu or
   * cuda): which products the compiler fuses depends on the program's loop
   * structure, the instruction set and the compiler, so two programs that
   * compute the same operations may round differently, and float outputs
   * are judged against the f64 truth, whatever the class */
  bool contracting;
};

/* Whether float outputs of candidates of class `cls` are judged against the
 * f64 truth (when it could be computed): reassociating candidates, and every
 * candidate on a contracting backend except under the reference's own rule
 * (verification.md, "Fused multiply-add"). */
static bool judged_by_truth(const leir_verifier *v, uint32_t cls) {
  if (cls == LEIR_VERIFY_CLASS_REASSOCIATING) return true;
  if (!v->contracting) return false;
  return cls == LEIR_VERIFY_CLASS_EXACT || !(v->o.flags & LEIR_VERIFY_REFERENCE_RULE);
}

static leir_status read_verify_options(leir_verify_options *o, const leir_verify_options *in) {
  leir_status st = LEIR__OPTIONS_READ(leir_verify_options, o, in, LEIR_VERIFY_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o->input_sets < 1 || o->input_sets > 64)
    return leir__error_arg(NULL, "input_sets must be between 1 and 64");
  if (o->candidate_class > LEIR_VERIFY_CLASS_REASSOCIATING)
    return leir__error_arg(NULL, "candidate_class must be LEIR_VERIFY_CLASS_ANY, _EXACT or _REASSOCIATING");
  if (!(o->reassoc_factor >= 1.0) || !isfinite(o->reassoc_factor))
    return leir__error_arg(NULL, "reassoc_factor must be a finite number >= 1");
  if (!(o->min_finite_fraction >= 0.0 && o->min_finite_fraction <= 1.0))
    return leir__error_arg(NULL, "min_finite_fraction must be in [0, 1]");
  return LEIR_OK;
}

static void unravel(const leir__buffer *buf, uint64_t index, uint32_t *rank, int64_t *coords) {
  *rank = buf->rank;
  for (uint32_t k = buf->rank; k-- > 0;) {
    coords[k] = (int64_t)(index % (uint64_t)buf->shape[k]);
    index /= (uint64_t)buf->shape[k];
  }
}

static void format_coords(char *out, size_t cap, uint32_t rank, const int64_t *coords) {
  size_t n = 0;
  out[0] = '\0';
  for (uint32_t k = 0; k < rank && n + 1 < cap; k++)
    n += (size_t)snprintf(out + n, cap - n, "%s%lld", k ? "," : "", (long long)coords[k]);
}

static char *dup_str(const char *s) {
  size_t n = strlen(s ? s : "");
  char *d = malloc(n + 1);
  if (d) memcpy(d, s ? s : "", n + 1);
  return d;
}

/* Remembers the reference's failure (last error or `e`). */
static leir_status remember_failure(leir_verifier *v, int stage, leir_verdict verdict,
                                    const leir_error *e, const char *log, int32_t set) {
  v->fail_stage = stage;
  v->fail_verdict = verdict;
  v->fail = *e;
  v->fail_rule = dup_str(e->rule);
  v->fail_message = dup_str(e->message);
  v->fail_log = dup_str(log);
  v->fail_set = set;
  if (!v->fail_rule || !v->fail_message || !v->fail_log) return leir__error_nomem();
  v->fail.rule = v->fail_rule;
  v->fail.message = v->fail_message;
  return LEIR_OK;
}

static void free_slots(void **slots, uint32_t n) {
  if (!slots) return;
  for (uint32_t i = 0; i < n; i++) free(slots[i]);
  free(slots);
}

void leir_verifier_free(leir_verifier *v) {
  if (!v) return;
  uint32_t n = v->nsets * v->nknown;
  if (v->stream && v->in) {
    free_slots(v->in, v->nknown); /* set 0's buffers, shared by every set */
  } else {
    free_slots(v->in, n);
  }
  free_slots(v->out, n);
  if (v->truth)
    for (uint32_t i = 0; i < n; i++) free(v->truth[i]);
  free(v->truth);
  free(v->finite);
  free(v->fail_rule);
  free(v->fail_message);
  free(v->fail_log);
  leir__kernel_destroy(v->k0);
  free(v);
}

/* Runs kernel k on sets [first, first + count) with inputs from v->in and
 * outputs in outs (outs[(set - first) * nknown + i]). */
static leir_status run_sets(leir_verifier *v, leir_kernel *k, uint32_t first, uint32_t count,
                            void **outs, leir__exec_result *res) {
  uint32_t nk = v->nknown;
  void **ptrs = malloc((size_t)count * nk * sizeof *ptrs + 1);
  void *const **set_ptrs = malloc(count * sizeof *set_ptrs + 1);
  if (!ptrs || !set_ptrs) {
    free(ptrs);
    free((void *)set_ptrs);
    return leir__error_nomem();
  }
  for (uint32_t s = 0; s < count; s++) {
    for (uint32_t i = 0; i < nk; i++) {
      uint32_t slot = (first + s) * nk + i;
      ptrs[s * nk + i] = v->in[slot] ? v->in[slot] : outs[s * nk + i];
    }
    set_ptrs[s] = &ptrs[s * nk];
  }
  res->set = -1;
  leir_status st = v->b->ops->execute(v->b, k, (void *const *const *)set_ptrs, count, res);
  if (res->set >= 0) res->set += (int32_t)first;
  free(ptrs);
  free((void *)set_ptrs);
  return st;
}

/* Streaming verifiers: puts the inputs of `set` into the shared input
 * buffers (outputs of the fill go to `outs`, a set of output buffers that
 * receive the sentinel). */
static leir_status refill(leir_verifier *v, uint32_t set, void *const *outs) {
  if (!v->stream || v->filled == set) return LEIR_OK;
  const leir__analysis *a = v->k0->analysis;
  void **fill = malloc(v->nknown * sizeof *fill + 1);
  if (!fill) return leir__error_nomem();
  void *scratch = NULL;
  if (!outs) { /* the outputs' sentinel goes to a scratch buffer */
    uint64_t most = 1;
    for (uint32_t i = 0; i < v->nknown; i++)
      if (a->buffers[i].role == LEIR__BUF_OUTPUT && leir__buffer_bytes(&a->buffers[i]) > most)
        most = leir__buffer_bytes(&a->buffers[i]);
    scratch = malloc((size_t)most);
    if (!scratch) {
      free(fill);
      return leir__error_nomem();
    }
  }
  for (uint32_t i = 0; i < v->nknown; i++)
    fill[i] = a->buffers[i].role == LEIR__BUF_INPUT ? v->in[i] : outs ? outs[i] : scratch;
  leir_status st = leir__fill_inputs(v->k0->analysis, v->nknown, v->o.seed, set, fill);
  free(fill);
  free(scratch);
  if (st == LEIR_OK) v->filled = set;
  return st;
}

static double longest_reduction(const leir__analysis *a) {
  double nred = 1;
  for (uint32_t e = 0; e < a->neqs; e++) {
    const leir__eqinfo *q = &a->eqs[e];
    if (q->lhs_buffer == LEIR__NONE) continue;
    double per = (double)q->evaluations / (double)a->buffers[q->lhs_buffer].elements;
    if (per > nred) nred = per;
  }
  return nred;
}

static leir_status verifier_open(leir_verifier **out, leir_backend *b, const leir_program *ref,
                                 const leir_verify_options *opts);

leir_status leir_verifier_new(leir_verifier **out, leir_backend *b, const leir_program *ref,
                              const leir_verifier_options *opts) {
  if (!out || !b || !ref)
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_verifier_options vin;
  leir_status rst = LEIR__OPTIONS_READ(leir_verifier_options, &vin, opts,
                                       LEIR_VERIFIER_OPTIONS_INIT);
  if (rst != LEIR_OK) return rst;
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.flags = vin.flags;
  vo.seed = vin.seed;
  vo.input_sets = vin.input_sets;
  vo.rtol = vin.rtol;
  vo.atol = vin.atol;
  vo.reassoc_factor = vin.reassoc_factor;
  vo.min_finite_fraction = vin.min_finite_fraction;
  leir_verify_options o;
  leir_status st = read_verify_options(&o, &vo);
  if (st != LEIR_OK) return st;
  return verifier_open(out, b, ref, &o);
}

/* The verifier for options already read and checked (leir_verifier_new and
 * leir_verify both end here, so leir_verify needs no round trip through
 * leir_verifier_options). */
static leir_status verifier_open(leir_verifier **out, leir_backend *b, const leir_program *ref,
                                 const leir_verify_options *opts) {
  leir_verify_options o = *opts;
  leir_status st;
  leir_verifier *v = calloc(1, sizeof *v);
  if (!v) return leir__error_nomem();
  v->b = b;
  v->o = o;
  v->contracting = (b->opts.flags & LEIR_BACKEND_FP_CONTRACT) && b->ops->honours_fp_contract;
  /* 1. static checks and limits */
  st = leir__kernel_build(b, ref, NULL, &v->k0);
  if (st != LEIR_OK) {
    if (!is_program_status(st)) goto fail;
    st = remember_failure(v, STAGE_STATIC, LEIR_VERDICT_INVALID, leir_error_last(), "", -1);
    if (st != LEIR_OK) goto fail;
    *out = v;
    return LEIR_OK;
  }
  leir_kernel *k = v->k0;
  k->threads = VERIFY_THREADS;
  if ((o.flags & LEIR_VERIFY_STRICT_PARALLEL) && k->nsequential) {
    leir_error e = {LEIR_ERR_INVALID, k->seq_message, "check.parallel-dependence", "",
                    k->seq_line, k->seq_col};
    st = remember_failure(v, STAGE_PARALLEL, LEIR_VERDICT_INVALID, &e, "", -1);
    if (st != LEIR_OK) goto fail;
    *out = v;
    return LEIR_OK;
  }
  /* 2. compile */
  st = leir__kernels_prepare(b, &v->k0, 1);
  if (st != LEIR_OK) goto fail;
  st = k->prepared;
  if (st != LEIR_OK) {
    if (!is_program_status(st)) {
      st = leir__error(st, "backend", NULL, 0, 0, "%s backend failed to prepare a kernel",
                       b->ops->name);
      goto fail;
    }
    leir_error e = {st, st == LEIR_ERR_COMPILE ? "the compiler rejected the lowered code"
                                               : "compilation exceeded its time limit",
                    "backend.compile", "", 0, 0};
    st = remember_failure(v, STAGE_COMPILE, verdict_of_status(st), &e,
                          k->log.len ? leir__sb_terminate(&k->log) : "", -1);
    if (st != LEIR_OK) goto fail;
    *out = v;
    return LEIR_OK;
  }
  /* 3. inputs and the reference's outputs on every set */
  const leir__analysis *a = k->analysis;
  v->nsets = o.input_sets;
  v->nknown = k->nknown;
  uint32_t n = v->nsets * v->nknown;
  v->in = calloc(n + 1, sizeof *v->in);
  v->out = calloc(n + 1, sizeof *v->out);
  if (!v->in || !v->out) {
    st = leir__error_nomem();
    goto fail;
  }
  for (uint32_t i = 0; i < v->nknown; i++) v->nout += a->buffers[i].role == LEIR__BUF_OUTPUT;
  v->finite = calloc((size_t)v->nout * v->nsets + 1, sizeof *v->finite);
  if (!v->finite) {
    st = leir__error_nomem();
    goto fail;
  }
  uint64_t in_bytes = 0;
  for (uint32_t i = 0; i < v->nknown; i++)
    if (a->buffers[i].role == LEIR__BUF_INPUT) in_bytes += leir__buffer_bytes(&a->buffers[i]);
  v->stream = v->nsets > 1 && in_bytes * v->nsets > ALL_SETS_BYTES;
  void **fill = malloc(v->nknown * sizeof *fill + 1);
  if (!fill) {
    st = leir__error_nomem();
    goto fail;
  }
  for (uint32_t set = 0; set < v->nsets && st == LEIR_OK; set++) {
    for (uint32_t i = 0; i < v->nknown; i++) {
      const leir__buffer *buf = &a->buffers[i];
      size_t bytes = (size_t)leir__buffer_bytes(buf);
      bool input = buf->role == LEIR__BUF_INPUT;
      void **slot = input ? &v->in[set * v->nknown + i] : &v->out[set * v->nknown + i];
      if (input && v->stream && set > 0)
        *slot = v->in[i]; /* shared, refilled per set */
      else
        *slot = malloc(bytes ? bytes : 1);
      if (!*slot) {
        st = leir__error_nomem();
        break;
      }
      fill[i] = *slot;
    }
    if (st == LEIR_OK && !v->stream)
      st = leir__fill_inputs(k->analysis, v->nknown, o.seed, set, fill);
  }
  leir__exec_result res = {-1};
  if (st == LEIR_OK && !v->stream) st = run_sets(v, k, 0, v->nsets, v->out, &res);
  for (uint32_t set = 0; st == LEIR_OK && v->stream && set < v->nsets; set++) {
    for (uint32_t i = 0; i < v->nknown; i++)
      fill[i] = a->buffers[i].role == LEIR__BUF_INPUT ? v->in[i] : v->out[set * v->nknown + i];
    st = leir__fill_inputs(k->analysis, v->nknown, o.seed, set, fill);
    v->filled = set;
    if (st == LEIR_OK) st = run_sets(v, k, set, 1, &v->out[set * v->nknown], &res);
  }
  free(fill);
  if (st != LEIR_OK) {
    if (!is_program_status(st)) goto fail;
    st = remember_failure(v, STAGE_RUN, verdict_of_status(st), leir_error_last(), "", res.set);
    if (st != LEIR_OK) goto fail;
    *out = v;
    return LEIR_OK;
  }
  /* finite fractions of the reference's outputs */
  uint32_t oi = 0;
  for (uint32_t i = 0; i < v->nknown; i++) {
    const leir__buffer *buf = &a->buffers[i];
    if (buf->role != LEIR__BUF_OUTPUT) continue;
    for (uint32_t set = 0; set < v->nsets; set++)
      v->finite[oi * v->nsets + set] =
          (double)leir__count_finite(v->out[set * v->nknown + i], (leir_dtype)buf->dtype,
                                     buf->elements) /
          (double)buf->elements;
    oi++;
  }
  v->nred = longest_reduction(a);
  *out = v;
  return LEIR_OK;
fail:
  leir_verifier_free(v);
  return st;
}

/* ---- the truth of reassociating candidates ------------------------------ */

static void promote_expr(leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR && leir__dtype_is_float((leir_dtype)e->dtype))
    e->dtype = LEIR_F64;
  for (uint32_t k = 0; k < e->n; k++) promote_expr(e->kids[k]);
}

static void promote_nest(leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].eq) {
      promote_expr(n->items[k].eq->lhs);
      promote_expr(n->items[k].eq->rhs);
    } else {
      promote_nest(n->items[k].nest);
    }
  }
}

/* The reference evaluated with every float tensor in f64 (verification.md
 * §2): outputs in v->truth, one f64 array per output slot. */
static leir_status compute_truth(leir_verifier *v) {
  const leir__analysis *a = v->k0->analysis;
  uint32_t n = v->nsets * v->nknown;
  v->truth = calloc(n + 1, sizeof *v->truth);
  if (!v->truth) return leir__error_nomem();
  bool all_f64 = true;
  for (uint32_t i = 0; i < v->nknown; i++) {
    leir_dtype dt = (leir_dtype)a->buffers[i].dtype;
    if (leir__dtype_is_float(dt) && dt != LEIR_F64) all_f64 = false;
  }
  for (uint32_t b = v->nknown; b < a->nbuffers; b++) {
    leir_dtype dt = (leir_dtype)a->buffers[b].dtype;
    if (leir__dtype_is_float(dt) && dt != LEIR_F64) all_f64 = false;
  }
  for (uint32_t set = 0; set < v->nsets; set++)
    for (uint32_t i = 0; i < v->nknown; i++) {
      const leir__buffer *buf = &a->buffers[i];
      if (buf->role != LEIR__BUF_OUTPUT || !leir__dtype_is_float((leir_dtype)buf->dtype))
        continue;
      double *t = malloc(buf->elements * sizeof *t);
      if (!t) return leir__error_nomem();
      v->truth[set * v->nknown + i] = t;
      if (all_f64) memcpy(t, v->out[set * v->nknown + i], buf->elements * sizeof *t);
    }
  if (all_f64) {
    v->truth_is_orig = true;
    v->truth_state = 1;
    return LEIR_OK;
  }
  leir_program *p = NULL;
  leir_status st = leir_program_clone(&p, v->k0->program);
  if (st != LEIR_OK) return st;
  for (uint32_t t = 0; t < p->nnests; t++) promote_nest(p->nests[t]);
  for (uint32_t i = 0; i < p->nsig; i++)
    if (leir__dtype_is_float((leir_dtype)p->sig[i].dtype)) p->sig[i].dtype = LEIR_F64;
  leir_kernel *k = NULL;
  st = leir__kernel_build(v->b, p, NULL, &k);
  leir_program_free(p);
  if (st == LEIR_OK) k->threads = VERIFY_THREADS;
  if (st == LEIR_OK) st = leir__kernels_prepare(v->b, &k, 1);
  if (st == LEIR_OK) st = k->prepared;
  void **bufs = NULL;
  if (st == LEIR_OK) {
    bufs = calloc(v->nknown + 1, sizeof *bufs);
    if (!bufs) st = leir__error_nomem();
  }
  for (uint32_t set = 0; set < v->nsets && st == LEIR_OK; set++) {
    st = refill(v, set, NULL);
    for (uint32_t i = 0; i < v->nknown && st == LEIR_OK; i++) {
      const leir__buffer *buf = &a->buffers[i];
      leir_dtype dt = (leir_dtype)buf->dtype;
      uint32_t slot = set * v->nknown + i;
      free(bufs[i]);
      bufs[i] = NULL;
      if (buf->role == LEIR__BUF_OUTPUT && leir__dtype_is_float(dt)) {
        bufs[i] = NULL; /* the truth array itself */
        continue;
      }
      bool widen = leir__dtype_is_float(dt) && dt != LEIR_F64;
      size_t bytes = widen ? buf->elements * sizeof(double) : (size_t)leir__buffer_bytes(buf);
      bufs[i] = malloc(bytes ? bytes : 1);
      if (!bufs[i]) {
        st = leir__error_nomem();
        break;
      }
      const void *src = buf->role == LEIR__BUF_INPUT ? v->in[slot] : v->out[slot];
      if (widen)
        for (uint64_t e = 0; e < buf->elements; e++)
          ((double *)bufs[i])[e] = leir__load_f64(src, dt, e);
      else if (buf->role == LEIR__BUF_INPUT)
        memcpy(bufs[i], src, bytes);
      else
        leir__fill_sentinel(bufs[i], dt, buf->elements);
    }
    if (st != LEIR_OK) break;
    void **ptrs = malloc(v->nknown * sizeof *ptrs + 1);
    if (!ptrs) {
      st = leir__error_nomem();
      break;
    }
    for (uint32_t i = 0; i < v->nknown; i++) {
      ptrs[i] = bufs[i] ? bufs[i] : v->truth[set * v->nknown + i];
      if (!bufs[i]) leir__fill_sentinel(ptrs[i], LEIR_F64, a->buffers[i].elements);
    }
    void *const *set_ptrs[1] = {ptrs};
    leir__exec_result res = {-1};
    st = v->b->ops->execute(v->b, k, set_ptrs, 1, &res);
    free(ptrs);
  }
  if (bufs)
    for (uint32_t i = 0; i < v->nknown; i++) free(bufs[i]);
  free(bufs);
  leir__kernel_destroy(k);
  if (st == LEIR_OK) {
    v->truth_state = 1;
  } else {
    if (st == LEIR_ERR_NOMEM) return st;
    snprintf(v->truth_why, sizeof v->truth_why,
             "the f64 truth could not be computed (%s: %s); judged by the tolerance instead",
             leir_status_name(st), leir_error_last()->message);
    v->truth_state = -1;
  }
  return LEIR_OK;
}

/* ---- judging ------------------------------------------------------------ */

/* The rule that decides a comparison (leir_verify_report.judged_by). */
static const char *judge_rule(const leir_verifier *v, uint32_t cls) {
  bool truth = judged_by_truth(v, cls) && v->truth_state == 1;
  if (truth) return cls == LEIR_VERIFY_CLASS_ANY ? "truth-or-tolerance" : "truth";
  if (cls == LEIR_VERIFY_CLASS_EXACT && !v->contracting) return "bitwise";
  if (v->o.flags & LEIR_VERIFY_REFERENCE_RULE) return "reference-rule";
  return "tolerance";
}

static leir_status setup_outputs(report *r, const leir_verifier *v) {
  const leir__analysis *a = v->k0->analysis;
  r->outs = calloc(v->nout ? v->nout : 1, sizeof *r->outs);
  double *fractions = leir__arena_alloc(&r->arena, ((size_t)v->nout * v->nsets + 1) * sizeof(double));
  if (!r->outs || !fractions) return leir__error_nomem();
  size_t oi = 0;
  r->pub.finite_min = 1.0;
  for (uint32_t i = 0; i < v->nknown; i++) {
    const leir__buffer *buf = &a->buffers[i];
    if (buf->role != LEIR__BUF_OUTPUT) continue;
    outrep *out = &r->outs[oi];
    out->name = keep(r, leir__sym_name(v->k0->program, buf->sym));
    out->dtype = (leir_dtype)buf->dtype;
    out->elements = buf->elements;
    leir__tolerance_for(out->dtype, &out->rtol, &out->atol);
    if (leir__dtype_is_float(out->dtype)) {
      if (v->o.rtol >= 0) out->rtol = v->o.rtol;
      if (v->o.atol >= 0) out->atol = v->o.atol;
    }
    out->finite_fraction = fractions + oi * v->nsets;
    out->finite_min = 1.0;
    out->finite_max = 0.0;
    for (uint32_t set = 0; set < v->nsets; set++) {
      double f = v->finite[oi * v->nsets + set];
      fractions[oi * v->nsets + set] = f;
      if (f < out->finite_min) out->finite_min = f;
      if (f > out->finite_max) out->finite_max = f;
    }
    if (out->finite_min < r->pub.finite_min) r->pub.finite_min = out->finite_min;
    oi++;
  }
  r->pub.noutputs = v->nout;
  return LEIR_OK;
}

/* Copies the figures into the report's public arrays (outputs and
 * output_details). */
static leir_status publish_outputs(report *r) {
  size_t n = r->pub.noutputs;
  if (!r->outs || n == 0) {
    r->pub.noutputs = 0;
    return LEIR_OK;
  }
  leir_output_report *pub = leir__arena_alloc(&r->arena, n * sizeof *pub);
  leir_output_detail *det = leir__arena_alloc(&r->arena, n * sizeof *det);
  if (!pub || !det) return leir__error_nomem();
  for (size_t i = 0; i < n; i++) {
    const outrep *o = &r->outs[i];
    pub[i] = (leir_output_report){o->name,        o->dtype,       o->elements, o->differing,
                                  o->outside,     o->max_abs_err, o->max_rel_err, o->max_ulp,
                                  o->mse,         o->rtol,        o->atol};
    memset(&det[i], 0, sizeof det[i]);
    det[i].finite_min = o->finite_min;
    det[i].finite_max = o->finite_max;
    det[i].finite_fraction = o->finite_fraction;
    det[i].reference_err = o->reference_err;
    det[i].candidate_err = o->candidate_err;
  }
  r->pub.outputs = pub;
  r->pub.output_details = det;
  return LEIR_OK;
}

typedef struct judge_state {
  uint64_t total_diff, total_compared;
  double total_sq;
  bool failed;
} judge_state;

/* Compares the candidate's outputs of one set with the reference's. */
static void compare_set(report *r, const leir_verifier *v, uint32_t set, void *const *cand,
                        uint32_t cls, judge_state *js) {
  const leir__analysis *a = v->k0->analysis;
  leir_verify_report *p = &r->pub;
  bool reference_rule = v->o.flags & LEIR_VERIFY_REFERENCE_RULE;
  bool by_truth = judged_by_truth(v, cls) && v->truth_state == 1;
  /* class any on a contracting backend: the tolerance also admits an element.
   * So it does for a reassociating candidate of an f64 program: with no wider
   * evaluator the truth is the reference itself, whose own rounding is
   * unknown (reported as 0), and a rewrite that is exact over the reals but
   * cancels against a larger value (additive_split's x-y+y, about an ulp of
   * |y| where |y| >> |x|) rounds beyond the floor; the dtype's tolerance is
   * the bound every class-any answer already meets, so it admits nothing an
   * unclassed answer could not pass, and a real error stays MISMATCH. */
  bool tol_too = cls == LEIR_VERIFY_CLASS_ANY ||
                 (cls == LEIR_VERIFY_CLASS_REASSOCIATING && v->truth_is_orig);
  size_t oi = 0;
  for (uint32_t i = 0; i < v->nknown; i++) {
    const leir__buffer *buf = &a->buffers[i];
    if (buf->role != LEIR__BUF_OUTPUT) continue;
    outrep *out = &r->outs[oi++];
    leir_dtype dt = (leir_dtype)buf->dtype;
    uint32_t slot = set * v->nknown + i;
    const void *exp = v->out[slot], *act = cand[i];
    leir__block blk;
    leir__compare_block(&blk, exp, act, dt, buf->elements, out->rtol, out->atol);
    leir__truth_block tb = {0, UINT64_MAX, 0, 0};
    bool truth_here = by_truth && leir__dtype_is_float(dt);
    if (truth_here) {
      leir__compare_truth(&tb, v->truth[slot], exp, act, dt, buf->elements, v->o.reassoc_factor,
                          v->nred, v->truth_is_orig, tol_too ? out->rtol : -1.0, out->atol);
      if (tb.err_orig > out->reference_err) out->reference_err = tb.err_orig;
      if (tb.err_cand > out->candidate_err) out->candidate_err = tb.err_cand;
    }
    out->differing += blk.differing;
    out->outside += truth_here ? tb.outside : blk.outside;
    if (blk.max_abs > out->max_abs_err) out->max_abs_err = blk.max_abs;
    double rel = reference_rule ? blk.max_rel_guarded : blk.max_rel;
    if (rel > out->max_rel_err) out->max_rel_err = rel;
    if (blk.max_ulp > out->max_ulp) out->max_ulp = blk.max_ulp;
    out->mse += blk.sum_sq; /* divided at the end */
    js->total_diff += blk.differing;
    js->total_compared += blk.compared;
    js->total_sq += blk.sum_sq;
    bool block_fails;
    uint64_t idx, count;
    bool bitwise = cls == LEIR_VERIFY_CLASS_EXACT && !(v->contracting && leir__dtype_is_float(dt));
    if (bitwise) {
      block_fails = blk.differing > 0;
      idx = blk.first_diff;
      count = blk.differing;
    } else if (truth_here) {
      block_fails = tb.outside > 0;
      idx = tb.first_outside;
      count = tb.outside;
    } else if (reference_rule) {
      block_fails = !leir__reference_rule_passes(&blk, dt);
      idx = blk.first_diff;
      count = blk.differing;
    } else {
      block_fails = blk.outside > 0;
      idx = blk.first_outside;
      count = blk.outside;
    }
    if (block_fails && !js->failed) {
      js->failed = true;
      p->set = (int32_t)set;
      p->output = out->name;
      p->index = idx;
      unravel(buf, idx, &p->rank, p->coords);
      p->expected = leir__load_f64(exp, dt, idx);
      p->actual = leir__load_f64(act, dt, idx);
      char where[256], msg[900];
      format_coords(where, sizeof where, p->rank, p->coords);
      const char *unwritten = leir__is_sentinel((const char *)act + idx * leir_dtype_size(dt), dt)
                                  ? " (the candidate never wrote it)"
                                  : "";
      if (bitwise)
        snprintf(msg, sizeof msg,
                 "%s[%s] differs on input set %u: expected %.17g, got %.17g%s; %llu of %llu "
                 "elements not bitwise identical (an exact candidate must be EQUAL)",
                 out->name, where, set, p->expected, p->actual, unwritten,
                 (unsigned long long)count, (unsigned long long)buf->elements);
      else if (truth_here)
        snprintf(msg, sizeof msg,
                 "%s[%s] differs on input set %u: expected %.17g (truth %.17g), got %.17g%s; "
                 "%llu of %llu elements outside the %s bound (reference error %.3g, "
                 "candidate error %.3g against the f64 truth)",
                 out->name, where, set, p->expected, v->truth[slot][idx], p->actual, unwritten,
                 (unsigned long long)count, (unsigned long long)buf->elements,
                 cls == LEIR_VERIFY_CLASS_REASSOCIATING ? "reassociation" : "fused multiply-add",
                 tb.err_orig, tb.err_cand);
      else
        snprintf(msg, sizeof msg,
                 "%s[%s] differs on input set %u: expected %.17g, got %.17g%s; %llu of %llu "
                 "elements outside tolerance",
                 out->name, where, set, p->expected, p->actual, unwritten,
                 (unsigned long long)count, (unsigned long long)buf->elements);
      p->message = keep(r, msg);
    }
  }
}

/* The verdict once every set was compared (EQUAL/CLOSE/MISMATCH, or
 * INCONCLUSIVE instead of EQUAL/CLOSE). */
static void finish_comparison(report *r, const leir_verifier *v, uint32_t cls, judge_state *js) {
  leir_verify_report *p = &r->pub;
  for (size_t oi = 0; oi < p->noutputs; oi++) {
    outrep *out = &r->outs[oi];
    uint64_t n = out->elements * v->nsets;
    out->mse = n ? out->mse / (double)n : 0.0;
    if (out->max_abs_err > p->max_abs_err) p->max_abs_err = out->max_abs_err;
    if (out->max_rel_err > p->max_rel_err) p->max_rel_err = out->max_rel_err;
    if (out->max_ulp > p->max_ulp) p->max_ulp = out->max_ulp;
  }
  p->mse = js->total_compared ? js->total_sq / (double)js->total_compared : 0.0;
  if (js->failed) {
    p->verdict = LEIR_VERDICT_MISMATCH;
    return;
  }
  /* a vacuous comparison: some output of the reference is mostly NaN/inf
   * on every input set */
  for (size_t oi = 0; oi < p->noutputs; oi++) {
    const outrep *out = &r->outs[oi];
    if (!(out->finite_max < v->o.min_finite_fraction)) continue;
    p->verdict = LEIR_VERDICT_INCONCLUSIVE;
    p->output = out->name;
    char msg[400];
    snprintf(msg, sizeof msg,
             "the reference's output %s is finite on at most %.1f%% of its elements on every "
             "input set (below %.0f%%): the comparison proves nothing; declare the inputs' "
             "domains",
             out->name, 100.0 * out->finite_max, 100.0 * v->o.min_finite_fraction);
    p->message = keep(r, msg);
    return;
  }
  if (js->total_diff) {
    p->verdict = LEIR_VERDICT_CLOSE;
    char msg[300];
    if (judged_by_truth(v, cls) && v->truth_state == 1) {
      double re = 0, ce = 0;
      for (size_t oi = 0; oi < p->noutputs; oi++) {
        if (r->outs[oi].reference_err > re) re = r->outs[oi].reference_err;
        if (r->outs[oi].candidate_err > ce) ce = r->outs[oi].candidate_err;
      }
      snprintf(msg, sizeof msg,
               "within the %s bound on %u input set%s (error against the f64 truth: "
               "reference %.3g, candidate %.3g; max %llu ULP from the reference)",
               cls == LEIR_VERIFY_CLASS_REASSOCIATING ? "reassociation" : "fused multiply-add",
               v->nsets, v->nsets == 1 ? "" : "s", re, ce, (unsigned long long)p->max_ulp);
    } else {
      snprintf(msg, sizeof msg,
               "within tolerance on %u input set%s (max abs err %.3g, max rel err %.3g, max %llu "
               "ULP)",
               v->nsets, v->nsets == 1 ? "" : "s", p->max_abs_err, p->max_rel_err,
               (unsigned long long)p->max_ulp);
    }
    p->message = keep(r, msg);
  } else {
    p->verdict = LEIR_VERDICT_EQUAL;
    char msg[120];
    snprintf(msg, sizeof msg, "bitwise identical on %u input set%s", v->nsets,
             v->nsets == 1 ? "" : "s");
    p->message = keep(r, msg);
  }
}

static void collect_notes(report *r, leir_kernel *const *ks, const char *extra) {
  leir__strbuf sb = LEIR__STRBUF_INIT;
  for (int p = 0; p < 2; p++) {
    if (!ks[p] || !ks[p]->notes.len) continue;
    const char *text = leir__sb_terminate(&ks[p]->notes);
    const char *who = p == 0 ? "reference" : "candidate";
    while (*text) {
      const char *nl = strchr(text, '\n');
      size_t len = nl ? (size_t)(nl - text) : strlen(text);
      leir__sb_printf(&sb, "%s%s:%.*s", sb.len ? "\n" : "", who, (int)len, text);
      text += len + (nl ? 1 : 0);
    }
  }
  if (extra && *extra) leir__sb_printf(&sb, "%s%s", sb.len ? "\n" : "", extra);
  char *s = leir__sb_finish(&sb, NULL);
  if (s) {
    r->pub.notes = keep(r, s);
    free(s);
  }
}

/* A candidate's runs done ahead, with other candidates in one request to
 * the backend (execute_batch): its outputs of every set, or its failure. */
typedef struct prerun {
  bool ran;
  leir_status st;  /* LEIR_OK: outputs in cand */
  leir_error err;  /* st != LEIR_OK: strings below */
  char msg[1024], rule[64];
  int32_t set;
  void **cand;     /* nsets * nknown; outputs allocated */
} prerun;

/* Judges a candidate whose kernel was built (or failed to build with
 * status build_st, error e) and, when built, prepared; `pre` (may be NULL)
 * holds its runs when they were done already. */
static leir_status judge_built(leir_verifier *v, leir_kernel *k1, leir_status build_st,
                               const leir_error *build_err, uint32_t cls, double t0,
                               const prerun *pre, leir_verify_report **out) {
  report *r = report_new(v->b, v->o.seed, v->o.input_sets);
  if (!r) return leir__error_nomem();
  r->pub.candidate_class = cls;
  r->pub.finite_min = 1.0;
  leir_status fatal = LEIR_OK;
  void **cand = NULL;
  uint32_t ncand = 0;
  leir_kernel *ks[2] = {v->k0, k1};
  /* 1. static checks */
  if (v->fail_stage == STAGE_STATIC) {
    set_failure(r, v->fail_verdict, 0, &v->fail);
    goto done;
  }
  if (build_st != LEIR_OK) {
    set_failure(r, LEIR_VERDICT_INVALID, 1, build_err);
    goto done;
  }
  if (judged_by_truth(v, cls) && v->fail_stage == STAGE_NONE && v->truth_state == 0) {
    fatal = compute_truth(v);
    if (fatal != LEIR_OK) goto done;
  }
  r->pub.judged_by = judge_rule(v, cls);
  collect_notes(r, ks, judged_by_truth(v, cls) && v->truth_state < 0 ? v->truth_why : "");
  if (v->fail_stage == STAGE_PARALLEL) {
    set_failure(r, v->fail_verdict, 0, &v->fail);
    goto done;
  }
  if ((v->o.flags & LEIR_VERIFY_STRICT_PARALLEL) && k1->nsequential) {
    leir_error e = {LEIR_ERR_INVALID, k1->seq_message, "check.parallel-dependence", "",
                    k1->seq_line, k1->seq_col};
    set_failure(r, LEIR_VERDICT_INVALID, 1, &e);
    goto done;
  }
  /* 2. compilation */
  if (v->fail_stage == STAGE_COMPILE) {
    set_failure(r, v->fail_verdict, 0, &v->fail);
    if (v->fail_log[0]) r->pub.log = keep(r, v->fail_log);
    goto done;
  }
  leir_status st = k1->prepared;
  if (st != LEIR_OK) {
    if (!is_program_status(st)) {
      fatal = leir__error(st, "backend", NULL, 0, 0, "%s backend failed to prepare a kernel",
                          v->b->ops->name);
      goto done;
    }
    leir_error e = {st, st == LEIR_ERR_COMPILE ? "the compiler rejected the lowered code"
                                               : "compilation exceeded its time limit",
                    "backend.compile", "", 0, 0};
    set_failure(r, verdict_of_status(st), 1, &e);
    if (k1->log.len) r->pub.log = keep(r, leir__sb_terminate(&k1->log));
    goto done;
  }
  /* 3. runs */
  if (v->fail_stage == STAGE_RUN) {
    set_failure(r, v->fail_verdict, 0, &v->fail);
    r->pub.set = v->fail_set;
    goto done;
  }
  if (pre && pre->ran) {
    fatal = setup_outputs(r, v);
    if (fatal != LEIR_OK) goto done;
    if (pre->st != LEIR_OK) {
      set_failure(r, verdict_of_status(pre->st), 1, &pre->err);
      r->pub.set = pre->set;
      goto done;
    }
    judge_state js = {0, 0, 0.0, false};
    for (uint32_t s = 0; s < v->nsets; s++)
      compare_set(r, v, s, &pre->cand[s * v->nknown], cls, &js);
    finish_comparison(r, v, cls, &js);
    goto done;
  }
  const leir__analysis *a = v->k0->analysis;
  uint64_t set_bytes = 0;
  for (uint32_t i = 0; i < v->nknown; i++)
    if (a->buffers[i].role == LEIR__BUF_OUTPUT) set_bytes += leir__buffer_bytes(&a->buffers[i]);
  uint32_t chunk = set_bytes * v->nsets <= ALL_SETS_BYTES && !v->stream ? v->nsets : 1;
  ncand = chunk * v->nknown;
  cand = calloc((size_t)ncand + 1, sizeof *cand);
  if (!cand) {
    fatal = leir__error_nomem();
    goto done;
  }
  for (uint32_t s = 0; s < chunk; s++)
    for (uint32_t i = 0; i < v->nknown; i++)
      if (a->buffers[i].role == LEIR__BUF_OUTPUT) {
        size_t bytes = (size_t)leir__buffer_bytes(&a->buffers[i]);
        cand[s * v->nknown + i] = malloc(bytes ? bytes : 1);
        if (!cand[s * v->nknown + i]) {
          fatal = leir__error_nomem();
          goto done;
        }
      }
  fatal = setup_outputs(r, v);
  if (fatal != LEIR_OK) goto done;
  judge_state js = {0, 0, 0.0, false};
  for (uint32_t first = 0; first < v->nsets; first += chunk) {
    for (uint32_t s = 0; s < chunk; s++)
      for (uint32_t i = 0; i < v->nknown; i++)
        if (cand[s * v->nknown + i])
          leir__fill_sentinel(cand[s * v->nknown + i], (leir_dtype)k1->analysis->buffers[i].dtype,
                              k1->analysis->buffers[i].elements);
    leir__exec_result res = {-1};
    st = refill(v, first, cand);
    if (st != LEIR_OK) {
      fatal = st;
      goto done;
    }
    for (uint32_t i = 0; i < v->nknown; i++) /* refill put the reference's sentinel there */
      if (cand[i])
        leir__fill_sentinel(cand[i], (leir_dtype)k1->analysis->buffers[i].dtype,
                            k1->analysis->buffers[i].elements);
    st = run_sets(v, k1, first, chunk, cand, &res);
    if (st != LEIR_OK) {
      if (!is_program_status(st)) {
        fatal = st;
        goto done;
      }
      if (js.failed) break; /* a mismatch on an earlier set stands */
      /* the verdict is about the candidate's run: forget the figures */
      for (size_t oi = 0; oi < r->pub.noutputs; oi++) {
        outrep *o = &r->outs[oi];
        o->differing = o->outside = o->max_ulp = 0;
        o->max_abs_err = o->max_rel_err = o->mse = o->reference_err = o->candidate_err = 0;
      }
      set_failure(r, verdict_of_status(st), 1, leir_error_last());
      r->pub.set = res.set;
      goto done;
    }
    for (uint32_t s = 0; s < chunk; s++)
      compare_set(r, v, first + s, &cand[s * v->nknown], cls, &js);
  }
  finish_comparison(r, v, cls, &js);
done:
  free_slots(cand, ncand);
  if (fatal == LEIR_OK) fatal = publish_outputs(r);
  if (fatal != LEIR_OK) {
    leir_verify_report_free(&r->pub);
    return fatal;
  }
  r->pub.seconds = leir__now() - t0;
  *out = &r->pub;
  return LEIR_OK;
}

static leir_status check_judge_args(leir_verifier *v, uint32_t cls) {
  if (!v) return leir__error_arg(NULL, "NULL argument");
  if (cls > LEIR_VERIFY_CLASS_REASSOCIATING)
    return leir__error_arg(NULL, "candidate_class must be LEIR_VERIFY_CLASS_ANY, _EXACT or _REASSOCIATING");
  return LEIR_OK;
}

/* Builds the candidate's kernel against the reference's signature; a
 * program-status failure is returned in *err (static storage copied). */
static leir_status build_candidate(leir_verifier *v, const leir_program *cand, leir_kernel **k,
                                   leir_status *build_st, leir_error *err, char *msg, size_t cap,
                                   char *rule, size_t rule_cap) {
  *k = NULL;
  *build_st = LEIR_OK;
  if (v->fail_stage == STAGE_STATIC) return LEIR_OK; /* the reference's failure decides */
  leir_status st = leir__kernel_build(v->b, cand, v->k0->program, k);
  if (st == LEIR_OK) (*k)->threads = VERIFY_THREADS;
  if (st == LEIR_OK) return LEIR_OK;
  if (!is_program_status(st)) return st;
  *build_st = st;
  *err = *leir_error_last();
  snprintf(msg, cap, "%s", err->message);
  snprintf(rule, rule_cap, "%s", err->rule);
  err->message = msg;
  err->rule = rule;
  return LEIR_OK;
}

/* Whether the candidate kernel needs compiling (every earlier stage
 * passed). */
static bool needs_prepare(const leir_verifier *v, const leir_kernel *k) {
  if (!k || v->fail_stage == STAGE_STATIC || v->fail_stage == STAGE_PARALLEL) return false;
  if ((v->o.flags & LEIR_VERIFY_STRICT_PARALLEL) && k->nsequential) return false;
  return v->fail_stage != STAGE_COMPILE;
}

/* Bytes of the reference's outputs of one input set. */
static uint64_t output_set_bytes(const leir_verifier *v) {
  const leir__analysis *a = v->k0->analysis;
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < v->nknown; i++)
    if (a->buffers[i].role == LEIR__BUF_OUTPUT) bytes += leir__buffer_bytes(&a->buffers[i]);
  return bytes;
}

/* Runs the candidates ks[0..m) in as few requests to the backend as it
 * allows (execute_batch), each on every input set, into pres[j] (outputs
 * allocated by the caller). A candidate that fails ends a request; the
 * next request starts after it. A failure of the backend itself leaves
 * the rest not run (judge_built then runs them one by one). */
static void run_batch(leir_verifier *v, leir_kernel **ks, prerun **pres, size_t m) {
  uint32_t nk = v->nknown, ns = v->nsets;
  void *const **sets = malloc(ns * sizeof *sets + 1);
  void **outs = malloc(m * ns * nk * sizeof *outs + 1);
  if (!sets || !outs) {
    free((void *)sets);
    free(outs);
    return;
  }
  for (uint32_t s = 0; s < ns; s++) sets[s] = &v->in[s * nk];
  for (size_t j = 0; j < m; j++)
    for (uint32_t x = 0; x < ns * nk; x++) outs[j * ns * nk + x] = pres[j]->cand[x];
  size_t start = 0;
  while (start < m) {
    size_t done = 0;
    leir__exec_result res = {-1};
    leir_status st = v->b->ops->execute_batch(v->b, ks + start, m - start,
                                              (void *const *const *)sets, ns,
                                              outs + start * ns * nk, &res, &done);
    if (st == LEIR_OK) {
      for (size_t j = start; j < m; j++) pres[j]->ran = true;
      break;
    }
    if (!is_program_status(st) || start + done >= m) break;
    for (size_t j = start; j < start + done; j++) pres[j]->ran = true;
    prerun *f = pres[start + done];
    f->ran = true;
    f->st = st;
    f->err = *leir_error_last();
    snprintf(f->msg, sizeof f->msg, "%s", f->err.message ? f->err.message : "");
    snprintf(f->rule, sizeof f->rule, "%s", f->err.rule ? f->err.rule : "");
    f->err.message = f->msg;
    f->err.rule = f->rule;
    f->set = res.set;
    start += done + 1;
  }
  free((void *)sets);
  free(outs);
}

leir_status leir_verifier_judge_batch(leir_verifier *v, const leir_program *const *cands,
                                      const uint32_t *classes, size_t n, leir_verify_report **out) {
  if (!v || (n && (!cands || !out)))
    return leir__error_arg(NULL, "NULL argument");
  for (size_t i = 0; i < n; i++) {
    out[i] = NULL;
    if (!cands[i]) return leir__error_arg(NULL, "NULL candidate");
    leir_status st = check_judge_args(v, classes ? classes[i] : 0);
    if (st != LEIR_OK) return st;
  }
  typedef struct item {
    leir_kernel *k;
    leir_status build_st;
    leir_error err;
    char msg[1024], rule[64];
  } item;
  item *items = calloc(n + 1, sizeof *items);
  leir_kernel **prep = calloc(n + 1, sizeof *prep);
  if (!items || !prep) {
    free(items);
    free(prep);
    return leir__error_nomem();
  }
  double t0 = leir__now();
  leir_status first = LEIR_OK;
  size_t nprep = 0;
  for (size_t i = 0; i < n; i++) {
    leir_status st = build_candidate(v, cands[i], &items[i].k, &items[i].build_st, &items[i].err,
                                     items[i].msg, sizeof items[i].msg, items[i].rule,
                                     sizeof items[i].rule);
    if (st != LEIR_OK) {
      if (first == LEIR_OK) first = st;
      items[i].build_st = LEIR_ERR_INTERNAL; /* no report */
      continue;
    }
    if (needs_prepare(v, items[i].k)) prep[nprep++] = items[i].k;
  }
  if (nprep) {
    leir_status st = leir__kernels_prepare(v->b, prep, nprep);
    if (st != LEIR_OK && first == LEIR_OK) first = st;
    if (st != LEIR_OK) nprep = 0;
  }
  /* candidates that reach their runs: all of them in few requests when
   * the backend can (one round trip and one copy of the inputs for many) */
  prerun *pres = NULL;
  uint64_t out_bytes = v->fail_stage == STAGE_NONE ? output_set_bytes(v) * v->nsets : 0;
  if (nprep > 1 && v->b->ops->execute_batch && v->fail_stage == STAGE_NONE && !v->stream &&
      out_bytes <= ALL_SETS_BYTES)
    pres = calloc(n, sizeof *pres);
  if (pres) {
    uint32_t nslots = v->nsets * v->nknown;
    leir_kernel **ks = calloc(n, sizeof *ks);
    prerun **ps = calloc(n, sizeof *ps);
    size_t m = 0;
    uint64_t used = 0;
    const leir__analysis *a = v->k0->analysis;
    for (size_t i = 0; ks && ps && i <= n; i++) {
      bool runs = false;
      if (i < n && items[i].build_st == LEIR_OK && items[i].k &&
          items[i].k->prepared == LEIR_OK && needs_prepare(v, items[i].k)) {
        runs = true;
        pres[i].cand = calloc(nslots + 1, sizeof *pres[i].cand);
        for (uint32_t s = 0; pres[i].cand && s < v->nsets && runs; s++)
          for (uint32_t b = 0; b < v->nknown && runs; b++)
            if (a->buffers[b].role == LEIR__BUF_OUTPUT) {
              size_t bytes = (size_t)leir__buffer_bytes(&a->buffers[b]);
              runs = (pres[i].cand[s * v->nknown + b] = malloc(bytes ? bytes : 1)) != NULL;
            }
        runs = runs && pres[i].cand;
      }
      /* a request's outputs stay within ALL_SETS_BYTES */
      if (m && (i == n || (runs && used + out_bytes > ALL_SETS_BYTES))) {
        run_batch(v, ks, ps, m);
        m = 0;
        used = 0;
      }
      if (runs) {
        ks[m] = items[i].k;
        ps[m++] = &pres[i];
        used += out_bytes;
      }
    }
    free(ks);
    free(ps);
  }
  double shared = n ? (leir__now() - t0) / (double)n : 0.0;
  for (size_t i = 0; i < n; i++) {
    if (items[i].build_st == LEIR_ERR_INTERNAL) continue;
    bool prepared = false;
    for (size_t j = 0; j < nprep; j++) prepared |= prep[j] == items[i].k;
    if (items[i].k && !prepared && needs_prepare(v, items[i].k)) continue; /* prepare failed */
    leir_status st = judge_built(v, items[i].k, items[i].build_st, &items[i].err,
                                 classes ? classes[i] : 0, leir__now() - shared,
                                 pres ? &pres[i] : NULL, &out[i]);
    if (st != LEIR_OK && first == LEIR_OK) first = st;
  }
  if (pres)
    for (size_t i = 0; i < n; i++) free_slots(pres[i].cand, v->nsets * v->nknown);
  free(pres);
  for (size_t i = 0; i < n; i++) leir__kernel_destroy(items[i].k);
  free(items);
  free(prep);
  return first;
}

leir_status leir_verifier_judge(leir_verifier *v, const leir_program *cand, uint32_t cls,
                                leir_verify_report **out) {
  if (!out || !cand) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  const leir_program *c[1] = {cand};
  uint32_t k[1] = {cls};
  return leir_verifier_judge_batch(v, c, k, 1, out);
}

leir_status leir_verify(leir_backend *b, const leir_program *ref, const leir_program *cand,
                        const leir_verify_options *opts, leir_verify_report **out) {
  if (!b || !ref || !cand || !out)
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  double t0 = leir__now();
  leir_verify_options o;
  leir_status st = read_verify_options(&o, opts);
  if (st != LEIR_OK) return st;
  leir_verifier *v = NULL;
  st = verifier_open(&v, b, ref, &o);
  if (st != LEIR_OK) return st;
  st = leir_verifier_judge(v, cand, o.candidate_class, out);
  leir_verifier_free(v);
  if (st == LEIR_OK) (*out)->seconds = leir__now() - t0;
  return st;
}
