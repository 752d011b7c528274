/*
 * The dependence model, question 2 (dependence.c has the overview): one
 * loop L with nothing held fixed (GPU axes, hoisted out of every other
 * loop): equal elements must imply equal values of L.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dependence.h"
#include "dependence_internal.h"
#include "vec.h"
#include "visit.h"

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

typedef struct term {
  int64_t coef; /* absolute value */
  int64_t span; /* extent - 1 */
} term;

static int by_coef(const void *x, const void *y) {
  const term *a = x, *b = y;
  return (a->coef > b->coef) - (a->coef < b->coef);
}

/* h = cb*b + sum(c_v*v) + c. If the terms with small coefficients cannot
 * add up to |cb| (S < |cb|) and the others are multiples of D greater than
 * the spread of cb*b plus S, then h(i) == h(i') forces b == b'. Every split
 * of the other terms by coefficient size is tried. */
bool leir__dep_determines(const leir__affine *f, const leir__eqinfo *info, uint32_t slot) {
  int64_t cb = 0;
  term others[LEIR__AFFINE_TERMS];
  uint32_t n = 0;
  for (uint32_t k = 0; k < f->nterms; k++) {
    int64_t ext = info->loops[f->slot[k]]->extent;
    int64_t c = f->coef[k] < 0 ? -f->coef[k] : f->coef[k];
    if (f->slot[k] == slot)
      cb = c;
    else if (ext > 1)
      others[n++] = (term){c, ext - 1};
  }
  if (cb == 0) return false;
  int64_t bspan;
  if (__builtin_mul_overflow(cb, info->loops[slot]->extent - 1, &bspan)) return false;
  qsort(others, n, sizeof *others, by_coef);
  int64_t small = 0;
  for (uint32_t split = 0; split <= n; split++) {
    if (split > 0) {
      int64_t t;
      if (__builtin_mul_overflow(others[split - 1].coef, others[split - 1].span, &t) ||
          __builtin_add_overflow(small, t, &small))
        return false;
    }
    if (small >= cb) return false; /* only grows */
    int64_t d = 0;
    for (uint32_t k = split; k < n; k++) d = gcd64(others[k].coef, d);
    int64_t spread;
    if (__builtin_add_overflow(bspan, small, &spread)) return false;
    if (split == n || d > spread) return true;
  }
  return false;
}

/* Slot of `loop` in the equation's loop list; LEIR__NONE if absent. */
static uint32_t slot_of(const leir__eqinfo *info, const leir__loop *loop) {
  for (uint32_t k = 0; k < info->nloops; k++)
    if (info->loops[k] == loop) return k;
  return LEIR__NONE;
}

/* Same affine function of loops with the same names and extents. */
static bool same_form(const leir__affine *x, const leir__eqinfo *ix, const leir__affine *y,
                      const leir__eqinfo *iy) {
  if (x->nterms != y->nterms || x->c != y->c) return false;
  for (uint32_t k = 0; k < x->nterms; k++) {
    const leir__loop *lx = ix->loops[x->slot[k]];
    bool found = false;
    for (uint32_t j = 0; j < y->nterms && !found; j++) {
      const leir__loop *ly = iy->loops[y->slot[j]];
      found = lx->sym == ly->sym && lx->extent == ly->extent && x->coef[k] == y->coef[j];
    }
    if (!found) return false;
  }
  return true;
}

static const leir_expr *unparen(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

/* Identical integer expressions over loops with the same names/extents. */
static bool same_expr(const leir__analysis *a, const leir_expr *x, const leir__eqinfo *ix,
                      const leir_expr *y, const leir__eqinfo *iy) {
  if (!leir__expr_equal(a->p, x, a->p, y)) return false;
  leir__affine fx, fy;
  if (leir__affine_of(a, x, &fx) && leir__affine_of(a, y, &fy)) return same_form(&fx, ix, &fy, iy);
  return false;
}

/* E//c and E%c in two dimensions (layout strategies split an index this
 * way) give E itself: E = c*(E//c) + E%c. */
static bool gpu_split_pair(const leir__analysis *a, const leir_expr *w, const leir__eqinfo *wi,
                       const leir_expr *r, const leir__eqinfo *ri, uint32_t ws) {
  for (uint32_t k1 = 0; k1 < w->n && k1 < r->n; k1++) {
    const leir_expr *d1 = unparen(w->kids[k1]), *e1 = unparen(r->kids[k1]);
    if (d1->kind != LEIR_EXPR_BINARY || d1->op != LEIR_OP_FLOORDIV ||
        !leir__expr_equal(a->p, d1, a->p, e1))
      continue;
    for (uint32_t k2 = 0; k2 < w->n && k2 < r->n; k2++) {
      const leir_expr *d2 = unparen(w->kids[k2]), *e2 = unparen(r->kids[k2]);
      if (d2->kind != LEIR_EXPR_BINARY || d2->op != LEIR_OP_MOD ||
          !leir__expr_equal(a->p, d2, a->p, e2) ||
          !leir__expr_equal(a->p, d1->kids[0], a->p, d2->kids[0]) ||
          !leir__expr_equal(a->p, d1->kids[1], a->p, d2->kids[1]))
        continue;
      const leir_expr *c = unparen(d1->kids[1]);
      if (c->kind != LEIR_EXPR_NUMBER || !c->u.num->is_int || c->u.num->ival <= 0) continue;
      leir__affine fw;
      if (!same_expr(a, d1->kids[0], wi, e1->kids[0], ri) || !leir__affine_of(a, d1->kids[0], &fw))
        continue;
      if (leir__dep_determines(&fw, wi, ws)) return true;
    }
  }
  return false;
}

/* Does some dimension prove that W and R touch one element only with the
 * same value of `loop`? */
static bool separated(const leir__analysis *a, const leir__eqinfo *wi, const leir_expr *w,
                      const leir__eqinfo *ri, const leir_expr *r, const leir__loop *loop) {
  uint32_t ws = slot_of(wi, loop), rs = slot_of(ri, loop);
  if (ws == LEIR__NONE || rs == LEIR__NONE) return false;
  for (uint32_t k = 0; k < w->n && k < r->n; k++) {
    leir__affine fw, fr;
    if (!leir__affine_of(a, w->kids[k], &fw) || !leir__affine_of(a, r->kids[k], &fr)) continue;
    if (!same_form(&fw, wi, &fr, ri)) continue;
    if (leir__dep_determines(&fw, wi, ws)) return true;
  }
  return gpu_split_pair(a, w, wi, r, ri, ws);
}

typedef struct conflict {
  const leir_expr *w, *r;
  const leir__eqinfo *wi, *ri;
} conflict;

/* A walk looking for a conflict (find_in) or a loop's variable (uses_loop). */
typedef struct dep_find {
  const leir__analysis *a;
  const leir__eqinfo *wi, *ri; /* uses_loop: wi is the equation */
  const leir__loop *loop;
  conflict *out;
} dep_find;

static int conflict_at(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const dep_find *f = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR || e->id >= f->a->nids ||
      f->a->expr_buffer[e->id] != f->wi->lhs_buffer ||
      separated(f->a, f->wi, f->wi->eq->lhs, f->ri, e, f->loop))
    return LEIR__VISIT_NEXT;
  f->out->w = f->wi->eq->lhs;
  f->out->r = e;
  f->out->wi = f->wi;
  f->out->ri = f->ri;
  return LEIR__VISIT_STOP;
}

static bool find_in(const leir__analysis *a, const leir__eqinfo *wi, const leir__eqinfo *ri,
                    const leir_expr *e, const leir__loop *loop, conflict *out) {
  dep_find f = {a, wi, ri, loop, out};
  leir__visit v = LEIR__VISIT_INIT(conflict_at, &f);
  return !leir__visit_const(&v, e);
}

static int loop_var_at(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const dep_find *f = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_VAR || e->id >= f->a->nids) return LEIR__VISIT_NEXT;
  uint32_t s = f->a->expr_loop[e->id];
  return s != LEIR__NONE && s < f->wi->nloops && f->wi->loops[s] == f->loop ? LEIR__VISIT_STOP
                                                                             : LEIR__VISIT_NEXT;
}

bool leir__dep_uses_loop(const leir__analysis *a, const leir__eqinfo *info, const leir_expr *e,
                         const leir__loop *loop) {
  dep_find f = {a, info, NULL, loop, NULL};
  leir__visit v = LEIR__VISIT_INIT(loop_var_at, &f);
  return !leir__visit_const(&v, e);
}

static bool held_none_conflict(const leir__analysis *a, const leir__loop *loop,
                               const char **tensor, char *what, size_t cap) {
  const leir_program *p = a->p;
  const char *var = leir__sym_name(p, loop->sym);
  if (loop->extent <= 1) return false;
  for (uint32_t i = 0; i < a->neqs; i++) {
    const leir__eqinfo *wi = &a->eqs[i];
    if (wi->lhs_buffer == LEIR__NONE || slot_of(wi, loop) == LEIR__NONE)
      continue;
    for (uint32_t j = 0; j < a->neqs; j++) {
      const leir__eqinfo *ri = &a->eqs[j];
      if (slot_of(ri, loop) == LEIR__NONE) continue;
      conflict c;
      if (!find_in(a, wi, ri, ri->eq->lhs, loop, &c) && !find_in(a, wi, ri, ri->eq->rhs, loop, &c))
        continue;
      const char *t = leir__sym_name(p, c.w->sym);
      if (tensor) *tensor = t;
      bool write = c.r == c.ri->eq->lhs;
      bool reduction = write && c.wi == c.ri && !leir__dep_uses_loop(a, wi, c.w, loop);
      if (reduction)
        snprintf(what, cap,
                 "iterations with different values of %s write the same element of %s (a "
                 "reduction across %s)",
                 var, t, var);
      else if (write)
        snprintf(what, cap,
                 "iterations with different values of %s may write the same element of %s", var,
                 t);
      else
        snprintf(what, cap,
                 "an iteration may read an element of %s that an iteration with a different "
                 "value of %s writes",
                 t, var);
      return true;
    }
  }
  return false;
}


bool leir__dep_loop_independent(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
                                leir__dep_hold hold, const char **tensor, char *why,
                                size_t why_cap) {
  char scratch[8];
  if (!why || !why_cap) {
    why = scratch;
    why_cap = sizeof scratch;
  }
  why[0] = '\0';
  if (tensor) *tensor = NULL;
  if (hold == LEIR__HOLD_ENCLOSING)
    return leir__dep_held_enclosing(a, nest, loop, tensor, why, why_cap);
  if (loop >= nest->nloops) {
    snprintf(why, why_cap, "no such loop");
    return false;
  }
  return !held_none_conflict(a, &nest->loops[loop], tensor, why, why_cap);
}
