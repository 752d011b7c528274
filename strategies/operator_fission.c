/*
 * operator_fission (1, graph): split a top-level nest with several items
 * (equations or nested nests) into one nest per item, each with a copy of
 * the nest's loops, in item order.
 *
 * Sites: every top-level nest with two or more items where, for every pair
 * of items i < j, no access of item j at an iteration lexicographically
 * before an iteration of item i touches an element that item i's access
 * touches with a write among them (leir__dep_may_meet of lib/dependence.c
 * on index sets: equal on the loops above level k, greater on loop k).
 * Those are exactly the pairs whose order fission reverses; the reference
 * checks nothing (fissioning `X=X+A; Y=X` over a reduction loop changes Y).
 * Parameters: `nest=N` (top level; all items split at once, as in the
 * reference). Exact: every element sees the same operations in the same
 * order.
 */
#include <stdlib.h>

#include "dependence.h"
#include "kit.h"

typedef struct acc {
  const leir__eqinfo *info;
  const leir_expr *t;
  uint32_t buffer;
  bool write;
} acc;

typedef LEIR__VEC(acc) accv;

static void push(accv *v, const leir__analysis *a, const leir__eqinfo *info, const leir_expr *t,
                 bool write, bool *failed) {
  acc *x = LEIR__VEC_PUSH(v);
  if (!x) {
    *failed = true;
    return;
  }
  x->info = info;
  x->t = t;
  x->buffer = t->id < a->nids ? a->expr_buffer[t->id] : LEIR__NONE;
  x->write = write;
}

static void expr_reads(accv *v, const leir__analysis *a, const leir__eqinfo *info,
                       const leir_expr *e, bool *failed) {
  if (e->kind == LEIR_EXPR_TENSOR) push(v, a, info, e, false, failed);
  for (uint32_t k = 0; k < e->n && !*failed; k++) expr_reads(v, a, info, e->kids[k], failed);
}

/* Every access of the equations of item `it` (an equation or a nest). */
static void item_accesses(accv *v, const leir__analysis *a, const leir__item *it, bool *failed) {
  if (it->nest) {
    for (uint32_t k = 0; k < it->nest->nitems && !*failed; k++)
      item_accesses(v, a, &it->nest->items[k], failed);
    return;
  }
  const leir_equation *eq = it->eq;
  uint32_t ei = eq->id < a->nids ? a->eq_index[eq->id] : LEIR__NONE;
  if (ei == LEIR__NONE) {
    *failed = true;
    return;
  }
  const leir__eqinfo *info = &a->eqs[ei];
  push(v, a, info, eq->lhs, true, failed);
  for (uint32_t k = 0; k < eq->lhs->n && !*failed; k++)
    expr_reads(v, a, info, eq->lhs->kids[k], failed);
  if (!*failed) expr_reads(v, a, info, eq->rhs, failed);
}

/* May the items of nest n run one after the other? On false, *bad names
 * the tensor at fault (LEIR__NOSYM when the analysis failed). */
static bool fissionable(const leir__analysis *a, const leir_nest *n, uint32_t *bad) {
  *bad = LEIR__NOSYM;
  if (n->nloops > LEIR__MAX_LOOPS) return false;
  accv *v = calloc(n->nitems, sizeof *v);
  if (!v) return false;
  bool failed = false, ok = true;
  for (uint32_t i = 0; i < n->nitems && !failed; i++) item_accesses(&v[i], a, &n->items[i], &failed);
  if (failed) ok = false;
  leir__dep_pair pairs[LEIR__MAX_LOOPS];
  for (uint32_t i = 0; i < n->nitems && ok; i++)
    for (uint32_t j = i + 1; j < n->nitems && ok; j++)
      for (size_t x = 0; x < v[i].len && ok; x++)
        for (size_t y = 0; y < v[j].len && ok; y++) {
          const acc *p = &v[i].data[x], *q = &v[j].data[y];
          if ((!p->write && !q->write) || p->buffer != q->buffer) continue;
          if (p->buffer == LEIR__NONE) {
            ok = false;
            *bad = p->t->sym;
            break;
          }
          for (uint32_t k = 0; k < n->nloops && ok; k++) {
            for (uint32_t m = 0; m <= k; m++)
              pairs[m] = (leir__dep_pair){&n->loops[m], &n->loops[m],
                                          (uint8_t)(m < k ? LEIR__DEP_EQ : LEIR__DEP_GT)};
            if (leir__dep_may_meet(a, p->info, p->t, q->info, q->t, pairs, k + 1)) {
              ok = false;
              *bad = p->t->sym;
            }
          }
        }
  for (uint32_t i = 0; i < n->nitems; i++) free(v[i].data);
  free(v);
  return ok;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    if (r->nest->nitems < 2) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_FISSION_ITEMS,
                   "the nest has one item; fission needs two or more");
      continue;
    }
    uint32_t bad;
    if (!fissionable(c->a, r->nest, &bad)) {
      if (bad == LEIR__NOSYM && c->mode != LEIR__MODE_EXPLAIN) continue;
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_DEPENDENCE,
                   "a later item of the nest touches an element of %s that an earlier item "
                   "writes or reads in a later iteration; run apart, their order would reverse",
                   bad == LEIR__NOSYM ? "a tensor" : leir__name(c, bad));
      continue;
    }
    leir__emit(c, LEIR_EXACT, "nest=%s", r->label);
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  uint32_t t = r->path[0];
  leir_nest *src = out->nests[t];
  uint32_t nitems = src->nitems;
  for (uint32_t k = nitems; k-- > 1;) {
    leir_nest *m = leir__new_nest(out, src->nloops, 1);
    if (!m) return LEIR_ERR_NOMEM;
    for (uint32_t l = 0; l < src->nloops; l++) m->loops[l] = src->loops[l];
    m->items[0] = src->items[k];
    if (!leir__program_insert_nest(out, t + 1, m)) return LEIR_ERR_NOMEM;
  }
  src->nitems = 1;
  return LEIR_OK;
}

const leir__strategy_impl leir__operator_fission = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
};
