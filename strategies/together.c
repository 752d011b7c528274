/*
 * together (28, math): a sum with fractions over one common denominator
 * (leir__alg_together). Multiplying through by a denominator that can
 * overflow turns a finite result into inf/inf = NaN (A/(1+exp(C))+E for
 * large C), so a region qualifies only when its non-constant denominators
 * are polynomials of tensors (no calls). The result must be a single
 * fraction where the region was not. Sites and steps: math_sites.h.
 */
#include "math_sites.h"

static const leir_expr *strip(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool has_call(const leir_expr *e, unsigned depth) {
  if (depth > 200 || e->kind == LEIR_EXPR_CALL) return true;
  if (e->kind == LEIR_EXPR_TENSOR) return false;
  for (uint32_t i = 0; i < e->n; i++)
    if (has_call(e->kids[i], depth + 1)) return true;
  return false;
}

/* every division's denominator is a number or free of calls */
static bool safe_denominators(const leir_expr *e, unsigned depth) {
  if (depth > 200) return false;
  if (e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_CALL) return true; /* own regions */
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV &&
      strip(e->kids[1])->kind != LEIR_EXPR_NUMBER && has_call(e->kids[1], depth + 1))
    return false;
  for (uint32_t i = 0; i < e->n; i++)
    if (!safe_denominators(e->kids[i], depth + 1)) return false;
  return true;
}

static bool is_div(const leir_expr *e) {
  e = strip(e);
  return e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV;
}

static bool accept(const leir_program *p, const leir_expr *before, const leir_expr *after) {
  (void)p;
  return !is_div(before) && is_div(after) && safe_denominators(before, 0);
}

static const leir__math_spec spec = {.rewrite = leir__alg_together, .accept = accept};

static void enumerate(leir__sctx *c) { leir__math_enumerate(c, &spec); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__math_apply(c, ps, out, &spec);
}

const leir__strategy_impl leir__together = {
    .keys = LEIR__MATH_KEYS,
    .required = LEIR__MATH_KEYS,
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_math_facts,
};
