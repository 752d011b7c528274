/*
 * factorization (23, math): rewrite an arithmetic region of a float
 * equation as a product of factors (leir__alg_factor: rational content,
 * common monomial, linear factors of rational roots). Sites and steps:
 * math_sites.h. A candidate must come out factored (a product, a power of a
 * sum, or over a constant) and differ from the region beyond operand order.
 *
 * A region that adds fractions (a sum one of whose terms divides by a
 * non-constant) is a rational function: its factored form, as sympy's
 * `factor` and `sqf` write it, is one fraction, the factored numerator over
 * the factored denominator (F*((A-C)/s)+G -> (A*F-C*F+G*s)/s: the
 * numerator has no factor, so it stays a sum; 1-G/M -> -(G-M)/M). That
 * multiplies the other terms through by the denominators, so it is offered
 * only where that adds no overflow beyond a polynomial rewrite's
 * (leir__math_safe_denominators, as for cancellation and together):
 * `1/(1+exp(-x))` stays as it is (exp(-x) is an atom: it is never
 * multiplied through by exp(x)), and A/(1+exp(C))+E is never written
 * (A+E+E*exp(C))/(1+exp(C)), inf/inf = NaN for C > 709.
 */
#include "math_sites.h"

static const leir_expr *strip(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool factored(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN || e->kind == LEIR_EXPR_NEG) e = e->kids[0];
  if (e->kind != LEIR_EXPR_BINARY) return false;
  if (e->op == LEIR_OP_MUL) return true;
  if (e->op == LEIR_OP_POW) return e->kids[0]->kind != LEIR_EXPR_NUMBER;
  if (e->op == LEIR_OP_DIV)
    return e->kids[1]->kind == LEIR_EXPR_NUMBER || factored(e->kids[0]) || factored(e->kids[1]);
  return false;
}

/* one fraction whose denominator is not a number */
static bool one_fraction(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN || e->kind == LEIR_EXPR_NEG) e = e->kids[0];
  return e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV &&
         strip(e->kids[1])->kind != LEIR_EXPR_NUMBER;
}

static bool accept(const leir_program *p, const leir_expr *before, const leir_expr *after) {
  (void)p;
  /* leir__math_adds_fractions(before) was checked safe by factor_safe */
  return factored(after) || (leir__math_adds_fractions(before) && one_fraction(after));
}

static leir_expr *factor_safe(leir__alg *a, const leir_expr *e, bool dens_safe) {
  if (!dens_safe && leir__math_adds_fractions(e)) return NULL; /* declined: no change */
  return leir__alg_factor(a, e);
}

static const leir__math_spec spec = {.rewrite_dens = factor_safe, .accept = accept};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__factorization = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
