/*
 * Which loops may run their iterations concurrently (spec/leir.md §3.2:
 * a P/V/B annotation may only be exploited where it is legal).
 *
 * The rule is conservative: a loop L of a nest is independent when
 *  1. every equation in L's body (nested nests included) writes through a
 *     subscript that depends injectively on L: some dimension k has the
 *     affine form c*L + (outer loops) + (inner loops) + const whose inner
 *     part spans less than |c| (so iterations write disjoint blocks), and
 *     every equation writing the same buffer in the body uses dimension k
 *     with the same c, outer part and constant; a variable of L absent from
 *     a left-hand side is a reduction across L and fails this test;
 *  2. every read, in the body, of a buffer written in the body uses a
 *     subscript identical to one of that buffer's writes in the body (same
 *     text and the same loops), so an iteration reads only what it owns.
 * Extent-1 loops are trivially independent. Implicit initializations run
 * before their nest and do not matter here.
 *
 * The question is "within one iteration of the enclosing loops", which is
 * what a CPU P/V loop needs. A bound loop mapped to a GPU axis is hoisted
 * out of every other loop of its nest, so backends/cuda/legality.c asks a
 * stronger one (no two iterations meet on an element whatever the other
 * loops do); that is why the two tests are separate.
 */
#include <stdio.h>
#include <string.h>

#include "analysis.h"

typedef struct walk {
  const leir__analysis *a;
  const leir__loop *loop;
  uint32_t *eqs; /* indices into a->eqs */
  uint32_t n, cap;
  bool overflow;
} walk;

static void collect(walk *w, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      collect(w, n->items[k].nest);
      continue;
    }
    const leir_equation *eq = n->items[k].eq;
    uint32_t i = eq->id < w->a->nids ? w->a->eq_index[eq->id] : LEIR__NONE;
    if (i == LEIR__NONE) continue;
    if (w->n == w->cap) {
      w->overflow = true;
      return;
    }
    w->eqs[w->n++] = i;
  }
}

static uint32_t slot_in(const leir__eqinfo *info, const leir__loop *l) {
  for (uint32_t s = 0; s < info->nloops; s++)
    if (info->loops[s] == l) return s;
  return LEIR__NONE;
}

/* Ownership form of one write: dimension k = c*L + outer + inner + konst. */
typedef struct own {
  uint32_t dim;
  int64_t c, konst;
  uint32_t nouter;
  const leir__loop *outer_loop[LEIR__AFFINE_TERMS];
  int64_t outer_coef[LEIR__AFFINE_TERMS];
  int64_t inner_lo, inner_hi;
} own;

static bool own_of(const leir__analysis *a, const leir__eqinfo *info, uint32_t s, uint32_t dim,
                   own *o) {
  leir__affine f;
  const leir_expr *lhs = info->eq->lhs;
  if (dim >= lhs->n || !leir__affine_of(a, lhs->kids[dim], &f)) return false;
  memset(o, 0, sizeof *o);
  o->dim = dim;
  o->konst = f.c;
  for (uint32_t t = 0; t < f.nterms; t++) {
    uint32_t slot = f.slot[t];
    if (slot == s) {
      o->c = f.coef[t];
    } else if (slot < s) {
      o->outer_loop[o->nouter] = info->loops[slot];
      o->outer_coef[o->nouter++] = f.coef[t];
    } else {
      int64_t span;
      if (__builtin_mul_overflow(f.coef[t], info->loops[slot]->extent - 1, &span)) return false;
      if (span < 0) {
        if (__builtin_add_overflow(o->inner_lo, span, &o->inner_lo)) return false;
      } else if (__builtin_add_overflow(o->inner_hi, span, &o->inner_hi)) {
        return false;
      }
    }
  }
  if (o->c == 0 || o->c == INT64_MIN) return false;
  int64_t width;
  if (__builtin_sub_overflow(o->inner_hi, o->inner_lo, &width)) return false;
  return width < (o->c < 0 ? -o->c : o->c);
}

static bool same_owner(const own *x, const own *y) {
  if (x->dim != y->dim || x->c != y->c || x->konst != y->konst || x->nouter != y->nouter)
    return false;
  for (uint32_t t = 0; t < x->nouter; t++)
    if (x->outer_loop[t] != y->outer_loop[t] || x->outer_coef[t] != y->outer_coef[t]) return false;
  return true;
}

/* Same subscript text and every variable bound to the same loop. */
static bool same_loops(const leir__analysis *a, const leir_expr *x, const leir__eqinfo *xi,
                       const leir_expr *y, const leir__eqinfo *yi) {
  if (x->kind == LEIR_EXPR_VAR) {
    uint32_t sx = a->expr_loop[x->id], sy = a->expr_loop[y->id];
    if (sx == LEIR__NONE || sy == LEIR__NONE) return false;
    return xi->loops[sx] == yi->loops[sy];
  }
  for (uint32_t k = 0; k < x->n; k++)
    if (!same_loops(a, x->kids[k], xi, y->kids[k], yi)) return false;
  return true;
}

static bool same_access(const leir__analysis *a, const leir_expr *x, const leir__eqinfo *xi,
                        const leir_expr *y, const leir__eqinfo *yi) {
  if (x->n != y->n) return false;
  for (uint32_t k = 0; k < x->n; k++)
    if (!leir__expr_equal(a->p, x->kids[k], a->p, y->kids[k]) ||
        !same_loops(a, x->kids[k], xi, y->kids[k], yi))
      return false;
  return true;
}

typedef struct reads {
  const walk *w;
  const leir__eqinfo *info;
  char *why;
  size_t cap;
} reads;

static bool written_in_body(const walk *w, uint32_t b) {
  for (uint32_t i = 0; i < w->n; i++)
    if (w->a->eqs[w->eqs[i]].lhs_buffer == b) return true;
  return false;
}

static bool read_ok(const reads *r, const leir_expr *e) {
  const leir__analysis *a = r->w->a;
  if (e->kind == LEIR_EXPR_TENSOR) {
    uint32_t b = e->id < a->nids ? a->expr_buffer[e->id] : LEIR__NONE;
    if (b != LEIR__NONE && written_in_body(r->w, b)) {
      bool matched = false;
      for (uint32_t i = 0; i < r->w->n && !matched; i++) {
        const leir__eqinfo *wi = &a->eqs[r->w->eqs[i]];
        if (wi->lhs_buffer == b && same_access(a, e, r->info, wi->eq->lhs, wi)) matched = true;
      }
      if (!matched) {
        const char *name = leir__sym_name(a->p, e->sym);
        snprintf(r->why, r->cap, "%s is read at an element another iteration may write", name);
        return false;
      }
    }
  }
  for (uint32_t k = 0; k < e->n; k++)
    if (!read_ok(r, e->kids[k])) return false;
  return true;
}

/* Rule 1, second form: an affine dimension whose value determines L over
 * the loops that vary inside one iteration of the enclosing loops (L and
 * the loops inside it; leir__affine_determined). Then different iterations
 * of L write different elements even when their blocks interleave (a
 * column-major flatten a*16+tx). A pair of dimensions e//m, e%m (m > 0)
 * counts as the dimension e. */
static bool injective_in(const leir__analysis *a, const leir__eqinfo *info, uint32_t s,
                         const leir_expr *e) {
  leir__affine f;
  if (!leir__affine_of(a, e, &f)) return false;
  int64_t coef[LEIR__AFFINE_TERMS], ext[LEIR__AFFINE_TERMS];
  uint32_t n = 0, at = LEIR__AFFINE_TERMS;
  for (uint32_t t = 0; t < f.nterms; t++) {
    if (f.slot[t] < s) continue; /* outer loops are fixed */
    if (f.slot[t] == s) at = n;
    coef[n] = f.coef[t];
    ext[n++] = info->loops[f.slot[t]]->extent;
  }
  return at < n && (leir__affine_determined(coef, ext, n) >> at & 1);
}

static bool split_pair(const leir_expr *x, const leir_expr *y, const leir_program *p) {
  return x->kind == LEIR_EXPR_BINARY && y->kind == LEIR_EXPR_BINARY &&
         x->op == LEIR_OP_FLOORDIV && y->op == LEIR_OP_MOD &&
         x->kids[1]->kind == LEIR_EXPR_NUMBER && x->kids[1]->u.num->is_int &&
         x->kids[1]->u.num->ival > 0 && leir__expr_equal(p, x->kids[1], p, y->kids[1]) &&
         leir__expr_equal(p, x->kids[0], p, y->kids[0]);
}

static bool interleaved_owner(const walk *w, const leir__eqinfo *info, uint32_t s) {
  const leir__analysis *a = w->a;
  const leir_expr *lhs = info->eq->lhs;
  /* every write of the buffer in the body uses this very subscript */
  for (uint32_t j = 0; j < w->n; j++) {
    const leir__eqinfo *other = &a->eqs[w->eqs[j]];
    if (other == info || other->lhs_buffer != info->lhs_buffer) continue;
    if (!same_access(a, lhs, info, other->eq->lhs, other)) return false;
  }
  for (uint32_t d = 0; d < lhs->n; d++) {
    if (injective_in(a, info, s, lhs->kids[d])) return true;
    if (d + 1 < lhs->n && split_pair(lhs->kids[d], lhs->kids[d + 1], a->p) &&
        injective_in(a, info, s, lhs->kids[d]->kids[0]))
      return true;
  }
  return false;
}

bool leir__loop_independent(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
                            char *why, size_t why_cap) {
  char scratch[8];
  if (!why || !why_cap) {
    why = scratch;
    why_cap = sizeof scratch;
  }
  why[0] = '\0';
  if (loop >= nest->nloops) {
    snprintf(why, why_cap, "no such loop");
    return false;
  }
  const leir__loop *l = &nest->loops[loop];
  if (l->extent <= 1) return true;
  uint32_t buf[4096];
  walk w = {a, l, buf, 0, sizeof buf / sizeof buf[0], false};
  collect(&w, nest);
  if (w.overflow) {
    snprintf(why, why_cap, "too many equations to analyze");
    return false;
  }
  const char *var = leir__sym_name(a->p, l->sym);
  /* 1: injective writes, one ownership form per buffer */
  for (uint32_t i = 0; i < w.n; i++) {
    const leir__eqinfo *info = &a->eqs[w.eqs[i]];
    const char *name = leir__sym_name(a->p, info->eq->lhs->sym);
    uint32_t s = slot_in(info, l);
    if (s == LEIR__NONE) {
      snprintf(why, why_cap, "internal: loop not found");
      return false;
    }
    bool found = false;
    for (uint32_t dim = 0; dim < info->eq->lhs->n && !found; dim++) {
      own mine;
      if (!own_of(a, info, s, dim, &mine)) continue;
      /* every other write of this buffer in the body must agree */
      bool agree = true;
      for (uint32_t j = 0; j < w.n && agree; j++) {
        const leir__eqinfo *other = &a->eqs[w.eqs[j]];
        if (j == i || other->lhs_buffer != info->lhs_buffer) continue;
        own theirs;
        uint32_t so = slot_in(other, l);
        agree = so != LEIR__NONE && own_of(a, other, so, dim, &theirs) && same_owner(&mine, &theirs);
        if (agree) {
          /* blocks of different iterations stay disjoint over all writes */
          int64_t lo = mine.inner_lo < theirs.inner_lo ? mine.inner_lo : theirs.inner_lo;
          int64_t hi = mine.inner_hi > theirs.inner_hi ? mine.inner_hi : theirs.inner_hi;
          int64_t width, c = mine.c < 0 ? -mine.c : mine.c;
          agree = !__builtin_sub_overflow(hi, lo, &width) && width < c;
        }
      }
      found = agree;
    }
    if (!found) found = interleaved_owner(&w, info, s);
    if (!found) {
      /* is the loop variable absent from the left-hand side? */
      bool uses = false;
      for (uint32_t dim = 0; dim < info->eq->lhs->n && !uses; dim++) {
        leir__affine f;
        if (leir__affine_of(a, info->eq->lhs->kids[dim], &f))
          for (uint32_t t = 0; t < f.nterms; t++) uses |= f.slot[t] == s;
        else
          uses = true; /* not affine: cannot tell */
      }
      if (!uses)
        snprintf(why, why_cap,
                 "%s is a reduction across '%s' (the loop is absent from its subscript)", name,
                 var);
      else
        snprintf(why, why_cap,
                 "the writes of %s are not provably disjoint across iterations of '%s'", name,
                 var);
      return false;
    }
  }
  /* 2: reads of buffers written in the body */
  for (uint32_t i = 0; i < w.n; i++) {
    const leir__eqinfo *info = &a->eqs[w.eqs[i]];
    reads r = {&w, info, why, why_cap};
    const leir_expr *lhs = info->eq->lhs;
    for (uint32_t k = 0; k < lhs->n; k++)
      if (!read_ok(&r, lhs->kids[k])) return false;
    if (!read_ok(&r, info->eq->rhs)) return false;
  }
  return true;
}
