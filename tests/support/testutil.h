/* Helpers shared by the Check suites. */
#ifndef LEIR_TESTUTIL_H
#define LEIR_TESTUTIL_H

#include <check.h>
#include <stddef.h>

#include "leir/leir.h"

/* Path of a file under tests/data (from $LEIR_TEST_DATA); static buffer. */
const char *test_data_path(const char *name);
/* Whole file, NUL-terminated (malloc'd); aborts the test if unreadable. */
char *test_read_file(const char *path, size_t *len);
/* Parses strict LEIR text or fails the test with the parser's message. */
leir_program *test_parse(const char *text);
/* Canonical text (malloc'd). */
char *test_print(const leir_program *p);
/* Runs a suite (CK_FORK as configured) and returns the process exit code. */
int test_run_suite(Suite *s);

#endif
