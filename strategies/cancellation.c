/*
 * cancellation (25, math), sympy's `cancel`: an arithmetic region of a float
 * equation as one fraction p/q in lowest terms.
 *  - A fraction: common factors of numerator and denominator cancel
 *    (leir__alg_cancel: common monomials, one dividing the other, common
 *    rational roots), each only when the factor is proven non-zero
 *    (exp(x)+1, x**2+1, ...; `A*D/A` is refused: A may be 0). The cancelled
 *    form divides smaller numbers: it overflows no earlier than the original.
 *  - A sum with fractions: brought over one denominator with numerator and
 *    denominator expanded (leir__alg_together), then common factors cancel
 *    as above: F*((A-C)/s)+G -> (A*F-C*F+G*s)/s (the BatchNorm form). Only
 *    when multiplying through adds no overflow beyond a polynomial
 *    rewrite's (leir__math_safe_denominators: no exp(x)+1 denominator,
 *    which would give inf/inf = NaN).
 * Sites and steps: math_sites.h.
 */
#include "math_sites.h"

static bool is_div(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV;
}

static leir_expr *cancel_proven(leir__alg *a, const leir_expr *e, bool dens_safe) {
  leir_expr *r = leir__alg_cancel(a, e, false);
  if (r || leir__alg_error(a) != LEIR__ALG_NOCHANGE || is_div(e) || !dens_safe) return r;
  /* a sum with fractions: one fraction, expanded, in lowest terms */
  leir_expr *t = leir__alg_together(a, e);
  if (!t) return NULL;
  leir_expr *c = leir__alg_cancel(a, t, false);
  return c ? c : leir__alg_error(a) == LEIR__ALG_NOCHANGE ? t : NULL;
}

static const leir__math_spec spec = {.rewrite_dens = cancel_proven};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__cancellation = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
