#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *test_data_path(const char *name) {
  static char buf[4096];
  const char *dir = getenv("LEIR_TEST_DATA");
  snprintf(buf, sizeof buf, "%s/%s", dir ? dir : "tests/data", name);
  return buf;
}

char *test_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(buf);
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  ck_assert_uint_eq(got, (size_t)n);
  buf[n] = '\0';
  if (len) *len = (size_t)n;
  return buf;
}

leir_program *test_parse(const char *text) {
  leir_program *p = NULL;
  leir_status st = leir_program_parse(&p, text, strlen(text), NULL);
  ck_assert_msg(st == LEIR_OK, "parse failed at %u:%u: %s\n  in: %s", leir_error_last()->line,
                leir_error_last()->column, leir_error_last()->message, text);
  return p;
}

char *test_print(const leir_program *p) {
  char *out = NULL;
  ck_assert_int_eq(leir_program_print(p, 0, &out, NULL), LEIR_OK);
  return out;
}

int test_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
