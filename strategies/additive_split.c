/*
 * additive_split (39, math): x -> x-y+y with an existing value y, proven
 * finite (split_sites.h: the shifted read or an earlier output over the
 * same loops). Over the reals an identity; in floating point x-y+y rounds
 * (class reassociating), and with y finite it is never inf or NaN where x
 * is finite. Steps: `additive_split nest=N loop=k eq=K expr=P` or
 * `additive_split nest=N tensor=Y eq=K expr=P`.
 */
#include "split_sites.h"

static void enumerate(leir__sctx *c) { leir__split_enumerate(c, LEIR__SPLIT_ADD); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__split_apply(c, ps, out, LEIR__SPLIT_ADD);
}

const leir__strategy_impl leir__additive_split = {
    .keys = LEIR__SPLIT_KEYS,
    .required = LEIR__SPLIT_REQUIRED,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
