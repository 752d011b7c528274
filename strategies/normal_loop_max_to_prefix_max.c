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
 * otherwise s with k appended. When the nest has a P, V or B loop the
 * scan reads P at k-1, which the CPU's independence rule (rule 1b of
 * docs/dependence.md: a read must use the text of a write) cannot prove
 * disjoint from another row's elements; there the running maximum goes
 * through a fresh Q_s read where it is written:
 *   L[Q_s=max(Q_s,X1,...,Xn);P_{s,k}=Q_s;];L'[M_s=P_{s,N-1};]
 * (same values: P_{s,k} is the maximum after k iterations either way).
 *
 * Sites: every top-level nest with one equation M_s=max(M_s,...) that
 * starts from the implicit -inf, whose subscript s is distinct loop
 * variables covering every loop but one serial (L or U) reduction loop,
 * with at least one row loop. Parameter: `nest=N` (no choices). Exact:
 * P_{s,k} is the maximum of the same operands in the same order as M after
 * k iterations, and fmax with -inf is the identity (a row that starts with
 * -inf stays -inf until a finite element comes; no NaN can appear).
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
  uint32_t psym = leir__tensor_sym(out, c->next_tensor);
  uint32_t ksym = src->loops[mx.k].sym;
  int64_t n = src->loops[mx.k].extent;

  /* P's subscript: X's when X is one tensor read over every loop once (the
   * reference's form: the prefix axis where X has it), else s then k */
  const leir_expr *xs = eq->rhs->n == 2 ? eq->rhs->kids[1] : NULL;
  while (xs && xs->kind == LEIR_EXPR_PAREN) xs = xs->kids[0];
  bool like_x = xs && xs->kind == LEIR_EXPR_TENSOR && xs->n == src->nloops && src->nloops <= 64;
  uint64_t seen = 0;
  uint32_t kpos = eq->lhs->n;
  for (uint32_t j = 0; like_x && j < xs->n; j++) {
    const leir_expr *e = xs->kids[j];
    int at = -1;
    for (uint32_t k = 0; e->kind == LEIR_EXPR_VAR && k < src->nloops; k++)
      if (src->loops[k].sym == e->sym) at = (int)k;
    like_x = at >= 0 && !(seen >> at & 1);
    if (like_x) seen |= 1ull << at;
    if (like_x && (uint32_t)at == mx.k) kpos = j;
  }
  leir_expr *lhs = leir__new_tensor(out, psym, (leir_dtype)eq->lhs->dtype,
                                    (leir_scope)eq->lhs->scope, eq->lhs->n + 1);
  if (like_x) {
    for (uint32_t j = 0; j < xs->n; j++) lhs->kids[j] = leir__copy_expr(out, out, xs->kids[j]);
  } else {
    kpos = eq->lhs->n;
    for (uint32_t j = 0; j < eq->lhs->n; j++)
      lhs->kids[j] = leir__copy_expr(out, out, eq->lhs->kids[j]);
    lhs->kids[kpos] = leir__mk_var(out, ksym);
  }
  bool annotated = false;
  for (uint32_t k = 0; k < src->nloops; k++)
    annotated = annotated || src->loops[k].kind == LEIR_LOOP_PARALLEL ||
                src->loops[k].kind == LEIR_LOOP_VECTORIZED || src->loops[k].kind == LEIR_LOOP_BOUND;
  leir_nest *scan;
  if (!annotated) {
    /* the reference's scan: P_{..k..}=max(if_then_else(k-1<0,-inf,P_{..k-1..}),X) */
    leir_expr *prev = leir__copy_expr(out, out, lhs);
    prev->kids[kpos] =
        leir__mk_bin(out, LEIR_OP_SUB, leir__mk_var(out, ksym), leir__mk_int(out, 1));
    leir_expr *cond = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
    cond->kids[0] = leir__mk_bin(out, LEIR_OP_SUB, leir__mk_var(out, ksym), leir__mk_int(out, 1));
    cond->kids[1] = leir__mk_int(out, 0);
    cond->u.cmp_ops[0] = LEIR_OP_LT;
    leir_expr *rhs = leir__new_call(out, LEIR_OP_MAX, eq->rhs->n);
    rhs->kids[0] = leir__stream_ite(out, cond, leir__stream_neg_inf(out), prev);
    for (uint32_t j = 1; j < eq->rhs->n; j++) rhs->kids[j] = eq->rhs->kids[j];
    scan = leir__stream_nest_without(out, src, -1, 1);
    leir__stream_set_eq(out, scan, 0, lhs, rhs);
  } else {
    /* a P, V or B loop: P_{..k..} read at k-1 is another iteration's element
     * for the CPU's independence rule (docs/dependence.md, rule 1b), so the
     * running maximum goes through Q_s, read where it is written:
     * Q_s=max(Q_s,X);P_{..k..}=Q_s; */
    uint32_t qsym = leir__tensor_sym(out, c->next_tensor + 1);
    leir_expr *q = leir__stream_tensor(out, eq->lhs, qsym);
    leir_expr *rhs = leir__new_call(out, LEIR_OP_MAX, eq->rhs->n);
    rhs->kids[0] = leir__stream_tensor(out, eq->lhs, qsym);
    for (uint32_t j = 1; j < eq->rhs->n; j++) rhs->kids[j] = eq->rhs->kids[j];
    scan = leir__stream_nest_without(out, src, -1, 2);
    leir__stream_set_eq(out, scan, 0, q, rhs);
    leir__stream_set_eq(out, scan, 1, lhs, leir__stream_tensor(out, eq->lhs, qsym));
  }
  for (uint32_t k = 0; k < src->nloops; k++) scan->loops[k].pos = src->loops[k].pos;

  /* M_s=P_{s,N-1} */
  leir_nest *back = leir__stream_nest_without(out, src, (int)mx.k, 1);
  leir_expr *last = leir__copy_expr(out, out, lhs);
  last->kids[kpos] = leir__mk_int(out, n - 1);
  leir__stream_set_eq(out, back, 0, leir__copy_expr(out, out, eq->lhs), last);

  out->nests[t] = scan;
  if (!leir__program_insert_nest(out, t + 1, back)) return LEIR_ERR_NOMEM;
  return LEIR_OK;
}

const leir__strategy_impl leir__normal_loop_max_to_prefix_max = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
};
