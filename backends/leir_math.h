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
 * Accuracy (docs/verification.md, "Elementwise math"): log evaluates in
 * double with an argument reduction and a polynomial whose relative error
 * is below 2^-32 before the one final rounding to float, so it is
 * faithfully rounded (error < 1 ulp; < 0.5 + 2^-8 ulp) and correctly
 * rounded except for inputs whose exact value lies within 2^-32 relative
 * of a midpoint between two floats. exp evaluates in float only (16
 * lanes a step on AVX-512 rather than 8 doubles): 1 + r is kept as an
 * exact pair and the rest of e^r to about 2^-29, so a normal result is
 * within 0.65 ulp and a subnormal one, rounded twice, within 0.8 ulp:
 * faithfully rounded everywhere.
 * tests/test_math.c checks this against double-precision libm over
 * sweeps of the whole float range, subnormals, +-0, +-inf and NaN.
 *
 * Bitwise reproducibility: every product that is added is an explicit
 * fma(), every other operation is one IEEE operation written in order, so
 * the result does not depend on contraction (-ffp-contract) or on whether
 * the loop was vectorized. Selections are done on bits with masks built
 * from comparisons (no ?: on floats, which GCC vectorizes only through
 * loop if-conversion, disabled by the C backend; integer minima are
 * fine). NaN inputs give a NaN with the input's payload (quieted): in log
 * no operation ever sees two NaNs; in exp every NaN an operation sees is
 * the input's, quieted, so the result does not depend on operand order
 * either.
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

/* e^x, faithfully rounded (see the top of the file), in float only: 16
 * lanes a step on AVX-512 instead of 8 doubles. */
LEIR_RT float leir_exp_f32(float x0) {
  /* beyond [-160, 100] the result is 0 or +inf anyway: clamped on the
   * bits, as integer minima (which compilers turn into min instructions,
   * vector or scalar, with no branch, no if-conversion and no mask). The
   * bits are first rotated by 2^23 - 1 so that NaNs wrap below the bounds
   * and pass unchanged: as int32, a positive float is then a positive
   * integer in the order of its value (+inf above 100) and a positive NaN
   * negative; as uint32, a negative float is above every positive one and
   * grows with its magnitude (-inf above -160), a negative NaN wraps to
   * the bottom. */
  uint32_t ux = leir_f32_bits(x0) + 0x007fffffu;
  int32_t ix = (int32_t)ux;
  ix = ix < 0x42c80000 + 0x7fffff ? ix : 0x42c80000 + 0x7fffff; /* 100 */
  ux = (uint32_t)ix;
  ux = ux < 0xc3200000u + 0x7fffffu ? ux : 0xc3200000u + 0x7fffffu; /* -160 */
  float x = leir_f32_from_bits(ux - 0x007fffffu);
  /* k = nearest integer to x / ln 2, by the 1.5 * 2^23 shifter; ku = k + 512 */
  float t = fmaf(x, 0x1.715476p+0f, 0x1.8p23f);
  uint32_t ku = leir_f32_bits(t) - leir_f32_bits(0x1.8p23f) + 512u;
  float kf = t - 0x1.8p23f;
  /* r + rl = x - k ln 2, |r| <= 0.3466: ln 2 = L1 - L2 with L1 the float
   * nearest ln 2; x - k L1 is exact (|k| <= 231, L1 has 20 fraction bits),
   * r is that minus k L2 rounded, and rl is the rounding error of r (to
   * float precision) */
  float rh = fmaf(kf, -0x1.62e430p-1f, x);
  float r = fmaf(kf, 0x1.05c610p-29f, rh);
  float rl = fmaf(kf, 0x1.05c610p-29f, rh - r);
  /* e^(r + rl) - 1 - r = r^2 p(r) + rl (1 + r) to ~2^-29: p is the Taylor
   * series of (e^r - 1 - r) / r^2 to r^6 (truncation: r^9/9! < 2^-32) */
  float p = 0x1.a01a02p-16f; /* 1/8! */
  p = fmaf(p, r, 0x1.a01a02p-13f); /* 1/7! */
  p = fmaf(p, r, 0x1.6c16c2p-10f); /* 1/6! */
  p = fmaf(p, r, 0x1.111112p-7f); /* 1/5! */
  p = fmaf(p, r, 0x1.555556p-5f); /* 1/4! */
  p = fmaf(p, r, 0x1.555556p-3f); /* 1/3! */
  p = fmaf(p, r, 0.5f);
  float lo = fmaf(r * r, p, fmaf(rl, r, rl));
  /* 1 + r split exactly into u + e1 (Fast2Sum, |r| < 1), then one
   * rounding of u + (e1 + lo) */
  float u = 1.0f + r;
  float e1 = r - (u - 1.0f);
  float m = u + (e1 + lo);
  /* times 2^k as 2^k1 2^k2, k1 + k2 = k, both normal floats for every
   * non-NaN input (k in [-231, 145]); the first product is exact, the
   * second rounds once (to +inf above FLT_MAX, into the subnormals below
   * FLT_MIN, where that is a second rounding); exponent fields are masked
   * so that no factor is ever a NaN */
  uint32_t k1 = ku >> 1, k2 = ku - k1;
  float s1 = leir_f32_from_bits(((k1 - 129u) & 0xffu) << 23);
  float s2 = leir_f32_from_bits(((k2 - 129u) & 0xffu) << 23);
  /* A NaN input flows through every operation above as itself, quieted:
   * no value derived from it is ever negated, so whichever NaN operand an
   * instruction propagates (x86 and Arm take the first in encoding order,
   * which depends on register allocation), the bits are the same; s1 and
   * s2 are never NaNs. (A final select on x != x did the same but made the
   * scalar loop of online softmax 1.7x slower.) */
  return (m * s1) * s2;
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
