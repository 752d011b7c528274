/*
 * Lexical level of LEIR (spec/leir.md §1.1-§1.2). The parser is
 * scannerless, so tokens are observed through what the parser builds:
 * number lexemes, multi-character operators, identifiers versus function
 * names versus `inf`, and where whitespace is (not) accepted.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

START_TEST(test_number_lexemes_are_kept_as_written) {
  static const char *const lexemes[] = {"0",      "16384", "1e-05", "1.0e-5", "0.7978845608028654",
                                        "1.0",    "0.01",  "2.5e+3", "1e5",   "007",
                                        "3.14159265358979323846264338327950288"};
  for (size_t i = 0; i < sizeof lexemes / sizeof *lexemes; i++) {
    leir_program *p = test_parse(test_wrap_rhs(lexemes[i]));
    const leir_expr *e = test_rhs(p, 0, 0);
    ck_assert_int_eq(leir_expr_get_kind(e), LEIR_EXPR_NUMBER);
    size_t len;
    const char *lex = leir_expr_lexeme(e, &len);
    ck_assert_uint_eq(len, strlen(lexemes[i]));
    ck_assert_int_eq(memcmp(lex, lexemes[i], len), 0);
    char *out = test_print(p);
    ck_assert_str_eq(out, test_wrap_rhs(lexemes[i]));
    leir_free(out);
    leir_program_free(p);
  }
}
END_TEST

START_TEST(test_number_values) {
  leir_program *p = test_parse(test_wrap_rhs("max(1e-05,2.5e+3,007)"));
  const leir_expr *e = test_rhs(p, 0, 0);
  ck_assert_double_eq_tol(leir_expr_number(leir_expr_child(e, 0)), 1e-5, 1e-20);
  ck_assert_double_eq(leir_expr_number(leir_expr_child(e, 1)), 2500.0);
  ck_assert_double_eq(leir_expr_number(leir_expr_child(e, 2)), 7.0);
  /* not a number node: no lexeme, value 0 */
  size_t len = 99;
  ck_assert_ptr_null(leir_expr_lexeme(e, &len));
  ck_assert_uint_eq(len, 0);
  ck_assert_double_eq(leir_expr_number(e), 0.0);
  leir_program_free(p);
}
END_TEST

START_TEST(test_exponent_needs_digits) {
  /* "2e" is the number 2 followed by a stray 'e' */
  test_expect_parse_error(test_wrap_rhs("2e"), 0, LEIR_ERR_PARSE, 1, 43, "parse.expected",
                          "expected ';' after the equation, found 'e'");
  test_expect_parse_error(test_wrap_rhs("2e+"), 0, LEIR_ERR_PARSE, 1, 43, "parse.expected", "found 'e'");
  test_expect_parse_error(test_wrap_rhs("1."), 0, LEIR_ERR_PARSE, 1, 44, "parse.number",
                          "expected digits after '.'");
  test_expect_parse_error(test_wrap_rhs(".5"), 0, LEIR_ERR_PARSE, 1, 42, "parse.expected",
                          "expected a value");
}
END_TEST

START_TEST(test_two_character_operators) {
  test_expect_tree("a**2", "(** a 2)");
  test_expect_tree("a*2", "(* a 2)");
  test_expect_tree("a//2", "(// a 2)");
  test_expect_tree("a/2", "(/ a 2)");
  test_expect_tree("a%2", "(% a 2)");
  test_expect_tree("if_then_else(a<=2,1,0)", "(if_then_else (cmp a <= 2) 1 0)");
  test_expect_tree("if_then_else(a<2,1,0)", "(if_then_else (cmp a < 2) 1 0)");
  test_expect_tree("if_then_else(a>=2,1,0)", "(if_then_else (cmp a >= 2) 1 0)");
  test_expect_tree("if_then_else(a>2,1,0)", "(if_then_else (cmp a > 2) 1 0)");
  test_expect_tree("if_then_else(a==2,1,0)", "(if_then_else (cmp a == 2) 1 0)");
  test_expect_tree("if_then_else(a!=2,1,0)", "(if_then_else (cmp a != 2) 1 0)");
  /* "* *" is not "**", even in lenient mode */
  test_expect_parse_error(test_wrap_rhs("a* *2"), LEIR_PARSE_LENIENT, LEIR_ERR_PARSE, 1, 45,
                          "parse.expected", "found '*'");
  /* "=" alone is not a comparison */
  test_expect_parse_error(test_wrap_rhs("if_then_else(a=2,1,0)"), 0, LEIR_ERR_PARSE, 1, 56,
                          "parse.expected", "expected ',' or ')' in the argument list");
}
END_TEST

START_TEST(test_index_operators) {
  leir_program *p = test_parse("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a//2,a%2}=A^{f64,g}_{tx*8+a};];");
  const leir_nest *n = leir_program_nest(p, 0);
  const leir_expr *lhs = leir_equation_lhs(leir_nest_item_equation(n, 0));
  ck_assert_str_eq(test_sexpr(p, lhs), "C[tx,(// a 2),(% a 2)]");
  ck_assert_str_eq(test_sexpr(p, test_rhs(p, 0, 0)), "A[(+ (* tx 8) a)]");
  leir_program_free(p);
  /* "/" and "**" are value operators only */
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}_{tx/2}=1;];", 0, LEIR_ERR_PARSE, 1, 27,
                          "parse.index", "'/' is not allowed in an index");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}_{tx**2}=1;];", 0, LEIR_ERR_PARSE, 1, 27,
                          "parse.index", "'**' is not allowed in an index");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}_{1.5}=1;];", 0, LEIR_ERR_PARSE, 1, 25,
                          "parse.index", "indices are integers");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}_{1e3}=1;];", 0, LEIR_ERR_PARSE, 1, 25,
                          "parse.index", "indices are integers");
}
END_TEST

START_TEST(test_identifiers_functions_and_inf) {
  /* function names are words only when followed by "(" is not needed:
   * a longer identifier is a loop variable */
  leir_program *p = test_parse(
      "L^{2}_{expa=0}L^{2}_{infx=0}L^{2}_{max_1=0}[C^{f64,g}_{expa,infx,max_1}=expa+infx+max_1;];");
  ck_assert_str_eq(test_sexpr(p, test_rhs(p, 0, 0)), "(+ (+ expa infx) max_1)");
  leir_program_free(p);
  test_expect_tree("-inf", "(neg inf)");
  test_expect_tree("exp(a)+log(a)+sqrt(a)+abs(a)+erf(a)",
             "(+ (+ (+ (+ (exp a) (log a)) (sqrt a)) (abs a)) (erf a))");
  test_expect_tree("max(a,0)", "(max a 0)");
  test_expect_tree("min(a,0)", "(min a 0)");
  /* inf is not a function, unknown names are not functions */
  test_expect_parse_error(test_wrap_rhs("inf(1)"), 0, LEIR_ERR_PARSE, 1, 45, "parse.expected", "found '('");
  test_expect_parse_error(test_wrap_rhs("tanh(a)"), 0, LEIR_ERR_PARSE, 1, 42, "parse.function",
                          "unknown function 'tanh'");
  /* reserved words cannot name loops or appear as indices */
  test_expect_parse_error("L^{2}_{max=0}[C^{f64,g}=1;];", 0, LEIR_ERR_PARSE, 1, 8,
                          "parse.loop-var", "'max' is reserved");
  test_expect_parse_error("L^{2}_{inf=0}[C^{f64,g}=1;];", 0, LEIR_ERR_PARSE, 1, 8,
                          "parse.loop-var", "'inf' is reserved");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}_{exp}=1;];", 0, LEIR_ERR_PARSE, 1, 25,
                          "parse.index", "'exp' cannot appear in an index");
}
END_TEST

START_TEST(test_tensor_names) {
  leir_program *p = test_parse("B^{2}_{tx=0}[Aqz^{f64,g}_{tx}=Ca^{f64,g}_{tx};];");
  ck_assert_str_eq(test_sexpr(p, test_rhs(p, 0, 0)), "Ca[tx]");
  leir_program_free(p);
  static const char *const bad = "LPVUBT";
  for (const char *c = bad; *c; c++) {
    char src[64];
    snprintf(src, sizeof src, "B^{2}_{tx=0}[%cx^{f64,g}=1;];", *c);
    test_expect_parse_error(src, 0, LEIR_ERR_PARSE, 1, 14, "parse.tensor-name",
                            "tensor names may not start with");
  }
  /* two capitals: "A" then a stray "B" */
  test_expect_parse_error("B^{2}_{tx=0}[AB^{f64,g}=1;];", 0, LEIR_ERR_PARSE, 1, 15,
                          "parse.expected", "expected '^{' after the tensor name, found 'B'");
}
END_TEST

START_TEST(test_dtypes_and_scopes) {
  static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i8",
                                       "i16", "i32",  "i64", "u8",  "bool"};
  for (int d = 0; d < LEIR_DTYPE_COUNT; d++) {
    char src[128];
    snprintf(src, sizeof src, "B^{2}_{tx=0}[C^{%s,s}_{tx}=D^{%s,l}_{tx};];", dtypes[d], dtypes[d]);
    leir_program *p = test_parse(src);
    const leir_expr *rhs = test_rhs(p, 0, 0);
    ck_assert_int_eq(leir_expr_dtype(rhs), (leir_dtype)d);
    ck_assert_int_eq(leir_expr_scope(rhs), LEIR_SCOPE_LOCAL);
    char *out = test_print(p);
    ck_assert_str_eq(out, src);
    leir_free(out);
    leir_program_free(p);
  }
  test_expect_parse_error("B^{2}_{tx=0}[C^{f65,g}=1;];", 0, LEIR_ERR_PARSE, 1, 17,
                          "parse.expected", "expected a dtype");
  test_expect_parse_error("B^{2}_{tx=0}[C^{u16,g}=1;];", 0, LEIR_ERR_PARSE, 1, 17,
                          "parse.expected", "expected a dtype");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,x}=1;];", 0, LEIR_ERR_PARSE, 1, 21,
                          "parse.expected", "expected a scope (g, s or l), found 'x'");
  /* the dtype is the longest run of letters and digits */
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64g}=1;];", 0, LEIR_ERR_PARSE, 1, 17,
                          "parse.expected", "expected a dtype");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64;g}=1;];", 0, LEIR_ERR_PARSE, 1, 20,
                          "parse.expected", "expected ',' between dtype and scope");
}
END_TEST

static const char *const softmax =
    "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/"
    "E^{f64,g}_{tx};];";

START_TEST(test_lenient_accepts_whitespace_between_tokens) {
  const char *spaced =
      "B^{2}_{tx=0} L^{8}_{a=0}\t[ D^{f64,g}_{ tx } = max( D^{f64,g}_{tx} , A^{f64,g}_{tx,a} ) ; ] ;\r\n"
      "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx} + exp(A^{f64,g}_{tx,a} - D^{f64,g}_{tx});];\n"
      "\n"
      "  B^{2}_{tx=0}\n"
      "  L^{8}_{a=0}\n"
      "  [C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})\n"
      "     / E^{f64,g}_{tx};\n"
      "  ];\n";
  leir_program *p = test_parse_flags(spaced, LEIR_PARSE_LENIENT);
  char *out = test_print(p);
  ck_assert_str_eq(out, softmax);
  leir_free(out);
  /* positions refer to the lenient text: the third nest starts on line 4 */
  leir_position pos = leir_nest_position(p, leir_program_nest(p, 2));
  ck_assert_uint_eq(pos.line, 4);
  ck_assert_uint_eq(pos.column, 3);
  leir_program_free(p);
}
END_TEST

START_TEST(test_lenient_error_positions_count_lines) {
  /* CR LF line ends: CR is whitespace, LF starts a line */
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}_{tx}=1;];\r\n\tL^{2}_{a=1}[C^{f64,g}_{a}=1;];",
                          LEIR_PARSE_LENIENT, LEIR_ERR_PARSE, 2, 11, "parse.loop-start",
                          "a loop must start at 0");
  test_expect_parse_error("B^{2}_{tx=0}\n[\nC^{f64,g}_{tx}=1\n];", LEIR_PARSE_LENIENT,
                          LEIR_ERR_PARSE, 4, 1, "parse.expected", "expected ';' after the equation, found ']'");
}
END_TEST

START_TEST(test_whitespace_inside_tokens_is_rejected_even_when_lenient) {
  test_expect_parse_error("B ^{2}_{tx=0}[C^{f64,g}=1;];", LEIR_PARSE_LENIENT, LEIR_ERR_PARSE, 1, 1,
                          "parse.expected", "expected a loop header");
  test_expect_parse_error("B^{2}_{tx=0}[C^ {f64,g}=1;];", LEIR_PARSE_LENIENT, LEIR_ERR_PARSE, 1,
                          16, "parse.expected", "expected '{' after '^', found whitespace");
  test_expect_parse_error("L^ {2}_{a=0}[C^{f64,g}=1;];", LEIR_PARSE_LENIENT, LEIR_ERR_PARSE, 1, 3,
                          "parse.expected", "expected '{' after '^', found whitespace");
  test_expect_parse_error("B^{2}_{t x=0}[C^{f64,g}=1;];", LEIR_PARSE_LENIENT, LEIR_ERR_PARSE, 1,
                          8, "parse.bound-var", NULL);
  test_expect_parse_error("B^{2}_{tx=0}[C^{f 64,g}=1;];", LEIR_PARSE_LENIENT, LEIR_ERR_PARSE, 1,
                          17, "parse.expected", "expected a dtype");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}=1. 5;];", LEIR_PARSE_LENIENT, LEIR_ERR_PARSE,
                          1, 26, "parse.number", NULL);
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}=e xp(1);];", LEIR_PARSE_LENIENT,
                          LEIR_ERR_PARSE, 1, 26, "parse.expected", "found 'x'");
}
END_TEST

START_TEST(test_strict_rejects_whitespace) {
  test_expect_parse_error("B^{2}_{tx=0} [C^{f64,g}=1;];", 0, LEIR_ERR_PARSE, 1, 13,
                          "parse.expected", "found whitespace (allowed only in lenient mode)");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}=1;];\n", 0, LEIR_ERR_PARSE, 1, 28,
                          "parse.expected", "found a newline");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}=1\t;];", 0, LEIR_ERR_PARSE, 1, 25,
                          "parse.expected", "found whitespace");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}=1;];\r", 0, LEIR_ERR_PARSE, 1, 28,
                          "parse.expected", "found whitespace");
  /* the same texts are fine when lenient */
  leir_program *p = test_parse_flags("B^{2}_{tx=0} [C^{f64,g}=1\t;];\r\n", LEIR_PARSE_LENIENT);
  char *out = test_print(p);
  ck_assert_str_eq(out, "B^{2}_{tx=0}[C^{f64,g}=1;];");
  leir_free(out);
  leir_program_free(p);
}
END_TEST

START_TEST(test_unusual_bytes_are_described) {
  static const char src[] = "B^{2}_{tx=0}[C^{f64,g}=\x01;];";
  test_expect_parse_error(src, 0, LEIR_ERR_PARSE, 1, 24, "parse.expected", "found byte 0x01");
  test_expect_parse_error("B^{2}_{tx=0}[C^{f64,g}=\xc3\xa9;];", 0, LEIR_ERR_PARSE, 1, 24,
                          "parse.expected", "found byte 0xc3");
  /* a NUL byte inside the given length */
  static const char nul[] = "B^{2}_{tx=0}[C^{f64,g}=1;\0];";
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, nul, sizeof nul - 1, NULL), LEIR_ERR_PARSE);
  ck_assert_ptr_null(p);
  ck_assert_uint_eq(leir_error_last()->column, 26);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "found a NUL byte"));
}
END_TEST

static Suite *lexer_suite(void) {
  Suite *s = suite_create("lexer");
  TCase *tc = tcase_create("tokens");
  tcase_add_test(tc, test_number_lexemes_are_kept_as_written);
  tcase_add_test(tc, test_number_values);
  tcase_add_test(tc, test_exponent_needs_digits);
  tcase_add_test(tc, test_two_character_operators);
  tcase_add_test(tc, test_index_operators);
  tcase_add_test(tc, test_identifiers_functions_and_inf);
  tcase_add_test(tc, test_tensor_names);
  tcase_add_test(tc, test_dtypes_and_scopes);
  suite_add_tcase(s, tc);
  TCase *ws = tcase_create("whitespace");
  tcase_add_test(ws, test_lenient_accepts_whitespace_between_tokens);
  tcase_add_test(ws, test_lenient_error_positions_count_lines);
  tcase_add_test(ws, test_whitespace_inside_tokens_is_rejected_even_when_lenient);
  tcase_add_test(ws, test_strict_rejects_whitespace);
  tcase_add_test(ws, test_unusual_bytes_are_described);
  suite_add_tcase(s, ws);
  return s;
}

int main(void) { return test_run_suite(lexer_suite()); }
