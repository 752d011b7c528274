/*
 * The algebra's rewrites over rational functions: factoring, cancellation,
 * partial fractions (apart) and collecting in one variable.
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"

/* ---- factoring ----------------------------------------------------------- */

/* the single atom q is a polynomial in, or UINT32_MAX (constant: also max) */
static uint32_t univariate(const leir__poly *q) {
  uint32_t x = UINT32_MAX;
  for (uint32_t i = 0; i < q->n; i++) {
    if (q->t[i].nf > 1) return UINT32_MAX - 1;
    if (q->t[i].nf == 1) {
      if (x != UINT32_MAX && x != q->t[i].f[0].atom) return UINT32_MAX - 1;
      x = q->t[i].f[0].atom;
    }
  }
  return x;
}

/* value of univariate q (in atom x) at rational r, or false on overflow */
static bool uni_eval(const leir__poly *q, rat r, rat *out) {
  rat s = {0, 1};
  for (uint32_t i = 0; i < q->n; i++) {
    rat v = q->t[i].c;
    int32_t e = q->t[i].nf ? q->t[i].f[0].e : 0;
    for (int32_t k = 0; k < e; k++)
      if (!leir__alg_rat_mul(v, r, &v)) return false;
    if (!leir__alg_rat_add(s, v, &s)) return false;
  }
  *out = s;
  return true;
}

/* x - r as a polynomial */
static leir__poly *linear(leir__alg *a, uint32_t x, rat r) {
  return leir__alg_poly_add(a, leir__alg_poly_atom(a, x, 1), leir__alg_poly_const(a, r), true);
}

/* Rational roots of univariate q (distinct, at most `max`). Candidates
 * +-p/s with p | a0, s | an after clearing denominators; only for
 * |a0|, |an| <= 10^4, so the search is bounded. */
static uint32_t rational_roots(const leir__poly *q, rat *roots, uint32_t max) {
  uint32_t x = univariate(q);
  if (x >= UINT32_MAX - 1 || q->n < 2) return 0;
  /* integer coefficients: multiply by lcm of denominators */
  int64_t l = 1;
  for (uint32_t i = 0; i < q->n; i++) {
    int64_t g = (int64_t)leir__alg_ugcd((uint64_t)l, (uint64_t)q->t[i].c.d);
    if (__builtin_mul_overflow(l / g, q->t[i].c.d, &l)) return 0;
  }
  int64_t an = 0, a0 = 0;
  int32_t low = q->t[q->n - 1].nf ? q->t[q->n - 1].f[0].e : 0;
  rat lr;
  if (!leir__alg_rat_mul(q->t[0].c, (rat){l, 1}, &lr)) return 0;
  an = lr.n;
  if (!leir__alg_rat_mul(q->t[q->n - 1].c, (rat){l, 1}, &lr)) return 0;
  a0 = lr.n; /* coefficient of the lowest power: roots other than 0 divide it */
  if (an < 0) an = -an;
  if (a0 < 0) a0 = -a0;
  if (an > 10000 || a0 > 10000) return 0; /* bounded search */
  uint32_t k = 0;
  if (low > 0 && k < max) roots[k++] = (rat){0, 1};
  for (int64_t p = 1; p <= a0 && k < max; p++) {
    if (a0 % p) continue;
    for (int64_t s = 1; s <= an && k < max; s++) {
      if (an % s) continue;
      for (int sg = 1; sg >= -1 && k < max; sg -= 2) {
        rat r, v;
        if (!leir__alg_rat_make(sg * p, s, &r) || !uni_eval(q, r, &v) || v.n != 0) continue;
        bool dup = false;
        for (uint32_t j = 0; j < k; j++) dup |= roots[j].n == r.n && roots[j].d == r.d;
        if (!dup) roots[k++] = r;
      }
    }
  }
  return k;
}

typedef struct factor {
  leir__poly *q;
  int32_t e;
} factor;

/* content (rational, sign of the leading term) and primitive part */
static rat content(leir__alg *a, const leir__poly *q) {
  if (q->n == 0) return RONE;
  uint64_t g = 0, l = 1;
  for (uint32_t i = 0; i < q->n; i++) {
    g = leir__alg_ugcd(g, (uint64_t)(q->t[i].c.n < 0 ? -q->t[i].c.n : q->t[i].c.n));
    uint64_t gd = leir__alg_ugcd(l, (uint64_t)q->t[i].c.d);
    if (__builtin_mul_overflow(l / gd, (uint64_t)q->t[i].c.d, &l) || l > INT64_MAX)
      fail(a, LEIR__ALG_OVERFLOW);
  }
  rat c;
  if (!leir__alg_rat_make((int64_t)g, (int64_t)l, &c)) fail(a, LEIR__ALG_OVERFLOW);
  if (leir__alg_lead_coef(a, q).n < 0) c.n = -c.n;
  return c;
}

/* monomial gcd of the terms (min exponent of each atom present in all) */
term leir__alg_mono_gcd(leir__alg *a, const leir__poly *q) {
  term g = {RONE, 0, NULL};
  if (q->n == 0) return g;
  g.f = aalloc(a, (q->t[0].nf + 1) * sizeof *g.f);
  for (uint32_t k = 0; k < q->t[0].nf; k++) {
    fpow f = q->t[0].f[k];
    if (f.e <= 0) continue;
    bool all = true;
    for (uint32_t i = 1; i < q->n && all; i++) {
      bool found = false;
      for (uint32_t j = 0; j < q->t[i].nf; j++)
        if (q->t[i].f[j].atom == f.atom) {
          found = q->t[i].f[j].e > 0;
          if (q->t[i].f[j].e < f.e) f.e = q->t[i].f[j].e;
        }
      all = found;
    }
    if (all) g.f[g.nf++] = f;
  }
  return g;
}

leir__poly *leir__alg_poly_of_term(leir__alg *a, term t) {
  leir__poly *q = leir__alg_poly_new(a, 1);
  q->t[0] = t;
  return q;
}

/* q = c * m * prod factors; fills up to `max` factors (univariate rational
 * roots split off as linear factors, with multiplicity). Returns count. */
static uint32_t factor_poly(leir__alg *a, const leir__poly *q, rat *c, term *m, factor *fs,
                            uint32_t max) {
  *c = content(a, q);
  leir__poly *r = leir__alg_poly_scale(a, q, leir__alg_rinv(a, *c));
  *m = leir__alg_mono_gcd(a, r);
  if (m->nf) r = leir__alg_poly_div_exact(a, r, leir__alg_poly_of_term(a, *m));
  uint32_t k = 0;
  rat roots[16];
  uint32_t nr = rational_roots(r, roots, 16);
  uint32_t x = univariate(r);
  for (uint32_t i = 0; i < nr && k + 1 < max; i++) {
    leir__poly *lin = linear(a, x, roots[i]);
    /* integer form s*x - p keeps coefficients integral */
    lin = leir__alg_poly_scale(a, lin, (rat){roots[i].d, 1});
    int32_t e = 0;
    leir__poly *d;
    while ((d = leir__alg_poly_div_exact(a, r, lin)) != NULL && !leir__alg_poly_is_const(r)) {
      r = d;
      e++;
    }
    if (e) fs[k++] = (factor){lin, e};
  }
  if (!leir__alg_poly_is_const(r)) fs[k++] = (factor){r, 1};
  else if (!leir__alg_poly_is_zero(r)) *c = leir__alg_rmul(a, *c, leir__alg_poly_const_val(r));
  return k;
}

static leir_expr *factored_expr(leir__alg *a, const leir__poly *q) {
  rat c;
  term m;
  factor fs[18];
  if (leir__alg_poly_is_zero(q)) return leir__alg_mk_int(a, 0);
  uint32_t k = factor_poly(a, q, &c, &m, fs, 18);
  leir_expr *e = NULL;
  if (m.nf) e = leir__alg_poly_build(a, leir__alg_poly_of_term(a, m));
  for (uint32_t i = 0; i < k; i++) {
    leir_expr *f = leir__alg_poly_build(a, fs[i].q);
    if (fs[i].e > 1) f = leir__alg_mk_bin(a, LEIR_OP_POW, f, leir__alg_mk_int(a, fs[i].e));
    e = e ? leir__alg_mk_bin(a, LEIR_OP_MUL, e, f) : f;
  }
  if (!e) return leir__alg_poly_build(a, leir__alg_poly_const(a, c));
  int64_t n = c.n < 0 ? -c.n : c.n;
  char dec[64];
  if (c.d != 1 && leir__alg_decimal_of(n, c.d, dec, sizeof dec)) {
    /* a decimal content as the workloads write it: 1.0507010221481323*(...) */
    e = leir__alg_mk_bin(a, LEIR_OP_MUL, chk(a, leir__new_number(a->p, dec, strlen(dec))), e);
  } else {
    if (n != 1) e = leir__alg_mk_bin(a, LEIR_OP_MUL, leir__alg_mk_int(a, n), e);
    if (c.d != 1) e = leir__alg_mk_bin(a, LEIR_OP_DIV, e, leir__alg_mk_int(a, c.d));
  }
  if (c.n < 0) e = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, e));
  return e;
}

leir_expr *leir__alg_factor(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = leir__alg_rf_monic(a, leir__alg_conv_top(a, e));
  leir_expr *n = factored_expr(a, r.num);
  if (leir__alg_poly_is_const(r.den)) return n;
  return leir__alg_mk_bin(a, LEIR_OP_DIV, n, factored_expr(a, r.den));
}

/* ---- cancellation ------------------------------------------------------- */


static bool poly_nonzero(leir__alg *a, const leir__poly *q) {
  if (leir__alg_poly_is_const(q)) return !leir__alg_poly_is_zero(q);
  return leir__alg_nonzero_expr(a, leir__alg_poly_build(a, q), 0);
}

leir_expr *leir__alg_cancel(leir__alg *a, const leir_expr *e, bool allow_zero) {
  ENTER(a, NULL);
  leir__rf r = leir__alg_conv_top(a, e);
  bool changed = false;
  if (leir__alg_poly_is_const(r.den)) fail(a, LEIR__ALG_NOCHANGE);
  /* 1. common monomial factor */
  term gn = leir__alg_mono_gcd(a, r.num), gd = leir__alg_mono_gcd(a, r.den);
  term g = {RONE, 0, aalloc(a, (gn.nf + 1) * sizeof(fpow))};
  for (uint32_t i = 0; i < gn.nf; i++)
    for (uint32_t j = 0; j < gd.nf; j++)
      if (gn.f[i].atom == gd.f[j].atom)
        g.f[g.nf++] = (fpow){gn.f[i].atom, gn.f[i].e < gd.f[j].e ? gn.f[i].e : gd.f[j].e};
  if (g.nf) {
    leir__poly *gp = leir__alg_poly_of_term(a, g);
    if (!allow_zero && !poly_nonzero(a, gp)) fail(a, LEIR__ALG_UNPROVEN);
    r.num = leir__alg_poly_div_exact(a, r.num, gp);
    r.den = leir__alg_poly_div_exact(a, r.den, gp);
    changed = true;
  }
  /* 2. one divides the other */
  leir__poly *q;
  if (!leir__alg_poly_is_const(r.den) && (q = leir__alg_poly_div_exact(a, r.num, r.den)) != NULL) {
    if (!allow_zero && !poly_nonzero(a, r.den)) fail(a, LEIR__ALG_UNPROVEN);
    r = leir__alg_rf_of(q, leir__alg_poly_const(a, RONE));
    changed = true;
  } else if (!leir__alg_poly_is_const(r.den) && !leir__alg_poly_is_const(r.num) &&
             (q = leir__alg_poly_div_exact(a, r.den, r.num)) != NULL) {
    if (!allow_zero && !poly_nonzero(a, r.num)) fail(a, LEIR__ALG_UNPROVEN);
    r = leir__alg_rf_of(leir__alg_poly_const(a, RONE), q);
    changed = true;
  } else {
    /* 3. common rational roots of univariate num and den in one atom */
    rat roots[16];
    uint32_t nr = rational_roots(r.den, roots, 16);
    uint32_t x = univariate(r.den);
    for (uint32_t i = 0; i < nr; i++) {
      leir__poly *lin = linear(a, x, roots[i]);
      leir__poly *dn, *dd;
      while ((dn = leir__alg_poly_div_exact(a, r.num, lin)) &&
             (dd = leir__alg_poly_div_exact(a, r.den, lin))) {
        if (!allow_zero && !poly_nonzero(a, lin)) fail(a, LEIR__ALG_UNPROVEN);
        r = leir__alg_rf_of(dn, dd);
        changed = true;
      }
    }
  }
  if (!changed) fail(a, LEIR__ALG_NOCHANGE);
  return leir__alg_rf_build(a, &r);
}

/* ---- partial fractions and collect ---------------------------------------- */

static uint32_t atom_of(leir__alg *a, const leir_expr *x) {
  leir__rf r = leir__alg_conv_top(a, x);
  if (!leir__alg_poly_is_const(r.den) || r.num->n != 1 || r.num->t[0].nf != 1 ||
      r.num->t[0].f[0].e != 1 || r.num->t[0].c.n != 1 || r.num->t[0].c.d != 1)
    fail(a, LEIR__ALG_REFUSED);
  return r.num->t[0].f[0].atom;
}

/* q with atom x replaced by the rational v */
static leir__poly *subst(leir__alg *a, const leir__poly *q, uint32_t x, rat v) {
  leir__poly *r = leir__alg_poly_new(a, q->n);
  for (uint32_t i = 0; i < q->n; i++) {
    term t = q->t[i];
    term u = {t.c, 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
    for (uint32_t k = 0; k < t.nf; k++) {
      if (t.f[k].atom != x) {
        u.f[u.nf++] = t.f[k];
        continue;
      }
      if (t.f[k].e < 0) fail(a, LEIR__ALG_REFUSED);
      for (int32_t j = 0; j < t.f[k].e; j++) u.c = leir__alg_rmul(a, u.c, v);
    }
    r->t[i] = u;
  }
  return leir__alg_poly_norm(a, r);
}

static leir_expr *apart_in(leir__alg *a, leir__rf r, uint32_t x);

leir_expr *leir__alg_apart(leir__alg *a, const leir_expr *e, const leir_expr *xe) {
  ENTER(a, NULL);
  leir__rf r = leir__alg_conv_top(a, e);
  return apart_in(a, r, atom_of(a, xe));
}

/* Partial fractions in x of a Laurent polynomial q (x's powers in the
 * monomial denominators, which the algebra folds into negative
 * exponents): the terms without a negative power of x, then for each power
 * x**k (k = 1, 2, ...) the fraction c_k/x**k, c_k factored
 * ((Q*F-Q*W)/s -> Q*(F-W)/s). NOCHANGE when that is one fraction. */
static leir_expr *apart_laurent(leir__alg *a, const leir__poly *q, uint32_t x) {
  leir__poly *poly_part = leir__alg_poly_new(a, 0);
  int32_t maxk = 0;
  for (uint32_t i = 0; i < q->n; i++)
    for (uint32_t k = 0; k < q->t[i].nf; k++)
      if (q->t[i].f[k].atom == x && -q->t[i].f[k].e > maxk) maxk = -q->t[i].f[k].e;
  if (maxk <= 0 || maxk > 64) fail(a, LEIR__ALG_NOCHANGE);
  leir__poly **ck = aalloc(a, (size_t)(maxk + 1) * sizeof *ck);
  for (int32_t k = 0; k <= maxk; k++) ck[k] = leir__alg_poly_new(a, 0);
  for (uint32_t i = 0; i < q->n; i++) {
    term t = q->t[i];
    int32_t k = 0;
    term u = {t.c, 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
    for (uint32_t j = 0; j < t.nf; j++) {
      if (t.f[j].atom == x && t.f[j].e < 0) k = -t.f[j].e;
      else u.f[u.nf++] = t.f[j];
    }
    leir__poly *one = leir__alg_poly_new(a, 1);
    one->t[0] = k ? u : t;
    if (k) ck[k] = leir__alg_poly_add(a, ck[k], one, false);
    else poly_part = leir__alg_poly_add(a, poly_part, one, false);
  }
  uint32_t parts = !leir__alg_poly_is_zero(poly_part);
  for (int32_t k = 1; k <= maxk; k++) parts += !leir__alg_poly_is_zero(ck[k]);
  if (parts < 2) fail(a, LEIR__ALG_NOCHANGE);
  leir_expr *out = leir__alg_poly_is_zero(poly_part) ? NULL : leir__alg_poly_build(a, poly_part);
  for (int32_t k = 1; k <= maxk; k++) {
    if (leir__alg_poly_is_zero(ck[k])) continue;
    bool neg = out && leir__alg_lead_coef(a, ck[k]).n < 0;
    leir__poly *c = neg ? leir__alg_poly_scale(a, ck[k], (rat){-1, 1}) : ck[k];
    leir_expr *frac = leir__alg_mk_bin(a, LEIR_OP_DIV, factored_expr(a, c),
                                       leir__alg_poly_build(a, leir__alg_poly_atom(a, x, k)));
    out = out ? leir__alg_mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, out, frac) : frac;
  }
  return out;
}

leir_expr *leir__alg_apart_auto(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = leir__alg_conv_top(a, e);
  if (r.den->n == 1 && r.den->t[0].nf == 1 && r.den->t[0].f[0].e > 0) {
    /* a denominator c*x**k: num/(c*x**k) as a Laurent polynomial in x */
    uint32_t x = r.den->t[0].f[0].atom;
    int32_t k = r.den->t[0].f[0].e;
    rat inv = leir__alg_rinv(a, r.den->t[0].c);
    leir__poly *q = leir__alg_poly_new(a, r.num->n);
    for (uint32_t i = 0; i < r.num->n; i++) {
      term t = r.num->t[i];
      term u = {leir__alg_rmul(a, t.c, inv), 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
      bool has = false;
      for (uint32_t j = 0; j < t.nf; j++) {
        fpow f = t.f[j];
        if (f.atom == x) {
          has = true;
          f.e -= k;
          if (f.e == 0) continue;
        }
        u.f[u.nf++] = f;
      }
      if (!has) u.f[u.nf++] = (fpow){x, -k};
      q->t[i] = u;
    }
    return apart_laurent(a, q, x);
  }
  uint32_t x = univariate(r.den);
  if (x >= UINT32_MAX - 1) fail(a, LEIR__ALG_NOCHANGE);
  return apart_in(a, r, x);
}

static leir_expr *apart_in(leir__alg *a, leir__rf r, uint32_t x) {
  if (univariate(r.den) != x) fail(a, LEIR__ALG_NOCHANGE);
  rat roots[16];
  uint32_t nr = rational_roots(r.den, roots, 16);
  int32_t dg = leir__alg_deg(&r.den->t[0]);
  if (nr == 0 || (int32_t)nr != dg) fail(a, LEIR__ALG_NOCHANGE); /* not distinct linear */
  rat lc = r.den->t[0].c;
  leir__poly *rest = r.num;
  uint32_t nfr = 0;
  leir__poly **cs = aalloc(a, nr * sizeof *cs);
  for (uint32_t i = 0; i < nr; i++) {
    /* residue c_i = num(r_i) / (lc * prod_{j != i} (r_i - r_j)) */
    rat dd = lc;
    leir__poly *others = leir__alg_poly_const(a, lc);
    for (uint32_t j = 0; j < nr; j++) {
      if (j == i) continue;
      dd = leir__alg_rmul(a, dd, leir__alg_radd(a, roots[i], leir__alg_rneg(a, roots[j])));
      others = leir__alg_poly_mul(a, others, linear(a, x, roots[j]));
    }
    cs[i] = leir__alg_poly_scale(a, subst(a, r.num, x, roots[i]), leir__alg_rinv(a, dd));
    if (leir__alg_poly_is_zero(cs[i])) continue;
    nfr++;
    rest = leir__alg_poly_add(a, rest, leir__alg_poly_mul(a, cs[i], others), true);
  }
  leir__poly *poly_part = leir__alg_poly_div_exact(a, rest, r.den);
  if (!poly_part) fail(a, LEIR__ALG_REFUSED);
  if (nfr == 1 && nr == 1 && leir__alg_poly_is_zero(poly_part))
    fail(a, LEIR__ALG_NOCHANGE); /* c/(x-r) */
  leir_expr *out = leir__alg_poly_is_zero(poly_part) ? NULL : leir__alg_poly_build(a, poly_part);
  for (uint32_t i = 0; i < nr; i++) {
    if (leir__alg_poly_is_zero(cs[i])) continue;
    bool neg = cs[i]->n == 1 && cs[i]->t[0].c.n < 0 && out;
    leir__poly *c = neg ? leir__alg_poly_scale(a, cs[i], (rat){-1, 1}) : cs[i];
    leir_expr *frac = leir__alg_mk_bin(a, LEIR_OP_DIV, leir__alg_poly_build(a, c),
                                       leir__alg_poly_build(a, linear(a, x, roots[i])));
    out = out ? leir__alg_mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, out, frac) : frac;
  }
  return out ? out : leir__alg_mk_int(a, 0);
}

leir_expr *leir__alg_collect(leir__alg *a, const leir_expr *e, const leir_expr *xe) {
  ENTER(a, NULL);
  leir__rf r = leir__alg_rf_monic(a, leir__alg_conv_top(a, e));
  uint32_t x = atom_of(a, xe);
  int32_t maxe = 0;
  uint32_t with_x = 0;
  for (uint32_t i = 0; i < r.num->n; i++)
    for (uint32_t k = 0; k < r.num->t[i].nf; k++)
      if (r.num->t[i].f[k].atom == x) {
        with_x++;
        if (r.num->t[i].f[k].e > maxe) maxe = r.num->t[i].f[k].e;
      }
  if (maxe <= 0 || with_x < 2) fail(a, LEIR__ALG_NOCHANGE);
  leir_expr *out = NULL;
  for (int32_t p = maxe; p >= 0; p--) {
    leir__poly *ck = leir__alg_poly_new(a, r.num->n);
    ck->n = 0;
    for (uint32_t i = 0; i < r.num->n; i++) {
      term t = r.num->t[i];
      int32_t ex = 0;
      term u = {t.c, 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
      for (uint32_t k = 0; k < t.nf; k++) {
        if (t.f[k].atom == x) ex = t.f[k].e;
        else u.f[u.nf++] = t.f[k];
      }
      if (ex == p) ck->t[ck->n++] = u;
    }
    ck = leir__alg_poly_norm(a, ck);
    if (leir__alg_poly_is_zero(ck)) continue;
    bool neg = false;
    leir_expr *coef;
    if (ck->n == 1) {
      neg = ck->t[0].c.n < 0;
      coef = leir__alg_poly_build(a, neg ? leir__alg_poly_scale(a, ck, (rat){-1, 1}) : ck);
    } else {
      coef = leir__alg_poly_build(a, ck);
    }
    leir_expr *t;
    if (p == 0) {
      t = coef;
    } else {
      leir_expr *xp = leir__alg_atom_expr(a, x);
      if (p > 1) xp = leir__alg_mk_bin(a, LEIR_OP_POW, xp, leir__alg_mk_int(a, p));
      t = ck->n == 1 && ck->t[0].nf == 0 && ck->t[0].c.d == 1 &&
                  (ck->t[0].c.n == 1 || ck->t[0].c.n == -1)
              ? xp
              : leir__alg_mk_bin(a, LEIR_OP_MUL, xp, coef);
    }
    if (!out) out = neg ? chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, t)) : t;
    else out = leir__alg_mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, out, t);
  }
  if (leir__alg_poly_is_const(r.den)) return out;
  return leir__alg_mk_bin(a, LEIR_OP_DIV, out, leir__alg_poly_build(a, r.den));
}
