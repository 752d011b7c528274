/*
 * Differential testing with generated programs (tests/support/gen.c): what
 * leir_program_check accepts, every backend runs, and the interpreter and
 * the CPU backend agree bit for bit (NaN where NaN) on seeded inputs.
 *
 * LEIR_TEST_GEN_COUNT (default 150) programs run on both backends; 2000
 * more only on the interpreter and through the C (and, when built, CUDA)
 * lowering. Seeds whose failure is a known backend bug are listed in
 * tests/data/gen-xfail.txt (seed, then why): they must still fail, so that
 * a fix is noticed and the entry removed. Programs found failing are kept
 * as regression inputs of the fuzz target (tests/fuzz/regressions/gen).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "testutil.h"

static bool xfail_has(uint64_t seed) {
  FILE *f = fopen(test_data_path("gen-xfail.txt"), "r");
  if (!f) return false;
  char line[512];
  bool found = false;
  while (!found && fgets(line, sizeof line, f))
    if (line[0] != '#' && strtoull(line, NULL, 10) == seed && line[0] >= '0' && line[0] <= '9')
      found = true;
  fclose(f);
  return found;
}

/* Runs p on a backend; the status, the outputs in bufs. */
static leir_status run_on(leir_backend *b, const leir_program *p, void **bufs, size_t n) {
  leir_status st = leir_program_fill_inputs(p, 7, 0, bufs, n);
  ck_assert_msg(st == LEIR_OK, "fill: %s", leir_error_last()->message);
  return leir_run(b, p, bufs, n);
}

static bool same_outputs(const leir_program *p, void **x, void **y, size_t n, char *why,
                         size_t cap) {
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    if (d.role != LEIR_ROLE_OUTPUT) continue;
    uint64_t el = 1;
    for (uint32_t k = 0; k < d.rank; k++) el *= (uint64_t)d.shape[k];
    size_t es = leir_dtype_size(d.dtype);
    for (uint64_t e = 0; e < el; e++) {
      const unsigned char *a = (const unsigned char *)x[i] + e * es,
                          *b = (const unsigned char *)y[i] + e * es;
      if (memcmp(a, b, es) == 0) continue;
      bool nan_a = false, nan_b = false;
      if (d.dtype == LEIR_F64) {
        double u, v;
        memcpy(&u, a, 8), memcpy(&v, b, 8);
        nan_a = isnan(u), nan_b = isnan(v);
      } else if (d.dtype == LEIR_F32) {
        float u, v;
        memcpy(&u, a, 4), memcpy(&v, b, 4);
        nan_a = isnan(u), nan_b = isnan(v);
      } else if (d.dtype == LEIR_F16 || d.dtype == LEIR_BF16) {
        uint16_t u, v;
        memcpy(&u, a, 2), memcpy(&v, b, 2);
        uint16_t em = d.dtype == LEIR_F16 ? 0x7C00 : 0x7F80;
        nan_a = (u & em) == em && (u & ~(em | 0x8000)), nan_b = (v & em) == em && (v & ~(em | 0x8000));
      }
      if (nan_a && nan_b) continue;
      snprintf(why, cap, "output %s element %llu differs", d.name, (unsigned long long)e);
      return false;
    }
  }
  return true;
}

static void keep_regression(uint64_t seed) {
  char path[512];
  snprintf(path, sizeof path, "%s/../fuzz/regressions/gen/seed-%llu", test_data_path(""),
           (unsigned long long)seed);
  FILE *f = fopen(path, "wb");
  if (!f) return;
  unsigned char bytes[8];
  for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)(seed >> (8 * i));
  fwrite(bytes, 1, 8, f);
  fclose(f);
}

typedef struct tally {
  int generated, checked, ran, differ, xfail;
} tally;

static void run_one(uint64_t seed, leir_backend *interp, leir_backend *cpu, tally *t) {
  gen_program g;
  gen_generate(seed, &g);
  t->generated++;
  leir_program *p = gen_parse(&g);
  ck_assert_msg(p != NULL, "seed %llu: the generator wrote what the library refuses: %s\n%s\n%s",
                (unsigned long long)seed, leir_error_last()->message, g.text, g.signature);
  /* canonical text round trip */
  char *text = test_print(p);
  ck_assert_str_eq(text, g.text);
  leir_free(text);
  if (leir_program_check(p, NULL, NULL) != LEIR_OK) {
    leir_program_free(p);
    return;
  }
  t->checked++;
  size_t n = leir_program_signature_count(p);
  void *bi[8], *bc[8];
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    size_t bytes = leir_dtype_size(d.dtype);
    for (uint32_t k = 0; k < d.rank; k++) bytes *= (size_t)d.shape[k];
    bi[i] = malloc(bytes);
    bc[i] = malloc(bytes);
  }
  leir_status si = run_on(interp, p, bi, n);
  /* the C lowering of what check accepts always succeeds */
  leir_backend_options lo = LEIR_BACKEND_OPTIONS_INIT;
  lo.flags = LEIR_BACKEND_LOWER_ONLY;
  for (size_t k = 0; k < leir_backend_count(); k++) {
    const char *name = leir_backend_name_at(k);
    if (strcmp(name, "interp") == 0) continue;
    leir_backend *lb = NULL;
    if (leir_backend_open(&lb, name, &lo) != LEIR_OK) continue;
    char *src = NULL;
    leir_status ls = leir_backend_lower(lb, p, &src, NULL);
    /* cuda may refuse a bound loop it cannot map (a status, never a crash) */
    ck_assert_msg(ls == LEIR_OK || (strcmp(name, "cuda") == 0 && ls == LEIR_ERR_INVALID),
                  "seed %llu: %s lowering: %s\n%s", (unsigned long long)seed, name,
                  leir_error_last()->message, g.text);
    leir_free(src);
    leir_backend_free(lb);
  }
  bool bad = false;
  char why[300] = "";
  if (cpu) {
    leir_status sc = run_on(cpu, p, bc, n);
    t->ran++;
    if (si != sc) {
      bad = true;
      snprintf(why, sizeof why, "interp %s, cpu %s", leir_status_name(si), leir_status_name(sc));
    } else if (si == LEIR_OK && !same_outputs(p, bi, bc, n, why, sizeof why)) {
      bad = true;
    }
  } else {
    ck_assert_msg(si == LEIR_OK || si == LEIR_ERR_RUNTIME, "seed %llu: interp: %s",
                  (unsigned long long)seed, leir_error_last()->message);
  }
  bool expected = xfail_has(seed);
  if (bad) {
    t->differ++;
    keep_regression(seed);
    fprintf(stderr, "test_differential: seed %llu: %s%s\n  %s\n  %s\n", (unsigned long long)seed,
            why, expected ? " (expected: gen-xfail.txt)" : "", g.text, g.signature);
    if (expected) t->xfail++;
    ck_assert_msg(expected, "seed %llu: %s", (unsigned long long)seed, why);
  } else if (cpu) {
    ck_assert_msg(!expected, "seed %llu is listed in gen-xfail.txt but passes now: remove it",
                  (unsigned long long)seed);
  }
  for (size_t i = 0; i < n; i++) free(bi[i]), free(bc[i]);
  leir_program_free(p);
}

START_TEST(test_generated_programs_agree) {
  leir_backend *interp = NULL, *cpu = NULL;
  ck_assert_int_eq(leir_backend_open(&interp, "interp", NULL), LEIR_OK);
  leir_backend_options o = LEIR_BACKEND_OPTIONS_INIT;
  o.threads = 2;
  if (leir_backend_open(&cpu, "cpu", &o) != LEIR_OK) cpu = NULL;
  const char *c = getenv("LEIR_TEST_GEN_COUNT");
  int count = c ? atoi(c) : 150;
  tally t = {0, 0, 0, 0, 0};
  for (int s = 1; s <= count; s++) run_one((uint64_t)s, interp, cpu, &t);
  for (int s = 1; s <= 2000; s++) run_one((uint64_t)s + 1000000, interp, NULL, &t);
  fprintf(stderr,
          "test_differential: %d programs generated, %d pass the checks, %d run on interp and "
          "cpu, %d differ (%d expected)\n",
          t.generated, t.checked, t.ran, t.differ, t.xfail);
  ck_assert_int_ge(t.checked, t.generated * 9 / 10);
  leir_backend_free(cpu);
  leir_backend_free(interp);
}
END_TEST

START_TEST(test_generator_covers_the_language) {
  int kinds[5] = {0}, dtypes[LEIR_DTYPE_COUNT] = {0}, guards = 0, indirect = 0, nested = 0,
      reductions = 0;
  for (uint64_t s = 1; s <= 400; s++) {
    gen_program g;
    gen_generate(s, &g);
    gen_program h;
    gen_generate(s, &h);
    ck_assert_str_eq(g.text, h.text); /* deterministic */
    for (const char *q = g.text; *q; q++) {
      const char *k = strchr("LPVUB", *q);
      if (k && q[1] == '^') kinds[k - "LPVUB"]++;
    }
    guards += strstr(g.text, "if_then_else") != NULL;
    indirect += strstr(g.text, "_{I^{") != NULL;
    nested += strstr(g.text, "[L^") != NULL || strstr(g.text, "[P^") != NULL ||
              strstr(g.text, "[B^") != NULL || strstr(g.text, "[V^") != NULL ||
              strstr(g.text, "[U^") != NULL;
    reductions += strstr(g.text, "max(R") != NULL || strstr(g.text, "+(1+") != NULL ||
                  strstr(g.text, "R^{") != NULL;
    leir_program *p = gen_parse(&g);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < leir_program_signature_count(p); i++) {
      leir_tensor_decl d;
      leir_program_signature_get(p, i, &d);
      dtypes[d.dtype]++;
    }
    leir_program_free(p);
  }
  for (int k = 0; k < 5; k++) ck_assert_int_gt(kinds[k], 20);
  for (int d = 0; d < LEIR_DTYPE_COUNT; d++) ck_assert_msg(dtypes[d] > 0, "dtype %d never used", d);
  ck_assert_int_gt(guards, 40);
  ck_assert_int_gt(indirect, 40);
  ck_assert_int_gt(nested, 40);
  ck_assert_int_gt(reductions, 40);
}
END_TEST

static Suite *differential_suite(void) {
  Suite *s = suite_create("differential");
  TCase *tc = tcase_create("generated");
  tcase_add_test(tc, test_generator_covers_the_language);
  tcase_add_test(tc, test_generated_programs_agree);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(differential_suite()); }
