/*
 * libleir run-time helpers: the arithmetic of spec/leir.md §3.3 that C does
 * not define the way LEIR does (half-precision rounding, floor division and
 * modulo, wrapping integer arithmetic, saturating float->int conversion).
 *
 * One file, two uses, so that every backend computes bit for bit the same:
 *  - the interpreter (backends/interp) includes it;
 *  - the C backend pastes its text at the top of every generated source
 *    (backends/c/prelude_text.c is generated from it at build time), and the
 *    CUDA backend may do the same after defining LEIR_RT as a device
 *    qualifier.
 * It must therefore stay self-contained C99: <stdint.h>, <string.h> and
 * <math.h> only, no globals, no I/O. Functions never trap: callers check
 * integer divisors for zero first (a run-time error, like an out-of-range
 * index).
 */
#ifndef LEIR_PRELUDE_H
#define LEIR_PRELUDE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef LEIR_RT
#define LEIR_RT static inline
#endif

/* ---- bit casts ----------------------------------------------------------- */

LEIR_RT uint32_t leir_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

LEIR_RT float leir_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

LEIR_RT uint64_t leir_f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

LEIR_RT double leir_f64_from_bits(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* ---- half precision ------------------------------------------------------ */

/* IEEE binary16 -> float (exact). */
LEIR_RT float leir_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (man << 13); /* inf or NaN (payload kept) */
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign; /* signed zero */
  } else {
    /* subnormal: normalize */
    uint32_t e = 113u;
    while (!(man & 0x400u)) {
      man <<= 1;
      e--;
    }
    bits = sign | (e << 23) | ((man & 0x3ffu) << 13);
  }
  return leir_f32_from_bits(bits);
}

/* float -> IEEE binary16, round to nearest even; overflow gives inf, NaN
 * stays a quiet NaN. */
LEIR_RT uint16_t leir_f32_to_f16(float f) {
  uint32_t x = leir_f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    /* subnormal or zero in binary16 */
    if (e < -10) return sign;
    man |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = man >> shift;
    uint32_t rest = man & ((1u << shift) - 1u);
    uint32_t mid = 1u << (shift - 1u);
    if (rest > mid || (rest == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (man >> 13);
  uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) half++; /* may carry into inf */
  return (uint16_t)(sign | half);
}

/* bfloat16 -> float (exact). */
LEIR_RT float leir_bf16_to_f32(uint16_t h) { return leir_f32_from_bits((uint32_t)h << 16); }

/* float -> bfloat16, round to nearest even; NaN stays a quiet NaN. */
LEIR_RT uint16_t leir_f32_to_bf16(float f) {
  uint32_t x = leir_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return (uint16_t)(x >> 16);
}

/* ---- conversions --------------------------------------------------------- */

/* float -> integer: truncation toward zero, saturating at the int64 range,
 * NaN -> 0 (C leaves all of these undefined). */
LEIR_RT int64_t leir_f64_to_i64(double x) {
  if (x != x) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

/* Narrowing integer stores wrap modulo 2^bits (two's complement). */
LEIR_RT int8_t leir_wrap_i8(int64_t v) {
  uint8_t u = (uint8_t)(uint64_t)v;
  return u < 0x80u ? (int8_t)u : (int8_t)((int)u - 0x100);
}
LEIR_RT int16_t leir_wrap_i16(int64_t v) {
  uint16_t u = (uint16_t)(uint64_t)v;
  return u < 0x8000u ? (int16_t)u : (int16_t)((int32_t)u - 0x10000);
}
LEIR_RT int32_t leir_wrap_i32(int64_t v) {
  uint32_t u = (uint32_t)(uint64_t)v;
  return u < 0x80000000u ? (int32_t)u : (int32_t)((int64_t)u - 0x100000000);
}

/* ---- integer arithmetic (int64, wrapping) -------------------------------- */

LEIR_RT int64_t leir_add_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
LEIR_RT int64_t leir_sub_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
LEIR_RT int64_t leir_mul_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
LEIR_RT int64_t leir_neg_i64(int64_t a) { return (int64_t)(0u - (uint64_t)a); }
LEIR_RT int64_t leir_abs_i64(int64_t a) { return a < 0 ? leir_neg_i64(a) : a; }
LEIR_RT int64_t leir_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
LEIR_RT int64_t leir_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Floor division and modulo (Python semantics); b != 0 (checked by the
 * caller). INT64_MIN // -1 wraps to INT64_MIN, and its modulo is 0. */
LEIR_RT int64_t leir_floordiv_i64(int64_t a, int64_t b) {
  if (b == -1) return leir_neg_i64(a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
LEIR_RT int64_t leir_floormod_i64(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* a ** b on integers. b < 0 truncates the true value toward zero (so only
 * 1 and -1 give non-zero results); the caller traps on 0 ** negative. */
LEIR_RT int64_t leir_pow_i64(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1u, base = (uint64_t)a, e = (uint64_t)b;
  while (e) {
    if (e & 1u) result *= base;
    base *= base;
    e >>= 1;
  }
  return (int64_t)result;
}

/* ---- floating arithmetic ------------------------------------------------- */

/* max/min with fmax/fmin's NaN rule (a NaN operand yields the other one),
 * written out because C leaves max(-0, +0) unspecified and compilers
 * differ: libm's fmax returns its first operand there, while vectorized
 * code (vrangepd, maxNum) returns +0. These return the first operand on
 * ties, everywhere. They are written as a selection on bits with a mask
 * from non-short-circuit comparisons (no ?:, no ||), so that a loop of
 * them vectorizes without loop if-conversion (off for GCC in the C
 * backend). */
LEIR_RT float leir_fmax_f32(float a, float b) {
  uint32_t m = 0u - (uint32_t)((a >= b) | (b != b));
  return leir_f32_from_bits((leir_f32_bits(a) & m) | (leir_f32_bits(b) & ~m));
}
LEIR_RT float leir_fmin_f32(float a, float b) {
  uint32_t m = 0u - (uint32_t)((a <= b) | (b != b));
  return leir_f32_from_bits((leir_f32_bits(a) & m) | (leir_f32_bits(b) & ~m));
}
LEIR_RT double leir_fmax_f64(double a, double b) {
  uint64_t m = (uint64_t)0 - (uint64_t)((a >= b) | (b != b));
  return leir_f64_from_bits((leir_f64_bits(a) & m) | (leir_f64_bits(b) & ~m));
}
LEIR_RT double leir_fmin_f64(double a, double b) {
  uint64_t m = (uint64_t)0 - (uint64_t)((a <= b) | (b != b));
  return leir_f64_from_bits((leir_f64_bits(a) & m) | (leir_f64_bits(b) & ~m));
}

/* a // b = floor(a / b); a % b has the sign of b (Python). */
LEIR_RT float leir_floordiv_f32(float a, float b) { return floorf(a / b); }
LEIR_RT double leir_floordiv_f64(double a, double b) { return floor(a / b); }
LEIR_RT float leir_floormod_f32(float a, float b) {
  float r = fmodf(a, b);
  if (r != 0.0f) {
    if ((r < 0.0f) != (b < 0.0f)) r += b;
  } else {
    r = copysignf(0.0f, b);
  }
  return r;
}
LEIR_RT double leir_floormod_f64(double a, double b) {
  double r = fmod(a, b);
  if (r != 0.0) {
    if ((r < 0.0) != (b < 0.0)) r += b;
  } else {
    r = copysign(0.0, b);
  }
  return r;
}

/* ---- elementwise math (exp, log of f32) --------------------------------- */

#include "leir_math.h"

#endif /* LEIR_PRELUDE_H */
