/*
 * The dependence model (lib/dependence.h, docs/dependence.md).
 *
 * One question underlies every answer here: may two iterations touch the
 * same element of a buffer, at least one of them writing it? What varies
 * is which loops the two iterations share (held fixed) and which proof is
 * used:
 *
 *  1. One loop L, enclosing loops held fixed (CPU P/V loops):
 *     a. every equation in L's body (nested nests included) writes through
 *        a subscript that depends injectively on L: some dimension k has
 *        the affine form c*L + (outer loops) + (inner loops) + const whose
 *        inner part spans less than |c| (iterations write disjoint blocks),
 *        and every equation writing the same buffer in the body uses
 *        dimension k with the same c, outer part and constant; or an affine
 *        dimension whose value determines L over the loops that vary inside
 *        one iteration of the enclosing loops (leir__affine_determined; a
 *        column-major flatten a*16+tx), every write of the buffer using that
 *        very subscript. A variable of L absent from a left-hand side is a
 *        reduction across L and fails;
 *     b. every read, in the body, of a buffer written in the body uses a
 *        subscript identical to one of that buffer's writes in the body
 *        (same text and the same loops), or lies in the block the
 *        iteration owns (a dimension c*L + outer + inner + konst with the
 *        writes' c and outer part, the konst + inner windows of the read
 *        and the writes spanning less than |c| together: a row written by
 *        one inner nest and read by the next; the read's window over the
 *        range its if_then_else guards leave), or is the element a write
 *        of the buffer writes at another value of one inner loop, within
 *        that loop's range (a prefix scan's P_{(k-1)*4+tx} under
 *        if_then_else(k-1<0,...) with P_{k*4+tx} written): an iteration
 *        reads only what it owns.
 *  2. One loop L, nothing held fixed (GPU axes, hoisted out of every other
 *     loop): for every write W and every access R of the same buffer in
 *     L's scope, some subscript dimension has the same affine form in W
 *     and R (same loops, coefficients and constant) from whose value L can
 *     be recovered with every other loop free (leir__dep_determines, the
 *     mixed-radix argument with a gcd split), or a pair of dimensions
 *     E//c, E%c gives E so. Then equal elements imply equal values of L.
 *  3. The loops of one nest (loop order): per written buffer, the loops
 *     pinned by a subscript entry equal in every access and affine in
 *     loops whose value it determines; and whether the buffer is a pure
 *     accumulation.
 *  4. Any two accesses under any relation of their loops (nest pairs):
 *     per dimension, a GCD test and Banerjee bounds over the guard-narrowed
 *     ranges (leir__dep_may_meet).
 *
 * This file: 1; 2 is in dependence_free.c, 3 in dependence_nest.c, 4 and
 * the questions about two nests in dependence_pairs.c.
 *
 * 1 and 2 are the tests the CPU and CUDA backends applied before they
 * shared this file, kept answer for answer (bench/dep_dump compares them
 * over the corpus). For a loop without enclosing loops both ask the same
 * question; tests/test_dependence.c checks the relation between the two
 * over the corpus.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dependence.h"
#include "dependence_internal.h"
#include "vec.h"
#include "visit.h"

/* ==== 1. one loop, enclosing loops held fixed =============================== */

typedef struct walk {
  const leir__analysis *a;
  const leir__loop *loop;
  uint32_t *eqs; /* indices into a->eqs */
  uint32_t n, cap;
  bool overflow;
} walk;

static void body_collect(walk *w, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      body_collect(w, n->items[k].nest);
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

/* The same form for any access `lhs` of equation `info` (a read too); the
 * inner loops over their ranges in env (NULL: their full ranges). */
static bool own_of_access(const leir__analysis *a, const leir__eqinfo *info, uint32_t s,
                          const leir_expr *lhs, uint32_t dim, own *o, const leir__env *env) {
  leir__affine f;
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
      /* coef * [rlo, rhi]: [0, extent-1], or narrowed by the guards the
       * access sits under (if_then_else(k-1<0,-inf,P_{..,k-1}) reads
       * k-1 >= 0 only) */
      int64_t rlo = 0, rhi = info->loops[slot]->extent - 1, x, y;
      if (env && slot < env->nvars && env->vars[slot].known && env->vars[slot].lo >= rlo &&
          env->vars[slot].hi <= rhi && env->vars[slot].lo <= env->vars[slot].hi) {
        rlo = env->vars[slot].lo;
        rhi = env->vars[slot].hi;
      }
      if (__builtin_mul_overflow(f.coef[t], rlo, &x) || __builtin_mul_overflow(f.coef[t], rhi, &y))
        return false;
      if (__builtin_add_overflow(o->inner_lo, x < y ? x : y, &o->inner_lo) ||
          __builtin_add_overflow(o->inner_hi, x < y ? y : x, &o->inner_hi))
        return false;
    }
  }
  if (o->c == 0 || o->c == INT64_MIN) return false;
  int64_t width;
  if (__builtin_sub_overflow(o->inner_hi, o->inner_lo, &width)) return false;
  return width < (o->c < 0 ? -o->c : o->c);
}

static bool own_of(const leir__analysis *a, const leir__eqinfo *info, uint32_t s, uint32_t dim,
                   own *o) {
  return own_of_access(a, info, s, info->eq->lhs, dim, o, NULL);
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

static bool read_in_block_env(const reads *r, const leir_expr *e, uint32_t b, uint32_t s,
                              const leir__env *env);

/* Rule 2, second form: read e of buffer b lies in the block the current
 * iteration owns: in some dimension, the read and every write of b in the
 * body have the form c*L + outer + inner + konst with the same c and outer
 * part, and the windows konst + [inner_lo, inner_hi] of all of them
 * together span less than |c| (so iterations' windows are disjoint). Then the elements one
 * iteration reads are only ones it writes (or nobody writes), even when
 * the read sits in another loop nest of the body than the write (a row
 * computed in one inner loop and read by the next one). */
static bool read_in_own_block(const reads *r, const leir_expr *e, uint32_t b) {
  const leir__analysis *a = r->w->a;
  const leir__loop *l = r->w->loop;
  uint32_t s = slot_in(r->info, l);
  if (s == LEIR__NONE) return false;
  /* the read's window narrowed by its guards (NULL: allocation failed, full
   * ranges); a read that never runs touches nothing */
  bool never = false;
  leir__env *env = leir__dep_access_env(a, r->info, e, &never);
  if (never) return true;
  bool owned = read_in_block_env(r, e, b, s, env);
  free(env);
  return owned;
}

/* The coefficient of loop l in f (slots of info), 0 when absent. */
static int64_t coef_of(const leir__affine *f, const leir__eqinfo *info, const leir__loop *l) {
  int64_t c = 0;
  for (uint32_t t = 0; t < f->nterms; t++)
    if (info->loops[f->slot[t]] == l) c += f->coef[t];
  return c;
}

/* Rule 1b, third form: read e of buffer b is the element a write of b in
 * the body writes at another value of one inner loop j: in every
 * dimension the read's affine form is the write's (the same loops and
 * coefficients) plus coef_j * d, and j's range where the read runs
 * (narrowed by its guards), shifted by d, stays within j's loop. The
 * writes of different iterations of L being disjoint (rule 1a), the
 * element is this iteration's own: the column-major flatten of a prefix
 * scan, D_{(a-1)*4+tx} under if_then_else(a-1<0,...) with D_{a*4+tx}
 * written, also when precompute_indices has stored (a-1)*4+tx in an index
 * table (read through it). */
static bool read_shifted_write(const reads *r, const leir_expr *e, uint32_t b, uint32_t s,
                               const leir__env *env) {
  const leir__analysis *a = r->w->a;
  const leir__eqinfo *ri = r->info;
  for (uint32_t i = 0; i < r->w->n; i++) {
    const leir__eqinfo *wi = &a->eqs[r->w->eqs[i]];
    const leir_expr *w = wi->eq->lhs;
    if (wi->lhs_buffer != b || w->n != e->n) continue;
    uint32_t js = LEIR__NONE; /* j's slot in ri */
    int64_t d = 0;
    bool ok = true;
    uint64_t same = 0; /* dimensions spelled as in the write (tx//2): j must not occur there */
    for (uint32_t dim = 0; dim < e->n && ok; dim++) {
      if (dim < 64 && leir__expr_equal(a->p, e->kids[dim], a->p, w->kids[dim]) &&
          same_loops(a, e->kids[dim], ri, w->kids[dim], wi)) {
        same |= 1ull << dim;
        continue;
      }
      /* through index tables (leir__affine_subst_of): precompute_indices
       * turns the read's (a-1)*2+tx into G_{tx,a}, which names the same
       * element at every iteration */
      leir__affine fr, fw;
      ok = leir__affine_subst_of(a, e->kids[dim], &fr) &&
           leir__affine_subst_of(a, w->kids[dim], &fw);
      for (uint32_t t = 0; ok && t < fr.nterms; t++)
        ok = coef_of(&fr, ri, ri->loops[fr.slot[t]]) == coef_of(&fw, wi, ri->loops[fr.slot[t]]);
      for (uint32_t t = 0; ok && t < fw.nterms; t++)
        ok = coef_of(&fr, ri, wi->loops[fw.slot[t]]) == coef_of(&fw, wi, wi->loops[fw.slot[t]]);
      int64_t delta;
      if (!ok || __builtin_sub_overflow(fr.c, fw.c, &delta)) {
        ok = false;
        break;
      }
      if (js == LEIR__NONE && delta != 0)
        for (uint32_t t = 0; t < fr.nterms && js == LEIR__NONE; t++)
          if (fr.slot[t] > s && fr.coef[t] != 0 && fr.coef[t] != -1 - INT64_MAX &&
              delta % fr.coef[t] == 0) {
            js = fr.slot[t];
            d = delta / fr.coef[t];
          }
      int64_t q = js == LEIR__NONE ? 0 : coef_of(&fr, ri, ri->loops[js]), want;
      ok = !__builtin_mul_overflow(q, d, &want) && want == delta;
    }
    for (uint32_t dim = 0; ok && js != LEIR__NONE && dim < e->n && dim < 64; dim++)
      if (same >> dim & 1) ok = !leir__dep_uses_loop(a, ri, e->kids[dim], ri->loops[js]);
    if (!ok || js == LEIR__NONE) continue;
    int64_t lo = 0, hi = ri->loops[js]->extent - 1;
    if (env && js < env->nvars && env->vars[js].known) {
      lo = env->vars[js].lo > lo ? env->vars[js].lo : lo;
      hi = env->vars[js].hi < hi ? env->vars[js].hi : hi;
    }
    int64_t slo, shi;
    if (lo <= hi && !__builtin_add_overflow(lo, d, &slo) && !__builtin_add_overflow(hi, d, &shi) &&
        slo >= 0 && shi <= ri->loops[js]->extent - 1)
      return true;
  }
  return false;
}

static bool read_in_block_env(const reads *r, const leir_expr *e, uint32_t b, uint32_t s,
                              const leir__env *env) {
  if (read_shifted_write(r, e, b, s, env)) return true;
  const leir__analysis *a = r->w->a;
  const leir__loop *l = r->w->loop;
  for (uint32_t dim = 0; dim < e->n; dim++) {
    own mine;
    if (!own_of_access(a, r->info, s, e, dim, &mine, env)) continue;
    /* the window [konst + inner_lo, konst + inner_hi] of every access,
     * relative to c*L + outer */
    int64_t lo, hi;
    bool ok = !__builtin_add_overflow(mine.konst, mine.inner_lo, &lo) &&
              !__builtin_add_overflow(mine.konst, mine.inner_hi, &hi);
    for (uint32_t i = 0; i < r->w->n && ok; i++) {
      const leir__eqinfo *wi = &a->eqs[r->w->eqs[i]];
      if (wi->lhs_buffer != b) continue;
      own theirs;
      uint32_t so = slot_in(wi, l);
      int64_t tlo, thi;
      ok = so != LEIR__NONE && own_of(a, wi, so, dim, &theirs) && theirs.c == mine.c &&
           theirs.nouter == mine.nouter &&
           !__builtin_add_overflow(theirs.konst, theirs.inner_lo, &tlo) &&
           !__builtin_add_overflow(theirs.konst, theirs.inner_hi, &thi);
      for (uint32_t t = 0; ok && t < mine.nouter; t++)
        ok = theirs.outer_loop[t] == mine.outer_loop[t] &&
             theirs.outer_coef[t] == mine.outer_coef[t];
      if (ok) {
        if (tlo < lo) lo = tlo;
        if (thi > hi) hi = thi;
      }
    }
    int64_t width, c = mine.c < 0 ? -mine.c : mine.c;
    if (ok && !__builtin_sub_overflow(hi, lo, &width) && width < c) return true;
  }
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
      if (!matched) matched = read_in_own_block(r, e, b);
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

static bool cpu_split_pair(const leir_expr *x, const leir_expr *y, const leir_program *p) {
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
    if (d + 1 < lhs->n && cpu_split_pair(lhs->kids[d], lhs->kids[d + 1], a->p) &&
        injective_in(a, info, s, lhs->kids[d]->kids[0]))
      return true;
  }
  return false;
}

bool leir__dep_held_enclosing(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
                              const char **tensor, char *why, size_t why_cap) {
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
  body_collect(&w, nest);
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
      if (tensor) *tensor = name;
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
