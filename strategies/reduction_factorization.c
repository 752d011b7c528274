/*
 * reduction_factorization (17, operator): split the reduction axis K
 * (extent V) of an accumulation X_s = X_s op f into two partial
 * reductions over [0, v) and [v, V), then combine them:
 *   P1_{s,R} = P1_{s,R} op f            (K in [0, v))
 *   P2_{s,R} = P2_{s,R} op f[K -> K+v]  (K in [0, V-v))
 *   X_s = X_s op' (P1 op' P2)           (loops without K)
 * R are the nest's other reduction loops of extent > 1 (the reference uses them only for
 * scalar outputs, which gives wrong sums when X_s has several reduction
 * loops; including them always is correct). op' is + for additive chains
 * (+ and -), * for products, max/min for max/min. A B^{1}_{tx=0} loop is
 * added to the combining nest when it would have no bound loop.
 *
 * Sites: top-level nests with one equation (no nested nests) of the form
 * X_s = X_s + ... / X_s - ... / X_s * ... / max(X_s, ...) / min(X_s, ...)
 * that reads X nowhere else, whose subscript s pins its loops (deps.c),
 * and every loop K not used in s with extent >= 2. Parameters:
 * `loop=K at=v` for every v in 1..V-1. Exactness: reassociating for + - *,
 * exact for max and min.
 *
 * The lanes form (LEIR_CANDIDATES_REDUCTION_LANES, outside the reference's
 * domain; TVM's rfactor), `loop=K lanes=L` with L the vector width
 * (leir_candidates_options.vector_width) dividing V, V > L:
 *   P_{s,l} = P_{s,l} op f[K -> K*L+l]   (K of extent V/L, then V^{L}_{l} innermost)
 *   X_s = X_s op P_{s,l}                 (X's loops, then L^{L}_{l})
 * one partial result per lane of a vector, so that the reduction
 * vectorizes in one step (a softmax's row maximum and sum). The other
 * reduction loops stay reductions into P; op for - is +, as above.
 */
#include "kit.h"
#include "rewrite.h"
#include "visit.h"

typedef enum { OP_NONE = 0, OP_ADD, OP_MUL, OP_MAX, OP_MIN } accop;

/* The accumulation form of the equation, X being the LHS tensor. */
static accop form_of(const leir_program *p, const leir_equation *eq) {
  const leir_expr *rhs = eq->rhs, *x = eq->lhs;
  const leir_expr *leaf = NULL;
  accop op = OP_NONE;
  if (rhs->kind == LEIR_EXPR_CALL && (rhs->op == LEIR_OP_MAX || rhs->op == LEIR_OP_MIN) &&
      rhs->n >= 2) {
    leaf = rhs->kids[0];
    op = rhs->op == LEIR_OP_MAX ? OP_MAX : OP_MIN;
  } else if (rhs->kind == LEIR_EXPR_BINARY) {
    const leir_expr *e = rhs;
    while (e->kind == LEIR_EXPR_BINARY) {
      accop f = (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB) ? OP_ADD
                : e->op == LEIR_OP_MUL                         ? OP_MUL
                                                               : OP_NONE;
      if (f == OP_NONE || (op != OP_NONE && f != op)) return OP_NONE;
      op = f;
      e = e->kids[0];
    }
    leaf = e;
  }
  if (!leaf || leaf->kind != LEIR_EXPR_TENSOR || leaf->sym != x->sym || leaf->n != x->n)
    return OP_NONE;
  for (uint32_t k = 0; k < x->n; k++)
    if (!leir__expr_equal(p, leaf->kids[k], p, x->kids[k])) return OP_NONE;
  return op;
}

/* The leftmost leaf of the accumulation (the read of X). */
static leir_expr **leaf_slot(leir_equation *eq) {
  leir_expr **slot = &eq->rhs;
  if ((*slot)->kind == LEIR_EXPR_CALL) return &(*slot)->kids[0];
  while ((*slot)->kind == LEIR_EXPR_BINARY) slot = &(*slot)->kids[0];
  return slot;
}

typedef struct site {
  const leir_equation *eq;
  accop op;
  uint64_t lhs_loops;
} site;

static bool find_site(leir__sctx *c, uint32_t i, site *s) {
  const leir__nref *r = &c->nests[i];
  if (r->depth != 1 || r->has_nested || r->neqs != 1) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_REDUCTION_FACTORIZATION_NEST,
                 r->depth != 1 ? "only top-level nests are factorized"
                               : "the nest must hold exactly one equation and no nested nest");
    return false;
  }
  const leir_equation *eq = r->nest->items[0].eq;
  s->eq = eq;
  s->op = form_of(c->p, eq);
  if (s->op == OP_NONE) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_REDUCTION_FACTORIZATION_FORM,
                 "the equation is not an accumulation X=X+..., X=X-..., X=X*..., "
                 "X=max(X,...) or X=min(X,...)");
    return false;
  }
  const leir_expr *leaf = *leaf_slot((leir_equation *)eq);
  if (leir__expr_reads_tensor(eq->rhs, eq->lhs->sym, leaf)) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_REDUCTION_FACTORIZATION_FORM,
                 "%s is read again inside its own accumulation", leir__name(c, eq->lhs->sym));
    return false;
  }
  if (r->nest->nloops > 64 || eq->lhs->n + r->nest->nloops > LEIR_MAX_RANK + 1) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_REDUCTION_FACTORIZATION_SIZE, "too many loops");
    return false;
  }
  s->lhs_loops = 0;
  for (uint32_t k = 0; k < eq->lhs->n; k++) {
    if (leir__expr_has_tensor(eq->lhs->kids[k])) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_REDUCTION_FACTORIZATION_SUBSCRIPT,
                   "the accumulator has an indirect (tensor) index");
      return false;
    }
    s->lhs_loops |= leir__loops_in(r->nest, eq->lhs->kids[k]);
  }
  const leir__deps *d = leir__nest_deps(c, i);
  if (!d || !d->ok || d->nw != 1 || (d->w[0].pinned & s->lhs_loops) != s->lhs_loops) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_REDUCTION_FACTORIZATION_SUBSCRIPT,
                 "the accumulator's subscript does not identify one element per value of its "
                 "loops");
    return false;
  }
  return true;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    site s;
    if (!find_site(c, i, &s)) continue;
    leir_exactness cls = s.op == OP_ADD || s.op == OP_MUL ? LEIR_REASSOCIATING : LEIR_EXACT;
    uint32_t extra = 0;
    for (uint32_t k = 0; k < r->nest->nloops; k++)
      if (!(s.lhs_loops >> k & 1) && r->nest->loops[k].extent > 1) extra++;
    for (uint32_t k = 0; k < r->nest->nloops && leir__more(c); k++) {
      const leir__loop *l = &r->nest->loops[k];
      if (s.lhs_loops >> k & 1) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_REDUCTION_FACTORIZATION_AXIS,
                     "the loop indexes the accumulator; it is not a reduction axis");
        continue;
      }
      if (l->extent < 2) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_REDUCTION_FACTORIZATION_AXIS,
                     "extent %lld cannot be split in two non-empty parts", (long long)l->extent);
        continue;
      }
      if (s.eq->lhs->n + extra - 1 > LEIR_MAX_RANK) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_REDUCTION_FACTORIZATION_SIZE,
                     "the partial results would have rank above %d", LEIR_MAX_RANK);
        continue;
      }
      for (int64_t v = 1; v < l->extent && leir__more(c); v++)
        leir__emit(c, cls, "nest=%s loop=%s at=%lld", r->label, leir__loop_name(c, r, k),
                   (long long)v);
      if (!(c->o.flags & LEIR_CANDIDATES_REDUCTION_LANES) || !leir__more(c)) continue;
      int64_t lanes = c->o.vector_width;
      if (lanes < 2 || l->extent <= lanes || l->extent % lanes) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_REDUCTION_FACTORIZATION_AXIS,
                     "lanes: extent %lld is not a multiple of the vector width %lld above it",
                     (long long)l->extent, (long long)lanes);
        continue;
      }
      if (s.eq->lhs->n + 1 > LEIR_MAX_RANK) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_REDUCTION_FACTORIZATION_SIZE,
                     "lanes: the partial results would have rank above %d", LEIR_MAX_RANK);
        continue;
      }
      leir__emit(c, cls, "nest=%s loop=%s lanes=%lld", r->label, leir__loop_name(c, r, k),
                 (long long)lanes);
    }
  }
}

/* K -> K+v inside one subscript entry: appended at the end when K is a
 * plain + term of the entry (c*3+g -> c*3+g+2, the reference's form), else
 * substituted with parentheses. */
static bool plain_term(const leir_expr *e, uint32_t k) {
  if (e->kind == LEIR_EXPR_VAR) return e->sym == k;
  if (e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB)) {
    if (e->op == LEIR_OP_ADD && e->kids[1]->kind == LEIR_EXPR_VAR && e->kids[1]->sym == k)
      return !leir__expr_uses_var(e->kids[0], k);
    return plain_term(e->kids[0], k) && !leir__expr_uses_var(e->kids[1], k);
  }
  return false;
}

typedef struct shift {
  leir_program *p;
  uint32_t k;
  int64_t v;
} shift;

/* K -> K+v: appended to a subscript entry where K is a plain term of it,
 * else K becomes (K+v) next to an operator. */
static int shift_node(leir__visit *vis, leir_expr **slot, leir_expr *parent) {
  const shift *s = vis->ud;
  leir_expr *e = *slot;
  if (parent && parent->kind == LEIR_EXPR_TENSOR && plain_term(e, s->k)) {
    *slot = leir__mk_bin(s->p, LEIR_OP_ADD, e, leir__mk_int(s->p, s->v));
    return LEIR__VISIT_SKIP;
  }
  if (e->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  if (e->sym != s->k) return LEIR__VISIT_SKIP;
  leir_expr *r = leir__mk_bin(s->p, LEIR_OP_ADD, leir__mk_var(s->p, s->k), leir__mk_int(s->p, s->v));
  bool op_parent = parent && (parent->kind == LEIR_EXPR_BINARY || parent->kind == LEIR_EXPR_NEG ||
                              parent->kind == LEIR_EXPR_COMPARE || parent->kind == LEIR_EXPR_AND ||
                              parent->kind == LEIR_EXPR_OR);
  *slot = op_parent ? leir__new_unary(s->p, LEIR_EXPR_PAREN, r) : r;
  return LEIR__VISIT_SKIP;
}

/* Other reduction loops index the partial results (a loop of extent 1
 * runs once and needs no index). */
static bool is_extra(const leir_nest *n, uint64_t lhs_loops, uint32_t axis, uint32_t k) {
  return k != axis && !(lhs_loops >> k & 1) && n->loops[k].extent > 1;
}

/* lhs and n belong to program src (the input); the copy is built in p. */
static leir_expr *partial_ref(leir_program *p, const leir_program *src, const leir_expr *lhs,
                              uint32_t sym, const leir_nest *n, uint64_t lhs_loops, uint32_t axis) {
  uint32_t rank = lhs->n;
  for (uint32_t k = 0; k < n->nloops; k++)
    if (is_extra(n, lhs_loops, axis, k)) rank++;
  leir_expr *t = leir__new_tensor(p, sym, (leir_dtype)lhs->dtype, (leir_scope)lhs->scope, rank);
  uint32_t w = 0;
  for (uint32_t k = 0; k < lhs->n; k++) t->kids[w++] = leir__copy_expr(p, src, lhs->kids[k]);
  for (uint32_t k = 0; k < n->nloops; k++)
    if (is_extra(n, lhs_loops, axis, k)) t->kids[w++] = leir__mk_var(p, n->loops[k].sym);
  return t;
}

/* The combining operation of op on a and b. */
static leir_expr *combine(leir_program *out, accop op, leir_expr *a, leir_expr *b) {
  if (op == OP_MAX || op == OP_MIN) {
    leir_expr *e = leir__new_call(out, op == OP_MAX ? LEIR_OP_MAX : LEIR_OP_MIN, 2);
    e->kids[0] = a;
    e->kids[1] = b;
    return e;
  }
  return leir__mk_bin(out, op == OP_ADD ? LEIR_OP_ADD : LEIR_OP_MUL, a, b);
}

/* X's subscript with the lane variable appended: P_{s,l}. */
static leir_expr *lane_ref(leir_program *out, const leir_program *src, const leir_expr *lhs,
                           uint32_t sym, uint32_t lane) {
  leir_expr *t = leir__new_tensor(out, sym, (leir_dtype)lhs->dtype, (leir_scope)lhs->scope,
                                  lhs->n + 1);
  for (uint32_t k = 0; k < lhs->n; k++) t->kids[k] = leir__copy_expr(out, src, lhs->kids[k]);
  t->kids[lhs->n] = leir__mk_var(out, lane);
  return t;
}

/* The lanes form: partial results per vector lane, then their combination. */
static leir_status apply_lanes(leir__sctx *c, const site *s, const leir__nref *r, uint32_t axis,
                               int64_t lanes, leir_program *out) {
  uint32_t top = r->path[0];
  const leir_nest *src = c->p->nests[top];
  const leir_expr *lhs = s->eq->lhs;
  const leir__loop x = src->loops[axis];
  if (lanes < 2 || x.extent <= lanes || x.extent % lanes) return LEIR_ERR_INTERNAL;
  uint32_t psym = leir__tensor_sym(out, c->next_tensor);
  uint32_t lane = leir__fresh_loop(out, src, (uint64_t)src->nloops + 1, NULL, 0);
  /* partial nest: K -> K*L+l, l innermost as V */
  leir_nest *m = leir__copy_nest(out, c->p, src);
  if (!m) longjmp(*out->oom_jmp, LEIR__JMP_OOM);
  leir__loop *loops = leir__palloc(out, (m->nloops + 1) * sizeof *loops);
  for (uint32_t j = 0; j < m->nloops; j++) loops[j] = m->loops[j];
  loops[axis].kind = LEIR_LOOP_SERIAL;
  loops[axis].extent = x.extent / lanes;
  loops[m->nloops] = (leir__loop){LEIR_LOOP_VECTORIZED, lane, lanes, LEIR__NOPOS};
  m->loops = loops;
  m->nloops++;
  leir_expr *e = leir__mk_bin(out, LEIR_OP_ADD,
                              leir__mk_bin(out, LEIR_OP_MUL, leir__mk_var(out, x.sym),
                                           leir__mk_int(out, lanes)),
                              leir__mk_var(out, lane));
  leir__subst_var(out, m, x.sym, e);
  leir_equation *eq = m->items[0].eq;
  *leaf_slot(eq) = lane_ref(out, c->p, lhs, psym, lane);
  eq->lhs = lane_ref(out, c->p, lhs, psym, lane);
  /* combining nest: X's loops, then the lanes */
  uint32_t nl = 0;
  for (uint32_t k = 0; k < src->nloops; k++) nl += (uint32_t)(s->lhs_loops >> k & 1);
  leir_nest *comb = leir__new_nest(out, nl + 1, 1);
  uint32_t w = 0;
  for (uint32_t k = 0; k < src->nloops; k++)
    if (s->lhs_loops >> k & 1) comb->loops[w++] = src->loops[k];
  comb->loops[w] = (leir__loop){LEIR_LOOP_SERIAL, lane, lanes, LEIR__NOPOS};
  leir_expr *rhs = combine(out, s->op, leir__copy_expr(out, c->p, lhs),
                           lane_ref(out, c->p, lhs, psym, lane));
  comb->items[0].eq = leir__new_equation(out, leir__copy_expr(out, c->p, lhs), rhs);
  leir__program_remove_nest(out, top);
  leir__program_insert_nest(out, top, m);
  leir__program_insert_nest(out, top + 1, comb);
  return LEIR_OK;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  int axis = r ? leir__ps_loop(c, r, leir__ps_get(ps, LEIR__K_LOOP, NULL)) : -1;
  int64_t v;
  if (axis < 0) return LEIR_ERR_INTERNAL;
  bool by_lanes = leir__ps_get(ps, LEIR__K_LANES, NULL) != NULL;
  if (!leir__tok_int(leir__ps_get(ps, by_lanes ? LEIR__K_LANES : LEIR__K_AT, NULL), &v))
    return LEIR_ERR_INTERNAL;
  site s;
  leir__mode mode = c->mode;
  c->mode = LEIR__MODE_LIST; /* no explanations from find_site */
  bool ok = find_site(c, (uint32_t)(r - c->nests), &s);
  c->mode = mode;
  if (!ok) return LEIR_ERR_INTERNAL;
  if (by_lanes) return apply_lanes(c, &s, r, (uint32_t)axis, v, out);
  uint32_t top = r->path[0];
  const leir_nest *src = c->p->nests[top];
  const leir_expr *lhs = s.eq->lhs;
  uint32_t p1 = leir__tensor_sym(out, c->next_tensor);
  uint32_t p2 = leir__tensor_sym(out, c->next_tensor + 1);
  int64_t total = src->loops[axis].extent;
  leir_nest *parts[2];
  for (int half = 0; half < 2; half++) {
    leir_nest *m = leir__copy_nest(out, c->p, src);
    if (!m) longjmp(*out->oom_jmp, LEIR__JMP_OOM);
    m->loops[axis].extent = half == 0 ? v : total - v;
    leir_equation *eq = m->items[0].eq;
    uint32_t sym = half == 0 ? p1 : p2;
    leir_expr **leaf = leaf_slot(eq);
    *leaf = partial_ref(out, c->p, lhs, sym, src, s.lhs_loops, (uint32_t)axis);
    eq->lhs = partial_ref(out, c->p, lhs, sym, src, s.lhs_loops, (uint32_t)axis);
    if (half == 1) {
      uint32_t k = src->loops[axis].sym;
      shift sh = {out, k, v};
      leir__visit vis = LEIR__VISIT_INIT(shift_node, &sh);
      leir__visit_expr(&vis, &eq->lhs);
      leir__visit_expr(&vis, &eq->rhs);
    }
    parts[half] = m;
  }
  /* combining nest */
  bool bound = false;
  uint32_t nl = 0;
  for (uint32_t k = 0; k < src->nloops; k++)
    if (k != (uint32_t)axis) {
      nl++;
      bound = bound || src->loops[k].kind == LEIR_LOOP_BOUND;
    }
  leir_nest *comb = leir__new_nest(out, nl + (bound ? 0 : 1), 1);
  uint32_t w = 0;
  if (!bound) {
    /* the bound loop is a fresh nest of one iteration: its name is free */
    comb->loops[w++] = (leir__loop){LEIR_LOOP_BOUND, leir__sym_intern(out, "tx", 2), 1, LEIR__NOPOS};
  }
  for (uint32_t k = 0; k < src->nloops; k++)
    if (k != (uint32_t)axis) comb->loops[w++] = src->loops[k];
  if (!bound) {
    /* `tx` must not clash with a loop kept from the source nest */
    for (uint32_t k = 1; k < comb->nloops; k++)
      if (comb->loops[k].sym == comb->loops[0].sym) {
        comb->loops[0].sym = leir__fresh_loop_named(out, comb, "tx");
        break;
      }
  }
  leir_expr *a = partial_ref(out, c->p, lhs, p1, src, s.lhs_loops, (uint32_t)axis);
  leir_expr *b = partial_ref(out, c->p, lhs, p2, src, s.lhs_loops, (uint32_t)axis);
  leir_expr *x = leir__copy_expr(out, c->p, lhs);
  leir_expr *rhs;
  if (s.op == OP_MAX || s.op == OP_MIN) {
    leir_op fn = s.op == OP_MAX ? LEIR_OP_MAX : LEIR_OP_MIN;
    leir_expr *inner = leir__new_call(out, fn, 2);
    inner->kids[0] = a;
    inner->kids[1] = b;
    rhs = leir__new_call(out, fn, 2);
    rhs->kids[0] = x;
    rhs->kids[1] = inner;
  } else {
    leir_op op = s.op == OP_ADD ? LEIR_OP_ADD : LEIR_OP_MUL;
    rhs = leir__mk_bin(out, op, x,
                       leir__new_unary(out, LEIR_EXPR_PAREN, leir__mk_bin(out, op, a, b)));
  }
  comb->items[0].eq = leir__new_equation(out, leir__copy_expr(out, c->p, lhs), rhs);
  leir__program_remove_nest(out, top);
  leir__program_insert_nest(out, top, parts[0]);
  leir__program_insert_nest(out, top + 1, parts[1]);
  leir__program_insert_nest(out, top + 2, comb);
  return LEIR_OK;
}

const leir__strategy_impl leir__reduction_factorization = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_AT) |
            LEIR__KEY(LEIR__K_LANES),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_factorization_facts,
};
