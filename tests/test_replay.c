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
#include "leir/experimental/candidates.h"
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
      "{\"strategy\":\"loop_split\",\"nest\":0,\"loop\":\"c\",\"factor\":16,\"listing_flags\":256}",
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

int main(void) {
  Suite *s = suite_create("replay");
  TCase *tc = tcase_create("replay");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_every_listing_replays, 0, sizeof PROGRAMS / sizeof *PROGRAMS);
  tcase_add_test(tc, test_listing_members_are_checked);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
