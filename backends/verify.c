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
 *
 * This file: the verdict and class names, opening a verifier (the
 * reference's stages) and the judgements' drive (builds, compiles and
 * batched runs of candidates); the f64 truth is in verify_truth.c, the
 * judging of one candidate into its report in verify_judge.c, the state
 * they share in verifier.h.
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
#include "verifier.h"

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
leir_status leir__verify_run_sets(leir_verifier *v, leir_kernel *k, uint32_t first, uint32_t count,
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
leir_status leir__verify_refill(leir_verifier *v, uint32_t set, void *const *outs) {
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
  if (st == LEIR_OK && !v->stream) st = leir__verify_run_sets(v, k, 0, v->nsets, v->out, &res);
  for (uint32_t set = 0; st == LEIR_OK && v->stream && set < v->nsets; set++) {
    for (uint32_t i = 0; i < v->nknown; i++)
      fill[i] = a->buffers[i].role == LEIR__BUF_INPUT ? v->in[i] : v->out[set * v->nknown + i];
    st = leir__fill_inputs(k->analysis, v->nknown, o.seed, set, fill);
    v->filled = set;
    if (st == LEIR_OK) st = leir__verify_run_sets(v, k, set, 1, &v->out[set * v->nknown], &res);
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
 * the rest not run (leir__verify_judge_built then runs them one by one). */
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
    leir_status st = leir__verify_judge_built(v, items[i].k, items[i].build_st, &items[i].err,
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
