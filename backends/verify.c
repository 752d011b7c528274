/*
 * leir_verify (verification.md §2): check both programs, compile them, run
 * them on the same seeded input sets, compare their outputs, and turn the
 * first failure into a verdict with its details.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compare.h"
#include "error.h"
#include "options.h"
#include "semantics.h"

/* The report and the memory behind its strings. */
typedef struct report {
  leir_verify_report pub;
  leir__arena arena;
  leir_output_report *outs;
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

/* Buffers of all input sets: inputs shared by both programs, outputs per
 * program. One allocation per buffer. */
typedef struct sets {
  uint32_t nsets, nknown;
  void **bufs[2]; /* [program][set * nknown + i] */
} sets;

static void sets_free(sets *s) {
  for (uint32_t i = 0; i < s->nsets * s->nknown; i++) {
    void *b0 = s->bufs[0] ? s->bufs[0][i] : NULL;
    void *b1 = s->bufs[1] ? s->bufs[1][i] : NULL;
    free(b0);
    if (b1 != b0) free(b1); /* inputs are shared */
  }
  free(s->bufs[0]);
  free(s->bufs[1]);
}

static leir_status sets_alloc(sets *s, leir_kernel *k0, leir_kernel *k1, uint64_t seed) {
  const leir__analysis *a = k0->analysis;
  uint32_t n = s->nsets * s->nknown;
  for (int p = 0; p < 2; p++) {
    s->bufs[p] = calloc(n ? n : 1, sizeof(void *));
    if (!s->bufs[p]) return leir__error_nomem();
  }
  for (uint32_t set = 0; set < s->nsets; set++) {
    for (uint32_t i = 0; i < s->nknown; i++) {
      const leir__buffer *buf = &a->buffers[i];
      size_t bytes = (size_t)leir__buffer_bytes(buf);
      uint32_t slot = set * s->nknown + i;
      s->bufs[0][slot] = malloc(bytes ? bytes : 1);
      if (!s->bufs[0][slot]) return leir__error_nomem();
      if (buf->role == LEIR__BUF_INPUT) {
        s->bufs[1][slot] = s->bufs[0][slot];
      } else {
        s->bufs[1][slot] = malloc(bytes ? bytes : 1);
        if (!s->bufs[1][slot]) return leir__error_nomem();
      }
    }
    leir_status st = leir__fill_inputs(k0->analysis, s->nknown, seed, set, &s->bufs[0][set * s->nknown]);
    if (st != LEIR_OK) return st;
    for (uint32_t i = 0; i < s->nknown; i++)
      if (k1->analysis->buffers[i].role == LEIR__BUF_OUTPUT)
        leir__fill_sentinel(s->bufs[1][set * s->nknown + i],
                            (leir_dtype)k1->analysis->buffers[i].dtype,
                            k1->analysis->buffers[i].elements);
  }
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

static void compare_outputs(report *r, leir_kernel *k0, const sets *s, const leir_verify_options *o) {
  const leir__analysis *a = k0->analysis;
  leir_verify_report *p = &r->pub;
  bool reference_rule = o->flags & LEIR_VERIFY_REFERENCE_RULE;
  uint64_t total_diff = 0, total_compared = 0;
  double total_sq = 0;
  bool failed = false;
  for (size_t oi = 0; oi < p->noutputs; oi++) r->outs[oi].max_rel_err = 0;
  for (uint32_t set = 0; set < s->nsets; set++) {
    size_t oi = 0;
    for (uint32_t i = 0; i < s->nknown; i++) {
      const leir__buffer *buf = &a->buffers[i];
      if (buf->role != LEIR__BUF_OUTPUT) continue;
      leir_output_report *out = &r->outs[oi++];
      leir_dtype dt = (leir_dtype)buf->dtype;
      const void *exp = s->bufs[0][set * s->nknown + i], *act = s->bufs[1][set * s->nknown + i];
      leir__block blk;
      leir__compare_block(&blk, exp, act, dt, buf->elements, out->rtol, out->atol);
      out->differing += blk.differing;
      out->outside += blk.outside;
      if (blk.max_abs > out->max_abs_err) out->max_abs_err = blk.max_abs;
      double rel = reference_rule ? blk.max_rel_guarded : blk.max_rel;
      if (rel > out->max_rel_err) out->max_rel_err = rel;
      if (blk.max_ulp > out->max_ulp) out->max_ulp = blk.max_ulp;
      out->mse += blk.sum_sq; /* divided below */
      out->elements = buf->elements;
      total_diff += blk.differing;
      total_compared += blk.compared;
      total_sq += blk.sum_sq;
      bool block_fails = reference_rule ? !leir__reference_rule_passes(&blk, dt) : blk.outside > 0;
      if (block_fails && !failed) {
        failed = true;
        uint64_t idx = reference_rule ? blk.first_diff : blk.first_outside;
        p->set = (int32_t)set;
        p->output = out->name;
        p->index = idx;
        unravel(buf, idx, &p->rank, p->coords);
        p->expected = leir__load_f64(exp, dt, idx);
        p->actual = leir__load_f64(act, dt, idx);
        char where[256], msg[700];
        format_coords(where, sizeof where, p->rank, p->coords);
        const char *unwritten = leir__is_sentinel((const char *)act + idx * leir_dtype_size(dt), dt)
                                    ? " (the candidate never wrote it)"
                                    : "";
        snprintf(msg, sizeof msg,
                 "%s[%s] differs on input set %u: expected %.17g, got %.17g%s; %llu of %llu "
                 "elements outside tolerance",
                 out->name, where, set, p->expected, p->actual, unwritten,
                 (unsigned long long)(reference_rule ? blk.differing : blk.outside),
                 (unsigned long long)buf->elements);
        p->message = keep(r, msg);
      }
    }
  }
  for (size_t oi = 0; oi < p->noutputs; oi++) {
    leir_output_report *out = &r->outs[oi];
    uint64_t n = out->elements * s->nsets;
    out->mse = n ? out->mse / (double)n : 0.0;
    if (out->max_abs_err > p->max_abs_err) p->max_abs_err = out->max_abs_err;
    if (out->max_rel_err > p->max_rel_err) p->max_rel_err = out->max_rel_err;
    if (out->max_ulp > p->max_ulp) p->max_ulp = out->max_ulp;
  }
  p->mse = total_compared ? total_sq / (double)total_compared : 0.0;
  if (failed) {
    p->verdict = LEIR_VERDICT_MISMATCH;
  } else if (total_diff) {
    p->verdict = LEIR_VERDICT_CLOSE;
    char msg[200];
    snprintf(msg, sizeof msg,
             "within tolerance on %u input set%s (max abs err %.3g, max rel err %.3g, max %llu ULP)",
             s->nsets, s->nsets == 1 ? "" : "s", p->max_abs_err, p->max_rel_err,
             (unsigned long long)p->max_ulp);
    p->message = keep(r, msg);
  } else {
    p->verdict = LEIR_VERDICT_EQUAL;
    char msg[120];
    snprintf(msg, sizeof msg, "bitwise identical on %u input set%s", s->nsets,
             s->nsets == 1 ? "" : "s");
    p->message = keep(r, msg);
  }
}

static leir_status setup_outputs(report *r, leir_kernel *k0, const leir_verify_options *o) {
  const leir__analysis *a = k0->analysis;
  size_t n = 0;
  for (uint32_t i = 0; i < k0->nknown; i++) n += a->buffers[i].role == LEIR__BUF_OUTPUT;
  r->outs = calloc(n ? n : 1, sizeof *r->outs);
  if (!r->outs) return leir__error_nomem();
  size_t oi = 0;
  for (uint32_t i = 0; i < k0->nknown; i++) {
    const leir__buffer *buf = &a->buffers[i];
    if (buf->role != LEIR__BUF_OUTPUT) continue;
    leir_output_report *out = &r->outs[oi++];
    out->name = keep(r, leir__sym_name(k0->program, buf->sym));
    out->dtype = (leir_dtype)buf->dtype;
    out->elements = buf->elements;
    leir__tolerance_for(out->dtype, &out->rtol, &out->atol);
    if (leir__dtype_is_float(out->dtype)) {
      if (o->rtol >= 0) out->rtol = o->rtol;
      if (o->atol >= 0) out->atol = o->atol;
    }
  }
  r->pub.noutputs = n;
  r->pub.outputs = r->outs;
  return LEIR_OK;
}

static void collect_notes(report *r, leir_kernel *const *ks) {
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
  char *s = leir__sb_finish(&sb, NULL);
  if (s) {
    r->pub.notes = keep(r, s);
    free(s);
  }
}

static leir_status read_verify_options(leir_verify_options *o, const leir_verify_options *in) {
  leir_status st = LEIR__OPTIONS_READ(leir_verify_options, o, in, LEIR_VERIFY_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o->input_sets < 1 || o->input_sets > 64)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0,
                       "input_sets must be between 1 and 64");
  return LEIR_OK;
}

leir_status leir_verify(leir_backend *b, const leir_program *ref, const leir_program *cand,
                        const leir_verify_options *opts, leir_verify_report **out) {
  if (!b || !ref || !cand || !out)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument");
  *out = NULL;
  double t0 = leir__now();
  leir_verify_options o;
  leir_status st = read_verify_options(&o, opts);
  if (st != LEIR_OK) return st;
  report *r = report_new(b, o.seed, o.input_sets);
  if (!r) return leir__error_nomem();
  leir_kernel *ks[2] = {NULL, NULL};
  sets s;
  memset(&s, 0, sizeof s);
  leir_status fatal = LEIR_OK;
  bool decided = false;

  /* 1. static checks and limits, the candidate against the reference's
   *    signature */
  for (int p = 0; p < 2 && !decided; p++) {
    st = leir__kernel_build(b, p == 0 ? ref : cand, p == 0 ? NULL : ks[0]->program, &ks[p]);
    if (st != LEIR_OK) {
      if (!is_program_status(st)) {
        fatal = st;
        goto done;
      }
      set_failure(r, LEIR_VERDICT_INVALID, p, leir_error_last());
      decided = true;
    }
  }
  if (!decided) collect_notes(r, ks);
  if (!decided && (o.flags & LEIR_VERIFY_STRICT_PARALLEL)) {
    for (int p = 0; p < 2 && !decided; p++) {
      if (!ks[p]->nsequential) continue;
      leir_error e = {LEIR_ERR_INVALID, ks[p]->seq_message, "check.parallel-dependence", "",
                      ks[p]->seq_line, ks[p]->seq_col};
      set_failure(r, LEIR_VERDICT_INVALID, p, &e);
      decided = true;
    }
  }
  /* 2. compile both (concurrently where the backend can) */
  if (!decided) {
    st = leir__kernels_prepare(b, ks, 2);
    if (st != LEIR_OK) {
      fatal = st;
      goto done;
    }
    for (int p = 0; p < 2 && !decided; p++) {
      st = ks[p]->prepared;
      if (st == LEIR_OK) continue;
      if (!is_program_status(st)) {
        fatal = leir__error(st, "backend", NULL, 0, 0, "%s backend failed to prepare a kernel",
                            b->ops->name);
        goto done;
      }
      leir_error e = {st, st == LEIR_ERR_COMPILE ? "the compiler rejected the lowered code"
                                                 : "compilation exceeded its time limit",
                      "backend.compile", "", 0, 0};
      set_failure(r, verdict_of_status(st), p, &e);
      if (ks[p]->log.len) r->pub.log = keep(r, ks[p]->log.data);
      decided = true;
    }
  }
  /* 3. run both on every input set */
  if (!decided) {
    s.nsets = o.input_sets;
    s.nknown = ks[0]->nknown;
    st = sets_alloc(&s, ks[0], ks[1], o.seed);
    if (st != LEIR_OK) {
      fatal = st;
      goto done;
    }
    for (int p = 0; p < 2 && !decided; p++) {
      void *const **set_ptrs = malloc(s.nsets * sizeof *set_ptrs);
      if (!set_ptrs) {
        fatal = leir__error_nomem();
        goto done;
      }
      for (uint32_t set = 0; set < s.nsets; set++) set_ptrs[set] = &s.bufs[p][set * s.nknown];
      leir__exec_result res = {-1};
      st = b->ops->execute(b, ks[p], (void *const *const *)set_ptrs, s.nsets, &res);
      free(set_ptrs);
      if (st == LEIR_OK) continue;
      if (!is_program_status(st)) {
        fatal = st;
        goto done;
      }
      set_failure(r, verdict_of_status(st), p, leir_error_last());
      r->pub.set = res.set;
      decided = true;
    }
  }
  /* 4. compare */
  if (!decided) {
    st = setup_outputs(r, ks[0], &o);
    if (st != LEIR_OK) {
      fatal = st;
      goto done;
    }
    compare_outputs(r, ks[0], &s, &o);
  }
done:
  sets_free(&s);
  leir__kernel_destroy(ks[0]);
  leir__kernel_destroy(ks[1]);
  if (fatal != LEIR_OK) {
    leir_verify_report_free(&r->pub);
    return fatal;
  }
  r->pub.seconds = leir__now() - t0;
  *out = &r->pub;
  return LEIR_OK;
}
