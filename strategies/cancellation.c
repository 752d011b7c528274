/*
 * cancellation (25, math): cancel common factors of the numerator and the
 * denominator of an arithmetic region of a float equation
 * (leir__alg_cancel: common monomials, one dividing the other, common
 * rational roots), each only when the factor is proven non-zero (exp(x)+1,
 * x**2+1, ...; `A*D/A` is refused: A may be 0). The cancelled form divides
 * smaller numbers: it overflows no earlier than the original. Sites and
 * steps: math_sites.h.
 */
#include "math_sites.h"

static leir_expr *cancel_proven(leir__alg *a, const leir_expr *e) {
  return leir__alg_cancel(a, e, false);
}

static const leir__math_spec spec = {.rewrite = cancel_proven};

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
