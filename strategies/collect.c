/*
 * collect (33, math): gather the terms of an arithmetic region of a float
 * equation by powers of one tensor X (leir__alg_collect: A*C+A*E+E ->
 * A*(C+E)+E), one candidate per tensor read in the region. Sites and steps
 * (`tensor=X`): math_sites.h. A candidate differs from the region beyond
 * operand order and adds no division by a non-constant.
 */
#include "math_sites.h"

static bool accept(const leir_program *p, const leir_expr *before, const leir_expr *after) {
  (void)p;
  return leir__math_divisions(after) <= leir__math_divisions(before);
}

static const leir__math_spec spec = {.rewrite_x = leir__alg_collect, .accept = accept};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__collect = {
    .keys = LEIR__MATH_KEYS_X,
    .required = LEIR__MATH_KEYS_X,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
