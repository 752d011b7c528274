/*
 * expand_powsimp (30, math): split an exponential of a sum into a product
 * (leir__alg_expand_powsimp: exp(u+v) -> exp(u)*exp(v)), only where both
 * parts are proven >= 0 or both <= 0, so that no factor overflows where
 * exp(u+v) does not (exp(A-D) is refused: A = D = 800); and an integer
 * power x**k, 2 <= k <= 8, into the product x*x*...*x (the inverse of
 * powsimp's x*x -> x**2; multiplied left to right, the partial products
 * overflow only where x**k does). Sites (calls may be region roots) and
 * steps: math_sites.h.
 */
#include "math_sites.h"

static const leir__math_spec spec = {.rewrite = leir__alg_expand_powsimp, .calls = true};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__expand_powsimp = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
