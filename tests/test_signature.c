/*
 * Signatures (spec/leir.md §2): set/get validation, and inference compared
 * with the reference's own signatures for every sources-small program.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

/* ---- inference against the corpus ------------------------------------------- */

/* Programs whose text cannot reveal the whole interface. `unreferenced`:
 * inputs of the reference signature that the program never reads (unused
 * module parameters); `partial`: an input is read only in part (pooling
 * without padding whose windows do not reach the last rows/columns), so the
 * inferred extents are smaller. */
typedef struct inference_exception {
  const char *id;
  const char *unreferenced; /* space-separated names, "" if none */
  bool partial;
} inference_exception;

static const inference_exception exceptions[] = {
    {"level1/Average_Pooling_2D", "", true},
    {"level2/Conv2D_ReLU_BiasAdd", "F", false},
    {"level2/Conv2d_Add_Scale_Sigmoid_GroupNorm", "H I", false},
    {"level2/Conv2d_Min_Add_Multiply", "H", false},
    {"level2/Matmul_Swish_Sum_GroupNorm", "H", false},
    {"level2/Matmul_Scaling_ResidualAdd", "G", false},
    {"level2/Conv3d_Scaling_Tanh_Multiply_Sigmoid", "H I", false},
    {"level2/Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd", "I", false},
    {"level2/Conv2d_Multiply_LeakyReLU_GELU", "G", false},
    {"level2/Matmul_Min_Subtract", "F", false},
    {"level2/Conv3d_Multiply_InstanceNorm_Clamp_Multiply_Max", "M", false},
    {"level2/Conv2d_Tanh_Scaling_BiasAdd_Max", "I", false},
    {"level2/Conv3d_Divide_Max_GlobalAvgPool_BiasAdd_Sum", "J", false},
    {"level2/Conv3d_LeakyReLU_Sum_Clamp_GELU", "H", false},
    {"level2/Matmul_Add_Swish_Tanh_GELU_Hardtanh", "J", false},
    {"level2/Matmul_BatchNorm_BiasAdd_Divide_Swish", "K", false},
};

static const inference_exception *exception_for(const char *id) {
  for (size_t i = 0; i < sizeof exceptions / sizeof *exceptions; i++)
    if (strcmp(exceptions[i].id, id) == 0) return &exceptions[i];
  return NULL;
}

/* Is tensor `name` written anywhere in `text` ("Name^{" not preceded by a
 * letter)? */
static bool referenced(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
    bool start_ok = p == text || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'));
    if (start_ok && p[n] == '^' && p[n + 1] == '{') return true;
  }
  return false;
}

START_TEST(test_inference_matches_the_reference_signatures) {
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  const jsonl_value *o;
  size_t exact = 0, excepted = 0;
  while ((o = jsonl_next(f))) {
    const char *id = jsonl_str(jsonl_get(o, "id"));
    const char *text = jsonl_str(jsonl_get(o, "leir"));
    const inference_exception *ex = exception_for(id);
    leir_program *p = test_parse(text);
    ck_assert_msg(leir_program_infer_signature(p) == LEIR_OK, "%s: %s", id,
                  leir_error_last()->message);
    /* the corpus signature, inputs then outputs, restricted to referenced names */
    const jsonl_value *sig = jsonl_get(o, "signature");
    char unreferenced[256] = "";
    size_t next = 0, total = 0;
    bool smaller = false;
    static const char *const roles[] = {"inputs", "outputs"};
    for (int r = 0; r < 2; r++) {
      const jsonl_value *list = jsonl_get(sig, roles[r]);
      for (size_t i = 0; i < jsonl_len(list); i++, total++) {
        const jsonl_value *d = jsonl_at(list, i);
        const char *name = jsonl_str(jsonl_get(d, "name"));
        if (!referenced(text, name)) {
          ck_assert_msg(r == 0, "%s: output %s is not in the text", id, name);
          snprintf(unreferenced + strlen(unreferenced), sizeof unreferenced - strlen(unreferenced),
                   "%s%s", unreferenced[0] ? " " : "", name);
          continue;
        }
        leir_tensor_decl got;
        ck_assert_msg(leir_program_signature_get(p, next++, &got) == LEIR_OK,
                      "%s: inferred signature lacks %s", id, name);
        ck_assert_msg(strcmp(got.name, name) == 0, "%s: inferred %s where the reference has %s",
                      id, got.name, name);
        ck_assert_int_eq(got.role, r ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT);
        leir_dtype dt;
        ck_assert_int_eq(leir_dtype_from_name(jsonl_str(jsonl_get(d, "dtype")), &dt), LEIR_OK);
        ck_assert_int_eq(got.dtype, dt);
        const jsonl_value *shape = jsonl_get(d, "shape");
        ck_assert_uint_eq(got.rank, jsonl_len(shape));
        for (uint32_t k = 0; k < got.rank; k++) {
          int64_t want = jsonl_int(jsonl_at(shape, k), -1);
          ck_assert_msg(got.shape[k] <= want, "%s: %s extent %u is %lld, above the reference's %lld",
                        id, name, k, (long long)got.shape[k], (long long)want);
          smaller = smaller || got.shape[k] < want;
        }
      }
    }
    ck_assert_uint_eq(leir_program_signature_count(p), next);
    if (ex) {
      ck_assert_msg(strcmp(unreferenced, ex->unreferenced) == 0, "%s: unreferenced inputs '%s', listed '%s'",
                    id, unreferenced, ex->unreferenced);
      ck_assert_msg(smaller == ex->partial, "%s: partial read %d, listed %d", id, smaller, ex->partial);
      ck_assert(unreferenced[0] || smaller); /* the listing is not stale */
      excepted++;
    } else {
      ck_assert_msg(!smaller && unreferenced[0] == '\0' && next == total,
                    "%s: inferred signature differs from the reference", id);
      exact++;
    }
    leir_program_free(p);
  }
  jsonl_close(f);
  ck_assert_uint_eq(excepted, sizeof exceptions / sizeof *exceptions);
  ck_assert_uint_eq(exact + excepted, 121);
}
END_TEST

START_TEST(test_inference_orders_and_types) {
  /* inputs by name index (A, C, ..., Z, Aa, ...), then outputs; several outputs */
  leir_program *p = test_parse(
      "B^{2}_{tx=0}[Aa^{i64,g}_{tx}=Z^{i64,g}_{tx}+C^{i64,g}_{tx};D^{f32,g}_{tx}=A^{f32,g}_{tx,1};];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  static const char *const names[] = {"A", "C", "Z", "D", "Aa"};
  ck_assert_uint_eq(leir_program_signature_count(p), 5);
  for (size_t i = 0; i < 5; i++) {
    leir_tensor_decl d;
    ck_assert_int_eq(leir_program_signature_get(p, i, &d), LEIR_OK);
    ck_assert_str_eq(d.name, names[i]);
    ck_assert_int_eq(d.role, i < 3 ? LEIR_ROLE_INPUT : LEIR_ROLE_OUTPUT);
  }
  leir_tensor_decl a;
  leir_program_signature_get(p, 0, &a);
  ck_assert_int_eq(a.dtype, LEIR_F32);
  ck_assert_uint_eq(a.rank, 2);
  ck_assert_int_eq(a.shape[0], 2);
  ck_assert_int_eq(a.shape[1], 2);
  /* inference replaces an existing signature */
  test_set_signature(p, "A:f32:4x4,C:i64:2,Z:i64:2 -> D:f32:2,Aa:i64:2");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_program_signature_get(p, 0, &a);
  ck_assert_int_eq(a.shape[0], 2);
  leir_program_free(p);
  /* a tensor read by a later nest is an intermediate, not an output */
  p = test_parse("B^{2}_{tx=0}[D^{f64,g}_{tx}=A^{f64,g}_{tx};];B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx};];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  ck_assert_uint_eq(leir_program_signature_count(p), 2);
  leir_program_free(p);
  /* a failing program has no signature to infer */
  p = test_parse("B^{2}_{tx=0}[C^{f64,g}_{tx}=q;];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_ERR_SIGNATURE);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "cannot infer a signature"));
  ck_assert_str_eq(leir_error_last()->rule, "check.unknown-var");
  ck_assert_uint_eq(leir_program_signature_count(p), 0);
  leir_program_free(p);
  ck_assert_int_eq(leir_program_infer_signature(NULL), LEIR_ERR_ARGUMENT);
}
END_TEST

/* ---- set/get ---------------------------------------------------------------- */

static leir_status try_set(leir_program *p, const leir_tensor_decl *d, size_t n, const char *rule) {
  leir_status st = leir_program_set_signature(p, d, n);
  if (rule) {
    ck_assert_int_ne(st, LEIR_OK);
    ck_assert_str_eq(leir_error_last()->rule, rule);
  }
  return st;
}

START_TEST(test_set_signature_validates) {
  leir_program *p = test_parse("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx};];");
  int64_t s2[] = {2}, s0[] = {0};
  leir_tensor_decl ok[2] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 1, s2},
                            {"C", LEIR_F64, LEIR_ROLE_OUTPUT, 1, s2}};
  ck_assert_int_eq(try_set(p, ok, 2, NULL), LEIR_OK);
  leir_tensor_decl d[2];
  memcpy(d, ok, sizeof d);
  d[0].name = "a";
  try_set(p, d, 2, "signature.name");
  d[0].name = "Tx";
  try_set(p, d, 2, "signature.name");
  d[0].name = NULL;
  try_set(p, d, 2, "signature.name");
  memcpy(d, ok, sizeof d);
  d[0].dtype = (leir_dtype)99;
  try_set(p, d, 2, "signature.dtype");
  memcpy(d, ok, sizeof d);
  d[0].role = (leir_role)7;
  try_set(p, d, 2, "signature.role");
  memcpy(d, ok, sizeof d);
  d[0].role = LEIR_ROLE_OUTPUT;
  d[1].role = LEIR_ROLE_INPUT;
  try_set(p, d, 2, "signature.order");
  memcpy(d, ok, sizeof d);
  d[0].rank = LEIR_MAX_RANK + 1;
  try_set(p, d, 2, "signature.rank");
  memcpy(d, ok, sizeof d);
  d[0].shape = NULL;
  try_set(p, d, 2, "signature.rank");
  memcpy(d, ok, sizeof d);
  d[0].shape = s0;
  try_set(p, d, 2, "signature.shape");
  memcpy(d, ok, sizeof d);
  d[1].name = "A";
  try_set(p, d, 2, "signature.duplicate");
  try_set(p, ok, 1, "signature.no-output");
  ck_assert_int_eq(leir_program_set_signature(p, NULL, 2), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_set_signature(NULL, ok, 2), LEIR_ERR_ARGUMENT);
  static leir_tensor_decl many[5000];
  for (size_t i = 0; i < 5000; i++) many[i] = ok[1];
  try_set(p, many, 5000, "signature.size");
  /* failures leave the previous signature in place */
  ck_assert_uint_eq(leir_program_signature_count(p), 2);
  /* an empty signature clears it */
  ck_assert_int_eq(leir_program_set_signature(p, NULL, 0), LEIR_OK);
  ck_assert_uint_eq(leir_program_signature_count(p), 0);
  leir_program_free(p);
}
END_TEST

START_TEST(test_signature_is_copied) {
  leir_program *p = test_parse("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx};];");
  char a[] = "A", c[] = "C";
  int64_t s[] = {2};
  leir_tensor_decl d[2] = {{a, LEIR_F64, LEIR_ROLE_INPUT, 1, s}, {c, LEIR_F64, LEIR_ROLE_OUTPUT, 1, s}};
  ck_assert_int_eq(leir_program_set_signature(p, d, 2), LEIR_OK);
  a[0] = 'Z';
  s[0] = 99;
  leir_tensor_decl got;
  ck_assert_int_eq(leir_program_signature_get(p, 0, &got), LEIR_OK);
  ck_assert_str_eq(got.name, "A");
  ck_assert_int_eq(got.shape[0], 2);
  ck_assert_int_eq(leir_program_signature_get(p, 2, &got), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_signature_get(p, 0, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_uint_eq(leir_program_signature_count(NULL), 0);
  ck_assert_int_eq(leir_program_check(p, NULL, NULL), LEIR_OK);
  /* names */
  ck_assert_str_eq(leir_program_name(p), "");
  ck_assert_int_eq(leir_program_set_name(p, "x"), LEIR_OK);
  ck_assert_str_eq(leir_program_name(p), "x");
  ck_assert_int_eq(leir_program_set_name(p, NULL), LEIR_OK);
  ck_assert_str_eq(leir_program_name(p), "");
  ck_assert_str_eq(leir_program_name(NULL), "");
  leir_program_free(p);
}
END_TEST

START_TEST(test_common_tables) {
  ck_assert_str_eq(leir_version(), LEIR_VERSION_STRING);
  ck_assert_int_eq(leir_version_number(), LEIR_VERSION_NUMBER);
  ck_assert_str_eq(leir_status_name(LEIR_ERR_PARSE), "LEIR_ERR_PARSE");
  ck_assert_str_eq(leir_status_name((leir_status)-999), "LEIR_UNKNOWN_STATUS");
  ck_assert_str_eq(leir_status_message(LEIR_OK), "success");
  ck_assert_str_eq(leir_status_message((leir_status)-999), "unknown status");
  for (int d = 0; d < LEIR_DTYPE_COUNT; d++) {
    leir_dtype back;
    ck_assert_int_eq(leir_dtype_from_name(leir_dtype_name((leir_dtype)d), &back), LEIR_OK);
    ck_assert_int_eq(back, d);
    ck_assert_uint_gt(leir_dtype_size((leir_dtype)d), 0);
  }
  ck_assert_ptr_null(leir_dtype_name(LEIR_DTYPE_COUNT));
  ck_assert_uint_eq(leir_dtype_size(LEIR_DTYPE_COUNT), 0);
  ck_assert_uint_eq(leir_dtype_size(LEIR_BF16), 2);
  leir_dtype x;
  ck_assert_int_eq(leir_dtype_from_name("f128", &x), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_dtype_from_name(NULL, &x), LEIR_ERR_ARGUMENT);
  leir_free(NULL);
}
END_TEST

static Suite *signature_suite(void) {
  Suite *s = suite_create("signature");
  TCase *tc = tcase_create("signature");
  tcase_add_test(tc, test_inference_matches_the_reference_signatures);
  tcase_add_test(tc, test_inference_orders_and_types);
  tcase_add_test(tc, test_set_signature_validates);
  tcase_add_test(tc, test_signature_is_copied);
  tcase_add_test(tc, test_common_tables);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(signature_suite()); }
