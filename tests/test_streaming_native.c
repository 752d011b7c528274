/*
 * The native-accumulator forms of the streaming strategies (acc=native of
 * normal_loop_summation_on_exp_to_prefix_summation_on_exp and
 * online_softmax, running and state=prefix, and online_softmax acc=native
 * lanes=8; docs/streaming.md):
 *  - the reference's default-shape outputs of #40 and #41 (f16 and f32
 *    programs; tests/data/streaming-native-reference.jsonl, copied from
 *    steps-default.jsonl) ground to `state=prefix acc=native`, and only to
 *    it; its masked GQA outputs (unguarded, NaN on masked rows) ground to
 *    nothing, while libleir's candidate there carries the guard;
 *  - f64 programs get no acc=native candidate (stream.acc-f64);
 *  - every acc=native candidate on every sources-small program made f32
 *    checks and verifies as reassociating against the f32 original on the
 *    three input sets (normal, normal x10, uniform), strict about P/V/B
 *    loops where the source is; where the reassociation bound rejects one,
 *    the f32 per-element tolerance must accept it (counted, printed, at
 *    most a tenth); of the programs over 2e5 evaluations every third,
 *    rotating, unless LEIR_TEST_STREAMING_ALL is set;
 *  - on rows that start with -inf (and one entirely -inf) the native and
 *    lane forms verify on the interpreter and the CPU backend, and the lane
 *    form without its guards is MISMATCH;
 *  - the chain of thought names the accumulator's dtype and its cost;
 *  - the lane form's lane loop is a V loop (the CPU backend emits it as
 *    `#pragma omp simd`), and a reduced extent that is no multiple of 8
 *    has no lane candidate (stream.lanes).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "testutil.h"

#define S40 "normal_loop_summation_on_exp_to_prefix_summation_on_exp"
#define S41 "online_softmax"
static const char *const native_strategies[] = {S40, S41};
#define NS 2

static corpus_programs small;
static void load(void) { corpus_programs_load(&small); }
static void unload(void) { corpus_programs_free(&small); }

static int32_t strategy_index(const char *name) {
  size_t idx;
  ck_assert_int_eq(leir_strategy_find(name, &idx), LEIR_OK);
  return (int32_t)idx;
}

static leir_candidates *candidates_of(const leir_program *p, const char *strategy) {
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.strategy = strategy_index(strategy);
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, &co), LEIR_OK);
  return c;
}

/* ---- the reference's default-shape outputs ground ---------------------------- */

/* The leir text of source `id` in sources-default.jsonl (malloc'd). */
static char *default_source(const char *id) {
  jsonl_file *f = test_corpus_open("sources-default.jsonl");
  const jsonl_value *o;
  char *text = NULL;
  while (!text && (o = jsonl_next(f)))
    if (strcmp(jsonl_str(jsonl_get(o, "id")), id) == 0) text = strdup(jsonl_str(jsonl_get(o, "leir")));
  jsonl_close(f);
  ck_assert_msg(text != NULL, "%s: no default source", id);
  return text;
}

START_TEST(test_reference_default_outputs_ground) {
  jsonl_file *f = test_corpus_open("streaming-native-reference.jsonl");
  const jsonl_value *o;
  size_t grounded[NS] = {0}, masked[NS] = {0};
  while ((o = jsonl_next(f))) {
    const char *id = jsonl_str(jsonl_get(o, "id"));
    const char *st = jsonl_str(jsonl_get(o, "strategy"));
    const char *after_text = jsonl_str(jsonl_get(o, "after"));
    bool grounds = jsonl_bool(jsonl_get(o, "grounds"), false);
    ck_assert_ptr_nonnull(id);
    ck_assert_ptr_nonnull(st);
    ck_assert_ptr_nonnull(after_text);
    size_t k = strcmp(st, S40) == 0 ? 0 : 1;
    ck_assert_str_eq(st, native_strategies[k]);
    char *src = default_source(id);
    leir_program *before = test_parse(src);
    free(src);
    ck_assert_int_eq(leir_program_infer_signature(before), LEIR_OK);
    leir_program *after = test_parse(after_text);
    leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
    co.strategy = strategy_index(st);
    leir_candidates *hits = NULL;
    ck_assert_int_eq(leir_ground(&hits, before, after, &co), LEIR_OK);
    if (grounds) {
      ck_assert_msg(leir_candidates_count(hits) == 1, "%s %s: %zu hits", st, id,
                    leir_candidates_count(hits));
      const char *step = leir_step_text(leir_candidates_step(hits, 0));
      ck_assert_msg(strstr(step, "state=prefix acc=native") != NULL, "%s: grounds to %s", id,
                    step);
      grounded[k]++;
    } else {
      /* a masked attention program: the reference's scan has no guard (NaN
       * on a masked prefix, tests/test_streaming_prefix.c shows it
       * MISMATCH on sources-small); libleir's native prefix candidate is
       * guarded, so nothing grounds */
      ck_assert_msg(leir_candidates_count(hits) == 0, "%s %s: grounds to %s", st, id,
                    leir_step_text(leir_candidates_step(hits, 0)));
      ck_assert_ptr_null(strstr(after_text, "==-inf"));
      leir_candidates *c = candidates_of(before, st);
      size_t guarded = 0;
      for (size_t j = 0; j < leir_candidates_count(c); j++) {
        if (!strstr(leir_step_text(leir_candidates_step(c, j)), "state=prefix acc=native"))
          continue;
        leir_program *q = NULL;
        ck_assert_int_eq(leir_candidates_apply(&q, c, j), LEIR_OK);
        char *text = test_print(q);
        guarded += strstr(text, "==-inf") != NULL;
        leir_free(text);
        leir_program_free(q);
      }
      ck_assert_msg(guarded >= 1, "%s %s: no guarded native prefix candidate", st, id);
      leir_candidates_free(c);
      masked[k]++;
    }
    leir_candidates_free(hits);
    leir_program_free(after);
    leir_program_free(before);
  }
  jsonl_close(f);
  fprintf(stderr,
          "streaming_native: default reference outputs grounded: %zu #40, %zu #41 "
          "(masked, not grounded: %zu, %zu)\n",
          grounded[0], grounded[1], masked[0], masked[1]);
  ck_assert_uint_eq(grounded[0], 5);
  ck_assert_uint_eq(grounded[1], 4);
  ck_assert_uint_eq(masked[0], 5);
  ck_assert_uint_eq(masked[1], 5);
}
END_TEST

/* ---- f64 programs: no native candidate ---------------------------------------- */

START_TEST(test_f64_programs_have_no_native_candidate) {
  size_t sites = 0;
  for (size_t i = 0; i < small.n; i++)
    for (size_t k = 0; k < NS; k++) {
      leir_candidates *c = candidates_of(small.e[i].program, native_strategies[k]);
      for (size_t j = 0; j < leir_candidates_count(c); j++) {
        const char *text = leir_step_text(leir_candidates_step(c, j));
        ck_assert_msg(!strstr(text, "acc=") && !strstr(text, "lanes="), "%s: %s", small.e[i].id,
                      text);
        sites += !strstr(text, "state=");
      }
      leir_candidates_free(c);
    }
  ck_assert_uint_ge(sites, 37);
  /* the rule that says why */
  leir_program *p = test_parse(
      "L^{4}_{a=0}L^{16}_{c=0}[D^{f64,g}_{a}=max(D^{f64,g}_{a},A^{f64,g}_{a,c});];"
      "L^{4}_{a=0}L^{16}_{c=0}[E^{f64,g}_{a}=E^{f64,g}_{a}+exp(A^{f64,g}_{a,c}-D^{f64,g}_{a});];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  const char *step = S40 " nest=0 acc=native";
  leir_step *s = NULL;
  ck_assert_int_eq(leir_step_parse(&s, step, strlen(step)), LEIR_OK);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_ERR_NOT_APPLICABLE);
  ck_assert_str_eq(leir_error_last()->rule, "stream.acc-f64");
  leir_step_free(s);
  leir_program_free(p);
}
END_TEST

/* ---- every native candidate on sources-small in f32 --------------------------- */

/* e's program with every f64 tensor made f32 (text and signature). */
static leir_program *as_f32(const corpus_entry *e) {
  char *text = strdup(e->leir);
  ck_assert_ptr_nonnull(text);
  for (char *x = strstr(text, "f64,"); x; x = strstr(x + 4, "f64,")) memcpy(x, "f32,", 4);
  leir_program *p = test_parse(text);
  free(text);
  leir_tensor_decl d[64];
  ck_assert_uint_le(e->ndecls, 64);
  for (size_t i = 0; i < e->ndecls; i++) {
    d[i] = e->decls[i];
    if (d[i].dtype == LEIR_F64) d[i].dtype = LEIR_F32;
  }
  ck_assert_int_eq(leir_program_set_signature(p, d, e->ndecls), LEIR_OK);
  return p;
}

START_TEST(test_native_candidates_verify_on_f32_sources) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  bool all = getenv("LEIR_TEST_STREAMING_ALL") != NULL;
  size_t count = 0, lanes = 0, prefix = 0, verified = 0, closeish = 0, tolerance = 0, big = 0,
         masked_sites = 0, guarded = 0, inconclusive = 0;
  for (size_t i = 0; i < small.n; i++) {
    leir_program *p = as_f32(&small.rows[i]);
    bool masked = corpus_masked(p);
    leir_program_cost cost;
    ck_assert_int_eq(leir_program_cost_get(p, &cost), LEIR_OK);
    size_t only = NS; /* NS: all; NS + 1: none */
    if (!all && cost.evaluations > 200000) {
      only = big % 3 == 0 ? big / 3 % NS : NS + 1;
      big++;
    }
    leir_verifier *v = NULL;
    for (size_t k = 0; k < NS; k++) {
      leir_candidates *c = candidates_of(p, native_strategies[k]);
      for (size_t j = 0; j < leir_candidates_count(c); j++) {
        const char *text = leir_step_text(leir_candidates_step(c, j));
        if (!strstr(text, "acc=native")) continue;
        ck_assert_int_eq(leir_candidates_exactness(c, j), LEIR_REASSOCIATING);
        leir_program *q = NULL;
        ck_assert_int_eq(leir_candidates_apply(&q, c, j), LEIR_OK);
        ck_assert_msg(leir_program_check(q, NULL, NULL) == LEIR_OK, "%s: %s: %s",
                      small.e[i].id, text, leir_error_last()->message);
        char *out = test_print(q);
        /* the running forms are always guarded (the lanes by the clamp
         * max(F,lowest)); the prefix ones exactly where a row can start
         * with -inf, as in f64; no f64 tensor */
        bool guard = strstr(out, "==-inf") != NULL || strstr(out, "-3.4028234663852886e38");
        ck_assert_msg(!strstr(out, "f64"), "%s: %s has an f64 tensor", small.e[i].id, text);
        leir_free(out);
        if (strstr(text, "state=prefix")) {
          ck_assert_msg(guard == masked, "%s: %s: guard %d", small.e[i].id, text, guard);
          prefix++;
        } else {
          ck_assert(guard);
        }
        masked_sites += masked;
        guarded += guard && masked;
        lanes += strstr(text, "lanes=8") != NULL;
        count++;
        if (only == NS || only == k) {
          if (!v) {
            leir_verifier_options o = corpus_strict_for(b, p);
            ck_assert_int_eq(leir_verifier_new(&v, b, p, &o), LEIR_OK);
          }
          leir_verify_report *r = NULL;
          ck_assert_int_eq(leir_verifier_judge(v, q, LEIR_VERIFY_CLASS_REASSOCIATING, &r),
                           LEIR_OK);
          bool ok = leir_verdict_passes(r->verdict);
          if (r->verdict == LEIR_VERDICT_INCONCLUSIVE) {
            /* the f32 original itself is not finite on half of an output
             * (an f64 source made f32 overflows): nothing to compare
             * against, and nothing differs where it is finite */
            fprintf(stderr, "streaming_native: %s: %s: INCONCLUSIVE (%s)\n", small.e[i].id, text,
                    r->message);
            inconclusive++;
            ok = true;
          } else if (!ok) {
            /* an f32 sum rounded per element can exceed 8x the original's
             * error where the original is exact by luck: the f32
             * per-element tolerance (rtol 1e-4) must accept it then */
            leir_verify_report *t = NULL;
            ck_assert_int_eq(leir_verifier_judge(v, q, LEIR_VERIFY_CLASS_ANY, &t), LEIR_OK);
            ck_assert_msg(leir_verdict_passes(t->verdict), "%s: %s: %s / %s", small.e[i].id,
                          text, r->message, t->message);
            fprintf(stderr, "streaming_native: %s: %s: within the f32 tolerance only (%s)\n",
                    small.e[i].id, text, r->message);
            leir_verify_report_free(t);
            tolerance++;
          }
          closeish += r->verdict == LEIR_VERDICT_CLOSE || r->verdict == LEIR_VERDICT_EQUAL;
          leir_verify_report_free(r);
          verified++;
        }
        leir_program_free(q);
      }
      leir_candidates_free(c);
    }
    leir_verifier_free(v);
    leir_program_free(p);
  }
  fprintf(stderr,
          "streaming_native: %zu acc=native candidates on f32 sources-small (%zu prefix, %zu "
          "lanes), %zu verified (%zu CLOSE/EQUAL by the reassociation bound, %zu by the f32 "
          "tolerance, %zu inconclusive); %zu on masked programs, %zu guarded\n",
          count, prefix, lanes, verified, closeish, tolerance, inconclusive, masked_sites, guarded);
  /* 19 #40 sites and 18 #41 ones, all prefix-shaped; lanes where the row is
   * a multiple of 8 above 8 (one site; the masked ones are checked below) */
  ck_assert_uint_ge(count, 2 * 19 + 2 * 18);
  ck_assert_uint_ge(prefix, 19 + 18);
  ck_assert_uint_ge(lanes, 1); /* the rows of sources-small: 8 | N once */
  ck_assert_uint_eq(guarded, masked_sites);
  ck_assert_uint_ge(verified, all ? count : 20);
  ck_assert_uint_le(tolerance * 10, verified);
  ck_assert_uint_le(inconclusive * 5, verified);
  leir_backend_free(b);
}
END_TEST

/* ---- masked rows, the CPU backend, the lane loop ----------------------------- */

#define SOFTMAX_MASKED(N)                                                                         \
  "L^{4}_{tx=0}L^{" N "}_{a=0}[X^{f32,g}_{tx,a}=if_then_else(K^{bool,g}_{tx,a}|a<3|tx==1,-inf,"  \
  "A^{f32,g}_{tx,a});];"                                                                          \
  "L^{4}_{tx=0}L^{" N "}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},X^{f32,g}_{tx,a});];"            \
  "L^{4}_{tx=0}L^{" N "}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(X^{f32,g}_{tx,a}-D^{f32,g}_{tx});];" \
  "L^{4}_{tx=0}L^{" N "}_{a=0}[C^{f32,g}_{tx,a}=exp(X^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];"

static leir_verdict verdict(leir_backend *b, const leir_program *p, const leir_program *q) {
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  o.candidate_class = LEIR_VERIFY_CLASS_REASSOCIATING;
  o.input_sets = 6;
  o.flags = LEIR_VERIFY_STRICT_PARALLEL;
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, q, &o, &r), LEIR_OK);
  leir_verdict v = r->verdict;
  if (!leir_verdict_passes(v))
    fprintf(stderr, "streaming_native: %s (a mutant is expected to be here)\n", r->message);
  leir_verify_report_free(r);
  return v;
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

START_TEST(test_masked_rows_verify_and_lanes_vectorize) {
  leir_program *p = test_parse(SOFTMAX_MASKED("64"));
  test_set_signature(p, "A:f32:4x64,K:bool:4x64 -> C:f32:4x64");
  static const char *const steps[] = {
      S40 " nest=1 acc=native", S40 " nest=1 state=prefix acc=native", S41 " nest=1 acc=native",
      S41 " nest=1 state=prefix acc=native", S41 " nest=1 acc=native lanes=8"};
  static const char *const backends[] = {"interp", "cpu"};
  for (size_t bi = 0; bi < 2; bi++) {
    leir_backend *b = NULL;
    if (leir_backend_open(&b, backends[bi], NULL) != LEIR_OK) {
      /* as tests/test_streaming_prefix.c: the cpu backend is not available
       * in every build (sanitizers) */
      ck_assert_str_eq(backends[bi], "cpu");
      fprintf(stderr, "streaming_native: no cpu backend (%s); masked rows not run there\n",
              leir_error_last()->message);
      continue;
    }
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
      leir_program *q = apply_step(p, steps[i]);
      leir_verdict v = verdict(b, p, q);
      ck_assert_msg(leir_verdict_passes(v), "%s on %s: %s", steps[i], backends[bi],
                    leir_verdict_name(v));
      if (strstr(steps[i], "lanes")) {
        /* without the clamp max(F,lowest) a lane that starts masked gets
         * exp(-inf - -inf) = NaN in its sum */
        char *text = test_print(q);
        static const char lowest[] = "-3.4028234663852886e38";
        size_t n = 0;
        for (char *x = strstr(text, lowest); x; x = strstr(x, lowest), n++) {
          memcpy(x, "-inf", 4);
          memmove(x + 4, x + sizeof lowest - 1, strlen(x + sizeof lowest - 1) + 1);
        }
        ck_assert_uint_eq(n, 2);
        leir_program *m = test_parse(text);
        leir_free(text);
        test_set_signature(m, "A:f32:4x64,K:bool:4x64 -> C:f32:4x64");
        ck_assert_int_eq(verdict(b, p, m), LEIR_VERDICT_MISMATCH);
        leir_program_free(m);
      }
      leir_program_free(q);
    }
    leir_backend_free(b);
  }
  /* the chain of thought says the accumulator's dtype and what it costs */
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    leir_step *st = NULL;
    ck_assert_int_eq(leir_step_parse(&st, steps[i], strlen(steps[i])), LEIR_OK);
    char *cot = NULL;
    ck_assert_int_eq(leir_step_cot(&cot, NULL, p, st), LEIR_OK);
    ck_assert_msg(strstr(cot, "the running sum is kept in f32, the dtype of E") &&
                      strstr(cot, "each element costs a rounding of the sum in f32"),
                  "%s: %s", steps[i], cot);
    ck_assert(!strstr(steps[i], "lanes") || strstr(cot, "8 interleaved lanes"));
    leir_free(cot);
    leir_step_free(st);
  }
  /* the lane loop is a V loop, emitted as a simd loop of 8 */
  leir_program *q = apply_step(p, S41 " nest=1 acc=native lanes=8");
  char *text = test_print(q);
  ck_assert_ptr_nonnull(strstr(text, "L^{8}_{c=0}[V^{8}_{d=0}["));
  leir_free(text);
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.flags = LEIR_BACKEND_LOWER_ONLY;
  leir_backend *lb = NULL;
  ck_assert_int_eq(leir_backend_open(&lb, "cpu", &bo), LEIR_OK);
  char *c = NULL;
  ck_assert_int_eq(leir_backend_lower(lb, q, &c, NULL), LEIR_OK);
  const char *simd = strstr(c, "#pragma omp simd");
  ck_assert_ptr_nonnull(simd);
  ck_assert_ptr_nonnull(strstr(simd, "< 8;"));
  leir_free(c);
  leir_backend_free(lb);
  leir_program_free(q);
  leir_program_free(p);
  /* 12 is no multiple of 8: the lane form is refused, the others stay */
  p = test_parse(SOFTMAX_MASKED("12"));
  test_set_signature(p, "A:f32:4x12,K:bool:4x12 -> C:f32:4x12");
  leir_candidates *cs = candidates_of(p, S41);
  size_t native = 0;
  for (size_t j = 0; j < leir_candidates_count(cs); j++) {
    const char *t = leir_step_text(leir_candidates_step(cs, j));
    ck_assert_ptr_null(strstr(t, "lanes"));
    native += strstr(t, "acc=native") != NULL;
  }
  ck_assert_uint_eq(native, 2);
  leir_candidates_free(cs);
  const char *step = S41 " nest=1 acc=native lanes=8";
  leir_step *s = NULL;
  ck_assert_int_eq(leir_step_parse(&s, step, strlen(step)), LEIR_OK);
  ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_ERR_NOT_APPLICABLE);
  ck_assert_str_eq(leir_error_last()->rule, "stream.lanes");
  leir_step_free(s);
  leir_program_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("streaming_native");
  TCase *tc = tcase_create("reference");
  tcase_add_unchecked_fixture(tc, load, unload);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reference_default_outputs_ground);
  tcase_add_test(tc, test_f64_programs_have_no_native_candidate);
  suite_add_tcase(s, tc);
  tc = tcase_create("verify");
  tcase_add_unchecked_fixture(tc, load, unload);
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, test_native_candidates_verify_on_f32_sources);
  tcase_add_test(tc, test_masked_rows_verify_and_lanes_vectorize);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
