/*
 * expand_factorization (24, math): multiply out an arithmetic region of a
 * float equation (leir__alg_expand: products of sums and integer powers
 * distributed, like terms collected). Sites and steps: math_sites.h. A
 * candidate must have something to distribute (a product or integer power
 * with a sum operand, or a sum divided by a number) and must not add
 * divisions by non-constants. The expansion brings a region that adds
 * fractions over one denominator (C*(1+K/M) -> (C*K+C*M)/M), so such a
 * region qualifies only with safe denominators
 * (leir__math_safe_denominators): with M = exp(G)+exp(-G), C*M overflows
 * for G near 709 where C*(1+K/M) is 2*C.
 */
#include "math_sites.h"

static const leir_expr *strip_parens(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool is_sum(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB);
}

/* a product or integer power with a sum operand, outside calls */
static bool distributable(const leir_expr *e, unsigned depth) {
  if (depth > 200 || e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_CALL) return false;
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_MUL &&
      (is_sum(e->kids[0]) || is_sum(e->kids[1])))
    return true;
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_POW && is_sum(e->kids[0])) return true;
  /* a sum over a constant: (A+D)/2 is (1/2)*(A+D) */
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV && is_sum(e->kids[0]) &&
      strip_parens(e->kids[1])->kind == LEIR_EXPR_NUMBER)
    return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (distributable(e->kids[i], depth + 1)) return true;
  return false;
}

static bool accept(const leir_program *p, const leir_expr *before, const leir_expr *after) {
  (void)p;
  return distributable(before, 0) && leir__math_divisions(after) <= leir__math_divisions(before);
}

static leir_expr *expand_safe(leir__alg *a, const leir_expr *e, bool dens_safe) {
  if (!dens_safe && leir__math_adds_fractions(e)) return NULL; /* declined: no change */
  return leir__alg_expand(a, e);
}

static const leir__math_spec spec = {.rewrite_dens = expand_safe, .accept = accept};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__expand_factorization = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
