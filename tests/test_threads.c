/* The stable and experimental API used from several threads at once, as an
 * embedder does (docs/api.md, "Threads"): every thread parses, prints,
 * checks, lists candidates, applies steps, verifies, compares timings and
 * runs a search with a policy, first on a program of its own, then on one
 * program shared read-only by all threads. Each thread's results must equal
 * those of one thread alone; the CI's ThreadSanitizer build (.ci/run `tsan_threads`) runs this
 * suite and fails on any data race it reports.
 *
 * Check's assertions end the test from the thread that calls them, so the
 * workers record their first failure and the test's thread asserts. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/candidates.h"
#include "leir/experimental/search.h"
#include "leir/tir.h"
#include "testutil.h"

enum { NTHREADS = 4, MAX_CANDS = 256, VERIFIED = 3, SEARCH_SAMPLES = 12 };

/* An 8x8x8 matmul: dozens of candidates. */
static const char *MATMUL =
    "L^{8}_{a=0}L^{8}_{c=0}L^{8}_{d=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+A^{f64,g}_{a,d}*C^{f64,g}_{d,c};];";

/* What one thread found; the same fields for the single-thread reference. */
typedef struct outcome {
  char *text;                   /* canonical print */
  uint64_t hash;                /* leir_program_hash_alpha */
  size_t ncands;                /* candidates listed */
  uint64_t applied[MAX_CANDS];  /* alpha hash of each candidate applied */
  leir_verdict verdicts[VERIFIED];       /* leir_verify of the first candidates */
  leir_verdict judged[VERIFIED];         /* a leir_verifier's verdicts of the same */
  uint64_t search[SEARCH_SAMPLES * 2];   /* the records' hashes of each search */
  size_t nsearch;
  uint32_t rounds;              /* leir_kernels_compare */
  uint64_t flops;               /* leir_program_cost_get */
  size_t tir_len, cot_len[VERIFIED], reasons[VERIFIED], grounded[VERIFIED];
  leir_status by_text[VERIFIED]; /* leir_step_apply of the step's text */
  uint64_t by_text_hash[VERIFIED];
  uint64_t by_json_hash[VERIFIED]; /* leir_step_apply of the step's JSON form (a trace) */
} outcome;

typedef struct worker {
  const leir_program *shared;      /* NULL: parse a program of its own */
  int compare;                     /* time two kernels on a cpu backend of its own */
  outcome out;
  char failure[512];               /* the first failure, "" when none */
} worker;

static void record_failure(worker *w, const char *fmt, ...) {
  if (w->failure[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->failure, sizeof w->failure, fmt, ap);
  va_end(ap);
}

#define EXPECT_OK(w, call)                                                                    \
  do {                                                                                        \
    leir_status st_ = (call);                                                                 \
    if (st_ != LEIR_OK) {                                                                     \
      record_failure((w), "%s: %s (%s)", #call, leir_status_name(st_), leir_error_last()->message);    \
      goto done;                                                                              \
    }                                                                                         \
  } while (0)

/* A deterministic measurement: the search's trajectory depends only on the
 * programs, so every thread's search must give the reference's records. */
static leir_status measure(void *payload, const leir_program *root, const leir_program *parent,
                           const leir_program *cand, uint32_t klass, leir_search_measurement *m) {
  (void)payload, (void)root, (void)klass;
  uint64_t h = leir_program_hash_alpha(cand) ^ (leir_program_hash_alpha(parent) * 0x9E3779B97F4A7C15ull);
  h ^= h >> 29;
  m->verdict = LEIR_VERDICT_EQUAL;
  m->ratio = 0.8 + 0.6 * (double)(h % 1000) / 1000.0;
  m->ratio_lo = m->ratio * 0.99;
  m->ratio_hi = m->ratio * 1.01;
  m->median_s = 1.0 / m->ratio;
  m->q1_s = m->q3_s = m->median_s;
  m->parent_median_s = 1.0;
  m->rounds = 10;
  m->order = m->ratio > 1.02 ? LEIR_ORDER_FASTER : m->ratio < 1 / 1.02 ? LEIR_ORDER_SLOWER
                                                                       : LEIR_ORDER_SAME;
  return LEIR_OK;
}

/* A C policy: the candidates in reverse list order, `want` at a time, plus
 * the built-in cost policy's first proposals (an adapter's typical mix). */
static leir_status reverse_policy(void *payload, const leir_search_query *q,
                                  leir_search_proposals *out) {
  (void)payload;
  size_t n = leir_candidates_count(q->candidates);
  size_t skip = (size_t)q->attempt * q->want;
  for (size_t k = 0; k < q->want && skip + k < n; k++) {
    leir_status st = leir_search_propose_candidate(out, n - 1 - skip - k, NULL);
    if (st != LEIR_OK) return st;
  }
  return q->attempt == 0 ? leir_search_propose_builtin(LEIR_POLICY_COST, q, out) : LEIR_OK;
}

static void record_search(worker *w, const leir_search_result *r) {
  size_t n = leir_search_result_record_count(r);
  for (size_t i = 0; i < n && w->out.nsearch < SEARCH_SAMPLES * 2; i++)
    w->out.search[w->out.nsearch++] = leir_search_result_record(r, i)->hash;
}

static leir_backend *open_backend(worker *w, const char *name) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 120;
  bo.threads = 1; /* one OpenMP thread: the test's threads are the concurrency */
  bo.runner = getenv("LEIR_TEST_RUNNER");
  leir_backend *b = NULL;
  leir_status st = leir_backend_open(&b, name, &bo);
  if (st != LEIR_OK) record_failure(w, "leir_backend_open(%s): %s", name, leir_error_last()->message);
  return b;
}

static void *work(void *arg) {
  worker *w = arg;
  outcome *o = &w->out;
  leir_program *own = NULL, *applied = NULL;
  leir_candidates *cands = NULL;
  leir_diagnostics *diags = NULL;
  leir_backend *interp = NULL, *cpu = NULL;
  leir_verifier *verifier = NULL;
  leir_kernel *ka = NULL, *kb = NULL;
  leir_search_result *sr = NULL;
  leir_program *firsts[VERIFIED] = {0};
  const leir_program *p = w->shared;
  if (!p) {
    EXPECT_OK(w, leir_program_parse(&own, MATMUL, strlen(MATMUL), NULL));
    EXPECT_OK(w, leir_program_infer_signature(own));
    p = own;
  }
  EXPECT_OK(w, leir_program_print(p, 0, &o->text, NULL));
  o->hash = leir_program_hash_alpha(p);
  EXPECT_OK(w, leir_program_check(p, NULL, &diags));

  /* candidates: list, apply through the list, and again through the step text */
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags = LEIR_CANDIDATES_ALL_DIVISORS;
  EXPECT_OK(w, leir_candidates_list(&cands, p, &co));
  o->ncands = leir_candidates_count(cands);
  if (o->ncands > MAX_CANDS) o->ncands = MAX_CANDS;
  for (size_t i = 0; i < o->ncands; i++) {
    EXPECT_OK(w, leir_candidates_apply(&applied, cands, i));
    o->applied[i] = leir_program_hash_alpha(applied);
    if (i < VERIFIED) {
      firsts[i] = applied;
    } else {
      leir_program_free(applied);
    }
    applied = NULL;
    int assumed = -1;
    EXPECT_OK(w, leir_candidates_assumed(cands, i, &assumed));
  }
  char *json = NULL;
  EXPECT_OK(w, leir_candidates_to_json(cands, 0, &json, NULL));
  leir_free(json);
  leir_program_cost pc;
  EXPECT_OK(w, leir_program_cost_get(p, &pc));
  o->flops = pc.flops;
  char *tir = NULL;
  EXPECT_OK(w, leir_lower_tir(p, NULL, &tir, &o->tir_len));
  leir_free(tir);

  /* steps by text, explanations, grounding, chain of thought */
  for (size_t i = 0; i < VERIFIED && firsts[i]; i++) {
    const leir_step *cs = leir_candidates_step(cands, i);
    const char *text = leir_step_text(cs);
    leir_step *step = NULL;
    EXPECT_OK(w, leir_step_parse(&step, text, strlen(text)));
    o->by_text[i] = leir_step_apply(&applied, p, step, NULL);
    o->by_text_hash[i] = applied ? leir_program_hash_alpha(applied) : 0;
    leir_program_free(applied);
    applied = NULL;
    leir_step_free(step);
    step = NULL;
    /* the step replayed from its JSON form, as a trace does, on the shared program */
    char *js = NULL;
    EXPECT_OK(w, leir_step_to_json(cs, &js, NULL));
    leir_status jst = leir_step_parse(&step, js, strlen(js));
    leir_free(js);
    EXPECT_OK(w, jst);
    jst = leir_step_apply(&applied, p, step, NULL);
    leir_step_free(step);
    EXPECT_OK(w, jst);
    o->by_json_hash[i] = leir_program_hash_alpha(applied);
    leir_program_free(applied);
    applied = NULL;
    leir_explanation *ex = NULL;
    EXPECT_OK(w, leir_strategy_explain(&ex, p, leir_step_strategy(cs)));
    o->reasons[i] = leir_explanation_count(ex);
    leir_explanation_free(ex);
    leir_candidates *g = NULL;
    EXPECT_OK(w, leir_ground(&g, p, firsts[i], NULL));
    o->grounded[i] = leir_candidates_count(g);
    leir_candidates_free(g);
    char *cot = NULL;
    EXPECT_OK(w, leir_step_cot(&cot, &o->cot_len[i], p, cs));
    leir_free(cot);
  }

  /* verification: one-shot and with a verifier, on an interpreter of its own */
  interp = open_backend(w, "interp");
  if (!interp) goto done;
  EXPECT_OK(w, leir_verifier_new(&verifier, interp, p, NULL));
  for (size_t i = 0; i < VERIFIED && firsts[i]; i++) {
    leir_verify_report *rep = NULL;
    EXPECT_OK(w, leir_verify(interp, p, firsts[i], NULL, &rep));
    o->verdicts[i] = rep->verdict;
    leir_verify_report_free(rep);
    rep = NULL;
    EXPECT_OK(w, leir_verifier_judge(verifier, firsts[i], LEIR_VERIFY_CLASS_ANY, &rep));
    o->judged[i] = rep->verdict;
    leir_verify_report_free(rep);
  }

  /* searches: a built-in policy and a C policy, measured deterministically */
  leir_search_options so = LEIR_SEARCH_OPTIONS_INIT;
  so.policy = LEIR_POLICY_EXHAUSTIVE;
  so.max_samples = SEARCH_SAMPLES / 2;
  so.measure = measure;
  EXPECT_OK(w, leir_search_run(&sr, NULL, p, &so));
  record_search(w, sr);
  leir_search_result_free(sr);
  sr = NULL;
  so.propose = reverse_policy;
  so.algorithm = LEIR_SEARCH_BEAM;
  EXPECT_OK(w, leir_search_run(&sr, NULL, p, &so));
  record_search(w, sr);

  /* timing: two kernels compared on a cpu backend of its own */
  if (w->compare) {
    cpu = open_backend(w, "cpu");
    if (!cpu) goto done;
    EXPECT_OK(w, leir_kernel_new(&ka, cpu, p));
    EXPECT_OK(w, leir_kernel_new(&kb, cpu, firsts[0]));
    leir_compare_options cmp = LEIR_COMPARE_OPTIONS_INIT;
    cmp.warmup = 1;
    cmp.min_rounds = 3;
    cmp.max_rounds = 6;
    leir_comparison c = {.size = sizeof c};
    EXPECT_OK(w, leir_kernels_compare(ka, kb, &cmp, &c));
    o->rounds = c.rounds;
    if (c.rounds < 3 || c.rounds > 6) record_failure(w, "compare ran %u rounds, not 3 to 6", c.rounds);
  }
done:
  leir_search_result_free(sr);
  leir_kernel_free(ka);
  leir_kernel_free(kb);
  leir_backend_free(cpu);
  leir_verifier_free(verifier);
  leir_backend_free(interp);
  for (size_t i = 0; i < VERIFIED; i++) leir_program_free(firsts[i]);
  leir_program_free(applied);
  leir_diagnostics_free(diags);
  leir_candidates_free(cands);
  leir_program_free(own);
  return NULL;
}

static void expect_same(const outcome *want, const worker *w, int t) {
  ck_assert_msg(w->failure[0] == '\0', "thread %d: %s", t, w->failure);
  const outcome *got = &w->out;
  ck_assert_str_eq(got->text, want->text);
  ck_assert_uint_eq(got->hash, want->hash);
  ck_assert_uint_eq(got->ncands, want->ncands);
  for (size_t i = 0; i < want->ncands; i++)
    ck_assert_msg(got->applied[i] == want->applied[i], "thread %d, candidate %zu", t, i);
  for (size_t i = 0; i < VERIFIED; i++) {
    ck_assert_int_eq(got->verdicts[i], want->verdicts[i]);
    ck_assert_int_eq(got->judged[i], want->judged[i]);
    ck_assert_int_eq(got->by_text[i], want->by_text[i]);
    ck_assert_uint_eq(got->by_text_hash[i], want->by_text_hash[i]);
    ck_assert_uint_eq(got->by_json_hash[i], want->by_json_hash[i]);
    ck_assert_uint_eq(got->reasons[i], want->reasons[i]);
    ck_assert_uint_eq(got->grounded[i], want->grounded[i]);
    ck_assert_uint_eq(got->cot_len[i], want->cot_len[i]);
  }
  ck_assert_uint_eq(got->flops, want->flops);
  ck_assert_uint_eq(got->tir_len, want->tir_len);
  ck_assert_uint_eq(got->nsearch, want->nsearch);
  for (size_t i = 0; i < want->nsearch; i++)
    ck_assert_msg(got->search[i] == want->search[i], "thread %d, search record %zu", t, i);
}

/* Runs NTHREADS workers like `proto` at once and compares each with one
 * worker run alone first. */
static void run_threads(const worker *proto) {
  worker alone = *proto;
  alone.compare = 0;
  work(&alone);
  ck_assert_msg(alone.failure[0] == '\0', "one thread: %s", alone.failure);
  ck_assert_uint_gt(alone.out.ncands, VERIFIED);
  ck_assert_uint_gt(alone.out.nsearch, 2);
  ck_assert_uint_gt(alone.out.tir_len, 0);
  for (size_t i = 0; i < VERIFIED; i++) {
    ck_assert(leir_verdict_passes(alone.out.verdicts[i]));
    ck_assert_uint_gt(alone.out.grounded[i], 0); /* a candidate's result is one step */
    ck_assert_uint_gt(alone.out.cot_len[i], 0);
    ck_assert_int_eq(alone.out.judged[i], alone.out.verdicts[i]);
    ck_assert_uint_eq(alone.out.by_json_hash[i], alone.out.applied[i]); /* a trace replays */
  }
  worker ws[NTHREADS];
  pthread_t tids[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    ws[t] = *proto;
    ck_assert_int_eq(pthread_create(&tids[t], NULL, work, &ws[t]), 0);
  }
  for (int t = 0; t < NTHREADS; t++) ck_assert_int_eq(pthread_join(tids[t], NULL), 0);
  for (int t = 0; t < NTHREADS; t++) {
    expect_same(&alone.out, &ws[t], t);
    leir_free(ws[t].out.text);
  }
  leir_free(alone.out.text);
}

START_TEST(test_distinct_programs_in_threads) {
  worker proto = {.compare = 1};
  run_threads(&proto);
}
END_TEST

/* One program read by every thread: the functions taking a const program
 * are safe to call on a shared one (docs/api.md, "Threads"). Each thread
 * lists candidates of its own here; a shared list is the next test. */
START_TEST(test_shared_program_in_threads) {
  leir_program *p = test_parse(MATMUL);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  worker proto = {.shared = p, .compare = 1};
  run_threads(&proto);
  leir_program_free(p);
}
END_TEST

/* One candidate list shared by every thread: leir_candidates_apply and
 * leir_candidates_assumed only read the list (the apply runs in a private
 * view of the list's context), so threads may apply its candidates at once,
 * each starting at a different candidate. The list has steps of the
 * strategies whose apply switches the context's mode (reduction
 * factorization, cache read/write, layout transformation). */
typedef struct list_worker {
  const leir_candidates *list;
  size_t first;                  /* where this thread starts (it wraps around) */
  uint64_t applied[MAX_CANDS];   /* by candidate index */
  int assumed[MAX_CANDS];
  char failure[512];
} list_worker;

static void *apply_shared_list(void *arg) {
  list_worker *w = arg;
  size_t n = leir_candidates_count(w->list);
  if (n > MAX_CANDS) n = MAX_CANDS;
  for (size_t k = 0; k < n && !w->failure[0]; k++) {
    size_t i = (w->first + k) % n;
    leir_program *q = NULL;
    leir_status st = leir_candidates_apply(&q, w->list, i);
    if (st == LEIR_OK) st = leir_candidates_assumed(w->list, i, &w->assumed[i]);
    if (st != LEIR_OK)
      snprintf(w->failure, sizeof w->failure, "candidate %zu (%s): %s", i,
               leir_step_text(leir_candidates_step(w->list, i)), leir_error_last()->message);
    w->applied[i] = q ? leir_program_hash_alpha(q) : 0;
    leir_program_free(q);
  }
  return NULL;
}

START_TEST(test_shared_candidate_list_in_threads) {
  leir_program *p = test_parse(MATMUL);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags = LEIR_CANDIDATES_ALL_DIVISORS;
  leir_candidates *list = NULL;
  ck_assert_int_eq(leir_candidates_list(&list, p, &co), LEIR_OK);
  size_t n = leir_candidates_count(list);
  ck_assert_uint_gt(n, NTHREADS);
  ck_assert_uint_le(n, MAX_CANDS);
  static const char *const mode_switching[] = {"reduction_factorization", "cache_read_write",
                                               "layout_transformation"};
  for (size_t m = 0; m < sizeof mode_switching / sizeof *mode_switching; m++) {
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
      found += strncmp(leir_step_text(leir_candidates_step(list, i)), mode_switching[m],
                       strlen(mode_switching[m])) == 0;
    ck_assert_msg(found > 0, "no %s candidate in the shared list", mode_switching[m]);
  }
  static list_worker alone, ws[NTHREADS];
  memset(&alone, 0, sizeof alone);
  alone.list = list;
  apply_shared_list(&alone);
  ck_assert_msg(alone.failure[0] == '\0', "one thread: %s", alone.failure);
  pthread_t tids[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    memset(&ws[t], 0, sizeof ws[t]);
    ws[t].list = list;
    ws[t].first = (size_t)t * n / NTHREADS;
    ck_assert_int_eq(pthread_create(&tids[t], NULL, apply_shared_list, &ws[t]), 0);
  }
  for (int t = 0; t < NTHREADS; t++) ck_assert_int_eq(pthread_join(tids[t], NULL), 0);
  for (int t = 0; t < NTHREADS; t++) {
    ck_assert_msg(ws[t].failure[0] == '\0', "thread %d: %s", t, ws[t].failure);
    for (size_t i = 0; i < n; i++) {
      ck_assert_msg(ws[t].applied[i] == alone.applied[i], "thread %d, candidate %zu", t, i);
      ck_assert_int_eq(ws[t].assumed[i], alone.assumed[i]);
    }
  }
  /* the list is unchanged by the applies: same steps, and still applies */
  leir_candidates *again = NULL;
  ck_assert_int_eq(leir_candidates_list(&again, p, &co), LEIR_OK);
  ck_assert_uint_eq(leir_candidates_count(again), n);
  for (size_t i = 0; i < n; i++)
    ck_assert_str_eq(leir_step_text(leir_candidates_step(list, i)),
                     leir_step_text(leir_candidates_step(again, i)));
  leir_candidates_free(again);
  leir_candidates_free(list);
  leir_program_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("threads");
  TCase *tc = tcase_create("threads");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_distinct_programs_in_threads);
  tcase_add_test(tc, test_shared_program_in_threads);
  tcase_add_test(tc, test_shared_candidate_list_in_threads);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
