/*
 * Output comparison (verification.md §2): bitwise equality with NaN where
 * NaN, tolerance by output dtype, the Step-TP reference rule, and the
 * figures a report carries (max abs/rel error, ULP distance, MSE).
 */
#include "compare.h"

#include <math.h>
#include <string.h>

#include "semantics.h"

void leir__tolerance_for(leir_dtype dt, double *rtol, double *atol) {
  switch (dt) {
    case LEIR_F64: *rtol = 1e-9, *atol = 1e-12; break;
    case LEIR_F32: *rtol = 1e-4, *atol = 1e-6; break;
    case LEIR_F16:
    case LEIR_BF16: *rtol = 1e-2, *atol = 1e-3; break;
    default: *rtol = 0.0, *atol = 0.0; break;
  }
}

/* Maps a float's bits to an integer ordered like the values (so the ULP
 * distance is a difference). */
static int64_t ordered(const unsigned char *p, leir_dtype dt) {
  int64_t v;
  switch (dt) {
    case LEIR_F64: {
      int64_t x;
      memcpy(&x, p, 8);
      v = x < 0 ? INT64_MIN - x : x;
      return v;
    }
    case LEIR_F32: {
      int32_t x;
      memcpy(&x, p, 4);
      return x < 0 ? (int64_t)INT32_MIN - x : x;
    }
    default: {
      int16_t x;
      memcpy(&x, p, 2);
      return x < 0 ? (int64_t)INT16_MIN - x : x;
    }
  }
}

static uint64_t ulp_distance(const unsigned char *a, const unsigned char *b, leir_dtype dt) {
  int64_t x = ordered(a, dt), y = ordered(b, dt);
  if (dt == LEIR_F64) {
    /* the difference may not fit in int64 */
    uint64_t ux = (uint64_t)x ^ (UINT64_C(1) << 63), uy = (uint64_t)y ^ (UINT64_C(1) << 63);
    return ux > uy ? ux - uy : uy - ux;
  }
  return (uint64_t)(x > y ? x - y : y - x);
}

/* Elements [start, end) one by one. */
static void compare_range(leir__block *blk, const unsigned char *e, const unsigned char *g,
                          leir_dtype dt, uint64_t start, uint64_t end, double rtol, double atol) {
  size_t es = leir_dtype_size(dt);
  bool is_float = leir__dtype_is_float(dt);
  const void *expected = e, *actual = g;
  for (uint64_t i = start; i < end; i++) {
    const unsigned char *pe = e + i * es, *pg = g + i * es;
    double ve = leir__load_f64(expected, dt, i), vg = leir__load_f64(actual, dt, i);
    if (memcmp(pe, pg, es) == 0 || (is_float && isnan(ve) && isnan(vg))) {
      if (!isnan(ve) && !isinf(ve)) blk->compared++;
      continue;
    }
    blk->differing++;
    if (blk->first_diff == UINT64_MAX) blk->first_diff = i;
    bool finite = !isnan(ve) && !isnan(vg) && !isinf(ve) && !isinf(vg);
    bool outside;
    if (!finite) {
      outside = true;
      blk->nonfinite_mismatch++;
    } else {
      double diff = fabs(ve - vg);
      blk->compared++;
      blk->sum_sq += diff * diff;
      if (diff > blk->max_abs) blk->max_abs = diff;
      if (ve != 0.0 && diff / fabs(ve) > blk->max_rel) blk->max_rel = diff / fabs(ve);
      double guarded = diff / (fabs(ve) + 1e-8);
      if (guarded > blk->max_rel_guarded) blk->max_rel_guarded = guarded;
      uint64_t ulp = is_float ? ulp_distance(pe, pg, dt) : (uint64_t)diff;
      if (ulp > blk->max_ulp) blk->max_ulp = ulp;
      outside = !(diff <= atol + rtol * fabs(ve));
    }
    if (outside) {
      blk->outside++;
      if (blk->first_outside == UINT64_MAX) blk->first_outside = i;
    }
  }
}

void leir__compare_block(leir__block *blk, const void *expected, const void *actual,
                         leir_dtype dt, uint64_t elements, double rtol, double atol) {
  memset(blk, 0, sizeof *blk);
  blk->first_outside = blk->first_diff = UINT64_MAX;
  size_t es = leir_dtype_size(dt);
  const unsigned char *e = expected, *g = actual;
  /* bitwise identical runs of elements (most of them, usually) are only
   * counted: an equal element is compared when it is finite */
  enum { RUN = 1024 };
  for (uint64_t start = 0; start < elements; start += RUN) {
    uint64_t end = elements - start < RUN ? elements : start + RUN;
    if (memcmp(e + start * es, g + start * es, (size_t)(end - start) * es) == 0)
      blk->compared += leir__count_finite(e + start * es, dt, end - start);
    else
      compare_range(blk, e, g, dt, start, end, rtol, atol);
  }
}

bool leir__reference_rule_passes(const leir__block *blk, leir_dtype dt) {
  if (blk->differing == 0) return true;
  if (blk->nonfinite_mismatch) return false;
  double mse = blk->compared ? blk->sum_sq / (double)blk->compared : 0.0;
  if (blk->max_rel_guarded <= 5e-3 || blk->max_abs <= 1e-7 || mse <= 1e-5) return true;
  if ((dt == LEIR_F16 || dt == LEIR_BF16) && blk->max_abs < 1.5) return true;
  if (dt == LEIR_F32 && blk->max_abs < 1e-3) return true;
  return false;
}

uint64_t leir__count_finite(const void *buf, leir_dtype dt, uint64_t elements) {
  if (!leir__dtype_is_float(dt)) return elements;
  uint64_t n = 0;
  const unsigned char *p = buf;
  if (dt == LEIR_F64) {
    for (uint64_t i = 0; i < elements; i++) {
      double x;
      memcpy(&x, p + i * 8, 8);
      n += isfinite(x) != 0;
    }
  } else if (dt == LEIR_F32) {
    for (uint64_t i = 0; i < elements; i++) {
      float x;
      memcpy(&x, p + i * 4, 4);
      n += isfinite(x) != 0;
    }
  } else {
    for (uint64_t i = 0; i < elements; i++) n += isfinite(leir__load_f64(buf, dt, i)) != 0;
  }
  return n;
}

double leir__ulp_in(leir_dtype dt, double x) {
  int p, emin;
  switch (dt) {
    case LEIR_F16: p = 11, emin = -14; break;
    case LEIR_BF16: p = 8, emin = -126; break;
    case LEIR_F32: p = 24, emin = -126; break;
    default: p = 53, emin = -1022; break;
  }
  x = fabs(x);
  int e = (x == 0.0 || !isfinite(x)) ? emin : ilogb(x);
  if (e < emin) e = emin;
  return ldexp(1.0, e - p + 1);
}

static bool same_nonfinite(double a, double b) {
  if (isnan(a)) return isnan(b);
  return a == b; /* the same infinity */
}

void leir__compare_truth(leir__truth_block *tb, const double *truth, const void *orig,
                         const void *cand, leir_dtype dt, uint64_t elements, double factor,
                         double nred, bool truth_is_orig, double rtol, double atol) {
  memset(tb, 0, sizeof *tb);
  tb->first_outside = UINT64_MAX;
  double sum_sq = 0, max_truth = 0;
  uint64_t nfinite = 0;
  for (uint64_t i = 0; i < elements; i++) {
    double t = truth[i], o = leir__load_f64(orig, dt, i);
    if (!isfinite(t) || !isfinite(o)) continue;
    double e = fabs(o - t);
    sum_sq += e * e;
    nfinite++;
    if (e > tb->err_orig) tb->err_orig = e;
    if (fabs(t) > max_truth) max_truth = fabs(t);
  }
  double rms = nfinite ? sqrt(sum_sq / (double)nfinite) : 0.0;
  /* A floor from the reduction length: rounding errors of a sum of n terms
   * behave like a random walk of n half-ulp steps at the scale of the
   * values summed, whatever the order (so a reordering may land there even
   * where the reference is exact by luck): sqrt(n) half-ulps of the largest
   * output in its dtype. With no wider truth (f64 programs, T = O) the
   * reference's own error is unknown: n half-ulps of 2^-53, the worst case. */
  double length_floor = truth_is_orig ? nred * ldexp(1.0, -53) * max_truth
                                      : sqrt(nred) * 0.5 * leir__ulp_in(dt, max_truth);
  for (uint64_t i = 0; i < elements; i++) {
    double t = truth[i], o = leir__load_f64(orig, dt, i), c = leir__load_f64(cand, dt, i);
    bool inside;
    if (!isfinite(t) || !isfinite(o)) {
      inside = same_nonfinite(o, c);
    } else if (!isfinite(c)) {
      inside = false;
    } else {
      double ec = fabs(c - t), eo = fabs(o - t);
      if (ec > tb->err_cand) tb->err_cand = ec;
      double bound = factor * (eo > rms ? eo : rms) + 2.0 * leir__ulp_in(dt, t) + length_floor;
      inside = ec <= bound || (rtol >= 0 && fabs(c - o) <= atol + rtol * fabs(o));
    }
    if (!inside) {
      tb->outside++;
      if (tb->first_outside == UINT64_MAX) tb->first_outside = i;
    }
  }
}
