/*
 * multiplicative_split (38, math): x -> x/y*y with an existing value y
 * that is proven sign-definite and bounded from the declared input domains
 * (split_sites.h): |y| in [m, M] with M <= 2^p (an underflow of x/y then
 * costs at most the smallest normal number) and m >= 1 or |x| <= m*huge/2
 * proven (x/y cannot overflow). Without such a proof (inputs drawn from a
 * normal distribution can be arbitrarily close to 0) the site is refused
 * (split.unproven). Class reassociating. Steps:
 * `multiplicative_split nest=N loop=k eq=K expr=P` (y = the read shifted by
 * one on loop k, 1 at k = 0) or `... nest=N tensor=Y eq=K expr=P`.
 */
#include "split_sites.h"

static void enumerate(leir__sctx *c) { leir__split_enumerate(c, LEIR__SPLIT_MUL); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__split_apply(c, ps, out, LEIR__SPLIT_MUL);
}

const leir__strategy_impl leir__multiplicative_split = {
    .keys = LEIR__SPLIT_KEYS,
    .required = LEIR__SPLIT_REQUIRED,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
