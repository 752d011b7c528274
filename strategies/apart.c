/*
 * apart (27, math): partial fractions of an arithmetic region of a float
 * equation whose denominator is a polynomial in one atom x with distinct
 * rational roots (leir__alg_apart_auto): (A+E*(exp(C)+1))/(exp(C)+1) ->
 * E+A/(exp(C)+1); or a monomial c*x**k (the root 0 of multiplicity k):
 * the polynomial part and one fraction per power of x, each numerator
 * factored, (F*(A-C)+G*s)/s -> G+F*(A-C)/s. Sites and steps:
 * math_sites.h.
 */
#include "math_sites.h"

static const leir__math_spec spec = {.rewrite = leir__alg_apart_auto};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__apart = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
