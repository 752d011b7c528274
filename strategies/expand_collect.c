/*
 * expand_collect (34, math): the inverse of collect. A region that is
 * collected in a tensor X (collecting its expansion in X gives the region
 * back, up to operand order) is replaced by its expansion:
 * A*(C+E)+E -> A*C+A*E+E. Sites and steps (`tensor=X`): math_sites.h.
 */
#include "math_sites.h"

static leir_expr *expand_collected(leir__alg *a, const leir_expr *e, const leir_expr *x) {
  leir_expr *ex = leir__alg_expand(a, e);
  if (!ex) return NULL;
  leir_expr *back = leir__alg_collect(a, ex, x);
  if (!back) return NULL;
  const leir_program *p = leir__alg_program(a);
  if (leir__ac_hash(p, back) != leir__ac_hash(p, e)) return NULL; /* not collected in x */
  return ex;
}

static bool accept(const leir_program *p, const leir_expr *before, const leir_expr *after) {
  (void)p;
  return leir__math_divisions(after) <= leir__math_divisions(before);
}

static const leir__math_spec spec = {.rewrite_x = expand_collected, .accept = accept};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__expand_collect = {
    .keys = LEIR__MATH_KEYS_X,
    .required = LEIR__MATH_KEYS_X,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
