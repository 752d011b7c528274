/* Parser and printer: round trips, precedence, malformed input. */
#include <string.h>

#include "testutil.h"

START_TEST(test_softmax_round_trips) {
  const char *src =
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];";
  leir_program *p = test_parse(src);
  char *out = test_print(p);
  ck_assert_str_eq(out, src);
  leir_free(out);
  leir_program_free(p);
}
END_TEST

START_TEST(test_unterminated_nest_reports_position) {
  const char *src = "B^{2}_{tx=0}[C^{f64,g}_{tx}=1;]L^{2}_{a=0}[C^{f64,g}_{a}=2;];";
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, src, strlen(src), NULL), LEIR_ERR_PARSE);
  ck_assert_ptr_null(p);
  ck_assert_uint_eq(leir_error_last()->line, 1);
  ck_assert_uint_eq(leir_error_last()->column, 32);
}
END_TEST

static Suite *parse_suite(void) {
  Suite *s = suite_create("parse");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_softmax_round_trips);
  tcase_add_test(tc, test_unterminated_nest_reports_position);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(parse_suite()); }
