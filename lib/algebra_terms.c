/*
 * The algebra's rewrites over the terms as written: expand_cancel (a sum
 * whose terms cancel once expanded) and together_terms.
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"

/* ---- expand_cancellation ------------------------------------------------------ */

/* Is every term of m a term of q with the same coefficient? */
static bool poly_subsum(const leir__poly *m, const leir__poly *q) {
  for (uint32_t i = 0; i < m->n; i++) {
    bool found = false;
    for (uint32_t j = 0; j < q->n && !found; j++)
      found = leir__alg_mono_cmp(&m->t[i], &q->t[j]) == 0 && m->t[i].c.n == q->t[j].c.n &&
              m->t[i].c.d == q->t[j].c.d;
    if (!found) return false;
  }
  return true;
}

/* The structural form: the terms of the numerator as written that are
 * each a multiple of the denominator come out, the others stay as written
 * over it ((Q*(F-W)+R*s)/s -> R+Q*(F-W)/s); NULL when no single term is a
 * multiple (or the whole numerator is). */
static leir_expr *expand_cancel_terms(leir__alg *a, const leir_expr *num, const leir_expr *den) {
  leir__rf d = leir__alg_conv(a, den);
  if (!leir__alg_poly_is_const(d.den) || leir__alg_poly_is_const(d.num)) return NULL;
  sterm *ts = aalloc(a, MAX_SUM_TERMS * sizeof *ts);
  uint32_t n = 0, out = 0;
  leir__alg_flatten_sum(a, num, false, ts, &n, 0);
  leir__poly *quo = leir__alg_poly_new(a, 0);
  bool *taken = aalloc(a, (n + 1) * sizeof *taken);
  for (uint32_t i = 0; i < n; i++) {
    taken[i] = false;
    leir__rf t = leir__alg_conv(a, ts[i].e);
    leir__poly *q;
    if (!leir__alg_poly_is_const(t.den) || leir__alg_poly_is_zero(t.num) ||
        (q = leir__alg_poly_div_exact(
             a, leir__alg_poly_scale(a, t.num, leir__alg_rinv(a, leir__alg_poly_const_val(t.den))),
             d.num)) == NULL)
      continue;
    /* num/den = q * (d.num/d.den): the multiple of the denominator is q*d.den */
    q = leir__alg_poly_scale(a, q, leir__alg_poly_const_val(d.den));
    quo =
        leir__alg_poly_add(a, quo, ts[i].neg ? leir__alg_poly_scale(a, q, (rat){-1, 1}) : q, false);
    taken[i] = true;
    out++;
  }
  if (!out || out == n || leir__alg_poly_is_zero(quo)) return NULL;
  leir_expr *rest = NULL;
  bool first_neg = false;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (taken[i]) continue;
    if (!kept++) first_neg = ts[i].neg;
    rest = rest ? leir__alg_mk_bin(a, ts[i].neg ? LEIR_OP_SUB : LEIR_OP_ADD, rest,
                                   leir__alg_copy(a, ts[i].e))
                : leir__alg_copy(a, ts[i].e);
  }
  /* -t/den as a subtraction when the rest is a single negative term */
  bool sub = kept == 1 && first_neg;
  if (first_neg && !sub) { /* rebuild with the first term negated */
    rest = NULL;
    bool started = false;
    for (uint32_t i = 0; i < n; i++) {
      if (taken[i]) continue;
      leir_expr *t = leir__alg_copy(a, ts[i].e);
      if (!started) {
        rest = leir__alg_chain(a, NULL, ts[i].neg, t);
        started = true;
      } else {
        rest = leir__alg_chain(a, rest, ts[i].neg, t);
      }
    }
  }
  /* several terms left that share a monomial factor: written with it
   * factored out, the form the numerator had before a cancel combined it
   * ((A*F-C*F+G*s)/s -> G+F*(A-C)/s) */
  if (kept >= 2) {
    leir__rf rr = leir__alg_conv(a, rest);
    term m;
    if (leir__alg_poly_is_const(rr.den) && rr.num->n >= 2 &&
        (m = leir__alg_mono_gcd(a, rr.num)).nf) {
      leir__poly *q = leir__alg_poly_div_exact(a, rr.num, leir__alg_poly_of_term(a, m));
      if (q) {
        q = leir__alg_poly_scale(a, q, leir__alg_rinv(a, leir__alg_poly_const_val(rr.den)));
        bool qneg = leir__alg_lead_coef(a, q).n < 0;
        if (qneg) q = leir__alg_poly_scale(a, q, (rat){-1, 1});
        leir_expr *f =
            leir__alg_mk_bin(a, LEIR_OP_MUL, leir__alg_poly_build(a, leir__alg_poly_of_term(a, m)),
                             leir__alg_poly_build(a, q));
        return leir__alg_mk_bin(a, qneg ? LEIR_OP_SUB : LEIR_OP_ADD, leir__alg_poly_build(a, quo),
                                leir__alg_mk_bin(a, LEIR_OP_DIV, f, leir__alg_copy(a, den)));
      }
    }
  }
  return leir__alg_mk_bin(a, sub ? LEIR_OP_SUB : LEIR_OP_ADD, leir__alg_poly_build(a, quo),
                          leir__alg_mk_bin(a, LEIR_OP_DIV, rest, leir__alg_copy(a, den)));
}

leir_expr *leir__alg_expand_cancel(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  const leir_expr *s = leir__alg_strip(e);
  if (!s || s->kind != LEIR_EXPR_BINARY || s->op != LEIR_OP_DIV) fail(a, LEIR__ALG_NOCHANGE);
  if (leir__alg_contains_inf(e, 0)) fail(a, LEIR__ALG_REFUSED);
  leir_expr *structural = expand_cancel_terms(a, s->kids[0], s->kids[1]);
  if (structural) return structural;
  leir__rf r = leir__alg_conv_top(a, e);
  if (leir__alg_poly_is_const(r.den) || r.num->n < 2) fail(a, LEIR__ALG_NOCHANGE);
  leir__poly *rem = r.num, *quo = leir__alg_poly_new(a, 0);
  const term *lt = &r.den->t[0];
  /* take out multiples m*den that are sub-sums of the numerator, first
   * term first; each step removes at least one term, so this ends */
  for (uint32_t i = 0; i < rem->n;) {
    if (leir__alg_term_divides(lt, &rem->t[i])) {
      leir__poly *m = leir__alg_poly_new(a, 1);
      m->t[0] = leir__alg_term_div(a, &rem->t[i], lt);
      leir__poly *mult = leir__alg_poly_mul(a, m, r.den);
      if (poly_subsum(mult, rem)) {
        rem = leir__alg_poly_add(a, rem, mult, true);
        quo = leir__alg_poly_add(a, quo, m, false);
        i = 0;
        continue;
      }
    }
    i++;
  }
  if (leir__alg_poly_is_zero(quo) || leir__alg_poly_is_zero(rem)) fail(a, LEIR__ALG_NOCHANGE);
  leir__rf f = leir__alg_rf_monic(a, leir__alg_rf_of(rem, r.den));
  bool neg = leir__alg_lead_coef(a, f.num).n < 0;
  if (neg) f.num = leir__alg_poly_scale(a, f.num, (rat){-1, 1});
  return leir__alg_mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, leir__alg_poly_build(a, quo),
                          leir__alg_rf_build(a, &f));
}

/* ---- together, terms as written ------------------------------------------- */

enum { MAX_CHAIN = 64 };

typedef struct chainf {
  const leir_expr *f[MAX_CHAIN];
  bool inv[MAX_CHAIN];
  uint32_t n;
} chainf;

/* factors of a chain of * and / (parentheses looked through), divisors
 * marked */
static void chain_factors(leir__alg *a, const leir_expr *e, bool inv, chainf *c, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  e = leir__alg_strip(e);
  if (e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_MUL || e->op == LEIR_OP_DIV)) {
    chain_factors(a, e->kids[0], inv, c, depth + 1);
    chain_factors(a, e->kids[1], e->op == LEIR_OP_DIV ? !inv : inv, c, depth + 1);
    return;
  }
  if (c->n >= MAX_CHAIN) fail(a, LEIR__ALG_LIMIT);
  c->f[c->n] = e;
  c->inv[c->n++] = inv;
}

leir_expr *leir__alg_together_terms(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  if (!e || leir__alg_contains_inf(e, 0)) fail(a, LEIR__ALG_REFUSED);
  sterm *ts = aalloc(a, MAX_SUM_TERMS * sizeof *ts);
  uint32_t n = 0;
  leir__alg_flatten_sum(a, e, false, ts, &n, 0);
  if (n < 2) fail(a, LEIR__ALG_NOCHANGE);
  chainf *cs = aalloc(a, n * sizeof *cs);
  /* the distinct non-constant divisors (by AC hash), each with the largest
   * multiplicity it has in one term */
  const leir_expr *dv[MAX_CHAIN];
  uint64_t dh[MAX_CHAIN];
  uint32_t dmax[MAX_CHAIN], nd = 0;
  for (uint32_t i = 0; i < n; i++) {
    cs[i].n = 0;
    chain_factors(a, ts[i].e, false, &cs[i], 0);
    uint32_t cnt[MAX_CHAIN] = {0};
    for (uint32_t k = 0; k < cs[i].n; k++) {
      if (!cs[i].inv[k] || cs[i].f[k]->kind == LEIR_EXPR_NUMBER) continue;
      uint64_t h = leir__ac_hash(a->p, cs[i].f[k]);
      uint32_t j = 0;
      while (j < nd && dh[j] != h) j++;
      if (j == nd) {
        if (nd >= MAX_CHAIN) fail(a, LEIR__ALG_LIMIT);
        dv[nd] = cs[i].f[k], dh[nd] = h, dmax[nd++] = 0;
      }
      if (++cnt[j] > dmax[j]) dmax[j] = cnt[j];
    }
  }
  if (!nd) fail(a, LEIR__ALG_NOCHANGE);
  /* numerator: each term's own factors as written (constant divisors
   * kept), times the divisors it lacks */
  leir_expr *num = NULL;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t cnt[MAX_CHAIN] = {0};
    leir_expr *t = NULL;
    for (uint32_t k = 0; k < cs[i].n; k++) {
      const leir_expr *f = cs[i].f[k];
      if (!cs[i].inv[k]) {
        t = t ? leir__alg_mk_bin(a, LEIR_OP_MUL, t, leir__alg_copy(a, f)) : leir__alg_copy(a, f);
      } else if (f->kind == LEIR_EXPR_NUMBER) {
        t = leir__alg_mk_bin(a, LEIR_OP_DIV, t ? t : leir__alg_mk_int(a, 1), leir__alg_copy(a, f));
      } else {
        uint64_t h = leir__ac_hash(a->p, f);
        for (uint32_t j = 0; j < nd; j++)
          if (dh[j] == h) cnt[j]++;
      }
    }
    /* a term that is the number 1 is replaced by what it is multiplied by */
    if (t && t->kind == LEIR_EXPR_NUMBER && t->u.num->value == 1) t = NULL;
    for (uint32_t j = 0; j < nd; j++)
      for (uint32_t k = cnt[j]; k < dmax[j]; k++)
        t = t ? leir__alg_mk_bin(a, LEIR_OP_MUL, t, leir__alg_copy(a, dv[j]))
              : leir__alg_copy(a, dv[j]);
    if (!t) t = leir__alg_mk_int(a, 1);
    num = leir__alg_chain(a, num, ts[i].neg, t);
  }
  leir_expr *den = NULL;
  for (uint32_t j = 0; j < nd; j++)
    for (uint32_t k = 0; k < dmax[j]; k++)
      den = den ? leir__alg_mk_bin(a, LEIR_OP_MUL, den, leir__alg_copy(a, dv[j]))
                : leir__alg_copy(a, dv[j]);
  return leir__alg_mk_bin(a, LEIR_OP_DIV, num, den);
}
