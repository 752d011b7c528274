/*
 * expand_cancellation (26, math), the inverse of cancellation: a fraction
 * n/d whose numerator contains multiples q*d of its denominator as a
 * sub-sum of its terms is split into q + r/d (leir__alg_expand_cancel), so
 * the part that cancels against the denominator comes out of the division:
 * (A*F-C*F+G*s)/s -> G+(A*F-C*F)/s, (K*e+e2+1)/(e2+1) -> 1+K*e/(e2+1).
 * The region must be a single division. The rewrite holds wherever the
 * fraction is defined (d != 0 there), multiplies nothing in (no
 * exp(x)/(exp(x)+1) from a sigmoid) and removes the inf/inf = NaN of a
 * numerator and denominator that overflow together. Sites and steps:
 * math_sites.h.
 */
#include "math_sites.h"

static const leir__math_spec spec = {.rewrite = leir__alg_expand_cancel};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__expand_cancellation = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
