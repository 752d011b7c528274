/*
 * Integer ranges of index expressions, and narrowing by if_then_else guards
 * (spec/leir.md §3.6: bounds are proven by interval analysis, narrowed by
 * the guard on the lazily evaluated branch).
 *
 * An environment holds a range per loop variable plus a few affine facts
 * ("3*d+g-1 >= 0") learnt from guards over several variables; the range of
 * an expression is its interval, intersected with any fact about the same
 * affine form. Integer intermediates contribute the range of the values
 * written into them (indirect indices built by precompute_indices).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

static const leir__range UNKNOWN = {0, 0, false};

static leir__range mk(int64_t lo, int64_t hi) {
  leir__range r = {lo, hi, true};
  return r;
}

static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

leir__range leir__range_union(leir__range a, leir__range b) {
  if (!a.known || !b.known) return UNKNOWN;
  return mk(min2(a.lo, b.lo), max2(a.hi, b.hi));
}

void leir__env_init(leir__env *env, const leir__eqinfo *info) {
  env->nvars = info->nloops;
  env->nfacts = 0;
  env->natoms = 0;
  for (uint32_t k = 0; k < info->nloops; k++) {
    env->vars[k].lo = 0;
    env->vars[k].hi = info->loops[k]->extent - 1;
    env->vars[k].known = info->loops[k]->extent >= 1;
  }
}

/* Python-style floor division; *ok = false on overflow or zero divisor. */
static int64_t floordiv(int64_t a, int64_t b, bool *ok) {
  if (b == 0 || (a == INT64_MIN && b == -1)) {
    *ok = false;
    return 0;
  }
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static leir__range mul_range(leir__range l, leir__range r) {
  int64_t c[4];
  if (__builtin_mul_overflow(l.lo, r.lo, &c[0]) || __builtin_mul_overflow(l.lo, r.hi, &c[1]) ||
      __builtin_mul_overflow(l.hi, r.lo, &c[2]) || __builtin_mul_overflow(l.hi, r.hi, &c[3]))
    return UNKNOWN;
  return mk(min2(min2(c[0], c[1]), min2(c[2], c[3])), max2(max2(c[0], c[1]), max2(c[2], c[3])));
}

static leir__range floordiv_range(leir__range l, leir__range r) {
  if (r.lo <= 0 && r.hi >= 0) return UNKNOWN; /* divisor may be zero */
  bool ok = true;
  int64_t c0 = floordiv(l.lo, r.lo, &ok), c1 = floordiv(l.lo, r.hi, &ok);
  int64_t c2 = floordiv(l.hi, r.lo, &ok), c3 = floordiv(l.hi, r.hi, &ok);
  if (!ok) return UNKNOWN;
  return mk(min2(min2(c0, c1), min2(c2, c3)), max2(max2(c0, c1), max2(c2, c3)));
}

static leir__range mod_range(leir__range l, leir__range r) {
  if (r.lo > 0) {
    /* floor modulo by a positive divisor lies in [0, divisor-1] */
    if (r.lo == r.hi && l.lo >= 0 && l.hi < r.lo) return l;
    return mk(0, r.hi - 1);
  }
  if (r.hi < 0) {
    if (r.lo == r.hi && l.hi <= 0 && l.lo > r.lo) return l;
    return mk(r.lo + 1, 0);
  }
  return UNKNOWN;
}

/* ---- affine forms ------------------------------------------------------ */

static uint32_t slot_of(const leir__analysis *a, const leir_expr *e) {
  return e->id < a->nids ? a->expr_loop[e->id] : LEIR__NONE;
}

static bool aff_const(leir__affine *f, int64_t c) {
  f->nterms = 0;
  f->c = c;
  return true;
}

/* f = x + sign * y; false on overflow or too many terms. */
static bool aff_add(leir__affine *f, const leir__affine *x, const leir__affine *y, int sign) {
  leir__affine r;
  r.nterms = 0;
  uint32_t i = 0, j = 0;
  while (i < x->nterms || j < y->nterms) {
    uint32_t slot;
    int64_t coef;
    if (j >= y->nterms || (i < x->nterms && x->slot[i] < y->slot[j])) {
      slot = x->slot[i];
      coef = x->coef[i++];
    } else {
      int64_t yc = y->coef[j];
      if (sign < 0) {
        if (yc == INT64_MIN) return false;
        yc = -yc;
      }
      if (i < x->nterms && x->slot[i] == y->slot[j]) {
        slot = x->slot[i];
        if (__builtin_add_overflow(x->coef[i], yc, &coef)) return false;
        i++;
        j++;
      } else {
        slot = y->slot[j++];
        coef = yc;
      }
    }
    if (coef == 0) continue;
    if (r.nterms == LEIR__AFFINE_TERMS) return false;
    r.slot[r.nterms] = slot;
    r.coef[r.nterms++] = coef;
  }
  int64_t yc = y->c;
  if (sign < 0) {
    if (yc == INT64_MIN) return false;
    yc = -yc;
  }
  if (__builtin_add_overflow(x->c, yc, &r.c)) return false;
  *f = r;
  return true;
}

static bool aff_scale(leir__affine *f, int64_t k) {
  for (uint32_t i = 0; i < f->nterms; i++)
    if (__builtin_mul_overflow(f->coef[i], k, &f->coef[i])) return false;
  if (__builtin_mul_overflow(f->c, k, &f->c)) return false;
  if (k == 0) f->nterms = 0;
  return true;
}

bool leir__affine_of(const leir__analysis *a, const leir_expr *e, leir__affine *f) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: return e->u.num->is_int && aff_const(f, e->u.num->ival);
    case LEIR_EXPR_VAR: {
      uint32_t slot = slot_of(a, e);
      if (slot == LEIR__NONE) return false;
      f->nterms = 1;
      f->slot[0] = slot;
      f->coef[0] = 1;
      f->c = 0;
      return true;
    }
    case LEIR_EXPR_PAREN: return leir__affine_of(a, e->kids[0], f);
    case LEIR_EXPR_NEG: return leir__affine_of(a, e->kids[0], f) && aff_scale(f, -1);
    case LEIR_EXPR_BINARY: {
      leir__affine l, r;
      if (!leir__affine_of(a, e->kids[0], &l) || !leir__affine_of(a, e->kids[1], &r)) return false;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: return aff_add(f, &l, &r, 1);
        case LEIR_OP_SUB: return aff_add(f, &l, &r, -1);
        case LEIR_OP_MUL:
          if (l.nterms && r.nterms) return false;
          if (l.nterms) {
            *f = l;
            return aff_scale(f, r.c);
          }
          *f = r;
          return aff_scale(f, l.c);
        default: return false;
      }
    }
    default: return false;
  }
}

/* Affine form of a read D_{i..} of an index table defined once as
 * D_{v..} = f(v..) with f affine: f with every v replaced by the read's
 * index (itself through leir__affine_subst_of). */
static NOINLINE bool table_affine(const leir__analysis *a, const leir_expr *e, leir__affine *f) {
  uint32_t b = e->id < a->nids ? a->expr_buffer[e->id] : LEIR__NONE;
  /* values[b] is known only when every value fits the table's dtype */
  if (b == LEIR__NONE || !a->value_form_def || a->value_form_def[b] >= a->neqs ||
      !a->values[b].known)
    return false;
  const leir__eqinfo *def = &a->eqs[a->value_form_def[b]];
  const leir_expr *lhs = def->eq->lhs;
  if (lhs->n != e->n) return false;
  /* Write the table's value g (affine in its writing loops) as
   * sum_k alpha_k * L_k + c over its left-hand subscripts L_k, peeling one
   * subscript at a time by its first term; then the element at index i_k is
   * sum_k alpha_k * i_k + c wherever it was written, and the read's value is
   * that form of its own subscripts. Plain loop variables are the case
   * precompute_indices builds; split or fused writers (D_{d*4+tx}) the case
   * a later loop_split or loop_fusion leaves. */
  leir__affine *w = malloc(4 * sizeof *w), *g = w, *out = w + 1, *term = w + 2, *sub = w + 3;
  bool ok = w != NULL;
  if (ok) *g = a->value_form[b];
  if (ok) aff_const(out, 0);
  for (uint32_t k = 0; ok && k < lhs->n; k++) {
    ok = leir__affine_of(a, lhs->kids[k], sub);
    if (!ok || sub->nterms == 0) continue;
    uint32_t t = 0;
    while (t < g->nterms && g->slot[t] != sub->slot[0]) t++;
    if (t == g->nterms) continue; /* alpha_k = 0 */
    if (sub->coef[0] == 0 || (sub->coef[0] == -1 && g->coef[t] == INT64_MIN) ||
        g->coef[t] % sub->coef[0] != 0) {
      ok = false;
      break;
    }
    int64_t alpha = g->coef[t] / sub->coef[0];
    ok = aff_scale(sub, alpha) && aff_add(g, g, sub, -1) &&
         leir__affine_subst_of(a, e->kids[k], term) && aff_scale(term, alpha) &&
         aff_add(out, out, term, 1);
  }
  ok = ok && g->nterms == 0;
  if (ok) {
    aff_const(term, g->c);
    ok = aff_add(out, out, term, 1);
  }
  if (ok) *f = *out;
  free(w);
  return ok;
}

bool leir__affine_subst_of(const leir__analysis *a, const leir_expr *e, leir__affine *f) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_TENSOR: return table_affine(a, e, f);
    case LEIR_EXPR_PAREN: return leir__affine_subst_of(a, e->kids[0], f);
    case LEIR_EXPR_NEG: return leir__affine_subst_of(a, e->kids[0], f) && aff_scale(f, -1);
    case LEIR_EXPR_BINARY: {
      if (e->op != LEIR_OP_ADD && e->op != LEIR_OP_SUB && e->op != LEIR_OP_MUL) return false;
      leir__affine *lr = malloc(2 * sizeof *lr); /* off the stack: trees may be deep */
      if (!lr) return false;
      bool ok = leir__affine_subst_of(a, e->kids[0], &lr[0]) &&
                leir__affine_subst_of(a, e->kids[1], &lr[1]);
      if (ok && e->op == LEIR_OP_MUL) {
        if (lr[0].nterms && lr[1].nterms) ok = false;
        else if (lr[0].nterms) *f = lr[0], ok = aff_scale(f, lr[1].c);
        else *f = lr[1], ok = aff_scale(f, lr[0].c);
      } else if (ok) {
        ok = aff_add(f, &lr[0], &lr[1], e->op == LEIR_OP_ADD ? 1 : -1);
      }
      free(lr);
      return ok;
    }
    default: return leir__affine_of(a, e, f);
  }
}

/* 1 when x and y have the same terms, -1 when y's are x's negated, else 0. */
static int terms_relation(const leir__affine *x, const leir__affine *y) {
  if (x->nterms != y->nterms || x->nterms == 0) return 0;
  bool same = true, negated = true;
  for (uint32_t i = 0; i < x->nterms; i++) {
    if (x->slot[i] != y->slot[i]) return 0;
    same = same && x->coef[i] == y->coef[i];
    negated = negated && x->coef[i] != INT64_MIN && -x->coef[i] == y->coef[i];
  }
  return same ? 1 : negated ? -1 : 0;
}

/* Facts use INT64_MIN / INT64_MAX for "unbounded"; shifting keeps them so
 * (an overflow also means unbounded, which is always sound). */
static int64_t shift_lo(int64_t lo, int64_t by) {
  int64_t r;
  if (lo == INT64_MIN || __builtin_add_overflow(lo, by, &r)) return INT64_MIN;
  return r;
}

static int64_t shift_hi(int64_t hi, int64_t by) {
  int64_t r;
  if (hi == INT64_MAX || __builtin_add_overflow(hi, by, &r)) return INT64_MAX;
  return r;
}

/* Range of an affine form from the variable ranges (exact for affine forms
 * since every variable appears once), intersected with known facts. */
static leir__range affine_range(const leir__affine *f, const leir__env *env) {
  int64_t lo = f->c, hi = f->c;
  for (uint32_t i = 0; i < f->nterms; i++) {
    const leir__range *v = &env->vars[f->slot[i]];
    if (!v->known) return UNKNOWN;
    leir__range t = mul_range(mk(f->coef[i], f->coef[i]), *v);
    if (!t.known || __builtin_add_overflow(lo, t.lo, &lo) || __builtin_add_overflow(hi, t.hi, &hi))
      return UNKNOWN;
  }
  for (uint32_t k = 0; k < env->nfacts; k++) {
    const leir__fact *fact = &env->facts[k];
    /* f = sign * form + f->c, with lo <= form <= hi (form.c is 0) */
    int sign = terms_relation(&fact->form, f);
    if (!sign) continue;
    int64_t flo = fact->lo, fhi = fact->hi;
    if (sign < 0) {
      flo = fact->hi == INT64_MAX ? INT64_MIN : -fact->hi;
      fhi = fact->lo == INT64_MIN ? INT64_MAX : -fact->lo;
    }
    lo = max2(lo, shift_lo(flo, f->c));
    hi = min2(hi, shift_hi(fhi, f->c));
  }
  if (lo > hi) return mk(lo, lo); /* infeasible: the branch never runs */
  return mk(lo, hi);
}

/* An environment is a few KB. The recursive functions below keep none in
 * their own frames (expression trees may be 1000 levels high and run on
 * small thread stacks): the few places that need a copy take one from the
 * heap, in separate non-inlined functions. On allocation failure they fall
 * back to what is always sound (no narrowing, or "unknown"). */
static leir__env *env_dup(const leir__env *src) {
  leir__env *e = malloc(sizeof *e);
  if (e) leir__env_copy(e, src);
  return e;
}


/* Range of a read of an integer intermediate E_{i..} defined once as
 * E_{v..} = f(v..): f over the loop ranges narrowed to the read's indices. */
static NOINLINE leir__range substituted_range(const leir__analysis *a, const leir_expr *e,
                                              uint32_t b, const leir__env *env) {
  const leir__eqinfo *def = &a->eqs[a->value_def[b]];
  const leir_expr *lhs = def->eq->lhs;
  if (lhs->n != e->n) return a->values[b];
  leir__env *sub = malloc(sizeof *sub);
  if (!sub) return a->values[b];
  leir__env_init(sub, def);
  leir__range v = a->values[b];
  for (uint32_t k = 0; k < e->n; k++) {
    uint32_t slot = slot_of(a, lhs->kids[k]);
    leir__range r = leir__index_range(a, e->kids[k], env);
    if (slot >= sub->nvars || !r.known) continue;
    sub->vars[slot].lo = max2(sub->vars[slot].lo, r.lo);
    sub->vars[slot].hi = min2(sub->vars[slot].hi, r.hi);
    if (sub->vars[slot].lo > sub->vars[slot].hi) goto done;
  }
  v = leir__index_range(a, def->eq->rhs, sub);
  leir__range all = a->values[b];
  if (!v.known) {
    v = all;
  } else if (all.known) {
    v.lo = max2(v.lo, all.lo);
    v.hi = min2(v.hi, all.hi);
    if (v.lo > v.hi) v = all;
  }
done:
  free(sub);
  return v;
}

/* A read of an index table: an affine table read through
 * (leir__affine_subst_of) has the range of its affine form, which the
 * guard facts narrow (if_then_else(d*3+g-1<0,0,A_{E_{d,g}}) with
 * E_{d,g}=d*3+g-1); otherwise substituted_range. */
static NOINLINE leir__range table_range(const leir__analysis *a, const leir_expr *e, uint32_t b,
                                        const leir__env *env) {
  leir__affine *f = malloc(sizeof *f); /* off the stack: tables nest */
  if (f && table_affine(a, e, f)) {
    leir__range r = affine_range(f, env);
    free(f);
    if (r.known) return r;
  } else {
    free(f);
  }
  uint32_t d = a->value_def[b];
  if (d == LEIR__NONE || d >= a->neqs) return a->values[b];
  return substituted_range(a, e, b, env);
}

/* Range of if_then_else(c, t, f): each branch under its narrowed guard. */
static NOINLINE leir__range guarded_range(const leir__analysis *a, const leir_expr *e,
                                          const leir__env *env) {
  leir__env *t = env_dup(env), *f = env_dup(env);
  leir__range r = UNKNOWN;
  if (t && f) {
    bool tt = leir__narrow(a, e->kids[0], true, t);
    bool ff = leir__narrow(a, e->kids[0], false, f);
    if (tt && ff)
      r = leir__range_union(leir__index_range(a, e->kids[1], t), leir__index_range(a, e->kids[2], f));
    else if (tt)
      r = leir__index_range(a, e->kids[1], t);
    else if (ff)
      r = leir__index_range(a, e->kids[2], f);
  }
  free(t);
  free(f);
  return r;
}

static leir__range index_range_raw(const leir__analysis *a, const leir_expr *e,
                                   const leir__env *env);

/* The range, intersected with what guards taught about this very
 * sub-expression when it is not affine (an atom). */
leir__range leir__index_range(const leir__analysis *a, const leir_expr *e, const leir__env *env) {
  leir__range r = index_range_raw(a, e, env);
  if (!r.known || !env->natoms || e->kind != LEIR_EXPR_BINARY ||
      (e->op != LEIR_OP_FLOORDIV && e->op != LEIR_OP_MOD))
    return r;
  for (uint32_t k = 0; k < env->natoms; k++) {
    if (!leir__expr_equal(a->p, env->atoms[k].x, a->p, e)) continue;
    r.lo = max2(r.lo, env->atoms[k].lo);
    r.hi = min2(r.hi, env->atoms[k].hi);
    if (r.lo > r.hi) r.hi = r.lo; /* the branch cannot run; keep a point */
  }
  return r;
}

static leir__range index_range_raw(const leir__analysis *a, const leir_expr *e,
                                   const leir__env *env) {
  leir__affine f;
  if (e->kind != LEIR_EXPR_NUMBER && e->kind != LEIR_EXPR_VAR && leir__affine_of(a, e, &f))
    return affine_range(&f, env);
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
      return e->u.num->is_int ? mk(e->u.num->ival, e->u.num->ival) : UNKNOWN;
    case LEIR_EXPR_VAR: {
      uint32_t slot = slot_of(a, e);
      return slot == LEIR__NONE || slot >= env->nvars ? UNKNOWN : env->vars[slot];
    }
    case LEIR_EXPR_TENSOR: {
      uint32_t b = e->id < a->nids ? a->expr_buffer[e->id] : LEIR__NONE;
      if (b == LEIR__NONE || !a->values) return UNKNOWN;
      return table_range(a, e, b, env);
    }
    case LEIR_EXPR_PAREN: return leir__index_range(a, e->kids[0], env);
    case LEIR_EXPR_NEG: {
      leir__range r = leir__index_range(a, e->kids[0], env);
      if (!r.known || r.lo == INT64_MIN) return UNKNOWN;
      return mk(-r.hi, -r.lo);
    }
    case LEIR_EXPR_BINARY: {
      leir__range l = leir__index_range(a, e->kids[0], env);
      if (!l.known) return UNKNOWN;
      leir__range r = leir__index_range(a, e->kids[1], env);
      if (!r.known) return UNKNOWN;
      int64_t lo, hi;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD:
          if (__builtin_add_overflow(l.lo, r.lo, &lo) || __builtin_add_overflow(l.hi, r.hi, &hi))
            return UNKNOWN;
          return mk(lo, hi);
        case LEIR_OP_SUB:
          if (__builtin_sub_overflow(l.lo, r.hi, &lo) || __builtin_sub_overflow(l.hi, r.lo, &hi))
            return UNKNOWN;
          return mk(lo, hi);
        case LEIR_OP_MUL: return mul_range(l, r);
        case LEIR_OP_FLOORDIV: return floordiv_range(l, r);
        case LEIR_OP_MOD: return mod_range(l, r);
        default: return UNKNOWN;
      }
    }
    case LEIR_EXPR_CALL:
      if ((e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN) && e->n >= 1) {
        leir__range acc = leir__index_range(a, e->kids[0], env);
        for (uint32_t k = 1; k < e->n && acc.known; k++) {
          leir__range r = leir__index_range(a, e->kids[k], env);
          if (!r.known) return UNKNOWN;
          acc = e->op == LEIR_OP_MAX ? mk(max2(acc.lo, r.lo), max2(acc.hi, r.hi))
                                     : mk(min2(acc.lo, r.lo), min2(acc.hi, r.hi));
        }
        return acc;
      }
      if (e->op == LEIR_OP_ABS && e->n == 1) {
        leir__range r = leir__index_range(a, e->kids[0], env);
        if (!r.known || r.lo == INT64_MIN) return UNKNOWN;
        if (r.lo >= 0) return r;
        if (r.hi <= 0) return mk(-r.hi, -r.lo);
        return mk(0, max2(-r.lo, r.hi));
      }
      if (e->op == LEIR_OP_IF_THEN_ELSE && e->n == 3) return guarded_range(a, e, env);
      return UNKNOWN;
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: return mk(0, 1);
    default: return UNKNOWN;
  }
}

/* ---- guards ----------------------------------------------------------- */

static leir_op negate(leir_op op) {
  switch (op) {
    case LEIR_OP_LT: return LEIR_OP_GE;
    case LEIR_OP_LE: return LEIR_OP_GT;
    case LEIR_OP_GT: return LEIR_OP_LE;
    case LEIR_OP_GE: return LEIR_OP_LT;
    case LEIR_OP_EQ: return LEIR_OP_NE;
    case LEIR_OP_NE: return LEIR_OP_EQ;
    default: return op;
  }
}

static leir_op flip(leir_op op) {
  switch (op) {
    case LEIR_OP_LT: return LEIR_OP_GT;
    case LEIR_OP_LE: return LEIR_OP_GE;
    case LEIR_OP_GT: return LEIR_OP_LT;
    case LEIR_OP_GE: return LEIR_OP_LE;
    default: return op;
  }
}

static int64_t ceildiv(int64_t a, int64_t b, bool *ok) {
  if (a == INT64_MIN) {
    *ok = false;
    return 0;
  }
  return -floordiv(-a, b, ok);
}

/* Bounds [lo, hi] on t from `coef * t  op  k` (coef > 0). false: no t. */
static bool solve(int64_t coef, leir_op op, int64_t k, int64_t *lo, int64_t *hi) {
  bool ok = true;
  switch (op) {
    case LEIR_OP_LT:
      if (k == INT64_MIN) return false;
      *hi = min2(*hi, floordiv(k - 1, coef, &ok));
      break;
    case LEIR_OP_LE: *hi = min2(*hi, floordiv(k, coef, &ok)); break;
    case LEIR_OP_GT:
      if (k == INT64_MAX) return false;
      *lo = max2(*lo, ceildiv(k + 1, coef, &ok));
      break;
    case LEIR_OP_GE: *lo = max2(*lo, ceildiv(k, coef, &ok)); break;
    case LEIR_OP_EQ:
      if (k % coef != 0) return false;
      *lo = max2(*lo, k / coef);
      *hi = min2(*hi, k / coef);
      break;
    default: return true;
  }
  return ok ? *lo <= *hi : true;
}

/* `x op k` with x not affine and k a constant: x + c or x - c or x with x
 * an integer sub-expression the interval analysis cannot see through
 * (floor division, modulo) becomes an atom fact on x, which
 * leir__index_range applies where the same x is read (a guard
 * if_then_else(tx//4-1<0,0,G_{tx//4-1}) that compute_inline leaves). */
static bool constrain_atom(const leir__analysis *a, const leir_expr *x, leir_op op,
                           const leir__affine *k_form, leir__env *env) {
  if (k_form->nterms || op == LEIR_OP_NE) return true;
  int64_t k = k_form->c, shift = 0;
  while (x->kind == LEIR_EXPR_PAREN) x = x->kids[0];
  if (x->kind == LEIR_EXPR_BINARY && (x->op == LEIR_OP_ADD || x->op == LEIR_OP_SUB)) {
    leir__affine c;
    if (leir__affine_of(a, x->kids[1], &c) && c.nterms == 0) {
      shift = x->op == LEIR_OP_ADD ? c.c : -c.c; /* x = y + shift */
      if (c.c == INT64_MIN) return true;
      x = x->kids[0];
    } else if (x->op == LEIR_OP_ADD && leir__affine_of(a, x->kids[0], &c) && c.nterms == 0) {
      shift = c.c;
      x = x->kids[1];
    }
    while (x->kind == LEIR_EXPR_PAREN) x = x->kids[0];
  }
  /* only floor division and modulo: cheap to match, and computing the
   * range of anything larger here (a nested if_then_else) would narrow
   * guards inside guards, exponentially */
  if (x->kind != LEIR_EXPR_BINARY || (x->op != LEIR_OP_FLOORDIV && x->op != LEIR_OP_MOD))
    return true;
  int64_t bound;
  if (__builtin_sub_overflow(k, shift, &bound)) return true; /* y op k - shift */
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  for (uint32_t i = 0; i < env->natoms; i++)
    if (leir__expr_equal(a->p, env->atoms[i].x, a->p, x)) {
      lo = max2(lo, env->atoms[i].lo);
      hi = min2(hi, env->atoms[i].hi);
    }
  if (!solve(1, op, bound, &lo, &hi)) return false;
  for (uint32_t i = 0; i < env->natoms; i++)
    if (leir__expr_equal(a->p, env->atoms[i].x, a->p, x)) {
      env->atoms[i].lo = lo;
      env->atoms[i].hi = hi;
      return true;
    }
  if (env->natoms < LEIR__MAX_ATOMS) {
    leir__atom *at = &env->atoms[env->natoms++];
    at->x = x;
    at->lo = lo;
    at->hi = hi;
  }
  return true;
}

/* Applies `l op r` (a single comparison) to env; false if unsatisfiable. */
static bool constrain(const leir__analysis *a, const leir_expr *l, leir_op op,
                      const leir_expr *r, leir__env *env) {
  leir__affine L, R, F;
  bool la = leir__affine_of(a, l, &L), ra = leir__affine_of(a, r, &R);
  if (la != ra) return constrain_atom(a, la ? r : l, la ? flip(op) : op, la ? &L : &R, env);
  if (!la || !aff_add(&F, &L, &R, -1)) return true;
  /* F = l - r; the constraint is F op 0 */
  leir__range fr = affine_range(&F, env);
  if (F.nterms == 0 || (fr.known && fr.lo == fr.hi && F.nterms)) {
    if (!fr.known) return true;
    int64_t v = fr.lo;
    switch (op) {
      case LEIR_OP_LT: return v < 0;
      case LEIR_OP_LE: return v <= 0;
      case LEIR_OP_GT: return v > 0;
      case LEIR_OP_GE: return v >= 0;
      case LEIR_OP_EQ: return v == 0;
      case LEIR_OP_NE: return v != 0;
      default: return true;
    }
  }
  if (op == LEIR_OP_NE) return true;
  if (F.nterms == 1) {
    /* coef * v + c op 0  ->  bounds on v */
    int64_t coef = F.coef[0], c = F.c;
    if (coef < 0) {
      if (coef == INT64_MIN || c == INT64_MIN) return true;
      coef = -coef;
      c = -c;
      op = flip(op);
    }
    if (c == INT64_MIN) return true;
    leir__range *v = &env->vars[F.slot[0]];
    if (!v->known) return true;
    int64_t lo = v->lo, hi = v->hi;
    if (!solve(coef, op, -c, &lo, &hi)) return false;
    v->lo = lo;
    v->hi = hi;
    return true;
  }
  /* Several variables: remember "terms op -c" as a fact on the terms. The
   * leading coefficient is made positive so that both halves of a guard
   * like 0<=c*2+g-1<8 land on the same form (and reads of either sign
   * match it, see affine_range). */
  if (F.coef[0] < 0) {
    for (uint32_t i = 0; i < F.nterms; i++) {
      if (F.coef[i] == INT64_MIN) return true;
      F.coef[i] = -F.coef[i];
    }
    if (F.c == INT64_MIN) return true;
    F.c = -F.c;
    op = flip(op);
  }
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  if (F.c == INT64_MIN) return true;
  if (!solve(1, op, -F.c, &lo, &hi)) return false;
  leir__affine terms = F;
  terms.c = 0;
  leir__range tr = affine_range(&terms, env); /* includes earlier facts */
  if (tr.known && (max2(lo, tr.lo) > min2(hi, tr.hi))) return false;
  for (uint32_t k = 0; k < env->nfacts; k++) {
    leir__fact *fact = &env->facts[k];
    if (terms_relation(&fact->form, &terms) != 1) continue;
    fact->lo = max2(fact->lo, lo);
    fact->hi = min2(fact->hi, hi);
    return true;
  }
  if (env->nfacts < LEIR__MAX_FACTS) {
    leir__fact *fact = &env->facts[env->nfacts++];
    fact->form = terms;
    fact->lo = lo;
    fact->hi = hi;
  }
  return true;
}

/* Hull of two narrowed copies: sound for a disjunction. */
static NOINLINE bool either(const leir__analysis *a, const leir_expr *x, bool tx,
                            const leir_expr *y, bool ty, leir__env *env) {
  leir__env *bx = env_dup(env), *by = env_dup(env);
  bool feasible = true; /* without memory: no narrowing, which is sound */
  if (bx && by) {
    bool sx = leir__narrow(a, x, tx, bx);
    bool sy = leir__narrow(a, y, ty, by);
    if (!sx && !sy) {
      feasible = false;
    } else if (!sx) {
      leir__env_copy(env, by);
    } else if (!sy) {
      leir__env_copy(env, bx);
    } else {
      for (uint32_t k = 0; k < env->nvars; k++)
        if (env->vars[k].known) env->vars[k] = leir__range_union(bx->vars[k], by->vars[k]);
    }
  }
  free(bx);
  free(by);
  return feasible;
}

/* not (c1 and c2 and ...) for a comparison chain: the hull of each negated
 * link. */
static NOINLINE bool negated_chain(const leir__analysis *a, const leir_expr *cond,
                                   leir__env *env) {
  leir__env *hull = env_dup(env), *tmp = malloc(sizeof *tmp);
  bool any = false, ok = hull && tmp;
  for (uint32_t k = 0; ok && k + 1 < cond->n; k++) {
    leir__env_copy(tmp, env);
    if (!constrain(a, cond->kids[k], negate((leir_op)cond->u.cmp_ops[k]), cond->kids[k + 1], tmp))
      continue;
    for (uint32_t v = 0; v < env->nvars; v++)
      hull->vars[v] = any ? leir__range_union(hull->vars[v], tmp->vars[v]) : tmp->vars[v];
    any = true;
  }
  if (ok && any)
    for (uint32_t v = 0; v < env->nvars; v++)
      if (env->vars[v].known) env->vars[v] = hull->vars[v];
  free(hull);
  free(tmp);
  return !ok || any;
}

bool leir__narrow(const leir__analysis *a, const leir_expr *cond, bool truth, leir__env *env) {
  switch ((leir_expr_kind)cond->kind) {
    case LEIR_EXPR_PAREN: return leir__narrow(a, cond->kids[0], truth, env);
    case LEIR_EXPR_AND:
      if (truth)
        return leir__narrow(a, cond->kids[0], true, env) &&
               leir__narrow(a, cond->kids[1], true, env);
      return either(a, cond->kids[0], false, cond->kids[1], false, env);
    case LEIR_EXPR_OR:
      if (!truth)
        return leir__narrow(a, cond->kids[0], false, env) &&
               leir__narrow(a, cond->kids[1], false, env);
      return either(a, cond->kids[0], true, cond->kids[1], true, env);
    case LEIR_EXPR_COMPARE:
      if (truth || cond->n == 2) {
        for (uint32_t k = 0; k + 1 < cond->n; k++) {
          leir_op op = (leir_op)cond->u.cmp_ops[k];
          if (!constrain(a, cond->kids[k], truth ? op : negate(op), cond->kids[k + 1], env))
            return false;
        }
        return true;
      }
      return negated_chain(a, cond, env);
    default: return true;
  }
}

uint64_t leir__affine_determined(const int64_t *coef, const int64_t *ext, uint32_t n) {
  uint32_t idx[64], m = 0;
  uint64_t out = 0;
  if (n > 64) return 0;
  for (uint32_t k = 0; k < n; k++) {
    if (ext[k] <= 1 || coef[k] == 0) {
      if (ext[k] <= 1) out |= (uint64_t)1 << k;
      continue;
    }
    if (coef[k] == INT64_MIN) return out;
    int64_t ck = coef[k] < 0 ? -coef[k] : coef[k];
    uint32_t j = m++;
    while (j > 0) {
      int64_t cj = coef[idx[j - 1]] < 0 ? -coef[idx[j - 1]] : coef[idx[j - 1]];
      if (cj < ck || (cj == ck && ext[idx[j - 1]] <= ext[k])) break;
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = k;
  }
  /* the terms above the last one that fails the chain condition */
  int64_t span = 0;
  uint32_t first = 0;
  for (uint32_t i = 0; i < m; i++) {
    int64_t ck = coef[idx[i]] < 0 ? -coef[idx[i]] : coef[idx[i]], add;
    if (ck <= span) first = i + 1;
    if (__builtin_mul_overflow(ck, ext[idx[i]] - 1, &add) || __builtin_add_overflow(span, add, &span))
      return out; /* too large to reason about */
  }
  for (uint32_t i = first; i < m; i++) out |= (uint64_t)1 << idx[i];
  return out;
}
