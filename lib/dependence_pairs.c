/*
 * The dependence model, question 4 (dependence.c has the overview): may any
 * two accesses meet (a GCD test and Banerjee bounds per dimension), and the
 * questions about two nests built on it: commute, fuse, inline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dependence.h"
#include "dependence_internal.h"
#include "vec.h"
#include "visit.h"

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
leir__env *leir__dep_access_env(const leir__analysis *a, const leir__eqinfo *info,
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
  leir__env *ex = leir__dep_access_env(a, xi, x, &nx),
            *ey = leir__dep_access_env(a, yi, y, &ny);
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
