/*
 * ABI rules of the options structs (docs/abi.md): every leir_*_options_init()
 * gives its _INIT macro's values; every entry point reads an older, smaller
 * struct (the fields it lacks take their defaults, whatever the bytes past
 * its size hold) and refuses a size below the size field or above the
 * library's struct with LEIR_ERR_ARGUMENT naming the struct.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"
#include "leir/experimental/workload.h"
#include "leir/tir.h"
#include "testutil.h"

/* A struct of the library's type with room past its end, for "newer caller"
 * sizes, and bytes after the caller's size set to nonsense so that reading
 * them would show. */
#define NEWER(type) \
  struct {          \
    type o;         \
    char extra[16]; \
  }

static const char *const scale = "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*2;];";

static void expect_size_refused(leir_status st, const char *type) {
  ck_assert_int_eq(st, LEIR_ERR_ARGUMENT);
  const leir_error *e = leir_error_last();
  ck_assert_str_eq(e->rule, "argument");
  ck_assert_str_eq(e->subject, type);
  ck_assert_msg(strstr(e->message, type) && strstr(e->message, ".size is"),
                "message does not name %s.size: %s", type, e->message);
}

/* init(&x, sizeof x) is byte-identical to a static x = INIT (static storage
 * zeroes the padding; the init functions copy such an object). A prefix
 * init writes that prefix only and sets size to it. */
#define CHECK_INIT(type, fn, INIT, lastfield)                                           \
  do {                                                                                  \
    static const type macro = INIT;                                                     \
    type got;                                                                           \
    memset(&got, 0xa5, sizeof got);                                                     \
    ck_assert_int_eq(fn(&got, sizeof got), LEIR_OK);                                    \
    ck_assert_msg(memcmp(&got, &macro, sizeof got) == 0, #fn " differs from " #INIT);   \
    memset(&got, 0xa5, sizeof got);                                                     \
    size_t cut = offsetof(type, lastfield);                                             \
    ck_assert_int_eq(fn(&got, cut), LEIR_OK);                                           \
    ck_assert_uint_eq(got.size, cut);                                                   \
    ck_assert(memcmp((char *)&got + 4, (const char *)&macro + 4, cut - 4) == 0);        \
    for (size_t k = cut; k < sizeof got; k++)                                           \
      ck_assert_uint_eq(((unsigned char *)&got)[k], 0xa5);                              \
    ck_assert_int_eq(fn(NULL, sizeof got), LEIR_ERR_ARGUMENT);                          \
    ck_assert_int_eq(fn(&got, 3), LEIR_ERR_ARGUMENT);                                   \
    NEWER(type) big;                                                                    \
    ck_assert_int_eq(fn(&big.o, sizeof big), LEIR_ERR_ARGUMENT);                        \
    ck_assert_str_eq(leir_error_last()->subject, #type);                                \
  } while (0)

START_TEST(test_every_init_function_equals_its_macro) {
  CHECK_INIT(leir_parse_options, leir_parse_options_init, LEIR_PARSE_OPTIONS_INIT, max_depth);
  CHECK_INIT(leir_check_options, leir_check_options_init, LEIR_CHECK_OPTIONS_INIT,
             max_buffer_elements);
  CHECK_INIT(leir_walk_callbacks, leir_walk_callbacks_init, LEIR_WALK_CALLBACKS_INIT, expr);
  CHECK_INIT(leir_candidates_options, leir_candidates_options_init, LEIR_CANDIDATES_OPTIONS_INIT,
             max_candidates);
  CHECK_INIT(leir_backend_options, leir_backend_options_init, LEIR_BACKEND_OPTIONS_INIT,
             runner);
  CHECK_INIT(leir_verify_options, leir_verify_options_init, LEIR_VERIFY_OPTIONS_INIT, atol);
  CHECK_INIT(leir_bench_options, leir_bench_options_init, LEIR_BENCH_OPTIONS_INIT, seed);
  CHECK_INIT(leir_cuda_options, leir_cuda_options_init, LEIR_CUDA_OPTIONS_INIT, kernel_prefix);
  CHECK_INIT(leir_cuda_timing_options, leir_cuda_timing_options_init,
             LEIR_CUDA_TIMING_OPTIONS_INIT, flush_l2);
  CHECK_INIT(leir_verifier_options, leir_verifier_options_init, LEIR_VERIFIER_OPTIONS_INIT,
             min_finite_fraction);
  CHECK_INIT(leir_compare_options, leir_compare_options_init, LEIR_COMPARE_OPTIONS_INIT, seed);
  CHECK_INIT(leir_domain, leir_domain_init, LEIR_DOMAIN_INIT, std);
  /* the sized forms added in 0.2.0 */
  CHECK_INIT(leir_tir_options, leir_tir_options_init_sized, LEIR_TIR_OPTIONS_INIT, func_name);
  CHECK_INIT(leir_catalog_options, leir_catalog_options_init_sized, LEIR_CATALOG_OPTIONS_INIT,
             dir);
  CHECK_INIT(leir_emit_options, leir_emit_options_init_sized, LEIR_EMIT_OPTIONS_INIT, dtype);
  /* the designated-field macro of the 30-field search options (experimental) */
  CHECK_INIT(leir_search_options, leir_search_options_init, LEIR_SEARCH_OPTIONS_INIT,
             lookahead_seconds);
}
END_TEST

/* Expression height 11: refused with max_depth 5 (rule parse.depth),
 * accepted with the default. */
static const char *const deep = "[C^{f64,g}=((((((((((1))))))))));];";

START_TEST(test_parse_reads_an_older_struct) {
  leir_program *p = NULL;
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.max_depth = 5;
  ck_assert_int_eq(leir_program_parse(&p, deep, strlen(deep), &o), LEIR_ERR_PARSE);
  ck_assert_str_eq(leir_error_last()->rule, "parse.depth");
  /* a caller built before max_depth existed: its bytes are not read */
  o.size = offsetof(leir_parse_options, max_depth);
  ck_assert_int_eq(leir_program_parse(&p, deep, strlen(deep), &o), LEIR_OK);
  leir_program_free(p);
  /* ... while the fields it has are */
  o.max_input_bytes = 8;
  ck_assert_int_eq(leir_program_parse(&p, deep, strlen(deep), &o), LEIR_ERR_LIMIT);
  ck_assert_ptr_null(p);
  o.size = 0;
  expect_size_refused(leir_program_parse(&p, deep, strlen(deep), &o), "leir_parse_options");
  NEWER(leir_parse_options) big = {LEIR_PARSE_OPTIONS_INIT, {0}};
  big.o.size = sizeof big;
  expect_size_refused(leir_program_parse(&p, deep, strlen(deep), &big.o), "leir_parse_options");
  ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_check_reads_an_older_struct) {
  leir_program *p = test_parse(scale);
  leir_check_options o = LEIR_CHECK_OPTIONS_INIT;
  o.max_buffer_elements = 2;
  ck_assert_int_eq(leir_program_check(p, &o, NULL), LEIR_ERR_LIMIT);
  o.size = offsetof(leir_check_options, max_buffer_elements);
  ck_assert_int_eq(leir_program_check(p, &o, NULL), LEIR_OK);
  o.max_extent = 3;
  ck_assert_int_eq(leir_program_check(p, &o, NULL), LEIR_ERR_LIMIT);
  o.size = 2;
  expect_size_refused(leir_program_check(p, &o, NULL), "leir_check_options");
  leir_program_free(p);
}
END_TEST

START_TEST(test_candidates_read_an_older_struct) {
  leir_program *p = test_parse(scale);
  leir_candidates *c = NULL;
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  o.max_candidates = 1;
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_ERR_LIMIT);
  o.size = offsetof(leir_candidates_options, max_candidates);
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_OK);
  ck_assert_uint_gt(leir_candidates_count(c), 1);
  leir_candidates_free(c);
  c = NULL;
  o.strategy = 1000; /* inside the caller's size: read, and refused */
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_ERR_ARGUMENT);
  NEWER(leir_candidates_options) big = {LEIR_CANDIDATES_OPTIONS_INIT, {0}};
  big.o.size = sizeof big;
  expect_size_refused(leir_candidates_list(&c, p, &big.o), "leir_candidates_options");
  ck_assert_int_eq(leir_ground(&c, p, p, &big.o), LEIR_ERR_ARGUMENT);
  leir_program_free(p);
}
END_TEST

START_TEST(test_backend_and_verify_read_older_structs) {
  leir_program *p = test_parse(scale);
  double a[4] = {1, 2, 3, 4}, out[4] = {0};
  void *bufs[2] = {a, out};
  leir_backend *b = NULL;
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.max_evaluations = 1;
  ck_assert_int_eq(leir_backend_open(&b, "interp", &bo), LEIR_OK);
  ck_assert_int_eq(leir_run(b, p, bufs, 2), LEIR_ERR_LIMIT);
  leir_backend_free(b);
  bo.size = offsetof(leir_backend_options, max_evaluations);
  ck_assert_int_eq(leir_backend_open(&b, "interp", &bo), LEIR_OK);
  ck_assert_int_eq(leir_run(b, p, bufs, 2), LEIR_OK);
  ck_assert(out[3] == 8.0);

  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.input_sets = 2;
  vo.atol = -1000; /* past the caller's size below: never read */
  vo.size = offsetof(leir_verify_options, atol);
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, p, &vo, &r), LEIR_OK);
  ck_assert_int_eq(r->verdict, LEIR_VERDICT_EQUAL);
  ck_assert_uint_eq(r->input_sets, 2);
  ck_assert(r->outputs[0].atol == 1e-12); /* f64's default, not -1000 */
  leir_verify_report_free(r);
  r = NULL;
  vo.size = 0;
  expect_size_refused(leir_verify(b, p, p, &vo, &r), "leir_verify_options");
  ck_assert_ptr_null(r);

  leir_bench_options o = LEIR_BENCH_OPTIONS_INIT;
  o.warmup = 0;
  o.min_runs = o.max_runs = 1;
  o.min_seconds = 0;
  o.max_seconds = -1; /* past the caller's size: never read */
  o.size = offsetof(leir_bench_options, max_seconds);
  leir_timing t;
  const leir_program *progs[1] = {p};
  ck_assert_int_eq(leir_bench(b, progs, 1, &o, &t), LEIR_OK);
  ck_assert_uint_eq(t.runs, 1);
  o.size = sizeof o;
  ck_assert_int_eq(leir_bench(b, progs, 1, &o, &t), LEIR_ERR_ARGUMENT);
  leir_backend_free(b);

  bo.size = 1;
  expect_size_refused(leir_backend_open(&b, "interp", &bo), "leir_backend_options");
  ck_assert_ptr_null(b);
  leir_program_free(p);
}
END_TEST

START_TEST(test_cuda_reads_older_structs) {
  leir_program *p = test_parse(scale);
  leir_cuda_options o = LEIR_CUDA_OPTIONS_INIT;
  o.kernel_prefix = "not an identifier";
  char *src = NULL;
  ck_assert_int_eq(leir_cuda_lower(p, &o, &src, NULL), LEIR_ERR_ARGUMENT);
  o.size = offsetof(leir_cuda_options, kernel_prefix);
  ck_assert_int_eq(leir_cuda_lower(p, &o, &src, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(src, "leir_nest0"));
  leir_free(src);
  o.size = 0;
  expect_size_refused(leir_cuda_lower(p, &o, &src, NULL), "leir_cuda_options");
  expect_size_refused(leir_cuda_run(p, &o, NULL, 0), "leir_cuda_options");
  /* timing options and the timing result are checked before any device use */
  leir_cuda_timing_options to = LEIR_CUDA_TIMING_OPTIONS_INIT;
  leir_cuda_timing t = {sizeof t, 0, 0, 0, 0, 0};
  to.size = 0;
  expect_size_refused(leir_cuda_time(p, NULL, &to, NULL, 0, &t), "leir_cuda_timing_options");
  to.size = sizeof to;
  t.size = 0;
  expect_size_refused(leir_cuda_time(p, NULL, &to, NULL, 0, &t), "leir_cuda_timing");
  leir_program_free(p);
}
END_TEST

START_TEST(test_walk_refuses_an_unset_size) {
  leir_program *p = test_parse(scale);
  leir_walk_callbacks cb;
  memset(&cb, 0, sizeof cb);
  ck_assert_int_eq(leir_program_walk(p, &cb, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(leir_error_last()->subject, "leir_walk_callbacks");
  ck_assert_int_eq(leir_walk_callbacks_init(&cb, sizeof cb), LEIR_OK);
  ck_assert_int_eq(leir_program_walk(p, &cb, NULL), 0);
  leir_program_free(p);
}
END_TEST

START_TEST(test_argument_errors_are_recorded) {
  leir_dtype d;
  leir_error_clear();
  ck_assert_int_eq(leir_dtype_from_name("f65", &d), LEIR_ERR_ARGUMENT);
  const leir_error *e = leir_error_last();
  ck_assert_int_eq(e->status, LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(e->rule, "argument");
  ck_assert_str_eq(e->subject, "f65");
  ck_assert_ptr_nonnull(strstr(e->message, "unknown dtype 'f65'"));
  ck_assert_int_eq(leir_dtype_from_name(NULL, &d), LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(leir_error_last()->message, "NULL argument");
  ck_assert_int_eq(leir_dtype_from_name("bf16", &d), LEIR_OK);
  ck_assert_int_eq(d, LEIR_BF16);
}
END_TEST

/* The names added in 0.2.0 and the 0.1.0 names they replace (still
 * exported: a program linked against 0.1.0 calls them) give the same. */
START_TEST(test_deprecated_aliases_equal_the_new_names) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  ck_assert_str_eq(leir_backend_name(b), "interp");
  ck_assert_ptr_eq(leir_backend_get_name(b), leir_backend_name(b));
  ck_assert_str_eq(leir_backend_name(NULL), "");

  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, scale, strlen(scale), NULL), LEIR_OK);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, p, NULL, &r), LEIR_OK);
  char *old_js = NULL, *new_js = NULL;
  ck_assert_int_eq(leir_verify_report_json(r, &old_js, NULL), LEIR_OK);
  ck_assert_int_eq(leir_verify_report_to_json(r, &new_js, NULL), LEIR_OK);
  ck_assert_str_eq(old_js, new_js);
  ck_assert_ptr_nonnull(strstr(new_js, "\"verdict\":\"EQUAL\""));
  leir_free(old_js);
  leir_free(new_js);
  ck_assert_int_eq(leir_verify_report_to_json(NULL, &new_js, NULL), LEIR_ERR_ARGUMENT);

  leir_timing t;
  memset(&t, 0, sizeof t);
  t.median_s = 0.25;
  t.runs = 3;
  ck_assert_int_eq(leir_timing_json(&t, &old_js, NULL), LEIR_OK);
  ck_assert_int_eq(leir_timing_to_json(&t, &new_js, NULL), LEIR_OK);
  ck_assert_str_eq(old_js, new_js);
  leir_free(old_js);
  leir_free(new_js);

  leir_tir_options a, c;
  memset(&a, 0xa5, sizeof a);
  memset(&c, 0x5a, sizeof c);
  leir_tir_options_init(&a);
  ck_assert_int_eq(leir_tir_options_init_sized(&c, sizeof c), LEIR_OK);
  ck_assert(a.size == c.size && a.flags == c.flags && a.func_name == c.func_name);

  leir_verify_report_free(r);
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

static Suite *abi_suite(void) {
  Suite *s = suite_create("abi");
  TCase *tc = tcase_create("options");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_every_init_function_equals_its_macro);
  tcase_add_test(tc, test_parse_reads_an_older_struct);
  tcase_add_test(tc, test_check_reads_an_older_struct);
  tcase_add_test(tc, test_candidates_read_an_older_struct);
  tcase_add_test(tc, test_backend_and_verify_read_older_structs);
  tcase_add_test(tc, test_cuda_reads_older_structs);
  tcase_add_test(tc, test_walk_refuses_an_unset_size);
  tcase_add_test(tc, test_argument_errors_are_recorded);
  tcase_add_test(tc, test_deprecated_aliases_equal_the_new_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(abi_suite()); }
