/*
 * The split strategies' sites, values y, numerical conditions and rewrites
 * (split_sites.h). One walk serves enumeration and apply: apply finds the
 * site again from its path and the y from `loop=` / `tensor=`, with the
 * same search that enumerated it.
 */
#include "split_sites.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "algebra.h"
#include "error.h"
#include "streaming.h"

static const leir_expr *strip(const leir_expr *e) {
  while (e && e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool is_float(uint8_t dt) {
  return dt == LEIR_F16 || dt == LEIR_BF16 || dt == LEIR_F32 || dt == LEIR_F64;
}

/* rank of float dtypes by range and precision: narrower first */
static int narrowness(uint8_t dt) {
  switch (dt) {
  case LEIR_BF16: return 0;
  case LEIR_F16: return 1;
  case LEIR_F32: return 2;
  default: return 3;
  }
}

static uint8_t narrower(uint8_t a, uint8_t b) {
  if (!is_float(b)) return a;
  if (!is_float(a)) return b;
  return narrowness(b) < narrowness(a) ? b : a;
}

/* the narrowest float dtype read in e (outside subscripts), or `dt` */
static uint8_t narrowest(const leir_expr *e, uint8_t dt, unsigned depth) {
  if (depth > 400) return dt;
  if (e->kind == LEIR_EXPR_TENSOR) return narrower(dt, e->dtype);
  for (uint32_t i = 0; i < e->n; i++) dt = narrowest(e->kids[i], dt, depth + 1);
  return dt;
}

/* smallest normal, largest finite, mantissa bits */
static void limits(uint8_t dt, double *tiny, double *huge, int *bits) {
  switch (dt) {
  case LEIR_F16: *tiny = 6.103515625e-05, *huge = 65504.0, *bits = 10; break;
  case LEIR_BF16: *tiny = 1.1754943508222875e-38, *huge = 3.3895313892515355e38, *bits = 7; break;
  case LEIR_F32: *tiny = FLT_MIN, *huge = FLT_MAX, *bits = 23; break;
  default: *tiny = DBL_MIN, *huge = DBL_MAX, *bits = 52; break;
  }
}

/* ---- finiteness: y is never inf or NaN (modulo + - * overflow, as for
 * every reassociating rewrite) ---------------------------------------------- */

static bool bounds_of(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st);

enum { T_UNKNOWN = 0, T_VISITING, T_YES, T_NO };

typedef struct finite_memo {
  const leir__sctx *c;
  uint8_t *state; /* by symbol */
  uint32_t nsym;
} finite_memo;

static bool finite_sym(finite_memo *m, uint32_t sym, unsigned depth);

static bool has_leaf(const leir_expr *e, unsigned depth) {
  if (depth > 400 || e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_VAR) return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (has_leaf(e->kids[i], depth + 1)) return true;
  return false;
}

static bool finite_expr(finite_memo *m, const leir_expr *e, unsigned depth) {
  if (depth > 200) return false;
  leir_status st = LEIR_OK;
  double lo, hi;
  /* a constant (sqrt(2)): its bounds are its value */
  if (e->kind != LEIR_EXPR_NUMBER && !has_leaf(e, 0)) return bounds_of(m->c->p, e, &lo, &hi, &st);
  /* a division by a finite value proven away from 0 (C/sqrt(2)) */
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV)
    return finite_expr(m, e->kids[0], depth + 1) && finite_expr(m, e->kids[1], depth + 1) &&
           bounds_of(m->c->p, e->kids[1], &lo, &hi, &st) && (lo > 0 || hi < 0);
  switch ((leir_expr_kind)e->kind) {
  case LEIR_EXPR_NUMBER: return isfinite(e->u.num->value);
  case LEIR_EXPR_INF: return false;
  case LEIR_EXPR_VAR: return true;
  case LEIR_EXPR_TENSOR: return finite_sym(m, e->sym, depth + 1);
  case LEIR_EXPR_PAREN:
  case LEIR_EXPR_NEG: return finite_expr(m, e->kids[0], depth + 1);
  case LEIR_EXPR_COMPARE:
  case LEIR_EXPR_AND:
  case LEIR_EXPR_OR: return true; /* 0 or 1 */
  case LEIR_EXPR_BINARY:
    if (e->op != LEIR_OP_ADD && e->op != LEIR_OP_SUB && e->op != LEIR_OP_MUL) return false;
    return finite_expr(m, e->kids[0], depth + 1) && finite_expr(m, e->kids[1], depth + 1);
  case LEIR_EXPR_CALL:
    if (e->op == LEIR_OP_IF_THEN_ELSE)
      return e->n == 3 && finite_expr(m, e->kids[1], depth + 1) &&
             finite_expr(m, e->kids[2], depth + 1);
    if (e->op != LEIR_OP_MAX && e->op != LEIR_OP_MIN && e->op != LEIR_OP_ABS &&
        e->op != LEIR_OP_ERF)
      return false;
    for (uint32_t i = 0; i < e->n; i++)
      if (!finite_expr(m, e->kids[i], depth + 1)) return false;
    return true;
  }
  return false;
}

static bool reads_finite(finite_memo *m, const leir_expr *e, unsigned depth) {
  if (depth > 200) return false;
  if (e->kind == LEIR_EXPR_TENSOR) return finite_sym(m, e->sym, depth + 1);
  for (uint32_t i = 0; i < e->n; i++)
    if (!reads_finite(m, e->kids[i], depth + 1)) return false;
  return true;
}

/* Every tensor read finite and the value bounded over the reals
 * (leir__alg_bounds, reads unbounded unless declared): an intermediate inf
 * of an exp that overflows can only reach a bounded result through a
 * division (1/inf = 0) or a clamp, since +, -, * and / with an unbounded
 * operand have unbounded real bounds; 1/(1+exp(-C)) is finite. */
static bool finite_bounded(finite_memo *m, const leir_expr *e, unsigned depth) {
  double lo, hi;
  leir_status st = LEIR_OK;
  if (!reads_finite(m, e, depth + 1)) return false;
  return bounds_of(m->c->p, e, &lo, &hi, &st);
}

static bool finite_sym(finite_memo *m, uint32_t sym, unsigned depth) {
  if (sym >= m->nsym) return false;
  if (m->state[sym] == T_YES || m->state[sym] == T_VISITING) return true; /* a cycle: induction */
  if (m->state[sym] == T_NO) return false;
  m->state[sym] = T_VISITING;
  const leir__sctx *c = m->c;
  bool ok = true, written = false;
  for (uint32_t i = 0; i < c->nnests && ok; i++) {
    const leir_nest *n = c->nests[i].nest;
    for (uint32_t k = 0; k < n->nitems && ok; k++) {
      const leir_equation *eq = n->items[k].eq;
      if (!eq || eq->lhs->sym != sym) continue;
      written = true;
      if (is_float(eq->lhs->dtype)) ok = finite_expr(m, eq->rhs, depth + 1) || finite_bounded(m, eq->rhs, depth);
    }
  }
  if (ok && !written) { /* a signature input: every domain is finite but a non-finite value */
    ok = c->known && c->known[sym];
    for (uint32_t i = 0; ok && i < c->p->nsig; i++)
      if (c->p->sig[i].sym == sym && c->p->sig[i].domain == LEIR_DOMAIN_VALUE)
        ok = isfinite(c->p->sig[i].dom_a);
  }
  m->state[sym] = ok ? T_YES : T_NO;
  return ok;
}

/* ---- the generic assumption (LEIR_CANDIDATES_GENERIC_VALUES) --------------
 * Values are assumed finite and, when not constant and not structurally
 * zero, non-zero. What the assumption cannot cover is refused even then:
 * a value derived from an infinite constant (a -inf mask: inf on the
 * masked elements, -inf - -inf = NaN on a fully masked row), and for a
 * divisor a value that is exactly 0 on some inputs by its construction. */

enum { G_INF = 0, G_ZERO = 1, G_BIG = 2, G_BIGX = 3, G_NORM = 4 };

typedef struct generic_memo {
  const leir__sctx *c;
  uint8_t *state[5]; /* by symbol, T_* */
  uint32_t nsym;
} generic_memo;

static bool tainted_sym(generic_memo *m, int what, uint32_t sym, unsigned depth);

static bool saturates(const leir_expr *e) {
  e = strip(e);
  return e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_ERF;
}

static bool has_exp(const leir_expr *e, unsigned depth) {
  if (depth > 200) return true;
  if (e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_EXP) return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (has_exp(e->kids[i], depth + 1)) return true;
  return false;
}

/* G_NORM: e derives from a normalization's difference, a subtraction that
 * is a numerator or a power base ((F-O)/s, (F-O)**2): 0 where a group has
 * one element, and far from the magnitude of the values it normalizes */
static bool norm_expr(generic_memo *m, const leir_expr *e, bool num, unsigned depth) {
  if (depth > 200) return true;
  if (e->kind == LEIR_EXPR_TENSOR) return is_float(e->dtype) && tainted_sym(m, G_NORM, e->sym, depth + 1);
  if (num && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_SUB) return true;
  for (uint32_t i = 0; i < e->n; i++) {
    bool n2 = e->kind == LEIR_EXPR_PAREN ? num
              : e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_DIV || e->op == LEIR_OP_POW) && i == 0;
    if (norm_expr(m, e->kids[i], n2, depth + 1)) return true;
  }
  return false;
}

/* Does e derive from an infinite constant (what = G_INF), is it exactly
 * 0 on some inputs by its construction (G_ZERO: a bool, integer or
 * comparison value, a constant 0, a loop index, a product, max or min with
 * such a value), or does it grow faster than its reads (G_BIG: an exp of
 * a value, even under a log: x10 inputs take it past the largest float;
 * G_BIGX: also a power or a product of two values, a matmul, 100 times
 * larger at x10 inputs: too large for an exponent)? Reads inside
 * subscripts are not values. */
static bool tainted_expr(generic_memo *m, int what, const leir_expr *e, unsigned depth) {
  if (depth > 200) return true;
  if (what == G_BIGX && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_MUL &&
      has_leaf(e->kids[0], 0) && has_leaf(e->kids[1], 0))
    return true;
  if (what == G_BIG || what == G_BIGX) {
    if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_EXP)) return true;
    if (what == G_BIGX && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_POW) return true;
    if (e->kind == LEIR_EXPR_TENSOR) return is_float(e->dtype) && tainted_sym(m, what, e->sym, depth + 1);
    if (e->kind == LEIR_EXPR_COMPARE || e->kind == LEIR_EXPR_AND || e->kind == LEIR_EXPR_OR)
      return false;
  }
  switch ((leir_expr_kind)e->kind) {
  case LEIR_EXPR_NUMBER:
    return what == G_INF ? !isfinite(e->u.num->value) : e->u.num->value == 0;
  case LEIR_EXPR_INF: return what == G_INF;
  case LEIR_EXPR_VAR: return what == G_ZERO;
  case LEIR_EXPR_TENSOR:
    if (what == G_ZERO && !is_float(e->dtype)) return true;
    return is_float(e->dtype) && tainted_sym(m, what, e->sym, depth + 1);
  case LEIR_EXPR_COMPARE:
  case LEIR_EXPR_AND:
  case LEIR_EXPR_OR:
    if (what == G_ZERO) return true;
    break;
  case LEIR_EXPR_BINARY:
    if (what == G_ZERO) {
      switch ((leir_op)e->op) {
      case LEIR_OP_ADD:
      case LEIR_OP_SUB:
        /* 1+erf(x): exactly 0 where erf saturates
         * (GELU's C*0.5*(1+erf(C/sqrt(2))) for C < -9) */
        if (saturates(e->kids[0]) || saturates(e->kids[1])) return true;
        return tainted_expr(m, what, e->kids[0], depth + 1) &&
               tainted_expr(m, what, e->kids[1], depth + 1);
      case LEIR_OP_MUL: break;
      case LEIR_OP_DIV: /* x/(1+exp(-C)) is 0 where the exp overflows */
        return tainted_expr(m, what, e->kids[0], depth + 1) || has_exp(e->kids[1], 0);
      case LEIR_OP_POW: return tainted_expr(m, what, e->kids[0], depth + 1);
      default: return true; /* // and %: integers */
      }
    }
    break;
  case LEIR_EXPR_CALL:
    if (what == G_ZERO && e->op == LEIR_OP_EXP) return false;
    break;
  default: break;
  }
  for (uint32_t i = 0; i < e->n; i++)
    if (tainted_expr(m, what, e->kids[i], depth + 1)) return true;
  return false;
}

static bool tainted_sym(generic_memo *m, int what, uint32_t sym, unsigned depth) {
  if (sym >= m->nsym || depth > 200) return true;
  uint8_t *st = &m->state[what][sym];
  if (*st == T_YES) return true;
  if (*st == T_NO || *st == T_VISITING) return false; /* an accumulation: its other terms */
  *st = T_VISITING;
  const leir__sctx *c = m->c;
  bool t = false, written = false;
  for (uint32_t i = 0; i < c->nnests && !t; i++) {
    const leir_nest *n = c->nests[i].nest;
    for (uint32_t k = 0; k < n->nitems && !t; k++) {
      const leir_equation *eq = n->items[k].eq;
      if (!eq || eq->lhs->sym != sym) continue;
      written = true;
      t = what == G_NORM ? norm_expr(m, eq->rhs, false, depth + 1)
                         : tainted_expr(m, what, eq->rhs, depth + 1);
    }
  }
  for (uint32_t i = 0; !written && !t && what < G_BIG && i < c->p->nsig; i++)
    if (c->p->sig[i].sym == sym && c->p->sig[i].domain == LEIR_DOMAIN_VALUE)
      t = what == G_INF ? !isfinite(c->p->sig[i].dom_a) : c->p->sig[i].dom_a == 0;
  *st = t ? T_YES : T_NO;
  return t;
}

/* some tensor read in e (outside subscripts) is tainted (G_INF: or e
 * holds an infinite constant) */
static bool reads_tainted(generic_memo *m, int what, const leir_expr *e, unsigned depth) {
  if (depth > 200) return true;
  if (e->kind == LEIR_EXPR_TENSOR) return is_float(e->dtype) && tainted_sym(m, what, e->sym, depth);
  if (e->kind == LEIR_EXPR_INF) return what == G_INF;
  for (uint32_t i = 0; i < e->n; i++)
    if (reads_tainted(m, what, e->kids[i], depth + 1)) return true;
  return false;
}

/* ---- bounds from the declared input domains (lib/algebra.h) ------------- */

static bool bounds_at(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st, unsigned depth);

/* the one equation that writes sym (anywhere), or NULL (none or several) */
static const leir_equation *only_writer(const leir_nest *n, uint32_t sym, int *count) {
  const leir_equation *w = NULL;
  for (uint32_t k = 0; k < n->nitems && *count < 2; k++) {
    if (n->items[k].nest) {
      const leir_equation *x = only_writer(n->items[k].nest, sym, count);
      if (x) w = x;
    } else if (n->items[k].eq->lhs->sym == sym) {
      ++*count;
      w = n->items[k].eq;
    }
  }
  return w;
}

static bool reads_sym(const leir_expr *e, uint32_t sym, unsigned depth) {
  if (depth > 400) return true;
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == sym) return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (reads_sym(e->kids[i], sym, depth + 1)) return true;
  return false;
}

/* The range of an intermediate: that of its one writer's right side when
 * the writer does not read it (no accumulation, no scan), every element
 * being one value of that right side. */
static bool intermediate_range(const leir_program *p, uint32_t sym, double *lo, double *hi,
                               leir_status *st, unsigned depth) {
  if (depth > 4) return false;
  const leir_equation *w = NULL;
  int count = 0;
  for (uint32_t i = 0; i < p->nnests && count < 2; i++) {
    const leir_equation *x = only_writer(p->nests[i], sym, &count);
    if (x) w = x;
  }
  if (count != 1 || !w || reads_sym(w->rhs, sym, 0)) return false;
  return bounds_at(p, w->rhs, lo, hi, st, depth + 1);
}

/* declares the ranges of the intermediates read in e (of program p; the
 * symbols in s) */
static void declare_reads(leir__alg *a, leir_program *s, const leir_program *p,
                          const leir_expr *e, leir_status *st, unsigned depth, unsigned level) {
  if (level > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    bool input = false;
    for (uint32_t i = 0; i < p->nsig && !input; i++)
      input = p->sig[i].sym == e->sym && p->sig[i].role == LEIR_ROLE_INPUT;
    double lo, hi;
    if (!input && is_float(e->dtype) && intermediate_range(p, e->sym, &lo, &hi, st, depth)) {
      uint32_t sym = leir__sym_find(s, leir__sym_name(p, e->sym), leir__sym_len(p, e->sym));
      if (sym != LEIR__NOSYM) leir__alg_assume_range(a, sym, lo, hi);
    }
    return;
  }
  for (uint32_t i = 0; i < e->n; i++) declare_reads(a, s, p, e->kids[i], st, depth, level + 1);
}

static bool bounds_of(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st) {
  return bounds_at(p, e, lo, hi, st, 0);
}

static bool bounds_at(const leir_program *p, const leir_expr *e, double *lo, double *hi,
                      leir_status *st, unsigned depth) {
  leir_program *s = leir__program_new(2048);
  leir__alg *a = s ? leir__alg_new(s, 64) : NULL;
  leir_expr *copy = a ? leir__copy_expr(s, p, e) : NULL;
  bool ok = false;
  if (!copy) {
    *st = LEIR_ERR_NOMEM;
  } else {
    for (uint32_t i = 0; i < p->nsig; i++) {
      const leir__decl *d = &p->sig[i];
      uint32_t sym = leir__sym_find(s, leir__sym_name(p, d->sym), leir__sym_len(p, d->sym));
      if (sym == LEIR__NOSYM) continue;
      if (d->domain == LEIR_DOMAIN_POSITIVE) leir__alg_assume_positive(a, sym);
      else if (d->domain == LEIR_DOMAIN_VALUE) leir__alg_assume_range(a, sym, d->dom_a, d->dom_a);
      else if (d->domain == LEIR_DOMAIN_RANGE || d->domain == LEIR_DOMAIN_UNIFORM)
        leir__alg_assume_range(a, sym, d->dom_a, d->dom_b);
    }
    declare_reads(a, s, p, e, st, depth, 0);
    ok = leir__alg_bounds(a, copy, lo, hi) && isfinite(*lo) && isfinite(*hi);
  }
  leir__alg_free(a);
  leir_program_free(s);
  return ok;
}

/* ---- sites and values y ---------------------------------------------------- */

typedef struct yval {
  bool shift;             /* loop=k, else tensor=Y */
  uint32_t k;             /* shift: loop index in the nest */
  const leir_expr *z;     /* shift: the read shifted */
  const leir_expr *acc;   /* tensor: Y's left-hand access in its writer */
  /* shift of a compound last subscript E (d*3+g: y reads Z_{..,E-1}, k the
   * innermost loop of E); only in the relaxed pass (split_relaxed) */
  bool compound;
} yval;

typedef struct site {
  const leir__nref *r;
  uint32_t item;
  const leir_equation *eq;
  const leir_expr *x;     /* the tensor read (#38, #39) or the exp call (#37) */
  const leir_expr *z;     /* the read a shifted y shifts, or NULL */
  bool under_ite;
} site;

static bool nest_writes(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].eq && n->items[k].eq->lhs->sym == sym) return true;
  return false;
}

static bool same_loops(const leir_nest *a, const leir_nest *b) {
  if (a->nloops != b->nloops) return false;
  for (uint32_t i = 0; i < a->nloops; i++) {
    bool found = false;
    for (uint32_t j = 0; j < b->nloops && !found; j++)
      found = a->loops[i].sym == b->loops[j].sym && a->loops[i].extent == b->loops[j].extent;
    if (!found) return false;
  }
  return true;
}

/* the first tensor read in e outside subscripts */
static const leir_expr *first_read(const leir_expr *e, unsigned depth) {
  if (depth > 400) return NULL;
  if (e->kind == LEIR_EXPR_TENSOR) return e;
  for (uint32_t i = 0; i < e->n; i++) {
    const leir_expr *r = first_read(e->kids[i], depth + 1);
    if (r) return r;
  }
  return NULL;
}

static uint32_t count_reads(const leir_expr *e, uint32_t sym, unsigned depth) {
  if (depth > 400) return 2;
  if (e->kind == LEIR_EXPR_TENSOR) return e->sym == sym;
  uint32_t n = 0;
  for (uint32_t i = 0; i < e->n; i++) n += count_reads(e->kids[i], sym, depth + 1);
  return n;
}

/* the values y of a site, in order: the shift, then earlier outputs */
static uint32_t collect_ys(const leir__sctx *c, const site *s, yval *ys) {
  uint32_t n = 0;
  const leir_nest *nest = s->r->nest;
  const leir_expr *z = s->z;
  /* The relaxed pass (leir_ground's gated pass) keeps only what apply
   * needs to build y; whether the result is right is then the verifier's
   * question: Z written in the nest, a site under an if_then_else, k in
   * another entry of Z, a loop of extent 1 (y is the boundary constant)
   * and a compound last subscript E (y = if_then_else(E-1<0,B,Z_{..,E-1}),
   * the reference's shift of a strided or padded read). */
  bool relaxed = c->split_relaxed;
  if (z && is_float(z->dtype) && z->n >= 1 &&
      (relaxed || (!s->under_ite && !nest_writes(nest, z->sym)))) {
    const leir_expr *last = strip(z->kids[z->n - 1]);
    for (uint32_t k = 0; last->kind == LEIR_EXPR_VAR && k < nest->nloops; k++) {
      if (nest->loops[k].sym != last->sym) continue;
      if (nest->loops[k].extent < 2 && !relaxed) break; /* y would be the constant B: no split */
      bool alone = true;
      for (uint32_t j = 0; j + 1 < z->n && alone && !relaxed; j++)
        alone = !leir__expr_uses_var(z->kids[j], last->sym);
      if (alone) ys[n++] = (yval){.shift = true, .k = k, .z = z};
      break;
    }
    if (relaxed && last->kind != LEIR_EXPR_VAR) {
      /* named by the innermost loop E uses, or for a constant E (Z_{..,0}:
       * y is the boundary B) by the nest's innermost loop: a site has one
       * last subscript, so one shift, and the name only has to find it */
      uint32_t k = nest->nloops;
      for (uint32_t j = nest->nloops; j-- > 0 && k == nest->nloops;)
        if (leir__expr_uses_var(last, nest->loops[j].sym)) k = j;
      if (k == nest->nloops && nest->nloops) k = nest->nloops - 1;
      if (k < nest->nloops) ys[n++] = (yval){.shift = true, .k = k, .z = z, .compound = true};
    }
  }
  for (uint32_t t = 0; t < s->r->path[0] && n < LEIR__SPLIT_MAX_Y; t++) {
    const leir_nest *w = c->p->nests[t];
    if (!same_loops(w, nest)) continue;
    for (uint32_t k = 0; k < w->nitems && n < LEIR__SPLIT_MAX_Y; k++) {
      const leir_equation *eq = w->items[k].eq;
      if (!eq || !is_float(eq->lhs->dtype) || (!relaxed && nest_writes(nest, eq->lhs->sym)))
        continue;
      bool dup = false;
      for (uint32_t j = 0; j < n && !dup; j++) dup = !ys[j].shift && ys[j].acc->sym == eq->lhs->sym;
      if (!dup) ys[n++] = (yval){.shift = false, .acc = eq->lhs};
    }
  }
  return n;
}

/* ---- the numerical conditions ---------------------------------------------- */

/* V_ASSUMED: unproven, but covered by the generic assumption (listed
 * with LEIR_CANDIDATES_GENERIC_VALUES, class reassociating) */
typedef enum { V_EXACT, V_CLOSE, V_UNPROVEN, V_ASSUMED, V_NO_SITE } verdict;

typedef struct proof {
  const leir__sctx *c;
  finite_memo *fm;
  generic_memo *gm;
  leir_status st;
} proof;

static bool y_finite(proof *pf, const yval *y) {
  return finite_sym(pf->fm, y->shift ? y->z->sym : y->acc->sym, 0);
}

static bool y_bounds(proof *pf, const yval *y, double *lo, double *hi, double boundary) {
  if (!bounds_of(pf->c->p, y->shift ? y->z : y->acc, lo, hi, &pf->st)) return false;
  if (y->shift) {
    if (boundary < *lo) *lo = boundary;
    if (boundary > *hi) *hi = boundary;
  }
  return true;
}

static bool same_value(const leir__sctx *c, const yval *y, const leir_expr *e) {
  return !y->shift && leir__expr_equal(c->p, strip(e), c->p, y->acc);
}

/* exp(u): its leftmost +/- term t1 and whether u has more terms */
static const leir_expr *first_term(const leir_expr *u, bool *more) {
  const leir_expr *n = strip(u);
  *more = false;
  while (n->kind == LEIR_EXPR_BINARY && (n->op == LEIR_OP_ADD || n->op == LEIR_OP_SUB)) {
    *more = true;
    n = strip(n->kids[0]);
  }
  return n;
}

static verdict check_exp(proof *pf, const site *s, const yval *y, bool div, uint8_t dt) {
  const leir__sctx *c = pf->c;
  const leir_expr *u = s->x->kids[0];
  double tiny, huge, ylo, yhi;
  int bits;
  limits(dt, &tiny, &huge, &bits);
  double L = fmin(log(huge), -log(tiny)) / 2 - 1;
  const leir_expr *su = strip(u);
  if (div) {
    if (su->kind != LEIR_EXPR_BINARY || su->op != LEIR_OP_SUB) return V_NO_SITE; /* not a-b */
    if (same_value(c, y, su->kids[1]) && y_finite(pf, y)) return V_EXACT;
    double alo, ahi, blo, bhi;
    if (!y_bounds(pf, y, &ylo, &yhi, 0) || !bounds_of(c->p, su->kids[0], &alo, &ahi, &pf->st) ||
        !bounds_of(c->p, su->kids[1], &blo, &bhi, &pf->st))
      return V_UNPROVEN;
    return alo - yhi >= -L && ahi - ylo <= L && blo - yhi >= -L && bhi - ylo <= L ? V_CLOSE
                                                                                  : V_UNPROVEN;
  }
  bool more;
  const leir_expr *t1 = first_term(u, &more);
  if (same_value(c, y, t1) && y_finite(pf, y)) return V_EXACT;
  if (su->kind == LEIR_EXPR_BINARY && su->op == LEIR_OP_SUB && strip(su->kids[0]) == t1 &&
      same_value(c, y, su->kids[1]) && y_finite(pf, y))
    return V_EXACT;
  if (!y_bounds(pf, y, &ylo, &yhi, 0)) return V_UNPROVEN;
  if (!more) return ylo >= 0 && yhi <= bits * log(2.0) ? V_CLOSE : V_UNPROVEN;
  double tlo, thi, ulo, uhi;
  if (!bounds_of(c->p, t1, &tlo, &thi, &pf->st) || !bounds_of(c->p, u, &ulo, &uhi, &pf->st))
    return V_UNPROVEN;
  /* exponents t1-y and u-t1+y */
  return tlo - yhi >= -L && thi - ylo <= L && ulo - thi + ylo >= -L && uhi - tlo + yhi <= L
             ? V_CLOSE
             : V_UNPROVEN;
}

static verdict check_mul(proof *pf, const site *s, const yval *y, uint8_t dt) {
  double tiny, huge, lo, hi;
  int bits;
  limits(dt, &tiny, &huge, &bits);
  if (!y_bounds(pf, y, &lo, &hi, 1)) return V_UNPROVEN;
  if (!(lo > 0 || hi < 0)) return V_UNPROVEN;
  double m = fmin(fabs(lo), fabs(hi)), M = fmax(fabs(lo), fabs(hi));
  if (M > ldexp(1.0, bits)) return V_UNPROVEN;
  /* m >= 1 up to the bounds' own widening (a relative 1e-12 per node):
   * |x/y| <= |x|*(1+2^-20), an overflow only for x within 2^-20 of the
   * largest value, like any rounding there */
  if (m >= 1 - ldexp(1.0, -20)) return V_CLOSE;
  double xlo, xhi;
  if (!bounds_of(pf->c->p, s->x, &xlo, &xhi, &pf->st)) return V_UNPROVEN;
  return fmax(fabs(xlo), fabs(xhi)) <= m * (huge / 2) ? V_CLOSE : V_UNPROVEN;
}

static verdict check(proof *pf, leir__split_kind kind, const site *s, const yval *y, bool div) {
  uint8_t dt = narrowest(s->x, s->eq->lhs->dtype, 0);
  dt = narrower(dt, y->shift ? y->z->dtype : y->acc->dtype);
  switch (kind) {
  case LEIR__SPLIT_ADD: return y_finite(pf, y) ? V_CLOSE : V_UNPROVEN;
  case LEIR__SPLIT_MUL: return check_mul(pf, s, y, dt);
  default: return check_exp(pf, s, y, div, dt);
  }
}

/* Why the generic assumption does not cover an unproven split (NULL: it
 * does). A constant y is no generic value: its proof decided. */
/* exp(u) split so that one factor is exp(y-y) = 1 (check_exp's exact forms,
 * and the division by exp(b-a)) */
static bool exact_shape(const leir__sctx *c, const site *s, const yval *y, bool div) {
  const leir_expr *u = s->x->kids[0], *su = strip(u);
  bool sub = su->kind == LEIR_EXPR_BINARY && su->op == LEIR_OP_SUB;
  /* exp(a-b)/exp(b-b), and exp(a-a)/exp(b-a): the exponents are 0 and
   * those of the original up to a sign, so the second is in range where
   * the original is (not bitwise: 1/exp(b-a) rounds) */
  if (div) return sub && (same_value(c, y, su->kids[1]) || same_value(c, y, su->kids[0]));
  bool more;
  const leir_expr *t1 = first_term(u, &more);
  return same_value(c, y, t1) || (sub && strip(su->kids[0]) == t1 && same_value(c, y, su->kids[1]));
}

static const char *structural(proof *pf, leir__split_kind kind, const site *s, const yval *y,
                              bool div) {
  generic_memo *g = pf->gm;
  const leir_expr *yv = y->shift ? y->z : y->acc;
  if (tainted_sym(g, G_INF, yv->sym, 0))
    return "y derives from an infinite constant (a -inf mask): inf where masked, so the "
           "generic assumption (y finite) does not hold";
  if (reads_tainted(g, G_INF, s->x, 0))
    return kind == LEIR__SPLIT_EXP
               ? "the exponent reads a value derived from an infinite constant (a -inf mask)"
               : "x derives from an infinite constant (a -inf mask): a masked attention row, "
                 "where the split meets -inf (and NaN on a fully masked row)";
  if (tainted_sym(g, G_BIG, yv->sym, 0))
    return "y derives from an exp: it overflows to inf on inputs of moderate size "
           "(the verifier's x10 scaling), so the generic assumption (y finite) does not hold";
  if (kind == LEIR__SPLIT_EXP && !exact_shape(pf->c, s, y, div) &&
      (tainted_sym(g, G_BIGX, yv->sym, 0) || reads_tainted(g, G_BIGX, s->x->kids[0], 0)))
    return "y or the exponent derives from an exp, a power or a product of values (a matmul, "
           "a convolution): on inputs of moderate size (the verifier's x10 scaling) a factor "
           "exp(t1-y) or exp(y+R) overflows where exp(u) does not, and no factor is "
           "exp(y-y) = 1";
  if (kind != LEIR__SPLIT_EXP && tainted_sym(g, G_NORM, yv->sym, 0))
    return "y derives from a normalization's difference ((F-O)/s, (F-O)**2): exactly 0 where "
           "a group has one element or equal elements, and of another magnitude than the "
           "values it normalizes";
  double lo, hi;
  if (bounds_of(pf->c->p, yv, &lo, &hi, &pf->st) && lo == hi)
    return "y is a constant: its value decides, and the condition does not hold for it";
  if (kind == LEIR__SPLIT_MUL && tainted_sym(g, G_ZERO, yv->sym, 0))
    return "y is exactly 0 on some inputs by its construction (a bool, integer or comparison "
           "value, a constant 0, a loop index, or a product, max or min with one), so x/y*y "
           "is NaN there";
  return NULL;
}

/* ---- enumeration ------------------------------------------------------------ */

/* ---- values that reach a comparison ---------------------------------------------
 * A rounding in such a value can flip the comparison (argmax: A>=D with D
 * the maximum of rounded values), which a reassociating candidate must not
 * do: the tensors read in a comparison, and every tensor their writers
 * read (a fixpoint over the program). */
/* Is child i of e a place where an absolute error of the value is not
 * bounded in the result (fragile): a comparison, a subtraction, a log or sqrt argument
 * (log(0) = -inf where the value is tiny), an exp argument (the absolute
 * error becomes a relative one of the result), a divisor, a power? */
static bool fragile_child(const leir_expr *e, uint32_t i, bool fragile, bool skip_cmp) {
  if (e->kind == LEIR_EXPR_COMPARE) return !skip_cmp;
  if (!fragile) return false;
  if (e->kind == LEIR_EXPR_CALL)
    return e->op == LEIR_OP_LOG || e->op == LEIR_OP_SQRT || e->op == LEIR_OP_EXP;
  /* a subtraction: P - x with P close to x cancels, and the split's
   * absolute error ulp(max(|x|, |y|)) becomes a relative error of the
   * difference without bound (GroupNorm's F - mean, divided by a small
   * deviation: LEIR_TEST_SPLITS_ALL=1 found it MISMATCH in f64) */
  if (e->kind == LEIR_EXPR_BINARY)
    return e->op == LEIR_OP_POW || e->op == LEIR_OP_SUB ||
           ((e->op == LEIR_OP_DIV || e->op == LEIR_OP_FLOORDIV || e->op == LEIR_OP_MOD) && i == 1);
  return false;
}

static void mark_reads(const leir_expr *e, uint8_t *set, uint32_t nsym, bool inside, bool *grew,
                       bool fragile, bool skip_cmp, unsigned depth) {
  if (depth > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (inside && e->sym < nsym && !set[e->sym]) set[e->sym] = 1, *grew = true;
    return;
  }
  for (uint32_t i = 0; i < e->n; i++)
    mark_reads(e->kids[i], set, nsym, inside || fragile_child(e, i, fragile, skip_cmp), grew,
               fragile, skip_cmp, depth + 1);
}

/* Is the site under a fragile place of its own equation? */
static bool under_fragile(const leir_equation *eq, const uint32_t *path, uint32_t depth,
                          bool fragile) {
  const leir_expr *n = eq->rhs;
  for (uint32_t k = 1; k < depth; k++) {
    if (fragile_child(n, path[k], fragile, false)) return true;
    n = n->kids[path[k]];
  }
  return false;
}

/* The generic mode's fragile place: an operand of a subtraction that is a
 * numerator or a power base, (F - mean)/sqrt(var + eps) and (F - mean)**2:
 * a normalization, where the cancellation of F - mean meets a small
 * divisor and any rounding of F or mean becomes a MISMATCH (GroupNorm with
 * groups of 2; LEIR_TEST_SPLITS_GENERIC_ALL=1). `num`: e is a numerator or
 * a power base. */
static bool norm_child(const leir_expr *e, bool num) {
  /* also a log or sqrt argument: log(R-D+D) is log(0) = -inf for a tiny R
   * (a log-sum-exp's sum of exps) and a large y */
  if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_LOG || e->op == LEIR_OP_SQRT)) return true;
  return num && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_SUB;
}

static bool norm_num(const leir_expr *e, uint32_t i, bool num) {
  if (e->kind == LEIR_EXPR_PAREN) return num;
  return e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_DIV || e->op == LEIR_OP_POW) && i == 0;
}

static void mark_norm(const leir_expr *e, uint8_t *set, uint32_t nsym, bool inside, bool num,
                      bool *grew, unsigned depth) {
  if (depth > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (inside && e->sym < nsym && !set[e->sym]) set[e->sym] = 1, *grew = true;
    return;
  }
  for (uint32_t i = 0; i < e->n; i++)
    mark_norm(e->kids[i], set, nsym, inside || norm_child(e, num), norm_num(e, i, num), grew,
              depth + 1);
}

static bool under_norm(const leir_equation *eq, const uint32_t *path, uint32_t depth) {
  const leir_expr *n = eq->rhs;
  bool num = false;
  for (uint32_t k = 1; k < depth; k++) {
    if (norm_child(n, num)) return true;
    num = norm_num(n, path[k], num);
    n = n->kids[path[k]];
  }
  return false;
}

/* Marks, in one equation, the tensors a flow reaches from its right-hand
 * side; `flows` says whether the equation's own left-hand tensor is marked. */
typedef void (*flow_mark)(const leir_equation *eq, uint8_t *set, uint32_t nsym, bool flows,
                          bool *grew, const void *arg);

/* The least set of symbols closed under `mark` over every equation of the
 * program (at most one round per symbol). Caller frees; NULL on NOMEM. */
static uint8_t *flow_fixpoint(const leir__sctx *c, flow_mark mark, const void *arg) {
  uint32_t nsym = c->p->syms.count;
  uint8_t *set = calloc(nsym ? nsym : 1, 1);
  if (!set) return NULL;
  bool grew = true;
  for (uint32_t round = 0; grew && round <= nsym; round++) {
    grew = false;
    for (uint32_t i = 0; i < c->nnests; i++) {
      const leir_nest *n = c->nests[i].nest;
      for (uint32_t k = 0; k < n->nitems; k++) {
        const leir_equation *eq = n->items[k].eq;
        if (!eq) continue;
        bool flows = eq->lhs->sym < nsym && set[eq->lhs->sym];
        mark(eq, set, nsym, flows, &grew, arg);
      }
    }
  }
  return set;
}

static void norm_mark(const leir_equation *eq, uint8_t *set, uint32_t nsym, bool flows,
                      bool *grew, const void *arg) {
  (void)arg;
  mark_norm(eq->rhs, set, nsym, flows, false, grew, 0);
}

static uint8_t *norm_set(const leir__sctx *c) { return flow_fixpoint(c, norm_mark, NULL); }

/* The tensors whose values reach a comparison (fragile: also a log, sqrt,
 * divisor or power), by symbol. */
typedef struct compared_flow {
  bool fragile, discrete_only;
} compared_flow;

static void compared_mark(const leir_equation *eq, uint8_t *set, uint32_t nsym, bool flows,
                          bool *grew, const void *arg) {
  const compared_flow *f = arg;
  mark_reads(eq->rhs, set, nsym, flows, grew, f->fragile,
             f->discrete_only && is_float(eq->lhs->dtype), 0);
}

static uint8_t *compared_set(const leir__sctx *c, bool fragile, bool discrete_only) {
  compared_flow f = {fragile, discrete_only};
  return flow_fixpoint(c, compared_mark, &f);
}

typedef struct walk {
  leir__split_kind kind;
  const uint8_t *compared; /* by symbol */
  /* by symbol: reaching a comparison whose outcome is discrete (it decides
   * an integer or bool value: argmax's index), refused even in the generic
   * mode; a float selection (ReLU, clamp) is continuous at its switch */
  const uint8_t *compared_cmp;
  const uint8_t *gfragile; /* reaching a normalization (norm_set), by symbol */
  proof pf;
  bool generic; /* LEIR_CANDIDATES_GENERIC_VALUES */
  uint32_t emitted; /* in the current nest */
  uint32_t emitted_assumed; /* V_ASSUMED ones, in the current nest */
  const leir__nref *nest;
} walk;

static bool under_ite(const leir_equation *eq, const leir__xsite *x) {
  const leir_expr *n = eq->rhs;
  for (uint32_t k = 1; k < x->depth; k++) {
    if (n->kind == LEIR_EXPR_CALL && n->op == LEIR_OP_IF_THEN_ELSE) return true;
    n = n->kids[x->path[k]];
  }
  return false;
}

static void emit_y(leir__sctx *c, walk *w, const site *s, const leir__xsite *x, const yval *y) {
  char path[LEIR__MAX_XPATH * 11];
  leir__xpath_format(x, path, sizeof path);
  for (int form = 0; form < (w->kind == LEIR__SPLIT_EXP ? 2 : 1) && leir__more(c); form++) {
    verdict v = check(&w->pf, w->kind, s, y, form == 1);
    const char *why = NULL;
    if (v == V_UNPROVEN && (w->generic || c->mode == LEIR__MODE_EXPLAIN)) {
      why = structural(&w->pf, w->kind, s, y, form == 1);
      if (!why && w->generic) v = V_ASSUMED;
    }
    if (w->pf.st != LEIR_OK) return;
    if (v == V_NO_SITE) continue; /* form=div of an exponent that is no difference */
    /* the relaxed pass: every structural split, left to the verifier */
    if (c->split_relaxed && v == V_UNPROVEN) v = V_ASSUMED;
    const char *fs = w->kind != LEIR__SPLIT_EXP ? "" : form ? " form=div" : " form=mul";
    char what[96];
    if (y->shift)
      snprintf(what, sizeof what, "loop=%.40s", leir__loop_name(c, s->r, y->k));
    else
      snprintf(what, sizeof what, "tensor=%.40s", leir__name(c, y->acc->sym));
    if (v == V_UNPROVEN) {
      if (c->mode == LEIR__MODE_EXPLAIN) {
        snprintf(c->site, sizeof c->site, "nest=%.40s %.50s eq=%u expr=%.100s%s", s->r->label, what,
                 s->item, path, fs);
        if (why)
          leir__reject(c, c->site, LEIR__R_SPLIT_STRUCTURAL, "%s", why);
        else
          leir__reject(c, c->site, LEIR__R_SPLIT_UNPROVEN, "%s (assumed, not proven, with "
                       "LEIR_CANDIDATES_GENERIC_VALUES / --generic-values)",
                       w->kind == LEIR__SPLIT_ADD   ? "y is not proven finite"
                       : w->kind == LEIR__SPLIT_MUL ? "y is not proven non-zero and bounded so "
                                                      "that x/y cannot overflow"
                                                    : "no factor is proven exp(0) and the "
                                                      "exponents are not proven in range");
      }
      continue;
    }
    bool fragile = w->kind == LEIR__SPLIT_ADD;
    /* a rounding that flips a comparison is wrong by construction; the
     * other places are a rounding judgement, not a value assumption, which
     * the generic mode leaves to the verifier */
    /* refused by the generic mode too (gref): a comparison deciding an
     * integer or bool value, and for #38/#39 a value reaching a
     * normalization's difference (norm_set), where the split's rounding
     * error (absolute for #39, relative to x for #38) cancels to a MISMATCH
     * (found by LEIR_TEST_SPLITS_GENERIC_ALL=1) */
    uint32_t lhs = s->eq->lhs->sym;
    bool gref = w->compared_cmp[lhs] ||
                (w->kind != LEIR__SPLIT_EXP &&
                 (w->gfragile[lhs] || under_norm(s->eq, x->path, x->depth)));
    bool pref = w->compared[lhs] || under_fragile(s->eq, x->path, x->depth, fragile);
    /* a proven candidate that only the rounding judgement refuses is an
     * assumed one in the generic mode */
    if (v == V_CLOSE && w->generic && pref && !gref && !structural(&w->pf, w->kind, s, y, form == 1))
      v = V_ASSUMED;
    if (w->pf.st != LEIR_OK) return;
    if (v != V_EXACT && !c->split_relaxed && (v == V_ASSUMED ? gref : pref)) {
      if (c->mode == LEIR__MODE_EXPLAIN) { /* the step's own site: apply quotes it */
        snprintf(c->site, sizeof c->site, "nest=%.40s %.50s eq=%u expr=%.100s%s", s->r->label, what,
                 s->item, path, fs);
        leir__reject(c, c->site, LEIR__R_SPLIT_COMPARED, "%s (%s)",
                     fragile ? "the value reaches a comparison, subtraction, log, sqrt or exp "
                               "argument, divisor or power, where the split's absolute rounding "
                               "error is not bounded"
                             : "the value reaches a comparison, where a rounding can change the "
                               "outcome",
                     gref ? "refused even with LEIR_CANDIDATES_GENERIC_VALUES: a discrete "
                            "comparison or a normalization's (x - mean)/std, where verifying "
                            "showed such splits MISMATCH"
                          : "listed with LEIR_CANDIDATES_GENERIC_VALUES / --generic-values, its "
                            "accuracy assumed and left to the verifier");
      }
      continue;
    }
    /* the assumed candidates have a cap of their own, so that the proven
     * ones are the same with and without the flag */
    if (v == V_ASSUMED) {
      if (w->emitted_assumed >= LEIR__SPLIT_MAX_NEST_ASSUMED) continue;
      w->emitted_assumed++;
    } else {
      if (w->emitted >= LEIR__SPLIT_MAX_NEST) {
        LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_CAP,
                     "nest %s already has %u split candidates", s->r->label, LEIR__SPLIT_MAX_NEST);
        return;
      }
      w->emitted++;
    }
    if (y->shift)
      leir__emit(c, v == V_EXACT ? LEIR_EXACT : LEIR_REASSOCIATING, "nest=%s loop=%s eq=%u expr=%s%s",
                 s->r->label, leir__loop_name(c, s->r, y->k), s->item, path, fs);
    else
      leir__emit(c, v == V_EXACT ? LEIR_EXACT : LEIR_REASSOCIATING,
                 "nest=%s tensor=%s eq=%u expr=%s%s", s->r->label, leir__name(c, y->acc->sym),
                 s->item, path, fs);
  }
}

/* Is x a site? Fills s. */
static bool site_of(const leir__xsite *x, leir__split_kind kind, site *s) {
  const leir_equation *eq = x->eq.eq;
  if (x->path[0] != 1 || x->in_subscript) return false;
  const leir_expr *e = x->e;
  s->r = x->eq.r;
  s->item = x->eq.item;
  s->eq = eq;
  s->x = e;
  s->under_ite = under_ite(eq, x);
  if (kind == LEIR__SPLIT_EXP) {
    if (e->kind != LEIR_EXPR_CALL || e->op != LEIR_OP_EXP || e->n != 1) return false;
    s->z = first_read(e->kids[0], 0);
    return true;
  }
  if (e->kind != LEIR_EXPR_TENSOR || !is_float(e->dtype) || e->sym == eq->lhs->sym) return false;
  s->z = e;
  return true;
}

static bool on_node(leir__sctx *c, const leir__xsite *x, void *ud) {
  walk *w = ud;
  site s;
  if (!site_of(x, w->kind, &s)) return true;
  if (w->kind != LEIR__SPLIT_EXP && !c->split_relaxed &&
      count_reads(x->eq.eq->rhs, s.x->sym, 0) != 1) {
    LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_REUSED,
                 "%s is read more than once on the right-hand side", leir__name(c, s.x->sym));
    return true;
  }
  yval ys[LEIR__SPLIT_MAX_Y];
  uint32_t n = collect_ys(c, &s, ys);
  if (n == 0)
    LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_NO_Y,
                 "no shiftable read and no earlier output over the same loops");
  for (uint32_t i = 0; i < n && leir__more(c) && w->pf.st == LEIR_OK; i++) emit_y(c, w, &s, x, &ys[i]);
  if (w->pf.st != LEIR_OK) {
    c->status = w->pf.st;
    return false;
  }
  return leir__more(c);
}

static bool on_equation(leir__sctx *c, const leir__eqsite *s, void *ud) {
  walk *w = ud;
  if (w->nest != s->r) {
    w->nest = s->r;
    w->emitted = 0;
    w->emitted_assumed = 0;
  }
  if (s->r->depth != 1 || s->r->has_nested) {
    LEIR__REJECT(c, leir__site_eq(c, s), LEIR__R_SPLIT_NEST,
                 "the equation is not directly in a top-level nest without nested nests");
    return true;
  }
  if (!is_float(s->eq->lhs->dtype)) {
    LEIR__REJECT(c, leir__site_eq(c, s), LEIR__R_MATH_DTYPE, "%s is computed in an integer dtype",
                 leir__name(c, s->eq->lhs->sym));
    return true;
  }
  leir__each_subexpr(c, s, on_node, ud);
  return leir__more(c);
}

void leir__split_enumerate(leir__sctx *c, leir__split_kind kind) {
  finite_memo fm = {.c = c, .nsym = c->p->syms.count};
  fm.state = calloc(fm.nsym ? fm.nsym : 1, 1);
  if (!fm.state) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  uint8_t *compared = compared_set(c, kind == LEIR__SPLIT_ADD, false);
  uint8_t *compared_cmp = compared_set(c, false, true);
  uint8_t *gfragile = norm_set(c);
  if (!compared || !compared_cmp || !gfragile) {
    free(gfragile);
    free(compared);
    free(compared_cmp);
    free(fm.state);
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  generic_memo gm = {.c = c, .nsym = fm.nsym};
  gm.state[G_INF] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_ZERO] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_BIG] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_BIGX] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_NORM] = calloc(fm.nsym ? fm.nsym : 1, 1);
  if (gm.state[G_INF] && gm.state[G_ZERO] && gm.state[G_BIG] && gm.state[G_BIGX] &&
      gm.state[G_NORM]) {
    walk w = {.kind = kind,
              .compared = compared,
              .compared_cmp = compared_cmp,
              .gfragile = gfragile,
              .pf = {.c = c, .fm = &fm, .gm = &gm, .st = LEIR_OK},
              .generic = (c->o.flags & LEIR_CANDIDATES_GENERIC_VALUES) != 0};
    leir__each_equation(c, on_equation, &w);
  } else {
    c->status = LEIR_ERR_NOMEM;
  }
  free(gm.state[G_INF]);
  free(gm.state[G_ZERO]);
  free(gm.state[G_BIG]);
  free(gm.state[G_BIGX]);
  free(gm.state[G_NORM]);
  free(compared_cmp);
  free(gfragile);
  free(compared);
  free(fm.state);
}

/* ---- apply -------------------------------------------------------------------- */

static leir_expr *build_y(leir_program *out, const leir__sctx *c, const site *s, const yval *y,
                          int64_t boundary) {
  if (!y->shift) return leir__copy_expr(out, c->p, y->acc);
  uint32_t ksym = s->r->nest->loops[y->k].sym;
  /* the shifted entry: k-1, or E-1 for a compound subscript E */
  const leir_expr *last = strip(y->z->kids[y->z->n - 1]);
  leir_expr *prev = leir__copy_expr(out, c->p, y->z);
  prev->kids[prev->n - 1] = leir__mk_bin(
      out, LEIR_OP_SUB, y->compound ? leir__copy_expr(out, c->p, last) : leir__mk_var(out, ksym),
      leir__mk_int(out, 1));
  leir_expr *cond = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  cond->kids[0] = leir__mk_bin(
      out, LEIR_OP_SUB, y->compound ? leir__copy_expr(out, c->p, last) : leir__mk_var(out, ksym),
      leir__mk_int(out, 1));
  cond->kids[1] = leir__mk_int(out, 0);
  cond->u.cmp_ops[0] = LEIR_OP_LT;
  return leir__stream_ite(out, cond, leir__mk_int(out, boundary), prev);
}

/* a copy of u (of c->p) in out with the node t1 replaced by `with` */
static leir_expr *replace_node(leir_program *out, const leir_program *p, const leir_expr *u,
                               const leir_expr *t1, leir_expr *with, unsigned depth) {
  if (u == t1) return with;
  if (depth > 400 || u->kind == LEIR_EXPR_TENSOR) return leir__copy_expr(out, p, u);
  leir_expr *e = leir__copy_expr(out, p, u);
  for (uint32_t i = 0; i < u->n; i++) e->kids[i] = replace_node(out, p, u->kids[i], t1, with, depth + 1);
  return e;
}

leir_status leir__split_apply(leir__sctx *c, const leir__pstep *ps, leir_program *out,
                              leir__split_kind kind) {
  const leir__nref *r = leir__ps_nest(c, ps);
  leir__eqsite es;
  if (!r || !leir__ps_eq(c, r, ps, &es)) return LEIR_ERR_INTERNAL;
  leir_expr **orig = leir__ps_expr_slot((leir_nest *)r->nest, es.item, ps);
  leir_nest *m = leir__nest_at(out, r->path, r->depth);
  leir_expr **slot = m ? leir__ps_expr_slot(m, es.item, ps) : NULL;
  if (!orig || !slot) return LEIR_ERR_INTERNAL;
  /* the site again, as enumerate saw it */
  leir__xsite x = {.eq = es, .e = *orig, .depth = 0};
  const leir__tok *et = leir__ps_get(ps, LEIR__K_EXPR, NULL);
  for (uint32_t i = 0; i < et->len && x.depth < LEIR__MAX_XPATH;) {
    uint32_t j = i, v = 0;
    while (j < et->len && et->s[j] != '.') v = v * 10 + (uint32_t)(et->s[j++] - '0');
    x.path[x.depth++] = v;
    i = j + 1;
  }
  site s;
  if (!site_of(&x, kind, &s)) return LEIR_ERR_INTERNAL;
  yval ys[LEIR__SPLIT_MAX_Y];
  uint32_t n = collect_ys(c, &s, ys);
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LOOP, NULL);
  const leir__tok *tt = leir__ps_get(ps, LEIR__K_TENSOR, NULL);
  const yval *y = NULL;
  for (uint32_t i = 0; i < n && !y; i++) {
    if (ys[i].shift && lt && leir__tok_eq(lt, leir__loop_name(c, r, ys[i].k))) y = &ys[i];
    if (!ys[i].shift && tt && leir__tok_eq(tt, leir__name(c, ys[i].acc->sym))) y = &ys[i];
  }
  if (!y) return LEIR_ERR_INTERNAL;
  const leir_expr *e = *orig;
  leir_expr *res;
  if (kind == LEIR__SPLIT_ADD) {
    res = leir__mk_bin(out, LEIR_OP_ADD,
                       leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, e),
                                    build_y(out, c, &s, y, 0)),
                       build_y(out, c, &s, y, 0));
  } else if (kind == LEIR__SPLIT_MUL) {
    res = leir__mk_bin(out, LEIR_OP_MUL,
                       leir__mk_bin(out, LEIR_OP_DIV, leir__copy_expr(out, c->p, e),
                                    build_y(out, c, &s, y, 1)),
                       build_y(out, c, &s, y, 1));
  } else {
    const leir__tok *ft = leir__ps_get(ps, LEIR__K_FORM, NULL);
    const leir_expr *u = e->kids[0];
    if (ft && leir__tok_eq(ft, "div")) {
      const leir_expr *su = strip(u);
      if (su->kind != LEIR_EXPR_BINARY || su->op != LEIR_OP_SUB) return LEIR_ERR_INTERNAL;
      leir_expr *num = leir__stream_call1(
          out, LEIR_OP_EXP,
          leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, su->kids[0]),
                       build_y(out, c, &s, y, 0)));
      leir_expr *den = leir__stream_call1(
          out, LEIR_OP_EXP,
          leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, su->kids[1]),
                       build_y(out, c, &s, y, 0)));
      res = leir__mk_bin(out, LEIR_OP_DIV, num, den);
    } else {
      bool more;
      const leir_expr *t1 = first_term(u, &more);
      leir_expr *f1 = leir__stream_call1(
          out, LEIR_OP_EXP,
          leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, t1), build_y(out, c, &s, y, 0)));
      leir_expr *rest = replace_node(out, c->p, u, t1, build_y(out, c, &s, y, 0), 0);
      res = leir__mk_bin(out, LEIR_OP_MUL, f1, leir__stream_call1(out, LEIR_OP_EXP, rest));
    }
  }
  *slot = res;
  return LEIR_OK;
}
