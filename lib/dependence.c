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

static leir__env *access_env(const leir__analysis *a, const leir__eqinfo *info,
                             const leir_expr *t, bool *never);
static bool uses_loop(const leir__analysis *a, const leir__eqinfo *info, const leir_expr *e,
                      const leir__loop *loop);
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
  leir__env *env = access_env(a, r->info, e, &never);
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
      if (same >> dim & 1) ok = !uses_loop(a, ri, e->kids[dim], ri->loops[js]);
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

static bool held_enclosing(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
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

/* ==== 2. one loop, nothing held fixed ====================================== */

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

static bool uses_loop(const leir__analysis *a, const leir__eqinfo *info, const leir_expr *e,
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
      bool reduction = write && c.wi == c.ri && !uses_loop(a, wi, c.w, loop);
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
  if (hold == LEIR__HOLD_ENCLOSING) return held_enclosing(a, nest, loop, tensor, why, why_cap);
  if (loop >= nest->nloops) {
    snprintf(why, why_cap, "no such loop");
    return false;
  }
  return !held_none_conflict(a, &nest->loops[loop], tensor, why, why_cap);
}

/* ==== 3. the buffers of one nest =========================================== */

typedef struct acc_scan {
  const leir__analysis *a;
  uint32_t buffer;
  const leir_expr *first;     /* first access */
  const leir__eqinfo *first_info;
  bool same[LEIR_MAX_RANK];   /* entry k equal in all accesses so far */
  uint32_t count;
  const leir_expr *lhs;       /* the LHS access (when one) */
  const leir_equation *lhs_eq;
  uint32_t nlhs;
  const leir_expr *read;      /* a read at value position */
  const leir_equation *read_eq;
  bool read_in_subscript;
  bool multi_nest;            /* accesses sit in different (nested) nests */
} acc_scan;

static void scan_access(acc_scan *s, const leir_expr *t, const leir__eqinfo *info, bool is_lhs,
                        bool in_subscript) {
  if (s->count == 0) {
    s->first = t;
    s->first_info = info;
    for (uint32_t k = 0; k < LEIR_MAX_RANK; k++) s->same[k] = k < t->n;
  } else {
    for (uint32_t k = 0; k < s->first->n; k++)
      if (s->same[k] && (k >= t->n || !leir__expr_equal(s->a->p, s->first->kids[k], s->a->p,
                                                        t->kids[k])))
        s->same[k] = false;
  }
  if (info->nest != s->first_info->nest) s->multi_nest = true;
  s->count++;
  if (is_lhs) {
    s->lhs = t;
    s->lhs_eq = info->eq;
    s->nlhs++;
  } else {
    s->read = t;
    s->read_eq = info->eq;
    s->read_in_subscript = in_subscript;
  }
}

static void scan_expr(acc_scan *s, const leir_expr *e, const leir__eqinfo *info,
                      bool in_subscript) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (e->id < s->a->nids && s->a->expr_buffer[e->id] == s->buffer)
      scan_access(s, e, info, false, in_subscript);
    for (uint32_t k = 0; k < e->n; k++) scan_expr(s, e->kids[k], info, true);
    return;
  }
  for (uint32_t k = 0; k < e->n; k++) scan_expr(s, e->kids[k], info, in_subscript);
}

static void scan_eq(acc_scan *s, const leir__eqinfo *info) {
  const leir_expr *lhs = info->eq->lhs;
  if (lhs->id < s->a->nids && s->a->expr_buffer[lhs->id] == s->buffer)
    scan_access(s, lhs, info, true, false);
  for (uint32_t k = 0; k < lhs->n; k++) scan_expr(s, lhs->kids[k], info, true);
  scan_expr(s, info->eq->rhs, info, false);
}

static int is_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  return *slot == v->ud ? LEIR__VISIT_STOP : LEIR__VISIT_NEXT;
}

static bool contains(const leir_expr *e, const leir_expr *x) {
  leir__visit v = LEIR__VISIT_INIT(is_node, (void *)x);
  return !leir__visit_const(&v, e);
}

/* Is rhs an accumulation of x (x reached through + - * / or max/min)? */
static leir__dep_acc acc_kind(const leir_expr *rhs, const leir_expr *x) {
  const leir_expr *e = rhs;
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN)) {
    for (uint32_t k = 0; k < e->n; k++) {
      const leir_expr *arg = e->kids[k];
      while (arg->kind == LEIR_EXPR_PAREN) arg = arg->kids[0];
      if (arg == x) return LEIR__DEP_ACC_MAXMIN;
    }
    return LEIR__DEP_ACC_OTHER;
  }
  int family = 0; /* 1 additive, 2 multiplicative */
  while (e != x) {
    if (e->kind == LEIR_EXPR_PAREN) {
      e = e->kids[0];
      continue;
    }
    if (e->kind != LEIR_EXPR_BINARY) return LEIR__DEP_ACC_OTHER;
    int side = contains(e->kids[0], x) ? 0 : 1;
    int f;
    switch ((leir_op)e->op) {
      case LEIR_OP_ADD: f = 1; break;
      case LEIR_OP_SUB: f = side == 0 ? 1 : 0; break;
      case LEIR_OP_MUL: f = 2; break;
      case LEIR_OP_DIV: f = side == 0 ? 2 : 0; break;
      default: f = 0;
    }
    if (!f || (family && f != family)) return LEIR__DEP_ACC_OTHER;
    family = f;
    e = e->kids[side];
  }
  return family ? LEIR__DEP_ACC_ASSOC : LEIR__DEP_ACC_OTHER;
}

/* Loops of the nest (bits) pinned by subscript entry e, or 0. `info` gives
 * the extents of the equation's loop slots; the nest's own loops are slots
 * [outer, outer + nloops). Enclosing loops are constants here. */
static uint64_t pinned_by(const leir__analysis *a, const leir_expr *e, const leir__eqinfo *info,
                          uint32_t outer, uint32_t nloops, bool multi_nest) {
  leir__affine f;
  if (!leir__affine_of(a, e, &f)) return 0;
  int64_t coef[LEIR__AFFINE_TERMS], ext[LEIR__AFFINE_TERMS];
  uint32_t slot[LEIR__AFFINE_TERMS], n = 0;
  for (uint32_t i = 0; i < f.nterms; i++) {
    if (f.slot[i] < outer) continue; /* enclosing loops are constants here */
    if (f.slot[i] >= info->nloops) return 0;
    /* inner loops of different nested nests may share a name, not extents */
    if (multi_nest && f.slot[i] >= outer + nloops) return 0;
    coef[n] = f.coef[i];
    ext[n] = info->loops[f.slot[i]]->extent;
    slot[n++] = f.slot[i];
  }
  uint64_t det = leir__affine_determined(coef, ext, n), bits = 0;
  for (uint32_t i = 0; i < n; i++)
    if ((det >> i & 1) && slot[i] < outer + nloops) bits |= (uint64_t)1 << (slot[i] - outer);
  return bits;
}

static void collect_eqs(const leir__analysis *a, const leir_nest *n, uint32_t **v, uint32_t *len,
                        uint32_t *cap, bool *ok) {
  for (uint32_t k = 0; k < n->nitems && *ok; k++) {
    if (n->items[k].nest) {
      collect_eqs(a, n->items[k].nest, v, len, cap, ok);
      continue;
    }
    const leir_equation *eq = n->items[k].eq;
    uint32_t idx = eq->id < a->nids ? a->eq_index[eq->id] : LEIR__NONE;
    if (idx == LEIR__NONE) {
      *ok = false;
      return;
    }
    if (!leir__vec_grow32((void **)v, cap, (size_t)*len + 1, sizeof **v, 8)) {
      *ok = false;
      return;
    }
    (*v)[(*len)++] = idx;
  }
}

bool leir__dep_nest_buffers(const leir__analysis *a, const leir_nest *nest, uint32_t outer,
                            leir__dep_buffer **out, uint32_t *nout) {
  *out = NULL;
  *nout = 0;
  uint32_t nloops = nest->nloops;
  if (nloops > 64) return false;
  uint32_t *eqs = NULL, neqs = 0, cap = 0;
  bool ok = true;
  collect_eqs(a, nest, &eqs, &neqs, &cap, &ok);
  uint64_t unit = 0; /* loops of extent 1 never order anything */
  for (uint32_t l = 0; l < nloops; l++)
    if (nest->loops[l].extent == 1) unit |= (uint64_t)1 << l;
  uint64_t all = nloops == 64 ? ~(uint64_t)0 : (((uint64_t)1 << nloops) - 1);
  leir__dep_buffer *w = NULL;
  uint32_t nw = 0;
  if (ok && neqs) {
    w = calloc(neqs, sizeof *w);
    if (!w) ok = false;
  }
  for (uint32_t i = 0; i < neqs && ok; i++) {
    const leir__eqinfo *info = &a->eqs[eqs[i]];
    uint32_t b = info->lhs_buffer;
    if (b == LEIR__NONE) {
      ok = false;
      break;
    }
    bool seen = false;
    for (uint32_t j = 0; j < nw; j++) seen = seen || w[j].buffer == b;
    if (seen) continue;
    acc_scan s;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.buffer = b;
    for (uint32_t j = 0; j < neqs; j++) scan_eq(&s, &a->eqs[eqs[j]]);
    uint64_t pinned = unit;
    for (uint32_t k = 0; k < s.first->n && k < LEIR_MAX_RANK; k++)
      if (s.same[k])
        pinned |= pinned_by(a, s.first->kids[k], s.first_info, outer, nloops, s.multi_nest);
    leir__dep_buffer *wb = &w[nw++];
    wb->buffer = b;
    wb->pinned = pinned & all;
    wb->acc = LEIR__DEP_ACC_OTHER;
    bool all_same = true;
    for (uint32_t k = 0; k < s.first->n && k < LEIR_MAX_RANK; k++) all_same = all_same && s.same[k];
    if (s.count == 2 && s.nlhs == 1 && s.read && s.read_eq == s.lhs_eq && !s.read_in_subscript &&
        all_same)
      wb->acc = (uint8_t)acc_kind(s.lhs_eq->rhs, s.read);
  }
  free(eqs);
  if (!ok) {
    free(w);
    return false;
  }
  *out = w;
  *nout = nw;
  return true;
}

/* ==== 4. any two accesses =================================================== */

static bool subtree_has(const leir_expr *e, const leir_expr *target) {
  if (e == target) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (subtree_has(e->kids[k], target)) return true;
  return false;
}

/* Narrows env by the if_then_else guards on the path from e down to
 * `target`; false when the target never runs (an infeasible guard). The
 * path is unique, so env is narrowed in place (frames stay small: trees
 * may be 1000 levels high). */
static bool narrow_to(const leir__analysis *a, const leir_expr *e, const leir_expr *target,
                      leir__env *env) {
  while (e != target) {
    const leir_expr *next = NULL;
    for (uint32_t k = 0; k < e->n && !next; k++)
      if (subtree_has(e->kids[k], target)) next = e->kids[k];
    if (!next) return true; /* not below e: nothing to narrow */
    if (e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_IF_THEN_ELSE && e->n == 3 &&
        next != e->kids[0] && !leir__narrow(a, e->kids[0], next == e->kids[1], env))
      return false;
    e = next;
  }
  return true;
}

/* Loop ranges where access t of equation info runs; NULL when it never
 * runs or on allocation failure (*never tells which). */
static leir__env *access_env(const leir__analysis *a, const leir__eqinfo *info,
                             const leir_expr *t, bool *never) {
  *never = false;
  leir__env *env = malloc(sizeof *env);
  if (!env) return NULL;
  leir__env_init(env, info);
  if (t != info->eq->lhs) {
    const leir_expr *root = subtree_has(info->eq->rhs, t) ? info->eq->rhs : info->eq->lhs;
    if (!narrow_to(a, root, t, env)) {
      *never = true;
      free(env);
      return NULL;
    }
  }
  return env;
}

static int64_t gcd_abs(int64_t x, int64_t y) {
  if (x == INT64_MIN || y == INT64_MIN) return 1; /* too large: no information */
  x = x < 0 ? -x : x;
  y = y < 0 ? -y : y;
  while (y) {
    int64_t t = x % y;
    x = y;
    y = t;
  }
  return x;
}

typedef struct span {
  int64_t lo, hi;
  bool any; /* some point satisfies the constraint */
} span;

/* f = cx*i - cy*j at (i, j); false on overflow. */
static bool eval2(int64_t cx, int64_t i, int64_t cy, int64_t j, int64_t *f) {
  int64_t p, q;
  return !__builtin_mul_overflow(cx, i, &p) && !__builtin_mul_overflow(cy, j, &q) &&
         !__builtin_sub_overflow(p, q, f);
}

static bool take(span *s, int64_t cx, int64_t i, int64_t cy, int64_t j) {
  int64_t f;
  if (!eval2(cx, i, cy, j, &f)) return false;
  if (!s->any || f < s->lo) s->lo = f;
  if (!s->any || f > s->hi) s->hi = f;
  s->any = true;
  return true;
}

/* Bounds of cx*i - cy*j over i in [a,b], j in [c,d] with i < j (lt) or
 * i > j (!lt): the extremes of a linear function over a convex polygon
 * lie at its vertices, which are box corners or points of the line
 * j = i+1 (i = j+1) on the box's edges. */
static bool strict_span(int64_t cx, int64_t a, int64_t b, int64_t cy, int64_t c, int64_t d,
                        bool lt, span *s) {
  int64_t ci[4] = {a, a, b, b}, cj[4] = {c, d, c, d};
  for (int k = 0; k < 4; k++)
    if (lt ? ci[k] < cj[k] : ci[k] > cj[k])
      if (!take(s, cx, ci[k], cy, cj[k])) return false;
  /* the line: lt j = i+1; gt i = j+1 */
  int64_t on[4];
  if (lt) {
    on[0] = a, on[1] = b, on[2] = c - 1, on[3] = d - 1; /* values of i */
    for (int k = 0; k < 4; k++) {
      int64_t i = on[k], j;
      if (i < a || i > b || __builtin_add_overflow(i, 1, &j) || j < c || j > d) continue;
      if (!take(s, cx, i, cy, j)) return false;
    }
  } else {
    on[0] = c, on[1] = d, on[2] = a - 1, on[3] = b - 1; /* values of j */
    for (int k = 0; k < 4; k++) {
      int64_t j = on[k], i;
      if (j < c || j > d || __builtin_add_overflow(j, 1, &i) || i < a || i > b) continue;
      if (!take(s, cx, i, cy, j)) return false;
    }
  }
  return true;
}

/* Bounds of cx*i - cy*j under `rel`; false on overflow (then unknown). */
static bool pair_span(int64_t cx, leir__range ri, int64_t cy, leir__range rj, uint8_t rel,
                      span *s) {
  s->any = false;
  s->lo = s->hi = 0;
  switch ((leir__dep_rel)rel) {
    case LEIR__DEP_EQ: {
      int64_t lo = ri.lo > rj.lo ? ri.lo : rj.lo, hi = ri.hi < rj.hi ? ri.hi : rj.hi, c;
      if (lo > hi) return true; /* no common value */
      if (__builtin_sub_overflow(cx, cy, &c)) return false;
      return take(s, c, lo, 0, 0) && take(s, c, hi, 0, 0);
    }
    case LEIR__DEP_LT: return strict_span(cx, ri.lo, ri.hi, cy, rj.lo, rj.hi, true, s);
    case LEIR__DEP_GT: return strict_span(cx, ri.lo, ri.hi, cy, rj.lo, rj.hi, false, s);
    case LEIR__DEP_NE:
    default:
      return strict_span(cx, ri.lo, ri.hi, cy, rj.lo, rj.hi, true, s) &&
             strict_span(cx, ri.lo, ri.hi, cy, rj.lo, rj.hi, false, s);
  }
}

static uint32_t loop_slot(const leir__eqinfo *info, const leir__loop *l) {
  for (uint32_t s = 0; s < info->nloops; s++)
    if (info->loops[s] == l) return s;
  return LEIR__NONE;
}

typedef struct solve_ctx {
  const leir__eqinfo *xi, *yi;
  const leir__env *ex, *ey;
  uint32_t pair_of_x[LEIR__MAX_LOOPS]; /* index into pairs, or NONE */
  uint32_t pair_of_y[LEIR__MAX_LOOPS];
  uint32_t px[LEIR__MAX_LOOPS], py[LEIR__MAX_LOOPS]; /* slots of pair k */
  const leir__dep_pair *pairs;
  uint32_t npairs;
} solve_ctx;

static int64_t coef_at(const leir__affine *f, uint32_t slot) {
  for (uint32_t t = 0; t < f->nterms; t++)
    if (f->slot[t] == slot) return f->coef[t];
  return 0;
}

/* May fx(i) == fy(j) under the pairs? -1: cannot tell (overflow), 0: no,
 * 1: maybe. A relation no pair of values satisfies gives 0. */
static int dim_may_meet(const solve_ctx *s, const leir__affine *fx, const leir__affine *fy) {
  int64_t k, lo = 0, hi = 0, g = 0;
  if (__builtin_sub_overflow(fy->c, fx->c, &k)) return -1;
  /* the pairs (every pair constrains, even with zero coefficients) */
  for (uint32_t p = 0; p < s->npairs; p++) {
    if (s->px[p] == LEIR__NONE) continue;
    int64_t cx = coef_at(fx, s->px[p]), cy = coef_at(fy, s->py[p]);
    span sp;
    if (!pair_span(cx, s->ex->vars[s->px[p]], cy, s->ey->vars[s->py[p]], s->pairs[p].rel, &sp))
      return -1;
    if (!sp.any) return 0;
    if (__builtin_add_overflow(lo, sp.lo, &lo) || __builtin_add_overflow(hi, sp.hi, &hi))
      return -1;
    if (s->pairs[p].rel == LEIR__DEP_EQ) {
      int64_t c;
      if (__builtin_sub_overflow(cx, cy, &c)) return -1;
      g = gcd_abs(g, c);
    } else {
      g = gcd_abs(gcd_abs(g, cx), cy);
    }
  }
  /* free loops of either side */
  for (int side = 0; side < 2; side++) {
    const leir__affine *f = side ? fy : fx;
    const leir__env *env = side ? s->ey : s->ex;
    const uint32_t *paired = side ? s->pair_of_y : s->pair_of_x;
    for (uint32_t t = 0; t < f->nterms; t++) {
      if (paired[f->slot[t]] != LEIR__NONE) continue;
      leir__range r = env->vars[f->slot[t]];
      if (!r.known) return -1;
      int64_t c = f->coef[t], a, b;
      if (side && __builtin_mul_overflow(c, -1, &c)) return -1;
      if (__builtin_mul_overflow(c, r.lo, &a) || __builtin_mul_overflow(c, r.hi, &b)) return -1;
      if (__builtin_add_overflow(lo, a < b ? a : b, &lo) ||
          __builtin_add_overflow(hi, a < b ? b : a, &hi))
        return -1;
      /* (a term fixed at one value is a multiple of its coefficient too) */
      g = gcd_abs(g, c);
    }
  }
  if (k < lo || k > hi) return 0;
  if (g == 0) return k == 0;
  return k % g == 0;
}

bool leir__dep_may_meet(const leir__analysis *a, const leir__eqinfo *xi, const leir_expr *x,
                        const leir__eqinfo *yi, const leir_expr *y, const leir__dep_pair *pairs,
                        uint32_t npairs) {
  if (x->kind != LEIR_EXPR_TENSOR || y->kind != LEIR_EXPR_TENSOR) return false;
  uint32_t bx = x->id < a->nids ? a->expr_buffer[x->id] : LEIR__NONE;
  uint32_t by = y->id < a->nids ? a->expr_buffer[y->id] : LEIR__NONE;
  if (bx == LEIR__NONE || by == LEIR__NONE) return true; /* unbound: cannot tell */
  if (bx != by) return false;
  if (x->n != y->n) return true;
  bool nx = false, ny = false;
  leir__env *ex = access_env(a, xi, x, &nx), *ey = access_env(a, yi, y, &ny);
  solve_ctx *s = malloc(sizeof *s);
  bool meet = true;
  if (nx || ny) {
    meet = false; /* one of them never runs */
  } else if (ex && ey && s) {
    s->xi = xi;
    s->yi = yi;
    s->ex = ex;
    s->ey = ey;
    s->pairs = pairs;
    s->npairs = npairs > LEIR__MAX_LOOPS ? LEIR__MAX_LOOPS : npairs;
    for (uint32_t k = 0; k < LEIR__MAX_LOOPS; k++) s->pair_of_x[k] = s->pair_of_y[k] = LEIR__NONE;
    for (uint32_t p = 0; p < s->npairs; p++) {
      uint32_t sx = loop_slot(xi, pairs[p].x), sy = loop_slot(yi, pairs[p].y);
      s->px[p] = s->py[p] = LEIR__NONE;
      /* a loop in two pairs keeps its first (dropping a constraint is sound) */
      if (sx == LEIR__NONE || sy == LEIR__NONE || s->pair_of_x[sx] != LEIR__NONE ||
          s->pair_of_y[sy] != LEIR__NONE || !ex->vars[sx].known || !ey->vars[sy].known)
        continue;
      s->px[p] = sx;
      s->py[p] = sy;
      s->pair_of_x[sx] = s->pair_of_y[sy] = p;
    }
    /* a relation that no values satisfy (x < y over one-value ranges)
     * separates the accesses whatever their subscripts */
    leir__affine zero = {0, {0}, {0}, 0};
    if (dim_may_meet(s, &zero, &zero) == 0) meet = false;
    for (uint32_t k = 0; k < x->n && meet; k++) {
      leir__affine fx, fy;
      if (!leir__affine_of(a, x->kids[k], &fx) || !leir__affine_of(a, y->kids[k], &fy)) continue;
      if (dim_may_meet(s, &fx, &fy) == 0) meet = false;
    }
  }
  free(ex);
  free(ey);
  free(s);
  return meet;
}

/* ==== two nests ============================================================== */

typedef struct access {
  const leir__eqinfo *info;
  const leir_expr *t;
  uint32_t buffer;
  bool write;
} access;

typedef struct accesses {
  access *v;
  uint32_t n, cap;
  bool failed;
} accesses;

static void push_access(accesses *l, const leir__analysis *a, const leir__eqinfo *info,
                        const leir_expr *t, bool write) {
  uint32_t b = t->id < a->nids ? a->expr_buffer[t->id] : LEIR__NONE;
  if (!leir__vec_grow32((void **)&l->v, &l->cap, (size_t)l->n + 1, sizeof *l->v, 16)) {
    l->failed = true;
    return;
  }
  l->v[l->n++] = (access){info, t, b, write};
}

/* Every tensor node of the equations of top-level nest `top`: the
 * left-hand side (a write) and every read (iteratively: trees are deep). */
static void nest_accesses(const leir__analysis *a, uint32_t top, accesses *l) {
  for (uint32_t i = 0; i < a->neqs && !l->failed; i++) {
    const leir__eqinfo *info = &a->eqs[i];
    if (info->top != top) continue;
    push_access(l, a, info, info->eq->lhs, true);
    const leir_expr *small[64], **stack = small;
    size_t n = 0, cap = 64;
    for (uint32_t k = 0; k < info->eq->lhs->n; k++) {
      if (n == cap) break; /* rank <= LEIR_MAX_RANK < 64 */
      stack[n++] = info->eq->lhs->kids[k];
    }
    if (n < cap) stack[n++] = info->eq->rhs;
    while (n && !l->failed) {
      const leir_expr *e = stack[--n];
      if (e->kind == LEIR_EXPR_TENSOR) push_access(l, a, info, e, false);
      if (n + e->n > cap) {
        size_t nc = (n + e->n) * 2;
        const leir_expr **ns = malloc(nc * sizeof *ns);
        if (!ns) {
          l->failed = true;
          break;
        }
        memcpy(ns, stack, n * sizeof *ns);
        if (stack != small) free(stack);
        stack = ns;
        cap = nc;
      }
      for (uint32_t k = 0; k < e->n; k++) stack[n++] = e->kids[k];
    }
    if (stack != small) free(stack);
  }
}

static void say(char *why, size_t cap, const char *fmt, const char *name) {
  if (why && cap) snprintf(why, cap, fmt, name);
}

bool leir__dep_nests_commute(const leir__analysis *a, uint32_t n1, uint32_t n2) {
  accesses l1 = {0}, l2 = {0};
  nest_accesses(a, n1, &l1);
  nest_accesses(a, n2, &l2);
  bool ok = !l1.failed && !l2.failed;
  for (uint32_t i = 0; i < l1.n && ok; i++)
    for (uint32_t j = 0; j < l2.n && ok; j++) {
      const access *p = &l1.v[i], *q = &l2.v[j];
      if ((!p->write && !q->write) || p->buffer != q->buffer) continue;
      if (p->buffer == LEIR__NONE || leir__dep_may_meet(a, p->info, p->t, q->info, q->t, NULL, 0))
        ok = false;
    }
  free(l1.v);
  free(l2.v);
  return ok;
}

bool leir__dep_nests_fusable(const leir__analysis *a, uint32_t n1, uint32_t n2, uint32_t nfused,
                             char *why, size_t why_cap) {
  const leir_nest *x = a->p->nests[n1], *y = a->p->nests[n2];
  if (nfused == 0 || nfused > x->nloops || nfused > y->nloops || nfused > LEIR__MAX_LOOPS) {
    say(why, why_cap, "%s", "the nests do not have that many loops to fuse");
    return false;
  }
  for (uint32_t k = 0; k < nfused; k++)
    if (x->loops[k].extent != y->loops[k].extent) {
      say(why, why_cap, "fused loop '%s' has different extents in the two nests",
          leir__sym_name(a->p, x->loops[k].sym));
      return false;
    }
  accesses l1 = {0}, l2 = {0};
  nest_accesses(a, n1, &l1);
  nest_accesses(a, n2, &l2);
  bool ok = !l1.failed && !l2.failed;
  if (!ok) say(why, why_cap, "%s", "out of memory");
  leir__dep_pair pairs[LEIR__MAX_LOOPS];
  for (uint32_t i = 0; i < l1.n && ok; i++)
    for (uint32_t j = 0; j < l2.n && ok; j++) {
      const access *p = &l1.v[i], *q = &l2.v[j];
      if ((!p->write && !q->write) || p->buffer != q->buffer) continue;
      /* reversed: n1's iteration lexicographically after n2's on the fused
       * loops (equal on loops 0..k-1, greater on loop k) */
      for (uint32_t k = 0; k < nfused && ok; k++) {
        for (uint32_t m = 0; m <= k; m++)
          pairs[m] = (leir__dep_pair){&x->loops[m], &y->loops[m],
                                      (uint8_t)(m < k ? LEIR__DEP_EQ : LEIR__DEP_GT)};
        if (p->buffer == LEIR__NONE ||
            leir__dep_may_meet(a, p->info, p->t, q->info, q->t, pairs, k + 1)) {
          ok = false;
          say(why, why_cap,
              "an iteration of the second nest would touch an element of %s before the "
              "iteration of the first nest that writes or reads it",
              leir__sym_name(a->p, p->t->sym));
        }
      }
    }
  free(l1.v);
  free(l2.v);
  return ok;
}

bool leir__dep_inlinable(const leir__analysis *a, uint32_t producer, uint32_t consumer,
                         char *why, size_t why_cap) {
  const leir_nest *n = a->p->nests[producer];
  if (consumer <= producer || consumer >= a->p->nnests || n->nitems != 1 || !n->items[0].eq) {
    say(why, why_cap, "%s", "the producer is not a nest with one equation before the consumer");
    return false;
  }
  const leir_equation *eq = n->items[0].eq;
  uint32_t ei = eq->id < a->nids ? a->eq_index[eq->id] : LEIR__NONE;
  if (ei == LEIR__NONE) return false;
  const leir__eqinfo *pi = &a->eqs[ei];
  uint32_t b = pi->lhs_buffer;
  const char *name = leir__sym_name(a->p, eq->lhs->sym);
  if (b == LEIR__NONE || a->buffers[b].first_writer != ei || a->buffers[b].last_writer != ei) {
    say(why, why_cap, "%s is written by more than one equation", name);
    return false;
  }
  accesses mine = {0};
  nest_accesses(a, producer, &mine);
  bool ok = !mine.failed;
  for (uint32_t i = 0; i < mine.n && ok; i++)
    if (!mine.v[i].write && mine.v[i].buffer == b) {
      say(why, why_cap, "%s reads itself (an accumulation)", name);
      ok = false;
    }
  for (uint32_t m = producer + 1; m <= consumer && ok; m++) {
    accesses later = {0};
    nest_accesses(a, m, &later);
    ok = !later.failed;
    for (uint32_t j = 0; j < later.n && ok; j++) {
      const access *w = &later.v[j];
      if (!w->write) continue;
      for (uint32_t i = 0; i < mine.n && ok; i++) {
        const access *r = &mine.v[i];
        if (r->write || r->buffer != w->buffer) continue;
        if (w->buffer == LEIR__NONE ||
            leir__dep_may_meet(a, w->info, w->t, r->info, r->t, NULL, 0)) {
          say(why, why_cap, "a later nest writes %s, which the producer reads",
              leir__sym_name(a->p, r->t->sym));
          ok = false;
        }
      }
    }
    free(later.v);
  }
  free(mine.v);
  return ok;
}
