/* libleir's elementwise math (backends/leir_math.h): accuracy of the f32
 * exp and log against double-precision libm over sweeps of the whole float
 * range (subnormals, +-0, +-inf, NaN included), and bitwise agreement of
 * the interpreter, the C backend and the CUDA emulation on them. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_emul.h"
#include "prelude.h"
#include "testutil.h"

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* The spacing of floats at |v| (v a double in the float range). */
static double ulp_at(double v) {
  v = fabs(v);
  if (v < (double)FLT_MIN) return ldexp(1.0, -149);
  int e;
  frexp(v, &e); /* v = m 2^e, m in [0.5, 1) */
  return ldexp(1.0, e - 24);
}

typedef struct {
  double max_ulp;     /* largest error, in ulps of the exact result (normal results) */
  double max_ulp_sub; /* the same for subnormal results */
  long not_nearest;   /* results other than (float) of the double reference */
  long n;
  float worst, worst_sub;
} acc_stats;

/* Checks y = f(x) against the double reference ref (finite or not). */
static void account(acc_stats *s, float x, float y, double ref) {
  s->n++;
  if (isnan(ref)) {
    ck_assert_msg(isnan(y), "f(%a) = %a, want NaN", (double)x, (double)y);
    return;
  }
  if ((float)ref == y) return;
  s->not_nearest++;
  double err;
  if (isinf(y) || isinf((float)ref)) {
    /* at the overflow threshold: the rounding of ref decides */
    err = isinf(ref) ? INFINITY : fabs(fabs(ref) - (double)FLT_MAX) / ulp_at(FLT_MAX) + 0.5;
  } else {
    err = fabs((double)y - ref) / ulp_at(ref);
  }
  if (fabs(ref) < (double)FLT_MIN) {
    if (err > s->max_ulp_sub) {
      s->max_ulp_sub = err;
      s->worst_sub = x;
    }
  } else if (err > s->max_ulp) {
    s->max_ulp = err;
    s->worst = x;
  }
}

/* Every 251st bit pattern of both signs (all exponents, subnormals
 * included), plus a dense run around 0 and 1. */
static void sweep(int which, acc_stats *s) {
  for (uint64_t u = 0; u <= 0xffffffffu; u += 251) {
    float x = from_bits((uint32_t)u);
    if (which == 0)
      account(s, x, leir_exp_f32(x), exp((double)x));
    else
      account(s, x, leir_log_f32(x), log((double)x));
  }
  for (uint32_t u = 0; u < 200000; u++) {
    float x = from_bits(bits(which ? 1.0f : 0.0f) - 100000 + u);
    if (which == 0)
      account(s, x, leir_exp_f32(x), exp((double)x));
    else
      account(s, x, leir_log_f32(x), log((double)x));
  }
}

START_TEST(test_exp_faithful_over_the_float_range) {
  acc_stats s = {0};
  sweep(0, &s);
  /* the documented bounds (float-only evaluation, docs/verification.md):
   * < 0.65 ulp for a normal result (1 + r exact, the rest of e^r to about
   * 2^-29 before one rounding), < 0.8 ulp for a subnormal one (rounded a
   * second time when scaled): faithfully rounded everywhere */
  ck_assert_msg(s.max_ulp < 0.65, "exp: max error %.6f ulp at %a", s.max_ulp, (double)s.worst);
  ck_assert_msg(s.max_ulp_sub < 0.8, "exp: max error %.6f ulp at %a (subnormal result)",
                s.max_ulp_sub, (double)s.worst_sub);
  /* and correctly rounded for all but a small share of the inputs (about
   * 0.05% measured over every float) */
  ck_assert_msg(s.not_nearest * 500 < s.n, "exp: %ld of %ld not nearest", s.not_nearest, s.n);
}
END_TEST

/* exp at a finer step where it is used most: every 211th float of
 * [-1, 1], and [-88, 0] (softmax's exp(A - max)) in steps of about
 * 2^-12: the same bounds */
START_TEST(test_exp_dense_in_the_common_range) {
  acc_stats s = {0};
  for (uint32_t u = bits(1.0f); u >= 211; u -= 211) {
    float x = from_bits(u);
    account(&s, x, leir_exp_f32(x), exp((double)x));
    account(&s, -x, leir_exp_f32(-x), exp(-(double)x));
  }
  for (float x = -88.0f; x < 0.0f; x = nextafterf(x, 0.0f) + 0x1p-12f)
    account(&s, x, leir_exp_f32(x), exp((double)x));
  ck_assert_msg(s.max_ulp < 0.65, "exp: max error %.6f ulp at %a", s.max_ulp, (double)s.worst);
  ck_assert_msg(s.not_nearest * 500 < s.n, "exp: %ld of %ld not nearest", s.not_nearest, s.n);
}
END_TEST

START_TEST(test_log_faithful_over_the_float_range) {
  acc_stats s = {0};
  sweep(1, &s);
  ck_assert_msg(s.max_ulp < 0.5 + 1.0 / 256 && s.max_ulp_sub == 0, "log: max error %.6f ulp at %a",
                s.max_ulp, (double)s.worst);
  ck_assert_msg(s.not_nearest * 100000 < s.n, "log: %ld of %ld not nearest", s.not_nearest, s.n);
}
END_TEST

START_TEST(test_exp_special_values) {
  ck_assert(isnan(leir_exp_f32(NAN)));
  ck_assert(isnan(leir_exp_f32(-NAN)));
  /* a NaN's payload is kept (quieted) */
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(0x7fc12345u))), 0x7fc12345u);
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(0xffc12345u))), 0xffc12345u);
  /* signaling NaNs come back quieted, payload and sign kept (the clamps
   * on the bits let every NaN through) */
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(0x7f812345u))), 0x7fc12345u);
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(0xff800001u))), 0xffc00001u);
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(0x7fffffffu))), 0x7fffffffu);
  /* just beyond the clamps, and the largest finite floats */
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(0x42c80001u))), bits(INFINITY));
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(0xc3200001u))), 0u);
  ck_assert_uint_eq(bits(leir_exp_f32(INFINITY)), bits(INFINITY));
  ck_assert_uint_eq(bits(leir_exp_f32(-INFINITY)), 0u);
  ck_assert_uint_eq(bits(leir_exp_f32(0.0f)), bits(1.0f));
  ck_assert_uint_eq(bits(leir_exp_f32(-0.0f)), bits(1.0f));
  ck_assert_uint_eq(bits(leir_exp_f32(1.0f)), bits((float)exp(1.0)));
  /* overflow threshold: the largest x with a finite result is
   * 0x1.62e42ep+6 (88.7228394) */
  ck_assert(isfinite(leir_exp_f32(0x1.62e42ep+6f)));
  ck_assert(isinf(leir_exp_f32(0x1.62e430p+6f)));
  ck_assert(isinf(leir_exp_f32(FLT_MAX)));
  /* subnormal results and underflow to +0 */
  float sub = leir_exp_f32(-100.0f);
  ck_assert(sub > 0 && sub < FLT_MIN);
  ck_assert_uint_eq(bits(sub), bits((float)exp(-100.0)));
  ck_assert_uint_eq(bits(leir_exp_f32(-104.0f)), 0u);
  ck_assert_uint_eq(bits(leir_exp_f32(-FLT_MAX)), 0u);
  /* tiny arguments: 1 (or its neighbour below for tiny negative ones) */
  ck_assert_uint_eq(bits(leir_exp_f32(from_bits(1))), bits(1.0f));
  ck_assert_uint_eq(bits(leir_exp_f32(-0x1p-30f)), bits((float)exp(-0x1p-30)));
}
END_TEST

START_TEST(test_log_special_values) {
  ck_assert(isnan(leir_log_f32(NAN)));
  ck_assert_uint_eq(bits(leir_log_f32(from_bits(0x7fc12345u))), 0x7fc12345u);
  ck_assert(isnan(leir_log_f32(-1.0f)));
  ck_assert(isnan(leir_log_f32(-INFINITY)));
  ck_assert(isnan(leir_log_f32(-from_bits(1))));
  ck_assert_uint_eq(bits(leir_log_f32(0.0f)), bits(-INFINITY));
  ck_assert_uint_eq(bits(leir_log_f32(-0.0f)), bits(-INFINITY));
  ck_assert_uint_eq(bits(leir_log_f32(INFINITY)), bits(INFINITY));
  ck_assert_uint_eq(bits(leir_log_f32(1.0f)), 0u);
  /* the smallest subnormal: log(2^-149) */
  ck_assert_uint_eq(bits(leir_log_f32(from_bits(1))), bits((float)log(0x1p-149)));
  ck_assert_uint_eq(bits(leir_log_f32(FLT_MAX)), bits((float)log((double)FLT_MAX)));
  /* next to 1, where the result is tiny */
  float x = from_bits(bits(1.0f) + 1);
  ck_assert_uint_eq(bits(leir_log_f32(x)), bits((float)log((double)x)));
  x = from_bits(bits(1.0f) - 1);
  ck_assert_uint_eq(bits(leir_log_f32(x)), bits((float)log((double)x)));
}
END_TEST

/* Inputs for the backend comparison: special values, subnormals, the
 * overflow threshold, and a spread of ordinary values. */
#define NX 512
static void fill_inputs(float *a) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                     0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0x00000001u,
                                     0x80000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu,
                                     0xff7fffffu, 0x42b17218u, 0x42b17217u, 0xc2cff1b5u,
                                     0x3f800000u, 0x3f800001u, 0x3f7fffffu, 0xbf800000u,
                                     0x7f812345u, 0xff812345u, 0xffc12345u, 0x42c80001u,
                                     0xc3200001u, 0x42c80000u, 0xc3200000u};
  size_t ns = sizeof special / sizeof special[0];
  for (size_t i = 0; i < ns; i++) a[i] = from_bits(special[i]);
  uint64_t r = 0x9e3779b97f4a7c15u;
  for (size_t i = ns; i < NX; i++) {
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    /* half of them in [-120, 120], the others any bit pattern */
    a[i] = (i & 1) ? (float)((double)(r >> 11) * 0x1p-53 * 240.0 - 120.0) : from_bits((uint32_t)r);
  }
}

static const char *const bitwise_src =
    "V^{512}_{a=0}[C^{f32,g}_{a}=exp(A^{f32,g}_{a});D^{f32,g}_{a}=log(A^{f32,g}_{a});"
    "E^{f32,g}_{a}=exp(A^{f32,g}_{a}-1)*log(exp(A^{f32,g}_{a}*0.5)+2);];";

static void run_on(leir_backend *b, const leir_program *p, const float *a, float out[3][NX]) {
  void *bufs[4] = {(void *)a, out[0], out[1], out[2]};
  ck_assert_msg(leir_run(b, p, bufs, 4) == LEIR_OK, "%s", leir_error_last()->message);
}

static void expect_same(float want[3][NX], float got[3][NX], const char *who) {
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < NX; i++)
      ck_assert_msg(bits(want[k][i]) == bits(got[k][i]), "%s: output %d [%d]: %a vs %a", who, k, i,
                    (double)want[k][i], (double)got[k][i]);
}

START_TEST(test_backends_agree_bitwise) {
  leir_program *p = test_parse(bitwise_src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  float a[NX], ref[3][NX], got[3][NX];
  fill_inputs(a);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  run_on(b, p, a, ref);
  leir_backend_free(b);
  /* the interpreter computes leir_exp_f32 / leir_log_f32 themselves */
  for (int i = 0; i < NX; i++) {
    ck_assert_uint_eq(bits(ref[0][i]), bits(leir_exp_f32(a[i])));
    ck_assert_uint_eq(bits(ref[1][i]), bits(leir_log_f32(a[i])));
  }
  if (leir_backend_open(&b, "cpu", NULL) == LEIR_OK) {
    memset(got, 0, sizeof got);
    run_on(b, p, a, got);
    expect_same(ref, got, "cpu");
    leir_backend_free(b);
  } else {
    fprintf(stderr, "test_math: no cpu backend here (%s); skipped\n", leir_error_last()->message);
  }
  if (cuda_emul_available()) {
    cuda_emul *e = cuda_emul_new();
    ck_assert_ptr_nonnull(e);
    int idx = cuda_emul_add(e, p);
    ck_assert_int_ge(idx, 0);
    char log[4096];
    ck_assert_msg(cuda_emul_build(e, log, sizeof log), "%s", log);
    memset(got, 0, sizeof got);
    void *bufs[4] = {a, got[0], got[1], got[2]};
    ck_assert_int_eq(cuda_emul_run(e, idx, bufs), LEIR_OK);
    expect_same(ref, got, "cuda emulation");
    cuda_emul_free(e);
  } else {
    fprintf(stderr, "test_math: no C++ compiler for the CUDA emulation; skipped\n");
  }
  leir_program_free(p);
}
END_TEST

static Suite *math_suite(void) {
  Suite *s = suite_create("math");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_exp_faithful_over_the_float_range);
  tcase_add_test(tc, test_exp_dense_in_the_common_range);
  tcase_add_test(tc, test_log_faithful_over_the_float_range);
  tcase_add_test(tc, test_exp_special_values);
  tcase_add_test(tc, test_log_special_values);
  tcase_add_test(tc, test_backends_agree_bitwise);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(math_suite()); }
