/*
 * factorization (23, math): rewrite an arithmetic region of a float
 * equation as a product of factors (leir__alg_factor: rational content,
 * common monomial, linear factors of rational roots). Sites and steps:
 * math_sites.h. A candidate must come out factored (a product, a power of a
 * sum, or over a constant) and differ from the region beyond operand order;
 * `1/(1+exp(-x))` stays as it is (exp(-x) is an atom: it is never
 * multiplied through by exp(x)).
 */
#include "math_sites.h"

static bool factored(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN || e->kind == LEIR_EXPR_NEG) e = e->kids[0];
  if (e->kind != LEIR_EXPR_BINARY) return false;
  if (e->op == LEIR_OP_MUL) return true;
  if (e->op == LEIR_OP_POW) return e->kids[0]->kind != LEIR_EXPR_NUMBER;
  if (e->op == LEIR_OP_DIV)
    return e->kids[1]->kind == LEIR_EXPR_NUMBER || factored(e->kids[0]) || factored(e->kids[1]);
  return false;
}

static bool accept(const leir_program *p, const leir_expr *before, const leir_expr *after) {
  (void)p;
  (void)before;
  return factored(after);
}

static const leir__math_spec spec = {.rewrite = leir__alg_factor, .accept = accept};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__factorization = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
