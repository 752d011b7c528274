/*
 * Differential testing with generated programs (tests/support/gen.c): what
 * leir_program_check accepts, every backend runs, and the interpreter, the
 * CPU backend and the CUDA emulation (the generated CUDA C run on the CPU,
 * tests/support/cuda_emul.c) agree bit for bit (NaN where NaN, whatever its
 * payload) on seeded inputs, with the same status (a run-time error where
 * the interpreter reports one).
 *
 * LEIR_TEST_GEN_COUNT (default 150) programs run on all three; 2000 more
 * run on the interpreter and through the C and CUDA lowering, and the first
 * LEIR_TEST_GEN_EMUL_EXTRA (default 400) of them on the CUDA emulation too
 * (one C++ compilation for all emulated programs). Seeds whose failure is a known backend bug are listed in
 * tests/data/gen-xfail.txt (seed, then why): they must still fail, so that
 * a fix is noticed and the entry removed. Programs found failing are kept
 * as regression inputs of the fuzz target (tests/fuzz/regressions/gen).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_emul.h"
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

/* Seeds of the kept regression inputs (tests/fuzz/regressions/gen/seed-*:
 * 8 bytes, little-endian); at most cap. */
static size_t regression_seeds(uint64_t *out, size_t cap) {
  char path[512];
  snprintf(path, sizeof path, "%s/../fuzz/regressions/gen", test_data_path(""));
  DIR *d = opendir(path);
  if (!d) return 0;
  size_t n = 0;
  struct dirent *de;
  while (n < cap && (de = readdir(d))) {
    if (strncmp(de->d_name, "seed-", 5) != 0) continue;
    char file[1024];
    snprintf(file, sizeof file, "%s/%s", path, de->d_name);
    FILE *f = fopen(file, "rb");
    if (!f) continue;
    unsigned char b[8] = {0};
    size_t got = fread(b, 1, 8, f);
    fclose(f);
    uint64_t seed = 0;
    for (size_t i = 0; i < got; i++) seed |= (uint64_t)b[i] << (8 * i);
    out[n++] = seed;
  }
  closedir(d);
  return n;
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

/* The CUDA emulation of the checked programs among `seeds` against the
 * interpreter; returns how many ran. Differences are kept as regression
 * inputs and fail the test unless gen-xfail.txt lists the seed. */
static int emulate_all(const uint64_t *seeds, size_t nseeds, leir_backend *interp, int *differ) {
  cuda_emul *e = cuda_emul_new();
  ck_assert_ptr_nonnull(e);
  leir_program **progs = calloc(nseeds, sizeof *progs);
  int *idx = calloc(nseeds, sizeof *idx);
  gen_program *g = malloc(sizeof *g);
  for (size_t i = 0; i < nseeds; i++) {
    idx[i] = -1;
    gen_generate(seeds[i], g);
    leir_program *p = gen_parse(g);
    if (!p || leir_program_check(p, NULL, NULL) != LEIR_OK) {
      leir_program_free(p);
      continue;
    }
    progs[i] = p;
    idx[i] = cuda_emul_add(e, p); /* -1: the CUDA lowering refuses it (a status) */
  }
  char log[4096];
  ck_assert_msg(cuda_emul_build(e, log, sizeof log), "C++ emulation build failed:\n%s", log);
  int ran = 0;
  for (size_t i = 0; i < nseeds; i++) {
    leir_program *p = progs[i];
    if (!p || idx[i] < 0) continue;
    size_t n = leir_program_signature_count(p);
    void *bi[8], *be[8];
    size_t bytes[8];
    for (size_t k = 0; k < n; k++) {
      leir_tensor_decl d;
      leir_program_signature_get(p, k, &d);
      bytes[k] = leir_dtype_size(d.dtype);
      for (uint32_t r = 0; r < d.rank; r++) bytes[k] *= (size_t)d.shape[r];
      bi[k] = malloc(bytes[k] ? bytes[k] : 1);
      be[k] = malloc(bytes[k] ? bytes[k] : 1);
    }
    ck_assert_int_eq(leir_program_fill_inputs(p, 7, 0, bi, n), LEIR_OK);
    for (size_t k = 0; k < n; k++) memcpy(be[k], bi[k], bytes[k]);
    leir_status si = leir_run(interp, p, bi, n);
    leir_status se = cuda_emul_run(e, idx[i], be);
    ran++;
    char why[300] = "";
    bool bad = false;
    if (si != se) {
      bad = true;
      snprintf(why, sizeof why, "interp %s, cuda emulation %s", leir_status_name(si),
               leir_status_name(se));
    } else if (si == LEIR_OK && !same_outputs(p, bi, be, n, why, sizeof why)) {
      bad = true;
    }
    if (bad) {
      (*differ)++;
      keep_regression(seeds[i]);
      gen_generate(seeds[i], g);
      bool expected = xfail_has(seeds[i]);
      fprintf(stderr, "test_differential: seed %llu: cuda emulation: %s%s\n  %s\n  %s\n",
              (unsigned long long)seeds[i], why, expected ? " (expected: gen-xfail.txt)" : "",
              g->text, g->signature);
      ck_assert_msg(expected, "seed %llu: cuda emulation: %s", (unsigned long long)seeds[i], why);
    }
    for (size_t k = 0; k < n; k++) free(bi[k]), free(be[k]);
  }
  for (size_t i = 0; i < nseeds; i++) leir_program_free(progs[i]);
  free(progs);
  free(idx);
  free(g);
  cuda_emul_free(e);
  return ran;
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
  /* every kept regression input, on all backends */
  uint64_t kept[256];
  size_t nkept = regression_seeds(kept, 256);
  for (size_t i = 0; i < nkept; i++) run_one(kept[i], interp, cpu, &t);
  for (int s = 1; s <= 2000; s++) run_one((uint64_t)s + 1000000, interp, NULL, &t);
  int emulated = 0, emul_differ = 0;
  if (cuda_emul_available()) {
    const char *x = getenv("LEIR_TEST_GEN_EMUL_EXTRA");
    int extra = x ? atoi(x) : 400;
    if (extra < 0) extra = 0;
    if (extra > 2000) extra = 2000;
    uint64_t *seeds = malloc((size_t)(count + extra + 1) * sizeof *seeds + sizeof kept);
    size_t ns = 0;
    for (int s = 1; s <= count; s++) seeds[ns++] = (uint64_t)s;
    for (size_t i = 0; i < nkept; i++) seeds[ns++] = kept[i];
    for (int s = 1; s <= extra; s++) seeds[ns++] = (uint64_t)s + 1000000;
    emulated = emulate_all(seeds, ns, interp, &emul_differ);
    free(seeds);
  } else {
    fprintf(stderr, "test_differential: skipping the CUDA emulation: no C++ compiler (%s)\n",
            cuda_emul_cxx());
  }
  fprintf(stderr,
          "test_differential: %d programs generated, %d pass the checks, %d run on interp and "
          "cpu, %d differ (%d expected); %d run on the CUDA emulation, %d differ\n",
          t.generated, t.checked, t.ran, t.differ, t.xfail, emulated, emul_differ);
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
