/*
 * The algebra's proofs about values: positive, non-negative and non-zero
 * expressions (domain proofs), and interval bounds of an expression.
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"

/* ---- domain proofs --------------------------------------------------------- */

bool leir__alg_is_call(const leir_expr *e, leir_op op) {
  return e && e->kind == LEIR_EXPR_CALL && e->op == op;
}

/* Sign facts of a node, computed bottom-up in one pass (each child once,
 * so the work is linear in the tree): SG_POS (> 0), SG_NN (>= 0), SG_NZ
 * (!= 0). Over the reals, where the expression is defined. */
enum { SG_POS = 1, SG_NN = 2, SG_NZ = 4 };

static unsigned sg_norm(unsigned f) { return f & SG_POS ? SG_POS | SG_NN | SG_NZ : f; }

static unsigned sign_of(leir__alg *a, const leir_expr *e, unsigned depth) {
  e = leir__alg_strip(e);
  if (!e || depth > MAX_DEPTH) return 0;
  switch (e->kind) {
  case LEIR_EXPR_NUMBER: {
    double v = e->u.num->value;
    return sg_norm(v > 0 ? SG_POS : v == 0 ? SG_NN : SG_NZ);
  }
  case LEIR_EXPR_INF: return sg_norm(SG_POS);
  case LEIR_EXPR_VAR: /* loop variables run over 0..extent-1 */
    return sg_norm(leir__alg_sym_positive(a, e->sym) ? SG_POS : SG_NN);
  case LEIR_EXPR_TENSOR: return leir__alg_sym_positive(a, e->sym) ? sg_norm(SG_POS) : 0;
  case LEIR_EXPR_NEG: return sign_of(a, e->kids[0], depth + 1) & SG_NZ;
  case LEIR_EXPR_CALL: {
    if (e->op == LEIR_OP_EXP) return sg_norm(SG_POS);
    if (e->op == LEIR_OP_SQRT || e->op == LEIR_OP_ABS) {
      unsigned k = sign_of(a, e->kids[0], depth + 1);
      bool pos = e->op == LEIR_OP_SQRT ? (k & SG_POS) != 0 : (k & SG_NZ) != 0;
      return sg_norm(pos ? SG_POS : SG_NN);
    }
    if (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN) {
      unsigned any = 0, all = SG_POS | SG_NN | SG_NZ;
      for (uint32_t i = 0; i < e->n; i++) {
        unsigned k = sign_of(a, e->kids[i], depth + 1);
        any |= k;
        all &= k;
      }
      if (e->op == LEIR_OP_MIN) return sg_norm(all & (SG_POS | SG_NN));
      return sg_norm(any & SG_POS ? SG_POS : any & SG_NN ? SG_NN : 0);
    }
    return 0;
  }
  case LEIR_EXPR_BINARY: {
    unsigned x = sign_of(a, e->kids[0], depth + 1), y = sign_of(a, e->kids[1], depth + 1);
    unsigned r = 0;
    switch (e->op) {
    case LEIR_OP_ADD:
      if (((x & SG_POS) && (y & SG_NN)) || ((x & SG_NN) && (y & SG_POS))) r = SG_POS;
      else if ((x & SG_NN) && (y & SG_NN)) r = SG_NN;
      return sg_norm(r);
    case LEIR_OP_MUL:
      if ((x & SG_POS) && (y & SG_POS)) return sg_norm(SG_POS);
      if ((x & SG_NN) && (y & SG_NN)) r |= SG_NN;
      if ((x & SG_NZ) && (y & SG_NZ)) r |= SG_NZ;
      if (leir__expr_equal(a->p, leir__alg_strip(e->kids[0]), a->p, leir__alg_strip(e->kids[1])))
        r |= SG_NN | ((x & SG_NZ) ? SG_POS : 0);
      return sg_norm(r);
    case LEIR_OP_DIV: /* the divisor is non-zero wherever the quotient is defined */
      if ((x & SG_POS) && (y & SG_POS)) return sg_norm(SG_POS);
      if ((x & SG_NN) && (y & SG_NN)) r |= SG_NN;
      if (x & SG_NZ) r |= SG_NZ;
      return sg_norm(r);
    case LEIR_OP_POW: {
      int64_t n;
      if (x & SG_POS) return sg_norm(SG_POS);
      if (leir__alg_int_exponent(e->kids[1], &n)) {
        if (n % 2 == 0) r |= SG_NN | ((x & SG_NZ) ? SG_POS : 0);
        if (x & SG_NZ) r |= SG_NZ;
        if (x & SG_NN && n >= 0) r |= SG_NN;
      }
      return sg_norm(r);
    }
    default: return 0;
    }
  }
  default: return 0;
  }
}

bool leir__alg_positive_expr(leir__alg *a, const leir_expr *e, unsigned depth) {
  return (sign_of(a, e, depth) & SG_POS) != 0;
}
bool leir__alg_nonneg_expr(leir__alg *a, const leir_expr *e, unsigned depth) {
  return (sign_of(a, e, depth) & SG_NN) != 0;
}
bool leir__alg_nonzero_expr(leir__alg *a, const leir_expr *e, unsigned depth) {
  return (sign_of(a, e, depth) & SG_NZ) != 0;
}

/* Polynomial test: every term a positive coefficient times atoms that are
 * nonneg (or raised to an even power), and a positive constant term. */
static bool poly_positive(leir__alg *a, const leir_expr *e) {
  leir__rf r = leir__alg_conv_top(a, e);
  if (!leir__alg_poly_is_const(r.den)) return false;
  bool has_const = false;
  for (uint32_t i = 0; i < r.num->n; i++) {
    const term *t = &r.num->t[i];
    if (t->c.n <= 0) return false;
    if (t->nf == 0) has_const = true;
    for (uint32_t k = 0; k < t->nf; k++)
      if (t->f[k].e % 2 != 0 && !leir__alg_nonneg_expr(a, a->atoms[t->f[k].atom], 0)) return false;
  }
  return has_const;
}

bool leir__alg_positive(leir__alg *a, const leir_expr *e) {
  ENTER(a, false);
  if (leir__alg_positive_expr(a, e, 0)) return true;
  return poly_positive(a, e);
}

bool leir__alg_nonneg(leir__alg *a, const leir_expr *e) {
  ENTER(a, false);
  if (leir__alg_nonneg_expr(a, e, 0)) return true;
  return poly_positive(a, e);
}

bool leir__alg_nonzero(leir__alg *a, const leir_expr *e) {
  ENTER(a, false);
  if (leir__alg_nonzero_expr(a, e, 0)) return true;
  return poly_positive(a, e);
}

/* ---- bounds ---------------------------------------------------------------- */

/* An enclosure [lo, hi] of e over the reals where e is defined, from
 * numbers, declared ranges and monotone rules; ends may be infinite (an
 * unknown tensor is [-inf, inf], max(A, 0.5) is [0.5, inf]). Finite ends
 * are widened by a relative 1e-12 at every node, far more than the
 * rounding of one operation, so the enclosure also holds for the computed
 * values of the rules' own arithmetic. */
static void widen(double *lo, double *hi) {
  if (isnan(*lo) || isnan(*hi)) {
    *lo = -INFINITY;
    *hi = INFINITY;
    return;
  }
  if (isfinite(*lo)) *lo -= fabs(*lo) * 1e-12;
  if (isfinite(*hi)) *hi += fabs(*hi) * 1e-12;
}

/* (u-v)/(u+v) (or (v-u)/(u+v), the terms of the sum in either order) with
 * u, v >= 0 proven: |u-v| <= u+v, and rounding is monotone, so the
 * computed quotient lies in [-1, 1] wherever it is defined (tanh written
 * with exponentials, (exp(x)-exp(-x))/(exp(x)+exp(-x))) */
static bool unit_ratio(leir__alg *a, const leir_expr *e, unsigned depth) {
  const leir_expr *n = leir__alg_strip(e->kids[0]), *d = leir__alg_strip(e->kids[1]);
  if (n->kind != LEIR_EXPR_BINARY || n->op != LEIR_OP_SUB || d->kind != LEIR_EXPR_BINARY ||
      d->op != LEIR_OP_ADD)
    return false;
  uint64_t n0 = leir__ac_hash(a->p, n->kids[0]), n1 = leir__ac_hash(a->p, n->kids[1]);
  uint64_t d0 = leir__ac_hash(a->p, d->kids[0]), d1 = leir__ac_hash(a->p, d->kids[1]);
  if (!((n0 == d0 && n1 == d1) || (n0 == d1 && n1 == d0))) return false;
  return leir__alg_nonneg_expr(a, d->kids[0], depth + 1) &&
         leir__alg_nonneg_expr(a, d->kids[1], depth + 1);
}

void leir__alg_bounds_rec(leir__alg *a, const leir_expr *e, double *lo, double *hi,
                          unsigned depth) {
  e = leir__alg_strip(e);
  *lo = -INFINITY;
  *hi = INFINITY;
  if (!e || depth > MAX_DEPTH) return;
  double x0, x1, y0, y1;
  switch (e->kind) {
  case LEIR_EXPR_NUMBER: *lo = *hi = e->u.num->value; break;
  case LEIR_EXPR_VAR:
  case LEIR_EXPR_TENSOR: {
    const struct srange *r = leir__alg_sym_range(a, e->sym);
    if (r) *lo = r->lo, *hi = r->hi;
    else if (leir__alg_sym_positive(a, e->sym)) *lo = 0;
    break;
  }
  case LEIR_EXPR_NEG:
    leir__alg_bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
    *lo = -x1;
    *hi = -x0;
    return;
  case LEIR_EXPR_CALL:
    if (e->n == 0) return;
    leir__alg_bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
    switch (e->op) {
    case LEIR_OP_EXP: *lo = exp(x0), *hi = exp(x1); break;
    case LEIR_OP_LOG:
      if (x0 > 0) *lo = log(x0), *hi = log(x1);
      break;
    case LEIR_OP_SQRT:
      if (x0 >= 0) *lo = sqrt(x0), *hi = sqrt(x1);
      break;
    case LEIR_OP_ABS:
      *lo = x0 > 0 ? x0 : x1 < 0 ? -x1 : 0;
      *hi = fmax(fabs(x0), fabs(x1));
      break;
    case LEIR_OP_MAX:
    case LEIR_OP_MIN:
      for (uint32_t i = 1; i < e->n; i++) {
        leir__alg_bounds_rec(a, e->kids[i], &y0, &y1, depth + 1);
        x0 = e->op == LEIR_OP_MAX ? fmax(x0, y0) : fmin(x0, y0);
        x1 = e->op == LEIR_OP_MAX ? fmax(x1, y1) : fmin(x1, y1);
      }
      *lo = x0, *hi = x1;
      break;
    default: return;
    }
    break;
  case LEIR_EXPR_BINARY: {
    int64_t n;
    if (e->op == LEIR_OP_POW) {
      if (!leir__alg_int_exponent(e->kids[1], &n) || n < 0 || n > MAX_POW) return;
      leir__alg_bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
      double p0 = pow(x0, (double)n), p1 = pow(x1, (double)n);
      *lo = n % 2 == 0 && x0 < 0 && x1 > 0 ? 0 : fmin(p0, p1);
      *hi = fmax(p0, p1);
      break;
    }
    if (e->op == LEIR_OP_DIV && unit_ratio(a, e, depth)) {
      *lo = -1, *hi = 1;
      return;
    }
    leir__alg_bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
    leir__alg_bounds_rec(a, e->kids[1], &y0, &y1, depth + 1);
    switch (e->op) {
    case LEIR_OP_ADD: *lo = x0 + y0, *hi = x1 + y1; break;
    case LEIR_OP_SUB: *lo = x0 - y1, *hi = x1 - y0; break;
    case LEIR_OP_DIV:
      if (!(y0 > 0 || y1 < 0)) return; /* the divisor's range holds 0 */
      {
        double t = 1 / y1;
        y1 = 1 / y0;
        y0 = t;
      }
      /* fall through */
    case LEIR_OP_MUL: {
      double p[4] = {x0 * y0, x0 * y1, x1 * y0, x1 * y1};
      *lo = *hi = p[0];
      for (int i = 0; i < 4; i++) {
        if (isnan(p[i])) { /* 0 * inf */
          *lo = -INFINITY;
          *hi = INFINITY;
          return;
        }
        *lo = fmin(*lo, p[i]);
        *hi = fmax(*hi, p[i]);
      }
      break;
    }
    default: return;
    }
    break;
  }
  default: return;
  }
  widen(lo, hi);
}

bool leir__alg_bounds(leir__alg *a, const leir_expr *e, double *lo, double *hi) {
  ENTER(a, false);
  double l, h;
  leir__alg_bounds_rec(a, e, &l, &h, 0);
  if (!isfinite(l) || !isfinite(h)) return false;
  if (lo) *lo = l;
  if (hi) *hi = h;
  return true;
}

/* [lo, hi] (lo > 0) within the limits, with a factor 2 to spare */
bool leir__alg_in_limits(const leir__alg *a, double lo, double hi) {
  return lo >= 2 * a->tiny && hi <= a->huge / 2;
}
