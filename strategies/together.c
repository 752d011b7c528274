/*
 * together (28, math), sympy's `together`: a sum with fractions over one
 * common denominator, the terms' numerators kept as written
 * (leir__alg_together_terms: F*((A-C)/s)+G -> (F*(A-C)+G*s)/s; nothing is
 * expanded or cancelled: that is cancellation). Multiplying through by a
 * denominator that can overflow turns a finite result into inf/inf = NaN
 * (A/(1+exp(C))+E for large C), so a region qualifies only when its
 * non-constant denominators are polynomials of tensors and sqrt, abs, max,
 * min (leir__math_safe_denominators). The result must be a single fraction
 * where the region was not. Sites and steps: math_sites.h.
 */
#include "math_sites.h"

static const leir_expr *strip(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool is_div(const leir_expr *e) {
  e = strip(e);
  return e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV;
}

static bool accept(const leir_program *p, const leir_expr *before, const leir_expr *after) {
  (void)p;
  return !is_div(before) && is_div(after);
}

static leir_expr *together_safe(leir__alg *a, const leir_expr *e, bool dens_safe) {
  return dens_safe ? leir__alg_together_terms(a, e) : NULL; /* declined: no change */
}

static const leir__math_spec spec = {.rewrite_dens = together_safe, .accept = accept};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__together = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
