/*
 * The algebra's rules for exp, log, sqrt and powers: powsimp,
 * expand_powsimp, expand_log, and logsimp over signed sums of logs.
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"

/* ---- exp / log / sqrt rules ------------------------------------------------- */

leir_expr *leir__alg_copy(leir__alg *a, const leir_expr *e) {
  return chk(a, leir__copy_expr(a->p, a->p, e));
}

static leir_expr *call1(leir__alg *a, leir_op fn, leir_expr *arg) {
  leir_expr *c = chk(a, leir__new_call(a->p, fn, 1));
  c->kids[0] = arg;
  return c;
}

/* factors of a product chain (parentheses looked through) */
static void product_factors(const leir_expr *e, const leir_expr **fs, uint32_t *n, uint32_t max) {
  e = leir__alg_strip(e);
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_MUL && *n + 2 <= max) {
    product_factors(e->kids[0], fs, n, max);
    product_factors(e->kids[1], fs, n, max);
    return;
  }
  fs[(*n)++] = e;
}

static leir_expr *powsimp_rec(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth);

static leir_expr *combine_product(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth) {
  const leir_expr *fs[64];
  uint32_t n = 0;
  product_factors(e, fs, &n, 64);
  leir_expr *exp_arg = NULL, *sqrt_arg = NULL, *rest = NULL;
  uint32_t nexp = 0, nsqrt = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (leir__alg_is_call(fs[i], LEIR_OP_EXP)) nexp++;
    if (leir__alg_is_call(fs[i], LEIR_OP_SQRT) && leir__alg_nonneg_expr(a, fs[i]->kids[0], 0))
      nsqrt++;
  }
  /* equal bases (modulo AC) multiply into one integer power: x*(x*y) ->
   * x**2*y, x**2*x -> x**3 (positive exponents only, numbers are never
   * bases: 2*2 stays a product). Exact over the reals for every x. */
  const leir_expr *base[64];
  int64_t pw[64];
  uint64_t bh[64];
  bool used[64];
  for (uint32_t i = 0; i < n; i++) {
    const leir_expr *f = fs[i];
    int64_t k;
    used[i] = false;
    base[i] = f;
    pw[i] = 1;
    if ((nexp > 1 && leir__alg_is_call(f, LEIR_OP_EXP)) ||
        (nsqrt > 1 && leir__alg_is_call(f, LEIR_OP_SQRT) &&
         leir__alg_nonneg_expr(a, f->kids[0], 0)) ||
        f->kind == LEIR_EXPR_NUMBER) {
      pw[i] = 0; /* combined otherwise, or a number */
      continue;
    }
    if (f->kind == LEIR_EXPR_BINARY && f->op == LEIR_OP_POW &&
        leir__alg_int_exponent(f->kids[1], &k) && k >= 1 &&
        leir__alg_strip(f->kids[0])->kind != LEIR_EXPR_NUMBER) {
      base[i] = leir__alg_strip(f->kids[0]);
      pw[i] = k;
    }
    bh[i] = leir__ac_hash(a->p, base[i]);
  }
  for (uint32_t i = 0; i < n; i++) {
    const leir_expr *f = fs[i];
    if (used[i]) continue;
    if (pw[i] > 0) {
      int64_t total = pw[i];
      uint32_t same = 0;
      for (uint32_t j = i + 1; j < n; j++)
        if (!used[j] && pw[j] > 0 && bh[j] == bh[i]) total += pw[j], same++;
      if (same && total <= MAX_POW) {
        for (uint32_t j = i + 1; j < n; j++)
          if (!used[j] && pw[j] > 0 && bh[j] == bh[i]) used[j] = true;
        *changed = true;
        leir_expr *c = leir__alg_mk_bin(a, LEIR_OP_POW, powsimp_rec(a, base[i], changed, depth + 1),
                                        leir__alg_mk_int(a, total));
        rest = rest ? leir__alg_mk_bin(a, LEIR_OP_MUL, rest, c) : c;
        continue;
      }
    }
    if (nexp > 1 && leir__alg_is_call(f, LEIR_OP_EXP)) {
      leir_expr *arg =
          a->flat ? leir__alg_copy(a, f->kids[0]) : powsimp_rec(a, f->kids[0], changed, depth + 1);
      exp_arg = exp_arg ? leir__alg_mk_bin(a, LEIR_OP_ADD, exp_arg, arg) : arg;
      continue;
    }
    if (nsqrt > 1 && leir__alg_is_call(f, LEIR_OP_SQRT) &&
        leir__alg_nonneg_expr(a, f->kids[0], 0)) {
      leir_expr *arg =
          a->flat ? leir__alg_copy(a, f->kids[0]) : powsimp_rec(a, f->kids[0], changed, depth + 1);
      sqrt_arg = sqrt_arg ? leir__alg_mk_bin(a, LEIR_OP_MUL, sqrt_arg, arg) : arg;
      continue;
    }
    leir_expr *c = powsimp_rec(a, f, changed, depth + 1);
    rest = rest ? leir__alg_mk_bin(a, LEIR_OP_MUL, rest, c) : c;
  }
  if (exp_arg) {
    *changed = true;
    leir_expr *c = call1(a, LEIR_OP_EXP, exp_arg);
    rest = rest ? leir__alg_mk_bin(a, LEIR_OP_MUL, rest, c) : c;
  }
  if (sqrt_arg) {
    *changed = true;
    leir_expr *c = call1(a, LEIR_OP_SQRT, sqrt_arg);
    rest = rest ? leir__alg_mk_bin(a, LEIR_OP_MUL, rest, c) : c;
  }
  return rest;
}

static leir_expr *powsimp_rec(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = leir__alg_strip(e);
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_MUL) return combine_product(a, s, changed, depth);
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_DIV &&
      leir__alg_is_call(leir__alg_strip(s->kids[0]), LEIR_OP_EXP) &&
      leir__alg_is_call(leir__alg_strip(s->kids[1]), LEIR_OP_EXP)) {
    *changed = true;
    const leir_expr *u = leir__alg_strip(s->kids[0])->kids[0],
                    *v = leir__alg_strip(s->kids[1])->kids[0];
    return call1(
        a, LEIR_OP_EXP,
        leir__alg_mk_bin(a, LEIR_OP_SUB,
                         a->flat ? leir__alg_copy(a, u) : powsimp_rec(a, u, changed, depth + 1),
                         a->flat ? leir__alg_copy(a, v) : powsimp_rec(a, v, changed, depth + 1)));
  }
  if (e->kind == LEIR_EXPR_TENSOR || e->n == 0 || (a->flat && e->kind == LEIR_EXPR_CALL))
    return leir__alg_copy(a, e);
  leir_expr *c = chk(a, leir__new_expr(a->p, (leir_expr_kind)e->kind, (leir_op)e->op, e->n));
  if (e->kind == LEIR_EXPR_COMPARE)
    for (uint32_t i = 0; i + 1 < e->n; i++) c->u.cmp_ops[i] = e->u.cmp_ops[i];
  for (uint32_t i = 0; i < e->n; i++) c->kids[i] = powsimp_rec(a, e->kids[i], changed, depth + 1);
  return c;
}

leir_expr *leir__alg_powsimp(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  bool changed = false;
  if (!e) fail(a, LEIR__ALG_REFUSED);
  leir_expr *r = powsimp_rec(a, e, &changed, 0);
  if (!changed) fail(a, LEIR__ALG_NOCHANGE);
  return r;
}

static bool nonpos_expr(leir__alg *a, const leir_expr *e) {
  e = leir__alg_strip(e);
  if (e->kind == LEIR_EXPR_NEG) return leir__alg_nonneg_expr(a, e->kids[0], 0);
  if (e->kind == LEIR_EXPR_NUMBER) return e->u.num->value == 0;
  return false;
}

static leir_expr *expand_powsimp_rec(leir__alg *a, const leir_expr *e, bool *changed,
                                     unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = leir__alg_strip(e);
  int64_t k;
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_POW &&
      leir__alg_int_exponent(s->kids[1], &k) && k >= 2 && k <= 8 &&
      leir__alg_strip(s->kids[0])->kind != LEIR_EXPR_NUMBER) {
    /* x**k -> x*x*...*x (the inverse of powsimp's x*x -> x**2), multiplied
     * left to right: x*x*x overflows only where x**3 does (|x| > 1 for
     * either), and a product x**k*y regrouped as x*(x*y) by a reader is
     * AC-equal; exact over the reals */
    *changed = true;
    leir_expr *b = expand_powsimp_rec(a, s->kids[0], changed, depth + 1), *r = leir__alg_copy(a, b);
    for (int64_t i = 1; i < k; i++) r = leir__alg_mk_bin(a, LEIR_OP_MUL, r, leir__alg_copy(a, b));
    return r;
  }
  if (leir__alg_is_call(s, LEIR_OP_EXP)) {
    const leir_expr *u = leir__alg_strip(s->kids[0]);
    if (u->kind == LEIR_EXPR_BINARY && (u->op == LEIR_OP_ADD || u->op == LEIR_OP_SUB)) {
      bool sub = u->op == LEIR_OP_SUB;
      const leir_expr *x = u->kids[0], *y = u->kids[1];
      a->saw = true;
      /* parts x and (+-y): all >= 0 or all <= 0, so no factor exceeds the
       * whole (no new overflow) or 1 */
      bool y_nonneg = sub ? nonpos_expr(a, y) : leir__alg_nonneg_expr(a, y, 0);
      bool y_nonpos = sub ? leir__alg_nonneg_expr(a, y, 0) : nonpos_expr(a, y);
      if ((leir__alg_nonneg_expr(a, x, 0) && y_nonneg) || (nonpos_expr(a, x) && y_nonpos)) {
        *changed = true;
        leir_expr *ey = leir__alg_copy(a, y);
        if (sub) ey = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, ey));
        return leir__alg_mk_bin(a, LEIR_OP_MUL, call1(a, LEIR_OP_EXP, leir__alg_copy(a, x)),
                                call1(a, LEIR_OP_EXP, ey));
      }
    }
  }
  if (e->kind == LEIR_EXPR_TENSOR || e->n == 0 || (a->flat && e->kind == LEIR_EXPR_CALL))
    return leir__alg_copy(a, e);
  leir_expr *c = chk(a, leir__new_expr(a->p, (leir_expr_kind)e->kind, (leir_op)e->op, e->n));
  if (e->kind == LEIR_EXPR_COMPARE)
    for (uint32_t i = 0; i + 1 < e->n; i++) c->u.cmp_ops[i] = e->u.cmp_ops[i];
  for (uint32_t i = 0; i < e->n; i++) c->kids[i] = expand_powsimp_rec(a, e->kids[i], changed, depth + 1);
  return c;
}

leir_expr *leir__alg_expand_powsimp(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  bool changed = false;
  if (!e) fail(a, LEIR__ALG_REFUSED);
  a->saw = false;
  leir_expr *r = expand_powsimp_rec(a, e, &changed, 0);
  if (!changed) fail(a, a->saw ? LEIR__ALG_UNPROVEN : LEIR__ALG_NOCHANGE);
  return r;
}

static leir_expr *log_split(leir__alg *a, const leir_expr *arg, bool *changed, unsigned depth);

static leir_expr *expand_log_rec(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = leir__alg_strip(e);
  if (leir__alg_is_call(s, LEIR_OP_LOG)) return log_split(a, s->kids[0], changed, depth + 1);
  if (e->kind == LEIR_EXPR_TENSOR || e->n == 0 || (a->flat && e->kind == LEIR_EXPR_CALL))
    return leir__alg_copy(a, e);
  leir_expr *c = chk(a, leir__new_expr(a->p, (leir_expr_kind)e->kind, (leir_op)e->op, e->n));
  if (e->kind == LEIR_EXPR_COMPARE)
    for (uint32_t i = 0; i + 1 < e->n; i++) c->u.cmp_ops[i] = e->u.cmp_ops[i];
  for (uint32_t i = 0; i < e->n; i++) c->kids[i] = expand_log_rec(a, e->kids[i], changed, depth + 1);
  return c;
}

/* log(arg), split where the operands are proven positive */
static leir_expr *log_split(leir__alg *a, const leir_expr *arg, bool *changed, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = leir__alg_strip(arg);
  if (s->kind == LEIR_EXPR_BINARY && (s->op == LEIR_OP_MUL || s->op == LEIR_OP_DIV) &&
      leir__alg_positive_expr(a, s->kids[0], 0) && leir__alg_positive_expr(a, s->kids[1], 0)) {
    *changed = true;
    return leir__alg_mk_bin(a, s->op == LEIR_OP_MUL ? LEIR_OP_ADD : LEIR_OP_SUB,
                            log_split(a, s->kids[0], changed, depth + 1),
                            log_split(a, s->kids[1], changed, depth + 1));
  }
  int64_t n;
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_POW &&
      leir__alg_int_exponent(s->kids[1], &n) && n > 0 &&
      leir__alg_positive_expr(a, s->kids[0], 0)) {
    *changed = true;
    return leir__alg_mk_bin(a, LEIR_OP_MUL, leir__alg_mk_int(a, n),
                            log_split(a, s->kids[0], changed, depth + 1));
  }
  return call1(a, LEIR_OP_LOG,
               a->flat ? leir__alg_copy(a, s) : expand_log_rec(a, s, changed, depth + 1));
}

leir_expr *leir__alg_expand_log(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  bool changed = false;
  if (!e) fail(a, LEIR__ALG_REFUSED);
  leir_expr *r = expand_log_rec(a, e, &changed, 0);
  if (!changed) fail(a, LEIR__ALG_NOCHANGE);
  return r;
}

/* ---- logsimp ---------------------------------------------------------------- */

/* signed terms of a +/- chain (parentheses and negations looked through) */
void leir__alg_flatten_sum(leir__alg *a, const leir_expr *e, bool neg, sterm *ts, uint32_t *n,
                           unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  e = leir__alg_strip(e);
  if (e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB)) {
    leir__alg_flatten_sum(a, e->kids[0], neg, ts, n, depth + 1);
    leir__alg_flatten_sum(a, e->kids[1], e->op == LEIR_OP_SUB ? !neg : neg, ts, n, depth + 1);
    return;
  }
  if (e->kind == LEIR_EXPR_NEG) {
    leir__alg_flatten_sum(a, e->kids[0], !neg, ts, n, depth + 1);
    return;
  }
  if (*n >= MAX_SUM_TERMS) fail(a, LEIR__ALG_LIMIT);
  ts[(*n)++] = (sterm){e, neg};
}

/* x op y, where x may be NULL (then y, negated for SUB) */
leir_expr *leir__alg_chain(leir__alg *a, leir_expr *x, bool neg, leir_expr *y) {
  if (x) return leir__alg_mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, x, y);
  return neg ? chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, y)) : y;
}

leir_expr *leir__alg_logsimp(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  if (!e) fail(a, LEIR__ALG_REFUSED);
  sterm *ts = aalloc(a, MAX_SUM_TERMS * sizeof *ts);
  bool *use = aalloc(a, MAX_SUM_TERMS * sizeof *use);
  uint32_t n = 0, nlog = 0, nuse = 0, npos = 0;
  leir__alg_flatten_sum(a, e, false, ts, &n, 0);
  /* running bounds of the product of the positive terms' arguments and of
   * the negative terms' arguments, each checked after every factor */
  double p0 = 1, p1 = 1, q0 = 1, q1 = 1;
  for (uint32_t i = 0; i < n; i++) {
    use[i] = false;
    if (!leir__alg_is_call(ts[i].e, LEIR_OP_LOG) || ts[i].e->n != 1) continue;
    nlog++;
    double lo, hi;
    leir__alg_bounds_rec(a, ts[i].e->kids[0], &lo, &hi, 0);
    if (!(lo > 0) || !isfinite(hi)) continue;
    double *r0 = ts[i].neg ? &q0 : &p0, *r1 = ts[i].neg ? &q1 : &p1;
    if (!leir__alg_in_limits(a, *r0 * lo, *r1 * hi)) continue;
    *r0 *= lo;
    *r1 *= hi;
    use[i] = true;
    nuse++;
    npos += !ts[i].neg;
  }
  if (nlog < 2) fail(a, LEIR__ALG_NOCHANGE);
  if (nuse < 2) fail(a, LEIR__ALG_UNPROVEN);
  if (npos && nuse > npos && !leir__alg_in_limits(a, p0 / q1, p1 / q0)) {
    /* the quotient leaves the range: combine the positive terms only */
    if (npos < 2) fail(a, LEIR__ALG_UNPROVEN);
    for (uint32_t i = 0; i < n; i++)
      if (use[i] && ts[i].neg) use[i] = false;
    nuse = npos;
  }
  /* the combined argument: positives multiplied, divided by the negatives'
   * product (or, without positives, the negatives' product under a minus) */
  leir_expr *num = NULL, *den = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (!use[i]) continue;
    leir_expr *arg = leir__alg_copy(a, ts[i].e->kids[0]);
    leir_expr **acc = ts[i].neg && npos ? &den : &num;
    *acc = *acc ? leir__alg_mk_bin(a, LEIR_OP_MUL, *acc, arg) : arg;
  }
  leir_expr *combined =
      call1(a, LEIR_OP_LOG, den ? leir__alg_mk_bin(a, LEIR_OP_DIV, num, den) : num);
  leir_expr *r = NULL;
  bool placed = false;
  for (uint32_t i = 0; i < n; i++) {
    if (use[i]) {
      if (!placed) r = leir__alg_chain(a, r, npos == 0, combined);
      placed = true;
      continue;
    }
    r = leir__alg_chain(a, r, ts[i].neg, leir__alg_copy(a, ts[i].e));
  }
  return r;
}
