/*
 * exponential_split (37, math): exp(u) -> exp(t1-y)*exp(y+R) (form=mul,
 * u = t1+R with t1 the first term of u's +/- chain; exp(u-y)*exp(y) when u
 * is one term) or exp(a-b) -> exp(a-y)/exp(b-y) (form=div), with an
 * existing value y (split_sites.h). The reference's divide form negates
 * only the first token of a multi-token b (its bug 10); here b stays one
 * operand.
 *
 * No new inf*0 or overflow: a candidate is either exact (one factor is
 * exp(y-y) = 1 for a y proven finite, the other the original's exp tree)
 * or its exponents are proven in range from the declared input domains.
 * Steps: `exponential_split nest=N loop=k|tensor=Y eq=K expr=P form=mul|div`.
 */
#include "split_sites.h"

static void enumerate(leir__sctx *c) { leir__split_enumerate(c, LEIR__SPLIT_EXP); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__split_apply(c, ps, out, LEIR__SPLIT_EXP);
}

const leir__strategy_impl leir__exponential_split = {
    .keys = LEIR__SPLIT_EXP_KEYS,
    .required = LEIR__SPLIT_EXP_REQUIRED,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
