/* Strategies: catalogue, steps, candidates on the corpus, grounding,
 * explanations, CoT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "testutil.h"

static corpus small;

static void load(void) { corpus_load(&small, "sources-small.jsonl"); }
static void unload(void) { corpus_free(&small); }

START_TEST(test_every_candidate_passes_check_and_grounds) {
  size_t total = 0;
  size_t per[LEIR_STRATEGY_COUNT] = {0};
  for (size_t i = 0; i < small.n; i++) {
    const corpus_entry *e = &small.e[i];
    leir_candidates *c = NULL;
    ck_assert_msg(leir_candidates_list(&c, e->program, NULL) == LEIR_OK, "%s: %s", e->id,
                  leir_error_last()->message);
    size_t n = leir_candidates_count(c);
    total += n;
    for (size_t k = 0; k < n; k++) {
      const leir_step *s = leir_candidates_step(c, k);
      per[leir_step_strategy(s)]++;
      leir_program *q = NULL;
      ck_assert_int_eq(leir_candidates_apply(&q, c, k), LEIR_OK);
      leir_status st = leir_program_check(q, NULL, NULL);
      if (st != LEIR_OK) {
        char *t = test_print(q);
        ck_abort_msg("%s: %s gives an invalid program: %s [%s]\n%s", e->id, leir_step_text(s),
                     leir_error_last()->message, leir_error_last()->rule, t);
      }
      leir_program_free(q);
    }
    leir_candidates_free(c);
  }
  for (size_t s = 0; s < LEIR_STRATEGY_COUNT; s++)
    if (per[s]) {
      leir_strategy_info info;
      leir_strategy_info_get(s, &info);
      fprintf(stderr, "%-28s %zu\n", info.name, per[s]);
    }
  fprintf(stderr, "total %zu\n", total);
}
END_TEST

static Suite *strategy_suite(void) {
  Suite *s = suite_create("strategy");
  TCase *corpus_tc = tcase_create("corpus");
  tcase_add_unchecked_fixture(corpus_tc, load, unload);
  tcase_set_timeout(corpus_tc, 600);
  tcase_add_test(corpus_tc, test_every_candidate_passes_check_and_grounds);
  suite_add_tcase(s, corpus_tc);
  return s;
}

int main(void) { return test_run_suite(strategy_suite()); }
