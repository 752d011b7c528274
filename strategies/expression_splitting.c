/*
 * expression_splitting (3, graph): move one sub-expression of an equation
 * into a new nest, inserted just before, that stores it in a fresh
 * intermediate T; the equation reads T instead. The inverse of
 * compute_inline.
 *
 * Sites: every node of the right side of every equation directly in a
 * top-level nest (`nest=N eq=K expr=P`, P a path from the right side, 1)
 * that is
 *  - an operation (unary minus, binary operator or call), not a leaf (the
 *    whole right side included: the equation then copies T, as one of the
 *    reference's outputs does), not a parenthesis (its content is the site),
 *    not inside a subscript, not a condition, not index arithmetic inside
 *    a condition (the bounds check narrows the branches by it), and not
 *    inside a branch of an if_then_else (branches are lazy: computed for
 *    every iteration the sub-expression could read out of bounds);
 *  - free of tensors the nest writes (computed earlier it would read
 *    values the nest has not produced yet);
 *  - with T's elements (the product of the extents of the loops it uses)
 *    at most 2^24 (LEIR__SPLIT_MAX_ELEMENTS): the reference builds one
 *    dimension per subscript entry and reaches 11 GB on convolutions;
 *    libleir indexes T by the loops the sub-expression uses, in loop order,
 *    and refuses larger ones (rule expression_splitting.size).
 * The new nest has those loops (names, extents and kinds of the nest's
 * loops; each iteration writes its own element), in nest order or, with
 * `perm=p1,...` (every other permutation of up to 5 loops; the reference's
 * order is a hash order), loop p_i of them at position i; a sub-expression
 * without loops gets `B^{1}_{tx=0}` and a scalar T; when no loop of the
 * new nest is named tx or bound to the x thread axis, its first loop (if its
 * extent is at most 1024) becomes B and is renamed tx there, as the
 * reference's fix-up does (each iteration writes its own element, so the
 * bound loop is independent). The new equation is
 * T_{loops} = sub-expression; T takes the name c->next_tensor, scope g and
 * dtype f64 or f32 as the equation computes (f32 for f16/bf16 equations, so
 * nothing is rounded); integer and bool equations are not split. A
 * sub-expression in parentheses is replaced with its parentheses.
 * Exact: the same operations in the same dtype.
 */
#include <stdlib.h>

#include "kit.h"
#include "visit.h"

#define LEIR__SPLIT_MAX_ELEMENTS ((int64_t)1 << 24)
#define LEIR__SPLIT_MAX_PERM 5

static bool float_dtype(uint8_t dt) {
  return dt == LEIR_F64 || dt == LEIR_F32 || dt == LEIR_F16 || dt == LEIR_BF16;
}

/* Is the node at x inside a branch of an if_then_else (lazy) or under a
 * `&`/`|` of conditions? (Operands of a comparison, conditions included,
 * are always evaluated.) Index arithmetic (no tensor read) inside a
 * condition counts too: the bounds check narrows the branches by it
 * (if_then_else(k-1<0,-inf,P_{..,k-1}), the prefix scans), which a read of
 * a tensor holding k-1 would defeat. */
static bool under_condition(const leir__xsite *x) {
  const leir_expr *e = x->eq.eq->rhs;
  for (uint32_t k = 1; k < x->depth; k++) {
    uint32_t i = x->path[k];
    if (e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_IF_THEN_ELSE && i > 0) return true;
    if (e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_IF_THEN_ELSE && !leir__expr_has_tensor(x->e))
      return true;
    if (e->kind == LEIR_EXPR_AND || e->kind == LEIR_EXPR_OR) return true;
    e = e->kids[i];
  }
  return false;
}

typedef struct wscan {
  const leir_nest *n;
  uint32_t hit; /* a tensor the nest writes, read by the sub-expression */
} wscan;

static bool nest_writes(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      if (nest_writes(n->items[k].nest, sym)) return true;
    } else if (n->items[k].eq->lhs->sym == sym) {
      return true;
    }
  }
  return false;
}

static int written_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  wscan *s = v->ud;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR && nest_writes(s->n, e->sym)) {
    s->hit = e->sym;
    return LEIR__VISIT_STOP;
  }
  return LEIR__VISIT_NEXT;
}

static bool site(leir__sctx *c, const leir__xsite *x, void *ud) {
  (void)ud;
  const leir_expr *e = x->e;
  if (x->path[0] != 1 || x->depth < 1 || x->in_subscript) return true;
  if (e->kind != LEIR_EXPR_NEG && e->kind != LEIR_EXPR_BINARY && e->kind != LEIR_EXPR_CALL)
    return true;
  if (under_condition(x)) return true;
  const leir__nref *r = x->eq.r;
  wscan w = {r->nest, LEIR__NOSYM};
  leir__visit v = LEIR__VISIT_INIT(written_node, &w);
  leir__visit_const(&v, e);
  if (w.hit != LEIR__NOSYM) {
    LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_READS_NEST,
                 "the sub-expression reads %s, which the nest writes", leir__name(c, w.hit));
    return true;
  }
  uint64_t used = leir__loops_in(r->nest, e);
  int64_t elems = 1;
  for (uint32_t l = 0; l < r->nest->nloops && l < 64; l++)
    if (used >> l & 1) {
      if (__builtin_mul_overflow(elems, r->nest->loops[l].extent, &elems) ||
          elems > LEIR__SPLIT_MAX_ELEMENTS)
        elems = LEIR__SPLIT_MAX_ELEMENTS + 1;
    }
  if (elems > LEIR__SPLIT_MAX_ELEMENTS) {
    LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_SIZE,
                 "the intermediate would have more than %lld elements (the cap of "
                 "expression_splitting)",
                 (long long)LEIR__SPLIT_MAX_ELEMENTS);
    return true;
  }
  char path[LEIR__MAX_XPATH * 11];
  leir__xpath_format(x, path, sizeof path);
  leir__emit(c, LEIR_EXACT, "nest=%s eq=%u expr=%s", r->label, x->eq.item, path);
  /* every other order of the intermediate's loops (and subscript), up to
   * LEIR__SPLIT_MAX_PERM loops */
  uint32_t k = (uint32_t)__builtin_popcountll(used);
  if (k < 2 || k > LEIR__SPLIT_MAX_PERM) return leir__more(c);
  uint32_t p[LEIR__SPLIT_MAX_PERM];
  for (uint32_t i = 0; i < k; i++) p[i] = i;
  while (leir__more(c) && leir__next_perm(p, k)) {
    char perm[LEIR__SPLIT_MAX_PERM * 4];
    leir__format_list(perm, sizeof perm, p, k);
    leir__emit(c, LEIR_EXACT, "nest=%s perm=%s eq=%u expr=%s", r->label, perm, x->eq.item, path);
  }
  return leir__more(c);
}

static bool each_eq(leir__sctx *c, const leir__eqsite *s, void *ud) {
  if (s->r->depth != 1) return true;
  if (!float_dtype(s->eq->lhs->dtype)) {
    LEIR__REJECT(c, leir__site_eq(c, s), LEIR__R_SPLIT_DTYPE,
                 "the equation computes in an integer or bool dtype");
    return true;
  }
  leir__each_subexpr(c, s, site, ud);
  return leir__more(c);
}

static void enumerate(leir__sctx *c) { leir__each_equation(c, each_eq, NULL); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  leir__eqsite es;
  if (!leir__ps_eq(c, r, ps, &es)) return LEIR_ERR_INTERNAL;
  uint32_t t = r->path[0];
  leir_nest *m = out->nests[t];
  leir_expr **slot = leir__ps_expr_slot(m, es.item, ps);
  if (!slot) return LEIR_ERR_INTERNAL;
  /* the parenthesis around the site goes with it */
  const leir__tok *xt = leir__ps_get(ps, LEIR__K_EXPR, NULL);
  uint32_t path[LEIR__MAX_XPATH], depth = 0;
  for (uint32_t i = 0; i < xt->len && depth < LEIR__MAX_XPATH;) {
    uint32_t v = 0;
    while (i < xt->len && xt->s[i] != '.') v = v * 10 + (uint32_t)(xt->s[i++] - '0');
    path[depth++] = v;
    i++;
  }
  if (depth > 2) {
    leir_expr **up = leir__expr_slot(m, es.item, path, depth - 1);
    if (up && (*up)->kind == LEIR_EXPR_PAREN) slot = up;
  }
  leir_expr *sub = *slot;
  while (sub->kind == LEIR_EXPR_PAREN) sub = sub->kids[0];
  uint64_t used = leir__loops_in(m, sub);
  uint32_t nl = 0, order[64];
  for (uint32_t l = 0; l < m->nloops && l < 64; l++)
    if (used >> l & 1) order[nl++] = l;
  uint32_t nperm = 0;
  const leir__tok *pt = leir__ps_get(ps, LEIR__K_PERM, &nperm);
  if (pt) {
    if (nperm != nl) return LEIR_ERR_INTERNAL;
    uint32_t by[64];
    for (uint32_t i = 0; i < nl; i++) {
      int64_t v;
      if (!leir__tok_int(&pt[i], &v) || v < 0 || v >= (int64_t)nl) return LEIR_ERR_INTERNAL;
      by[i] = order[v];
    }
    memcpy(order, by, nl * sizeof *order);
  }
  uint32_t tsym = leir__tensor_sym(out, c->next_tensor);
  uint8_t dt = es.eq->lhs->dtype == LEIR_F64 ? LEIR_F64 : LEIR_F32;
  leir_expr *lhs = leir__new_expr(out, LEIR_EXPR_TENSOR, LEIR_OP_NONE, nl);
  leir_expr *use = leir__new_expr(out, LEIR_EXPR_TENSOR, LEIR_OP_NONE, nl);
  if (!lhs || !use) return LEIR_ERR_NOMEM;
  lhs->sym = use->sym = tsym;
  lhs->dtype = use->dtype = dt;
  lhs->scope = use->scope = LEIR_SCOPE_GLOBAL;
  leir_nest *prod = leir__new_nest(out, nl ? nl : 1, 1);
  if (!prod) return LEIR_ERR_NOMEM;
  for (uint32_t k = 0; k < nl; k++) {
    prod->loops[k] = m->loops[order[k]];
    lhs->kids[k] = leir__mk_var(out, m->loops[order[k]].sym);
    use->kids[k] = leir__mk_var(out, m->loops[order[k]].sym);
  }
  /* the reference's fix-up: without a tx axis among them, the first loop
   * (extent <= 1024) becomes B and is renamed tx in the new nest */
  bool has_tx = false;
  for (uint32_t k = 0; k < nl; k++) {
    const leir__loop *l = &m->loops[order[k]];
    const char *name = leir__sym_name(out, l->sym);
    if (strcmp(name, "tx") == 0 ||
        (l->kind == LEIR_LOOP_BOUND && leir__axis_of(name) == LEIR__AXIS_TX))
      has_tx = true;
  }
  if (nl && !has_tx && prod->loops[0].extent <= 1024) {
    uint32_t from = prod->loops[0].sym;
    uint32_t tx = leir__fresh_loop_named(out, prod, "tx");
    prod->loops[0].kind = LEIR_LOOP_BOUND;
    prod->items[0].eq = NULL;
    /* rename in the new nest only (its equation is attached below) */
    leir_nest *tmp = leir__new_nest(out, nl, 1);
    if (!tmp) return LEIR_ERR_NOMEM;
    for (uint32_t k = 0; k < nl; k++) tmp->loops[k] = prod->loops[k];
    leir_equation *teq = leir__palloc(out, sizeof *teq);
    if (!teq) return LEIR_ERR_NOMEM;
    teq->lhs = lhs;
    teq->rhs = sub;
    teq->pos = LEIR__NOPOS;
    teq->id = out->next_id++;
    tmp->items[0].eq = teq;
    leir__rename_var(tmp, from, tx);
    prod = tmp;
    sub = teq->rhs;
    lhs = teq->lhs;
  }
  if (!nl) {
    /* a scalar: one bound loop of extent 1 named tx, as the reference */
    leir_nest *none = leir__new_nest(out, 0, 0);
    if (!none) return LEIR_ERR_NOMEM;
    prod->loops[0].kind = LEIR_LOOP_BOUND;
    prod->loops[0].extent = 1;
    prod->loops[0].pos = LEIR__NOPOS;
    prod->loops[0].sym = leir__fresh_loop_named(out, none, "tx");
  }
  if (!prod->items[0].eq) {
    leir_equation *eq = leir__palloc(out, sizeof *eq);
    if (!eq) return LEIR_ERR_NOMEM;
    eq->lhs = lhs;
    eq->rhs = sub;
    eq->pos = LEIR__NOPOS;
    eq->id = out->next_id++;
    prod->items[0].eq = eq;
  }
  *slot = use;
  if (!leir__program_insert_nest(out, t, prod)) return LEIR_ERR_NOMEM;
  return LEIR_OK;
}

const leir__strategy_impl leir__expression_splitting = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_PERM) | LEIR__KEY(LEIR__K_EQ) |
            LEIR__KEY(LEIR__K_EXPR),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_EQ) | LEIR__KEY(LEIR__K_EXPR),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
};
