/*
 * expand_log (31, math): split logarithms of products, quotients and
 * integer powers (leir__alg_expand_log: log(u*v) -> log(u)+log(v),
 * log(u/v) -> log(u)-log(v), log(u**n) -> n*log(u)), each only for operands
 * proven positive (exp, squares plus a positive constant, ...). The split
 * form is finite wherever the original is. Sites (calls may be region
 * roots) and steps: math_sites.h.
 */
#include "math_sites.h"

static const leir__math_spec spec = {.rewrite = leir__alg_expand_log, .calls = true};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__expand_log = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
