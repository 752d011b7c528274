/*
 * Candidates verify as their class promises: exact ones EQUAL (bitwise),
 * reassociating ones EQUAL or CLOSE, on the conformance corpus.
 *
 * Every candidate of every program would take hours on the interpreter
 * (about 140,000 candidates, up to 2e6 evaluations each), so the suite
 * verifies a seeded, stratified sample on the interpreter: for every
 * (program, strategy) pair of the programs up to 2e5 evaluations, 4 or 2
 * candidates spread over the list; for each larger program one candidate of
 * one strategy (rotating with the program). On the CPU backend
 * (when a C compiler is available): one candidate per pair of every sixth
 * program. bench/verify_candidates checks any share of the
 * whole set by hand (see docs/strategies.md). Annotated loops must stay
 * legal: verification uses LEIR_VERIFY_STRICT_PARALLEL whenever the source
 * itself passes it. LEIR_TEST_VERIFY_SCALE (default 1) multiplies k (at
 * least 1); below 1 the walks start from every second program, below 0.5
 * (sanitizer builds: 0.25) from every fourth, and the interpreter sample
 * takes every fourth large program, the CPU sample every twelfth program.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "testutil.h"

/* The programs of tests/data/sources-small.jsonl with their signatures. */
typedef corpus_source source;
static corpus_programs small;

static void load(void) { corpus_programs_load(&small); }
static void unload(void) { corpus_programs_free(&small); }

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static double scale(void) {
  const char *s = getenv("LEIR_TEST_VERIFY_SCALE");
  double v = s ? atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

/* Strict about P/V/B loops unless the source already breaks the rule (some
 * sources bind a reduction loop to tx). */
static leir_verify_options options_for(leir_backend *b, const leir_program *src) {
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  o.flags |= LEIR_VERIFY_STRICT_PARALLEL;
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, src, src, &o, &r), LEIR_OK);
  if (r->verdict == LEIR_VERDICT_INVALID) o.flags &= ~LEIR_VERIFY_STRICT_PARALLEL;
  else ck_assert_int_eq(r->verdict, LEIR_VERDICT_EQUAL);
  leir_verify_report_free(r);
  return o;
}

static void expect_verifies(leir_backend *b, const source *e, const leir_verify_options *o,
                            const leir_program *q, const char *what, leir_exactness cls) {
  leir_verify_report *r = NULL;
  ck_assert_msg(leir_verify(b, e->program, q, o, &r) == LEIR_OK, "%s: %s: %s", e->id, what,
                leir_error_last()->message);
  bool ok = cls == LEIR_EXACT ? r->verdict == LEIR_VERDICT_EQUAL : leir_verdict_passes(r->verdict);
  if (!ok) {
    char *text = test_print(q);
    ck_abort_msg("%s: %s (%s) verifies %s on %s: %s\n%s", e->id, what, leir_exactness_name(cls),
                 leir_verdict_name(r->verdict), leir_backend_get_name(b), r->message, text);
  }
  leir_verify_report_free(r);
}

/* Verifies k seeded candidates per strategy of program e (only every
 * `every`-th strategy, rotating with idx); returns how many. */
static size_t verify_sample(leir_backend *b, const source *e, size_t idx, size_t k,
                            size_t every) {
  leir_verify_options o = options_for(b, e->program);
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, e->program, NULL), LEIR_OK);
  size_t n = leir_candidates_count(c), done = 0;
  size_t first[LEIR_STRATEGY_COUNT] = {0}, per[LEIR_STRATEGY_COUNT] = {0};
  for (size_t i = 0; i < n; i++) {
    size_t s = leir_step_strategy(leir_candidates_step(c, i));
    if (!per[s]++) first[s] = i;
  }
  for (size_t s = 0; s < LEIR_STRATEGY_COUNT; s++) {
    if ((s + idx) % every) continue;
    size_t take = per[s] < k ? per[s] : k;
    uint64_t start = mix(idx * 977 + s);
    for (size_t t = 0; t < take; t++) {
      /* evenly spaced from a seeded offset: different sites and parameters */
      size_t i = first[s] + (size_t)((start + t * (per[s] / take)) % per[s]);
      leir_program *q = NULL;
      ck_assert_int_eq(leir_candidates_apply(&q, c, i), LEIR_OK);
      expect_verifies(b, e, &o, q, leir_step_text(leir_candidates_step(c, i)),
                      leir_candidates_exactness(c, i));
      leir_program_free(q);
      done++;
    }
  }
  leir_candidates_free(c);
  return done;
}

static uint64_t evaluations(const leir_program *p) {
  leir_program_cost cost;
  ck_assert_int_eq(leir_program_cost_get(p, &cost), LEIR_OK);
  return cost.evaluations;
}

START_TEST(test_sampled_candidates_verify_on_interp) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t total = 0, large = 0;
  /* a scale below 0.5 (sanitizer builds) verifies every fourth large
   * program: they hold 96% of the evaluations and exercise the same
   * interpreter paths as the small ones, which the sample keeps whole */
  size_t large_stride = scale() < 0.5 ? 4 : 1;
  for (size_t i = 0; i < small.n; i++) {
    /* small programs: several per strategy; large ones (46 programs, 96%
     * of the evaluations): one strategy each, rotating, so every strategy
     * is still verified on about three of them */
    uint64_t ev = evaluations(small.e[i].program);
    if (ev > 200000 && large++ % large_stride) continue;
    size_t k = (size_t)(scale() * (double)(ev <= 20000 ? 4 : ev <= 200000 ? 2 : 1));
    if (k == 0) k = 1;
    total += verify_sample(b, &small.e[i], i, k, ev <= 200000 ? 1 : 14);
  }
  fprintf(stderr, "interp: %zu candidates verified\n", total);
  ck_assert_uint_gt(total, scale() < 1 ? 500 : 1000);
  leir_backend_free(b);
}
END_TEST

START_TEST(test_sampled_candidates_verify_on_cpu) {
  leir_backend *b = NULL;
  /* -O1: the generated code is the same; compiling it is several times
   * faster than at the default -O3 */
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.compiler_flags = "-O1 -fopenmp";
  leir_status st = leir_backend_open(&b, "cpu", &bo);
  if (st == LEIR_ERR_NO_DEVICE || st == LEIR_ERR_UNSUPPORTED) {
    /* no C compiler here: the interp suite above still verified the sample */
    fprintf(stderr, "cpu backend unavailable (%s): CPU verification not run\n",
            leir_error_last()->message);
    return;
  }
  ck_assert_int_eq(st, LEIR_OK);
  size_t total = 0;
  /* a scale below 0.5 (sanitizer builds) compiles every twelfth program's sample */
  size_t cpu_stride = scale() < 0.5 ? 12 : 6;
  for (size_t i = 0; i < small.n; i += cpu_stride)
    total += verify_sample(b, &small.e[i], i + 7, scale() < 1 ? 1 : (size_t)scale(), 1);
  fprintf(stderr, "cpu: %zu candidates verified\n", total);
  ck_assert_uint_gt(total, scale() < 0.5 ? 75 : 150);
  leir_backend_free(b);
}
END_TEST

/* Seeded random walks of 16 steps, mixing every implemented strategy (each
 * step picks a strategy, then one of its candidates), verify against their
 * start; the walk is reassociating as soon as one step is. */
START_TEST(test_random_walks_verify_against_the_start) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t walks = 0, eligible = 0;
  /* a scale below 1 walks from every second program, below 0.5 (sanitizer
   * builds) from every fourth */
  size_t stride = scale() < 0.5 ? 4 : scale() < 1 ? 2 : 1;
  for (size_t i = 0; i < small.n; i++) {
    const source *e = &small.e[i];
    if (evaluations(e->program) > 100000) continue;
    if (eligible++ % stride) continue;
    leir_verify_options o = options_for(b, e->program);
    leir_program *p = NULL;
    ck_assert_int_eq(leir_program_clone(&p, e->program), LEIR_OK);
    leir_exactness cls = LEIR_EXACT;
    char trail[8192] = "";
    for (int t = 0; t < 16; t++) {
      leir_candidates *c = NULL;
      if (leir_candidates_list(&c, p, NULL) != LEIR_OK) {
        char *text = NULL;
        size_t len = 0;
        const char *why = leir_error_last()->message;
        ck_assert_int_eq(leir_program_print(p, 0, &text, &len), LEIR_OK);
        ck_abort_msg("%s after step %d of the walk from %s:%s\n  program: %s", why, t, e->id,
                     trail, text);
      }
      size_t per[LEIR_STRATEGY_COUNT] = {0}, first[LEIR_STRATEGY_COUNT] = {0}, kinds = 0;
      for (size_t k = 0; k < leir_candidates_count(c); k++) {
        size_t s = leir_step_strategy(leir_candidates_step(c, k));
        if (!per[s]++) first[s] = k, kinds++;
      }
      uint64_t r = mix(i * 16 + (uint64_t)t);
      size_t pick = r % kinds, s = 0;
      for (;; s++)
        if (per[s] && pick-- == 0) break;
      size_t k = first[s] + (size_t)(mix(r) % per[s]);
      if (leir_candidates_exactness(c, k) == LEIR_REASSOCIATING) cls = LEIR_REASSOCIATING;
      size_t used = strlen(trail);
      snprintf(trail + used, sizeof trail - used, "\n  %s", leir_step_text(leir_candidates_step(c, k)));
      leir_program *q = NULL;
      ck_assert_int_eq(leir_candidates_apply(&q, c, k), LEIR_OK);
      leir_candidates_free(c);
      leir_program_free(p);
      p = q;
    }
    expect_verifies(b, e, &o, p, trail, cls);
    leir_program_free(p);
    walks++;
  }
  ck_assert_uint_gt(walks, 50 / stride);
  leir_backend_free(b);
}
END_TEST

/* Nested nests (flash attention's form) in programs the graph strategies
 * rewrite: every candidate of the nine graph strategies (catalogue 0-8)
 * passes `leir check`, keeps the signature and verifies as its class
 * promises; the nested nests are never sites of nest-pair rewrites, and
 * their equations are never occurrences of common sub-expressions. */
START_TEST(test_graph_strategies_on_nested_nests) {
  static const char *const programs[] = {
      "B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a});];"
      "B^{2}_{tx=0}L^{4}_{a=0}[M^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a})*2;"
      "L^{3}_{h=0}[O^{f64,g}_{tx,a,h}=M^{f64,g}_{tx,a}+C^{f64,g}_{a,h}*exp(A^{f64,g}_{tx,a});];];"
      "B^{2}_{tx=0}L^{4}_{a=0}L^{3}_{h=0}[E^{f64,g}_{tx,a,h}=O^{f64,g}_{tx,a,h}+D^{f64,g}_{tx,a};];",
      /* online softmax with the P.V product nested in the key loop */
      "B^{2}_{tx=0}L^{5}_{a=0}[S^{f64,g}_{tx,a}=Q^{f64,g}_{tx,0}*K^{f64,g}_{a,0};];"
      "B^{2}_{tx=0}L^{5}_{a=0}[M^{f64,g}_{tx}=max(M^{f64,g}_{tx},S^{f64,g}_{tx,a});];"
      "B^{2}_{tx=0}L^{5}_{a=0}[W^{f64,g}_{tx,a}=exp(S^{f64,g}_{tx,a}-M^{f64,g}_{tx});"
      "Z^{f64,g}_{tx}=Z^{f64,g}_{tx}+exp(S^{f64,g}_{tx,a}-M^{f64,g}_{tx});"
      "L^{3}_{c=0}[O^{f64,g}_{tx,c}=O^{f64,g}_{tx,c}+W^{f64,g}_{tx,a}*G^{f64,g}_{a,c};];];"
      "B^{2}_{tx=0}L^{3}_{c=0}[R^{f64,g}_{tx,c}=O^{f64,g}_{tx,c}/Z^{f64,g}_{tx};];",
  };
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t checked = 0;
  for (size_t i = 0; i < sizeof programs / sizeof *programs; i++) {
    leir_program *p = test_parse(programs[i]);
    source e = {0};
    e.id = "nested";
    e.program = p;
    leir_verify_options o = options_for(b, p);
    leir_candidates *c = NULL;
    ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_OK);
    for (size_t k = 0; k < leir_candidates_count(c); k++) {
      const leir_step *st = leir_candidates_step(c, k);
      if (leir_step_strategy(st) > 8) continue;
      leir_program *q = NULL;
      ck_assert_int_eq(leir_candidates_apply(&q, c, k), LEIR_OK);
      ck_assert_msg(leir_program_check(q, NULL, NULL) == LEIR_OK, "%s: %s", leir_step_text(st),
                    leir_error_last()->message);
      ck_assert_uint_eq(leir_program_signature_count(q), leir_program_signature_count(p));
      expect_verifies(b, &e, &o, q, leir_step_text(st), leir_candidates_exactness(c, k));
      leir_program_free(q);
      checked++;
    }
    leir_candidates_free(c);
    leir_program_free(p);
  }
  fprintf(stderr, "nested: %zu graph candidates verified\n", checked);
  ck_assert_uint_gt(checked, 20);
  leir_backend_free(b);
}
END_TEST

static Suite *verify_suite(void) {
  Suite *s = suite_create("strategy-verify");
  const struct {
    const char *name;
    const TTest *test;
  } cases[] = {{"interp", test_sampled_candidates_verify_on_interp},
               {"walks", test_random_walks_verify_against_the_start},
               {"nested", test_graph_strategies_on_nested_nests},
               {"cpu", test_sampled_candidates_verify_on_cpu}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    TCase *tc = tcase_create(cases[i].name);
    tcase_add_unchecked_fixture(tc, load, unload);
    tcase_set_timeout(tc, 1800);
    tcase_add_test(tc, cases[i].test);
    suite_add_tcase(s, tc);
  }
  return s;
}

int main(void) { return test_run_suite(verify_suite()); }
