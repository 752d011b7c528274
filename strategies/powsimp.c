/*
 * powsimp (29, math): combine exponentials and square roots in the products
 * of an arithmetic region of a float equation (leir__alg_powsimp:
 * exp(u)*exp(v) -> exp(u+v), exp(u)/exp(v) -> exp(u-v), sqrt(u)*sqrt(v) ->
 * sqrt(u*v) for u, v >= 0 proven; equal bases into one integer power,
 * x*(x*y) -> x**2*y, as sympy's powsimp combines x**a*x**b). The combined
 * exponential overflows only where the product does; x**2*y regroups a
 * product (a polynomial reassociation: near the dtype's largest value
 * either grouping can overflow where the other does not, as for every
 * polynomial rewrite, docs/algebra.md). Sites and steps: math_sites.h.
 */
#include "math_sites.h"

static const leir__math_spec spec = {.rewrite = leir__alg_powsimp};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__powsimp = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
