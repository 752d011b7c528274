/*
 * The prefix-array forms of the streaming strategies (the reference's
 * program shape: normal_loop_max_to_prefix_max always,
 * normal_loop_summation_on_exp_to_prefix_summation_on_exp and
 * online_softmax with state=prefix; docs/streaming.md):
 *  - every such candidate on every sources-small program checks and
 *    verifies as its class on all input sets (normal, x10, uniform; bool
 *    masks Bernoulli), strict about P/V/B loops where the source is, and
 *    carries the -inf guard exactly where a masked element can reach the
 *    row (the attention programs with a bool mask); of the programs over
 *    2e5 evaluations every third verifies one strategy's candidates,
 *    rotating, unless LEIR_TEST_STREAMING_ALL is set;
 *  - the reference's verified outputs of 36, 40 and 41 on sources-small
 *    (tests/data/streaming-prefix-reference.jsonl, copied from
 *    steps-small.jsonl) ground to a candidate of their strategy, and its
 *    unguarded outputs on a masked program fail verification and do not;
 *  - a broken recurrence (a wrong shift, the wrong last element, a masked
 *    row without the guard) is caught by verification;
 *  - the scan under P loops (CPU) is race-free under the strict rule, also
 *    with M's storage flattened or reshaped (and #36's read at a-1 through
 *    a precomputed index table), a scan reading another row is INVALID,
 *    and under B loops the CUDA
 *    lowering (run on the host emulation) gives the interpreter's bits;
 *  - every candidate of every strategy on a prefix result checks and
 *    verifies against the original program.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "cuda_emul.h"
#include "testutil.h"

#define S36 "normal_loop_max_to_prefix_max"
#define S40 "normal_loop_summation_on_exp_to_prefix_summation_on_exp"
#define S41 "online_softmax"
static const char *const prefix_strategies[] = {S36, S40, S41};
#define NPREFIX (sizeof prefix_strategies / sizeof *prefix_strategies)

static corpus_programs small;
static void load(void) { corpus_programs_load(&small); }
static void unload(void) { corpus_programs_free(&small); }

static size_t strategy_index(const char *name) {
  size_t idx;
  ck_assert_int_eq(leir_strategy_find(name, &idx), LEIR_OK);
  return idx;
}

/* Does q pass as class cls? For f64 programs the reassociation bound has
 * no wider truth (the reference is its own truth), which a rescaled sum
 * feeding a long product and a tanh can exceed by a few ulp, as in
 * tests/test_streaming.c: such a candidate must pass the f64 per-element
 * tolerance instead, and is counted in *tolerance (may be NULL: no
 * fallback). */
static bool judge_passes(leir_verifier *v, const leir_program *ref, const leir_program *q,
                         uint32_t cls, const char *what, size_t *tolerance) {
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verifier_judge(v, q, cls, &r), LEIR_OK);
  bool ok = leir_verdict_passes(r->verdict);
  if (!ok && tolerance && cls == LEIR_VERIFY_CLASS_REASSOCIATING && corpus_all_f64(ref)) {
    leir_verify_report *t = NULL;
    ck_assert_int_eq(leir_verifier_judge(v, q, LEIR_VERIFY_CLASS_ANY, &t), LEIR_OK);
    ok = leir_verdict_passes(t->verdict);
    leir_verify_report_free(t);
    if (ok) {
      (*tolerance)++;
      fprintf(stderr, "streaming_prefix: %s: within the f64 tolerance only (%s)\n", what,
              r->message);
    }
  }
  if (!ok) fprintf(stderr, "streaming_prefix: %s: %s: %s\n", what, leir_verdict_name(r->verdict),
                   r->message);
  leir_verify_report_free(r);
  return ok;
}

/* ---- every prefix candidate on sources-small ---------------------------------- */

START_TEST(test_prefix_candidates_on_sources_small_verify) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t count[NPREFIX] = {0}, verified = 0, guarded = 0, masked_sites = 0, strict = 0,
         tolerance = 0, big = 0;
  bool all = getenv("LEIR_TEST_STREAMING_ALL") != NULL;
  for (size_t i = 0; i < small.n; i++) {
    const leir_program *p = small.e[i].program;
    bool masked = corpus_masked(p);
    /* programs over 2e5 evaluations (the 13 attention programs, about a
     * second each): every candidate is applied and checked; on every third
     * one, one strategy's are verified, rotating (LEIR_TEST_STREAMING_ALL=1:
     * every candidate everywhere) */
    leir_program_cost cost;
    ck_assert_int_eq(leir_program_cost_get(p, &cost), LEIR_OK);
    size_t only = NPREFIX; /* NPREFIX: all; above: none */
    if (!all && cost.evaluations > 200000) {
      only = big % 3 == 0 ? big / 3 % NPREFIX : NPREFIX + 1;
      big++;
    }
    leir_verifier *v = NULL;
    for (size_t k = 0; k < NPREFIX; k++) {
      leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
      co.strategy = (int32_t)strategy_index(prefix_strategies[k]);
      leir_candidates *c = NULL;
      ck_assert_int_eq(leir_candidates_list(&c, p, &co), LEIR_OK);
      for (size_t j = 0; j < leir_candidates_count(c); j++) {
        const char *text = leir_step_text(leir_candidates_step(c, j));
        if (k > 0 && !strstr(text, "state=prefix")) continue;
        bool verify = only == NPREFIX || only == k;
        if (!v && verify) {
          leir_verifier_options o = corpus_strict_for(b, p);
          strict += o.flags != 0;
          ck_assert_int_eq(leir_verifier_new(&v, b, p, &o), LEIR_OK);
        }
        leir_program *q = NULL;
        ck_assert_int_eq(leir_candidates_apply(&q, c, j), LEIR_OK);
        ck_assert_msg(leir_program_check(q, NULL, NULL) == LEIR_OK, "%s: %s: %s", small.e[i].id,
                      text, leir_error_last()->message);
        char *out = test_print(q);
        bool guard = strstr(out, "==-inf") != NULL;
        leir_free(out);
        /* a max needs no guard; the rescaled sum needs one exactly where a
         * row can start with -inf */
        if (k == 0) ck_assert_msg(!guard, "%s: %s has a guard", small.e[i].id, text);
        else ck_assert_msg(guard == masked, "%s: %s: guard %d on a %s program", small.e[i].id,
                           text, guard, masked ? "masked" : "mask-free");
        guarded += guard;
        masked_sites += k > 0 && masked;
        char what[512];
        snprintf(what, sizeof what, "%s: %s", small.e[i].id, text);
        if (verify) {
          ck_assert_msg(judge_passes(v, p, q, corpus_candidate_class(c, j), what, &tolerance), "%s", what);
          verified++;
        }
        leir_program_free(q);
        count[k]++;
      }
      leir_candidates_free(c);
    }
    leir_verifier_free(v);
  }
  fprintf(stderr,
          "streaming_prefix: %zu #36, %zu #40 and %zu #41 prefix candidates checked, %zu verified "
          "(%zu guarded on masked programs; %zu programs strict; %zu by tolerance)\n",
          count[0], count[1], count[2], verified, guarded, strict, tolerance);
  /* 22 max reductions; 19 softmax sites of which 13 masked attention ones */
  ck_assert_uint_ge(count[0], 22);
  ck_assert_uint_ge(count[1], 19);
  ck_assert_uint_ge(count[2], 18);
  ck_assert_uint_ge(masked_sites, 26);
  ck_assert_uint_eq(guarded, masked_sites);
  ck_assert_uint_ge(strict, 10);
  ck_assert_uint_ge(verified, all ? 61 : 20);
  ck_assert_uint_le(tolerance * 10, verified);
  leir_backend_free(b);
}
END_TEST

/* ---- the reference's outputs ground ------------------------------------------- */

START_TEST(test_reference_outputs_ground) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  jsonl_file *f = test_corpus_open("streaming-prefix-reference.jsonl");
  const jsonl_value *o;
  size_t grounded[NPREFIX] = {0}, refused = 0;
  while ((o = jsonl_next(f))) {
    const char *id = jsonl_str(jsonl_get(o, "id"));
    const char *st = jsonl_str(jsonl_get(o, "strategy"));
    const char *after_text = jsonl_str(jsonl_get(o, "after"));
    bool verified = jsonl_bool(jsonl_get(o, "verified"), false);
    ck_assert_ptr_nonnull(id);
    ck_assert_ptr_nonnull(st);
    ck_assert_ptr_nonnull(after_text);
    const leir_program *before = NULL;
    for (size_t i = 0; i < small.n && !before; i++)
      if (strcmp(small.e[i].id, id) == 0) before = small.e[i].program;
    ck_assert_msg(before != NULL, "%s: no source", id);
    leir_program *after = test_parse(after_text);
    leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
    size_t k = 0;
    while (k < NPREFIX && strcmp(prefix_strategies[k], st) != 0) k++;
    ck_assert_uint_lt(k, NPREFIX);
    co.strategy = (int32_t)strategy_index(st);
    leir_candidates *hits = NULL;
    ck_assert_int_eq(leir_ground(&hits, before, after, &co), LEIR_OK);
    if (verified) {
      ck_assert_msg(leir_candidates_count(hits) == 1, "%s %s: %zu hits", st, id,
                    leir_candidates_count(hits));
      const char *step = leir_step_text(leir_candidates_step(hits, 0));
      ck_assert_msg(k == 0 || strstr(step, "state=prefix"), "%s: grounds to %s", id, step);
      grounded[k]++;
    } else {
      /* the reference's rescaling on a masked row: exp(-inf - -inf) = NaN
       * where the source is finite; libleir's candidate is guarded */
      ck_assert_uint_eq(leir_candidates_count(hits), 0);
      leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
      vo.candidate_class = LEIR_VERIFY_CLASS_REASSOCIATING;
      vo.input_sets = 1;
      leir_verify_report *r = NULL;
      leir_program *sig = NULL;
      ck_assert_int_eq(leir_program_clone(&sig, after), LEIR_OK);
      leir_tensor_decl d[64];
      size_t n = leir_program_signature_count(before);
      ck_assert_uint_le(n, 64);
      for (size_t i = 0; i < n; i++) leir_program_signature_get(before, i, &d[i]);
      ck_assert_int_eq(leir_program_set_signature(sig, d, n), LEIR_OK);
      ck_assert_int_eq(leir_verify(b, before, sig, &vo, &r), LEIR_OK);
      ck_assert_msg(r->verdict == LEIR_VERDICT_MISMATCH, "%s %s: %s", st, id,
                    leir_verdict_name(r->verdict));
      leir_verify_report_free(r);
      leir_program_free(sig);
      refused++;
    }
    leir_candidates_free(hits);
    leir_program_free(after);
  }
  jsonl_close(f);
  fprintf(stderr, "streaming_prefix: reference outputs grounded: %zu #36, %zu #40, %zu #41\n",
          grounded[0], grounded[1], grounded[2]);
  ck_assert_uint_eq(grounded[0], 22);
  ck_assert_uint_eq(grounded[1], 6);
  ck_assert_uint_eq(grounded[2], 5);
  ck_assert_uint_eq(refused, 2);
  leir_backend_free(b);
}
END_TEST

/* ---- broken recurrences are caught -------------------------------------------- */

#define SOFTMAX                                                                                 \
  "B^{4}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},X^{f64,g}_{tx,a});];"                \
  "B^{4}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(X^{f64,g}_{tx,a}-D^{f64,g}_{tx});];" \
  "B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(X^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];"
/* rows masked on their first three elements, row 1 entirely, and by K */
#define MASKED_X                                                                                \
  "B^{4}_{tx=0}L^{8}_{a=0}[X^{f64,g}_{tx,a}=if_then_else(K^{bool,g}_{tx,a}|a<3|tx==1,-inf,"     \
  "A^{f64,g}_{tx,a});];"
#define PLAIN_X "B^{4}_{tx=0}L^{8}_{a=0}[X^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;];"
#define SIG_MASKED "A:f64:4x8,K:bool:4x8 -> C:f64:4x8"
#define SIG_PLAIN "A:f64:4x8 -> C:f64:4x8"

static leir_program *program(const char *text, const char *sig) {
  leir_program *p = test_parse(text);
  test_set_signature(p, sig);
  return p;
}

static leir_program *apply_step(const leir_program *p, const char *text) {
  leir_step *s = NULL;
  ck_assert_int_eq(leir_step_parse(&s, text, strlen(text)), LEIR_OK);
  leir_program *q = NULL;
  ck_assert_msg(leir_step_apply(&q, p, s, NULL) == LEIR_OK, "%s: %s", text,
                leir_error_last()->message);
  leir_step_free(s);
  return q;
}

/* q's text with every `from` replaced by `to` (at least once), parsed, with
 * sig. */
static leir_program *mutate(const leir_program *q, const char *from, const char *to,
                            const char *sig) {
  char *text = test_print(q);
  size_t fl = strlen(from), tl = strlen(to), n = 0;
  for (char *x = strstr(text, from); x; x = strstr(x + 1, from)) n++;
  ck_assert_msg(n > 0, "no %s in %s", from, text);
  char *out = malloc(strlen(text) + n * tl + 1), *w = out;
  ck_assert_ptr_nonnull(out);
  for (const char *r = text;;) {
    const char *x = strstr(r, from);
    if (!x) {
      strcpy(w, r);
      break;
    }
    memcpy(w, r, (size_t)(x - r));
    w += x - r;
    memcpy(w, to, tl);
    w += tl;
    r = x + fl;
  }
  leir_program *m = program(out, sig);
  free(out);
  leir_free(text);
  return m;
}

static leir_verdict verdict(leir_backend *b, const leir_program *p, const leir_program *q,
                            uint32_t flags) {
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  o.candidate_class = LEIR_VERIFY_CLASS_REASSOCIATING;
  o.input_sets = 6;
  o.flags = flags;
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, q, &o, &r), LEIR_OK);
  leir_verdict v = r->verdict;
  leir_verify_report_free(r);
  return v;
}

START_TEST(test_broken_recurrences_are_caught) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  static const char *const steps[] = {S40 " nest=1 state=prefix", S41 " nest=1 state=prefix"};
  for (int masked = 0; masked < 2; masked++) {
    const char *sig = masked ? SIG_MASKED : SIG_PLAIN;
    leir_program *p = program(masked ? MASKED_X SOFTMAX : PLAIN_X SOFTMAX, sig);
    for (size_t k = 0; k < 2; k++) {
      leir_program *q = apply_step(p, steps[k]);
      ck_assert(leir_verdict_passes(verdict(b, p, q, LEIR_VERIFY_STRICT_PARALLEL)));
      /* the shift by two: in bounds (the first-iteration test moves with
       * it), the recurrence skips every other element */
      leir_program *m = mutate(q, "a-1", "a-2", sig);
      ck_assert_int_eq(verdict(b, p, m, 0), LEIR_VERDICT_MISMATCH);
      leir_program_free(m);
      /* reading the prefix at its second-to-last element */
      m = mutate(q, "_{tx,7}", "_{tx,6}", sig);
      ck_assert_int_eq(verdict(b, p, m, 0), LEIR_VERDICT_MISMATCH);
      leir_program_free(m);
      /* the guard disabled (M==inf never holds on a masked prefix): the
       * reference's NaN on every masked program */
      if (masked) {
        m = mutate(q, "==-inf", "==inf", sig);
        ck_assert_int_eq(verdict(b, p, m, 0), LEIR_VERDICT_MISMATCH);
        leir_program_free(m);
      }
      leir_program_free(q);
    }
    leir_program_free(p);
  }
  leir_backend_free(b);
}
END_TEST

/* ---- parallel loops: the race check and the CUDA lowering ---------------------- */

START_TEST(test_prefix_scan_under_parallel_loops) {
  leir_backend *b = NULL;
  leir_status st = leir_backend_open(&b, "cpu", NULL);
  if (st != LEIR_OK) {
    fprintf(stderr, "streaming_prefix: no cpu backend (%s); parallel rows not run\n",
            leir_error_last()->message);
    return;
  }
  /* P over the rows: each iteration scans its own row */
  char text[2048];
  snprintf(text, sizeof text, "%s", PLAIN_X SOFTMAX);
  for (char *x = strstr(text, "B^{4}"); x; x = strstr(x, "B^{4}")) *x = 'P';
  leir_program *p = program(text, SIG_PLAIN);
  static const char *const steps[] = {S36 " nest=1", S40 " nest=1 state=prefix",
                                      S41 " nest=1 state=prefix"};
  for (size_t k = 0; k < 3; k++) {
    leir_program *q = apply_step(p, steps[k]);
    ck_assert_msg(leir_verdict_passes(verdict(b, p, q, LEIR_VERIFY_STRICT_PARALLEL)), "%s",
                  steps[k]);
    /* the scan of row tx reading row 3-tx: another iteration's element */
    leir_program *m = mutate(q, "_{tx,a-1}", "_{3-tx,a-1}", SIG_PLAIN);
    ck_assert_int_eq(verdict(b, p, m, LEIR_VERIFY_STRICT_PARALLEL), LEIR_VERDICT_INVALID);
    leir_program_free(m);
    if (k == 0) {
      /* #36's scan flattened column-major, then its entry (a-1)*4+tx
       * precomputed into an index table Z_{tx,a}: the read Y_{Z_{tx,a}} is
       * still the element the row wrote at a-1 (the strict check reads
       * through the table; it called this INVALID before); a table that
       * points into another row is not */
      leir_program *f = apply_step(q, "set_storage_layout tensor=Y layout=flatten");
      leir_program *g = apply_step(f, "precompute_indices nest=1 entry=(a-1)*4+tx");
      ck_assert(leir_verdict_passes(verdict(b, p, g, LEIR_VERIFY_STRICT_PARALLEL)));
      m = mutate(g, "=(a-1)*4+tx;", "=(a-1)*4+3-tx;", SIG_PLAIN);
      ck_assert_int_eq(verdict(b, p, m, LEIR_VERIFY_STRICT_PARALLEL), LEIR_VERDICT_INVALID);
      leir_program_free(m);
      leir_program_free(g);
      leir_program_free(f);
    }
    if (k == 1) {
      /* M's storage flattened column-major (D_{(a-1)*4+tx}: the element the
       * same row writes at a-1) or reshaped (D_{tx//2,tx%2,a-1}): still
       * owned by the iteration; another row's element is not */
      leir_program *f = apply_step(q, "set_storage_layout tensor=D layout=flatten");
      ck_assert(leir_verdict_passes(verdict(b, p, f, LEIR_VERIFY_STRICT_PARALLEL)));
      m = mutate(f, "_{(a-1)*4+tx}", "_{(a-1)*4+3-tx}", SIG_PLAIN);
      ck_assert_int_eq(verdict(b, p, m, LEIR_VERIFY_STRICT_PARALLEL), LEIR_VERDICT_INVALID);
      leir_program_free(m);
      leir_program_free(f);
      f = apply_step(q, "set_storage_layout tensor=D layout=reshape1 dim=0 factor=2");
      ck_assert(leir_verdict_passes(verdict(b, p, f, LEIR_VERIFY_STRICT_PARALLEL)));
      m = mutate(f, "_{tx//2,tx%2,a-1}", "_{tx//2,1-tx%2,a-1}", SIG_PLAIN);
      ck_assert_int_eq(verdict(b, p, m, LEIR_VERIFY_STRICT_PARALLEL), LEIR_VERDICT_INVALID);
      leir_program_free(m);
      leir_program_free(f);
    }
    leir_program_free(q);
  }
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

static void *alloc_buffers(const leir_program *p, void **bufs, size_t *nbufs, uint64_t seed) {
  size_t n = leir_program_signature_count(p), total = 0, at = 0;
  size_t bytes[64];
  ck_assert_uint_le(n, 64);
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    size_t e = 1;
    for (uint32_t r = 0; r < d.rank; r++) e *= (size_t)d.shape[r];
    bytes[i] = e * leir_dtype_size(d.dtype);
    total += (bytes[i] + 15) & ~(size_t)15;
  }
  char *mem = calloc(total ? total : 1, 1);
  ck_assert_ptr_nonnull(mem);
  uint64_t r = seed;
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    bufs[i] = mem + at;
    if (d.role == LEIR_ROLE_INPUT && d.dtype == LEIR_F64)
      for (size_t j = 0; j < bytes[i] / 8; j++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        ((double *)bufs[i])[j] = (double)(r >> 11) * 0x1p-53 * 8.0 - 4.0;
      }
    else if (d.role == LEIR_ROLE_INPUT && d.dtype == LEIR_BOOL)
      for (size_t j = 0; j < bytes[i]; j++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        ((uint8_t *)bufs[i])[j] = (uint8_t)(r >> 40) % 4 == 0;
      }
    at += (bytes[i] + 15) & ~(size_t)15;
  }
  *nbufs = n;
  return mem;
}

/* B loops: the CUDA lowering accepts the scan (the read at k-1 stays in the
 * thread's own row) and its kernels, run on the host emulation, give the
 * interpreter's bits, masked rows included. */
START_TEST(test_prefix_scan_lowers_to_cuda) {
  if (!cuda_emul_available()) {
    fprintf(stderr, "streaming_prefix: no C++ compiler for the CUDA emulation; skipped\n");
    return;
  }
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  static const char *const steps[] = {S36 " nest=1", S40 " nest=1 state=prefix",
                                      S41 " nest=1 state=prefix"};
  leir_program *progs[6];
  int idx[6];
  cuda_emul *e = cuda_emul_new();
  ck_assert_ptr_nonnull(e);
  for (int masked = 0; masked < 2; masked++) {
    leir_program *p = program(masked ? MASKED_X SOFTMAX : PLAIN_X SOFTMAX,
                              masked ? SIG_MASKED : SIG_PLAIN);
    for (size_t k = 0; k < 3; k++) {
      progs[masked * 3 + k] = apply_step(p, steps[k]);
      idx[masked * 3 + k] = cuda_emul_add(e, progs[masked * 3 + k]);
      ck_assert_msg(idx[masked * 3 + k] >= 0, "%s: the CUDA lowering refuses it: %s", steps[k],
                    leir_error_last()->message);
    }
    leir_program_free(p);
  }
  char log[4096];
  ck_assert_msg(cuda_emul_build(e, log, sizeof log), "%s", log);
  for (size_t i = 0; i < 6; i++) {
    void *want[8], *got[8];
    size_t n;
    void *m1 = alloc_buffers(progs[i], want, &n, 0x1234 + i);
    void *m2 = alloc_buffers(progs[i], got, &n, 0x1234 + i);
    ck_assert_int_eq(leir_run(b, progs[i], want, n), LEIR_OK);
    ck_assert_int_eq(cuda_emul_run(e, idx[i], got), LEIR_OK);
    leir_tensor_decl d;
    leir_program_signature_get(progs[i], n - 1, &d);
    const double *w = want[n - 1], *g = got[n - 1];
    size_t nans = 0;
    for (size_t j = 0; j < 32; j++) {
      ck_assert_msg(memcmp(&w[j], &g[j], 8) == 0 || (isnan(w[j]) && isnan(g[j])),
                    "program %zu element %zu: %a vs %a", i, j, w[j], g[j]);
      nans += isnan(w[j]) != 0;
    }
    /* the fully masked row (tx == 1) is NaN, as in the original */
    ck_assert_uint_eq(nans, i >= 3 ? 8 : 0);
    free(m1);
    free(m2);
  }
  for (size_t i = 0; i < 6; i++) leir_program_free(progs[i]);
  cuda_emul_free(e);
  leir_backend_free(b);
}
END_TEST

/* ---- other strategies on a prefix result --------------------------------------- */

START_TEST(test_other_strategies_on_prefix_results) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  leir_program *p = program(MASKED_X SOFTMAX, SIG_MASKED);
  static const char *const steps[] = {S40 " nest=1 state=prefix", S41 " nest=1 state=prefix"};
  leir_verifier_options o = LEIR_VERIFIER_OPTIONS_INIT;
  o.flags = LEIR_VERIFY_STRICT_PARALLEL;
  leir_verifier *v = NULL;
  ck_assert_int_eq(leir_verifier_new(&v, b, p, &o), LEIR_OK);
  size_t total = 0;
  for (size_t k = 0; k < 2; k++) {
    leir_program *q = apply_step(p, steps[k]);
    leir_candidates *c = NULL;
    ck_assert_int_eq(leir_candidates_list(&c, q, NULL), LEIR_OK);
    size_t strategies = 0;
    int last = -1;
    for (size_t i = 0; i < leir_candidates_count(c); i++) {
      const leir_step *s = leir_candidates_step(c, i);
      if ((int)leir_step_strategy(s) != last) strategies++, last = (int)leir_step_strategy(s);
      leir_program *r = NULL;
      ck_assert_int_eq(leir_candidates_apply(&r, c, i), LEIR_OK);
      ck_assert_msg(leir_program_check(r, NULL, NULL) == LEIR_OK, "%s then %s: %s", steps[k],
                    leir_step_text(s), leir_error_last()->message);
      char what[512];
      snprintf(what, sizeof what, "%s then %s", steps[k], leir_step_text(s));
      ck_assert_msg(judge_passes(v, p, r, LEIR_VERIFY_CLASS_REASSOCIATING, what, NULL), "%s", what);
      leir_program_free(r);
      total++;
    }
    fprintf(stderr, "streaming_prefix: %zu candidates of %zu strategies after %s verified\n",
            leir_candidates_count(c), strategies, steps[k]);
    ck_assert_uint_ge(strategies, 8);
    leir_candidates_free(c);
    leir_program_free(q);
  }
  ck_assert_uint_ge(total, 40);
  leir_verifier_free(v);
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("streaming_prefix");
  TCase *tc = tcase_create("corpus");
  tcase_add_unchecked_fixture(tc, load, unload);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_prefix_candidates_on_sources_small_verify);
  suite_add_tcase(s, tc);
  tc = tcase_create("reference");
  tcase_add_unchecked_fixture(tc, load, unload);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reference_outputs_ground);
  suite_add_tcase(s, tc);
  tc = tcase_create("recurrence");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_broken_recurrences_are_caught);
  tcase_add_test(tc, test_prefix_scan_under_parallel_loops);
  tcase_add_test(tc, test_prefix_scan_lowers_to_cuda);
  tcase_add_test(tc, test_other_strategies_on_prefix_results);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
