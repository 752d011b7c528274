/* The reference evaluator: spec/leir.md §3 rule by rule, with expected
 * values computed independently in the test. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

static leir_backend *interp(void) {
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  return b;
}

/* Runs `src` with the given signature on the interp; buffers in order. */
static leir_status run_with(const char *src, const leir_tensor_decl *decls, size_t n,
                            void *const *bufs) {
  leir_program *p = test_parse(src);
  if (decls) ck_assert_int_eq(leir_program_set_signature(p, decls, n), LEIR_OK);
  leir_backend *b = interp();
  leir_status st = leir_run(b, p, bufs, n);
  leir_backend_free(b);
  leir_program_free(p);
  return st;
}

START_TEST(test_softmax_matches_direct_computation) {
  const char *src =
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];";
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  double a[16], c[16];
  void *bufs[2] = {a, c};
  ck_assert_int_eq(leir_program_fill_inputs(p, 7, 1, bufs, 2), LEIR_OK);
  leir_backend *b = interp();
  ck_assert_int_eq(leir_run(b, p, bufs, 2), LEIR_OK);
  for (int r = 0; r < 2; r++) {
    double m = -INFINITY, s = 0;
    for (int k = 0; k < 8; k++) m = fmax(m, a[r * 8 + k]);
    for (int k = 0; k < 8; k++) s = s + exp(a[r * 8 + k] - m);
    for (int k = 0; k < 8; k++) {
      double want = exp(a[r * 8 + k] - m) / s;
      ck_assert_msg(memcmp(&want, &c[r * 8 + k], 8) == 0, "C[%d,%d] = %.17g, want %.17g", r, k,
                    c[r * 8 + k], want);
    }
  }
  leir_backend_free(b);
  leir_program_free(p);
}
END_TEST

START_TEST(test_integer_floor_division_and_modulo) {
  int64_t q[6], m[6];
  int64_t shape[1] = {6};
  leir_tensor_decl d[2] = {{"C", LEIR_I64, LEIR_ROLE_OUTPUT, 1, shape},
                           {"D", LEIR_I64, LEIR_ROLE_OUTPUT, 1, shape}};
  void *bufs[2] = {q, m};
  ck_assert_int_eq(run_with("L^{6}_{a=0}[C^{i64,g}_{a}=(a-3)//2;D^{i64,g}_{a}=(a-3)%4;];", d, 2, bufs),
                   LEIR_OK);
  const int64_t wq[6] = {-2, -1, -1, 0, 0, 1}, wm[6] = {1, 2, 3, 0, 1, 2};
  for (int i = 0; i < 6; i++) {
    ck_assert_int_eq(q[i], wq[i]);
    ck_assert_int_eq(m[i], wm[i]);
  }
}
END_TEST

START_TEST(test_half_precision_rounds_to_nearest_even_on_store) {
  uint16_t h, bf;
  leir_tensor_decl d[2] = {{"C", LEIR_F16, LEIR_ROLE_OUTPUT, 0, NULL},
                           {"D", LEIR_BF16, LEIR_ROLE_OUTPUT, 0, NULL}};
  void *bufs[2] = {&h, &bf};
  ck_assert_int_eq(run_with("B^{1}_{tx=0}[C^{f16,g}=0.1;D^{bf16,g}=0.1;];", d, 2, bufs), LEIR_OK);
  ck_assert_uint_eq(h, 0x2E66);  /* 0.0999755859375 */
  ck_assert_uint_eq(bf, 0x3DCD); /* 0.10009765625 */
  /* 65520 is the first value that rounds to infinity in binary16 */
  ck_assert_int_eq(run_with("B^{1}_{tx=0}[C^{f16,g}=65520;D^{bf16,g}=1.00390625;];", d, 2, bufs),
                   LEIR_OK);
  ck_assert_uint_eq(h, 0x7C00);
  ck_assert_uint_eq(bf, 0x3F80); /* tie between 1 and 1+2^-7 goes to even: 1 */
}
END_TEST

START_TEST(test_lazy_if_then_else_guards_padding_reads) {
  /* E reads A[c-2] only where 2 <= c < 6: an eager evaluation would trap */
  double a[4] = {1, 2, 3, 4}, e[8];
  int64_t sa[1] = {4}, se[1] = {8};
  leir_tensor_decl d[2] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 1, sa},
                           {"E", LEIR_F64, LEIR_ROLE_OUTPUT, 1, se}};
  void *bufs[2] = {a, e};
  ck_assert_int_eq(
      run_with("L^{8}_{c=0}[E^{f64,g}_{c}=if_then_else(2<=c<6,A^{f64,g}_{c-2},-1);];", d, 2, bufs),
      LEIR_OK);
  const double want[8] = {-1, -1, 1, 2, 3, 4, -1, -1};
  for (int i = 0; i < 8; i++) ck_assert(e[i] == want[i]);
}
END_TEST

START_TEST(test_indirect_index_out_of_range_traps) {
  double a[4] = {1, 2, 3, 4}, c[3];
  int64_t idx[3] = {0, 3, 4}; /* 4 is out of range */
  int64_t sa[1] = {4}, si[1] = {3};
  leir_tensor_decl d[3] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 1, sa},
                           {"I", LEIR_I64, LEIR_ROLE_INPUT, 1, si},
                           {"C", LEIR_F64, LEIR_ROLE_OUTPUT, 1, si}};
  void *bufs[3] = {a, idx, c};
  ck_assert_int_eq(run_with("L^{3}_{c=0}[C^{f64,g}_{c}=A^{f64,g}_{I^{i64,g}_{c}};];", d, 3, bufs),
                   LEIR_ERR_RUNTIME);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "out of range [0, 4)"));
  ck_assert_uint_eq(leir_error_last()->line, 1);
  idx[2] = 2;
  ck_assert_int_eq(run_with("L^{3}_{c=0}[C^{f64,g}_{c}=A^{f64,g}_{I^{i64,g}_{c}};];", d, 3, bufs),
                   LEIR_OK);
  ck_assert(c[0] == 1 && c[1] == 4 && c[2] == 3);
}
END_TEST

START_TEST(test_integer_division_by_zero_traps) {
  int64_t c[4];
  int64_t s[1] = {4};
  leir_tensor_decl d[1] = {{"C", LEIR_I64, LEIR_ROLE_OUTPUT, 1, s}};
  void *bufs[1] = {c};
  ck_assert_int_eq(run_with("L^{4}_{a=0}[C^{i64,g}_{a}=10//(a-2);];", d, 1, bufs), LEIR_ERR_RUNTIME);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "division by zero"));
}
END_TEST

START_TEST(test_implicit_init_identities) {
  /* sum from 0, product from 1, max from -inf, min from +inf */
  double a[6] = {-3, -1, -2, -5, -4, -6}, s[2], p[2], mx[2], mn[2];
  int64_t sa[2] = {2, 3}, so[1] = {2};
  leir_tensor_decl d[5] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 2, sa},
                           {"C", LEIR_F64, LEIR_ROLE_OUTPUT, 1, so},
                           {"D", LEIR_F64, LEIR_ROLE_OUTPUT, 1, so},
                           {"E", LEIR_F64, LEIR_ROLE_OUTPUT, 1, so},
                           {"F", LEIR_F64, LEIR_ROLE_OUTPUT, 1, so}};
  void *bufs[5] = {a, s, p, mx, mn};
  ck_assert_int_eq(
      run_with("B^{2}_{tx=0}L^{3}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};"
               "D^{f64,g}_{tx}=D^{f64,g}_{tx}*A^{f64,g}_{tx,a};"
               "E^{f64,g}_{tx}=max(E^{f64,g}_{tx},A^{f64,g}_{tx,a});"
               "F^{f64,g}_{tx}=min(F^{f64,g}_{tx},A^{f64,g}_{tx,a});];",
               d, 5, bufs),
      LEIR_OK);
  ck_assert(s[0] == -6 && s[1] == -15);
  ck_assert(p[0] == -6 && p[1] == -120);
  ck_assert(mx[0] == -1 && mx[1] == -4);
  ck_assert(mn[0] == -3 && mn[1] == -6);
}
END_TEST

START_TEST(test_items_interleave_per_iteration) {
  /* a running prefix: F reads D of the same iteration, and a nested nest
   * runs all its iterations at each outer point */
  double a[4] = {1, 2, 3, 4}, f[4], g[8];
  int64_t s4[1] = {4}, s8[2] = {4, 2};
  leir_tensor_decl d[3] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 1, s4},
                           {"F", LEIR_F64, LEIR_ROLE_OUTPUT, 1, s4},
                           {"G", LEIR_F64, LEIR_ROLE_OUTPUT, 2, s8}};
  void *bufs[3] = {a, f, g};
  ck_assert_int_eq(
      run_with("L^{4}_{a=0}[D^{f64,g}_{a}=if_then_else(a-1<0,0,D^{f64,g}_{a-1})+A^{f64,g}_{a};"
               "F^{f64,g}_{a}=D^{f64,g}_{a}*2;L^{2}_{c=0}[G^{f64,g}_{a,c}=D^{f64,g}_{a}+c;];];",
               d, 3, bufs),
      LEIR_OK);
  const double wf[4] = {2, 6, 12, 20};
  for (int i = 0; i < 4; i++) {
    ck_assert(f[i] == wf[i]);
    ck_assert(g[2 * i] == wf[i] / 2 && g[2 * i + 1] == wf[i] / 2 + 1);
  }
}
END_TEST

START_TEST(test_rank_changing_redefinition_is_a_new_buffer) {
  /* D is first a per-row max (rank 1), then a running max (rank 2) */
  double a[4] = {1, 5, 2, 7}, c[4];
  int64_t s[2] = {2, 2};
  leir_tensor_decl d[2] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 2, s},
                           {"C", LEIR_F64, LEIR_ROLE_OUTPUT, 2, s}};
  void *bufs[2] = {a, c};
  ck_assert_int_eq(
      run_with("B^{2}_{tx=0}L^{2}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
               "B^{2}_{tx=0}L^{2}_{a=0}[D^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}-D^{f64,g}_{tx};];"
               "B^{2}_{tx=0}L^{2}_{a=0}[C^{f64,g}_{tx,a}=D^{f64,g}_{tx,a};];",
               d, 2, bufs),
      LEIR_OK);
  const double want[4] = {-4, 0, -5, 0};
  for (int i = 0; i < 4; i++) ck_assert(c[i] == want[i]);
}
END_TEST

START_TEST(test_verify_identical_programs_is_equal_on_every_seed) {
  leir_program *p = test_parse(
      "B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2+exp(A^{f64,g}_{tx,a});];");
  leir_backend *b = interp();
  for (uint64_t seed = 0; seed < 5; seed++) {
    leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
    o.seed = seed;
    leir_verify_report *r = NULL;
    ck_assert_int_eq(leir_verify(b, p, p, &o, &r), LEIR_OK);
    ck_assert_str_eq(leir_verdict_name(r->verdict), "EQUAL");
    ck_assert_uint_eq(r->seed, seed);
    leir_verify_report_free(r);
  }
  leir_backend_free(b);
  leir_program_free(p);
}
END_TEST

START_TEST(test_unwritten_output_element_is_caught) {
  leir_program *p = test_parse("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}+1;];");
  /* writes C[0] and C[3] only: the written extent still matches [4] */
  leir_program *q = test_parse("L^{2}_{a=0}[C^{f64,g}_{a*3}=A^{f64,g}_{a*3}+1;];");
  leir_backend *b = interp();
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, q, NULL, &r), LEIR_OK);
  ck_assert_int_eq(r->verdict, LEIR_VERDICT_MISMATCH);
  ck_assert_uint_eq(r->index, 1);
  ck_assert_ptr_nonnull(strstr(r->message, "never wrote"));
  leir_verify_report_free(r);
  leir_backend_free(b);
  leir_program_free(p);
  leir_program_free(q);
}
END_TEST

START_TEST(test_interp_timeout_is_a_verdict) {
  leir_program *p = test_parse("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];");
  leir_program *q = test_parse(
      "L^{4}_{a=0}L^{100000}_{c=0}L^{100000}_{d=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];");
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 0.2;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", &bo), LEIR_OK);
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, q, NULL, &r), LEIR_OK);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "TIMEOUT");
  ck_assert_int_eq(r->program, 1);
  ck_assert_int_eq(r->set, 0);
  leir_verify_report_free(r);
  leir_backend_free(b);
  leir_program_free(p);
  leir_program_free(q);
}
END_TEST


/* Issue 11.4: what `check` accepts, the interpreter runs. Parentheses around a
 * condition, at any depth, leave it unchanged; a parenthesized comparison
 * used as a value inside a condition is 1 or 0. Expected values: a in 0..5. */
START_TEST(test_conditions_in_any_parentheses_and_as_values) {
  static const struct {
    const char *cond;
    double want[6];
  } cases[] = {
      {"((a<2))", {1, 1, 0, 0, 0, 0}},
      {"(((a<2)))", {1, 1, 0, 0, 0, 0}},
      {"((a<2))&a>0", {0, 1, 0, 0, 0, 0}},
      {"((a<2)|((a>4)))", {1, 1, 0, 0, 0, 1}},
      {"((a<2)<3)", {1, 1, 1, 1, 1, 1}},
      {"((a<2)<1)", {0, 0, 1, 1, 1, 1}},
      {"(a<2)+(a<1)+1>1.5", {1, 1, 0, 0, 0, 0}},
      {"(a>1)*2==(a>3)+(a>1)", {1, 1, 0, 0, 1, 1}},
      {"1<a<(a<3)+3", {0, 0, 1, 0, 0, 0}},
      {"((1<a<4))", {0, 0, 1, 1, 0, 0}},
  };
  int64_t shape[1] = {6};
  leir_tensor_decl d[1] = {{"C", LEIR_F64, LEIR_ROLE_OUTPUT, 1, shape}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char src[256];
    snprintf(src, sizeof src, "L^{6}_{a=0}[C^{f64,g}_{a}=if_then_else(%s,1,0);];", cases[k].cond);
    leir_program *p = test_parse(src);
    ck_assert_msg(leir_program_check(p, NULL, NULL) == LEIR_OK, "%s: %s", src,
                  leir_error_last()->message);
    leir_program_free(p);
    double c[6];
    void *bufs[1] = {c};
    ck_assert_msg(run_with(src, d, 1, bufs) == LEIR_OK, "%s: %s", src, leir_error_last()->message);
    for (int i = 0; i < 6; i++)
      ck_assert_msg(c[i] == cases[k].want[i], "%s: C[%d] = %g, want %g", src, i, c[i],
                    cases[k].want[i]);
  }
  /* the same in an integer equation (conditions as int64 values) */
  int64_t q[6];
  leir_tensor_decl di[1] = {{"C", LEIR_I64, LEIR_ROLE_OUTPUT, 1, shape}};
  void *bi[1] = {q};
  ck_assert_int_eq(
      run_with("L^{6}_{a=0}[C^{i64,g}_{a}=if_then_else(((a<2)<1)&(((a>3))),7,-7);];", di, 1, bi),
      LEIR_OK);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(q[i], i > 3 ? 7 : -7);
}
END_TEST

/* Issue 11.7: the deadline counts expression nodes, not equations. 3000
 * evaluations of a 100,001-node max never reached the old check (every 4096
 * equations) and ran ~3e8 nodes; now TIMEOUT comes within a few ms of the
 * limit. */
START_TEST(test_deadline_counts_expression_nodes) {
  size_t nargs = 50000, cap = nargs * 20 + 128;
  char *src = malloc(cap);
  size_t n = (size_t)snprintf(src, cap, "L^{3000}_{a=0}[C^{f64,g}_{a}=max(A^{f64,g}_{0}");
  for (size_t k = 1; k < nargs; k++) n += (size_t)snprintf(src + n, cap - n, ",A^{f64,g}_{%zu}", k % 3);
  snprintf(src + n, cap - n, ");];");
  leir_program *p = test_parse(src);
  free(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 0.2;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", &bo), LEIR_OK);
  double a[3] = {1, 2, 3}, c[3000];
  void *bufs[2] = {a, c};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  leir_status st = leir_run(b, p, bufs, 2);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  ck_assert_msg(st == LEIR_ERR_TIMEOUT, "status %s", leir_status_name(st));
  ck_assert_msg(s < 2.0, "TIMEOUT after %.3f s with a 0.2 s limit", s);
  leir_backend_free(b);
  leir_program_free(p);
}
END_TEST

static Suite *interp_suite(void) {
  Suite *s = suite_create("interp");
  TCase *tc = tcase_create("semantics");
  tcase_add_test(tc, test_softmax_matches_direct_computation);
  tcase_add_test(tc, test_integer_floor_division_and_modulo);
  tcase_add_test(tc, test_half_precision_rounds_to_nearest_even_on_store);
  tcase_add_test(tc, test_lazy_if_then_else_guards_padding_reads);
  tcase_add_test(tc, test_indirect_index_out_of_range_traps);
  tcase_add_test(tc, test_integer_division_by_zero_traps);
  tcase_add_test(tc, test_implicit_init_identities);
  tcase_add_test(tc, test_items_interleave_per_iteration);
  tcase_add_test(tc, test_rank_changing_redefinition_is_a_new_buffer);
  tcase_add_test(tc, test_verify_identical_programs_is_equal_on_every_seed);
  tcase_add_test(tc, test_unwritten_output_element_is_caught);
  tcase_add_test(tc, test_interp_timeout_is_a_verdict);
  tcase_add_test(tc, test_conditions_in_any_parentheses_and_as_values);
  tcase_add_test(tc, test_deadline_counts_expression_nodes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(interp_suite()); }
