/*
 * The algebra's exact arithmetic: int64 rationals that fail (longjmp) on
 * overflow, and sparse multivariate polynomials over atoms with them.
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"

/* ---- rationals --------------------------------------------------------- */

uint64_t leir__alg_ugcd(uint64_t x, uint64_t y) {
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x;
}

static int64_t iabs_ok(int64_t v, bool *ok) {
  if (v == INT64_MIN) {
    *ok = false;
    return 0;
  }
  return v < 0 ? -v : v;
}

/* false on overflow or zero denominator */
bool leir__alg_rat_make(int64_t n, int64_t d, rat *out) {
  bool ok = true;
  if (d == 0) return false;
  int64_t an = iabs_ok(n, &ok), ad = iabs_ok(d, &ok);
  if (!ok) return false;
  int64_t g = (int64_t)leir__alg_ugcd((uint64_t)an, (uint64_t)ad);
  if (g == 0) g = 1;
  an /= g;
  ad /= g;
  out->n = ((n < 0) != (d < 0)) ? -an : an;
  out->d = ad;
  if (out->n == 0) out->d = 1;
  return true;
}

bool leir__alg_rat_add(rat x, rat y, rat *out) {
  int64_t g = (int64_t)leir__alg_ugcd((uint64_t)x.d, (uint64_t)y.d);
  int64_t a, b, n, d;
  if (__builtin_mul_overflow(x.n, y.d / g, &a) || __builtin_mul_overflow(y.n, x.d / g, &b) ||
      __builtin_add_overflow(a, b, &n) || __builtin_mul_overflow(x.d, y.d / g, &d))
    return false;
  return leir__alg_rat_make(n, d, out);
}

bool leir__alg_rat_mul(rat x, rat y, rat *out) {
  bool ok = true;
  int64_t g1 = (int64_t)leir__alg_ugcd((uint64_t)iabs_ok(x.n, &ok), (uint64_t)y.d);
  int64_t g2 = (int64_t)leir__alg_ugcd((uint64_t)iabs_ok(y.n, &ok), (uint64_t)x.d);
  if (!ok) return false;
  if (g1 == 0) g1 = 1;
  if (g2 == 0) g2 = 1;
  int64_t n, d;
  if (__builtin_mul_overflow(x.n / g1, y.n / g2, &n) ||
      __builtin_mul_overflow(x.d / g2, y.d / g1, &d))
    return false;
  return leir__alg_rat_make(n, d, out);
}

static bool rat_inv(rat x, rat *out) { return leir__alg_rat_make(x.d, x.n, out); }

static rat R(leir__alg *a, bool ok, rat v) {
  if (!ok) fail(a, LEIR__ALG_OVERFLOW);
  return v;
}
rat leir__alg_radd(leir__alg *a, rat x, rat y) {
  rat r;
  return R(a, leir__alg_rat_add(x, y, &r), r);
}
rat leir__alg_rmul(leir__alg *a, rat x, rat y) {
  rat r;
  return R(a, leir__alg_rat_mul(x, y, &r), r);
}
rat leir__alg_rneg(leir__alg *a, rat x) {
  if (x.n == INT64_MIN) fail(a, LEIR__ALG_OVERFLOW);
  x.n = -x.n;
  return x;
}
rat leir__alg_rinv(leir__alg *a, rat x) {
  rat r;
  if (x.n == 0) fail(a, LEIR__ALG_REFUSED);
  return R(a, rat_inv(x, &r), r);
}

/* A decimal lexeme as an exact rational; false when it does not fit. */
bool leir__alg_rat_of_lexeme(const char *s, uint32_t len, rat *out) {
  int64_t m = 0;
  int scale = 0, ex = 0;
  uint32_t i = 0;
  bool frac = false, any = false;
  for (; i < len; i++) {
    char c = s[i];
    if (c == '.') {
      frac = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any = true;
    if (__builtin_mul_overflow(m, 10, &m) || __builtin_add_overflow(m, c - '0', &m)) return false;
    if (frac) scale++;
  }
  if (!any) return false;
  if (i < len) {
    if (s[i] != 'e' && s[i] != 'E') return false;
    i++;
    int sign = 1;
    if (i < len && (s[i] == '+' || s[i] == '-')) sign = s[i++] == '-' ? -1 : 1;
    if (i >= len) return false;
    for (; i < len; i++) {
      if (s[i] < '0' || s[i] > '9' || ex > 100) return false;
      ex = ex * 10 + (s[i] - '0');
    }
    ex *= sign;
  }
  int p10 = ex - scale; /* value = m * 10^p10 */
  while (p10 < 0 && m % 10 == 0 && m) {
    m /= 10;
    p10++;
  }
  int64_t num = m, den = 1;
  for (; p10 > 0; p10--)
    if (__builtin_mul_overflow(num, 10, &num)) return false;
  for (; p10 < 0; p10++)
    if (__builtin_mul_overflow(den, 10, &den)) return false;
  return leir__alg_rat_make(num, den, out);
}

/* ---- polynomials ------------------------------------------------------- */

int32_t leir__alg_deg(const term *t) {
  int32_t d = 0;
  for (uint32_t i = 0; i < t->nf; i++) d += t->f[i].e;
  return d;
}

/* Graded lex: > 0 when x is the larger monomial. Factor lists sorted by
 * atom; a smaller atom id is a "bigger" variable. */
int leir__alg_mono_cmp(const term *x, const term *y) {
  int32_t dx = leir__alg_deg(x), dy = leir__alg_deg(y);
  if (dx != dy) return dx > dy ? 1 : -1;
  uint32_t i = 0;
  for (; i < x->nf && i < y->nf; i++) {
    if (x->f[i].atom != y->f[i].atom) return x->f[i].atom < y->f[i].atom ? 1 : -1;
    if (x->f[i].e != y->f[i].e) return x->f[i].e > y->f[i].e ? 1 : -1;
  }
  if (i < x->nf) return 1;
  if (i < y->nf) return -1;
  return 0;
}

int leir__alg_term_qcmp(const void *p, const void *q) { return -leir__alg_mono_cmp(p, q); }

leir__poly *leir__alg_poly_new(leir__alg *a, uint32_t n) {
  leir__poly *q = aalloc(a, sizeof *q);
  q->n = n;
  q->t = n ? aalloc(a, (size_t)n * sizeof *q->t) : NULL;
  return q;
}

/* Sorts, merges like terms, drops zeros; enforces the term limit. */
leir__poly *leir__alg_poly_norm(leir__alg *a, leir__poly *q) {
  if (q->n > 1) qsort(q->t, q->n, sizeof *q->t, leir__alg_term_qcmp);
  uint32_t w = 0;
  for (uint32_t i = 0; i < q->n; i++) {
    if (w && leir__alg_mono_cmp(&q->t[w - 1], &q->t[i]) == 0)
      q->t[w - 1].c = leir__alg_radd(a, q->t[w - 1].c, q->t[i].c);
    else
      q->t[w++] = q->t[i];
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < w; i++)
    if (q->t[i].c.n != 0) q->t[k++] = q->t[i];
  q->n = k;
  if (q->n > a->max_terms) fail(a, LEIR__ALG_LIMIT);
  return q;
}

leir__poly *leir__alg_poly_const(leir__alg *a, rat c) {
  leir__poly *q = leir__alg_poly_new(a, c.n ? 1 : 0);
  if (c.n) q->t[0] = (term){c, 0, NULL};
  return q;
}

leir__poly *leir__alg_poly_atom(leir__alg *a, uint32_t atom, int32_t e) {
  leir__poly *q = leir__alg_poly_new(a, 1);
  fpow *f = aalloc(a, sizeof *f);
  f->atom = atom;
  f->e = e;
  q->t[0] = (term){RONE, 1, f};
  return q;
}

bool leir__alg_poly_is_zero(const leir__poly *q) { return q->n == 0; }
bool leir__alg_poly_is_const(const leir__poly *q) {
  return q->n == 0 || (q->n == 1 && q->t[0].nf == 0);
}
rat leir__alg_poly_const_val(const leir__poly *q) { return q->n ? q->t[0].c : (rat){0, 1}; }

bool leir__alg_poly_eq(const leir__poly *x, const leir__poly *y) {
  if (x->n != y->n) return false;
  for (uint32_t i = 0; i < x->n; i++)
    if (leir__alg_mono_cmp(&x->t[i], &y->t[i]) || x->t[i].c.n != y->t[i].c.n ||
        x->t[i].c.d != y->t[i].c.d)
      return false;
  return true;
}

leir__poly *leir__alg_poly_add(leir__alg *a, const leir__poly *x, const leir__poly *y, bool sub) {
  leir__poly *q = leir__alg_poly_new(a, x->n + y->n);
  for (uint32_t i = 0; i < x->n; i++) q->t[i] = x->t[i];
  for (uint32_t i = 0; i < y->n; i++) {
    q->t[x->n + i] = y->t[i];
    if (sub) q->t[x->n + i].c = leir__alg_rneg(a, y->t[i].c);
  }
  return leir__alg_poly_norm(a, q);
}

leir__poly *leir__alg_poly_scale(leir__alg *a, const leir__poly *x, rat c) {
  leir__poly *q = leir__alg_poly_new(a, x->n);
  for (uint32_t i = 0; i < x->n; i++) {
    q->t[i] = x->t[i];
    q->t[i].c = leir__alg_rmul(a, x->t[i].c, c);
  }
  return leir__alg_poly_norm(a, q);
}

/* product of two monomials (factor lists merged, exponents added; an
 * exponent that reaches 0 disappears) */
static term term_mul(leir__alg *a, const term *x, const term *y) {
  term r = {leir__alg_rmul(a, x->c, y->c), 0, NULL};
  r.f = aalloc(a, (size_t)(x->nf + y->nf + 1) * sizeof *r.f);
  uint32_t i = 0, j = 0;
  while (i < x->nf || j < y->nf) {
    fpow f;
    if (j >= y->nf || (i < x->nf && x->f[i].atom < y->f[j].atom))
      f = x->f[i++];
    else if (i >= x->nf || y->f[j].atom < x->f[i].atom)
      f = y->f[j++];
    else {
      f = x->f[i++];
      f.e += y->f[j++].e;
    }
    if (f.e > MAX_EXP || f.e < -MAX_EXP) fail(a, LEIR__ALG_LIMIT);
    if (f.e) r.f[r.nf++] = f;
  }
  return r;
}

leir__poly *leir__alg_poly_mul(leir__alg *a, const leir__poly *x, const leir__poly *y) {
  if ((uint64_t)x->n * y->n > (uint64_t)a->max_terms * 8) fail(a, LEIR__ALG_LIMIT);
  leir__poly *q = leir__alg_poly_new(a, x->n * y->n);
  uint32_t k = 0;
  for (uint32_t i = 0; i < x->n; i++)
    for (uint32_t j = 0; j < y->n; j++) q->t[k++] = term_mul(a, &x->t[i], &y->t[j]);
  return leir__alg_poly_norm(a, q);
}

/* does monomial y divide monomial x (all exponents of y <= those of x)? */
bool leir__alg_term_divides(const term *y, const term *x) {
  uint32_t i = 0;
  for (uint32_t j = 0; j < y->nf; j++) {
    while (i < x->nf && x->f[i].atom < y->f[j].atom) i++;
    if (i >= x->nf || x->f[i].atom != y->f[j].atom || x->f[i].e < y->f[j].e) return false;
  }
  return true;
}

term leir__alg_term_div(leir__alg *a, const term *x, const term *y) {
  term inv = {leir__alg_rinv(a, y->c), y->nf, aalloc(a, (y->nf + 1) * sizeof(fpow))};
  for (uint32_t i = 0; i < y->nf; i++) inv.f[i] = (fpow){y->f[i].atom, -y->f[i].e};
  return term_mul(a, x, &inv);
}

/* Exact division x / y; NULL when y does not divide x. */
leir__poly *leir__alg_poly_div_exact(leir__alg *a, const leir__poly *x, const leir__poly *y) {
  if (leir__alg_poly_is_zero(y)) return NULL;
  leir__poly *rem = leir__alg_poly_add(a, x, leir__alg_poly_const(a, (rat){0, 1}), false);
  leir__poly *quo = leir__alg_poly_new(a, 0);
  uint32_t guard = 0;
  while (!leir__alg_poly_is_zero(rem)) {
    if (!leir__alg_term_divides(&y->t[0], &rem->t[0]) || ++guard > a->max_terms) return NULL;
    leir__poly *m = leir__alg_poly_new(a, 1);
    m->t[0] = leir__alg_term_div(a, &rem->t[0], &y->t[0]);
    quo = leir__alg_poly_add(a, quo, m, false);
    rem = leir__alg_poly_add(a, rem, leir__alg_poly_mul(a, m, y), true);
  }
  return quo;
}

leir__poly *leir__alg_poly_pow(leir__alg *a, const leir__poly *x, int64_t n) {
  leir__poly *r = leir__alg_poly_const(a, RONE);
  for (int64_t i = 0; i < n; i++) r = leir__alg_poly_mul(a, r, x);
  return r;
}

uint32_t leir__alg_poly_terms(const leir__poly *q) { return q ? q->n : 0; }
