/* Helpers shared by the Check suites. */
#ifndef LEIR_TESTUTIL_H
#define LEIR_TESTUTIL_H

#include <check.h>
#include <stddef.h>

#include "catalogue.h"
#include "jsonl.h"
#include "leir/leir.h"

/* Path of a file under tests/data (from $LEIR_TEST_DATA); static buffer. */
const char *test_data_path(const char *name);
/* Whole file, NUL-terminated (malloc'd); aborts the test if unreadable. */
char *test_read_file(const char *path, size_t *len);
/* What the leir tool did: its exit status and its whole stdout and stderr
 * (malloc'd; free with test_tool_result_free). */
typedef struct test_tool_result {
  int status;
  char *out, *err;
} test_tool_result;
/* Runs $LEIR_TOOL with the NULL-terminated args, stdin from /dev/null,
 * stdout and stderr through the files DIR/stdout and DIR/stderr; fails the
 * test when the tool cannot be started or does not exit normally. */
test_tool_result test_run_tool(const char *dir, const char *const *args);
void test_tool_result_free(test_tool_result *r);
/* Opens tests/data/NAME (a .jsonl corpus file); fails the test if absent. */
jsonl_file *test_corpus_open(const char *name);
/* Parses strict LEIR text or fails the test with the parser's message. */
leir_program *test_parse(const char *text);
/* Same, with parse flags (LEIR_PARSE_LENIENT). */
leir_program *test_parse_flags(const char *text, uint32_t flags);
/* Canonical text (malloc'd; free with leir_free). */
char *test_print(const leir_program *p);
/* Pretty text (malloc'd; free with leir_free). */
char *test_print_pretty(const leir_program *p);
/* Asserts that parsing `text` fails with `status` at line:col, with the
 * given rule and a message containing `msg_part` (NULL: any message). */
void test_expect_parse_error(const char *text, uint32_t flags, leir_status status, uint32_t line,
                             uint32_t col, const char *rule, const char *msg_part);
/* Sets a signature from a compact spec: "A:f64:2x8,C:f64:8 -> D:f64:2" (scalars:
 * "G:f64:" ). Fails the test when the library rejects it. */
void test_set_signature(leir_program *p, const char *spec);
/* The expression as an S-expression, built with the public walk API:
 * numbers as written, "inf", names, Name[i,j] for tensors, (paren x),
 * (neg x), (+ a b), (max a b c), (cmp a < b <= c), (& a b), (| a b).
 * Static buffer, overwritten by the next call. */
const char *test_sexpr(const leir_program *p, const leir_expr *e);
/* "B^{2}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=RHS;];": a one-equation program
 * around a right-hand side (loops tx < 2, a < 4; RHS starts at column 42).
 * Static buffer, overwritten by the next call. */
const char *test_wrap_rhs(const char *rhs);
/* Parses test_wrap_rhs(rhs), compares its right side with `sexpr`
 * (test_sexpr form) and checks that it prints back byte for byte. */
void test_expect_tree(const char *rhs, const char *sexpr);
/* Right-hand side of equation `item` of top-level nest `nest`. */
const leir_expr *test_rhs(const leir_program *p, size_t nest, size_t item);
/* Runs a suite (CK_FORK as configured) and returns the process exit code. */
int test_run_suite(Suite *s);

#endif
