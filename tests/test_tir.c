/* The TIR printer (include/leir/tir.h): structure of the TVMScript for
 * hand-written programs, and clean statuses on bad input. Numerical
 * agreement with the interpreter is checked by apache-tvm in
 * python/tests/test_tir.py. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leir/leir.h"
#include "testutil.h"

static char *tir_of(const char *text, uint32_t flags, leir_status *st) {
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, strlen(text), NULL), LEIR_OK);
  leir_tir_options o = LEIR_TIR_OPTIONS_INIT;
  o.flags = flags;
  char *out = NULL;
  size_t len = 0;
  *st = leir_lower_tir(p, &o, &out, &len);
  if (*st == LEIR_OK) ck_assert_uint_eq(len, strlen(out));
  else ck_assert_ptr_null(out);
  leir_program_free(p);
  return out;
}

static char *tir_ok(const char *text, uint32_t flags) {
  leir_status st;
  char *out = tir_of(text, flags, &st);
  ck_assert_msg(st == LEIR_OK, "%s: %s", text, leir_error_last()->message);
  return out;
}

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "missing <%s> in:\n%s", (sub), (s))
#define HASNT(s, sub) ck_assert_msg(strstr((s), (sub)) == NULL, "unexpected <%s> in:\n%s", (sub), (s))

START_TEST(test_tir_softmax_function_params_allocs_init) {
  char *s = tir_ok(
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,s}_{tx}=max(D^{f64,s}_{tx},A^{f64,g}_{tx,a});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,l}_{tx}=E^{f64,l}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,s}_{tx});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,s}_{tx})/E^{f64,l}_{tx};];",
      0);
  HAS(s, "@T.prim_func\ndef main(A: T.Buffer((2, 8), \"float64\"), C: T.Buffer((2, 8), \"float64\")):");
  HAS(s, "D = T.alloc_buffer((2,), \"float64\", scope=\"shared\")");
  HAS(s, "E = T.alloc_buffer((2,), \"float64\", scope=\"local\")");
  HAS(s, "D[tx] = -T.float64(\"inf\")"); /* implicit init of max */
  HAS(s, "E[tx] = T.float64(0.0)");      /* implicit init of a sum */
  HAS(s, "for tx in T.thread_binding(2, thread=\"threadIdx.x\"):");
  HAS(s, "D[tx] = T.max(D[tx], A[tx, a])");
  HASNT(s, "C[tx, a] = T.float64(0.0)"); /* no init without self-reference */
  free(s);
  s = tir_ok("B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,s}_{tx}=max(D^{f64,s}_{tx},A^{f64,g}_{tx,a});];",
             LEIR_TIR_BIND_SERIAL | LEIR_TIR_SCOPE_GLOBAL | LEIR_TIR_NO_IMPORT);
  HASNT(s, "thread_binding");
  HASNT(s, "scope=");
  HASNT(s, "from tvm");
  HAS(s, "for tx in T.serial(2):");
  free(s);
}
END_TEST

START_TEST(test_tir_loop_kinds) {
  char *s = tir_ok("P^{4}_{a=0}U^{2}_{c=0}L^{3}_{d=0}L^{5}_{f=0}V^{4}_{g=0}"
                   "[C^{f32,g}_{a,c,d,f,g}=A^{f32,g}_{a,c,d,f,g}*2;];", 0);
  HAS(s, "for a in T.parallel(4):");
  HAS(s, "for c in T.unroll(2):");
  HAS(s, "for d, f in T.grid(3, 5):");
  HAS(s, "for g in T.vectorized(4):");
  HAS(s, "C[a, c, d, f, g] = A[a, c, d, f, g] * T.float32(2.0)");
  free(s);
  /* a P loop carrying a reduction stays serial (never raced) */
  s = tir_ok("L^{4}_{a=0}P^{8}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];", 0);
  HAS(s, "for c in T.serial(8):");
  HASNT(s, "T.parallel");
  free(s);
}
END_TEST

START_TEST(test_tir_guards_indirect_dtypes) {
  char *s = tir_ok("B^{2}_{tx=0}L^{12}_{c=0}[E^{f64,g}_{tx,c}=if_then_else(2<=c<10,A^{f64,g}_{tx,c-2},0);];", 0);
  HAS(s, "T.if_then_else(2 <= c and c < 10, A[tx, c - 2], T.float64(0.0))");
  free(s);
  leir_program *p = NULL;
  const char *t = "B^{4}_{tx=0}[D^{f64,g}_{tx}=E^{f64,g}_{tx,C^{i64,g}_{tx}};];";
  ck_assert_int_eq(leir_program_parse(&p, t, strlen(t), NULL), LEIR_OK);
  leir_tensor_decl d[3] = {{"E", LEIR_F64, LEIR_ROLE_INPUT, 2, (int64_t[]){4, 3}},
                           {"C", LEIR_I64, LEIR_ROLE_INPUT, 1, (int64_t[]){4}},
                           {"D", LEIR_F64, LEIR_ROLE_OUTPUT, 1, (int64_t[]){4}}};
  ck_assert_int_eq(leir_program_set_signature(p, d, 3), LEIR_OK);
  char *out = NULL;
  ck_assert_int_eq(leir_lower_tir(p, NULL, &out, NULL), LEIR_OK);
  HAS(out, "D[tx] = E[tx, T.Cast(\"int32\", C[tx])]");
  free(out);
  leir_program_free(p);
  s = tir_ok("B^{2}_{tx=0}L^{4}_{a=0}[C^{f16,g}_{tx,a}=A^{f16,g}_{tx,a}+a;];", 0);
  HAS(s, "C[tx, a] = T.Cast(\"float16\", T.Cast(\"float32\", A[tx, a]) + T.Cast(\"float32\", a))");
  free(s);
  s = tir_ok("L^{6}_{a=0}[C^{i64,g}_{a//2}=C^{i64,g}_{a//2}+A^{i64,g}_{a%3};];", 0);
  HAS(s, "C[a // 2] = C[a // 2] + A[a % 3]");
  HAS(s, "C[a // 2] = T.int64(0)");
  free(s);
}
END_TEST

START_TEST(test_tir_nested_nest_and_keywords) {
  char *s = tir_ok("B^{2}_{tx=0}[D^{f64,g}_{tx}=A^{f64,g}_{tx,0};L^{3}_{in=0}[C^{f64,g}_{tx,in}=D^{f64,g}_{tx}*A^{f64,g}_{tx,in};];];", 0);
  HAS(s, "        D[tx] = A[tx, 0]\n        for in_ in T.serial(3):\n            C[tx, in_] = D[tx] * A[tx, in_]");
  free(s);
}
END_TEST

START_TEST(test_tir_blocks_form) {
  char *s = tir_ok("B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};];"
                   "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}/D^{f64,g}_{tx};];",
                   LEIR_TIR_BLOCKS);
  HAS(s, "@T.prim_func(s_tir=True)\n");
  HAS(s, "    with T.sblock(\"root\"):\n        D = T.alloc_buffer((2,), \"float64\")\n");
  /* the init block binds only the left-hand loops, all spatial */
  HAS(s, "with T.sblock(\"D\"):\n                v_tx = T.axis.remap(\"S\", [tx])\n"
         "                D[v_tx] = T.float64(0.0)");
  /* the reduction: a is a reduction axis, the block name is unique */
  HAS(s, "with T.sblock(\"D_1\"):\n                    v_tx, v_a = T.axis.remap(\"SR\", [tx, a])\n"
         "                    D[v_tx] = D[v_tx] + A[v_tx, v_a]");
  HAS(s, "v_tx, v_a = T.axis.remap(\"SS\", [tx, a])");
  free(s);
  /* keyword loop variables: renamed outside the block, v_ inside */
  s = tir_ok("L^{3}_{in=0}[C^{f64,g}_{in}=A^{f64,g}_{in};];", LEIR_TIR_BLOCKS);
  HAS(s, "for in_ in T.serial(3):");
  HAS(s, "v_in = T.axis.remap(\"S\", [in_])");
  HAS(s, "C[v_in] = A[v_in]");
  free(s);
}
END_TEST

START_TEST(test_tir_bad_input_clean_status) {
  /* an access out of the declared bounds: the static check's status */
  leir_program *bad = NULL;
  const char *bt = "B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx+5};];";
  ck_assert_int_eq(leir_program_parse(&bad, bt, strlen(bt), NULL), LEIR_OK);
  leir_tensor_decl d[2] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 1, (int64_t[]){2}},
                           {"C", LEIR_F64, LEIR_ROLE_OUTPUT, 1, (int64_t[]){2}}};
  ck_assert_int_eq(leir_program_set_signature(bad, d, 2), LEIR_OK);
  char *out = (char *)1;
  ck_assert_int_eq(leir_lower_tir(bad, NULL, &out, NULL), LEIR_ERR_INVALID);
  ck_assert_ptr_null(out);
  leir_program_free(bad);
  out = (char *)1;
  ck_assert_int_eq(leir_lower_tir(NULL, NULL, &out, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_ptr_null(out);
  leir_program *p = NULL;
  const char *t = "B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx};];";
  ck_assert_int_eq(leir_program_parse(&p, t, strlen(t), NULL), LEIR_OK);
  leir_tir_options o = LEIR_TIR_OPTIONS_INIT;
  o.size = 4;
  ck_assert_int_eq(leir_lower_tir(p, &o, &out, NULL), LEIR_ERR_ARGUMENT);
  leir_tir_options_init(&o);
  o.func_name = "def";
  ck_assert_int_eq(leir_lower_tir(p, &o, &out, NULL), LEIR_ERR_ARGUMENT);
  o.func_name = "kernel_1";
  ck_assert_int_eq(leir_lower_tir(p, &o, &out, NULL), LEIR_OK);
  HAS(out, "def kernel_1(");
  free(out);
  leir_program_free(p);
}
END_TEST

START_TEST(test_tir_output_linear_in_program_size) {
  /* a long chain of nests and a wide max(): output stays proportional */
  size_t sizes[2] = {0, 0};
  for (int r = 0; r < 2; r++) {
    int n = r ? 400 : 100;
    char *text = malloc((size_t)n * 64 + 64);
    size_t k = 0;
    k += (size_t)sprintf(text + k, "L^{4}_{a=0}[C^{f64,g}_{a}=max(A^{f64,g}_{a}");
    for (int i = 0; i < n; i++) k += (size_t)sprintf(text + k, ",A^{f64,g}_{a}");
    sprintf(text + k, ");];");
    char *s = tir_ok(text, 0);
    sizes[r] = strlen(s);
    free(s);
    free(text);
  }
  ck_assert_uint_lt(sizes[1], sizes[0] * 5);
  ck_assert_uint_gt(sizes[1], sizes[0] * 3);
}
END_TEST

static Suite *tir_suite(void) {
  Suite *s = suite_create("tir");
  TCase *tc = tcase_create("tir");
  tcase_add_test(tc, test_tir_softmax_function_params_allocs_init);
  tcase_add_test(tc, test_tir_loop_kinds);
  tcase_add_test(tc, test_tir_guards_indirect_dtypes);
  tcase_add_test(tc, test_tir_nested_nest_and_keywords);
  tcase_add_test(tc, test_tir_blocks_form);
  tcase_add_test(tc, test_tir_bad_input_clean_status);
  tcase_add_test(tc, test_tir_output_linear_in_program_size);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(tir_suite()); }
