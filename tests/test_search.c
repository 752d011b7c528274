/* The multi-step search (include/leir/experimental/search.h): every
 * algorithm's behaviour on small programs with a deterministic measurement
 * callback (the options' `measure` field, documented for testing and
 * embedding), the policy interface (proposals by index, step and whole
 * program; grounding; retries with feedback), the measurement database
 * (reuse across runs, a writer killed with SIGKILL, export), and one real
 * run on the CPU backend. */
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/cost.h"
#include "leir/experimental/search.h"
#include "testutil.h"

/* An 8x8x8 matmul: dozens of candidates at every node. */
static const char *MATMUL =
    "L^{8}_{a=0}L^{8}_{c=0}L^{8}_{d=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+A^{f64,g}_{a,d}*C^{f64,g}_{d,c};];";

/* ---- a deterministic measurement -------------------------------------------- */

typedef struct fake {
  uint64_t hashes[4096]; /* every program measured */
  size_t n;
  int mismatch_mod;      /* programs whose hash % mod == 0 are MISMATCH (0: never) */
  int pipe_fd;           /* > 0: write one byte per measurement */
  int sleep_us;          /* per measurement */
} fake;

/* A made-up time per program: a function of its alpha hash. */
static double fake_time(const leir_program *p) {
  uint64_t h = leir_program_hash_alpha(p);
  return 1.0 + (double)(h % 1000) / 100.0;
}

/* A made-up speedup of `cand` over `parent`, in [0.8, 1.4): a function of
 * both hashes, so that about 60% of the proposals at every node are faster
 * whatever the parent (a ratio of two per-program times would make a lucky
 * fast parent a dead end, and the tests would depend on which strategies
 * the catalogue implements). */
static double fake_ratio(const leir_program *parent, const leir_program *cand) {
  uint64_t h = leir_program_hash_alpha(cand) ^ (leir_program_hash_alpha(parent) * 0x9E3779B97F4A7C15ull);
  h ^= h >> 29;
  return 0.8 + 0.6 * (double)(h % 1000) / 1000.0;
}

static leir_status fake_measure(void *payload, const leir_program *root, const leir_program *parent,
                                const leir_program *cand, uint32_t klass,
                                leir_search_measurement *m) {
  fake *f = payload;
  (void)root;
  ck_assert(klass == LEIR_VERIFY_CLASS_EXACT || klass == LEIR_VERIFY_CLASS_REASSOCIATING);
  uint64_t h = leir_program_hash_alpha(cand);
  if (f->n < 4096) f->hashes[f->n++] = h;
  if (f->pipe_fd > 0) ck_assert_int_eq(write(f->pipe_fd, "x", 1), 1);
  if (f->sleep_us) usleep((useconds_t)f->sleep_us);
  if (f->mismatch_mod && h % (uint64_t)f->mismatch_mod == 0) {
    m->verdict = LEIR_VERDICT_MISMATCH;
    snprintf(m->message, sizeof m->message, "not numerically equivalent: D[0,0] is 1, expected 2");
    return LEIR_OK;
  }
  m->verdict = LEIR_VERDICT_EQUAL;
  double tp = fake_time(parent);
  m->ratio = fake_ratio(parent, cand);
  double tc = tp / m->ratio;
  m->ratio_lo = m->ratio * 0.99;
  m->ratio_hi = m->ratio * 1.01;
  m->median_s = tc;
  m->q1_s = tc * 0.99;
  m->q3_s = tc * 1.01;
  m->parent_median_s = tp;
  m->rounds = 10;
  m->order = m->ratio > 1.02 ? LEIR_ORDER_FASTER : m->ratio < 1 / 1.02 ? LEIR_ORDER_SLOWER
                                                                       : LEIR_ORDER_SAME;
  return LEIR_OK;
}

static leir_program *matmul(void) {
  leir_program *p = test_parse(MATMUL);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  return p;
}

static leir_search_result *run_fake(leir_search_algorithm alg, fake *f, leir_search_options *o,
                                    leir_status want) {
  leir_program *p = matmul();
  o->algorithm = alg;
  o->measure = fake_measure;
  o->measure_payload = f;
  leir_search_result *r = NULL;
  leir_status st = leir_search_run(&r, NULL, p, o);
  ck_assert_msg(st == want, "status %s: %s", leir_status_name(st), leir_error_last()->message);
  leir_program_free(p);
  return r;
}

/* The properties every trajectory has: accepted = EQUAL/CLOSE and FASTER,
 * speedups are path products, no program measured twice, budgets hold. */
static void check_invariants(const leir_search_result *r, const fake *f, uint32_t max_samples,
                             uint32_t max_depth) {
  size_t n = leir_search_result_record_count(r);
  double speed[4096];
  speed[0] = 1.0;
  int maxnode = 0;
  uint32_t measured = 0;
  double best = 1.0;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    ck_assert_uint_eq(x->sample, i + 1);
    ck_assert_uint_le(x->depth, max_depth);
    ck_assert_int_le(x->parent, maxnode);
    if (x->measured) measured++;
    if (x->node >= 0) {
      ck_assert_int_eq(x->reject, LEIR_REJECT_NONE);
      ck_assert(leir_verdict_passes(x->m.verdict));
      ck_assert_int_eq(x->m.order, LEIR_ORDER_FASTER);
      ck_assert(x->m.ratio > 1.0);
      ck_assert_int_eq(x->node, maxnode + 1);
      maxnode = x->node;
      speed[x->node] = speed[x->parent] * x->m.ratio;
      ck_assert_double_eq_tol(x->speedup, speed[x->node], 1e-9);
      if (x->speedup > best) best = x->speedup;
    } else {
      ck_assert_int_ne(x->reject, LEIR_REJECT_NONE);
      ck_assert_str_ne(x->reason, "");
    }
    ck_assert_double_eq_tol(x->best_speedup, best, 1e-9);
  }
  for (size_t i = 0; i < f->n; i++)
    for (size_t j = 0; j < i; j++) ck_assert_msg(f->hashes[i] != f->hashes[j], "measured twice");
  ck_assert_uint_eq(measured, f->n);
  if (max_samples) ck_assert_uint_le(f->n, max_samples);
  leir_search_summary s = {.size = sizeof s};
  ck_assert_int_eq(leir_search_result_summary(r, &s), LEIR_OK);
  ck_assert_uint_eq(s.measured, f->n);
  ck_assert_uint_eq(s.samples, s.measured + s.reused);
  ck_assert_double_eq_tol(s.best_speedup, best, 1e-9);
  ck_assert_uint_eq(s.accepted, (uint32_t)maxnode);
  /* sample efficiency: the first record whose best so far is within 95% of
   * the run's best; nothing accepted, none */
  uint32_t to95 = 0;
  double at95 = 0;
  for (size_t i = 0; i < n && maxnode > 0 && !to95; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    if (x->best_speedup >= 0.95 * best) to95 = x->sample, at95 = x->elapsed_s;
  }
  ck_assert_uint_eq(s.samples_to_95, to95);
  ck_assert_double_eq(s.seconds_to_95, at95);
  if (maxnode > 0) ck_assert_uint_ge(s.samples_to_95, 1);
  /* a measurement callback's time is not split into phases */
  ck_assert_double_eq(s.compile_s + s.verify_s + s.time_s, 0.0);
}

START_TEST(test_greedy_moves_to_the_fastest_child) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 60;
  o.branching = 4;
  leir_search_result *r = run_fake(LEIR_SEARCH_GREEDY, &f, &o, LEIR_OK);
  check_invariants(r, &f, 60, 8);
  /* after an expansion that accepted children, the next proposals are for
   * the fastest of them */
  size_t n = leir_search_result_record_count(r);
  int cur = 0;
  double best_child = 0;
  int best_id = -1;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    if (x->parent != cur) {
      ck_assert_int_eq(x->parent, best_id);
      cur = best_id;
      best_child = 0;
      best_id = -1;
    }
    if (x->node >= 0 && x->speedup > best_child) {
      best_child = x->speedup;
      best_id = x->node;
    }
  }
  leir_search_summary s = {.size = sizeof s};
  leir_search_result_summary(r, &s);
  ck_assert_uint_ge(s.best_depth, 2); /* the fake timing rewards several steps */
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_chain_moves_to_each_accepted_child) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 40;
  leir_search_result *r = run_fake(LEIR_SEARCH_CHAIN, &f, &o, LEIR_OK);
  check_invariants(r, &f, 40, 8);
  size_t n = leir_search_result_record_count(r);
  int cur = 0;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    ck_assert_int_eq(x->parent, cur);
    if (x->node >= 0) cur = x->node;
  }
  ck_assert_int_gt(cur, 2); /* a built-in policy goes down its list: several moves */
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_beam_keeps_width_nodes_per_level) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 80;
  o.width = 2;
  o.branching = 3;
  leir_search_result *r = run_fake(LEIR_SEARCH_BEAM, &f, &o, LEIR_OK);
  check_invariants(r, &f, 80, 8);
  /* at every depth, proposals were made for at most `width` programs */
  int parents[16][8];
  int np[16] = {0};
  size_t n = leir_search_result_record_count(r);
  uint32_t maxd = 0;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    uint32_t d = x->depth - 1;
    if (d > maxd) maxd = d;
    int found = 0;
    for (int k = 0; k < np[d]; k++) found |= parents[d][k] == x->parent;
    if (!found) {
      ck_assert_int_lt(np[d], 2);
      parents[d][np[d]++] = x->parent;
    }
  }
  ck_assert_uint_ge(maxd, 2);
  int full = 0; /* some level held two programs */
  for (uint32_t d = 0; d <= maxd; d++) full |= np[d] == 2;
  ck_assert(full);
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_bfs_expands_level_by_level_within_depth) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 0; /* no sample limit: the depth limit ends it */
  o.max_depth = 2;
  o.branching = 2;
  leir_search_result *r = run_fake(LEIR_SEARCH_BFS, &f, &o, LEIR_OK);
  check_invariants(r, &f, 0, 2);
  size_t n = leir_search_result_record_count(r);
  uint32_t last = 0;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    ck_assert_uint_ge(x->depth, last); /* FIFO: never back to a shallower level */
    last = x->depth;
  }
  ck_assert_uint_eq(last, 2);
  leir_search_summary s = {.size = sizeof s};
  leir_search_result_summary(r, &s);
  ck_assert_int_eq(s.stopped_by, 0);
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_dfs_goes_deep_first) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 30;
  o.max_depth = 3;
  o.branching = 2;
  leir_search_result *r = run_fake(LEIR_SEARCH_DFS, &f, &o, LEIR_OK);
  check_invariants(r, &f, 30, 3);
  /* LIFO: after an expansion that accepted children (above the depth
   * limit), the next program expanded is the fastest of them */
  size_t n = leir_search_result_record_count(r);
  int cur = 0, best_id = -1, checked = 0;
  double best = 0;
  uint32_t cur_depth = 0;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    if (x->parent != cur) {
      if (best_id >= 0 && cur_depth + 1 < 3) {
        ck_assert_int_eq(x->parent, best_id);
        checked++;
      }
      cur = x->parent;
      cur_depth = x->depth - 1;
      best_id = -1;
      best = 0;
    }
    if (x->node >= 0 && x->speedup > best) {
      best = x->speedup;
      best_id = x->node;
    }
  }
  ck_assert_int_ge(checked, 2);
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_mcts_widens_and_backs_up) {
  for (int reward = 0; reward < 2; reward++) {
    fake f = {0};
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = LEIR_POLICY_EXHAUSTIVE;
    o.max_samples = 40;
    o.reward = reward ? LEIR_REWARD_REFERENCE : LEIR_REWARD_LOG_SPEEDUP;
    o.rollouts = 1;
    leir_search_result *r = run_fake(LEIR_SEARCH_MCTS, &f, &o, LEIR_OK);
    check_invariants(r, &f, 40, 8);
    size_t n = leir_search_result_record_count(r);
    int root_children = 0, deeper = 0;
    for (size_t i = 0; i < n; i++) {
      const leir_search_record *x = leir_search_result_record(r, i);
      if (x->node >= 0 && x->parent == 0) root_children++;
      if (x->depth >= 3) deeper++;
    }
    ck_assert_int_ge(root_children, 2); /* progressive widening at the root */
    ck_assert_int_gt(deeper, 0);        /* and descent below it */
    leir_search_result_free(r);
  }
}
END_TEST

START_TEST(test_rejections_are_recorded_and_never_accepted) {
  fake f = {.mismatch_mod = 3};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 40;
  leir_search_result *r = run_fake(LEIR_SEARCH_GREEDY, &f, &o, LEIR_OK);
  check_invariants(r, &f, 40, 8);
  int mism = 0;
  for (size_t i = 0; i < leir_search_result_record_count(r); i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    if (x->measured && x->m.verdict == LEIR_VERDICT_MISMATCH) {
      mism++;
      ck_assert_int_eq(x->node, -1);
      ck_assert_int_eq(x->reject, LEIR_REJECT_VERDICT);
      ck_assert_ptr_nonnull(strstr(x->reason, "not numerically equivalent"));
    }
  }
  ck_assert_int_gt(mism, 0);
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_random_policy_is_seeded) {
  uint64_t first[3][8];
  for (int run = 0; run < 3; run++) {
    fake f = {0};
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = LEIR_POLICY_RANDOM;
    o.max_samples = 8;
    o.seed = run == 2 ? 99 : 7;
    leir_search_result *r = run_fake(LEIR_SEARCH_GREEDY, &f, &o, LEIR_OK);
    ck_assert_uint_eq(f.n, 8);
    memcpy(first[run], f.hashes, sizeof first[run]);
    leir_search_result_free(r);
  }
  ck_assert_mem_eq(first[0], first[1], sizeof first[0]);
  ck_assert(memcmp(first[0], first[2], sizeof first[0]) != 0);
}
END_TEST

static double score_of(const leir_program *p) {
  leir_program_cost c;
  ck_assert_int_eq(leir_program_cost_get(p, &c), LEIR_OK);
  double a = (double)c.flops / 1e10, b = (double)c.bytes / 1e10;
  return (a > b ? a : b) + (double)c.evaluations * 1e-9;
}

/* Candidates that are one program up to renaming (loop_binding of a on tx,
 * ty or bx) are one proposal of a built-in policy: no twin reaches the
 * search to be rejected as seen (a 512^3 trajectory had three). */
START_TEST(test_builtin_policies_propose_no_alpha_twins) {
  leir_search_policy policies[] = {LEIR_POLICY_EXHAUSTIVE, LEIR_POLICY_COST, LEIR_POLICY_RANDOM};
  for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++) {
    fake f = {0};
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = policies[k];
    o.max_samples = 200;
    o.max_depth = 1;
    o.branching = 200; /* every candidate of the root */
    o.seed = 3;
    leir_search_result *r = run_fake(LEIR_SEARCH_BFS, &f, &o, LEIR_OK);
    size_t n = leir_search_result_record_count(r), bindings = 0;
    for (size_t i = 0; i < n; i++) {
      const leir_search_record *x = leir_search_result_record(r, i);
      ck_assert_msg(x->reject != LEIR_REJECT_SEEN, "policy %zu proposed a twin: %s", k, x->step);
      bindings += strstr(x->step, "loop_binding") != NULL;
    }
    ck_assert_uint_gt(bindings, 0); /* the matmul's root has binding candidates */
    leir_search_result_free(r);
  }
}
END_TEST

/* An external adapter over the built-in cost policy, using the query's
 * appended fields: its own memory per node (state), the node's identity,
 * the search's options and known(). */
typedef struct adapter {
  uint32_t calls, known_checks, max_samples;
} adapter;

static leir_status adapter_propose(void *payload, const leir_search_query *q,
                                   leir_search_proposals *out) {
  adapter *a = payload;
  a->calls++;
  ck_assert_uint_ge(q->size, sizeof *q);
  ck_assert_uint_eq(q->program_hash, leir_program_hash_alpha(q->program));
  ck_assert_ptr_nonnull(q->candidate_options);
  ck_assert_uint_eq(q->options->max_samples, a->max_samples);
  ck_assert(isinf(q->time_left_s));
  ck_assert_int_eq(q->node == 0, q->depth == 0);
  if (q->node > 0) { /* an accepted program is one the search has made */
    ck_assert_int_eq(q->known(q, q->program_hash), 1);
    a->known_checks++;
  }
  uint32_t *mine = q->state->data;
  if (q->attempt == 0) {
    ck_assert_ptr_null(mine);
    mine = calloc(1, sizeof *mine);
    ck_assert_ptr_nonnull(mine);
    q->state->data = mine;
    q->state->release = free;
  }
  ck_assert_uint_eq(*mine, q->attempt); /* this node's calls, kept by the search */
  (*mine)++;
  return leir_search_propose_builtin(LEIR_POLICY_COST, q, out);
}

/* The built-in policies need nothing an external policy lacks: the cost
 * policy run through an adapter (which keeps its own state at each node)
 * makes the trajectory of the built-in run directly. */
START_TEST(test_builtin_policy_through_an_adapter_is_the_same_search) {
  leir_search_result *r[2];
  adapter a = {0, 0, 40};
  for (int k = 0; k < 2; k++) {
    fake f = {0};
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = LEIR_POLICY_COST;
    o.max_samples = a.max_samples;
    o.branching = 3;
    o.retries = UINT32_MAX - 1; /* an external policy, like a built-in, goes down its list */
    if (k) {
      o.propose = adapter_propose;
      o.propose_payload = &a;
    }
    r[k] = run_fake(LEIR_SEARCH_GREEDY, &f, &o, LEIR_OK);
  }
  size_t n = leir_search_result_record_count(r[0]);
  ck_assert_uint_gt(n, 10);
  ck_assert_uint_eq(leir_search_result_record_count(r[1]), n);
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r[0], i), *y = leir_search_result_record(r[1], i);
    ck_assert_str_eq(x->step, y->step);
    ck_assert_int_eq(x->node, y->node);
    ck_assert_int_eq(x->reject, y->reject);
  }
  ck_assert_uint_gt(a.calls, 1);
  ck_assert_uint_gt(a.known_checks, 0);
  leir_search_result_free(r[0]);
  leir_search_result_free(r[1]);
}
END_TEST

/* leir_search_propose_chain and leir_search_propose_macro: two enumerated
 * steps as one proposal, recorded joined by " ; ". */
static leir_status two_step_propose(void *payload, const leir_search_query *q,
                                    leir_search_proposals *out) {
  int *calls = payload;
  if ((*calls)++ || q->node != 0) return LEIR_OK;
  size_t first = SIZE_MAX;
  for (size_t i = 0; i < leir_candidates_count(q->candidates) && first == SIZE_MAX; i++)
    if (strstr(leir_step_text(leir_candidates_step(q->candidates, i)), "loop_reorder")) first = i;
  ck_assert_uint_ne(first, SIZE_MAX);
  leir_program *mid = NULL;
  ck_assert_int_eq(leir_candidates_apply(&mid, q->candidates, first), LEIR_OK);
  leir_candidates *c2 = NULL;
  ck_assert_int_eq(leir_candidates_list(&c2, mid, q->candidate_options), LEIR_OK);
  const char *t1 = leir_step_text(leir_candidates_step(q->candidates, first));
  const char *t2 = NULL;
  for (size_t i = 0; i < leir_candidates_count(c2) && !t2; i++)
    if (strstr(leir_step_text(leir_candidates_step(c2, i)), "loop_parallelization"))
      t2 = leir_step_text(leir_candidates_step(c2, i));
  ck_assert_ptr_nonnull(t2);
  char chain[512];
  snprintf(chain, sizeof chain, "%s\n%s", t1, t2);
  ck_assert_int_eq(leir_search_propose_chain(out, chain, NULL), LEIR_OK);
  ck_assert_int_eq(leir_search_propose_macro(out, first, t2, NULL), LEIR_OK);
  ck_assert_int_eq(leir_search_propose_chain(NULL, chain, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_search_propose_macro(out, first, NULL, NULL), LEIR_ERR_ARGUMENT);
  leir_candidates_free(c2);
  leir_program_free(mid);
  return LEIR_OK;
}

START_TEST(test_external_policy_proposes_macro_steps) {
  int calls = 0;
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.max_samples = 10;
  o.propose = two_step_propose;
  o.propose_payload = &calls;
  leir_search_result *r = run_fake(LEIR_SEARCH_GREEDY, &f, &o, LEIR_OK);
  ck_assert_uint_ge(leir_search_result_record_count(r), 2);
  const leir_search_record *x = leir_search_result_record(r, 0), *y = leir_search_result_record(r, 1);
  ck_assert_ptr_nonnull(strstr(x->step, " ; loop_parallelization"));
  ck_assert_str_eq(x->strategy, "loop_reorder+loop_parallelization");
  /* the macro form of the same two steps reaches the same program: seen */
  ck_assert_str_eq(y->step, x->step);
  ck_assert_int_eq(y->reject, x->node >= 0 ? LEIR_REJECT_SEEN : y->reject);
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_cost_policy_proposes_in_cost_order) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_COST;
  o.max_samples = 12;
  o.branching = 12;
  leir_search_result *r = run_fake(LEIR_SEARCH_GREEDY, &f, &o, LEIR_OK);
  /* the 12 first proposals are all for the root, in non-decreasing score */
  leir_program *root = matmul();
  double last = -1;
  for (size_t i = 0; i < 12; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    ck_assert_int_eq(x->parent, 0);
    leir_program *p = NULL;
    ck_assert_int_eq(leir_program_parse(&p, x->program, strlen(x->program), NULL), LEIR_OK);
    double s = score_of(p);
    ck_assert(s >= last * (1 - 1e-9));
    last = s;
    leir_program_free(p);
  }
  leir_program_free(root);
  leir_search_result_free(r);
}
END_TEST

/* The cost policy prices programs for the thread count of the cpu backend
 * it searches on (a 1-thread search gains nothing from a P loop), not for
 * the host's CPUs: the proposals come in the order of the model at that
 * thread count, for 1 and for 4 threads alike. */
START_TEST(test_cost_policy_prices_for_the_backend_threads) {
  static const uint32_t threads[] = {1, 4};
  for (size_t t = 0; t < 2; t++) {
    leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
    bo.flags = LEIR_BACKEND_LOWER_ONLY;
    bo.threads = threads[t];
    leir_backend *b = NULL;
    ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
    fake f = {0};
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = LEIR_POLICY_COST;
    o.max_samples = 12;
    o.branching = 12;
    o.algorithm = LEIR_SEARCH_GREEDY;
    o.measure = fake_measure;
    o.measure_payload = &f;
    leir_program *root = matmul();
    leir_search_result *r = NULL;
    ck_assert_int_eq(leir_search_run(&r, b, root, &o), LEIR_OK);
    double last = -1;
    bool parallel = false;
    for (size_t i = 0; i < 12; i++) {
      const leir_search_record *x = leir_search_result_record(r, i);
      ck_assert_int_eq(x->parent, 0);
      leir_program *p = NULL;
      ck_assert_int_eq(leir_program_parse(&p, x->program, strlen(x->program), NULL), LEIR_OK);
      double s = 0;
      ck_assert_int_eq(leir_program_cost_predict(p, threads[t], &s), LEIR_OK);
      ck_assert_msg(s >= last * (1 - 1e-9), "%u threads: proposal %zu (%s) out of order",
                    threads[t], i, x->step);
      last = s;
      if (strstr(x->step, "loop_parallelization")) parallel = true;
      leir_program_free(p);
    }
    /* with 4 threads the parallel loops lead; with 1 they gain nothing */
    if (threads[t] == 4) ck_assert(parallel);
    leir_search_result_free(r);
    leir_program_free(root);
    leir_backend_free(b);
  }
}
END_TEST

/* A measurement that verifies on the interpreter and times with the cost
 * model (deterministic): the predicted ratio, FASTER above 1.02. */
static leir_status model_measure(void *payload, const leir_program *root, const leir_program *parent,
                                 const leir_program *cand, uint32_t klass,
                                 leir_search_measurement *m) {
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.candidate_class = klass;
  vo.input_sets = 1;
  leir_verify_report *rep = NULL;
  leir_status st = leir_verify(payload, root, cand, &vo, &rep);
  if (st != LEIR_OK) return st;
  m->verdict = rep->verdict;
  leir_verify_report_free(rep);
  double tp = 0, tc = 0;
  ck_assert_int_eq(leir_program_cost_predict(parent, 1, &tp), LEIR_OK);
  ck_assert_int_eq(leir_program_cost_predict(cand, 1, &tc), LEIR_OK);
  m->ratio = m->ratio_lo = m->ratio_hi = tp / tc;
  m->median_s = tc;
  m->parent_median_s = tp;
  m->order = m->ratio > 1.02 ? LEIR_ORDER_FASTER : m->ratio < 1 / 1.02 ? LEIR_ORDER_SLOWER
                                                                       : LEIR_ORDER_SAME;
  return LEIR_OK;
}

/* Over a plateau (unrolling the rows of a register tile alone gains nothing
 * in the model: the accumulators stay in memory until the columns are
 * vectorized too), the cost policy proposes a macro-step: two enumerated
 * steps, recorded with both step texts and both strategies, verified as a
 * whole against the source, accepted only when faster. */
START_TEST(test_cost_policy_macro_step_over_plateau) {
  leir_program *p = test_parse(
      "L^{16}_{g=0}L^{8}_{h=0}L^{64}_{d=0}L^{4}_{a=0}L^{8}_{c=0}[D^{f32,g}_{g*4+a,h*8+c}="
      "D^{f32,g}_{g*4+a,h*8+c}+A^{f32,g}_{g*4+a,d}*C^{f32,g}_{d,h*8+c};];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_backend *interp = NULL;
  ck_assert_int_eq(leir_backend_open(&interp, "interp", NULL), LEIR_OK);
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_GREEDY;
  o.policy = LEIR_POLICY_COST;
  o.max_samples = 6;
  o.measure = model_measure;
  o.measure_payload = interp;
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  const leir_search_record *macro = NULL;
  for (size_t i = 0; i < leir_search_result_record_count(r) && !macro; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    if (strstr(x->step, " ; ")) macro = x;
  }
  ck_assert_ptr_nonnull(macro);
  ck_assert_int_eq(macro->parent, 0);
  ck_assert_msg(strcmp(macro->strategy, "loop_unrolling+loop_vectorization") == 0 ||
                    strcmp(macro->strategy, "loop_vectorization+loop_unrolling") == 0,
                "%s: %s", macro->step, macro->strategy);
  ck_assert_int_eq(macro->reject, LEIR_REJECT_NONE);
  ck_assert_int_eq(macro->m.verdict, LEIR_VERDICT_EQUAL);
  ck_assert_msg(strstr(macro->program, "U^{4}_{") && strstr(macro->program, "V^{8}_{"), "%s: %s", macro->step, macro->program);
  /* each half is one step: replaying them by text gives the same program */
  char first[256];
  const char *sep = strstr(macro->step, " ; ");
  snprintf(first, sizeof first, "%.*s", (int)(sep - macro->step), macro->step);
  leir_step *s1 = NULL, *s2 = NULL;
  leir_program *mid = NULL, *end = NULL;
  ck_assert_int_eq(leir_step_parse(&s1, first, strlen(first)), LEIR_OK);
  ck_assert_int_eq(leir_step_parse(&s2, sep + 3, strlen(sep + 3)), LEIR_OK);
  ck_assert_int_eq(leir_step_apply(&mid, p, s1, NULL), LEIR_OK);
  ck_assert_int_eq(leir_step_apply(&end, mid, s2, NULL), LEIR_OK);
  ck_assert_uint_eq(leir_program_hash_alpha(end), macro->hash);
  /* the plateau step alone was never measured before the macro-step */
  ck_assert_uint_eq(macro->sample, 1);
  leir_step_free(s1);
  leir_step_free(s2);
  leir_program_free(mid);
  leir_program_free(end);
  leir_search_result_free(r);
  leir_backend_free(interp);
  leir_program_free(p);
}
END_TEST


/* ---- model-guided lookahead ------------------------------------------------- */

/* A 64^3 f32 matmul searched in model space: the cost model is the timer
 * (model_measure) and the interpreter the verifier. */
static leir_program *matmul_f32(int n) {
  char text[256];
  snprintf(text, sizeof text,
           "L^{%d}_{a=0}L^{%d}_{c=0}L^{%d}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
           "C^{f32,g}_{d,c};];",
           n, n, n);
  leir_program *p = test_parse(text);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  return p;
}

static leir_candidates_options wide_candidates(void) {
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags |= LEIR_CANDIDATES_ALL_DIVISORS;
  co.vector_width = 16;
  return co;
}

/* A greedy cost-policy search in model space with a lookahead of `depth`
 * (beam width 8), one proposal per expansion: the options, borrowing co
 * and interp. */
static leir_search_options lookahead_options(const leir_candidates_options *co,
                                             leir_backend *interp, uint32_t samples,
                                             uint32_t depth) {
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_GREEDY;
  o.policy = LEIR_POLICY_COST;
  o.max_samples = samples;
  o.branching = 1;
  o.candidates = co;
  o.measure = model_measure;
  o.measure_payload = interp;
  o.lookahead_depth = depth;
  o.lookahead_width = 8;
  return o;
}

static size_t count_steps(const char *step) {
  size_t n = *step ? 1 : 0;
  for (const char *c = strstr(step, " ; "); c; c = strstr(c + 3, " ; ")) n++;
  return n;
}

/* The lookahead finds a sequence of several steps in the model (structural
 * steps that gain nothing alone, then the marking that pays); proposed as
 * one macro-step, it is measured once and accepted as faster. Replaying its
 * steps one by one through the candidate lists gives the same program, and
 * every intermediate program verifies against the source. */
START_TEST(test_lookahead_finds_a_multi_step_macro_step) {
  leir_program *p = matmul_f32(64);
  leir_backend *interp = NULL;
  ck_assert_int_eq(leir_backend_open(&interp, "interp", NULL), LEIR_OK);
  leir_candidates_options co = wide_candidates();
  leir_search_options o = lookahead_options(&co, interp, 2, 4);
  o.lookahead_evals = 30000;
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  leir_search_summary s = {.size = sizeof s};
  ck_assert_int_eq(leir_search_result_summary(r, &s), LEIR_OK);
  ck_assert_uint_ge(s.lookaheads, 1);
  ck_assert_uint_gt(s.lookahead_evals, 0);
  ck_assert_uint_le(s.lookahead_evals, (uint64_t)s.lookaheads * o.lookahead_evals);
  /* the first proposal at the source is the lookahead's macro-step */
  const leir_search_record *x = leir_search_result_record(r, 0);
  ck_assert_ptr_nonnull(x);
  ck_assert_msg(count_steps(x->step) >= 3, "not a multi-step macro-step: %s", x->step);
  ck_assert_msg(x->reject == LEIR_REJECT_NONE, "%s: %s", x->step, x->reason);
  ck_assert_int_eq(x->parent, 0);
  ck_assert_uint_eq(x->depth, 1);
  ck_assert_ptr_nonnull(strchr(x->strategy, '+'));
  ck_assert_int_eq(x->m.verdict, LEIR_VERDICT_EQUAL);
  ck_assert(x->m.ratio > 1.1); /* the model's own gain over the source */
  /* replay: each step is a candidate of the program before it */
  leir_program *cur = NULL;
  ck_assert_int_eq(leir_program_clone(&cur, p), LEIR_OK);
  const char *part = x->step;
  size_t replayed = 0;
  while (part) {
    const char *sep = strstr(part, " ; ");
    size_t len = sep ? (size_t)(sep - part) : strlen(part);
    leir_candidates *c = NULL;
    ck_assert_int_eq(leir_candidates_list(&c, cur, &co), LEIR_OK);
    size_t k = SIZE_MAX;
    for (size_t i = 0; i < leir_candidates_count(c) && k == SIZE_MAX; i++) {
      const char *t = leir_step_text(leir_candidates_step(c, i));
      if (strlen(t) == len && strncmp(t, part, len) == 0) k = i;
    }
    ck_assert_msg(k != SIZE_MAX, "step %zu of %s is not a candidate", replayed + 1, x->step);
    leir_program *next = NULL;
    ck_assert_int_eq(leir_candidates_apply(&next, c, k), LEIR_OK);
    leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
    vo.input_sets = 1;
    vo.candidate_class = leir_candidates_exactness(c, k) == LEIR_REASSOCIATING
                             ? LEIR_VERIFY_CLASS_REASSOCIATING
                             : LEIR_VERIFY_CLASS_EXACT;
    leir_verify_report *rep = NULL;
    ck_assert_int_eq(leir_verify(interp, cur, next, &vo, &rep), LEIR_OK);
    ck_assert_msg(leir_verdict_passes(rep->verdict), "step %zu: %s", replayed + 1, rep->message);
    leir_verify_report_free(rep);
    leir_candidates_free(c);
    leir_program_free(cur);
    cur = next;
    replayed++;
    part = sep ? sep + 3 : NULL;
  }
  ck_assert_uint_eq(replayed, count_steps(x->step));
  ck_assert_uint_eq(leir_program_hash_alpha(cur), x->hash);
  leir_program_free(cur);
  leir_search_result_free(r);
  leir_backend_free(interp);
  leir_program_free(p);
}
END_TEST

/* The lookahead prices a reduction's lanes form although the same
 * strategy lists hundreds of `at=` splits of that reduction (every position
 * of the reference's domain), of which it prices only a spread: the row
 * maximum and the row sum of a 256 x 256 input, each vectorized in one step,
 * are its macro-step (in the model, on one thread). */
START_TEST(test_lookahead_prices_the_lanes_forms) {
  leir_program *p = test_parse(
      "L^{256}_{a=0}L^{256}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];"
      "L^{256}_{a=0}L^{256}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+A^{f32,g}_{a,c};];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_backend *interp = NULL;
  ck_assert_int_eq(leir_backend_open(&interp, "interp", NULL), LEIR_OK);
  leir_candidates_options co = wide_candidates();
  co.flags |= LEIR_CANDIDATES_REDUCTION_LANES;
  leir_search_options o = lookahead_options(&co, interp, 1, 2);
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  const leir_search_record *x = leir_search_result_record(r, 0);
  ck_assert_ptr_nonnull(x);
  ck_assert_msg(count_steps(x->step) == 2, "not a two-step macro-step: %s", x->step);
  const char *first = strstr(x->step, " lanes=16");
  ck_assert_msg(first && strstr(first + 1, " lanes=16"), "not both lanes forms: %s", x->step);
  ck_assert_msg(x->reject == LEIR_REJECT_NONE, "%s: %s", x->step, x->reason);
  leir_search_result_free(r);
  leir_backend_free(interp);
  leir_program_free(p);
}
END_TEST

/* Both budgets hold: at most lookahead_evals model evaluations per
 * lookahead, and lookahead_seconds ends a lookahead that has far more work
 * (run 1: 20000 evaluations, a fifth of a second or more) after 0.005 s. */
START_TEST(test_lookahead_budgets) {
  leir_program *p = matmul_f32(8);
  leir_candidates_options co = wide_candidates();
  uint64_t evals[3];
  for (int run = 0; run < 3; run++) {
    fake f = {0};
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = LEIR_POLICY_COST;
    o.max_samples = 1;
    o.candidates = &co;
    o.measure = fake_measure;
    o.measure_payload = &f;
    o.lookahead_depth = 12;
    o.lookahead_width = 64;
    o.lookahead_evals = run == 0 ? 3000 : run == 1 ? 20000 : 0;
    o.lookahead_seconds = run == 2 ? 0.005 : 0;
    leir_search_result *r = NULL;
    ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
    leir_search_summary s = {.size = sizeof s};
    ck_assert_int_eq(leir_search_result_summary(r, &s), LEIR_OK);
    ck_assert_uint_eq(s.lookaheads, 1);
    evals[run] = s.lookahead_evals;
    leir_search_result_free(r);
  }
  /* the budget, no more; the beam leaves 64 of it to the pruning */
  ck_assert_uint_le(evals[0], 3000);
  ck_assert_uint_ge(evals[0], 3000 - 64);
  ck_assert_uint_le(evals[1], 20000);
  ck_assert_uint_ge(evals[1], 20000 - 64); /* the lookahead has that much to do */
  /* 0.005 s is a small part of what 20000 evaluations take (about 10 us
   * each on an idle machine, with the candidates' enumeration) */
  ck_assert_msg(evals[2] < evals[1] / 4, "time-capped lookahead made %llu evaluations",
                (unsigned long long)evals[2]);
  ck_assert_uint_gt(evals[2], 0);
  leir_program_free(p);
}
END_TEST

/* lookahead_depth 0 is the search as before: the same trajectory as with
 * an options struct that ends before the lookahead fields, whatever the
 * other lookahead options say. */
START_TEST(test_lookahead_zero_is_the_plain_search) {
  leir_program *p = matmul();
  leir_backend *interp = NULL;
  ck_assert_int_eq(leir_backend_open(&interp, "interp", NULL), LEIR_OK);
  leir_candidates_options co = wide_candidates();
  leir_search_result *r[2];
  for (int run = 0; run < 2; run++) {
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = LEIR_POLICY_COST;
    o.max_samples = 5;
    o.candidates = &co;
    o.measure = model_measure;
    o.measure_payload = interp;
    if (run == 0) {
      o.size = (uint32_t)offsetof(leir_search_options, lookahead_depth);
    } else {
      o.lookahead_depth = 0;
      o.lookahead_width = 3;
      o.lookahead_evals = 7;
      o.lookahead_seconds = 0.001;
    }
    ck_assert_int_eq(leir_search_run(&r[run], NULL, p, &o), LEIR_OK);
  }
  size_t n = leir_search_result_record_count(r[0]);
  ck_assert_uint_eq(n, leir_search_result_record_count(r[1]));
  ck_assert_uint_gt(n, 0);
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *a = leir_search_result_record(r[0], i),
                             *b = leir_search_result_record(r[1], i);
    ck_assert_str_eq(a->step, b->step);
    ck_assert_uint_eq(a->hash, b->hash);
    ck_assert_int_eq(a->node, b->node);
    ck_assert_int_eq(a->reject, b->reject);
  }
  leir_search_summary s = {.size = sizeof s};
  ck_assert_int_eq(leir_search_result_summary(r[1], &s), LEIR_OK);
  ck_assert_uint_eq(s.lookaheads, 0);
  ck_assert_uint_eq(s.lookahead_evals, 0);
  leir_search_result_free(r[0]);
  leir_search_result_free(r[1]);
  leir_backend_free(interp);
  leir_program_free(p);
}
END_TEST

/* ---- the policy interface ------------------------------------------------------ */

typedef struct scripted {
  int calls;
  size_t feedback_seen;
  char last_reason[512];
  int mode; /* 0: hostile answers then a right one; 1: always wrong; 2: the same program;
             * 3: the candidate numbered by the attempt (valid steps, none faster) */
} scripted;

static leir_status scripted_propose(void *payload, const leir_search_query *q,
                                    leir_search_proposals *out) {
  scripted *s = payload;
  s->calls++;
  ck_assert_ptr_nonnull(q->program);
  ck_assert_ptr_nonnull(q->candidates);
  ck_assert_ptr_nonnull(q->history);
  ck_assert((q->depth == 0) == (q->parent == NULL));
  if (q->depth == 1) ck_assert_str_eq(q->history, "[{\"step\":\"loop_reorder nest=0 loops=c,d\",\"speedup\":2}]");
  s->feedback_seen = q->nfeedback;
  if (q->nfeedback)
    snprintf(s->last_reason, sizeof s->last_reason, "%s", q->feedback[q->nfeedback - 1].reason);
  if (q->depth > 0) return LEIR_OK; /* nothing more below the first step */
  if (s->mode == 3) {
    const char *step = leir_step_text(leir_candidates_step(q->candidates, q->attempt));
    return leir_search_propose_step(out, step, strlen(step), NULL);
  }
  if (s->mode == 2) {
    /* the current program again, its loop variables renamed: `same` */
    const char *same = "L^{8}_{x=0}L^{8}_{y=0}L^{8}_{z=0}[D^{f64,g}_{x,y}=D^{f64,g}_{x,y}+"
                       "A^{f64,g}_{x,z}*C^{f64,g}_{z,y};];";
    return leir_search_propose_program(out, same, strlen(same), "loop_reorder", NULL);
  }
  if (s->mode == 1 || q->attempt == 0) {
    /* malformed text, not one step, a step that does not apply */
    const char *bad = "L^{8}_{a=0}[D^{f64,g}_{a=";
    ck_assert_int_eq(leir_search_propose_program(out, bad, strlen(bad), "loop_reorder", NULL),
                     LEIR_OK);
    const char *two = "L^{8}_{d=0}L^{8}_{c=0}L^{8}_{a=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+"
                      "A^{f64,g}_{a,d}*C^{f64,g}_{d,c};];";
    ck_assert_int_eq(leir_search_propose_program(out, two, strlen(two), "loop_split", NULL),
                     LEIR_OK);
    const char *na = "loop_split nest=0 loop=zz factor=2";
    ck_assert_int_eq(leir_search_propose_step(out, na, strlen(na), NULL), LEIR_OK);
    return LEIR_OK;
  }
  /* the right answer: the whole program after one reorder, with fresh
   * whitespace, named by its strategy, with the model's own CoT */
  const char *good = "L^{8}_{a=0} L^{8}_{d=0} L^{8}_{c=0} [D^{f64,g}_{a,c} = D^{f64,g}_{a,c} + "
                     "A^{f64,g}_{a,d} * C^{f64,g}_{d,c};];";
  return leir_search_propose_program(out, good, strlen(good), "loop_reorder", "swap c and d");
}

/* A fake measurement under which every verified reorder is faster. */
static leir_status always_faster(void *payload, const leir_program *root, const leir_program *parent,
                                 const leir_program *cand, uint32_t klass,
                                 leir_search_measurement *m) {
  (void)payload, (void)root, (void)parent, (void)cand, (void)klass;
  m->verdict = LEIR_VERDICT_EQUAL;
  m->order = LEIR_ORDER_FASTER;
  m->ratio = m->ratio_lo = m->ratio_hi = 2.0;
  m->median_s = 1.0;
  m->parent_median_s = 2.0;
  return LEIR_OK;
}

START_TEST(test_external_policy_grounding_and_feedback) {
  scripted s = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_CHAIN;
  o.propose = scripted_propose;
  o.propose_payload = &s;
  o.measure = always_faster;
  leir_program *p = matmul();
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  size_t n = leir_search_result_record_count(r);
  ck_assert_uint_eq(n, 4);
  const leir_search_record *x = leir_search_result_record(r, 0);
  ck_assert_int_eq(x->reject, LEIR_REJECT_MALFORMED);
  ck_assert_ptr_nonnull(strstr(x->reason, "invalid at 1:"));
  ck_assert_str_eq(x->proposed, "L^{8}_{a=0}[D^{f64,g}_{a="); /* kept as given */
  ck_assert_str_eq(x->raw, "");                               /* not the LLM policy */
  ck_assert_str_eq(leir_search_result_record(r, 2)->proposed, "loop_split nest=0 loop=zz factor=2");
  x = leir_search_result_record(r, 1);
  ck_assert_int_eq(x->reject, LEIR_REJECT_NOT_ONE_STEP);
  ck_assert_ptr_nonnull(strstr(x->reason, "not one step of loop_split"));
  x = leir_search_result_record(r, 2);
  ck_assert_int_eq(x->reject, LEIR_REJECT_NOT_APPLICABLE);
  x = leir_search_result_record(r, 3);
  ck_assert_int_eq(x->node, 1);
  ck_assert_str_eq(x->strategy, "loop_reorder");
  ck_assert_str_eq(x->cot, "swap c and d");
  ck_assert_str_eq(x->step, "loop_reorder nest=0 loops=c,d");
  /* the second call at the root saw the three rejections */
  ck_assert_uint_eq(s.feedback_seen, 0); /* the last call was at depth 1: no feedback there */
  leir_search_result_free(r);

  /* always wrong: the policy is called 1 + retries times, each time with the
   * reasons so far */
  scripted w = {.mode = 1};
  o.propose_payload = &w;
  o.retries = 2;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  ck_assert_int_eq(w.calls, 3);
  ck_assert_uint_eq(w.feedback_seen, 6);
  ck_assert_ptr_nonnull(strstr(w.last_reason, "not applicable"));
  leir_search_summary sum = {.size = sizeof sum};
  leir_search_result_summary(r, &sum);
  ck_assert_uint_eq(sum.accepted, 0);
  ck_assert_uint_eq(sum.samples, 0);
  ck_assert_ptr_nonnull(leir_search_result_best(r));
  leir_search_result_free(r);
  leir_program_free(p);
}
END_TEST

/* A fake measurement under which every verified step is as fast as its parent. */
static leir_status never_faster(void *payload, const leir_program *root, const leir_program *parent,
                                const leir_program *cand, uint32_t klass,
                                leir_search_measurement *m) {
  (void)payload, (void)root, (void)parent, (void)cand, (void)klass;
  m->verdict = LEIR_VERDICT_EQUAL;
  m->order = LEIR_ORDER_SAME;
  m->ratio = m->ratio_lo = m->ratio_hi = 1.0;
  m->median_s = m->parent_median_s = 1.0;
  return LEIR_OK;
}

/* `retries` bounds calls that gave nothing usable; a verified step that is
 * only not faster is a usable answer, so a model proposing new valid steps
 * at one node goes on until the sample budget (it stopped after 1 + retries
 * calls before). */
START_TEST(test_not_faster_answers_do_not_use_retries) {
  scripted s = {.mode = 3};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_CHAIN;
  o.propose = scripted_propose;
  o.propose_payload = &s;
  o.measure = never_faster;
  o.retries = 1;
  o.max_samples = 20;
  leir_program *p = matmul();
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  leir_search_summary sum = {.size = sizeof sum};
  leir_search_result_summary(r, &sum);
  ck_assert_uint_eq(sum.samples, 20);
  ck_assert_int_eq(sum.stopped_by, 1); /* the sample budget */
  ck_assert_int_eq(s.calls, 20);
  for (size_t i = 0; i < leir_search_result_record_count(r); i++)
    ck_assert_int_eq(leir_search_result_record(r, i)->reject, LEIR_REJECT_NOT_FASTER);
  leir_search_result_free(r);
  leir_program_free(p);
}
END_TEST

/* A model that alternates an unreadable step with a new valid one: each
 * valid answer ends the row of failures, so with retries = 1 a beam of
 * width 2 gets both children of the root (the accepted call in between
 * used to leave the count at 1, and the second failure ended the node). */
typedef struct alternating {
  int calls;
  uint64_t given[16];
  size_t ngiven;
} alternating;

static leir_status alternating_propose(void *payload, const leir_search_query *q,
                                       leir_search_proposals *out) {
  alternating *a = payload;
  if (a->calls++ % 2 == 0) return leir_search_propose_step(out, "no such step", 12, NULL);
  uint64_t here = leir_program_hash_alpha(q->program);
  for (size_t i = 0; i < leir_candidates_count(q->candidates); i++) {
    leir_program *c = NULL;
    if (leir_candidates_apply(&c, q->candidates, i) != LEIR_OK) continue;
    uint64_t h = leir_program_hash_alpha(c);
    leir_program_free(c);
    bool known = h == here;
    for (size_t k = 0; k < a->ngiven && !known; k++) known = a->given[k] == h;
    if (known || a->ngiven == 16) continue;
    a->given[a->ngiven++] = h;
    return leir_search_propose_candidate(out, i, NULL);
  }
  return LEIR_OK;
}

START_TEST(test_accepted_answers_end_the_row_of_failures) {
  alternating a = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_BEAM;
  o.width = 2;
  o.branching = 2;
  o.max_depth = 1;
  o.propose = alternating_propose;
  o.propose_payload = &a;
  o.measure = always_faster;
  o.retries = 1;
  o.max_samples = 20;
  leir_program *p = matmul();
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  leir_search_summary sum = {.size = sizeof sum};
  leir_search_result_summary(r, &sum);
  ck_assert_uint_eq(sum.accepted, 2);
  ck_assert_int_eq(a.calls, 4); /* unreadable, valid, unreadable, valid */
  ck_assert_int_eq(leir_search_result_record(r, 0)->reject, LEIR_REJECT_MALFORMED);
  ck_assert_int_eq(leir_search_result_record(r, 3)->reject, LEIR_REJECT_NONE);
  leir_search_result_free(r);
  leir_program_free(p);
}
END_TEST

/* A model that answers with the program it was given (up to fresh names) is
 * told `same`, not "not one step" (the program is checked before it is
 * grounded). */
START_TEST(test_external_policy_same_program_is_same) {
  scripted s = {.mode = 2};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_CHAIN;
  o.propose = scripted_propose;
  o.propose_payload = &s;
  o.measure = always_faster;
  o.retries = 1;
  leir_program *p = matmul();
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  ck_assert_uint_ge(leir_search_result_record_count(r), 1);
  const leir_search_record *x = leir_search_result_record(r, 0);
  ck_assert_int_eq(x->reject, LEIR_REJECT_SAME);
  ck_assert_ptr_nonnull(strstr(x->reason, "the same program as the current one"));
  ck_assert_ptr_nonnull(strstr(s.last_reason, "same program"));
  leir_search_result_free(r);
  leir_program_free(p);
}
END_TEST

static int cancel_after_3(void *payload, const leir_search_record *r) {
  (void)payload;
  return r->sample >= 3;
}

START_TEST(test_cancel_keeps_the_result_so_far) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.on_record = cancel_after_3;
  leir_search_result *r = run_fake(LEIR_SEARCH_BFS, &f, &o, LEIR_ERR_CANCELLED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(leir_search_result_record_count(r), 3);
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_outputs_json_svg_steps) {
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 20;
  leir_search_result *r = run_fake(LEIR_SEARCH_GREEDY, &f, &o, LEIR_OK);
  char *j = NULL;
  ck_assert_int_eq(leir_search_record_json(leir_search_result_record(r, 0), &j, NULL), LEIR_OK);
  const char *keys[] = {"\"sample\":1", "\"step\":", "\"cot\":", "\"verdict\":\"EQUAL\"",
                        "\"timing\":{", "\"spread\":", "\"speedup\":", "\"best_speedup\":"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    ck_assert_msg(strstr(j, keys[i]), "%s missing in %s", keys[i], j);
  leir_free(j);
  char *svg = NULL;
  ck_assert_int_eq(leir_search_result_plot_svg(r, &svg, NULL), LEIR_OK);
  ck_assert(strncmp(svg, "<svg", 4) == 0);
  ck_assert_ptr_nonnull(strstr(svg, "<polyline"));
  leir_free(svg);
  /* the best steps replay to the best program */
  char *steps = NULL;
  ck_assert_int_eq(leir_search_result_best_steps(r, &steps, NULL), LEIR_OK);
  leir_program *p = matmul();
  for (char *line = steps, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
    leir_step *s = NULL;
    ck_assert_int_eq(leir_step_parse(&s, line, (size_t)(nl - line)), LEIR_OK);
    leir_program *q = NULL;
    ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_OK);
    leir_step_free(s);
    leir_program_free(p);
    p = q;
  }
  ck_assert_uint_eq(leir_program_hash_alpha(p), leir_program_hash_alpha(leir_search_result_best(r)));
  leir_program_free(p);
  leir_free(steps);
  leir_search_result_free(r);
}
END_TEST

START_TEST(test_names_and_options) {
  leir_search_algorithm a;
  for (int i = 0; i <= LEIR_SEARCH_CHAIN; i++) {
    ck_assert_int_eq(leir_search_algorithm_from_name(
                         leir_search_algorithm_name((leir_search_algorithm)i), &a), LEIR_OK);
    ck_assert_int_eq(a, i);
  }
  ck_assert_int_eq(leir_search_algorithm_from_name("astar", &a), LEIR_ERR_ARGUMENT);
  leir_search_policy p;
  ck_assert_int_eq(leir_search_policy_from_name("random", &p), LEIR_OK);
  ck_assert_int_eq(p, LEIR_POLICY_RANDOM);
  leir_search_options o, d = LEIR_SEARCH_OPTIONS_INIT;
  ck_assert_int_eq(leir_search_options_init(&o, sizeof o), LEIR_OK);
  ck_assert_uint_eq(o.size, d.size);
  ck_assert_int_eq(o.algorithm, d.algorithm);
  ck_assert_uint_eq(o.max_samples, 100);
  ck_assert_uint_eq(o.max_depth, d.max_depth);
  ck_assert_uint_eq(o.retries, 3);
  ck_assert_ptr_null(o.propose);
  ck_assert_ptr_null(o.db);
  ck_assert_uint_eq(o.lookahead_depth, 0); /* off unless asked for */
  ck_assert_uint_eq(o.lookahead_width, 32);
  ck_assert_uint_eq(o.lookahead_evals, 200000);
  ck_assert_double_eq(o.lookahead_seconds, 20.0);
  ck_assert_uint_eq(d.lookahead_width, 32);
  /* a caller's older struct (up to `flags`) is accepted */
  ck_assert_int_eq(leir_search_options_init(&o, offsetof(leir_search_options, lookahead_depth)),
                   LEIR_OK);
  ck_assert_int_eq(leir_search_options_init(&o, 2), LEIR_ERR_ARGUMENT);
  leir_program *prog = matmul();
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, NULL, prog, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_ptr_null(r);
  leir_program_free(prog);
  char fp[32], proto[256];
  ck_assert_int_eq(leir_search_machine_fingerprint(2, fp, sizeof fp), LEIR_OK);
  ck_assert_uint_eq(strlen(fp), 16);
  ck_assert_int_eq(leir_search_protocol(NULL, NULL, proto, sizeof proto), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(proto, "c0.99"));
}
END_TEST

/* ---- the measurement database ------------------------------------------------- */

static char *tmp_db(void) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/leir-test-search-XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  unlink(path);
  return path;
}

static void rm_db(const char *path) {
  char p[128];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

START_TEST(test_db_reused_across_runs) {
  const char *path = tmp_db();
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  fake f1 = {.mismatch_mod = 5};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 25;
  o.db = db;
  o.machine = "test-machine";
  leir_search_result *r1 = run_fake(LEIR_SEARCH_GREEDY, &f1, &o, LEIR_OK);
  ck_assert_uint_eq(f1.n, 25);
  uint64_t rows = 0;
  ck_assert_int_eq(leir_db_count(db, &rows), LEIR_OK);
  ck_assert_uint_eq(rows, 25);
  leir_db_free(db);
  /* a second process-equivalent: reopen, same search, nothing measured */
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  o.db = db;
  fake f2 = {.mismatch_mod = 5};
  leir_search_result *r2 = run_fake(LEIR_SEARCH_GREEDY, &f2, &o, LEIR_OK);
  ck_assert_uint_eq(f2.n, 0);
  leir_search_summary s1 = {.size = sizeof s1}, s2 = {.size = sizeof s2};
  leir_search_result_summary(r1, &s1);
  leir_search_result_summary(r2, &s2);
  ck_assert_uint_eq(s2.reused, 25);
  ck_assert_double_eq(s1.best_speedup, s2.best_speedup);
  ck_assert_int_eq(leir_search_result_record(r2, 0)->cached, 1);
  /* another machine: nothing reused */
  o.machine = "other-machine";
  fake f3 = {.mismatch_mod = 5};
  leir_search_result *r3 = run_fake(LEIR_SEARCH_GREEDY, &f3, &o, LEIR_OK);
  ck_assert_uint_eq(f3.n, 25);
  leir_search_result_free(r1);
  leir_search_result_free(r2);
  leir_search_result_free(r3);
  leir_db_free(db);
  rm_db(path);
}
END_TEST

static int count_lines(void *payload, const char *line, size_t len) {
  ck_assert(len > 2 && line[0] == '{' && line[len - 1] == '}');
  ck_assert(strncmp(line, "{\"program_hash\":\"", 17) == 0);
  ck_assert_ptr_nonnull(strstr(line, "\"verdict\":"));
  (*(int *)payload)++;
  return 0;
}

START_TEST(test_db_put_get_export) {
  const char *path = tmp_db();
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  leir_db_row row = {.size = sizeof row, .program_hash = 0xabcdefu, .baseline_hash = 2,
                     .root_hash = 3, .backend = "cpu", .machine = "m", .protocol = "p",
                     .verdict = LEIR_VERDICT_CLOSE, .order = LEIR_ORDER_FASTER, .ratio = 1.5,
                     .ratio_lo = 1.4, .ratio_hi = 1.6, .median_s = 0.25, .step = "loop_split",
                     .program = "L^{2}_{a=0}[C^{f64,g}_{a}=1;];", .message = "ok"};
  ck_assert_int_eq(leir_db_put(db, &row), LEIR_OK);
  ck_assert_int_eq(leir_db_put(db, &row), LEIR_OK); /* same key: replaced */
  leir_db_row got = {.size = sizeof got};
  ck_assert_int_eq(leir_db_get(db, &row, &got), LEIR_OK);
  ck_assert_int_eq(got.verdict, LEIR_VERDICT_CLOSE);
  ck_assert_int_eq(got.order, LEIR_ORDER_FASTER);
  ck_assert_double_eq(got.ratio, 1.5);
  ck_assert_str_eq(got.step, "loop_split");
  ck_assert(got.parent_hash == 0); /* not given: unknown */
  ck_assert_str_eq(got.parent_program, "");
  /* the parent link (schema 2) round-trips */
  row.parent_hash = 0x0123456789abcdefu;
  row.parent_program = "L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];";
  ck_assert_int_eq(leir_db_put(db, &row), LEIR_OK);
  ck_assert_int_eq(leir_db_get(db, &row, &got), LEIR_OK);
  ck_assert(got.parent_hash == 0x0123456789abcdefu);
  ck_assert_str_eq(got.parent_program, row.parent_program);
  /* a caller built against the row before the parent fields */
  leir_db_row small = row;
  small.size = (uint32_t)offsetof(leir_db_row, parent_hash);
  ck_assert_int_eq(leir_db_put(db, &small), LEIR_OK);
  leir_db_row old = {.size = (uint32_t)offsetof(leir_db_row, parent_hash)};
  ck_assert_int_eq(leir_db_get(db, &row, &old), LEIR_OK);
  ck_assert_str_eq(old.step, "loop_split");
  ck_assert_int_eq(leir_db_get(db, &row, &got), LEIR_OK);
  ck_assert(got.parent_hash == 0);
  row.protocol = "q";
  ck_assert_int_eq(leir_db_get(db, &row, &got), LEIR_ERR_NOT_FOUND);
  ck_assert_int_eq(leir_db_put(db, &row), LEIR_OK);
  int lines = 0;
  ck_assert_int_eq(leir_db_export(db, count_lines, &lines), LEIR_OK);
  ck_assert_int_eq(lines, 2);
  ck_assert_int_eq(leir_db_check(db), LEIR_OK);
  leir_db_free(db);
  /* not a database */
  FILE *f = fopen(path, "w");
  fputs("this is not an SQLite file, just text that is long enough to be read as a header.....",
        f);
  fclose(f);
  rm_db(path);
  f = fopen(path, "w");
  fputs("this is not an SQLite file, just text that is long enough to be read as a header.....",
        f);
  fclose(f);
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_ERR_IO);
  ck_assert_ptr_null(db);
  rm_db(path);
}
END_TEST

START_TEST(test_db_survives_sigkill_mid_run) {
  const char *path = tmp_db();
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    leir_db *db = NULL;
    if (leir_db_open(&db, path) != LEIR_OK) {
      fprintf(stderr, "child: %s\n", leir_error_last()->message);
      _exit(2);
    }
    fake f = {.pipe_fd = fds[1]}; /* no pause: the child is writing most of the time */
    leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
    o.policy = LEIR_POLICY_EXHAUSTIVE;
    o.max_samples = 0;
    o.max_depth = 3;
    o.branching = 30;
    o.db = db;
    o.machine = "kill-test";
    o.algorithm = LEIR_SEARCH_BFS;
    o.measure = fake_measure;
    o.measure_payload = &f;
    leir_program *p = NULL;
    if (leir_program_parse(&p, MATMUL, strlen(MATMUL), NULL) != LEIR_OK ||
        leir_program_infer_signature(p) != LEIR_OK)
      _exit(2);
    leir_search_result *r = NULL;
    leir_status rst = leir_search_run(&r, NULL, p, &o);
    fprintf(stderr, "child: %s %s\n", leir_status_name(rst), leir_error_last()->message);
    _exit(3); /* the parent kills it long before */
  }
  close(fds[1]);
  char buf[64];
  size_t got = 0;
  while (got < 40) {
    ssize_t k = read(fds[0], buf, sizeof buf);
    ck_assert_int_gt(k, 0);
    got += (size_t)k;
  }
  ck_assert_int_eq(kill(pid, SIGKILL), 0); /* mid-run, most likely mid-write */
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  close(fds[0]);
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  ck_assert_int_eq(leir_db_check(db), LEIR_OK);
  uint64_t rows = 0;
  ck_assert_int_eq(leir_db_count(db, &rows), LEIR_OK);
  ck_assert_uint_ge(rows, 38); /* every row committed before the kill (the last may be lost) */
  /* the same search again reuses those rows */
  fake f = {0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = (uint32_t)rows + 5;
  o.max_depth = 3;
  o.branching = 30;
  o.db = db;
  o.machine = "kill-test";
  leir_search_result *r = run_fake(LEIR_SEARCH_BFS, &f, &o, LEIR_OK);
  leir_search_summary s = {.size = sizeof s};
  leir_search_result_summary(r, &s);
  ck_assert_uint_eq(s.reused, rows);
  ck_assert_uint_eq(s.measured, 5);
  leir_search_result_free(r);
  leir_db_free(db);
  rm_db(path);
}
END_TEST

/* Eight processes open one new file at the same moment, five times over:
 * each open succeeds (switching a new file to WAL used to fail busy at
 * once in one of them now and then, the busy handler aside) and each row
 * lands. */
START_TEST(test_db_processes_create_one_file_at_once) {
  enum { WRITERS = 8, ROUNDS = 5 };
  for (int round = 0; round < ROUNDS; round++) {
    const char *path = tmp_db();
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t pids[WRITERS];
    for (int c = 0; c < WRITERS; c++) {
      pids[c] = fork();
      ck_assert_int_ge(pids[c], 0);
      if (pids[c] == 0) {
        char b;
        close(go[1]);
        if (read(go[0], &b, 1) != 0) _exit(5); /* EOF: everyone starts together */
        leir_db *db = NULL;
        if (leir_db_open(&db, path) != LEIR_OK) _exit(2);
        leir_db_row row = {.size = sizeof row, .program_hash = (uint64_t)c, .baseline_hash = 1,
                           .root_hash = 1, .backend = "cpu", .machine = "m", .protocol = "p",
                           .verdict = LEIR_VERDICT_EQUAL, .order = LEIR_ORDER_FASTER};
        if (leir_db_put(db, &row) != LEIR_OK) _exit(3);
        leir_db_free(db);
        _exit(0);
      }
    }
    close(go[0]);
    close(go[1]);
    for (int c = 0; c < WRITERS; c++) {
      int status = 0;
      ck_assert_int_eq(waitpid(pids[c], &status, 0), pids[c]);
      ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                    "round %d: process %d failed (%d)", round, c, WEXITSTATUS(status));
    }
    leir_db *db = NULL;
    ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
    uint64_t rows = 0;
    ck_assert_int_eq(leir_db_count(db, &rows), LEIR_OK);
    ck_assert_uint_eq(rows, WRITERS);
    leir_db_free(db);
    rm_db(path);
  }
}
END_TEST

START_TEST(test_db_two_processes_write_at_once) {
  const char *path = tmp_db();
  pid_t pids[2];
  for (int c = 0; c < 2; c++) {
    pids[c] = fork();
    ck_assert_int_ge(pids[c], 0);
    if (pids[c] == 0) {
      leir_db *db = NULL;
      if (leir_db_open(&db, path) != LEIR_OK) _exit(2);
      for (uint64_t i = 0; i < 150; i++) {
        leir_db_row row = {.size = sizeof row, .program_hash = i, .baseline_hash = (uint64_t)c,
                           .root_hash = 1, .backend = "cpu", .machine = "m", .protocol = "p",
                           .verdict = LEIR_VERDICT_EQUAL, .order = LEIR_ORDER_FASTER};
        if (leir_db_put(db, &row) != LEIR_OK) _exit(3);
        leir_db_row got = {.size = sizeof got};
        if (leir_db_get(db, &row, &got) != LEIR_OK) _exit(4);
      }
      leir_db_free(db);
      _exit(0);
    }
  }
  for (int c = 0; c < 2; c++) {
    int status = 0;
    ck_assert_int_eq(waitpid(pids[c], &status, 0), pids[c]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed (%d)", c,
                  WEXITSTATUS(status));
  }
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  uint64_t rows = 0;
  ck_assert_int_eq(leir_db_count(db, &rows), LEIR_OK);
  ck_assert_uint_eq(rows, 300);
  leir_db_free(db);
  rm_db(path);
}
END_TEST

/* ---- one real run on the CPU backend ------------------------------------------- */

START_TEST(test_real_cpu_search_accepts_only_verified_faster_steps) {
  leir_backend *b = NULL;
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = "";
  bo.threads = 1;
  leir_status st = leir_backend_open(&b, "cpu", &bo);
  if (st == LEIR_ERR_NO_DEVICE) return; /* no C compiler here */
  ck_assert_int_eq(st, LEIR_OK);
  /* a 48x48x48 matmul in the slow loop order: the reorder that makes the
   * innermost loop stride-1 is found by a small budget */
  leir_program *p = test_parse(
      "L^{48}_{a=0}L^{48}_{c=0}L^{48}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c};];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_compare_options co = LEIR_COMPARE_OPTIONS_INIT;
  co.min_rounds = 6;
  co.max_rounds = 60;
  co.max_seconds = 2;
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_GREEDY;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 4;
  o.compare = &co;
  leir_search_result *r = NULL;
  ck_assert_int_eq(leir_search_run(&r, b, p, &o), LEIR_OK);
  size_t n = leir_search_result_record_count(r);
  ck_assert_uint_ge(n, 1);
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *x = leir_search_result_record(r, i);
    ck_assert(x->measured);
    ck_assert(x->m.verdict == LEIR_VERDICT_EQUAL || x->m.verdict == LEIR_VERDICT_CLOSE ||
              x->node < 0);
    if (x->node >= 0) {
      ck_assert_int_eq(x->m.order, LEIR_ORDER_FASTER);
      ck_assert(x->m.ratio_lo > 1.0);
      ck_assert(x->m.median_s > 0 && x->m.parent_median_s > x->m.median_s);
    }
  }
  /* the best program verifies against the source independently */
  leir_verify_report *rep = NULL;
  ck_assert_int_eq(leir_verify(b, p, leir_search_result_best(r), NULL, &rep), LEIR_OK);
  ck_assert(leir_verdict_passes(rep->verdict));
  leir_verify_report_free(rep);
  leir_search_summary s = {.size = sizeof s};
  leir_search_result_summary(r, &s);
  ck_assert_uint_eq(s.measured, n);
  if (s.accepted) ck_assert(s.best_median_s > 0 && s.source_median_s > 0);
  leir_search_result_free(r);
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

/* The database keeps measurements of different backend configurations
 * apart: a search on a contracting backend (LEIR_BACKEND_FP_CONTRACT)
 * reuses nothing that the plain backend measured, and each row names its
 * configuration (threads, compiler, fma). */
typedef struct backend_rows {
  int plain, fused;
} backend_rows;

static int count_backends(void *payload, const char *line, size_t len) {
  (void)len;
  backend_rows *n = payload;
  const char *b = strstr(line, "\"backend\":\"cpu threads=1 cc=");
  ck_assert_msg(b != NULL, "%s", line);
  const char *end = strchr(b + 11, '"');
  ck_assert_ptr_nonnull(end);
  if (end - b > 4 && memcmp(end - 4, " fma", 4) == 0)
    n->fused++;
  else
    n->plain++;
  return 0;
}

START_TEST(test_db_keeps_backend_configurations_apart) {
  leir_backend *plain = NULL, *fused = NULL;
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = "";
  bo.threads = 1;
  leir_status st = leir_backend_open(&plain, "cpu", &bo);
  if (st == LEIR_ERR_NO_DEVICE) return; /* no C compiler here */
  ck_assert_int_eq(st, LEIR_OK);
  bo.flags |= LEIR_BACKEND_FP_CONTRACT;
  ck_assert_int_eq(leir_backend_open(&fused, "cpu", &bo), LEIR_OK);
  leir_program *p = test_parse(
      "L^{32}_{a=0}L^{32}_{c=0}L^{32}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c};];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  const char *path = tmp_db();
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  leir_compare_options co = LEIR_COMPARE_OPTIONS_INIT;
  co.min_rounds = 3;
  co.max_rounds = 6;
  co.max_seconds = 0.5;
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_GREEDY;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 2;
  o.compare = &co;
  o.db = db;
  o.flags |= LEIR_SEARCH_NO_FINAL_COMPARE;
  leir_search_result *r = NULL;
  leir_search_summary s = {.size = sizeof s};
  ck_assert_int_eq(leir_search_run(&r, plain, p, &o), LEIR_OK);
  leir_search_result_summary(r, &s);
  ck_assert_uint_eq(s.measured, 2);
  leir_search_result_free(r);
  /* the same search on the same configuration measures nothing again */
  ck_assert_int_eq(leir_search_run(&r, plain, p, &o), LEIR_OK);
  leir_search_result_summary(r, &s);
  ck_assert_uint_eq(s.measured, 0);
  ck_assert_uint_eq(s.reused, 2);
  leir_search_result_free(r);
  /* fused multiply-add: other kernels, other timings, measured afresh */
  ck_assert_int_eq(leir_search_run(&r, fused, p, &o), LEIR_OK);
  leir_search_result_summary(r, &s);
  ck_assert_uint_eq(s.measured, 2);
  ck_assert_uint_eq(s.reused, 0);
  leir_search_result_free(r);
  backend_rows n = {0, 0};
  ck_assert_int_eq(leir_db_export(db, count_backends, &n), LEIR_OK);
  ck_assert_int_eq(n.plain, 2);
  ck_assert_int_eq(n.fused, 2);
  leir_db_free(db);
  rm_db(path);
  leir_program_free(p);
  leir_backend_free(fused);
  leir_backend_free(plain);
}
END_TEST

static Suite *search_suite(void) {
  Suite *s = suite_create("search");
  TCase *t = tcase_create("algorithms");
  tcase_add_test(t, test_greedy_moves_to_the_fastest_child);
  tcase_add_test(t, test_chain_moves_to_each_accepted_child);
  tcase_add_test(t, test_beam_keeps_width_nodes_per_level);
  tcase_add_test(t, test_bfs_expands_level_by_level_within_depth);
  tcase_add_test(t, test_dfs_goes_deep_first);
  tcase_add_test(t, test_mcts_widens_and_backs_up);
  tcase_add_test(t, test_rejections_are_recorded_and_never_accepted);
  suite_add_tcase(s, t);
  t = tcase_create("policies");
  tcase_add_test(t, test_random_policy_is_seeded);
  tcase_add_test(t, test_builtin_policies_propose_no_alpha_twins);
  tcase_add_test(t, test_builtin_policy_through_an_adapter_is_the_same_search);
  tcase_add_test(t, test_external_policy_proposes_macro_steps);
  tcase_add_test(t, test_cost_policy_proposes_in_cost_order);
  tcase_add_test(t, test_cost_policy_prices_for_the_backend_threads);
  tcase_add_test(t, test_cost_policy_macro_step_over_plateau);
  tcase_add_test(t, test_lookahead_finds_a_multi_step_macro_step);
  tcase_add_test(t, test_lookahead_prices_the_lanes_forms);
  tcase_add_test(t, test_lookahead_budgets);
  tcase_add_test(t, test_lookahead_zero_is_the_plain_search);
  tcase_add_test(t, test_external_policy_grounding_and_feedback);
  tcase_add_test(t, test_external_policy_same_program_is_same);
  tcase_add_test(t, test_not_faster_answers_do_not_use_retries);
  tcase_add_test(t, test_accepted_answers_end_the_row_of_failures);
  tcase_add_test(t, test_cancel_keeps_the_result_so_far);
  tcase_add_test(t, test_outputs_json_svg_steps);
  tcase_add_test(t, test_names_and_options);
  suite_add_tcase(s, t);
  t = tcase_create("db");
  tcase_add_test(t, test_db_reused_across_runs);
  tcase_add_test(t, test_db_put_get_export);
  tcase_add_test(t, test_db_survives_sigkill_mid_run);
  tcase_add_test(t, test_db_two_processes_write_at_once);
  tcase_add_test(t, test_db_processes_create_one_file_at_once);
  suite_add_tcase(s, t);
  t = tcase_create("cpu");
  tcase_add_test(t, test_real_cpu_search_accepts_only_verified_faster_steps);
  tcase_add_test(t, test_db_keeps_backend_configurations_apart);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return test_run_suite(search_suite()); }
