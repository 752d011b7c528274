/*
 * partially_equivalent_then_correct (strategies/partially_equivalent_then_correct.c):
 *  - on the conformance corpus it finds exactly the reference's sites
 *    (conv1d/2d/3d pairs: one per padded spatial axis) and nothing else,
 *    and every candidate checks, prints with well-formed nesting (the
 *    reference's outputs do not parse), round-trips its step through text
 *    and JSON and grounds back to it;
 *  - every candidate verifies EQUAL on all input sets (sources-small);
 *  - the corrected rows are exactly the ones that need it: correcting one
 *    row fewer on either output gives MISMATCH;
 *  - the nested correction nests are handled by every other strategy: each
 *    candidate on a result checks and verifies against the original;
 *  - the chain of thought quotes the pairs, the fused nests and the
 *    corrections.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "jsonl.h"
#include "testutil.h"

#define PEC "partially_equivalent_then_correct"

static size_t pec_index(void) {
  size_t idx;
  ck_assert_int_eq(leir_strategy_find(PEC, &idx), LEIR_OK);
  return idx;
}

static leir_candidates *pec_candidates(const leir_program *p) {
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  o.strategy = (int)pec_index();
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_OK);
  return c;
}

static leir_verdict verdict(leir_backend *b, const leir_program *ref, const leir_program *q) {
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  leir_verify_report *r = NULL;
  ck_assert_msg(leir_verify(b, ref, q, &o, &r) == LEIR_OK, "%s", leir_error_last()->message);
  leir_verdict v = r->verdict;
  leir_verify_report_free(r);
  return v;
}

/* The candidate checks, prints and parses back strictly, its step round
 * trips through text and JSON, and grounding finds it again. */
static leir_program *check_candidate(const leir_program *p, const leir_candidates *c, size_t i) {
  const leir_step *s = leir_candidates_step(c, i);
  ck_assert_int_eq(leir_candidates_exactness(c, i), LEIR_EXACT);
  leir_program *q = NULL;
  leir_exactness cls;
  ck_assert_int_eq(leir_step_apply(&q, p, s, &cls), LEIR_OK);
  ck_assert_int_eq(cls, LEIR_EXACT);
  ck_assert_msg(leir_program_check(q, NULL, NULL) == LEIR_OK, "%s: %s", leir_step_text(s),
                leir_error_last()->message);
  char *text = test_print(q);
  leir_program *back = NULL;
  ck_assert_int_eq(leir_program_parse(&back, text, strlen(text), NULL), LEIR_OK);
  leir_program_free(back);
  free(text);
  leir_step *t = NULL;
  ck_assert_int_eq(leir_step_parse(&t, leir_step_text(s), strlen(leir_step_text(s))), LEIR_OK);
  ck_assert_str_eq(leir_step_text(t), leir_step_text(s));
  leir_step_free(t);
  char *json = NULL;
  size_t jn = 0;
  ck_assert_int_eq(leir_step_to_json(s, &json, &jn), LEIR_OK);
  ck_assert_int_eq(leir_step_parse(&t, json, jn), LEIR_OK);
  ck_assert_str_eq(leir_step_text(t), leir_step_text(s));
  leir_step_free(t);
  leir_free(json);
  leir_candidates *g = NULL;
  ck_assert_int_eq(leir_ground(&g, p, q, NULL), LEIR_OK);
  bool found = false;
  for (size_t k = 0; k < leir_candidates_count(g); k++)
    found |= strcmp(leir_step_text(leir_candidates_step(g, k)), leir_step_text(s)) == 0;
  ck_assert_msg(found, "%s does not ground", leir_step_text(s));
  leir_candidates_free(g);
  return q;
}

/* ---- the corpus ------------------------------------------------------------------- */

/* Sites: the reference's (its outputs per program, one per padded axis)
 * and no others; every candidate of sources-small verifies EQUAL. */
START_TEST(test_corpus_sites_match_the_reference_and_verify) {
  corpus_programs cp;
  corpus_programs_load(&cp);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t total = 0;
  for (size_t i = 0; i < cp.n; i++) {
    if (!cp.e[i].program) continue;
    leir_candidates *c = pec_candidates(cp.e[i].program);
    size_t n = leir_candidates_count(c);
    if (strcmp(cp.e[i].id, "level2/conv2d_conv2d_padding") == 0) {
      ck_assert_uint_eq(n, 2);
      ck_assert_str_eq(leir_step_text(leir_candidates_step(c, 0)), PEC " nest=0 loop=c");
      ck_assert_str_eq(leir_step_text(leir_candidates_step(c, 1)), PEC " nest=0 loop=d");
    } else {
      ck_assert_msg(n == 0, "%s: unexpected site %s", cp.e[i].id,
                    leir_step_text(leir_candidates_step(c, 0)));
    }
    for (size_t k = 0; k < n; k++) {
      leir_program *q = check_candidate(cp.e[i].program, c, k);
      ck_assert_int_eq(verdict(b, cp.e[i].program, q), LEIR_VERDICT_EQUAL);
      leir_program_free(q);
    }
    total += n;
    leir_candidates_free(c);
  }
  ck_assert_uint_eq(total, 2);
  leir_backend_free(b);
  corpus_programs_free(&cp);
}
END_TEST

/* The default-shape programs (f16/f32, strided and dilated windows): one
 * candidate per axis the reference rewrote, none elsewhere; each checks
 * and grounds (too large to run here). The reference's outputs for this
 * strategy are all malformed. */
START_TEST(test_default_corpus_sites_match_the_reference) {
  static const struct {
    const char *id;
    const char *loops;
  } want[] = {
      {"level2/conv1d_conv1d", "c"},
      {"level2/conv2d_conv2d_padding", "cd"},
      {"level2/conv3d_conv3d", "cdf"},
  };
  /* the reference's outputs per program, all malformed */
  size_t ref[3] = {0};
  jsonl_file *jf = test_corpus_open("steps-default.jsonl");
  const jsonl_value *o;
  while ((o = jsonl_next(jf))) {
    const char *st = jsonl_str(jsonl_get(o, "strategy"));
    if (!st || strcmp(st, PEC) != 0) continue;
    ck_assert(jsonl_bool(jsonl_get(o, "malformed"), false));
    const char *id = jsonl_str(jsonl_get(o, "id"));
    for (size_t k = 0; k < 3; k++) ref[k] += strcmp(id, want[k].id) == 0;
  }
  jsonl_close(jf);
  size_t sites = 0;
  jf = test_corpus_open("sources-default.jsonl");
  while ((o = jsonl_next(jf))) {
    const char *id = jsonl_str(jsonl_get(o, "id"));
    const char *text = jsonl_str(jsonl_get(o, "leir"));
    leir_program *p = NULL;
    if (leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK) continue;
    if (leir_program_check(p, NULL, NULL) != LEIR_OK) {
      leir_program_free(p);
      continue;
    }
    leir_candidates *c = pec_candidates(p);
    size_t n = leir_candidates_count(c);
    int w = -1;
    for (size_t k = 0; k < 3; k++)
      if (strcmp(id, want[k].id) == 0) w = (int)k;
    if (w < 0) {
      ck_assert_msg(n == 0, "%s: unexpected site", id);
    } else {
      ck_assert_uint_eq(n, strlen(want[w].loops));
      ck_assert_uint_eq(n, ref[w]);
      for (size_t k = 0; k < n; k++) {
        char s[80];
        snprintf(s, sizeof s, PEC " nest=0 loop=%c", want[w].loops[k]);
        ck_assert_str_eq(leir_step_text(leir_candidates_step(c, k)), s);
        leir_program_free(check_candidate(p, c, k));
      }
      sites += n;
    }
    leir_candidates_free(c);
    leir_program_free(p);
  }
  jsonl_close(jf);
  ck_assert_uint_eq(sites, 6);
}
END_TEST

/* ---- the corrected rows --------------------------------------------------------- */

/* taps 0, 2, 4 over A and C padded by 2: rows 4, 5 of D and 0, 1 of E read
 * across the seam */
static const char stencil[] =
    "L^{10}_{c=0}[H^{f64,g}_{c}=if_then_else(2<=c<8,A^{f64,g}_{c-2},0);];"
    "L^{6}_{c=0}[D^{f64,g}_{c}=H^{f64,g}_{c}+H^{f64,g}_{c+2}*2+H^{f64,g}_{c+4};];"
    "L^{10}_{c=0}[I^{f64,g}_{c}=if_then_else(2<=c<8,C^{f64,g}_{c-2},0);];"
    "L^{6}_{c=0}[E^{f64,g}_{c}=I^{f64,g}_{c}+I^{f64,g}_{c+2}*2+I^{f64,g}_{c+4};];";

static char *replace(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  ck_assert_msg(at != NULL, "'%s' not in %s", from, text);
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *out = malloc(n);
  ck_assert_ptr_nonnull(out);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return out;
}

START_TEST(test_one_row_fewer_is_caught) {
  leir_program *p = test_parse(stencil);
  leir_candidates *c = pec_candidates(p);
  ck_assert_uint_eq(leir_candidates_count(c), 1);
  leir_program *q = check_candidate(p, c, 0);
  char *text = test_print(q);
  static const char dfix[] = "L^{2}_{c=0}[D^{f64,g}_{c+4}=H^{f64,g}_{c+4}+H^{f64,g}_{(c+4)+2}*2+"
                             "H^{f64,g}_{(c+4)+4};];";
  static const char efix[] = "L^{2}_{c=0}[E^{f64,g}_{c}=I^{f64,g}_{c}+I^{f64,g}_{c+2}*2+"
                             "I^{f64,g}_{c+4};];";
  ck_assert_ptr_nonnull(strstr(text, dfix));
  ck_assert_ptr_nonnull(strstr(text, efix));
  /* the chain of thought names the pairs and quotes the corrections */
  char *cot = NULL;
  size_t cn = 0;
  ck_assert_int_eq(leir_step_cot(&cot, &cn, p, leir_candidates_step(c, 0)), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(cot, "pad A into H and compute D from it"));
  ck_assert_ptr_nonnull(strstr(cot, "do the same for C, I and E"));
  ck_assert_ptr_nonnull(strstr(cot, "concatenated along c as L^{6}_{c=0}["));
  ck_assert_ptr_nonnull(strstr(cot, "recomputed from the padded inputs as "));
  ck_assert_ptr_nonnull(strstr(cot, dfix));
  ck_assert_ptr_nonnull(strstr(cot, efix));
  leir_free(cot);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  ck_assert_int_eq(verdict(b, p, q), LEIR_VERDICT_EQUAL);
  /* D's correction of row 5 only; E's of row 0 only; none at all */
  const char *muts[3][2] = {
      {dfix, "L^{1}_{c=0}[D^{f64,g}_{c+5}=H^{f64,g}_{c+5}+H^{f64,g}_{(c+5)+2}*2+"
             "H^{f64,g}_{(c+5)+4};];"},
      {efix, "L^{1}_{c=0}[E^{f64,g}_{c}=I^{f64,g}_{c}+I^{f64,g}_{c+2}*2+I^{f64,g}_{c+4};];"},
      {efix, ""},
  };
  for (size_t m = 0; m < 3; m++) {
    char *mt = replace(text, muts[m][0], muts[m][1]);
    leir_program *r = test_parse(mt);
    ck_assert_int_eq(verdict(b, p, r), LEIR_VERDICT_MISMATCH);
    leir_program_free(r);
    free(mt);
  }
  leir_backend_free(b);
  free(text);
  leir_program_free(q);
  leir_candidates_free(c);
  leir_program_free(p);
}
END_TEST

/* Strided and dilated windows (the workload conv2d_conv2d_padding with
 * stride 2, dilation 2, padding 3): both axes verify EQUAL. */
START_TEST(test_strided_dilated_windows_verify) {
  leir_program *p = test_parse(
      "B^{1}_{tx=0}L^{2}_{a=0}L^{18}_{c=0}L^{16}_{d=0}[H^{f64,g}_{tx,a,c,d}=if_then_else(3<=c<15&"
      "3<=d<13,A^{f64,g}_{tx,a,c-3,d-3},0);];"
      "B^{1}_{tx=0}L^{3}_{a=0}L^{5}_{c=0}L^{6}_{d=0}L^{2}_{f=0}L^{5}_{g=0}L^{3}_{h=0}[D^{f64,g}_{tx,"
      "a,c,d}=D^{f64,g}_{tx,a,c,d}+H^{f64,g}_{tx,f,c*2+g*2,d*2+h*2}*G^{f64,g}_{a,f,g,h};];"
      "B^{1}_{tx=0}L^{2}_{a=0}L^{18}_{c=0}L^{16}_{d=0}[I^{f64,g}_{tx,a,c,d}=if_then_else(3<=c<15&"
      "3<=d<13,C^{f64,g}_{tx,a,c-3,d-3},0);];"
      "B^{1}_{tx=0}L^{3}_{a=0}L^{5}_{c=0}L^{6}_{d=0}L^{2}_{f=0}L^{5}_{g=0}L^{3}_{h=0}[E^{f64,g}_{tx,"
      "a,c,d}=E^{f64,g}_{tx,a,c,d}+I^{f64,g}_{tx,f,c*2+g*2,d*2+h*2}*G^{f64,g}_{a,f,g,h};];"
      "B^{1}_{tx=0}L^{3}_{a=0}L^{5}_{c=0}L^{6}_{d=0}[F^{f64,g}_{tx,a,c,d}=D^{f64,g}_{tx,a,c,d}+"
      "E^{f64,g}_{tx,a,c,d};];");
  leir_candidates *c = pec_candidates(p);
  ck_assert_uint_eq(leir_candidates_count(c), 2);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  for (size_t k = 0; k < 2; k++) {
    leir_program *q = check_candidate(p, c, k);
    ck_assert_int_eq(verdict(b, p, q), LEIR_VERDICT_EQUAL);
    leir_program_free(q);
  }
  leir_backend_free(b);
  leir_candidates_free(c);
  leir_program_free(p);
}
END_TEST

/* ---- the other strategies on the result ------------------------------------------- */

/* A padded convolution pair (nested corrections) and a max-pool pair
 * (stride 2, -inf padding): every candidate of every strategy on the
 * result checks and verifies, as its class, against the original. */
START_TEST(test_other_strategies_handle_the_result) {
  static const char *const progs[] = {
      "L^{2}_{a=0}L^{8}_{c=0}[H^{f64,g}_{a,c}=if_then_else(1<=c<7,A^{f64,g}_{a,c-1},0);];"
      "L^{2}_{a=0}L^{6}_{c=0}L^{3}_{g=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+H^{f64,g}_{a,c+g}*W^{f64,g}_{g};];"
      "L^{2}_{a=0}L^{8}_{c=0}[I^{f64,g}_{a,c}=if_then_else(1<=c<7,C^{f64,g}_{a,c-1},0);];"
      "L^{2}_{a=0}L^{6}_{c=0}L^{3}_{g=0}[E^{f64,g}_{a,c}=E^{f64,g}_{a,c}+I^{f64,g}_{a,c+g}*W^{f64,g}_{g};];"
      "L^{2}_{a=0}L^{6}_{c=0}[F^{f64,g}_{a,c}=D^{f64,g}_{a,c}+E^{f64,g}_{a,c};];",
      "L^{3}_{a=0}L^{10}_{c=0}[H^{f64,g}_{a,c}=if_then_else(1<=c<9,A^{f64,g}_{a,c-1},-inf);];"
      "L^{3}_{a=0}L^{5}_{c=0}L^{2}_{g=0}[D^{f64,g}_{a,c}=max(D^{f64,g}_{a,c},H^{f64,g}_{a,c*2+g});];"
      "L^{3}_{a=0}L^{10}_{c=0}[I^{f64,g}_{a,c}=if_then_else(1<=c<9,C^{f64,g}_{a,c-1},-inf);];"
      "L^{3}_{a=0}L^{5}_{c=0}L^{2}_{g=0}[E^{f64,g}_{a,c}=max(E^{f64,g}_{a,c},I^{f64,g}_{a,c*2+g});];",
  };
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t checked = 0;
  for (size_t i = 0; i < 2; i++) {
    leir_program *p = test_parse(progs[i]);
    leir_candidates *c = pec_candidates(p);
    ck_assert_uint_eq(leir_candidates_count(c), 1);
    leir_program *q = check_candidate(p, c, 0);
    ck_assert_int_eq(verdict(b, p, q), LEIR_VERDICT_EQUAL);
    leir_candidates *all = NULL;
    ck_assert_int_eq(leir_candidates_list(&all, q, NULL), LEIR_OK);
    for (size_t k = 0; k < leir_candidates_count(all); k++) {
      leir_program *r = NULL;
      ck_assert_int_eq(leir_candidates_apply(&r, all, k), LEIR_OK);
      const char *st = leir_step_text(leir_candidates_step(all, k));
      ck_assert_msg(leir_program_check(r, NULL, NULL) == LEIR_OK, "%s: %s", st,
                    leir_error_last()->message);
      leir_verdict v = verdict(b, p, r);
      bool ok = leir_candidates_exactness(all, k) == LEIR_EXACT ? v == LEIR_VERDICT_EQUAL
                                                                : leir_verdict_passes(v);
      ck_assert_msg(ok, "%s verifies %s", st, leir_verdict_name(v));
      leir_program_free(r);
      checked++;
    }
    leir_candidates_free(all);
    leir_program_free(q);
    leir_candidates_free(c);
    leir_program_free(p);
  }
  ck_assert_uint_gt(checked, 50);
  leir_backend_free(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pec");
  TCase *tc = tcase_create("pec");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_corpus_sites_match_the_reference_and_verify);
  tcase_add_test(tc, test_default_corpus_sites_match_the_reference);
  tcase_add_test(tc, test_one_row_fewer_is_caught);
  tcase_add_test(tc, test_strided_dilated_windows_verify);
  tcase_add_test(tc, test_other_strategies_handle_the_result);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
