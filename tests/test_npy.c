/*
 * .npy files of `leir run --inputs/--outputs` (tools/leir/npy.c): round
 * trips for every dtype numpy has, and rejection of everything else
 * (versions, big-endian, Fortran order, shapes, sizes, truncation, bad
 * bools, malformed headers, random corruption) with a message, never a
 * crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/leir/npy.h"
#include "testutil.h"

static unsigned char *make(const char *header, const void *data, size_t bytes, size_t *len) {
  size_t h = strlen(header);
  unsigned char *f = malloc(10 + h + bytes + 1);
  memcpy(f, "\x93NUMPY\x01\x00", 8);
  f[8] = (unsigned char)(h & 255);
  f[9] = (unsigned char)(h >> 8);
  memcpy(f + 10, header, h);
  if (bytes) memcpy(f + 10 + h, data, bytes);
  *len = 10 + h + bytes;
  return f;
}

static void expect_reject(const char *header, const void *data, size_t bytes, leir_dtype dt,
                          const int64_t *shape, uint32_t rank, const char *msg) {
  size_t len;
  unsigned char *f = make(header, data, bytes, &len);
  char out[256], err[256] = "";
  ck_assert_int_eq(npy_parse(f, len, dt, shape, rank, out, err, sizeof err), -1);
  ck_assert_msg(strstr(err, msg) != NULL, "'%s' lacks '%s' (%s)", err, msg, header);
  free(f);
}

START_TEST(test_parse_and_reject) {
  static const int64_t s23[] = {2, 3};
  double v[6] = {1, 2, 3, 4, 5, 6}, out[6];
  size_t len;
  unsigned char *f =
      make("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }    \n", v, 48, &len);
  char err[256];
  ck_assert_int_eq(npy_parse(f, len, LEIR_F64, s23, 2, out, err, sizeof err), 0);
  ck_assert_mem_eq(out, v, sizeof v);
  /* truncated and over-long data */
  ck_assert_int_eq(npy_parse(f, len - 1, LEIR_F64, s23, 2, out, err, sizeof err), -1);
  ck_assert(strstr(err, "bytes of data") != NULL);
  free(f);
  /* keys in any order, double quotes */
  f = make("{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f8\"}\n", v, 48, &len);
  ck_assert_int_eq(npy_parse(f, len, LEIR_F64, s23, 2, out, err, sizeof err), 0);
  free(f);
  expect_reject("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", v, 48, LEIR_F64,
                s23, 2, "little-endian");
  expect_reject("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, 24, LEIR_F64,
                s23, 2, "expected '<f8'");
  expect_reject("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", v, 48, LEIR_F64,
                s23, 2, "Fortran");
  expect_reject("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", v, 48, LEIR_F64,
                s23, 2, "shape (3,2), expected (2,3)");
  expect_reject("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", v, 48, LEIR_F64,
                s23, 2, "shape (6)");
  expect_reject("{'descr': '<f8', 'shape': (2, 3), }", v, 48, LEIR_F64, s23, 2, "lacks");
  expect_reject("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", v, 48,
                LEIR_F64, s23, 2, "unknown header key");
  expect_reject("['descr']", v, 48, LEIR_F64, s23, 2, "not a dict");
  expect_reject("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }", v, 48, LEIR_F64,
                s23, 2, "element type");
  expect_reject("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 3), }",
                v, 48, LEIR_F64, s23, 2, "too large");
  unsigned char bools[2] = {1, 2};
  static const int64_t s2[] = {2};
  expect_reject("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", bools, 2, LEIR_BOOL,
                s2, 1, "bool");
  expect_reject("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", v, 16, LEIR_BF16,
                s2, 1, "no bf16");
  /* other versions, no magic, short files */
  f = make("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", v, 48, &len);
  f[6] = 2;
  ck_assert_int_eq(npy_parse(f, len, LEIR_F64, s23, 2, out, err, sizeof err), -1);
  ck_assert(strstr(err, "version 2.0") != NULL);
  f[6] = 1;
  f[0] = 'x';
  ck_assert_int_eq(npy_parse(f, len, LEIR_F64, s23, 2, out, err, sizeof err), -1);
  f[0] = 0x93;
  ck_assert_int_eq(npy_parse(f, 9, LEIR_F64, s23, 2, out, err, sizeof err), -1);
  f[8] = 255;
  ck_assert_int_eq(npy_parse(f, 60, LEIR_F64, s23, 2, out, err, sizeof err), -1);
  ck_assert(strstr(err, "truncated") != NULL);
  free(f);
}
END_TEST

START_TEST(test_round_trip_every_dtype) {
  char dir[] = "/tmp/leir-npy-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/x.npy", dir);
  static const int64_t shapes[3][2] = {{1, 1}, {5, 1}, {3, 4}};
  static const uint32_t ranks[3] = {0, 1, 2};
  for (int dt = 0; dt < LEIR_DTYPE_COUNT; dt++) {
    if (!npy_descr((leir_dtype)dt)) continue;
    for (int s = 0; s < 3; s++) {
      unsigned char data[12 * 8], back[12 * 8];
      size_t n = 1;
      for (uint32_t r = 0; r < ranks[s]; r++) n *= (size_t)shapes[s][r];
      size_t bytes = n * leir_dtype_size((leir_dtype)dt);
      for (size_t i = 0; i < bytes; i++) data[i] = dt == LEIR_BOOL ? (unsigned char)(i & 1) : (unsigned char)(i * 37 + 5);
      char err[256];
      ck_assert_int_eq(npy_write(path, (leir_dtype)dt, shapes[s], ranks[s], data, err, sizeof err), 0);
      size_t len;
      char *file = test_read_file(path, &len);
      ck_assert_uint_eq((len - bytes) % 64, 0); /* the data is 64-byte aligned */
      free(file);
      ck_assert_msg(npy_read(path, (leir_dtype)dt, shapes[s], ranks[s], back, err, sizeof err) == 0,
                    "%s rank %u: %s", leir_dtype_name((leir_dtype)dt), ranks[s], err);
      ck_assert_mem_eq(back, data, bytes);
    }
  }
  char err[256];
  ck_assert_int_eq(npy_read("/nonexistent/x.npy", LEIR_F64, shapes[0], 0, err, err, sizeof err), -1);
  unlink(path);
  rmdir(dir);
}
END_TEST

START_TEST(test_corruption_never_crashes) {
  static const int64_t s23[] = {2, 3};
  double v[6] = {1, 2, 3, 4, 5, 6}, out[6];
  size_t len;
  unsigned char *f =
      make("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }    \n", v, 48, &len);
  unsigned char *g = malloc(len);
  uint64_t s = 99;
  for (int round = 0; round < 20000; round++) {
    memcpy(g, f, len);
    for (int e = 0; e < 1 + round % 3; e++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      g[(s >> 33) % 80] = (unsigned char)(s >> 20);
    }
    char err[256];
    size_t cut = round % 7 == 0 ? (size_t)((s >> 40) % len) : len;
    (void)npy_parse(g, cut, LEIR_F64, s23, 2, out, err, sizeof err);
  }
  free(g);
  free(f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("npy");
  TCase *tc = tcase_create("npy");
  tcase_add_test(tc, test_parse_and_reject);
  tcase_add_test(tc, test_round_trip_every_dtype);
  tcase_add_test(tc, test_corruption_never_crashes);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
