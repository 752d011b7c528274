/*
 * The Step-TP user prompt (dataset/prompt.c) and the parser of LLM answers
 * (dataset/answer.c): exact prompt wording, both closing-tag spellings, JSON
 * and Python literals, the reference's repairs, and a reason for every kind
 * of malformed answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "prompt.h"
#include "testutil.h"

static const char relu[] = "L^{16}_{a=0}L^{16384}_{c=0}[C^{f16,g}_{a,c}=max(A^{f16,g}_{a,c},0);];";

START_TEST(test_prompt_single_is_the_reference_wording) {
  leir_program *p = test_parse(relu);
  test_set_signature(p, "A:f16:16x16384 -> C:f16:16x16384");
  char *out = NULL;
  size_t len = 0;
  ck_assert_int_eq(leir__prompt_build(p, "ReLU", 1, &out, &len), LEIR_OK);
  const char *want =
      "Give the following IR of ReLU: "
      "'L^{16}_{a=0}L^{16384}_{c=0}[C^{f16,g}_{a,c}=max(A^{f16,g}_{a,c},0);];', where the known "
      "variables are 'A' with the dtype torch.float16 and shape [16, 16384], and 'C' with the "
      "dtype torch.float16 and shape [16, 16384]. Do not change the names, shapes or dtypes of "
      "these known variables in the IR. \nPlease give me a **numerically equivalent transformed** "
      "IR that produces exactly the same outputs for any floating-point inputs (bitwise "
      "identical), and also provide applied strategy in this transformed IR. \n Return the answer "
      "**only** as a valid JSON object with the following keys:'transformed_IR', "
      "'applied_strategies'.";
  ck_assert_str_eq(out, want);
  ck_assert_uint_eq(len, strlen(want));
  const char *ir;
  size_t ir_len;
  ck_assert(leir__prompt_extract_ir(out, len, &ir, &ir_len));
  ck_assert_uint_eq(ir_len, strlen(relu));
  ck_assert(memcmp(ir, relu, ir_len) == 0);
  leir_free(out);
  leir_program_free(p);
}
END_TEST

START_TEST(test_prompt_multi_asks_for_at_least_n) {
  leir_program *p = test_parse("[C^{f64,g}=A^{f64,g}+D^{i32,g}_{0};];");
  test_set_signature(p, "A:f64:,D:i32:1 -> C:f64:");
  char *out = NULL;
  ck_assert_int_eq(leir__prompt_build(p, "M", 3, &out, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(out, "known variables are 'A' with the dtype torch.float64 and "
                                    "shape [], 'D' with the dtype torch.int32 and shape [1], and "
                                    "'C' with the dtype torch.float64 and shape []. Do not"));
  ck_assert_ptr_nonnull(strstr(
      out, "IR. \nPlease give me at least 3 different **numerically equivalent transformed** IRs "
           "that produces exactly the same outputs for any floating-point inputs (bitwise "
           "identical), and also provide applied strategy for each transformed IR. \n Return the "
           "answer list **only** as a valid JSON object, and each entry with the following keys: "
           "'idx', 'transformed_IR', 'applied_strategies'."));
  leir_free(out);
  leir_program_free(p);
}
END_TEST

START_TEST(test_prompt_infers_a_missing_signature_and_names) {
  leir_program *p = test_parse(relu);
  char *out = NULL;
  ck_assert_int_eq(leir__prompt_build(p, NULL, 0, &out, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(out, "Give the following IR of Model: '"));
  ck_assert_ptr_nonnull(strstr(out, "'A' with the dtype torch.float16 and shape [16, 16384], and 'C'"));
  ck_assert_uint_eq(leir_program_signature_count(p), 0); /* the program is not changed */
  leir_free(out);
  ck_assert_str_eq(leir__torch_dtype(LEIR_BF16), "torch.bfloat16");
  ck_assert_str_eq(leir__torch_dtype(LEIR_BOOL), "torch.bool");
  ck_assert_ptr_null(leir__torch_dtype(LEIR_DTYPE_COUNT));
  ck_assert_int_eq(leir__prompt_build(NULL, NULL, 0, &out, NULL), LEIR_ERR_ARGUMENT);
  leir_program_free(p);
}
END_TEST

static leir__answer *parse_ok(const char *text) {
  leir__answer *a = NULL;
  leir__answer_reason r = LEIR__ANSWER_SYNTAX;
  leir_status st = leir__answer_parse(text, strlen(text), &a, &r);
  if (st != LEIR_OK) ck_abort_msg("rejected (%s): %s", leir_error_last()->rule, leir_error_last()->message);
  ck_assert_int_eq(r, LEIR__ANSWER_OK);
  return a;
}

static void expect_reason(const char *text, size_t len, leir__answer_reason want, const char *msg_part) {
  leir__answer *a = (leir__answer *)1;
  leir__answer_reason r = LEIR__ANSWER_OK;
  leir_status st = leir__answer_parse(text, len, &a, &r);
  ck_assert_msg(st == LEIR_ERR_PARSE, "accepted: %.*s", (int)(len > 200 ? 200 : len), text);
  ck_assert_ptr_null(a);
  ck_assert_msg(r == want, "reason %s, expected %s (%s)", leir__answer_reason_name(r),
                leir__answer_reason_name(want), leir_error_last()->message);
  char rule[64];
  snprintf(rule, sizeof rule, "answer.%s", leir__answer_reason_name(want));
  ck_assert_str_eq(leir_error_last()->rule, rule);
  if (msg_part)
    ck_assert_msg(strstr(leir_error_last()->message, msg_part), "message '%s' lacks '%s'",
                  leir_error_last()->message, msg_part);
}

START_TEST(test_answer_single_json_label) {
  leir__answer *a = parse_ok(
      "<think>Loop binding maps loops to threads. Under the given IR, the loop a is bound.</think>"
      "<answer>{\"transformed_IR\": \"B^{16}_{tx=0}[C^{f16,g}_{tx}=A^{f16,g}_{tx};];\", "
      "\"applied_strategy\": \"loop_binding\"}</answer>");
  ck_assert(!a->is_list);
  ck_assert_uint_eq(a->n_items, 1);
  ck_assert_str_eq(a->items[0].ir, "B^{16}_{tx=0}[C^{f16,g}_{tx}=A^{f16,g}_{tx};];");
  ck_assert_uint_eq(a->items[0].n_strategies, 1);
  ck_assert_str_eq(a->items[0].strategies[0], "loop_binding");
  ck_assert(a->flags & LEIR__ANSWER_HAD_THINK);
  ck_assert(!(a->flags & LEIR__ANSWER_BACKSLASH_TAG));
  ck_assert_uint_eq(a->think_len, strlen("Loop binding maps loops to threads. Under the given IR, the loop a is bound."));
  leir__answer_free(a);
}
END_TEST

START_TEST(test_answer_backslash_tags_and_python_list) {
  leir__answer *a = parse_ok(
      "<think>These 2 transformed IRs can be individually analyzed as follows: 0. x\n1. y<\\think>"
      "<answer>[{'idx': 0, 'transformed_IR': 'P^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];', "
      "'applied_strategy': 'loop_parallelization'}, {'idx': 1, 'transformed_IR': "
      "'V^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];', 'applied_strategy': 'loop_vectorization',}]"
      "<\\answer>");
  ck_assert(a->is_list);
  ck_assert_uint_eq(a->n_items, 2);
  ck_assert_uint_eq(a->n_ok, 2);
  ck_assert(a->flags & LEIR__ANSWER_BACKSLASH_TAG);
  ck_assert(a->items[1].has_idx);
  ck_assert_int_eq(a->items[1].idx, 1);
  ck_assert_str_eq(a->items[1].strategies[0], "loop_vectorization");
  leir__answer_free(a);
}
END_TEST

START_TEST(test_answer_plural_key_and_list_of_strategies) {
  leir__answer *a = parse_ok(
      "<think>t</think><answer>{'transformed_IR': r'[C^{f64,g}=A^{f64,g};];', "
      "'applied_strategies': ['loop reorder', \"loop_tiling\"]}</answer>");
  ck_assert(a->flags & LEIR__ANSWER_PLURAL_KEY);
  ck_assert_uint_eq(a->items[0].n_strategies, 2);
  ck_assert_str_eq(a->items[0].strategies[0], "loop reorder");
  char buf[32];
  leir__strategy_name_normalize(a->items[0].strategies[0], buf, sizeof buf);
  ck_assert_str_eq(buf, "loop_reorder");
  leir__strategy_name_normalize("  Expand-Log ", buf, sizeof buf);
  ck_assert_str_eq(buf, "expand_log");
  leir__answer_free(a);
}
END_TEST

START_TEST(test_answer_escapes_decode) {
  leir__answer *a = parse_ok(
      "<answer>{\"transformed_IR\": \"[C^{f64,g}=A^{f64,g}\\/2;];\\u00e9\\ud83d\\ude00\\x41\\101\", "
      "\"applied_strategy\": 'a' \"b\"}</answer>");
  ck_assert_str_eq(a->items[0].ir, "[C^{f64,g}=A^{f64,g}/2;];\xc3\xa9\xf0\x9f\x98\x80" "AA");
  ck_assert_str_eq(a->items[0].strategies[0], "ab");
  ck_assert(!(a->flags & LEIR__ANSWER_HAD_THINK));
  leir__answer_free(a);
  a = parse_ok("<answer>{'''transformed_IR''': '''x'y''', 'applied_strategy': 'k', 'idx': None,"
               " 'extra': (1, -2.5e3, True, null)}</answer>");
  ck_assert_str_eq(a->items[0].ir, "x'y");
  ck_assert(!a->items[0].has_idx);
  leir__answer_free(a);
}
END_TEST

START_TEST(test_answer_fallbacks_of_the_reference) {
  /* no answer block: the text after the last think tag, fences stripped */
  leir__answer *a = parse_ok(
      "<think>a</think>Here it is:\n```json\n{\"transformed_IR\": \"X\", \"applied_strategy\": "
      "\"s\"}\n```\n");
  ck_assert(a->flags & LEIR__ANSWER_NO_ANSWER_TAG);
  ck_assert_str_eq(a->items[0].ir, "X");
  leir__answer_free(a);
  /* prose and a literal, no fence */
  a = parse_ok("<think>a</think>The answer is {'transformed_IR': 'Y', 'applied_strategy': 's'} ok");
  ck_assert_str_eq(a->items[0].ir, "Y");
  leir__answer_free(a);
  /* a truncated list is cut at the last complete entry */
  a = parse_ok(
      "<think>a</think><answer>[{\"idx\": 0, \"transformed_IR\": \"P\", \"applied_strategy\": "
      "\"s\"}, {\"idx\": 1, \"transformed_IR\": \"Q");
  ck_assert(a->flags & LEIR__ANSWER_UNCLOSED);
  ck_assert(a->flags & LEIR__ANSWER_REPAIRED);
  ck_assert_uint_eq(a->n_items, 1);
  ck_assert_str_eq(a->items[0].ir, "P");
  leir__answer_free(a);
  /* bare entries with idx are wrapped in a list */
  a = parse_ok("<answer>{'idx': 0, 'transformed_IR': 'P', 'applied_strategy': 's'}, "
               "{'idx': 1, 'transformed_IR': 'Q', 'applied_strategy': 't'}</answer>");
  ck_assert(a->is_list);
  ck_assert_uint_eq(a->n_items, 2);
  leir__answer_free(a);
  /* a JSON-encoded string of the literal */
  a = parse_ok("<answer>\"{'transformed_IR': 'Z', 'applied_strategy': 's'}\"</answer>");
  ck_assert(a->flags & LEIR__ANSWER_STRING_WRAPPED);
  ck_assert_str_eq(a->items[0].ir, "Z");
  leir__answer_free(a);
  /* the think block may lack its opening tag (chat templates add it) */
  a = parse_ok("reasoning</think><answer>{'transformed_IR': 'Z', 'applied_strategy': 's'}</answer>");
  ck_assert_uint_eq(a->think_len, 9);
  leir__answer_free(a);
}
END_TEST

START_TEST(test_answer_list_keeps_bad_entries_with_reasons) {
  leir__answer *a = parse_ok(
      "<answer>[{'idx': 0, 'transformed_IR': 'P', 'applied_strategy': 's'}, 7, "
      "{'idx': 'one', 'transformed_IR': 'Q', 'applied_strategy': 's'}, {'transformed_IR': ''}]"
      "</answer>");
  ck_assert_uint_eq(a->n_items, 4);
  ck_assert_uint_eq(a->n_ok, 1);
  ck_assert_int_eq(a->items[1].reason, LEIR__ANSWER_NOT_OBJECT);
  ck_assert_int_eq(a->items[2].reason, LEIR__ANSWER_BAD_IDX);
  ck_assert_int_eq(a->items[3].reason, LEIR__ANSWER_BAD_IR);
  ck_assert_ptr_nonnull(strstr(a->items[1].message, "a number"));
  leir__answer_free(a);
}
END_TEST

START_TEST(test_answer_malformed_every_way) {
#define R(text, reason, part) expect_reason(text, sizeof text - 1, reason, part)
  R("", LEIR__ANSWER_EMPTY, NULL);
  R(" \n\t ", LEIR__ANSWER_EMPTY, NULL);
  R("<think>only thinking</think>", LEIR__ANSWER_NO_ANSWER, "no <answer> block");
  R("plain prose, no tags and no literal", LEIR__ANSWER_NO_ANSWER, "no dict or list");
  R("<think>unfinished thought", LEIR__ANSWER_NO_ANSWER, "no dict or list");
  R("<think>x</think><answer>  </answer>", LEIR__ANSWER_NO_ANSWER, "empty");
  R("<answer>{'transformed_IR', 'P'}</answer>", LEIR__ANSWER_SYNTAX, "expected ':' after a dict key");
  /* adjacent strings concatenate (Python), so a missing comma shows at the colon */
  R("<answer>{'transformed_IR': 'P' 'applied_strategy': 's'}</answer>", LEIR__ANSWER_SYNTAX,
    "expected ',' or '}' in the dict, found ':'");
  R("<answer>{'transformed_IR': 'P', 'applied_strategy': 's'</answer>", LEIR__ANSWER_SYNTAX,
    "not closed");
  R("<answer>{'transformed_IR': 'P, 'applied_strategy': 's'}</answer>", LEIR__ANSWER_SYNTAX, NULL);
  R("<answer>{'transformed_IR': 'P', 'applied_strategy': 's'} trailing</answer>",
    LEIR__ANSWER_SYNTAX, "after the value");
  R("<answer>{'transformed_IR': 'P', 'applied_strategy': undefined}</answer>", LEIR__ANSWER_SYNTAX,
    "the word 'undefined'");
  R("<answer>{'transformed_IR': '\\u12', 'applied_strategy': 's'}</answer>", LEIR__ANSWER_SYNTAX,
    "\\u escape");
  R("<answer>{'transformed_IR': '\\ud800', 'applied_strategy': 's'}</answer>", LEIR__ANSWER_SYNTAX,
    "surrogate");
  R("<answer>{'transformed_IR': 'P', 'applied_strategy': 1e}</answer>", LEIR__ANSWER_SYNTAX,
    "invalid number");
  R("<answer>42</answer>", LEIR__ANSWER_NOT_OBJECT, "a number");
  R("<answer>'just text'</answer>", LEIR__ANSWER_NOT_OBJECT, "a string");
  R("<answer>[]</answer>", LEIR__ANSWER_EMPTY_LIST, NULL);
  R("<answer>{'applied_strategy': 's'}</answer>", LEIR__ANSWER_MISSING_IR, "transformed_IR");
  R("<answer>{'transformed_IR': 3, 'applied_strategy': 's'}</answer>", LEIR__ANSWER_BAD_IR, "a number");
  R("<answer>{'transformed_IR': 'P'}</answer>", LEIR__ANSWER_MISSING_STRATEGY, NULL);
  R("<answer>{'transformed_IR': 'P', 'applied_strategy': []}</answer>", LEIR__ANSWER_BAD_STRATEGY,
    "empty list");
  R("<answer>{'transformed_IR': 'P', 'applied_strategy': ['a', 2]}</answer>",
    LEIR__ANSWER_BAD_STRATEGY, NULL);
  R("<answer>{'transformed_IR': 'P\\x00', 'applied_strategy': 's'}</answer>", LEIR__ANSWER_BAD_TEXT, NULL);
  R("<answer>{'transformed_IR': 'P\xff', 'applied_strategy': 's'}</answer>", LEIR__ANSWER_BAD_TEXT, NULL);
  R("<answer>[1, 2]</answer>", LEIR__ANSWER_NOT_OBJECT, "entry 0");
#undef R
  /* NUL bytes in the text are just bytes */
  static const char nul[] = "<answer>{'transformed_IR': 'P', \0 'applied_strategy': 's'}</answer>";
  expect_reason(nul, sizeof nul - 1, LEIR__ANSWER_SYNTAX, "0x00");
  /* the position of a syntax error is the line and column in the answer */
  static const char two_lines[] = "<think>a\nb</think>\n<answer>{'transformed_IR': 'P',, }</answer>";
  expect_reason(two_lines, sizeof two_lines - 1, LEIR__ANSWER_SYNTAX, NULL);
  ck_assert_uint_eq(leir_error_last()->line, 3);
  ck_assert_uint_eq(leir_error_last()->column, 32); /* the second comma */
}
END_TEST

START_TEST(test_answer_deep_and_large_inputs_are_bounded) {
  size_t n = 200000;
  char *s = malloc(n + 20);
  memcpy(s, "<answer>", 8);
  memset(s + 8, '[', n);
  expect_reason(s, n + 8, LEIR__ANSWER_TOO_DEEP, "deeper than 64");
  /* a long valid list: every entry is read */
  size_t cap = 1 << 20, len = 0;
  char *big = malloc(cap);
  len += (size_t)sprintf(big + len, "<answer>[");
  for (int i = 0; i < 3000; i++)
    len += (size_t)sprintf(big + len, "%s{'idx': %d, 'transformed_IR': 'P%d', 'applied_strategy': 's'}",
                           i ? ", " : "", i, i);
  len += (size_t)sprintf(big + len, "]</answer>");
  leir__answer *a = NULL;
  ck_assert_int_eq(leir__answer_parse(big, len, &a, NULL), LEIR_OK);
  ck_assert_uint_eq(a->n_ok, 3000);
  ck_assert_str_eq(a->items[2999].ir, "P2999");
  leir__answer_free(a);
  /* 100000 adjacent strings are joined once (not pairwise, which would copy
   * quadratically), and a backslash at the very end is an unterminated string */
  size_t k = 0, m = 100000;
  char *adj = malloc(m * 4 + 100);
  k += (size_t)sprintf(adj, "<answer>{'transformed_IR': ");
  for (size_t i = 0; i < m; i++) k += (size_t)sprintf(adj + k, "'a' ");
  k += (size_t)sprintf(adj + k, ", 'applied_strategy': 's'}</answer>");
  a = NULL;
  ck_assert_int_eq(leir__answer_parse(adj, k, &a, NULL), LEIR_OK);
  ck_assert_uint_eq(a->items[0].ir_len, m);
  leir__answer_free(a);
  free(adj);
  expect_reason("<answer>{'transformed_IR': 'P\\", 30, LEIR__ANSWER_SYNTAX, "unterminated string");
  /* every prefix of a valid answer ends cleanly */
  const char *full = "<think>c</think><answer>[{'idx': 0, 'transformed_IR': 'P', "
                     "'applied_strategy': 's'}, {'idx': 1, 'transformed_IR': 'Q', "
                     "'applied_strategy': 't'}]</answer>";
  for (size_t k = 0; k <= strlen(full); k++) {
    a = NULL;
    leir_status st = leir__answer_parse(full, k, &a, NULL);
    ck_assert(st == LEIR_OK || st == LEIR_ERR_PARSE);
    ck_assert((st == LEIR_OK) == (a != NULL));
    leir__answer_free(a);
  }
  free(big);
  free(s);
}
END_TEST

static Suite *dataset_answer_suite(void) {
  Suite *s = suite_create("dataset_answer");
  TCase *tc = tcase_create("prompt");
  tcase_add_test(tc, test_prompt_single_is_the_reference_wording);
  tcase_add_test(tc, test_prompt_multi_asks_for_at_least_n);
  tcase_add_test(tc, test_prompt_infers_a_missing_signature_and_names);
  suite_add_tcase(s, tc);
  tc = tcase_create("answer");
  tcase_add_test(tc, test_answer_single_json_label);
  tcase_add_test(tc, test_answer_backslash_tags_and_python_list);
  tcase_add_test(tc, test_answer_plural_key_and_list_of_strategies);
  tcase_add_test(tc, test_answer_escapes_decode);
  tcase_add_test(tc, test_answer_fallbacks_of_the_reference);
  tcase_add_test(tc, test_answer_list_keeps_bad_entries_with_reasons);
  tcase_add_test(tc, test_answer_malformed_every_way);
  tcase_add_test(tc, test_answer_deep_and_large_inputs_are_bounded);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(dataset_answer_suite()); }
