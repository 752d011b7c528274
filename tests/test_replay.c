/* Traces replay (issue 34.5): a step carries the domain of the listing it
 * came from, so every candidate of a list made with any LEIR_CANDIDATES_*
 * flags and vector width replays through leir_step_clone, through its JSON
 * form (leir_step_to_json, leir_step_parse) and leir_step_apply, and from
 * its text with the listing's options (leir_step_apply_listed), to the
 * alpha hash that leir_candidates_apply gives. The text alone keeps the
 * reference domain: a step outside it is refused as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "corpus.h"
#include "jsonl.h"
#include "leir/experimental/candidates.h"
#include "leir/experimental/search.h"
#include "testutil.h"

static const char *const PROGRAMS[] = {
    /* a matmul: splits and tiles by every divisor, vectorization widths */
    "L^{8}_{a=0}L^{64}_{c=0}L^{16}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];",
    /* a row sum then a division by it: reduction lanes, partial fusion */
    "L^{4}_{a=0}L^{64}_{c=0}[S^{f32,g}_{a}=S^{f32,g}_{a}+A^{f32,g}_{a,c};];"
    "L^{4}_{a=0}L^{64}_{c=0}[O^{f32,g}_{a,c}=A^{f32,g}_{a,c}/S^{f32,g}_{a};];",
};

static const uint32_t FLAGS[] = {
    0,
    LEIR_CANDIDATES_ALL_DIVISORS,
    LEIR_CANDIDATES_GENERIC_VALUES,
    LEIR_CANDIDATES_PARTIAL_FUSION,
    LEIR_CANDIDATES_REDUCTION_LANES,
    LEIR_CANDIDATES_ALL_DIVISORS | LEIR_CANDIDATES_GENERIC_VALUES |
        LEIR_CANDIDATES_PARTIAL_FUSION | LEIR_CANDIDATES_REDUCTION_LANES,
};
enum { NFLAGS = sizeof FLAGS / sizeof *FLAGS };

static uint64_t hash_of_apply(const leir_program *p, const leir_step *s,
                              const leir_candidates_options *listing, const char *how) {
  leir_program *q = NULL;
  leir_status st = listing ? leir_step_apply_listed(&q, p, s, listing, NULL)
                           : leir_step_apply(&q, p, s, NULL);
  ck_assert_msg(st == LEIR_OK, "%s of '%s': %s", how, leir_step_text(s), leir_error_last()->message);
  uint64_t h = leir_program_hash_alpha(q);
  leir_program_free(q);
  return h;
}

/* Replays every candidate of `p` listed with `flags` and `width`; returns
 * how many of them the text alone (the reference domain) refuses. */
static size_t replay_all(const leir_program *p, uint32_t flags, uint32_t width, size_t *count) {
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags = flags;
  co.vector_width = width;
  leir_candidates *l = NULL;
  ck_assert_int_eq(leir_candidates_list(&l, p, &co), LEIR_OK);
  size_t n = leir_candidates_count(l), refused = 0;
  for (size_t i = 0; i < n; i++) {
    const leir_step *s = leir_candidates_step(l, i);
    leir_program *q = NULL;
    ck_assert_int_eq(leir_candidates_apply(&q, l, i), LEIR_OK);
    uint64_t want = leir_program_hash_alpha(q);
    leir_program_free(q);
    /* the listed step itself, and a clone of it */
    ck_assert_uint_eq(hash_of_apply(p, s, NULL, "leir_step_apply"), want);
    leir_step *c = NULL;
    ck_assert_int_eq(leir_step_clone(&c, s), LEIR_OK);
    ck_assert_uint_eq(hash_of_apply(p, c, NULL, "leir_step_apply of a clone"), want);
    leir_step_free(c);
    /* its JSON form, parsed back */
    char *json = NULL;
    ck_assert_int_eq(leir_step_to_json(s, &json, NULL), LEIR_OK);
    int widened = flags != 0 || width != 8;
    ck_assert_msg((strstr(json, "\"listing_flags\":") != NULL) == widened, "%s", json);
    leir_step *j = NULL;
    ck_assert_int_eq(leir_step_parse(&j, json, strlen(json)), LEIR_OK);
    ck_assert_str_eq(leir_step_text(j), leir_step_text(s));
    ck_assert_uint_eq(hash_of_apply(p, j, NULL, "leir_step_apply of the JSON form"), want);
    leir_step_free(j);
    leir_free(json);
    /* its text, with the listing's options */
    const char *text = leir_step_text(s);
    leir_step *t = NULL;
    ck_assert_int_eq(leir_step_parse(&t, text, strlen(text)), LEIR_OK);
    ck_assert_uint_eq(hash_of_apply(p, t, &co, "leir_step_apply_listed"), want);
    /* its text alone: the reference domain, the same program or refused */
    leir_program *r = NULL;
    leir_status st = leir_step_apply(&r, p, t, NULL);
    if (st == LEIR_OK) {
      ck_assert_uint_eq(leir_program_hash_alpha(r), want);
    } else {
      ck_assert_int_eq(st, LEIR_ERR_NOT_APPLICABLE);
      ck_assert_ptr_null(r);
      refused++;
    }
    leir_program_free(r);
    leir_step_free(t);
  }
  leir_candidates_free(l);
  *count = n;
  return refused;
}

START_TEST(test_every_listing_replays) {
  leir_program *p = test_parse(PROGRAMS[_i]);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  size_t base = 0, n = 0, widened_refused = 0, widened_more = 0;
  ck_assert_uint_eq(replay_all(p, 0, 8, &base), 0);
  ck_assert_uint_gt(base, 0);
  for (size_t f = 1; f < NFLAGS; f++) {
    widened_refused += replay_all(p, FLAGS[f], 8, &n);
    widened_more += n > base;
  }
  widened_refused += replay_all(p, 0, 16, &n);
  widened_refused += replay_all(p, FLAGS[NFLAGS - 1], 4, &n);
  /* the flags do widen the lists, and the text alone refuses some of it */
  ck_assert_uint_gt(widened_more, 0);
  ck_assert_uint_gt(widened_refused, 0);
  leir_program_free(p);
}
END_TEST

/* The listing members of the JSON form are checked like parameters. */
START_TEST(test_listing_members_are_checked) {
  static const char *const bad[] = {
      "{\"strategy\":\"loop_split\",\"nest\":0,\"loop\":\"c\",\"factor\":16,\"listing_flags\":512}",
      "{\"strategy\":\"loop_split\",\"nest\":0,\"loop\":\"c\",\"factor\":16,\"listing_flags\":\"x\"}",
      "{\"strategy\":\"loop_split\",\"nest\":0,\"loop\":\"c\",\"factor\":16,\"listing_vector_width\":0}",
      "{\"strategy\":\"loop_split\",\"nest\":0,\"loop\":\"c\",\"factor\":16,"
      "\"listing_vector_width\":99999999999}",
      "{\"strategy\":\"loop_split\",\"nest\":0,\"loop\":\"c\",\"factor\":16,\"listing_flags\":[1]}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    leir_step *s = (leir_step *)1;
    ck_assert_msg(leir_step_parse(&s, bad[i], strlen(bad[i])) == LEIR_ERR_PARSE, "%s", bad[i]);
    ck_assert_ptr_null(s);
  }
  /* a step outside the reference domain: refused as text, applied with its listing */
  leir_program *p = test_parse(PROGRAMS[0]);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  const char *text = "loop_split nest=0 loop=c factor=16";
  char json[256];
  snprintf(json, sizeof json,
           "{\"strategy\":\"loop_split\",\"nest\":0,\"loop\":\"c\",\"factor\":16,"
           "\"listing_flags\":%u,\"listing_vector_width\":8}",
           (unsigned)LEIR_CANDIDATES_ALL_DIVISORS);
  leir_step *s = NULL;
  leir_program *q = NULL;
  ck_assert_int_eq(leir_step_parse(&s, text, strlen(text)), LEIR_OK);
  ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_ERR_NOT_APPLICABLE);
  ck_assert_str_eq(leir_error_last()->rule, "step.not-a-candidate");
  leir_step_free(s);
  ck_assert_int_eq(leir_step_parse(&s, json, strlen(json)), LEIR_OK);
  ck_assert_str_eq(leir_step_text(s), text);
  ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_OK);
  leir_program_free(q);
  q = NULL;
  leir_step_free(s);
  /* with NULL options leir_step_apply_listed is leir_step_apply */
  ck_assert_int_eq(leir_step_parse(&s, text, strlen(text)), LEIR_OK);
  ck_assert_int_eq(leir_step_apply_listed(&q, p, s, NULL, NULL), LEIR_ERR_NOT_APPLICABLE);
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags = LEIR_CANDIDATES_ALL_DIVISORS;
  leir_exactness cls = LEIR_REASSOCIATING;
  ck_assert_int_eq(leir_step_apply_listed(&q, p, s, &co, &cls), LEIR_OK);
  ck_assert_int_eq(cls, LEIR_EXACT);
  leir_program_free(q);
  leir_step_free(s);
  leir_program_free(p);
}
END_TEST

/* ---- leir_ground's gated pass (issue 34.5) ---------------------------------------
 * A step only the verification-gated pass grounds (tests/data/splits-gated.jsonl:
 * a split refused even under the generic assumption, a loop of extent 1)
 * carries that domain: the grounded step, its clone and its JSON form replay
 * through leir_step_apply to the program of leir_candidates_apply; its text
 * replays with LEIR_CANDIDATES_GATED_SPLITS in the listing, and alone it is
 * refused as before. */
START_TEST(test_gated_grounding_replays) {
  corpus_entry *rows = NULL;
  size_t nrows = corpus_read(&rows), done = 0;
  jsonl_file *f = jsonl_open(test_data_path("splits-gated.jsonl"));
  ck_assert_ptr_nonnull(f);
  const jsonl_value *o;
  /* the first row of each of two kinds keeps this to a few verifications */
  int seen_refused = 0, seen_extent1 = 0;
  while ((o = jsonl_next(f))) {
    const char *id = jsonl_str(jsonl_get(o, "id")), *kind = jsonl_str(jsonl_get(o, "kind"));
    const char *after_text = jsonl_str(jsonl_get(o, "after")), *want = jsonl_str(jsonl_get(o, "step"));
    ck_assert(id && kind && after_text && want);
    int *seen = strcmp(kind, "refused") == 0 ? &seen_refused
                : strcmp(kind, "extent1") == 0 ? &seen_extent1 : NULL;
    if (!seen || *seen) continue;
    *seen = 1;
    const corpus_entry *e = corpus_find(rows, nrows, id);
    ck_assert_msg(e != NULL, "%s", id);
    leir_program *before = corpus_program(e), *after = corpus_program_text(e, after_text);
    leir_candidates *g = NULL;
    ck_assert_int_eq(leir_ground(&g, before, after, NULL), LEIR_OK);
    size_t k = 0, n = leir_candidates_count(g);
    while (k < n && strcmp(leir_step_text(leir_candidates_step(g, k)), want) != 0) k++;
    ck_assert_msg(k < n, "%s: %s does not ground", id, want);
    leir_program *q = NULL;
    ck_assert_int_eq(leir_candidates_apply(&q, g, k), LEIR_OK);
    uint64_t h = leir_program_hash_alpha(q);
    leir_program_free(q);
    const leir_step *s = leir_candidates_step(g, k);
    ck_assert_uint_eq(hash_of_apply(before, s, NULL, "leir_step_apply of a gated step"), h);
    leir_step *c = NULL;
    ck_assert_int_eq(leir_step_clone(&c, s), LEIR_OK);
    ck_assert_uint_eq(hash_of_apply(before, c, NULL, "leir_step_apply of its clone"), h);
    leir_step_free(c);
    char *json = NULL;
    ck_assert_int_eq(leir_step_to_json(s, &json, NULL), LEIR_OK);
    leir_step *j = NULL;
    ck_assert_int_eq(leir_step_parse(&j, json, strlen(json)), LEIR_OK);
    leir_exactness cls = LEIR_EXACT;
    leir_program *r = NULL;
    ck_assert_msg(leir_step_apply(&r, before, j, &cls) == LEIR_OK, "%s: %s", json,
                  leir_error_last()->message);
    ck_assert_uint_eq(leir_program_hash_alpha(r), h);
    ck_assert_int_eq(cls, LEIR_REASSOCIATING);
    leir_program_free(r);
    r = NULL;
    leir_step_free(j);
    leir_free(json);
    /* the text: refused alone, replayed in the gated listing domain */
    leir_step *t = NULL;
    ck_assert_int_eq(leir_step_parse(&t, want, strlen(want)), LEIR_OK);
    ck_assert_int_eq(leir_step_apply(&r, before, t, NULL), LEIR_ERR_NOT_APPLICABLE);
    leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
    co.flags = LEIR_CANDIDATES_GENERIC_VALUES | LEIR_CANDIDATES_GATED_SPLITS;
    ck_assert_uint_eq(hash_of_apply(before, t, &co, "leir_step_apply_listed, gated"), h);
    leir_step_free(t);
    /* the bit is no listing option: a list with it is the list without it */
    leir_candidates *l1 = NULL, *l2 = NULL;
    co.flags = LEIR_CANDIDATES_GENERIC_VALUES;
    ck_assert_int_eq(leir_candidates_list(&l1, before, &co), LEIR_OK);
    co.flags |= LEIR_CANDIDATES_GATED_SPLITS;
    ck_assert_int_eq(leir_candidates_list(&l2, before, &co), LEIR_OK);
    ck_assert_uint_eq(leir_candidates_count(l1), leir_candidates_count(l2));
    leir_candidates_free(l1);
    leir_candidates_free(l2);
    leir_candidates_free(g);
    leir_program_free(before);
    leir_program_free(after);
    done++;
  }
  jsonl_close(f);
  corpus_free(rows, nrows);
  ck_assert_uint_eq(done, 2);
}
END_TEST

/* ---- search trajectories (issue 34.5) ---------------------------------------------
 * A seeded search (random policy, candidates listed with every widening flag
 * and vector width 16) records its trajectory as step texts; every accepted
 * record replays from its parent's program through leir_step_apply_listed
 * with the search's candidate options, and the best path from the source,
 * to the alpha hash the search recorded. The measurement verifies each
 * proposal on the interpreter and takes every verified one as faster, so
 * the walk accepts steps without timing noise. */
static leir_status verified_is_faster(void *payload, const leir_program *root,
                                      const leir_program *parent, const leir_program *cand,
                                      uint32_t klass, leir_search_measurement *m) {
  (void)parent;
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.candidate_class = klass;
  vo.input_sets = 1;
  leir_verify_report *rep = NULL;
  leir_status st = leir_verify(payload, root, cand, &vo, &rep);
  if (st != LEIR_OK) return st;
  m->verdict = rep->verdict;
  leir_verify_report_free(rep);
  m->order = LEIR_ORDER_FASTER;
  m->ratio = m->ratio_lo = m->ratio_hi = 1.25;
  m->median_s = m->parent_median_s = 1e-3;
  m->rounds = 1;
  return LEIR_OK;
}

/* Applies a record's step text (one step, or a macro-step "s1 ; s2") to p. */
static leir_program *replay_text(const leir_program *p, const char *text,
                                 const leir_candidates_options *listing) {
  leir_program *cur = NULL;
  ck_assert_int_eq(leir_program_clone(&cur, p), LEIR_OK);
  for (const char *a = text; *a;) {
    const char *sep = strstr(a, " ; ");
    size_t len = sep ? (size_t)(sep - a) : strlen(a);
    leir_step *s = NULL;
    ck_assert_int_eq(leir_step_parse(&s, a, len), LEIR_OK);
    leir_program *next = NULL;
    ck_assert_msg(leir_step_apply_listed(&next, cur, s, listing, NULL) == LEIR_OK, "%.*s: %s",
                  (int)len, a, leir_error_last()->message);
    leir_step_free(s);
    leir_program_free(cur);
    cur = next;
    a += len + (sep ? 3 : 0);
  }
  return cur;
}

START_TEST(test_search_trajectories_replay) {
  leir_program *src = test_parse(PROGRAMS[_i]);
  ck_assert_int_eq(leir_program_infer_signature(src), LEIR_OK);
  leir_backend *interp = NULL;
  ck_assert_int_eq(leir_backend_open(&interp, "interp", NULL), LEIR_OK);
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags = FLAGS[NFLAGS - 1] & ~LEIR_CANDIDATES_GENERIC_VALUES;
  co.vector_width = 16;
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.policy = LEIR_POLICY_RANDOM;
  o.seed = 11;
  o.max_samples = 10;
  o.max_depth = 5;
  o.branching = 2;
  o.candidates = &co;
  o.measure = verified_is_faster;
  o.measure_payload = interp;
  o.flags = LEIR_SEARCH_NO_FINAL_COMPARE;
  leir_search_result *res = NULL;
  ck_assert_int_eq(leir_search_run(&res, NULL, src, &o), LEIR_OK);
  size_t n = leir_search_result_record_count(res), accepted = 0;
  /* node id -> its program, the source as node 0 */
  leir_program **nodes = calloc(n + 1, sizeof *nodes);
  ck_assert_int_eq(leir_program_clone(&nodes[0], src), LEIR_OK);
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *r = leir_search_result_record(res, i);
    if (r->node < 0) continue;
    ck_assert_int_le(r->node, (int)n);
    ck_assert_ptr_nonnull(nodes[r->parent]);
    leir_program *q = replay_text(nodes[r->parent], r->step, &co);
    ck_assert_msg(leir_program_hash_alpha(q) == r->hash, "record %u (%s) replays elsewhere",
                  r->sample, r->step);
    nodes[r->node] = q;
    accepted++;
  }
  ck_assert_uint_gt(accepted, 1);
  /* the best path, from its step texts */
  char *steps = NULL;
  ck_assert_int_eq(leir_search_result_best_steps(res, &steps, NULL), LEIR_OK);
  leir_program *cur = NULL;
  ck_assert_int_eq(leir_program_clone(&cur, src), LEIR_OK);
  for (char *line = steps; *line;) {
    char *end = strchr(line, '\n');
    if (end) *end = '\0';
    if (*line) {
      leir_program *next = replay_text(cur, line, &co);
      leir_program_free(cur);
      cur = next;
    }
    if (!end) break;
    line = end + 1;
  }
  ck_assert_uint_eq(leir_program_hash_alpha(cur), leir_program_hash_alpha(leir_search_result_best(res)));
  leir_program_free(cur);
  leir_free(steps);
  for (size_t i = 0; i <= n; i++) leir_program_free(nodes[i]);
  free(nodes);
  leir_search_result_free(res);
  leir_backend_free(interp);
  leir_program_free(src);
}
END_TEST

int main(void) {
  Suite *s = suite_create("replay");
  TCase *tc = tcase_create("replay");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_every_listing_replays, 0, sizeof PROGRAMS / sizeof *PROGRAMS);
  tcase_add_test(tc, test_listing_members_are_checked);
  tcase_add_test(tc, test_gated_grounding_replays);
  tcase_add_loop_test(tc, test_search_trajectories_replay, 0, sizeof PROGRAMS / sizeof *PROGRAMS);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
