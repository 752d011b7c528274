/*
 * Parser (spec/leir.md §1.1): precedence and associativity, conditions,
 * calls, nest structure, and every malformed form with its exact position
 * and what was expected.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- precedence ---------------------------------------------------------- */

START_TEST(test_power_binds_tighter_than_unary_minus) {
  test_expect_tree("-a**2", "(neg (** a 2))");
  test_expect_tree("(-a)**2", "(** (paren (neg a)) 2)");
  test_expect_tree("a**-2", "(** a (neg 2))");
  test_expect_tree("-a**-b**2", "(neg (** a (neg (** b 2))))");
  test_expect_tree("--a", "(neg (neg a))");
}
END_TEST

START_TEST(test_power_is_right_associative) {
  test_expect_tree("a**2**3", "(** a (** 2 3))");
  test_expect_tree("(a**2)**3", "(** (paren (** a 2)) 3)");
  test_expect_tree("A^{f64,g}_{tx,a}**(1/2)", "(** A[tx,a] (paren (/ 1 2)))");
}
END_TEST

START_TEST(test_arithmetic_is_left_associative) {
  test_expect_tree("a-1-2", "(- (- a 1) 2)");
  test_expect_tree("a-(1-2)", "(- a (paren (- 1 2)))");
  test_expect_tree("a/2/3", "(/ (/ a 2) 3)");
  test_expect_tree("a/2//3%4*5", "(* (% (// (/ a 2) 3) 4) 5)");
  test_expect_tree("a+2*3", "(+ a (* 2 3))");
  test_expect_tree("a*2+3", "(+ (* a 2) 3)");
  test_expect_tree("-a*2", "(* (neg a) 2)");
  test_expect_tree("a*-2", "(* a (neg 2))");
  test_expect_tree("a--2", "(- a (neg 2))");
}
END_TEST

START_TEST(test_chained_comparisons) {
  test_expect_tree("if_then_else(2<=a<10,1,0)", "(if_then_else (cmp 2 <= a < 10) 1 0)");
  test_expect_tree("if_then_else(0<a+1<=a*2<9,1,0)",
              "(if_then_else (cmp 0 < (+ a 1) <= (* a 2) < 9) 1 0)");
  leir_program *p = test_parse(test_wrap_rhs("if_then_else(2<=a<10,1,0)"));
  const leir_expr *cmp = leir_expr_child(test_rhs(p, 0, 0), 0);
  ck_assert_int_eq(leir_expr_get_kind(cmp), LEIR_EXPR_COMPARE);
  ck_assert_uint_eq(leir_expr_child_count(cmp), 3);
  ck_assert_int_eq(leir_expr_compare_op(cmp, 0), LEIR_OP_LE);
  ck_assert_int_eq(leir_expr_compare_op(cmp, 1), LEIR_OP_LT);
  ck_assert_int_eq(leir_expr_compare_op(cmp, 2), LEIR_OP_NONE);
  leir_program_free(p);
}
END_TEST

START_TEST(test_and_or_bind_looser_than_comparisons) {
  test_expect_tree("if_then_else(2<=a<10&1<=tx<9,A^{f64,g}_{tx,a},0)",
              "(if_then_else (& (cmp 2 <= a < 10) (cmp 1 <= tx < 9)) A[tx,a] 0)");
  test_expect_tree("if_then_else(a<1&a<2|a<3,1,0)",
              "(if_then_else (| (& (cmp a < 1) (cmp a < 2)) (cmp a < 3)) 1 0)");
  test_expect_tree("if_then_else(a<1|a<2&a<3,1,0)",
              "(if_then_else (| (cmp a < 1) (& (cmp a < 2) (cmp a < 3))) 1 0)");
  test_expect_tree("if_then_else((a<1|a<2)&a<3,1,0)",
              "(if_then_else (& (paren (| (cmp a < 1) (cmp a < 2))) (cmp a < 3)) 1 0)");
  test_expect_tree("if_then_else(a<1&a<2&a<3,1,0)",
              "(if_then_else (& (& (cmp a < 1) (cmp a < 2)) (cmp a < 3)) 1 0)");
  /* a bare value (bool tensor) is a condition; so is a comparison of sums */
  test_expect_tree("if_then_else(M^{bool,g}_{a},-inf,A^{f64,g}_{tx,a})",
              "(if_then_else M[a] (neg inf) A[tx,a])");
  test_expect_tree("if_then_else(a-1<0,-inf,A^{f64,g}_{tx,a-1})",
              "(if_then_else (cmp (- a 1) < 0) (neg inf) A[tx,(- a 1)])");
  /* conditions exist only as the first argument of if_then_else */
  test_expect_parse_error(test_wrap_rhs("a<1"), 0, LEIR_ERR_PARSE, 1, 43, "parse.expected",
                          "expected ';' after the equation, found '<'");
  test_expect_parse_error(test_wrap_rhs("if_then_else(1,a<1,0)"), 0, LEIR_ERR_PARSE, 1, 58,
                          "parse.expected", "expected ',' or ')' in the argument list, found '<'");
  test_expect_parse_error(test_wrap_rhs("(a<1)"), 0, LEIR_ERR_PARSE, 1, 44, "parse.expected",
                          "expected ')', found '<'");
}
END_TEST

START_TEST(test_calls_and_nary_max_min) {
  test_expect_tree("max(a,0)", "(max a 0)");
  test_expect_tree("max(a,0,1,2)", "(max a 0 1 2)");
  test_expect_tree("min(max(a,-1.0),1.0,A^{f64,g}_{tx,a})", "(min (max a (neg 1.0)) 1.0 A[tx,a])");
  test_expect_tree("exp(-A^{f64,g}_{tx,a})", "(exp (neg A[tx,a]))");
  test_expect_tree("1/(1+exp(-a))", "(/ 1 (paren (+ 1 (exp (neg a)))))");
  leir_program *p = test_parse(test_wrap_rhs("max(a,0,1,2,3,4,5,6,7,8)"));
  const leir_expr *e = test_rhs(p, 0, 0);
  ck_assert_int_eq(leir_expr_get_kind(e), LEIR_EXPR_CALL);
  ck_assert_int_eq(leir_expr_op(e), LEIR_OP_MAX);
  ck_assert_uint_eq(leir_expr_child_count(e), 10);
  ck_assert_ptr_null(leir_expr_child(e, 10));
  leir_program_free(p);
}
END_TEST

START_TEST(test_indirect_and_nested_indices) {
  leir_program *p = test_parse(
      "B^{4}_{tx=0}L^{3}_{a=0}[D^{f64,g}_{tx,a}=E^{f64,g}_{tx,C^{i64,g}_{tx}}+"
      "H^{f64,g}_{(a*4+tx)%3,-(-a),F^{i64,g}_{G^{i64,g}_{a},tx}};];");
  ck_assert_str_eq(test_sexpr(p, test_rhs(p, 0, 0)),
                   "(+ E[tx,C[tx]] H[(% (paren (+ (* a 4) tx)) 3),(neg (paren (neg a))),F[G[a],tx]])");
  leir_program_free(p);
}
END_TEST

/* ---- nests ------------------------------------------------------------------ */

START_TEST(test_nested_nests) {
  const char *src =
      "B^{2}_{tx=0}[D^{f64,g}_{tx}=0;L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};"
      "L^{2}_{c=0}[E^{f64,g}_{tx,a,c}=A^{f64,g}_{tx,a};];];C^{f64,g}_{tx}=D^{f64,g}_{tx};];"
      "L^{3}_{a=0}[F^{f64,g}_{a}=1;];";
  leir_program *p = test_parse(src);
  ck_assert_uint_eq(leir_program_nest_count(p), 2);
  const leir_nest *outer = leir_program_nest(p, 0);
  ck_assert_uint_eq(leir_nest_loop_count(outer), 1);
  ck_assert_uint_eq(leir_nest_item_count(outer), 3);
  ck_assert_ptr_nonnull(leir_nest_item_equation(outer, 0));
  ck_assert_ptr_null(leir_nest_item_nest(outer, 0));
  const leir_nest *mid = leir_nest_item_nest(outer, 1);
  ck_assert_ptr_nonnull(mid);
  ck_assert_ptr_null(leir_nest_item_equation(outer, 1));
  ck_assert_uint_eq(leir_nest_item_count(mid), 2);
  const leir_nest *inner = leir_nest_item_nest(mid, 1);
  ck_assert_ptr_nonnull(inner);
  leir_loop l = leir_nest_loop(p, inner, 0);
  ck_assert_str_eq(l.var, "c");
  ck_assert_int_eq(l.extent, 2);
  ck_assert_ptr_nonnull(leir_nest_item_equation(outer, 2));
  char *out = test_print(p);
  ck_assert_str_eq(out, src);
  leir_free(out);
  leir_program_free(p);
}
END_TEST

START_TEST(test_nests_without_headers) {
  const char *srcs[] = {
      "[C^{f64,g}=1;];",
      "[C^{f64,g}=1;];B^{1}_{tx=0}[D^{f64,g}=C^{f64,g};];",
      "B^{2}_{tx=0}[[C^{f64,g}_{tx}=1;];];",
      "[[[C^{f64,g}=1;];];];",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
    leir_program *p = test_parse(srcs[i]);
    char *out = test_print(p);
    ck_assert_str_eq(out, srcs[i]);
    leir_free(out);
    leir_program_free(p);
  }
  leir_program *p = test_parse(srcs[0]);
  ck_assert_uint_eq(leir_nest_loop_count(leir_program_nest(p, 0)), 0);
  leir_loop none = leir_nest_loop(p, leir_program_nest(p, 0), 0);
  ck_assert_int_eq(none.extent, 0);
  ck_assert_str_eq(none.var, "");
  leir_program_free(p);
}
END_TEST

START_TEST(test_loop_kinds_and_bound_names) {
  const char *src =
      "B^{4}_{bx=0}B^{2}_{tya=0}B^{2}_{tzc=0}L^{2}_{a=0}P^{2}_{d=0}V^{4}_{f=0}U^{2}_{g_1=0}"
      "[C^{f64,g}=C^{f64,g}+1;];";
  leir_program *p = test_parse(src);
  const leir_nest *n = leir_program_nest(p, 0);
  static const leir_loop_kind kinds[] = {LEIR_LOOP_BOUND,  LEIR_LOOP_BOUND,      LEIR_LOOP_BOUND,
                                         LEIR_LOOP_SERIAL, LEIR_LOOP_PARALLEL,   LEIR_LOOP_VECTORIZED,
                                         LEIR_LOOP_UNROLLED};
  static const char *const vars[] = {"bx", "tya", "tzc", "a", "d", "f", "g_1"};
  ck_assert_uint_eq(leir_nest_loop_count(n), 7);
  for (size_t k = 0; k < 7; k++) {
    leir_loop l = leir_nest_loop(p, n, k);
    ck_assert_int_eq(l.kind, kinds[k]);
    ck_assert_str_eq(l.var, vars[k]);
  }
  leir_program_free(p);
}
END_TEST

/* ---- malformed input ----------------------------------------------------------- */

/* The malformed forms with their positions and messages (strict and
 * lenient parsing) are fixture files: tests/fixtures/diagnostics/parse-*.leir
 * (tests/test_diagnostics.c). */

START_TEST(test_long_number_literal_is_rejected) {
  char src[6000];
  int n = snprintf(src, sizeof src, "B^{2}_{tx=0}[C^{f64,g}=");
  memset(src + n, '7', 5000);
  snprintf(src + n + 5000, sizeof src - (size_t)n - 5000, ";];");
  test_expect_parse_error(src, 0, LEIR_ERR_PARSE, 1, 24, "parse.number",
                          "number literal longer than 4096 characters");
}
END_TEST

/* The reference's partially_equivalent_then_correct emits "...[x;]L^...": a
 * "]" not followed by ";". Every such corpus program is rejected at the
 * character after that "]". */
START_TEST(test_reference_malformed_programs_are_rejected) {
  static const char *const files[] = {"steps-small.jsonl", "steps-default.jsonl"};
  size_t rejected = 0;
  for (size_t f = 0; f < 2; f++) {
    jsonl_file *jf = test_corpus_open(files[f]);
    const jsonl_value *o;
    while ((o = jsonl_next(jf))) {
      if (!jsonl_bool(jsonl_get(o, "malformed"), false)) continue;
      const char *text = jsonl_str(jsonl_get(o, "after"));
      ck_assert_ptr_nonnull(text);
      const char *bad = text;
      while ((bad = strchr(bad, ']')) && bad[1] == ';') bad++;
      ck_assert_ptr_nonnull(bad);
      uint32_t col = (uint32_t)(bad - text) + 2;
      test_expect_parse_error(text, 0, LEIR_ERR_PARSE, 1, col, "parse.expected",
                              "expected ';' after ']'");
      rejected++;
    }
    ck_assert_ptr_null(jsonl_error(jf));
    jsonl_close(jf);
  }
  ck_assert_uint_eq(rejected, 8);
}
END_TEST

START_TEST(test_failed_parse_leaves_output_null_and_reports_argument_errors) {
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(NULL, "x", 1, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_parse(&p, NULL, 3, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_ptr_null(p);
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.size = 0; /* size not set (a smaller, older struct is fine: test_abi) */
  ck_assert_int_eq(leir_program_parse(&p, "[C^{f64,g}=1;];", 15, &o), LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(leir_error_last()->rule, "argument");
  /* the text need not be NUL-terminated */
  const char buf[] = {'[', 'C', '^', '{', 'f', '6', '4', ',', 'g', '}', '=', '1', ';', ']', ';', 'X'};
  ck_assert_int_eq(leir_program_parse(&p, buf, 15, NULL), LEIR_OK);
  leir_program_free(p);
  /* input size limit */
  o = (leir_parse_options)LEIR_PARSE_OPTIONS_INIT;
  o.max_input_bytes = 10;
  ck_assert_int_eq(leir_program_parse(&p, buf, 15, &o), LEIR_ERR_LIMIT);
  ck_assert_str_eq(leir_error_last()->rule, "limit.input-size");
  ck_assert_ptr_null(p);
  leir_error_clear();
  ck_assert_int_eq(leir_error_last()->status, LEIR_OK);
  ck_assert_str_eq(leir_error_last()->message, "");
}
END_TEST

START_TEST(test_clone_is_deep_and_independent) {
  const char *src = "B^{2}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},1e-05);];";
  leir_program *p = test_parse(src);
  test_set_signature(p, "A:f64:2x4 -> C:f64:2x4");
  ck_assert_int_eq(leir_program_set_name(p, "relu"), LEIR_OK);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_clone(&q, p), LEIR_OK);
  leir_program_free(p);
  char *out = test_print(q);
  ck_assert_str_eq(out, src);
  leir_free(out);
  ck_assert_str_eq(leir_program_name(q), "relu");
  ck_assert_uint_eq(leir_program_signature_count(q), 2);
  leir_tensor_decl d;
  ck_assert_int_eq(leir_program_signature_get(q, 1, &d), LEIR_OK);
  ck_assert_str_eq(d.name, "C");
  ck_assert_int_eq(d.shape[1], 4);
  ck_assert_int_eq(leir_program_check(q, NULL, NULL), LEIR_OK);
  leir_program_free(q);
}
END_TEST

/* ---- stack ---------------------------------------------------------------- */

/* Programs at the largest depth the parser accepts (max_depth=1000) parse,
 * check, list their strategy candidates, apply each and check the results
 * on a 256 KiB thread stack: the parser's nest recursion, the affine forms
 * of deep subscripts (the checker's and the strategies'), and the
 * index-table substitution keep their large scratch off the stack.
 * Sanitizers put redzones around every frame and need about eight times
 * more (measured: the deepest shape here runs with 2 MiB under ASan), so an
 * instrumented build runs the same programs with 2 MiB. */
#if defined(__SANITIZE_ADDRESS__)
#define PARSE_STACK ((size_t)2 << 20)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARSE_STACK ((size_t)2 << 20)
#endif
#endif
#ifndef PARSE_STACK
#define PARSE_STACK ((size_t)256 << 10)
#endif

typedef struct max_depth_job {
  const char *text;
  size_t len;
  leir_status parsed, checked, listed;
  size_t candidates, applied, results_checked; /* of the strategy candidates */
  char message[256]; /* the thread's last error */
} max_depth_job;

static void *parse_and_check(void *arg) {
  max_depth_job *j = arg;
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.max_depth = 1000;
  leir_program *p = NULL;
  j->parsed = leir_program_parse(&p, j->text, j->len, &o);
  if (j->parsed == LEIR_OK) {
    leir_diagnostics *d = NULL;
    j->checked = leir_program_check(p, NULL, &d);
    leir_diagnostics_free(d);
  }
  /* every strategy's candidates, each applied and its result checked (the
   * subscript analyses of the strategies walk the same deep trees) */
  if (j->checked == LEIR_OK) {
    leir_candidates *c = NULL;
    j->listed = leir_candidates_list(&c, p, NULL);
    j->candidates = leir_candidates_count(c);
    for (size_t i = 0; i < j->candidates; i++) {
      leir_program *q = NULL;
      if (leir_candidates_apply(&q, c, i) != LEIR_OK) continue;
      j->applied++;
      leir_diagnostics *d = NULL;
      if (leir_program_check(q, NULL, &d) == LEIR_OK) j->results_checked++;
      leir_diagnostics_free(d);
      leir_program_free(q);
    }
    leir_candidates_free(c);
  }
  snprintf(j->message, sizeof j->message, "%s", leir_error_last()->message);
  leir_program_free(p);
  return NULL;
}

START_TEST(test_max_depth_programs_fit_a_256k_thread_stack) {
  static const struct {
    const char *prefix, *opener, *core, *closer, *suffix;
    int levels; /* tree levels per repetition: 1 or 2 */
  } shapes[] = {
      {"", "L^{1}_{v%d=0}[", "C^{f64,g}=1;", "];", "", 1}, /* %d: the level */
      {"L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{", "(1+", "a", ")", "-494};];", 2},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{", "(", "a", "+1)", "-494};];", 2},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{", "-(", "a", ")", "+1};];", 2},
      {"L^{2}_{a=0}[E^{i64,g}_{a}=a;C^{f64,g}_{a}=A^{f64,g}_{", "E^{i64,g}_{", "a", "}", "};];", 1},
      {"L^{2}_{a=0}L^{3}_{c=0}[C^{f64,g}_{a}=", "if_then_else(a<1,", "a", ",c)", ";];", 1},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=if_then_else(", "(a<1)&(", "a<2", ")", ",A^{f64,g}_{a},0);];", 2},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=", "max(", "a", ",1)", ";];", 1},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=", "-", "a", "", ";];", 1},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+", "(", "A^{f64,g}_{a}", ")", ";];", 1},
  };
  size_t cap = 1 << 20;
  char *text = malloc(cap);
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    /* as deep as max_depth=1000 allows with the prefix's own levels */
    int levels = 990 / shapes[k].levels;
    int n = snprintf(text, cap, "%s", shapes[k].prefix);
    for (int i = 0; i < levels; i++)
      n += strstr(shapes[k].opener, "%d") ? snprintf(text + n, cap - (size_t)n, shapes[k].opener, i)
                                          : snprintf(text + n, cap - (size_t)n, "%s", shapes[k].opener);
    n += snprintf(text + n, cap - (size_t)n, "%s", shapes[k].core);
    for (int i = 0; i < levels; i++)
      n += snprintf(text + n, cap - (size_t)n, "%s", shapes[k].closer);
    n += snprintf(text + n, cap - (size_t)n, "%s", shapes[k].suffix);
    max_depth_job job = {text,      (size_t)n, LEIR_ERR_INTERNAL, LEIR_ERR_INTERNAL,
                         LEIR_ERR_INTERNAL, 0,         0,                 0,
                         ""};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    ck_assert_int_eq(pthread_attr_setstacksize(&attr, PARSE_STACK), 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, &attr, parse_and_check, &job), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
    ck_assert_msg(job.parsed == LEIR_OK, "shape %zu: %s (%s)", k, leir_status_name(job.parsed),
                  job.message);
    /* nests beyond the loop limit fail the check (limit.depth); the others
     * are valid programs */
    ck_assert_msg(job.checked == (k == 0 ? LEIR_ERR_LIMIT : LEIR_OK), "shape %zu: %s (%s)", k,
                  leir_status_name(job.checked), job.message);
    if (k == 0) continue;
    ck_assert_msg(job.listed == LEIR_OK && job.candidates > 0, "shape %zu: %s, %zu candidates (%s)",
                  k, leir_status_name(job.listed), job.candidates, job.message);
    ck_assert_msg(job.applied == job.candidates && job.results_checked == job.candidates,
                  "shape %zu: %zu candidates, %zu applied, %zu results check", k, job.candidates,
                  job.applied, job.results_checked);
  }
  free(text);
}
END_TEST

static Suite *parse_suite(void) {
  Suite *s = suite_create("parse");
  TCase *tc = tcase_create("precedence");
  tcase_add_test(tc, test_power_binds_tighter_than_unary_minus);
  tcase_add_test(tc, test_power_is_right_associative);
  tcase_add_test(tc, test_arithmetic_is_left_associative);
  tcase_add_test(tc, test_chained_comparisons);
  tcase_add_test(tc, test_and_or_bind_looser_than_comparisons);
  tcase_add_test(tc, test_calls_and_nary_max_min);
  tcase_add_test(tc, test_indirect_and_nested_indices);
  suite_add_tcase(s, tc);
  TCase *nests = tcase_create("nests");
  tcase_add_test(nests, test_nested_nests);
  tcase_add_test(nests, test_nests_without_headers);
  tcase_add_test(nests, test_loop_kinds_and_bound_names);
  tcase_add_test(nests, test_clone_is_deep_and_independent);
  suite_add_tcase(s, nests);
  TCase *bad = tcase_create("malformed");
  tcase_add_test(bad, test_long_number_literal_is_rejected);
  tcase_add_test(bad, test_reference_malformed_programs_are_rejected);
  tcase_add_test(bad, test_failed_parse_leaves_output_null_and_reports_argument_errors);
  suite_add_tcase(s, bad);
  TCase *stack = tcase_create("stack");
  tcase_add_test(stack, test_max_depth_programs_fit_a_256k_thread_stack);
  suite_add_tcase(s, stack);
  return s;
}

int main(void) { return test_run_suite(parse_suite()); }
