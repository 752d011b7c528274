/*
 * normal_loop_max_to_prefix_max (36, math): a max reduction becomes a
 * running (prefix) maximum whose last element is the result.
 *
 *   L[M_s=max(M_s,X1,...,Xn);];
 * becomes
 *   L[P_{s,k}=max(if_then_else(k-1<0,-inf,P_{s,k-1}),X1,...,Xn);];
 *   L'[M_s=P_{s,N-1};];
 * where k is the reduction loop (extent N), L' the loops without k, P a
 * fresh tensor with M's dtype and scope (the reference's form, 7.14). When
 * X is one tensor read with every loop once as a subscript entry, P takes
 * X's subscript (the prefix axis where X has k, as the reference does);
 * otherwise s with k appended (leir__stream_prefix_layout). P costs N
 * elements per row where M keeps one (the chain of thought says so).
 *
 * P, V and B loops over the rows keep their kind: the read of P at k-1
 * lies in the row the iteration writes, which the dependence model
 * accepts (docs/dependence.md: a read anywhere in the block the iteration
 * owns; a GPU axis by separation on the row entries).
 *
 * Sites: every top-level nest with one equation M_s=max(M_s,...) that
 * starts from the implicit -inf, whose subscript s is distinct loop
 * variables covering every loop but one serial (L or U) reduction loop,
 * with at least one row loop. Parameter: `nest=N` (no choices). Exact:
 * P_{s,k} is the maximum of the same operands in the same order as M after
 * k iterations, and fmax with -inf is the identity (a row that starts with
 * -inf stays -inf until a finite element comes; no NaN can appear, so
 * masked rows need no guard).
 */
#include "streaming.h"

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    leir__stream_max mx;
    leir__rule rule;
    char why[256];
    if (!leir__stream_max_at(c, r->path[0], true, &mx, &rule, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), rule, "%s", why);
      continue;
    }
    if (mx.n->nloops < 2) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_STREAM_ROWS,
                   "%s has no row loop (a scalar maximum)", leir__name(c, mx.m));
      continue;
    }
    leir__emit(c, LEIR_EXACT, "nest=%s", r->label);
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  leir__stream_max mx;
  leir__rule rule;
  char why[256];
  if (!leir__stream_max_at(c, r->path[0], true, &mx, &rule, why, sizeof why))
    return LEIR_ERR_INTERNAL;
  uint32_t t = mx.t;
  const leir_nest *src = out->nests[t];
  const leir_equation *eq = src->items[0].eq;
  const leir_expr *ml = eq->lhs;
  uint32_t psym = leir__tensor_sym(out, c->next_tensor);
  leir__stream_prefix pl;
  leir__stream_prefix_layout(&mx, &pl);

  /* P_{..k..}=max(if_then_else(k-1<0,-inf,P_{..k-1..}),X1,...) */
  leir_expr *prev = leir__stream_prefix_access(
      out, &pl, psym, ml->dtype, ml->scope, ml,
      leir__mk_bin(out, LEIR_OP_SUB, leir__mk_var(out, pl.ksym), leir__mk_int(out, 1)));
  leir_expr *cond = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  cond->kids[0] = leir__mk_bin(out, LEIR_OP_SUB, leir__mk_var(out, pl.ksym), leir__mk_int(out, 1));
  cond->kids[1] = leir__mk_int(out, 0);
  cond->u.cmp_ops[0] = LEIR_OP_LT;
  leir_expr *rhs = leir__new_call(out, LEIR_OP_MAX, eq->rhs->n);
  rhs->kids[0] = leir__stream_ite(out, cond, leir__stream_neg_inf(out), prev);
  for (uint32_t j = 1; j < eq->rhs->n; j++) rhs->kids[j] = eq->rhs->kids[j];
  leir_nest *scan = leir__stream_nest_without(out, src, -1, 1);
  leir__stream_set_eq(out, scan, 0,
                      leir__stream_prefix_access(out, &pl, psym, ml->dtype, ml->scope, ml,
                                                 leir__mk_var(out, pl.ksym)),
                      rhs);
  for (uint32_t k = 0; k < src->nloops; k++) scan->loops[k].pos = src->loops[k].pos;

  /* M_s=P_{s,N-1} */
  leir_nest *back = leir__stream_nest_without(out, src, (int)mx.k, 1);
  leir__stream_set_eq(out, back, 0, leir__copy_expr(out, out, ml),
                      leir__stream_prefix_access(out, &pl, psym, ml->dtype, ml->scope, ml,
                                                 leir__mk_int(out, pl.last)));
  out->nests[t] = scan;
  if (!leir__program_insert_nest(out, t + 1, back)) return LEIR_ERR_NOMEM;
  return LEIR_OK;
}

const leir__strategy_impl leir__normal_loop_max_to_prefix_max = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__stream_prefix_cot,
};
