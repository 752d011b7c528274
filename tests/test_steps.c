/* The reference's one-step transformations (conformance steps-small):
 * a sample of pairs with the verdict the census found, including every
 * known-bad reference output with the reason it is wrong
 * (tests/data/run/steps-verdicts.tsv, docs/census.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "testutil.h"

typedef struct step {
  char *line, *id, *strategy, *verdict, *reason, *before, *after;
} step;

static char *next_field(char **cur) {
  char *s = *cur, *tab = strchr(s, '\t');
  if (tab) {
    *tab = '\0';
    *cur = tab + 1;
  } else {
    *cur = s + strlen(s);
  }
  return s;
}

START_TEST(test_reference_steps_get_their_census_verdict) {
  corpus_entry *src;
  size_t nsrc = corpus_read(test_data_path("run/sources-small.tsv"), &src);
  size_t len;
  char *text = test_read_file(test_data_path("run/steps-verdicts.tsv"), &len);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", NULL), LEIR_OK);
  int checked = 0, bad = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#') continue;
    char *cur = line;
    step s;
    s.line = next_field(&cur);
    s.id = next_field(&cur);
    s.strategy = next_field(&cur);
    s.verdict = next_field(&cur);
    s.reason = next_field(&cur);
    s.before = next_field(&cur);
    s.after = next_field(&cur);
    const corpus_entry *e = NULL;
    for (size_t i = 0; i < nsrc && !e; i++)
      if (strcmp(src[i].id, s.id) == 0) e = &src[i];
    ck_assert_msg(e != NULL, "unknown id %s", s.id);
    leir_program *before = corpus_program_text(e, strcmp(s.before, "-") ? s.before : e->leir);
    leir_verdict want;
    ck_assert_int_eq(leir_verdict_from_name(s.verdict, &want), LEIR_OK);
    leir_program *after = NULL;
    leir_status ps = leir_program_parse(&after, s.after, strlen(s.after), NULL);
    if (ps != LEIR_OK) {
      /* a malformed reference output: INVALID by the parser */
      ck_assert_msg(want == LEIR_VERDICT_INVALID, "steps line %s: does not parse", s.line);
    } else {
      leir_verify_report *r = NULL;
      ck_assert_int_eq(leir_verify(b, before, after, NULL, &r), LEIR_OK);
      ck_assert_msg(r->verdict == want, "steps line %s (%s, %s): expected %s (%s), got %s: %s",
                    s.line, s.id, s.strategy, s.verdict, s.reason, leir_verdict_name(r->verdict),
                    r->message);
      leir_verify_report_free(r);
    }
    if (!leir_verdict_passes(want)) bad++;
    checked++;
    leir_program_free(before);
    leir_program_free(after);
  }
  ck_assert_int_ge(checked, 40);
  ck_assert_int_ge(bad, 10);
  leir_backend_free(b);
  free(text);
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
