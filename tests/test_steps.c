/* The reference's one-step transformations (tests/data/steps-small.jsonl):
 * a sample of pairs with the verdict the census found, including every kind
 * of known-bad reference output with the reason it is wrong
 * (tests/data/run/steps-verdicts.jsonl; docs/census.md has the census). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "testutil.h"

typedef struct expected {
  size_t line;
  char *verdict, *reason;
} expected;

START_TEST(test_reference_steps_get_their_census_verdict) {
  corpus_entry *src;
  size_t nsrc = corpus_read(&src);
  /* the sample: line numbers of steps-small.jsonl with verdicts */
  jsonl_file *f = test_corpus_open("run/steps-verdicts.jsonl");
  expected *want = NULL;
  size_t nwant = 0, cap = 0;
  const jsonl_value *v;
  while ((v = jsonl_next(f))) {
    if (nwant == cap) want = realloc(want, (cap = cap ? 2 * cap : 64) * sizeof *want);
    want[nwant].line = (size_t)jsonl_int(jsonl_get(v, "line"), 0);
    want[nwant].verdict = strdup(jsonl_str(jsonl_get(v, "verdict")));
    const char *why = jsonl_str(jsonl_get(v, "reason"));
    want[nwant].reason = strdup(why ? why : "");
    nwant++;
  }
  ck_assert_ptr_null(jsonl_error(f));
  jsonl_close(f);
  ck_assert_uint_ge(nwant, 40);

  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", NULL), LEIR_OK);
  f = test_corpus_open("steps-small.jsonl");
  size_t checked = 0, bad = 0, next = 0;
  while (next < nwant && (v = jsonl_next(f))) {
    if (jsonl_line(f) != want[next].line) continue;
    const expected *w = &want[next++];
    const char *id = jsonl_str(jsonl_get(v, "id"));
    const char *strategy = jsonl_str(jsonl_get(v, "strategy"));
    const corpus_entry *e = corpus_find(src, nsrc, id);
    ck_assert_msg(e != NULL, "unknown id %s", id);
    const char *before_text = jsonl_str(jsonl_get(v, "before"));
    leir_program *before = corpus_program_text(e, before_text ? before_text : e->leir);
    const char *after_text = jsonl_str(jsonl_get(v, "after"));
    leir_verdict verdict;
    ck_assert_int_eq(leir_verdict_from_name(w->verdict, &verdict), LEIR_OK);
    leir_program *after = NULL;
    if (leir_program_parse(&after, after_text, strlen(after_text), NULL) != LEIR_OK) {
      /* a malformed reference output is INVALID by the parser */
      ck_assert_msg(verdict == LEIR_VERDICT_INVALID, "steps line %zu does not parse", w->line);
    } else {
      leir_verify_report *r = NULL;
      ck_assert_int_eq(leir_verify(b, before, after, NULL, &r), LEIR_OK);
      ck_assert_msg(r->verdict == verdict, "steps line %zu (%s, %s): expected %s (%s), got %s: %s",
                    w->line, id, strategy, w->verdict, w->reason, leir_verdict_name(r->verdict),
                    r->message);
      leir_verify_report_free(r);
    }
    if (!leir_verdict_passes(verdict)) bad++;
    checked++;
    leir_program_free(before);
    leir_program_free(after);
  }
  jsonl_close(f);
  ck_assert_uint_eq(checked, nwant);
  ck_assert_uint_ge(bad, 20);
  leir_backend_free(b);
  for (size_t i = 0; i < nwant; i++) {
    free(want[i].verdict);
    free(want[i].reason);
  }
  free(want);
  corpus_free(src, nsrc);
}
END_TEST

static Suite *steps_suite(void) {
  Suite *s = suite_create("steps");
  TCase *tc = tcase_create("census");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, test_reference_steps_get_their_census_verdict);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(steps_suite()); }
