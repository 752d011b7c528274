/*
 * logsimp (32, math): combine logarithms in a sum, log(a)+log(b) ->
 * log(a*b) and log(a)-log(b) -> log(a/b) (leir__alg_logsimp), in the
 * direction of spec/strategies.md §2 (the reference swaps 31 and 32).
 * A log term joins only when its argument has proven bounds [lo, hi] with
 * lo > 0 (declared input ranges, values, numbers, exp/sqrt/... of bounded
 * forms) and every partial product stays inside the normal range of the
 * dtypes the region computes in: a product of unbounded positives can
 * overflow (1e200*1e200) or underflow to 0 (log(0) = -inf) where the sum
 * of logs is finite. Sites and steps: math_sites.h.
 */
#include "math_sites.h"

static const leir__math_spec spec = {.rewrite = leir__alg_logsimp};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__logsimp = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
