/*
 * libleir's own elementwise math for f32 (and the computation type of f16
 * and bf16): exp and log, written once in portable C and used by every
 * backend, so that the interpreter, the generated C and the CUDA source
 * compute them bit for bit alike, and so that a compiler can vectorize a
 * loop that calls them (no libm call, no branch, no errno, no table).
 *
 * prelude.h includes this file at its end; the C backend and the CUDA
 * backend paste its text with the prelude (backends/c/embed_text.py
 * inlines it), so it follows the prelude's rules: self-contained C99,
 * <math.h>/<stdint.h>/<string.h> only, functions are LEIR_RT.
 *
 * Accuracy (docs/verification.md, "Elementwise math"): both functions
 * evaluate in double with an argument reduction and a polynomial whose
 * relative error is below 2^-32 before the one final rounding to float,
 * so the result is faithfully rounded (error < 1 ulp; < 0.5 + 2^-8 ulp)
 * and correctly rounded except for inputs whose exact value lies within
 * 2^-32 relative of a midpoint between two floats.
 * tests/test_math.c checks this against double-precision libm over
 * sweeps of the whole float range, subnormals, +-0, +-inf and NaN.
 *
 * Bitwise reproducibility: every product that is added is an explicit
 * fma(), every other operation is one IEEE operation written in order, so
 * the result does not depend on contraction (-ffp-contract) or on whether
 * the loop was vectorized. Selections are done on bits with masks built
 * from comparisons (no ?:, which GCC vectorizes only through loop
 * if-conversion, disabled by the C backend). NaN inputs give a NaN with
 * the input's payload (quieted); no operation ever sees two NaNs, so the
 * result does not depend on operand order either.
 *
 * Special values: exp(-inf) = +0, exp(+inf) = +inf, exp overflows to +inf
 * above ~88.72 and is subnormal/zero below ~-87.34; log(+-0) = -inf,
 * log(x < 0) = NaN, log(+inf) = +inf, log of a subnormal is finite.
 */
#ifndef LEIR_MATH_H
#define LEIR_MATH_H

#if defined(__CUDA_ARCH__)
/* On a GPU (NVRTC, nvcc's device pass): CUDA's own expf/logf, as the CUDA
 * backend has always used (docs/cuda.md: CLOSE-class against the CPU).
 * The host-side emulation of the same source takes the portable code. */
LEIR_RT float leir_exp_f32(float x) { return expf(x); }
LEIR_RT float leir_log_f32(float x) { return logf(x); }
#else

/* c ? a : b on the bits, c being 0 or 1 */
LEIR_RT double leir__sel_f64(int c, double a, double b) {
  uint64_t m = (uint64_t)0 - (uint64_t)c;
  return leir_f64_from_bits((leir_f64_bits(a) & m) | (leir_f64_bits(b) & ~m));
}

/* e^x, faithfully rounded (see the top of the file). */
LEIR_RT float leir_exp_f32(float xf) {
  double x = (double)xf;
  /* beyond [-160, 100] the float result is 0 or +inf anyway; NaN stays */
  x = leir__sel_f64(x > 100.0, 100.0, x);
  x = leir__sel_f64(x < -160.0, -160.0, x);
  /* k = nearest integer to x / ln 2, by the 1.5 * 2^52 shifter */
  double t = fma(x, 0x1.71547652b82fep+0, 0x1.8p52);
  int64_t k = (int64_t)(leir_f64_bits(t) - leir_f64_bits(0x1.8p52));
  double kd = t - 0x1.8p52;
  /* r = x - k ln 2 in [-0.35, 0.35] (ln 2 in two parts, fdlibm's split) */
  double r = fma(kd, -0x1.62e42fee00000p-1, x);
  r = fma(kd, -0x1.a39ef35793c76p-33, r);
  /* e^r by its Taylor series to r^9 (truncation < 2^-38 relative) */
  double p = 0x1.71de3a556c734p-19; /* 1/9! */
  p = fma(p, r, 0x1.a01a01a01a01ap-16); /* 1/8! */
  p = fma(p, r, 0x1.a01a01a01a01ap-13); /* 1/7! */
  p = fma(p, r, 0x1.6c16c16c16c17p-10); /* 1/6! */
  p = fma(p, r, 0x1.1111111111111p-7); /* 1/5! */
  p = fma(p, r, 0x1.5555555555555p-5); /* 1/4! */
  p = fma(p, r, 0x1.5555555555555p-3); /* 1/3! */
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  /* times 2^k; k is in [-231, 145] for every non-NaN input, and the
   * exponent field is masked so that 2^k is never a NaN */
  double s = leir_f64_from_bits((uint64_t)((k + 1023) & 0x7ff) << 52);
  return (float)(p * s);
}

/* natural logarithm, faithfully rounded (see the top of the file). */
LEIR_RT float leir_log_f32(float xf) {
  double x = (double)xf; /* exact; float subnormals are normal doubles */
  /* x = 2^k m with m in [sqrt(1/2), sqrt(2)) */
  uint64_t ix = leir_f64_bits(x) - 0x3fe6a09e667f3bcdu;
  int64_t k = (int64_t)ix >> 52;
  double m = leir_f64_from_bits((ix & 0x000fffffffffffffu) + 0x3fe6a09e667f3bcdu);
  /* log m = 2 atanh(s), s = (m - 1)/(m + 1), |s| < 0.172 */
  double f = m - 1.0; /* exact (Sterbenz) */
  double s = f / (2.0 + f);
  double z = s * s;
  double q = 2.0 / 15.0;
  q = fma(q, z, 2.0 / 13.0);
  q = fma(q, z, 2.0 / 11.0);
  q = fma(q, z, 2.0 / 9.0);
  q = fma(q, z, 2.0 / 7.0);
  q = fma(q, z, 2.0 / 5.0);
  q = fma(q, z, 2.0 / 3.0);
  q = fma(q, z, 2.0);
  double lm = s * q;
  double res = fma((double)k, 0x1.62e42fefa39efp-1, lm);
  /* special values */
  res = leir__sel_f64(x == leir_f64_from_bits(0x7ff0000000000000u), x, res);
  res = leir__sel_f64(x == 0.0, leir_f64_from_bits(0xfff0000000000000u), res);
  res = leir__sel_f64(x < 0.0, leir_f64_from_bits(0x7ff8000000000000u), res);
  res = leir__sel_f64(x != x, x, res);
  return (float)res;
}

#endif /* !__CUDA_ARCH__ */

#endif /* LEIR_MATH_H */
