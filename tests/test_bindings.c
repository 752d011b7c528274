/*
 * The C API that language bindings rely on (issue 17): sized runs that
 * refuse buffers of the wrong size, candidate lists as JSON with every
 * field, and a last-error record whose staleness a binding can detect.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *const relu =
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];";

/* ---- sized runs ------------------------------------------------------------ */

START_TEST(test_run_sized_runs_buffers_of_the_right_size) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  leir_program *p = test_parse(relu);
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_OK);
  size_t bytes = 0;
  ck_assert_int_eq(leir_kernel_buffer_bytes(k, 0, &bytes), LEIR_OK);
  ck_assert_uint_eq(bytes, 16 * sizeof(double));
  ck_assert_int_eq(leir_kernel_buffer_bytes(k, 2, &bytes), LEIR_ERR_ARGUMENT);
  double a[16], c[16];
  for (int i = 0; i < 16; i++) a[i] = i % 3 ? i : -i;
  void *bufs[2] = {a, c};
  size_t sizes[2] = {sizeof a, sizeof c};
  ck_assert_int_eq(leir_kernel_run_sized(k, bufs, sizes, 2), LEIR_OK);
  for (int i = 0; i < 16; i++) ck_assert_double_eq(c[i], a[i] > 0 ? a[i] : 0);
  memset(c, 0, sizeof c);
  ck_assert_int_eq(leir_run_sized(b, p, bufs, sizes, 2), LEIR_OK);
  ck_assert_double_eq(c[14], 14);
  leir_kernel_free(k);
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

START_TEST(test_run_sized_refuses_short_and_long_buffers) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  leir_program *p = test_parse(relu);
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_OK);
  double a[16] = {0}, c[16];
  for (int i = 0; i < 16; i++) c[i] = 42;
  void *bufs[2] = {a, c};
  /* output one element short: refused before anything runs */
  size_t sizes[2] = {sizeof a, sizeof c - sizeof(double)};
  ck_assert_int_eq(leir_kernel_run_sized(k, bufs, sizes, 2), LEIR_ERR_ARGUMENT);
  const leir_error *e = leir_error_last();
  ck_assert_str_eq(e->rule, "run.buffer-size");
  ck_assert_str_eq(e->subject, "C");
  ck_assert_str_eq(e->message, "output C needs 128 bytes (16 elements of f64), got 120 bytes");
  ck_assert_double_eq(c[0], 42);
  /* input too long (e.g. a float32 array of the right byte size would pass,
   * but twice the elements does not) */
  sizes[0] = 2 * sizeof a;
  sizes[1] = sizeof c;
  ck_assert_int_eq(leir_kernel_run_sized(k, bufs, sizes, 2), LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(leir_error_last()->subject, "A");
  /* wrong count, NULL sizes */
  sizes[0] = sizeof a;
  ck_assert_int_eq(leir_kernel_run_sized(k, bufs, sizes, 1), LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(leir_error_last()->rule, "run.buffer-count");
  ck_assert_int_eq(leir_kernel_run_sized(k, bufs, NULL, 2), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_run_sized(b, p, bufs, (size_t[]){8, 8}, 2), LEIR_ERR_ARGUMENT);
  ck_assert_double_eq(c[0], 42);
  leir_kernel_free(k);
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

START_TEST(test_run_sized_scalars_and_small_dtypes) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  /* a scalar output is one element; i8 elements are one byte */
  leir_program *p = test_parse("L^{4}_{a=0}[C^{i32,g}=C^{i32,g}+A^{i8,g}_{a};];");
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_OK);
  int8_t a[4] = {1, 2, 3, -4};
  int32_t c = 0;
  void *bufs[2] = {a, &c};
  ck_assert_int_eq(leir_kernel_run_sized(k, bufs, (size_t[]){4, 4}, 2), LEIR_OK);
  ck_assert_int_eq(c, 2);
  ck_assert_int_eq(leir_kernel_run_sized(k, bufs, (size_t[]){4, 8}, 2), LEIR_ERR_ARGUMENT);
  leir_kernel_free(k);
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

/* ---- candidates as JSON ------------------------------------------------------ */

START_TEST(test_candidates_json_has_every_field) {
  leir_program *p = test_parse("B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];");
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_OK);
  size_t n = leir_candidates_count(c);
  ck_assert_uint_gt(n, 2);
  char *js = NULL;
  size_t len = 0;
  ck_assert_int_eq(leir_candidates_to_json(c, LEIR_CANDIDATES_JSON_RESULT, &js, &len), LEIR_OK);
  ck_assert_uint_eq(strlen(js), len);
  char msg[128];
  jsonl_value *v = jsonl_parse(js, len, msg, sizeof msg);
  ck_assert_msg(v != NULL, "%s", msg);
  for (size_t i = 0; i < n; i++) {
    const jsonl_value *o = jsonl_at(v, i);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(jsonl_int(jsonl_get(o, "index"), -1), (int64_t)i);
    const leir_step *s = leir_candidates_step(c, i);
    ck_assert_str_eq(jsonl_str(jsonl_get(o, "step")), leir_step_text(s));
    ck_assert_str_eq(jsonl_str(jsonl_get(o, "strategy")),
                     leir_strategy_info_at(leir_step_strategy(s))->name);
    ck_assert_str_eq(jsonl_str(jsonl_get(o, "class")),
                     leir_exactness_name(leir_candidates_exactness(c, i)));
    ck_assert_str_eq(jsonl_str(jsonl_get(jsonl_get(o, "json"), "strategy")),
                     jsonl_str(jsonl_get(o, "strategy")));
    leir_program *q = NULL;
    ck_assert_int_eq(leir_candidates_apply(&q, c, i), LEIR_OK);
    char *text = test_print(q);
    ck_assert_str_eq(jsonl_str(jsonl_get(o, "result")), text);
    leir_free(text);
    leir_program_free(q);
  }
  ck_assert_ptr_null(jsonl_at(v, n));
  jsonl_free(v);
  leir_free(js);
  /* without results: no "result" key */
  ck_assert_int_eq(leir_candidates_to_json(c, 0, &js, NULL), LEIR_OK);
  ck_assert_ptr_null(strstr(js, "\"result\""));
  leir_free(js);
  ck_assert_int_eq(leir_candidates_to_json(c, 0x80, &js, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_ptr_null(js);
  ck_assert_int_eq(leir_candidates_to_json(NULL, 0, &js, NULL), LEIR_ERR_ARGUMENT);
  leir_candidates_free(c);
  /* an empty list is [] */
  leir_program *one = test_parse("[C^{f64,g}=1;];");
  ck_assert_int_eq(leir_candidates_list(&c, one, NULL), LEIR_OK);
  ck_assert_int_eq(leir_candidates_to_json(c, LEIR_CANDIDATES_JSON_RESULT, &js, NULL), LEIR_OK);
  ck_assert_str_eq(js, "[]");
  leir_free(js);
  leir_candidates_free(c);
  leir_program_free(one);
  leir_program_free(p);
}
END_TEST

/* ---- the last error ---------------------------------------------------------- */

/* leir_timing_json: every field under its name, doubles that read back
 * exactly, NaN as a string, valid JSON. */
START_TEST(test_timing_json_has_every_field) {
  leir_timing t;
  memset(&t, 0, sizeof t);
  t.median_s = 0.125, t.min_s = 0.0625, t.max_s = 0.25, t.mean_s = 0.1;
  t.q1_s = 0.1, t.q3_s = 0.15, t.spread = 0.4, t.noisy = 1, t.threads = 2, t.runs = 17;
  t.flops = 1u << 20, t.bytes = 3u << 20, t.gflops = 1.0 / 3.0, t.gbytes_per_s = 0.0 / 0.0;
  t.speedup = 1;
  char *js = NULL;
  size_t len = 0;
  ck_assert_int_eq(leir_timing_json(&t, &js, &len), LEIR_OK);
  ck_assert_uint_eq(strlen(js), len);
  char msg[128];
  jsonl_value *v = jsonl_parse(js, len, msg, sizeof msg);
  ck_assert_msg(v != NULL, "%s: %s", js, msg);
  static const char *const keys[] = {"median_s", "min_s", "max_s",  "mean_s", "q1_s",
                                     "q3_s",     "spread", "noisy", "threads", "runs",
                                     "flops",    "bytes", "gflops", "gbytes_per_s", "speedup"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    ck_assert_msg(jsonl_get(v, keys[i]) != NULL, "no %s in %s", keys[i], js);
  ck_assert_uint_eq(jsonl_len(v), sizeof keys / sizeof keys[0]);
  ck_assert(jsonl_bool(jsonl_get(v, "noisy"), false));
  ck_assert_int_eq(jsonl_int(jsonl_get(v, "runs"), -1), 17);
  ck_assert_int_eq(jsonl_int(jsonl_get(v, "threads"), -1), 2);
  ck_assert_int_eq(jsonl_int(jsonl_get(v, "bytes"), -1), 3 << 20);
  ck_assert_str_eq(jsonl_str(jsonl_get(v, "gbytes_per_s")), "nan");
  ck_assert_ptr_nonnull(strstr(js, "\"median_s\":0.125,"));
  ck_assert_ptr_nonnull(strstr(js, "\"gflops\":0.3333333333333333,")); /* shortest that reads back */
  jsonl_free(v);
  leir_free(js);
  ck_assert_int_eq(leir_timing_json(NULL, &js, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_timing_json(&t, NULL, NULL), LEIR_ERR_ARGUMENT);
}
END_TEST

START_TEST(test_error_sequence_tells_a_stale_record) {
  leir_program *p = NULL;
  uint64_t before = leir_error_sequence();
  ck_assert_int_eq(leir_program_parse(&p, "[C", 2, NULL), LEIR_ERR_PARSE);
  uint64_t after_failure = leir_error_sequence();
  ck_assert_uint_gt(after_failure, before);
  ck_assert_int_eq(leir_error_last()->status, LEIR_ERR_PARSE);
  /* a success leaves the record (documented) but not the sequence's meaning:
   * it did not move, so the record is not the success's */
  ck_assert_int_eq(leir_program_parse(&p, relu, strlen(relu), NULL), LEIR_OK);
  ck_assert_uint_eq(leir_error_sequence(), after_failure);
  ck_assert_int_eq(leir_error_last()->status, LEIR_ERR_PARSE);
  /* clearing resets the record, the count goes on */
  leir_error_clear();
  ck_assert_int_eq(leir_error_last()->status, LEIR_OK);
  ck_assert_str_eq(leir_error_last()->rule, "");
  ck_assert_uint_eq(leir_error_sequence(), after_failure);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_parse(&q, "x", 1, NULL), LEIR_ERR_PARSE);
  ck_assert_uint_gt(leir_error_sequence(), after_failure);
  /* an internal save/restore (hashing a program that needs inference)
   * leaves the sequence where it was */
  uint64_t s = leir_error_sequence();
  (void)leir_program_hash_alpha(p);
  ck_assert_uint_eq(leir_error_sequence(), s);
  leir_program_free(p);
}
END_TEST

static Suite *bindings_suite(void) {
  Suite *s = suite_create("bindings");
  TCase *tc = tcase_create("bindings");
  tcase_add_test(tc, test_run_sized_runs_buffers_of_the_right_size);
  tcase_add_test(tc, test_run_sized_refuses_short_and_long_buffers);
  tcase_add_test(tc, test_run_sized_scalars_and_small_dtypes);
  tcase_add_test(tc, test_candidates_json_has_every_field);
  tcase_add_test(tc, test_timing_json_has_every_field);
  tcase_add_test(tc, test_error_sequence_tells_a_stale_record);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(bindings_suite()); }
