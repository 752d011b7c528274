/*
 * Integer ranges of index expressions, and narrowing of loop-variable ranges
 * by if_then_else guards (spec/leir.md §3.6: bounds are proven by interval
 * analysis, narrowed by the guard on the lazily evaluated branch).
 */
#include "analysis.h"

static const leir__range UNKNOWN = {0, 0, false};

static leir__range mk(int64_t lo, int64_t hi) {
  leir__range r = {lo, hi, true};
  return r;
}

static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

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

leir__range leir__index_range(const leir__analysis *a, const leir_expr *e,
                              const leir__range *vars) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
      return e->u.num->is_int ? mk(e->u.num->ival, e->u.num->ival) : UNKNOWN;
    case LEIR_EXPR_VAR: {
      uint32_t slot = e->id < a->nids ? a->expr_loop[e->id] : LEIR__NONE;
      return slot == LEIR__NONE ? UNKNOWN : vars[slot];
    }
    case LEIR_EXPR_PAREN: return leir__index_range(a, e->kids[0], vars);
    case LEIR_EXPR_NEG: {
      leir__range r = leir__index_range(a, e->kids[0], vars);
      if (!r.known || r.lo == INT64_MIN) return UNKNOWN;
      return mk(-r.hi, -r.lo);
    }
    case LEIR_EXPR_BINARY: {
      leir__range l = leir__index_range(a, e->kids[0], vars);
      if (!l.known) return UNKNOWN;
      leir__range r = leir__index_range(a, e->kids[1], vars);
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
        leir__range acc = leir__index_range(a, e->kids[0], vars);
        for (uint32_t k = 1; k < e->n && acc.known; k++) {
          leir__range r = leir__index_range(a, e->kids[k], vars);
          if (!r.known) return UNKNOWN;
          acc = e->op == LEIR_OP_MAX ? mk(max2(acc.lo, r.lo), max2(acc.hi, r.hi))
                                     : mk(min2(acc.lo, r.lo), min2(acc.hi, r.hi));
        }
        return acc;
      }
      return UNKNOWN;
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: return mk(0, 1);
    default: return UNKNOWN;
  }
}

/* ---- guards ----------------------------------------------------------- */

/* e = coef * var + c, with at most one loop variable. */
typedef struct lin1 {
  bool ok;
  uint32_t slot; /* LEIR__NONE: constant */
  int64_t coef, c;
} lin1;

static lin1 linear(const leir__analysis *a, const leir_expr *e) {
  lin1 bad = {false, LEIR__NONE, 0, 0};
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: {
      if (!e->u.num->is_int) return bad;
      lin1 r = {true, LEIR__NONE, 0, e->u.num->ival};
      return r;
    }
    case LEIR_EXPR_VAR: {
      uint32_t slot = e->id < a->nids ? a->expr_loop[e->id] : LEIR__NONE;
      if (slot == LEIR__NONE) return bad;
      lin1 r = {true, slot, 1, 0};
      return r;
    }
    case LEIR_EXPR_PAREN: return linear(a, e->kids[0]);
    case LEIR_EXPR_NEG: {
      lin1 r = linear(a, e->kids[0]);
      if (!r.ok || r.coef == INT64_MIN || r.c == INT64_MIN) return bad;
      r.coef = -r.coef;
      r.c = -r.c;
      return r;
    }
    case LEIR_EXPR_BINARY: {
      lin1 l = linear(a, e->kids[0]);
      if (!l.ok) return bad;
      lin1 r = linear(a, e->kids[1]);
      if (!r.ok) return bad;
      lin1 out = {true, l.slot != LEIR__NONE ? l.slot : r.slot, 0, 0};
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD:
        case LEIR_OP_SUB: {
          if (l.slot != LEIR__NONE && r.slot != LEIR__NONE && l.slot != r.slot) return bad;
          int64_t rc = r.coef, rk = r.c;
          if (e->op == LEIR_OP_SUB) {
            if (rc == INT64_MIN || rk == INT64_MIN) return bad;
            rc = -rc;
            rk = -rk;
          }
          if (__builtin_add_overflow(l.coef, rc, &out.coef) ||
              __builtin_add_overflow(l.c, rk, &out.c))
            return bad;
          return out;
        }
        case LEIR_OP_MUL: {
          const lin1 *v = l.slot != LEIR__NONE ? &l : &r;
          const lin1 *k = l.slot != LEIR__NONE ? &r : &l;
          if (k->slot != LEIR__NONE) return bad; /* product of variables */
          if (__builtin_mul_overflow(v->coef, k->c, &out.coef) ||
              __builtin_mul_overflow(v->c, k->c, &out.c))
            return bad;
          return out;
        }
        default: return bad;
      }
    }
    default: return bad;
  }
}

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

/* Applies `l op r` (a single comparison) to vars; false if unsatisfiable. */
static bool constrain(const leir__analysis *a, const leir_expr *l, leir_op op,
                      const leir_expr *r, leir__range *vars) {
  lin1 L = linear(a, l), R = linear(a, r);
  if (!L.ok || !R.ok) return true;
  if (L.slot != LEIR__NONE && R.slot != LEIR__NONE && L.slot != R.slot) return true;
  /* coef * v + c  op  0 */
  int64_t coef, c;
  if (R.coef == INT64_MIN || R.c == INT64_MIN || __builtin_sub_overflow(L.coef, R.coef, &coef) ||
      __builtin_sub_overflow(L.c, R.c, &c))
    return true;
  uint32_t slot = L.slot != LEIR__NONE ? L.slot : R.slot;
  if (slot == LEIR__NONE || coef == 0) {
    switch (op) {
      case LEIR_OP_LT: return c < 0;
      case LEIR_OP_LE: return c <= 0;
      case LEIR_OP_GT: return c > 0;
      case LEIR_OP_GE: return c >= 0;
      case LEIR_OP_EQ: return c == 0;
      case LEIR_OP_NE: return c != 0;
      default: return true;
    }
  }
  if (coef < 0) {
    if (coef == INT64_MIN || c == INT64_MIN) return true;
    coef = -coef;
    c = -c;
    op = flip(op);
  }
  /* coef * v  op  -c, coef > 0 */
  if (c == INT64_MIN) return true;
  int64_t k = -c, lo = vars[slot].lo, hi = vars[slot].hi;
  bool ok = true;
  switch (op) {
    case LEIR_OP_LT: /* coef*v <= k-1 */
      if (k == INT64_MIN) return false;
      hi = min2(hi, floordiv(k - 1, coef, &ok));
      break;
    case LEIR_OP_LE: hi = min2(hi, floordiv(k, coef, &ok)); break;
    case LEIR_OP_GT: /* coef*v >= k+1 */
      if (k == INT64_MAX) return false;
      lo = max2(lo, ceildiv(k + 1, coef, &ok));
      break;
    case LEIR_OP_GE: lo = max2(lo, ceildiv(k, coef, &ok)); break;
    case LEIR_OP_EQ:
      if (k % coef != 0) return false;
      lo = max2(lo, k / coef);
      hi = min2(hi, k / coef);
      break;
    case LEIR_OP_NE:
      if (k % coef == 0 && lo == hi && lo == k / coef) return false;
      return true;
    default: return true;
  }
  if (!ok) return true;
  if (lo > hi) return false;
  vars[slot].lo = lo;
  vars[slot].hi = hi;
  return true;
}

/* Hull of two narrowed copies: sound for a disjunction. */
static bool either(const leir__analysis *a, const leir_expr *x, bool tx, const leir_expr *y,
                   bool ty, leir__range *vars, uint32_t n) {
  leir__range bx[LEIR__MAX_LOOPS], by[LEIR__MAX_LOOPS];
  if (n > LEIR__MAX_LOOPS) return true;
  for (uint32_t k = 0; k < n; k++) bx[k] = by[k] = vars[k];
  bool sx = leir__narrow(a, x, tx, bx, n);
  bool sy = leir__narrow(a, y, ty, by, n);
  if (!sx && !sy) return false;
  for (uint32_t k = 0; k < n; k++) {
    if (!sx)
      vars[k] = by[k];
    else if (!sy)
      vars[k] = bx[k];
    else if (vars[k].known)
      vars[k] = mk(min2(bx[k].lo, by[k].lo), max2(bx[k].hi, by[k].hi));
  }
  return true;
}

bool leir__narrow(const leir__analysis *a, const leir_expr *cond, bool truth, leir__range *vars,
                  uint32_t nvars) {
  switch ((leir_expr_kind)cond->kind) {
    case LEIR_EXPR_PAREN: return leir__narrow(a, cond->kids[0], truth, vars, nvars);
    case LEIR_EXPR_AND:
      if (truth)
        return leir__narrow(a, cond->kids[0], true, vars, nvars) &&
               leir__narrow(a, cond->kids[1], true, vars, nvars);
      return either(a, cond->kids[0], false, cond->kids[1], false, vars, nvars);
    case LEIR_EXPR_OR:
      if (!truth)
        return leir__narrow(a, cond->kids[0], false, vars, nvars) &&
               leir__narrow(a, cond->kids[1], false, vars, nvars);
      return either(a, cond->kids[0], true, cond->kids[1], true, vars, nvars);
    case LEIR_EXPR_COMPARE:
      if (truth || cond->n == 2) {
        for (uint32_t k = 0; k + 1 < cond->n; k++) {
          leir_op op = (leir_op)cond->u.cmp_ops[k];
          if (!constrain(a, cond->kids[k], truth ? op : negate(op), cond->kids[k + 1], vars))
            return false;
        }
        return true;
      } else {
        /* not (c1 and c2 and ...): the hull of each negated link */
        if (nvars > LEIR__MAX_LOOPS) return true;
        leir__range hull[LEIR__MAX_LOOPS], tmp[LEIR__MAX_LOOPS];
        bool any = false;
        for (uint32_t k = 0; k + 1 < cond->n; k++) {
          for (uint32_t v = 0; v < nvars; v++) tmp[v] = vars[v];
          if (!constrain(a, cond->kids[k], negate((leir_op)cond->u.cmp_ops[k]),
                         cond->kids[k + 1], tmp))
            continue;
          for (uint32_t v = 0; v < nvars; v++)
            hull[v] = !any ? tmp[v]
                           : mk(min2(hull[v].lo, tmp[v].lo), max2(hull[v].hi, tmp[v].hi));
          any = true;
        }
        if (!any) return false;
        for (uint32_t v = 0; v < nvars; v++)
          if (vars[v].known) vars[v] = hull[v];
        return true;
      }
    default: return true;
  }
}
