/*
 * Judging one candidate against a verifier's reference (verification.md
 * §2): the report and the memory behind its strings, the comparison of
 * every output on every input set (bitwise, the tolerance, the reference's
 * rule or the f64 truth), and the verdict with its details.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compare.h"
#include "error.h"
#include "ir.h"
#include "semantics.h"
#include "verifier.h"

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

/* Whether float outputs of candidates of class `cls` are judged against the
 * f64 truth (when it could be computed): reassociating candidates, and every
 * candidate on a contracting backend except under the reference's own rule
 * (verification.md, "Fused multiply-add"). */
static bool judged_by_truth(const leir_verifier *v, uint32_t cls) {
  if (cls == LEIR_VERIFY_CLASS_REASSOCIATING) return true;
  if (!v->contracting) return false;
  return cls == LEIR_VERIFY_CLASS_EXACT || !(v->o.flags & LEIR_VERIFY_REFERENCE_RULE);
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


/* Judges a candidate whose kernel was built (or failed to build with
 * status build_st, error e) and, when built, prepared; `pre` (may be NULL)
 * holds its runs when they were done already. */
leir_status leir__verify_judge_built(leir_verifier *v, leir_kernel *k1, leir_status build_st,
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
    fatal = leir__verify_compute_truth(v);
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
    st = leir__verify_refill(v, first, cand);
    if (st != LEIR_OK) {
      fatal = st;
      goto done;
    }
    for (uint32_t i = 0; i < v->nknown; i++) /* refill put the reference's sentinel there */
      if (cand[i])
        leir__fill_sentinel(cand[i], (leir_dtype)k1->analysis->buffers[i].dtype,
                            k1->analysis->buffers[i].elements);
    st = leir__verify_run_sets(v, k1, first, chunk, cand, &res);
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

