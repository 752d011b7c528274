/*
 * The split strategies' proofs (split_sites.h): whether a value y is
 * finite, what the generic assumption (LEIR_CANDIDATES_GENERIC_VALUES)
 * cannot cover, bounds from the declared input domains, and the numerical
 * conditions of #37-#39 with the generic mode's structural refusals.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "algebra.h"
#include "error.h"
#include "split_proofs.h"

/* rank of float dtypes by range and precision: narrower first */
static int narrowness(uint8_t dt) {
  switch (dt) {
  case LEIR_BF16: return 0;
  case LEIR_F16: return 1;
  case LEIR_F32: return 2;
  default: return 3;
  }
}

static uint8_t narrower(uint8_t a, uint8_t b) {
  if (!is_float(b)) return a;
  if (!is_float(a)) return b;
  return narrowness(b) < narrowness(a) ? b : a;
}

/* the narrowest float dtype read in e (outside subscripts), or `dt` */
static uint8_t narrowest(const leir_expr *e, uint8_t dt, unsigned depth) {
  if (depth > 400) return dt;
  if (e->kind == LEIR_EXPR_TENSOR) return narrower(dt, e->dtype);
  for (uint32_t i = 0; i < e->n; i++) dt = narrowest(e->kids[i], dt, depth + 1);
  return dt;
}

/* smallest normal, largest finite, mantissa bits */
static void limits(uint8_t dt, double *tiny, double *huge, int *bits) {
  switch (dt) {
  case LEIR_F16: *tiny = 6.103515625e-05, *huge = 65504.0, *bits = 10; break;
  case LEIR_BF16: *tiny = 1.1754943508222875e-38, *huge = 3.3895313892515355e38, *bits = 7; break;
  case LEIR_F32: *tiny = FLT_MIN, *huge = FLT_MAX, *bits = 23; break;
  default: *tiny = DBL_MIN, *huge = DBL_MAX, *bits = 52; break;
  }
}

/* ---- finiteness: y is never inf or NaN (modulo + - * overflow, as for
 * every reassociating rewrite) ---------------------------------------------- */

static bool bounds_of(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st);


static bool finite_sym(finite_memo *m, uint32_t sym, unsigned depth);

static bool has_leaf(const leir_expr *e, unsigned depth) {
  if (depth > 400 || e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_VAR) return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (has_leaf(e->kids[i], depth + 1)) return true;
  return false;
}

static bool finite_expr(finite_memo *m, const leir_expr *e, unsigned depth) {
  if (depth > 200) return false;
  leir_status st = LEIR_OK;
  double lo, hi;
  /* a constant (sqrt(2)): its bounds are its value */
  if (e->kind != LEIR_EXPR_NUMBER && !has_leaf(e, 0)) return bounds_of(m->c->p, e, &lo, &hi, &st);
  /* a division by a finite value proven away from 0 (C/sqrt(2)) */
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV)
    return finite_expr(m, e->kids[0], depth + 1) && finite_expr(m, e->kids[1], depth + 1) &&
           bounds_of(m->c->p, e->kids[1], &lo, &hi, &st) && (lo > 0 || hi < 0);
  switch ((leir_expr_kind)e->kind) {
  case LEIR_EXPR_NUMBER: return isfinite(e->u.num->value);
  case LEIR_EXPR_INF: return false;
  case LEIR_EXPR_VAR: return true;
  case LEIR_EXPR_TENSOR: return finite_sym(m, e->sym, depth + 1);
  case LEIR_EXPR_PAREN:
  case LEIR_EXPR_NEG: return finite_expr(m, e->kids[0], depth + 1);
  case LEIR_EXPR_COMPARE:
  case LEIR_EXPR_AND:
  case LEIR_EXPR_OR: return true; /* 0 or 1 */
  case LEIR_EXPR_BINARY:
    if (e->op != LEIR_OP_ADD && e->op != LEIR_OP_SUB && e->op != LEIR_OP_MUL) return false;
    return finite_expr(m, e->kids[0], depth + 1) && finite_expr(m, e->kids[1], depth + 1);
  case LEIR_EXPR_CALL:
    if (e->op == LEIR_OP_IF_THEN_ELSE)
      return e->n == 3 && finite_expr(m, e->kids[1], depth + 1) &&
             finite_expr(m, e->kids[2], depth + 1);
    if (e->op != LEIR_OP_MAX && e->op != LEIR_OP_MIN && e->op != LEIR_OP_ABS &&
        e->op != LEIR_OP_ERF)
      return false;
    for (uint32_t i = 0; i < e->n; i++)
      if (!finite_expr(m, e->kids[i], depth + 1)) return false;
    return true;
  }
  return false;
}

static bool reads_finite(finite_memo *m, const leir_expr *e, unsigned depth) {
  if (depth > 200) return false;
  if (e->kind == LEIR_EXPR_TENSOR) return finite_sym(m, e->sym, depth + 1);
  for (uint32_t i = 0; i < e->n; i++)
    if (!reads_finite(m, e->kids[i], depth + 1)) return false;
  return true;
}

/* Every tensor read finite and the value bounded over the reals
 * (leir__alg_bounds, reads unbounded unless declared): an intermediate inf
 * of an exp that overflows can only reach a bounded result through a
 * division (1/inf = 0) or a clamp, since +, -, * and / with an unbounded
 * operand have unbounded real bounds; 1/(1+exp(-C)) is finite. */
static bool finite_bounded(finite_memo *m, const leir_expr *e, unsigned depth) {
  double lo, hi;
  leir_status st = LEIR_OK;
  if (!reads_finite(m, e, depth + 1)) return false;
  return bounds_of(m->c->p, e, &lo, &hi, &st);
}

static bool finite_sym(finite_memo *m, uint32_t sym, unsigned depth) {
  if (sym >= m->nsym) return false;
  if (m->state[sym] == T_YES || m->state[sym] == T_VISITING) return true; /* a cycle: induction */
  if (m->state[sym] == T_NO) return false;
  m->state[sym] = T_VISITING;
  const leir__sctx *c = m->c;
  bool ok = true, written = false;
  for (uint32_t i = 0; i < c->nnests && ok; i++) {
    const leir_nest *n = c->nests[i].nest;
    for (uint32_t k = 0; k < n->nitems && ok; k++) {
      const leir_equation *eq = n->items[k].eq;
      if (!eq || eq->lhs->sym != sym) continue;
      written = true;
      if (is_float(eq->lhs->dtype)) ok = finite_expr(m, eq->rhs, depth + 1) || finite_bounded(m, eq->rhs, depth);
    }
  }
  if (ok && !written) { /* a signature input: every domain is finite but a non-finite value */
    ok = c->known && c->known[sym];
    for (uint32_t i = 0; ok && i < c->p->nsig; i++)
      if (c->p->sig[i].sym == sym && c->p->sig[i].domain == LEIR_DOMAIN_VALUE)
        ok = isfinite(c->p->sig[i].dom_a);
  }
  m->state[sym] = ok ? T_YES : T_NO;
  return ok;
}

/* ---- the generic assumption (LEIR_CANDIDATES_GENERIC_VALUES) --------------
 * Values are assumed finite and, when not constant and not structurally
 * zero, non-zero. What the assumption cannot cover is refused even then:
 * a value derived from an infinite constant (a -inf mask: inf on the
 * masked elements, -inf - -inf = NaN on a fully masked row), and for a
 * divisor a value that is exactly 0 on some inputs by its construction. */


static bool tainted_sym(generic_memo *m, int what, uint32_t sym, unsigned depth);

static bool saturates(const leir_expr *e) {
  e = strip(e);
  return e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_ERF;
}

static bool has_exp(const leir_expr *e, unsigned depth) {
  if (depth > 200) return true;
  if (e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_EXP) return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (has_exp(e->kids[i], depth + 1)) return true;
  return false;
}

/* G_NORM: e derives from a normalization's difference, a subtraction that
 * is a numerator or a power base ((F-O)/s, (F-O)**2): 0 where a group has
 * one element, and far from the magnitude of the values it normalizes */
static bool norm_expr(generic_memo *m, const leir_expr *e, bool num, unsigned depth) {
  if (depth > 200) return true;
  if (e->kind == LEIR_EXPR_TENSOR) return is_float(e->dtype) && tainted_sym(m, G_NORM, e->sym, depth + 1);
  if (num && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_SUB) return true;
  for (uint32_t i = 0; i < e->n; i++) {
    bool n2 = e->kind == LEIR_EXPR_PAREN ? num
              : e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_DIV || e->op == LEIR_OP_POW) && i == 0;
    if (norm_expr(m, e->kids[i], n2, depth + 1)) return true;
  }
  return false;
}

/* Does e derive from an infinite constant (what = G_INF), is it exactly
 * 0 on some inputs by its construction (G_ZERO: a bool, integer or
 * comparison value, a constant 0, a loop index, a product, max or min with
 * such a value), or does it grow faster than its reads (G_BIG: an exp of
 * a value, even under a log: x10 inputs take it past the largest float;
 * G_BIGX: also a power or a product of two values, a matmul, 100 times
 * larger at x10 inputs: too large for an exponent)? Reads inside
 * subscripts are not values. */
static bool tainted_expr(generic_memo *m, int what, const leir_expr *e, unsigned depth) {
  if (depth > 200) return true;
  if (what == G_BIGX && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_MUL &&
      has_leaf(e->kids[0], 0) && has_leaf(e->kids[1], 0))
    return true;
  if (what == G_BIG || what == G_BIGX) {
    if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_EXP)) return true;
    if (what == G_BIGX && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_POW) return true;
    if (e->kind == LEIR_EXPR_TENSOR) return is_float(e->dtype) && tainted_sym(m, what, e->sym, depth + 1);
    if (e->kind == LEIR_EXPR_COMPARE || e->kind == LEIR_EXPR_AND || e->kind == LEIR_EXPR_OR)
      return false;
  }
  switch ((leir_expr_kind)e->kind) {
  case LEIR_EXPR_NUMBER:
    return what == G_INF ? !isfinite(e->u.num->value) : e->u.num->value == 0;
  case LEIR_EXPR_INF: return what == G_INF;
  case LEIR_EXPR_VAR: return what == G_ZERO;
  case LEIR_EXPR_TENSOR:
    if (what == G_ZERO && !is_float(e->dtype)) return true;
    return is_float(e->dtype) && tainted_sym(m, what, e->sym, depth + 1);
  case LEIR_EXPR_COMPARE:
  case LEIR_EXPR_AND:
  case LEIR_EXPR_OR:
    if (what == G_ZERO) return true;
    break;
  case LEIR_EXPR_BINARY:
    if (what == G_ZERO) {
      switch ((leir_op)e->op) {
      case LEIR_OP_ADD:
      case LEIR_OP_SUB:
        /* 1+erf(x): exactly 0 where erf saturates
         * (GELU's C*0.5*(1+erf(C/sqrt(2))) for C < -9) */
        if (saturates(e->kids[0]) || saturates(e->kids[1])) return true;
        return tainted_expr(m, what, e->kids[0], depth + 1) &&
               tainted_expr(m, what, e->kids[1], depth + 1);
      case LEIR_OP_MUL: break;
      case LEIR_OP_DIV: /* x/(1+exp(-C)) is 0 where the exp overflows */
        return tainted_expr(m, what, e->kids[0], depth + 1) || has_exp(e->kids[1], 0);
      case LEIR_OP_POW: return tainted_expr(m, what, e->kids[0], depth + 1);
      default: return true; /* // and %: integers */
      }
    }
    break;
  case LEIR_EXPR_CALL:
    if (what == G_ZERO && e->op == LEIR_OP_EXP) return false;
    break;
  default: break;
  }
  for (uint32_t i = 0; i < e->n; i++)
    if (tainted_expr(m, what, e->kids[i], depth + 1)) return true;
  return false;
}

static bool tainted_sym(generic_memo *m, int what, uint32_t sym, unsigned depth) {
  if (sym >= m->nsym || depth > 200) return true;
  uint8_t *st = &m->state[what][sym];
  if (*st == T_YES) return true;
  if (*st == T_NO || *st == T_VISITING) return false; /* an accumulation: its other terms */
  *st = T_VISITING;
  const leir__sctx *c = m->c;
  bool t = false, written = false;
  for (uint32_t i = 0; i < c->nnests && !t; i++) {
    const leir_nest *n = c->nests[i].nest;
    for (uint32_t k = 0; k < n->nitems && !t; k++) {
      const leir_equation *eq = n->items[k].eq;
      if (!eq || eq->lhs->sym != sym) continue;
      written = true;
      t = what == G_NORM ? norm_expr(m, eq->rhs, false, depth + 1)
                         : tainted_expr(m, what, eq->rhs, depth + 1);
    }
  }
  for (uint32_t i = 0; !written && !t && what < G_BIG && i < c->p->nsig; i++)
    if (c->p->sig[i].sym == sym && c->p->sig[i].domain == LEIR_DOMAIN_VALUE)
      t = what == G_INF ? !isfinite(c->p->sig[i].dom_a) : c->p->sig[i].dom_a == 0;
  *st = t ? T_YES : T_NO;
  return t;
}

/* some tensor read in e (outside subscripts) is tainted (G_INF: or e
 * holds an infinite constant) */
static bool reads_tainted(generic_memo *m, int what, const leir_expr *e, unsigned depth) {
  if (depth > 200) return true;
  if (e->kind == LEIR_EXPR_TENSOR) return is_float(e->dtype) && tainted_sym(m, what, e->sym, depth);
  if (e->kind == LEIR_EXPR_INF) return what == G_INF;
  for (uint32_t i = 0; i < e->n; i++)
    if (reads_tainted(m, what, e->kids[i], depth + 1)) return true;
  return false;
}

/* ---- bounds from the declared input domains (lib/algebra.h) ------------- */

static bool bounds_at(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st, unsigned depth);

/* the one equation that writes sym (anywhere), or NULL (none or several) */
static const leir_equation *only_writer(const leir_nest *n, uint32_t sym, int *count) {
  const leir_equation *w = NULL;
  for (uint32_t k = 0; k < n->nitems && *count < 2; k++) {
    if (n->items[k].nest) {
      const leir_equation *x = only_writer(n->items[k].nest, sym, count);
      if (x) w = x;
    } else if (n->items[k].eq->lhs->sym == sym) {
      ++*count;
      w = n->items[k].eq;
    }
  }
  return w;
}

static bool reads_sym(const leir_expr *e, uint32_t sym, unsigned depth) {
  if (depth > 400) return true;
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == sym) return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (reads_sym(e->kids[i], sym, depth + 1)) return true;
  return false;
}

/* The range of an intermediate: that of its one writer's right side when
 * the writer does not read it (no accumulation, no scan), every element
 * being one value of that right side. */
static bool intermediate_range(const leir_program *p, uint32_t sym, double *lo, double *hi,
                               leir_status *st, unsigned depth) {
  if (depth > 4) return false;
  const leir_equation *w = NULL;
  int count = 0;
  for (uint32_t i = 0; i < p->nnests && count < 2; i++) {
    const leir_equation *x = only_writer(p->nests[i], sym, &count);
    if (x) w = x;
  }
  if (count != 1 || !w || reads_sym(w->rhs, sym, 0)) return false;
  return bounds_at(p, w->rhs, lo, hi, st, depth + 1);
}

/* declares the ranges of the intermediates read in e (of program p; the
 * symbols in s) */
static void declare_reads(leir__alg *a, leir_program *s, const leir_program *p,
                          const leir_expr *e, leir_status *st, unsigned depth, unsigned level) {
  if (level > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    bool input = false;
    for (uint32_t i = 0; i < p->nsig && !input; i++)
      input = p->sig[i].sym == e->sym && p->sig[i].role == LEIR_ROLE_INPUT;
    double lo, hi;
    if (!input && is_float(e->dtype) && intermediate_range(p, e->sym, &lo, &hi, st, depth)) {
      uint32_t sym = leir__sym_find(s, leir__sym_name(p, e->sym), leir__sym_len(p, e->sym));
      if (sym != LEIR__NOSYM) leir__alg_assume_range(a, sym, lo, hi);
    }
    return;
  }
  for (uint32_t i = 0; i < e->n; i++) declare_reads(a, s, p, e->kids[i], st, depth, level + 1);
}

static bool bounds_of(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st) {
  return bounds_at(p, e, lo, hi, st, 0);
}

static bool bounds_at(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st, unsigned depth) {
  leir_program *s = leir__program_new(2048);
  leir__alg *a = s ? leir__alg_new(s, 64) : NULL;
  leir_expr *copy = a ? leir__copy_expr(s, p, e) : NULL;
  bool ok = false;
  if (!copy) {
    *st = LEIR_ERR_NOMEM;
  } else {
    for (uint32_t i = 0; i < p->nsig; i++) {
      const leir__decl *d = &p->sig[i];
      uint32_t sym = leir__sym_find(s, leir__sym_name(p, d->sym), leir__sym_len(p, d->sym));
      if (sym == LEIR__NOSYM) continue;
      if (d->domain == LEIR_DOMAIN_POSITIVE) leir__alg_assume_positive(a, sym);
      else if (d->domain == LEIR_DOMAIN_VALUE) leir__alg_assume_range(a, sym, d->dom_a, d->dom_a);
      else if (d->domain == LEIR_DOMAIN_RANGE || d->domain == LEIR_DOMAIN_UNIFORM)
        leir__alg_assume_range(a, sym, d->dom_a, d->dom_b);
    }
    declare_reads(a, s, p, e, st, depth, 0);
    ok = leir__alg_bounds(a, copy, lo, hi) && isfinite(*lo) && isfinite(*hi);
  }
  leir__alg_free(a);
  leir_program_free(s);
  return ok;
}

/* ---- the numerical conditions ---------------------------------------------- */


static bool y_finite(proof *pf, const yval *y) {
  return finite_sym(pf->fm, y->shift ? y->z->sym : y->acc->sym, 0);
}

static bool y_bounds(proof *pf, const yval *y, double *lo, double *hi, double boundary) {
  if (!bounds_of(pf->c->p, y->shift ? y->z : y->acc, lo, hi, &pf->st)) return false;
  if (y->shift) {
    if (boundary < *lo) *lo = boundary;
    if (boundary > *hi) *hi = boundary;
  }
  return true;
}

static bool same_value(const leir__sctx *c, const yval *y, const leir_expr *e) {
  return !y->shift && leir__expr_equal(c->p, strip(e), c->p, y->acc);
}

/* exp(u): its leftmost +/- term t1 and whether u has more terms */
const leir_expr *leir__split_first_term(const leir_expr *u, bool *more) {
  const leir_expr *n = strip(u);
  *more = false;
  while (n->kind == LEIR_EXPR_BINARY && (n->op == LEIR_OP_ADD || n->op == LEIR_OP_SUB)) {
    *more = true;
    n = strip(n->kids[0]);
  }
  return n;
}

static verdict check_exp(proof *pf, const site *s, const yval *y, bool div, uint8_t dt) {
  const leir__sctx *c = pf->c;
  const leir_expr *u = s->x->kids[0];
  double tiny, huge, ylo, yhi;
  int bits;
  limits(dt, &tiny, &huge, &bits);
  double L = fmin(log(huge), -log(tiny)) / 2 - 1;
  const leir_expr *su = strip(u);
  if (div) {
    if (su->kind != LEIR_EXPR_BINARY || su->op != LEIR_OP_SUB) return V_NO_SITE; /* not a-b */
    if (same_value(c, y, su->kids[1]) && y_finite(pf, y)) return V_EXACT;
    double alo, ahi, blo, bhi;
    if (!y_bounds(pf, y, &ylo, &yhi, 0) || !bounds_of(c->p, su->kids[0], &alo, &ahi, &pf->st) ||
        !bounds_of(c->p, su->kids[1], &blo, &bhi, &pf->st))
      return V_UNPROVEN;
    return alo - yhi >= -L && ahi - ylo <= L && blo - yhi >= -L && bhi - ylo <= L ? V_CLOSE
                                                                                  : V_UNPROVEN;
  }
  bool more;
  const leir_expr *t1 = leir__split_first_term(u, &more);
  if (same_value(c, y, t1) && y_finite(pf, y)) return V_EXACT;
  if (su->kind == LEIR_EXPR_BINARY && su->op == LEIR_OP_SUB && strip(su->kids[0]) == t1 &&
      same_value(c, y, su->kids[1]) && y_finite(pf, y))
    return V_EXACT;
  if (!y_bounds(pf, y, &ylo, &yhi, 0)) return V_UNPROVEN;
  if (!more) return ylo >= 0 && yhi <= bits * log(2.0) ? V_CLOSE : V_UNPROVEN;
  double tlo, thi, ulo, uhi;
  if (!bounds_of(c->p, t1, &tlo, &thi, &pf->st) || !bounds_of(c->p, u, &ulo, &uhi, &pf->st))
    return V_UNPROVEN;
  /* exponents t1-y and u-t1+y */
  return tlo - yhi >= -L && thi - ylo <= L && ulo - thi + ylo >= -L && uhi - tlo + yhi <= L
             ? V_CLOSE
             : V_UNPROVEN;
}

static verdict check_mul(proof *pf, const site *s, const yval *y, uint8_t dt) {
  double tiny, huge, lo, hi;
  int bits;
  limits(dt, &tiny, &huge, &bits);
  if (!y_bounds(pf, y, &lo, &hi, 1)) return V_UNPROVEN;
  if (!(lo > 0 || hi < 0)) return V_UNPROVEN;
  double m = fmin(fabs(lo), fabs(hi)), M = fmax(fabs(lo), fabs(hi));
  if (M > ldexp(1.0, bits)) return V_UNPROVEN;
  /* m >= 1 up to the bounds' own widening (a relative 1e-12 per node):
   * |x/y| <= |x|*(1+2^-20), an overflow only for x within 2^-20 of the
   * largest value, like any rounding there */
  if (m >= 1 - ldexp(1.0, -20)) return V_CLOSE;
  double xlo, xhi;
  if (!bounds_of(pf->c->p, s->x, &xlo, &xhi, &pf->st)) return V_UNPROVEN;
  return fmax(fabs(xlo), fabs(xhi)) <= m * (huge / 2) ? V_CLOSE : V_UNPROVEN;
}

verdict leir__split_check(proof *pf, leir__split_kind kind, const site *s, const yval *y,
                          bool div) {
  uint8_t dt = narrowest(s->x, s->eq->lhs->dtype, 0);
  dt = narrower(dt, y->shift ? y->z->dtype : y->acc->dtype);
  switch (kind) {
  case LEIR__SPLIT_ADD: return y_finite(pf, y) ? V_CLOSE : V_UNPROVEN;
  case LEIR__SPLIT_MUL: return check_mul(pf, s, y, dt);
  default: return check_exp(pf, s, y, div, dt);
  }
}

/* Why the generic assumption does not cover an unproven split (NULL: it
 * does). A constant y is no generic value: its proof decided. */
/* exp(u) split so that one factor is exp(y-y) = 1 (check_exp's exact forms,
 * and the division by exp(b-a)) */
static bool exact_shape(const leir__sctx *c, const site *s, const yval *y, bool div) {
  const leir_expr *u = s->x->kids[0], *su = strip(u);
  bool sub = su->kind == LEIR_EXPR_BINARY && su->op == LEIR_OP_SUB;
  /* exp(a-b)/exp(b-b), and exp(a-a)/exp(b-a): the exponents are 0 and
   * those of the original up to a sign, so the second is in range where
   * the original is (not bitwise: 1/exp(b-a) rounds) */
  if (div) return sub && (same_value(c, y, su->kids[1]) || same_value(c, y, su->kids[0]));
  bool more;
  const leir_expr *t1 = leir__split_first_term(u, &more);
  return same_value(c, y, t1) || (sub && strip(su->kids[0]) == t1 && same_value(c, y, su->kids[1]));
}

const char *leir__split_structural(proof *pf, leir__split_kind kind, const site *s,
                                   const yval *y, bool div) {
  generic_memo *g = pf->gm;
  const leir_expr *yv = y->shift ? y->z : y->acc;
  if (tainted_sym(g, G_INF, yv->sym, 0))
    return "y derives from an infinite constant (a -inf mask): inf where masked, so the "
           "generic assumption (y finite) does not hold";
  if (reads_tainted(g, G_INF, s->x, 0))
    return kind == LEIR__SPLIT_EXP
               ? "the exponent reads a value derived from an infinite constant (a -inf mask)"
               : "x derives from an infinite constant (a -inf mask): a masked attention row, "
                 "where the split meets -inf (and NaN on a fully masked row)";
  if (tainted_sym(g, G_BIG, yv->sym, 0))
    return "y derives from an exp: it overflows to inf on inputs of moderate size "
           "(the verifier's x10 scaling), so the generic assumption (y finite) does not hold";
  if (kind == LEIR__SPLIT_EXP && !exact_shape(pf->c, s, y, div) &&
      (tainted_sym(g, G_BIGX, yv->sym, 0) || reads_tainted(g, G_BIGX, s->x->kids[0], 0)))
    return "y or the exponent derives from an exp, a power or a product of values (a matmul, "
           "a convolution): on inputs of moderate size (the verifier's x10 scaling) a factor "
           "exp(t1-y) or exp(y+R) overflows where exp(u) does not, and no factor is "
           "exp(y-y) = 1";
  if (kind != LEIR__SPLIT_EXP && tainted_sym(g, G_NORM, yv->sym, 0))
    return "y derives from a normalization's difference ((F-O)/s, (F-O)**2): exactly 0 where "
           "a group has one element or equal elements, and of another magnitude than the "
           "values it normalizes";
  double lo, hi;
  if (bounds_of(pf->c->p, yv, &lo, &hi, &pf->st) && lo == hi)
    return "y is a constant: its value decides, and the condition does not hold for it";
  if (kind == LEIR__SPLIT_MUL && tainted_sym(g, G_ZERO, yv->sym, 0))
    return "y is exactly 0 on some inputs by its construction (a bool, integer or comparison "
           "value, a constant 0, a loop index, or a product, max or min with one), so x/y*y "
           "is NaN there";
  return NULL;
}

